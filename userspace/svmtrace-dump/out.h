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

#define OUT_BUFFER (1u << 18)
#define OUT_ROW_MAX 2048	/* the longest row any command writes */

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

char *put_dec(char *p, uint64_t v);

/* "0x" and lowercase hex digits, no leading zeros ("0x0" for zero). */
static inline char *put_hex(char *p, uint64_t v)
{
	extern const char hex_pairs[512];
	unsigned int digits = v ? (unsigned int)(67 - __builtin_clzll(v)) / 4 : 1;
	char *end = p + 2 + digits;
	char *q = end;

	p[0] = '0';
	p[1] = 'x';
	while (q - p > 3) {
		q -= 2;
		memcpy(q, &hex_pairs[(v & 0xff) * 2], 2);
		v >>= 8;
	}
	if (q - p == 3)
		q[-1] = hex_pairs[(v & 0xf) * 2 + 1];
	return end;
}

#endif
