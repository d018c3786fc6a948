// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-synth-raw COUNT [FIRST_SEQ]: write COUNT synthetic 168-byte raw
 * records (svmtrace-dump pack input) to standard output, fast enough to
 * feed a 100-million-record file through a pipe without storing it.  The
 * states follow a loop with counters, pointer walks, flag flips and
 * occasional random loads, so the encoder sees both hits and misses.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <svmtrace/trace.h>

#include "common/cli.h"

#define BATCH 4096
#define BODY  37

int main(int argc, char **argv)
{
	static struct svmtrace_raw_record buf[BATCH];
	struct svmtrace_raw_record r = { .cr3 = 0x1aa000, .rflags = 0x202, .tsc = 1000000 };
	uint64_t count, lcg = 12345;
	size_t n = 0;

	cli_progname = "svmtrace-synth-raw";
	if (argc < 2 || argc > 3)
		die("usage: svmtrace-synth-raw COUNT [FIRST_SEQ]");
	count = parse_u64(argv[1], "COUNT");
	r.seq = argc == 3 ? parse_u64(argv[2], "FIRST_SEQ") : 1;
	r.gpr[SVMTRACE_RSP] = 0x7ffe0000f000;
	for (uint64_t i = 0; i < count; i++) {
		unsigned int pc = (unsigned int)(i % BODY);

		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		r.rip = 0x140001000 + pc * 4 + (pc == BODY - 1 ? 0x200 : 0);
		r.gpr[pc % 8] += pc;
		if (pc == 5)
			r.gpr[SVMTRACE_RSI] += 8;
		if (pc == 9 && (lcg >> 60) < 3)
			r.gpr[SVMTRACE_RAX] = lcg >> 20;
		if (pc == 13)
			r.rflags ^= (lcg >> 63) ? 0x40 : 0;
		r.tsc += 40 + (lcg >> 61);
		buf[n++] = r;
		r.seq++;
		if (n == BATCH) {
			if (fwrite(buf, sizeof(buf[0]), n, stdout) != n)
				return 1; /* the reader went away */
			n = 0;
		}
	}
	if (n && fwrite(buf, sizeof(buf[0]), n, stdout) != n)
		return 1;
	return fflush(stdout) ? 1 : 0;
}
