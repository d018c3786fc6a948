// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-gap-trace [--xstate | --xstate-second] OUT: write a small v5 file the way a lossy capture
 * does — two sessions (gates 4 and 9), the first ended by a CR3 change and
 * the second by a stop, with 37 slots dropped in the middle of the first
 * (SVMTRACE_SLOT_F_GAP) — so tests can check how inspect and dump show
 * sessions and losses.  pack cannot make such a file: raw records carry no
 * loss marks.  With --xstate every slot carries changing YMM state; with
 * --xstate-second only the second session's do (a stream whose YMM state
 * starts after its first record of known state).
 */
#include <string.h>

#include <svmtrace/trace.h>

#include "common/cli.h"

static struct svmtrace_slot_xstate xs;
static bool with_xstate, xstate_second;

static void put(struct svmtrace_writer *w, struct svmtrace_slot *s)
{
	struct svmtrace_error err;
	int ret;

	if (with_xstate) {
		xs.base = *s;
		xs.base.flags |= SVMTRACE_SLOT_F_XSTATE;
		xs.xstate_bv = 7;
		xs.ymm[s->seq % 16][s->seq % 4] = s->seq * 0x9e3779b97f4a7c15ull;
		ret = svmtrace_writer_append_xstate(w, &xs, &err);
	} else {
		ret = svmtrace_writer_append(w, s, &err);
	}
	if (ret)
		die("%s", err.message);
	s->seq++;
	s->tsc += 100;
	s->rip += 3;
	s->gpr[SVMTRACE_RCX]++;
	s->flags = 0;
	s->dropped = 0;
	s->reason = 0;
	s->kind = SVMTRACE_SLOT_INSTRUCTION;
}

int main(int argc, char **argv)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_slot s = {
		.seq = 1, .tsc = 5000, .rip = 0x7ff600001000, .cr3 = 0x1aa000, .rflags = 0x202
	};

	cli_progname = "svmtrace-gap-trace";
	xstate_second = argc == 3 && !strcmp(argv[1], "--xstate-second");
	with_xstate = argc == 3 && !strcmp(argv[1], "--xstate");
	if (argc != 2 + (with_xstate || xstate_second))
		die("usage: svmtrace-gap-trace [--xstate | --xstate-second] OUT");
	argv += with_xstate || xstate_second;
	svmtrace_writer_options_init(&o);
	o.cpu = 1;
	if (svmtrace_writer_open(argv[1], &o, &w, &err))
		die("%s", err.message);
	s.kind = SVMTRACE_SLOT_SESSION_START;
	s.reason = 4;
	put(w, &s);
	for (int i = 0; i < 99; i++)
		put(w, &s);
	s.seq += 37;
	s.flags = SVMTRACE_SLOT_F_GAP;
	s.dropped = 37;
	for (int i = 0; i < 100; i++)
		put(w, &s);
	s.kind = SVMTRACE_SLOT_SESSION_END;
	s.reason = SVMTRACE_END_CR3;
	put(w, &s);
	s.kind = SVMTRACE_SLOT_SESSION_START;
	s.reason = 9;
	with_xstate |= xstate_second;
	put(w, &s);
	for (int i = 0; i < 49; i++)
		put(w, &s);
	s.kind = SVMTRACE_SLOT_SESSION_END;
	s.reason = SVMTRACE_END_STOP;
	s.seq += 3;
	s.flags = SVMTRACE_SLOT_F_GAP;
	s.dropped = 3;
	put(w, &s);
	if (svmtrace_writer_close(w, &err))
		die("%s", err.message);
	return 0;
}
