// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction semantics of the model: decode (REX, ModRM, SIB, RIP-relative
 * displacements) and execute the subset of x86-64 the lab programs and the
 * lab kernel use, with the architectural RFLAGS results.  Flags the manual
 * leaves undefined are reported in c->undefined_flags so checkers ignore
 * them.  The debug registers are the architecture's, with the choices it
 * leaves open made as QEMU's TCG (the lab's CPU) makes them: every #DB
 * writes B0-B3 anew, with the execute breakpoints at the RIP it reports
 * (enabled or not) besides the data breakpoints hit.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"

#define RFLAGS_FIXED 0x2ull
#define RFLAGS_IOPL  0x3000ull
#define RFLAGS_NT    0x4000ull
#define RFLAGS_ID    0x200000ull
/* What POPFQ may change at CPL 3 with IOPL 3 (IOPL itself only at CPL 0). */
#define RFLAGS_POPF                                                                                \
	(RFLAGS_ARITH | RFLAGS_TF | RFLAGS_IF | RFLAGS_DF | RFLAGS_NT | RFLAGS_AC | RFLAGS_ID)
#define RFLAGS_SYSRET 0x3c7fd7ull
#define MSR_KERNEL_GS_BASE 0xc0000102u

struct insn {
	uint64_t start, next;
	int len;
	int rex_w, rex_r, rex_x, rex_b;
	int o16;	  /* a 66 prefix */
	int seg_gs;	  /* a 65 prefix: GS base added to the address */
	int bits;	  /* operand size: 32 or 64 */
	int mod, reg, rm; /* ModRM, with REX extensions applied */
	int is_mem;
	int base, index, scale; /* base/index -1 when absent */
	int riprel;
	int64_t disp;
	uint64_t ea;
};

static int fail(struct model_cpu *c, const struct insn *in, const char *what)
{
	snprintf(c->error, sizeof(c->error), "%s at RIP 0x%llx (CPL %d)", what,
		 (unsigned long long)in->start, c->cpl);
	return -1;
}

static int fetch(struct model_cpu *c, struct insn *in, unsigned int n, uint64_t *v)
{
	*v = 0;
	if (in->len + n > 15)
		return fail(c, in, "instruction longer than 15 bytes");
	if (model_fetch(c, in->start + in->len, v, n))
		return -1;
	in->len += n;
	return 0;
}

static int64_t sext(uint64_t v, int bytes)
{
	int shift = 64 - 8 * bytes;

	return (int64_t)(v << shift) >> shift;
}

static uint64_t mask_of(int bits)
{
	return bits == 64 ? ~0ull : 0xffffffffull;
}

static uint64_t reg_get(const struct model_cpu *c, int r, int bits)
{
	return c->gpr[r] & mask_of(bits);
}

/* 32-bit writes zero-extend into the full register, as in 64-bit mode. */
static void reg_set(struct model_cpu *c, int r, uint64_t v, int bits)
{
	c->gpr[r] = v & mask_of(bits);
}

static int decode_modrm(struct model_cpu *c, struct insn *in)
{
	uint64_t m, sib, d;

	if (fetch(c, in, 1, &m))
		return -1;
	in->mod = m >> 6;
	in->reg = ((m >> 3) & 7) | (in->rex_r << 3);
	in->rm = (m & 7) | (in->rex_b << 3);
	in->base = in->index = -1;
	in->scale = 0;
	if (in->mod == 3)
		return 0;
	in->is_mem = 1;
	if ((m & 7) == 4) {
		if (fetch(c, in, 1, &sib))
			return -1;
		in->scale = sib >> 6;
		in->index = ((sib >> 3) & 7) | (in->rex_x << 3);
		if (in->index == 4)
			in->index = -1;
		in->base = (sib & 7) | (in->rex_b << 3);
		if ((sib & 7) == 5 && in->mod == 0) {
			in->base = -1;
			if (fetch(c, in, 4, &d))
				return -1;
			in->disp = sext(d, 4);
		}
	} else if ((m & 7) == 5 && in->mod == 0) {
		in->riprel = 1;
		if (fetch(c, in, 4, &d))
			return -1;
		in->disp = sext(d, 4);
	} else {
		in->base = in->rm;
	}
	if (in->mod == 1) {
		if (fetch(c, in, 1, &d))
			return -1;
		in->disp = sext(d, 1);
	} else if (in->mod == 2) {
		if (fetch(c, in, 4, &d))
			return -1;
		in->disp = sext(d, 4);
	}
	return 0;
}

/* Call once every byte (immediates too) is fetched: RIP-relative needs next. */
static void finish(const struct model_cpu *c, struct insn *in)
{
	in->next = in->start + in->len;
	if (!in->is_mem)
		return;
	in->ea = (uint64_t)in->disp;
	if (in->seg_gs)
		in->ea += c->gs_base;
	if (in->riprel)
		in->ea += in->next;
	if (in->base >= 0)
		in->ea += c->gpr[in->base];
	if (in->index >= 0)
		in->ea += c->gpr[in->index] << in->scale;
}

