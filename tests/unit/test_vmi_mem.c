// SPDX-License-Identifier: GPL-2.0
/* Memory drivers (raw, QEMU ELF core) and the x86-64 page walker. */
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/x86_walk.h"
#include "../vmi/unit_fixture.h"

#include <check.h>
#include <elf.h>

#define MEM_SIZE (8ULL << 20)

START_TEST(raw_reads_and_bounds)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	uint8_t buf[64] = { 0 }, out[8];

	buf[60] = 0xab;
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(buf, sizeof(buf), "b", &mem, &err), 0);
	ck_assert_str_eq(svmtrace_vmi_mem_kind(mem), "raw");
	ck_assert_uint_eq(svmtrace_vmi_mem_vcpu_count(mem), 0);
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 56, out, 8, &err), 0);
	ck_assert_uint_eq(out[4], 0xab);
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 60, out, 8, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "GPA 0x40 is outside the memory in b"), "%s",
		      err.message);
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, UINT64_MAX - 2, out, 8, &err),
			 SVMTRACE_E_NOT_FOUND);
	svmtrace_vmi_mem_close(mem);
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(buf, 0, "e", &mem, &err), SVMTRACE_E_FORMAT);
}
END_TEST

/* An ELF core with two PT_LOADs (one with p_filesz < p_memsz) and notes. */
static size_t make_core(uint8_t *f, int qemu_size, int overlap)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)f;
	Elf64_Phdr *ph = (Elf64_Phdr *)(f + sizeof(*eh));
	uint8_t *n = f + 0x200;
	uint32_t w[3];
	uint64_t v;

	memset(f, 0, 0x4000);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 3;
	/* QEMU note: version 1, size, cr3 at 416, gs.base 264, idt.base 384, kgs 432 */
	w[0] = 5, w[1] = (uint32_t)qemu_size, w[2] = 0;
	memcpy(n, w, 12);
	memcpy(n + 12, "QEMU", 5);
	w[0] = 1, w[1] = (uint32_t)qemu_size;
	memcpy(n + 20, w, 8);
	v = 0x5002;
	memcpy(n + 20 + 416, &v, 8);
	v = 0xfffff80000001000ULL;
	memcpy(n + 20 + 264, &v, 8);
	v = 0xfffff80000002000ULL;
	memcpy(n + 20 + 384, &v, 8);
	v = 0xfffff80000003000ULL;
	memcpy(n + 20 + 432, &v, 8);
	ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE,
			      .p_offset = 0x200,
			      .p_filesz = 20 + (((uint64_t)qemu_size + 3) & ~3ULL) };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD,
			      .p_offset = 0x1000,
			      .p_paddr = 0x100000,
			      .p_filesz = 0x1000,
			      .p_memsz = 0x1000 };
	ph[2] = (Elf64_Phdr){ .p_type = PT_LOAD,
			      .p_offset = 0x2000,
			      .p_paddr = overlap ? 0x100800 : 0x200000,
			      .p_filesz = 0x1000,
			      .p_memsz = 0x2000 };
	f[0x1000] = 0x11;
	f[0x2fff] = 0x22;
	return 0x3000;
}

START_TEST(elf_core_segments_and_notes)
{
	static uint8_t f[0x4000];
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	const struct svmtrace_vmi_vcpu *v;
	uint8_t b[2];
	size_t len = make_core(f, 440, 0);

	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err), 0);
	ck_assert_str_eq(svmtrace_vmi_mem_kind(mem), "qemu-elf-core");
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x100000, b, 1, &err), 0);
	ck_assert_uint_eq(b[0], 0x11);
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x200fff, b, 2, &err), 0);
	ck_assert_uint_eq(b[0], 0x22);
	ck_assert_uint_eq(b[1], 0); /* beyond p_filesz reads as zero */
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x101000, b, 1, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_uint_eq(svmtrace_vmi_mem_vcpu_count(mem), 1);
	v = svmtrace_vmi_mem_vcpu(mem, 0);
	ck_assert_uint_eq(v->cr3, 0x5002);
	ck_assert_uint_eq(v->gs_base, 0xfffff80000001000ULL);
	ck_assert_uint_eq(v->idtr_base, 0xfffff80000002000ULL);
	ck_assert_uint_eq(v->kernel_gs_base, 0xfffff80000003000ULL);
	ck_assert(v->valid & SVMTRACE_VMI_REG_KERNEL_GS_BASE);
	svmtrace_vmi_mem_close(mem);

	len = make_core(f, 432, 0); /* QEMU 7.2: no kernel_gs_base */
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err), 0);
	ck_assert(!(svmtrace_vmi_mem_vcpu(mem, 0)->valid & SVMTRACE_VMI_REG_KERNEL_GS_BASE));
	svmtrace_vmi_mem_close(mem);
}
END_TEST

