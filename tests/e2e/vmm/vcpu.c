// SPDX-License-Identifier: GPL-2.0
/*
 * One vCPU of the lab guest: its architectural start state (64-bit, CPL 3
 * at the program's entry, as guest/layout.h says) and its run loop, which
 * serves the program's ports and, in single-step mode, counts (and
 * optionally logs) one KVM_EXIT_DEBUG per instruction.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../guest/results.h"
#include "../win/wincpu.h"
#include "../win/winimage.h"
#include "vmm.h"

#define MSR_STAR      0xc0000081
#define MSR_LSTAR     0xc0000082
#define MSR_SFMASK    0xc0000084
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MSR_TSC_AUX   0xc0000103
#define MSR_APIC_BASE 0x1b

#define APIC_BASE_DEFAULT 0xfee00000ull
#define APIC_BASE_BSP	  (1ull << 8)
#define APIC_BASE_EXTD	  (1ull << 10) /* x2APIC mode */
#define APIC_BASE_ENABLE  (1ull << 11)
#define CPUID1_ECX_X2APIC (1u << 21)
#define CPUID1_ECX_XSAVE  (1u << 26)
#define CPUID1_ECX_AVX	  (1u << 28)
#define CR4_OSXSAVE	  (1ull << 18)
#define CR4_SMEP	  (1ull << 20)
#define CR4_SMAP	  (1ull << 21)
#define CPUID7_EBX_SMEP	  (1u << 7)
#define CPUID7_EBX_SMAP	  (1u << 20)
#define XCR0_X87_SSE_AVX  0x7ull
#define EFER_SVME	  (1ull << 12) /* the guest may run guests of its own */

#define CR0_PE_MP_ET_NE_WP_PG	  0x80050033ull
#define CR4_PAE_OSFXSR_OSXMMEXCPT 0x620ull

static void set_err(struct vcpu *v, const char *what)
{
	snprintf(v->error, sizeof(v->error), "%s: %s", what, strerror(errno));
}

static struct kvm_segment flat_seg(uint16_t sel, int code, unsigned int dpl)
{
	struct kvm_segment s = {
		.base = 0,
		.limit = 0xffffffff,
		.selector = sel,
		.present = 1,
		.dpl = dpl,
		.s = 1,
		.g = 1,
		.type = code ? 0xb : 0x3,
		.l = code,
		.db = !code,
	};
	return s;
}

