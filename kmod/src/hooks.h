/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace: the calls KVM makes into the tracer.  These are the only names
 * the patches in kmod/patches/SERIES add to KVM's files.  Each inline wrapper costs one
 * static branch (a NOP) until a controller attaches to some VM.
 */
#ifndef ARCH_X86_KVM_SVMTRACE_HOOKS_H
#define ARCH_X86_KVM_SVMTRACE_HOOKS_H

#include <linux/jump_label.h>
#include <linux/kvm_host.h>

DECLARE_STATIC_KEY_FALSE(svmtrace_live);
/* Counts the armed VMs: while one is, every VM exit looks (svmtrace_vcpu_exit). */
DECLARE_STATIC_KEY_FALSE(svmtrace_exit_watch);

/*
 * The tracer's own vCPU request, handled at the next guest entry, where the
 * vCPU thread may sleep and may leave KVM_RUN: a step slot the ring had no
 * room for (block policy) waits there.  The last arch request a u64 holds:
 * x86 uses 0-31 in 6.1 and 0-34 in 6.12 (32 is KVM_REQ_HV_TLB_FLUSH there),
 * counting up; kmod/build.sh refuses a kernel whose KVM uses this one.
 */
#define SVMTRACE_ARCH_REQ 55
#define KVM_REQ_SVMTRACE KVM_ARCH_REQ(SVMTRACE_ARCH_REQ)

int svmtrace_init(void);
void svmtrace_exit(void);
void svmtrace_vm_destroy(struct kvm *kvm);
void __svmtrace_vm_gone(struct kvm *kvm);
void __svmtrace_vcpu_created(struct kvm_vcpu *vcpu);

bool __svmtrace_gfn_noexec(struct kvm *kvm, gfn_t gfn);
int __svmtrace_max_level(struct kvm *kvm, gfn_t gfn, int max_level);
void __svmtrace_npf_exit(struct kvm_vcpu *vcpu, u64 gpa, u64 error_code);
struct svmtrace_vcpu;
int __svmtrace_db_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, u64 *dr6,
		       u64 *nmi_rflags);
int __svmtrace_db_fastpath(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, u64 *dr6);
bool __svmtrace_emulated_step(struct kvm_vcpu *vcpu);
void __svmtrace_mmio_written(struct kvm_vcpu *vcpu);
int __svmtrace_vcpu_request(struct kvm_vcpu *vcpu);
void __svmtrace_vcpu_exit(struct kvm_vcpu *vcpu, u32 exit_code);
void __svmtrace_nmi_injected(struct kvm_vcpu *vcpu);
bool __svmtrace_event_injected(struct kvm_vcpu *vcpu);
bool __svmtrace_iret_wanted(struct kvm_vcpu *vcpu);
u64 __svmtrace_entry(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, unsigned long cr3);
int __svmtrace_ud_exit(struct kvm_vcpu *vcpu);
void __svmtrace_exception_exit(struct kvm_vcpu *vcpu, u32 vector, u64 info1, u64 info2);
void __svmtrace_swint_exit(struct kvm_vcpu *vcpu);
int __svmtrace_tsc_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp);
unsigned long __svmtrace_regs_get_rflags(struct kvm_vcpu *vcpu, unsigned long rflags);
unsigned long __svmtrace_regs_set_rflags(struct kvm_vcpu *vcpu, unsigned long rflags);

/* make_spte(): a closed gate's page is mapped without execute permission. */
static inline bool svmtrace_gfn_noexec(struct kvm *kvm, gfn_t gfn)
{
	return static_branch_unlikely(&svmtrace_live) && __svmtrace_gfn_noexec(kvm, gfn);
}

/* kvm_mmu_max_mapping_level(): no huge page may cover a gated gfn. */
static inline int svmtrace_max_level(struct kvm *kvm, gfn_t gfn, int max_level)
{
	if (static_branch_unlikely(&svmtrace_live) && max_level > PG_LEVEL_4K)
		return __svmtrace_max_level(kvm, gfn, max_level);
	return max_level;
}

/* npf_interception(): a fetch fault on a closed gate starts a session. */
static inline void svmtrace_npf_exit(struct kvm_vcpu *vcpu, u64 gpa, u64 error_code)
{
	if (static_branch_unlikely(&svmtrace_live))
		__svmtrace_npf_exit(vcpu, gpa, error_code);
}

