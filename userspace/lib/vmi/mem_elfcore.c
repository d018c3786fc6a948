// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU's ELF core, as `virsh dump --memory-only --format=elf` (QEMU's
 * dump-guest-memory) writes it: ELF64 ET_CORE for EM_X86_64, PT_LOAD
 * segments whose p_paddr is the guest-physical address, and one PT_NOTE
 * with, per vCPU, an NT_PRSTATUS "CORE" note and a "QEMU" note holding
 * QEMU's CPU state (QEMUCPUState in QEMU's target/i386/arch_dump.c).
 *
 * When vCPU 0 is not in long mode at the dump (firmware, a guest stopped
 * before it started), QEMU writes EM_386 instead, with 32-bit notes, and
 * ELF32 when no memory lies above 4 GiB (ELF64 otherwise; a PC machine's
 * firmware ends at 4 GiB, so ELF64 is what it writes there).  Its memory is
 * the same, so such a core is read too; its registers are not a 64-bit
 * kernel's and are not used (kernel discovery then says why).
 *
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
	if (mem->vcpu_note)
		return 0; /* EM_386: not a 64-bit kernel's registers */
	v->cr3 = le64(desc + QEMU_CR(3));
	v->cr4 = le64(desc + QEMU_CR(4));
	v->gs_base = le64(desc + QEMU_GS_BASE);
	v->idtr_base = le64(desc + QEMU_IDT_BASE);
	v->valid |= SVMTRACE_VMI_REG_CR3 | SVMTRACE_VMI_REG_CR4 | SVMTRACE_VMI_REG_GS_BASE |
		    SVMTRACE_VMI_REG_IDTR;
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

	if (mem->vcpu_note) /* EM_386: a 32-bit prstatus, nothing 64-bit in it */
		return vcpu_at(mem, index, err) ? 0 : (err ? err->status : SVMTRACE_E_NOMEM);

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

/* What the parser needs of the ELF header, from ELF32 or ELF64. */
struct elf_head {
	bool is64;
	uint64_t phoff, shoff;
	uint64_t phnum;
	size_t phentsize, shentsize;
};

/* One program header, from ELF32 or ELF64. */
struct elf_phdr {
	uint32_t type;
	uint64_t offset, paddr, filesz, memsz;
};

static int read_header(struct svmtrace_vmi_mem *mem, struct elf_head *h, struct svmtrace_error *err)
{
	const uint8_t *e = mem->map;
	uint16_t type, machine, phentsize, phnum;

	if (mem->map_len <= EI_DATA || e[EI_DATA] != ELFDATA2LSB ||
	    (e[EI_CLASS] != ELFCLASS64 && e[EI_CLASS] != ELFCLASS32))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: not a little-endian ELF32/ELF64 file (QEMU writes ELF64 "
				"cores for x86-64 guests)",
				mem->name);
	if (mem->map_len < (e[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: ELF%d file of %zu bytes is shorter than its ELF header",
				mem->name, e[EI_CLASS] == ELFCLASS64 ? 64 : 32, mem->map_len);
	h->is64 = e[EI_CLASS] == ELFCLASS64;
	type = le16(e + offsetof(Elf64_Ehdr, e_type));
	machine = le16(e + offsetof(Elf64_Ehdr, e_machine));
	if (h->is64) {
		h->phoff = le64(e + offsetof(Elf64_Ehdr, e_phoff));
		h->shoff = le64(e + offsetof(Elf64_Ehdr, e_shoff));
		phentsize = le16(e + offsetof(Elf64_Ehdr, e_phentsize));
		phnum = le16(e + offsetof(Elf64_Ehdr, e_phnum));
		h->phentsize = sizeof(Elf64_Phdr);
		h->shentsize = sizeof(Elf64_Shdr);
	} else {
		h->phoff = le32(e + offsetof(Elf32_Ehdr, e_phoff));
		h->shoff = le32(e + offsetof(Elf32_Ehdr, e_shoff));
		phentsize = le16(e + offsetof(Elf32_Ehdr, e_phentsize));
		phnum = le16(e + offsetof(Elf32_Ehdr, e_phnum));
		h->phentsize = sizeof(Elf32_Phdr);
		h->shentsize = sizeof(Elf32_Shdr);
	}
	if (type != ET_CORE || (machine != EM_X86_64 && machine != EM_386) ||
	    (machine == EM_X86_64 && !h->is64))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: ELF%d type %u machine %u, expected a QEMU core file "
				"(ET_CORE=%d) for x86-64 (ELF64 EM_X86_64=%d, or EM_386=%d when "
				"vCPU 0 was not in long mode)",
				mem->name, h->is64 ? 64 : 32, type, machine, ET_CORE, EM_X86_64,
				EM_386);
	if (machine == EM_386)
		mem->vcpu_note = "QEMU wrote an EM_386 core: vCPU 0 was not in long mode when "
				 "dumped, so no vCPU holds a 64-bit kernel's registers";
	if (phentsize != h->phentsize)
		return vmi_fail(err, SVMTRACE_E_FORMAT, "%s: e_phentsize %u, expected %zu",
				mem->name, phentsize, h->phentsize);
	h->phnum = phnum;
	if (phnum != PN_XNUM)
		return 0;
	/* e_phnum is PN_XNUM: the real count is section 0's sh_info. */
	if (h->shoff == 0 || h->shoff > mem->map_len || mem->map_len - h->shoff < h->shentsize)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: e_phnum is PN_XNUM but section header 0 is missing",
				mem->name);
	h->phnum = le32(mem->map + h->shoff +
			(h->is64 ? offsetof(Elf64_Shdr, sh_info) : offsetof(Elf32_Shdr, sh_info)));
	return 0;
}

