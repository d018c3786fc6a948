// SPDX-License-Identifier: GPL-2.0
/*
 * Independent oracles for v5: byte vectors written by hand from
 * docs/format.md alone -- every byte below is spelled out with the rule that
 * produced it, no library code computed any of them -- together with the
 * records the page says they mean.  The reader must decode each vector to
 * exactly those records, and the writer, given those records as slots, must
 * produce exactly those bytes (where our writer's choices, listed in
 * format.md, are the ones the vector makes).
 *
 * The writer and the reader share predict.c, so a symmetric mistake in the
 * prediction rule would pass every round trip; it cannot pass these.
 *
 * Covered: session start (with and without X), anchors with G and a dropped
 * count, deltas with every part predicted, RIP/GPR/RFLAGS/SEQ stored, a GPR
 * change of more than four registers (not learned), a prediction learned
 * before an anchor and used after it, RFLAGS predicted from the table and
 * not from the previous state, XSTATE deltas (with and without changed
 * registers), OPS (copies: explicit, with GPR, a swap from old values, a
 * predicted copy; add, xor, 64-bit rotate, 32-bit add, 32-bit rotate, sub,
 * and a predicted add), session ends with G, the table emptied at a frame start,
 * a non-shortest varint (read only: our writer never makes one), and an
 * operation learned with a GPR mask of more than four bits (read only).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/trace.h>

#include "support.h"

/* One record as format.md says it decodes; also the slot the writer gets. */
struct expect {
	uint16_t kind;
	uint64_t seq;
	uint64_t tsc; /* checked for full records and ends only */
	uint32_t reason;
	uint64_t rip, rflags, cr3;
	uint64_t gpr[16];
	uint64_t dropped;
	bool full;  /* decoded from a full record (anchor or session start) */
	int ymm;    /* index into the vector's YMM states, or -1 */
	bool flush; /* the writer cuts the frame after this record */
};

/* A YMM state: xstate_bv and one fill byte per register (32 bytes of it). */
struct ymm_state {
	uint64_t xstate_bv;
	uint8_t fill[16];
};

struct vector {
	const char *name;
	uint32_t cpu;
	const uint8_t *bytes;
	size_t size;
	const struct expect *records;
	size_t count;
	const struct ymm_state *ymm;
	bool writer_makes_it; /* the writer must produce these exact bytes */
};

#define INS   SVMTRACE_SLOT_INSTRUCTION
#define START SVMTRACE_SLOT_SESSION_START
#define END   SVMTRACE_SLOT_SESSION_END
#define Z16   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define Z8    0, 0, 0, 0, 0, 0, 0, 0

/*
 * ---- 1. a counted loop: dec rcx (3 bytes) at 0x401000, jnz 0x401000 at
 * 0x401003; then a 5-register instruction, a loss, the loop again, an end
 * after a loss.
 */
