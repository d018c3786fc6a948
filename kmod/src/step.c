// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace stepping: sessions, the #DB single-step exit and the steps KVM
 * completes itself.  A session runs from the gate fault to a CR3 outside
 * the target set or to stop; inside it every instruction boundary of the
 * target is published as a slot (the state after the instruction).
 *
 * Ownership of TF: vt->tf LIVE (or SILENT) says that we left the guest's TF
 * set at the last VM entry of this vCPU; a #DB with DR6.BS is the tracer's only then,
 * or -- while a capture is armed -- when a thread of a targeted address
 * space brings our TF back from a saved frame (an interrupt or SYSCALL
 * frame, possibly on another vCPU).  Everything else -- DR0-3 hits, ICEBP,
 * TF the guest set itself (before the session, or with POPF during it:
 * hide.c), a trap after we cleared TF -- continues to KVM's stock handling,
 * after the step is recorded.
 *
 * Contexts: every entry point here runs in the vCPU thread with interrupts
 * on and kvm->srcu held (exit handlers, the slow path of emulated steps,
 * KVM_REQ_SVMTRACE before guest entry), but one: the plain step of a #DB
 * exit is first offered from the IRQs-off fastpath without SRCU
 * (__svmtrace_db_fastpath(), which neither sleeps nor reads guest memory,
 * and leaves everything else to the full path; KVM's loop of plain steps
 * calls it too, with GIF clear and the guest's XCR0 still loaded:
 * svmtrace_tight_loop() in svm.c).  No other instruction
 * under our TF completes in that fastpath (svmtrace_fastpath_allowed()).
 * Nothing sleeps in an exit handler: a
 * slot the ring has no room for under the block policy is held and waits
 * in the request handler, where leaving KVM_RUN on a signal is allowed.
 *
 * vm->armed is read once per step, under vt->lock, and that pointer is
 * used for the whole step: stop clears vm->armed first and takes every
 * vt->lock afterwards (svmtrace_sessions_stop), so a second read within
 * the same step may already find NULL.
 */
#include <linux/kvm_host.h>
#include <linux/sched/signal.h>
#include <asm/debugreg.h>
#include <asm/svm.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

static bool cr3_in(const u64 *set, u32 n, unsigned long cr3)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (((set[i] ^ cr3) & SVMTRACE_CR3_MASK) == 0)
			return true;
	return false;
}

/* @t is vm->target: the CR3s it was set with, then those decisions added. */
bool svmtrace_cr3_targeted(const struct svmtrace_target *t, unsigned long cr3)
{
	return cr3_in(t->cr3, t->nr_cr3, cr3) ||
	       svmtrace_added_targeted(container_of(t, struct svmtrace_vm, target), cr3);
}

/* The target in force for a step on @vt, or NULL. */
static struct svmtrace_target *armed(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	return rcu_dereference_protected(vm->armed, lockdep_is_held(&vt->lock));
}

static unsigned long rflags_raw(struct kvm_vcpu *vcpu)
{
	return static_call(kvm_x86_get_rflags)(vcpu);
}

/* TF on, given @rflags as this step read them: no second read. */
static void keep_tf(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	if (!(rflags & X86_EFLAGS_TF))
		static_call(kvm_x86_set_rflags)(vcpu, rflags | X86_EFLAGS_TF);
}

/* Take our TF back (@ev: why); the guest's own TF stays. */
static void release_tf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, enum svmtrace_event ev)
{
	if (!vt->guest_tf)
		svmtrace_set_tf(vcpu, false);
	svmtrace_go(vt, ev);
	vt->guest_tf = false;
}

/* Our TF on (@ev: why), the guest's own as it is now. */
static void take_tf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, enum svmtrace_event ev)
{
	vt->guest_tf = rflags_raw(vcpu) & X86_EFLAGS_TF;
	svmtrace_go(vt, ev);
	svmtrace_set_tf(vcpu, true);
}

/* Called with vt->lock held, from the gate fault or an adopted step. */
void svmtrace_session_begin(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			    struct kvm_vcpu *vcpu, u32 gate_id)
{
	take_tf(vcpu, vt, SVMTRACE_EV_TF_BEGIN);
	svmtrace_go(vt, SVMTRACE_EV_HANDLER_FORGET);
	svmtrace_hide_restart(vcpu, vt);	/* where the first step starts */
	svmtrace_go(vt, SVMTRACE_EV_SESSION_BEGIN);
	vt->last_state = &vt->last;
	vt->start_gate = gate_id;
	WRITE_ONCE(vm->last_gate, gate_id);
	vt->stats.sessions++;
	svmtrace_mem_due(vcpu, vt);	/* the instruction at RIP is the first step */
}

void svmtrace_silent_begin(struct svmtrace_vcpu *vt, struct kvm_vcpu *vcpu, int gate)
{
	take_tf(vcpu, vt, SVMTRACE_EV_TF_SILENT);
	vt->silent_gate = gate;
}

/*
 * The GPRs in the slot's order.  SVM stores all sixteen in vcpu->arch.regs
 * at every exit (RSP and RIP from the VMCB, svm_vcpu_run()) and caches none
 * of them lazily: plain loads, without kvm_register_read_raw()'s bounds
 * and availability checks on each.
 */
static void copy_gprs(u64 *gpr, const unsigned long *regs)
{
	gpr[SVMTRACE_RAX] = regs[VCPU_REGS_RAX];
	gpr[SVMTRACE_RBX] = regs[VCPU_REGS_RBX];
	gpr[SVMTRACE_RCX] = regs[VCPU_REGS_RCX];
	gpr[SVMTRACE_RDX] = regs[VCPU_REGS_RDX];
	gpr[SVMTRACE_RSI] = regs[VCPU_REGS_RSI];
	gpr[SVMTRACE_RDI] = regs[VCPU_REGS_RDI];
	gpr[SVMTRACE_RBP] = regs[VCPU_REGS_RBP];
	gpr[SVMTRACE_RSP] = regs[VCPU_REGS_RSP];
	gpr[SVMTRACE_R8] = regs[VCPU_REGS_R8];
	gpr[SVMTRACE_R9] = regs[VCPU_REGS_R9];
	gpr[SVMTRACE_R10] = regs[VCPU_REGS_R10];
	gpr[SVMTRACE_R11] = regs[VCPU_REGS_R11];
	gpr[SVMTRACE_R12] = regs[VCPU_REGS_R12];
	gpr[SVMTRACE_R13] = regs[VCPU_REGS_R13];
	gpr[SVMTRACE_R14] = regs[VCPU_REGS_R14];
	gpr[SVMTRACE_R15] = regs[VCPU_REGS_R15];
}

