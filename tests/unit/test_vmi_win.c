// SPDX-License-Identifier: GPL-2.0
/*
 * The Windows layer on hand-built memory: software PTE states, the list
 * walker's corruption checks, and LSTAR discovery through the memory-driver
 * seam (the live driver will report LSTAR; files cannot).
 */
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/win_session.h"
#include "lib/vmi/x86_walk.h"
#include "../vmi/unit_fixture.h"

#include <check.h>

#define MEM_SIZE (8ULL << 20)
#define KVA	 0xfffff80000000000ULL
#define UVA	 0x00007ff600000000ULL
#define PROTO_VA (KVA + 0x10000)

static struct fx_mem m;
static uint64_t pml4;
static struct svmtrace_vmi_profile prof;
static struct svmtrace_vmi vmi;
static struct svmtrace_vmi_mem *mem;

/* Windows 10 x64 PTE layout, as the shared profiles describe it. */
static void setup(void)
{
	struct svmtrace_error err;

	memset(&prof, 0, sizeof(prof));
	strcpy(prof.id, "030201000504070608090A0B0C0D0E0F-7");
	prof.pte.valid = (struct win_bits){ 0, 1 };
	prof.pte.transition = (struct win_bits){ 11, 1 };
	prof.pte.trans_pfn = (struct win_bits){ 12, 36 };
	prof.pte.prototype = (struct win_bits){ 10, 1 };
	prof.pte.proto_address = (struct win_bits){ 16, 48 };
	prof.pte.pagefile_high = (struct win_bits){ 32, 32 };
	prof.list.flink = 0;
	prof.list.blink = 8;
	fx_init(&m, MEM_SIZE, 0x1000);
	pml4 = fx_page(&m);
	fx_map(&m, pml4, PROTO_VA, 0x200000, 1, 2); /* prototype PTE page */
	fx_map(&m, pml4, KVA, 0x201000, 1, 2);	    /* list page */
	ck_assert_int_eq(svmtrace_vmi_mem_open_buffer(m.buf, m.size, "m", &mem, &err), 0);
	vmi = (struct svmtrace_vmi){ .mem = mem, .profile = &prof };
	vmi.kernel.dtb = pml4;
	vmi.kernel.paging_levels = 4;
}

static void teardown(void)
{
	svmtrace_vmi_mem_close(mem);
	free(m.buf);
}

/* Map UVA 4K and overwrite its PTE with @pte; returns the entry's GPA. */
static uint64_t user_pte(uint64_t pte)
{
	uint64_t at = fx_map(&m, pml4, UVA, 0x300000, 1, 4);

	fx_put64(&m, at, pte);
	return at;
}

static int translate(struct svmtrace_vmi_translation *t, struct svmtrace_error *err)
{
	return svmtrace_vmi_translate(&vmi, pml4, UVA + 0x123, t, err);
}

START_TEST(transition_page_is_in_memory)
{
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;

	user_pte(0x345ULL << 12 | 1 << 11 | 3 << 5);
	ck_assert_int_eq(translate(&t, &err), 0);
	ck_assert_int_eq(t.state, SVMTRACE_VMI_PAGE_TRANSITION);
	ck_assert_uint_eq(t.gpa, 0x345123);
}
END_TEST

START_TEST(prototype_ptes_are_followed)
{
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;

	user_pte(PROTO_VA << 16 | 1 << 10);
	fx_put64(&m, 0x200000, 0x456000 | 0x21);
	ck_assert_int_eq(translate(&t, &err), 0);
	ck_assert_int_eq(t.state, SVMTRACE_VMI_PAGE_PROTOTYPE);
	ck_assert_uint_eq(t.gpa, 0x456123);
	ck_assert_uint_eq(t.prototype_va, PROTO_VA);

	fx_put64(&m, 0x200000, 0x567ULL << 12 | 1 << 11);
	ck_assert_int_eq(translate(&t, &err), 0);
	ck_assert_int_eq(t.state, SVMTRACE_VMI_PAGE_PROTOTYPE_TRANSITION);
	ck_assert_uint_eq(t.gpa, 0x567123);

	fx_put64(&m, 0x200000, 0xffffc00012345670ULL << 16 | 1 << 10);
	ck_assert_int_eq(translate(&t, &err), SVMTRACE_E_NOT_RESIDENT);
	ck_assert_msg(strstr(err.message, "subsection"), "%s", err.message);
}
END_TEST