static int rm_get(struct model_cpu *c, const struct insn *in, uint64_t *v)
{
	if (!in->is_mem) {
		*v = reg_get(c, in->rm, in->bits);
		return 0;
	}
	*v = 0;
	return model_read(c, in->ea, v, in->bits / 8);
}

static int rm_set(struct model_cpu *c, const struct insn *in, uint64_t v)
{
	if (!in->is_mem) {
		reg_set(c, in->rm, v, in->bits);
		return 0;
	}
	return model_write(c, in->ea, &v, in->bits / 8);
}

static int push64(struct model_cpu *c, uint64_t v)
{
	c->gpr[RSP] -= 8;
	return model_write(c, c->gpr[RSP], &v, 8);
}

static int pop64(struct model_cpu *c, uint64_t *v)
{
	if (model_read(c, c->gpr[RSP], v, 8))
		return -1;
	c->gpr[RSP] += 8;
	return 0;
}

static void set_arith(struct model_cpu *c, uint64_t f)
{
	c->rflags = (c->rflags & ~RFLAGS_ARITH) | f;
}

/* The 8 ALU operations of opcode group 1 (ADC/SBB are not in the subset);
 * op 8 is TEST.  Returns 1 when the result is written back. */
static int alu(struct model_cpu *c, const struct insn *in, int op, uint64_t a, uint64_t b,
	       uint64_t *r)
{
	int bits = in->bits;

	switch (op) {
	case 0:
		*r = a + b;
		set_arith(c, flags_add(a, b, *r, bits));
		return 1;
	case 5:
	case 7:
		*r = a - b;
		set_arith(c, flags_sub(a, b, *r, bits));
		return op == 5;
	case 1:
		*r = a | b;
		break;
	case 4:
	case 8:
		*r = a & b;
		break;
	case 6:
		*r = a ^ b;
		break;
	default:
		return fail(c, in, "ADC/SBB are not in the model's subset");
	}
	set_arith(c, flags_logic(*r, bits));
	c->undefined_flags |= RFLAGS_AF;
	return op != 8;
}

static int do_alu_rm(struct model_cpu *c, struct insn *in, int op, uint64_t b)
{
	uint64_t a, r;
	int wb;

	if (rm_get(c, in, &a))
		return -1;
	wb = alu(c, in, op, a, b & mask_of(in->bits), &r);
	return wb < 0 ? -1 : wb ? rm_set(c, in, r) : 0;
}

static int do_inc_dec(struct model_cpu *c, struct insn *in, int dec)
{
	uint64_t a, r, cf = c->rflags & RFLAGS_CF;

	if (rm_get(c, in, &a))
		return -1;
	r = dec ? a - 1 : a + 1;
	set_arith(c,
		  (dec ? flags_sub(a, 1, r, in->bits) : flags_add(a, 1, r, in->bits)) & ~RFLAGS_CF);
	c->rflags |= cf;
	return rm_set(c, in, r);
}

/* SHL (/4) and SHR (/5) by an immediate count. */
static int do_shift(struct model_cpu *c, struct insn *in, uint64_t count)
{
	uint64_t a, r, f, cf;
	int bits = in->bits;

	if (in->reg != 4 && in->reg != 5)
		return fail(c, in, "only SHL/SHR of the shift group are in the model's subset");
	count &= bits == 64 ? 63 : 31;
	if (rm_get(c, in, &a))
		return -1;
	if (!count)
		return 0;
	if (in->reg == 4) {
		r = (a << count) & mask_of(bits);
		cf = (a >> (bits - count)) & 1;
	} else {
		r = a >> count;
		cf = (a >> (count - 1)) & 1;
	}
	f = flags_szp(r, bits) | (cf ? RFLAGS_CF : 0);
	if (count == 1 && (in->reg == 4 ? ((r >> (bits - 1)) & 1) ^ cf : (a >> (bits - 1)) & 1))
		f |= RFLAGS_OF;
	set_arith(c, f);
	c->undefined_flags |= RFLAGS_AF | (count == 1 ? 0 : RFLAGS_OF);
	return rm_set(c, in, r);
}

static int condition(const struct model_cpu *c, int cc)
{
	uint64_t f = c->rflags;
	int cf = !!(f & RFLAGS_CF), zf = !!(f & RFLAGS_ZF), sf = !!(f & RFLAGS_SF);
	int of = !!(f & RFLAGS_OF), pf = !!(f & RFLAGS_PF), r;

	switch (cc >> 1) {
	case 0:
		r = of;
		break;
	case 1:
		r = cf;
		break;
	case 2:
		r = zf;
		break;
	case 3:
		r = cf || zf;
		break;
	case 4:
		r = sf;
		break;
	case 5:
		r = pf;
		break;
	case 6:
		r = sf != of;
		break;
	default:
		r = zf || sf != of;
		break;
	}
	return (cc & 1) ? !r : r;
}

