// SPDX-License-Identifier: GPL-2.0
/*
 * dump: decoded records as CSV (cpu,sequence,kind,rip,rflags,cr3,reason and
 * with --threads the process and thread IDs, with --regs the 16 GPRs, and
 * XSTATE_BV and YMM0-15 when the trace has them) or JSON lines, filtered,
 * from one file or merged from several per-vCPU files in global sequence
 * order.  A CSV's columns are fixed by its header, before any row: YMM
 * columns come when the first record of known state (of any file, merged)
 * has YMM state (lookahead.c finds it).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/analysis.h"
#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/files.h"
#include "svmtrace-dump/lookahead.h"
#include "svmtrace-dump/memtext.h"
#include "svmtrace-dump/out.h"

static const char dump_usage[] =
	"usage: svmtrace-dump dump [options] FILE [LIMIT]\n"
	"       svmtrace-dump dump --merge [options] FILE...\n"
	"Print decoded records, one row each: cpu,sequence,kind,rip,rflags,cr3,reason.\n"
	"  --threads           add pid,tid: the process and thread each record ran in\n"
	"                      (svmtraced's capture.json beside the trace; empty when it\n"
	"                      does not say)\n"
	"  --tid N             only rows of thread N (implies --threads)\n"
	"  --regs              add the 16 GPRs: rax rbx rcx rdx rsi rdi rbp rsp r8..r15;\n"
	"                      when the first record of known state has YMM state\n"
	"                      (captured with xstate) also xstate_bv and ymm0..ymm15\n"
	"                      (256-bit hex, 64 digits); YMM state of later records\n"
	"                      that has no column is an error (--format jsonl has it)\n"
	"  --format csv|jsonl  output format (default csv)\n"
	"  --cr3 X             only rows whose CR3 is X\n"
	"  --rip-range A-B     only rows with A <= rip < B (the end is exclusive, as in\n"
	"                      svmtrace-capture and svmtraced)\n"
	"  --seq A-B           only rows with A <= sequence <= B\n"
	"  --limit N           stop after N rows (also the optional LIMIT argument)\n"
	"  --mem               add the instruction's memory accesses (a trace captured\n"
	"                      with --mem): a mem column of r:ADDR:SIZE:BYTES,\n"
	"                      w:ADDR:SIZE:BYTES, rw:ADDR:SIZE:OLD:NEW and\n"
	"                      u:ADDR:SIZE:WHY separated by spaces (bytes in memory\n"
	"                      order), or a mem array in JSON lines\n"
	"  --mem-range A-B     only rows with an access touching [A, B), and only those\n"
	"                      accesses (implies --mem)\n"
	"  --merge             interleave several per-vCPU files by global sequence\n"
	"  --allow-truncated   exit 0 when a file ends inside a frame\n"
	"  --symbols [DIR]     add a symbol column: module!export+0x12 or module+0x1234\n"
	"                      from capture.json (default when it is beside the trace);\n"
	"                      DIR: volatility3 ISF files of user modules, by PDB GUID-AGE\n"
	"  --no-symbols        no symbol column even with capture.json beside the trace\n"
	"  --capture FILE      the capture.json to take modules and exports from\n"
	"  --disasm            add the instruction at rip, decoded (Intel syntax) from\n"
	"                      code.bin beside the trace; missing bytes say so\n"
	"  --code FILE         the code.bin to decode from\n"
	"The symbol and disasm columns describe rip, the next instruction of the row's\n"
	"state; the instruction that produced the state is the previous row's.\n";

struct filter {
	bool cr3_set;
	uint64_t cr3;
	bool tid_set;
	uint64_t tid;
	bool rip_set;
	uint64_t rip_lo, rip_hi; /* [rip_lo, rip_hi) */
	uint64_t seq_lo, seq_hi;
	struct mem_range mem;
};

