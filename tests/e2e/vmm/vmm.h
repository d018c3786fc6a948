/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace-e2e-vmm: the lab's own small VMM, driving /dev/kvm directly so
 * the L2 guest is exactly what guest/layout.h describes.
 */
#ifndef E2E_VMM_H
#define E2E_VMM_H

#include <stdint.h>
#include <stdio.h>
#include <linux/kvm.h>

#include "../guest/layout.h"
#include "../win/winlayout.h"

struct vmm;

struct vcpu {
	struct vmm *vm;
	int index;
	int fd;
	struct kvm_run *run;
	uint64_t exits;	       /* KVM_RUN returns */
	uint64_t steps;	       /* KVM_EXIT_DEBUG single-step exits */
	uint64_t logged;       /* rows written to the step log */
	uint64_t interrupted;  /* KVM_RUN returns with EINTR (a signal kicked it) */
	double run_max;	       /* longest single KVM_RUN call, seconds */
	int avx;	       /* its CPUID has XSAVE and AVX: CR4.OSXSAVE, XCR0 = 7 */
	uint64_t win_cr4;      /* Windows' CR4 for its CPUID (--win) */
	uint64_t cr4_prot;     /* CR4.SMEP and CR4.SMAP, as far as its CPUID has them */
	int exited;	       /* the thread is done (set last, atomically) */
	int done;	       /* reached PORT_DONE */
	uint32_t status;       /* EAX at PORT_DONE */
	int irq_pending;       /* PORT_IRQ: inject irq_vector when the window opens */
	uint32_t irq_vector;
	struct kvm_regs final; /* registers at PORT_DONE */
	char error[256];       /* why the vCPU stopped early, if it did */
};

struct vmm {
	int kvm_fd;
	int vm_fd;
	uint8_t *mem; /* mem_size bytes of guest RAM */
	uint64_t mem_size;
	int win;		  /* the Windows-layout guest (win/winlayout.h) */
	int go_wait;	  /* PORT_GO waits for SIGWINCH */
	uint64_t log_wait;	  /* the PORT_LOG write (1, 2, ...) that waits for SIGWINCH */
	const char *dump_go; /* write guest RAM here at PORT_GO */
	int nr_vcpus;
	uint64_t arg;		 /* initial RDI of every vCPU */
	int singlestep;		 /* KVM_SET_GUEST_DEBUG(SINGLESTEP) on every vCPU */
	int x2apic;		 /* in-kernel local APIC, in x2APIC mode from the start */
	int cpl0;		 /* the program runs at CPL 0 (it may WRMSR) */
	int svme;		 /* EFER.SVME set, as by a guest hypervisor (VBS) */
	int no_smap;		 /* CR4.SMAP off (QEMU's TCG and IRETQ at CPL 3) */
	int debug_at_log;	 /* KVM_SET_GUEST_DEBUG(ENABLE) at every PORT_LOG */
	int dr_intercept;	 /* KVM_GUESTDBG_ENABLE alone: MOV DR always exits */
	int alt_cr3;		 /* this vCPU and those after it start under PML4_ALT_GPA */
	uint64_t kick_ms;	 /* --kick-ms: signal the vCPU threads this often */
	uint64_t input_delay_us; /* --input-delay-us: each PORT_INPUT read takes this long */
	uint64_t kicks;		 /* signals sent */
	FILE *step_log;		 /* per-step CSV in singlestep mode, or NULL */
	uint64_t step_seq;	 /* global sequence of step-log rows */
	struct vcpu vcpus[MAX_VCPUS];

	/* Device model: totals over all vCPUs (updated atomically). */
	uint64_t log_sum; /* sum of EAX written to PORT_LOG and of MMIO writes */
	uint64_t log_count;
	uint64_t input_count; /* reads of PORT_INPUT and of the device page */
};

/* main.c */
double now_seconds(void);
/* Wait (in this thread, with @sig blocked) until @sig arrives. */
void wait_signal(int sig);

/* vcpu.c */
int vcpu_create(struct vmm *vm, int index, char *err, size_t errlen);
void *vcpu_thread(void *vcpu);
void vcpu_print_final(const struct vcpu *v);
uint64_t vcpu_cr4(const struct vcpu *v);
/* main.c: write guest RAM to path (a raw image: file offset = GPA). */
int vmm_dump(const struct vmm *vm, const char *path);

#endif /* E2E_VMM_H */