static int set_cpuid(struct vcpu *v)
{
	int n = 128;
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
	int ret = -1;

	if (!c)
		return -1;
	c->nent = n;
	if (ioctl(v->vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
		set_err(v, "KVM_GET_SUPPORTED_CPUID");
		goto out;
	}
	/* Leaf 0 is what the programs read: pin it so the model knows it. */
	for (unsigned int i = 0; i < c->nent; i++) {
		if (c->entries[i].function == 1 && v->vm->x2apic)
			c->entries[i].ecx |= CPUID1_ECX_X2APIC;
		if (c->entries[i].function == 1)
			v->avx = (c->entries[i].ecx & (CPUID1_ECX_XSAVE | CPUID1_ECX_AVX)) ==
				 (CPUID1_ECX_XSAVE | CPUID1_ECX_AVX);
		if (c->entries[i].function == 7 && c->entries[i].index == 0)
			v->cr4_prot = (c->entries[i].ebx & CPUID7_EBX_SMEP ? CR4_SMEP : 0) |
				      (c->entries[i].ebx & CPUID7_EBX_SMAP && !v->vm->no_smap ?
					       CR4_SMAP : 0);
		if (c->entries[i].function != 0)
			continue;
		c->entries[i].eax = CPUID0_EAX;
		c->entries[i].ebx = CPUID0_EBX;
		c->entries[i].ecx = CPUID0_ECX;
		c->entries[i].edx = CPUID0_EDX;
	}
	v->win_cr4 = win_cr4(c->entries, c->nent);
	if (ioctl(v->fd, KVM_SET_CPUID2, c) < 0)
		set_err(v, "KVM_SET_CPUID2");
	else
		ret = 0;
out:
	free(c);
	return ret;
}

/* The Windows-layout guest starts in its scheduler at CPL 0 with Windows'
 * selectors, CR4 as Windows sets it, GS base = KPCR, on the kernel's page
 * tables (the boot block). */
static int set_sregs_win(struct vcpu *v, struct kvm_sregs *s)
{
	const uint8_t *mem = v->vm->mem;

	s->cr0 = CR0_PE_MP_ET_NE_WP_PG;
	s->cr3 = win_boot(mem, WIN_BOOT_OFF_CR3);
	s->cr4 = v->win_cr4;
	s->efer = GUEST_EFER;
	s->cs = flat_seg(WIN_SEL_KERNEL_CS, 1, 0);
	s->ss = flat_seg(WIN_SEL_KERNEL_SS, 0, 0);
	s->ds = s->es = s->fs = s->gs = flat_seg(WIN_SEL_USER_SS, 0, 3);
	s->gs.base = win_boot(mem, WIN_BOOT_OFF_KPCR);
	s->gdt.base = win_boot(mem, WIN_BOOT_OFF_GDT);
	s->gdt.limit = WIN_GDT_LIMIT;
	s->idt.base = win_boot(mem, WIN_BOOT_OFF_IDT);
	s->idt.limit = WIN_IDT_VECTORS * 16 - 1;
	s->tr = (struct kvm_segment){.base = win_boot(mem, WIN_BOOT_OFF_TSS),
				     .limit = 103,
				     .selector = WIN_SEL_TSS,
				     .type = 11,
				     .present = 1};
	s->ldt = (struct kvm_segment){.type = 2, .present = 1, .unusable = 1};
	if (ioctl(v->fd, KVM_SET_SREGS, s) < 0) {
		set_err(v, "KVM_SET_SREGS");
		return -1;
	}
	return 0;
}

static int set_sregs(struct vcpu *v)
{
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_SREGS, &s) < 0) {
		set_err(v, "KVM_GET_SREGS");
		return -1;
	}
	if (v->vm->win)
		return set_sregs_win(v, &s);
	s.cr0 = CR0_PE_MP_ET_NE_WP_PG;
	s.cr3 = v->index >= v->vm->alt_cr3 ? PML4_ALT_GPA : PML4_GPA;
	/*
	 * The ymm program's VEX instructions need CR4.OSXSAVE and XCR0
	 * (set_xcr0); SMEP and SMAP as Linux enables them where the CPU has them.
	 */
	s.cr4 = CR4_PAE_OSFXSR_OSXMMEXCPT | (v->avx ? CR4_OSXSAVE : 0) | v->cr4_prot;
	s.efer = GUEST_EFER | (v->vm->svme ? EFER_SVME : 0);
	if (v->vm->cpl0) {
		s.cs = flat_seg(SEL_KERNEL_CS, 1, 0);
		s.ss = s.ds = s.es = s.fs = s.gs = flat_seg(SEL_KERNEL_SS, 0, 0);
	} else {
		s.cs = flat_seg(SEL_USER_CS, 1, 3);
		s.ss = s.ds = s.es = s.fs = s.gs = flat_seg(SEL_USER_SS, 0, 3);
	}
	s.gdt.base = GDT_GPA;
	s.gdt.limit = SEL_TSS(MAX_VCPUS) - 1;
	s.idt.base = IDT_GPA;
	s.idt.limit = IDT_VECTORS * 16 - 1;
	s.tr = (struct kvm_segment){ .base = TSS_GPA(v->index),
				     .limit = 103,
				     .selector = SEL_TSS(v->index),
				     .type = 11,
				     .present = 1 };
	s.ldt = (struct kvm_segment){ .type = 2, .present = 1, .unusable = 1 };
	if (ioctl(v->fd, KVM_SET_SREGS, &s) < 0) {
		set_err(v, "KVM_SET_SREGS");
		return -1;
	}
	return 0;
}

/*
 * x87, SSE and AVX state enabled, as an OS that uses AVX does: the ymm
 * program writes YMM registers (--xstate captures them).  A CPU without
 * AVX leaves XCR0 alone, and that program ends on #UD (PORT_PANIC).
 */
static int set_xcr0(struct vcpu *v)
{
	struct kvm_xcrs x = { .nr_xcrs = 1, .xcrs = { { .xcr = 0, .value = XCR0_X87_SSE_AVX } } };

	if (!v->avx || v->vm->win)
		return 0;
	if (ioctl(v->fd, KVM_SET_XCRS, &x) < 0) {
		set_err(v, "KVM_SET_XCRS");
		return -1;
	}
	return 0;
}