/* The architectural state after the step, as the guest sees it. */
static void fill_state(struct svmtrace_slot *s, struct kvm_vcpu *vcpu,
		       struct svmtrace_vcpu *vt, bool kernel, unsigned long rflags)
{
	s->seq = 0;
	s->tsc = rdtsc();
	s->rip = kvm_rip_read(vcpu);
	s->rflags = vt->guest_tf ? rflags : rflags & ~X86_EFLAGS_TF;
	s->cr3 = kvm_read_cr3(vcpu);
	copy_gprs(s->gpr, vcpu->arch.regs);
	s->kind = SVMTRACE_SLOT_INSTRUCTION;
	s->flags = kernel ? SVMTRACE_SLOT_F_KERNEL : 0;
	s->reason = 0;
	s->dropped = 0;
	s->gs_base = static_call(kvm_x86_get_segment_base)(vcpu, VCPU_SREG_GS);
	if (vt->ring->flags & SVMTRACE_RING_F_XSTATE)
		svmtrace_xstate_fill(vcpu, s);
}

/*
 * Block policy: wait, without vt->lock and kvm->srcu, until the consumer
 * makes room, goes away or the capture stops.  Interruptible, like a halted
 * vCPU: a signal (QEMU's kick for pause, stop or migration) returns
 * -ERESTARTSYS and the vCPU leaves KVM_RUN with the slot still held.
 */
static int ring_wait(struct svmtrace_vcpu *vt, struct svmtrace_ring *ring,
		     struct kvm_vcpu *vcpu)
{
	int r;

	kref_get(&ring->ref);
	svmtrace_go(vt, SVMTRACE_EV_SLOT_WAIT);
	WRITE_ONCE(ring->producer_waiting, true);
	WRITE_ONCE(ring->hdr->producer_waiting, 1);
	/* Before re-checking tail in wait_event: pairs with ring_poll(). */
	smp_mb();
	mutex_unlock(&vt->lock);
	kvm_vcpu_srcu_read_unlock(vcpu);
	r = wait_event_interruptible(ring->producer_wq,
				     svmtrace_ring_has_room(ring) || READ_ONCE(ring->consumer_gone) ||
				     READ_ONCE(ring->closed));
	kvm_vcpu_srcu_read_lock(vcpu);
	mutex_lock(&vt->lock);
	WRITE_ONCE(ring->producer_waiting, false);
	WRITE_ONCE(ring->hdr->producer_waiting, 0);
	if (vt->slot == SVMTRACE_SLOT_WAITING)	/* else stop dropped it */
		svmtrace_go(vt, SVMTRACE_EV_SLOT_WOKEN);
	svmtrace_ring_put(ring);
	return r;
}

/* Copy vt->last into the ring's next slot; false when it has no room. */
static bool ring_put(struct svmtrace_vcpu *vt, struct svmtrace_ring *ring)
{
	bool end = vt->last.kind == SVMTRACE_SLOT_SESSION_END;
	struct svmtrace_slot *slot = svmtrace_ring_reserve(ring, end);

	if (!slot)
		return false;
	svmtrace_ring_copy(ring, slot, &vt->last);
	svmtrace_ring_publish(ring, vt->last.kind);
	vt->stats.records++;
	vt->stats.bytes += ring->slot_size;
	return true;
}

/* A step that will never reach the ring: counted, and the next slot says so. */
static void drop_step(struct svmtrace_vcpu *vt, struct svmtrace_ring *ring)
{
	svmtrace_ring_drop(ring);
	vt->stats.drops++;
	if (vt->last.kind == SVMTRACE_SLOT_SESSION_START)	/* the next step that gets through */
		svmtrace_go(vt, SVMTRACE_EV_SESSION_START_DROPPED);
}

/*
 * Where a step's state goes: filled in place into the ring's next free
 * slot, or into vt->last when the ring has none.
 */
static struct svmtrace_slot *step_slot(struct svmtrace_vcpu *vt)
{
	struct svmtrace_slot *slot = vt->ring ? svmtrace_ring_reserve(vt->ring, false) : NULL;

	return slot ?: &vt->last;
}

/*
 * vt->last (filled, with its sequence number) to the ring, which had no
 * room when the step began: if it still has none, the drop policy counts
 * the step as dropped; the block policy holds it (vt->slot) and the vCPU
 * publishes it in KVM_REQ_SVMTRACE before it enters the guest again.
 * Out of line: a full ring is the exception.
 */
static noinline bool publish_last(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
				  struct kvm_vcpu *vcpu, struct svmtrace_ring *ring)
{
	if (ring_put(vt, ring))
		return true;
	if (vm->target.policy == SVMTRACE_POLICY_BLOCK && vcpu &&
	    !READ_ONCE(ring->consumer_gone)) {
		svmtrace_go(vt, SVMTRACE_EV_SLOT_HELD);
		kvm_make_request(KVM_REQ_SVMTRACE, vcpu);
		return true;
	}
	drop_step(vt, ring);
	return false;
}

/*
 * Publish @s (a slot from step_slot(), or vt->last) as a @kind slot; every
 * step takes the next global sequence number here.  False when the step
 * was dropped (publish_last()).  Inline: a slot in the ring, the common
 * case, costs no more than the ring's own publish.
 */
static __always_inline bool publish(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
				    struct kvm_vcpu *vcpu, struct svmtrace_slot *s, u16 kind,
				    u32 reason, u16 flags)
{
	struct svmtrace_ring *ring = vt->ring;

	lockdep_assert_held(&vt->lock);
	if (!ring || ring->closed)
		return false;
	s->seq = atomic64_inc_return(&vm->seq) - 1;
	s->kind = kind;
	s->reason = reason;
	s->flags |= flags;
	if (s == &vt->last)
		return publish_last(vm, vt, vcpu, ring);
	svmtrace_ring_publish(ring, kind);
	vt->stats.records++;
	vt->stats.bytes += ring->slot_size;
	return true;
}

