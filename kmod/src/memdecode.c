// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: the memory operands of an x86 instruction, from its bytes.
 *
 * Why a decoder of our own and not KVM's (x86_decode_insn() in emulate.c):
 * that one decodes what KVM must emulate, into the vCPU's emulation context,
 * which only the static init_emulate_ctxt() of x86.c prepares, and it knows
 * no VEX (C4/C5 are LES/LDS to it), few SSE forms and none of the implicit
 * stack accesses of PUSH, POP, CALL and RET (its execute callbacks make
 * them).  What is needed here is smaller: the length, and for each operand
 * the address form, the size and whether it is read, written or both, in
 * the order the accesses are recorded (reads and read-modify-writes of the
 * instruction's operands, the stack slot it pops, its writes, the stack
 * slot it pushes).  docs/kmod.md, "Memory operands", has the forms.
 *
 * Anything outside the table is not guessed: an instruction whose length
 * is unknown gives one UNRECORDED access without address (undecoded), and
 * a known instruction whose memory form is not in the table gives one
 * UNRECORDED access with its address and no size.
 */
#include "memdecode.h"

#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif
#include <svmtrace/abi.h>

#define R SVMTRACE_MEM_READ
#define W SVMTRACE_MEM_WRITE
#define RMW SVMTRACE_MEM_RMW

#define SEG_FS 4
#define SEG_GS 5

struct insn {
	const u8 *code;
	unsigned int n, i;
	bool bad;		/* ran past the bytes or met an invalid form */
	bool long64;
	bool opsz16;		/* 66 */
	bool rep;		/* F2 or F3 */
	u8 last_rep;		/* which of them came last */
	u8 rex;
	u8 vex_pp;		/* VEX: the implied 66/F3/F2 (1/2/3) */
	bool vex;
	bool vex_l;		/* VEX.L: 256-bit */
	u8 mod, reg, rm;	/* ModRM, reg and rm with REX.R/B applied */
	bool has_modrm;
	struct svmtrace_memdecode *d;
};

static u8 take(struct insn *in)
{
	if (in->i >= in->n) {
		in->bad = true;
		return 0;
	}
	return in->code[in->i++];
}

static s64 take_le(struct insn *in, unsigned int bytes)
{
	u64 v = 0;
	unsigned int k;

	for (k = 0; k < bytes; k++)
		v |= (u64)take(in) << (8 * k);
	if (bytes < 8 && (v & (1ULL << (8 * bytes - 1))))
		v |= ~0ULL << (8 * bytes);	/* sign-extend */
	return (s64)v;
}

static void skip(struct insn *in, unsigned int bytes)
{
	while (bytes--)
		take(in);
}

/* Operand size of a "v" operand: 16, 32 or 64 bits, in bytes. */
static u32 vsize(const struct insn *in)
{
	if (in->rex & 8)
		return 8;
	return in->opsz16 ? 2 : 4;
}

/* ... of an "Iz" immediate. */
static u32 zsize(const struct insn *in)
{
	return in->opsz16 ? 2 : 4;
}

/* ... of a stack slot (PUSH, POP): 64-bit mode pushes 8 bytes, 32-bit code 4. */
static u32 stack_size(const struct insn *in)
{
	if (in->opsz16)
		return 2;
	return in->long64 ? 8 : 4;
}

