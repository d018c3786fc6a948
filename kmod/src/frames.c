// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: keep a user-mode session's TF out of what the guest kernel
 * reads on its way in and out (issue 10), and put it back at the first
 * user instruction.  The TF is "parked" (vt->park) meanwhile: tf_live is
 * off, so a trap in the kernel is not ours.
 *
 *   Events KVM injects -- external interrupts (KVM_INTERRUPT, the in-kernel
 *   APIC) and exceptions KVM intercepted and queues back (#UD, #AC, ...):
 *   svm_inject_irq() and svm_inject_exception() call in before the entry
 *   that delivers them.  TF is cleared in RFLAGS, so the frame gets the
 *   guest's own, and KVM intercepts IRET.  The first IRET that returns to
 *   user mode of a targeted address space gets TF in the RFLAGS image it
 *   pops (as the NMI path in hide.c does), wherever it returns to: the
 *   interrupted instruction, or the point a handler dispatches an
 *   exception to.  Stepping goes on from there; the session stays open.
 *
 *   SYSCALL saves RFLAGS in R11, and no trap follows it (FMASK clears TF;
 *   the trap comes after SYSRET).  So the tracer looks ahead: a step that
 *   ends on 0F 05 clears TF, remembers the return point (RIP + 2, RSP,
 *   page) and takes execute permission from that page (like a closed gate,
 *   gate.c).  Usually the SYSCALL is on that page too: its
 *   fetch faults, and KVM's emulator performs the SYSCALL (R11 without our
 *   TF).  When SYSRET, or any return, brings the thread back to exactly
 *   that point, the tracer records the SYSCALL's step there (one record
 *   for the system call, as before) and sets TF again.  Other processes
 *   may run meanwhile (a scheduler switches away and back).
 *
 * A parked TF that does not come back that way -- the thread returns
 * elsewhere (a SYSRET to another RIP, a frame we could not write), another
 * vCPU or thread fetches from the parked page (it is opened for it, and the
 * return point given up), the IRET intercept was lost -- is noticed at the
 * first VM exit in user mode of a targeted address space: the session ends
 * there with reason event and a new one starts (step.c,
 * svmtrace_session_resume), as for a lost TF.
 *
 * Only user-only sessions park: under --kernel the handler is part of the
 * trace.  An event from user mode still gets a frame without our TF, and
 * step.c's lost-TF check ends the session at the next exit and follows the
 * handler from there (issue 13); events that interrupt kernel code of a
 * --kernel session are not intercepted and keep our TF in their frames.
 * Events the CPU would deliver without a VM exit -- faults (#DE, #GP, #PF
 * with NPT, ...: SVMTRACE_EXCEPTIONS), INT3 and INTO (#BP, #OF), INT n --
 * are intercepted while a session steps user code, and queued
 * back through KVM (which finds the next RIP of a software interrupt
 * itself), so they are injected events like the others.
 */
#include <linux/kvm_host.h>
#include <asm/debugreg.h>
#include <asm/svm.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/*
 * The exceptions a user instruction can raise that KVM does not intercept
 * itself (#UD, #AC, #DB and #MC it does), and INT n.
 */
#define SVMTRACE_EXCEPTIONS (BIT_ULL(DE_VECTOR) | BIT_ULL(BP_VECTOR) | BIT_ULL(OF_VECTOR) | \
			     BIT_ULL(BR_VECTOR) | BIT_ULL(TS_VECTOR) | BIT_ULL(NP_VECTOR) | \
			     BIT_ULL(SS_VECTOR) | BIT_ULL(GP_VECTOR) | BIT_ULL(PF_VECTOR) | \
			     BIT_ULL(MF_VECTOR) | BIT_ULL(XM_VECTOR) | SVMTRACE_INTERCEPT_INTN)

static struct svmtrace_target *armed(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	return rcu_dereference_protected(vm->armed, lockdep_is_held(&vt->lock));
}

static void clear_tf(struct kvm_vcpu *vcpu)
{
	unsigned long rflags = static_call(kvm_x86_get_rflags)(vcpu);

	static_call(kvm_x86_set_rflags)(vcpu, rflags & ~X86_EFLAGS_TF);
}

/*
 * Is the vCPU's TF ours alone, stepping user code of a session?  No TF of
 * the guest's or the VMM's on the same bit.
 */
static bool user_tf_ours(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
			 const struct svmtrace_target *t)
{
	return t && vt->tf_live && !vt->guest_tf && !vt->silent && vt->ring &&
	       !(vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP) &&
	       static_call(kvm_x86_get_cpl)(vcpu) == 3;
}

/* May our TF be parked now?  Only user-only sessions park. */
static bool may_park(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
		     const struct svmtrace_target *t)
{
	return user_tf_ours(vcpu, vt, t) && !(t->flags & SVMTRACE_TARGET_F_KERNEL);
}

static void park(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u8 where)
{
	clear_tf(vcpu);
	vt->tf_live = false;
	WRITE_ONCE(vt->park, where);
}

/*
 * KVM is about to inject an event (svm_inject_irq(), svm_inject_exception();
 * interrupts on, kvm->srcu held).  True while the vCPU waits for an IRET
 * back to user mode: KVM keeps IRET intercepted.
 */
bool __svmtrace_event_injected(struct kvm_vcpu *vcpu)
{
	struct svmtrace_target *t;
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;

	if (is_guest_mode(vcpu))
		return false;
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt)
		return false;
	if (READ_ONCE(vt->park) == SVMTRACE_PARK_IRET) {
		/* Not over that IRET after all: the event's frame gets no TF. */
		mutex_lock(&vt->lock);
		if (vt->park == SVMTRACE_PARK_IRET) {
			clear_tf(vcpu);
			WRITE_ONCE(vt->park, SVMTRACE_PARK_FRAME);
		}
		mutex_unlock(&vt->lock);
	} else if (READ_ONCE(vt->tf_live)) {
		mutex_lock(&vt->lock);
		t = armed(vm, vt);
		if (!(static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF)) {
			/* nothing of ours to keep out */
		} else if (may_park(vcpu, vt, t)) {
			park(vcpu, vt, SVMTRACE_PARK_FRAME);
		} else if (user_tf_ours(vcpu, vt, t)) {
			/*
			 * --kernel: the frame gets no TF either, and tf_live
			 * stays: lost_tf() (step.c) ends the session at the
			 * next exit and follows the handler from there.
			 */
			clear_tf(vcpu);
		}
		mutex_unlock(&vt->lock);
	}
	return READ_ONCE(vt->park) == SVMTRACE_PARK_FRAME;
}
EXPORT_SYMBOL_GPL(__svmtrace_event_injected);

