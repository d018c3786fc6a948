// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace watches: gates given by a guest-virtual page whose mapping does
 * not exist yet (SVMTRACE_GATE_F_WATCH).  Windows maps an image's pages on
 * demand, so the entry page of a process that has not run may have no
 * guest-physical page to gate.  Its page tables are watched instead: the
 * deepest table of the walk whose entry for the page is not present is
 * write-tracked with KVM's page tracking, so every guest write to it is
 * emulated and reported here after it lands.  Each report re-walks; when
 * the page is mapped its GPA becomes the gate's (closed, like every gate)
 * before the writing instruction completes, so the writing vCPU cannot
 * fetch through the new entry before the gate is in place.  Another vCPU
 * could in the few microseconds between the write landing and the gate
 * closing; an entry point runs on the thread that faulted its page in.
 * When a new table appears the watch moves down to it.
 *
 * What it costs the guest while armed: every write to the one watched
 * table page (512 entries: 2 MiB of the process's address space for a
 * page table) is emulated by KVM instead of running natively.
 *
 * Locking: watch->lock (a mutex) guards the tracked tables and the gates'
 * GPAs of watched gates.  The write notifier runs in the writing vCPU's
 * thread (emulation, interrupts on, kvm->srcu and the page-track SRCU
 * held), so it may sleep; stop unregisters it (waiting out every call in
 * flight) before it takes watch->lock, never while holding it.
 */
#include <linux/kvm_host.h>
#include <asm/kvm_page_track.h>

#include "svmtrace.h"

/* A paging-structure entry: present, page size, and the address bits. */
#define PTE_PRESENT	BIT_ULL(0)
#define PTE_LARGE	BIT_ULL(7)
#define PTE_ADDR	0x000ffffffffff000ULL

enum walk_result {
	WALK_MAPPED,	/* *gpa: the guest-physical page */
	WALK_MISSING,	/* *table: the table whose entry is not present */
	WALK_BAD,	/* a table outside guest memory */
};

/*
 * Walk the four-level tables at @dtb for @va (huge pages included).
 * kvm->srcu is held.
 */
static enum walk_result walk(struct kvm *kvm, u64 dtb, u64 va, gpa_t *gpa, gfn_t *table)
{
	gpa_t base = dtb & SVMTRACE_CR3_MASK;
	int level, shift;
	u64 e, span;

	for (level = 4; level >= 1; level--) {
		shift = PAGE_SHIFT + 9 * (level - 1);
		if (svmtrace_read_guest_u64(kvm, base + ((va >> shift) & 511) * 8, &e))
			return WALK_BAD;
		if (!(e & PTE_PRESENT)) {
			*table = gpa_to_gfn(base);
			return WALK_MISSING;
		}
		if (level == 1 || (level <= 3 && (e & PTE_LARGE))) {
			span = BIT_ULL(shift) - 1;
			*gpa = (e & PTE_ADDR & ~span) | (va & span & PAGE_MASK);
			return kvm_is_visible_gfn(kvm, gpa_to_gfn(*gpa)) ? WALK_MAPPED : WALK_BAD;
		}
		base = e & PTE_ADDR;
	}
	return WALK_BAD;	/* not reached */
}

/* Start or stop write-tracking @gfn; kvm->srcu is held. */
static void track(struct kvm *kvm, gfn_t gfn, bool on)
{
	struct kvm_memory_slot *slot = gfn_to_memslot(kvm, gfn);

	if (!slot)
		return;
	write_lock(&kvm->mmu_lock);
	if (on)
		kvm_slot_page_track_add_page(kvm, slot, gfn, KVM_PAGE_TRACK_WRITE);
	else
		kvm_slot_page_track_remove_page(kvm, slot, gfn, KVM_PAGE_TRACK_WRITE);
	write_unlock(&kvm->mmu_lock);
}

static void untrack(struct svmtrace_vm *vm, u32 gate)
{
	struct svmtrace_watches *w = &vm->watch;

	lockdep_assert_held(&w->lock);
	if (test_and_clear_bit(gate, w->tracking))
		track(vm->kvm, w->table[gate], false);
}

/*
 * Walk again for watched gate @gate: map it when its page is there, else
 * track the table the walk stops at.  kvm->srcu is held.
 */
