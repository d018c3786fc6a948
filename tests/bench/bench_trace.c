// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-bench-trace: the in-process half of `make bench` for v5.
 *
 *   svmtrace-bench-trace RAW V5 [--lz4-level L] [--repeat N]
 *
 *   svmtrace-bench-trace --time[=RUNS] COMMAND [ARG...]
 *
 * The first form loads RAW (168-byte records) into memory, encodes it to V5 through the
 * writer and decodes V5 to a counting visitor, each N times (default 7), and prints one
 * line "records=R bytes=B encode_s=E decode_s=D" with the best CPU time of
 * each.  The second runs COMMAND RUNS times (default 5; output to /dev/null) and
 * prints its best CPU time in seconds, with microsecond resolution, for the
 * baselines.  tests/bench/trace.sh turns that into ratios against xz and zstd
 * measured in the same run.  CPU time (not wall time) keeps the numbers
 * honest on a machine shared with other work.
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

/* Best child CPU time (user + system) of @runs runs of @argv. */
static double time_command(char **argv, unsigned int runs)
{
	double best = 1e9;

	for (unsigned int i = 0; i < runs; i++) {
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
		double t = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
			   (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
		best = t < best ? t : best;
	}
	return best;
}

int main(int argc, char **argv)
{
	double enc = 1e9, dec = 1e9;
	unsigned int repeat = 7;
	int level = SVMTRACE_DEFAULT_LZ4_LEVEL;
	struct svmtrace_slot *slots;
	struct stat st;
	size_t n;

	cli_progname = "svmtrace-bench-trace";
	if (argc > 2 && !strncmp(argv[1], "--time", 6)) {
		unsigned int runs =
			argv[1][6] == '=' ? (unsigned int)parse_u64(argv[1] + 7, "--time") : 5;

		printf("%.6f\n", time_command(argv + 2, runs ? runs : 1));
		return 0;
	}
	if (argc < 3)
		die("usage: svmtrace-bench-trace RAW V5 [--lz4-level L] [--repeat N]");
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--lz4-level"))
			level = (int)parse_u64(argv[i + 1], "--lz4-level");
		else if (!strcmp(argv[i], "--repeat"))
			repeat = (unsigned int)parse_u64(argv[i + 1], "--repeat");
		else
			die("unknown option '%s'", argv[i]);
	}
	slots = load(argv[1], &n);
	for (unsigned int i = 0; i < repeat; i++) {
		double e = encode(slots, n, argv[2], level);
		double d = decode(argv[2], n);

		enc = e < enc ? e : enc;
		dec = d < dec ? d : dec;
	}
	if (stat(argv[2], &st) < 0)
		die("%s: %s", argv[2], strerror(errno));
	printf("records=%zu bytes=%lld encode_s=%.6f decode_s=%.6f\n", n, (long long)st.st_size,
	       enc, dec);
	free(slots);
	return 0;
}
