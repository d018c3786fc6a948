/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One pass over an ISF file's JSON text: checks the JSON grammar of the
 * whole file and reports where the members of the top-level "symbols" and
 * "user_types" objects and the "metadata" object are, without building
 * anything.  Nesting deeper than ISF_SCAN_MAX_DEPTH is rejected.
 */
#ifndef SVMTRACE_VMI_ISF_SCAN_H
#define SVMTRACE_VMI_ISF_SCAN_H

#include <svmtrace/vmi.h>

#define ISF_SCAN_MAX_DEPTH 64

enum isf_section { ISF_SYMBOLS, ISF_USER_TYPES };

struct isf_span {
	const char *at;
	size_t len;
};

struct isf_scan_ops {
	/* A member @key of "symbols" or "user_types" with value text @value. */
	int (*member)(void *ctx, enum isf_section section, struct isf_span key,
		      struct isf_span value, struct svmtrace_error *err);
	void *ctx;
};

/* Scan @text; *metadata receives the "metadata" value (len 0 if absent). */
int isf_scan(const char *text, size_t len, const char *name, const struct isf_scan_ops *ops,
	     struct isf_span *metadata, struct svmtrace_error *err);

#endif
