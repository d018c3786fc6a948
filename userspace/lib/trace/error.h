/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SVMTRACE_ERROR_H
#define SVMTRACE_ERROR_H

#include <stdint.h>

#include <svmtrace/trace.h>

/*
 * Fill @err (may be NULL) with @status and "NAME: offset OFF: message";
 * returns @status so callers can `return trace_error(...)`.
 */
__attribute__((format(printf, 5, 6))) int trace_error(struct svmtrace_error *err, int status,
						      const char *name, uint64_t offset,
						      const char *fmt, ...);

/* The same without an offset: "NAME: message". */
__attribute__((format(printf, 4, 5))) int trace_error_noloc(struct svmtrace_error *err, int status,
							    const char *name, const char *fmt, ...);

#endif