/*
 * iret_interception() and every entry: IRET is intercepted while we wait
 * for one back to user mode (not while one not ours runs stepped).
 */
bool __svmtrace_iret_wanted(struct kvm_vcpu *vcpu)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);

	return vt && READ_ONCE(vt->park) == SVMTRACE_PARK_FRAME;
}
EXPORT_SYMBOL_GPL(__svmtrace_iret_wanted);

/*
 * Before every entry, interrupts off: the events to intercept while our TF
 * steps user code (under --kernel too: their frames get no TF either, see
 * __svmtrace_event_injected()).  Read without vt->lock; a stale answer
 * costs one entry with or without the intercepts.
 */
u64 __svmtrace_exception_intercepts(struct kvm_vcpu *vcpu)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);

	if (!vt || !READ_ONCE(vt->tf_live) || READ_ONCE(vt->guest_tf) || READ_ONCE(vt->silent) ||
	    (vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP) ||
	    static_call(kvm_x86_get_cpl)(vcpu) != 3)
		return 0;
	return SVMTRACE_EXCEPTIONS;
}
EXPORT_SYMBOL_GPL(__svmtrace_exception_intercepts);

/*
 * An exception exit for a vector only the tracer intercepts: queue it back
 * as the CPU would have delivered it.  Its injection parks our TF
 * (__svmtrace_event_injected()).
 */
