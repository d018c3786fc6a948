/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lab guest's memory image: system tables, page tables, the kernel and
 * the program, laid out as guest/layout.h says.  The VMM builds it into guest
 * RAM and the reference model into its own buffer, so both start from the
 * very same bytes.
 */
#ifndef E2E_GUEST_IMAGE_H
#define E2E_GUEST_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Build the machine from the kernel and program files into mem
 * (GUEST_MEM_SIZE bytes, zeroed by the caller), the program's pages
 * supervisor-only with cpl0 (a program run at CPL 0), else user pages.
 * Returns 0, or -1 with a message naming the file and the problem in err. */
int guest_image_load(uint8_t *mem, const char *kernel_path, const char *program_path, int cpl0,
		     char *err, size_t errlen);

#endif /* E2E_GUEST_IMAGE_H */
