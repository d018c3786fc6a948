/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace read ahead to its first record whose state is known, so that dump
 * can tell before its CSV header whether the trace holds YMM state.  The
 * records before that one (session ends whose frame holds no state) are
 * kept and handed out first, then the reader's own.
 */
#ifndef SVMTRACE_DUMP_LOOKAHEAD_H
#define SVMTRACE_DUMP_LOOKAHEAD_H

#include <stdbool.h>
#include <stddef.h>

#include <svmtrace/trace.h>

struct lookahead_held {
	struct svmtrace_record rec;
	struct svmtrace_state state;
};

struct lookahead {
	struct svmtrace_reader *r;
	struct lookahead_held *held; /* the records before @first, copied */
	size_t nheld, taken;
	const struct svmtrace_record *first; /* the reader's, not yet handed out */
	bool ended;			     /* the reader ended during the look-ahead ... */
	int ret;			     /* ... with this result */
	bool has_ymm;			     /* the first record with known state has YMM */
};

/* Open @path (or die with the reader's message) and read ahead. */
void lookahead_open(struct lookahead *l, const char *path);

/* As svmtrace_reader_next(); the records stay valid until lookahead_close(). */
int lookahead_next(struct lookahead *l, const struct svmtrace_record **rec);

void lookahead_close(struct lookahead *l);

#endif
