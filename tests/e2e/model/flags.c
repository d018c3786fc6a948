// SPDX-License-Identifier: GPL-2.0
/*
 * Arithmetic flags as the AMD64 manual defines them for ADD/SUB/CMP and the
 * logical operations, at 32- or 64-bit operand size.
 */
#include "model.h"

static uint64_t sign(uint64_t v, int bits)
{
	return (v >> (bits - 1)) & 1;
}

static uint64_t trunc_to(uint64_t v, int bits)
{
	return bits == 64 ? v : v & 0xffffffffull;
}

uint64_t flags_szp(uint64_t r, int bits)
{
	uint64_t f = 0;

	r = trunc_to(r, bits);
	if (!r)
		f |= RFLAGS_ZF;
	if (sign(r, bits))
		f |= RFLAGS_SF;
	if (!(__builtin_popcount((unsigned int)(r & 0xff)) & 1))
		f |= RFLAGS_PF;
	return f;
}

uint64_t flags_add(uint64_t a, uint64_t b, uint64_t r, int bits)
{
	uint64_t f = flags_szp(r, bits);

	a = trunc_to(a, bits);
	b = trunc_to(b, bits);
	r = trunc_to(r, bits);
	if (r < a)
		f |= RFLAGS_CF;
	if ((a ^ b ^ r) & 0x10)
		f |= RFLAGS_AF;
	if (sign((a ^ r) & (b ^ r), bits))
		f |= RFLAGS_OF;
	return f;
}

uint64_t flags_sub(uint64_t a, uint64_t b, uint64_t r, int bits)
{
	uint64_t f = flags_szp(r, bits);

	a = trunc_to(a, bits);
	b = trunc_to(b, bits);
	r = trunc_to(r, bits);
	if (a < b)
		f |= RFLAGS_CF;
	if ((a ^ b ^ r) & 0x10)
		f |= RFLAGS_AF;
	if (sign((a ^ b) & (a ^ r), bits))
		f |= RFLAGS_OF;
	return f;
}

/* AND/OR/XOR/TEST: CF = OF = 0; AF is undefined (callers mark it so). */
uint64_t flags_logic(uint64_t r, int bits)
{
	return flags_szp(r, bits);
}