static int do_port(struct model_cpu *c, struct model_io *io, const struct insn *in, int out,
		   uint64_t port, enum model_event *ev)
{
	c->insn_class = MODEL_INSN_EXIT;
	if (out && port == PORT_DONE) {
		c->status = (uint32_t)c->gpr[RAX];
		*ev = EV_DONE;
		return 0;
	}
	if (out && port == PORT_LOG) {
		io->log_sum += (uint32_t)c->gpr[RAX];
		io->log_count++;
		return 0;
	}
	if (!out && port == PORT_INPUT) {
		reg_set(c, RAX, INPUT_VALUE, 32);
		io->input_count++;
		return 0;
	}
	if (!out && port == PORT_GO) {
		reg_set(c, RAX, GO_VALUE, 32);
		return 0;
	}
	if (out && port == PORT_NOP)
		return 0;
	if (out && port == PORT_IRQ) {
		c->irq_pending = 1;
		c->irq_vector = (uint8_t)c->gpr[RAX];
		return 0;
	}
	if (out && port == PORT_NMI) {
		c->nmi_pending += (uint32_t)c->gpr[RAX];
		return 0;
	}
	if (out && port == PORT_PANIC)
		return fail(c, in, "the guest kernel reported an unexpected exception");
	return fail(c, in, "access to a port the lab does not define");
}

static int do_cpuid(struct model_cpu *c, const struct insn *in)
{
	c->insn_class = MODEL_INSN_EXIT;
	if ((uint32_t)c->gpr[RAX] != 0)
		return fail(c, in, "CPUID leaves other than 0 are not in the model's subset");
	reg_set(c, RAX, CPUID0_EAX, 32);
	reg_set(c, RBX, CPUID0_EBX, 32);
	reg_set(c, RCX, CPUID0_ECX, 32);
	reg_set(c, RDX, CPUID0_EDX, 32);
	return 0;
}

/* RDTSC, RDTSCP (@aux): EDX:EAX = the TSC, ECX = TSC_AUX; upper halves zero. */
static int do_rdtsc(struct model_cpu *c, const struct insn *in, int aux)
{
	const char *why;
	uint64_t tsc;

	c->insn_class = MODEL_INSN_TSC;
	why = model_clock_read(c, &tsc);
	if (why)
		return fail(c, in, why);
	reg_set(c, RAX, tsc, 32);
	reg_set(c, RDX, tsc >> 32, 32);
	if (aux)
		reg_set(c, RCX, c->tsc_aux, 32);
	return 0;
}

/* MUL r/m: RDX:RAX (EDX:EAX) = RAX * r/m; CF = OF = a high half; SF ZF AF PF undefined. */
static int do_mul(struct model_cpu *c, const struct insn *in)
{
	unsigned __int128 p;
	uint64_t v, hi;

	if (rm_get(c, in, &v))
		return -1;
	p = (unsigned __int128)reg_get(c, RAX, in->bits) * v;
	if (in->bits == 32)
		p = (p & 0xffffffffull) | (unsigned __int128)(uint64_t)(p >> 32) << 64;
	hi = (uint64_t)(p >> 64);
	reg_set(c, RAX, (uint64_t)p, in->bits);
	reg_set(c, RDX, hi, in->bits);
	set_arith(c, hi ? RFLAGS_CF | RFLAGS_OF : 0);
	c->undefined_flags |= RFLAGS_SF | RFLAGS_ZF | RFLAGS_AF | RFLAGS_PF;
	return 0;
}

/* A stepped thread's SYSCALL: its TF waits for the return point @rip. */
static int park(struct model_cpu *c, uint64_t rip)
{
	struct model_park *p = NULL;
	uint64_t gpa;
	int i;

	if (model_translate(c, rip, 0, &gpa))
		return -1;
	for (i = 0; i < MODEL_MAX_PARKS && !p; i++)
		if (c->parks[i].used && c->parks[i].rip == rip && c->parks[i].rsp == c->gpr[RSP])
			p = &c->parks[i]; /* the same thread again */
	for (i = 0; i < MODEL_MAX_PARKS && !p; i++)
		if (!c->parks[i].used)
			p = &c->parks[i];
	if (!p) {
		snprintf(c->error, sizeof(c->error), "more than %d threads parked at once",
			 MODEL_MAX_PARKS);
		return -1;
	}
	*p = (struct model_park){ 1, rip, c->gpr[RSP], gpa & ~0xfffull };
	return 0;
}

