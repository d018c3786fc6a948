// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/lookahead.h"

#include <stdlib.h>

#include "common/cli.h"
#include "svmtrace-dump/files.h"

/*
 * Records of unknown state only come as session ends, each opening a frame
 * with no state; a file of nothing else is not worth holding in memory
 * whole.  After this many the look-ahead stops, as if it found no YMM.
 */
#define LOOKAHEAD_MAX 4096

static void hold(struct lookahead *l, const struct svmtrace_record *rec)
{
	struct lookahead_held *h;

	if (!(l->nheld & (l->nheld - 1))) {
		h = realloc(l->held, (l->nheld ? 2 * l->nheld : 1) * sizeof(*h));
		if (!h)
			die("out of memory");
		l->held = h;
	}
	h = &l->held[l->nheld++];
	h->rec = *rec;
	h->state = *rec->state;
	h->rec.state = &h->state;
}

void lookahead_open(struct lookahead *l, const char *path)
{
	const struct svmtrace_record *rec;

	*l = (struct lookahead){ .r = open_trace(path) };
	for (;;) {
		l->ret = svmtrace_reader_next(l->r, &rec);
		if (l->ret <= 0) {
			l->ended = true;
			return;
		}
		if (rec->state_known || l->nheld == LOOKAHEAD_MAX) {
			l->first = rec;
			l->has_ymm = rec->state_known && rec->has_ymm;
			return;
		}
		hold(l, rec);
	}
}

int lookahead_next(struct lookahead *l, const struct svmtrace_record **rec)
{
	if (l->taken < l->nheld) {
		*rec = &l->held[l->taken++].rec;
		return 1;
	}
	if (l->first) {
		*rec = l->first;
		l->first = NULL;
		return 1;
	}
	if (l->ended)
		return l->ret;
	return svmtrace_reader_next(l->r, rec);
}

void lookahead_close(struct lookahead *l)
{
	svmtrace_reader_close(l->r);
	free(l->held);
}
