/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffered text output for rows: CSV and JSON lines are written millions of
 * times a second, so numbers are formatted by hand into one large buffer
 * instead of through printf.
 */
#ifndef SVMTRACE_DUMP_OUT_H
#define SVMTRACE_DUMP_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OUT_BUFFER  (1u << 18)
#define OUT_ROW_MAX 8192 /* the longest row any command writes (dump --regs --mem with YMM) */

struct out {
	int fd;
	size_t len;
	char buf[OUT_BUFFER];
};

extern struct out out;

/* Write the buffer to out.fd; dies on a write error (EPIPE exits quietly). */
void out_flush(void);

/* Room for one more row (at most OUT_ROW_MAX bytes); returns where to write. */
static inline char *out_row(void)
{
	if (out.len > OUT_BUFFER - OUT_ROW_MAX)
		out_flush();
	return out.buf + out.len;
}

/* The row written up to @end is complete. */
static inline void out_commit(char *end)
{
	out.len = (size_t)(end - out.buf);
}

static inline char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/*
 * Decimal digits of @v.  Writes 20 bytes whatever the length (rows have room
 * to spare, and a fixed-size copy is one move, not a call) and returns the
 * end of the digits.
 */
char *put_dec(char *p, uint64_t v);

/* Eight hex digits of @x as ASCII, most significant first in memory order. */
static inline uint64_t hex_digits8(uint32_t x)
{
	uint64_t t = x;

	/* one nibble per byte, least significant nibble in byte 0 */
	t = (t | (t << 16)) & 0x0000ffff0000ffffull;
	t = (t | (t << 8)) & 0x00ff00ff00ff00ffull;
	t = (t | (t << 4)) & 0x0f0f0f0f0f0f0f0full;
	/* '0' + nibble, plus 39 more ('a' - '0' - 10) where the nibble is >= 10 */
	t += 0x3030303030303030ull +
	     (((t + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * 39;
	return __builtin_bswap64(t);
}

/*
 * "0x" and lowercase hex digits, no leading zeros ("0x0" for zero).  Writes
 * 18 bytes whatever the length (rows have room to spare) and returns the end
 * of the digits.
 */
static inline char *put_hex(char *p, uint64_t v)
{
	unsigned int digits = v ? (unsigned int)(67 - __builtin_clzll(v)) / 4 : 1;
	unsigned __int128 chars = (unsigned __int128)hex_digits8((uint32_t)v) << 64 |
				  hex_digits8((uint32_t)(v >> 32));

	p[0] = '0';
	p[1] = 'x';
	chars >>= 8 * (16 - digits); /* drop the leading zeros */
	memcpy(p + 2, &chars, 16);
	return p + 2 + digits;
}

/*
 * One column's last value and its put_hex text.  Consecutive rows of a trace
 * share most register values (an instruction changes one or two of them), so
 * a row copies the text of an unchanged value instead of formatting it again.
 */
struct hex_cache {
	uint64_t v;
	uint32_t len;
	char text[20]; /* put_hex writes 18 bytes */
};

static inline void hex_cache_init(struct hex_cache *c)
{
	c->v = 0;
	c->len = (uint32_t)(put_hex(c->text, 0) - c->text);
}

/* put_hex(p, v), from @c when the column still holds @v.  Writes 18 bytes. */
static inline char *put_hex_cached(char *p, struct hex_cache *c, uint64_t v)
{
	if (v != c->v) {
		c->v = v;
		c->len = (uint32_t)(put_hex(c->text, v) - c->text);
	}
	memcpy(p, c->text, 18);
	return p + c->len;
}

/*
 * A 256-bit register (four little-endian quadwords) as "0x" and all 64
 * lowercase hex digits, most significant first: lanes stay in place.
 */
static inline char *put_hex256(char *p, const uint64_t *q)
{
	*p++ = '0';
	*p++ = 'x';
	for (int i = 3; i >= 0; i--) {
		uint64_t hi = hex_digits8((uint32_t)(q[i] >> 32)), lo = hex_digits8((uint32_t)q[i]);

		memcpy(p, &hi, 8);
		memcpy(p + 8, &lo, 8);
		p += 16;
	}
	return p;
}

#endif