/* ModRM, SIB and displacement. */
static void modrm(struct insn *in)
{
	struct svmtrace_memdecode *d = in->d;
	u8 m = take(in), sib;
	u8 rex_r = in->rex & 4 ? 8 : 0, rex_x = in->rex & 2 ? 8 : 0, rex_b = in->rex & 1 ? 8 : 0;

	in->has_modrm = true;
	in->mod = m >> 6;
	in->reg = ((m >> 3) & 7) | rex_r;
	in->rm = (m & 7) | rex_b;
	if (in->mod == 3)
		return;
	d->base = SVMTRACE_REG_NONE;
	d->index = SVMTRACE_REG_NONE;
	d->scale = 1;
	d->disp = 0;
	if ((m & 7) == 4) {
		sib = take(in);
		d->scale = 1 << (sib >> 6);
		if ((((sib >> 3) & 7) | rex_x) != 4)
			d->index = ((sib >> 3) & 7) | rex_x;
		if ((sib & 7) == 5 && in->mod == 0)
			d->disp = take_le(in, 4);
		else
			d->base = (sib & 7) | rex_b;
	} else if ((m & 7) == 5 && in->mod == 0) {
		d->riprel = in->long64;	/* disp32 alone: from RIP in 64-bit mode */
		d->disp = take_le(in, 4);
	} else {
		d->base = in->rm;
	}
	if (in->mod == 1)
		d->disp += take_le(in, 1);
	else if (in->mod == 2)
		d->disp += take_le(in, 4);
}

static void add(struct insn *in, u8 kind, u8 form, u32 size)
{
	struct svmtrace_memdecode *d = in->d;

	if (d->nr == SVMTRACE_MEMOPS_MAX) {
		in->bad = true;
		return;
	}
	d->ops[d->nr].kind = kind;
	d->ops[d->nr].why = 0;
	d->ops[d->nr].form = form;
	d->ops[d->nr].size = size;
	d->nr++;
}

/* The ModRM memory operand, if the instruction has one (mod != 3). */
static void rm_op(struct insn *in, u8 kind, u32 size)
{
	if (in->mod != 3)
		add(in, kind, SVMTRACE_FORM_MODRM, size);
}

/* A known instruction whose memory form the table does not have. */
static void rm_undecoded(struct insn *in)
{
	struct svmtrace_memdecode *d = in->d;

	if (in->mod == 3)
		return;
	add(in, SVMTRACE_MEM_UNRECORDED, SVMTRACE_FORM_MODRM, 0);
	d->ops[d->nr - 1].why = SVMTRACE_MEM_WHY_UNDECODED;
}

/* ... whose operand is larger than a record holds (FXSAVE's 512 bytes). */
static void rm_too_large(struct insn *in, u32 size)
{
	struct svmtrace_memdecode *d = in->d;

	if (in->mod == 3)
		return;
	add(in, SVMTRACE_MEM_UNRECORDED, SVMTRACE_FORM_MODRM, size);
	d->ops[d->nr - 1].why = SVMTRACE_MEM_WHY_TOO_LARGE;
}

static void stack_pop(struct insn *in, u32 size)
{
	add(in, R, SVMTRACE_FORM_POP, size);
}

static void stack_push(struct insn *in, u32 size)
{
	add(in, W, SVMTRACE_FORM_PUSH, size);
}

/* MOVS, CMPS, STOS, LODS, SCAS, INS, OUTS: @op's accesses, one iteration. */
static void string_op(struct insn *in, u8 op)
{
	u32 size = op & 1 ? vsize(in) : 1;

	in->d->rep = in->rep;
	switch (op & ~1) {
	case 0xa4:	/* MOVS */
		add(in, R, SVMTRACE_FORM_RSI, size);
		add(in, W, SVMTRACE_FORM_RDI, size);
		break;
	case 0xa6:	/* CMPS */
		add(in, R, SVMTRACE_FORM_RSI, size);
		add(in, R, SVMTRACE_FORM_RDI, size);
		break;
	case 0xaa:	/* STOS */
		add(in, W, SVMTRACE_FORM_RDI, size);
		break;
	case 0xac:	/* LODS */
		add(in, R, SVMTRACE_FORM_RSI, size);
		break;
	case 0xae:	/* SCAS */
		add(in, R, SVMTRACE_FORM_RDI, size);
		break;
	case 0x6c:	/* INS: the port gives 1, 2 or 4 bytes */
		add(in, W, SVMTRACE_FORM_RDI, op & 1 ? zsize(in) : 1);
		break;
	case 0x6e:	/* OUTS */
		add(in, R, SVMTRACE_FORM_RSI, op & 1 ? zsize(in) : 1);
		break;
	}
}

