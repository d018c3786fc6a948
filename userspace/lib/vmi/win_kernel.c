// SPDX-License-Identifier: GPL-2.0
/*
 * Finding ntoskrnl.  Each method yields an address inside the kernel image
 * (an "anchor") and a page-table root; the image base is found by scanning
 * down from the anchor for a PE whose CodeView record names the kernel's
 * PDB, which also gives the GUID that selects the profile.  With a profile,
 * the anchor must be the symbol it claims to be.
 *
 *   lstar       MSR_LSTAR = KiSystemCall64 or KiSystemCall64Shadow
 *   kpcr        GS base (kernel mode) or KERNEL_GS_BASE (user mode) = KPCR,
 *               checked by KPCR.Self; KPCR.IdtBase -> IDT[0] handler
 *   idtr        IDTR -> IDT[0] handler = KiDivideErrorFault[Shadow]
 *   startblock  the processor start block the boot processor leaves in the
 *               first MiB (works on raw images without CPU state)
 *   pescan      physical memory alone: the kernel's CodeView record, found
 *               in a scan of every page and mapped back (win_pescan.c)
 *
 * Each records what it started from (anchor, the symbol it is, where it
 * came from), so that a caller can tell which path found the kernel.
 */
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/win_pe_reader.h"
#include "lib/vmi/win_probe.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/x86_walk.h"

#include <stdarg.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define KERNEL_SCAN_SPAN	  (64ULL << 20)
#define STARTBLOCK_AREA		  (1ULL << 20)
#define STARTBLOCK_SIGNATURE	  0x00000001000600e9ULL
#define STARTBLOCK_SIGNATURE_MASK 0xffffffffffff00ffULL /* byte 1: jmp offset */
#define STARTBLOCK_KERNEL_HINT	  0x70
#define STARTBLOCK_PML4		  0xa0

static const char *const kernel_pdbs[] = { "ntkrnlmp.pdb", "ntoskrnl.pdb", "ntkrnlpa.pdb",
					   "ntkrpamp.pdb" };

static const char *const method_names[SVMTRACE_VMI_METHOD_COUNT] = {
	[SVMTRACE_VMI_METHOD_LSTAR] = "lstar",	 [SVMTRACE_VMI_METHOD_KPCR] = "kpcr",
	[SVMTRACE_VMI_METHOD_IDTR] = "idtr",	 [SVMTRACE_VMI_METHOD_STARTBLOCK] = "startblock",
	[SVMTRACE_VMI_METHOD_PESCAN] = "pescan",
};

const char *svmtrace_vmi_method_name(enum svmtrace_vmi_method method)
{
	return (unsigned int)method < SVMTRACE_VMI_METHOD_COUNT ? method_names[method] : "?";
}

bool probe_kernel_pdb(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(kernel_pdbs) / sizeof(kernel_pdbs[0]); i++)
		if (!strcasecmp(name, kernel_pdbs[i]))
			return true;
	return false;
}

/* Where the anchor of a kernel just found came from. */
__attribute__((format(printf, 3, 4))) static void anchored(struct svmtrace_vmi_kernel *k,
							   uint64_t anchor, const char *fmt, ...)
{
	va_list ap;

	k->anchor = anchor;
	va_start(ap, fmt);
	vsnprintf(k->source, sizeof(k->source), fmt, ap);
	va_end(ap);
}

/* The upper, kernel half of the guest's linear addresses (48 or 57 bits). */
static bool is_kernel_va(const struct probe *pr, uint64_t va)
{
	return va >> 63 && x86_canonical(va, (int)pr->s.kernel.paging_levels);
}

/* Is there an ntoskrnl image at @base in @dtb?  Fills @k. */
static int kernel_at(const struct probe *pr, uint64_t dtb, uint64_t base,
		     struct svmtrace_vmi_kernel *k, struct svmtrace_error *err)
{
	struct win_pe_ctx ctx = { &pr->s, dtb, base };
	struct pe_reader r = win_pe_reader(&ctx);
	struct pe_codeview cv;
	struct pe_image img;
	char dll[32];
	int rc;