/* Stop: a held slot can no longer be published before the session end. */
static void drop_held(struct svmtrace_vcpu *vt)
{
	if (vt->slot == SVMTRACE_SLOT_NONE)
		return;
	svmtrace_go(vt, SVMTRACE_EV_SLOT_DROPPED);
	drop_step(vt, vt->ring);
}

/*
 * KVM_REQ_SVMTRACE, before the next guest entry: publish the held slot,
 * waiting for room; then, held at a thread's first instruction, wait for
 * the controller's verdict (first.c).  1 to enter the guest, -EINTR to
 * leave KVM_RUN on a signal (the request stays pending, so the next KVM_RUN
 * comes back here).  Also made by ARM, to have every vCPU leave guest mode
 * once: then there is nothing to do.
 */
int __svmtrace_vcpu_request(struct kvm_vcpu *vcpu)
{
	struct svmtrace_vm *vm;
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, &vm);
	struct svmtrace_ring *ring;
	bool asked;
	int r = 1;

	if (!vt)
		return 1;
	mutex_lock(&vt->lock);
	while (vt->slot != SVMTRACE_SLOT_NONE) {
		ring = vt->ring;
		if (WARN_ON_ONCE(!ring)) {	/* stop drops a held slot before detach */
			svmtrace_go(vt, SVMTRACE_EV_SLOT_DROPPED);
		} else if (ring_put(vt, ring)) {
			svmtrace_go(vt, SVMTRACE_EV_SLOT_PUBLISHED);
		} else if (ring->closed || READ_ONCE(ring->consumer_gone)) {
			drop_held(vt);
		} else if (ring_wait(vt, ring, vcpu)) {
			kvm_make_request(KVM_REQ_SVMTRACE, vcpu);
			vcpu->run->exit_reason = KVM_EXIT_INTR;
			++vcpu->stat.signal_exits;
			r = -EINTR;
			break;
		}
	}
	/* Held at a thread's first instruction, or decided already (the
	 * controller may answer before this vCPU gets here). */
	asked = r > 0 && vt->ask_state != SVMTRACE_ASK_NONE;
	if (asked)
		r = svmtrace_ask_wait(vcpu, vm, vt);
	if (r > 0)
		svmtrace_mem_request(vcpu, vt);
	mutex_unlock(&vt->lock);
	/* A process that joined there may have a watched gate mapped already. */
	if (asked && r > 0 && unlikely(READ_ONCE(vm->watch.pending)))
		svmtrace_watches_exit(vcpu, vm);
	return r;
}
EXPORT_SYMBOL_GPL(__svmtrace_vcpu_request);

/* Whether a slot published now reaches the ring or counts as dropped. */
static bool ring_takes(const struct svmtrace_vcpu *vt)
{
	return vt->ring && !vt->ring->closed;
}

/* True when the end was produced (published, held or counted as dropped). */
static bool session_end(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			struct kvm_vcpu *vcpu, u32 reason)
{
	bool produced = false;

	if (vt->session == SVMTRACE_SESSION_OPEN) {
		produced = ring_takes(vt);
		/* The end repeats the last step's state. */
		if (vt->last_state != &vt->last)
			svmtrace_ring_copy(vt->ring, &vt->last, vt->last_state);
		vt->last.tsc = rdtsc();
		vt->last.flags &= ~(SVMTRACE_SLOT_F_GAP | SVMTRACE_SLOT_F_MEM);
		vt->last.dropped = 0;
		publish(vm, vt, vcpu, &vt->last, SVMTRACE_SLOT_SESSION_END, reason, 0);
		vt->stats.session_ends++;
	}
	svmtrace_go(vt, SVMTRACE_EV_SESSION_END);
	return produced;
}

/*
 * A session end that no step of its own produced (stop, a TF lost at a VM
 * exit, a #DB handed to the guest's handler after its step was recorded):
 * counted, so that the exit audit can match #DB exits with records.
 */
static void stepless_end(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			 struct kvm_vcpu *vcpu, u32 reason)
{
	if (session_end(vm, vt, vcpu, reason))
		vt->stats.stepless_ends++;
}

/*
 * A session ended because our TF went without a trap (lost_tf(), or a #DB
 * delivered to the guest's handler under --kernel) while the vCPU still
 * runs the target: the next step starts a new session, named after the
 * newest gate.
 */
static void session_restart(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			    struct kvm_vcpu *vcpu)
{
	svmtrace_go(vt, SVMTRACE_EV_SESSION_RESTART);
	vt->last_state = &vt->last;
	vt->start_gate = READ_ONCE(vm->last_gate);
	vt->stats.sessions++;
	svmtrace_mem_due(vcpu, vt);
}

static bool rip_wanted(const struct svmtrace_target *t, u64 rip)
{
	u32 i;

	if (!t->nr_ranges)
		return true;
	for (i = 0; i < t->nr_ranges; i++)
		if (rip >= t->ranges[i].start && rip < t->ranges[i].end)
			return true;
	return false;
}

/*
 * True when the step produced a slot (published, held or counted as
 * dropped).  @t is the target the caller read under vt->lock: stop clears
 * vm->armed without that lock (it takes it afterwards), so a second read
 * here could find NULL -- seen as an oops when a consumer was killed
 * mid-step -- while @t stays valid until we release the lock.
 */
static bool record_step(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			struct kvm_vcpu *vcpu, const struct svmtrace_target *t, bool kernel,
			unsigned long rflags)
{
	struct svmtrace_slot *s;
	u16 flags = 0;

	if (!ring_takes(vt) || !rip_wanted(t, kvm_rip_read(vcpu)))
		return false;
	if (svmtrace_test_lose_step())
		return true;	/* test only: the bug the exit audit must catch */
	s = step_slot(vt);
	fill_state(s, vcpu, vt, kernel, rflags);
	if (svmtrace_mem_on(vt))
		svmtrace_mem_fill(vcpu, vt, s);
	vt->last_state = s;
	if (vt->gap == SVMTRACE_GAP_OWED) {
		flags = SVMTRACE_SLOT_F_GAP;
		svmtrace_go(vt, SVMTRACE_EV_GAP_MARKED);
	}
	if (vt->session == SVMTRACE_SESSION_PENDING) {
		/* A dropped start moves to the next step that gets through. */
		if (publish(vm, vt, vcpu, s, SVMTRACE_SLOT_SESSION_START, vt->start_gate, flags))
			svmtrace_go(vt, SVMTRACE_EV_SESSION_STARTED);
	} else {
		publish(vm, vt, vcpu, s, SVMTRACE_SLOT_INSTRUCTION, 0, flags);
	}
	return true;
}