START_TEST(not_resident_states_say_why)
{
	static const struct {
		uint64_t pte;
		const char *why;
	} cases[] = {
		{ 0xffffffff0000ULL << 16 | 1 << 10, "refers to the VAD" },
		{ 0x1234ULL << 32 | 1 << 12 | 3 << 5, "paged out to the page file" },
		{ 3 << 5, "demand-zero" },
		{ 0, "PTE is zero" },
	};
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		user_pte(cases[i].pte);
		ck_assert_int_eq(translate(&t, &err), SVMTRACE_E_NOT_RESIDENT);
		ck_assert_msg(strstr(err.message, cases[i].why), "%zu: %s", i, err.message);
	}
}
END_TEST

START_TEST(page_table_in_transition)
{
	struct svmtrace_vmi_translation t;
	struct svmtrace_error err;
	uint64_t at = user_pte(0x600000 | 5), pt = at & ~0xfffULL;
	uint64_t pde = pml4, i;

	/* Find the PDE that points at the PT page and make it a transition entry. */
	for (i = 0; i < MEM_SIZE; i += 8)
		if ((fx_get64(&m, i) & ~0xfffULL) == pt && i != at)
			pde = i;
	fx_put64(&m, pde, pt | 1 << 11);
	ck_assert_int_eq(translate(&t, &err), 0);
	ck_assert_uint_eq(t.gpa, 0x600123);
	ck_assert_int_eq(t.state, SVMTRACE_VMI_PAGE_VALID);
}
END_TEST

/* A list in the page at 0x201000 (VA KVA): head at +0, entries at +0x100*i. */
static void list(int n)
{
	int i;

	for (i = 0; i <= n; i++) {
		uint64_t self = KVA + 0x100 * i;

		fx_put64(&m, 0x201000 + 0x100 * i, i == n ? KVA : self + 0x100);
		fx_put64(&m, 0x201000 + 0x100 * i + 8, i == 0 ? KVA + 0x100 * n : self - 0x100);
	}
}

static int count_visit(void *ctx, uint64_t link, struct svmtrace_error *err)
{
	(void)link;
	(void)err;
	++*(int *)ctx;
	return 0;
}

static int walk(int *n, struct svmtrace_error *err)
{
	*n = 0;
	return win_list_walk(&vmi, pml4, KVA, 100, "test list", count_visit, n, err);
}

START_TEST(list_walker_checks_every_link)
{
	struct svmtrace_error err;
	int n;

	list(5);
	ck_assert_int_eq(walk(&n, &err), 0);
	ck_assert_int_eq(n, 5);
	list(0);
	ck_assert_int_eq(walk(&n, &err), 0);
	ck_assert_int_eq(n, 0);

	list(5); /* last -> second: a cycle that never comes back to the head */
	fx_put64(&m, 0x201000 + 0x500, KVA + 0x200);
	ck_assert_int_eq(walk(&n, &err), SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "test list has a cycle"), "%s", err.message);

	list(5);
	fx_put64(&m, 0x201000 + 0x300 + 8, KVA + 0x300);
	ck_assert_int_eq(walk(&n, &err), SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "has Blink 0xfffff80000000300"), "%s", err.message);

	list(5);
	fx_put64(&m, 0x201000 + 0x200, 0x8000000000000000ULL);
	ck_assert_int_eq(walk(&n, &err), SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "not a kernel list pointer"), "%s", err.message);

	list(5);
	fx_put64(&m, 0x201000 + 0x200, KVA + 0x5000);
	ck_assert_int_eq(walk(&n, &err), SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "cannot be read"), "%s", err.message);

	list(5);
	fx_put64(&m, 0x201000 + 8, KVA + 0x100);
	ck_assert_int_eq(walk(&n, &err), SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "head's Blink"), "%s", err.message);
}
END_TEST

START_TEST(list_walker_is_bounded)
{
	struct svmtrace_error err;
	int n;

	list(15);
	ck_assert_int_eq(win_list_walk(&vmi, pml4, KVA, 10, "test list", count_visit, &n, &err),
			 SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "more than 10 entries"), "%s", err.message);
}
END_TEST

