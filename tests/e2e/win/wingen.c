// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-wingen: lay out the lab's Windows-layout L2 guest.
 *
 *   svmtrace-e2e-wingen --profile ISF --sched SCHED.bin --dll NTDLL --dll2 DLL
 *                       [--seed N] [--kva-shadow] [--hv-tsc-page] --out PREFIX NAME=PE...
 *
 * The Windows side comes from the VMI tests' generator (tests/vmi/gen):
 * ntoskrnl's headers and symbols at the profile's RVAs, KPCR, IDT, the
 * processor start block, EPROCESS list, PEBs, loader lists and the PE
 * images, KVA-shadow user page tables, all placed at random from --seed
 * (default 1) as KASLR and ASLR would.  Added here, to make it run:
 * a GDT and TSS with Windows' selectors, the scheduler (sched.S) with its
 * data page, kernel stack and process slots, IDT vectors 1-31 to its panic
 * stubs, a JMP from the LSTAR to its system call entry, the programs'
 * imports bound to ntdll (winbind.c), every page a system call touches
 * before it reloads CR3 mapped in each
 * KVA-shadow space, one user stack and TEB per thread, the kernel's
 * variables that say where threads begin in ntdll (PspLoaderInitRoutine and
 * PspUserThreadStart, or PsNtdllExports: whichever the profile has), and
 * the boot block (winlayout.h) from which the VMM and the model start the
 * vCPU.  Every image is mapped relocated to its base, as Windows maps it.
 * Each process's first thread starts as Windows starts it: its context is
 * RtlUserThreadStart(entry point, PEB), and the scheduler sends it through
 * LdrInitializeThunk first (sched.S).
 *
 * Without --kva-shadow the kernel is what Windows runs on AMD, where KVA
 * shadow is off: LSTAR = KiSystemCall64, IDT[0] = KiDivideErrorFault, no
 * process has a user DTB.  With it, the kernel is a KVA-shadow one: LSTAR =
 * KiSystemCall64Shadow, IDT[0] = KiDivideErrorFaultShadow, and NAME2 runs
 * under its user DTB.  With --hv-tsc-page every process also maps the
 * Hyper-V reference TSC page (winlayout.h, WIN_HV_TSC_VA), for user-mode
 * QueryPerformanceCounter.
 *
 * The processes, in slot order (NAME=PE pairs, in this order):
 *   1 System (pid 4, no user code)
 *   2 NAME1 pid 1200: plain 4K image; its slot for a thread it creates
 *   3 NAME2 pid 1204: with --kva-shadow, runs under its user DTB
 *   4 NAME3 pid 1208: entry page not resident (demand-zero PTE) until the
 *     scheduler first runs it
 *   5 NAME4 pid 1212: not in the process list until the scheduler links
 *     it (at the WIN_LINK_AT-th system call, then PORT_GO)
 *   6 NAME5 pid 1216, 7 NAME6 pid 1220: processes NAME4 creates at run time
 *     (NtCreateUserProcess, the table at WIN_CREATABLE_OFF): not linked,
 *     their first thread not runnable until then
 *
 * Writes PREFIX.elf (a QEMU-style ELF core of the initial memory: the VMM
 * and the model load its PT_LOADs, svmtrace-vmi reads it as a dump),
 * PREFIX.expect (the generator's record of what VMI must find, with a
 * "discovery lstar=SYMBOL idt0=SYMBOL" line) and
 * PREFIX.targets, one line per process:
 *   NAME PID DTB USER-DTB-or-0 ENTRY-VA ENTRY-GPA STATE PARENT-PID
 * STATE is valid, lazy, late or created (its parent creates it); PREFIX.threads,
 * one line per thread: NAME PID TID TEB first|created; and PREFIX.loader, NAME VA per line: where
 * ntdll's LdrInitializeThunk and RtlUserThreadStart, helper.dll's DllMain
 * and each image's TLS callback (tls_callback.PID) are.
 */