void __svmtrace_exception_exit(struct kvm_vcpu *vcpu, u32 vector, u64 info1, u64 info2)
{
	struct x86_exception fault = {
		.vector = PF_VECTOR,
		.error_code_valid = true,
		.error_code = info1,
		.address = info2,
	};

	switch (vector) {
	case PF_VECTOR:
		kvm_inject_page_fault(vcpu, &fault);
		break;
	case TS_VECTOR:
	case NP_VECTOR:
	case SS_VECTOR:
	case GP_VECTOR:
		kvm_queue_exception_e(vcpu, vector, info1);
		break;
	default:
		kvm_queue_exception(vcpu, vector);
	}
}
EXPORT_SYMBOL_GPL(__svmtrace_exception_exit);

/*
 * An INT n the tracer intercepted (RIP on it): queue it back as a software
 * interrupt; KVM's injection skips the instruction (it decodes the next
 * RIP when the CPU has no NRIPS).  A read that fails raises its #PF, as
 * the CPU's fetch would.
 */
void __svmtrace_swint_exit(struct kvm_vcpu *vcpu)
{
	struct x86_exception e;
	u8 insn[2];

	if (kvm_read_guest_virt(vcpu, kvm_rip_read(vcpu), insn, sizeof(insn), &e)) {
		kvm_inject_page_fault(vcpu, &e);
		return;
	}
	/* Not INT n (rewritten meanwhile): the CPU executes it again. */
	if (WARN_ON_ONCE(insn[0] != 0xcd))
		return;
	kvm_queue_interrupt(vcpu, insn[1], true);
	kvm_make_request(KVM_REQ_EVENT, vcpu);	/* inject it at the next entry */
}
EXPORT_SYMBOL_GPL(__svmtrace_swint_exit);

/* Stepping resumes from @rip/@rsp: the repairs of the next step start there. */
static void resume_at(struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	vt->prev_rip = rip;
	vt->prev_rsp = rsp;
	vt->prev_valid = true;
	vt->tf_live = true;
	WRITE_ONCE(vt->park, SVMTRACE_PARK_NONE);
}

/* An event is being delivered, or will be at the next entry. */
static bool event_in_flight(struct kvm_vcpu *vcpu)
{
	return vcpu->arch.exception.pending || vcpu->arch.exception.injected ||
	       vcpu->arch.interrupt.injected || vcpu->arch.nmi_injected;
}

/*
 * An IRET that is not ours (frame_iret()) must still run, and SVM
 * intercepts IRET before it executes: kept intercepted, it would exit
 * again forever (a Linux guest hung so in its first nested interrupt).  It
 * runs once without the intercept, with our TF over that one instruction,
 * as KVM steps over an NMI handler's IRET; the trap after it
 * (svmtrace_iret_stepped()) parks the frame again, and IRET is intercepted
 * again before the next entry (svm_vcpu_run()).  The frame it pops keeps
 * the guest's TF: the trap comes from TF before the IRET, not after.
 */
static void step_over_iret(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	unsigned long rflags = static_call(kvm_x86_get_rflags)(vcpu);

	if (event_in_flight(vcpu))
		return;	/* delivered first; its handler's IRET comes back here */
	if (rflags & X86_EFLAGS_TF) {
		/* The guest steps its own kernel: that trap is the guest's. */
		WRITE_ONCE(vt->park, SVMTRACE_PARK_LOST);
		return;
	}
	static_call(kvm_x86_set_rflags)(vcpu, rflags | X86_EFLAGS_TF);
	WRITE_ONCE(vt->park, SVMTRACE_PARK_IRET);
}

/*
 * An IRET exit while a frame is parked (before the IRET runs; RSP points
 * at RIP, CS, RFLAGS, RSP, SS).  One that returns to user mode of a
 * targeted address space gets our TF in the image it pops; one that
 * returns to the kernel, or to another process, is not ours to change and
 * is stepped over.
 */
static void frame_iret(struct kvm_vcpu *vcpu, const struct svmtrace_target *t,
		       struct svmtrace_vcpu *vt)
{
	struct x86_exception e;
	u64 frame[4];
	gpa_t gpa;