/* The silent step off a foreign gate fetch is done: close the gate again. */
static void silent_end(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt, struct kvm_vcpu *vcpu)
{
	struct svmtrace_target *t = armed(vm, vt);

	release_tf(vcpu, vt, SVMTRACE_EV_TF_SILENT_DONE);
	if (t)
		svmtrace_gate_close(vm, t, vt->silent_gate);
}

/*
 * A single-step trap although we did not leave TF set.  While a capture is
 * armed, a thread of a targeted address space can bring our TF back from a
 * frame saved while we stepped it (an interrupt frame, the R11 of a
 * SYSCALL), here or on another vCPU, on its way back to user mode: take it
 * over instead of letting the guest see a #DB it did not ask for.
 * Anything else is the guest's own -- a trap in kernel mode above all: the
 * guest kernel stepping itself (TF by POPF or IRET, over instructions KVM
 * completes, after MOV SS), which a user-only capture must not swallow.
 */
static bool adopt_step(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt, struct kvm_vcpu *vcpu)
{
	struct svmtrace_target *t = armed(vm, vt);

	if (!t || !vt->ring || static_call(kvm_x86_get_cpl)(vcpu) != 3 ||
	    !svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		return false;
	/* Where this vCPU stepped last was maybe another thread: no repairs. */
	vt->prev_valid = false;
	if (vt->session != SVMTRACE_SESSION_NONE) {
		svmtrace_go(vt, SVMTRACE_EV_TF_ADOPT);	/* back from the kernel, same session */
	} else {
		svmtrace_session_begin(vm, vt, vcpu, READ_ONCE(vm->last_gate));
		vt->guest_tf = false;
	}
	/* The instruction that trapped ran after a frame: not decoded before it. */
	svmtrace_mem_forget(vt);
	return true;
}

/*
 * Move the session on after a step.  @ran_ours is false when the step was
 * only KVM's NMI-window single-step over guest kernel code (nothing of the
 * target ran).  Returns whether the vCPU keeps our TF; *@produced says
 * whether the step produced a slot (the exit audit counts those that did
 * not: silent, paused, kernel-mode and filtered steps, steps after stop).
 */
static bool session_step(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
			 struct svmtrace_vcpu *vt, bool ran_ours, bool *produced)
{
	struct svmtrace_target *t = armed(vm, vt);
	unsigned long rflags;
	bool kernel;

	*produced = false;
	if (vt->tf == SVMTRACE_TF_SILENT) {
		silent_end(vm, vt, vcpu);
		return false;
	}
	if (!t) {
		/* Stopped: the last step of ours may have stored our TF (PUSHF). */
		if (ran_ours)
			svmtrace_hide_tf(vcpu, vt);
		*produced = session_end(vm, vt, vcpu, SVMTRACE_END_STOP);
		release_tf(vcpu, vt, SVMTRACE_EV_TF_RELEASE);
		return false;
	}
	if (!svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu))) {
		*produced = session_end(vm, vt, vcpu, SVMTRACE_END_CR3);
		release_tf(vcpu, vt, SVMTRACE_EV_TF_RELEASE);
		svmtrace_gates_close_all(vm, t);
		return false;
	}
	if (vt->session == SVMTRACE_SESSION_NONE) {
		/* Back from a handler we did not follow (its IRETQ unstepped). */
		svmtrace_go(vt, SVMTRACE_EV_HANDLER_FORGET);
		session_restart(vm, vt, vcpu);
	}
	if (READ_ONCE(vm->paused)) {
		if (ran_ours && rip_wanted(t, kvm_rip_read(vcpu))) {
			/* Not recorded, but it happened: the sequence shows the hole. */
			atomic64_inc(&vm->seq);
			/* Once per pause, not a transition on every paused step. */
			if (vt->gap == SVMTRACE_GAP_NONE)
				svmtrace_go(vt, SVMTRACE_EV_GAP_SKIPPED);
		}
		return true;
	}
	kernel = static_call(kvm_x86_get_cpl)(vcpu) == 0;
	if (kernel && !(t->flags & SVMTRACE_TARGET_F_KERNEL)) {
		/*
		 * Keep the session: our TF comes back with the user frame
		 * (adopt_step).  Until then a trap is not ours.
		 */
		if (!vt->guest_tf)
			svmtrace_set_tf(vcpu, false);
		svmtrace_go(vt, SVMTRACE_EV_TF_KERNEL);
		return false;
	}
	if (ran_ours) {
		svmtrace_hide_tf(vcpu, vt);
		rflags = rflags_raw(vcpu);
		*produced = record_step(vm, vt, vcpu, t, kernel, rflags);
	} else {
		svmtrace_hide_restart(vcpu, vt);
		rflags = rflags_raw(vcpu);
	}
	keep_tf(vcpu, rflags);
	return true;
}

/*
 * The vCPU enters a handler without a trap, by an event delivery that
 * clears TF and pushes RFLAGS with our TF and the guest's: the handler is
 * not traced (the session ends with reason event, when one is open), and
 * when a followed IRETQ returns through that frame its TF is taken to be
 * the guest's only as far as the guest's TF was set now (follow_iret()).
 */
static void handler_entered(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			    struct kvm_vcpu *vcpu)
{
	stepless_end(vm, vt, vcpu, SVMTRACE_END_EVENT);
	svmtrace_go(vt, SVMTRACE_EV_HANDLER_GUEST_DB);
	vt->iret_guest_tf = vt->guest_tf;
	svmtrace_mem_forget(vt);	/* the handler runs next */
}

/*
 * After a step of a --kernel session whose trap was also the guest's
 * (@guests: its TF, DR0-3, ICEBP, decided before the step): KVM delivers
 * it to the guest's #DB handler, unless the VMM single-steps (the #DB goes
 * to the VMM).  User-only sessions do not trace handlers anyway: the frame
 * brings TF back to user mode.
 */