static void watch_update(struct svmtrace_vm *vm, u32 gate)
{
	struct svmtrace_watches *w = &vm->watch;
	struct svmtrace_gate *g = &vm->target.gates[gate];
	gfn_t table = 0;
	gpa_t gpa = 0;

	lockdep_assert_held(&w->lock);
	switch (walk(vm->kvm, g->dtb, g->va, &gpa, &table)) {
	case WALK_MAPPED:
		untrack(vm, gate);
		/* Pairs with the lockless readers of gate.c. */
		WRITE_ONCE(g->gpa, gpa);
		w->pending--;
		svmtrace_gate_mapped(vm, g);
		return;
	case WALK_MISSING:
		if (test_bit(gate, w->tracking) && w->table[gate] == table)
			return;
		untrack(vm, gate);
		w->table[gate] = table;
		track(vm->kvm, table, true);
		set_bit(gate, w->tracking);
		return;
	case WALK_BAD:
		/*
		 * A guest entry that points outside its memory: keep the
		 * table tracked, a later write may fix it.
		 */
		return;
	}
}

static bool gate_watched(const struct svmtrace_gate *g)
{
	return g->flags & SVMTRACE_GATE_F_WATCH;
}

/* Page-track notifier: a write to some tracked page landed. */
static void watch_write(struct kvm_vcpu *vcpu, gpa_t gpa, const u8 *new, int bytes,
			struct kvm_page_track_notifier_node *node)
{
	struct svmtrace_vm *vm = container_of(node, struct svmtrace_vm, watch.node);
	struct svmtrace_watches *w = &vm->watch;
	gfn_t gfn = gpa_to_gfn(gpa);
	u32 i;

	mutex_lock(&w->lock);
	for_each_set_bit(i, w->tracking, vm->target.nr_gates)
		if (w->table[i] == gfn)
			watch_update(vm, i);
	mutex_unlock(&w->lock);
}

/*
 * A memslot goes away or moves: its tracking counts go with it, so the
 * watches on its pages end (a later arm starts them again).
 */
static void watch_flush_slot(struct kvm *kvm, struct kvm_memory_slot *slot,
			     struct kvm_page_track_notifier_node *node)
{
	struct svmtrace_vm *vm = container_of(node, struct svmtrace_vm, watch.node);
	struct svmtrace_watches *w = &vm->watch;
	u32 i;

	mutex_lock(&w->lock);
	for_each_set_bit(i, w->tracking, vm->target.nr_gates)
		if (w->table[i] - slot->base_gfn < slot->npages)
			clear_bit(i, w->tracking);
	mutex_unlock(&w->lock);
}

/*
 * Arm: every watched gate starts unmapped and is walked once (its page may
 * be there by now); the notifier is registered first so that no write
 * between the walk and the tracking is missed.
 */
void svmtrace_watches_arm(struct svmtrace_vm *vm)
{
	struct svmtrace_watches *w = &vm->watch;
	struct svmtrace_target *t = &vm->target;
	int idx;
	u32 i;

	w->pending = 0;
	for (i = 0; i < t->nr_gates; i++)
		if (gate_watched(&t->gates[i])) {
			WRITE_ONCE(t->gates[i].gpa, INVALID_GPA);
			w->pending++;
		}
	if (!w->pending)
		return;
	w->node.track_write = watch_write;
	w->node.track_flush_slot = watch_flush_slot;
	kvm_page_track_register_notifier(vm->kvm, &w->node);
	w->registered = true;
	idx = srcu_read_lock(&vm->kvm->srcu);
	mutex_lock(&w->lock);
	for (i = 0; i < t->nr_gates; i++)
		if (gate_watched(&t->gates[i]))
			watch_update(vm, i);
	mutex_unlock(&w->lock);
	srcu_read_unlock(&vm->kvm->srcu, idx);
}

/* Stop: no notifier call is in flight after this, and nothing is tracked. */
void svmtrace_watches_stop(struct svmtrace_vm *vm)
{
	struct svmtrace_watches *w = &vm->watch;
	int idx;
	u32 i;

	if (!w->registered)
		return;
	kvm_page_track_unregister_notifier(vm->kvm, &w->node);
	w->registered = false;
	idx = srcu_read_lock(&vm->kvm->srcu);
	mutex_lock(&w->lock);
	for_each_set_bit(i, w->tracking, SVMTRACE_MAX_GATES)
		untrack(vm, i);
	mutex_unlock(&w->lock);
	srcu_read_unlock(&vm->kvm->srcu, idx);
}

/* Watched gates whose page is not mapped yet (for SVMTRACE_STATUS). */
u32 svmtrace_watches_pending(struct svmtrace_vm *vm)
{
	u32 n;

	mutex_lock(&vm->watch.lock);
	n = vm->watch.pending;
	mutex_unlock(&vm->watch.lock);
	return n;
}