	rc = pe_parse(&r, &img, err);
	if (!rc)
		rc = pe_codeview(&r, &img, &cv, err);
	if (rc)
		return rc;
	if (!probe_kernel_pdb(cv.pdb_name))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "image at 0x%llx is %s, not the kernel",
				(unsigned long long)base, cv.pdb_name);
	if (!pe_export_dll_name(&r, &img, dll, sizeof(dll), NULL) &&
	    strcasecmp(dll, "ntoskrnl.exe"))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"image at 0x%llx exports as %s, not ntoskrnl.exe",
				(unsigned long long)base, dll);
	memset(k, 0, sizeof(*k));
	k->base = base;
	k->dtb = dtb;
	k->paging_levels = pr->s.kernel.paging_levels;
	k->size_of_image = img.size_of_image;
	snprintf(k->pdb_name, sizeof(k->pdb_name), "%s", cv.pdb_name);
	snprintf(k->id, sizeof(k->id), "%s", cv.id);
	return 0;
}

/*
 * Scan down from @anchor for the kernel image.  With @must_cover the image
 * must contain the anchor.  Unmapped stretches are skipped a whole table
 * entry at a time.
 */
int probe_scan_down(const struct probe *pr, uint64_t dtb, uint64_t anchor, int must_cover,
		    struct svmtrace_vmi_kernel *k, struct svmtrace_error *err)
{
	uint64_t va = anchor & ~(X86_PAGE_SIZE - 1), lowest = anchor - KERNEL_SCAN_SPAN;

	if (!is_kernel_va(pr, anchor))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "0x%llx is not a kernel address",
				(unsigned long long)anchor);
	while (va >= lowest && is_kernel_va(pr, va)) {
		struct svmtrace_vmi_translation t;
		uint8_t mz[2];

		if (x86_translate(pr->s.mem, dtb, (int)pr->s.kernel.paging_levels, va, NULL, &t,
				  NULL)) {
			va = (va & ~(t.page_size - 1)) - X86_PAGE_SIZE;
			continue;
		}
		if (!svmtrace_vmi_mem_read(pr->s.mem, t.gpa, mz, 2, NULL) && mz[0] == 'M' &&
		    mz[1] == 'Z' && !kernel_at(pr, dtb, va, k, NULL) &&
		    (!must_cover || anchor - va < k->size_of_image))
			return 0;
		va -= X86_PAGE_SIZE;
	}
	return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
			"no ntoskrnl image within 64 MiB below VA 0x%llx (DTB 0x%llx)",
			(unsigned long long)anchor, (unsigned long long)dtb);
}

/*
 * With a profile for this very kernel, @anchor must be symbol @a or its
 * KVA-shadow twin @a"Shadow" (@b); k->anchor_symbol says which.
 */
static int check_symbol(const struct probe *pr, struct svmtrace_vmi_kernel *k, uint64_t anchor,
			const char *what, const char *a_name, const struct win_symbol *a,
			const struct win_symbol *b, struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = pr->s.profile;

	if (!p || strcasecmp(p->id, k->id))
		return 0; /* the caller compares GUIDs */
	if (a->present && anchor == k->base + a->rva) {
		snprintf(k->anchor_symbol, sizeof(k->anchor_symbol), "%s", a_name);
		return 0;
	}
	if (b->present && anchor == k->base + b->rva) {
		snprintf(k->anchor_symbol, sizeof(k->anchor_symbol), "%sShadow", a_name);
		return 0;
	}
	return vmi_fail(err, SVMTRACE_E_CORRUPT,
			"%s 0x%llx is not where the profile puts it (kernel base 0x%llx + RVA "
			"0x%llx or 0x%llx)",
			what, (unsigned long long)anchor, (unsigned long long)k->base,
			(unsigned long long)a->rva, (unsigned long long)b->rva);
}

/* Try @anchor with @first, then every other known DTB. */
static int scan_any(const struct probe *pr, uint64_t first, uint64_t anchor, int must_cover,
		    struct svmtrace_vmi_kernel *k, struct svmtrace_error *err)
{
	unsigned int i;
	int rc = probe_scan_down(pr, first, anchor, must_cover, k, err);

