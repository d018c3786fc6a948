// SPDX-License-Identifier: GPL-2.0
/*
 * stats: what a trace executed — instructions, sessions, unique RIPs, the
 * hottest RIPs and 4 KiB pages, and how often each GPR changed.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/counts.h"
#include "svmtrace-dump/files.h"

static const char stats_usage[] =
	"usage: svmtrace-dump stats [--top N] [--allow-truncated] FILE...\n"
	"Summarise what the traces executed: instructions, sessions, unique RIPs,\n"
	"the N hottest RIPs and pages (default 10) and per-register change counts.\n";

struct stats {
	uint64_t instructions;
	uint64_t sessions;
	uint64_t compared; /* instructions with a previous state to compare */
	uint64_t changes[SVMTRACE_NR_GPRS];
	struct counts rips;
	struct counts pages;
};

/* Count one file's records; returns the reader's last result. */
static int count_file(struct stats *st, struct svmtrace_reader *r)
{
	const struct svmtrace_record *rec;
	uint64_t prev[SVMTRACE_NR_GPRS];
	bool have_prev = false;
	int ret;

	while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
		const struct svmtrace_state *s = rec->state;

		if (rec->kind == SVMTRACE_SLOT_SESSION_END) {
			have_prev = false;
			continue;
		}
		if (rec->kind == SVMTRACE_SLOT_SESSION_START) {
			st->sessions++;
		} else if (have_prev && !rec->dropped) {
			st->compared++;
			for (int i = 0; i < SVMTRACE_NR_GPRS; i++)
				st->changes[i] += s->gpr[i] != prev[i];
		}
		st->instructions++;
		counts_add(&st->rips, s->rip);
		counts_add(&st->pages, s->rip & ~0xfffull);
		memcpy(prev, s->gpr, sizeof(prev));
		have_prev = true;
	}
	return ret;
}

static void print_top(const char *title, const struct counts *c, size_t n, uint64_t total)
{
	struct count_entry *top = calloc(n ? n : 1, sizeof(*top));
	size_t got;

	if (!top)
		die("out of memory");
	got = counts_top(c, top, n);
	printf("%s:\n", title);
	for (size_t i = 0; i < got; i++)
		printf("  0x%016" PRIx64 "  %12" PRIu64 "  %5.1f%%\n", top[i].key, top[i].count,
		       100.0 * (double)top[i].count / (double)(total ? total : 1));
	free(top);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stats st = { 0 };
	bool allow_truncated = false;
	uint64_t top = 10;
	int c, status = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			top = parse_u64(optarg, "--top");
			if (top > 100000)
				die("--top: expected at most 100000, got %s", optarg);
			break;
		case 't':
			allow_truncated = true;
			break;
		case 'h':
			fputs(stats_usage, stdout);
			return 0;
		default:
			fputs(stats_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(stats_usage, stderr);
		return 2;
	}
	counts_init(&st.rips);
	counts_init(&st.pages);
	for (int i = optind; i < argc; i++) {
		struct svmtrace_reader *r = open_trace(argv[i]);

		status |= finish_trace(r, count_file(&st, r), allow_truncated);
		svmtrace_reader_close(r);
	}
	printf("instructions: %" PRIu64 "\n", st.instructions);
	printf("sessions: %" PRIu64 "\n", st.sessions);
	printf("unique RIPs: %zu\n", st.rips.used);
	printf("unique pages: %zu\n", st.pages.used);
	print_top("hottest RIPs", &st.rips, top, st.instructions);
	print_top("hottest pages", &st.pages, top, st.instructions);
	printf("register changes (of %" PRIu64 " steps):\n", st.compared);
	for (int i = 0; i < SVMTRACE_NR_GPRS; i++)
		printf("  %-4s %12" PRIu64 "  %5.1f%%\n", svmtrace_gpr_names[i], st.changes[i],
		       100.0 * (double)st.changes[i] / (double)(st.compared ? st.compared : 1));
	counts_free(&st.rips);
	counts_free(&st.pages);
	return status;
}
