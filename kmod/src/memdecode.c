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
 * is unknown gives one UNRECORDED access without address (undecoded), a
 * known instruction whose memory form is not in the table (or whose bytes
 * a mask selects) gives one UNRECORDED access with its address and no
 * size, and an operand larger than a record holds (FNSAVE, IRETQ's frame)
 * one UNRECORDED access with its address and size (too large).  This file
 * has the prefixes, the address forms and the one-byte map; the escapes
 * (0F, 0F 38, 0F 3A, VEX maps 1-3, x87) are in memdecode_maps.c.
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
	bool opsz16;		/* 66, unless REX.W: a 16-bit operand */
	bool p66;		/* 66, as a mandatory prefix too (PEXTRQ: 66 REX.W) */
	bool rep;		/* F2 or F3 */
	u8 last_rep;		/* which of them came last */
	u8 rex;
	u8 vex_pp;		/* VEX: the implied 66/F3/F2 (1/2/3) */
	bool vex;
	bool vex_l;		/* VEX.L: 256-bit */
	bool addr16;		/* 16-bit addressing (67 in 32-bit code) */
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

/*
 * 16-bit ModRM addressing: BX+SI, BX+DI, BP+SI, BP+DI, SI, DI, BP (disp16
 * alone with mod 0), BX; an 8- or 16-bit displacement.
 */
static void modrm16(struct insn *in, u8 rm)
{
	static const u8 base[8] = { 3, 3, 5, 5, 6, 7, 5, 3 };
	static const u8 index[8] = { 6, 7, 6, 7, SVMTRACE_REG_NONE, SVMTRACE_REG_NONE,
				     SVMTRACE_REG_NONE, SVMTRACE_REG_NONE };
	struct svmtrace_memdecode *d = in->d;

	d->index = index[rm];
	if (rm == 6 && in->mod == 0)
		d->disp = take_le(in, 2);
	else
		d->base = base[rm];
	if (in->mod == 1)
		d->disp += take_le(in, 1);
	else if (in->mod == 2)
		d->disp += take_le(in, 2);
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
	if (in->addr16) {
		modrm16(in, m & 7);
		return;
	}
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

static void add_unrecorded(struct insn *in, u8 form, u32 size, u8 why)
{
	struct svmtrace_memdecode *d = in->d;

	if (d->nr == SVMTRACE_MEMOPS_MAX) {
		in->bad = true;
		return;
	}
	d->ops[d->nr].kind = SVMTRACE_MEM_UNRECORDED;
	d->ops[d->nr].why = why;
	d->ops[d->nr].form = form;
	d->ops[d->nr].size = size;
	d->nr++;
}

/* An access; one larger than a record holds is unrecorded (too large). */
static void add(struct insn *in, u8 kind, u8 form, u32 size)
{
	add_unrecorded(in, form, size, SVMTRACE_MEM_WHY_TOO_LARGE);
	if (in->bad || size > SVMTRACE_MEM_MAX_VALUE)
		return;
	in->d->ops[in->d->nr - 1].kind = kind;
	in->d->ops[in->d->nr - 1].why = 0;
}

/* The ModRM memory operand, if the instruction has one (mod != 3). */
static void rm_op(struct insn *in, u8 kind, u32 size)
{
	if (in->mod != 3)
		add(in, kind, SVMTRACE_FORM_MODRM, size);
}

/* A known instruction whose memory form the table does not have, or a masked one. */
static void rm_undecoded(struct insn *in)
{
	if (in->mod != 3)
		add_unrecorded(in, SVMTRACE_FORM_MODRM, 0, SVMTRACE_MEM_WHY_UNDECODED);
}

/* ... whose operand is larger than a record holds (FXSAVE's 512 bytes; 0: by XCR0). */
static void rm_too_large(struct insn *in, u32 size)
{
	if (in->mod != 3)
		add_unrecorded(in, SVMTRACE_FORM_MODRM, size, SVMTRACE_MEM_WHY_TOO_LARGE);
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

#include "memdecode_maps.c"

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
		case 3: case 5:			/* far CALL, JMP m16:16/32 (CALL: CS, rIP pushed) */
			if (in->mod == 3) {
				in->bad = true;
				return;
			}
			if (in->rex & 8) {	/* m16:64 on Intel, m16:32 on AMD */
				rm_undecoded(in);
				if (r == 3)
					add_unrecorded(in, SVMTRACE_FORM_PUSH, 0,
						       SVMTRACE_MEM_WHY_UNDECODED);
				return;
			}
			rm_op(in, R, 2 + vsize(in));
			if (r == 3)
				stack_push(in, 2 * vsize(in));
			return;
		}
		in->bad = true;
		return;
	}
}