struct dump {
	struct filter f;
	bool regs;
	bool mem;	   /* the mem column / array */
	bool ymm;	   /* --regs and the first record of known state has YMM: columns */
	bool ymm_left_out; /* a CSV row without columns for its record's YMM state */
	bool jsonl;
	bool merge;
	bool allow_truncated;
	uint64_t limit;
	uint64_t rows;
	struct analysis_options ao;
	struct analysis an;
	bool disasm;
	/* the state columns' last text: rflags, cr3, then the 16 GPRs */
	struct hex_cache col[2 + SVMTRACE_NR_GPRS];
	struct {
		char text[16];
		size_t len;
	} kind[SVMTRACE_SLOT_SESSION_END + 1]; /* svmtrace_kind_name, padded for one copy */
};

static bool wanted(const struct filter *f, const struct svmtrace_record *r,
		   const struct svmtrace_thread_info *th)
{
	const struct svmtrace_state *s = r->state;

	if (f->mem.set) {
		uint32_t k = 0;

		while (k < r->nr_mem && !mem_in_range(&r->mem[k], &f->mem))
			k++;
		if (k == r->nr_mem)
			return false;
	}
	return r->sequence >= f->seq_lo && r->sequence <= f->seq_hi &&
	       (!f->rip_set || (s->rip >= f->rip_lo && s->rip < f->rip_hi)) &&
	       (!f->cr3_set || (r->state_known && s->cr3 == f->cr3)) &&
	       (!f->tid_set || (th && th->tid == f->tid));
}

/* The record's accesses that --mem-range takes, separated by spaces. */
static char *csv_mem(const struct dump *d, char *p, const struct svmtrace_record *r)
{
	bool first = true;

	*p++ = ',';
	for (uint32_t k = 0; k < r->nr_mem; k++) {
		if (!mem_in_range(&r->mem[k], &d->f.mem))
			continue;
		if (!first)
			*p++ = ' ';
		p = put_mem_text(p, &r->mem[k]);
		first = false;
	}
	return p;
}

/* ,"mem":[{...}, ...] */
static char *json_mem(const struct dump *d, char *p, const struct svmtrace_record *r)
{
	bool first = true;

	p = put_str(p, ",\"mem\":[");
	for (uint32_t k = 0; k < r->nr_mem; k++) {
		if (!mem_in_range(&r->mem[k], &d->f.mem))
			continue;
		if (!first)
			*p++ = ',';
		p = put_mem_json(p, &r->mem[k]);
		first = false;
	}
	*p++ = ']';
	return p;
}

static void row_caches_init(struct dump *d)
{
	for (size_t i = 0; i < sizeof(d->col) / sizeof(d->col[0]); i++)
		hex_cache_init(&d->col[i]);
	for (int k = SVMTRACE_SLOT_INSTRUCTION; k <= SVMTRACE_SLOT_SESSION_END; k++) {
		const char *name = svmtrace_kind_name(k);

		d->kind[k].len = strlen(name);
		memcpy(d->kind[k].text, name, d->kind[k].len);
	}
}

static char *put_kind(struct dump *d, char *p, enum svmtrace_slot_kind kind)
{
	memcpy(p, d->kind[kind].text, sizeof(d->kind[kind].text));
	return p + d->kind[kind].len;
}

/* State column @i; a value the record does not know (state_known false) prints as nothing. */
static char *csv_hex(struct dump *d, char *p, const struct svmtrace_record *r, int i, uint64_t v)
{
	*p++ = ',';
	return r->state_known ? put_hex_cached(p, &d->col[i], v) : p;
}

/* xstate_bv and ymm0..15; empty cells for a record without YMM state. */
static char *csv_ymm(char *p, const struct svmtrace_record *r)
{
	bool known = r->state_known && r->has_ymm;

	*p++ = ',';
	if (known)
		p = put_hex(p, r->state->xstate_bv);
	for (int i = 0; i < 16; i++) {
		*p++ = ',';
		if (known)
			p = put_hex256(p, r->state->ymm[i]);
	}
	return p;
}

/* ,pid,tid -- empty where the capture does not say */
static char *csv_thread(char *p, const struct svmtrace_thread_info *th)
{
	*p++ = ',';
	if (th && th->pid)
		p = put_dec(p, th->pid);
	*p++ = ',';
	if (th && th->tid)
		p = put_dec(p, th->tid);
	return p;
}