START_TEST(elf_core_rejects_bad_files)
{
	static uint8_t f[0x4000];
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	size_t len = make_core(f, 440, 1);

	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err),
			 SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "overlap"), "%s", err.message);
	len = make_core(f, 100, 0);
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err),
			 SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "QEMU CPU note of 100 bytes"), "%s", err.message);
	len = make_core(f, 440, 0);
	((Elf64_Phdr *)(f + sizeof(Elf64_Ehdr)))[0].p_filesz = 8; /* note cut short */
	f[0x200 + 4] = 0xff;					  /* descsz huge */
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err),
			 SVMTRACE_E_FORMAT);
	len = make_core(f, 440, 0);
	((Elf64_Ehdr *)f)->e_machine = EM_AARCH64;
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err),
			 SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "x86-64"), "%s", err.message);
}
END_TEST

/*
 * QEMU's EM_386 cores (vCPU 0 not in long mode): ELF64 on PC machines, ELF32
 * when no memory lies above 4 GiB.  Memory reads; the registers are not
 * taken, and the source says why.
 */
START_TEST(elf_core_em386_reads_memory_without_registers)
{
	static uint8_t f[0x4000];
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	Elf32_Ehdr *eh = (Elf32_Ehdr *)f;
	Elf32_Phdr *ph = (Elf32_Phdr *)(f + sizeof(*eh));
	size_t len = make_core(f, 440, 0);
	uint8_t out[4];

	((Elf64_Ehdr *)f)->e_machine = EM_386;
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, len, "core", &mem, &err), 0);
	ck_assert_uint_eq(svmtrace_vmi_mem_vcpu_count(mem), 1);
	ck_assert_uint_eq(svmtrace_vmi_mem_vcpu(mem, 0)->valid, 0);
	ck_assert_ptr_nonnull(strstr(mem->vcpu_note, "vCPU 0 was not in long mode"));
	svmtrace_vmi_mem_close(mem);

	/* ELF32: one PT_LOAD of 0x1000 bytes at GPA 0x2000, file offset 0x1000 */
	memset(f, 0, sizeof(f));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_386;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_LOAD;
	ph->p_offset = 0x1000;
	ph->p_paddr = 0x2000;
	ph->p_filesz = ph->p_memsz = 0x1000;
	memcpy(f + 0x1000 + 0x10, "\x12\x34\x56\x78", 4);
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, 0x2000, "core32", &mem, &err), 0);
	ck_assert_str_eq(svmtrace_vmi_mem_kind(mem), "qemu-elf-core");
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x2010, out, 4, &err), 0);
	ck_assert_mem_eq(out, "\x12\x34\x56\x78", 4);
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x1010, out, 4, &err), SVMTRACE_E_NOT_FOUND);
	svmtrace_vmi_mem_close(mem);

	/* ELF32 is only QEMU's for EM_386 */
	eh->e_machine = EM_X86_64;
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(f, 0x2000, "core32", &mem, &err),
			 SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "ELF32 type 4 machine 62"), "%s", err.message);
}
END_TEST

/* @va translates through @root (@levels levels) to @gpa in a page of @size. */
static void expect_translation(const struct svmtrace_vmi_mem *mem, uint64_t root, int levels,
			       uint64_t va, uint64_t gpa, uint64_t size)
{
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;

	ck_assert_msg(!x86_translate(mem, root, levels, va, NULL, &t, &err), "%s", err.message);
	ck_assert_uint_eq(t.gpa, gpa);
	ck_assert_uint_eq(t.page_size, size);
}

