// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace gates: guest-physical pages whose NPT entry loses execute
 * permission while a capture is armed.  The first instruction fetch from a
 * closed gate exits with an NPF; the tracer opens the gate (KVM's own fault
 * handling then maps it executable again) and starts stepping.  Closing a
 * gate takes execute permission from its one SPTE; arm and stop zap the
 * gates' SPTEs, so that they are rebuilt at 4 KiB without execute, or with
 * it again.
 *
 * A gate is exactly one 4 KiB page: while armed no huge page may cover a
 * gated gfn, the way KVM's page tracking forbids them.
 *
 * A watched gate (watch.c) has INVALID_GPA until the guest maps its page;
 * that gfn is outside every memslot, so it matches no fault.
 *
 * Gates a decision adds while armed (first.c) are appended to the target's
 * table and published by its count (release): lockless readers take the
 * count with acquire, then the gates below it.
 */
#include <linux/kvm_host.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "mmu.h"
#include "svmtrace.h"

/* The gate's page; a watched gate's changes once while armed (watch.c). */
static gfn_t gate_gfn(const struct svmtrace_gate *gate)
{
	return gpa_to_gfn(READ_ONCE(gate->gpa));
}

/* The gates in force; pairs with svmtrace_gate_add(). */
static u32 nr_gates(const struct svmtrace_target *t)
{
	return smp_load_acquire(&t->nr_gates);
}

/* Index of the gate on @gfn, or -1. */
int svmtrace_gate_find(const struct svmtrace_target *t, gfn_t gfn)
{
	u32 i, n = nr_gates(t);

	for (i = 0; i < n; i++)
		if (gate_gfn(&t->gates[i]) == gfn)
			return i;
	return -1;
}

/*
 * SVMTRACE_TARGET_F_ADOPT_CR3: until a gate fetch in user mode adopts its
 * CR3, the target's one CR3 is a page-table root no guest can have (bits
 * 51:12 all ones, the top page of a 52-bit physical address space), so
 * that svmtrace_cr3_targeted() matches nothing.  The adoption is one
 * aligned 64-bit cmpxchg; the vCPUs that test the set without a lock see
 * either value, and until they see the adopted one they treat the thread
 * as foreign, as they would before arm.
 */
#define ADOPT_NONE SVMTRACE_CR3_MASK

void svmtrace_adopt_reset(struct svmtrace_target *t)
{
	if (t->flags & SVMTRACE_TARGET_F_ADOPT_CR3)
		WRITE_ONCE(t->cr3[0], ADOPT_NONE);
}

/* The CR3s in force: with ADOPT_CR3, none until one is adopted. */
u32 svmtrace_nr_cr3(const struct svmtrace_target *t)
{
	if ((t->flags & SVMTRACE_TARGET_F_ADOPT_CR3) &&
	    (READ_ONCE(t->cr3[0]) & SVMTRACE_CR3_MASK) == ADOPT_NONE)
		return 0;
	return t->nr_cr3 + smp_load_acquire(&container_of(t, struct svmtrace_vm, target)->nr_added);
}

/*
 * A user-mode fetch of a gate adopts its address space, once per arm.  True
 * when this fetch did: the target set changed.
 */
static bool adopt_cr3(struct svmtrace_target *t, struct kvm_vcpu *vcpu)
{
	if (!(t->flags & SVMTRACE_TARGET_F_ADOPT_CR3) ||
	    static_call(kvm_x86_get_cpl)(vcpu) != 3)
		return false;
	return cmpxchg64(&t->cr3[0], ADOPT_NONE, kvm_read_cr3(vcpu)) == ADOPT_NONE;
}

/* The target in force on @kvm, or NULL; callers hold RCU. */
static struct svmtrace_target *armed_target(struct kvm *kvm)
{
	struct svmtrace_vm *vm = svmtrace_vm_lookup(kvm);

	return vm ? rcu_dereference(vm->armed) : NULL;
}

bool __svmtrace_gfn_noexec(struct kvm *kvm, gfn_t gfn)
{
	struct svmtrace_vm *vm;
	struct svmtrace_target *t;
	bool noexec = false;
	int gate;

	rcu_read_lock();
	vm = svmtrace_vm_lookup(kvm);
	t = vm ? rcu_dereference(vm->armed) : NULL;
	if (t) {
		gate = svmtrace_gate_find(t, gfn);
		noexec = gate >= 0 && !test_bit(gate, vm->gate_open);
	}
	rcu_read_unlock();
	return noexec;
}
EXPORT_SYMBOL_GPL(__svmtrace_gfn_noexec);