/*
 * svmtrace_db_exit(), svmtrace_db_fastpath(): the step was the tracer's and
 * is done (any nonzero).
 */
#define SVMTRACE_DB_DONE	1
/*
 * ... and it was a plain step of user code: what the last entry that asked
 * svmtrace_entry() was told still holds if it was SVMTRACE_ENTRY_STEADY.
 */
#define SVMTRACE_DB_STEADY	2

/*
 * db_interception(): nonzero (SVMTRACE_DB_*) when the #DB was the tracer's
 * step and is done.
 * @vtp: the vCPU's own pointer to its tracer state (struct vcpu_svm,
 * svmtrace), NULL until the hook first finds it, then kept until the VM is
 * destroyed: every step after the first costs no lookup.  @dr6: the VMCB's
 * DR6; DR6.BS is cleared there when the single-step was the tracer's
 * alone, so a DR0-3 hit on the same instruction reaches the guest without
 * it.  @nmi_rflags: KVM's saved RFLAGS while it single-steps to an NMI
 * window, else NULL (see step.c).
 */
static inline int svmtrace_db_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, u64 *dr6,
				   u64 *nmi_rflags)
{
	if (static_branch_unlikely(&svmtrace_live))
		return __svmtrace_db_exit(vcpu, vtp, dr6, nmi_rflags);
	return 0;
}

/*
 * svm_exit_handlers_fastpath(), a #DB exit with interrupts off, before
 * KVM's exit handling (no SRCU, guest memory out of reach): nonzero
 * (SVMTRACE_DB_*, as from svmtrace_db_exit()) when the trap was a plain
 * step of a recording session and is recorded, so that KVM enters the
 * guest again at once (EXIT_FASTPATH_REENTER_GUEST).  0 -- the trylock of
 * vt->lock failed, or the step is anything but plain -- having changed
 * nothing: db_interception() then handles the exit as always.  @vtp, @dr6
 * as for svmtrace_db_exit().  Also from svm_vcpu_run()'s loop of plain
 * steps right after the exit (svmtrace_tight_loop(): GIF clear too, the
 * guest's XCR0, XSS and PKRU still loaded).
 */
static inline int svmtrace_db_fastpath(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp,
				       u64 *dr6)
{
	if (static_branch_unlikely(&svmtrace_live))
		return __svmtrace_db_fastpath(vcpu, vtp, dr6);
	return 0;
}

/*
 * kvm_vcpu_do_singlestep(): KVM completed an instruction itself while TF was
 * set; true when that step was the tracer's (no #DB for the guest).
 */
static inline bool svmtrace_emulated_step(struct kvm_vcpu *vcpu)
{
	return static_branch_unlikely(&svmtrace_live) && __svmtrace_emulated_step(vcpu);
}

/*
 * complete_emulated_mmio(), at the KVM_RUN after KVM_EXIT_MMIO (interrupts
 * on, kvm->srcu held): userspace completed the MMIO write of an emulated
 * instruction, which KVM finishes without the single-step trap it takes
 * after any other instruction it completes; the tracer records its step.
 */
static inline void svmtrace_mmio_written(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&svmtrace_live))
		__svmtrace_mmio_written(vcpu);
}

/*
 * svm_exit_handlers_fastpath(), every exit but #DB (svmtrace_db_fastpath()):
 * false while TF is set in the guest's RFLAGS
 * (the VMCB's, whoever set it).  An
 * instruction the IRQs-off fastpath completes (WRMSR to the x2APIC ICR or
 * TSC deadline) would be a single-step, and the tracer's step handling may
 * sleep and reads guest memory under SRCU: the full exit path does the same
 * work with interrupts on.
 */
static inline bool svmtrace_fastpath_allowed(unsigned long guest_rflags)
{
	return !static_branch_unlikely(&svmtrace_live) || !(guest_rflags & X86_EFLAGS_TF);
}

