// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the memory: a raw image (sparse file, offset = physical address)
 * and a QEMU-style ELF core: ELF64 ET_CORE, one PT_NOTE with per-vCPU
 * NT_PRSTATUS "CORE" notes followed by per-vCPU "QEMU" notes (QEMUCPUState
 * version 1, 440 bytes with kernel_gs_base as newer QEMUs write it, 432
 * without as QEMU 7.2 does), and one PT_LOAD per run of populated pages.
 */
#include "gen.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		gen_die("%s: cannot create", path);
	return fd;
}

static void put(int fd, uint64_t off, const void *buf, size_t len, const char *path)
{
	if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
		gen_die("%s: write failed", path);
}

struct raw_ctx {
	int fd;
	const char *path;
};

static void raw_page(void *opaque, uint64_t pa, const uint8_t *page)
{
	struct raw_ctx *c = opaque;

	put(c->fd, pa, page, GEN_PAGE, c->path);
}

void gen_write_raw(const struct gen_phys *m, const char *path)
{
	struct raw_ctx c = { create(path), path };

	if (ftruncate(c.fd, (off_t)gen_phys_size(m)))
		gen_die("%s: cannot size the image", path);
	gen_phys_each(m, raw_page, &c);
	if (close(c.fd))
		gen_die("%s: write failed", path);
}

/* ---- ELF core ---- */

#define QEMU_STATE_FULL 440
#define QEMU_STATE_OLD	432
#define PRSTATUS_SIZE	336

struct runs {
	Elf64_Phdr *ph;
	size_t n, cap;
};

static void add_run(void *opaque, uint64_t pa, const uint8_t *page)
{
	struct runs *r = opaque;

	(void)page;
	if (r->n && r->ph[r->n - 1].p_paddr + r->ph[r->n - 1].p_memsz == pa) {
		r->ph[r->n - 1].p_memsz += GEN_PAGE;
		r->ph[r->n - 1].p_filesz += GEN_PAGE;
		return;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->ph = realloc(r->ph, r->cap * sizeof(*r->ph));
		if (!r->ph)
			gen_die("out of memory");
	}
	r->ph[r->n++] = (Elf64_Phdr){ .p_type = PT_LOAD,
				      .p_flags = PF_R | PF_W | PF_X,
				      .p_paddr = pa,
				      .p_memsz = GEN_PAGE,
				      .p_filesz = GEN_PAGE };
}

/* One note: header, name padded to 4, descriptor padded to 4. */
static size_t note(uint8_t *at, const char *name, uint32_t type, const void *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	size_t pos = 12;

	if (at) {
		memcpy(at, &namesz, 4);
		memcpy(at + 4, &descsz, 4);
		memcpy(at + 8, &type, 4);
		memcpy(at + pos, name, namesz);
	}
	pos += (namesz + 3) & ~3u;
	if (at)
		memcpy(at + pos, desc, descsz);
	return pos + ((descsz + 3) & ~3u);
}

static void set64(uint8_t *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

/* The PT_NOTE contents for @n vCPUs; returns its size (buf NULL: size only). */
static size_t notes(uint8_t *buf, const struct gen_vcpu *v, int n, bool old, int levels)
{
	uint8_t prs[PRSTATUS_SIZE], qs[QEMU_STATE_FULL];
	uint32_t qsize = old ? QEMU_STATE_OLD : QEMU_STATE_FULL, one = 1;
	size_t pos = 0;
	int i;

	for (i = 0; i < n; i++) {
		uint32_t pid = (uint32_t)i + 1;

		memset(prs, 0, sizeof(prs));
		memcpy(prs + 32, &pid, 4);
		set64(prs, 112 + 22 * 8, v[i].gs_base);
		pos += note(buf ? buf + pos : NULL, "CORE", NT_PRSTATUS, prs, sizeof(prs));
	}
	for (i = 0; i < n; i++) {
		memset(qs, 0, sizeof(qs));
		memcpy(qs, &one, 4);
		memcpy(qs + 4, &qsize, 4);
		set64(qs, 152 + 24 * 4 + 16, v[i].gs_base); /* gs.base */
		set64(qs, 152 + 24 * 9 + 16, v[i].idtr);    /* idt.base */
		set64(qs, 392 + 8 * 0, 0x80050033);	    /* cr0: PG PE ... */
		set64(qs, 392 + 8 * 3, v[i].cr3);
		/* cr4 as Windows 10/11 sets it (PAE PGE OSFXSR UMIP FSGSBASE OSXSAVE
		 * SMEP SMAP ...), LA57 with five-level tables */
		set64(qs, 392 + 8 * 4, 0x350ef8 | (levels == 5 ? 1ULL << 12 : 0));
		if (!old)
			set64(qs, 432, v[i].kernel_gs_base);
		pos += note(buf ? buf + pos : NULL, "QEMU", 0, qs, qsize);
	}
	return pos;
}

struct elf_ctx {
	int fd;
	const char *path;
	uint64_t off;
};

static void elf_page(void *opaque, uint64_t pa, const uint8_t *page)
{
	struct elf_ctx *c = opaque;

	(void)pa;
	put(c->fd, c->off, page, GEN_PAGE, c->path);
	c->off += GEN_PAGE;
}

void gen_write_elf(const struct gen_phys *m, const struct gen_vcpu *vcpus, int nr_vcpus,
		   bool old_qemu_notes, const char *path)
{
	struct runs r = { 0 };
	size_t note_size = notes(NULL, vcpus, nr_vcpus, old_qemu_notes, gen_phys_paging(m)), i;
	uint8_t *note_buf = calloc(1, note_size);
	struct elf_ctx c = { create(path), path, 0 };
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr nph = { 0 };
	uint64_t data;

	if (!note_buf)
		gen_die("out of memory");
	gen_phys_each(m, add_run, &r);
	if (r.n + 1 >= PN_XNUM)
		gen_die("too many memory runs for one ELF program header table");
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)(r.n + 1);
	nph.p_type = PT_NOTE;
	nph.p_offset = sizeof(eh) + (r.n + 1) * sizeof(Elf64_Phdr);
	nph.p_filesz = nph.p_memsz = note_size;
	notes(note_buf, vcpus, nr_vcpus, old_qemu_notes, gen_phys_paging(m));
	data = (nph.p_offset + note_size + GEN_PAGE - 1) & ~(GEN_PAGE - 1);
	for (i = 0; i < r.n; i++) {
		r.ph[i].p_offset = data;
		data += r.ph[i].p_filesz;
	}
	put(c.fd, 0, &eh, sizeof(eh), path);
	put(c.fd, sizeof(eh), &nph, sizeof(nph), path);
	put(c.fd, sizeof(eh) + sizeof(nph), r.ph, r.n * sizeof(*r.ph), path);
	put(c.fd, nph.p_offset, note_buf, note_size, path);
	c.off = r.n ? r.ph[0].p_offset : 0;
	gen_phys_each(m, elf_page, &c);
	if (close(c.fd))
		gen_die("%s: write failed", path);
	free(note_buf);
	free(r.ph);
}
