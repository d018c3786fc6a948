// SPDX-License-Identifier: GPL-2.0
#include "common/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_progname = "svmtrace";

static void vmessage(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	exit(1);
}

void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

uint64_t parse_u64(const char *arg, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!arg || !*arg || *arg == '-' || *arg == '+' || *arg == ' ')
		die("%s: expected an unsigned number, got '%s'", what, arg ? arg : "");
	v = strtoull(arg, &end, 0);
	if (errno || *end)
		die("%s: expected an unsigned number (decimal or 0x hex), got '%s'", what, arg);
	return v;
}

void parse_range(const char *arg, const char *what, uint64_t *lo, uint64_t *hi)
{
	char buf[128];
	char *dash;

	if (strlen(arg) >= sizeof(buf))
		die("%s: range too long: '%s'", what, arg);
	strcpy(buf, arg);
	dash = strchr(buf, '-');
	if (!dash)
		die("%s: expected a range A-B, got '%s'", what, arg);
	*dash = '\0';
	*lo = parse_u64(buf, what);
	*hi = parse_u64(dash + 1, what);
	if (*lo > *hi)
		die("%s: range start 0x%llx is above its end 0x%llx", what, (unsigned long long)*lo,
		    (unsigned long long)*hi);
}

void parse_half_open(const char *arg, const char *what, uint64_t *lo, uint64_t *hi)
{
	parse_range(arg, what, lo, hi);
	if (*lo == *hi)
		die("%s %s: empty range (the end is exclusive)", what, arg);
}

void parse_rip_range(const char *arg, uint64_t *lo, uint64_t *hi)
{
	parse_half_open(arg, "--rip-range", lo, hi);
}
