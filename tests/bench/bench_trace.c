// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-bench-trace: the in-process half of `make bench` for v5.
 *
 *   svmtrace-bench-trace RAW V5 [--lz4-level L] [--repeat N]
 *                        [--zstd-c TSC64] [--zstd-d ZST] [--csv DUMP]
 *
 *   svmtrace-bench-trace --time[=RUNS] COMMAND [ARG...]
 *
 * The first form loads RAW (168-byte records) into memory, encodes it to V5 through the
 * writer and decodes V5 to a counting visitor, and prints one line "records=R bytes=B
 * encode_s=E decode_s=D" with the best CPU time of each over N rounds (default 9).  With
 * --zstd-c / --zstd-d each round also runs `zstd -q -3 -c TSC64` right before the encode and
 * `zstd -q -d -c ZST` right before the decode, and with --csv `DUMP dump --regs V5`, and the
 * line adds zstd_c_s=, zstd_d_s= and csv_s= (best CPU times too).  Interleaving the two
 * sides of each ratio, round after round, makes a load that comes and goes on a shared
 * machine hit both alike, instead of the one that happened to run while it was busy.
 * The second form runs COMMAND RUNS times (default 5; output to /dev/null) and prints
 * its best CPU time in seconds, with microsecond resolution (the xz baseline, whose
 * ratio only reports size).  tests/bench/trace.sh turns that into ratios.  CPU time
 * (not wall time) keeps the numbers honest on a machine shared with other work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <svmtrace/trace.h>

#include "common/cli.h"
#include "raw_slots.h"

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* RAW's states as one session: a start, the instructions, an end. */
static struct svmtrace_slot *load(const char *path, size_t *n)
{
	struct svmtrace_slot *slots = load_raw_slots(path, 1, n);

	slots[0].kind = SVMTRACE_SLOT_SESSION_START;
	slots[*n] = slots[*n - 1];
	slots[*n].kind = SVMTRACE_SLOT_SESSION_END;
	slots[*n].seq++;
	(*n)++;
	return slots;
}

static double encode(const struct svmtrace_slot *slots, size_t n, const char *out, int level)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	double t0 = cpu_seconds();

	svmtrace_writer_options_init(&o);
	o.lz4_level = level;
	if (svmtrace_writer_open(out, &o, &w, &err))
		die("%s", err.message);
	for (size_t i = 0; i < n; i++)
		if (svmtrace_writer_append(w, &slots[i], &err))
			die("%s", err.message);
	/* close fsyncs: a durability cost, not an encoding one, but paid per file */
	if (svmtrace_writer_close(w, &err))
		die("%s", err.message);
	return cpu_seconds() - t0;
}

static bool count(const struct svmtrace_record *r, void *ctx)
{
	uint64_t *n = ctx;

	*n += r->state->rip != 0; /* touch the state so nothing is optimised away */
	return true;
}

static double decode(const char *path, size_t expect)
{
	struct svmtrace_summary s;
	struct svmtrace_error err;
	uint64_t n = 0;
	double t0 = cpu_seconds();

	if (svmtrace_read(path, count, &n, &s, &err))
		die("%s", err.message);
	if (s.records != expect)
		die("%s: decoded %llu records, encoded %zu", path, (unsigned long long)s.records,
		    expect);
	return cpu_seconds() - t0;
}

/* The child CPU time (user + system) of one run of @argv, its output to /dev/null. */
static double run_command(char *const *argv)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		die("wait4: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s failed (status 0x%x)", argv[0], status);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void keep_best(double *best, double t)
{
	*best = t < *best ? t : *best;
}

int main(int argc, char **argv)
{
	double enc = 1e9, dec = 1e9, zc = 1e9, zd = 1e9, csv = 1e9;
	unsigned int repeat = 9;
	int level = SVMTRACE_DEFAULT_LZ4_LEVEL;
	char *zstd_c[] = { "zstd", "-q", "-3", "-c", NULL, NULL };
	char *zstd_d[] = { "zstd", "-q", "-d", "-c", NULL, NULL };
	char *dump[] = { NULL, "dump", "--regs", NULL, NULL };
	struct svmtrace_slot *slots;
	struct stat st;
	size_t n;

	cli_progname = "svmtrace-bench-trace";
	if (argc > 2 && !strncmp(argv[1], "--time", 6)) {
		unsigned int runs =
			argv[1][6] == '=' ? (unsigned int)parse_u64(argv[1] + 7, "--time") : 5;
		double best = 1e9;

		for (unsigned int i = 0; i < (runs ? runs : 1); i++)
			keep_best(&best, run_command(argv + 2));
		printf("%.6f\n", best);
		return 0;
	}
	if (argc < 3)
		die("usage: svmtrace-bench-trace RAW V5 [--lz4-level L] [--repeat N] "
		    "[--zstd-c TSC64] [--zstd-d ZST] [--csv DUMP]");
	for (int i = 3; i < argc; i += 2) {
		if (i + 1 == argc)
			die("option '%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "--lz4-level"))
			level = (int)parse_u64(argv[i + 1], "--lz4-level");
		else if (!strcmp(argv[i], "--repeat"))
			repeat = (unsigned int)parse_u64(argv[i + 1], "--repeat");
		else if (!strcmp(argv[i], "--zstd-c"))
			zstd_c[4] = argv[i + 1];
		else if (!strcmp(argv[i], "--zstd-d"))
			zstd_d[4] = argv[i + 1];
		else if (!strcmp(argv[i], "--csv"))
			dump[0] = argv[i + 1];
		else
			die("unknown option '%s'", argv[i]);
	}
	dump[3] = argv[2];
	slots = load(argv[1], &n);
	for (unsigned int i = 0; i < (repeat ? repeat : 1); i++) {
		if (zstd_c[4])
			keep_best(&zc, run_command(zstd_c));
		keep_best(&enc, encode(slots, n, argv[2], level));
		if (zstd_d[4])
			keep_best(&zd, run_command(zstd_d));
		keep_best(&dec, decode(argv[2], n));
		if (dump[0])
			keep_best(&csv, run_command(dump));
	}
	if (stat(argv[2], &st) < 0)
		die("%s: %s", argv[2], strerror(errno));
	printf("records=%zu bytes=%lld encode_s=%.6f decode_s=%.6f", n, (long long)st.st_size, enc,
	       dec);
	if (zstd_c[4])
		printf(" zstd_c_s=%.6f", zc);
	if (zstd_d[4])
		printf(" zstd_d_s=%.6f", zd);
	if (dump[0])
		printf(" csv_s=%.6f", csv);
	putchar('\n');
	free(slots);
	return 0;
}
