// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU's ELF core, as `virsh dump --memory-only --format=elf` (QEMU's
 * dump-guest-memory) writes it: ELF64 ET_CORE for EM_X86_64, PT_LOAD
 * segments whose p_paddr is the guest-physical address, and one PT_NOTE
 * with, per vCPU, an NT_PRSTATUS "CORE" note and a "QEMU" note holding
 * QEMU's CPU state (QEMUCPUState in QEMU's target/i386/arch_dump.c).
 * Every field is bounds-checked: the file is untrusted input.
 */
#include "lib/common/le.h"
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/vmi_error.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

/*
 * QEMUCPUState (version 1): version, size, 16 GPRs, rip, rflags, ten
 * 24-byte segments (cs ds es fs gs ss ldt tr gdt idt; base at +16), cr[5],
 * then kernel_gs_base in QEMU versions that added it (size says so).
 */
#define QEMU_CPUSTATE_VERSION 1
#define QEMU_SEG_BASE(i)      (152 + 24 * (i) + 16)
#define QEMU_GS_BASE	      QEMU_SEG_BASE(4)
#define QEMU_IDT_BASE	      QEMU_SEG_BASE(9)
#define QEMU_CR(n)	      (392 + 8 * (n))
#define QEMU_KERNEL_GS_BASE   432
#define QEMU_CPUSTATE_MIN     QEMU_KERNEL_GS_BASE

/* x86_64 elf_prstatus: 112 bytes, then user_regs_struct (gs_base is #22). */
#define PRSTATUS_REGS	 112
#define PRSTATUS_GS_BASE (PRSTATUS_REGS + 22 * 8)
#define PRSTATUS_SIZE	 336

#define MAX_VCPUS 4096

bool mem_is_elf(const uint8_t *buf, size_t len)
{
	return len >= SELFMAG && !memcmp(buf, ELFMAG, SELFMAG);
}

/* vCPU @index, growing the array as notes arrive. */
static struct svmtrace_vmi_vcpu *vcpu_at(struct svmtrace_vmi_mem *mem, unsigned int index,
					 struct svmtrace_error *err)
{
	if (index >= MAX_VCPUS) {
		vmi_fail(err, SVMTRACE_E_FORMAT, "%s: more than %d vCPU notes", mem->name,
			 MAX_VCPUS);
		return NULL;
	}
	if (index >= mem->nr_vcpus) {
		struct svmtrace_vmi_vcpu *v = realloc(mem->vcpus, (index + 1) * sizeof(*v));

		if (!v) {
			vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", mem->name);
			return NULL;
		}
		memset(v + mem->nr_vcpus, 0, (index + 1 - mem->nr_vcpus) * sizeof(*v));
		mem->vcpus = v;
		mem->nr_vcpus = index + 1;
	}
	return &mem->vcpus[index];
}

static int note_qemu(struct svmtrace_vmi_mem *mem, unsigned int index, const uint8_t *desc,
		     uint32_t descsz, uint64_t where, struct svmtrace_error *err)
{
	struct svmtrace_vmi_vcpu *v;
	uint32_t size;

	if (descsz < QEMU_CPUSTATE_MIN || le32(desc) != QEMU_CPUSTATE_VERSION)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: offset 0x%llx: QEMU CPU note of %u bytes, version %u "
				"(expected version %d, at least %d bytes)",
				mem->name, (unsigned long long)where, descsz,
				descsz >= 4 ? le32(desc) : 0, QEMU_CPUSTATE_VERSION,
				QEMU_CPUSTATE_MIN);
	size = le32(desc + 4);
	if (size > descsz || size < QEMU_CPUSTATE_MIN)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: offset 0x%llx: QEMU CPU note says size %u, note holds %u",
				mem->name, (unsigned long long)where, size, descsz);
	v = vcpu_at(mem, index, err);
	if (!v)
		return err ? err->status : SVMTRACE_E_NOMEM;
	v->cr3 = le64(desc + QEMU_CR(3));
	v->gs_base = le64(desc + QEMU_GS_BASE);
	v->idtr_base = le64(desc + QEMU_IDT_BASE);
	v->valid |= SVMTRACE_VMI_REG_CR3 | SVMTRACE_VMI_REG_GS_BASE | SVMTRACE_VMI_REG_IDTR;
	if (size >= QEMU_KERNEL_GS_BASE + 8) {
		v->kernel_gs_base = le64(desc + QEMU_KERNEL_GS_BASE);
		v->valid |= SVMTRACE_VMI_REG_KERNEL_GS_BASE;
	}
	return 0;
}

static int note_prstatus(struct svmtrace_vmi_mem *mem, unsigned int index, const uint8_t *desc,
			 uint32_t descsz, uint64_t where, struct svmtrace_error *err)
{
	struct svmtrace_vmi_vcpu *v;

	if (descsz < PRSTATUS_SIZE)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: offset 0x%llx: NT_PRSTATUS note of %u bytes, expected %d "
				"(x86-64)",
				mem->name, (unsigned long long)where, descsz, PRSTATUS_SIZE);
	v = vcpu_at(mem, index, err);
	if (!v)
		return err ? err->status : SVMTRACE_E_NOMEM;
	if (!(v->valid & SVMTRACE_VMI_REG_GS_BASE)) {
		v->gs_base = le64(desc + PRSTATUS_GS_BASE);
		v->valid |= SVMTRACE_VMI_REG_GS_BASE;
	}
	return 0;
}

