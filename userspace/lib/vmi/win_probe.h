/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel discovery's shared state (win_kernel.c runs the methods,
 * win_pescan.c is the physical scan): memory, the profile if any, the
 * paging depth being tried, and the page-table roots known so far.
 */
#ifndef SVMTRACE_VMI_WIN_PROBE_H
#define SVMTRACE_VMI_WIN_PROBE_H

#include "lib/vmi/win_session.h"

#define PROBE_MAX_DTBS 16

struct probe {
	struct svmtrace_vmi s; /* kernel.paging_levels: the depth being tried */
	uint64_t dtbs[PROBE_MAX_DTBS];
	unsigned int nr_dtbs;
};

/* Is @name (a CodeView record's PDB name) one of the kernel's? */
bool probe_kernel_pdb(const char *name);

/*
 * Scan down from @anchor in @dtb for the kernel image (at most 64 MiB);
 * with @must_cover the image must contain the anchor.  Fills @k's image
 * fields (base, dtb, size, PDB).
 */
int probe_scan_down(const struct probe *pr, uint64_t dtb, uint64_t anchor, int must_cover,
		    struct svmtrace_vmi_kernel *k, struct svmtrace_error *err);

/* The physical scan (win_pescan.c). */
int probe_pescan(const struct probe *pr, struct svmtrace_vmi_kernel *k,
		 struct svmtrace_error *err);

#endif