static char *csv_row(struct dump *d, char *p, const struct svmtrace_record *r, bool regs,
		     const struct svmtrace_thread_info *th)
{
	const struct svmtrace_state *s = r->state;

	p = put_dec(p, r->cpu);
	*p++ = ',';
	p = put_dec(p, r->sequence);
	*p++ = ',';
	p = put_kind(d, p, r->kind);
	*p++ = ',';
	p = put_hex(p, s->rip);
	p = csv_hex(d, p, r, 0, s->rflags);
	p = csv_hex(d, p, r, 1, s->cr3);
	*p++ = ',';
	p = put_dec(p, r->reason);
	if (d->an.threads)
		p = csv_thread(p, th);
	for (int i = 0; regs && i < SVMTRACE_NR_GPRS; i++)
		p = csv_hex(d, p, r, 2 + i, s->gpr[i]);
	if (d->ymm)
		p = csv_ymm(p, r);
	if (d->mem)
		p = csv_mem(d, p, r);
	if (d->an.syms) {
		*p++ = ',';
		p = analysis_put_symbol(&d->an, p, s->cr3, s->rip);
	}
	if (d->disasm) {
		*p++ = ',';
		*p++ = '"';
		p = put_str(p, analysis_insn(&d->an, s->cr3, s->rip, r->sequence)->text);
		*p++ = '"';
	}
	*p++ = '\n';
	return p;
}

static char *json_hex(char *p, const char *key, uint64_t v)
{
	*p++ = '"';
	p = put_str(p, key);
	p = put_str(p, "\":\"");
	p = put_hex(p, v);
	*p++ = '"';
	return p;
}

/* A state value, or null when the record does not know it. */
static char *json_state(char *p, const struct svmtrace_record *r, const char *key, uint64_t v)
{
	if (r->state_known)
		return json_hex(p, key, v);
	*p++ = '"';
	p = put_str(p, key);
	return put_str(p, "\":null");
}

/* ,"xstate_bv":"0x7","ymm":["0x<64 digits>", ... 16] */
static char *json_ymm(char *p, const struct svmtrace_state *s)
{
	*p++ = ',';
	p = json_hex(p, "xstate_bv", s->xstate_bv);
	p = put_str(p, ",\"ymm\":[");
	for (int i = 0; i < 16; i++) {
		if (i)
			*p++ = ',';
		*p++ = '"';
		p = put_hex256(p, s->ymm[i]);
		*p++ = '"';
	}
	*p++ = ']';
	return p;
}

/* ,"pid":N,"tid":N -- null where the capture does not say */
static char *json_thread(char *p, const struct svmtrace_thread_info *th)
{
	p = put_str(p, ",\"pid\":");
	p = th && th->pid ? put_dec(p, th->pid) : put_str(p, "null");
	p = put_str(p, ",\"tid\":");
	return th && th->tid ? put_dec(p, th->tid) : put_str(p, "null");
}

