// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace watches: gates given by a guest-virtual page whose mapping does
 * not exist yet (SVMTRACE_GATE_F_WATCH).  Windows maps an image's pages on
 * demand, so the entry page of a process that has not run may have no
 * guest-physical page to gate.  The gate's page tables are walked instead:
 * once at arm (or, for a gate a decision adds while armed, first.c, by the
 * vCPU that decision releases), and again at every VM exit a vCPU takes under a targeted
 * CR3 while some watched gate has no page.  When the walk finds the page
 * mapped, its GPA becomes the gate's, closed like every gate.
 *
 * Why that is in time: while a capture is armed every return to user mode
 * under a targeted CR3 is a VM exit -- IRET is intercepted and SYSRET
 * raises #UD (EFER.SCE off in the VMCB) on every vCPU that runs the
 * target's address space (intercepts.c) -- and arm makes every vCPU leave
 * the guest (and so take those intercepts) before its first walk.  The
 * guest kernel writes the entry that maps the page before it returns to
 * the target's user code, so the walk at that return finds it, and the
 * gate is closed before the target's first user-mode fetch through it on
 * that vCPU.  Not covered: a thread of the target already in user mode on
 * another vCPU that reaches the page without entering its kernel after the
 * entry was written (a new process's entry point runs on the thread that
 * faulted the page in, or that returned from the kernel after the loader
 * mapped it); its fetch then runs ungated.
 *
 * Why not write-protect the tables: AMD's nested page walker treats every
 * read of a guest page table during a walk as a write (KVM commit
 * 147277540bbc; QEMU's TCG does the same), so a write-tracked table faults
 * on every TLB miss that walks it, and KVM 6.1 answers such a fault by
 * unprotecting the page and retrying, which does nothing for an external
 * write track: the vCPU faults forever on the next miss in the 2 MiB (or
 * 1 GiB, or 512 GiB) the table maps.  Walking costs reads only, and only
 * at exits under the target's address spaces while a page is missing.
 *
 * Paging: four levels, or five when the vCPU runs with CR4.LA57 (at arm,
 * the first vCPU's mode); 1 GiB and 2 MiB pages are followed.
 *
 * Locking: watch->lock (a mutex) orders the gates' GPAs and the pending
 * count with stop.  A walk reads guest memory without it (a slow page must
 * not hold up the other vCPUs' exits); the page it found is applied under
 * it, once, if the capture is still armed and the gate still has none.
 * Stop zeroes the count under it before it zaps the gates, so no GPA is set
 * behind its back.
 */
#include <linux/kvm_host.h>

#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/* A paging-structure entry: present, page size, and the address bits. */
#define PTE_PRESENT	BIT_ULL(0)
#define PTE_LARGE	BIT_ULL(7)
#define PTE_ADDR	0x000ffffffffff000ULL

/*
 * One entry of a guest page table: from the vCPU's thread through its own
 * memslots (kvm->srcu held by the exit handler), else through the VMM's
 * mapping (the controller's thread at arm).
 */
static int read_entry(struct kvm *kvm, struct kvm_vcpu *vcpu, gpa_t gpa, u64 *e)
{
	if (vcpu)
		return kvm_vcpu_read_guest(vcpu, gpa, e, sizeof(*e));
	return svmtrace_read_guest_u64(kvm, gpa, e);
}

/* Is @gfn guest memory (a user memslot)?  The same two ways. */
static bool gfn_is_ram(struct kvm *kvm, struct kvm_vcpu *vcpu, gfn_t gfn)
{
	bool ram;
	int idx;

	if (vcpu)
		return kvm_is_visible_gfn(kvm, gfn);
	idx = srcu_read_lock(&kvm->srcu);
	ram = kvm_is_visible_gfn(kvm, gfn);
	srcu_read_unlock(&kvm->srcu, idx);
	return ram;
}

/*
 * The guest-physical page the tables at @dtb map at @va, or INVALID_GPA
 * when an entry is not present or a table is outside guest memory.
 */
static gpa_t walk(struct kvm *kvm, struct kvm_vcpu *vcpu, u64 dtb, u64 va, bool la57)
{
	gpa_t base = dtb & SVMTRACE_CR3_MASK, gpa;
	int level, shift;
	u64 e, span;

	for (level = la57 ? 5 : 4; level >= 1; level--) {
		shift = PAGE_SHIFT + 9 * (level - 1);
		if (read_entry(kvm, vcpu, base + ((va >> shift) & 511) * 8, &e) ||
		    !(e & PTE_PRESENT))
			return INVALID_GPA;
		if (level == 1 || (level <= 3 && (e & PTE_LARGE))) {
			span = BIT_ULL(shift) - 1;
			gpa = (e & PTE_ADDR & ~span) | (va & span & PAGE_MASK);
			return gfn_is_ram(kvm, vcpu, gpa_to_gfn(gpa)) ? gpa : INVALID_GPA;
		}
		base = e & PTE_ADDR;
	}
	return INVALID_GPA;	/* not reached */
}

static bool gate_watched(const struct svmtrace_gate *g)
{
	return g->flags & SVMTRACE_GATE_F_WATCH;
}

/* The page @gpa a walk found for watched gate @g: it is the gate's now. */
static void gate_found(struct svmtrace_vm *vm, struct svmtrace_gate *g, gpa_t gpa)
{
	struct svmtrace_watches *w = &vm->watch;

	mutex_lock(&w->lock);
	if (w->pending && rcu_access_pointer(vm->armed) && READ_ONCE(g->gpa) == INVALID_GPA) {
		/* Pairs with the lockless readers of gate.c. */
		WRITE_ONCE(g->gpa, gpa);
		w->pending--;
		svmtrace_gate_mapped(vm, g);
	}
	mutex_unlock(&w->lock);
}

/* Walk every watched gate that has no page yet. */
static void walk_pending(struct svmtrace_vm *vm, struct kvm_vcpu *vcpu, bool la57)
{
	struct svmtrace_target *t = &vm->target;
	struct svmtrace_gate *g;
	gpa_t gpa;
	u32 i;

	/* Pairs with svmtrace_gate_add(): a gate is whole before it counts. */
	for (i = 0; i < smp_load_acquire(&t->nr_gates) && READ_ONCE(vm->watch.pending); i++) {
		g = &t->gates[i];
		if (!gate_watched(g) || READ_ONCE(g->gpa) != INVALID_GPA)
			continue;
		gpa = walk(vm->kvm, vcpu, g->dtb, g->va, la57);
		if (gpa != INVALID_GPA)
			gate_found(vm, g, gpa);
	}
}

/*
 * Arm, before the target is published (vm->lock held): every watched gate
 * starts without a page.
 */
void svmtrace_watches_arm(struct svmtrace_vm *vm)
{
	struct svmtrace_target *t = &vm->target;
	u32 i, n = 0;

	lockdep_assert_held(&vm->lock);
	for (i = 0; i < t->nr_gates; i++)
		if (gate_watched(&t->gates[i])) {
			WRITE_ONCE(t->gates[i].gpa, INVALID_GPA);
			n++;
		}
	mutex_lock(&vm->watch.lock);
	vm->watch.pending = n;
	mutex_unlock(&vm->watch.lock);
}

/*
 * Arm, once the target is published and every vCPU has left the guest
 * since (its next entries intercept the returns to user mode): the first
 * walk, for the pages that are mapped already.  No lock of the tracer's is
 * held: the VMM's memory may be slow to read.
 */
void svmtrace_watches_start(struct svmtrace_vm *vm)
{
	struct kvm_vcpu *vcpu0;
	bool la57;

	if (!READ_ONCE(vm->watch.pending))
		return;
	vcpu0 = kvm_get_vcpu(vm->kvm, 0);
	la57 = vcpu0 && (READ_ONCE(vcpu0->arch.efer) & EFER_LMA) &&
	       (READ_ONCE(vcpu0->arch.cr4) & X86_CR4_LA57);
	walk_pending(vm, NULL, la57);
}

/*
 * A VM exit (interrupts on, kvm->srcu held, before KVM handles it) while
 * some watched gate has no page: under a targeted CR3 -- the target's
 * returns to user mode among them -- walk again.
 */
void svmtrace_watches_exit(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm)
{
	struct svmtrace_target *t;
	bool targeted;

	rcu_read_lock();
	t = rcu_dereference(vm->armed);
	targeted = t && svmtrace_cr3_targeted(t, kvm_read_cr3(vcpu));
	rcu_read_unlock();
	if (targeted)
		walk_pending(vm, vcpu, is_long_mode(vcpu) && kvm_read_cr4_bits(vcpu, X86_CR4_LA57));
}

/*
 * A watched gate a decision added while armed (gate.c, vm->lock held; its
 * GPA is INVALID_GPA): pending like those of arm.  The vCPU held for that
 * decision walks before it enters the guest again (__svmtrace_vcpu_request()),
 * and every exit under a targeted CR3 after it.
 */
void svmtrace_watch_add(struct svmtrace_vm *vm)
{
	lockdep_assert_held(&vm->lock);
	mutex_lock(&vm->watch.lock);
	vm->watch.pending++;
	mutex_unlock(&vm->watch.lock);
}


/* Stop (vm->armed already cleared): no gate gets a page after this. */
void svmtrace_watches_stop(struct svmtrace_vm *vm)
{
	mutex_lock(&vm->watch.lock);
	vm->watch.pending = 0;
	mutex_unlock(&vm->watch.lock);
}

/* Watched gates whose page is not mapped yet (for SVMTRACE_STATUS). */
u32 svmtrace_watches_pending(struct svmtrace_vm *vm)
{
	return READ_ONCE(vm->watch.pending);
}