/* clang-format off */
static const uint8_t loop_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x01, 0, 0, 0, 0x01, 0, 0, 0, /* FTRC v5 cpu 1 framed */
	0x87, 0, 0, 0, 0x87, 0, 0, 0, /* frame: 135 decoded = 135 stored (raw) */
	/* session start, no X no G; seq 100; tsc 0x1000; gate 7; rip 0x401000 */
	0x02, 0x64, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x07,
	0x00, 0x10, 0x40, 0, 0, 0, 0, 0,
	0x82, 0x04, /* rflags 0x202 */
	0x80, 0x20, /* cr3 0x1000 */
	0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* rcx 3 */
	/* 101: entry for 0x401000 misses: RIP +3 (06), GPR mask rcx (04 00) -1 (01) */
	0x0c, 0x06, 0x04, 0x00, 0x01,
	/* 102: entry for 0x401003 misses: RIP -3 (05); no GPR changed: nothing else */
	0x04, 0x05,
	/* 103, 104: both entries hit: everything predicted */
	0x00, 0x00,
	/* 105: dec sets ZF|PF: RFLAGS 0x246 XOR predicted 0x202 = 0x44 */
	0x10, 0x44,
	/* 106: jnz falls through: RIP +2 (04); RFLAGS 0x246 XOR entry's 0x202 */
	0x14, 0x04, 0x44,
	/*
	 * 109: 0x401005 -> 0x401006 (RIP +1 = 02), rax rbx rdx rsi rdi +1 each
	 * (mask 0x3b, five svarints 02), SEQ step 3 (3 - 2 = 01)
	 */
	0x2c, 0x02, 0x3b, 0x00, 0x02, 0x02, 0x02, 0x02, 0x02, 0x01,
	/* 120: anchor, G; seq 120 (78); tsc 0x2000; reason 0; rip 0x401000 */
	0x09, 0x78, 0x00, 0x20, 0, 0, 0, 0, 0, 0, 0x00,
	0x00, 0x10, 0x40, 0, 0, 0, 0, 0,
	0x82, 0x04, 0x80, 0x20, /* rflags 0x202, cr3 0x1000 */
	0x01, 0x01, 0x05, 0x01, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* rax rbx 1, rcx 5, rdx rsi rdi 1 */
	0x0a, /* dropped 10 */
	/*
	 * 121: the entry for 0x401000 was learned before the anchor and still
	 * hits: RIP and rcx -1 predicted; RFLAGS predicted from the entry
	 * (0x246, learned at 105), not from the anchor (0x202): XOR 0x44
	 */
	0x10, 0x44,
	/* 125: session end, G, no S; seq, tsc 0x3000, reason 1 (cr3), rip 0x401003, dropped 3 */
	0x07, 0x7d, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x30, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0,
	0x03, 0x10, 0x40, 0, 0, 0, 0, 0, 0x03,
};
/* clang-format on */

#define G1 1, 1
static const struct expect loop_records[] = {
	{ START, 100, 0x1000, 7, 0x401000, 0x202, 0x1000, { 0, 0, 3 }, 0, true, -1, false },
	{ INS, 101, 0, 0, 0x401003, 0x202, 0x1000, { 0, 0, 2 }, 0, false, -1, false },
	{ INS, 102, 0, 0, 0x401000, 0x202, 0x1000, { 0, 0, 2 }, 0, false, -1, false },
	{ INS, 103, 0, 0, 0x401003, 0x202, 0x1000, { 0, 0, 1 }, 0, false, -1, false },
	{ INS, 104, 0, 0, 0x401000, 0x202, 0x1000, { 0, 0, 1 }, 0, false, -1, false },
	{ INS, 105, 0, 0, 0x401003, 0x246, 0x1000, { 0, 0, 0 }, 0, false, -1, false },
	{ INS, 106, 0, 0, 0x401005, 0x246, 0x1000, { 0, 0, 0 }, 0, false, -1, false },
	{ INS, 109, 0, 0, 0x401006, 0x246, 0x1000, { G1, 0, G1, 1 }, 0, false, -1, false },
	{ INS, 120, 0x2000, 0, 0x401000, 0x202, 0x1000, { G1, 5, G1, 1 }, 10, true, -1, false },
	{ INS, 121, 0, 0, 0x401003, 0x202, 0x1000, { G1, 4, G1, 1 }, 0, false, -1, false },
	{ END, 125, 0x3000, 1, 0x401003, 0x202, 0x1000, { G1, 4, G1, 1 }, 3, false, -1, false },
};

/* ---- 2. YMM state: a session start with X, XSTATE deltas ---- */
static const struct ymm_state ymm_states[] = {
	{ 0x7, { 0x11 } },	 /* ymm0 all 0x11 */
	{ 0x7, { 0x11, 0x22 } }, /* ymm1 becomes all 0x22 */
	{ 0x3, { 0x11, 0x22 } }, /* only xstate_bv changes */
};

/* clang-format off */
#define YMM(b) b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, \
	       b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b