	if (is_64_bit_mode(vcpu) && svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu))) {
		gpa = kvm_mmu_gva_to_gpa_system(vcpu, kvm_rsp_read(vcpu), &e);
		if (gpa != INVALID_GPA && offset_in_page(gpa) <= PAGE_SIZE - sizeof(frame) &&
		    !kvm_vcpu_read_guest(vcpu, gpa, frame, sizeof(frame)) && (frame[1] & 3) == 3) {
			frame[2] |= X86_EFLAGS_TF;
			if (!kvm_vcpu_write_guest(vcpu, gpa + 16, &frame[2], sizeof(frame[2]))) {
				resume_at(vt, frame[0], frame[3]);
				return;
			}
		}
	}
	step_over_iret(vcpu, vt);
}

/*
 * The #DB after an IRET stepped over (step_over_iret(); DR6 of the exit in
 * @dr6): its BS is ours, the frame is parked again.  A #DB exit that is no
 * step of ours, counted as db_foreign for the exit audit.  True when
 * nothing of the guest's is in it (a DR0-3 hit at the IRET's target stays
 * the guest's).
 */
bool svmtrace_iret_stepped(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 *dr6)
{
	bool ours;

	mutex_lock(&vt->lock);
	ours = vt->park == SVMTRACE_PARK_IRET && (*dr6 & DR6_BS);
	if (ours) {
		WRITE_ONCE(vt->park, SVMTRACE_PARK_FRAME);
		vt->stats.db_foreign++;
	}
	mutex_unlock(&vt->lock);
	if (!ours)
		return false;
	if (vcpu->arch.dr6 == *dr6)
		vcpu->arch.dr6 &= ~DR6_BS;
	*dr6 &= ~DR6_BS;
	return !(*dr6 & DR_TRAP_BITS);
}

/*
 * Is the instruction at @rip 0F 05?  Asked on every user-only step, so the
 * page RIP is on is remembered (CR3, page, gfn and its host mapping,
 * revalidated against memslot changes by KVM's gfn_to_hva_cache): the page
 * walk of kvm_read_guest_virt() cost 1 135 L1 instructions per step in
 * make bench-step-cost.  A guest that remaps that page without a CR3 write
 * can make the cached read wrong: a "yes" is confirmed through the page
 * tables before anything is parked; a wrong "no" leaves our TF in R11,
 * which hide.c clears after SYSRET, as before issue 10.
 */
static bool syscall_at(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip)
{
	static const u8 syscall[] = { 0x0f, 0x05 };
	u64 cr3 = kvm_read_cr3(vcpu) & SVMTRACE_CR3_MASK, va = rip & PAGE_MASK;
	struct x86_exception e;
	gpa_t gpa;
	u8 op[2];

	if (offset_in_page(rip) <= PAGE_SIZE - sizeof(op)) {
		if (!vt->ahead_valid || vt->ahead_cr3 != cr3 || vt->ahead_va != va) {
			vt->ahead_valid = false;
			gpa = kvm_mmu_gva_to_gpa_read(vcpu, va, &e);
			if (gpa == INVALID_GPA ||
			    kvm_gfn_to_hva_cache_init(vcpu->kvm, &vt->ahead_ghc, gpa, PAGE_SIZE))
				return false;
			vt->ahead_cr3 = cr3;
			vt->ahead_va = va;
			vt->ahead_valid = true;
		}
		if (kvm_read_guest_offset_cached(vcpu->kvm, &vt->ahead_ghc, op,
						 offset_in_page(rip), sizeof(op)) ||
		    memcmp(op, syscall, sizeof(op)))
			return false;
	}
	return !kvm_read_guest_virt(vcpu, rip, op, sizeof(op), &e) &&
	       !memcmp(op, syscall, sizeof(op));
}

/*
 * The step before the instruction at RIP ended with our TF (step.c,
 * vt->lock held): when that instruction is a SYSCALL of a user-only
 * session, park TF until the thread is back at the return point.  True
 * when parked (the vCPU no longer has our TF).
 */
