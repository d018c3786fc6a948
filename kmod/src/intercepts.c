// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: which intercepts each vCPU runs with while a capture is armed,
 * so that arming costs the target and not the rest of the guest.
 *
 * What must be caught: every return to user mode of a thread of the target
 * (frames.c takes a parked thread back there, on whichever vCPU it comes
 * back), and every system call and event of a thread our TF steps.  A
 * return to user mode of the target happens under one of its CR3s.  So a
 * vCPU needs the return intercepts (EFER.SCE off: SYSCALL and SYSRET raise
 * #UD; IRET intercepted) only while its CR3 is the target's, and every
 * other vCPU needs to know when that becomes so: MOV to CR3 is intercepted
 * on every vCPU while a capture is armed.  The processes that are not
 * traced then make no VM exit for their system calls and interrupt
 * returns, and one per CR3 load (a context switch) instead.
 *
 * The state of a vCPU (vt->watch) is decided before each of its entries
 * by svmtrace_entry(), which svm_vcpu_run() asks with interrupts off, from
 * what the vCPU holds at that moment; svm.c then sets and clears the
 * intercepts it says:
 *
 *   OFF       no capture armed, no TF of ours: nothing of the tracer's.
 *   LEFTOVER  stopped while our TF is still set (its trap, which takes it
 *             back, has not come): SCE off, and the exceptions and INT n
 *             while that TF steps user code (their frames get no TF).
 *   FOREIGN   armed, the vCPU runs another address space and owes the
 *             target nothing: CR3 writes intercepted, nothing else.
 *   ASKING    FOREIGN, but the target asks about new address spaces
 *             (SVMTRACE_TARGET_F_ASK until SVMTRACE_END_ASKS): a new
 *             process's first return to user mode comes under a CR3 nobody
 *             names yet (first.c), so CR3 writes and IRET (but over the
 *             IRET passed over, as in TARGET).  Not SCE: a thread's first
 *             return is never a SYSRET, which would leave its first
 *             instruction RCX = RIP where the thread start takes its
 *             argument (Windows x64: LdrInitializeThunk's CONTEXT), so the
 *             other processes' system calls make no VM exit.
 *   TARGET    armed, and the vCPU's CR3 (the VMCB's, which VMRUN loads)
 *             is one of the target's, or a SYSCALL of the target parked
 *             here has not returned yet (vt->sys: its thread may come
 *             back under another CR3, frames.c), or an IRET is being
 *             passed over (vt->iret), or TF of ours is set (a silent
 *             gate step, a --kernel session in the kernel): CR3 writes,
 *             SCE off, IRET (but over the IRET passed over, whose own
 *             faults are intercepted instead).
 *   STEPPING  TARGET, and our TF steps user code (CPL 3, no VMM
 *             single-stepping): + the exceptions and INT n.
 *
 * Virtual time (hidetime.c) adds RDTSC and RDTSCP to TARGET and STEPPING
 * while a session steps a thread of a target armed with HIDE_TIME at CPL 3
 * (also with the guest's own TF set, which is TARGET): its reads of the
 * TSC exit and get the virtual one.  Such a session's TF makes the vCPU
 * TARGET at least, so FOREIGN, LEFTOVER and OFF never carry them: other
 * processes' TSC reads, and the target's own while nobody steps it, make
 * no VM exit.
 *
 * The events that move a vCPU between them, each seen at its next entry:
 *   arm, stop            control.c (controller's thread); arm sends every
 *                        vCPU a request and waits for each that was in
 *                        guest mode to leave it (svmtrace_intercepts_sync())
 *   a CR3 write          MOV CR3 exit, completed by KVM (cr_interception():
 *                        decoded from EXITINFO1 with decode assists, else
 *                        emulated), and every CR3 KVM loads itself (its
 *                        emulator, RSM, a task switch, INIT, KVM_SET_SREGS):
 *                        FOREIGN or ASKING <-> TARGET
 *   end of the asks      SVMTRACE_END_ASKS (first.c, controller's thread):
 *                        ASKING -> FOREIGN, each vCPU at its next entry
 *   an adopted CR3       the gate fault that adopts it (gate.c): the target
 *                        set changes, so every vCPU is asked again, as at
 *                        arm, before the session can park anything
 *   park, take back      #UD (SYSCALL, SYSRET), the IRET exit and its trap,
 *                        event injection (frames.c), the #DB exit (step.c):
 *                        TARGET <-> STEPPING, vt->sys PARKED and NONE;
 *                        with a session's begin and end, a stretch of
 *                        virtual time opened and closed (hidetime.c)
 *   INIT                 svm_vcpu_reset() drops the tracer's intercepts
 *                        before KVM resets the VMCB
 *
 * The invariant: while a capture is armed, every VMRUN outside guest mode
 * intercepts CR3 writes, and one whose CR3 is targeted runs TARGET or
 * STEPPING; while the target asks, every other one intercepts IRET too.
 * The CPU changes CR3 only by MOV CR3 (intercepted), a task
 * switch or RSM (KVM intercepts both) or VMRUN (arm refuses a guest
 * hypervisor); anything else is KVM's, in an exit handler or an ioctl,
 * before an entry that asks.  So no instruction runs under a targeted CR3
 * on a vCPU whose returns to user mode do not exit.  The entries that do
 * not ask (svm->svmtrace_steady, the loop of plain steps) follow a plain
 * step at CPL 3, which cannot write CR3.
 *
 * Context: __svmtrace_entry() runs in the vCPU's thread with interrupts
 * off (an RCU-sched reader) and reads the tracer's state without its
 * locks; a stale answer (a stop racing with it) costs one entry with
 * intercepts the next one drops.  It writes only the vCPU's own: vt->watch,
 * read by the same thread's exit handlers and injection hooks, and
 * vt->vtime with the VM's virtual clock (hidetime.c, under vclock.lock, a
 * raw spinlock).
 */
#include <linux/kvm_host.h>
#include <asm/svm.h>

#include "hooks.h"
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

/* The vCPU runs user code stepped by nobody but us (the VMM's stepping excluded). */
static bool user_steppable(struct kvm_vcpu *vcpu)
{
	return !(vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP) &&
	       static_call(kvm_x86_get_cpl)(vcpu) == 3;
}

/* The state of the vCPU now (@t: the target in force, NULL when not armed). */
static enum svmtrace_watch watch_of(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
				    const struct svmtrace_target *t, unsigned long cr3,
				    bool steppable)
{
	u8 tf = READ_ONCE(vt->tf);
	bool tf_live = svmtrace_tf_live(tf);
	bool tf_ours = tf == SVMTRACE_TF_LIVE && !READ_ONCE(vt->guest_tf);
	u8 pass = READ_ONCE(vt->iret);

	if (!t)
		return tf_ours ? SVMTRACE_WATCH_LEFTOVER : SVMTRACE_WATCH_OFF;
	if (tf_ours && !svmtrace_iret_stepped(pass) && steppable)
		return SVMTRACE_WATCH_STEPPING;
	if (tf_live || pass != SVMTRACE_IRET_NONE || READ_ONCE(vt->sys) != SVMTRACE_SYS_NONE ||
	    svmtrace_cr3_targeted(t, cr3))
		return SVMTRACE_WATCH_TARGET;
	if (svmtrace_asking(vt->vm, t))
		return SVMTRACE_WATCH_ASKING;
	return SVMTRACE_WATCH_FOREIGN;
}

/*
 * What the VMCB holds in state @w.  SCE is cleared only in long mode (the
 * only mode sysret() emulates) and where the guest has it set.
 */
static u64 intercepts_of(struct kvm_vcpu *vcpu, enum svmtrace_watch w, u8 pass, bool steppable,
			 bool tsc_virtual)
{
	u64 sce = is_long_mode(vcpu) && (vcpu->arch.efer & EFER_SCE) ? SVMTRACE_ENTRY_SCE_OFF : 0;
	u64 a = 0;

	switch (w) {
	case SVMTRACE_WATCH_STEPPING:
		a = SVMTRACE_EXCEPTIONS;
		fallthrough;
	case SVMTRACE_WATCH_TARGET:
		a |= SVMTRACE_INTERCEPT_CR3 | sce;
		if (pass == SVMTRACE_IRET_NONE)
			a |= SVMTRACE_ENTRY_IRET;
		if (tsc_virtual)
			a |= SVMTRACE_INTERCEPT_RDTSC | SVMTRACE_INTERCEPT_RDTSCP;
		break;
	case SVMTRACE_WATCH_ASKING:
		a = SVMTRACE_INTERCEPT_CR3;
		if (pass == SVMTRACE_IRET_NONE)
			a |= SVMTRACE_ENTRY_IRET;
		break;
	case SVMTRACE_WATCH_FOREIGN:
		a = SVMTRACE_INTERCEPT_CR3;
		break;
	case SVMTRACE_WATCH_LEFTOVER:
		a = sce | (steppable ? SVMTRACE_EXCEPTIONS : 0);
		break;
	case SVMTRACE_WATCH_OFF:
		break;
	}
	/* A fault of an IRET stepped over must not push that TF (also after a stop). */
	if (svmtrace_iret_stepped(pass))
		a |= SVMTRACE_EXCEPTIONS & ~SVMTRACE_INTERCEPT_INTN;
	/* A plain step from here leaves every input of this answer as it was. */
	if (w == SVMTRACE_WATCH_STEPPING && (a & SVMTRACE_ENTRY_IRET))
		a |= SVMTRACE_ENTRY_STEADY;
	return a;
}

/*
 * Before every entry outside guest mode, interrupts off (svmtrace_entry()):
 * the vCPU's state and what the VMCB holds in it; a stretch of virtual time
 * opens or closes here (hidetime.c).  vm->armed is read once, so the answer
 * is of one moment.  Asked behind svmtrace_live, not svmtrace_exit_watch
 * (hooks.h): a stop turns the latter off before the vCPU's next trap takes
 * our TF back.
 */
u64 __svmtrace_entry(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, unsigned long cr3)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_cached(vcpu, vtp);
	const struct svmtrace_target *t;
	enum svmtrace_watch w;
	bool steppable, tsc_virtual;
	u8 pass;

	if (!vt)
		return 0;
	t = rcu_dereference_sched(vt->vm->armed);
	pass = READ_ONCE(vt->iret);
	steppable = svmtrace_tf_live(READ_ONCE(vt->tf)) && user_steppable(vcpu);
	w = watch_of(vcpu, vt, t, cr3, steppable);
	WRITE_ONCE(vt->watch, w);
	tsc_virtual = svmtrace_time_entry(vcpu, vt, t);
	return intercepts_of(vcpu, w, pass, steppable, tsc_virtual);
}
EXPORT_SYMBOL_GPL(__svmtrace_entry);

/*
 * iret_interception() and event injection (interrupts on, kvm->srcu
 * held): IRET stays intercepted while the vCPU's last entry ran ASKING,
 * TARGET or STEPPING, except over the one IRET that runs without it
 * (vt->iret not NONE).  Asked before the next entry, which decides
 * again: an IRET intercept asked for here that the next state does not
 * want is dropped there.
 */
bool __svmtrace_iret_wanted(struct kvm_vcpu *vcpu)
{
	struct svmtrace_vm *vm;
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, &vm);

	return vt && !is_guest_mode(vcpu) && rcu_access_pointer(vm->armed) &&
	       READ_ONCE(vt->watch) >= SVMTRACE_WATCH_ASKING &&
	       READ_ONCE(vt->iret) == SVMTRACE_IRET_NONE;
}
EXPORT_SYMBOL_GPL(__svmtrace_iret_wanted);

/*
 * Every vCPU of the VM asks svmtrace_entry() again before it runs guest
 * code next: at arm, and when a CR3 joins the target set (adopted), since a
 * vCPU already running that address space loads no CR3 to tell us.  A
 * request (the tracer's own, whose handler has nothing to do then) and,
 * for a vCPU in guest mode, an IPI that makes it leave; KVM_REQUEST_WAIT
 * returns once each of them has left guest mode, so no vCPU runs guest
 * code with the old answer after this returns.  A halted vCPU is not woken
 * (NO_WAKEUP): it asks when it runs again.  Process context (the control
 * ioctl, or a vCPU's NPF exit), no lock of the tracer's held.
 */
void svmtrace_intercepts_sync(struct svmtrace_vm *vm)
{
	kvm_make_all_cpus_request(vm->kvm, KVM_REQ_SVMTRACE | KVM_REQUEST_WAIT |
					   KVM_REQUEST_NO_WAKEUP);
}