static const uint8_t ymm_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x00, 0, 0, 0, 0x01, 0, 0, 0, /* cpu 0 */
	0x84, 0x02, 0, 0, 0x84, 0x02, 0, 0, /* frame: 644 raw */
	/* session start with X; seq 1; tsc 0; gate 0; rip 0x1000; rflags 2; cr3 0; GPRs 0 */
	0x06, 0x01, Z8, 0x00,
	0x00, 0x10, 0, 0, 0, 0, 0, 0,
	0x02, 0x00, Z16,
	0x07, 0, 0, 0, 0, 0, 0, 0, /* xstate_bv 7 */
	YMM(0x11), YMM(0), YMM(0), YMM(0), YMM(0), YMM(0), YMM(0), YMM(0), /* ymm0 0x11, the others 0 */
	YMM(0), YMM(0), YMM(0), YMM(0), YMM(0), YMM(0), YMM(0), YMM(0),
	/* seq 2: RIP +4 (08), XSTATE: bv 7, mask ymm1, its 32 new bytes */
	0x44, 0x08, 0x07, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00, YMM(0x22),
	/* seq 3: RIP +4, XSTATE: bv 3, mask 0 */
	0x44, 0x08, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00,
	/* seq 4: RIP +4, YMM unchanged */
	0x04, 0x08,
	/* seq 5: session end, reason 0, rip 0x100c, tsc 0x10 */
	0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x0c, 0x10, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

static const struct expect ymm_records[] = {
	{ START, 1, 0, 0, 0x1000, 0x2, 0, { 0 }, 0, true, 0, false },
	{ INS, 2, 0, 0, 0x1004, 0x2, 0, { 0 }, 0, false, 1, false },
	{ INS, 3, 0, 0, 0x1008, 0x2, 0, { 0 }, 0, false, 2, false },
	{ INS, 4, 0, 0, 0x100c, 0x2, 0, { 0 }, 0, false, 2, false },
	{ END, 5, 0x10, 0, 0x100c, 0x2, 0, { 0 }, 0, false, 2, false },
};

/* ---- 3. two frames: the prediction table starts empty in each ---- */
/* clang-format off */
static const uint8_t frames_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x02, 0, 0, 0, 0x01, 0, 0, 0, /* cpu 2 */
	0x2a, 0, 0, 0, 0x2a, 0, 0, 0, /* frame 1: 42 raw */
	0x02, 0x01, Z8, 0x00, 0x00, 0x20, 0, 0, 0, 0, 0, 0, 0x02, 0x00, Z16, /* start, rip 0x2000 */
	0x04, 0x04, /* seq 2: 0x2000 misses: RIP +2 */
	0x04, 0x03, /* seq 3: 0x2002 misses: RIP -2 */
	0x00,       /* seq 4: 0x2000 hits: 0x2002 */
	0x44, 0, 0, 0, 0x44, 0, 0, 0, /* frame 2: 68 raw */
	0x01, 0x05, Z8, 0x00, 0x00, 0x20, 0, 0, 0, 0, 0, 0, 0x02, 0x00, Z16, /* anchor, rip 0x2000 */
	0x04, 0x04, /* seq 6: the table was emptied: 0x2000 misses again, RIP +2 */
	0x03, 0x07, 0, 0, 0, 0, 0, 0, 0, Z8, 0, 0, 0, 0, /* end: seq 7, tsc 0, reason 0 */
	0x02, 0x20, 0, 0, 0, 0, 0, 0, /* rip 0x2002 */
};
/* clang-format on */

static const struct expect frames_records[] = {
	{ START, 1, 0, 0, 0x2000, 0x2, 0, { 0 }, 0, true, -1, false },
	{ INS, 2, 0, 0, 0x2002, 0x2, 0, { 0 }, 0, false, -1, false },
	{ INS, 3, 0, 0, 0x2000, 0x2, 0, { 0 }, 0, false, -1, false },
	{ INS, 4, 0, 0, 0x2002, 0x2, 0, { 0 }, 0, false, -1, true },
	{ INS, 5, 0, 0, 0x2000, 0x2, 0, { 0 }, 0, true, -1, false },
	{ INS, 6, 0, 0, 0x2002, 0x2, 0, { 0 }, 0, false, -1, false },
	{ END, 7, 0, 0, 0x2002, 0x2, 0, { 0 }, 0, false, -1, false },
};