static char *json_row(struct dump *d, char *p, const struct svmtrace_record *r, bool regs,
		      const struct svmtrace_thread_info *th)
{
	const struct svmtrace_state *s = r->state;

	p = put_str(p, "{\"cpu\":");
	p = put_dec(p, r->cpu);
	p = put_str(p, ",\"sequence\":");
	p = put_dec(p, r->sequence);
	p = put_str(p, ",\"kind\":\"");
	p = put_str(p, svmtrace_kind_name(r->kind));
	p = put_str(p, "\",");
	p = json_hex(p, "rip", s->rip);
	*p++ = ',';
	p = json_state(p, r, "rflags", s->rflags);
	*p++ = ',';
	p = json_state(p, r, "cr3", s->cr3);
	p = put_str(p, ",\"reason\":");
	p = put_dec(p, r->reason);
	if (d->an.threads)
		p = json_thread(p, th);
	if (r->has_tsc) {
		*p++ = ',';
		p = json_hex(p, "tsc", r->tsc);
	}
	if (r->dropped) {
		p = put_str(p, ",\"dropped\":");
		p = put_dec(p, r->dropped);
	}
	if (regs) {
		p = put_str(p, ",\"regs\":{");
		for (int i = 0; i < SVMTRACE_NR_GPRS; i++) {
			if (i)
				*p++ = ',';
			p = json_state(p, r, svmtrace_gpr_names[i], s->gpr[i]);
		}
		*p++ = '}';
		if (r->has_ymm && r->state_known)
			p = json_ymm(p, s);
	}
	if (d->mem)
		p = json_mem(d, p, r);
	if (d->an.syms) {
		p = put_str(p, ",\"symbol\":\"");
		p = analysis_put_symbol(&d->an, p, s->cr3, s->rip);
		*p++ = '"';
	}
	if (d->disasm) {
		p = put_str(p, ",\"disasm\":\"");
		p = put_str(p, analysis_insn(&d->an, s->cr3, s->rip, r->sequence)->text);
		*p++ = '"';
	}
	p = put_str(p, "}\n");
	return p;
}

/* Print @r if the filters take it; false once the row limit is reached. */
static bool emit(struct dump *d, const struct svmtrace_record *r)
{
	const struct svmtrace_thread_info *th = analysis_thread(&d->an, r);
	char *p;

	if (!wanted(&d->f, r, th))
		return true;
	if (d->regs && !d->jsonl && !d->ymm && r->has_ymm && r->state_known && !d->ymm_left_out) {
		warn("the record at sequence %llu (cpu %u) has YMM state, but the CSV has no YMM "
		     "columns: the first record of known state had none (--format jsonl prints "
		     "YMM state per record)",
		     (unsigned long long)r->sequence, r->cpu);
		d->ymm_left_out = true;
	}
	p = out_row();
	out_commit(d->jsonl ? json_row(d, p, r, d->regs, th) : csv_row(d, p, r, d->regs, th));
	return ++d->rows < d->limit;
}

static void header(const struct dump *d)
{
	char *p;

	if (d->jsonl)
		return;
	p = put_str(out_row(), "cpu,sequence,kind,rip,rflags,cr3,reason");
	if (d->an.threads)
		p = put_str(p, ",pid,tid");
	for (int i = 0; d->regs && i < SVMTRACE_NR_GPRS; i++) {
		*p++ = ',';
		p = put_str(p, svmtrace_gpr_names[i]);
	}
	if (d->ymm) {
		p = put_str(p, ",xstate_bv");
		for (int i = 0; i < 16; i++) {
			p = put_str(p, ",ymm");
			p = put_dec(p, (uint64_t)i);
		}
	}
	if (d->mem)
		p = put_str(p, ",mem");
	if (d->an.syms)
		p = put_str(p, ",symbol");
	if (d->disasm)
		p = put_str(p, ",disasm");
	*p++ = '\n';
	out_commit(p);
}

/* --mem needs a trace that has memory operands: say so rather than print none. */
static void need_mem(const struct dump *d, struct svmtrace_reader *r, const char *path)
{
	if (d->mem && !svmtrace_reader_summary(r)->has_mem)
		die("%s: the trace has no memory operands (it was captured without --mem)", path);
}

static int dump_one(struct dump *d, const char *path)
{
	struct lookahead l;
	const struct svmtrace_record *rec;
	int ret, status;

	lookahead_open(&l, path);
	need_mem(d, l.r, path);
	d->ymm = d->regs && l.has_ymm;
	header(d);
	for (ret = lookahead_next(&l, &rec); ret > 0 && d->limit; ret = lookahead_next(&l, &rec))
		if (rec->sequence > d->f.seq_hi || !emit(d, rec))
			break;
	out_flush();
	status = finish_trace(l.r, ret, d->allow_truncated);
	lookahead_close(&l);
	return status;
}

