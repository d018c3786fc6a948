/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace: the tracer's own state, shared by its files (KVM sees only
 * hooks.h).  One struct svmtrace_vm per traced VM, one struct svmtrace_vcpu
 * per traced vCPU, one struct svmtrace_ring per vCPU and arm.
 *
 * Locking:
 *   svmtrace_lock     the registry (attach, destroy)
 *   ctl->lock         control operations (one controller per VM)
 *   vm->lock          arm, stop, the vCPUs' end (svmtrace_vm_gone) and the
 *                     vCPUs KVM creates while armed: vcpus[], nr_vcpus and
 *                     the rings' creation (lockless readers: nr_vcpus with
 *                     acquire, see svmtrace_vcpu_of())
 *   vt->lock          a vCPU's session state and its ring's producer side;
 *                     taken by the vCPU's exit handlers (interrupts on) and
 *                     by stop; only tried (mutex_trylock) by the plain step
 *                     in the IRQs-off fastpath (__svmtrace_db_fastpath)
 *   vm->armed         the target in force, NULL when not armed: RCU for the
 *                     MMU hooks, vt->lock for the step handlers (stop clears
 *                     it, then takes every vt->lock)
 *   vm->park_lock     the parked threads (frames.c), a spinlock inside vt->lock
 *   vclock.lock       the virtual TSC's lag and floor (hidetime.c), a raw
 *                     spinlock, innermost; taken before entries with
 *                     interrupts off as well, never in interrupt context
 *   watch.lock        the GPA of each watched gate, which goes from
 *                     INVALID_GPA to its page once while armed, and the
 *                     count of those still without one (lockless readers
 *                     use READ_ONCE)
 *   vm->lock also     the CR3s and gates a decision adds while armed
 *                     (first.c): appended, their count published with
 *                     release, read locklessly with acquire
 */
#ifndef ARCH_X86_KVM_SVMTRACE_SVMTRACE_H
#define ARCH_X86_KVM_SVMTRACE_SVMTRACE_H

#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/kvm_host.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <asm/debugreg.h>
#include <svmtrace/abi.h>

#include "compat.h"
#include "vstate.h"

/* CR3 bits that name an address space (PCID and flags excluded). */
#define SVMTRACE_CR3_MASK 0x000ffffffffff000ULL

struct svmtrace_ring {
	struct kref ref;
	struct svmtrace_ring_header *hdr;	/* start of the user mapping */
	u8 *slots;				/* capacity slots, slot_size bytes each */
	size_t size;				/* bytes mapped */
	u32 slot_size;				/* svmtrace_ring_slot_bytes() of its flags */
	u32 flags;				/* SVMTRACE_RING_F_*, the kernel's copy */
	u32 mem_offset;				/* of the slots' memory tail, 0 without */
	u32 capacity;
	u32 vcpu;
	/* Producer state: kernel copies, never read back from user memory. */
	u64 head;
	u64 produced;
	u64 dropped;
	u64 pending_drops;			/* lost since the last published slot */
	u64 wakeups;
	u64 last_wake;				/* head at the last consumer wakeup */
	/*
	 * The inline fast paths (svmtrace_ring_reserve/publish): the slots up
	 * to room_end are free as far as the tail read last says (0: read it
	 * again), and a slot published at a head below quiet_until needs no
	 * wakeup test and carries no gap (0: look every time).
	 */
	u64 room_end;
	u64 quiet_until;
	bool closed;
	bool fd_taken;				/* handed out by SVMTRACE_GET_RING */
	bool consumer_gone;			/* its fd was released */
	bool producer_waiting;
	wait_queue_head_t consumer_wq;		/* poll() */
	wait_queue_head_t producer_wq;		/* block policy */
};

/* Why a thread of a user-mode session is not stepped now (frames.c). */
enum {
	SVMTRACE_PARK_NONE,
	SVMTRACE_PARK_FRAME,	/* an injected event's frame: back at a return to user mode */
	SVMTRACE_PARK_SYSCALL,	/* a SYSCALL: its step is recorded where it returns */
};

