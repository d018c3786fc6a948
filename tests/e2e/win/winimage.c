// SPDX-License-Identifier: GPL-2.0
/*
 * The Windows-layout guest image: an ELF64 core whose PT_LOAD segments
 * carry guest-physical pages (p_paddr), as svmtrace-e2e-wingen writes it
 * with the VMI generator's ELF writer.  Every segment is bounds-checked.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "winimage.h"
#include "winlayout.h"

uint64_t win_boot(const uint8_t *mem, unsigned int off)
{
	uint64_t v;

	memcpy(&v, mem + WIN_BOOT_GPA + off, 8);
	return v;
}

int win_image_load(uint8_t *mem, uint64_t mem_size, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	int ret = -1;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_CORE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr)) {
		snprintf(err, errlen, "%s: not an ELF64 core", path);
		goto out;
	}
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (fseek(f, (long)(eh.e_phoff + i * sizeof(ph)), SEEK_SET) ||
		    fread(&ph, sizeof(ph), 1, f) != 1) {
			snprintf(err, errlen, "%s: truncated program header %u", path, i);
			goto out;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_paddr > mem_size || ph.p_filesz > mem_size - ph.p_paddr) {
			snprintf(err, errlen, "%s: segment %u (0x%llx + 0x%llx) outside %llu bytes of RAM",
				 path, i, (unsigned long long)ph.p_paddr,
				 (unsigned long long)ph.p_filesz, (unsigned long long)mem_size);
			goto out;
		}
		if (fseek(f, (long)ph.p_offset, SEEK_SET) ||
		    fread(mem + ph.p_paddr, 1, ph.p_filesz, f) != ph.p_filesz) {
			snprintf(err, errlen, "%s: truncated segment %u", path, i);
			goto out;
		}
	}
	if (win_boot(mem, WIN_BOOT_OFF_MAGIC) != WIN_BOOT_MAGIC ||
	    win_boot(mem, WIN_BOOT_OFF_MEMSIZE) != mem_size) {
		snprintf(err, errlen, "%s: no boot block for %llu bytes of RAM at 0x%x", path,
			 (unsigned long long)mem_size, WIN_BOOT_GPA);
		goto out;
	}
	ret = 0;
out:
	fclose(f);
	return ret;
}
