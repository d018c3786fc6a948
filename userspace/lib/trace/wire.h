/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The v5 wire format, as docs/format.md specifies it byte by byte.  Only the
 * encoder, the decoder and the frame layer include this.
 */
#ifndef SVMTRACE_WIRE_H
#define SVMTRACE_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/common/le.h"

#define WIRE_MAGIC	       "FTRC"
#define WIRE_HEADER_SIZE       16
#define WIRE_FLAG_FRAMED       0x1u
#define WIRE_FLAG_MEM	       0x2u /* instruction records end with a memory part */
#define WIRE_FLAGS_KNOWN       (WIRE_FLAG_FRAMED | WIRE_FLAG_MEM)
#define WIRE_FRAME_HEADER_SIZE 8

/* Low two bits of every record's first byte. */
#define WIRE_TYPE_MASK	   0x03
#define WIRE_DELTA	   0x00
#define WIRE_ANCHOR	   0x01
#define WIRE_SESSION_START 0x02
#define WIRE_SESSION_END   0x03

/*
 * Full-state records (anchor, session start): header, varint seq, u64 tsc,
 * varint reason, u64 rip, varint rflags, varint cr3, 16 varint GPRs, then
 * the optional parts below.
 */
#define WIRE_FULL_XSTATE   0x04 /* u64 xstate_bv + YMM0-15 follow */
#define WIRE_FULL_GAP	   0x08 /* varint dropped count follows */
#define WIRE_FULL_RESERVED 0xf0

/* Delta records: what is stored explicitly instead of predicted. */
#define WIRE_DELTA_RIP	  0x04 /* zigzag varint: rip - previous rip */
#define WIRE_DELTA_GPR	  0x08 /* u16 mask, then a zigzag varint per set bit */
#define WIRE_DELTA_RFLAGS 0x10 /* varint: rflags XOR predicted rflags */
#define WIRE_DELTA_SEQ	  0x20 /* varint: sequence step - 2 */
#define WIRE_DELTA_XSTATE 0x40 /* u64 xstate_bv, u16 YMM mask, 32 bytes per set bit */
/*
 * Register operations: u8 count n (1..16), then n pairs (u8 destination << 4
 * | source, u8 operation); stored right after the RIP part, before GPR.
 */
#define WIRE_DELTA_OPS 0x80
#define WIRE_OPS_MAX   16
#define WIRE_OP_COPY   0x00 /* new = source */
#define WIRE_OP_ADD    0x01 /* new = destination + source */
#define WIRE_OP_SUB    0x02 /* new = destination - source */
#define WIRE_OP_XOR    0x03 /* new = destination ^ source */
#define WIRE_OP_ADD32  0x04 /* new = (u32)(destination + source) */
#define WIRE_OP_ROL    0x40 /* | k (1..63): new = source rotated left by k */
#define WIRE_OP_ROL32  0x80 /* | k (1..31): new = (u32)source rotated left by k, in 32 bits */

/*
 * Session end: type, u64 seq, u64 tsc, u32 reason, u64 rip [, state]
 * [, varint dropped] [, xstate].  Its G is bit 2, not bit 3 as in full
 * records, because files already written use it there.
 */
#define WIRE_END_SIZE	  (1 + 8 + 8 + 4 + 8)
#define WIRE_END_GAP	  0x04 /* varint dropped count follows */
#define WIRE_END_STATE	  0x08 /* varint rflags, cr3 and 16 GPRs follow the rip */
#define WIRE_END_XSTATE	  0x10 /* with STATE: u64 xstate_bv + YMM0-15 at the end */
#define WIRE_END_RESERVED 0xe0

#define WIRE_YMM_BYTES	 32
#define WIRE_XSTATE_SIZE (8 + 16 * WIRE_YMM_BYTES)

/*
 * Worst cases: a full record with every varint at its longest, and a delta
 * with every part explicit (RIP, mask + 16 GPRs, RFLAGS, sequence, YMM).
 */
#define WIRE_FULL_MAX (1 + 10 + 8 + 5 + 8 + 10 + 10 + 16 * 10 + 10 + WIRE_XSTATE_SIZE)
#define WIRE_DELTA_MAX                                                                             \
	(1 + 10 + 1 + 2 * WIRE_OPS_MAX + 2 + 16 * 10 + 10 + 10 + 8 + 2 + 16 * WIRE_YMM_BYTES)
