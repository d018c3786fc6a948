// SPDX-License-Identifier: GPL-2.0
/*
 * stats: what a trace executed — instructions, sessions, unique RIPs, the
 * hottest RIPs and 4 KiB pages, and how often each GPR changed; with memory
 * operands, the accesses by kind and the most written 64-byte blocks.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/analysis.h"
#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/counts.h"
#include "svmtrace-dump/files.h"

static const char stats_usage[] =
	"usage: svmtrace-dump stats [--top N] [--allow-truncated] [symbol options] FILE...\n"
	"Summarise what the traces executed: instructions, sessions, unique RIPs,\n"
	"the N hottest RIPs and pages (default 10) and per-register change counts;\n"
	"with symbols, instructions by module and the N hottest functions; with\n"
	"svmtraced's capture.json, instructions by process and thread; for traces with\n"
	"memory operands (captured with --mem), the accesses by kind and the N most\n"
	"written 64-byte blocks (write and rmw accesses touching each).\n"
	"  --symbols [DIR]    modules and exports from capture.json beside the trace\n"
	"                     (the default when it is there), ISF files from DIR\n"
	"  --no-symbols       no module or function tables\n"
	"  --capture FILE     the capture.json to take modules and exports from\n";

struct stats {
	uint64_t instructions;
	uint64_t sessions;
	uint64_t compared; /* instructions with a previous state to compare */
	uint64_t changes[SVMTRACE_NR_GPRS];
	struct counts rips;
	struct counts pages;
	struct analysis an;
	struct counts modules;	 /* module index + 1, 0: outside every module */
	struct counts functions; /* function start (module base: none known) */
	struct counts threads;	 /* thread index + 1, 0: not known */
	bool has_mem;
	uint64_t mem_kinds[SVMTRACE_MEM_RMW + 1]; /* accesses by enum svmtrace_mem_kind */
	struct counts written;			  /* 64-byte blocks written, by access */
};

#define WRITTEN_BLOCK 64

/* The step's accesses: counted by kind, writes by the blocks they touch. */
static void count_mem(struct stats *st, const struct svmtrace_record *rec)
{
	for (uint32_t k = 0; k < rec->nr_mem; k++) {
		const struct svmtrace_mem_access *a = &rec->mem[k];
		uint64_t b, last;

		st->mem_kinds[a->kind & 3]++;
		if (a->kind != SVMTRACE_MEM_WRITE && a->kind != SVMTRACE_MEM_RMW)
			continue;
		b = a->addr & ~(uint64_t)(WRITTEN_BLOCK - 1);
		last = (a->addr + a->size - 1) & ~(uint64_t)(WRITTEN_BLOCK - 1);
		for (;; b += WRITTEN_BLOCK) { /* at most two: an access is 32 bytes or less */
			counts_add(&st->written, b);
			if (b == last)
				break;
		}
	}
}

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
		count_mem(st, rec);
		if (st->an.threads) {
			const struct svmtrace_thread_info *th = analysis_thread(&st->an, rec);

			counts_add(&st->threads,
				   th ? (uint64_t)(th - svmtrace_threads_at(st->an.threads, 0)) + 1
				      : 0);
		}
		counts_add(&st->rips, s->rip);
		counts_add(&st->pages, s->rip & ~0xfffull);
		if (st->an.syms) {
			const char *m, *f;
			uint64_t fva;
			int mi = analysis_function(&st->an, s->cr3, s->rip, &fva, &m, &f);

			counts_add(&st->modules, (uint64_t)(mi + 1));
			if (mi >= 0)
				counts_add(&st->functions, analysis_function_key(mi, fva));
		}
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

