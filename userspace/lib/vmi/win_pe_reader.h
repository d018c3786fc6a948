/* SPDX-License-Identifier: GPL-2.0 */
/* PE images in guest virtual memory, for the PE parser. */
#ifndef SVMTRACE_VMI_WIN_PE_READER_H
#define SVMTRACE_VMI_WIN_PE_READER_H

#include "lib/vmi/pe.h"
#include "lib/vmi/win_session.h"

/*
 * An image mapped at @base in the address space @dtb, read with
 * svmtrace_vmi_read_va().  The context must outlive the reader.
 */
struct win_pe_ctx {
	const struct svmtrace_vmi *vmi;
	uint64_t dtb;
	uint64_t base;
};

struct pe_reader win_pe_reader(const struct win_pe_ctx *ctx);

#endif
