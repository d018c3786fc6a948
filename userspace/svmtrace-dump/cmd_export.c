// SPDX-License-Identifier: GPL-2.0
/*
 * export: a trace in the formats the tools people already use read.
 *
 *   drcov    DynamoRIO's drcov version 2: module table from capture.json,
 *            then the basic blocks as executed (binary start/size/module),
 *            for Lighthouse (IDA, Binary Ninja) and Ghidra's coverage
 *            plugins.  Several files may be given (their union).
 *   tenet    Tenet's text trace for IDA: one line per instruction, the
 *            registers that changed and rip, all of them on a session's
 *            first line, then with memory operands the bytes the
 *            instruction read (mr=) and wrote (mw=).  A Tenet trace is one
 *            thread's: a capture of several threads (capture.json says
 *            which) becomes one file per thread.
 *   x64dbg   x64dbg's .trace64: "TRAC", a JSON header, one block per
 *            instruction with its opcode bytes (from code.bin) and the
 *            REGDUMP registers that changed, all of them at the start and
 *            every 512 blocks; the block where the thread changes carries
 *            its thread ID (the vCPU's number when the capture does not say).
 *            With memory operands, a block carries its instruction's
 *            accesses as x64dbg's pointer-sized pieces (x64dbg_mem.h): those
 *            are in the next record, which the block waits for.
 *
 * --tid N keeps one thread's records, in every format.
 *
 * Each record's state is the state *before* the instruction at its rip,
 * which is what all three formats describe per line or block.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/analysis.h"
#include "svmtrace-dump/commands.h"
#include "svmtrace-dump/files.h"
#include "svmtrace-dump/x64dbg_mem.h"

static const char export_usage[] =
	"usage: svmtrace-dump export --format drcov|tenet|x64dbg [options] FILE...\n"
	"Write the trace for other tools (to standard output unless --out):\n"
	"  --format drcov     drcov version 2 (module table + basic blocks) for Lighthouse\n"
	"                     and Ghidra coverage plugins; several FILEs make one file\n"
	"  --format tenet     Tenet text trace (register deltas per instruction) for IDA,\n"
	"                     with mr=/mw= memory entries when the trace has them\n"
	"  --format x64dbg    x64dbg .trace64 (opcode bytes, register changes and the\n"
	"                     memory accesses x64dbg can hold, per instruction) for\n"
	"                     x64dbg's trace view; one FILE\n"
	"  --out FILE         write to FILE; tenet, of a capture of several threads: one\n"
	"                     file per thread, FILE.PID.TID (FILE.unknown for records of\n"
	"                     no known thread)\n"
	"  --tid N            only the records of thread N (capture.json beside the trace)\n"
	"  --capture FILE     the capture.json for modules (default: beside the trace)\n"
	"  --code FILE        the code.bin for opcode bytes and instruction sizes\n"
	"  --symbols [DIR]    load symbols (ISF files in DIR) for x64dbg's module path\n"
	"  --no-symbols       no module table (drcov then has no blocks)\n"
	"  --allow-truncated  exit 0 when a file ends inside a frame\n";

enum format { DRCOV, TENET, X64DBG };

#define X64DBG_REGDUMP	   172 /* pointer-sized entries of REGDUMP on x64 */
#define X64DBG_FULL_EVERY  512
#define X64DBG_CIP	   16
#define X64DBG_EFLAGS	   17

