// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: the escape maps of the memory operand decoder: 0F (legacy and
 * VEX map 1), 0F 38 and 0F 3A (legacy and VEX maps 2 and 3, as tables) and
 * the x87 escapes (a table).  Included by memdecode.c (as arch/x86/lib/inat.c
 * includes its tables), which has the decoding state, the address forms and
 * the helpers; not built on its own.
 *
 * Sizes are from the Intel SDM and AMD APM instruction pages: a table entry
 * names the mandatory prefixes (none, 66, F3, F2) that make the opcode an
 * instruction with a memory operand, whether it exists as a legacy and/or
 * VEX encoding, the access and how its size follows from the prefixes.
 * An opcode not in a table, or met with a prefix or encoding the entry does
 * not allow, is an unrecorded access (a form not decoded), never a guess.
 */

/* The mandatory prefix of a 0F instruction: 0 none, 1 66, 2 F3, 3 F2. */
static u8 mandatory(const struct insn *in)
{
	if (in->vex)
		return in->vex_pp;
	if (in->last_rep == 0xf3)
		return 2;
	if (in->last_rep == 0xf2)
		return 3;
	return in->p66 ? 1 : 0;
}

/* The legacy-prefix-selected SSE operand size of 0F 10-17, 28-2F, 51-5F, C2. */
static u32 sse_size(const struct insn *in, u32 ps, u32 pd, u32 ss, u32 sd)
{
	u32 size;

	switch (mandatory(in)) {
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

/* An MMX (no prefix: 8 bytes) or SSE/AVX (66: 16, VEX.L: 32) packed operand. */
static u32 mmx_sse(const struct insn *in)
{
	if (mandatory(in) == 0)
		return in->vex ? (in->vex_l ? 32 : 16) : 8;
	return in->vex_l ? 32 : 16;
}

/* 0F 01: descriptor tables, MSW; the mod 3 forms (SWAPGS, RDTSCP ...). */
static void group7(struct insn *in)
{
	u32 table = in->long64 ? 10 : 6;	/* limit and base */

	if (in->mod == 3) {
		if (in->code[in->i - 1] == 0xfc)	/* CLZERO: a cache line at rAX */
			add_unrecorded(in, SVMTRACE_FORM_NONE, 64, SVMTRACE_MEM_WHY_TOO_LARGE);
		return;
	}
	switch (in->reg & 7) {
	case 0: case 1:				/* SGDT, SIDT */
		rm_op(in, W, table);
		return;
	case 2: case 3:				/* LGDT, LIDT (CPL 0) */
		rm_op(in, R, table);
		return;
	case 4:					/* SMSW m16 */
		rm_op(in, W, 2);
		return;
	case 6:					/* LMSW */
		rm_op(in, R, 2);
		return;
	case 7:					/* INVLPG: no data access */
		return;
	}
	rm_undecoded(in);			/* RSTORSSP ... */
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
	case 0x00:				/* group 6 */
		if ((in->reg & 7) > 5)
			in->bad = true;
		else				/* SLDT, STR m16; LLDT, LTR, VERR, VERW m16 */
			rm_op(in, (in->reg & 7) < 2 ? W : R, 2);
		return;
	case 0x01:				/* group 7 */
		group7(in);
		return;
	case 0x02: case 0x03:			/* LAR, LSL Gv, Ew */
		rm_op(in, R, 2);
		return;
	case 0x0f:				/* 3DNow!: the opcode is the last byte */
		rm_op(in, R, 8);
		skip(in, 1);
		return;
	case 0xb2: case 0xb4: case 0xb5:	/* LSS, LFS, LGS Gv, Mp */
		if (in->rex & 8)
			rm_undecoded(in);	/* m16:64 on Intel, m16:32 on AMD */
		else
			rm_op(in, R, 2 + vsize(in));
		return;
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
		if (pfx == 0)			/* XSAVE, XRSTOR, XSAVEOPT: 576 bytes at least */
			rm_too_large(in, 0);
		else
			rm_undecoded(in);
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
		if ((in->reg & 7) == 1)		/* CMPXCHG8B/16B */
			rm_op(in, RMW, in->rex & 8 ? 16 : 8);
		else if ((in->reg & 7) >= 3 && (in->reg & 7) <= 5)
			rm_too_large(in, 0);	/* XRSTORS, XSAVEC, XSAVES */
		else
			rm_undecoded(in);	/* VMPTRLD ...; RDRAND, RDSEED, RDPID */
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
	case 0xd7: case 0x50:			/* PMOVMSKB, MOVMSKPS (register only) */
		rm_undecoded(in);
		return;
	case 0xf7:				/* MASKMOVQ, MASKMOVDQU: DS:rDI, masked */
		if (in->mod == 3)
			add_unrecorded(in, SVMTRACE_FORM_RDI, mmx_sse(in),
				       SVMTRACE_MEM_WHY_UNDECODED);
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

/* How the size of a map entry's operand follows from the encoding. */
enum msize {
	MS_NONE,	/* not in the table */
	MS_FIX,		/* .size bytes */
	MS_VEC,		/* legacy: MMX 8 without prefix, XMM 16 with 66; VEX: 16, L: 32 */
	MS_L,		/* .size, doubled by VEX.L (PMOVZX's partial reads, XMM/YMM) */
	MS_W,		/* 4, REX.W or VEX.W: 8 (PINSRD/Q, PEXTRD/Q, FMA scalars) */
	MS_GPR,		/* the general-purpose operand size (BMI; ADCX: 66 is mandatory) */
	MS_MASKED,	/* a masked load or store: which bytes move is the mask's say */
	MS_VSIB,	/* a gather: one address per element */
};

#define P_NP 1		/* no mandatory prefix */
#define P_66 2
#define P_F3 4
#define P_F2 8
#define E_LEG 1		/* exists in the legacy encoding (0F 38 / 0F 3A) */
#define E_VEX 2		/* ... in VEX (map 2 / map 3) */

struct map_op {
	u8 kind;	/* R, W */
	u8 ms;		/* enum msize */
	u8 size;	/* MS_FIX, MS_L */
	u8 pfx;		/* P_*: the mandatory prefixes it is defined with */
	u8 enc;		/* E_* */
};

#define VEC(p, e) { R, MS_VEC, 0, p, e }
#define XMM(p, e) { R, MS_L, 16, p, e }			/* 16 bytes, VEX.L 32 */
#define FIX(k, n, p, e) { k, MS_FIX, n, p, e }
#define PART(n) { R, MS_L, n, P_66, E_LEG | E_VEX }	/* PMOVSX/ZX: 128 bits' part */

/* 0F 38 xx and VEX map 2 (ModRM, no immediate). */
static const struct map_op map38[256] = {
	/* SSSE3: PSHUFB, PHADD/SUB, PMADDUBSW, PSIGN, PMULHRSW, PABS */
	[0x00 ... 0x0b] = VEC(P_NP | P_66, E_LEG | E_VEX),
	[0x1c ... 0x1e] = VEC(P_NP | P_66, E_LEG | E_VEX),
	[0x0c ... 0x0f] = XMM(P_66, E_VEX),		/* VPERMILPS/PD, VTESTPS/PD */
	[0x10] = XMM(P_66, E_LEG),			/* PBLENDVB */
	[0x13] = { R, MS_L, 8, P_66, E_VEX },		/* VCVTPH2PS */
	[0x14 ... 0x15] = XMM(P_66, E_LEG),		/* BLENDVPS/PD */
	[0x16] = FIX(R, 32, P_66, E_VEX),		/* VPERMPS (VEX.L only) */
	[0x17] = XMM(P_66, E_LEG | E_VEX),		/* PTEST */
	[0x18] = FIX(R, 4, P_66, E_VEX),		/* VBROADCASTSS */
	[0x19] = FIX(R, 8, P_66, E_VEX),		/* VBROADCASTSD */
	[0x1a] = FIX(R, 16, P_66, E_VEX),		/* VBROADCASTF128 */
	[0x20] = PART(8), [0x21] = PART(4), [0x22] = PART(2),	/* PMOVSXBW, BD, BQ */
	[0x23] = PART(8), [0x24] = PART(4), [0x25] = PART(8),	/* PMOVSXWD, WQ, DQ */
	[0x30] = PART(8), [0x31] = PART(4), [0x32] = PART(2),	/* PMOVZX ... */
	[0x33] = PART(8), [0x34] = PART(4), [0x35] = PART(8),
	[0x28 ... 0x2b] = XMM(P_66, E_LEG | E_VEX),	/* PMULDQ, PCMPEQQ, MOVNTDQA, PACKUSDW */
	[0x2c ... 0x2f] = { SVMTRACE_MEM_UNRECORDED, MS_MASKED, 0, P_66, E_VEX },	/* VMASKMOVPS/PD */
	[0x36] = FIX(R, 32, P_66, E_VEX),		/* VPERMD */
	[0x37 ... 0x40] = XMM(P_66, E_LEG | E_VEX),	/* PCMPGTQ, PMIN/MAX, PMULLD */
	[0x41] = FIX(R, 16, P_66, E_LEG | E_VEX),	/* PHMINPOSUW */
	[0x45 ... 0x47] = XMM(P_66, E_VEX),		/* VPSRLV, VPSRAV, VPSLLV */
	[0x58] = FIX(R, 4, P_66, E_VEX),		/* VPBROADCASTD */
	[0x59] = FIX(R, 8, P_66, E_VEX),		/* VPBROADCASTQ */
	[0x5a] = FIX(R, 16, P_66, E_VEX),		/* VBROADCASTI128 */
	[0x78] = FIX(R, 1, P_66, E_VEX),		/* VPBROADCASTB */
	[0x79] = FIX(R, 2, P_66, E_VEX),		/* VPBROADCASTW */
	[0x8c] = { SVMTRACE_MEM_UNRECORDED, MS_MASKED, 0, P_66, E_VEX },	/* VPMASKMOVD/Q load */
	[0x8e] = { SVMTRACE_MEM_UNRECORDED, MS_MASKED, 0, P_66, E_VEX },	/* ... store */
	[0x90 ... 0x93] = { SVMTRACE_MEM_UNRECORDED, MS_VSIB, 0, P_66, E_VEX },	/* gathers */
	/* FMA: packed, then the scalars (W0 single, W1 double) */
	[0x96 ... 0x98] = XMM(P_66, E_VEX), [0x9a] = XMM(P_66, E_VEX),
	[0x9c] = XMM(P_66, E_VEX), [0x9e] = XMM(P_66, E_VEX),
	[0xa6 ... 0xa8] = XMM(P_66, E_VEX), [0xaa] = XMM(P_66, E_VEX),
	[0xac] = XMM(P_66, E_VEX), [0xae] = XMM(P_66, E_VEX),
	[0xb6 ... 0xb8] = XMM(P_66, E_VEX), [0xba] = XMM(P_66, E_VEX),
	[0xbc] = XMM(P_66, E_VEX), [0xbe] = XMM(P_66, E_VEX),
	[0x99] = { R, MS_W, 0, P_66, E_VEX }, [0x9b] = { R, MS_W, 0, P_66, E_VEX },
	[0x9d] = { R, MS_W, 0, P_66, E_VEX }, [0x9f] = { R, MS_W, 0, P_66, E_VEX },
	[0xa9] = { R, MS_W, 0, P_66, E_VEX }, [0xab] = { R, MS_W, 0, P_66, E_VEX },
	[0xad] = { R, MS_W, 0, P_66, E_VEX }, [0xaf] = { R, MS_W, 0, P_66, E_VEX },
	[0xb9] = { R, MS_W, 0, P_66, E_VEX }, [0xbb] = { R, MS_W, 0, P_66, E_VEX },
	[0xbd] = { R, MS_W, 0, P_66, E_VEX }, [0xbf] = { R, MS_W, 0, P_66, E_VEX },
	[0xc8 ... 0xcd] = FIX(R, 16, P_NP, E_LEG),	/* SHA1*, SHA256* */
	[0xcf] = XMM(P_66, E_LEG | E_VEX),		/* GF2P8MULB */
	[0xdb] = FIX(R, 16, P_66, E_LEG | E_VEX),	/* AESIMC */
	[0xdc ... 0xdf] = XMM(P_66, E_LEG | E_VEX),	/* AESENC(LAST), AESDEC(LAST) */
	[0xf2] = { R, MS_GPR, 0, P_NP, E_VEX },		/* ANDN */
	[0xf5] = { R, MS_GPR, 0, P_NP | P_F3 | P_F2, E_VEX },	/* BZHI, PEXT, PDEP */
	[0xf6] = { R, MS_GPR, 0, P_66 | P_F3, E_LEG },	/* ADCX, ADOX */
	[0xf7] = { R, MS_GPR, 0, P_NP | P_66 | P_F3 | P_F2, E_VEX },	/* BEXTR, SHLX ... */
	[0xf9] = { W, MS_GPR, 0, P_NP, E_LEG },		/* MOVDIRI */
};

/* 0F 3A xx and VEX map 3 (ModRM and an immediate byte). */
static const struct map_op map3a[256] = {
	[0x00 ... 0x01] = FIX(R, 32, P_66, E_VEX),	/* VPERMQ, VPERMPD */
	[0x02] = XMM(P_66, E_VEX),			/* VPBLENDD */
	[0x04 ... 0x05] = XMM(P_66, E_VEX),		/* VPERMILPS/PD imm */
	[0x06] = FIX(R, 32, P_66, E_VEX),		/* VPERM2F128 */
	[0x08 ... 0x09] = XMM(P_66, E_LEG | E_VEX),	/* ROUNDPS/PD */
	[0x0a] = FIX(R, 4, P_66, E_LEG | E_VEX),	/* ROUNDSS */
	[0x0b] = FIX(R, 8, P_66, E_LEG | E_VEX),	/* ROUNDSD */
	[0x0c ... 0x0e] = XMM(P_66, E_LEG | E_VEX),	/* BLENDPS/PD, PBLENDW */
	[0x0f] = VEC(P_NP | P_66, E_LEG | E_VEX),	/* PALIGNR */
	[0x14] = FIX(W, 1, P_66, E_LEG | E_VEX),	/* PEXTRB m8 */
	[0x15] = FIX(W, 2, P_66, E_LEG | E_VEX),	/* PEXTRW m16 */
	[0x16] = { W, MS_W, 0, P_66, E_LEG | E_VEX },	/* PEXTRD/Q */
	[0x17] = FIX(W, 4, P_66, E_LEG | E_VEX),	/* EXTRACTPS */
	[0x18] = FIX(R, 16, P_66, E_VEX),		/* VINSERTF128 */
	[0x19] = FIX(W, 16, P_66, E_VEX),		/* VEXTRACTF128 */
	[0x1d] = { W, MS_L, 8, P_66, E_VEX },		/* VCVTPS2PH */
	[0x20] = FIX(R, 1, P_66, E_LEG | E_VEX),	/* PINSRB */
	[0x21] = FIX(R, 4, P_66, E_LEG | E_VEX),	/* INSERTPS */
	[0x22] = { R, MS_W, 0, P_66, E_LEG | E_VEX },	/* PINSRD/Q */
	[0x38] = FIX(R, 16, P_66, E_VEX),		/* VINSERTI128 */
	[0x39] = FIX(W, 16, P_66, E_VEX),		/* VEXTRACTI128 */
	[0x40 ... 0x42] = XMM(P_66, E_LEG | E_VEX),	/* DPPS, DPPD, MPSADBW */
	[0x44] = XMM(P_66, E_LEG | E_VEX),		/* PCLMULQDQ */
	[0x46] = FIX(R, 32, P_66, E_VEX),		/* VPERM2I128 */
	[0x4a ... 0x4c] = XMM(P_66, E_VEX),		/* VBLENDVPS/PD, VPBLENDVB */
	[0x60 ... 0x63] = FIX(R, 16, P_66, E_LEG | E_VEX),	/* PCMPESTRM ... PCMPISTRI */
	[0xcc] = FIX(R, 16, P_NP, E_LEG),		/* SHA1RNDS4 */
	[0xce ... 0xcf] = XMM(P_66, E_LEG | E_VEX),	/* GF2P8AFFINE(INV)QB */
	[0xdf] = FIX(R, 16, P_66, E_LEG | E_VEX),	/* AESKEYGENASSIST */
	[0xf0] = { R, MS_GPR, 0, P_F2, E_VEX },		/* RORX */
};

/* The operand of a map entry: its size from the encoding, or unrecorded. */
static void map_operand(struct insn *in, const struct map_op *e)
{
	u8 pfx = mandatory(in);

	if (e->ms == MS_NONE || !(e->pfx & (1 << pfx)) || !(e->enc & (in->vex ? E_VEX : E_LEG))) {
		rm_undecoded(in);
		return;
	}
	switch (e->ms) {
	case MS_FIX:
		rm_op(in, e->kind, e->size);
		return;
	case MS_VEC:
		rm_op(in, e->kind, mmx_sse(in));
		return;
	case MS_L:
		rm_op(in, e->kind, in->vex_l ? 2 * e->size : e->size);
		return;
	case MS_W:
		rm_op(in, e->kind, in->rex & 8 ? 8 : 4);
		return;
	case MS_GPR:	/* a mandatory 66 is no operand-size prefix */
		rm_op(in, e->kind, pfx == 1 || in->vex ? (in->rex & 8 ? 8 : 4) : vsize(in));
		return;
	case MS_MASKED:
		rm_undecoded(in);
		return;
	case MS_VSIB:	/* the SIB's index is a vector register: no one address */
		if (in->mod != 3)
			add_unrecorded(in, SVMTRACE_FORM_NONE, 0, SVMTRACE_MEM_WHY_UNDECODED);
		return;
	}
}

/* 0F 38 F0-F7 without VEX: MOVBE and CRC32 share opcodes by prefix. */
static bool map38_legacy_special(struct insn *in, u8 op)
{
	if (in->vex || (op != 0xf0 && op != 0xf1))
		return false;
	if (in->last_rep == 0xf2)		/* CRC32 Gd, Eb / Ev (66: Ew) */
		rm_op(in, R, op == 0xf0 ? 1 : vsize(in));
	else if (in->last_rep)
		rm_undecoded(in);
	else				/* MOVBE Gv, Mv / Mv, Gv */
		rm_op(in, op == 0xf0 ? R : W, vsize(in));
	return true;
}

/* VEX map 2 F3: BLSR, BLSMSK, BLSI (group 17, no prefix); F6: MULX (F2). */
static bool map38_vex_special(struct insn *in, u8 op)
{
	bool known;

	if (!in->vex || (op != 0xf3 && op != 0xf6))
		return false;
	if (op == 0xf3)
		known = mandatory(in) == 0 && (in->reg & 7) >= 1 && (in->reg & 7) <= 3;
	else
		known = mandatory(in) == 3;
	if (known)
		rm_op(in, R, in->rex & 8 ? 8 : 4);
	else
		rm_undecoded(in);
	return true;
}

/* 0F 38 xx or 0F 3A xx (legacy or VEX): ModRM, the map 3 immediate. */
static void threebyte(struct insn *in, bool map3a_, u8 op)
{
	modrm(in);
	if (map3a_) {
		skip(in, 1);
		map_operand(in, &map3a[op]);
		return;
	}
	if (map38_legacy_special(in, op) || map38_vex_special(in, op))
		return;
	map_operand(in, &map38[op]);
}

/*
 * The x87 escapes D8-DF with a memory operand, by escape and ModRM reg:
 * the access and its size (0: no such form).  ENV is FLDENV/FNSTENV's 28
 * bytes (14 with a 66 prefix), SAVE FRSTOR/FNSAVE's 108 (94).
 */
#define F_ENV 0xfe
#define F_SAVE 0xff
static const struct { u8 kind, size; } x87[8][8] = {
	/* D8: FADD ... FDIVR m32fp */
	{ { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 } },
	/* D9: FLD, -, FST, FSTP m32fp, FLDENV, FLDCW, FNSTENV, FNSTCW */
	{ { R, 4 }, { 0, 0 }, { W, 4 }, { W, 4 }, { R, F_ENV }, { R, 2 }, { W, F_ENV }, { W, 2 } },
	/* DA: FIADD ... FIDIVR m32int */
	{ { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 }, { R, 4 } },
	/* DB: FILD, FISTTP, FIST, FISTP m32int, -, FLD m80, -, FSTP m80 */
	{ { R, 4 }, { W, 4 }, { W, 4 }, { W, 4 }, { 0, 0 }, { R, 10 }, { 0, 0 }, { W, 10 } },
	/* DC: FADD ... FDIVR m64fp */
	{ { R, 8 }, { R, 8 }, { R, 8 }, { R, 8 }, { R, 8 }, { R, 8 }, { R, 8 }, { R, 8 } },
	/* DD: FLD, FISTTP m64int, FST, FSTP m64fp, FRSTOR, -, FNSAVE, FNSTSW */
	{ { R, 8 }, { W, 8 }, { W, 8 }, { W, 8 }, { R, F_SAVE }, { 0, 0 }, { W, F_SAVE }, { W, 2 } },
	/* DE: FIADD ... FIDIVR m16int */
	{ { R, 2 }, { R, 2 }, { R, 2 }, { R, 2 }, { R, 2 }, { R, 2 }, { R, 2 }, { R, 2 } },
	/* DF: FILD, FISTTP, FIST, FISTP m16int, FBLD m80, FILD m64, FBSTP m80, FISTP m64 */
	{ { R, 2 }, { W, 2 }, { W, 2 }, { W, 2 }, { R, 10 }, { R, 8 }, { W, 10 }, { W, 8 } },
};

static void x87_op(struct insn *in, u8 op)
{
	u8 kind, size;

	modrm(in);
	if (in->mod == 3)
		return;				/* register stack forms */
	kind = x87[op - 0xd8][in->reg & 7].kind;
	size = x87[op - 0xd8][in->reg & 7].size;
	if (!size)
		in->bad = true;			/* #UD */
	else if (size == F_ENV)
		rm_op(in, kind, in->opsz16 ? 14 : 28);
	else if (size == F_SAVE)
		rm_op(in, kind, in->opsz16 ? 94 : 108);
	else
		rm_op(in, kind, size);
}