static int set_msrs(struct vcpu *v)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[6];
	} m = { .hdr.nmsrs = 3,
		.e = { { .index = MSR_STAR, .data = GUEST_STAR },
		       { .index = MSR_LSTAR, .data = KERNEL_SYSCALL_ENTRY },
		       { .index = MSR_SFMASK, .data = GUEST_FMASK },
		       { .index = MSR_APIC_BASE,
			 .data = APIC_BASE_DEFAULT | APIC_BASE_ENABLE | APIC_BASE_EXTD |
				 (v->index ? 0 : APIC_BASE_BSP) } } };

	if (v->vm->x2apic)
		m.hdr.nmsrs = 4;
	if (v->vm->win) {
		m.e[0].data = WIN_STAR;
		m.e[1].data = win_boot(v->vm->mem, WIN_BOOT_OFF_LSTAR);
		/* the user GS base (a TEB) until the scheduler's first SWAPGS */
		m.e[m.hdr.nmsrs++] = (struct kvm_msr_entry){
			.index = MSR_KERNEL_GS_BASE, .data = win_boot(v->vm->mem, WIN_BOOT_OFF_TEB)};
		m.e[m.hdr.nmsrs++] = (struct kvm_msr_entry){
			.index = MSR_TSC_AUX, .data = win_boot(v->vm->mem, WIN_BOOT_OFF_TSC_AUX)};
	}
	if (ioctl(v->fd, KVM_SET_MSRS, &m) != (int)m.hdr.nmsrs) {
		set_err(v, "KVM_SET_MSRS");
		return -1;
	}
	return 0;
}

static int set_regs(struct vcpu *v)
{
	struct kvm_regs r = {
		.rip = USER_ENTRY(v->index),
		.rsp = USER_STACK_TOP(v->index),
		.rflags = USER_RFLAGS,
		.rdi = v->vm->arg,
	};

	if (v->vm->win)
		r = (struct kvm_regs){.rip = win_boot(v->vm->mem, WIN_BOOT_OFF_RIP),
				      .rsp = win_boot(v->vm->mem, WIN_BOOT_OFF_RSP),
				      .rflags = 0x2};

	if (ioctl(v->fd, KVM_SET_REGS, &r) < 0) {
		set_err(v, "KVM_SET_REGS");
		return -1;
	}
	return 0;
}

/*
 * --singlestep: KVM_GUESTDBG_SINGLESTEP.  --dr-intercept: KVM_GUESTDBG_ENABLE
 * alone, which changes nothing but this: with any guest_debug set, svm.c's
 * dr_interception() emulates the guest's MOV DR instead of dropping the DR
 * intercepts, so the guest never loads debug registers natively.  Under
 * QEMU 7.2 TCG as L0 a native MOV DR7 in L2 leaves TCG breakpoints behind
 * that crash L0 later (docs/lab-internals.md).
 */
static int set_singlestep(struct vcpu *v)
{
	struct kvm_guest_debug dbg = { .control = KVM_GUESTDBG_ENABLE };

	if (v->vm->singlestep)
		dbg.control |= KVM_GUESTDBG_SINGLESTEP;

	if (ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0) {
		set_err(v, "KVM_SET_GUEST_DEBUG");
		return -1;
	}
	return 0;
}

int vcpu_create(struct vmm *vm, int index, char *err, size_t errlen)
{
	struct vcpu *v = &vm->vcpus[index];
	int size;

	v->vm = vm;
	v->index = index;
	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, index);
	if (v->fd < 0) {
		snprintf(err, errlen, "KVM_CREATE_VCPU %d: %s", index, strerror(errno));
		return -1;
	}
	size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	v->run = size > 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0)
			  : MAP_FAILED;
	if (v->run == MAP_FAILED) {
		snprintf(err, errlen, "mmap of vCPU %d: %s", index, strerror(errno));
		return -1;
	}
	if (set_cpuid(v) || set_sregs(v) || set_xcr0(v) || set_msrs(v) || set_regs(v) ||
	    ((vm->singlestep || vm->dr_intercept) && set_singlestep(v))) {
		snprintf(err, errlen, "vCPU %d: %s", index, v->error);
		return -1;
	}
	return 0;
}

/*
 * One row of the step log, in `svmtrace-dump dump --regs` CSV columns: what
 * an exact tracer built on stock single-stepping records.  Steps that end
 * at another CPL than the program's (CPL 3, or 0 with --cpl0) are the guest
 * kernel's and are left out.
 */
static void log_row(struct vcpu *v, const char *kind, const struct kvm_regs *r, uint64_t cr3)
{
	uint64_t seq = __atomic_fetch_add(&v->vm->step_seq, 1, __ATOMIC_RELAXED);

	flockfile(v->vm->step_log);
	fprintf(v->vm->step_log,
		"%d,%llu,%s,0x%llx,0x%llx,0x%llx,%d,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,"
		"0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx,0x%llx\n",
		v->index, (unsigned long long)seq, kind, r->rip, r->rflags, (unsigned long long)cr3,
		strcmp(kind, "session_start") ? 0 : v->index, r->rax, r->rbx, r->rcx, r->rdx,
		r->rsi, r->rdi, r->rbp, r->rsp, r->r8, r->r9, r->r10, r->r11, r->r12, r->r13,
		r->r14, r->r15);
	funlockfile(v->vm->step_log);
}