struct exporter {
	enum format format;
	FILE *out;
	struct analysis an;
	/* drcov */
	struct bb {
		uint32_t start;
		uint16_t size;
		uint16_t mod;
	} *bbs;
	size_t nbbs, capbbs;
	uint64_t *seen; /* hash of (mod, start, size) */
	size_t seen_cap, outside;
	bool have_block;
	uint64_t block_start, block_end, prev_rip, prev_seq, prev_cr3;
	int block_mod;
	/* tenet / x64dbg: the previous line's registers */
	bool have_prev;
	uint64_t prev[18];
	uint64_t blocks;
	bool thread_written;
	uint32_t thread_id;    /* x64dbg: the last block's */
	uint64_t mem_left_out; /* tenet: accesses the format cannot hold */
	/* x64dbg: the last block, held until the next record brings its accesses */
	struct x64dbg_block {
		bool held;
		bool with_tid;
		bool enters_kernel; /* SYSCALL, SYSENTER, INT n: the kernel ran in its step */
		const struct svmtrace_thread_info *th;
		uint32_t tid;
		uint8_t nregs, opsize;
		uint8_t opcode[16];
		uint8_t positions[X64DBG_REGDUMP];
		uint64_t values[X64DBG_REGDUMP];
	} block;
	bool skipped; /* --tid left records out since the last one */
	struct x64dbg_mem xmem;
	/* --tid */
	bool tid_set;
	uint64_t tid;
	/* tenet of several threads: one file per thread */
	bool per_thread;
	const char *out_path;
	struct tenet_file {
		const struct svmtrace_thread_info *th; /* NULL: records of no known thread */
		FILE *f;
		bool have_prev;
		uint64_t prev[SVMTRACE_NR_GPRS];
	} * tenet;
	size_t ntenet;
};

/* ---- drcov ---- */

static uint64_t bb_key(const struct bb *b)
{
	return ((uint64_t)b->mod << 48 | (uint64_t)b->size << 32 | b->start) + 1;
}

static void add_bb(struct exporter *x, int mod, uint64_t start, uint64_t end)
{
	const struct svmtrace_module_info *m = svmtrace_symbols_module(x->an.syms, (size_t)mod);
	struct bb b;
	size_t i;

	while (end > start) { /* sizes are 16 bits */
		uint64_t n = end - start > 0xffff ? 0xffff : end - start;

		b = (struct bb){ (uint32_t)(start - m->base), (uint16_t)n, (uint16_t)mod };
		if (x->nbbs * 2 >= x->seen_cap) {
			uint64_t *old = x->seen;
			size_t oc = x->seen_cap;

			x->seen_cap = oc ? oc * 2 : 4096;
			x->seen = calloc(x->seen_cap, sizeof(*x->seen));
			if (!x->seen)
				die("out of memory");
			for (i = 0; i < oc; i++) {
				size_t j;

				if (!old[i])
					continue;
				for (j = (old[i] * 0x9e3779b97f4a7c15ull) >> 40 & (x->seen_cap - 1);
				     x->seen[j]; j = (j + 1) & (x->seen_cap - 1))
					;
				x->seen[j] = old[i];
			}
			free(old);
		}
		for (i = (bb_key(&b) * 0x9e3779b97f4a7c15ull) >> 40 & (x->seen_cap - 1);
		     x->seen[i]; i = (i + 1) & (x->seen_cap - 1))
			if (x->seen[i] == bb_key(&b))
				goto next;
		x->seen[i] = bb_key(&b);
		if (x->nbbs == x->capbbs) {
			x->capbbs = x->capbbs ? x->capbbs * 2 : 1024;
			x->bbs = realloc(x->bbs, x->capbbs * sizeof(*x->bbs));
			if (!x->bbs)
				die("out of memory");
		}
		x->bbs[x->nbbs++] = b;
next:
		start += n;
	}
}

static void end_block(struct exporter *x)
{
	if (x->have_block)
		add_bb(x, x->block_mod, x->block_start, x->block_end);
	x->have_block = false;
}

