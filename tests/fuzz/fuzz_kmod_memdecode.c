// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the kernel capture's instruction decoder
 * (kmod/src/memdecode.c, built here as in kvm.ko), which reads guest code.
 * The first byte picks the mode (bit 0: 64-bit); the rest are the bytes at
 * RIP, at most 15.  Checks what the capture relies on: a decoded
 * instruction is 1..15 bytes long and within the bytes given, has at most
 * SVMTRACE_MEMOPS_MAX accesses of a valid kind, form and size; anything
 * else is one unrecorded access.
 */
#include <stdlib.h>

#include "../../kmod/src/memdecode.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svmtrace_memdecode d;
	unsigned int n, i;

	if (!size)
		return 0;
	n = size - 1 > 15 ? 15 : (unsigned int)(size - 1);
	svmtrace_memdecode(data + 1, n, data[0] & 1, &d);
	if (d.nr > SVMTRACE_MEMOPS_MAX)
		abort();
	if (!d.ok) {
		if (d.nr != 1 || d.ops[0].kind != SVMTRACE_MEM_UNRECORDED ||
		    d.ops[0].form != SVMTRACE_FORM_NONE)
			abort();
		return 0;
	}
	if (d.len < 1 || d.len > n)
		abort();
	for (i = 0; i < d.nr; i++) {
		if (d.ops[i].kind > SVMTRACE_MEM_RMW || d.ops[i].form > SVMTRACE_FORM_NONE ||
		    (d.ops[i].form == SVMTRACE_FORM_NONE &&
		     d.ops[i].kind != SVMTRACE_MEM_UNRECORDED))
			abort();
		if (d.ops[i].kind != SVMTRACE_MEM_UNRECORDED &&
		    (d.ops[i].size < 1 || d.ops[i].size > SVMTRACE_MEM_MAX_VALUE))
			abort();
	}
	return 0;
}
