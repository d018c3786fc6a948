// SPDX-License-Identifier: GPL-2.0
/*
 * The live memory driver (mem_live.c) under the real VMI stack, over guest
 * memory in a buffer: the driver's own code (chunking, errno mapping, EINTR
 * retries, cache refresh, vCPU enumeration, which registers discovery may
 * use) runs unchanged; only the two calls it makes into the kernel
 * (SVMTRACE_READ_GPA, SVMTRACE_GET_VCPU_STATE) read the buffer instead.
 */
#include "lib/vmi/mem_driver.h"
#include "../vmi/unit_fixture.h"

#include <errno.h>
#include <check.h>
#include <svmtrace/abi.h>

#define MEM_SIZE (8ULL << 20)
#define HOLE	 0x600000ULL /* [HOLE, HOLE + 1 MiB) is MMIO: ENXIO */
#define KBASE	 0xfffff80412600000ULL

static struct fx_mem m;
static uint64_t pml4;

/* What the fake kernel saw and does. */
static struct {
	unsigned int reads;
	size_t max_len;
	int eintr;	    /* fail this many reads with EINTR first */
	unsigned int vcpus; /* vCPUs the VM has */
	int vcpu_err;	    /* errno for every vCPU query, 0 = answer */
	struct svmtrace_vcpu_state st;
} vm;

static int vm_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	vm.reads++;
	if (len > vm.max_len)
		vm.max_len = len;
	if (vm.eintr > 0) {
		vm.eintr--;
		return -EINTR;
	}
	if (gpa + len > MEM_SIZE || (gpa < HOLE + (1 << 20) && gpa + len > HOLE))
		return -ENXIO; /* all or nothing, like the kernel */
	memcpy(buf, m.buf + gpa, len);
	return 0;
}

static int vm_vcpu(void *ctx, unsigned int index, struct svmtrace_vmi_vcpu *out)
{
	if (vm.vcpu_err)
		return -vm.vcpu_err;
	if (index >= vm.vcpus)
		return -EINVAL;
	mem_live_vcpu_from_state(&vm.st, out);
	return 0;
}

static struct svmtrace_vmi_live_ops ops = {
	.read = vm_read,
	.vcpu = vm_vcpu,
	.max_read = 64 << 10,
};

static void setup(void)
{
	memset(&vm, 0, sizeof(vm));
	vm.vcpus = 2;
	vm.st.efer = 1ULL << 10 | 1ULL << 8; /* LMA, LME */
	vm.st.cr0 = 1ULL << 31 | 1;
	fx_init(&m, MEM_SIZE, 0x1000);
	pml4 = fx_page(&m);
	vm.st.cr3 = pml4 | 1;
}

static void teardown(void)
{
	free(m.buf);
}

static struct svmtrace_vmi_mem *open_live(void)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;

	ck_assert_msg(!svmtrace_vmi_mem_open_live_ops(&ops, "fake", &mem, &err), "%s", err.message);
	ck_assert_str_eq(svmtrace_vmi_mem_kind(mem), "live");
	return mem;
}

/* A minimal ntoskrnl at PA 0x400000, mapped at KBASE in the vCPUs' PML4. */
static void map_kernel(void)
{
	static const char *const exports[] = { "KeBugCheckEx" };
	static const uint32_t rvas[] = { 0x2000 };
	uint64_t i;

	fx_pe(m.buf + 0x400000, 0x4000, 0x2000, "ntoskrnl.exe", exports, rvas, 1, "ntkrnlmp.pdb",
	      7);
	for (i = 0; i < 4; i++)
		fx_map(&m, pml4, KBASE + i * 0x1000, 0x400000 + i * 0x1000, 1, 0);
}

START_TEST(lstar_discovery_runs_on_live_registers)
{
	struct svmtrace_vmi_kernel k;
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;

	map_kernel();
	vm.st.lstar = KBASE + 0x2100;
	mem = open_live();
	ck_assert_uint_eq(svmtrace_vmi_mem_vcpu_count(mem), 2);
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 0);
	ck_assert_uint_eq(k.base, KBASE);
	ck_assert_str_eq(k.id, "030201000504070608090A0B0C0D0E0F-7");
	ck_assert_int_eq(k.method, SVMTRACE_VMI_METHOD_LSTAR);
	/* Translations read page-sized pieces: every one went through the cache. */
	ck_assert_uint_le(vm.max_len, 4096);
	svmtrace_vmi_mem_close(mem);
}
END_TEST

/* A VM's RAM is not listed: the physical scan reads what reads, around the
 * MMIO hole, and finds the kernel from its CodeView record and the PML4's
 * self-map entry, with no usable register. */