START_TEST(lstar_finds_the_kernel)
{
	static const char *const exports[] = { "KeBugCheckEx" };
	static const uint32_t rvas[] = { 0x2000 };
	struct svmtrace_vmi_kernel k;
	struct svmtrace_error err;
	uint64_t base = 0xfffff80412600000ULL, i;

	fx_pe(m.buf + 0x400000, 0x4000, 0x2000, "ntoskrnl.exe", exports, rvas, 1, "ntkrnlmp.pdb",
	      7);
	for (i = 0; i < 4; i++)
		fx_map(&m, pml4, base + i * 0x1000, 0x400000 + i * 0x1000, 1, 0);
	/* The seam a live driver fills: registers with LSTAR. */
	mem->vcpus = calloc(1, sizeof(*mem->vcpus));
	mem->nr_vcpus = 1;
	mem->vcpus[0] = (struct svmtrace_vmi_vcpu){
		.valid = SVMTRACE_VMI_REG_CR3 | SVMTRACE_VMI_REG_LSTAR,
		.cr3 = pml4 | 1,
		.lstar = base + 0x2100,
	};
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 0);
	ck_assert_uint_eq(k.base, base);
	ck_assert_str_eq(k.id, "030201000504070608090A0B0C0D0E0F-7");
	ck_assert_str_eq(k.pdb_name, "ntkrnlmp.pdb");
	ck_assert_int_eq(k.method, SVMTRACE_VMI_METHOD_LSTAR);

	ck_assert_uint_eq(k.anchor, base + 0x2100);
	ck_assert_str_eq(k.anchor_symbol, ""); /* no profile checked it */
	ck_assert_str_eq(k.source, "vCPU 0 LSTAR");

	prof.sym.ki_system_call64 = (struct win_symbol){ true, 0x2100 };
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, &prof, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 0);
	ck_assert_str_eq(k.anchor_symbol, "KiSystemCall64");
	/* A KVA-shadow kernel's LSTAR is the shadow entry. */
	prof.sym.ki_system_call64 = (struct win_symbol){ true, 0x2000 };
	prof.sym.ki_system_call64_shadow = (struct win_symbol){ true, 0x2100 };
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, &prof, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 0);
	ck_assert_str_eq(k.anchor_symbol, "KiSystemCall64Shadow");
	prof.sym.ki_system_call64_shadow = (struct win_symbol){ true, 0x2180 };
	prof.sym.ki_system_call64 = (struct win_symbol){ true, 0x2200 };
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, &prof, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 SVMTRACE_E_CORRUPT);
	ck_assert_msg(strstr(err.message, "LSTAR 0xfffff80412602100 is not where the profile puts it (kernel base "
				      "0xfffff80412600000 + RVA 0x2200 or 0x2180)"),
		      "%s", err.message);
	/* A DLL that is not the kernel is skipped. */
	strcpy((char *)m.buf + 0x401918, "hal.pdb");
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 SVMTRACE_E_NOT_FOUND);
}
END_TEST

/* A kernel in five-level tables: found through LSTAR with CR4.LA57, and by
 * trying five levels when no register says. */
START_TEST(la57_kernel_is_found)
{
	static const char *const exports[] = { "KeBugCheckEx" };
	static const uint32_t rvas[] = { 0x2000 };
	uint64_t base = 0xff5ff80412600000ULL, pml5 = fx_page(&m), i;
	struct svmtrace_vmi_kernel k;
	struct svmtrace_error err;

	fx_pe(m.buf + 0x400000, 0x4000, 0x2000, "ntoskrnl.exe", exports, rvas, 1, "ntkrnlmp.pdb",
	      7);
	for (i = 0; i < 4; i++)
		fx_map_in(&m, pml5, 5, base + i * 0x1000, 0x400000 + i * 0x1000, 1, 0);
	mem->vcpus = calloc(1, sizeof(*mem->vcpus));
	mem->nr_vcpus = 1;
	mem->vcpus[0] = (struct svmtrace_vmi_vcpu){
		.valid = SVMTRACE_VMI_REG_CR3 | SVMTRACE_VMI_REG_CR4 | SVMTRACE_VMI_REG_LSTAR,
		.cr3 = pml5,
		.cr4 = X86_CR4_LA57 | 0x20,
		.lstar = base + 0x2100,
	};
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 0);
	ck_assert_uint_eq(k.base, base);
	ck_assert_uint_eq(k.paging_levels, 5);
	/* CR4 without LA57 (a wrong record): four levels only, nothing there. */
	mem->vcpus[0].cr4 = 0x20;
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "not a kernel address"), "%s", err.message);
	/* No CR4 recorded: four levels fail, five find it. */
	mem->vcpus[0].valid &= ~(uint32_t)SVMTRACE_VMI_REG_CR4;
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 0);
	ck_assert_uint_eq(k.paging_levels, 5);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { transition_page_is_in_memory,  prototype_ptes_are_followed,
				       not_resident_states_say_why,   page_table_in_transition,
				       list_walker_checks_every_link, list_walker_is_bounded,
				       lstar_finds_the_kernel, la57_kernel_is_found };

	return fx_run("vmi-win", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