static void log_step(struct vcpu *v)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 || ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
		return;
	if (s.ss.dpl != (v->vm->cpl0 ? 0 : 3))
		return;
	log_row(v, v->logged++ ? "instruction" : "session_start", &r, s.cr3);
}

/* PORT_GO (Windows-layout guest): the scheduler linked the late process
 * into the process list and has not run it yet.  Print "go", dump RAM if
 * asked, and with --go-wait hold the vCPU until SIGWINCH. */
static int handle_go(struct vcpu *v, uint8_t *data)
{
	uint32_t val = GO_VALUE;

	if (v->vm->dump_go && vmm_dump(v->vm, v->vm->dump_go)) {
		set_err(v, v->vm->dump_go);
		return -1;
	}
	printf("go cpu=%d%s\n", v->index, v->vm->go_wait ? " waiting" : "");
	fflush(stdout);
	if (v->vm->go_wait)
		wait_signal(SIGWINCH);
	memcpy(data, &val, 4);
	return 0;
}

/* PORT_LOG number --log-wait: the program is at CPL 3, its OUT done; print
 * "log N" and hold the vCPU until SIGWINCH (a tracer looks at it meanwhile). */
static void log_wait(struct vcpu *v, uint64_t count)
{
	if (count != v->vm->log_wait)
		return;
	printf("log %llu cpu=%d waiting\n", (unsigned long long)count, v->index);
	fflush(stdout);
	wait_signal(SIGWINCH);
}

/* A port access; returns 1 when the program is done, -1 on a guest panic. */
static int handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	uint32_t val = 0;

	if (run->io.size != 4 || run->io.count != 1) {
		snprintf(v->error, sizeof(v->error), "unexpected %u-byte x%u access to port 0x%x",
			 run->io.size, run->io.count, run->io.port);
		return -1;
	}
	memcpy(&val, data, 4);
	switch (run->io.direction << 16 | run->io.port) {
	case KVM_EXIT_IO_OUT << 16 | PORT_DONE:
		v->status = val;
		return 1;
	case KVM_EXIT_IO_OUT << 16 | PORT_NOP:
		return 0;
	case KVM_EXIT_IO_OUT << 16 | PORT_VALUE:
		printf("value cpu%d 0x%x\n", v->index, val);
		return 0;
	case KVM_EXIT_IO_OUT << 16 | PORT_LOG:
		__atomic_add_fetch(&v->vm->log_sum, val, __ATOMIC_RELAXED);
		log_wait(v, __atomic_add_fetch(&v->vm->log_count, 1, __ATOMIC_RELAXED));
		if (v->vm->debug_at_log) {
			struct kvm_guest_debug dbg = { .control = KVM_GUESTDBG_ENABLE };

			if (ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg) < 0) {
				set_err(v, "KVM_SET_GUEST_DEBUG");
				return -1;
			}
		}
		return 0;
	case KVM_EXIT_IO_OUT << 16 | PORT_IRQ:
		/* KVM_INTERRUPT when KVM says the guest can take it (run_loop). */
		v->irq_vector = val;
		v->irq_pending = 1;
		v->run->request_interrupt_window = 1;
		return 0;
	case KVM_EXIT_IO_OUT << 16 | PORT_NMI:
		for (uint32_t i = 0; i < val; i++)
			if (ioctl(v->fd, KVM_NMI) < 0) {
				set_err(v, "KVM_NMI");
				return -1;
			}
		return 0;
	case KVM_EXIT_IO_IN << 16 | PORT_INPUT:
		if (v->vm->input_delay_us)
			usleep(v->vm->input_delay_us);
		val = INPUT_VALUE;
		memcpy(data, &val, 4);
		__atomic_add_fetch(&v->vm->input_count, 1, __ATOMIC_RELAXED);
		return 0;
	case KVM_EXIT_IO_IN << 16 | PORT_GO:
		return handle_go(v, data);
	case KVM_EXIT_IO_OUT << 16 | PORT_PANIC:
		snprintf(v->error, sizeof(v->error), "guest exception vector %u", val);
		return -1;
	}
	snprintf(v->error, sizeof(v->error), "%s of unknown port 0x%x",
		 run->io.direction == KVM_EXIT_IO_OUT ? "write" : "read", run->io.port);
	return -1;
}

