// SPDX-License-Identifier: GPL-2.0
/*
 * Laying out a Windows kernel and its processes in generated memory, with
 * every offset and RVA read from the profile, and writing down (in the
 * .expect file) what a correct reader must find.
 */
#include "gen_win.h"
#include "lib/vmi/isf.h"

#include <stdlib.h>
#include <string.h>

/*
 * Where things go: ranges like those Windows x64 draws from, a random place
 * in each (g->seed).  ntoskrnl is 2 MiB aligned as KASLR puts it; images
 * 64 KiB aligned, each at one base in every process that maps it; the DLL
 * at one base in every process.  The lab's own kernel pieces
 * (tests/e2e/win/winlayout.h, 0xfffff80410c00000 on) stay clear of them.
 */
#define KERNEL_LO		0xfffff80000000000ULL
#define KERNEL_HI		0xfffff80400000000ULL
#define KDATA_LO		0xfffff80600000000ULL /* KPCR, IDT */
#define KDATA_HI		0xfffff80700000000ULL
#define POOL_LO			0xffff9b0000000000ULL
#define POOL_HI			0xffffa00000000000ULL
#define PROTO_LO		0xffffb00000000000ULL
#define PROTO_HI		0xffffb80000000000ULL
#define PEB_LO			0x0000001000000000ULL /* PEB, TEB two pages above */
#define PEB_HI			0x000000ff00000000ULL
#define LDR_LO			0x0000010000000000ULL /* the loader's heap */
#define LDR_HI			0x0000030000000000ULL
#define EXE_1G_LO		0x00007f0000000000ULL
#define EXE_2M_LO		0x00007ff000000000ULL
#define EXE_LO			0x00007ff600000000ULL
#define DLL_LO			0x00007ff800000000ULL
#define DLL_HI			0x00007fff00000000ULL
#define STARTBLOCK_LO		0x1000 /* in the low 64 KiB the lab's PVH boot keeps */
#define STARTBLOCK_HI		0x10000
#define IMAGE_ALIGN		0x10000
#define DLL_SPAN		0x100000 /* what the DLLs take at most, apart */
#define UNMAPPED_VA		0xffff9a7f00000000ULL
#define OUTSIDE_VA		0xffff9a7e00000000ULL
#define SUBSECTION_VA		0xffffc00012345670ULL
#define TEB_OFFSET		0x2000 /* from the PEB */
#define KERNEL_RDATA		0x1000 /* export and debug directories */
#define PROTECTION_EXECUTE_READ 3ULL

/* splitmix64 over g->rng (seeded from g->seed by gen_win_kernel). */
static uint64_t random64(struct gen_win *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool free_in(const struct gen_space *s, uint64_t va, uint64_t pages)
{
	uint64_t i;

	for (i = 0; i < pages; i++)
		if (gen_space_has(s, va + i * GEN_PAGE))
			return false;
	return true;
}

uint64_t gen_win_place(struct gen_win *g, struct gen_space *s, uint64_t lo, uint64_t hi,
		       uint64_t pages, uint64_t align)
{
	uint64_t slots = (hi - lo - pages * GEN_PAGE) / align + 1;
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		uint64_t va = lo + random64(g) % slots * align;

		if (free_in(s, va, pages))
			return va;
	}
	gen_die("no room for %llu pages in 0x%llx..0x%llx", (unsigned long long)pages,
		(unsigned long long)lo, (unsigned long long)hi);
}

static uint64_t field(struct gen_win *g, const char *type, const char *name)
{
	struct isf_field f;
	struct svmtrace_error err;

	if (isf_field(g->isf, type, name, &f, &err))
		gen_die("%s", err.message);
	return f.offset;
}

uint64_t gen_win_field(struct gen_win *g, const char *type, const char *name)
{
	return field(g, type, name);
}

static struct isf_field bits(struct gen_win *g, const char *type, const char *name)
{
	struct isf_field f;
	struct svmtrace_error err;

	if (isf_field(g->isf, type, name, &f, &err) || !f.bit_length)
		gen_die("%s.%s: not a bitfield in the profile", type, name);
	return f;
}

static uint64_t bit_value(struct isf_field f, uint64_t v)
{
	return (v & (f.bit_length == 64 ? ~0ULL : (1ULL << f.bit_length) - 1)) << f.bit_position;
}

static int symbol(struct gen_win *g, const char *name, uint64_t *rva)
{
	return !isf_symbol(g->isf, name, rva, NULL);
}

static uint64_t need_symbol(struct gen_win *g, const char *name)
{
	uint64_t rva;

	if (!symbol(g, name, &rva))
		gen_die("the profile has no %s", name);
	return rva;
}