static int do_syscall(struct model_cpu *c, const struct insn *in)
{
	c->gpr[RCX] = in->next;
	/* The tracer parks its TF before a SYSCALL (R11 never holds it) and
	 * takes it back when the thread is at this return point again. */
	c->gpr[11] = c->rflags;
	if (c->our_tf && park(c, in->next))
		return -1;
	c->our_tf = 0;
	c->rflags &= ~(uint64_t)GUEST_FMASK;
	c->cpl = 0;
	c->next_rip_override = 1;
	c->rip = c->lstar;
	return 0;
}

static int do_iret(struct model_cpu *c)
{
	uint64_t rip, cs, rflags, rsp, ss;

	if (pop64(c, &rip) || pop64(c, &cs) || pop64(c, &rflags) || pop64(c, &rsp) || pop64(c, &ss))
		return -1;
	c->rip = rip;
	c->cpl = cs & 3;
	c->rflags = rflags | RFLAGS_FIXED;
	c->gpr[RSP] = rsp;
	c->next_rip_override = 1;
	return 0;
}

int model_raise_exception(struct model_cpu *c, int vector)
{
	return model_raise_exception_e(c, vector, -1);
}

int model_raise_exception_e(struct model_cpu *c, int vector, int64_t code)
{
	uint64_t rsp0, gate_lo, gate_hi, old_rsp = c->gpr[RSP], old_rflags = c->rflags;
	int old_cpl = c->cpl;

	memcpy(&rsp0, c->mem + TSS_GPA(c->index) + 4, 8);
	memcpy(&gate_lo, c->mem + IDT_GPA + vector * 16, 8);
	memcpy(&gate_hi, c->mem + IDT_GPA + vector * 16 + 8, 8);
	c->cpl = 0;
	c->gpr[RSP] = (old_cpl == 3 ? rsp0 : old_rsp) & ~0xfull;
	if (push64(c, old_cpl == 3 ? SEL_USER_SS : SEL_KERNEL_SS) || push64(c, old_rsp) ||
	    push64(c, old_rflags) || push64(c, old_cpl == 3 ? SEL_USER_CS : SEL_KERNEL_CS) ||
	    push64(c, c->rip) || (code >= 0 && push64(c, (uint64_t)code)))
		return -1;
	c->rflags &= ~(RFLAGS_TF | RFLAGS_IF | RFLAGS_NT | RFLAGS_RF);
	c->rip = (gate_lo & 0xffff) | ((gate_lo >> 32) & 0xffff0000ull) | (gate_hi << 32);
	return 0;
}

/* CS of the IRETQ frame at RSP (RIP, CS, RFLAGS, RSP, SS). */
static uint64_t read_frame_cs(struct model_cpu *c)
{
	uint64_t cs = 0;

	model_read(c, c->gpr[RSP] + 8, &cs, 8);
	return cs;
}

/*
 * INT n or a #UD from the program, delivered through the IDT.  The tracer
 * intercepts both while it steps user code, keeps its TF out of the frame
 * and puts it back at the IRETQ to user mode, wherever that returns (the
 * lab kernel's handlers clear TF in their frames, and #UD's dispatches to
 * the next instruction): our_tf stays, as for an NMI.
 */
static int raise_user(struct model_cpu *c, const struct insn *in, uint64_t vector)
{
	if (vector != INT_VECTOR && vector != 6)
		return fail(c, in, "a vector whose lab handler is not in the model");
	return model_raise_exception(c, (int)vector);
}

/*
 * MOV from CR2 (the #PF handler's fault address) or to CR3 (a new address
 * space), at CPL 0: the control registers the lab kernel uses.
 */
static int do_mov_cr(struct model_cpu *c, struct insn *in, int write)
{
	if (decode_modrm(c, in))
		return -1;
	finish(c, in);
	if (in->is_mem || c->cpl != 0 || in->reg != (write ? 3 : 2))
		return fail(c, in,
			    "only MOV from CR2 and to CR3 at CPL 0 are in the model's subset");
	if (write)
		c->cr3 = c->gpr[in->rm];
	else
		c->gpr[in->rm] = c->cr2;
	return 0;
}

/*
 * MOV to or from a debug register (CPL 0).  The CPU takes the operand as a
 * register whatever mod says.  DR4 and DR5 are DR6 and DR7 (CR4.DE is
 * clear); DR6 and DR7 read their fixed bits as 1.  Always a VM exit under
 * KVM: the first MOV DR after any exit is intercepted.
 */