static bool guest_db_delivered(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
			       struct svmtrace_vcpu *vt, bool guests)
{
	struct svmtrace_target *t = armed(vm, vt);

	return guests && t && (t->flags & SVMTRACE_TARGET_F_KERNEL) &&
	       vt->session != SVMTRACE_SESSION_NONE &&
	       !(vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP);
}

/* Where a step handle_step() is given comes from. */
enum step_source {
	STEP_DB_EXIT,		/* a #DB exit: the CPU's trap */
	STEP_EMULATED,		/* KVM completed the instruction (kvm_vcpu_do_singlestep()) */
	STEP_MMIO_WRITTEN,	/* ... with an MMIO write userspace completed: */
				/* KVM takes no trap for it (complete_emulated_mmio()) */
};

/*
 * One single-step trap (or KVM-completed step) with TF set.  Returns true
 * when it was ours alone; false when KVM must go on with its stock handling
 * (the guest's own TF or breakpoints, KVM_SET_GUEST_DEBUG single-stepping,
 * KVM's NMI-window single-step).  After an MMIO write (@src) KVM delivers
 * no #DB to anyone: the step is only recorded, and a trap of the guest's
 * own TF stays lost as on stock KVM.
 *
 * @nmi_rflags: KVM's saved RFLAGS while it single-steps to an NMI window
 * (svm->nmi_singlestep_guest_rflags), else NULL.  TF there means our TF was
 * on when KVM began, so the instruction was also our step; setting TF there
 * makes disable_nmi_singlestep() leave our TF in place.
 */
static bool handle_step(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			enum step_source src, bool guest_bits, u64 *nmi_rflags, bool *bs_ours)
{
	bool ran_ours = !nmi_rflags || (*nmi_rflags & X86_EFLAGS_TF);
	bool db_exit = src == STEP_DB_EXIT;
	bool others_step, guests, produced;

	*bs_ours = false;
	mutex_lock(&vt->lock);
	if (!svmtrace_tf_live(vt->tf) && (guest_bits || !ran_ours || src == STEP_MMIO_WRITTEN ||
			     !adopt_step(vm, vt, vcpu))) {
		if (db_exit)
			vt->stats.db_foreign++;
		mutex_unlock(&vt->lock);
		return false;
	}
	others_step = vt->guest_tf || (vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP);
	guests = guest_bits || vt->guest_tf;
	*bs_ours = ran_ours && !others_step;
	if (ran_ours && db_exit)
		vt->stats.db_exits++;
	else if (ran_ours && !db_exit)
		vt->stats.emulated_steps++;
	else if (db_exit && !ran_ours)
		vt->stats.db_foreign++;	/* KVM's NMI-window step alone */
	if (session_step(vcpu, vm, vt, ran_ours, &produced)) {
		svmtrace_mem_due(vcpu, vt);
		if (nmi_rflags)
			*nmi_rflags |= X86_EFLAGS_TF;
		else if (src != STEP_MMIO_WRITTEN && guest_db_delivered(vcpu, vm, vt, guests))
			handler_entered(vm, vt, vcpu);
	} else if (nmi_rflags && !vt->guest_tf) {
		/* We let go of TF: disable_nmi_singlestep() must not restore it. */
		*nmi_rflags &= ~X86_EFLAGS_TF;
	}
	if (ran_ours && !produced)
		vt->stats.steps_unrecorded++;
	mutex_unlock(&vt->lock);
	return !guest_bits && !others_step;
}

/*
 * Armed with SVMTRACE_TARGET_F_FROM_NEXT, a VM exit of a vCPU that is not
 * stepping may start a session (the unlocked tests; from_next_begin()
 * repeats them under vt->lock).
 */
static bool from_next_due(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	return rcu_access_pointer(vm->armed) && !svmtrace_tf_live(READ_ONCE(vt->tf)) &&
	       (READ_ONCE(vm->target.flags) & SVMTRACE_TARGET_F_FROM_NEXT) &&
	       READ_ONCE(vt->session) == SVMTRACE_SESSION_NONE;
}

/* Armed with SVMTRACE_TARGET_F_FROM_NEXT: a session starts at this exit. */
static noinline void from_next_begin(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
				     struct svmtrace_vcpu *vt)
{
	struct svmtrace_target *t;

	mutex_lock(&vt->lock);
	t = armed(vm, vt);
	if (t && (t->flags & SVMTRACE_TARGET_F_FROM_NEXT) &&
	    vt->session == SVMTRACE_SESSION_NONE && !svmtrace_tf_live(vt->tf) &&
	    vt->ring && static_call(kvm_x86_get_cpl)(vcpu) == 3 &&
	    svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		svmtrace_session_begin(vm, vt, vcpu, SVMTRACE_SESSION_FROM_NEXT);
	mutex_unlock(&vt->lock);
}

/*
 * The common #DB exit of a capture, handled in the fewest instructions: a
 * plain step of a recording session, the state after it going into the
 * ring's next free slot.  The caller checked that the trap was a single
 * step alone (no DR0-3, BD or BT bit of the guest's), not KVM's NMI-window
 * step, not the VMM's single-stepping, outside guest mode.  Everything else
 * -- one test of vt->mode for the vCPU's own rare states (session start,
 * the guest's own TF, a silent gate step, a gap after pause, a held slot,
 * a parked NMI TF), and the capture's (stopped, paused, RIP ranges, a
 * foreign CR3, kernel mode outside --kernel, a full ring) -- returns 0
 * having changed nothing, and handle_step() does the same work in general.
 * What this does is what handle_step() does for that step, in its order.
 * Returns SVMTRACE_DB_DONE, or SVMTRACE_DB_STEADY for a step of user code
 * after which the vCPU still steps user code of this capture as before
 * (vt->mode STEPPING again: hide.c's repair may have found the guest's own
 * TF set): svm_vcpu_run() need not ask svmtrace_entry() again (frames.c).
 *
 * @irqs_off: called from the IRQs-off fastpath (__svmtrace_db_fastpath()),
 * where nothing may sleep or read guest memory: a step that
 * svmtrace_hide_step() would repair (the repairs read guest memory) is left
 * to the full exit path as well (an xstate slot is filled there without
 * fpregs_lock(), xstate.c).  Inline, so that each caller has only its own
 * tests.
 */
static __always_inline int plain_step(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
				      struct svmtrace_vcpu *vt, bool irqs_off)
{
	const struct svmtrace_target *t;
	struct svmtrace_ring *ring;
	struct svmtrace_slot *s;
	unsigned long rflags;
	bool kernel;
	int cpl;