/*
 * svm_handle_exit(), every VM exit (interrupts on, kvm->srcu held), before
 * KVM handles it, while some VM is armed: a TF the tracer left set that
 * went without a trap ends the session with its reason (@exit_code: an
 * SVM_EXIT_*, for task switches and failed entries); a capture armed with
 * SVMTRACE_TARGET_F_FROM_NEXT starts sessions here.  A #DB exit returns at
 * once: svmtrace_db_exit() does all of that for it.
 */
static inline void svmtrace_vcpu_exit(struct kvm_vcpu *vcpu, u32 exit_code)
{
	if (static_branch_unlikely(&svmtrace_exit_watch))
		__svmtrace_vcpu_exit(vcpu, exit_code);
}

/*
 * svm_inject_nmi(), an NMI KVM injects at the next entry and whose IRET it
 * intercepts (interrupts on, kvm->srcu held): the tracer keeps its TF out
 * of the NMI frame and puts it back at the IRET exit (hide.c); also after a
 * stop, for an IRET the tracer was stepping over (frames.c).
 */
static inline void svmtrace_nmi_injected(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&svmtrace_live))
		__svmtrace_nmi_injected(vcpu);
}

/*
 * svm_inject_irq(), svm_inject_exception(): KVM injects an interrupt or
 * exception at the next entry (interrupts on, kvm->srcu held).  A
 * user-mode session's TF is kept out of its frame (frames.c); true to
 * intercept IRET (the tracer watches every return to user mode in the
 * target's address space).  Also after a stop: an IRET the tracer was
 * stepping over may not have run yet.
 */
static inline bool svmtrace_event_injected(struct kvm_vcpu *vcpu)
{
	return static_branch_unlikely(&svmtrace_live) && __svmtrace_event_injected(vcpu);
}

/*
 * iret_interception(): true to keep IRET intercepted, as it is while the
 * vCPU runs the target's address space or a return of its thread is due
 * there (intercepts.c), except over the one IRET the tracer lets run
 * (frames.c).
 */
static inline bool svmtrace_iret_wanted(struct kvm_vcpu *vcpu)
{
	return static_branch_unlikely(&svmtrace_exit_watch) && __svmtrace_iret_wanted(vcpu);
}

/*
 * svmtrace_entry()'s answer: bits 0-31 the exception vectors to intercept
 * besides KVM's own, INT n, CR3 writes, RDTSC and RDTSCP likewise (bits
 * 0-35, the intercepts svm.c owns for the tracer), and the flags below.
 */
#define SVMTRACE_INTERCEPT_INTN	BIT_ULL(32)	/* intercept INT n (SVM_EXIT_SWINT) */
#define SVMTRACE_INTERCEPT_CR3	BIT_ULL(33)	/* intercept MOV to CR3 (SVM_EXIT_WRITE_CR3) */
#define SVMTRACE_INTERCEPT_RDTSC BIT_ULL(34)	/* intercept RDTSC (virtual time) */
#define SVMTRACE_INTERCEPT_RDTSCP BIT_ULL(35)	/* intercept RDTSCP (virtual time) */
#define SVMTRACE_NR_INTERCEPTS	36
#define SVMTRACE_ENTRY_INTERCEPTS (BIT_ULL(SVMTRACE_NR_INTERCEPTS) - 1)
#define SVMTRACE_ENTRY_SCE_OFF	BIT_ULL(36)	/* run without EFER.SCE in the VMCB */
#define SVMTRACE_ENTRY_IRET	BIT_ULL(37)	/* intercept IRET */
/*
 * A plain user step from here (SVMTRACE_DB_STEADY) changes none of these
 * answers: an armed capture steps user code, its IRET intercepted.
 */
#define SVMTRACE_ENTRY_STEADY	BIT_ULL(38)

/*
 * svm_vcpu_run(), before an entry outside guest mode (interrupts off), all
 * the tracer asks of the VMCB at once, from the vCPU's state at that
 * moment (intercepts.c): while a capture is armed, CR3 writes on every
 * vCPU; on a vCPU that runs the target's address space (@cr3, the VMCB's:
 * what VMRUN loads) or owes it a return to user mode, EFER.SCE off
 * (SYSCALL and SYSRET raise #UD) and IRET intercepted (frames.c); while a
 * user-mode session steps, the exceptions and INT n the CPU would deliver
 * with our TF in the frame, and RDTSC and RDTSCP when it steps a target
 * with virtual time (hidetime.c).  @vtp as for svmtrace_db_exit(): asked at most
 * entries of a traced vCPU, so the state is not looked up each time.
 * Behind svmtrace_live: after a stop (svmtrace_exit_watch off) the
 * exception intercepts and SCE stay off while our TF is still set;
 * svm_vcpu_run() asks then only while the VMCB holds something of the
 * tracer's.
 */