/*
 * ENTER size, level: the old rBP pushed, level - 1 frame pointers copied
 * from below the old rBP (read, then pushed), the new frame pointer pushed
 * (level > 0): one read of the copied slots, one write of all pushed ones.
 */
static void enter(struct insn *in)
{
	u32 slot = stack_size(in), level;

	skip(in, 2);
	level = take(in) & 31;
	if (level > 1)
		add(in, R, SVMTRACE_FORM_ENTER, (level - 1) * slot);
	stack_push(in, (level ? level + 1 : 1) * slot);
}

/* The one-byte opcodes that only 32-bit code has. */
static void legacy32(struct insn *in, u8 op)
{
	switch (op) {
	case 0x06: case 0x0e: case 0x16: case 0x1e:	/* PUSH ES, CS, SS, DS */
		stack_push(in, stack_size(in));
		return;
	case 0x07: case 0x17: case 0x1f:		/* POP ES, SS, DS */
		stack_pop(in, stack_size(in));
		return;
	case 0x27: case 0x2f: case 0x37: case 0x3f: case 0xce:	/* DAA ... AAS, INTO */
		return;
	case 0x60:					/* PUSHA: 8 registers */
		stack_push(in, 8 * stack_size(in));
		return;
	case 0x61:					/* POPA */
		stack_pop(in, 8 * stack_size(in));
		return;
	case 0x62:					/* BOUND Gv, Ma (mod 3: EVEX) */
		modrm(in);
		if (in->mod == 3)
			in->bad = true;
		rm_op(in, R, 2 * vsize(in));
		return;
	case 0x9a:					/* far CALL ptr16:v */
		skip(in, zsize(in) + 2);
		stack_push(in, 2 * vsize(in));
		return;
	case 0xea:					/* far JMP ptr16:v */
		skip(in, zsize(in) + 2);
		return;
	case 0xc4: case 0xc5:				/* LES, LDS Gv, Mp */
		modrm(in);
		rm_op(in, R, 2 + vsize(in));
		return;
	case 0xd4: case 0xd5:				/* AAM, AAD Ib */
		skip(in, 1);
		return;
	}
	in->bad = true;
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
		d->disp = take_le(in, in->addr16 ? 2 : d->addr32 ? 4 : 8);
		if (in->addr16)
			d->disp = (u16)d->disp;
		else if (d->addr32)
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
	case 0xc8:				/* ENTER Iw, Ib */
		enter(in);
		return;
	case 0xca:				/* far RET Iw: rIP and CS (same privilege) */
		skip(in, 2);
		stack_pop(in, 2 * vsize(in));
		return;
	case 0xcb:
		stack_pop(in, 2 * vsize(in));
		return;
	case 0xcf:	/* IRET: rIP, CS, rFLAGS; in 64-bit mode rSP and SS too */
		stack_pop(in, (in->long64 ? 5 : 3) * vsize(in));
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
	if (op >= 0xd8 && op <= 0xdf) {
		x87_op(in, op);
		return;
	}
	if (!in->long64) {
		legacy32(in, op);
		return;
	}
	in->bad = true;	/* 06, 07, 27, 60-62, 9A, C4/C5 memory forms ...: not in 64-bit mode */
}

/* VEX (C4/C5): map 1 with the legacy 0F table's forms, maps 2 and 3 with 0F 38's and 0F 3A's. */
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
	if (!in->long64)
		in->rex = 0;	/* R, X, B and W mean nothing to 32-bit code */
	in->vex = true;
	op = take(in);
	if (map == 2 || map == 3)
		threebyte(in, map == 3, op);
	else if (map == 1)
		twobyte(in, op);
	else
		in->bad = true;
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
			in.p66 = true;
			in.rex = 0;
			continue;
		case 0x67:
			d->addr32 = long64;
			d->addr16 = in.addr16 = !long64;
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
		if (b == 0x38 || b == 0x3a)
			threebyte(&in, b == 0x3a, take(&in));
		else
			twobyte(&in, b);
	} else if ((b == 0xc4 || b == 0xc5) && (long64 || (in.i < n && code[in.i] >= 0xc0))) {
		/* in 32-bit code, C4/C5 with a register ModRM are VEX, else LES/LDS */
		vex(&in, b);
	} else if (b == 0x62 && (long64 || (in.i < n && code[in.i] >= 0xc0))) {
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
