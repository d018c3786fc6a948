// SPDX-License-Identifier: GPL-2.0
#include "tools/memops.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "common/cli.h"

struct memops {
	csh cs;
	unsigned int n;
	struct svmtrace_raw_mem acc[SVMTRACE_MEM_MAX_ACCESSES];
};

struct memops *memops_open(void)
{
	struct memops *m = calloc(1, sizeof(*m));

	if (!m)
		die("out of memory");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &m->cs) != CS_ERR_OK)
		die("capstone: cannot open the x86-64 disassembler");
	cs_option(m->cs, CS_OPT_DETAIL, CS_OPT_ON);
	return m;
}

void memops_close(struct memops *m)
{
	if (!m)
		return;
	cs_close(&m->cs);
	free(m);
}

/* Read @n bytes at @addr of @pid; false when any of them cannot be read. */
static bool peek(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

/*
 * One byte of code at @addr: PTRACE_PEEKTEXT reads what the process may
 * only execute (execute-only pages, protection keys), which
 * process_vm_readv() refuses.
 */
static bool peek_code(pid_t pid, uint64_t addr, uint8_t *b)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)(addr & ~7ull), NULL);
	if (errno)
		return false;
	*b = (uint8_t)((unsigned long)word >> (8 * (addr & 7)));
	return true;
}

/* A register's value as an address component; false for ones that are not GPRs or RIP. */
static bool reg_value(x86_reg r, const struct user_regs_struct *u, uint64_t next_rip, uint64_t *v)
{
	static const x86_reg r64[] = { X86_REG_RAX, X86_REG_RBX, X86_REG_RCX, X86_REG_RDX,
				       X86_REG_RSI, X86_REG_RDI, X86_REG_RBP, X86_REG_RSP,
				       X86_REG_R8,  X86_REG_R9,	 X86_REG_R10, X86_REG_R11,
				       X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15 };
	static const x86_reg r32[] = { X86_REG_EAX,  X86_REG_EBX,  X86_REG_ECX,	 X86_REG_EDX,
				       X86_REG_ESI,  X86_REG_EDI,  X86_REG_EBP,	 X86_REG_ESP,
				       X86_REG_R8D,  X86_REG_R9D,  X86_REG_R10D, X86_REG_R11D,
				       X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D };
	const unsigned long long g[16] = { u->rax, u->rbx, u->rcx, u->rdx, u->rsi, u->rdi,
					   u->rbp, u->rsp, u->r8,  u->r9,  u->r10, u->r11,
					   u->r12, u->r13, u->r14, u->r15 };

	if (r == X86_REG_INVALID) {
		*v = 0;
		return true;
	}
	if (r == X86_REG_RIP) {
		*v = next_rip;
		return true;
	}
	if (r == X86_REG_EIP) {
		*v = (uint32_t)next_rip;
		return true;
	}
	for (int i = 0; i < 16; i++) {
		if (r == r64[i]) {
			*v = g[i];
			return true;
		}
		if (r == r32[i]) {
			*v = (uint32_t)g[i];
			return true;
		}
	}
	return false;
}

static struct svmtrace_raw_mem *add(struct memops *m, uint8_t kind, uint64_t addr, uint32_t size)
{
	struct svmtrace_raw_mem *a;