static inline u64 svmtrace_entry(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp,
				 unsigned long cr3)
{
	if (static_branch_unlikely(&svmtrace_live))
		return __svmtrace_entry(vcpu, vtp, cr3);
	return 0;
}

/*
 * ud_interception(), after an entry without EFER.SCE (also when no capture
 * is armed any more): a SYSCALL or SYSRET that raised #UD only for that is
 * completed by the tracer.  Returns the exit handler's result, or -1 for
 * KVM's handle_ud().
 */
static inline int svmtrace_ud_exit(struct kvm_vcpu *vcpu)
{
	return __svmtrace_ud_exit(vcpu);
}

/*
 * svm_handle_exit(): an exception exit for a vector only the tracer
 * intercepts (@info1, @info2: the VMCB's EXITINFO1/2, error code and CR2):
 * the exception is queued back to the guest, the tracer's TF kept out of
 * its frame.
 */
static inline void svmtrace_exception_exit(struct kvm_vcpu *vcpu, u32 vector, u64 info1, u64 info2)
{
	__svmtrace_exception_exit(vcpu, vector, info1, info2);
}

/* svm_handle_exit(): an INT n the tracer intercepted, queued back likewise. */
static inline void svmtrace_swint_exit(struct kvm_vcpu *vcpu)
{
	__svmtrace_swint_exit(vcpu);
}

/*
 * svm_handle_exit(): an RDTSC or RDTSCP the tracer intercepted (virtual
 * time, hidetime.c) is completed with the value the target may see, and
 * skipped as KVM skips an instruction it completes (with NRIPS the VMCB's
 * next RIP, without it KVM's decoder), so the step is recorded as every
 * KVM-completed step is.  Returns the exit handler's result.  @vtp as for
 * svmtrace_db_exit().
 */
static inline int svmtrace_tsc_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp)
{
	return __svmtrace_tsc_exit(vcpu, vtp);
}

/*
 * vcpu_enter_guest(), KVM_REQ_SVMTRACE: 1 to go on into the guest, <= 0 to
 * leave KVM_RUN with that value (the request stays pending then).
 */
static inline int svmtrace_vcpu_request(struct kvm_vcpu *vcpu)
{
	return __svmtrace_vcpu_request(vcpu);
}

/*
 * kvm_arch_flush_shadow_all(), before KVM zaps the MMU: the VMM's address
 * space is gone (or the VM is destroyed), so no vCPU runs again; an armed
 * capture's sessions end with SVMTRACE_END_VCPU_GONE (attach.c).
 */
static inline void svmtrace_vm_gone(struct kvm *kvm)
{
	if (static_branch_unlikely(&svmtrace_live))
		__svmtrace_vm_gone(kvm);
}

/*
 * kvm_arch_vcpu_postcreate(), under the new vCPU's mutex (before its first
 * KVM_RUN): a vCPU created while a capture is armed is traced from its
 * first instruction (control.c).
 */
static inline void svmtrace_vcpu_created(struct kvm_vcpu *vcpu)
{
	if (static_branch_unlikely(&svmtrace_live))
		__svmtrace_vcpu_created(vcpu);
}

/* KVM_GET_REGS: the VMM sees the guest's RFLAGS, without our TF. */
static inline unsigned long svmtrace_regs_get_rflags(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	if (static_branch_unlikely(&svmtrace_live))
		return __svmtrace_regs_get_rflags(vcpu, rflags);
	return rflags;
}

/*
 * KVM_SET_REGS, KVM_SET_GUEST_DEBUG: the VMM's TF is the guest's own; ours
 * stays set (also when the VMM's own single-stepping ends).
 */
static inline unsigned long svmtrace_regs_set_rflags(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	if (static_branch_unlikely(&svmtrace_live))
		return __svmtrace_regs_set_rflags(vcpu, rflags);
	return rflags;
}

#endif
