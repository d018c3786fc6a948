// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/predict.h"

#include <stdlib.h>
#include <string.h>

int predict_init(struct predict_table *t)
{
	/* one entry per cache line: a lookup touches one line, not two */
	t->entries = aligned_alloc(64, PREDICT_ENTRIES * sizeof(*t->entries));
	if (!t->entries)
		return -1;
	memset(t->entries, 0, PREDICT_ENTRIES * sizeof(*t->entries));
	t->epoch = 1;
	return 0;
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
