// SPDX-License-Identifier: GPL-2.0
/*
 * calltree: who called whom, from the CALL/RET pairs of the trace.
 *
 * A call is the instruction before a record decoding as CALL (code.bin),
 * or, without its bytes, a step that pushed 8 bytes and went somewhere
 * other than the next few bytes.  A frame ends when RSP rises above the
 * slot its return address was pushed to (a RET, or anything that unwinds
 * past it: longjmp, exceptions), so a missed RET never leaves the tree
 * deeper than the stack.  Each node is a function in the context of its
 * callers; it counts its calls and the instructions executed inside it,
 * callees included.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/analysis.h"
#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/files.h"

#define MAX_DEPTH 4096
#define RSP	  7 /* enum svmtrace_gpr index of RSP */

static const char calltree_usage[] =
	"usage: svmtrace-dump calltree [options] FILE...\n"
	"Print the call tree of the traces: per function in its callers' context, the\n"
	"calls, the instructions executed inside it (callees included) and its own.\n"
	"  --depth N          print at most N levels (default 16)\n"
	"  --min-insns N      leave out subtrees of fewer instructions (default 1)\n"
	"  --symbols [DIR]    names from capture.json beside the trace (and ISF files)\n"
	"  --no-symbols       addresses only\n"
	"  --capture FILE     the capture.json to take modules and exports from\n"
	"  --code FILE        the code.bin that tells calls and returns apart\n"
	"  --allow-truncated  exit 0 when a file ends inside a frame\n";

struct node {
	uint64_t function; /* its start VA (or the call target) */
	uint64_t cr3;	   /* in this address space */
	int parent;
	int first_child, next_sibling;
	uint64_t calls, insns, self;
};

struct frame {
	int node;
	uint64_t rsp;	/* the slot the return address went to */
	uint64_t start; /* instruction count at entry */
};

struct tree {
	struct analysis an;
	struct node *nodes;
	size_t n, cap;
	struct frame stack[MAX_DEPTH];
	int depth;
	int root; /* the node at depth 0 */
	uint64_t insns;
	uint64_t calls_seen, heuristic_calls;
};

static uint64_t function_of(struct tree *t, uint64_t cr3, uint64_t va)
{
	const char *m, *f;
	uint64_t fva;

	if (t->an.syms && analysis_function(&t->an, cr3, va, &fva, &m, &f) >= 0 && f)
		return fva;
	return va; /* unknown code: the entry address names it */
}

/* The child of @parent for @function in @cr3 (a root when @parent < 0), made if new. */
static int child(struct tree *t, int parent, uint64_t cr3, uint64_t function)
{
	int c = parent >= 0 ? t->nodes[parent].first_child : -1;

	for (; c >= 0; c = t->nodes[c].next_sibling)
		if (t->nodes[c].function == function && t->nodes[c].cr3 == cr3)
			return c;
	if (parent < 0) /* roots: search them all */
		for (size_t i = 0; i < t->n; i++)
			if (t->nodes[i].parent < 0 && t->nodes[i].function == function &&
			    t->nodes[i].cr3 == cr3)
				return (int)i;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->nodes = realloc(t->nodes, t->cap * sizeof(*t->nodes));
		if (!t->nodes)
			die("out of memory");
	}
	t->nodes[t->n] =
		(struct node){ .function = function,
			       .cr3 = cr3,
			       .parent = parent,
			       .first_child = -1,
			       .next_sibling = parent >= 0 ? t->nodes[parent].first_child : -1 };
	if (parent >= 0)
		t->nodes[parent].first_child = (int)t->n;
	return (int)t->n++;
}

static void pop(struct tree *t)
{
	struct frame *f = &t->stack[--t->depth];

	t->nodes[f->node].insns += t->insns - f->start;
}

static void unwind_all(struct tree *t)
{
	while (t->depth)
		pop(t);
	t->root = -1;
}

static int current(const struct tree *t)
{
	return t->depth ? t->stack[t->depth - 1].node : t->root;
}

