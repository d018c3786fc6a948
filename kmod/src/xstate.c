// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace xstate capture (SVMTRACE_TARGET_F_XSTATE): YMM0-15 and
 * XSTATE_BV of the guest after a step, into the tail of an xstate slot.
 *
 * Where the guest's vector registers are.  KVM_RUN swaps the guest's FPU
 * state in once, at its start (kvm_load_guest_fpu(): fpu_swap_kvm_fpstate()
 * makes current->thread.fpu.fpstate the guest's fpstate and loads it), and
 * back out only when KVM_RUN returns.  In between, a VM exit leaves the
 * guest's registers live in the CPU: the host kernel never uses them
 * without saving them first.  Our step hooks run in that window (the #DB
 * and every other exit handler after vcpu_enter_guest() has re-enabled
 * preemption and interrupts, and kvm_vcpu_do_singlestep() for steps KVM
 * completes itself, also from complete_userspace_io() inside KVM_RUN).
 * Preemption, or a softirq or interrupt that uses kernel_fpu_begin(), may
 * have saved them meanwhile into current's fpstate -- the guest's -- and
 * set TIF_NEED_FPU_LOAD; vcpu_enter_guest() would then reload them with
 * switch_fpu_return() before the next VMRUN.
 *
 * So under fpregs_lock() (no preemption, no softirq, and no kernel FPU use
 * in a hard interrupt either: irq_fpu_usable() refuses while softirqs are
 * disabled) we do that reload now when TIF_NEED_FPU_LOAD is set, and read
 * the live registers.  The reload is no extra work on the way back into
 * the guest (vcpu_enter_guest() finds the flag clear), and one path reads
 * the state: no parsing of the saved XSAVE image, whose layout depends on
 * XSAVES (compacted) or XSAVE(OPT) (standard) and whose components with a
 * clear XSTATE_BV bit hold stale bytes.  get_xsave_addr() is not exported
 * to modules anyway, and fpu_copy_guest_fpstate_to_uabi() copies the whole
 * image (and is meant for a vCPU outside KVM_RUN).
 *
 * The plain step in KVM's IRQs-off exit fastpath (step.c) needs no
 * fpregs_lock(): with interrupts off since vcpu_enter_guest() reloaded the
 * registers (switch_fpu_return(), also with interrupts off), nothing can
 * have saved them (no preemption, softirq or interrupt), and
 * local_bh_enable() must not run with interrupts off.
 *
 * XSTATE_BV: XGETBV(1) (XINUSE) when the CPU has it, masked with the
 * guest's XCR0 -- the header bitmap an XSAVE of the guest would write.  A
 * CPU without XGETBV(1) reports the guest's XCR0 (every enabled component
 * counted as in use).  QEMU's TCG reports XINUSE as XCR0 too.
 *
 * Without AVX enabled in the XCR0 in force only XMM0-15 are readable (the
 * guest cannot have used more): the upper halves are stored as zero.  That
 * XCR0 is the host's, or in KVM's loop of plain steps (svm.c,
 * svmtrace_tight_loop(), which does not switch XCR0 back between its
 * entries) the guest's: XGETBV(0) says which components it enables, and a
 * YMM access with YMM off there would fault.
 */
#include <linux/kvm_host.h>
#include <asm/fpu/api.h>
#include <asm/fpu/xcr.h>

#include "svmtrace.h"

/* @insn ("vmovdqu %%ymm" or "movdqu %%xmm") of register n to @y + 32 * n, n = 0..15. */
#define STORE_ALL(insn, y)                                                             \
	asm volatile(".irp n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"                \
		     insn "\\n, \\n*32(%0)\n\t"                                          \
		     ".endr"                                                             \
		     : : "r"(y) : "memory")

static u64 guest_xstate_bv(struct kvm_vcpu *vcpu)
{
	u64 xcr0 = vcpu->arch.xcr0;

	if (cpu_feature_enabled(X86_FEATURE_XGETBV1))
		return xgetbv(1) & xcr0;
	return xcr0;
}

/*
 * Fill the tail of @s, a slot of an xstate ring (or vt->last_x): called from
 * fill_state() in the vCPU thread inside KVM_RUN, interrupts on, or off in
 * the exit fastpath (above).  A slot
 * whose state cannot be the guest's (no guest fpstate in force: not
 * expected inside KVM_RUN) goes without SVMTRACE_SLOT_F_XSTATE.
 */
void svmtrace_xstate_fill(struct kvm_vcpu *vcpu, struct svmtrace_slot *s)
{
	struct svmtrace_slot_xstate *x = container_of(s, struct svmtrace_slot_xstate, base);
	bool locked = !irqs_disabled();

	BUILD_BUG_ON(sizeof(x->ymm) != 16 * 32);
	memset(x->reserved, 0, sizeof(x->reserved));
	if (locked)
		fpregs_lock();
	if (WARN_ON_ONCE(current->thread.fpu.fpstate != vcpu->arch.guest_fpu.fpstate)) {
		if (locked)
			fpregs_unlock();
		memset(x->ymm, 0, sizeof(x->ymm));
		x->xstate_bv = 0;
		return;
	}
	if (test_thread_flag(TIF_NEED_FPU_LOAD))
		switch_fpu_return();
	if (cpu_feature_enabled(X86_FEATURE_AVX) &&
	    (xgetbv(XCR_XFEATURE_ENABLED_MASK) & XFEATURE_MASK_YMM)) {
		STORE_ALL("vmovdqu %%ymm", x->ymm);
	} else {
		memset(x->ymm, 0, sizeof(x->ymm));	/* the upper halves */
		STORE_ALL("movdqu %%xmm", x->ymm);
	}
	x->xstate_bv = guest_xstate_bv(vcpu);
	if (locked)
		fpregs_unlock();
	s->flags |= SVMTRACE_SLOT_F_XSTATE;
}