/* A parked thread: where it returns to user mode. */
struct svmtrace_park {
	u8 kind;		/* SVMTRACE_PARK_*, NONE for a free entry */
	u64 cr3;		/* SVMTRACE_CR3_MASK bits */
	u64 rip;
	u64 rsp;
	u64 age;		/* vm->park_clock when parked: the oldest goes first */
};

#define SVMTRACE_MAX_PARKS 256

/*
 * What a vCPU runs with, decided before each of its VM entries from what it
 * holds then (intercepts.c, which describes the states and their events).
 * Ordered: from FOREIGN on a capture is armed, from TARGET on the vCPU's
 * returns to user mode exit.
 */
enum svmtrace_watch {
	SVMTRACE_WATCH_OFF,	 /* nothing of the tracer's */
	SVMTRACE_WATCH_LEFTOVER, /* stopped, our TF still set: SCE off, events */
	SVMTRACE_WATCH_FOREIGN,	 /* armed, another address space: CR3 loads exit */
	SVMTRACE_WATCH_ASKING,	 /* ... and the target asks about new ones: + IRET */
	SVMTRACE_WATCH_TARGET,	 /* ... the target's, or a return of its due: + SCE off, IRET */
	SVMTRACE_WATCH_STEPPING, /* ... our TF steps user code: + the events the CPU delivers */
};

/*
 * hidetime.c: a vCPU's stretch of steps of a target armed with
 * SVMTRACE_TARGET_F_HIDE_TIME.  Only the vCPU's own thread touches it (its
 * entries and exit handlers): no lock.
 */
struct svmtrace_vtime {
	u32 gen;		/* the vclock's arm generation it belongs to */
	bool open;		/* the vCPU steps the target: its time is virtual */
	bool read_done;		/* the step KVM completes now is a TSC read, counted */
	u64 base;		/* the virtual TSC at the anchor */
	u64 anchor_steps;	/* stats.db_exits at the anchor */
	u64 extra_x256;		/* cycles/256 that KVM-completed steps added since */
};

/* hidetime.c: the target's virtual TSC, one per VM (one target). */
struct svmtrace_vclock {
	raw_spinlock_t lock;	/* lag and floor; taken with interrupts off too */
	u32 gen;		/* arms so far: a vtime of an older one is stale */
	u64 lag;		/* real minus virtual TSC while no vCPU steps the target */
	u64 floor;		/* the largest value a read returned */
	struct svmtrace_time_costs costs;	/* of the armed target (abi.h) */
};

/*
 * vt->mode of a vCPU whose next #DB exit is a plain step of a recording
 * session: tf LIVE, session OPEN, the guest's TF clear, no gap owed, no
 * slot held (step.c, plain_step()).  x86 is little-endian: byte n of mode
 * is the nth of those.
 */
#define SVMTRACE_MODE_STEPPING (SVMTRACE_TF_LIVE | SVMTRACE_SESSION_OPEN << 8)

/*
 * memops.c: the instruction a vCPU runs next, decoded before it runs, with
 * the values its reads will see.  Only under vt->lock.
 */
struct svmtrace_mem_next {
	u8 cpl;			/* vt->mem_state DECODED: decoded at rip under cr3 */
	u8 nr;
	u64 rip;
	u64 cr3;
	struct svmtrace_slot_access acc[SVMTRACE_MEM_MAX_ACCESSES];
};