/* The instruction at @rip executes; @size its length (0: unknown). */
static void drcov_insn(struct exporter *x, uint64_t cr3, uint64_t rip, unsigned int size)
{
	struct svmtrace_symbol s;

	if (!size)
		size = 1;
	if (x->have_block && rip == x->block_end && rip - svmtrace_symbols_module(x->an.syms, (size_t)x->block_mod)->base < svmtrace_symbols_module(x->an.syms, (size_t)x->block_mod)->size) {
		x->block_end += size;
		return;
	}
	end_block(x);
	if (!svmtrace_symbols_lookup(x->an.syms, cr3, rip, &s)) {
		x->outside++;
		return;
	}
	x->have_block = true;
	x->block_mod = s.module;
	x->block_start = rip;
	x->block_end = rip + size;
}

/* Size of the instruction at @rip: decoded, else the step to @next when it looks sequential. */
static unsigned int insn_size(struct exporter *x, uint64_t cr3, uint64_t rip, uint64_t seq,
			      uint64_t next, bool have_next)
{
	const struct insn *in = x->an.code ? analysis_insn(&x->an, cr3, rip, seq) : NULL;

	if (in && in->size)
		return in->size;
	if (have_next && next > rip && next - rip <= 15)
		return (unsigned int)(next - rip);
	return 1;
}

static void drcov_record(struct exporter *x, const struct svmtrace_record *r)
{
	/* The previous record's rip executed: its size is known now. */
	if (x->prev_rip)
		drcov_insn(x, x->prev_cr3, x->prev_rip,
			   insn_size(x, x->prev_cr3, x->prev_rip, x->prev_seq, r->state->rip,
				     r->kind != SVMTRACE_SLOT_SESSION_START));
	x->prev_rip = 0;
	if (r->kind == SVMTRACE_SLOT_SESSION_END) {
		end_block(x);
		return;
	}
	x->prev_rip = r->state->rip;
	x->prev_seq = r->sequence;
	x->prev_cr3 = r->state->cr3;
}

static void drcov_write(struct exporter *x)
{
	size_t i, n = svmtrace_symbols_module_count(x->an.syms);

	if (x->prev_rip)
		drcov_insn(x, x->prev_cr3, x->prev_rip,
			   insn_size(x, x->prev_cr3, x->prev_rip, x->prev_seq, 0, false));
	end_block(x);
	fprintf(x->out, "DRCOV VERSION: 2\nDRCOV FLAVOR: svmtrace\n");
	fprintf(x->out, "Module Table: version 2, count %zu\n", n);
	fprintf(x->out, "Columns: id, base, end, entry, checksum, timestamp, path\n");
	for (i = 0; i < n; i++) {
		const struct svmtrace_module_info *m = svmtrace_symbols_module(x->an.syms, i);

		fprintf(x->out, "%2zu, 0x%016" PRIx64 ", 0x%016" PRIx64 ", 0x%016" PRIx64
				", 0x%08x, 0x%08x, %s\n",
			i, m->base, m->base + m->size, m->entry, 0u, m->timestamp,
			m->path ? m->path : m->name);
	}
	fprintf(x->out, "BB Table: %zu bbs\n", x->nbbs);
	for (i = 0; i < x->nbbs; i++) {
		uint8_t e[8];

		memcpy(e, &x->bbs[i].start, 4); /* little-endian host */
		memcpy(e + 4, &x->bbs[i].size, 2);
		memcpy(e + 6, &x->bbs[i].mod, 2);
		fwrite(e, 1, sizeof(e), x->out);
	}
	if (x->outside)
		warn("drcov: %zu blocks outside every module of %s are not in the file",
		     x->outside, x->an.capture_path ? x->an.capture_path : "capture.json");
}

/* ---- tenet ---- */

/* The Tenet file of @th's records: standard output or --out, or one per thread. */
static struct tenet_file *tenet_file(struct exporter *x, const struct svmtrace_thread_info *th)
{
	struct tenet_file *t;
	char path[4096];
	size_t i;

