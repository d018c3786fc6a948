// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: keep a user-mode session's TF out of what the guest kernel
 * reads on its way in from user mode, and put it back on the
 * way out, wherever the thread comes back.
 *
 * On the way in.  Events KVM injects -- external interrupts (KVM_INTERRUPT,
 * the in-kernel APIC) and exceptions KVM intercepted and queues back (#UD,
 * #AC, ...): svm_inject_irq() and svm_inject_exception() call in before the
 * entry that delivers them, and our TF is cleared, so the frame gets the
 * guest's own RFLAGS.  Events the CPU would deliver without a VM exit --
 * faults (#DE, #GP, #PF with NPT, ...: intercepts.c), INT3, INTO,
 * INT n -- are intercepted while a session steps user code and queued back
 * through KVM, so they are injected events like the others.  SYSCALL saves
 * RFLAGS in R11: a vCPU that runs the target's address space runs with
 * EFER.SCE clear in its VMCB (intercepts.c decides which vCPUs, and when;
 * the guest's own EFER, vcpu->arch.efer, keeps SCE:
 * RDMSR, KVM_GET_SREGS and the emulator read that one), so SYSCALL raises
 * #UD, which KVM always intercepts; its handler emulates the SYSCALL
 * (em_syscall reads EFER through kvm_get_msr(), the guest's view) after
 * our TF was cleared, so R11 gets the guest's RFLAGS.  The thread's TF is
 * "parked" meanwhile: an entry in the VM's park table (vm->parks) keyed by
 * the user CR3, RIP and RSP it returns to.  The vCPU that parked a
 * SYSCALL keeps catching returns to user mode until its first one
 * (vt->sys PARKED), whatever its CR3: the thread may leave the address
 * space in its system call (below).
 *
 * On the way out.  SYSRET raises #UD too (SCE clear); KVM's emulator has
 * no SYSRET, so this file emulates it (sysret(), per the AMD APM, with
 * Intel's #GP for a non-canonical RCX).  IRET is intercepted on the same
 * vCPUs (intercepts.c); an IRET not executed by a stepped thread is
 * run once with our TF, without the intercept (vt->iret), and the
 * trap after it lands where it returned to, with everything known: CPL,
 * CR3, RIP, RSP.  Both ends call user_return(): a return to user mode of a
 * targeted address space takes the matching park, on whichever vCPU the
 * thread was parked, and the thread is stepped again from there:
 *   SYSCALL park   the SYSCALL's step is recorded at the return point (one
 *                  record, the state after the system call), as when TF
 *                  went through R11;
 *   FRAME park,    the step is the interrupted or faulting instruction (or
 *   or none        wherever the kernel dispatched the thread), recorded
 *                  after it ran.  No park at all is another thread of the
 *                  traced process (a clone child returning at the parent's
 *                  RIP with its own RSP, a thread the tracer had not
 *                  stepped yet): it is traced while some session of the VM
 *                  is open.
 * A thread that leaves for another address space in its system call (the
 * first return to user mode on the parking vCPU, at the parked RIP and RSP,
 * on the same physical page, under a CR3 not targeted) takes its park too,
 * and its step ends the session there (reason cr3, step.c).  Another
 * process returning first there, at the same RIP and RSP of the same page,
 * would be taken for it.
 *
 * vt->iret, per vCPU (under vt->lock; vstate.h):
 *   NONE    IRET is intercepted (on a vCPU that runs the target, or owes it
 *           a return: intercepts.c);
 *   STEP    the IRET at RIP runs once with our TF and without the
 *           intercept; its trap is ours (svmtrace_iret_trap()).  An event
 *           injected before it runs clears that TF first and goes back to
 *           NONE;
 *   RESUME  STEP for an NMI handler's IRET whose frame hide.c kept our TF
 *           out of: the trap after it also resumes our stepping;
 *   BARE    the IRET runs once without the intercept and without a TF of
 *           ours: the vCPU steps it anyway (a --kernel session, a user
 *           IRETQ of the target), the guest steps its own kernel (that trap
 *           is the guest's), or an NMI handler's IRET after a stop.  Back
 *           to NONE at the next VM exit.
 *
 * Locks: vt->lock guards a vCPU's session state and vt->iret; vm->park_lock
 * (a spinlock) guards vm->parks and is the inner lock: taken alone or under
 * one vt->lock, never the other way round, and no vt->lock is taken while
 * another one is held.
 *
 * Contexts: every entry point runs in the vCPU thread with interrupts on
 * and kvm->srcu held (exit handlers, KVM's injection).  Guest memory is
 * read with the rights of the instruction that made the access (access.c;
 * SRCU held) and never written.
 *
 * Only user-only sessions park: under --kernel the handler is part of the
 * trace.  An event from user mode still gets a frame without our TF, and
 * step.c's lost-TF check ends the session at the next exit and follows the
 * handler from there.
 */
#include <linux/kvm_host.h>
#include <asm/debugreg.h>
#include <asm/insn.h>
#include <asm/svm.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/* The RFLAGS bits SYSRET loads from R11 in 64-bit mode (AMD APM vol. 3). */
#define SYSRET_RFLAGS 0x3c7fd7

static struct svmtrace_target *armed(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	return rcu_dereference_protected(vm->armed, lockdep_is_held(&vt->lock));
}

/*
 * Does our TF step user code of a session?  The guest's own TF may be on
 * the same bit; the VMM's (KVM_SET_GUEST_DEBUG) may not.
 */
static bool user_stepped(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
			 const struct svmtrace_target *t)
{
	return t && vt->tf == SVMTRACE_TF_LIVE && vt->ring &&
	       !(vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP) &&
	       static_call(kvm_x86_get_cpl)(vcpu) == 3;
}

/* Is the vCPU's TF ours alone, stepping user code of a session? */
static bool user_tf_ours(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
			 const struct svmtrace_target *t)
{
	return user_stepped(vcpu, vt, t) && !vt->guest_tf;
}

/*
 * Is our TF still set although the capture stopped (its trap, which would
 * take it back, has not come yet)?  Then no step of it is wanted any more,
 * and nothing the guest stores on its way into the kernel may get it.
 */
static bool tf_left_over(struct svmtrace_vcpu *vt, const struct svmtrace_target *t)
{
	return !t && vt->tf == SVMTRACE_TF_LIVE && !vt->guest_tf;
}

/* May our TF be parked now?  Only user-only sessions park. */
static bool may_park(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
		     const struct svmtrace_target *t)
{
	return user_tf_ours(vcpu, vt, t) && !(t->flags & SVMTRACE_TARGET_F_KERNEL);
}

static u64 user_cr3(struct kvm_vcpu *vcpu)
{
	return kvm_read_cr3(vcpu) & SVMTRACE_CR3_MASK;
}

/*
 * Park a thread (vm->park_lock): a free entry, or the oldest one when the
 * table is full (that thread then comes back as one without a park).
 */
static void park_add(struct svmtrace_vm *vm, u8 kind, u64 cr3, u64 rip, u64 rsp)
{
	struct svmtrace_park *p, *slot = NULL;
	u32 i;

	spin_lock(&vm->park_lock);
	for (i = 0; i < SVMTRACE_MAX_PARKS; i++) {
		p = &vm->parks[i];
		if (p->kind && p->cr3 == cr3 && p->rip == rip && p->rsp == rsp) {
			slot = p;	/* the same thread again: its old park is stale */
			break;
		}
		if (!slot || (slot->kind && (!p->kind || p->age < slot->age)))
			slot = p;
	}
	if (slot->kind == SVMTRACE_PARK_SYSCALL && (slot->cr3 != cr3 || slot->rip != rip ||
						    slot->rsp != rsp))
		vm->parks_evicted++;	/* that thread's system call goes unrecorded */
	slot->kind = kind;
	slot->cr3 = cr3;
	slot->rip = rip;
	slot->rsp = rsp;
	slot->age = ++vm->park_clock;
	spin_unlock(&vm->park_lock);
}

/* Take the park of the thread at @cr3/@rip/@rsp: its kind, 0 for none. */
static u8 park_take(struct svmtrace_vm *vm, u64 cr3, u64 rip, u64 rsp)
{
	struct svmtrace_park *p;
	u8 kind = 0;
	u32 i;

	spin_lock(&vm->park_lock);
	for (i = 0; i < SVMTRACE_MAX_PARKS; i++) {
		p = &vm->parks[i];
		if (p->kind && p->cr3 == cr3 && p->rip == rip && p->rsp == rsp) {
			kind = p->kind;
			p->kind = SVMTRACE_PARK_NONE;
			break;
		}
	}
	spin_unlock(&vm->park_lock);
	return kind;
}

/* Stop, or a new arm: no thread is parked any more. */
void svmtrace_parks_clear(struct svmtrace_vm *vm)
{
	spin_lock(&vm->park_lock);
	memset(vm->parks, 0, sizeof(vm->parks));
	spin_unlock(&vm->park_lock);
}

/* An event is being delivered, or will be at the next entry. */
static bool event_in_flight(struct kvm_vcpu *vcpu)
{
	return vcpu->arch.exception.pending || vcpu->arch.exception.injected ||
	       vcpu->arch.interrupt.injected || vcpu->arch.nmi_injected;
}

/*
 * An event is about to be delivered (vt->lock held): an IRET we were about
 * to step over has not run, and the event's frame must not get that TF.
 */
void svmtrace_iret_event(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	lockdep_assert_held(&vt->lock);
	if (svmtrace_iret_stepped(vt->iret)) {
		svmtrace_set_tf(vcpu, false);
		svmtrace_go(vt, SVMTRACE_EV_IRET_EVENT);
	}
}

/*
 * KVM is about to inject an event (svm_inject_irq(), svm_inject_exception();
 * interrupts on, kvm->srcu held).  True to intercept IRET.
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
	if (svmtrace_iret_stepped(READ_ONCE(vt->iret)) || svmtrace_tf_live(READ_ONCE(vt->tf))) {
		mutex_lock(&vt->lock);
		svmtrace_iret_event(vcpu, vt);
		t = armed(vm, vt);
		if (!(static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF)) {
			/* nothing of ours to keep out */
		} else if (may_park(vcpu, vt, t)) {
			svmtrace_set_tf(vcpu, false);
			svmtrace_go(vt, SVMTRACE_EV_TF_PARK_FRAME);
			park_add(vm, SVMTRACE_PARK_FRAME, user_cr3(vcpu), kvm_rip_read(vcpu),
				 kvm_rsp_read(vcpu));
		} else if (user_tf_ours(vcpu, vt, t)) {
			/*
			 * --kernel: the frame gets no TF either, and tf
			 * stays LIVE: lost_tf() (step.c) ends the session at the
			 * next exit and follows the handler from there.
			 */
			svmtrace_set_tf(vcpu, false);
		} else if (tf_left_over(vt, t)) {
			svmtrace_set_tf(vcpu, false);
			svmtrace_go(vt, SVMTRACE_EV_TF_LEFTOVER);
		}
		mutex_unlock(&vt->lock);
	}
	return __svmtrace_iret_wanted(vcpu);
}
EXPORT_SYMBOL_GPL(__svmtrace_event_injected);

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
		svmtrace_inject_page_fault(vcpu, &fault);
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
 * An INT n the tracer intercepted (RIP on it, prefixes and all: `2E CD 80`
 * is an INT 0x80): queue it back as a software interrupt; KVM's injection
 * skips the instruction (with NRIPS the CPU says where it ends; without,
 * KVM's emulator decodes it, prefixes included).  Read as the CPU fetched
 * it (decode.c).  QEMU's TCG takes INT3 and INTO through this intercept
 * too (hardware raises #BP and #OF, which the tracer intercepts as well):
 * they are queued back as those exceptions, as that exit would.  When it
 * cannot be read or is none of these any more (the page went, or another
 * vCPU rewrote it), nothing is queued and nothing is injected that the CPU
 * would not raise: the session ends (reason int) and our TF goes, so the
 * CPU runs whatever is there without the intercept -- never the same exit
 * again -- and the thread is traced again from its next return to user
 * mode (user_return()).
 */
void __svmtrace_swint_exit(struct kvm_vcpu *vcpu)
{
	struct svmtrace_insn in;
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;

	if (!svmtrace_insn_fetch(vcpu, static_call(kvm_x86_get_cpl)(vcpu),
				 kvm_get_linear_rip(vcpu), &in)) {
		switch (in.bytes[in.op]) {
		case 0xcd:	/* INT n */
			kvm_queue_interrupt(vcpu, in.bytes[in.op + 1], true);
			kvm_make_request(KVM_REQ_EVENT, vcpu);	/* inject it at the next entry */
			return;
		case 0xcc:	/* INT3 */
			kvm_queue_exception(vcpu, BP_VECTOR);
			return;
		case 0xce:	/* INTO, which exits only when it raises #OF */
			kvm_queue_exception(vcpu, OF_VECTOR);
			return;
		}
	}
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt)
		return;
	mutex_lock(&vt->lock);
	svmtrace_session_gap(vm, vt, vcpu, SVMTRACE_END_INT);
	mutex_unlock(&vt->lock);
}
EXPORT_SYMBOL_GPL(__svmtrace_swint_exit);

/* Is some session of the VM open: is the target being traced? */
static bool vm_tracing(struct svmtrace_vm *vm)
{
	u32 i, n = smp_load_acquire(&vm->nr_vcpus);

	for (i = 0; i < n; i++)
		if (READ_ONCE(READ_ONCE(vm->vcpus[i])->session) != SVMTRACE_SESSION_NONE)
			return true;
	return false;
}

/*
 * The thread on this vCPU is stepped from here on (vt->lock held), its
 * last step having ended at @rip/@rsp; a new session starts with @gate_id.
 * False when this vCPU cannot step it (no ring, the capture stopped,
 * stepping something else).
 */
bool svmtrace_take_thread(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			  u64 rip, u64 rsp, u32 gate_id)
{
	struct svmtrace_target *t = armed(vm, vt);

	lockdep_assert_held(&vt->lock);
	if (!t || !vt->ring || svmtrace_tf_live(vt->tf) || (t->flags & SVMTRACE_TARGET_F_KERNEL))
		return false;
	if (vt->session == SVMTRACE_SESSION_NONE) {
		svmtrace_session_begin(vm, vt, vcpu, gate_id);
	} else {
		vt->guest_tf = static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF;
		svmtrace_go(vt, SVMTRACE_EV_TF_TAKE_THREAD);
		svmtrace_set_tf(vcpu, true);
	}
	vt->prev_rip = rip;
	vt->prev_rsp = rsp;
	vt->prev_cpl = 3;	/* a return to user mode */
	vt->prev_valid = true;
	svmtrace_mem_due(vcpu, vt);	/* its first instruction is decoded at the entry */
	return true;
}

/*
 * The vCPU just returned to user mode (an emulated SYSRET, or the trap
 * after an IRET stepped over; interrupts on, kvm->srcu held, no vt->lock).
 * See the header comment for what a return takes.
 */
static void user_return(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	u64 cr3 = user_cr3(vcpu), rip = kvm_rip_read(vcpu), rsp = kvm_rsp_read(vcpu);
	struct svmtrace_target *t;
	bool targeted, had, stepping, first, taken = false;
	u64 had_cr3;
	gfn_t had_gfn;
	gpa_t gpa;
	u8 kind = 0;

	switch (svmtrace_first_return(vcpu, vm, vt, rip, rsp)) {
	case SVMTRACE_FIRST_ASKED:
		return;	/* held until the controller decides (first.c) */
	case SVMTRACE_FIRST_TRACE:
		first = true;
		break;
	default:
		first = false;
	}
	mutex_lock(&vt->lock);
	t = armed(vm, vt);
	targeted = t && svmtrace_cr3_targeted(t, cr3);
	had = t && vt->sys == SVMTRACE_SYS_PARKED && vt->sys_rip == rip && vt->sys_rsp == rsp;
	had_cr3 = vt->sys_cr3;
	had_gfn = vt->sys_gfn;
	svmtrace_go(vt, SVMTRACE_EV_SYS_RETURN);
	stepping = svmtrace_tf_live(vt->tf);
	mutex_unlock(&vt->lock);
	if (!t || stepping)
		return;
	if (targeted)
		kind = park_take(vm, cr3, rip, rsp);
	else if (had &&
		 (gpa = svmtrace_gva_to_gpa(vcpu, rip, svmtrace_fetch_access(3))) != INVALID_GPA &&
		 gpa_to_gfn(gpa) == had_gfn &&
		 park_take(vm, had_cr3, rip, rsp) == SVMTRACE_PARK_SYSCALL)
		kind = SVMTRACE_PARK_SYSCALL;	/* it moved to another address space */
	else
		return;
	if (!kind && !first && !vm_tracing(vm))
		return;	/* a thread of the target, but nothing is traced */
	mutex_lock(&vt->lock);
	if (kind == SVMTRACE_PARK_SYSCALL) {
		/*
		 * The SYSCALL's step ends here: recorded below, from its
		 * opcode (RIP - 2, after whatever prefixes it had).
		 */
		taken = (targeted || vt->session != SVMTRACE_SESSION_NONE) &&
			svmtrace_take_thread(vcpu, vm, vt, rip - 2, rsp, READ_ONCE(vm->last_gate));
		if (taken)
			svmtrace_mem_none(vcpu, vt);	/* a SYSCALL's accesses */
	} else {
		/* A thread's first instruction opens a session of its own kind. */
		svmtrace_take_thread(vcpu, vm, vt, rip, rsp,
				     first ? SVMTRACE_SESSION_FIRST : READ_ONCE(vm->last_gate));
	}
	mutex_unlock(&vt->lock);
	if (taken)
		__svmtrace_emulated_step(vcpu);
}

/*
 * An IRET exit, before the IRET runs (exit hook; the NMI frame hide.c
 * waits for is served first).  It runs once without the intercept: with
 * our TF, so that the trap after it says where it went, unless a TF steps
 * it anyway.
 */
void svmtrace_iret_exit(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	unsigned long rflags;

	mutex_lock(&vt->lock);
	if (vt->tf == SVMTRACE_TF_NMI) {
		/*
		 * The IRET of the NMI handler whose frame hide.c kept our TF
		 * out of, back to code our TF stepped: stepped with our TF,
		 * which the trap after it takes back for good
		 * (svmtrace_iret_trap()).  So our TF is never in guest memory,
		 * where a snapshot (savevm, a migration) could take it to a
		 * host without the tracer.
		 */
		if (svmtrace_nmi_iret(vcpu, vm, vt)) {
			svmtrace_set_tf(vcpu, true);
			svmtrace_go(vt, SVMTRACE_EV_IRET_NMI_RESUME);
		} else {
			svmtrace_go(vt, SVMTRACE_EV_IRET_NMI_BARE);
		}
	} else if (armed(vm, vt) && vt->watch >= SVMTRACE_WATCH_ASKING &&
		   vt->iret == SVMTRACE_IRET_NONE && !event_in_flight(vcpu)) {
		/*
		 * The intercept was ours (on a FOREIGN vCPU it is KVM's, for
		 * an NMI window, and the IRET is left to KVM).  With an event
		 * in flight, its handler's IRET comes back here.
		 */
		rflags = static_call(kvm_x86_get_rflags)(vcpu);
		if (svmtrace_tf_live(vt->tf) || (rflags & X86_EFLAGS_TF)) {
			svmtrace_go(vt, SVMTRACE_EV_IRET_BARE);
		} else {
			static_call(kvm_x86_set_rflags)(vcpu, rflags | X86_EFLAGS_TF);
			svmtrace_go(vt, SVMTRACE_EV_IRET_STEP);
		}
	}
	mutex_unlock(&vt->lock);
}

/* Any other VM exit: an IRET that ran bare is done. */
void svmtrace_iret_bare_done(struct svmtrace_vcpu *vt)
{
	if (READ_ONCE(vt->iret) != SVMTRACE_IRET_BARE)
		return;
	mutex_lock(&vt->lock);
	if (vt->iret == SVMTRACE_IRET_BARE)
		svmtrace_go(vt, SVMTRACE_EV_IRET_BARE_DONE);
	mutex_unlock(&vt->lock);
}

/*
 * A single-step #DB exit while an IRET is passed over (DR6 of the exit in
 * @dr6).  *@done is false when the #DB is not about that IRET (BARE: the
 * caller handles it as any step).  Else true when nothing in it is the
 * guest's: its BS is ours, counted as db_foreign for the exit audit (a
 * data breakpoint the IRET hit stays the guest's; an execute breakpoint
 * at the IRET's target is not this #DB's: svmtrace_guest_db_bits()).
 */
bool svmtrace_iret_trap(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			u64 *dr6, bool *done)
{
	bool ours, alone, resume;

	mutex_lock(&vt->lock);
	ours = svmtrace_iret_stepped(vt->iret);
	resume = vt->iret == SVMTRACE_IRET_RESUME;
	if (vt->iret != SVMTRACE_IRET_NONE)
		svmtrace_go(vt, SVMTRACE_EV_IRET_TRAP);
	if (ours)
		vt->stats.db_foreign++;
	if (resume && armed(vm, vt) && vt->ring && vt->tf != SVMTRACE_TF_SILENT) {
		/* Back where the handler came: our stepping goes on from here. */
		if (!svmtrace_tf_live(vt->tf))
			vt->guest_tf = static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF;
		svmtrace_go(vt, SVMTRACE_EV_TF_RESUME);
		svmtrace_set_tf(vcpu, true);
		svmtrace_mem_due(vcpu, vt);
	}
	mutex_unlock(&vt->lock);
	*done = ours;
	if (!ours)
		return false;
	alone = !svmtrace_guest_db_bits(vcpu, *dr6);
	svmtrace_dr6_drop_own(vcpu, dr6);
	if (!resume && static_call(kvm_x86_get_cpl)(vcpu) == 3)
		user_return(vcpu, vm, vt);
	return alone;
}

/*
 * A SYSCALL raised #UD (SCE clear in the VMCB only).  When our TF steps it,
 * TF is cleared before KVM's emulator performs it -- R11 gets the guest's
 * RFLAGS -- and the thread is parked until it returns to user mode.  When
 * the guest's own TF is on the same bit, TF stays for R11 (FMASK clears
 * it on the way in, and no trap follows: em_syscall checks TF after the
 * mask, as the CPU does), and the thread is parked all the same: what TF
 * it has when it comes back is what SYSRET or IRET gives it
 * (svmtrace_take_thread()).
 */
static int syscall_ud(struct kvm_vcpu *vcpu, unsigned int len)
{
	struct svmtrace_target *t;
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;
	u64 cr3 = user_cr3(vcpu), rsp = kvm_rsp_read(vcpu);
	bool parked = false, guest_tf = false, clean_r11 = false, silent = false;
	gpa_t gpa = INVALID_GPA;
	int r;

	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (vt && svmtrace_tf_live(READ_ONCE(vt->tf))) {
		mutex_lock(&vt->lock);
		t = armed(vm, vt);
		if (user_stepped(vcpu, vt, t) && !(t->flags & SVMTRACE_TARGET_F_KERNEL) &&
		    (static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF)) {
			guest_tf = vt->guest_tf;
			if (!guest_tf)
				svmtrace_set_tf(vcpu, false);
			vt->guest_tf = false;
			svmtrace_go(vt, SVMTRACE_EV_TF_PARK_SYSCALL);
			parked = true;
		} else if (tf_left_over(vt, t)) {
			svmtrace_set_tf(vcpu, false);	/* not into R11 */
			svmtrace_go(vt, SVMTRACE_EV_TF_LEFTOVER);
		} else {
			/*
			 * --kernel: stepping goes on, R11 gets no TF of ours.
			 * A silent step off a gate (another process's SYSCALL
			 * on the gated page): R11 gets none either.
			 */
			silent = vt->tf == SVMTRACE_TF_SILENT;
			clean_r11 = user_tf_ours(vcpu, vt, t) || (silent && !vt->guest_tf);
		}
		mutex_unlock(&vt->lock);
	}
	if (parked)	/* the return point's page, as the thread will fetch it */
		gpa = svmtrace_gva_to_gpa(vcpu, kvm_rip_read(vcpu) + len, svmtrace_fetch_access(3));
	r = handle_ud(vcpu);
	if (static_call(kvm_x86_get_cpl)(vcpu) == 0 && !event_in_flight(vcpu)) {
		if (clean_r11)
			kvm_r11_write(vcpu, kvm_r11_read(vcpu) & ~X86_EFLAGS_TF);
		/*
		 * The silent step is this SYSCALL, done: em_syscall() takes
		 * TF from RFLAGS after FMASK, as the CPU does, so KVM takes
		 * no step after it; without this one the gate would stay open
		 * and our TF live (silent_end()).
		 */
		if (silent)
			__svmtrace_emulated_step(vcpu);
	}
	if (!parked)
		return r;
	mutex_lock(&vt->lock);
	if (static_call(kvm_x86_get_cpl)(vcpu) == 0 && !event_in_flight(vcpu)) {
		/* RCX: where it returns; SYSCALL leaves RSP as it was. */
		park_add(vm, SVMTRACE_PARK_SYSCALL, cr3, kvm_rcx_read(vcpu), rsp);
		svmtrace_go(vt, gpa != INVALID_GPA ? SVMTRACE_EV_SYS_PARK : SVMTRACE_EV_SYS_UNMAPPED);
		vt->sys_gfn = gpa_to_gfn(gpa);
		vt->sys_cr3 = cr3;
		vt->sys_rip = kvm_rcx_read(vcpu);
		vt->sys_rsp = rsp;
	} else if (armed(vm, vt) && vt->ring) {
		/* Not performed (its #UD or #PF is queued): stepping goes on. */
		vt->guest_tf = guest_tf;
		svmtrace_go(vt, SVMTRACE_EV_TF_SYSCALL_UNDONE);
		svmtrace_set_tf(vcpu, true);
	}
	mutex_unlock(&vt->lock);
	return r;
}

/*
 * The single-step trap after an emulated instruction that began with TF
 * set, as kvm_vcpu_do_singlestep() delivers it: the tracer's step, the
 * VMM's (KVM_EXIT_DEBUG), else the guest's #DB.
 */
static int singlestep_after(struct kvm_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	if (__svmtrace_emulated_step(vcpu))
		return 1;
	if (vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP) {
		run->debug.arch.dr6 = DR6_BS | DR6_ACTIVE_LOW;
		run->debug.arch.pc = kvm_get_linear_rip(vcpu);
		run->debug.arch.exception = DB_VECTOR;
		run->exit_reason = KVM_EXIT_DEBUG;
		return 0;
	}
	kvm_queue_exception_p(vcpu, DB_VECTOR, DR6_BS);
	return 1;
}

/*
 * A SYSRET stepped with our TF (a --kernel session) loads TF from R11: that
 * TF is the guest's (syscall_ud() keeps ours out of R11), and the one trap
 * right after the SYSRET is its too (the CPU takes one #DB for both).
 */
static void sysret_guest_tf(struct svmtrace_vcpu *vt)
{
	mutex_lock(&vt->lock);
	if (vt->tf == SVMTRACE_TF_LIVE)
		vt->guest_tf = true;
	mutex_unlock(&vt->lock);
}

/*
 * SYSRET (0F 07; @rex_w: 48 0F 07, SYSRETQ) raised #UD because the VMCB has
 * no SCE: do what the CPU would have done (AMD APM vol. 3, SYSRET, long
 * mode).  CS and SS get flat user descriptors (AMD leaves SS's hidden
 * attributes as they were; KVM takes the CPL from SS.DPL, so SS gets DPL 3
 * as on Intel).  A non-canonical RCX raises #GP(0) at CPL 0 as on Intel
 * (AMD would fault on the fetch at CPL 3; a VMRUN with such a RIP is
 * avoided).  Long mode only: SCE is cleared only there.
 *
 * TF from R11 traps right after SYSRET, at the user RIP, before the first
 * user instruction: the CPU checks TF after SYSRET (as after SYSCALL), and
 * so does QEMU's TCG.  That #DB is the guest's; the step of a thread
 * user_return() takes back is recorded there first.
 */
static int sysret(struct kvm_vcpu *vcpu, bool rex_w)
{
	struct kvm_segment cs = {
		.limit = 0xffffffff, .type = 0xb, .s = 1, .dpl = 3, .present = 1, .g = 1,
	};
	struct kvm_segment ss = {
		.limit = 0xffffffff, .type = 0x3, .s = 1, .dpl = 3, .present = 1, .db = 1, .g = 1,
	};
	unsigned long old = static_call(kvm_x86_get_rflags)(vcpu), rflags;
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;
	u64 star, rip;

	if (!is_long_mode(vcpu) || kvm_get_msr(vcpu, MSR_STAR, &star))
		return -1;	/* KVM's #UD */
	if (static_call(kvm_x86_get_cpl)(vcpu) != 0) {
		kvm_inject_gp(vcpu, 0);
		return 1;
	}
	if (rex_w) {
		rip = kvm_rcx_read(vcpu);
		if (svmtrace_noncanonical(vcpu, rip)) {
			kvm_inject_gp(vcpu, 0);
			return 1;
		}
		cs.selector = (u16)((star >> 48) + 16) | 3;
		cs.l = 1;
	} else {
		rip = (u32)kvm_rcx_read(vcpu);
		cs.selector = (u16)(star >> 48) | 3;
		cs.db = 1;
	}
	ss.selector = (u16)((star >> 48) + 8) | 3;
	static_call(kvm_x86_set_segment)(vcpu, &cs, VCPU_SREG_CS);
	static_call(kvm_x86_set_segment)(vcpu, &ss, VCPU_SREG_SS);	/* CPL 3 */
	kvm_rip_write(vcpu, rip);
	rflags = (kvm_r11_read(vcpu) & SYSRET_RFLAGS) | X86_EFLAGS_FIXED;
	kvm_set_rflags(vcpu, rflags);
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (old & X86_EFLAGS_TF) {
		if (vt && (rflags & X86_EFLAGS_TF))
			sysret_guest_tf(vt);
		return singlestep_after(vcpu);
	}
	if (vt)
		user_return(vcpu, vm, vt);
	if (rflags & X86_EFLAGS_TF)
		kvm_queue_exception_p(vcpu, DB_VECTOR, DR6_BS);
	return 1;
}

/*
 * The SYSCALL (0F 05) or SYSRET (0F 07) at RIP, decoded as the CPU does
 * (decode.c): legacy prefixes (ignored by both), then in 64-bit mode a REX
 * whose W makes SYSRET SYSRETQ, then the opcode.  LOCK makes both #UD on
 * the CPU as well.  A prefixed SYSCALL (48 0F 05, say) is a SYSCALL all
 * the same: were it left to KVM's emulator, R11 would get our TF.  Fetched
 * as the CPU fetched it, at the vCPU's CPL: a data read of execute-only
 * code (protection keys) would fail where the fetch did not, and leave the
 * SYSCALL to the emulator.  Returns the opcode's second byte, or 0 for
 * anything else; *@len is the instruction's length.
 */
static u8 sys_opcode(struct kvm_vcpu *vcpu, bool *rex_w, unsigned int *len)
{
	struct svmtrace_insn in;
	u8 op;

	if (svmtrace_insn_fetch(vcpu, static_call(kvm_x86_get_cpl)(vcpu),
				kvm_get_linear_rip(vcpu), &in) ||
	    in.lock || in.bytes[in.op] != 0x0f)
		return 0;
	op = in.bytes[in.op + 1];
	*rex_w = in.rex_w;
	*len = in.op + 2;
	return op == 0x05 || op == 0x07 ? op : 0;
}

/*
 * ud_interception(), while the vCPU ran without EFER.SCE in its VMCB: a
 * SYSCALL or SYSRET that faulted only because of that is ours to complete.
 * Returns the exit handler's result, or -1 for KVM's own #UD handling
 * (handle_ud()).  Runs after a capture stopped too (the VMCB may still
 * have lacked SCE at that entry).
 */
int __svmtrace_ud_exit(struct kvm_vcpu *vcpu)
{
	unsigned int len;
	bool rex_w;

	if (is_guest_mode(vcpu) || !(vcpu->arch.efer & EFER_SCE) || !is_long_mode(vcpu))
		return -1;	/* a #UD the guest gets as well */
	switch (sys_opcode(vcpu, &rex_w, &len)) {
	case 0x05:
		return syscall_ud(vcpu, len);
	case 0x07:
		return sysret(vcpu, rex_w);
	}
	return -1;	/* KVM's #UD handling: the guest's, or its emulator's fault */
}
EXPORT_SYMBOL_GPL(__svmtrace_ud_exit);

/*
 * Stop, or no capture armed any more (vt->lock held): this vCPU's way back
 * to a parked SYSCALL is forgotten.  An IRET being stepped over keeps
 * vt->iret: its trap is still taken back (the VM stays registered).
 */
void svmtrace_park_stop(struct svmtrace_vcpu *vt)
{
	svmtrace_go(vt, SVMTRACE_EV_SYS_STOP);
}