struct svmtrace_vcpu {
	struct mutex lock;
	struct svmtrace_vm *vm;	/* the VM's state, for the hook that finds vt first */
	u32 index;
	u32 vcpu_id;		/* KVM's vcpu_id (the APIC ID), as kvm:kvm_exit names the vCPU */
	/* The state's dimensions (vstate.h), changed by svmtrace_go() alone. */
	union {
		struct {
			u8 tf;		/* enum svmtrace_tf */
			u8 session;	/* enum svmtrace_session */
			bool guest_tf;	/* the guest's own TF, as followed: data */
			u8 gap;		/* enum svmtrace_gap */
			u8 slot;	/* enum svmtrace_slot_state */
			u8 mode_zero[3];
		};
		u64 mode;	/* the five at once, tested once per step */
	};
	u8 iret;		/* enum svmtrace_iret: the next IRET (frames.c) */
	u8 handler;		/* enum svmtrace_handler */
	bool iret_guest_tf;	/* handler IN: the guest's TF when it was entered, */
				/* which the IRETQ out of it restores, whatever the */
				/* frame says (it also holds ours) */
	u8 watch;		/* SVMTRACE_WATCH_* of the last entry that asked */
				/* (intercepts.c; the vCPU's thread alone) */
	u8 sys;			/* enum svmtrace_sys; sys_*: where the SYSCALL this */
	u64 sys_cr3;		/* ... vCPU parked returns to user mode: the CR3, */
	u64 sys_rip;		/* ... return point */
	u64 sys_rsp;		/* ... user RSP of its park */
	gfn_t sys_gfn;		/* ... and the return point's page */
	int silent_gate;	/* gate to close after the silent step */
	/*
	 * debugreg.c, the vCPU thread's own (no lock): after a MOV DR exit
	 * while TF steps it, the guest runs that one MOV with its own debug
	 * registers (KVM_DEBUGREG_WONT_EXIT).
	 */
	bool dr_native;		/* the next exit ends that run ... */
	u64 dr_exit;		/* ... if it is exit number dr_exit + 1 */
	u64 dr_rip;		/* the MOV DR's RIP: a trap moves RIP */
	u64 dr6_guest;		/* the guest's DR6 after the MOV */
	u32 irqoff_steps;	/* step.c: plain steps offered to the IRQs-off fastpath */
	u32 start_gate;		/* id for the session_start slot */
	bool prev_valid;	/* prev_*: where the last step ended */
	u8 prev_cpl;		/* ... the CPL the next instruction runs at */
	u64 prev_rip;
	u64 prev_rsp;
	struct svmtrace_ring *ring;
	union {
		struct svmtrace_slot last;	/* a step the ring had no room for; session ends */
		/* the same with its tails (a slot of the ring's slot_size) */
		u8 last_bytes[sizeof(struct svmtrace_slot_xstate) + sizeof(struct svmtrace_slot_mem)];
	};
	struct svmtrace_slot *last_state; /* the last step's state: a ring slot or &last */
	struct svmtrace_counters stats;
	u8 ask_state;		/* enum svmtrace_ask_state (first.c) */
	struct svmtrace_ask ask;	/* ... ASKED: the question */
	struct svmtrace_vtime vtime;
	u8 mem_state;		/* enum svmtrace_mem_state (memops.c) */
	struct svmtrace_mem_next mem;	/* SVMTRACE_TARGET_F_MEM */
};

/* watch.c: the SVMTRACE_GATE_F_WATCH gates still without a page. */
struct svmtrace_watches {
	struct mutex lock;
	u32 pending;				/* watched gates not mapped yet, 0 unarmed */
};

