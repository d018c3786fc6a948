/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading the Windows-layout guest (svmtrace-e2e-wingen's ELF core) into
 * guest RAM: the VMM into its KVM memory, the model into its own buffer,
 * so both start from the very same bytes.
 */
#ifndef E2E_WIN_IMAGE_H
#define E2E_WIN_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Copy every PT_LOAD of the ELF core at path to mem + p_paddr (mem_size
 * bytes, zeroed by the caller) and check the boot block.  0, or -1 with a
 * message in err. */
int win_image_load(uint8_t *mem, uint64_t mem_size, const char *path, char *err, size_t errlen);

/* A u64 of the boot block (WIN_BOOT_OFF_*). */
uint64_t win_boot(const uint8_t *mem, unsigned int off);

#endif /* E2E_WIN_IMAGE_H */