static uint64_t type_size(struct gen_win *g, const char *type)
{
	struct svmtrace_error err;
	uint64_t size;

	if (isf_type_size(g->isf, type, &size, &err))
		gen_die("%s", err.message);
	return size;
}

/* Map the kernel page holding @va if nothing is there yet. */
static void kernel_page(struct gen_win *g, uint64_t va)
{
	va &= ~(GEN_PAGE - 1);
	if (!gen_space_has(g->kernel, va))
		gen_map_new(g->kernel, va, 1, GEN_RW);
}

/* Nonpaged-pool memory for a kernel object of @size bytes. */
static uint64_t pool_alloc(struct gen_win *g, uint64_t size)
{
	uint64_t va = g->pool, pages = (size + GEN_PAGE - 1) / GEN_PAGE;

	gen_map_new(g->kernel, va, pages, GEN_RW | GEN_NX);
	g->pool += (pages + 1) * GEN_PAGE; /* a guard page between objects */
	return va;
}

static void hex_guid_bytes(const char *guid, uint8_t out[16])
{
	unsigned int v[16], i;

	/* GUID text is Data1 Data2 Data3 (little-endian fields) then Data4. */
	for (i = 0; i < 16; i++)
		sscanf(guid + 2 * i, "%2x", &v[i]);
	out[0] = (uint8_t)v[3], out[1] = (uint8_t)v[2], out[2] = (uint8_t)v[1];
	out[3] = (uint8_t)v[0], out[4] = (uint8_t)v[5], out[5] = (uint8_t)v[4];
	out[6] = (uint8_t)v[7], out[7] = (uint8_t)v[6];
	for (i = 8; i < 16; i++)
		out[i] = (uint8_t)v[i];
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* ntoskrnl's headers, export directory ("ntoskrnl.exe") and RSDS record. */
static void kernel_headers(struct gen_win *g, uint32_t size_of_image)
{
	static const char *const exports[] = { "PsInitialSystemProcess", "PsLoadedModuleList" };
	uint8_t hdr[GEN_PAGE] = { 0 }, rd[GEN_PAGE] = { 0 };
	uint8_t *nt = hdr + 0x80, *opt = nt + 24, *sec = opt + 240;
	const char *pdb = isf_pdb_database(g->isf);
	uint32_t i, name_at = 0x300;

	hdr[0] = 'M', hdr[1] = 'Z';
	put32(hdr + 0x3c, 0x80);
	memcpy(nt, "PE\0\0", 4);
	put16(nt + 4, 0x8664);
	put16(nt + 6, 2);
	put16(nt + 20, 240);
	put16(nt + 22, 0x22);
	put16(opt, 0x20b);
	put32(opt + 16, (uint32_t)need_symbol(g, "KiSystemStartup"));
	put64(opt + 24, g->kbase);
	put32(opt + 32, 0x1000);
	put32(opt + 36, 0x200);
	put32(opt + 56, size_of_image);
	put32(opt + 60, 0x1000);
	put32(opt + 108, 16);
	put32(opt + 112, KERNEL_RDATA); /* export directory */
	put32(opt + 116, 0x200);
	put32(opt + 112 + 8 * 6, KERNEL_RDATA + 0x100); /* debug directory */
	put32(opt + 116 + 8 * 6, 28);
	memcpy(sec, ".rdata", 6);
	put32(sec + 8, 0x1000);
	put32(sec + 12, KERNEL_RDATA);
	put32(sec + 36, 0x40000040);
	memcpy(sec + 40, ".text", 5);
	put32(sec + 48, size_of_image - 0x2000);
	put32(sec + 52, 0x2000);
	put32(sec + 76, 0x68000020);

	/* Export directory at +0: name, two functions, sorted names. */
	put32(rd + 12, KERNEL_RDATA + 0x200);
	memcpy(rd + 0x200, "ntoskrnl.exe", 13);
	put32(rd + 16, 1);
	put32(rd + 20, 2);
	put32(rd + 24, 2);
	put32(rd + 28, KERNEL_RDATA + 0x40);
	put32(rd + 32, KERNEL_RDATA + 0x60);
	put32(rd + 36, KERNEL_RDATA + 0x80);
	for (i = 0; i < 2; i++) {
		put32(rd + 0x40 + 4 * i, (uint32_t)need_symbol(g, exports[i]));
		put32(rd + 0x60 + 4 * i, KERNEL_RDATA + name_at);
		put16(rd + 0x80 + 2 * i, (uint16_t)i);
		strcpy((char *)rd + name_at, exports[i]);
		name_at += (uint32_t)strlen(exports[i]) + 1;
	}
	/* Debug directory at +0x100 -> CodeView RSDS at +0x400. */
	put32(rd + 0x100 + 12, 2);
	put32(rd + 0x100 + 16, 24 + (uint32_t)strlen(pdb) + 1);
	put32(rd + 0x100 + 20, KERNEL_RDATA + 0x400);
	memcpy(rd + 0x400, "RSDS", 4);
	hex_guid_bytes(isf_pdb_guid(g->isf), rd + 0x404);
	put32(rd + 0x414, isf_pdb_age(g->isf));
	strcpy((char *)rd + 0x418, pdb);

	gen_map_new(g->kernel, g->kbase, 2, GEN_RW);
	gen_vwrite(g->kernel, g->kbase, hdr, sizeof(hdr));
	gen_vwrite(g->kernel, g->kbase + KERNEL_RDATA, rd, sizeof(rd));
}

/* A few bytes of code at a symbol, so its page is not empty. */
static void kernel_code(struct gen_win *g, const char *name)
{
	static const uint8_t code[] = { 0x0f, 0x01, 0xf8, 0x65, 0x48, 0x89, 0x24, 0x25 };
	uint64_t rva;

	if (!symbol(g, name, &rva))
		return;
	kernel_page(g, g->kbase + rva);
	gen_vwrite(g->kernel, g->kbase + rva, code, sizeof(code));
}

static void idt_gate(struct gen_win *g, uint64_t handler)
{
	uint8_t gate[16] = { 0 };

	put16(gate, (uint16_t)handler);
	put16(gate + 2, 0x10);
	gate[5] = 0x8e;
	put16(gate + 6, (uint16_t)(handler >> 16));
	put32(gate + 8, (uint32_t)(handler >> 32));
	gen_vwrite(g->kernel, g->idt, gate, sizeof(gate));
}

void gen_win_kernel(struct gen_win *g)
{
	static const char *const code[] = { "KiSystemCall64", "KiSystemCall64Shadow",
					    "KiDivideErrorFault", "KiDivideErrorFaultShadow",
					    "KiSystemStartup" };
	static const char *const data[] = { "PsActiveProcessHead", "PsInitialSystemProcess",
					    "PsLoadedModuleList" };
	uint64_t max_rva = 0, rva, startblock[0xa8 / 8] = { 0 }, size, at;
	const char *divide = g->idt_shadow ? "KiDivideErrorFaultShadow" : "KiDivideErrorFault";
	size_t i;

	g->rng = g->seed;
	g->kernel = gen_space_new(g->m, NULL);
	for (i = 0; i < sizeof(code) / sizeof(code[0]); i++)
		if (symbol(g, code[i], &rva) && rva > max_rva)
			max_rva = rva;
	for (i = 0; i < sizeof(data) / sizeof(data[0]); i++)
		if (need_symbol(g, data[i]) > max_rva)
			max_rva = need_symbol(g, data[i]);
	size = (max_rva + 0x10000) & ~0xfffULL;
	g->kbase = gen_win_place(g, g->kernel, KERNEL_LO, KERNEL_HI, size / GEN_PAGE, GEN_2M);
	g->pool = gen_win_place(g, g->kernel, POOL_LO, POOL_HI, 1, GEN_2M);
	g->proto_slots = gen_win_place(g, g->kernel, PROTO_LO, PROTO_HI, 1, GEN_2M);
	g->dll_base = DLL_LO + random64(g) % ((DLL_HI - DLL_LO) / IMAGE_ALIGN) * IMAGE_ALIGN;
	while (g->dll2_name && (!g->dll2_base || (g->dll2_base < g->dll_base + DLL_SPAN &&
						  g->dll_base < g->dll2_base + DLL_SPAN)))
		g->dll2_base =
			DLL_LO + random64(g) % ((DLL_HI - DLL_LO) / IMAGE_ALIGN) * IMAGE_ALIGN;
	kernel_headers(g, (uint32_t)size);
	for (i = 0; i < sizeof(code) / sizeof(code[0]); i++)
		kernel_code(g, code[i]);

	/* PsActiveProcessHead: an empty list for now. */
	g->head = g->tail = g->kbase + need_symbol(g, "PsActiveProcessHead");
	kernel_page(g, g->head);
	gen_vwrite_u64(g->kernel, g->head, g->head);
	gen_vwrite_u64(g->kernel, g->head + 8, g->head);
	kernel_page(g, g->kbase + need_symbol(g, "PsInitialSystemProcess"));
	kernel_page(g, g->kbase + need_symbol(g, "PsLoadedModuleList"));

	/* KPCR (Self, IdtBase) and the IDT, whose vector 0 is the divide handler. */
	g->kpcr = gen_win_place(g, g->kernel, KDATA_LO, KDATA_HI, 1, GEN_PAGE);
	gen_map_new(g->kernel, g->kpcr, 1, GEN_RW | GEN_NX);
	g->idt = gen_win_place(g, g->kernel, KDATA_LO, KDATA_HI, 1, GEN_PAGE);
	gen_map_new(g->kernel, g->idt, 1, GEN_RW | GEN_NX);
	gen_vwrite_u64(g->kernel, g->kpcr + field(g, "_KPCR", "Self"), g->kpcr);
	gen_vwrite_u64(g->kernel, g->kpcr + field(g, "_KPCR", "IdtBase"), g->idt);
	idt_gate(g, g->kbase + need_symbol(g, divide));

	/* The processor start block, a free low page: signature, kernel hint, PML4. */
	do
		at = STARTBLOCK_LO + random64(g) % ((STARTBLOCK_HI - STARTBLOCK_LO) / GEN_PAGE) *
					     GEN_PAGE;
	while (gen_phys_has(g->m, at));
	startblock[0] = 0x00000001000650e9ULL;
	startblock[0x70 / 8] = g->kbase + need_symbol(g, "KiSystemStartup");
	startblock[0xa0 / 8] = gen_space_pml4(g->kernel);
	gen_phys_write(g->m, at, startblock, sizeof(startblock));

	fprintf(g->expect, "kernel 0x%016llx %s-%u\n", (unsigned long long)g->kbase,
		isf_pdb_guid(g->isf), isf_pdb_age(g->isf));
	fprintf(g->expect, "layout seed %llu kpcr 0x%016llx idt 0x%016llx startblock 0x%llx\n",
		(unsigned long long)g->seed, (unsigned long long)g->kpcr,
		(unsigned long long)g->idt, (unsigned long long)at);
}

/* Link @links at the tail of the process list. */
static void list_append(struct gen_win *g, uint64_t links)
{
	gen_vwrite_u64(g->kernel, links, g->head);
	gen_vwrite_u64(g->kernel, links + 8, g->tail);
	gen_vwrite_u64(g->kernel, g->tail, links);
	gen_vwrite_u64(g->kernel, g->head + 8, links);
	g->tail = links;
	g->links[g->nr_links++] = links;
}

static uint64_t eprocess_new(struct gen_win *g, const struct gen_proc *p, uint64_t dtb,
			     uint64_t user_dtb, uint64_t peb, uint64_t image)
{
	uint64_t ep = pool_alloc(g, type_size(g, "_EPROCESS"));
	uint64_t pcb = ep + field(g, "_EPROCESS", "Pcb");
	char name[15] = { 0 };
	struct isf_field f;

	/* ImageFileName: 15 bytes, truncated without a NUL when the name is longer */
	memcpy(name, p->name, strlen(p->name) < sizeof(name) ? strlen(p->name) : sizeof(name));
	gen_vwrite_u64(g->kernel, ep + field(g, "_EPROCESS", "UniqueProcessId"), p->pid);
	gen_vwrite_u64(g->kernel, ep + field(g, "_EPROCESS", "InheritedFromUniqueProcessId"),
		       p->ppid);
	gen_vwrite(g->kernel, ep + field(g, "_EPROCESS", "ImageFileName"), name, sizeof(name));
	gen_vwrite_u64(g->kernel, pcb + field(g, "_KPROCESS", "DirectoryTableBase"), dtb);
	if (!isf_field(g->isf, "_KPROCESS", "UserDirectoryTableBase", &f, NULL))
		gen_vwrite_u64(g->kernel, pcb + f.offset, user_dtb);
	gen_vwrite_u64(g->kernel, ep + field(g, "_EPROCESS", "Peb"), peb);
	gen_vwrite_u64(g->kernel, ep + field(g, "_EPROCESS", "SectionBaseAddress"), image);
	if (!isf_field(g->isf, "_EPROCESS", "ThreadListHead", &f, NULL)) { /* no threads yet */
		gen_vwrite_u64(g->kernel, ep + f.offset, ep + f.offset);
		gen_vwrite_u64(g->kernel, ep + f.offset + 8, ep + f.offset);
	}
	list_append(g, ep + field(g, "_EPROCESS", "ActiveProcessLinks"));
	return ep;
}

uint64_t gen_win_thread(struct gen_win *g, const struct gen_thread *t)
{
	uint64_t et = pool_alloc(g, type_size(g, "_ETHREAD")), ep = g->last_eprocess;
	uint64_t tcb = et + field(g, "_ETHREAD", "Tcb"), cid = et + field(g, "_ETHREAD", "Cid");
	uint64_t head = ep + field(g, "_EPROCESS", "ThreadListHead");
	uint64_t links = et + field(g, "_ETHREAD", "ThreadListEntry"), tail;

	gen_vwrite_u64(g->kernel, cid + field(g, "_CLIENT_ID", "UniqueProcess"), t->pid);
	gen_vwrite_u64(g->kernel, cid + field(g, "_CLIENT_ID", "UniqueThread"), t->tid);
	gen_vwrite_u64(g->kernel, tcb + field(g, "_KTHREAD", "Teb"), t->teb);
	gen_vwrite_u64(g->kernel, tcb + field(g, "_KTHREAD", "Process"), ep);
	gen_vwrite_u64(g->kernel, et + field(g, "_ETHREAD", "StartAddress"), t->start_address);
	gen_vwrite_u64(g->kernel, et + field(g, "_ETHREAD", "Win32StartAddress"),
		       t->win32_start_address);
	gen_vwrite_u64(g->kernel, links, links);
	gen_vwrite_u64(g->kernel, links + 8, links);
	g->last_thread_head = head;
	g->last_thread_links = links;
	if (!t->unlinked) {
		memcpy(&tail,
		       gen_phys_page(g->m, gen_space_pa(g->kernel, head + 8) & ~(GEN_PAGE - 1)) +
			       ((head + 8) & (GEN_PAGE - 1)),
		       8);
		gen_vwrite_u64(g->kernel, links, head);
		gen_vwrite_u64(g->kernel, links + 8, tail);
		gen_vwrite_u64(g->kernel, tail, links);
		gen_vwrite_u64(g->kernel, head + 8, links);
	}
	return et;
}

static const char *hex_or_dash(char *buf, uint64_t v)
{
	if (!v)
		return "-";
	sprintf(buf, "0x%016llx", (unsigned long long)v);
	return buf;
}

static void expect_process(struct gen_win *g, const struct gen_proc *p, uint64_t dtb,
			   uint64_t user_dtb, uint64_t peb, uint64_t image)
{
	char name[16] = { 0 }, a[24], b[24], c[24], d[24];

	strncpy(name, p->name, 15);
	fprintf(g->expect, "process %llu %llu %s %s %s %s %s\n", (unsigned long long)p->pid,
		(unsigned long long)p->ppid, name, hex_or_dash(a, dtb), hex_or_dash(b, user_dtb),
		hex_or_dash(c, peb), hex_or_dash(d, image));
}

/* Map @pe at @base with 4K pages, or onto the pages @share already mapped. */
static void map_image_4k(struct gen_win *g, struct gen_space *s, const struct gen_pe *pe,
			 uint64_t base, struct gen_space *share)
{
	uint8_t *bytes = g->relocate ? gen_pe_relocated(pe, base) : NULL;
	uint64_t off;

	for (off = 0; off < pe->size_of_image; off += GEN_PAGE) {
		if (share) {
			gen_map(s, base + off, gen_space_pa(share, base + off), GEN_PAGE,
				GEN_US | GEN_RW);
			continue;
		}
		gen_map_new(s, base + off, 1, GEN_US | GEN_RW);
		gen_vwrite(s, base + off, (bytes ? bytes : pe->image) + off,
			   pe->size_of_image - off < GEN_PAGE ? pe->size_of_image - off : GEN_PAGE);
	}
	free(bytes);
}

static const struct gen_pe *image_of(struct gen_win *g, const struct gen_proc *p)
{
	return p->pe ? p->pe : &g->exe;
}

/* The image's base: drawn the first time the image is mapped (this way). */
static uint64_t image_base(struct gen_win *g, const struct gen_pe *pe, enum gen_mapping map)
{
	static const uint64_t lo[] = { [MAP_4K] = EXE_LO, [MAP_2M] = EXE_2M_LO,
				       [MAP_1G] = EXE_1G_LO };
	static const uint64_t hi[] = { [MAP_4K] = DLL_LO, [MAP_2M] = EXE_LO,
				       [MAP_1G] = EXE_2M_LO };
	static const uint64_t align[] = { [MAP_4K] = IMAGE_ALIGN, [MAP_2M] = GEN_2M,
					  [MAP_1G] = GEN_1G };
	struct gen_image_base *b;
	int i;

	for (i = 0; i < g->nr_images; i++)
		if (g->images[i].pe == pe && g->images[i].map == map)
			return g->images[i].base;
	if (g->nr_images == (int)(sizeof(g->images) / sizeof(g->images[0])))
		gen_die("too many images");
	b = &g->images[g->nr_images++];
	*b = (struct gen_image_base){ pe, map,
				      lo[map] + random64(g) % ((hi[map] - lo[map]) / align[map]) *
							align[map] };
	return b->base;
}

static uint64_t map_image(struct gen_win *g, struct gen_space *s, const struct gen_proc *p)
{
	const struct gen_pe *pe = image_of(g, p);
	uint64_t base = image_base(g, pe, p->map), size = p->map == MAP_1G ? GEN_1G : GEN_2M;

	switch (p->map) {
	case MAP_2M:
	case MAP_1G:
		if (pe->size_of_image > size)
			gen_die("image too large for one large page");
		gen_map(s, base, gen_phys_alloc_large(g->m, size), size, GEN_US | GEN_RW);
		gen_vwrite(s, base, pe->image, pe->size_of_image);
		return base;
	case MAP_4K:
		break;
	}
	map_image_4k(g, s, pe, base, p->share_image ? g->last_user : NULL);
	return base;
}

/* A prototype PTE slot in paged pool holding @value; returns its VA. */
static uint64_t proto_slot(struct gen_win *g, uint64_t value)
{
	uint64_t va = g->proto_slots;

	kernel_page(g, va);
	gen_vwrite_u64(g->kernel, va, value);
	g->proto_slots += 8;
	return va;
}

static uint64_t transition_pte(struct gen_win *g, uint64_t pa)
{
	return bit_value(bits(g, "_MMPTE_TRANSITION", "PageFrameNumber"), pa >> 12) |
	       bit_value(bits(g, "_MMPTE_TRANSITION", "Transition"), 1) |
	       bit_value(bits(g, "_MMPTE_TRANSITION", "Protection"), PROTECTION_EXECUTE_READ);
}

static uint64_t prototype_pte(struct gen_win *g, uint64_t address)
{
	return bit_value(bits(g, "_MMPTE_PROTOTYPE", "Prototype"), 1) |
	       bit_value(bits(g, "_MMPTE_PROTOTYPE", "ProtoAddress"), address);
}

/* Give the entry page the PTE @p asks for; write the expect line. */
static void entry_pte(struct gen_win *g, struct gen_space *s, const struct gen_proc *p,
		      uint64_t base)
{
	const struct gen_pe *pe = image_of(g, p);
	uint64_t va = base + pe->entry_rva, page = va & ~(GEN_PAGE - 1);
	uint64_t pa = gen_space_pa(s, va), ppa = pa & ~(GEN_PAGE - 1), pte = 0;
	uint64_t size = p->map == MAP_1G ? GEN_1G : p->map == MAP_2M ? GEN_2M : GEN_PAGE;
	const char *state = "valid", *absent = NULL;
	int i;

	switch (p->entry) {
	case ENTRY_VALID:
		break;
	case ENTRY_TRANSITION:
		pte = transition_pte(g, ppa);
		state = "transition";
		break;
	case ENTRY_PROTOTYPE:
		pte = prototype_pte(g, proto_slot(g, ppa | GEN_P | GEN_A | GEN_US));
		state = "prototype";
		break;
	case ENTRY_PROTO_TRANSITION:
		pte = prototype_pte(g, proto_slot(g, transition_pte(g, ppa)));
		state = "prototype-transition";
		break;
	case ENTRY_SUBSECTION:
		pte = prototype_pte(g, proto_slot(g, prototype_pte(g, SUBSECTION_VA)));
		absent = "subsection";
		break;
	case ENTRY_VAD:
		pte = prototype_pte(g, 0xffffffff0000ULL);
		absent = "VAD";
		break;
	case ENTRY_PAGEFILE:
		pte = bit_value(bits(g, "_MMPTE_SOFTWARE", "PageFileHigh"), 0x1234) |
		      bit_value(bits(g, "_MMPTE_SOFTWARE", "PageFileLow"), 1) |
		      bit_value(bits(g, "_MMPTE_SOFTWARE", "Protection"), PROTECTION_EXECUTE_READ);
		absent = "page file";
		break;
	case ENTRY_DEMAND_ZERO:
		pte = bit_value(bits(g, "_MMPTE_SOFTWARE", "Protection"), PROTECTION_EXECUTE_READ);
		absent = "demand-zero";
		break;
	}
	if (p->entry != ENTRY_VALID)
		gen_set_pte(s, page, pte);
	if (absent) {
		fprintf(g->expect, "entry %llu notresident %s\n", (unsigned long long)p->pid,
			absent);
		return;
	}
	fprintf(g->expect, "entry %llu 0x%016llx 0x%016llx %s 0x%llx ", (unsigned long long)p->pid,
		(unsigned long long)pa, (unsigned long long)va, state, (unsigned long long)size);
	for (i = 0; i < 16; i++)
		fprintf(g->expect, "%02x", pe->entry_bytes[i]);
	fputc('\n', g->expect);
}

/* Write a UNICODE_STRING at @us whose UTF-16 text goes to @text_va. */
static void unicode(struct gen_win *g, struct gen_space *s, uint64_t us, uint64_t text_va,
		    const char *text)
{
	uint16_t units[260];
	size_t n = strlen(text), i;

	for (i = 0; i < n; i++)
		units[i] = (uint8_t)text[i];
	gen_vwrite(s, text_va, units, n * 2);
	gen_vwrite_u16(s, us + field(g, "_UNICODE_STRING", "Length"), (uint16_t)(n * 2));
	gen_vwrite_u16(s, us + field(g, "_UNICODE_STRING", "MaximumLength"), (uint16_t)(n * 2 + 2));
	gen_vwrite_u64(s, us + field(g, "_UNICODE_STRING", "Buffer"), text_va);
}

/* PEB_LDR_DATA and its LDR_DATA_TABLE_ENTRYs: the image, the DLL, the second DLL. */
static uint64_t loader_list(struct gen_win *g, struct gen_space *s, const struct gen_proc *p,
			    uint64_t image)
{
	const char *names[3] = { p->name, g->dll_name ? g->dll_name : "helper.dll", g->dll2_name };
	uint64_t bases[3] = { image, g->dll_base, g->dll2_base };
	const struct gen_pe *pes[3] = { image_of(g, p), &g->dll, &g->dll2 };
	uint64_t ldr = gen_win_place(g, s, LDR_LO, LDR_HI, 2, IMAGE_ALIGN);
	uint64_t head = ldr + field(g, "_PEB_LDR_DATA", "InLoadOrderModuleList");
	uint64_t links = field(g, "_LDR_DATA_TABLE_ENTRY", "InLoadOrderLinks"), prev = head;
	int i, n = g->dll2_name ? 3 : 2;

	gen_map_new(s, ldr, 2, GEN_US | GEN_RW | GEN_NX);
	for (i = 1; i < n; i++)
		map_image_4k(g, s, pes[i], bases[i], p->share_image ? g->last_user : NULL);
	for (i = 0; i < n; i++) {
		uint64_t e = ldr + 0x100 + 0x200 * (uint64_t)i, text = ldr + 0x1000 + 0x400 * i;
		char path[300];

		snprintf(path, sizeof(path), "C:\\svmtrace\\tests\\%s", names[i]);
		gen_vwrite_u64(s, prev, e + links);	/* prev->Flink */
		gen_vwrite_u64(s, e + links + 8, prev); /* Blink */
		gen_vwrite_u64(s, e + field(g, "_LDR_DATA_TABLE_ENTRY", "DllBase"), bases[i]);
		gen_vwrite_u32(s, e + field(g, "_LDR_DATA_TABLE_ENTRY", "SizeOfImage"),
			       pes[i]->size_of_image);
		gen_vwrite_u64(s, e + field(g, "_LDR_DATA_TABLE_ENTRY", "EntryPoint"),
			       bases[i] + pes[i]->entry_rva);
		unicode(g, s, e + field(g, "_LDR_DATA_TABLE_ENTRY", "BaseDllName"), text, names[i]);
		unicode(g, s, e + field(g, "_LDR_DATA_TABLE_ENTRY", "FullDllName"), text + 0x100,
			path);
		fprintf(g->expect, "module %llu 0x%016llx 0x%08x %s %s\n",
			(unsigned long long)p->pid, (unsigned long long)bases[i],
			pes[i]->size_of_image, names[i], path);
		prev = e + links;
	}
	gen_vwrite_u64(s, prev, head);	   /* last Flink -> head */
	gen_vwrite_u64(s, head + 8, prev); /* head Blink -> last */
	return ldr;
}

/*
 * PEB.ProcessParameters in the PEB's page: its image path and command line
 * ("PATH NAME", as CreateProcess passes an image's name as argv[0]).
 */
static void process_parameters(struct gen_win *g, struct gen_space *s, const struct gen_proc *p,
			       uint64_t peb)
{
	uint64_t params = peb + 0x800, text = peb + 0xc80;
	char path[300], cmd[640];

	snprintf(path, sizeof(path), "C:\\svmtrace\\tests\\%s", p->name);
	snprintf(cmd, sizeof(cmd), "\"%s\" --lab %s", path, p->name);
	unicode(g, s, params + field(g, "_RTL_USER_PROCESS_PARAMETERS", "ImagePathName"), text,
		path);
	unicode(g, s, params + field(g, "_RTL_USER_PROCESS_PARAMETERS", "CommandLine"),
		text + 0x100, cmd);
	gen_vwrite_u64(s, peb + field(g, "_PEB", "ProcessParameters"), params);
	fprintf(g->expect, "cmdline %llu %s\n", (unsigned long long)p->pid, cmd);
}

/* The KVA-shadow user page tables: the user half plus the few kernel pages
 * user mode must reach (IDT, KPCR, the shadow entry code). */
static struct gen_space *shadow_space(struct gen_win *g)
{
	struct gen_space *sh = gen_space_new(g->m, NULL);
	uint64_t rva, pages[3] = { g->idt, g->kpcr, 0 };
	int i;

	if (symbol(g, "KiDivideErrorFaultShadow", &rva))
		pages[2] = (g->kbase + rva) & ~(GEN_PAGE - 1);
	for (i = 0; i < 3; i++)
		if (pages[i])
			gen_map(sh, pages[i], gen_space_pa(g->kernel, pages[i]) & ~(GEN_PAGE - 1),
				GEN_PAGE, GEN_RW);
	return sh;
}

void gen_win_process(struct gen_win *g, const struct gen_proc *p)
{
	struct gen_space *s, *sh = NULL;
	uint64_t image, peb, ldr = 0, dtb, user_dtb = 0;

	if (p->system) {
		g->last_eprocess = eprocess_new(g, p, gen_space_pml4(g->kernel), 0, 0, 0);
		expect_process(g, p, gen_space_pml4(g->kernel), 0, 0, 0);
		return;
	}
	if (g->nr_spaces == (int)(sizeof(g->spaces) / sizeof(g->spaces[0])))
		gen_die("too many processes");
	s = gen_space_new(g->m, g->kernel);
	image = map_image(g, s, p);
	entry_pte(g, s, p, image);
	peb = gen_win_place(g, s, PEB_LO, PEB_HI, TEB_OFFSET / GEN_PAGE + 1, GEN_PAGE);
	gen_map_new(s, peb, 1, GEN_US | GEN_RW | GEN_NX);
	if (!p->no_ldr)
		ldr = loader_list(g, s, p, image);
	gen_vwrite_u64(s, peb + field(g, "_PEB", "ImageBaseAddress"), image);
	gen_vwrite_u64(s, peb + field(g, "_PEB", "Ldr"), ldr);
	process_parameters(g, s, p, peb);
	dtb = gen_space_pml4(s);
	if (p->kva_shadow) {
		sh = shadow_space(g);
		user_dtb = gen_space_pml4(sh);
	}
	/* With KVA shadow Windows keeps PCIDs in the low bits: 2 kernel, 1 user. */
	g->last_eprocess =
		eprocess_new(g, p, dtb | (sh ? 2 : 0), user_dtb | (sh ? 1 : 0), peb, image);
	g->last_links = g->tail;
	g->last_space = s;
	g->last_shadow = sh;
	g->last_image = image;
	g->last_teb = peb + TEB_OFFSET;
	g->last_entry = image + image_of(g, p)->entry_rva;
	g->last_peb = peb;
	expect_process(g, p, dtb, user_dtb, peb, image);
	if (sh) {
		g->vcpus[1] = (struct gen_vcpu){ user_dtb | 1, peb + TEB_OFFSET, g->kpcr, g->idt };
		g->nr_vcpus = 2;
	}
	g->spaces[g->nr_spaces] = s;
	g->shadows[g->nr_spaces++] = sh;
	if (!p->share_image)
		g->last_user = s;
}

void gen_win_corrupt(struct gen_win *g, const char *how)
{
	uint64_t victim;

	if (g->nr_links < 4)
		gen_die("corrupting the list needs at least 4 processes");
	victim = g->links[2];
	if (!strcmp(how, "cycle")) {
		gen_vwrite_u64(g->kernel, g->links[g->nr_links - 1], g->links[1]);
	} else if (!strcmp(how, "blink")) {
		gen_vwrite_u64(g->kernel, victim + 8, victim);
	} else if (!strcmp(how, "unmapped")) {
		gen_vwrite_u64(g->kernel, victim, UNMAPPED_VA);
	} else if (!strcmp(how, "outside")) {
		gen_map(g->kernel, OUTSIDE_VA, gen_phys_size(g->m) + 0x100000, GEN_PAGE, GEN_RW);
		gen_vwrite_u64(g->kernel, victim, OUTSIDE_VA + 0x10);
	} else {
		gen_die("unknown corruption '%s' (cycle, blink, unmapped, outside)", how);
	}
	fprintf(g->expect, "corrupt %s\n", how);
}

void gen_win_finish(struct gen_win *g)
{
	int i, slot;

	/* The self-map slot: a random kernel-half top-level entry still free. */
	do
		slot = 256 + (int)(random64(g) % 256);
	while (gen_space_top_entry(g->kernel, slot));
	gen_space_self_map(g->kernel, slot);
	for (i = 0; i < g->nr_spaces; i++) {
		gen_space_share(g->spaces[i], g->kernel, 256, 511);
		gen_space_self_map(g->spaces[i], slot);
		if (g->shadows[i])
			gen_space_share(g->shadows[i], g->spaces[i], 0, 255);
	}
	/* vCPU 0 runs in kernel mode with the System page tables. */
	g->vcpus[0] = (struct gen_vcpu){ gen_space_pml4(g->kernel), g->kpcr, g->last_teb, g->idt };
	if (!g->nr_vcpus)
		g->nr_vcpus = 1;
}
