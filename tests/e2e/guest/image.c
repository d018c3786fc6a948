// SPDX-License-Identifier: GPL-2.0
/*
 * Lay out the lab guest in memory (see layout.h): GDT with kernel, user and
 * TSS descriptors, one TSS per vCPU, an IDT whose vectors 1, 2, 3, 6, 13, 14
 * and INT_VECTOR are the kernel's #DB, NMI, #BP, #UD, #GP, #PF and INT n
 * handlers,
 * IRQ_VECTOR its external interrupt handler, and whose other
 * vectors report a panic, 4-level page tables
 * with 4 KiB pages (and a second PML4 sharing them: another CR3 that maps
 * the same memory) but for the lazy pages, then the kernel and program
 * images.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "layout.h"

#define PTE_P (1ull << 0)
#define PTE_W (1ull << 1)
#define PTE_U (1ull << 2)

static void put64(uint8_t *mem, uint64_t gpa, uint64_t v)
{
	memcpy(mem + gpa, &v, sizeof(v));
}

/* A flat 64-bit code or data segment descriptor. */
static uint64_t seg_desc(unsigned int dpl, int code)
{
	uint64_t d = 0xffffull | (0xfull << 48); /* limit 0xfffff, G below */

	d |= 1ull << 47; /* present */
	d |= (uint64_t)dpl << 45;
	d |= 1ull << 44;		     /* code/data, not system */
	d |= (code ? 0xaull : 0x2ull) << 40; /* execute/read or read/write */
	d |= 1ull << 55;		     /* granularity 4 KiB */
	if (code)
		d |= 1ull << 53; /* L: 64-bit code */
	else
		d |= 1ull << 54; /* D/B for data */
	return d;
}

static void build_gdt(uint8_t *mem)
{
	put64(mem, GDT_GPA + SEL_KERNEL_CS, seg_desc(0, 1));
	put64(mem, GDT_GPA + SEL_KERNEL_SS, seg_desc(0, 0));
	put64(mem, GDT_GPA + (SEL_USER_SS & ~3), seg_desc(3, 0));
	put64(mem, GDT_GPA + (SEL_USER_CS & ~3), seg_desc(3, 1));
	for (int cpu = 0; cpu < MAX_VCPUS; cpu++) {
		uint64_t base = TSS_GPA(cpu), limit = 103;
		uint64_t lo = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x9ull << 40) |
			      (1ull << 47) | (((base >> 24) & 0xff) << 56);

		put64(mem, GDT_GPA + SEL_TSS(cpu), lo); /* available 64-bit TSS */
		put64(mem, GDT_GPA + SEL_TSS(cpu) + 8, base >> 32);
		put64(mem, TSS_GPA(cpu) + 4, KSTACK_TOP(cpu)); /* RSP0 */
		mem[TSS_GPA(cpu) + 102] = 104;		       /* I/O map base: none */
	}
}

static void build_idt(uint8_t *mem)
{
	for (int v = 0; v < IDT_VECTORS; v++) {
		uint64_t h = v == 1	     ? KERNEL_DB_HANDLER
			     : v == 2	     ? KERNEL_NMI_HANDLER
			     : v == 6	     ? KERNEL_UD_HANDLER
			     : v == 13	     ? KERNEL_GP_HANDLER
			     : v == 14	     ? KERNEL_PF_HANDLER
			     : v == 3	     ? KERNEL_BP_HANDLER
			     : v == IRQ_VECTOR ? KERNEL_IRQ_HANDLER
			     : v == INT_VECTOR ? KERNEL_INT_HANDLER
					     : KERNEL_EXC_STUBS + v * KERNEL_EXC_STUB_SIZE;
		uint64_t dpl = v == INT_VECTOR || v == 3 ? 3 : 0;
		uint64_t lo = (h & 0xffff) | ((uint64_t)SEL_KERNEL_CS << 16) | (0xeull << 40) |
			      (dpl << 45) | (1ull << 47) | (((h >> 16) & 0xffff) << 48);

		/* 64-bit interrupt gate; only INT_VECTOR and INT3 may be raised from CPL 3 */
		put64(mem, IDT_GPA + v * 16, lo);
		put64(mem, IDT_GPA + v * 16 + 8, h >> 32);
	}
}

static void build_page_tables(uint8_t *mem, int cpl0)
{
	/* A program at CPL 0 is kernel code: on user pages SMEP and SMAP fault it. */
	uint64_t user = cpl0 ? 0 : PTE_U;

	put64(mem, PML4_GPA, PDPT_GPA | PTE_P | PTE_W | PTE_U);
	put64(mem, PML4_ALT_GPA, PDPT_GPA | PTE_P | PTE_W | PTE_U);
	put64(mem, PDPT_GPA, PD_GPA | PTE_P | PTE_W | PTE_U);
	put64(mem, PD_GPA + 0 * 8, PT_KERNEL_GPA | PTE_P | PTE_W | PTE_U);
	put64(mem, PD_GPA + (USER_VA >> 21) * 8, PT_USER_GPA | PTE_P | PTE_W | PTE_U);
	/* Kernel: identity, supervisor only; page 0 stays unmapped. */
	for (uint64_t i = 1; i < 512; i++)
		put64(mem, PT_KERNEL_GPA + i * 8, (i << 12) | PTE_P | PTE_W);
	for (uint64_t i = 0; i < USER_SPAN >> 12; i++)
		put64(mem, PT_USER_GPA + i * 8, (USER_GPA + (i << 12)) | PTE_P | PTE_W | user);
	/* User: the device page above the stacks. */
	put64(mem, PT_USER_GPA + ((MMIO_VA - USER_VA) >> 12) * 8, MMIO_GPA | PTE_P | PTE_W | user);
	/* The lazy pages: mapped by the kernel at their first touch (layout.h). */
	for (uint64_t i = 0; i < LAZY_PAGES; i++)
		put64(mem, PT_USER_GPA + ((LAZY_PTE_VA - USER_VA) >> 12 << 3) + i * 8, 0);
}

/* Read a whole flat image of at most max bytes to dst. */
static int load_file(uint8_t *dst, const char *path, size_t max, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	size_t n;
	int failed;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(dst, 1, max, f);
	failed = ferror(f) || n == 0 || fgetc(f) != EOF;
	if (failed)
		snprintf(err, errlen, "%s: %s", path,
			 ferror(f) ? strerror(errno)
			 : n	   ? "larger than its slot in guest memory (guest/layout.h)"
				   : "empty file");
	fclose(f);
	return failed ? -1 : 0;
}

int guest_image_load(uint8_t *mem, const char *kernel_path, const char *program_path, int cpl0,
		     char *err, size_t errlen)
{
	if (load_file(mem + KERNEL_GPA, kernel_path, KERNEL_MAX, err, errlen) ||
	    load_file(mem + USER_GPA, program_path, USER_MAX, err, errlen))
		return -1;
	build_gdt(mem);
	build_idt(mem);
	build_page_tables(mem, cpl0);
	return 0;
}