static int dump_merged(struct dump *d, int n, char **paths)
{
	struct lookahead *l = calloc((size_t)n, sizeof(*l));
	const struct svmtrace_record **head = calloc((size_t)n, sizeof(*head));
	int status = 0, ret;

	if (!l || !head)
		die("out of memory");
	for (int i = 0; i < n; i++) {
		lookahead_open(&l[i], paths[i]);
		need_mem(d, l[i].r, paths[i]);
		d->ymm |= d->regs && l[i].has_ymm;
		ret = lookahead_next(&l[i], &head[i]);
		if (ret <= 0) {
			head[i] = NULL;
			status |= finish_trace(l[i].r, ret, d->allow_truncated);
		}
	}
	header(d);
	while (d->limit) {
		int best = -1;

		for (int i = 0; i < n; i++)
			if (head[i] && (best < 0 || head[i]->sequence < head[best]->sequence))
				best = i;
		if (best < 0 || head[best]->sequence > d->f.seq_hi || !emit(d, head[best]))
			break;
		ret = lookahead_next(&l[best], &head[best]);
		if (ret <= 0) {
			head[best] = NULL;
			out_flush();
			status |= finish_trace(l[best].r, ret, d->allow_truncated);
		}
	}
	out_flush();
	for (int i = 0; i < n; i++)
		lookahead_close(&l[i]);
	free(l);
	free(head);
	return status;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "regs", no_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "cr3", required_argument, NULL, 'c' },
		{ "rip-range", required_argument, NULL, 'i' },
		{ "seq", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "merge", no_argument, NULL, 'm' },
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "disasm", no_argument, NULL, 'D' },
		{ "mem", no_argument, NULL, 'M' },
		{ "mem-range", required_argument, NULL, 'R' },
		{ "threads", no_argument, NULL, 'T' },
		{ "tid", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		ANALYSIS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct dump d = { .f = { .seq_hi = UINT64_MAX },
			  .limit = UINT64_MAX,
			  .ao = { .symbols = SYMBOLS_AUTO } };
	int c, nfiles;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			d.regs = true;
			break;
		case 'f':
			if (strcmp(optarg, "csv") && strcmp(optarg, "jsonl"))
				die("--format: expected csv or jsonl, got '%s'", optarg);
			d.jsonl = !strcmp(optarg, "jsonl");
			break;
		case 'c':
			d.f.cr3_set = true;
			d.f.cr3 = parse_u64(optarg, "--cr3");
			break;
		case 'i':
			parse_rip_range(optarg, &d.f.rip_lo, &d.f.rip_hi);
			d.f.rip_set = true;
			break;
		case 's':
			parse_range(optarg, "--seq", &d.f.seq_lo, &d.f.seq_hi);
			break;
		case 'l':
			d.limit = parse_u64(optarg, "--limit");
			break;
		case 'm':
			d.merge = true;
			break;
		case 't':
			d.allow_truncated = true;
			break;
		case 'D':
			d.disasm = true;
			d.ao.code = true;
			break;
		case 'M':
			d.mem = true;
			break;
		case 'R':
			parse_half_open(optarg, "--mem-range", &d.f.mem.lo, &d.f.mem.hi);
			d.f.mem.set = true;
			d.mem = true;
			break;
		case 'I':
			d.f.tid_set = true;
			d.f.tid = parse_u64(optarg, "--tid");
			/* fall through */
		case 'T':
			d.ao.threads = SYMBOLS_ON;
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return 0;
		default:
			if (analysis_opt(c, argc, argv, &d.ao))
				break;
			fputs(dump_usage, stderr);
			return 2;
		}
	}
	nfiles = argc - optind;
	if (!d.merge && nfiles == 2) {
		d.limit = parse_u64(argv[optind + 1], "LIMIT");
		nfiles = 1;
	}
	if (nfiles < 1 || (!d.merge && nfiles != 1)) {
		fputs(dump_usage, stderr);
		return 2;
	}
	analysis_open(&d.an, &d.ao, argv[optind]);
	row_caches_init(&d);
	/* The header follows the first records: they say whether YMM columns come. */
	c = d.merge ? dump_merged(&d, nfiles, argv + optind) : dump_one(&d, argv[optind]);
	analysis_close(&d.an);
	return c | d.ymm_left_out;
}
