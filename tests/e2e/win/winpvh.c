// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-winpvh IMAGE.elf STUB.bin OUT.pvh
 *
 * The Windows-layout guest for QEMU (winpvh.h): load the image as the lab's
 * VMM does, add the boot stub and a copy of low memory, and write an ELF64
 * executable that QEMU's -kernel (libvirt's <kernel>) boots through its PVH
 * entry: one PT_LOAD per run of non-zero pages at its guest-physical
 * address, and the Xen PHYS32_ENTRY note QEMU looks for.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "winimage.h"
#include "winlayout.h"
#include "winpvh.h"

#define PAGE			 0x1000ull
#define XEN_ELFNOTE_PHYS32_ENTRY 18

struct pvh_note {
	Elf64_Nhdr hdr;
	char name[4]; /* "Xen" */
	uint64_t entry;
};

static void die(const char *what)
{
	fprintf(stderr, "svmtrace-e2e-winpvh: %s\n", what);
	exit(1);
}

static int zero_page(const uint8_t *p)
{
	for (size_t i = 0; i < PAGE; i++)
		if (p[i])
			return 0;
	return 1;
}

static int zero_range(const uint8_t *mem, uint64_t from, uint64_t to)
{
	for (uint64_t a = from; a < to; a += PAGE)
		if (!zero_page(mem + a))
			return 0;
	return 1;
}

/* Runs of non-zero pages, as [start, end) pairs; returns how many. */
static size_t runs(const uint8_t *mem, uint64_t (*out)[2], size_t max)
{
	size_t n = 0;

	for (uint64_t a = 0; a < WIN_MEM_SIZE; a += PAGE) {
		if (zero_page(mem + a))
			continue;
		if (n && out[n - 1][1] == a) {
			out[n - 1][1] = a + PAGE;
			continue;
		}
		if (n == max)
			die("too many segments");
		out[n][0] = a;
		out[n++][1] = a + PAGE;
	}
	return n;
}

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		die("write failed");
}

int main(int argc, char **argv)
{
	static uint64_t seg[WIN_MEM_SIZE / PAGE / 2 + 1][2];
	uint8_t *mem = calloc(1, WIN_MEM_SIZE);
	char err[256];
	size_t stub_len, n;
	uint64_t off;
	FILE *f;

	if (argc != 4)
		die("usage: svmtrace-e2e-winpvh IMAGE.elf STUB.bin OUT.pvh");
	if (!mem)
		die("out of memory");
	if (win_image_load(mem, WIN_MEM_SIZE, argv[1], err, sizeof(err)))
		die(err);
	/* SeaBIOS owns low memory beyond the copy; the stub's pages are ours. */
	if (!zero_range(mem, WIN_PVH_LOW_SIZE, 0x100000) ||
	    !zero_range(mem, WIN_PVH_STUB_PA, WIN_PVH_END))
		die("the image uses memory the boot stub needs (winpvh.h)");
	f = fopen(argv[2], "rb");
	if (!f)
		die("cannot open the stub");
	stub_len = fread(mem + WIN_PVH_STUB_PA, 1, WIN_PVH_STUB_MAX + 1, f);
	fclose(f);
	if (!stub_len || stub_len > WIN_PVH_STUB_MAX)
		die("the stub is empty or larger than WIN_PVH_STUB_MAX");
	memcpy(mem + WIN_PVH_LOW_PA, mem, WIN_PVH_LOW_SIZE);
	n = runs(mem, seg, sizeof(seg) / sizeof(seg[0]));

	f = fopen(argv[3], "wb");
	if (!f)
		die("cannot create the output");
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_entry = WIN_PVH_STUB_PA,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = (Elf64_Half)(n + 1),
	};
	struct pvh_note note = {
		.hdr = { .n_namesz = 4, .n_descsz = 8, .n_type = XEN_ELFNOTE_PHYS32_ENTRY },
		.name = "Xen",
		.entry = WIN_PVH_STUB_PA,
	};
	off = sizeof(eh) + (n + 1) * sizeof(Elf64_Phdr);
	put(f, &eh, sizeof(eh));
	Elf64_Phdr ph = {
		.p_type = PT_NOTE, .p_offset = off, .p_filesz = sizeof(note), .p_align = 4
	};
	put(f, &ph, sizeof(ph));
	off = (off + sizeof(note) + PAGE - 1) & ~(PAGE - 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t len = seg[i][1] - seg[i][0];

		ph = (Elf64_Phdr){ .p_type = PT_LOAD,
				   .p_flags = PF_R | PF_W | PF_X,
				   .p_offset = off,
				   .p_vaddr = seg[i][0],
				   .p_paddr = seg[i][0],
				   .p_filesz = len,
				   .p_memsz = len,
				   .p_align = PAGE };
		put(f, &ph, sizeof(ph));
		off += len;
	}
	put(f, &note, sizeof(note));
	for (size_t i = 0; i < n; i++) {
		if (!i && fseek(f, (long)((ftell(f) + PAGE - 1) & ~(PAGE - 1)), SEEK_SET))
			die("seek failed");
		put(f, mem + seg[i][0], seg[i][1] - seg[i][0]);
	}
	if (fclose(f))
		die("write failed");
	free(mem);
	return 0;
}