/*
 * ---- 5. OPS copies: a register takes another's old value -- mov rcx, rax at
 * 0x5000; xchg rax, rbx at 0x5003; jmp 0x5000 at 0x5005; the loop again;
 * then an instruction that copies rbx into rdi and adds 8 to rsp.
 * A = 0x1122334455667788, B = 0x99aabbccddeeff00.
 */
#define VA 0x1122334455667788ull
#define VB 0x99aabbccddeeff00ull
/* clang-format off */
static const uint8_t copy_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x03, 0, 0, 0, 0x01, 0, 0, 0, /* cpu 3 */
	0x70, 0, 0, 0, 0x70, 0, 0, 0, /* frame: 112 raw */
	/* start: seq 1, tsc 0, gate 0, rip 0x5000, rflags 2, cr3 0 */
	0x02, 0x01, Z8, 0x00, 0x00, 0x50, 0, 0, 0, 0, 0, 0, 0x02, 0x00,
	0x88, 0xef, 0x99, 0xab, 0xc5, 0xe8, 0x8c, 0x91, 0x11,       /* rax A */
	0x80, 0xfe, 0xbb, 0xef, 0xcd, 0xf9, 0xae, 0xd5, 0x99, 0x01, /* rbx B */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 2: 0x5000 misses: RIP +3; OPS: 1 operation, rcx <- rax (20), copy (00); no GPR part */
	0x84, 0x06, 0x01, 0x20, 0x00,
	/* 3: 0x5003 misses: RIP +2; OPS: copies rax <- rbx, rbx <- rax, of old values */
	0x84, 0x04, 0x02, 0x01, 0x00, 0x10, 0x00,
	/* 4: 0x5005 misses: RIP -5 (09) */
	0x04, 0x09,
	/* 5: 0x5000 hits: its copy rcx <- rax is predicted (rcx = B now) */
	0x00,
	/* 6: 0x5003 hits for the RIP, but it learned no operation (two are not kept): OPS again */
	0x80, 0x02, 0x01, 0x00, 0x10, 0x00,
	/*
	 * 7: 0x5005's entry says 0x5000: RIP +1 (02); OPS copy rdi <- rbx (51 00);
	 * GPR mask rsp (0x0080) +8 (10) -- stored after OPS
	 */
	0x8c, 0x02, 0x01, 0x51, 0x00, 0x80, 0x00, 0x10,
	/* 8: session end, tsc 0x20, reason 0, rip 0x5006 */
	0x03, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x06, 0x50, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

static const struct expect copy_records[] = {
	{ START, 1, 0, 0, 0x5000, 0x2, 0, { VA, VB }, 0, true, -1, false },
	{ INS, 2, 0, 0, 0x5003, 0x2, 0, { VA, VB, VA }, 0, false, -1, false },
	{ INS, 3, 0, 0, 0x5005, 0x2, 0, { VB, VA, VA }, 0, false, -1, false },
	{ INS, 4, 0, 0, 0x5000, 0x2, 0, { VB, VA, VA }, 0, false, -1, false },
	{ INS, 5, 0, 0, 0x5003, 0x2, 0, { VB, VA, VB }, 0, false, -1, false },
	{ INS, 6, 0, 0, 0x5005, 0x2, 0, { VA, VB, VB }, 0, false, -1, false },
	{ INS, 7, 0, 0, 0x5006, 0x2, 0, { VA, VB, VB, 0, 0, VB, 0, 8 }, 0, false, -1, false },
	{ END, 8, 0x20, 0, 0x5006, 0x2, 0, { VA, VB, VB, 0, 0, VB, 0, 8 }, 0, false, -1, false },
};

/*
 * ---- 6. OPS arithmetic, each operand from the previous state: add rax, rbx
 * at 0x6000; xor rcx, rax; ror rcx, 8 (rotate left 56); add edx, ebx (32
 * bits); ror edx, 7 (32-bit rotate left 25); sub rbx, rcx; jmp 0x6000; the
 * add again, predicted.  A and B as above, C = 0x0123456789abcdef,
 * D = 0xdeadbeef.
 */
