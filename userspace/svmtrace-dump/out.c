// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/out.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cli.h"

struct out out = { .fd = STDOUT_FILENO };

char *put_dec(char *p, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	char tmp[40], *q = tmp + 20; /* digits end at tmp + 20; 20 more to copy from */

	while (v >= 100) {
		q -= 2;
		memcpy(q, pairs + (v % 100) * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, pairs + v * 2, 2);
	} else {
		*--q = (char)('0' + v);
	}
	memcpy(p, q, 20);
	return p + (tmp + 20 - q);
}

void out_flush(void)
{
	const char *p = out.buf;

	while (out.len) {
		ssize_t n = write(out.fd, p, out.len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			exit(0); /* the reader went away: `dump | head` */
		if (n < 0)
			die("writing output: %s", strerror(errno));
		p += n;
		out.len -= (size_t)n;
	}
}
