// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/out.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cli.h"

struct out out = { .fd = STDOUT_FILENO };

/* "000102...ff": two hex digits for every byte value. */
const char hex_pairs[512] = {
#define P(x) "0123456789abcdef"[(x) >> 4], "0123456789abcdef"[(x) & 15]
#define R(x) P(x), P(x + 1), P(x + 2), P(x + 3), P(x + 4), P(x + 5), P(x + 6), P(x + 7), \
	P(x + 8), P(x + 9), P(x + 10), P(x + 11), P(x + 12), P(x + 13), P(x + 14), P(x + 15)
	R(0x00), R(0x10), R(0x20), R(0x30), R(0x40), R(0x50), R(0x60), R(0x70),
	R(0x80), R(0x90), R(0xa0), R(0xb0), R(0xc0), R(0xd0), R(0xe0), R(0xf0),
#undef R
#undef P
};

char *put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

void out_flush(void)
{
	const char *p = out.buf;

	while (out.len) {
		ssize_t n = write(out.fd, p, out.len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			exit(0);	/* the reader went away: `dump | head` */
		if (n < 0)
			die("writing output: %s", strerror(errno));
		p += n;
		out.len -= (size_t)n;
	}
}