struct svmtrace_vm {
	struct mutex lock;
	struct hlist_node node;		/* svmtrace_registry */
	struct list_head all;		/* every object, for VM destruction */
	struct kvm *kvm;
	bool registered;		/* in svmtrace_registry (static key held) */
	bool controlled;		/* a controller is attached */
	enum svmtrace_capture_state state;
	bool paused;
	struct svmtrace_target target;	/* valid from SVMTRACE_STATE_TARGETED */
	u32 nr_set_gates;		/* the gates SET_TARGET gave (decisions add more) */
	struct svmtrace_target __rcu *armed;
	unsigned long gate_open[BITS_TO_LONGS(SVMTRACE_MAX_GATES)];
	struct svmtrace_watches watch;
	atomic64_t seq;
	u32 last_gate;			/* gate id of the newest session */
	bool was_armed;			/* a vCPU may still carry our TF: stay registered */
	struct mem_cgroup *memcg;	/* the controller's at arm: the rings of vCPUs */
					/* created while armed are charged to it */
	spinlock_t park_lock;		/* parks[], park_clock (frames.c) */
	u64 park_clock;
	struct svmtrace_park parks[SVMTRACE_MAX_PARKS];
	u64 parks_evicted;		/* a parked SYSCALL forgotten for a newer one */
	/* first.c: CR3s decisions added while armed; held vCPUs; their controller */
	u32 nr_added;
	u64 added_cr3[SVMTRACE_MAX_TARGET_CR3 - SVMTRACE_MAX_CR3];
	wait_queue_head_t ask_wq;	/* held vCPUs wait for their verdict */
	bool asks_ended;		/* SVMTRACE_END_ASKS: ASK no longer in force */
	wait_queue_head_t ctl_wq;	/* the controller polls for asks */
	struct svmtrace_vclock vclock;	/* SVMTRACE_TARGET_F_HIDE_TIME (hidetime.c) */
	u32 nr_vcpus;			/* vcpus[0..nr_vcpus) exist */
	struct svmtrace_vcpu *vcpus[KVM_MAX_VCPUS];
};

/* attach.c */
#define SVMTRACE_REGISTRY_BITS 4
/* The registered VMs by struct kvm: RCU readers, svmtrace_lock for writers. */
extern DECLARE_HASHTABLE(svmtrace_registry, SVMTRACE_REGISTRY_BITS);

struct svmtrace_vm *svmtrace_vm_get(struct kvm *kvm);
void svmtrace_vm_release(struct svmtrace_vm *vm);

/* The registered tracer of @kvm, or NULL.  Callers hold RCU (any flavour). */
static inline struct svmtrace_vm *svmtrace_vm_lookup(struct kvm *kvm)
{
	struct svmtrace_vm *vm;

	hash_for_each_possible_rcu(svmtrace_registry, vm, node, (unsigned long)kvm)
		if (vm->kvm == kvm)
			return vm;
	return NULL;
}

/*
 * This vCPU's tracer state, or NULL when it is not traced; *vmp (if given)
 * gets its VM's.  Both live until KVM destroys the VM, so a vCPU's exit
 * handlers may use them after the lookup.  Inline, as every traced step
 * looks up twice (VM exit and #DB hooks); the walk runs with preemption off
 * (rcu_read_lock_sched()), which svmtrace_vm_destroy()'s synchronize_rcu()
 * waits for as well, instead of the two calls of a preemptible
 * rcu_read_lock().
 */
static inline struct svmtrace_vcpu *svmtrace_vcpu_of(struct kvm_vcpu *vcpu,
						     struct svmtrace_vm **vmp)
{
	struct svmtrace_vm *vm;
	struct svmtrace_vcpu *vt = NULL;

	rcu_read_lock_sched();
	vm = svmtrace_vm_lookup(vcpu->kvm);
	/* Pairs with add_vcpus(): vcpus[i] is set before nr_vcpus covers it. */
	if (vm && vcpu->vcpu_idx < smp_load_acquire(&vm->nr_vcpus))
		vt = READ_ONCE(vm->vcpus[vcpu->vcpu_idx]);
	rcu_read_unlock_sched();
	if (vmp)
		*vmp = vm;
	return vt;
}

/*
 * svmtrace_vcpu_of() for the hooks that get the vCPU's own pointer to its
 * state (struct vcpu_svm, svmtrace; hooks.h): looked up once, then kept.
 * Only the vCPU's thread writes it, in its exit handlers and before its
 * entries.  The state lives until KVM destroys the VM (attach.c), and a
 * VM whose controller left keeps it: its target is gone, so the hooks
 * find nothing armed there, as when the lookup found nothing.
 */
