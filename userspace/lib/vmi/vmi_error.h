/* SPDX-License-Identifier: GPL-2.0 */
/* Filling struct svmtrace_error: one helper every layer shares. */
#ifndef SVMTRACE_VMI_ERROR_H
#define SVMTRACE_VMI_ERROR_H

#include <svmtrace/vmi.h>

/* Set err (if not NULL) to @status and the formatted message; return @status. */
__attribute__((format(printf, 3, 4))) int vmi_fail(struct svmtrace_error *err, int status,
						   const char *fmt, ...);

/*
 * Put "context: " in front of an error's message, so a failure deep down
 * ("VA 0x...: PDE not present") says what was being read ("EPROCESS 0x...
 * ActiveProcessLinks").  Sets and returns @status (usually the failing
 * call's result; a caller may reclassify, e.g. as E_CORRUPT).
 */
__attribute__((format(printf, 3, 4))) int vmi_prefix(struct svmtrace_error *err, int status,
						     const char *fmt, ...);

#endif