#define VC 0x0123456789abcdefull
#define VD 0xdeadbeefull
/* clang-format off */
static const uint8_t ops_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x04, 0, 0, 0, 0x01, 0, 0, 0, /* cpu 4 */
	0x80, 0, 0, 0, 0x80, 0, 0, 0, /* frame: 128 raw */
	/* start: seq 1, tsc 0, gate 0, rip 0x6000, rflags 2, cr3 0 */
	0x02, 0x01, Z8, 0x00, 0x00, 0x60, 0, 0, 0, 0, 0, 0, 0x02, 0x00,
	0x88, 0xef, 0x99, 0xab, 0xc5, 0xe8, 0x8c, 0x91, 0x11,       /* rax A */
	0x80, 0xfe, 0xbb, 0xef, 0xcd, 0xf9, 0xae, 0xd5, 0x99, 0x01, /* rbx B */
	0xef, 0x9b, 0xaf, 0xcd, 0xf8, 0xac, 0xd1, 0x91, 0x01,       /* rcx C */
	0xef, 0xfd, 0xb6, 0xf5, 0x0d,                               /* rdx D */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x84, 0x06, 0x01, 0x01, 0x01, /* 2: RIP +3; rax <- rax + rbx (01 01) */
	0x84, 0x06, 0x01, 0x20, 0x03, /* 3: RIP +3; rcx <- rcx ^ rax (20 03) */
	0x84, 0x08, 0x01, 0x22, 0x78, /* 4: RIP +4; rcx <- rcx rotated left 56 (22 40|38) */
	0x84, 0x04, 0x01, 0x31, 0x04, /* 5: RIP +2; rdx <- (u32)(rdx + rbx) (31 04) */
	0x84, 0x06, 0x01, 0x33, 0x99, /* 6: RIP +3; rdx <- 32-bit rotate left 25 (33 80|19) */
	0x84, 0x06, 0x01, 0x12, 0x02, /* 7: RIP +3; rbx <- rbx - rcx (12 02) */
	0x04, 0x23,                   /* 8: RIP -18 */
	0x00,                         /* 9: 0x6000 hits: RIP and rax <- rax + rbx predicted */
	/* 10: session end, tsc 0x30, reason 0, rip 0x6003 */
	0x03, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x03, 0x60, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

#define R1 0xaaccef1133557688ull /* A + B */
#define C2 0xabefaa76bafebb67ull /* C ^ R1 */
#define C3 0x67abefaa76bafebbull /* C2 rotated left 56 */
#define D4 0xbc9cbdefull	 /* (u32)(D + B) */
#define D5 0xdf79397bull	 /* D4 rotated left 25 in 32 bits */
#define B6 0x31fecc2267340045ull /* B - C3 */
#define R9 0xdccbbb339a8976cdull /* R1 + B6 */
static const struct expect ops_records[] = {
	{ START, 1, 0, 0, 0x6000, 0x2, 0, { VA, VB, VC, VD }, 0, true, -1, false },
	{ INS, 2, 0, 0, 0x6003, 0x2, 0, { R1, VB, VC, VD }, 0, false, -1, false },
	{ INS, 3, 0, 0, 0x6006, 0x2, 0, { R1, VB, C2, VD }, 0, false, -1, false },
	{ INS, 4, 0, 0, 0x600a, 0x2, 0, { R1, VB, C3, VD }, 0, false, -1, false },
	{ INS, 5, 0, 0, 0x600c, 0x2, 0, { R1, VB, C3, D4 }, 0, false, -1, false },
	{ INS, 6, 0, 0, 0x600f, 0x2, 0, { R1, VB, C3, D5 }, 0, false, -1, false },
	{ INS, 7, 0, 0, 0x6012, 0x2, 0, { R1, B6, C3, D5 }, 0, false, -1, false },
	{ INS, 8, 0, 0, 0x6000, 0x2, 0, { R1, B6, C3, D5 }, 0, false, -1, false },
	{ INS, 9, 0, 0, 0x6003, 0x2, 0, { R9, B6, C3, D5 }, 0, false, -1, false },
	{ END, 10, 0x30, 0, 0x6003, 0x2, 0, { R9, B6, C3, D5 }, 0, false, -1, false },
};