	BUILD_BUG_ON(offsetof(struct svmtrace_vcpu, tf) != offsetof(struct svmtrace_vcpu, mode));
	BUILD_BUG_ON(offsetof(struct svmtrace_vcpu, session) !=
		     offsetof(struct svmtrace_vcpu, mode) + 1);
	lockdep_assert_held(&vt->lock);
	t = armed(vm, vt);
	ring = vt->ring;
	if (vt->mode != SVMTRACE_MODE_STEPPING || !t || t->nr_ranges || READ_ONCE(vm->paused) ||
	    !ring || (irqs_off && ring->mem_offset) || !svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		return 0;
	cpl = static_call(kvm_x86_get_cpl)(vcpu);
	kernel = cpl == 0;
	if (kernel && !(t->flags & SVMTRACE_TARGET_F_KERNEL))
		return 0;
	if (irqs_off && svmtrace_hide_due(vt, kvm_rip_read(vcpu), kvm_rsp_read(vcpu)))
		return 0;
	s = svmtrace_ring_reserve(ring, false);	/* NULL when closed or full */
	if (!s)
		return 0;
	vt->stats.db_exits++;
	svmtrace_hide_step(vcpu, vt, kvm_rip_read(vcpu), kvm_rsp_read(vcpu), cpl);
	rflags = rflags_raw(vcpu);
	if (!svmtrace_test_lose_step()) {
		fill_state(s, vcpu, vt, kernel, rflags);
		if (ring->mem_offset)
			svmtrace_mem_fill(vcpu, vt, s);
		vt->last_state = s;
		s->seq = atomic64_inc_return(&vm->seq) - 1;
		svmtrace_ring_publish(ring, SVMTRACE_SLOT_INSTRUCTION);
		vt->stats.records++;
		vt->stats.bytes += ring->slot_size;
	}
	keep_tf(vcpu, rflags);
	svmtrace_mem_due(vcpu, vt);
	return cpl == 3 && vt->mode == SVMTRACE_MODE_STEPPING ? SVMTRACE_DB_STEADY :
								SVMTRACE_DB_DONE;
}

/*
 * The unlocked tests that choose plain_step(): vt->mode and vm->paused,
 * read without vt->lock, only choose the path (plain_step() tests them
 * again under it).  vt->iret changes only in this vCPU's thread: an IRET
 * being passed over (frames.c) takes the general path.  The trap must be a
 * single step alone (no DR0-3, BD or BT bit of the guest's), not KVM's
 * NMI-window step (@nmi_rflags), not the VMM's single-stepping, outside
 * guest mode.
 */
static __always_inline bool plain_due(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
				      struct svmtrace_vcpu *vt, u64 dr6, u64 *nmi_rflags)
{
	return READ_ONCE(vt->mode) == SVMTRACE_MODE_STEPPING && !READ_ONCE(vm->paused) &&
	       READ_ONCE(vt->iret) == SVMTRACE_IRET_NONE && !nmi_rflags && (dr6 & DR6_BS) &&
	       !svmtrace_guest_db_bits(vcpu, dr6) && !(vcpu->guest_debug & KVM_GUESTDBG_SINGLESTEP) &&
	       !is_guest_mode(vcpu);
}

/*
 * Of the plain steps offered to the IRQs-off fastpath (from
 * svm_exit_handlers_fastpath() and svm_vcpu_run()'s loop of plain steps,
 * which enter the guest again at once), every SVMTRACE_IRQOFF_STEPS-th
 * goes the full way, where KVM takes the host's interrupts and looks for a
 * reschedule, a signal or a request: at most that many steps run in a row
 * with interrupts off.  Any host interrupt ends such a run of entries
 * anyway (the next VMRUN exits with SVM_EXIT_INTR); this bound does not
 * depend on it.
 */
#define SVMTRACE_IRQOFF_STEPS 256

/*
 * The plain step from svm_exit_handlers_fastpath(), interrupts off, no SRCU
 * (hooks.h): the tests and the work of __svmtrace_db_exit()'s plain step,
 * nothing else.  vt->lock is a mutex: only tried.  mutex_trylock() and
 * mutex_unlock() never sleep and are allowed in task context with
 * interrupts off (an unlock that finds a waiter wakes it, as an interrupt
 * handler may); when stop or a control operation holds the lock, the exit
 * takes the full path, which waits for it there.  The ring's wakeup of its
 * consumer is wake_up_interruptible(), an irqsave spinlock.  vm->armed is
 * read under vt->lock as on the full path.  In svm_vcpu_run()'s loop of
 * plain steps (svmtrace_tight_loop()) the same, with GIF clear as well (an
 * NMI waits for the next VMRUN, which it ends) and the guest's XCR0, XSS
 * and PKRU loaded (an xstate slot: xstate.c).
 */
int __svmtrace_db_fastpath(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, u64 *dr6)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_cached(vcpu, vtp);
	int r;