/* The largest level <= @max_level whose page around @gfn holds no gate. */
int __svmtrace_max_level(struct kvm *kvm, gfn_t gfn, int max_level)
{
	struct svmtrace_target *t;
	gfn_t base, pages;
	u32 i, n;

	rcu_read_lock();
	t = armed_target(kvm);
	for (; t && max_level > PG_LEVEL_4K; max_level--) {
		pages = KVM_PAGES_PER_HPAGE(max_level);
		base = gfn & ~(pages - 1);
		n = nr_gates(t);
		for (i = 0; i < n; i++)
			if (gate_gfn(&t->gates[i]) - base < pages)
				break;
		if (i == n)
			break;
	}
	rcu_read_unlock();
	return max_level;
}
EXPORT_SYMBOL_GPL(__svmtrace_max_level);

/* Drop the SPTE (and any huge SPTE) covering the gate's page. */
static void gate_zap(struct kvm *kvm, const struct svmtrace_gate *gate)
{
	gfn_t gfn = gate_gfn(gate);
	int idx;

	if (gfn == gpa_to_gfn(INVALID_GPA))
		return;	/* a watched gate with no page yet */
	idx = srcu_read_lock(&kvm->srcu);
	kvm_zap_gfn_range(kvm, gfn, gfn + 1);
	srcu_read_unlock(&kvm->srcu, idx);
}

/*
 * A gate closes: its page keeps its mapping but loses execute permission.
 * Unlike kvm_zap_gfn_range(), this invalidates only the gate's page (a
 * fault in flight for it retries and sees the gate closed; faults elsewhere
 * go on), and data accesses to the page need no new fault.  The TLB flush
 * is still VM-wide: SVM has no flush by guest-physical address.
 */
static void gate_deny_exec(struct kvm *kvm, const struct svmtrace_gate *gate)
{
	int idx, r;

	idx = srcu_read_lock(&kvm->srcu);
	r = svmtrace_mmu_deny_exec(kvm, gate_gfn(gate));
	srcu_read_unlock(&kvm->srcu, idx);
	if (r < 0)	/* a huge page, or the shadow MMU: the old way */
		gate_zap(kvm, gate);
}

void svmtrace_gate_close(struct svmtrace_vm *vm, const struct svmtrace_target *t, int gate)
{
	if (test_and_clear_bit(gate, vm->gate_open))
		gate_deny_exec(vm->kvm, &t->gates[gate]);
}

/*
 * A watched gate just got its page (watch.c; the gate is closed): the page
 * may already be mapped executable, for another process or the kernel.
 */
void svmtrace_gate_mapped(struct svmtrace_vm *vm, const struct svmtrace_gate *gate)
{
	gate_deny_exec(vm->kvm, gate);
}

/* Re-arm every gate (a session ended): the next fetch faults again. */
void svmtrace_gates_close_all(struct svmtrace_vm *vm, const struct svmtrace_target *t)
{
	u32 i, n = nr_gates(t);

	for (i = 0; i < n; i++)
		svmtrace_gate_close(vm, t, i);
}

/*
 * Drop every gate's mapping whatever its state: at arm (so the pages fault
 * without execute) and after stop (so they map executable again).  The
 * caller set gate_open first.
 */
void svmtrace_gates_zap(struct svmtrace_vm *vm, const struct svmtrace_target *t)
{
	u32 i, n = nr_gates(t);

	for (i = 0; i < n; i++)
		gate_zap(vm->kvm, &t->gates[i]);
}

/* A watched gate's page: 4 KiB aligned, canonical, under a valid root. */
static bool watch_valid(const struct svmtrace_gate *g)
{
	return !g->gpa && !offset_in_page(g->va) && (g->dtb & SVMTRACE_CR3_MASK) &&
	       (u64)((s64)(g->va << 16) >> 16) == g->va;
}

/* Two gates that may not both be in one target: the same page or the same id. */
bool svmtrace_gates_clash(const struct svmtrace_gate *a, const struct svmtrace_gate *b)
{
	if (a->id == b->id)
		return true;
	if (a->flags != b->flags)
		return false;
	if (a->flags & SVMTRACE_GATE_F_WATCH)
		return a->va == b->va && a->dtb == b->dtb;
	return a->gpa == b->gpa;
}

/*
 * One gate as SET_TARGET and a decision accept it: -EINVAL for its shape,
 * -ENXIO for a page outside guest memory.
 */
