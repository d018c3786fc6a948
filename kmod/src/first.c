// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: threads traced from their first instruction, and address spaces
 * the controller names while the capture runs.
 *
 * Every thread of a Windows x64 guest begins in user mode at one address,
 * ntdll!LdrInitializeThunk (the kernel's PspUserThreadStartup points the
 * new thread's trap frame there), reached by the thread's first return to
 * user mode.  While a capture is armed every return to user mode under a
 * targeted CR3 is seen (frames.c: SYSRET emulated, IRET intercepted), and
 * with ASK every return on every vCPU (intercepts.c), so the target names
 * that address (first_rip) and no gate is needed:
 *
 *   FIRST  a return to first_rip under a targeted CR3 is stepped from there:
 *          the thread's first instruction is the session's first record.
 *   ASK    a return to first_rip under any other CR3 holds the vCPU before
 *          that instruction runs: the vCPU waits in KVM_REQ_SVMTRACE (where
 *          it may sleep and may leave KVM_RUN on a signal) until the
 *          controller looked at the new thread's process and decided
 *          (SVMTRACE_DECIDE): not the target's, or the target's (its CR3s
 *          and gates join the target first).  A process created while the
 *          controller waits for it, or a child of a traced process, is so
 *          traced from its very first instruction.  Asking again about the
 *          same address space is the controller's business (it answers from
 *          what it knows); the kernel keeps no verdict but the target's, so
 *          a page table reused by a new process is never taken for an old
 *          one's.  Once the controller has what it waited for it ends the
 *          asks (SVMTRACE_END_ASKS): the rest of the guest stops paying for
 *          them (intercepts.c), the target's own threads stay FIRST.
 *
 * The CR3s decisions add live in vm->added_cr3 (appended under vm->lock,
 * the count published with release), the gates in the target's own table
 * (gate.c).  Both only grow while armed; ARM starts them afresh.
 *
 * Locks: vt->lock for a vCPU's ask; vm->lock (the controller's ioctls) for
 * additions.  A held vCPU waits on vm->ask_wq without locks or SRCU; the
 * controller's poll() waits on vm->ctl_wq.
 */
#include <linux/kvm_host.h>
#include <linux/poll.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svmtrace.h"

static struct svmtrace_target *armed(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	return rcu_dereference_protected(vm->armed, lockdep_is_held(&vt->lock));
}

/* The CR3s decisions added (svmtrace_cr3_targeted() asks after the target's own). */
bool svmtrace_added_targeted(const struct svmtrace_vm *vm, unsigned long cr3)
{
	/* Pairs with add_cr3(): an entry is written before the count covers it. */
	u32 i, n = smp_load_acquire(&vm->nr_added);

	for (i = 0; i < n; i++)
		if (((READ_ONCE(vm->added_cr3[i]) ^ cr3) & SVMTRACE_CR3_MASK) == 0)
			return true;
	return false;
}

static u64 user_gs_base(struct kvm_vcpu *vcpu)
{
	return static_call(kvm_x86_get_segment_base)(vcpu, VCPU_SREG_GS);
}

/*
 * The vCPU returned to user mode at @rip, @rsp (frames.c's user_return(),
 * no vt->lock held, interrupts on, kvm->srcu held).  A return to first_rip
 * is a thread's first instruction: the target's (FIRST: the caller steps it
 * from here), or one the controller is asked about (ASK: held here until it
 * decides, svmtrace_ask_wait()).
 */
enum svmtrace_first svmtrace_first_return(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
					  struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	enum svmtrace_first r = SVMTRACE_FIRST_NONE;
	struct svmtrace_target *t;
	unsigned long cr3;

	mutex_lock(&vt->lock);
	t = armed(vm, vt);
	if (!t || !(t->flags & (SVMTRACE_TARGET_F_FIRST | SVMTRACE_TARGET_F_ASK)) ||
	    rip != t->first_rip || !vt->ring || vt->ask_state == SVMTRACE_ASK_ASKED)
		goto out;
	cr3 = kvm_read_cr3(vcpu);
	if (svmtrace_cr3_targeted(t, cr3)) {
		if (t->flags & SVMTRACE_TARGET_F_FIRST)
			r = SVMTRACE_FIRST_TRACE;
	} else if (svmtrace_asking(vm, t)) {
		svmtrace_go(vt, SVMTRACE_EV_ASK_ASKED);
		vt->ask = (struct svmtrace_ask){ .vcpu = vt->index, .cr3 = cr3, .rip = rip,
						 .rsp = rsp, .gs_base = user_gs_base(vcpu) };
		kvm_make_request(KVM_REQ_SVMTRACE, vcpu);
		r = SVMTRACE_FIRST_ASKED;
	}
out:
	mutex_unlock(&vt->lock);
	if (r == SVMTRACE_FIRST_ASKED)
		wake_up_interruptible(&vm->ctl_wq);
	return r;
}