	lockdep_assert_irqs_disabled();
	if (!vt || !plain_due(vcpu, vt->vm, vt, *dr6, NULL))
		return 0;
	if (++vt->irqoff_steps >= SVMTRACE_IRQOFF_STEPS) {
		vt->irqoff_steps = 0;
		return 0;
	}
	if (!mutex_trylock(&vt->lock))
		return 0;
	r = plain_step(vcpu, vt->vm, vt, true);
	mutex_unlock(&vt->lock);
	if (r)
		svmtrace_dr6_drop_own(vcpu, dr6);
	return r;
}
EXPORT_SYMBOL_GPL(__svmtrace_db_fastpath);

/*
 * @vtp: where the vCPU keeps its tracer state once found (hooks.h).  The
 * state of a VM whose controller left without arming stays too: it has no
 * TF of ours and no target, so its #DBs all go on to KVM (and count as
 * db_foreign), as when the lookup found nothing.
 */
int __svmtrace_db_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp, u64 *dr6,
		       u64 *nmi_rflags)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_cached(vcpu, vtp);
	struct svmtrace_vm *vm;
	bool done, bs_ours;
	int r;

	if (!vt)
		return 0;
	vm = vt->vm;
	svmtrace_dr6_native(vcpu, vt, dr6);
	if (plain_due(vcpu, vm, vt, *dr6, nmi_rflags)) {
		mutex_lock(&vt->lock);
		r = plain_step(vcpu, vm, vt, false);
		mutex_unlock(&vt->lock);
		if (r) {
			svmtrace_dr6_drop_own(vcpu, dr6);
			return r;
		}
	}
	/* What the VM exit hook, which leaves #DB exits to us, would do first. */
	if (!is_guest_mode(vcpu) && from_next_due(vm, vt))
		from_next_begin(vcpu, vm, vt);
	/*
	 * A nested guest's steps are not the target's (control.c refuses it
	 * at arm); without BS the #DB is a breakpoint or ICEBP.  Both are the
	 * guest's, counted so that the exit audit can account for every #DB.
	 */
	if (!(*dr6 & DR6_BS) || is_guest_mode(vcpu)) {
		mutex_lock(&vt->lock);
		vt->stats.db_foreign++;
		mutex_unlock(&vt->lock);
		return 0;
	}
	if (READ_ONCE(vt->iret) != SVMTRACE_IRET_NONE) {
		/* The trap after an IRET passed over (frames.c)? */
		done = svmtrace_iret_trap(vcpu, vm, vt, dr6, &bs_ours);
		if (bs_ours) {
			/*
			 * KVM's NMI-window step ends here too: the TF to keep
			 * is the popped image's and ours if taken, not the
			 * one we stepped the IRET with.
			 */
			if (nmi_rflags && (rflags_raw(vcpu) & X86_EFLAGS_TF))
				*nmi_rflags |= X86_EFLAGS_TF;
			else if (nmi_rflags)
				*nmi_rflags &= ~X86_EFLAGS_TF;
			return done ? SVMTRACE_DB_DONE : 0;
		}
	}
	done = handle_step(vcpu, vm, vt, STEP_DB_EXIT, svmtrace_guest_db_bits(vcpu, *dr6),
			   nmi_rflags, &bs_ours);
	if (bs_ours)
		svmtrace_dr6_drop_own(vcpu, dr6);
	return done ? SVMTRACE_DB_DONE : 0;
}
EXPORT_SYMBOL_GPL(__svmtrace_db_exit);

bool __svmtrace_emulated_step(struct kvm_vcpu *vcpu)
{
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;
	bool bs_ours;

	/* Never from the IRQs-off fastpath: svmtrace_fastpath_allowed(). */
	if (WARN_ON_ONCE(irqs_disabled()) || is_guest_mode(vcpu))
		return false;
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt)
		return false;
	svmtrace_time_completed(vcpu, vt);
	return handle_step(vcpu, vm, vt, STEP_EMULATED, false, NULL, &bs_ours);
}

/*
 * complete_emulated_mmio(), at the next KVM_RUN (interrupts on, kvm->srcu
 * held): userspace completed the MMIO write of an instruction KVM emulated
 * (KVM_EXIT_MMIO: MOV, PUSH, ENTER, XCHG, XADD ... to device memory), and
 * KVM returns to the guest without the single-step trap it takes after
 * every other instruction it completes.  With TF set when it began (the
 * instruction left TF as it was), that is our step: recorded here.
 */
void __svmtrace_mmio_written(struct kvm_vcpu *vcpu)
{
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;
	bool bs_ours;

	if (is_guest_mode(vcpu) || !(static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF))
		return;
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt || !svmtrace_tf_live(READ_ONCE(vt->tf)))
		return;
	svmtrace_time_completed(vcpu, vt);
	handle_step(vcpu, vm, vt, STEP_MMIO_WRITTEN, false, NULL, &bs_ours);
}

/*
 * Our TF went without a trap while the vCPU still runs the target: the
 * session ends with @reason and TF is taken back here, so the next step
 * starts a new session and the hole is bounded in the trace.
 */
static void session_resume(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			   struct kvm_vcpu *vcpu, u32 reason)
{
	stepless_end(vm, vt, vcpu, reason);
	take_tf(vcpu, vt, SVMTRACE_EV_TF_RETAKE);
	svmtrace_hide_restart(vcpu, vt);
	session_restart(vm, vt, vcpu);
}

/*
 * Which instruction took our TF away: the one the last step ended at,
 * prefixes and all (decode.c).
 */
static u32 lost_reason(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	struct svmtrace_insn in;
	u8 op;

	if (!vt->prev_valid || svmtrace_insn_fetch(vcpu, vt->prev_cpl, vt->prev_rip, &in))
		return SVMTRACE_END_EVENT;
	op = in.bytes[in.op];
	if (op == 0xcd || op == 0xcc || op == 0xce || op == 0xf1)	/* INT n, 3, O, 1 */
		return SVMTRACE_END_INT;
	return SVMTRACE_END_EVENT;
}

/*
 * A VM exit of a vCPU where we left TF set: is it still there?  Without a
 * trap it goes with an event delivery (INT n, an exception or interrupt
 * delivered to a handler), a task switch, SMM entry, a guest kernel that
 * returns through a frame without it, or a failed VM entry.  Stepping
 * must not end silently: the session ends with the reason, and where the
 * vCPU still runs the target (--kernel: any CPL; else user mode) TF is
 * taken back at once and a new session starts with the next step.  At the
 * IRET exit of a handler that made no exit before it (an INT3 at CPL 0
 * under --kernel, whose frame holds our TF), that step is the IRET's: the
 * hole ends there.  A user-only session whose target is in its kernel
 * waits instead: the frame may still bring TF back (adopt_step).
 */
static noinline void lost_tf(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
			     struct svmtrace_vcpu *vt, u32 exit_code)
{
	struct svmtrace_target *t = armed(vm, vt);
	bool kernel;
	u32 reason;