/* ---- 4. a reader must accept a varint that is not the shortest ---- */
/* clang-format off */
static const uint8_t long_varint_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x00, 0, 0, 0, 0x01, 0, 0, 0,
	0x45, 0, 0, 0, 0x45, 0, 0, 0, /* frame: 69 raw */
	/* start: seq 0x81 0x00 (= 1), tsc 0, gate 0, rip 0x3000 */
	0x02, 0x81, 0x00, Z8, 0x00, 0x00, 0x30, 0, 0, 0, 0, 0, 0,
	0x82, 0x84, 0x00, /* rflags 0x202 in three bytes */
	0x00, Z16,        /* cr3 0, GPRs 0 */
	/* end: seq 2, tsc 0, reason 0, rip 0x3000 */
	0x03, 0x02, 0, 0, 0, 0, 0, 0, 0, Z8, 0, 0, 0, 0, 0x00, 0x30, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

static const struct expect long_varint_records[] = {
	{ START, 1, 0, 0, 0x3000, 0x202, 0, { 0 }, 0, true, -1, false },
	{ END, 2, 0, 0, 0x3000, 0x202, 0, { 0 }, 0, false, -1, false },
};

/*
 * ---- 7. learning keeps the one operation whatever the GPR mask (read only:
 * our writer stores a one-byte difference, not an operation): add rax, rbx
 * at 0x7000 while five other registers change too (mask of five bits, not
 * learned), a jump back, and the add again: predicted, the operation alone.
 */
/* clang-format off */
static const uint8_t wide_mask_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x00, 0, 0, 0, 0x01, 0, 0, 0,
	0x51, 0, 0, 0, 0x51, 0, 0, 0, /* frame: 81 raw */
	/* start: seq 1, tsc 0, gate 0, rip 0x7000, rflags 2, cr3 0, rax 1, rbx 2 */
	0x02, 0x01, Z8, 0x00, 0x00, 0x70, 0, 0, 0, 0, 0, 0, 0x02, 0x00,
	0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/*
	 * 2: 0x7000 misses: RIP +3 (06); OPS: 1, rax <- rbx (01), add (01);
	 * GPR mask rcx rdx rsi rdi rbp (7c 00), +1 each (02)
	 */
	0x8c, 0x06, 0x01, 0x01, 0x01, 0x7c, 0x00, 0x02, 0x02, 0x02, 0x02, 0x02,
	/* 3: 0x7003 misses: RIP -3 (05) */
	0x04, 0x05,
	/* 4: 0x7000 hits: RIP 0x7003 and rax += rbx predicted; the mask was not kept */
	0x00,
	/* 5: session end, tsc 0, reason 0, rip 0x7003 */
	0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, Z8, 0, 0, 0, 0, 0x03, 0x70, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

static const struct expect wide_mask_records[] = {
	{ START, 1, 0, 0, 0x7000, 0x2, 0, { 1, 2 }, 0, true, -1, false },
	{ INS, 2, 0, 0, 0x7003, 0x2, 0, { 3, 2, 1, 1, 1, 1, 1 }, 0, false, -1, false },
	{ INS, 3, 0, 0, 0x7000, 0x2, 0, { 3, 2, 1, 1, 1, 1, 1 }, 0, false, -1, false },
	{ INS, 4, 0, 0, 0x7003, 0x2, 0, { 5, 2, 1, 1, 1, 1, 1 }, 0, false, -1, false },
	{ END, 5, 0, 0, 0x7003, 0x2, 0, { 5, 2, 1, 1, 1, 1, 1 }, 0, false, -1, false },
};