/* Walk the notes of one PT_NOTE segment at file bytes [off, off + size). */
static int parse_notes(struct svmtrace_vmi_mem *mem, uint64_t off, uint64_t size,
		       unsigned int *nr_core, unsigned int *nr_qemu, struct svmtrace_error *err)
{
	const uint8_t *p = mem->map + off;
	uint64_t pos = 0;
	int rc = 0;

	while (!rc && size - pos >= 12) {
		uint32_t namesz = le32(p + pos), descsz = le32(p + pos + 4);
		uint32_t type = le32(p + pos + 8);
		uint64_t name_at = pos + 12;
		uint64_t desc_at = name_at + (((uint64_t)namesz + 3) & ~3ULL);
		uint64_t next = desc_at + (((uint64_t)descsz + 3) & ~3ULL);

		if (desc_at > size || next > size)
			return vmi_fail(err, SVMTRACE_E_FORMAT,
					"%s: offset 0x%llx: note (name %u, desc %u bytes) runs "
					"past its PT_NOTE segment",
					mem->name, (unsigned long long)(off + pos), namesz, descsz);
		if (namesz == 5 && !memcmp(p + name_at, "CORE", 5) && type == NT_PRSTATUS)
			rc = note_prstatus(mem, (*nr_core)++, p + desc_at, descsz, off + pos, err);
		else if (namesz == 5 && !memcmp(p + name_at, "QEMU", 5) && type == 0)
			rc = note_qemu(mem, (*nr_qemu)++, p + desc_at, descsz, off + pos, err);
		pos = next;
	}
	if (!rc && pos != size)
		rc = vmi_fail(err, SVMTRACE_E_FORMAT,
			      "%s: offset 0x%llx: %llu stray bytes at the end of the PT_NOTE "
			      "segment",
			      mem->name, (unsigned long long)(off + pos),
			      (unsigned long long)(size - pos));
	return rc;
}

/* e_phnum, or the real count from section 0 when it is PN_XNUM. */
static int phdr_count(const struct svmtrace_vmi_mem *mem, const Elf64_Ehdr *eh, uint64_t *count,
		      struct svmtrace_error *err)
{
	Elf64_Shdr sh;

	*count = eh->e_phnum;
	if (eh->e_phnum != PN_XNUM)
		return 0;
	if (eh->e_shoff == 0 || eh->e_shoff > mem->map_len ||
	    mem->map_len - eh->e_shoff < sizeof(sh))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: e_phnum is PN_XNUM but section header 0 is missing",
				mem->name);
	memcpy(&sh, mem->map + eh->e_shoff, sizeof(sh));
	*count = sh.sh_info;
	return 0;
}

static int check_header(const struct svmtrace_vmi_mem *mem, const Elf64_Ehdr *eh,
			struct svmtrace_error *err)
{
	if (mem->map_len < sizeof(*eh) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: ELF file is not 64-bit little-endian (QEMU writes ELF64 "
				"cores for x86-64 guests)",
				mem->name);
	if (eh->e_type != ET_CORE || eh->e_machine != EM_X86_64)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: ELF type %u machine %u, expected a core file (ET_CORE=%d) "
				"for x86-64 (EM_X86_64=%d)",
				mem->name, eh->e_type, eh->e_machine, ET_CORE, EM_X86_64);
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return vmi_fail(err, SVMTRACE_E_FORMAT, "%s: e_phentsize %u, expected %zu",
				mem->name, eh->e_phentsize, sizeof(Elf64_Phdr));
	return 0;
}

int mem_elfcore_parse(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	unsigned int nr_core = 0, nr_qemu = 0;
	uint64_t count, i;
	Elf64_Ehdr eh;
	int rc;

	memset(&eh, 0, sizeof(eh));
	memcpy(&eh, mem->map, mem->map_len < sizeof(eh) ? mem->map_len : sizeof(eh));
	rc = check_header(mem, &eh, err);
	if (!rc)
		rc = phdr_count(mem, &eh, &count, err);
	if (rc)
		return rc;
	if (eh.e_phoff > mem->map_len || count > (mem->map_len - eh.e_phoff) / sizeof(Elf64_Phdr))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: %llu program headers at offset 0x%llx run past the end "
				"of the file (%zu bytes)",
				mem->name, (unsigned long long)count,
				(unsigned long long)eh.e_phoff, mem->map_len);
	mem->ranges = calloc(count ? count : 1, sizeof(*mem->ranges));
	if (!mem->ranges)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", mem->name);
	for (i = 0; i < count; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, mem->map + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_memsz) {
			struct vmi_mem_range *r = &mem->ranges[mem->nr_ranges++];

			r->gpa = ph.p_paddr;
			r->mem_size = ph.p_memsz;
			r->offset = ph.p_offset;
			r->file_size = ph.p_filesz;
		} else if (ph.p_type == PT_NOTE) {
			if (ph.p_offset > mem->map_len || ph.p_filesz > mem->map_len - ph.p_offset)
				return vmi_fail(err, SVMTRACE_E_FORMAT,
						"%s: PT_NOTE at offset 0x%llx size 0x%llx runs "
						"past the end of the file",
						mem->name, (unsigned long long)ph.p_offset,
						(unsigned long long)ph.p_filesz);
			rc = parse_notes(mem, ph.p_offset, ph.p_filesz, &nr_core, &nr_qemu, err);
			if (rc)
				return rc;
		}
	}
	if (!mem->nr_ranges)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: ELF core without PT_LOAD segments holds no guest memory",
				mem->name);
	return mem_ranges_finish(mem, err);
}