static inline struct svmtrace_vcpu *svmtrace_vcpu_cached(struct kvm_vcpu *vcpu,
							 struct svmtrace_vcpu **vtp)
{
	if (unlikely(!*vtp))
		*vtp = svmtrace_vcpu_of(vcpu, NULL);
	return *vtp;
}

/* TF on or off in the vCPU's RFLAGS, written only when it changes. */
static inline void svmtrace_set_tf(struct kvm_vcpu *vcpu, bool on)
{
	unsigned long rflags = static_call(kvm_x86_get_rflags)(vcpu);
	unsigned long want = on ? rflags | X86_EFLAGS_TF : rflags & ~X86_EFLAGS_TF;

	if (want != rflags)
		static_call(kvm_x86_set_rflags)(vcpu, want);
}

/* introspect.c */
int svmtrace_read_gpa(struct kvm *kvm, void __user *arg);
int svmtrace_get_vcpu_state(struct kvm *kvm, void __user *arg);
int svmtrace_read_guest_u64(struct kvm *kvm, u64 gpa, u64 *val);

/* ring.c */
struct svmtrace_ring *svmtrace_ring_create(u32 vcpu, u32 capacity, u32 wake_batch, u32 flags);
void svmtrace_ring_copy(struct svmtrace_ring *ring, struct svmtrace_slot *dst,
			const struct svmtrace_slot *src);
void svmtrace_ring_put(struct svmtrace_ring *ring);
struct file *svmtrace_ring_file(struct svmtrace_ring *ring);
struct svmtrace_slot *svmtrace_ring_reserve_slow(struct svmtrace_ring *ring, bool last_slot);
void svmtrace_ring_publish_slow(struct svmtrace_ring *ring, u16 kind);
void svmtrace_ring_drop(struct svmtrace_ring *ring);
void svmtrace_ring_close(struct svmtrace_ring *ring);
bool svmtrace_ring_has_room(struct svmtrace_ring *ring);

/* Slot @i (a free-running counter) of the ring, slot_size bytes apart. */
static inline struct svmtrace_slot *svmtrace_ring_slot(struct svmtrace_ring *ring, u64 i)
{
	return (struct svmtrace_slot *)(ring->slots + (i & (ring->capacity - 1)) * ring->slot_size);
}

/*
 * The slot the next publish fills, or NULL when the ring is full (or
 * closed).  The last free slot is kept for the session_end that stop
 * writes (@last_slot).  Inline while the tail read last leaves room: the
 * shared page is read again only when that room is used up.
 */
static __always_inline struct svmtrace_slot *svmtrace_ring_reserve(struct svmtrace_ring *ring,
								   bool last_slot)
{
	if (!last_slot && likely(ring->head < ring->room_end))
		return svmtrace_ring_slot(ring, ring->head);
	return svmtrace_ring_reserve_slow(ring, last_slot);
}

/*
 * Publish the slot returned by svmtrace_ring_reserve().  Inline for an
 * instruction slot that needs no gap and, as far as the tail read last
 * says, no wakeup test: the head moves, nothing more.
 */
static __always_inline void svmtrace_ring_publish(struct svmtrace_ring *ring, u16 kind)
{
	if (kind != SVMTRACE_SLOT_INSTRUCTION || unlikely(ring->head >= ring->quiet_until)) {
		svmtrace_ring_publish_slow(ring, kind);
		return;
	}
	ring->produced++;
	WRITE_ONCE(ring->hdr->produced, ring->produced);
	/* The slot's bytes are visible before the consumer sees head move. */
	smp_store_release(&ring->hdr->head, ++ring->head);
}