/* The legacy-prefix-selected SSE operand size of 0F 10-17, 28-2F, 51-5F, C2. */
static u32 sse_size(const struct insn *in, u32 ps, u32 pd, u32 ss, u32 sd)
{
	u32 size;

	switch (in->vex ? in->vex_pp : in->last_rep == 0xf3 ? 2 : in->last_rep == 0xf2 ? 3 :
							 in->opsz16 ? 1 : 0) {
	case 1:
		size = pd;
		break;
	case 2:
		return ss;	/* scalars keep their size under VEX.L */
	case 3:
		return sd;
	default:
		size = ps;
	}
	return in->vex_l && size == 16 ? 32 : size;
}

/* The mandatory prefix of a 0F instruction: 0 none, 1 66, 2 F3, 3 F2. */
static u8 mandatory(const struct insn *in)
{
	if (in->vex)
		return in->vex_pp;
	if (in->last_rep == 0xf3)
		return 2;
	if (in->last_rep == 0xf2)
		return 3;
	return in->opsz16 ? 1 : 0;
}

/* An MMX (no prefix: 8 bytes) or SSE/AVX (66: 16, VEX.L: 32) packed operand. */
static u32 mmx_sse(const struct insn *in)
{
	if (mandatory(in) == 0)
		return in->vex ? (in->vex_l ? 32 : 16) : 8;
	return in->vex_l ? 32 : 16;
}