	for (i = 0; i < x->ntenet; i++)
		if (x->tenet[i].th == th || !x->per_thread)
			return &x->tenet[i];
	x->tenet = realloc(x->tenet, (x->ntenet + 1) * sizeof(*x->tenet));
	if (!x->tenet)
		die("out of memory");
	t = &x->tenet[x->ntenet++];
	memset(t, 0, sizeof(*t));
	t->th = th;
	if (!x->per_thread) {
		t->f = x->out;
		return t;
	}
	if (!x->out_path)
		die("tenet: the trace holds several threads and Tenet reads one thread's: give "
		    "--out FILE (one file per thread, FILE.PID.TID) or --tid N");
	if (th)
		snprintf(path, sizeof(path), "%s.%" PRIu64 ".%" PRIu64, x->out_path, th->pid,
			 th->tid);
	else
		snprintf(path, sizeof(path), "%s.unknown", x->out_path);
	t->f = fopen(path, "w");
	if (!t->f)
		die("%s: cannot create: %s", path, strerror(errno));
	return t;
}

static void tenet_bytes(FILE *f, const char *key, uint64_t addr, const uint8_t *b, uint32_t n)
{
	fprintf(f, ",%s=0x%" PRIx64 ":", key, addr);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

/* mr= the bytes read, mw= the bytes written (both for an rmw); Tenet has no unrecorded access. */
static void tenet_access(struct exporter *x, FILE *f, const struct svmtrace_mem_access *a)
{
	if (a->kind == SVMTRACE_MEM_READ || a->kind == SVMTRACE_MEM_RMW)
		tenet_bytes(f, "mr", a->addr, a->read_value, a->size);
	if (a->kind == SVMTRACE_MEM_WRITE || a->kind == SVMTRACE_MEM_RMW)
		tenet_bytes(f, "mw", a->addr, a->write_value, a->size);
	x->mem_left_out += a->kind == SVMTRACE_MEM_UNRECORDED;
}

/* Tenet's AMD64 names, our GPR order (svmtrace_gpr_names) plus rip. */
static void tenet_record(struct exporter *x, const struct svmtrace_record *r,
			 const struct svmtrace_thread_info *th)
{
	const struct svmtrace_state *s = r->state;
	struct tenet_file *t;
	bool first = true;
	int i;

	if (r->kind == SVMTRACE_SLOT_SESSION_END) {
		for (size_t k = 0; k < x->ntenet;
		     k++) /* a new session starts with every register */
			x->tenet[k].have_prev = false;
		return;
	}
	t = tenet_file(x, th);
	for (i = 0; i < SVMTRACE_NR_GPRS; i++) {
		if (t->have_prev && t->prev[i] == s->gpr[i])
			continue;
		fprintf(t->f, "%s%s=0x%" PRIx64, first ? "" : ",", svmtrace_gpr_names[i],
			s->gpr[i]);
		first = false;
		t->prev[i] = s->gpr[i];
	}
	fprintf(t->f, "%srip=0x%" PRIx64, first ? "" : ",", s->rip);
	for (uint32_t k = 0; k < r->nr_mem; k++)
		tenet_access(x, t->f, &r->mem[k]);
	fputc('\n', t->f);
	t->have_prev = true;
}

/* Close the per-thread Tenet files and say which they are. */
static void tenet_close(struct exporter *x)
{
	for (size_t i = 0; i < x->ntenet; i++) {
		if (x->tenet[i].f == x->out)
			continue;
		if (fclose(x->tenet[i].f))
			die("%s: write failed: %s", x->out_path, strerror(errno));
		if (x->tenet[i].th)
			printf("tenet: %s.%" PRIu64 ".%" PRIu64 ": %s pid %" PRIu64 " tid %" PRIu64
			       "\n",
			       x->out_path, x->tenet[i].th->pid, x->tenet[i].th->tid,
			       x->tenet[i].th->process ? x->tenet[i].th->process : "?",
			       x->tenet[i].th->pid, x->tenet[i].th->tid);
		else
			printf("tenet: %s.unknown: records of no known thread\n", x->out_path);
	}
	free(x->tenet);
}

/* ---- x64dbg ---- */


/* REGDUMP.regcontext order: cax ccx cdx cbx csp cbp csi cdi r8..r15 cip eflags. */
static const int x64dbg_from_gpr[SVMTRACE_NR_GPRS] = {
	/* rax rbx rcx rdx rsi rdi rbp rsp */ 0, 3, 1, 2, 6, 7, 5, 4,
	/* r8..r15 */ 8, 9, 10, 11, 12, 13, 14, 15,
};

static void x64dbg_header(struct exporter *x)
{
	const struct svmtrace_module_info *m = svmtrace_symbols_module(x->an.syms, 0);
	char json[1024], path[600] = "";
	const char *p = m ? (m->path ? m->path : m->name) : "";
	uint32_t len;
	size_t i, j = 0;

	for (i = 0; p[i] && j + 2 < sizeof(path); i++) { /* JSON string escapes */
		if (p[i] == '\\' || p[i] == '"')
			path[j++] = '\\';
		path[j++] = p[i];
	}
	path[j] = 0;
	/* x64dbg's reader refuses a header without "compression" ("" is none) */
	len = (uint32_t)snprintf(json, sizeof(json),
				 "{\"ver\":1,\"arch\":\"x64\",\"compression\":\"\",\"path\":\"%s\","
				 "\"creator\":\"svmtrace-dump export\"}",
				 path);
	fwrite("TRAC", 1, 4, x->out);
	fwrite(&len, 4, 1, x->out);
	fwrite(json, 1, len, x->out);
}

/* The held block, with @ne memory entries @e. */
static void x64dbg_write_block(struct exporter *x, const struct x64dbg_entry *e, unsigned int ne)
{
	const struct x64dbg_block *b = &x->block;
	uint8_t head[4], flags[X64DBG_MAX_ENTRIES];
	unsigned int i;

	head[0] = 0; /* an instruction */
	head[1] = b->nregs;
	head[2] = (uint8_t)ne;
	/* bit 7: a thread ID follows */
	head[3] = (uint8_t)(b->opsize | (b->with_tid ? 0x80 : 0));
	fwrite(head, 1, 4, x->out);
	if (b->with_tid)
		fwrite(&b->tid, 4, 1, x->out);
	fwrite(b->opcode, 1, b->opsize, x->out);
	fwrite(b->positions, 1, b->nregs, x->out);
	fwrite(b->values, 8, b->nregs, x->out);
	/* flag bit 0: unchanged, no new content stored */
	for (i = 0; i < ne; i++)
		flags[i] = e[i].old_bytes == e[i].new_bytes;
	fwrite(flags, 1, ne, x->out);
	for (i = 0; i < ne; i++)
		fwrite(&e[i].addr, 8, 1, x->out);
	for (i = 0; i < ne; i++)
		fwrite(&e[i].old_bytes, 8, 1, x->out);
	for (i = 0; i < ne; i++)
		if (!flags[i])
			fwrite(&e[i].new_bytes, 8, 1, x->out);
}

/* Record @r's registers and opcode as the held block: the instruction at its rip. */
static void x64dbg_hold(struct exporter *x, const struct svmtrace_record *r,
			const struct svmtrace_thread_info *th)
{
	const struct svmtrace_state *s = r->state;
	struct x64dbg_block *b = &x->block;
	/* Windows' thread ID, or the vCPU's number when the capture does not say */
	uint32_t tid = th && th->tid ? (uint32_t)th->tid : r->cpu;
	uint64_t regs[18];
	const struct insn *in = NULL;
	bool full = !x->have_prev || x->blocks % X64DBG_FULL_EVERY == 0;
	unsigned int n = 0, last = 0, i;

	for (i = 0; i < SVMTRACE_NR_GPRS; i++)
		regs[x64dbg_from_gpr[i]] = s->gpr[i];
	regs[X64DBG_CIP] = s->rip;
	regs[X64DBG_EFLAGS] = s->rflags;
	b->opsize = 0;
	if (x->an.code) {
		in = analysis_insn(&x->an, s->cr3, s->rip, r->sequence);
		if (in->size && svmtrace_code_read(x->an.code, s->cr3, s->rip, r->sequence,
						   b->opcode, in->size, NULL) == in->size)
			b->opsize = in->size;
	}
	b->enters_kernel =
		b->opsize >= 2 &&
		((b->opcode[0] == 0x0f && (b->opcode[1] == 0x05 || b->opcode[1] == 0x34)) ||
		 b->opcode[0] == 0xcd);
	if (full) {
		for (i = 0; i < X64DBG_REGDUMP; i++) {
			b->positions[i] = 0; /* each right after the previous */
			b->values[i] = i < 18 ? regs[i] : 0;
		}
		n = X64DBG_REGDUMP;
	} else {
		for (i = 0; i < 18; i++) {
			if (regs[i] == x->prev[i])
				continue;
			b->positions[n] = (uint8_t)(n ? i - last - 1 : i);
			b->values[n++] = regs[i];
			last = i;
		}
	}
	memcpy(x->prev, regs, sizeof(regs));
	x->have_prev = true;
	b->nregs = (uint8_t)n;
	/* the thread ID in the first block and where the thread changes */
	b->with_tid = !(x->thread_written && tid == x->thread_id);
	b->tid = tid;
	x->thread_written = true;
	x->thread_id = tid;
	b->th = th;
	b->held = true;
	x->blocks++;
}

/*
 * Record @r's accesses are those of the instruction that produced its state:
 * the held block's, when @r follows it directly (same session and thread,
 * nothing lost or left out between).  Otherwise the held block goes without
 * memory, and @r's accesses have no block (the session's first instruction,
 * or one after a loss: no record holds the state before it).
 */
static void x64dbg_record(struct exporter *x, const struct svmtrace_record *r,
			  const struct svmtrace_thread_info *th)
{
	struct x64dbg_entry e[X64DBG_MAX_ENTRIES];
	bool follows = x->block.held && !x->skipped && r->kind == SVMTRACE_SLOT_INSTRUCTION &&
		       !r->dropped && th == x->block.th;
	unsigned int ne;

	x->skipped = false;
	if (!follows) /* code the trace does not show ran in between */
		x64dbg_mem_forget(&x->xmem);
	ne = x64dbg_mem_step(&x->xmem, r->mem, r->nr_mem, follows ? e : NULL);
	if (x->block.held)
		x64dbg_write_block(x, e, ne);
	if (follows && x->block.enters_kernel)
		x64dbg_mem_forget(&x->xmem);
	x->block.held = false;
	if (r->kind != SVMTRACE_SLOT_SESSION_END)
		x64dbg_hold(x, r, th);
}

/* The last block, whose instruction no record follows, and what was left out. */
static void x64dbg_finish(struct exporter *x)
{
	const struct x64dbg_mem_counts *c = &x->xmem.counts;

	if (x->block.held)
		x64dbg_write_block(x, NULL, 0);
	x->block.held = false;
	if (x64dbg_mem_left_out(c))
		warn("x64dbg: %" PRIu64 " of %" PRIu64 " memory accesses not in the file (%" PRIu64
		     " with bytes of their 8-byte pieces not known before or after, %" PRIu64
		     " unrecorded, %" PRIu64 " of instructions without a block, %" PRIu64
		     " past x64dbg's %d entries per instruction); tenet and jsonl carry them",
		     x64dbg_mem_left_out(c), c->accesses, c->unknown, c->unrecorded, c->no_block,
		     c->over_limit, X64DBG_MAX_ENTRIES);
	x64dbg_mem_free(&x->xmem);
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "allow-truncated", no_argument, NULL, 't' },
		{ "tid", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		ANALYSIS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct analysis_options ao = { .symbols = SYMBOLS_AUTO,
				       .code = true,
				       .code_optional = true,
				       .threads = SYMBOLS_AUTO };
	struct exporter x = { .format = -1 };
	const char *out = NULL;
	bool allow_truncated = false;
	int c, status = 0;

	memset(&x, 0, sizeof(x));
	x.format = (enum format)-1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "drcov"))
				x.format = DRCOV;
			else if (!strcmp(optarg, "tenet"))
				x.format = TENET;
			else if (!strcmp(optarg, "x64dbg"))
				x.format = X64DBG;
			else
				die("--format: expected drcov, tenet or x64dbg, got '%s'", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			allow_truncated = true;
			break;
		case 'I':
			x.tid_set = true;
			x.tid = parse_u64(optarg, "--tid");
			ao.threads = SYMBOLS_ON;
			break;
		case 'h':
			fputs(export_usage, stdout);
			return 0;
		default:
			if (analysis_opt(c, argc, argv, &ao))
				break;
			fputs(export_usage, stderr);
			return 2;
		}
	}
	if ((int)x.format < 0 || optind >= argc || (x.format != DRCOV && argc - optind != 1)) {
		if ((int)x.format < 0)
			warn("--format is required");
		else if (optind < argc)
			warn("--format %s takes one trace file (one vCPU)",
			     x.format == TENET ? "tenet" : "x64dbg");
		fputs(export_usage, stderr);
		return 2;
	}
	if (x.format == DRCOV && ao.symbols == SYMBOLS_AUTO)
		ao.symbols = SYMBOLS_ON; /* drcov without modules is useless: say so */
	analysis_open(&x.an, &ao, argv[optind]);
	x.out_path = out;
	/* Tenet, several threads: their own files (tenet_file()), no common one. */
	x.per_thread = x.format == TENET && !x.tid_set && svmtrace_threads_count(x.an.threads) > 1;
	if (x.per_thread)
		x.out = stdout;
	else
		x.out = out ? fopen(out, "wb") : stdout;
	if (!x.out)
		die("%s: cannot create: %s", out, strerror(errno));
	if (x.format == X64DBG)
		x64dbg_header(&x);
	for (int i = optind; i < argc; i++) {
		struct svmtrace_reader *r = open_trace(argv[i]);
		const struct svmtrace_record *rec;
		int ret;

		x.have_prev = false;
		x.prev_rip = 0;
		while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
			const struct svmtrace_thread_info *th = analysis_thread(&x.an, rec);

			if (x.tid_set && !(th && th->tid == x.tid)) {
				x.skipped = true;
				continue;
			}
			switch (x.format) {
			case DRCOV:
				drcov_record(&x, rec);
				break;
			case TENET:
				tenet_record(&x, rec, th);
				break;
			case X64DBG:
				x64dbg_record(&x, rec, th);
				break;
			}
		}
		if (x.format == DRCOV && x.prev_rip) {
			drcov_insn(&x, x.prev_cr3, x.prev_rip,
				   insn_size(&x, x.prev_cr3, x.prev_rip, x.prev_seq, 0, false));
			x.prev_rip = 0;
		}
		end_block(&x);
		status |= finish_trace(r, ret, allow_truncated);
		svmtrace_reader_close(r);
	}
	if (x.format == DRCOV)
		drcov_write(&x);
	if (x.format == TENET)
		tenet_close(&x);
	if (x.mem_left_out && x.format == TENET)
		warn("tenet: %" PRIu64 " memory accesses the capture could not record are not in "
		     "the file (Tenet has no entry for them)",
		     x.mem_left_out);
	if (x.format == X64DBG)
		x64dbg_finish(&x);
	if (fflush(x.out) || (out && x.out != stdout && fclose(x.out)))
		die("%s: write failed: %s", out ? out : "standard output", strerror(errno));
	free(x.bbs);
	free(x.seen);
	analysis_close(&x.an);
	return status;
}