	for (i = 0; rc && i < pr->nr_dtbs; i++)
		if (pr->dtbs[i] != first)
			rc = probe_scan_down(pr, pr->dtbs[i], anchor, must_cover, k, NULL);
	return rc;
}

static int idt0(const struct probe *pr, uint64_t dtb, uint64_t idt, uint64_t *handler,
		struct svmtrace_error *err)
{
	uint8_t g[16];
	int rc = svmtrace_vmi_read_va(&pr->s, dtb, idt, g, sizeof(g), err);

	if (rc)
		return vmi_prefix(err, rc, "IDT at 0x%llx", (unsigned long long)idt);
	*handler = (uint64_t)(g[0] | g[1] << 8) | (uint64_t)(g[6] | g[7] << 8) << 16 |
		   (uint64_t)(g[8] | g[9] << 8 | g[10] << 16 | (uint32_t)g[11] << 24) << 32;
	return 0;
}

static int from_idt(const struct probe *pr, uint64_t dtb, uint64_t idt,
		    struct svmtrace_vmi_kernel *k, struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = pr->s.profile;
	uint64_t handler = 0;
	int rc = idt0(pr, dtb, idt, &handler, err);

	if (!rc)
		rc = scan_any(pr, dtb, handler, 1, k, err);
	if (!rc)
		k->anchor = handler;
	if (!rc && p)
		rc = check_symbol(pr, k, handler, "IDT[0] handler", "KiDivideErrorFault",
				  &p->sym.ki_divide_error_fault,
				  &p->sym.ki_divide_error_fault_shadow, err);
	return rc;
}

static int no_register(struct svmtrace_error *err, const struct svmtrace_vmi_mem *mem,
		       const char *reg)
{
	if (mem->vcpu_note)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s (%s) records no %s: %s",
				svmtrace_vmi_mem_kind(mem), svmtrace_vmi_mem_name(mem), reg,
				mem->vcpu_note);
	return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s (%s) records no %s",
			svmtrace_vmi_mem_kind(mem), svmtrace_vmi_mem_name(mem), reg);
}

static int method_lstar(const struct probe *pr, struct svmtrace_vmi_kernel *k,
			struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = pr->s.profile;
	unsigned int i;
	int rc = no_register(err, pr->s.mem, "LSTAR");

	for (i = 0; i < svmtrace_vmi_mem_vcpu_count(pr->s.mem); i++) {
		const struct svmtrace_vmi_vcpu *v = svmtrace_vmi_mem_vcpu(pr->s.mem, i);

		if (!(v->valid & SVMTRACE_VMI_REG_LSTAR))
			continue;
		rc = scan_any(pr, win_dtb_mask(v->cr3), v->lstar, 1, k, err);
		if (!rc)
			anchored(k, v->lstar, "vCPU %u LSTAR", i);
		if (!rc && p)
			rc = check_symbol(pr, k, v->lstar, "LSTAR", "KiSystemCall64",
					  &p->sym.ki_system_call64, &p->sym.ki_system_call64_shadow,
					  err);
		if (!rc)
			return 0;
	}
	return rc;
}

static int method_idtr(const struct probe *pr, struct svmtrace_vmi_kernel *k,
		       struct svmtrace_error *err)
{
	unsigned int i;
	int rc = no_register(err, pr->s.mem, "IDTR");

	for (i = 0; i < svmtrace_vmi_mem_vcpu_count(pr->s.mem); i++) {
		const struct svmtrace_vmi_vcpu *v = svmtrace_vmi_mem_vcpu(pr->s.mem, i);

		if (!(v->valid & SVMTRACE_VMI_REG_IDTR))
			continue;
		rc = from_idt(pr, win_dtb_mask(v->cr3), v->idtr_base, k, err);
		if (!rc) {
			anchored(k, k->anchor, "vCPU %u IDTR 0x%llx -> IDT[0]", i,
				 (unsigned long long)v->idtr_base);
			return 0;
		}
	}
	return rc;
}