static void read_phdr(const struct svmtrace_vmi_mem *mem, const struct elf_head *h, uint64_t i,
		      struct elf_phdr *ph)
{
	const uint8_t *p = mem->map + h->phoff + i * h->phentsize;

	ph->type = le32(p);
	if (h->is64) {
		ph->offset = le64(p + offsetof(Elf64_Phdr, p_offset));
		ph->paddr = le64(p + offsetof(Elf64_Phdr, p_paddr));
		ph->filesz = le64(p + offsetof(Elf64_Phdr, p_filesz));
		ph->memsz = le64(p + offsetof(Elf64_Phdr, p_memsz));
	} else {
		ph->offset = le32(p + offsetof(Elf32_Phdr, p_offset));
		ph->paddr = le32(p + offsetof(Elf32_Phdr, p_paddr));
		ph->filesz = le32(p + offsetof(Elf32_Phdr, p_filesz));
		ph->memsz = le32(p + offsetof(Elf32_Phdr, p_memsz));
	}
}

int mem_elfcore_parse(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	unsigned int nr_core = 0, nr_qemu = 0;
	struct elf_head h;
	uint64_t i;
	int rc;

	memset(&h, 0, sizeof(h));
	rc = read_header(mem, &h, err);
	if (rc)
		return rc;
	if (h.phoff > mem->map_len || h.phnum > (mem->map_len - h.phoff) / h.phentsize)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"%s: %llu program headers at offset 0x%llx run past the end "
				"of the file (%zu bytes)",
				mem->name, (unsigned long long)h.phnum, (unsigned long long)h.phoff,
				mem->map_len);
	mem->ranges = calloc(h.phnum ? h.phnum : 1, sizeof(*mem->ranges));
	if (!mem->ranges)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", mem->name);
	for (i = 0; i < h.phnum; i++) {
		struct elf_phdr ph;

		read_phdr(mem, &h, i, &ph);
		if (ph.type == PT_LOAD && ph.memsz) {
			struct vmi_mem_range *r = &mem->ranges[mem->nr_ranges++];

			r->gpa = ph.paddr;
			r->mem_size = ph.memsz;
			r->offset = ph.offset;
			r->file_size = ph.filesz;
		} else if (ph.type == PT_NOTE) {
			if (ph.offset > mem->map_len || ph.filesz > mem->map_len - ph.offset)
				return vmi_fail(err, SVMTRACE_E_FORMAT,
						"%s: PT_NOTE at offset 0x%llx size 0x%llx runs "
						"past the end of the file",
						mem->name, (unsigned long long)ph.offset,
						(unsigned long long)ph.filesz);
			rc = parse_notes(mem, ph.offset, ph.filesz, &nr_core, &nr_qemu, err);
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