/* 0F xx (legacy or VEX map 1). */
static void twobyte(struct insn *in, u8 op)
{
	u8 pfx;

	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37:
	case 0x77: case 0xa2:
		return;				/* no operand in memory */
	case 0xa0: case 0xa8:			/* PUSH FS/GS */
		stack_push(in, stack_size(in));
		return;
	case 0xa1: case 0xa9:			/* POP FS/GS */
		stack_pop(in, stack_size(in));
		return;
	}
	if (op >= 0x80 && op <= 0x8f) {		/* Jcc rel32 */
		skip(in, zsize(in));
		return;
	}
	if (op >= 0xc8 && op <= 0xcf)		/* BSWAP */
		return;
	modrm(in);
	pfx = mandatory(in);
	switch (op) {
	case 0x0d: case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1c: case 0x1d:
	case 0x1e: case 0x1f:			/* prefetches, hints, NOP Ev, ENDBR */
		return;
	case 0x10:				/* MOVUPS/PD/SS/SD load */
		rm_op(in, R, sse_size(in, 16, 16, 4, 8));
		return;
	case 0x11:
		rm_op(in, W, sse_size(in, 16, 16, 4, 8));
		return;
	case 0x12: case 0x16:			/* MOVLPS/PD, MOVHPS/PD, MOVDDUP, MOVS[LH]DUP */
		rm_op(in, R, pfx == 2 ? (in->vex_l ? 32 : 16) : pfx == 3 && in->vex_l ? 32 : 8);
		return;
	case 0x13: case 0x17:
		rm_op(in, W, 8);
		return;
	case 0x14: case 0x15:			/* UNPCKL/HPS/PD */
		rm_op(in, R, in->vex_l ? 32 : 16);
		return;
	case 0x28:				/* MOVAPS/PD */
		rm_op(in, R, in->vex_l ? 32 : 16);
		return;
	case 0x29: case 0x2b:			/* MOVAPS/PD store, MOVNTPS/PD */
		rm_op(in, W, in->vex_l ? 32 : 16);
		return;
	case 0x2a:				/* CVTPI2PS/PD, CVTSI2SS/SD */
		rm_op(in, R, pfx >= 2 ? vsize(in) == 8 ? 8 : 4 : 8);
		return;
	case 0x2c: case 0x2d:			/* CVT(T)PS2PI/PD2PI/SS2SI/SD2SI */
		rm_op(in, R, sse_size(in, 8, 16, 4, 8));
		return;
	case 0x2e: case 0x2f:			/* (U)COMISS/SD */
		rm_op(in, R, pfx == 1 ? 8 : 4);
		return;
	case 0x5a:				/* CVTPS2PD, CVTPD2PS, CVTSS2SD, CVTSD2SS */
		rm_op(in, R, pfx == 0 ? (in->vex_l ? 16 : 8) : sse_size(in, 0, 16, 4, 8));
		return;
	case 0xe6:				/* CVTDQ2PD (F3: half), CVT(T)PD2DQ */
		rm_op(in, R, pfx == 2 ? (in->vex_l ? 16 : 8) : in->vex_l ? 32 : 16);
		return;
	case 0x5b:
		rm_op(in, R, in->vex_l ? 32 : 16);
		return;
	case 0x6e:				/* MOVD/MOVQ from a GPR's size */
		rm_op(in, R, in->rex & 8 ? 8 : 4);
		return;
	case 0x6f:				/* MOVQ, MOVDQA, MOVDQU */
		rm_op(in, R, mmx_sse(in));
		return;
	case 0x70:				/* PSHUFW/D/HW/LW */
		rm_op(in, R, mmx_sse(in));
		skip(in, 1);
		return;
	case 0x7e:				/* MOVD/MOVQ store; F3: MOVQ load */
		if (pfx == 2)
			rm_op(in, R, 8);
		else
			rm_op(in, W, in->rex & 8 ? 8 : 4);
		return;
	case 0x7f:
		rm_op(in, W, mmx_sse(in));
		return;
	case 0xa3:				/* BT Ev, Gv */
		in->d->bt_reg = in->reg;
		rm_op(in, R, vsize(in));
		return;
	case 0xab: case 0xb3: case 0xbb:	/* BTS, BTR, BTC Ev, Gv */
		in->d->bt_reg = in->reg;
		rm_op(in, RMW, vsize(in));
		return;
	case 0xa4: case 0xac:			/* SHLD/SHRD Ev, Gv, Ib */
		rm_op(in, RMW, vsize(in));
		skip(in, 1);
		return;
	case 0xa5: case 0xad:
		rm_op(in, RMW, vsize(in));
		return;
	case 0xae:				/* group 15 */
		if (in->mod == 3)
			return;			/* fences, RD/WRFSBASE ... */
		switch (in->reg & 7) {
		case 0: case 1:			/* FXSAVE, FXRSTOR */
			rm_too_large(in, 512);
			return;
		case 2:
			rm_op(in, R, 4);	/* LDMXCSR */
			return;
		case 3:
			rm_op(in, W, 4);	/* STMXCSR */
			return;
		case 7:				/* CLFLUSH(OPT) */
			return;
		case 6:
			if (pfx == 1)		/* CLWB */
				return;
		}
		rm_undecoded(in);		/* XSAVE, XRSTOR, XSAVEOPT: sized by XCR0 */
		return;
	case 0xaf:				/* IMUL Gv, Ev */
		rm_op(in, R, vsize(in));
		return;
	case 0xb0:				/* CMPXCHG */
		rm_op(in, RMW, 1);
		return;
	case 0xb1:
		rm_op(in, RMW, vsize(in));
		return;
	case 0xb6: case 0xbe:			/* MOVZX/MOVSX Gv, Eb */
		rm_op(in, R, 1);
		return;
	case 0xb7: case 0xbf:
		rm_op(in, R, 2);
		return;
	case 0xb8: case 0xbc: case 0xbd:	/* POPCNT, BSF/TZCNT, BSR/LZCNT */
		rm_op(in, R, vsize(in));
		return;
	case 0xba:				/* group 8: BT/BTS/BTR/BTC Ev, Ib */
		skip(in, 1);
		if ((in->reg & 7) < 4) {
			rm_undecoded(in);
			return;
		}
		rm_op(in, (in->reg & 7) == 4 ? R : RMW, vsize(in));
		return;
	case 0xc0:				/* XADD */
		rm_op(in, RMW, 1);
		return;
	case 0xc1:
		rm_op(in, RMW, vsize(in));
		return;
	case 0xc2:				/* CMPPS/PD/SS/SD */
		rm_op(in, R, sse_size(in, 16, 16, 4, 8));
		skip(in, 1);
		return;
	case 0xc3:				/* MOVNTI */
		rm_op(in, W, in->rex & 8 ? 8 : 4);
		return;
	case 0xc4:				/* PINSRW */
		rm_op(in, R, 2);
		skip(in, 1);
		return;
	case 0xc5:				/* PEXTRW (register only) */
		skip(in, 1);
		return;
	case 0xc6:				/* SHUFPS/PD */
		rm_op(in, R, in->vex_l ? 32 : 16);
		skip(in, 1);
		return;
	case 0xc7:				/* group 9 */
		if ((in->reg & 7) == 1 && in->mod != 3)	/* CMPXCHG8B/16B */
			rm_op(in, RMW, in->rex & 8 ? 16 : 8);
		else
			rm_undecoded(in);
		return;
	case 0xd6:				/* MOVQ xmm to m64 */
		rm_op(in, W, 8);
		return;
	case 0xe7:				/* MOVNTQ, MOVNTDQ */
		rm_op(in, W, mmx_sse(in));
		return;
	case 0xf0:				/* LDDQU */
		rm_op(in, R, in->vex_l ? 32 : 16);
		return;
	case 0xd7: case 0xf7: case 0x50:	/* PMOVMSKB, MASKMOVQ, MOVMSKPS */
		rm_undecoded(in);
		return;
	}
	if (op >= 0x40 && op <= 0x4f) {		/* CMOVcc: reads whatever the condition */
		rm_op(in, R, vsize(in));
		return;
	}
	if (op >= 0x90 && op <= 0x9f) {		/* SETcc */
		rm_op(in, W, 1);
		return;
	}
	if (op >= 0x51 && op <= 0x5f) {		/* SSE arithmetic and logic */
		rm_op(in, R, sse_size(in, 16, 16, 4, 8));
		return;
	}
	if ((op >= 0x60 && op <= 0x6d) || (op >= 0x74 && op <= 0x76) ||
	    (op >= 0xd0 && op <= 0xfe)) {	/* MMX/SSE2 integer, ADDSUBPS/PD */
		rm_op(in, R, mmx_sse(in));
		return;
	}
	if (op >= 0x71 && op <= 0x73) {		/* shifts by immediate (register only) */
		skip(in, 1);
		return;
	}
	rm_undecoded(in);
}