	if (!t || vt->tf != SVMTRACE_TF_LIVE || !vt->ring)
		return;
	if (exit_code == SVM_EXIT_ERR || exit_code == SVM_EXIT_TASK_SWITCH) {
		stepless_end(vm, vt, vcpu, exit_code == SVM_EXIT_ERR ? SVMTRACE_END_ENTRY_FAILED
								      : SVMTRACE_END_TASK_SWITCH);
		release_tf(vcpu, vt, SVMTRACE_EV_TF_RELEASE);
		return;
	}
	/*
	 * A #DB exit is a trap, handled by the #DB hook (after a POPF that
	 * cleared TF the saved RFLAGS no longer has it); the VM exit hook
	 * does not get here for one.
	 */
	if (rflags_raw(vcpu) & X86_EFLAGS_TF)
		return;
	kernel = static_call(kvm_x86_get_cpl)(vcpu) == 0;
	if ((kernel && !(t->flags & SVMTRACE_TARGET_F_KERNEL)) ||
	    !svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		return;
	reason = lost_reason(vcpu, vt);
	if (kernel && vt->handler == SVMTRACE_HANDLER_NONE) {
		/* In the handler: its frame may hold our TF (follow_iret()). */
		svmtrace_go(vt, SVMTRACE_EV_HANDLER_LOST_TF);
		vt->iret_guest_tf = vt->guest_tf;
	}
	session_resume(vm, vt, vcpu, reason);
}

/*
 * Any VM exit of a VM while some VM is armed (interrupts on, kvm->srcu
 * held, before KVM handles the exit).  A vCPU we left stepping is checked
 * for a TF that went without a trap (lost_tf), at an IRET exit as well (a
 * handler that made no exit before it; frames.c then decides how the IRET
 * runs); a MOV DR exit may let the guest run that MOV with its own debug
 * registers (debugreg.c).  Armed with
 * SVMTRACE_TARGET_F_FROM_NEXT, a vCPU that is in
 * user mode of a targeted address space and not stepping starts a session
 * (no gate): the instruction it runs next is the first step.  Threads that
 * were interrupted while stepped come back through their frames instead
 * (adopt_step).  The unlocked tests keep this to a lookup on every other
 * exit (none on a #DB exit); they are repeated under vt->lock, in functions
 * of their own so that this one stays small (lost_tf() is noinline for that
 * alone).
 */
void __svmtrace_vcpu_exit(struct kvm_vcpu *vcpu, u32 exit_code)
{
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;

	/*
	 * A #DB exit is a trap, which the #DB hook handles, FROM_NEXT start
	 * included (__svmtrace_db_exit()); nothing else here concerns one
	 * (lost_tf() is for exits without a trap, the parked NMI TF for
	 * IRET).  Every traced step is a #DB exit: it costs no lookup here.
	 */
	if (exit_code == SVM_EXIT_EXCP_BASE + DB_VECTOR || is_guest_mode(vcpu))
		return;
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt)
		return;
	/* A watched gate without its page: the target may have mapped it (watch.c). */
	if (unlikely(READ_ONCE(vm->watch.pending)))
		svmtrace_watches_exit(vcpu, vm);
	if (exit_code == SVM_EXIT_IRET) {
		/* An IRET back from a handler that ran without our TF and without an exit. */
		if (rcu_access_pointer(vm->armed) && svmtrace_tf_live(READ_ONCE(vt->tf))) {
			mutex_lock(&vt->lock);
			lost_tf(vcpu, vm, vt, exit_code);
			mutex_unlock(&vt->lock);
		}
		svmtrace_iret_exit(vcpu, vm, vt);
		return;
	}
	svmtrace_iret_bare_done(vt);
	if (!rcu_access_pointer(vm->armed))
		return;
	if (svmtrace_tf_live(READ_ONCE(vt->tf))) {
		mutex_lock(&vt->lock);
		lost_tf(vcpu, vm, vt, exit_code);
		mutex_unlock(&vt->lock);
	} else if (from_next_due(vm, vt)) {
		from_next_begin(vcpu, vm, vt);
	}
	/* After lost_tf(): the TF it takes back steps this MOV. */
	if (exit_code >= SVM_EXIT_READ_DR0 && exit_code <= SVM_EXIT_WRITE_DR7)
		svmtrace_dr_exit(vcpu, vt, exit_code);
}
EXPORT_SYMBOL_GPL(__svmtrace_vcpu_exit);

/*
 * The tracer cannot follow the instruction at RIP (frames.c: an INT n it
 * could not read again): the session ends with @reason, our TF goes (the
 * CPU runs the instruction as it would untraced, without our intercepts),
 * and a user-only session starts again where the thread next returns to
 * user mode.  vt->lock held.
 */
void svmtrace_session_gap(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			  struct kvm_vcpu *vcpu, u32 reason)
{
	struct svmtrace_target *t = armed(vm, vt);

	lockdep_assert_held(&vt->lock);
	if (!svmtrace_tf_live(vt->tf))
		return;
	stepless_end(vm, vt, vcpu, reason);
	release_tf(vcpu, vt, SVMTRACE_EV_TF_RELEASE);
	if (t && !(t->flags & SVMTRACE_TARGET_F_KERNEL))
		session_restart(vm, vt, vcpu);
}

/*
 * Stop (control thread, vm->armed already cleared; @reason SVMTRACE_END_STOP)
 * or the VM's vCPUs are gone (svmtrace_vm_gone(), none runs again;
 * SVMTRACE_END_VCPU_GONE): end every open session with @reason and close
 * the rings.  After a stop, vCPUs still carrying our TF take it back at
 * their next step (handle_step with no target).  vm->lock is held.
 */
void svmtrace_sessions_stop(struct svmtrace_vm *vm, u32 reason)
{
	struct svmtrace_vcpu *vt;
	u32 i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		vt = vm->vcpus[i];
		mutex_lock(&vt->lock);
		drop_held(vt);
		if (vt->tf == SVMTRACE_TF_NMI)	/* its IRET no longer gets our TF */
			svmtrace_go(vt, SVMTRACE_EV_TF_NMI_STOP);
		svmtrace_park_stop(vt);
		stepless_end(vm, vt, NULL, reason);
		svmtrace_go(vt, SVMTRACE_EV_GAP_STOP);
		/* It runs on (svmtrace_asks_release()), and is not taken at the next arm. */
		svmtrace_go(vt, SVMTRACE_EV_ASK_STOP);
		svmtrace_mem_stop(vt);
		if (vt->ring)
			svmtrace_ring_close(vt->ring);
		mutex_unlock(&vt->lock);
	}
	svmtrace_parks_clear(vm);
}