/* gate.c */
void svmtrace_adopt_reset(struct svmtrace_target *t);
u32 svmtrace_nr_cr3(const struct svmtrace_target *t);
int svmtrace_gate_find(const struct svmtrace_target *t, gfn_t gfn);
void svmtrace_gates_close_all(struct svmtrace_vm *vm, const struct svmtrace_target *t);
void svmtrace_gate_close(struct svmtrace_vm *vm, const struct svmtrace_target *t, int gate);
void svmtrace_gates_zap(struct svmtrace_vm *vm, const struct svmtrace_target *t);
void svmtrace_gate_mapped(struct svmtrace_vm *vm, const struct svmtrace_gate *gate);
int svmtrace_gate_add(struct svmtrace_vm *vm, const struct svmtrace_gate *gate);
int svmtrace_gate_check(struct kvm *kvm, const struct svmtrace_gate *g);
bool svmtrace_gates_clash(const struct svmtrace_gate *a, const struct svmtrace_gate *b);

/* watch.c */
void svmtrace_watches_arm(struct svmtrace_vm *vm);
void svmtrace_watches_start(struct svmtrace_vm *vm);
void svmtrace_watches_exit(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm);
void svmtrace_watches_stop(struct svmtrace_vm *vm);
u32 svmtrace_watches_pending(struct svmtrace_vm *vm);
void svmtrace_watch_add(struct svmtrace_vm *vm);

/* step.c */
bool svmtrace_cr3_targeted(const struct svmtrace_target *t, unsigned long cr3);
void svmtrace_session_begin(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			    struct kvm_vcpu *vcpu, u32 gate_id);
void svmtrace_silent_begin(struct svmtrace_vcpu *vt, struct kvm_vcpu *vcpu, int gate);
void svmtrace_sessions_stop(struct svmtrace_vm *vm, u32 reason);
void svmtrace_session_gap(struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			  struct kvm_vcpu *vcpu, u32 reason);

/* first.c */
enum svmtrace_first {
	SVMTRACE_FIRST_NONE,	/* not a thread's first instruction, or nothing to do */
	SVMTRACE_FIRST_TRACE,	/* a thread of the target: traced from here */
	SVMTRACE_FIRST_ASKED,	/* an address space the controller decides about */
};
enum svmtrace_first svmtrace_first_return(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm,
					  struct svmtrace_vcpu *vt, u64 rip, u64 rsp);
int svmtrace_ask_wait(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt);
void svmtrace_asks_release(struct svmtrace_vm *vm);
u32 svmtrace_nr_asking(struct svmtrace_vm *vm);
int svmtrace_asks_get(struct svmtrace_vm *vm, void __user *arg);
int svmtrace_decide(struct svmtrace_vm *vm, void __user *arg);
int svmtrace_end_asks(struct svmtrace_vm *vm);
bool svmtrace_added_targeted(const struct svmtrace_vm *vm, unsigned long cr3);

/*
 * @t (the target in force, vm->armed) asks about new address spaces: ASK
 * until the controller ends its asks.  Read without locks: a stale answer
 * costs one more ask (answered as any other) or one entry with the IRET
 * intercept the next entry drops.
 */
static inline bool svmtrace_asking(const struct svmtrace_vm *vm, const struct svmtrace_target *t)
{
	return (t->flags & SVMTRACE_TARGET_F_ASK) && !READ_ONCE(vm->asks_ended);
}

/* intercepts.c */
void svmtrace_intercepts_sync(struct svmtrace_vm *vm);

/* frames.c */
bool svmtrace_take_thread(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			  u64 rip, u64 rsp, u32 gate_id);
void svmtrace_parks_clear(struct svmtrace_vm *vm);
void svmtrace_park_stop(struct svmtrace_vcpu *vt);
void svmtrace_iret_event(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);
void svmtrace_iret_exit(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt);
void svmtrace_iret_bare_done(struct svmtrace_vcpu *vt);
bool svmtrace_iret_trap(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt,
			u64 *dr6, bool *done);

/* debugreg.c */
void svmtrace_dr_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u32 exit_code);
void svmtrace_dr6_native(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 *dr6);