static int do_mov_dr(struct model_cpu *c, struct insn *in, int write)
{
	int dr;

	if (decode_modrm(c, in))
		return -1;
	finish(c, in);
	dr = in->reg == 4 || in->reg == 5 ? in->reg + 2 : in->reg;
	if (c->cpl != 0 || dr > 7)
		return fail(c, in, "only MOV DR0-DR7 at CPL 0 is in the model's subset");
	c->vm_exit = 1;
	if (!write) {
		c->gpr[in->rm & 15] = c->dr[dr];
		return 0;
	}
	if (dr == 6)
		c->dr[6] = c->gpr[in->rm & 15] | DR6_FIXED;
	else if (dr == 7)
		c->dr[7] = c->gpr[in->rm & 15] | DR7_FIXED;
	else
		c->dr[dr] = c->gpr[in->rm & 15];
	return 0;
}

/* XADD r/m, r: the sum to r/m, r/m's old value to r, flags as ADD. */
static int do_xadd(struct model_cpu *c, struct insn *in)
{
	uint64_t a, b, r;

	if (decode_modrm(c, in))
		return -1;
	finish(c, in);
	if (rm_get(c, in, &a))
		return -1;
	b = reg_get(c, in->reg, in->bits);
	r = (a + b) & mask_of(in->bits);
	set_arith(c, flags_add(a, b, r, in->bits));
	if (rm_set(c, in, r))
		return -1;
	reg_set(c, in->reg, a, in->bits);
	return 0;
}

uint64_t model_exec_bp_matches(const struct model_cpu *c, uint64_t rip)
{
	uint64_t bits = 0;

	for (int i = 0; i < 4; i++)
		if (!((c->dr[7] >> (16 + i * 4)) & 3) && c->dr[i] == rip)
			bits |= 1ull << i;
	return bits;
}

int model_exec_breakpoint(struct model_cpu *c)
{
	uint64_t enabled = 0;

	if (c->rflags & RFLAGS_RF)
		return 0;
	for (int i = 0; i < 4; i++)
		if ((c->dr[7] >> (i * 2)) & 3)
			enabled |= 1ull << i;
	if (!(model_exec_bp_matches(c, c->rip) & enabled))
		return 0;
	c->dr[6] = (c->dr[6] & ~0xfull) | model_exec_bp_matches(c, c->rip);
	return model_raise_exception(c, 1) ? -1 : 1;
}

/* Opcodes after 0x0f. */
static int step_0f(struct model_cpu *c, struct model_io *io, struct insn *in, enum model_event *ev)
{
	uint64_t op, d, v;

	if (fetch(c, in, 1, &op))
		return -1;
	if (op >= 0x80 && op <= 0x8f) { /* Jcc rel32 */
		if (fetch(c, in, 4, &d))
			return -1;
		finish(c, in);
		if (condition(c, op & 15))
			in->next += sext(d, 4);
		return 0;
	}
	if (op == 0x21 || op == 0x23) /* mov r64, drN / mov drN, r64 */
		return do_mov_dr(c, in, op == 0x23);
	if (op == 0xc1) /* xadd r/m, r */
		return do_xadd(c, in);
	if (op == 0x20 || op == 0x22) /* mov r64, crN / mov crN, r64 */
		return do_mov_cr(c, in, op == 0x22);
	if (op == 0x01) { /* swapgs (f8), clac (ca), stac (cb) at CPL 0; rdtscp (f9) */
		if (fetch(c, in, 1, &d))
			return -1;
		finish(c, in);
		if (d == 0xf9)
			return do_rdtsc(c, in, 1);
		if ((d != 0xf8 && d != 0xca && d != 0xcb) || c->cpl != 0)
			return fail(c, in,
				    "only RDTSCP, and SWAPGS, CLAC and STAC at CPL 0, of opcode "
				    "0f 01 are in the model's subset");
		if (d == 0xca || d == 0xcb) {
			c->rflags = (c->rflags & ~RFLAGS_AC) | (d == 0xcb ? RFLAGS_AC : 0);
			return 0;
		}
		v = c->gs_base;
		c->gs_base = c->kernel_gs_base;
		c->kernel_gs_base = v;
		return 0;
	}
	finish(c, in);
	switch (op) {
	case 0x30: /* wrmsr */
		if (c->cpl != 0 || (uint32_t)c->gpr[RCX] != MSR_KERNEL_GS_BASE)
			return fail(
				c, in,
				"only WRMSR of KERNEL_GS_BASE at CPL 0 is in the model's subset");
		c->kernel_gs_base = (uint32_t)c->gpr[RAX] | c->gpr[RDX] << 32;
		return 0;
	case 0x0b: /* ud2: #UD, RIP stays on it */
		*ev = EV_RAISED;
		c->next_rip_override = 1;
		return raise_user(c, in, 6);
	case 0xa2:
		c->vm_exit = 1;
		return do_cpuid(c, in);
	case 0x31:
		return do_rdtsc(c, in, 0);
	case 0x05:
		if (c->cpl != 3)
			return fail(c, in, "SYSCALL from CPL 0");
		if (do_syscall(c, in))
			return -1;
		*ev = EV_SYSCALL;
		return 0;
	case 0x07:
		if (!in->rex_w || c->cpl != 0)
			return fail(c, in, "only SYSRETQ from CPL 0 is in the model's subset");
		c->rip = c->gpr[RCX];
		c->rflags = (c->gpr[11] & RFLAGS_SYSRET) | RFLAGS_FIXED;
		/* Whether our TF comes back here is the tracer's (tracer.c). */
		c->cpl = 3;
		c->next_rip_override = 1;
		*ev = EV_SYSRET;
		return 0;
	}
	(void)io;
	return fail(c, in, "opcode 0f outside the model's subset");
}