START_TEST(walks_4k_2m_1g_and_masks_pcid)
{
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	struct fx_mem m;
	uint64_t pml4;

	fx_init(&m, MEM_SIZE, 0x1000);
	pml4 = fx_page(&m);
	fx_map(&m, pml4, 0x00007ff612345000ULL, 0x300000, 1, 0);
	fx_map(&m, pml4, 0xfffff80000200000ULL, 0x400000, 2, 0);
	fx_map(&m, pml4, 0x0000004000000000ULL, 0x40000000, 3, 0);
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(m.buf, m.size, "m", &mem, &err), 0);

	expect_translation(mem, pml4 | 0x5, 4, 0x00007ff612345678ULL, 0x300678, 4096);
	expect_translation(mem, pml4, 4, 0xfffff80000212345ULL, 0x412345, 2ULL << 20);
	expect_translation(mem, pml4, 4, 0x0000004000abcdefULL, 0x40abcdef, 1ULL << 30);

	ck_assert_int_eq(x86_translate(mem, pml4, 4, 0x00007ff612346000ULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "PTE 0x0 not present"), "%s", err.message);
	ck_assert_uint_eq(t.page_size, 4096);
	ck_assert_int_eq(x86_translate(mem, pml4, 4, 0x0000100000000000ULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_uint_eq(t.page_size, 512ULL << 30); /* a whole PML4E's hole */
	ck_assert_int_eq(x86_translate(mem, pml4, 4, 0x0000800000000000ULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "not canonical"), "%s", err.message);
	/* A table outside memory is an error, not a crash. */
	ck_assert_int_eq(x86_translate(mem, 0x7ffff000000ULL, 4, 0x1000, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "outside the memory"), "%s", err.message);
	svmtrace_vmi_mem_close(mem);
	free(m.buf);
}
END_TEST

/* CR4.LA57: a PML5 on top, 57-bit canonical addresses. */
START_TEST(walks_five_levels)
{
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	struct fx_mem m;
	uint64_t pml5;

	fx_init(&m, MEM_SIZE, 0x1000);
	pml5 = fx_page(&m);
	fx_map_in(&m, pml5, 5, 0x00ff812345678000ULL, 0x300000, 1, 0); /* above 48 bits */
	fx_map_in(&m, pml5, 5, 0xff00000000200000ULL, 0x400000, 2, 0);
	fx_map_in(&m, pml5, 5, 0xfffff80412600000ULL, 0x500000, 1, 0); /* a 48-bit kernel VA */
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(m.buf, m.size, "m", &mem, &err), 0);

	expect_translation(mem, pml5 | 2, 5, 0x00ff812345678abcULL, 0x300abc, 4096);
	expect_translation(mem, pml5, 5, 0xff00000000212345ULL, 0x412345, 2ULL << 20);
	expect_translation(mem, pml5, 5, 0xfffff80412600010ULL, 0x500010, 4096);
	/* A hole a whole PML5E wide; addresses canonical only with five levels. */
	ck_assert_int_eq(x86_translate(mem, pml5, 5, 0x0001000000000000ULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "PML5E 0x0 not present"), "%s", err.message);
	ck_assert_uint_eq(t.page_size, 1ULL << 48);
	ck_assert_int_eq(x86_translate(mem, pml5, 4, 0x00ff812345678abcULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "not canonical (4-level"), "%s", err.message);
	ck_assert_int_eq(x86_translate(mem, pml5, 5, 0x0100000000000000ULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "not canonical (5-level"), "%s", err.message);
	/* The same root read as four levels is not the same address space. */
	ck_assert_int_eq(x86_translate(mem, pml5, 4, 0xfffff80412600010ULL, NULL, &t, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_int_eq(x86_translate(mem, pml5, 3, 0x1000, NULL, &t, &err), SVMTRACE_E_INVALID);
	ck_assert_int_eq(x86_paging_levels(0x1000 | 0x20), 5);
	ck_assert_int_eq(x86_paging_levels(0x20), 4);
	svmtrace_vmi_mem_close(mem);
	free(m.buf);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		raw_reads_and_bounds,	       elf_core_segments_and_notes,
		elf_core_rejects_bad_files,    elf_core_em386_reads_memory_without_registers,
		walks_4k_2m_1g_and_masks_pcid, walks_five_levels
	};

	return fx_run("vmi-mem", NULL, NULL, tests, sizeof(tests) / sizeof(tests[0]));
}