/* Group 1-5, F6/F7, C0/C1/D0-D3, FE/FF: the ModRM reg field picks the operation. */
static void groups(struct insn *in, u8 op)
{
	u8 r;

	modrm(in);
	r = in->reg & 7;
	switch (op) {
	case 0x80:				/* ALU Eb, Ib; CMP reads */
		rm_op(in, r == 7 ? R : RMW, 1);
		skip(in, 1);
		return;
	case 0x81:
		rm_op(in, r == 7 ? R : RMW, vsize(in));
		skip(in, zsize(in));
		return;
	case 0x83:
		rm_op(in, r == 7 ? R : RMW, vsize(in));
		skip(in, 1);
		return;
	case 0xc0:				/* shifts and rotates */
		rm_op(in, RMW, 1);
		skip(in, 1);
		return;
	case 0xc1:
		rm_op(in, RMW, vsize(in));
		skip(in, 1);
		return;
	case 0xd0: case 0xd2:
		rm_op(in, RMW, 1);
		return;
	case 0xd1: case 0xd3:
		rm_op(in, RMW, vsize(in));
		return;
	case 0xf6: case 0xf7:			/* TEST, NOT, NEG, MUL, IMUL, DIV, IDIV */
		rm_op(in, r == 2 || r == 3 ? RMW : R, op == 0xf6 ? 1 : vsize(in));
		if (r < 2)
			skip(in, op == 0xf6 ? 1 : zsize(in));
		return;
	case 0xfe:				/* INC, DEC Eb */
		if (r > 1) {
			in->bad = true;
			return;
		}
		rm_op(in, RMW, 1);
		return;
	case 0xff:
		switch (r) {
		case 0: case 1:			/* INC, DEC */
			rm_op(in, RMW, vsize(in));
			return;
		case 2:				/* CALL Ev: 64-bit target in 64-bit mode */
			rm_op(in, R, in->long64 ? 8 : vsize(in));
			stack_push(in, stack_size(in) == 2 ? 2 : in->long64 ? 8 : 4);
			return;
		case 4:				/* JMP Ev */
			rm_op(in, R, in->long64 ? 8 : vsize(in));
			return;
		case 6:				/* PUSH Ev */
			rm_op(in, R, stack_size(in));
			stack_push(in, stack_size(in));
			return;
		case 3: case 5:			/* far CALL, JMP */
			rm_undecoded(in);
			return;
		}
		in->bad = true;
		return;
	}
}

