// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/vmi_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int vmi_fail(struct svmtrace_error *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	err->status = status;
	err->offset = 0;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return status;
}

int vmi_prefix(struct svmtrace_error *err, int status, const char *fmt, ...)
{
	char head[sizeof(err->message)];
	char tail[sizeof(err->message)];
	va_list ap;

	if (!err)
		return status;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(tail, err->message, sizeof(tail));
	snprintf(err->message, sizeof(err->message), "%.200s: %.300s", head, tail);
	err->status = status;
	return status;
}