bool svmtrace_syscall_ahead(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
			    struct svmtrace_vcpu *vt, const struct svmtrace_target *t)
{
	struct x86_exception e;
	u64 rip;
	gpa_t gpa;

	if (!may_park(vcpu, vt, t) || !is_64_bit_mode(vcpu))
		return false;
	rip = kvm_rip_read(vcpu);
	if (!syscall_at(vcpu, vt, rip))
		return false;
	gpa = kvm_mmu_gva_to_gpa_read(vcpu, rip + 2, &e);
	if (gpa == INVALID_GPA)
		return false;	/* R11 keeps our TF; hide.c clears it after SYSRET */
	vt->ret_rip = rip + 2;
	vt->ret_rsp = kvm_rsp_read(vcpu);
	WRITE_ONCE(vt->ret_gfn, gpa_to_gfn(gpa));
	/* svmtrace_park_denies() sees the gfn before the SPTE changes. */
	smp_wmb();
	park(vcpu, vt, SVMTRACE_PARK_SYSCALL);
	svmtrace_gfn_deny_exec(vm->kvm, vt->ret_gfn);
	return true;
}

/*
 * Is the vCPU at the parked SYSCALL (@back = 2) or at its return point
 * (0): that RIP and RSP in user mode, the return point on the same page?
 * Not the CR3: a SYSCALL may move the thread to another address space
 * (step.c then ends the session, reason cr3), while another process at
 * the same RIP and RSP has its own page there.
 */
static bool at_syscall(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 back)
{
	struct x86_exception e;
	gpa_t gpa;

	if (static_call(kvm_x86_get_cpl)(vcpu) != 3 || kvm_rip_read(vcpu) != vt->ret_rip - back ||
	    kvm_rsp_read(vcpu) != vt->ret_rsp)
		return false;
	gpa = kvm_mmu_gva_to_gpa_read(vcpu, vt->ret_rip, &e);
	return gpa != INVALID_GPA && gpa_to_gfn(gpa) == vt->ret_gfn;
}

/*
 * Any VM exit of a vCPU whose TF is parked (before KVM handles the exit).
 * True when the thread is back at a parked SYSCALL's return point: TF is
 * ours again and the caller records the SYSCALL's step here.
 */
bool svmtrace_park_exit(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			u32 exit_code)
{
	struct svmtrace_target *t;
	bool back = false;

	mutex_lock(&vt->lock);
	t = armed(vm, vt);
	if (!t || !vt->park) {
		svmtrace_park_stop(vt);
		goto out;
	}
	if (exit_code == SVM_EXIT_IRET && vt->park == SVMTRACE_PARK_FRAME) {
		frame_iret(vcpu, t, vt);
		goto out;
	}
	/* Still in the kernel, or not delivered yet. */
	if (static_call(kvm_x86_get_cpl)(vcpu) != 3 || event_in_flight(vcpu))
		goto out;
	if (vt->park == SVMTRACE_PARK_SYSCALL) {
		if (at_syscall(vcpu, vt, 2))
			goto out;	/* the SYSCALL has not run yet */
		if (at_syscall(vcpu, vt, 0)) {
			/*
			 * The SYSCALL's step ends here (in another address
			 * space it ends the session); the page maps executable
			 * again.
			 */
			resume_at(vt, vt->ret_rip - 2, vt->ret_rsp);
			static_call(kvm_x86_set_rflags)(vcpu, static_call(kvm_x86_get_rflags)(vcpu) |
								   X86_EFLAGS_TF);
			back = true;
			goto out;
		}
	}
	if (!svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		goto out;	/* another process */
	/* Back in user mode without our TF: the hole gets a session end. */
	WRITE_ONCE(vt->park, SVMTRACE_PARK_NONE);
	svmtrace_session_resume(vm, vt, vcpu, SVMTRACE_END_EVENT);
out:
	mutex_unlock(&vt->lock);
	return back;
}

/*
 * The thread of a SYSCALL parked on another vCPU is back at its return
 * point on this one (the kernel migrated it while in the system call, as
 * sched_setaffinity() does): this vCPU takes it over, as svmtrace_park_exit()
 * does on the parking vCPU -- the SYSCALL's step is recorded here, in this
 * vCPU's session (a new one when it has none), and TF is ours again.
 */
static void syscall_migrated(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, u64 rip, u64 rsp)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);
	struct svmtrace_target *t;
	bool taken;

	mutex_lock(&vt->lock);
	t = armed(vm, vt);
	taken = t && vt->ring && !vt->park && !vt->tf_live && !vt->silent &&
		!(static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF);
	if (taken) {
		if (!vt->in_session)
			svmtrace_session_begin(vm, vt, vcpu, READ_ONCE(vm->last_gate));
		resume_at(vt, rip, rsp);
		static_call(kvm_x86_set_rflags)(vcpu, static_call(kvm_x86_get_rflags)(vcpu) |
							   X86_EFLAGS_TF);
	}
	mutex_unlock(&vt->lock);
	if (taken)
		__svmtrace_emulated_step(vcpu);
}