#define WIRE_RECORD_MAX (WIRE_FULL_MAX > WIRE_DELTA_MAX ? WIRE_FULL_MAX : WIRE_DELTA_MAX)
#define WIRE_END_MAX	(WIRE_END_SIZE + 10 + 10 + 16 * 10 + 10 + WIRE_XSTATE_SIZE)
_Static_assert(WIRE_END_MAX <= WIRE_RECORD_MAX, "a session end fits any record's room");

/*
 * Memory part (files with WIRE_FLAG_MEM, after every anchor and delta): a
 * header byte, then for explicit accesses each access as a descriptor byte,
 * [u8 registers], [u8 why], [u8 base GPR], svarint address - base, varint
 * size, values.
 */
#define WIRE_MEM_NONE	    0x00 /* no access */
#define WIRE_MEM_PREDICTED  0x80 /* the entry's accesses; only their stored values follow */
#define WIRE_MEM_SHAPED	    0x81 /* the entry's accesses at stored addresses: svarint, values */
#define WIRE_MEM_KIND	    0x03 /* enum svmtrace_mem_kind */
#define WIRE_MEM_RSRC	    2	 /* shift of the read value's source (2 bits) */
#define WIRE_MEM_WSRC	    4	 /* shift of the written value's source (2 bits) */
#define WIRE_MEM_BASE	    0x40 /* a u8 GPR follows: the address counts from its value */
#define WIRE_MEM_RESERVED   0x80
#define WIRE_SRC_STORED	    0 /* the value's bytes follow */
#define WIRE_SRC_REG	    1 /* the low bytes of a GPR of the record's state */
#define WIRE_SRC_PREV	    2 /* the value right before it in the record */
#define WIRE_SRC_RIP	    3 /* the low bytes of the record's RIP */
#define WIRE_MEM_ACCESS_MAX (1 + 1 + 1 + 1 + 10 + 5 + 2 * 32)
#define WIRE_MEM_MAX	    (1 + 16 * WIRE_MEM_ACCESS_MAX)

/*
 * Is operation @op on @reg (destination << 4 | source) one the format defines?
 * A bitmap of the defined operation bytes (00-04, 41-7f, 81-9f), and a copy
 * must not name its own source: no branch, so a decoder checks a whole list
 * of operations and branches once.
 */
static inline bool wire_op_valid(uint8_t reg, uint8_t op)
{
	static const uint64_t defined[4] = { 0x1full, ~1ull, 0xfffffffeull, 0 };

	return (defined[op >> 6] >> (op & 63) & 1) &
	       ((op != WIRE_OP_COPY) | ((reg >> 4) != (reg & 15)));
}

/*
 * The destination's new value; @dst and @src are the previous state's values.
 * Defined for any byte (undefined operations give some value, no undefined
 * behaviour), so a decoder may compute before it checks.
 */
static inline uint64_t wire_op_apply(uint8_t op, uint64_t dst, uint64_t src)
{
	unsigned int k = op & 0x3f;
	uint32_t v = (uint32_t)src;

	switch (op) {
	case WIRE_OP_COPY:
		return src;
	case WIRE_OP_ADD:
		return dst + src;
	case WIRE_OP_SUB:
		return dst - src;
	case WIRE_OP_XOR:
		return dst ^ src;
	case WIRE_OP_ADD32:
		return (uint32_t)(dst + src);
	default:
		if ((op & 0xc0) == WIRE_OP_ROL)
			return src << k | src >> (-k & 63);
		return (uint32_t)(v << (k & 31) | v >> (-k & 31));
	}
}

/* Signed values become unsigned varints with the sign in bit 0. */
static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

/* LEB128: seven bits a byte, low first, high bit = more. At most 10 bytes. */
static inline uint8_t *wire_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Read a varint from [p, end).  Returns the byte after it, or NULL when it
 * runs past end or over 10 bytes or past 64 bits.
 */
static inline const uint8_t *wire_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	if (p < end && *p < 0x80) { /* the common one-byte case */
		*out = *p;
		return p + 1;
	}
	while (p < end) {
		uint8_t b = *p++;

		if (shift == 63 && b > 1)
			return NULL;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return p;
		}
		shift += 7;
		if (shift > 63)
			return NULL;
	}
	return NULL;
}

#endif