/*
 * B0-B3 of the breakpoints @dr7 makes execute breakpoints (R/W 00),
 * enabled or not.
 */
static __always_inline u64 svmtrace_exec_bp_bits(unsigned long dr7)
{
	u64 bits = 0;
	int i;

	for (i = 0; i < 4; i++)
		if (!((dr7 >> (16 + i * 4)) & 3))
			bits |= BIT(i);
	return bits;
}

/*
 * The bits of a single-step #DB's DR6 (@dr6, BS set) that make it the
 * guest's as well: BD, BT, and B0-B3 of the data and I/O breakpoints its
 * DR7 enables (the stepped instruction hit them: a trap, delivered with
 * the same #DB).  Not B0-B3 of execute breakpoints: the trap stops before
 * the instruction at RIP, and a breakpoint on that one is its own fault,
 * taken when it runs unless the guest's RF suppresses it (QEMU's TCG
 * reports the B bit with the trap already; hardware does not).  Nor B0-B3
 * of breakpoints DR7 does not enable, which CPUs may set (SDM 18.2.3; TCG
 * does, with whatever DR0-3 hold).
 */
static __always_inline u64 svmtrace_guest_db_bits(struct kvm_vcpu *vcpu, u64 dr6)
{
	unsigned long dr7 = vcpu->arch.dr7;
	u64 bits = dr6 & (DR6_BD | DR6_BT);
	int i;

	if (!(dr6 & DR_TRAP_BITS))
		return bits;	/* every step of ours: no DR0-3 match to look at */
	for (i = 0; i < 4; i++)
		if ((dr6 & BIT(i)) && (dr7 & (3UL << (i * 2))) && ((dr7 >> (16 + i * 4)) & 3))
			bits |= BIT(i);
	return bits;
}

/*
 * A single-step trap that was ours: neither its BS nor the B bit of an
 * execute breakpoint at RIP goes into the #DB payload KVM builds from the
 * VMCB's DR6 (@dr6) when the guest gets the same #DB for its own bits.
 * The DR6 the guest reads, vcpu->arch.dr6, has none of ours: KVM runs it
 * with DR6_ACTIVE_LOW, and a run with the guest's own DR6 is put right by
 * svmtrace_dr6_native().
 */
static __always_inline void svmtrace_dr6_drop_own(struct kvm_vcpu *vcpu, u64 *dr6)
{
	*dr6 &= ~DR6_BS;
	if (unlikely(*dr6 & DR_TRAP_BITS))
		*dr6 &= ~svmtrace_exec_bp_bits(vcpu->arch.dr7);
}

/* access.c: guest memory with the rights of the instruction that made the access. */
gpa_t svmtrace_gva_to_gpa(struct kvm_vcpu *vcpu, gva_t gva, u64 access);
int svmtrace_read_as(struct kvm_vcpu *vcpu, int cpl, gva_t gva, void *buf, unsigned int len);
int svmtrace_write_as(struct kvm_vcpu *vcpu, int cpl, gva_t gva, const void *buf,
		      unsigned int len);
int svmtrace_fetch_as(struct kvm_vcpu *vcpu, int cpl, gva_t rip, void *buf, unsigned int len);

/* decode.c: an instruction's opcode past its prefixes. */
#define SVMTRACE_INSN_MAX 15
struct svmtrace_insn {
	u8 bytes[SVMTRACE_INSN_MAX];
	u8 op;		/* index of the first opcode byte (the next one is read too) */
	bool rex_w;	/* a REX.W right before it (64-bit mode) */
	bool rex_b;	/* ... a REX.B (extends ModRM's r/m) */
	bool lock;	/* a LOCK prefix */
};
int svmtrace_insn_fetch(struct kvm_vcpu *vcpu, int cpl, u64 rip, struct svmtrace_insn *in);

/* The page-fault error code bits of a data access at @cpl (@write). */
static inline u64 svmtrace_data_access(int cpl, bool write)
{
	return (cpl == 3 ? PFERR_USER_MASK : 0) | (write ? PFERR_WRITE_MASK : 0);
}

