// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/error.h"

#include <stdarg.h>
#include <stdio.h>

static void fill(struct svmtrace_error *err, int status, uint64_t offset, int used, const char *fmt,
		 va_list ap)
{
	err->status = status;
	err->offset = offset;
	if (used < 0 || (size_t)used >= sizeof(err->message))
		return;
	vsnprintf(err->message + used, sizeof(err->message) - (size_t)used, fmt, ap);
}

int trace_error(struct svmtrace_error *err, int status, const char *name, uint64_t offset,
		const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	va_start(ap, fmt);
	fill(err, status, offset,
	     snprintf(err->message, sizeof(err->message), "%s: offset %llu: ", name,
		      (unsigned long long)offset),
	     fmt, ap);
	va_end(ap);
	return status;
}

int trace_error_noloc(struct svmtrace_error *err, int status, const char *name, const char *fmt,
		      ...)
{
	va_list ap;

	if (!err)
		return status;
	va_start(ap, fmt);
	fill(err, status, 0, snprintf(err->message, sizeof(err->message), "%s: ", name), fmt, ap);
	va_end(ap);
	return status;
}