/* A one-byte opcode (or 0F ...): its length and accesses into in->d. */
static void onebyte(struct insn *in, u8 op)
{
	u8 alu = op >> 3;

	if (op < 0x40 && (op & 7) < 6) {	/* ADD ... CMP */
		switch (op & 7) {
		case 0:
			modrm(in);
			rm_op(in, alu == 7 ? R : RMW, 1);
			return;
		case 1:
			modrm(in);
			rm_op(in, alu == 7 ? R : RMW, vsize(in));
			return;
		case 2:
			modrm(in);
			rm_op(in, R, 1);
			return;
		case 3:
			modrm(in);
			rm_op(in, R, vsize(in));
			return;
		case 4:
			skip(in, 1);
			return;
		case 5:
			skip(in, zsize(in));
			return;
		}
	}
	if (op >= 0x40 && op <= 0x4f)		/* INC/DEC r (32-bit code) */
		return;
	if (op >= 0x50 && op <= 0x57) {
		stack_push(in, stack_size(in));
		return;
	}
	if (op >= 0x58 && op <= 0x5f) {
		stack_pop(in, stack_size(in));
		return;
	}
	if (op >= 0x70 && op <= 0x7f) {		/* Jcc rel8 */
		skip(in, 1);
		return;
	}
	if (op >= 0x91 && op <= 0x99)		/* XCHG rAX, r; CBW ...; CWD ... */
		return;
	if (op >= 0xb0 && op <= 0xb7) {		/* MOV r8, Ib */
		skip(in, 1);
		return;
	}
	if (op >= 0xb8 && op <= 0xbf) {		/* MOV r, Iv (imm64 with REX.W) */
		skip(in, vsize(in));
		return;
	}
	switch (op) {
	case 0x63:				/* MOVSXD Gv, Ed (64-bit mode only) */
		if (!in->long64) {
			in->bad = true;
			return;
		}
		modrm(in);
		rm_op(in, R, in->opsz16 ? 2 : 4);
		return;
	case 0x68:				/* PUSH Iz */
		skip(in, zsize(in));
		stack_push(in, stack_size(in));
		return;
	case 0x6a:
		skip(in, 1);
		stack_push(in, stack_size(in));
		return;
	case 0x69:				/* IMUL Gv, Ev, Iz */
		modrm(in);
		rm_op(in, R, vsize(in));
		skip(in, zsize(in));
		return;
	case 0x6b:
		modrm(in);
		rm_op(in, R, vsize(in));
		skip(in, 1);
		return;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:
	case 0xa4: case 0xa5: case 0xa6: case 0xa7: case 0xaa: case 0xab:
	case 0xac: case 0xad: case 0xae: case 0xaf:
		string_op(in, op);
		return;
	case 0x80: case 0x81: case 0x83: case 0xc0: case 0xc1:
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xf6: case 0xf7: case 0xfe: case 0xff:
		groups(in, op);
		return;
	case 0x84: case 0x85:			/* TEST E, G */
		modrm(in);
		rm_op(in, R, op == 0x84 ? 1 : vsize(in));
		return;
	case 0x86: case 0x87:			/* XCHG E, G */
		modrm(in);
		rm_op(in, RMW, op == 0x86 ? 1 : vsize(in));
		return;
	case 0x88: case 0x89:			/* MOV E, G */
		modrm(in);
		rm_op(in, W, op == 0x88 ? 1 : vsize(in));
		return;
	case 0x8a: case 0x8b:			/* MOV G, E */
		modrm(in);
		rm_op(in, R, op == 0x8a ? 1 : vsize(in));
		return;
	case 0x8c:				/* MOV Ew, Sreg */
		modrm(in);
		rm_op(in, W, 2);
		return;
	case 0x8d:				/* LEA */
		modrm(in);
		return;
	case 0x8e:				/* MOV Sreg, Ew */
		modrm(in);
		rm_op(in, R, 2);
		return;
	case 0x8f:				/* POP Ev */
		modrm(in);
		if ((in->reg & 7) != 0) {
			in->bad = true;		/* XOP */
			return;
		}
		stack_pop(in, stack_size(in));
		rm_op(in, W, stack_size(in));
		in->d->pop_rsp = in->mod != 3 && in->d->base == 4;
		return;
	case 0x90: case 0x9b: case 0x9e: case 0x9f: case 0xcc: case 0xf1:
	case 0xf4: case 0xf5: case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
	case 0xec: case 0xed: case 0xee: case 0xef:
		return;
	case 0x9c:				/* PUSHF */
		stack_push(in, stack_size(in));
		return;
	case 0x9d:				/* POPF */
		stack_pop(in, stack_size(in));
		return;
	case 0xa0: case 0xa1: case 0xa2: case 0xa3: {	/* MOV AL/rAX <-> moffs */
		struct svmtrace_memdecode *d = in->d;

		d->base = SVMTRACE_REG_NONE;
		d->index = SVMTRACE_REG_NONE;
		d->scale = 1;
		d->disp = take_le(in, d->addr32 ? 4 : 8);
		if (d->addr32)
			d->disp = (u32)d->disp;
		in->mod = 0;
		rm_op(in, op < 0xa2 ? R : W, op & 1 ? vsize(in) : 1);
		return;
	}
	case 0xa8:				/* TEST AL, Ib */
		skip(in, 1);
		return;
	case 0xa9:				/* TEST rAX, Iz */
		skip(in, zsize(in));
		return;
	case 0xc2:				/* RET Iw */
		skip(in, 2);
		stack_pop(in, in->long64 && !in->opsz16 ? 8 : stack_size(in));
		return;
	case 0xc3:
		stack_pop(in, in->long64 && !in->opsz16 ? 8 : stack_size(in));
		return;
	case 0xc6: case 0xc7:			/* MOV E, I (C6/C7 F8: XABORT, XBEGIN) */
		modrm(in);
		if ((in->reg & 7) != 0) {
			skip(in, op == 0xc6 ? 1 : zsize(in));
			return;
		}
		rm_op(in, W, op == 0xc6 ? 1 : vsize(in));
		skip(in, op == 0xc6 ? 1 : zsize(in));
		return;
	case 0xc9:				/* LEAVE */
		add(in, R, SVMTRACE_FORM_LEAVE, stack_size(in));
		return;
	case 0xcd:				/* INT n */
		skip(in, 1);
		return;
	case 0xd7:				/* XLAT */
		add(in, R, SVMTRACE_FORM_XLAT, 1);
		return;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3: case 0xeb: case 0xe4: case 0xe5:
	case 0xe6: case 0xe7:
		skip(in, 1);
		return;
	case 0xe8:				/* CALL rel32 */
		skip(in, 4);
		stack_push(in, in->long64 && !in->opsz16 ? 8 : stack_size(in));
		return;
	case 0xe9:
		skip(in, 4);
		return;
	}
	if (op >= 0xd8 && op <= 0xdf) {		/* x87: memory forms not decoded */
		modrm(in);
		rm_undecoded(in);
		return;
	}
	in->bad = true;	/* ENTER, far transfers, IRET, BOUND ...: not decoded */
}

