// SPDX-License-Identifier: GPL-2.0
#include <svmtrace/status.h>

const char *svmtrace_status_name(int status)
{
	static const char *const names[] = {
		[-SVMTRACE_OK] = "ok",
		[-SVMTRACE_E_IO] = "io",
		[-SVMTRACE_E_FORMAT] = "format",
		[-SVMTRACE_E_TRUNCATED] = "truncated",
		[-SVMTRACE_E_INVALID] = "invalid",
		[-SVMTRACE_E_NOMEM] = "nomem",
		[-SVMTRACE_E_NOT_FOUND] = "not-found",
		[-SVMTRACE_E_NOT_RESIDENT] = "not-resident",
		[-SVMTRACE_E_MISMATCH] = "mismatch",
		[-SVMTRACE_E_CORRUPT] = "corrupt",
	};

	if (status > 0 || -status >= (int)(sizeof(names) / sizeof(names[0])))
		return "unknown";
	return names[-status];
}
