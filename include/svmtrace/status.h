/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsvmtrace: the one error convention of every part (trace, ring, vmi).
 *
 * A call that can fail returns 0 (SVMTRACE_OK) or a negative
 * enum svmtrace_status, and fills the struct svmtrace_error it was given
 * (which may be NULL).  Argument order is the same everywhere, as in liblz4's
 * narrow API: inputs first, then output pointers, then the error last.
 * Every close/free accepts NULL; yes/no answers are bool.
 */
#ifndef SVMTRACE_STATUS_H
#define SVMTRACE_STATUS_H

#include <stdint.h>

enum svmtrace_status {
	SVMTRACE_OK = 0,
	SVMTRACE_E_IO = -1,	   /* open/read/write/mmap failed (errno in message) */
	SVMTRACE_E_FORMAT = -2,	   /* bytes that break their format (trace, ELF, ISF, PE) */
	SVMTRACE_E_TRUNCATED = -3, /* a trace ends inside a frame: every complete
				      frame was delivered first */
	SVMTRACE_E_INVALID = -4,   /* bad argument from the caller */
	SVMTRACE_E_NOMEM = -5,
	SVMTRACE_E_NOT_FOUND = -6,    /* no such PID, profile, symbol or kernel */
	SVMTRACE_E_NOT_RESIDENT = -7, /* the guest page is not in memory */
	SVMTRACE_E_MISMATCH = -8,     /* profile is for another kernel build; ring
					 for another ABI */
	SVMTRACE_E_CORRUPT = -9,      /* guest structures are inconsistent: list
					 cycles, broken links, pointers outside
					 memory */
};

struct svmtrace_error {
	int status;	   /* enum svmtrace_status */
	uint64_t offset;   /* trace files: the file offset the message refers to; else 0 */
	char message[512]; /* what was wrong, naming the file, offset or structure */
};

/* "ok", "io", "format", "truncated", ...; "unknown" for any other value. */
const char *svmtrace_status_name(int status);

#endif /* SVMTRACE_STATUS_H */