/* ... of an instruction fetch at @cpl. */
static inline u64 svmtrace_fetch_access(int cpl)
{
	return (cpl == 3 ? PFERR_USER_MASK : 0) | PFERR_FETCH_MASK;
}

/* hidetime.c */
void svmtrace_time_init(struct svmtrace_vm *vm);
void svmtrace_time_arm(struct svmtrace_vm *vm);
bool svmtrace_time_entry(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
			 const struct svmtrace_target *t);
void svmtrace_time_completed(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);

/* memops.c */
void svmtrace_mem_due(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);
void svmtrace_mem_forget(struct svmtrace_vcpu *vt);
void svmtrace_mem_stop(struct svmtrace_vcpu *vt);
void svmtrace_mem_none(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);
void svmtrace_mem_request(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);
void svmtrace_mem_fill(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, struct svmtrace_slot *s);

/* Whether the steps of @vt record memory operands (its ring has the tail). */
static inline bool svmtrace_mem_on(const struct svmtrace_vcpu *vt)
{
	return vt->ring && vt->ring->mem_offset;
}

/* xstate.c */
void svmtrace_xstate_fill(struct kvm_vcpu *vcpu, struct svmtrace_slot *s);

/*
 * A legacy prefix other than 66 (operand size, which the decoders here
 * look at themselves): hide.c's PUSHF/POPF, frames.c's SYSCALL/SYSRET.
 */
static inline bool svmtrace_legacy_prefix(u8 b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e:	/* segment overrides */
	case 0x64: case 0x65:
	case 0x67:					/* address size */
	case 0xf0: case 0xf2: case 0xf3:		/* LOCK, REPNE, REP */
		return true;
	}
	return false;
}

/* hide.c */
bool svmtrace_nmi_iret(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt);
void svmtrace_hide_tf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);
void svmtrace_hide_repair(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip, u64 rsp);

/*
 * Whether a traced step that ended at @rip, @rsp may need a repair
 * (svmtrace_hide_repair(), which reads guest memory).  PUSHF, POPF and
 * IRETQ move RSP; SYSCALL (with its SYSRET) ends two bytes on.  A step that
 * did neither -- most of them -- needs nothing.  A new repair must keep to
 * this test or widen it.
 */
static __always_inline bool svmtrace_hide_due(const struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	return vt->prev_valid && (rsp != vt->prev_rsp || rip == vt->prev_rip + 2);
}

/*
 * After a traced step that ended at @rip, @rsp, @cpl: repair, remember where
 * it ended.
 */
static __always_inline void svmtrace_hide_step(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
					       u64 rip, u64 rsp, int cpl)
{
	if (svmtrace_hide_due(vt, rip, rsp))
		svmtrace_hide_repair(vcpu, vt, rip, rsp);
	vt->prev_rip = rip;
	vt->prev_rsp = rsp;
	vt->prev_cpl = cpl;
	vt->prev_valid = true;
}
void svmtrace_hide_restart(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt);

/* testparam.c: in the lab's build only (kmod/build.sh --lab). */
#ifdef SVMTRACE_LAB
extern unsigned int svmtrace_lose_step;
bool svmtrace_test_lose_step_slow(void);

/* True (once per unit of the test parameter) when this step must vanish. */
static __always_inline bool svmtrace_test_lose_step(void)
{
	return unlikely(READ_ONCE(svmtrace_lose_step)) && svmtrace_test_lose_step_slow();
}
void svmtrace_test_transition(enum svmtrace_event ev, u8 from);
#else
static __always_inline bool svmtrace_test_lose_step(void)
{
	return false;
}

static inline void svmtrace_test_transition(enum svmtrace_event ev, u8 from)
{
}
#endif

/* control.c */
int svmtrace_control_init(void);
void svmtrace_control_exit(void);

#endif