static const struct vector vectors[] = {
	{ "loop", 1, loop_bytes, sizeof(loop_bytes), loop_records,
	  sizeof(loop_records) / sizeof(loop_records[0]), NULL, true },
	{ "ymm", 0, ymm_bytes, sizeof(ymm_bytes), ymm_records,
	  sizeof(ymm_records) / sizeof(ymm_records[0]), ymm_states, true },
	{ "frames", 2, frames_bytes, sizeof(frames_bytes), frames_records,
	  sizeof(frames_records) / sizeof(frames_records[0]), NULL, true },
	{ "copy", 3, copy_bytes, sizeof(copy_bytes), copy_records,
	  sizeof(copy_records) / sizeof(copy_records[0]), NULL, true },
	{ "ops", 4, ops_bytes, sizeof(ops_bytes), ops_records,
	  sizeof(ops_records) / sizeof(ops_records[0]), NULL, true },
	{ "long-varint", 0, long_varint_bytes, sizeof(long_varint_bytes), long_varint_records,
	  sizeof(long_varint_records) / sizeof(long_varint_records[0]), NULL, false },
	{ "wide-mask", 0, wide_mask_bytes, sizeof(wide_mask_bytes), wide_mask_records,
	  sizeof(wide_mask_records) / sizeof(wide_mask_records[0]), NULL, false },
};
#define NVECTORS (sizeof(vectors) / sizeof(vectors[0]))

static void ymm_fill(const struct ymm_state *y, void *ymm)
{
	for (int i = 0; i < 16; i++)
		memset((uint8_t *)ymm + 32 * i, y->fill[i], 32);
}

static void check_record(const void *ctx, size_t i, const struct svmtrace_record *r)
{
	const struct vector *v = ctx;
	const struct expect *e = &v->records[i];
	const struct svmtrace_state *s = r->state;

	ck_assert_msg(r->kind == e->kind, "%s record %zu: kind %u, want %u", v->name, i, r->kind,
		      e->kind);
	expect_eq(r->sequence, e->seq, "sequence", i);
	expect_eq(r->cpu, v->cpu, "cpu", i);
	expect_eq(r->reason, e->reason, "reason", i);
	expect_eq(r->dropped, e->dropped, "dropped", i);
	expect_eq(r->anchor, e->full, "full record", i);
	expect_eq(r->has_tsc, e->full || e->kind == END, "has_tsc", i);
	if (r->has_tsc)
		expect_eq(r->tsc, e->tsc, "tsc", i);
	ck_assert(r->state_known);
	expect_eq(s->rip, e->rip, "rip", i);
	expect_eq(s->rflags, e->rflags, "rflags", i);
	expect_eq(s->cr3, e->cr3, "cr3", i);
	for (int g = 0; g < 16; g++)
		ck_assert_msg(s->gpr[g] == e->gpr[g], "%s record %zu: %s 0x%llx, want 0x%llx",
			      v->name, i, svmtrace_gpr_names[g], (unsigned long long)s->gpr[g],
			      (unsigned long long)e->gpr[g]);
	expect_eq(r->has_ymm, e->ymm >= 0, "has_ymm", i);
	if (e->ymm >= 0) {
		uint64_t ymm[16][4];

		ymm_fill(&v->ymm[e->ymm], ymm);
		expect_eq(s->xstate_bv, v->ymm[e->ymm].xstate_bv, "xstate_bv", i);
		ck_assert_msg(!memcmp(s->ymm, ymm, sizeof(ymm)), "%s record %zu: YMM differ",
			      v->name, i);
	}
}

/* The reader decodes every vector to exactly its records. */
START_TEST(reader_decodes_the_vector)
{
	const struct vector *v = &vectors[_i];
	struct svmtrace_summary sum;

	ck_assert_uint_eq(decode_all(v->bytes, v->size, v->name, v->count, check_record, v, &sum),
			  v->count);
	ck_assert_uint_eq(sum.file_bytes, v->size);
}
END_TEST

