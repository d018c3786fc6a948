// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/predict.h"

#include <stdlib.h>
#include <string.h>

int predict_init(struct predict_table *t)
{
	t->entries = calloc(PREDICT_ENTRIES, sizeof(*t->entries));
	t->epoch = 1;
	return t->entries ? 0 : -1;
}

void predict_free(struct predict_table *t)
{
	free(t->entries);
	t->entries = NULL;
}

void predict_reset(struct predict_table *t)
{
	/* Entries are zeroed with epoch 0, which is never current. */
	if (++t->epoch == 0) {
		memset(t->entries, 0, PREDICT_ENTRIES * sizeof(*t->entries));
		t->epoch = 1;
	}
}