static void print_threads(struct stats *st)
{
	struct count_entry *top = calloc(st->threads.used + 1, sizeof(*top));
	size_t got;

	if (!top)
		die("out of memory");
	got = counts_top(&st->threads, top, st->threads.used);
	printf("instructions by thread:\n");
	for (size_t i = 0; i < got; i++) {
		const struct svmtrace_thread_info *th =
			top[i].key ? svmtrace_threads_at(st->an.threads, top[i].key - 1) : NULL;
		char who[96];

		if (th)
			snprintf(who, sizeof(who), "%s pid %" PRIu64 " tid %" PRIu64,
				 th->process ? th->process : "?", th->pid, th->tid);
		else
			snprintf(who, sizeof(who), "(thread not known)");
		printf("  %-40s %12" PRIu64 "  %5.1f%%", who, top[i].count,
		       100.0 * (double)top[i].count /
			       (double)(st->instructions ? st->instructions : 1));
		if (th && th->win32_start_address)
			printf("  start 0x%" PRIx64, th->win32_start_address);
		putchar('\n');
	}
	free(top);
}

static void print_symbolized(struct stats *st, size_t n)
{
	struct count_entry *top = calloc(n > st->modules.used ? n : st->modules.used + 1,
					 sizeof(*top));
	char name[400];
	size_t got;

	if (!top)
		die("out of memory");
	got = counts_top(&st->modules, top, st->modules.used);
	printf("instructions by module:\n");
	for (size_t i = 0; i < got; i++) {
		const struct svmtrace_module_info *m =
			top[i].key ? svmtrace_symbols_module(st->an.syms, top[i].key - 1) : NULL;

		printf("  %-32s %12" PRIu64 "  %5.1f%%\n", m ? m->name : "(outside every module)",
		       top[i].count,
		       100.0 * (double)top[i].count /
			       (double)(st->instructions ? st->instructions : 1));
	}
	got = counts_top(&st->functions, top, n);
	printf("hottest functions:\n");
	for (size_t i = 0; i < got; i++) {
		analysis_function_name(&st->an, top[i].key, name, sizeof(name));
		printf("  %-48s %12" PRIu64 "  %5.1f%%\n", name, top[i].count,
		       100.0 * (double)top[i].count /
			       (double)(st->instructions ? st->instructions : 1));
	}
	free(top);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		ANALYSIS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct analysis_options ao = { .symbols = SYMBOLS_AUTO, .threads = SYMBOLS_AUTO };
	static struct stats st;
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
			if (analysis_opt(c, argc, argv, &ao))
				break;
			fputs(stats_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(stats_usage, stderr);
		return 2;
	}
	analysis_open(&st.an, &ao, argv[optind]);
	counts_init(&st.rips);
	counts_init(&st.pages);
	counts_init(&st.modules);
	counts_init(&st.functions);
	counts_init(&st.threads);
	counts_init(&st.written);
	for (int i = optind; i < argc; i++) {
		struct svmtrace_reader *r = open_trace(argv[i]);

		st.has_mem |= svmtrace_reader_summary(r)->has_mem;
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
	if (st.has_mem) {
		uint64_t *k = st.mem_kinds;

		printf("memory accesses: %" PRIu64 " (%" PRIu64 " reads, %" PRIu64
		       " writes, %" PRIu64 " rmw, %" PRIu64 " unrecorded)\n",
		       k[0] + k[1] + k[2] + k[3], k[SVMTRACE_MEM_READ], k[SVMTRACE_MEM_WRITE],
		       k[SVMTRACE_MEM_RMW], k[SVMTRACE_MEM_UNRECORDED]);
		print_top("hottest written regions (64-byte blocks)", &st.written, top,
			  k[SVMTRACE_MEM_WRITE] + k[SVMTRACE_MEM_RMW]);
	}
	if (st.an.threads)
		print_threads(&st);
	if (st.an.syms)
		print_symbolized(&st, top);
	counts_free(&st.written);
	counts_free(&st.threads);
	counts_free(&st.rips);
	counts_free(&st.pages);
	counts_free(&st.modules);
	counts_free(&st.functions);
	analysis_close(&st.an);
	return status;
}