int svmtrace_gate_check(struct kvm *kvm, const struct svmtrace_gate *g)
{
	bool visible;
	int idx;

	if (g->id == SVMTRACE_SESSION_FROM_NEXT || g->id == SVMTRACE_SESSION_FIRST ||
	    g->flags & ~SVMTRACE_GATE_F_WATCH)
		return -EINVAL;
	if (g->flags & SVMTRACE_GATE_F_WATCH)
		return watch_valid(g) ? 0 : -EINVAL;
	if (offset_in_page(g->gpa) || g->va || g->dtb)
		return -EINVAL;
	idx = srcu_read_lock(&kvm->srcu);
	visible = kvm_is_visible_gfn(kvm, gpa_to_gfn(g->gpa));
	srcu_read_unlock(&kvm->srcu, idx);
	return visible ? 0 : -ENXIO;
}

/*
 * A gate a decision adds while armed (first.c; vm->lock held, the caller
 * checked it and that the table has room): closed from the start.  A page
 * gate's mapping is zapped, so that it comes back without execute; a
 * watched gate is walked (watch.c).
 */
int svmtrace_gate_add(struct svmtrace_vm *vm, const struct svmtrace_gate *gate)
{
	struct svmtrace_target *t = &vm->target;
	u32 i, n = t->nr_gates;

	lockdep_assert_held(&vm->lock);
	for (i = 0; i < n; i++)
		if (svmtrace_gates_clash(&t->gates[i], gate))
			return -EEXIST;
	if (n == SVMTRACE_MAX_GATES)
		return -ENOSPC;
	t->gates[n] = *gate;
	if (gate->flags & SVMTRACE_GATE_F_WATCH)
		WRITE_ONCE(t->gates[n].gpa, INVALID_GPA);
	clear_bit(n, vm->gate_open);
	/* Pairs with nr_gates(): the gate is whole before it counts. */
	smp_store_release(&t->nr_gates, n + 1);
	if (gate->flags & SVMTRACE_GATE_F_WATCH)
		svmtrace_watch_add(vm);
	else
		gate_zap(vm->kvm, &t->gates[n]);
	return 0;
}

static bool is_gate_fetch(u64 error_code)
{
	return (error_code & PFERR_FETCH_MASK) && (error_code & PFERR_PRESENT_MASK) &&
	       !(error_code & PFERR_GUEST_PAGE_MASK);
}

/*
 * A gate fetch of a vCPU the tracer has no state for (its creation while
 * armed failed to allocate it, control.c): it cannot step the vCPU, and a
 * closed gate would fault it forever.  The gate opens, and stays open until
 * the next gate closes them all: that vCPU runs untraced.
 */
static void untraced_gate_fetch(struct kvm_vcpu *vcpu, gpa_t gpa)
{
	struct svmtrace_target *t;
	struct svmtrace_vm *vm;
	int gate;

	rcu_read_lock();
	vm = svmtrace_vm_lookup(vcpu->kvm);
	t = vm ? rcu_dereference(vm->armed) : NULL;
	gate = t ? svmtrace_gate_find(t, gpa_to_gfn(gpa)) : -1;
	if (gate >= 0)
		set_bit(gate, vm->gate_open);
	rcu_read_unlock();
}

/*
 * An NPF exit.  A fetch from a closed gate opens it; the vCPU then steps the
 * faulting instruction: as the start of a session when its CR3 is targeted,
 * silently (to close the gate behind it) otherwise.  Every fault then goes
 * on to KVM's own handler unchanged.  A CR3 adopted here joins the target
 * set: every vCPU decides its intercepts again before it runs guest code
 * (intercepts.c), before this vCPU can run the session's first step.
 */
void __svmtrace_npf_exit(struct kvm_vcpu *vcpu, u64 gpa, u64 error_code)
{
	struct svmtrace_vm *vm;
	struct svmtrace_vcpu *vt;
	struct svmtrace_target *t;
	bool adopted = false;
	int gate;

	if (!is_gate_fetch(error_code) || is_guest_mode(vcpu))
		return;	/* a nested guest's NPF carries one of its own GPAs */
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt) {
		untraced_gate_fetch(vcpu, gpa);
		return;
	}
	mutex_lock(&vt->lock);
	rcu_read_lock();
	t = rcu_dereference(vm->armed);
	gate = t ? svmtrace_gate_find(t, gpa_to_gfn(gpa)) : -1;
	if (gate < 0 || test_and_set_bit(gate, vm->gate_open))
		goto out;
	vt->stats.npf_exits++;
	if (vt->session != SVMTRACE_SESSION_NONE || vt->tf == SVMTRACE_TF_SILENT)
		goto out;
	adopted = adopt_cr3(t, vcpu);
	if (svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu)))
		svmtrace_session_begin(vm, vt, vcpu, t->gates[gate].id);
	else
		svmtrace_silent_begin(vt, vcpu, gate);
out:
	rcu_read_unlock();
	mutex_unlock(&vt->lock);
	if (adopted)
		svmtrace_intercepts_sync(vm);
}
EXPORT_SYMBOL_GPL(__svmtrace_npf_exit);