/* Our writer, given the same records, produces exactly the vector's bytes. */
START_TEST(writer_produces_the_vector)
{
	const struct vector *v = &vectors[_i];
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	const char *path = scratch_path(v->name);

	if (!v->writer_makes_it)
		return;
	svmtrace_writer_options_init(&o);
	o.cpu = v->cpu;
	o.raw_frames = true;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	for (size_t i = 0; i < v->count; i++) {
		const struct expect *e = &v->records[i];
		struct svmtrace_slot_xstate x;

		memset(&x, 0, sizeof(x));
		x.base.kind = e->kind;
		x.base.seq = e->seq;
		x.base.tsc = e->tsc;
		x.base.reason = e->reason;
		x.base.rip = e->rip;
		x.base.rflags = e->rflags;
		x.base.cr3 = e->cr3;
		memcpy(x.base.gpr, e->gpr, sizeof(e->gpr));
		x.base.dropped = e->dropped;
		x.base.flags = e->dropped ? SVMTRACE_SLOT_F_GAP : 0;
		if (e->ymm >= 0 && e->kind != END) {
			x.base.flags |= SVMTRACE_SLOT_F_XSTATE;
			x.xstate_bv = v->ymm[e->ymm].xstate_bv;
			ymm_fill(&v->ymm[e->ymm], x.ymm);
			ck_assert_int_eq(svmtrace_writer_append_xstate(w, &x, &err), 0);
		} else {
			ck_assert_int_eq(svmtrace_writer_append(w, &x.base, &err), 0);
		}
		if (e->flush)
			ck_assert_int_eq(svmtrace_writer_flush(w, &err), 0);
	}
	ck_assert_msg(svmtrace_writer_close(w, &err) == 0, "%s", err.message);

	expect_file_bytes(path, v->bytes, v->size, v->name);
}
END_TEST

/* The loop's summary: the counts format.md defines, from the vector alone. */
START_TEST(loop_summary_counts_gaps_and_jumps)
{
	struct svmtrace_reader *rd;
	const struct svmtrace_record *r;
	const struct svmtrace_summary *s;
	struct svmtrace_error err;

	ck_assert_int_eq(
		svmtrace_reader_open_memory(loop_bytes, sizeof(loop_bytes), "loop", &rd, &err), 0);
	while (svmtrace_reader_next(rd, &r) > 0)
		;
	s = svmtrace_reader_summary(rd);
	ck_assert_uint_eq(s->records, 11);
	ck_assert_uint_eq(s->instructions, 9);
	ck_assert_uint_eq(s->anchors, 1);
	ck_assert_uint_eq(s->session_starts, 1);
	ck_assert_uint_eq(s->session_ends, 1);
	ck_assert_uint_eq(s->gaps, 2);
	ck_assert_uint_eq(s->dropped, 13);
	ck_assert_uint_eq(s->sequence_jumps, 3);    /* 106->109, 109->120, 121->125 */
	ck_assert_uint_eq(s->sequence_skipped, 15); /* 2 + 10 + 3 */
	ck_assert_uint_eq(s->first_sequence, 100);
	ck_assert_uint_eq(s->last_sequence, 125);
	ck_assert_uint_eq(s->first_tsc, 0x1000);
	ck_assert_uint_eq(s->last_tsc, 0x3000);
	ck_assert_uint_eq(s->frames_raw, 1);
	ck_assert_uint_eq(s->decoded_bytes, 135);
	svmtrace_reader_close(rd);
}
END_TEST

/*
 * Frame 2 of "frames" read alone (its frame header re-based after a file
 * header): it decodes on its own, and its delta needs no history.
 */
START_TEST(second_frame_decodes_alone)
{
	static const struct expect want[] = { frames_records[4], frames_records[5],
					      frames_records[6] };
	const struct vector v = { "frame-2", 2, NULL, 0, want, 3, NULL, false };
	uint8_t buf[sizeof(frames_bytes)];
	size_t off2 = 16 + 8 + 42;

	memcpy(buf, frames_bytes, 16);
	memcpy(buf + 16, frames_bytes + off2, sizeof(frames_bytes) - off2);
	ck_assert_uint_eq(decode_all(buf, 16 + sizeof(frames_bytes) - off2, "frame-2", 3,
				     check_record, &v, NULL),
			  3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vectors");
	TCase *tc = tcase_create("hand-built");

	tcase_add_loop_test(tc, reader_decodes_the_vector, 0, NVECTORS);
	tcase_add_loop_test(tc, writer_produces_the_vector, 0, NVECTORS);
	tcase_add_test(tc, loop_summary_counts_gaps_and_jumps);
	tcase_add_test(tc, second_frame_decodes_alone);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