/*
 * A fetch fault on @gfn (NPF exit, before the gate code and KVM's own
 * handling).  On a parked SYSCALL's page: the SYSCALL itself is performed
 * by KVM's emulator, so that the page stays without execute permission
 * until the thread returns; the thread back at its return point on
 * another vCPU is taken over there (syscall_migrated()); any other fetch
 * gets the page (the return point is given up, svmtrace_park_exit() ends
 * the session when that thread is back in user mode).  True when the fault
 * was the SYSCALL.
 */
bool svmtrace_park_fault(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, gfn_t gfn)
{
	struct svmtrace_vcpu *vt;
	bool emulate = false, migrated = false;
	u64 rip = 0, rsp = 0;
	u32 i;

	for (i = 0; i < smp_load_acquire(&vm->nr_vcpus); i++) {
		vt = READ_ONCE(vm->vcpus[i]);
		if (READ_ONCE(vt->park) != SVMTRACE_PARK_SYSCALL || READ_ONCE(vt->ret_gfn) != gfn)
			continue;
		mutex_lock(&vt->lock);
		if (vt->park == SVMTRACE_PARK_SYSCALL && vt->ret_gfn == gfn) {
			if (i == vcpu->vcpu_idx && at_syscall(vcpu, vt, 2) &&
			    !event_in_flight(vcpu)) {
				emulate = true;
			} else if (i != vcpu->vcpu_idx && !migrated && at_syscall(vcpu, vt, 0) &&
				   !event_in_flight(vcpu)) {
				/* That vCPU's session keeps no TF; it ends at stop. */
				WRITE_ONCE(vt->park, SVMTRACE_PARK_NONE);
				rip = vt->ret_rip - 2;
				rsp = vt->ret_rsp;
				migrated = true;
			} else {
				WRITE_ONCE(vt->park, SVMTRACE_PARK_LOST);
			}
		}
		mutex_unlock(&vt->lock);
	}
	if (migrated)
		syscall_migrated(vcpu, vm, rip, rsp);
	/* Our TF is off (parked): no single-step, so no call back into step.c. */
	return emulate && kvm_emulate_instruction(vcpu, 0);
}

/* Does a parked SYSCALL deny execution of a page in [@base, @base + @pages)? */
bool svmtrace_park_denies(struct svmtrace_vm *vm, gfn_t base, gfn_t pages)
{
	struct svmtrace_vcpu *vt;
	u32 i;

	for (i = 0; i < smp_load_acquire(&vm->nr_vcpus); i++) {
		vt = READ_ONCE(vm->vcpus[i]);
		if (READ_ONCE(vt->park) == SVMTRACE_PARK_SYSCALL) {
			smp_rmb();	/* pairs with svmtrace_syscall_ahead() */
			if (READ_ONCE(vt->ret_gfn) - base < pages)
				return true;
		}
	}
	return false;
}

/*
 * Stop, or no capture armed any more (vt->lock held): a parked TF stays
 * off; the page maps executable again at its next fetch.
 */
void svmtrace_park_stop(struct svmtrace_vcpu *vt)
{
	WRITE_ONCE(vt->park, SVMTRACE_PARK_NONE);
}
