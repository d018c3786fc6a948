// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-wingen: lay out the lab's Windows-layout L2 guest.
 *
 *   svmtrace-e2e-wingen --profile ISF --sched SCHED.bin --dll DLL
 *                       --out PREFIX NAME=PE...
 *
 * The Windows side comes from the VMI tests' generator (tests/vmi/gen):
 * ntoskrnl's headers and symbols at the profile's RVAs, KPCR, IDT, the
 * processor start block, EPROCESS list, PEBs, loader lists and the PE
 * images, KVA-shadow user page tables.  Added here, to make it run:
 * a GDT and TSS with Windows' selectors, the scheduler (sched.S) with its
 * data page, kernel stack and process slots, IDT vectors 1-31 to its panic
 * stubs, a JMP from KiSystemCall64 (the LSTAR) to its system call entry,
 * every page a system call touches before it reloads CR3 mapped in each
 * KVA-shadow space, one user stack per process, and the boot block
 * (winlayout.h) from which the VMM and the model start the vCPU.
 *
 * The processes, in slot order (NAME=PE pairs, in this order):
 *   1 System (pid 4, no user code)
 *   2 NAME1 pid 1200: plain 4K image
 *   3 NAME2 pid 1204: KVA shadow, runs under its user DTB
 *   4 NAME3 pid 1208: entry page not resident (demand-zero PTE) until the
 *     scheduler first runs it
 *   5 NAME4 pid 1212: not in the process list until the scheduler links
 *     it (at the WIN_LINK_AT-th system call, then PORT_GO)
 *
 * Writes PREFIX.elf (a QEMU-style ELF core of the initial memory: the VMM
 * and the model load its PT_LOADs, svmtrace-vmi reads it as a dump),
 * PREFIX.expect (the generator's record of what VMI must find) and
 * PREFIX.targets, one line per process:
 *   NAME PID DTB USER-DTB-or-0 ENTRY-VA ENTRY-GPA STATE
 * STATE is valid, lazy or late.
 */
#include "../../vmi/gen/gen_win.h"
#include "lib/vmi/isf.h"
#include "lib/vmi/pe.h"
#include "../guest/layout.h"
#include "winlayout.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define WIN_LINK_AT 3 /* after each of the first three processes yielded once */

static const char usage[] =
	"usage: svmtrace-e2e-wingen --profile ISF --sched SCHED.bin --dll DLL --out PREFIX\n"
	"       NAME=PE NAME=PE NAME=PE NAME=PE   (plain, KVA shadow, lazy entry, late)\n";

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t seg_desc(unsigned int dpl, int code, int long_mode)
{
	uint64_t d = 0xffffull | (0xfull << 48);

	d |= 1ull << 47 | (uint64_t)dpl << 45 | 1ull << 44 | 1ull << 55;
	d |= (code ? 0xbull : 0x3ull) << 40;
	if (code && long_mode)
		d |= 1ull << 53;
	else
		d |= 1ull << 54;
	return d;
}

static void build_gdt_tss(struct gen_win *g)
{
	uint8_t gdt[WIN_GDT_LIMIT + 1] = { 0 }, tss[104] = { 0 };
	uint64_t base = WIN_TSS_VA, limit = sizeof(tss) - 1;

	put64(gdt + WIN_SEL_KERNEL_CS, seg_desc(0, 1, 1));
	put64(gdt + WIN_SEL_KERNEL_SS, seg_desc(0, 0, 0));
	put64(gdt + (WIN_SEL_USER32_CS & ~3), seg_desc(3, 1, 0));
	put64(gdt + (WIN_SEL_USER_SS & ~3), seg_desc(3, 0, 0));
	put64(gdt + (WIN_SEL_USER_CS & ~3), seg_desc(3, 1, 1));
	put64(gdt + WIN_SEL_TSS, (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x9ull << 40) |
					 (1ull << 47) | (((base >> 24) & 0xff) << 56));
	put64(gdt + WIN_SEL_TSS + 8, base >> 32);
	put64(tss + 4, WIN_KSTACK_VA + GEN_PAGE); /* RSP0 */
	tss[102] = sizeof(tss);			  /* no I/O bitmap */
	gen_map_new(g->kernel, WIN_GDT_VA, 1, GEN_RW | GEN_NX);
	gen_map_new(g->kernel, WIN_TSS_VA, 1, GEN_RW | GEN_NX);
	gen_map_new(g->kernel, WIN_KSTACK_VA, 1, GEN_RW | GEN_NX);
	gen_vwrite(g->kernel, WIN_GDT_VA, gdt, sizeof(gdt));
	gen_vwrite(g->kernel, WIN_TSS_VA, tss, sizeof(tss));
}

static void idt_gate(struct gen_win *g, int vector, uint64_t handler)
{
	uint8_t gate[16] = { 0 };

	gate[0] = (uint8_t)handler, gate[1] = (uint8_t)(handler >> 8);
	gate[2] = WIN_SEL_KERNEL_CS;
	gate[5] = 0x8e;
	gate[6] = (uint8_t)(handler >> 16), gate[7] = (uint8_t)(handler >> 24);
	memcpy(gate + 8, (const uint8_t *)&handler + 4, 4);
	gen_vwrite(g->kernel, g->idt + 16 * (uint64_t)vector, gate, sizeof(gate));
}

static uint64_t symbol_va(struct gen_win *g, const char *name)
{
	uint64_t rva;

	if (isf_symbol(g->isf, name, &rva, NULL))
		gen_die("the profile has no %s", name);
	return g->kbase + rva;
}

static void load_sched(struct gen_win *g, const char *path)
{
	uint8_t code[WIN_SCHED_CODE_MAX] = { 0 };
	uint8_t panic0[] = { 0xb8, 0, 0, 0, 0, 0xe7, PORT_PANIC, 0xeb, 0xfe };
	uint8_t jmp[5] = { 0xe9 };
	uint64_t lstar = symbol_va(g, "KiSystemCall64"), rel;
	FILE *f = fopen(path, "rb");
	size_t n;
	int v;

	if (!f)
		gen_die("%s: cannot open", path);
	n = fread(code, 1, sizeof(code), f);
	if (!n || fgetc(f) != EOF)
		gen_die("%s: empty or larger than 0x%x bytes", path, WIN_SCHED_CODE_MAX);
	fclose(f);
	gen_map_new(g->kernel, WIN_SCHED_CODE_VA, WIN_SCHED_CODE_MAX / GEN_PAGE, GEN_RW);
	gen_vwrite(g->kernel, WIN_SCHED_CODE_VA, code, sizeof(code));
	gen_map(g->kernel, WIN_SCHED_DATA_VA, WIN_SCHED_DATA_PA, GEN_PAGE, GEN_RW | GEN_NX);

	/* LSTAR is ntoskrnl's KiSystemCall64, which jumps to the scheduler. */
	rel = WIN_SCHED_CODE_VA + WIN_SCHED_SYSCALL_OFF - (lstar + 5);
	memcpy(jmp + 1, &rel, 4);
	gen_vwrite(g->kernel, lstar, jmp, sizeof(jmp));
	/* Vector 0 stays KiDivideErrorFault (kernel discovery reads it): a stub there. */
	gen_vwrite(g->kernel, symbol_va(g, "KiDivideErrorFault"), panic0, sizeof(panic0));
	for (v = 1; v < WIN_IDT_VECTORS; v++)
		idt_gate(g, v, WIN_SCHED_CODE_VA + WIN_SCHED_PANIC_OFF + 16 * (uint64_t)v);
}

/* The kernel pages a system call uses under a KVA-shadow user DTB, before
 * it loads the kernel's: as Windows maps KiSystemCall64Shadow and its
 * per-processor data in the shadow tables. */
static void shadow_kernel_pages(struct gen_win *g, struct gen_space *sh)
{
	uint64_t pages[] = { symbol_va(g, "KiSystemCall64") & ~(GEN_PAGE - 1),
			     WIN_SCHED_CODE_VA,
			     WIN_SCHED_CODE_VA + GEN_PAGE,
			     WIN_SCHED_DATA_VA,
			     WIN_GDT_VA,
			     WIN_TSS_VA,
			     WIN_KSTACK_VA };
	size_t i;

	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		gen_map(sh, pages[i], gen_space_pa(g->kernel, pages[i]) & ~(GEN_PAGE - 1), GEN_PAGE,
			GEN_RW);
}

struct slot {
	const char *name, *state;
	uint64_t pid, dtb, user_dtb, entry, entry_gpa, links;
	uint64_t pte_va, pte;
};

static void write_slot(struct gen_win *g, int i, const struct slot *s, int runnable)
{
	uint8_t b[WIN_SLOT_SIZE] = { 0 };

	put64(b + WIN_S_STATE, runnable);
	put64(b + WIN_S_CR3, s->user_dtb ? s->user_dtb : s->dtb);
	put64(b + WIN_S_RIP, s->entry);
	put64(b + WIN_S_RFLAGS, WIN_USER_RFLAGS);
	put64(b + WIN_S_GPR + 4 * 8, WIN_USTACK_VA + WIN_USTACK_PAGES * GEN_PAGE - 0x28);
	put64(b + WIN_S_PTE_VA, s->pte_va);
	put64(b + WIN_S_PTE, s->pte);
	put64(b + WIN_S_PID, s->pid);
	gen_vwrite(g->kernel, WIN_SCHED_DATA_VA + WIN_SLOT_OFF + WIN_SLOT_SIZE * (uint64_t)i, b,
		   sizeof(b));
}

static int image_read(const void *ctx, uint32_t rva, void *buf, size_t len,
		      struct svmtrace_error *err)
{
	const struct gen_pe *pe = ctx;

	if (rva > pe->size_of_image || len > pe->size_of_image - rva)
		return SVMTRACE_E_FORMAT;
	memcpy(buf, pe->image + rva, len);
	return 0;
}

/* The programs call the DLL at a fixed RVA (winlayout.h): make sure it is there. */
static void check_dll_call(const struct gen_pe *dll, const char *path)
{
	struct pe_reader r = { image_read, dll };
	struct svmtrace_error err;
	struct pe_image img;
	uint32_t rva;

	if (pe_parse(&r, &img, &err) || pe_export_find(&r, &img, WIN_DLL_CALL_NAME, &rva, &err))
		gen_die("%s: %s", path, err.message);
	if (rva != WIN_DLL_CALL_RVA)
		gen_die("%s: %s is at RVA 0x%x, the programs call 0x%x (winlayout.h)", path,
			WIN_DLL_CALL_NAME, rva, WIN_DLL_CALL_RVA);
}

static uint64_t kread64(struct gen_win *g, uint64_t va)
{
	uint64_t pa = gen_space_pa(g->kernel, va), v;

	memcpy(&v, gen_phys_page(g->m, pa & ~(GEN_PAGE - 1)) + (pa & (GEN_PAGE - 1)), 8);
	return v;
}

static void data_u64(struct gen_win *g, uint64_t off, uint64_t v)
{
	gen_vwrite_u64(g->kernel, WIN_SCHED_DATA_VA + off, v);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' }, { "sched", required_argument, NULL, 's' },
		{ "dll", required_argument, NULL, 'd' },     { "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *profile = NULL, *sched = NULL, *dll = NULL, *out = NULL;
	static struct gen_pe pes[4];
	struct slot slots[4] = { 0 };
	struct svmtrace_error err;
	struct gen_win g = { 0 };
	uint64_t boot[WIN_BOOT_OFF_MEMSIZE / 8 + 1] = { 0 };
	char path[4096];
	FILE *targets;
	int opt, i;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			profile = optarg;
			break;
		case 's':
			sched = optarg;
			break;
		case 'd':
			dll = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!profile || !sched || !dll || !out || argc - optind != 4) {
		fputs(usage, stderr);
		return 2;
	}
	if (isf_load_file(profile, &g.isf, &err))
		gen_die("%s", err.message);
	for (i = 0; i < 4; i++) {
		char *eq = strchr(argv[optind + i], '=');

		if (!eq || eq == argv[optind + i])
			gen_die("%s: expected NAME=PE", argv[optind + i]);
		*eq = 0;
		slots[i].name = argv[optind + i];
		gen_pe_load(eq + 1, &pes[i]);
	}
	gen_pe_load(dll, &g.dll);
	check_dll_call(&g.dll, dll);
	g.dll_name = strrchr(dll, '/') ? strrchr(dll, '/') + 1 : dll;
	g.exe = pes[0];
	g.m = gen_phys_new(WIN_MEM_SIZE, 7);
	snprintf(path, sizeof(path), "%s.expect", out);
	g.expect = fopen(path, "w");
	if (!g.expect)
		gen_die("%s: cannot create", path);

	gen_win_kernel(&g);
	build_gdt_tss(&g);
	load_sched(&g, sched);
	gen_win_process(&g, &(struct gen_proc){ .pid = 4, .name = "System", .system = true });
	for (i = 0; i < 4; i++) {
		struct gen_proc p = { .pid = 1200 + 4 * (uint64_t)i, .ppid = 4, .name = slots[i].name,
				      .pe = &pes[i], .kva_shadow = i == 1,
				      .entry = i == 2 ? ENTRY_DEMAND_ZERO : ENTRY_VALID };
		struct slot *s = &slots[i];
		uint64_t page;

		gen_win_process(&g, &p);
		gen_map_new(g.last_space, WIN_USTACK_VA, WIN_USTACK_PAGES, GEN_US | GEN_RW | GEN_NX);
		s->pid = p.pid;
		s->dtb = gen_space_pml4(g.last_space);
		s->user_dtb = g.last_shadow ? gen_space_pml4(g.last_shadow) : 0;
		s->entry = g.last_entry;
		page = s->entry & ~(GEN_PAGE - 1);
		s->entry_gpa = gen_space_pa(g.last_space, s->entry);
		s->links = g.last_links;
		s->state = "valid";
		if (g.last_shadow)
			shadow_kernel_pages(&g, g.last_shadow);
		if (i == 2) {
			/* The scheduler makes the entry PTE valid through a kernel window
			 * onto the page table that holds it. */
			uint64_t pte_pa = gen_space_pte_pa(g.last_space, page);

			gen_map(g.kernel, WIN_PTE_WINDOW_VA, pte_pa & ~(GEN_PAGE - 1), GEN_PAGE,
				GEN_RW | GEN_NX);
			s->pte_va = WIN_PTE_WINDOW_VA + (pte_pa & (GEN_PAGE - 1));
			s->pte = (s->entry_gpa & ~(GEN_PAGE - 1)) | GEN_P | GEN_RW | GEN_US;
			s->state = "lazy";
		}
		if (i == 3) {
			/* Not in the list yet: unlink it again (it was the tail). */
			uint64_t prev = kread64(&g, s->links + 8);

			gen_vwrite_u64(g.kernel, prev, g.head);
			gen_vwrite_u64(g.kernel, g.head + 8, prev);
			gen_vwrite_u64(g.kernel, s->links, s->links);
			gen_vwrite_u64(g.kernel, s->links + 8, s->links);
			g.tail = prev;
			s->state = "late";
		}
		write_slot(&g, i, s, i != 3);
	}
	fprintf(g.expect, "# %s (pid %llu) is linked into the list at run time\n", slots[3].name,
		(unsigned long long)slots[3].pid);

	data_u64(&g, WIN_D_CURRENT, WIN_SCHED_DATA_VA + WIN_SLOT_OFF + 3 * WIN_SLOT_SIZE);
	data_u64(&g, WIN_D_KCR3, gen_space_pml4(g.kernel));
	data_u64(&g, WIN_D_SLOTS, WIN_SCHED_DATA_VA + WIN_SLOT_OFF);
	data_u64(&g, WIN_D_SLOTS_END, WIN_SCHED_DATA_VA + WIN_SLOT_OFF + 4 * WIN_SLOT_SIZE);
	data_u64(&g, WIN_D_LINK_AT, WIN_LINK_AT);
	data_u64(&g, WIN_D_LATE_LINKS, slots[3].links);
	data_u64(&g, WIN_D_LATE_SLOT, WIN_SCHED_DATA_VA + WIN_SLOT_OFF + 3 * WIN_SLOT_SIZE);
	data_u64(&g, WIN_D_LIST_HEAD, g.head);

	boot[WIN_BOOT_OFF_MAGIC / 8] = WIN_BOOT_MAGIC;
	boot[WIN_BOOT_OFF_RIP / 8] = WIN_SCHED_CODE_VA;
	boot[WIN_BOOT_OFF_CR3 / 8] = gen_space_pml4(g.kernel);
	boot[WIN_BOOT_OFF_RSP / 8] = WIN_KSTACK_VA + GEN_PAGE;
	boot[WIN_BOOT_OFF_GDT / 8] = WIN_GDT_VA;
	boot[WIN_BOOT_OFF_IDT / 8] = g.idt;
	boot[WIN_BOOT_OFF_TSS / 8] = WIN_TSS_VA;
	boot[WIN_BOOT_OFF_LSTAR / 8] = symbol_va(&g, "KiSystemCall64");
	boot[WIN_BOOT_OFF_KPCR / 8] = g.kpcr;
	boot[WIN_BOOT_OFF_MEMSIZE / 8] = WIN_MEM_SIZE;
	gen_phys_write(g.m, WIN_BOOT_GPA, boot, sizeof(boot));

	gen_win_finish(&g);
	snprintf(path, sizeof(path), "%s.elf", out);
	gen_write_elf(g.m, g.vcpus, g.nr_vcpus, true, path);
	snprintf(path, sizeof(path), "%s.targets", out);
	targets = fopen(path, "w");
	if (!targets)
		gen_die("%s: cannot create", path);
	for (i = 0; i < 4; i++)
		fprintf(targets, "%s %llu 0x%llx 0x%llx 0x%llx 0x%llx %s\n", slots[i].name,
			(unsigned long long)slots[i].pid, (unsigned long long)slots[i].dtb,
			(unsigned long long)slots[i].user_dtb, (unsigned long long)slots[i].entry,
			(unsigned long long)slots[i].entry_gpa, slots[i].state);
	if (fclose(targets) || fclose(g.expect))
		gen_die("%s: write failed", out);
	isf_free(g.isf);
	gen_phys_free(g.m);
	return 0;
}
