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

/* Build the machine into mem (GUEST_MEM_SIZE bytes, zeroed by the caller).
 * Returns 0, or -1 with a message in err when an image does not fit. */
int guest_image_build(uint8_t *mem, const void *kernel, size_t kernel_size, const void *program,
		      size_t program_size, char *err, size_t errlen);

/* Read a whole file (at most max bytes); NULL with a message in err. */
void *guest_image_load_file(const char *path, size_t max, size_t *size, char *err, size_t errlen);

#endif /* E2E_GUEST_IMAGE_H */