/* KPCR candidate @pcr: KPCR.Self must point at itself. */
static int from_kpcr(const struct probe *pr, uint64_t dtb, uint64_t pcr,
		     struct svmtrace_vmi_kernel *k, struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = pr->s.profile;
	uint64_t self, idt;
	int rc;

	rc = svmtrace_vmi_read_va(&pr->s, dtb, pcr + p->kpcr.self, &self, 8, err);
	if (!rc && self != pcr)
		rc = vmi_fail(err, SVMTRACE_E_NOT_FOUND,
			      "KPCR candidate 0x%llx: KPCR.Self is 0x%llx, not itself",
			      (unsigned long long)pcr, (unsigned long long)self);
	if (!rc)
		rc = svmtrace_vmi_read_va(&pr->s, dtb, pcr + p->kpcr.idt_base, &idt, 8, err);
	return rc ? rc : from_idt(pr, dtb, idt, k, err);
}

static int method_kpcr(const struct probe *pr, struct svmtrace_vmi_kernel *k,
		       struct svmtrace_error *err)
{
	unsigned int i, j;
	int rc = no_register(err, pr->s.mem, "GS base or KERNEL_GS_BASE holding a kernel address");

	if (!pr->s.profile)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"needs a profile for the KPCR layout (give --profiles FILE)");
	for (i = 0; i < svmtrace_vmi_mem_vcpu_count(pr->s.mem); i++) {
		static const char *const regs[2] = { "GS base", "KERNEL_GS_BASE" };
		const struct svmtrace_vmi_vcpu *v = svmtrace_vmi_mem_vcpu(pr->s.mem, i);
		uint64_t pcr[2] = { v->valid & SVMTRACE_VMI_REG_GS_BASE ? v->gs_base : 0,
				    v->valid & SVMTRACE_VMI_REG_KERNEL_GS_BASE ? v->kernel_gs_base
									       : 0 };

		for (j = 0; j < 2; j++) {
			unsigned int d;

			if (!is_kernel_va(pr, pcr[j]))
				continue;
			rc = from_kpcr(pr, win_dtb_mask(v->cr3), pcr[j], k, err);
			for (d = 0; rc && d < pr->nr_dtbs; d++)
				rc = from_kpcr(pr, pr->dtbs[d], pcr[j], k, err);
			if (!rc) {
				anchored(k, k->anchor, "vCPU %u %s -> KPCR 0x%llx -> IDT[0]", i,
					 regs[j], (unsigned long long)pcr[j]);
				return 0;
			}
		}
	}
	return rc;
}

/* The processor start block in the first MiB: where, its DTB and a kernel address. */
static int find_startblock(const struct svmtrace_vmi_mem *mem, uint64_t *at, uint64_t *pml4,
			   uint64_t *hint)
{
	uint64_t pa;

	for (pa = 0; pa < STARTBLOCK_AREA; pa += X86_PAGE_SIZE) {
		uint64_t sig;

		if (svmtrace_vmi_mem_read(mem, pa, &sig, 8, NULL) ||
		    (sig & STARTBLOCK_SIGNATURE_MASK) != STARTBLOCK_SIGNATURE ||
		    svmtrace_vmi_mem_read(mem, pa + STARTBLOCK_KERNEL_HINT, hint, 8, NULL) ||
		    svmtrace_vmi_mem_read(mem, pa + STARTBLOCK_PML4, pml4, 8, NULL))
			continue;
		*at = pa;
		if (*hint >> 63 && !(*pml4 & 0xfff) && *pml4)
			return 0;
	}
	return -1;
}

static int method_startblock(const struct probe *pr, struct svmtrace_vmi_kernel *k,
			     struct svmtrace_error *err)
{
	uint64_t at, pml4, hint;
	int rc;

	if (find_startblock(pr->s.mem, &at, &pml4, &hint))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"no processor start block in the first MiB of %s",
				svmtrace_vmi_mem_name(pr->s.mem));
	rc = probe_scan_down(pr, pml4, hint, 0, k, err);
	if (!rc)
		anchored(k, hint, "start block at GPA 0x%llx", (unsigned long long)at);
	return rc;
}