	if (m->n == SVMTRACE_MEM_MAX_ACCESSES)
		return NULL;
	a = &m->acc[m->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->addr = addr;
	a->size = size;
	return a;
}

static void unrecorded(struct memops *m, uint8_t why, uint64_t addr, uint32_t size)
{
	struct svmtrace_raw_mem *a = add(m, SVMTRACE_MEM_UNRECORDED, addr, size);

	if (a)
		a->why = why;
}

/* An access of @size at @addr; its read value is read now (before the step). */
static void access(struct memops *m, pid_t pid, uint8_t kind, uint64_t addr, uint32_t size)
{
	struct svmtrace_raw_mem *a;

	if (size == 0)
		return unrecorded(m, SVMTRACE_MEM_WHY_UNDECODED, addr, 0);
	if (size > SVMTRACE_MEM_MAX_VALUE)
		return unrecorded(m, SVMTRACE_MEM_WHY_TOO_LARGE, addr, size);
	a = add(m, kind, addr, size);
	if (a && (kind == SVMTRACE_MEM_READ || kind == SVMTRACE_MEM_RMW) &&
	    !peek(pid, addr, a->read_value, size)) {
		a->kind = SVMTRACE_MEM_UNRECORDED;
		a->why = SVMTRACE_MEM_WHY_FAULT;
	}
}

static bool is_string(unsigned int id)
{
	switch (id) {
	case X86_INS_MOVSB:
	case X86_INS_MOVSW:
	case X86_INS_MOVSD:
	case X86_INS_MOVSQ:
	case X86_INS_STOSB:
	case X86_INS_STOSW:
	case X86_INS_STOSD:
	case X86_INS_STOSQ:
	case X86_INS_LODSB:
	case X86_INS_LODSW:
	case X86_INS_LODSD:
	case X86_INS_LODSQ:
	case X86_INS_CMPSB:
	case X86_INS_CMPSW:
	case X86_INS_CMPSD:
	case X86_INS_CMPSQ:
	case X86_INS_SCASB:
	case X86_INS_SCASW:
	case X86_INS_SCASD:
	case X86_INS_SCASQ:
		return true;
	}
	return false;
}

/*
 * The size of the state save area an instruction reads or writes, when
 * Capstone gives its memory operand a size that is not the access's: 512
 * bytes for FXSAVE/FXRSTOR, 108 for FNSAVE/FRSTOR (64-bit code's operand
 * size), 0 (unknown: it depends on XCR0 and the requested features) for
 * the XSAVE family.  -1: take Capstone's size.
 */
static long save_area(unsigned int id)
{
	switch (id) {
	case X86_INS_FNSAVE:
	case X86_INS_FRSTOR:
		return 108;
	case X86_INS_FXSAVE:
	case X86_INS_FXSAVE64:
	case X86_INS_FXRSTOR:
	case X86_INS_FXRSTOR64:
		return 512;
	case X86_INS_XSAVE:
	case X86_INS_XSAVE64:
	case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT:
	case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES:
	case X86_INS_XSAVES64:
	case X86_INS_XRSTOR:
	case X86_INS_XRSTOR64:
	case X86_INS_XRSTORS:
	case X86_INS_XRSTORS64:
		return 0;
	}
	return -1;
}

static bool starts(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(s, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

/*
 * Capstone 4's access flags for operand @i, corrected where they are wrong:
 * it marks the memory destination of many stores as read (movnti, movups,
 * vmovdqu, pextrb, stmxcsr, fstp, movbe...) and of CMPXCHG as read only,
 * and gives ROUNDSS/ROUNDSD's source no access at all.  Stores whose bytes
 * a mask selects (vmaskmov, scatters): 0, unrecorded.
 */
static int access_of(const cs_insn *in, int i)
{
	static const char *const stores[] = { "mov",	   "vmov",     "pextr",	  "vpextr",
					      "extract",   "vextract", "stmxcsr", "vstmxcsr",
					      "fst",	   "fist",     "fbstp",	  "fnst",
					      "vcvtps2ph", NULL };
	static const char *const masked[] = { "maskmov",   "vmaskmov", "vpmaskmov",
					      "vpscatter", "vscatter", NULL };
	int access = in->detail->x86.operands[i].access;

	if (starts(in->mnemonic, masked))
		return 0;
	if (in->id == X86_INS_ROUNDSS || in->id == X86_INS_ROUNDSD)
		return CS_AC_READ;
	if (!strncmp(in->mnemonic, "cmpxchg", 7) || !strncmp(in->mnemonic, "lock cmpxchg", 12))
		return CS_AC_READ | CS_AC_WRITE;
	if (i == 0 && access == CS_AC_READ && starts(in->mnemonic, stores))
		return CS_AC_WRITE;
	return access;
}

/* Instructions whose memory operand is an address, not an access. */
static bool no_access(unsigned int id)
{
	switch (id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_CLFLUSH:
	case X86_INS_CLFLUSHOPT:
	case X86_INS_CLWB:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
		return true;
	}
	return false;
}

/*
 * The size of a memory operand where Capstone 4 gives a wrong one: FNSTSW
 * stores 2 bytes, LAR and LSL read a 2-byte selector (it says 4).
 */
static uint32_t op_size(const cs_insn *in, const cs_x86_op *op)
{
	switch (in->id) {
	case X86_INS_FNSTSW:
	case X86_INS_LAR:
	case X86_INS_LSL:
		return 2;
	}
	return op->size;
}

/* The explicit memory operands: the writes with @writes, else the reads and rmws. */
static void explicit_ops(struct memops *m, pid_t pid, const cs_insn *in,
			 const struct user_regs_struct *u, bool writes)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = in->address + in->size;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		uint64_t base, index, addr;
		int ac = op->type == X86_OP_MEM ? access_of(in, i) : 0;
		bool r = ac & CS_AC_READ, w = ac & CS_AC_WRITE;

		if (op->type != X86_OP_MEM || (!ac && writes))
			continue;
		if (!ac) { /* a masked store, or an x87 state image */
			unrecorded(m, SVMTRACE_MEM_WHY_UNDECODED, 0, 0);
			continue;
		}
		if (writes ? r || !w : !r)
			continue;
		if (!reg_value(op->mem.base, u, next, &base) ||
		    !reg_value(op->mem.index, u, next, &index)) {
			unrecorded(m, SVMTRACE_MEM_WHY_UNDECODED, 0, op->size);
			continue;
		}
		addr = base + index * (uint64_t)op->mem.scale + (uint64_t)op->mem.disp;
		if (op->mem.segment == X86_REG_FS)
			addr += u->fs_base;
		else if (op->mem.segment == X86_REG_GS)
			addr += u->gs_base;
		if (save_area(in->id) >= 0)
			unrecorded(m,
				   save_area(in->id) ? SVMTRACE_MEM_WHY_TOO_LARGE
						     : SVMTRACE_MEM_WHY_UNDECODED,
				   addr, (uint32_t)save_area(in->id));
		else
			access(m, pid,
			       r && w ? SVMTRACE_MEM_RMW
			       : r    ? SVMTRACE_MEM_READ
				      : SVMTRACE_MEM_WRITE,
			       addr, op_size(in, op));
	}
}

/*
 * ENTER size, level (64-bit code, 8-byte slots): level - 1 frame pointers
 * read below RBP, then the old RBP, the copies and the new frame pointer
 * (level > 0) pushed: one read, one write, as the Intel SDM's ENTER
 * pseudocode makes them.
 */
static void enter(struct memops *m, pid_t pid, const cs_insn *in, const struct user_regs_struct *u)
{
	uint64_t level = in->detail->x86.op_count == 2 ? in->detail->x86.operands[1].imm & 31 : 0;
	uint32_t pushed = 8 * (uint32_t)(level ? level + 1 : 1);

	if (level > 1)
		access(m, pid, SVMTRACE_MEM_READ, u->rbp - 8 * (level - 1),
		       8 * (uint32_t)(level - 1));
	access(m, pid, SVMTRACE_MEM_WRITE, u->rsp - pushed, pushed);
}

void memops_before(struct memops *m, pid_t pid, const struct user_regs_struct *u)
{
	uint8_t code[16];
	size_t have = 0;
	cs_insn *in = NULL;
	unsigned int id;
	uint32_t stack = 8;

	m->n = 0;
	/* up to 15 bytes, fewer where the next page cannot be read */
	while (have < sizeof(code) - 1 && peek_code(pid, u->rip + have, code + have))
		have++;
	if (!have || cs_disasm(m->cs, code, have, u->rip, 1, &in) != 1)
		return unrecorded(m, SVMTRACE_MEM_WHY_UNDECODED, 0, 0);
	id = in->id;
	if (in->detail->x86.op_count && in->detail->x86.operands[0].size &&
	    (id == X86_INS_PUSH || id == X86_INS_POP))
		stack = in->detail->x86.operands[0].size;
	if (id == X86_INS_PUSH && in->detail->x86.operands[0].type == X86_OP_IMM)
		stack = 8;
	if (no_access(id)) {
		cs_free(in, 1);
		return;
	}
	if (is_string(id) &&
	    (in->detail->x86.prefix[0] == X86_PREFIX_REP ||
	     in->detail->x86.prefix[0] == X86_PREFIX_REPNE) &&
	    u->rcx == 0) {
		cs_free(in, 1); /* rep with RCX 0: no iteration, no access */
		return;
	}
	explicit_ops(m, pid, in, u, false);
	if (id == X86_INS_XLATB) /* Capstone 4 gives it no operand: [rbx + al] */
		access(m, pid, SVMTRACE_MEM_READ, u->rbx + (u->rax & 0xff), 1);
	/* the stack: what the instruction pops or returns through, then pushes */
	if (id == X86_INS_POP || id == X86_INS_POPFQ || id == X86_INS_RET)
		access(m, pid, SVMTRACE_MEM_READ, u->rsp, id == X86_INS_POP ? stack : 8);
	if (id == X86_INS_LEAVE)
		access(m, pid, SVMTRACE_MEM_READ, u->rbp, 8);
	explicit_ops(m, pid, in, u, true);
	if (id == X86_INS_PUSH || id == X86_INS_PUSHFQ || id == X86_INS_CALL)
		access(m, pid, SVMTRACE_MEM_WRITE, u->rsp - stack, stack);
	if (id == X86_INS_ENTER)
		enter(m, pid, in, u);
	/* no memory operand in Capstone: the masked store to DS:rDI */
	if (id == X86_INS_MASKMOVDQU || id == X86_INS_MASKMOVQ)
		unrecorded(m, SVMTRACE_MEM_WHY_UNDECODED, u->rdi,
			   id == X86_INS_MASKMOVDQU ? 16 : 8);
	cs_free(in, 1);
}

unsigned int memops_after(struct memops *m, pid_t pid, uint64_t seq, bool clean,
			  struct svmtrace_raw_mem *out)
{
	if (!clean) { /* a signal's handler ran instead, or after a fault */
		m->n = 0;
		unrecorded(m, SVMTRACE_MEM_WHY_FAULT, 0, 0);
	}
	for (unsigned int k = 0; k < m->n; k++) {
		struct svmtrace_raw_mem *a = &m->acc[k];

		a->seq = seq;
		if ((a->kind == SVMTRACE_MEM_WRITE || a->kind == SVMTRACE_MEM_RMW) &&
		    !peek(pid, a->addr, a->write_value, a->size)) {
			a->kind = SVMTRACE_MEM_UNRECORDED;
			a->why = SVMTRACE_MEM_WHY_FAULT;
			memset(a->read_value, 0, sizeof(a->read_value));
		}
		out[k] = *a;
	}
	return m->n;
}