/*
 * KVM_REQ_SVMTRACE (vt->lock held, kvm->srcu held): a vCPU held at a
 * thread's first instruction waits for the verdict, without vt->lock and
 * SRCU, interruptibly; a verdict may have come before the vCPU got here.
 * 1 to enter the guest (decided, or the capture stopped: the thread runs
 * on), -EINTR on a signal (the request stays pending, so the next KVM_RUN
 * comes back here).  A verdict for the target
 * starts stepping before the entry, under FIRST.
 */
int svmtrace_ask_wait(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	struct svmtrace_target *t;
	int r;

	lockdep_assert_held(&vt->lock);
	while (vt->ask_state == SVMTRACE_ASK_ASKED && armed(vm, vt)) {
		mutex_unlock(&vt->lock);
		kvm_vcpu_srcu_read_unlock(vcpu);
		r = wait_event_interruptible(vm->ask_wq,
					     READ_ONCE(vt->ask_state) != SVMTRACE_ASK_ASKED ||
					     !rcu_access_pointer(vm->armed));
		kvm_vcpu_srcu_read_lock(vcpu);
		mutex_lock(&vt->lock);
		if (r) {
			kvm_make_request(KVM_REQ_SVMTRACE, vcpu);
			vcpu->run->exit_reason = KVM_EXIT_INTR;
			++vcpu->stat.signal_exits;
			return -EINTR;
		}
	}
	t = armed(vm, vt);
	if (vt->ask_state == SVMTRACE_ASK_DECIDED && t && (t->flags & SVMTRACE_TARGET_F_FIRST) &&
	    svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		svmtrace_take_thread(vcpu, vm, vt, vt->ask.rip, vt->ask.rsp,
				     SVMTRACE_SESSION_FIRST);
	svmtrace_go(vt, SVMTRACE_EV_ASK_DONE);
	return 1;
}

/* Stop (vm->lock held, vm->armed cleared): every held vCPU runs on. */
void svmtrace_asks_release(struct svmtrace_vm *vm)
{
	lockdep_assert_held(&vm->lock);
	wake_up_all(&vm->ask_wq);
	wake_up_all(&vm->ctl_wq);
}

u32 svmtrace_nr_asking(struct svmtrace_vm *vm)
{
	u32 i, n = smp_load_acquire(&vm->nr_vcpus), asking = 0;

	for (i = 0; i < n; i++)
		asking += READ_ONCE(vm->vcpus[i]->ask_state) == SVMTRACE_ASK_ASKED;
	return asking;
}

/* SVMTRACE_ASKS (controller, vm->lock not held). */
int svmtrace_asks_get(struct svmtrace_vm *vm, void __user *arg)
{
	u32 i, n = smp_load_acquire(&vm->nr_vcpus);
	struct svmtrace_vcpu *vt;
	struct svmtrace_asks *a;
	int r = 0;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	for (i = 0; i < n && a->nr < SVMTRACE_MAX_STATUS_VCPUS; i++) {
		vt = vm->vcpus[i];
		mutex_lock(&vt->lock);
		if (vt->ask_state == SVMTRACE_ASK_ASKED && rcu_access_pointer(vm->armed))
			a->asks[a->nr++] = vt->ask;
		mutex_unlock(&vt->lock);
	}
	if (copy_to_user(arg, a, sizeof(*a)))
		r = -EFAULT;
	kfree(a);
	return r;
}

static int add_cr3(struct svmtrace_vm *vm, u64 cr3)
{
	const struct svmtrace_target *t = &vm->target;
	u32 n = vm->nr_added;

	lockdep_assert_held(&vm->lock);
	if (svmtrace_cr3_targeted(t, cr3))
		return 0;
	if (n == ARRAY_SIZE(vm->added_cr3))
		return -ENOSPC;
	WRITE_ONCE(vm->added_cr3[n], cr3 & SVMTRACE_CR3_MASK);
	smp_store_release(&vm->nr_added, n + 1);
	return 0;
}

static bool decision_valid(const struct svmtrace_decision *d)
{
	u32 i;

	if (d->verdict != SVMTRACE_VERDICT_FOREIGN && d->verdict != SVMTRACE_VERDICT_TARGET)
		return false;
	if (d->nr_cr3 > SVMTRACE_MAX_DECISION_CR3 || d->nr_gates > SVMTRACE_MAX_DECISION_GATES)
		return false;
	if (d->verdict == SVMTRACE_VERDICT_FOREIGN && (d->nr_cr3 || d->nr_gates))
		return false;
	for (i = 0; i < d->nr_cr3; i++)
		if (!(d->add_cr3[i] & SVMTRACE_CR3_MASK))
			return false;
	return true;
}

/*
 * SVMTRACE_END_ASKS (controller): no new asks; the held vCPUs wait for
 * their decisions as before.  No vCPU needs to be stopped for it: one that
 * still runs with the IRET intercept drops it at its next entry
 * (intercepts.c), and an ask raced with this is answered as any other.
 */
int svmtrace_end_asks(struct svmtrace_vm *vm)
{
	int r = 0;

	mutex_lock(&vm->lock);
	if (!rcu_access_pointer(vm->armed))
		r = -ESRCH;
	else if (!(vm->target.flags & SVMTRACE_TARGET_F_ASK))
		r = -EINVAL;
	else
		WRITE_ONCE(vm->asks_ended, true);
	mutex_unlock(&vm->lock);
	return r;
}

/*
 * SVMTRACE_DECIDE (controller).  The additions are made before the vCPU
 * is released, and only when they all fit (ENOSPC: nothing was added, the
 * vCPU still waits).
 */
int svmtrace_decide(struct svmtrace_vm *vm, void __user *arg)
{
	struct svmtrace_decision d;
	struct svmtrace_vcpu *vt;
	u32 i, free_cr3 = 0;
	int r = 0;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	if (!decision_valid(&d))
		return -EINVAL;
	for (i = 0; i < d.nr_gates; i++) {
		r = svmtrace_gate_check(vm->kvm, &d.gates[i]);
		if (r)
			return r;
	}
	mutex_lock(&vm->lock);
	if (!rcu_access_pointer(vm->armed) || d.vcpu >= vm->nr_vcpus) {
		r = rcu_access_pointer(vm->armed) ? -EINVAL : -ESRCH;
		goto out;
	}
	vt = vm->vcpus[d.vcpu];
	mutex_lock(&vt->lock);
	if (vt->ask_state != SVMTRACE_ASK_ASKED || ((vt->ask.cr3 ^ d.cr3) & SVMTRACE_CR3_MASK))
		r = -ESRCH;	/* answered already, or never asked about that */
	mutex_unlock(&vt->lock);
	if (r)
		goto out;
	for (i = 0; i < d.nr_cr3; i++)
		free_cr3 += !svmtrace_cr3_targeted(&vm->target, d.add_cr3[i]);
	if (vm->nr_added + free_cr3 > ARRAY_SIZE(vm->added_cr3) ||
	    vm->target.nr_gates + d.nr_gates > SVMTRACE_MAX_GATES) {
		r = -ENOSPC;
		goto out;
	}
	for (i = 0; i < d.nr_gates && !r; i++)
		r = svmtrace_gate_add(vm, &d.gates[i]);
	for (i = 0; i < d.nr_cr3 && !r; i++)
		r = add_cr3(vm, d.add_cr3[i]);
	if (r)
		goto out;
	mutex_lock(&vt->lock);
	svmtrace_go(vt, d.verdict == SVMTRACE_VERDICT_TARGET ? SVMTRACE_EV_ASK_TARGET :
							       SVMTRACE_EV_ASK_FOREIGN);
	mutex_unlock(&vt->lock);
	wake_up_all(&vm->ask_wq);
out:
	mutex_unlock(&vm->lock);
	return r;
}