#include "../../vmi/gen/gen_win.h"
#include "lib/vmi/isf.h"
#include "../guest/layout.h"
#include "winbind.h"
#include "winlayout.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define USTACK_LO 0x0000001000000000ULL /* stacks and TEBs, each at a place drawn for it */
#define USTACK_HI 0x000000ff00000000ULL

/* After each of the first three processes started (NtContinue) and yielded once. */
#define WIN_LINK_AT 6
#define NR_PROCS    6	     /* besides System */
#define LATE	    3	     /* linked at run time */
#define CREATED	    4	     /* this one and the next: created by LATE */
#define SPARE_SLOT  NR_PROCS /* the plain process's second thread */

static const char usage[] =
	"usage: svmtrace-e2e-wingen --profile ISF --sched SCHED.bin --dll NTDLL --dll2 DLL\n"
	"       [--seed N] [--kva-shadow] [--hv-tsc-page] --out PREFIX\n"
	"       NAME=PE NAME=PE NAME=PE NAME=PE NAME=PE NAME=PE\n"
	"       (plain, KVA shadow, lazy entry, late, and the two the late one creates)\n";

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

/* The system call entry and IDT[0] handler of this kernel: KVA shadow's or not. */
static const char *lstar_symbol(const struct gen_win *g)
{
	return g->idt_shadow ? "KiSystemCall64Shadow" : "KiSystemCall64";
}

static const char *divide_symbol(const struct gen_win *g)
{
	return g->idt_shadow ? "KiDivideErrorFaultShadow" : "KiDivideErrorFault";
}

static void load_sched(struct gen_win *g, const char *path)
{
	uint8_t code[WIN_SCHED_CODE_MAX] = { 0 };
	uint8_t panic0[] = { 0xb8, 0, 0, 0, 0, 0xe7, PORT_PANIC, 0xeb, 0xfe };
	/* jmp qword ptr [rip]; then the target: ntoskrnl may lie further than 2 GiB away */
	uint8_t jmp[14] = { 0xff, 0x25 };
	uint64_t lstar = symbol_va(g, lstar_symbol(g)), target;
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

	/* LSTAR is ntoskrnl's KiSystemCall64[Shadow], which jumps to the scheduler. */
	target = WIN_SCHED_CODE_VA + WIN_SCHED_SYSCALL_OFF;
	memcpy(jmp + 6, &target, 8);
	gen_vwrite(g->kernel, lstar, jmp, sizeof(jmp));
	/* Vector 0 stays KiDivideErrorFault[Shadow] (kernel discovery reads it): a stub there. */
	gen_vwrite(g->kernel, symbol_va(g, divide_symbol(g)), panic0, sizeof(panic0));
	for (v = 1; v < WIN_IDT_VECTORS; v++)
		idt_gate(g, v, WIN_SCHED_CODE_VA + WIN_SCHED_PANIC_OFF + 16 * (uint64_t)v);
}

/* The kernel pages a system call uses under a KVA-shadow user DTB, before
 * it loads the kernel's: as Windows maps KiSystemCall64Shadow and its
 * per-processor data in the shadow tables. */
