// SPDX-License-Identifier: GPL-2.0
/*
 * One frame's LZ4 block, decoded under the LZ4 block format's rules
 * (lz4_Block_format.md).  liblz4's safe decoder keeps the output in bounds
 * and refuses most broken blocks, but takes a match offset of 0 (which the
 * format calls invalid) and makes bytes up for it; so after liblz4 has
 * decoded a block, one lean pass over its sequences looks for offset 0.
 * Only a block that fails either way is walked again, slowly, to say
 * which rule it breaks.
 *
 * The rules: a block is a run of
 * sequences, each a token (high nibble: literal count, low nibble: match
 * length - 4, 15 meaning "more in the following bytes", each 255 continuing),
 * the literals, a 16-bit little-endian match offset (0 is invalid) and the
 * match length's extra bytes.  A frame's block stands alone, so a match can
 * only reach back into bytes the same block produced.  The block ends with a
 * sequence of literals only; when it holds a match, the last 5 decoded
 * bytes are literals and the last match starts at least 12 bytes before
 * the end.
 */
#include "lib/trace/lz4_block.h"

#include <lz4.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LZ4_MIN_MATCH	  4
#define LZ4_LAST_LITERALS 5  /* the last 5 bytes are always literals */
#define LZ4_MATCH_LIMIT	  12 /* the last match starts at least this far from the end */

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* A length nibble of 15 continues in bytes of 255 and one below it. */
static int extend(const uint8_t *src, uint32_t stored, uint32_t *i, uint64_t *n)
{
	uint8_t b;

	if (*n != 15)
		return 0;
	do {
		if (*i >= stored)
			return -1;
		b = src[(*i)++];
		*n += b;
	} while (b == 255);
	return 0;
}

/* Which rule a block breaks: 0 if none. */
static int diagnose(const uint8_t *src, uint32_t stored, uint32_t decoded, char *why,
		    size_t why_size)
{
	uint64_t out = 0, last_match = 0, literals, match;
	uint32_t i = 0, at;
	int matches = 0;

	for (;;) {
		uint8_t token;
		uint16_t offset;

		if (i >= stored)
			return bad(why, why_size,
				   "LZ4 block ends with a match at byte %u: its last sequence must "
				   "be literals only",
				   stored);
		at = i;
		token = src[i++];
		literals = token >> 4;
		if (extend(src, stored, &i, &literals) || literals > stored - i)
			return bad(why, why_size,
				   "LZ4 block byte %u of %u: the literals run past the block", at,
				   stored);
		i += (uint32_t)literals;
		out += literals;
		if (out > decoded)
			break;
		if (i == stored)
			break; /* the last sequence: literals only */
		if (stored - i < 2)
			return bad(why, why_size,
				   "LZ4 block byte %u of %u: the match offset runs past the block",
				   i, stored);
		offset = (uint16_t)(src[i] | src[i + 1] << 8);
		if (offset == 0)
			return bad(why, why_size,
				   "LZ4 block byte %u of %u: match offset 0 (the LZ4 block format "
				   "has no offset 0)",
				   i, stored);
		if (offset > out)
			return bad(why, why_size,
				   "LZ4 block byte %u of %u: match offset %u reaches before the "
				   "block (%llu decoded so far)",
				   i, stored, offset, (unsigned long long)out);
		i += 2;
		match = token & 15;
		if (extend(src, stored, &i, &match))
			return bad(why, why_size,
				   "LZ4 block byte %u of %u: the match length runs past the block",
				   at, stored);
		last_match = out;
		matches = 1;
		out += match + LZ4_MIN_MATCH;
		if (out > decoded)
			break;
	}
	if (out > decoded)
		return bad(why, why_size,
			   "LZ4 block of %u bytes decodes to more than the frame's %u bytes",
			   stored, decoded);
	if (out < decoded)
		return bad(why, why_size, "LZ4 block of %u bytes decodes to %llu bytes, not %u",
			   stored, (unsigned long long)out, decoded);
	if (matches && literals < LZ4_LAST_LITERALS)
		return bad(why, why_size,
			   "LZ4 block's last sequence has %llu literals: the last %d bytes of a "
			   "block with matches must be literals",
			   (unsigned long long)literals, LZ4_LAST_LITERALS);
	if (matches && decoded - last_match < LZ4_MATCH_LIMIT)
		return bad(why, why_size,
			   "LZ4 block's last match starts %llu bytes before its end (at least %d)",
			   (unsigned long long)(decoded - last_match), LZ4_MATCH_LIMIT);
	return 0;
}

/*
 * Does a block that liblz4 decoded hold a match with offset 0?  Its
 * structure is sound (liblz4 walked it), so this only skips literals and
 * length bytes; it stays inside the block regardless.
 */
static int has_zero_offset(const uint8_t *src, uint32_t stored)
{
	uint32_t i = 0, n;
	uint16_t offset;
	uint8_t token, b;

	if (stored < 2)
		return 0;
	while (i < stored) {
		token = src[i++];
		n = token >> 4;
		if (__builtin_expect(n == 15, 0))
			do {
				if (i >= stored)
					return 0;
				b = src[i++];
				n += b;
			} while (b == 255);
		i += n;
		if (i > stored - 2)
			return 0; /* the last sequence: literals only */
		memcpy(&offset, src + i, 2);
		if (!offset)
			return 1;
		i += 2;
		if (__builtin_expect((token & 15) == 15, 0))
			do {
				if (i >= stored)
					return 0;
			} while (src[i++] == 255);
	}
	return 0;
}

int lz4_block_decode(const uint8_t *src, uint32_t stored, uint8_t *dst, uint32_t decoded, char *why,
		     size_t why_size)
{
	int n = LZ4_decompress_safe((const char *)src, (char *)dst, (int)stored, (int)decoded);

	if (n == (int)decoded && !has_zero_offset(src, stored))
		return 0;
	if (diagnose(src, stored, decoded, why, why_size))
		return -1;
	return bad(why, why_size, "LZ4 block of %u bytes: liblz4 decodes it to %d bytes, not %u",
		   stored, n, decoded);
}