/* One file: @prev is the record before @r in it. */
static void step(struct tree *t, const struct svmtrace_record *prev, const struct svmtrace_record *r)
{
	const struct svmtrace_state *s = r->state, *p = prev ? prev->state : NULL;
	bool call = false;

	if (r->kind == SVMTRACE_SLOT_SESSION_END) {
		unwind_all(t);
		return;
	}
	if (r->kind == SVMTRACE_SLOT_SESSION_START || !p || r->dropped) {
		unwind_all(t);
		t->root = child(t, -1, s->cr3, function_of(t, s->cr3, s->rip));
		t->nodes[t->root].calls++;
		t->nodes[t->root].self++;
		t->nodes[t->root].insns++;
		t->insns++;
		return;
	}
	/* the instruction at p->rip produced s */
	if (t->an.code) {
		const struct insn *in = analysis_insn(&t->an, p->cr3, p->rip, prev->sequence);

		if (in->kind == INSN_CALL)
			call = true;
		else if (in->kind == INSN_MISSING || in->kind == INSN_BAD)
			goto guess;
	} else {
guess:
		call = s->gpr[RSP] == p->gpr[RSP] - 8 && (s->rip <= p->rip || s->rip > p->rip + 15);
		t->heuristic_calls += call;
	}
	/* the instruction that produced s ran in the current function */
	t->insns++;
	if (current(t) >= 0)
		t->nodes[current(t)].self++;
	if (t->root >= 0) /* a root counts every instruction of its session */
		t->nodes[t->root].insns++;
	/* Returns: frames whose return slot RSP has left behind. */
	while (t->depth && s->gpr[RSP] > t->stack[t->depth - 1].rsp)
		pop(t);
	if (call && t->depth < MAX_DEPTH && current(t) >= 0) {
		int n = child(t, current(t), s->cr3, function_of(t, s->cr3, s->rip));

		t->nodes[n].calls++;
		t->stack[t->depth++] = (struct frame){ n, s->gpr[RSP], t->insns };
		t->calls_seen++;
	}
}

static void name(struct tree *t, uint64_t cr3, uint64_t va, char *buf, size_t size)
{
	if (t->an.syms && svmtrace_symbols_format(t->an.syms, cr3, va, buf, size))
		return;
	snprintf(buf, size, "0x%" PRIx64, va);
}

static int by_insns_desc(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	const struct node *x = &t->nodes[*(const int *)a], *y = &t->nodes[*(const int *)b];

	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

static void print(struct tree *t, int n, int depth, int max_depth, uint64_t min)
{
	char label[400];
	int kids[4096], k = 0, c;

	name(t, t->nodes[n].cr3, t->nodes[n].function, label, sizeof(label));
	printf("%10" PRIu64 " %12" PRIu64 " %12" PRIu64 "  %*s%s\n", t->nodes[n].calls,
	       t->nodes[n].insns, t->nodes[n].self, 2 * depth, "", label);
	if (depth + 1 >= max_depth)
		return;
	for (c = t->nodes[n].first_child; c >= 0 && k < 4096; c = t->nodes[c].next_sibling)
		if (t->nodes[c].insns >= min)
			kids[k++] = c;
	qsort_r(kids, (size_t)k, sizeof(int), by_insns_desc, t);
	for (c = 0; c < k; c++)
		print(t, kids[c], depth + 1, max_depth, min);
}

int cmd_calltree(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "depth", required_argument, NULL, 'd' },
		{ "min-insns", required_argument, NULL, 'm' },
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		ANALYSIS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct analysis_options ao = { .symbols = SYMBOLS_AUTO, .code = true, .code_optional = true };
	static struct tree t;
	bool allow_truncated = false;
	uint64_t depth = 16, min = 1;
	int c, status = 0;
	int *roots;
	size_t nr = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			depth = parse_u64(optarg, "--depth");
			break;
		case 'm':
			min = parse_u64(optarg, "--min-insns");
			break;
		case 't':
			allow_truncated = true;
			break;
		case 'h':
			fputs(calltree_usage, stdout);
			return 0;
		default:
			if (analysis_opt(c, argc, argv, &ao))
				break;
			fputs(calltree_usage, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(calltree_usage, stderr);
		return 2;
	}
	analysis_open(&t.an, &ao, argv[optind]);
	for (int i = optind; i < argc; i++) {
		struct svmtrace_reader *r = open_trace(argv[i]);
		const struct svmtrace_record *rec;
		struct svmtrace_record prev;
		struct svmtrace_state prev_state;
		bool have_prev = false;
		int ret;

		t.root = -1;
		t.depth = 0;
		while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
			step(&t, have_prev ? &prev : NULL, rec);
			prev = *rec;
			prev_state = *rec->state;
			prev.state = &prev_state;
			have_prev = rec->kind != SVMTRACE_SLOT_SESSION_END;
		}
		unwind_all(&t);
		status |= finish_trace(r, ret, allow_truncated);
		svmtrace_reader_close(r);
	}
	printf("%10s %12s %12s  %s\n", "calls", "instructions", "self", "function");
	roots = calloc(t.n + 1, sizeof(*roots));
	if (!roots)
		die("out of memory");
	for (size_t i = 0; i < t.n; i++)
		if (t.nodes[i].parent < 0)
			roots[nr++] = (int)i;
	qsort_r(roots, nr, sizeof(int), by_insns_desc, &t);
	for (size_t i = 0; i < nr; i++)
		print(&t, roots[i], 0, (int)depth, min);
	if (t.heuristic_calls)
		printf("(%" PRIu64 " of %" PRIu64
		       " calls recognised without code bytes: by RSP and the jump)\n",
		       t.heuristic_calls, t.calls_seen);
	free(roots);
	free(t.nodes);
	analysis_close(&t.an);
	return status;
}