static void probe_init(struct probe *pr, const struct svmtrace_vmi_mem *mem,
		       const struct svmtrace_vmi_profile *profile)
{
	uint64_t at, pml4, hint;
	unsigned int i, j;

	memset(pr, 0, sizeof(*pr));
	pr->s.mem = mem;
	pr->s.profile = profile;
	for (i = 0; i < svmtrace_vmi_mem_vcpu_count(mem) && pr->nr_dtbs < PROBE_MAX_DTBS - 1; i++) {
		const struct svmtrace_vmi_vcpu *v = svmtrace_vmi_mem_vcpu(mem, i);
		uint64_t dtb = win_dtb_mask(v->cr3);

		for (j = 0; j < pr->nr_dtbs && pr->dtbs[j] != dtb; j++)
			;
		if (j == pr->nr_dtbs && (v->valid & SVMTRACE_VMI_REG_CR3) && dtb)
			pr->dtbs[pr->nr_dtbs++] = dtb;
	}
	if (!find_startblock(mem, &at, &pml4, &hint))
		pr->dtbs[pr->nr_dtbs++] = pml4;
}

/*
 * How many levels of page tables the guest uses, from the first vCPU record
 * that holds CR4 (all vCPUs of one kernel agree); 0 when none does.
 */
static int guest_paging_levels(const struct svmtrace_vmi_mem *mem)
{
	unsigned int i;

	for (i = 0; i < svmtrace_vmi_mem_vcpu_count(mem); i++) {
		const struct svmtrace_vmi_vcpu *v = svmtrace_vmi_mem_vcpu(mem, i);

		if (v->valid & SVMTRACE_VMI_REG_CR4)
			return x86_paging_levels(v->cr4);
	}
	return 0;
}

int svmtrace_vmi_kernel_probe(const struct svmtrace_vmi_mem *mem,
			      const struct svmtrace_vmi_profile *profile,
			      enum svmtrace_vmi_method method, struct svmtrace_vmi_kernel *out,
			      struct svmtrace_error *err)
{
	static int (*const methods[SVMTRACE_VMI_METHOD_COUNT])(
		const struct probe *, struct svmtrace_vmi_kernel *, struct svmtrace_error *) = {
		[SVMTRACE_VMI_METHOD_LSTAR] = method_lstar,
		[SVMTRACE_VMI_METHOD_KPCR] = method_kpcr,
		[SVMTRACE_VMI_METHOD_IDTR] = method_idtr,
		[SVMTRACE_VMI_METHOD_STARTBLOCK] = method_startblock,
		[SVMTRACE_VMI_METHOD_PESCAN] = probe_pescan,
	};
	int known = guest_paging_levels(mem), levels, rc;
	struct probe pr;

	if ((unsigned int)method >= SVMTRACE_VMI_METHOD_COUNT)
		return vmi_fail(err, SVMTRACE_E_INVALID, "no kernel discovery method %d",
				(int)method);
	probe_init(&pr, mem, profile);
	levels = known ? known : X86_PML4E;
	pr.s.kernel.paging_levels = (uint32_t)levels;
	rc = methods[method](&pr, out, err);
	if (rc && !known) { /* no CR4 recorded: five levels (LA57) may find it */
		levels = X86_PML5E;
		pr.s.kernel.paging_levels = (uint32_t)levels;
		if (!methods[method](&pr, out, NULL))
			rc = 0;
	}
	if (rc)
		return vmi_prefix(err, rc, "%s", method_names[method]);
	out->method = method;
	out->paging_levels = (uint32_t)levels;
	return 0;
}

int svmtrace_vmi_kernel_find(const struct svmtrace_vmi_mem *mem,
			     const struct svmtrace_vmi_profile *profile,
			     struct svmtrace_vmi_kernel *out, struct svmtrace_error *err)
{
	char why[sizeof(err->message)] = "";
	struct svmtrace_error e;
	size_t used = 0;
	int m, rc = SVMTRACE_E_NOT_FOUND;

	for (m = 0; m < SVMTRACE_VMI_METHOD_COUNT; m++) {
		rc = svmtrace_vmi_kernel_probe(mem, profile, m, out, &e);
		if (!rc)
			return 0;
		if (used < sizeof(why))
			used += (size_t)snprintf(why + used, sizeof(why) - used, "%s%.160s",
						 used ? "; " : "", e.message);
	}
	return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: no Windows x64 kernel found (%s)",
			svmtrace_vmi_mem_name(mem), why);
}
