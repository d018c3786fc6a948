/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Windows layer's shared state (a session: memory, profile, kernel) and
 * the virtual-memory helpers every Windows file uses.
 */
#ifndef SVMTRACE_VMI_WIN_SESSION_H
#define SVMTRACE_VMI_WIN_SESSION_H

#include "lib/vmi/win_profile.h"

struct svmtrace_vmi {
	const struct svmtrace_vmi_mem *mem;
	const struct svmtrace_vmi_profile *profile;
	struct svmtrace_vmi_profile *owned_profile; /* freed on close */
	struct svmtrace_vmi_kernel kernel;
};

/* Read a little-endian u64 / u32 / u16 at @va through @dtb. */
int win_read_u64(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, uint64_t *v,
		 struct svmtrace_error *err);
int win_read_u32(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, uint32_t *v,
		 struct svmtrace_error *err);
int win_read_u16(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, uint16_t *v,
		 struct svmtrace_error *err);

/* A UNICODE_STRING at @va, converted to UTF-8 (truncated to fit @size). */
int win_read_unicode(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, char *out,
		     size_t size, struct svmtrace_error *err);

/* Visit each entry of the circular LIST_ENTRY list headed at @head. */
typedef int (*win_list_visit)(void *ctx, uint64_t link, struct svmtrace_error *err);

/*
 * Entries are LIST_ENTRY addresses.  @visit returns 0 to go on, 1 to stop
 * early, negative to fail.  At most @max entries; cycles, Blinks that do not
 * point back and unreadable links fail with E_CORRUPT naming @what.
 */
int win_list_walk(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t head, size_t max,
		  const char *what, win_list_visit visit, void *ctx, struct svmtrace_error *err);

/* PCID and flag bits of a CR3-like value cleared. */
uint64_t win_dtb_mask(uint64_t cr3);

/* One process from its ActiveProcessLinks entry at @link. */
int win_process_read(const struct svmtrace_vmi *vmi, uint64_t link, struct svmtrace_vmi_process *p,
		     struct svmtrace_error *err);

#endif