static void shadow_kernel_pages(struct gen_win *g, struct gen_space *sh)
{
	uint64_t pages[] = { symbol_va(g, lstar_symbol(g)) & ~(GEN_PAGE - 1),
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

/* A process and its first thread. */
struct slot {
	const char *name, *state;
	uint64_t pid, ppid, tid, dtb, user_dtb, entry, entry_gpa, links, peb, teb;
	uint64_t pte_va, pte;
};

/* One thread's slot: its IDs, TEB, stack, initial RCX and RDX, its ETHREAD. */
struct thread {
	int slot, k; /* slot index; thread k of its process */
	uint64_t tid, teb, stack_top, rcx, rdx;
	uint64_t spare;			     /* VA of the slot its process has for a new thread */
	uint64_t ethread_links, thread_head; /* a thread created at run time: where it links */
	uint64_t w32start;		     /* ... and where its start address goes */
};

static uint64_t slot_va(int i)
{
	return WIN_SCHED_DATA_VA + WIN_SLOT_OFF + WIN_SLOT_SIZE * (uint64_t)i;
}

/* Where threads begin in ntdll, and the kernel variable that says so. */
struct thread_start {
	uint64_t ldr_init, user_start; /* LdrInitializeThunk, RtlUserThreadStart */
	uint64_t ldr_init_var;	       /* the kernel's copy of ldr_init */
};

/*
 * A thread that never ran: RtlUserThreadStart(RCX, RDX) on its stack, as its
 * creator left it (a process's first thread: the entry point and the PEB).
 */
static void write_slot(struct gen_win *g, const struct slot *s, const struct thread *th,
		       int runnable, const struct thread_start *ts)
{
	uint8_t b[WIN_SLOT_SIZE] = { 0 };

	put64(b + WIN_S_STATE, runnable);
	put64(b + WIN_S_CR3, s->user_dtb ? s->user_dtb : s->dtb);
	put64(b + WIN_S_KCR3, s->dtb);
	put64(b + WIN_S_RIP, ts->user_start);
	put64(b + WIN_S_RFLAGS, WIN_USER_RFLAGS);
	put64(b + WIN_S_GPR + 1 * 8, th->rcx);
	put64(b + WIN_S_GPR + 2 * 8, th->rdx);
	put64(b + WIN_S_GPR + 4 * 8, th->stack_top - 0x28);
	if (!th->k) {
		put64(b + WIN_S_PTE_VA, s->pte_va);
		put64(b + WIN_S_PTE, s->pte);
	}
	put64(b + WIN_S_PID, s->pid);
	put64(b + WIN_S_TEB, th->teb);
	put64(b + WIN_S_TID, th->tid);
	put64(b + WIN_S_FRESH, 1);
	put64(b + WIN_S_SPARE, th->spare);
	put64(b + WIN_S_ETHREAD_LINKS, th->ethread_links);
	put64(b + WIN_S_THREAD_HEAD, th->thread_head);
	put64(b + WIN_S_W32START, th->w32start);
	gen_vwrite(g->kernel, slot_va(th->slot), b, sizeof(b));
}

/* The fields the lab's code uses at fixed offsets (winlayout.h) are the profile's. */
static void check_field(struct gen_win *g, const char *type, const char *name, uint64_t want)
{
	struct svmtrace_error err;
	struct isf_field f;

	if (isf_field(g->isf, type, name, &f, &err))
		gen_die("%s", err.message);
	if (f.offset != want)
		gen_die("%s.%s is at 0x%llx in the profile, the lab's code uses 0x%llx "
			"(winlayout.h)",
			type, name, (unsigned long long)f.offset, (unsigned long long)want);
}

static void check_fields(struct gen_win *g)
{
	check_field(g, "_NT_TIB", "Self", WIN_TEB_SELF);
	check_field(g, "_TEB", "NtTib", 0);
	check_field(g, "_TEB", "ClientId", WIN_TEB_CLIENT_ID);
	check_field(g, "_TEB", "ProcessEnvironmentBlock", WIN_TEB_PEB);
	check_field(g, "_PEB", "ImageBaseAddress", WIN_PEB_IMAGE_BASE);
	check_field(g, "_PEB", "Ldr", WIN_PEB_LDR);
	check_field(g, "_PEB_LDR_DATA", "Initialized", WIN_LDR_INITIALIZED);
	check_field(g, "_PEB_LDR_DATA", "InLoadOrderModuleList", WIN_LDR_LOAD_ORDER);
	check_field(g, "_LDR_DATA_TABLE_ENTRY", "InLoadOrderLinks", 0);
	check_field(g, "_LDR_DATA_TABLE_ENTRY", "DllBase", WIN_LDRE_DLL_BASE);
	check_field(g, "_LDR_DATA_TABLE_ENTRY", "EntryPoint", WIN_LDRE_ENTRY_POINT);
}

/*
 * The kernel's own record of where threads begin, as the profile names it:
 * Windows 10 keeps ntdll's LdrInitializeThunk and RtlUserThreadStart in
 * PspLoaderInitRoutine and PspUserThreadStart, Windows 11 in the
 * _PS_NTDLL_EXPORTS structure PsNtdllExports.
 */
static void thread_start_vars(struct gen_win *g, struct thread_start *ts)
{
	uint64_t rva, ldr, user;
	struct isf_field f;

	if (!isf_symbol(g->isf, "PspLoaderInitRoutine", &rva, NULL)) {
		ldr = g->kbase + rva;
		user = symbol_va(g, "PspUserThreadStart");
	} else {
		uint64_t exports = symbol_va(g, "PsNtdllExports");

		if (isf_field(g->isf, "_PS_NTDLL_EXPORTS", "LdrInitializeThunk", &f, NULL))
			gen_die("the profile has neither PspLoaderInitRoutine nor "
				"_PS_NTDLL_EXPORTS.LdrInitializeThunk");
		ldr = exports + f.offset;
		if (isf_field(g->isf, "_PS_NTDLL_EXPORTS", "RtlUserThreadStart", &f, NULL))
			gen_die("the profile has no _PS_NTDLL_EXPORTS.RtlUserThreadStart");
		user = exports + f.offset;
	}
	if (!gen_space_has(g->kernel, ldr))
		gen_map_new(g->kernel, ldr & ~(GEN_PAGE - 1), 1, GEN_RW | GEN_NX);
	if (!gen_space_has(g->kernel, user))
		gen_map_new(g->kernel, user & ~(GEN_PAGE - 1), 1, GEN_RW | GEN_NX);
	gen_vwrite_u64(g->kernel, ldr, ts->ldr_init);
	gen_vwrite_u64(g->kernel, user, ts->user_start);
	ts->ldr_init_var = ldr;
}

/*
 * Thread @th->k of the process just made: its stack, its TEB (stack, itself,
 * IDs, the PEB) and its ETHREAD, in the thread list unless @later (a thread
 * its process creates at run time, NtCreateThreadEx).
 */
static void make_thread(struct gen_win *g, const struct slot *s, struct thread *th, bool later,
			const struct thread_start *ts, FILE *threads)
{
	uint64_t stack =
		gen_win_place(g, g->last_space, USTACK_LO, USTACK_HI, WIN_USTACK_PAGES, GEN_PAGE);
	uint64_t teb, tib, et;

	gen_map_new(g->last_space, stack, WIN_USTACK_PAGES, GEN_US | GEN_RW | GEN_NX);
	teb = gen_win_place(g, g->last_space, USTACK_LO, USTACK_HI, WIN_TEB_PAGES, GEN_PAGE);
	tib = teb + gen_win_field(g, "_TEB", "NtTib");
	th->stack_top = stack + WIN_USTACK_PAGES * GEN_PAGE;
	gen_map_new(g->last_space, teb, WIN_TEB_PAGES, GEN_US | GEN_RW | GEN_NX);
	gen_vwrite_u64(g->last_space, tib + gen_win_field(g, "_NT_TIB", "StackBase"),
		       th->stack_top);
	gen_vwrite_u64(g->last_space, tib + gen_win_field(g, "_NT_TIB", "StackLimit"), stack);
	gen_vwrite_u64(g->last_space, tib + gen_win_field(g, "_NT_TIB", "Self"), teb);
	gen_vwrite_u64(g->last_space, teb + WIN_TEB_CLIENT_ID, s->pid);
	gen_vwrite_u64(g->last_space, teb + WIN_TEB_CLIENT_ID + 8, th->tid);
	gen_vwrite_u64(g->last_space, teb + WIN_TEB_PEB, s->peb);
	th->teb = teb;
	et = gen_win_thread(g, &(struct gen_thread){ .pid = s->pid,
						     .tid = th->tid,
						     .teb = teb,
						     .start_address = ts->user_start,
						     .win32_start_address = th->rcx,
						     .unlinked = later });
	if (later) {
		th->ethread_links = g->last_thread_links;
		th->thread_head = g->last_thread_head;
		th->w32start = et + gen_win_field(g, "_ETHREAD", "Win32StartAddress");
	}
	fprintf(threads, "%s %llu %llu 0x%llx %s\n", s->name, (unsigned long long)s->pid,
		(unsigned long long)th->tid, (unsigned long long)teb, later ? "created" : "first");
}

/* The reference TSC page Hyper-V gives a partition (winlayout.h): its PA. */
static uint64_t hv_tsc_page(struct gen_win *g)
{
	uint8_t page[24] = { 0 };
	uint64_t pa = gen_phys_alloc(g->m), scale = WIN_HV_TSC_SCALE;
	uint32_t seq = WIN_HV_TSC_SEQUENCE;

	memcpy(page, &seq, 4);
	memcpy(page + 8, &scale, 8);
	gen_phys_write(g->m, pa, page, sizeof(page));
	return pa;
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
		{ "profile", required_argument, NULL, 'p' },
		{ "sched", required_argument, NULL, 's' },
		{ "dll", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "dll2", required_argument, NULL, 'D' },
		{ "seed", required_argument, NULL, 'S' },
		{ "kva-shadow", no_argument, NULL, 'k' },
		{ "hv-tsc-page", no_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *profile = NULL, *sched = NULL, *dll = NULL, *dll2 = NULL, *out = NULL;
	static struct gen_pe pes[NR_PROCS];
	FILE *threads;
	struct slot slots[NR_PROCS] = { 0 };
	struct thread_start ts;
	struct svmtrace_error err;
	struct gen_win g = { 0 };
	uint64_t boot[WIN_BOOT_SIZE / 8] = { 0 }, teb = 0;
	const char *exe_paths[NR_PROCS];
	uint64_t tsc_page = 0;
	char path[4096];
	FILE *targets;
	int opt, i, with_tsc_page = 0;

	g.seed = 1;

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
		case 'D':
			dll2 = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'S':
			g.seed = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			g.idt_shadow = true;
			break;
		case 't':
			with_tsc_page = 1;
			break;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!profile || !sched || !dll || !dll2 || !out || argc - optind != NR_PROCS) {
		fputs(usage, stderr);
		return 2;
	}
	if (isf_load_file(profile, &g.isf, &err))
		gen_die("%s", err.message);
	for (i = 0; i < NR_PROCS; i++) {
		char *eq = strchr(argv[optind + i], '=');

		if (!eq || eq == argv[optind + i])
			gen_die("%s: expected NAME=PE", argv[optind + i]);
		*eq = 0;
		slots[i].name = argv[optind + i];
		exe_paths[i] = eq + 1;
		gen_pe_load(eq + 1, &pes[i]);
	}
	gen_pe_load(dll, &g.dll);
	g.dll_name = strrchr(dll, '/') ? strrchr(dll, '/') + 1 : dll;
	gen_pe_load(dll2, &g.dll2);
	g.dll2_name = strrchr(dll2, '/') ? strrchr(dll2, '/') + 1 : dll2;
	g.relocate = true;
	g.exe = pes[0];
	g.m = gen_phys_new(WIN_MEM_SIZE, (uint32_t)g.seed);
	/* The fixed low pages, so that the start block goes elsewhere. */
	gen_phys_page(g.m, WIN_BOOT_GPA);
	gen_phys_page(g.m, WIN_SCHED_DATA_PA);
	snprintf(path, sizeof(path), "%s.expect", out);
	g.expect = fopen(path, "w");
	if (!g.expect)
		gen_die("%s: cannot create", path);

	snprintf(path, sizeof(path), "%s.threads", out);
	threads = fopen(path, "w");
	if (!threads)
		gen_die("%s: cannot create", path);

	gen_win_kernel(&g);
	fprintf(g.expect, "discovery lstar=%s idt0=%s\n", lstar_symbol(&g), divide_symbol(&g));
	for (i = 0; i < NR_PROCS; i++)
		if (!win_bind_imports(&pes[i], exe_paths[i], &g.dll, dll, g.dll_base))
			gen_die("%s imports nothing from %s", exe_paths[i], dll);
	ts.ldr_init = g.dll_base + win_export_rva(&g.dll, dll, WIN_LDR_INIT_NAME);
	ts.user_start = g.dll_base + win_export_rva(&g.dll, dll, WIN_THREAD_START_NAME);
	check_fields(&g);
	thread_start_vars(&g, &ts);
	build_gdt_tss(&g);
	load_sched(&g, sched);
	if (with_tsc_page)
		tsc_page = hv_tsc_page(&g);
	gen_win_process(&g, &(struct gen_proc){ .pid = 4, .name = "System", .system = true });
	for (i = 0; i < NR_PROCS; i++) {
		struct gen_proc p = { .pid = 1200 + 4 * (uint64_t)i,
				      .ppid = i < CREATED ? 4 : 0, /* its creator sets it */
				      .name = slots[i].name,
				      .pe = &pes[i],
				      .kva_shadow = g.idt_shadow && i == 1,
				      .entry = i == 2 ? ENTRY_DEMAND_ZERO : ENTRY_VALID };
		struct slot *s = &slots[i];
		/* Its first thread; the plain one has a slot for a thread it creates. */
		struct thread first = { .slot = i,
					.tid = 2000 + 4 * (uint64_t)i,
					.spare = i ? 0 : slot_va(SPARE_SLOT) },
			      spare = { .slot = SPARE_SLOT, .k = 1, .tid = 2100 };
		uint64_t page;

		gen_win_process(&g, &p);
		if (tsc_page)
			gen_map(g.last_space, WIN_HV_TSC_VA, tsc_page, GEN_PAGE, GEN_US | GEN_NX);
		s->pid = p.pid;
		s->ppid = i < CREATED ? 4 : slots[LATE].pid;
		s->peb = g.last_peb;
		s->dtb = gen_space_pml4(g.last_space);
		s->user_dtb = g.last_shadow ? gen_space_pml4(g.last_shadow) : 0;
		s->entry = g.last_entry;
		first.rcx = s->entry;
		first.rdx = s->peb;
		make_thread(&g, s, &first, false, &ts, threads);
		if (!i)
			make_thread(&g, s, &spare, true, &ts, threads);
		s->tid = first.tid;
		s->teb = first.teb;
		if (!teb)
			teb = first.teb; /* KERNEL_GS_BASE at boot: the first thread's TEB */
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
		if (i >= LATE) {
			/* Not in the list yet: unlink it again (it was the tail). */
			uint64_t prev = kread64(&g, s->links + 8);

			gen_vwrite_u64(g.kernel, prev, g.head);
			gen_vwrite_u64(g.kernel, g.head + 8, prev);
			gen_vwrite_u64(g.kernel, s->links, s->links);
			gen_vwrite_u64(g.kernel, s->links + 8, s->links);
			g.tail = prev;
			s->state = i == LATE ? "late" : "created";
		}
		if (i >= CREATED) {
			uint64_t c = WIN_SCHED_DATA_VA + WIN_CREATABLE_OFF +
				     WIN_C_SIZE * (uint64_t)(i - CREATED);

			data_u64(&g, c - WIN_SCHED_DATA_VA + WIN_C_SLOT, slot_va(i));
			data_u64(&g, c - WIN_SCHED_DATA_VA + WIN_C_LINKS, s->links);
			data_u64(&g, c - WIN_SCHED_DATA_VA + WIN_C_PPID,
				 g.last_eprocess + gen_win_field(&g, "_EPROCESS",
								 "InheritedFromUniqueProcessId"));
		}
		write_slot(&g, s, &first, i < LATE, &ts);
		if (!i)
			write_slot(&g, s, &spare, 0, &ts);
	}
	fprintf(g.expect, "# %s (pid %llu) is linked into the list at run time\n", slots[LATE].name,
		(unsigned long long)slots[LATE].pid);

	data_u64(&g, WIN_D_CREATABLE, WIN_SCHED_DATA_VA + WIN_CREATABLE_OFF);
	data_u64(&g, WIN_D_NR_CREATABLE, NR_PROCS - CREATED);
	data_u64(&g, WIN_D_CURRENT, slot_va(WIN_MAX_SLOTS - 1)); /* pick starts at slot 0 */
	data_u64(&g, WIN_D_LDR_INIT, ts.ldr_init_var);
	data_u64(&g, WIN_D_NTDLL, g.dll_base);
	data_u64(&g, WIN_D_SLOTS, WIN_SCHED_DATA_VA + WIN_SLOT_OFF);
	data_u64(&g, WIN_D_SLOTS_END, slot_va(WIN_MAX_SLOTS));
	data_u64(&g, WIN_D_LINK_AT, WIN_LINK_AT);
	data_u64(&g, WIN_D_LATE_LINKS, slots[LATE].links);
	data_u64(&g, WIN_D_LATE_SLOT, slot_va(LATE));
	data_u64(&g, WIN_D_LIST_HEAD, g.head);

	boot[WIN_BOOT_OFF_MAGIC / 8] = WIN_BOOT_MAGIC;
	boot[WIN_BOOT_OFF_RIP / 8] = WIN_SCHED_CODE_VA;
	boot[WIN_BOOT_OFF_CR3 / 8] = gen_space_pml4(g.kernel);
	boot[WIN_BOOT_OFF_RSP / 8] = WIN_KSTACK_VA + GEN_PAGE;
	boot[WIN_BOOT_OFF_GDT / 8] = WIN_GDT_VA;
	boot[WIN_BOOT_OFF_IDT / 8] = g.idt;
	boot[WIN_BOOT_OFF_TSS / 8] = WIN_TSS_VA;
	boot[WIN_BOOT_OFF_LSTAR / 8] = symbol_va(&g, lstar_symbol(&g));
	boot[WIN_BOOT_OFF_KPCR / 8] = g.kpcr;
	boot[WIN_BOOT_OFF_MEMSIZE / 8] = WIN_MEM_SIZE;
	boot[WIN_BOOT_OFF_TEB / 8] = teb;
	boot[WIN_BOOT_OFF_TSC_AUX / 8] = WIN_TSC_AUX;
	gen_phys_write(g.m, WIN_BOOT_GPA, boot, sizeof(boot));

	gen_win_finish(&g);
	snprintf(path, sizeof(path), "%s.elf", out);
	gen_write_elf(g.m, g.vcpus, g.nr_vcpus, true, path);
	snprintf(path, sizeof(path), "%s.targets", out);
	targets = fopen(path, "w");
	if (!targets)
		gen_die("%s: cannot create", path);
	for (i = 0; i < NR_PROCS; i++)
		fprintf(targets, "%s %llu 0x%llx 0x%llx 0x%llx 0x%llx %s %llu\n", slots[i].name,
			(unsigned long long)slots[i].pid, (unsigned long long)slots[i].dtb,
			(unsigned long long)slots[i].user_dtb, (unsigned long long)slots[i].entry,
			(unsigned long long)slots[i].entry_gpa, slots[i].state,
			(unsigned long long)slots[i].ppid);
	if (fclose(targets) || fclose(threads))
		gen_die("%s: write failed", out);
	snprintf(path, sizeof(path), "%s.loader", out);
	targets = fopen(path, "w");
	if (!targets)
		gen_die("%s: cannot create", path);
	fprintf(targets, "%s 0x%llx\n%s 0x%llx\nDllMain 0x%llx\n", WIN_LDR_INIT_NAME,
		(unsigned long long)ts.ldr_init, WIN_THREAD_START_NAME,
		(unsigned long long)ts.user_start,
		(unsigned long long)(g.dll2_base + g.dll2.entry_rva));
	for (i = 0; i < NR_PROCS; i++) /* each image at its own base */
		fprintf(targets, "tls_callback.%llu 0x%llx\n", (unsigned long long)slots[i].pid,
			(unsigned long long)(slots[i].entry - pes[i].entry_rva +
					     win_export_rva(&pes[i], slots[i].name,
							    "tls_callback")));
	if (fclose(targets) || fclose(g.expect))
		gen_die("%s: write failed", out);
	isf_free(g.isf);
	gen_phys_free(g.m);
	return 0;
}