/*
 * An access to the device page (layout.h, MMIO_GPA), which KVM emulated and
 * hands over: a write goes into the log checksum, a read gets
 * MMIO_READ_VALUE plus its offset.  -1 for any other address.
 */
static int handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint64_t off = run->mmio.phys_addr - MMIO_GPA, val = 0;

	if (run->mmio.phys_addr < MMIO_GPA || off + run->mmio.len > 0x1000 || run->mmio.len > 8) {
		snprintf(v->error, sizeof(v->error), "%u-byte MMIO %s at GPA 0x%llx outside the device page",
			 run->mmio.len, run->mmio.is_write ? "write" : "read",
			 (unsigned long long)run->mmio.phys_addr);
		return -1;
	}
	if (run->mmio.is_write) {
		memcpy(&val, run->mmio.data, run->mmio.len);
		__atomic_add_fetch(&v->vm->log_sum, val, __ATOMIC_RELAXED);
		__atomic_add_fetch(&v->vm->log_count, 1, __ATOMIC_RELAXED);
		return 0;
	}
	val = MMIO_READ_VALUE + off;
	memcpy(run->mmio.data, &val, run->mmio.len);
	__atomic_add_fetch(&v->vm->input_count, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A PORT_IRQ interrupt is injected once KVM reports the window open. */
static int inject_irq(struct vcpu *v)
{
	struct kvm_interrupt irq = { .irq = v->irq_vector };

	if (!v->irq_pending || !v->run->ready_for_interrupt_injection || !v->run->if_flag)
		return 0;
	if (ioctl(v->fd, KVM_INTERRUPT, &irq) < 0) {
		set_err(v, "KVM_INTERRUPT");
		return -1;
	}
	v->irq_pending = 0;
	v->run->request_interrupt_window = 0;
	return 0;
}

static void run_loop(struct vcpu *v)
{
	for (;;) {
		double t0 = now_seconds(), ran;
		int r;

		if (inject_irq(v))
			return;
		r = ioctl(v->fd, KVM_RUN, 0);
		ran = now_seconds() - t0;
		if (ran > v->run_max)
			v->run_max = ran;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->interrupted++;
				continue;
			}
			set_err(v, "KVM_RUN");
			break;
		}
		v->exits++;
		switch (v->run->exit_reason) {
		case KVM_EXIT_IO:
			r = handle_io(v);
			if (r == 0)
				continue;
			if (r == 1) {
				v->done = 1;
				ioctl(v->fd, KVM_GET_REGS, &v->final);
				if (v->vm->step_log)
					log_row(v, "session_end", &v->final, PML4_GPA);
			}
			return;
		case KVM_EXIT_IRQ_WINDOW_OPEN:
			continue;	/* inject_irq() */
		case KVM_EXIT_MMIO:
			if (handle_mmio(v))
				return;
			continue;
		case KVM_EXIT_DEBUG:
			if (v->vm->singlestep) {
				v->steps++;
				if (v->vm->step_log)
					log_step(v);
				continue;
			}
			snprintf(v->error, sizeof(v->error), "unexpected KVM_EXIT_DEBUG");
			return;
		case KVM_EXIT_FAIL_ENTRY:
			snprintf(v->error, sizeof(v->error), "VM entry failed, reason 0x%llx",
				 (unsigned long long)
					 v->run->fail_entry.hardware_entry_failure_reason);
			return;
		case KVM_EXIT_SHUTDOWN:
			snprintf(v->error, sizeof(v->error), "the guest shut down (triple fault)");
			return;
		case KVM_EXIT_INTERNAL_ERROR:
			snprintf(v->error, sizeof(v->error), "KVM internal error, suberror %u",
				 v->run->internal.suberror);
			return;
		default:
			snprintf(v->error, sizeof(v->error), "unexpected exit reason %u",
				 v->run->exit_reason);
			return;
		}
	}
}

void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;

	run_loop(v);
	__atomic_store_n(&v->exited, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* CR4 as KVM has it (0 if it cannot say): the ready line shows SMEP and SMAP. */
uint64_t vcpu_cr4(const struct vcpu *v)
{
	struct kvm_sregs s;

	return ioctl(v->fd, KVM_GET_SREGS, &s) < 0 ? 0 : s.cr4;
}

/* The registers at PORT_DONE, as the lab compares them with the model's. */
void vcpu_print_final(const struct vcpu *v)
{
	const struct kvm_regs *r = &v->final;
	const uint64_t gpr[16] = { r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->rsp,
				   r->r8,  r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15 };

	results_print_cpu(v->index, v->status, r->rip, r->rflags, gpr);
}