START_TEST(pescan_reads_a_live_vm)
{
	struct svmtrace_vmi_kernel k;
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;

	map_kernel();
	fx_put64(&m, pml4 + 8 * 0x1ed, pml4 | 3); /* the self-map */
	vm.st.efer = 0;				  /* no vCPU in long mode: no register to use */
	mem = open_live();
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_PESCAN, &k, &err),
			 0);
	ck_assert_uint_eq(k.base, KBASE);
	ck_assert_uint_eq(k.dtb, pml4);
	ck_assert_uint_eq(k.anchor, KBASE + 0x1900);
	ck_assert_str_eq(k.source, "CodeView record at GPA 0x401900");
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_LSTAR, &k, &err),
			 SVMTRACE_E_NOT_FOUND);
	/* Without the self-map no root maps the record. */
	fx_put64(&m, pml4 + 8 * 0x1ed, 0);
	svmtrace_vmi_mem_refresh(mem, &err);
	ck_assert_int_eq(svmtrace_vmi_kernel_probe(mem, NULL, SVMTRACE_VMI_METHOD_PESCAN, &k, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "none of 0 page-table roots maps one"), "%s",
		      err.message);
	svmtrace_vmi_mem_close(mem);
}
END_TEST

START_TEST(large_reads_are_split_at_max_read)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	static uint8_t got[300 << 10];
	size_t i;

	for (i = 0; i < sizeof(got); i++)
		m.buf[0x100000 + i] = (uint8_t)(i * 7);
	mem = open_live();
	vm.reads = 0;
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x100000 + 5, got, sizeof(got), &err), 0);
	ck_assert_int_eq(memcmp(got, m.buf + 0x100000 + 5, sizeof(got)), 0);
	ck_assert_uint_eq(vm.max_len, 64 << 10);
	ck_assert_uint_eq(vm.reads, (sizeof(got) + (64 << 10) - 1) / (64 << 10));
	svmtrace_vmi_mem_close(mem);
}
END_TEST

START_TEST(errors_name_what_failed)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	uint64_t v;

	mem = open_live();
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, HOLE + 8, &v, 8, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "GPA 0x600000 (+4096) is not guest RAM"), "%s",
		      err.message);
	/* A few EINTRs are retried; an endless stream of them is an error. */
	fx_put64(&m, 0x5000, 0x1122334455667788ULL);
	vm.eintr = 3;
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x5000, &v, 8, &err), 0);
	ck_assert_uint_eq(v, 0x1122334455667788ULL);
	vm.eintr = 1000;
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x7000, &v, 8, &err), SVMTRACE_E_IO);
	ck_assert_msg(strstr(err.message, "Interrupted"), "%s", err.message);
	svmtrace_vmi_mem_close(mem);
}
END_TEST

START_TEST(refresh_forgets_cached_pages)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	uint64_t v;

	fx_put64(&m, 0x9000, 1);
	mem = open_live();
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x9000, &v, 8, &err), 0);
	ck_assert_uint_eq(v, 1);
	fx_put64(&m, 0x9000, 2); /* the guest writes */
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x9000, &v, 8, &err), 0);
	ck_assert_uint_eq(v, 1); /* served from the cache until a refresh */
	vm.vcpus = 3;
	ck_assert_int_eq(svmtrace_vmi_mem_refresh(mem, &err), 0);
	ck_assert_int_eq(svmtrace_vmi_mem_read(mem, 0x9000, &v, 8, &err), 0);
	ck_assert_uint_eq(v, 2);
	ck_assert_uint_eq(svmtrace_vmi_mem_vcpu_count(mem), 3);
	svmtrace_vmi_mem_close(mem);
}
END_TEST

START_TEST(vcpu_errors_and_states)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_mem *mem;
	struct svmtrace_vmi_vcpu v;

	vm.vcpus = 0;
	ck_assert_int_eq(svmtrace_vmi_mem_open_live_ops(&ops, "fake", &mem, &err),
			 SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "no vCPU"), "%s", err.message);
	vm.vcpus = 1;
	vm.vcpu_err = EOPNOTSUPP;
	ck_assert_int_eq(svmtrace_vmi_mem_open_live_ops(&ops, "fake", &mem, &err), SVMTRACE_E_IO);
	ck_assert_msg(strstr(err.message, "registers of vCPU 0"), "%s", err.message);

	vm.st.lstar = KBASE;
	mem_live_vcpu_from_state(&vm.st, &v);
	ck_assert_uint_eq(v.valid, SVMTRACE_VMI_REG_CR3 | SVMTRACE_VMI_REG_IDTR |
					   SVMTRACE_VMI_REG_GS_BASE |
					   SVMTRACE_VMI_REG_KERNEL_GS_BASE |
					   SVMTRACE_VMI_REG_LSTAR | SVMTRACE_VMI_REG_CR4);
	vm.st.flags = SVMTRACE_VCPU_STATE_F_GUEST_MODE; /* a nested guest's registers */
	mem_live_vcpu_from_state(&vm.st, &v);
	ck_assert_uint_eq(v.valid, 0);
	vm.st.flags = 0;
	vm.st.efer = 0; /* still booting: no long mode */
	mem_live_vcpu_from_state(&vm.st, &v);
	ck_assert_uint_eq(v.valid, 0);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		lstar_discovery_runs_on_live_registers, pescan_reads_a_live_vm,
		large_reads_are_split_at_max_read,	errors_name_what_failed,
		refresh_forgets_cached_pages,		vcpu_errors_and_states
	};

	return fx_run("vmi_live", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