/* VEX (C4/C5): map 1 only, with the legacy table's forms. */
static void vex(struct insn *in, u8 op)
{
	u8 b1 = take(in), b2, map = 1;

	if (op == 0xc4) {
		b2 = take(in);
		in->rex = ((~b1 >> 5) & 7) | (b2 & 0x80 ? 8 : 0);
		map = b1 & 0x1f;
		in->vex_l = b2 & 4;
		in->vex_pp = b2 & 3;
	} else {
		in->rex = (~b1 >> 5) & 4;
		in->vex_l = b1 & 4;
		in->vex_pp = b1 & 3;
	}
	in->vex = true;
	op = take(in);
	if (map != 1) {
		/* 0F 38 and 0F 3A maps: ModRM always, an Ib in 0F 3A */
		modrm(in);
		if (map == 3)
			skip(in, 1);
		else if (map != 2)
			in->bad = true;
		rm_undecoded(in);
		return;
	}
	twobyte(in, op);
}

void svmtrace_memdecode(const u8 *code, unsigned int n, bool long64, struct svmtrace_memdecode *d)
{
	struct insn in = { .code = code, .n = n, .long64 = long64, .d = d };
	u8 b;

	memset(d, 0, sizeof(*d));
	d->seg = SVMTRACE_SEG_DEFAULT;
	d->bt_reg = SVMTRACE_REG_NONE;
	d->addr32 = !long64;
	for (;;) {
		b = take(&in);
		if (in.bad)
			goto bad;
		switch (b) {
		case 0x26: case 0x2e: case 0x36: case 0x3e:
			d->seg = (b >> 3) & 3;	/* ES CS SS DS */
			in.rex = 0;
			continue;
		case 0x64: case 0x65:
			d->seg = b == 0x64 ? SEG_FS : SEG_GS;
			in.rex = 0;
			continue;
		case 0x66:
			in.opsz16 = true;
			in.rex = 0;
			continue;
		case 0x67:
			if (!long64)
				goto bad;	/* 16-bit addressing */
			d->addr32 = true;
			in.rex = 0;
			continue;
		case 0xf0:
			in.rex = 0;
			continue;
		case 0xf2: case 0xf3:
			in.rep = true;
			in.last_rep = b;
			in.rex = 0;
			continue;
		}
		if (long64 && (b & 0xf0) == 0x40) {
			in.rex = b;
			continue;
		}
		break;
	}
	if (in.rex & 8)
		in.opsz16 = false;	/* REX.W wins over 66 */
	if (b == 0x0f) {
		b = take(&in);
		if (b == 0x38 || b == 0x3a) {
			/* three-byte maps: SSSE3, SSE4 ... (MOVBE and CRC32 too) */
			take(&in);
			modrm(&in);
			if (b == 0x3a)
				skip(&in, 1);
			rm_undecoded(&in);
		} else {
			twobyte(&in, b);
		}
	} else if ((b == 0xc4 || b == 0xc5) && long64) {
		vex(&in, b);
	} else if (b == 0x62 && long64) {
		goto bad;			/* EVEX */
	} else {
		onebyte(&in, b);
	}
	if (in.bad)
		goto bad;
	/* A REP on anything but a string instruction means nothing here. */
	d->len = in.i;
	d->ok = true;
	return;
bad:
	memset(d, 0, sizeof(*d));
	d->nr = 1;
	d->ops[0].kind = SVMTRACE_MEM_UNRECORDED;
	d->ops[0].why = SVMTRACE_MEM_WHY_UNDECODED;
	d->ops[0].form = SVMTRACE_FORM_NONE;
}