/*
 * A user-mode instruction whose first byte is on a page not present: the
 * lab kernel's #PF handler maps it (demand paging, layout.h) and returns to
 * it.  The tracer intercepts the #PF while it steps user code and keeps its
 * TF out of the frame, like #UD's: our_tf stays.  Error code: user, fetch.
 */
static int fetch_fault(struct model_cpu *c, enum model_event *ev)
{
	uint64_t gpa;

	if (!c->demand_paging || c->cpl != 3 || !model_translate(c, c->rip, 0, &gpa) ||
	    !c->not_present)
		return 0;
	c->cr2 = c->rip;
	*ev = EV_RAISED;
	return model_raise_exception_e(c, 14, 0x14) ? -1 : 1;
}

int model_step(struct model_cpu *c, struct model_io *io, enum model_event *ev)
{
	struct insn in = { .start = c->rip };
	uint64_t op, imm, v;
	int faulted;

	*ev = EV_NONE;
	c->undefined_flags = 0;
	c->next_rip_override = 0;
	c->insn_class = MODEL_INSN_PLAIN;
	c->trap_shadow = 0;
	c->dr_hits = 0;
	c->vm_exit = 0;
	c->raised_int = 0;
	c->nr_acc = 0;
	faulted = fetch_fault(c, ev);
	if (faulted)
		return faulted < 0 ? -1 : 0;
	if (fetch(c, &in, 1, &op))
		return -1;
	/* Segment overrides that 64-bit mode ignores. */
	while (op == 0x26 || op == 0x2e || op == 0x36 || op == 0x3e)
		if (fetch(c, &in, 1, &op))
			return -1;
	if (op == 0xf3) { /* REP: only PAUSE (F3 90) takes it */
		if (fetch(c, &in, 1, &op))
			return -1;
		if (op != 0x90)
			return fail(c, &in, "an F3 prefix other than PAUSE's");
		finish(c, &in);
		c->rip = in.next;
		return 0;
	}
	if (op == 0x65) { /* GS segment override: a memory operand's address + GS base */
		in.seg_gs = 1;
		if (fetch(c, &in, 1, &op))
			return -1;
	}
	if (op == 0x66) { /* operand size: only PUSHFW and INT n take it */
		in.o16 = 1;
		if (fetch(c, &in, 1, &op))
			return -1;
	}
	if (op >= 0x40 && op <= 0x4f) {
		in.rex_w = !!(op & 8);
		in.rex_r = !!(op & 4);
		in.rex_x = !!(op & 2);
		in.rex_b = !!(op & 1);
		if (fetch(c, &in, 1, &op))
			return -1;
	}
	in.bits = in.rex_w ? 64 : 32;
	/* INT n pushes a 64-bit frame in 64-bit mode, whatever the operand size. */
	if (in.o16 && op != 0xcd && (in.rex_w || op != 0x9c))
		return fail(c, &in, "operand-size prefix outside the model's subset");

	switch (op) {
	case 0x01:
	case 0x09:
	case 0x21:
	case 0x29:
	case 0x31:
	case 0x39: /* op r/m, r */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (do_alu_rm(c, &in, op >> 3, reg_get(c, in.reg, in.bits)))
			return -1;
		break;
	case 0x03:
	case 0x0b:
	case 0x23:
	case 0x2b:
	case 0x33:
	case 0x3b: { /* op r, r/m */
		uint64_t r;
		int wb;

		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (rm_get(c, &in, &v))
			return -1;
		wb = alu(c, &in, op >> 3, reg_get(c, in.reg, in.bits), v, &r);
		if (wb < 0)
			return -1;
		if (wb)
			reg_set(c, in.reg, r, in.bits);
		break;
	}
	case 0x05:
	case 0x0d:
	case 0x25:
	case 0x2d:
	case 0x35:
	case 0x3d: /* op eAX, imm32 */
		if (fetch(c, &in, 4, &imm))
			return -1;
		finish(c, &in);
		in.rm = RAX;
		if (do_alu_rm(c, &in, op >> 3, sext(imm, 4)))
			return -1;
		break;
	case 0x81:
	case 0x83: /* op r/m, imm */
		if (decode_modrm(c, &in) || fetch(c, &in, op == 0x81 ? 4 : 1, &imm))
			return -1;
		finish(c, &in);
		if (do_alu_rm(c, &in, in.reg, sext(imm, op == 0x81 ? 4 : 1)))
			return -1;
		break;
	case 0x85: /* test r/m, r */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (do_alu_rm(c, &in, 8, reg_get(c, in.reg, in.bits)))
			return -1;
		break;
	case 0x87: /* xchg r/m, r */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (rm_get(c, &in, &v) || rm_set(c, &in, reg_get(c, in.reg, in.bits)))
			return -1;
		reg_set(c, in.reg, v, in.bits);
		break;
	case 0xa9: /* test eAX, imm32 */
		if (fetch(c, &in, 4, &imm))
			return -1;
		finish(c, &in);
		in.rm = RAX;
		if (do_alu_rm(c, &in, 8, sext(imm, 4)))
			return -1;
		break;
	case 0xc8: /* enter imm16, 0 */
		if (fetch(c, &in, 2, &imm) || fetch(c, &in, 1, &v))
			return -1;
		finish(c, &in);
		if (v != 0)
			return fail(c, &in, "ENTER with a nesting level");
		if (push64(c, c->gpr[RBP]))
			return -1;
		c->gpr[RBP] = c->gpr[RSP];
		c->gpr[RSP] -= imm;
		break;
	case 0xc9: /* leave */
		finish(c, &in);
		c->gpr[RSP] = c->gpr[RBP];
		if (pop64(c, &v))
			return -1;
		c->gpr[RBP] = v;
		break;
	case 0xcc: /* int3 */
		finish(c, &in);
		c->rip = in.next;
		c->raised_int = 1;
		*ev = EV_RAISED;
		return model_raise_exception(c, 3);
	case 0x89: /* mov r/m, r */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (rm_set(c, &in, reg_get(c, in.reg, in.bits)))
			return -1;
		break;
	case 0x8b: /* mov r, r/m */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (rm_get(c, &in, &v))
			return -1;
		reg_set(c, in.reg, v, in.bits);
		break;
	case 0x8d: /* lea */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (!in.is_mem)
			return fail(c, &in, "LEA with a register operand");
		reg_set(c, in.reg, in.ea, in.bits);
		break;
	case 0x8e: /* mov sreg, r/m */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if ((in.reg & 7) != 2 || in.is_mem ||
		    (uint16_t)c->gpr[in.rm] != (c->cpl == 3 ? SEL_USER_SS : SEL_KERNEL_SS))
			return fail(
				c, &in,
				"only MOV SS of the current SS selector is in the model's subset");
		c->trap_shadow = 1; /* and SS itself does not change */
		break;
	case 0xc7: /* mov r/m, imm32 */
		if (decode_modrm(c, &in) || fetch(c, &in, 4, &imm))
			return -1;
		finish(c, &in);
		if (in.reg != 0)
			return fail(c, &in, "opcode c7 /r other than MOV");
		if (rm_set(c, &in, sext(imm, 4)))
			return -1;
		break;
	case 0xb8:
	case 0xb9:
	case 0xba:
	case 0xbb:
	case 0xbc:
	case 0xbd:
	case 0xbe:
	case 0xbf: /* mov r, imm */
		if (fetch(c, &in, in.rex_w ? 8 : 4, &imm))
			return -1;
		finish(c, &in);
		reg_set(c, (op & 7) | (in.rex_b << 3), imm, in.bits);
		break;
	case 0xf7: /* group 3: only MUL */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (in.reg != 4)
			return fail(c, &in, "group 3 other than MUL is not in the model's subset");
		if (do_mul(c, &in))
			return -1;
		break;
	case 0xff: /* inc/dec r/m, call r/m64, jmp r/m64 */
		if (decode_modrm(c, &in))
			return -1;
		finish(c, &in);
		if (in.reg == 2 || in.reg == 4) { /* 64-bit operand whatever REX.W says */
			v = 0;
			if (in.is_mem ? model_read(c, in.ea, &v, 8) : (v = c->gpr[in.rm], 0))
				return -1;
			if (in.reg == 2 && push64(c, in.next))
				return -1;
			in.next = v;
			break;
		}
		if (in.reg > 1)
			return fail(c, &in, "opcode ff /r other than INC/DEC/CALL/JMP");
		if (do_inc_dec(c, &in, in.reg))
			return -1;
		break;
	case 0xd1:
	case 0xc1: /* shl/shr r/m, 1 or imm8 */
		if (decode_modrm(c, &in) || (op == 0xc1 && fetch(c, &in, 1, &imm)))
			return -1;
		finish(c, &in);
		if (do_shift(c, &in, op == 0xd1 ? 1 : imm))
			return -1;
		break;
	case 0x50:
	case 0x51:
	case 0x52:
	case 0x53:
	case 0x54:
	case 0x55:
	case 0x56:
	case 0x57: /* push r64 */
		finish(c, &in);
		if (push64(c, c->gpr[(op & 7) | (in.rex_b << 3)]))
			return -1;
		break;
	case 0x58:
	case 0x59:
	case 0x5a:
	case 0x5b:
	case 0x5c:
	case 0x5d:
	case 0x5e:
	case 0x5f: /* pop r64 */
		finish(c, &in);
		if (pop64(c, &v))
			return -1;
		c->gpr[(op & 7) | (in.rex_b << 3)] = v;
		break;
	case 0x9c: /* pushfq, pushfw */
		finish(c, &in);
		if (in.o16) {
			uint16_t w = (uint16_t)c->rflags;

			c->gpr[RSP] -= 2;
			if (model_write(c, c->gpr[RSP], &w, 2))
				return -1;
		} else if (push64(c, c->rflags & ~RFLAGS_RF)) {
			return -1;
		}
		break;
	case 0x9d: { /* popfq */
		uint64_t can = RFLAGS_POPF | (c->cpl == 0 ? RFLAGS_IOPL : 0);

		finish(c, &in);
		if (pop64(c, &v))
			return -1;
		c->rflags = (c->rflags & ~can) | (v & can) | RFLAGS_FIXED;
		break;
	}
	case 0x70:
	case 0x71:
	case 0x72:
	case 0x73:
	case 0x74:
	case 0x75:
	case 0x76:
	case 0x77:
	case 0x78:
	case 0x79:
	case 0x7a:
	case 0x7b:
	case 0x7c:
	case 0x7d:
	case 0x7e:
	case 0x7f:
		if (fetch(c, &in, 1, &imm)) /* jcc rel8 */
			return -1;
		finish(c, &in);
		if (condition(c, op & 15))
			in.next += sext(imm, 1);
		break;
	case 0xeb:
	case 0xe9: /* jmp rel8/rel32 */
		if (fetch(c, &in, op == 0xeb ? 1 : 4, &imm))
			return -1;
		finish(c, &in);
		in.next += sext(imm, op == 0xeb ? 1 : 4);
		break;
	case 0xe8: /* call rel32 */
		if (fetch(c, &in, 4, &imm))
			return -1;
		finish(c, &in);
		if (push64(c, in.next))
			return -1;
		in.next += sext(imm, 4);
		break;
	case 0xc3: /* ret */
		finish(c, &in);
		if (pop64(c, &in.next))
			return -1;
		break;
	case 0xe2: /* loop rel8 */
		if (fetch(c, &in, 1, &imm))
			return -1;
		finish(c, &in);
		if (--c->gpr[RCX])
			in.next += sext(imm, 1);
		break;
	case 0xe5:
	case 0xe7: /* in/out eax, imm8 */
		if (fetch(c, &in, 1, &imm))
			return -1;
		finish(c, &in);
		c->vm_exit = 1;
		if (do_port(c, io, &in, op == 0xe7, imm, ev))
			return -1;
		if (*ev == EV_DONE)
			return 0; /* not executed: RIP stays on it */
		break;
	case 0x90:
		if (in.rex_b)
			return fail(c, &in, "XCHG is not in the model's subset");
		finish(c, &in);
		break;
	case 0xf4: /* hlt at CPL 3: #GP(0), RIP stays on it */
		finish(c, &in);
		if (c->cpl != 3)
			return fail(c, &in, "HLT at CPL 0 is not in the model's subset");
		/* A fault the CPU delivers itself: the tracer intercepts it
		 * and keeps its TF out of the frame, like #UD's. */
		*ev = EV_RAISED;
		c->next_rip_override = 1;
		return model_raise_exception_e(c, 13, 0);
	case 0xfa:
	case 0xfb: /* cli/sti */
		finish(c, &in);
		c->rflags = op == 0xfb ? c->rflags | RFLAGS_IF : c->rflags & ~RFLAGS_IF;
		break;
	case 0xcf: /* iretq */
		if (!in.rex_w)
			return fail(c, &in, "only IRETQ is in the model's subset");
		if (c->cpl == 3 && (read_frame_cs(c) & 3) != 3)
			return fail(c, &in, "IRETQ from CPL 3 to CPL 0");
		finish(c, &in);
		*ev = EV_IRET;
		c->vm_exit = 1; /* intercepted while a capture is armed */
		return do_iret(c);
	case 0xcd: /* int imm8 */
		if (fetch(c, &in, 1, &imm))
			return -1;
		finish(c, &in);
		c->rip = in.next;
		c->raised_int = 1;
		*ev = EV_RAISED;
		return raise_user(c, &in, imm);
	case 0x0f:
		if (step_0f(c, io, &in, ev))
			return -1;
		break;
	default:
		return fail(c, &in, "opcode outside the model's subset");
	}
	if (!c->next_rip_override)
		c->rip = in.next;
	return 0;
}
