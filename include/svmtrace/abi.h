/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * svmtrace kernel <-> user contract: the per-vCPU ring and the raw slot the
 * capture path publishes for every traced step.  This one header is included
 * by the kernel module and by userspace; nothing else is shared between them.
 * docs/abi.md describes every field.
 *
 * All fields are little-endian (the only byte order x86-64 has) and every
 * structure has a fixed layout checked by the static assertions at the end.
 */
#ifndef SVMTRACE_ABI_H
#define SVMTRACE_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SVMTRACE_ABI_VERSION 6

/* Order of svmtrace_slot.gpr[] (and of every GPR array in files and APIs). */
enum svmtrace_gpr {
	SVMTRACE_RAX,
	SVMTRACE_RBX,
	SVMTRACE_RCX,
	SVMTRACE_RDX,
	SVMTRACE_RSI,
	SVMTRACE_RDI,
	SVMTRACE_RBP,
	SVMTRACE_RSP,
	SVMTRACE_R8,
	SVMTRACE_R9,
	SVMTRACE_R10,
	SVMTRACE_R11,
	SVMTRACE_R12,
	SVMTRACE_R13,
	SVMTRACE_R14,
	SVMTRACE_R15,
	SVMTRACE_NR_GPRS
};

/* svmtrace_slot.kind */
enum svmtrace_slot_kind {
	SVMTRACE_SLOT_INSTRUCTION = 1,	/* state after one guest instruction */
	SVMTRACE_SLOT_SESSION_START = 2,	/* first post-gate state; reason = gate id */
	SVMTRACE_SLOT_SESSION_END = 3,	/* end marker; reason = enum svmtrace_end_reason */
};

/* svmtrace_slot.reason of a SESSION_END slot */
enum svmtrace_end_reason {
	SVMTRACE_END_STOP = 0,		/* stop or detach requested by the controller */
	SVMTRACE_END_CR3 = 1,		/* a step ran under a CR3 outside the target set */
	SVMTRACE_END_VCPU_GONE = 2,	/* the vCPU or VM was destroyed */
	SVMTRACE_END_LIMIT = 3,		/* a record or time limit was reached */
	SVMTRACE_END_ERROR = 4,		/* the capture path hit a state it cannot trace */
	SVMTRACE_END_INT = 5,		/* INT n/INT3/INTO/INT1 delivered: its TF went with it */
	SVMTRACE_END_EVENT = 6,		/* an exception or interrupt was delivered to a handler */
					/* that is not traced, or TF vanished without a trap */
	SVMTRACE_END_TASK_SWITCH = 7,	/* a task switch (KVM emulates it) */
	SVMTRACE_END_ENTRY_FAILED = 8,	/* VM entry failed (KVM_EXIT_FAIL_ENTRY) */
};

/* svmtrace_slot.flags */
#define SVMTRACE_SLOT_F_GAP	(1u << 0)	/* dropped > 0: slots were lost before this one */
#define SVMTRACE_SLOT_F_KERNEL	(1u << 1)	/* RIP was in kernel mode (CPL 0) */
#define SVMTRACE_SLOT_F_XSTATE	(1u << 2)	/* the svmtrace_slot_xstate tail is valid */
#define SVMTRACE_SLOT_F_MEM	(1u << 3)	/* the svmtrace_slot_mem tail is valid */

/*
 * One traced step, 192 bytes (three cache lines).  The kernel fills every
 * field; reserved bytes are zero.
 */
struct svmtrace_slot {
	__u64 seq;			/* global per-VM sequence, no reuse */
	__u64 tsc;			/* host TSC when the step was captured */
	__u64 rip;			/* next instruction (post-instruction state) */
	__u64 rflags;			/* guest RFLAGS as the guest sees it (our TF hidden) */
	__u64 cr3;
	__u64 gpr[SVMTRACE_NR_GPRS];	/* enum svmtrace_gpr order */
	__u16 kind;			/* enum svmtrace_slot_kind */
	__u16 flags;			/* SVMTRACE_SLOT_F_* */
	__u32 reason;			/* gate id, exit code, or end reason (see kind) */
	__u64 dropped;			/* slots lost on this vCPU right before this one */
	__u64 gs_base;			/* GS base after the step: at CPL 3 the thread's */
					/* (Windows x64: its TEB) */
};

/*
 * A ring created with SVMTRACE_RING_F_XSTATE (a target armed with
 * SVMTRACE_TARGET_F_XSTATE) carries this larger slot (768 bytes, twelve
 * cache lines): the base slot plus YMM0-15.  Every INSTRUCTION and
 * SESSION_START slot of such a ring has SVMTRACE_SLOT_F_XSTATE; a
 * SESSION_END repeats the last step's state, tail included.
 */
struct svmtrace_slot_xstate {
	struct svmtrace_slot base;
	__u64 xstate_bv;		/* XINUSE (XGETBV 1) & the guest's XCR0 */
	__u64 reserved[7];
	__u64 ymm[16][4];		/* YMMn as four little-endian quadwords */
};

/*
 * Memory operands (SVMTRACE_TARGET_F_MEM): the accesses one instruction
 * made, in the order it made them, at most SVMTRACE_MEM_MAX_ACCESSES.
 */
#define SVMTRACE_MEM_MAX_ACCESSES 16	/* per instruction */
#define SVMTRACE_MEM_MAX_VALUE	  32	/* bytes of a recorded value (a YMM operand) */

/* svmtrace_slot_access.kind */
enum svmtrace_mem_kind {
	SVMTRACE_MEM_UNRECORDED = 0,	/* an access the capture could not record: see why */
	SVMTRACE_MEM_READ = 1,
	SVMTRACE_MEM_WRITE = 2,
	SVMTRACE_MEM_RMW = 3,		/* read, then written: both values */
};

/* svmtrace_slot_access.why of an UNRECORDED access */
enum svmtrace_mem_why {
	SVMTRACE_MEM_WHY_FAULT = 1,	/* the access faults (not present, not permitted) */
	SVMTRACE_MEM_WHY_TOO_LARGE = 2,	/* the operand is larger than SVMTRACE_MEM_MAX_VALUE */
	SVMTRACE_MEM_WHY_UNDECODED = 3,	/* a form the capture does not decode */
	SVMTRACE_MEM_WHY_UNREADABLE = 4,	/* guest memory could not be read at capture */
};
#define SVMTRACE_MEM_WHY_MAX SVMTRACE_MEM_WHY_UNREADABLE

/* One access, 80 bytes; unused bytes are zero. */
struct svmtrace_slot_access {
	__u64 addr;			/* guest-virtual (linear: segment base included) */
	__u32 size;			/* bytes: 1..32 when recorded; unrecorded: 0 = unknown */
	__u8 kind;			/* enum svmtrace_mem_kind */
	__u8 why;			/* enum svmtrace_mem_why when UNRECORDED, else 0 */
	__u16 reserved;
	__u8 read_value[SVMTRACE_MEM_MAX_VALUE];	/* READ, RMW: memory before */
	__u8 write_value[SVMTRACE_MEM_MAX_VALUE];	/* WRITE, RMW: memory after */
};

/*
 * The memory tail of a slot of a ring created with SVMTRACE_RING_F_MEM
 * (1344 bytes, 21 cache lines), right after the base slot or, in an xstate
 * ring, after the xstate tail.  Every INSTRUCTION and SESSION_START slot of
 * such a ring has SVMTRACE_SLOT_F_MEM; a SESSION_END has none.
 */
struct svmtrace_slot_mem {
	__u32 nr;			/* accesses[0..nr), 0..SVMTRACE_MEM_MAX_ACCESSES */
	__u32 reserved[15];
	struct svmtrace_slot_access accesses[SVMTRACE_MEM_MAX_ACCESSES];
};

#define SVMTRACE_RING_MAGIC	0x474e5254u	/* "TRNG" */
#define SVMTRACE_RING_F_XSTATE	(1u << 0)
#define SVMTRACE_RING_F_MEM	(1u << 1)	/* slots end with struct svmtrace_slot_mem */

/* Where a slot of a ring with header flags @flags has its memory tail. */
static inline __u32 svmtrace_ring_mem_offset(__u32 flags)
{
	return flags & SVMTRACE_RING_F_XSTATE ? sizeof(struct svmtrace_slot_xstate)
					      : sizeof(struct svmtrace_slot);
}

/* The bytes of a slot of a ring with header flags @flags. */
static inline __u32 svmtrace_ring_slot_bytes(__u32 flags)
{
	return svmtrace_ring_mem_offset(flags) +
	       (flags & SVMTRACE_RING_F_MEM ? sizeof(struct svmtrace_slot_mem) : 0);
}

/*
 * Page 0 of every ring mapping.  Slots start at data_offset (one page) and
 * occupy capacity * slot_size bytes.  head and tail are free-running slot
 * counters: slot i lives at index (i & (capacity - 1)).
 *
 * The producer (the vCPU's #DB handler) owns head, dropped and produced and
 * publishes a slot by storing head with release semantics after writing it.
 * The consumer owns tail and releases a slot by storing tail after reading.
 * Each side reads the other's counter with acquire semantics.  The kernel
 * never trusts tail: it clamps head - tail to [0, capacity].
 *
 * A consumer that finds the ring empty sleeps in poll() on the ring fd; the
 * kernel wakes it every wake_batch slots, at session boundaries and when the
 * capture stops.  With the block policy a full ring makes the vCPU wait
 * (producer_waiting = 1) until the consumer's next poll() finds room, so a
 * consumer must poll() whenever it has drained the ring.
 */
struct svmtrace_ring_header {
	__u32 magic;			/* SVMTRACE_RING_MAGIC */
	__u32 abi_version;		/* SVMTRACE_ABI_VERSION */
	__u32 slot_size;		/* sizeof(struct svmtrace_slot[_xstate]) */
	__u32 capacity;			/* slots, a power of two */
	__u32 vcpu;
	__u32 flags;			/* SVMTRACE_RING_F_* */
	__u64 data_offset;		/* bytes from the mapping start to slot 0 */
	__u8 pad0[32];

	/* producer cache line */
	__u64 head;			/* slots published */
	__u64 produced;			/* steps captured (published + dropped) */
	__u64 dropped;			/* steps lost because the ring was full */
	__u64 wakeups;			/* consumer wake-ups issued */
	__u32 producer_waiting;		/* block policy: a vCPU waits for room */
	__u32 closed;			/* capture stopped: no slot will follow */
	__u8 pad1[24];

	/* consumer cache line */
	__u64 tail;			/* slots consumed */
	__u32 wake_batch;		/* wake the consumer every N slots (0 = 1) */
	__u32 reserved;
	__u8 pad2[48];
};

#define SVMTRACE_RING_HEADER_SIZE 4096

/* ---- control interface: /dev/svmtrace (root only) ----
 *
 * One open file of /dev/svmtrace is one controller.  It attaches to one VM,
 * sets a target, arms, and hands out one ring fd per vCPU; closing it
 * detaches.  docs/abi.md describes every ioctl, field and error.
 */
#define SVMTRACE_DEVICE "/dev/svmtrace"
#define SVMTRACE_IOC_MAGIC 0xB7

#define SVMTRACE_MAX_CR3 16
/* CR3s of a target at most: SET_TARGET's and those SVMTRACE_DECIDE adds. */
#define SVMTRACE_MAX_TARGET_CR3 256
#define SVMTRACE_MAX_GATES 64
#define SVMTRACE_MAX_RANGES 16
#define SVMTRACE_MAX_STATUS_VCPUS 64
#define SVMTRACE_MIN_RING_SLOTS 16
#define SVMTRACE_MAX_RING_SLOTS (1u << 22)	/* 768 MiB of slots per vCPU */
#define SVMTRACE_MAX_XSTATE_RING_SLOTS (1u << 20)	/* 768 MiB of xstate slots */
#define SVMTRACE_MAX_MEM_RING_SLOTS (1u << 18)	/* 384 MiB (528 with xstate) of mem slots */
#define SVMTRACE_DEFAULT_RING_SLOTS 65536

/* SVMTRACE_ATTACH: vm_fd is a KVM VM fd in the caller's fd table (for a VM
 * owned by another process, obtain it with pidfd_getfd(2) first). */
struct svmtrace_attach {
	__s32 vm_fd;
	__u32 flags;			/* must be 0 */
	__u64 reserved;			/* must be 0 */
};

/* svmtrace_target.flags */
#define SVMTRACE_TARGET_F_KERNEL (1u << 0)	/* record CPL 0 steps too */
/*
 * Start sessions without a gate as well: a vCPU that takes any VM exit in
 * user mode (CPL 3) under a targeted CR3 starts one there, so a running
 * process is traced from its next user instruction on.  nr_gates may be 0.
 */
#define SVMTRACE_TARGET_F_FROM_NEXT (1u << 1)
/*
 * Capture YMM0-15 and XSTATE_BV with every step: the rings carry
 * struct svmtrace_slot_xstate (SVMTRACE_RING_F_XSTATE), four times the
 * bytes, so ring_slots is at most SVMTRACE_MAX_XSTATE_RING_SLOTS.
 */
#define SVMTRACE_TARGET_F_XSTATE (1u << 2)
/*
 * Adopt the address space from the gates: nr_cr3 must be 0, and the first
 * fetch of a gate page in user mode (CPL 3) makes that vCPU's CR3 the
 * target's only one, for the rest of the capture (until stop; a new arm
 * adopts again).  For a program that knows its code's guest-physical page
 * (Linux: /proc/self/pagemap) but cannot read its CR3; no guest
 * introspection needed.  Fetches before that and kernel-mode fetches are
 * stepped silently, as foreign fetches are.  Not with watched gates.
 */
#define SVMTRACE_TARGET_F_ADOPT_CR3 (1u << 3)

/*
 * A thread's first instruction: first_rip is where every new thread of the
 * guest returns to user mode for the first time (Windows x64:
 * ntdll!LdrInitializeThunk).  With FIRST, such a return under a targeted CR3
 * starts stepping there: the thread is traced from its first instruction
 * (a new session, or the vCPU's open one goes on).  nr_gates may be 0.
 */
#define SVMTRACE_TARGET_F_FIRST (1u << 4)
/*
 * Ask the controller about new address spaces: a return to user mode at
 * first_rip under a CR3 that is not targeted holds that vCPU before the
 * instruction runs, until SVMTRACE_DECIDE answers (SVMTRACE_ASKS lists the
 * held vCPUs; the control fd polls readable while one is held).  nr_cr3
 * and nr_gates may be 0.
 */
#define SVMTRACE_TARGET_F_ASK (1u << 5)
/*
 * Hide the tracer's time: while a session steps the target in user mode,
 * its RDTSC and RDTSCP (and so the clocks built on them: the Hyper-V
 * reference TSC page, kvmclock in the vDSO) return a virtual TSC that
 * advances by the native cost of each traced instruction (time), and by
 * real time wherever the target is not stepped (docs/kmod.md, "Virtual
 * time").  Kernel-mode reads, and every other thread's, are the real TSC.
 */
#define SVMTRACE_TARGET_F_HIDE_TIME (1u << 6)
/*
 * Record memory operands: every INSTRUCTION and SESSION_START slot carries
 * the accesses of the instruction it records (struct svmtrace_slot_mem;
 * the rings have SVMTRACE_RING_F_MEM), so ring_slots is at most
 * SVMTRACE_MAX_MEM_RING_SLOTS.  Every step then takes KVM's full exit path
 * (docs/kmod.md, "Memory operands").
 */
#define SVMTRACE_TARGET_F_MEM (1u << 7)

/* svmtrace_slot.reason of a SESSION_START that no gate opened (FROM_NEXT) */
#define SVMTRACE_SESSION_FROM_NEXT 0xffffffffu
/* ... that a thread's first instruction opened (FIRST) */
#define SVMTRACE_SESSION_FIRST 0xfffffffeu

/* svmtrace_target.policy */
enum svmtrace_policy {
	SVMTRACE_POLICY_DROP = 0,	/* full ring: count the step as dropped */
	SVMTRACE_POLICY_BLOCK = 1,	/* full ring: the vCPU waits for room */
};

/* svmtrace_gate.flags */
/*
 * The gate is the guest-physical page that va maps in the four-level
 * tables at dtb, whenever the guest maps it: gpa must be 0.  Until then the
 * table the walk stops at is write-watched (every guest write to that one
 * page is emulated), and the gate closes on the page as soon as an entry
 * maps it.  For an entry page that Windows has not brought in yet.
 */
#define SVMTRACE_GATE_F_WATCH (1u << 0)

struct svmtrace_gate {
	__u64 gpa;			/* 4 KiB aligned, inside guest memory (0 with WATCH) */
	__u32 id;			/* session-start reason; not SVMTRACE_SESSION_* */
	__u32 flags;			/* SVMTRACE_GATE_F_* */
	__u64 va;			/* WATCH: 4 KiB aligned canonical guest-virtual page; else 0 */
	__u64 dtb;			/* WATCH: the page-table root (a CR3 value); else 0 */
};

/* Half-open RIP range [start, end) of steps to record. */
struct svmtrace_rip_range {
	__u64 start;
	__u64 end;
};

/*
 * svmtrace_target.time: what a traced step adds to the virtual TSC, in
 * guest TSC cycles (SVMTRACE_TARGET_F_HIDE_TIME; all 0 without it).  A 0
 * field takes the default.
 */
struct svmtrace_time_costs {
	__u32 insn_x256;		/* an instruction, in 1/256 cycles: 1..65536 (256) */
	__u32 tsc_read;			/* an RDTSC or RDTSCP: 1..65536 (40) */
	__u32 exit;			/* an instruction KVM completes (CPUID, I/O, ...), on */
					/* top of the time KVM took: 1..1048576 (1360) */
	__u32 reserved;			/* must be 0 */
};

#define SVMTRACE_TIME_INSN_X256 256
#define SVMTRACE_TIME_TSC_READ 40
#define SVMTRACE_TIME_EXIT 1360
#define SVMTRACE_TIME_MAX_INSN_X256 65536
#define SVMTRACE_TIME_MAX_TSC_READ 65536
#define SVMTRACE_TIME_MAX_EXIT (1u << 20)

/* SVMTRACE_SET_TARGET (only while not armed) */
struct svmtrace_target {
	__u32 flags;			/* SVMTRACE_TARGET_F_* */
	__u32 policy;			/* enum svmtrace_policy */
	__u32 nr_cr3;			/* 1..SVMTRACE_MAX_CR3 (0 with ADOPT_CR3) */
	__u32 nr_gates;			/* 1..SVMTRACE_MAX_GATES (0 with FROM_NEXT) */
	__u32 nr_ranges;		/* 0 (record every RIP)..SVMTRACE_MAX_RANGES */
	__u32 ring_slots;		/* power of two, 0 = default */
	__u32 wake_batch;		/* initial ring wake_batch, 0 = capacity / 16 */
	__u32 reserved;			/* must be 0 */
	__u64 cr3[SVMTRACE_MAX_CR3];	/* compared on bits 51:12 */
	struct svmtrace_gate gates[SVMTRACE_MAX_GATES];
	struct svmtrace_rip_range ranges[SVMTRACE_MAX_RANGES];
	__u64 first_rip;		/* FIRST or ASK: a canonical user address; else 0 */
	struct svmtrace_time_costs time;
};

/* SVMTRACE_GET_RING (while armed or stopped): one fd per vCPU, once. */
struct svmtrace_ring_request {
	__u32 vcpu;			/* in: vCPU index */
	__s32 fd;			/* out: ring fd (O_CLOEXEC), mmap + poll */
	__u64 mmap_size;		/* out: bytes to mmap at offset 0 */
};

/* svmtrace_capture_status.state */
enum svmtrace_capture_state {
	SVMTRACE_STATE_DETACHED = 0,
	SVMTRACE_STATE_ATTACHED = 1,	/* no target yet */
	SVMTRACE_STATE_TARGETED = 2,	/* target set, not armed */
	SVMTRACE_STATE_ARMED = 3,
	SVMTRACE_STATE_PAUSED = 4,	/* armed, steps not recorded */
};

struct svmtrace_counters {
	__u64 npf_exits;		/* gate fetch faults seen */
	__u64 db_exits;			/* single-step #DB exits consumed */
	__u64 emulated_steps;		/* steps KVM completed itself (CPUID, I/O...) */
	__u64 records;			/* slots published */
	__u64 drops;			/* slots lost to a full ring */
	__u64 bytes;			/* bytes published */
	__u64 sessions;			/* sessions started */
	__u64 session_ends;
	/*
	 * What an exit audit needs to balance #DB exits against records
	 * (docs/abi.md): #DB exits of this vCPU that were no step of ours,
	 * steps (db_exits + emulated_steps) that produced no slot, and
	 * session ends no step produced (stop, a TF lost at a VM exit, a #DB
	 * handed to the guest's handler).
	 */
	__u64 db_foreign;
	__u64 steps_unrecorded;
	__u64 stepless_ends;
};

/* svmtrace_vcpu_status.flags */
#define SVMTRACE_VCPU_F_SESSION (1u << 0)	/* a session is open */
#define SVMTRACE_VCPU_F_WAITING (1u << 1)	/* blocked on a full ring */

struct svmtrace_vcpu_status {
	__u32 vcpu;
	__u32 flags;			/* SVMTRACE_VCPU_F_* */
	__u32 vcpu_id;			/* KVM's vcpu_id (APIC ID), which kvm's tracepoints report */
	__u32 reserved;
	struct svmtrace_counters counters;
};

/* SVMTRACE_STATUS */
struct svmtrace_capture_status {
	__u32 state;			/* enum svmtrace_capture_state */
	__u32 flags;			/* target flags */
	__u32 policy;
	__u32 nr_vcpus;			/* traced vCPUs (entries in vcpus[]) */
	__u32 nr_gates;
	__u32 nr_open_gates;		/* gates whose page is executable now */
	__u32 nr_cr3;
	__u32 nr_watching;		/* WATCH gates whose page is not mapped yet */
	__u64 sequence;			/* next global sequence number */
	struct svmtrace_counters total;
	struct svmtrace_vcpu_status vcpus[SVMTRACE_MAX_STATUS_VCPUS];
	__u32 nr_asking;		/* vCPUs held for SVMTRACE_DECIDE */
	__u32 reserved;
	/*
	 * Threads of the target in a system call whose way back was forgotten
	 * because more were parked at once than the kernel keeps: each of
	 * them lacks the record of that system call (docs/abi.md).
	 */
	__u64 parks_evicted;
};

/*
 * SVMTRACE_VERSION (any time, attached or not): which tracer is loaded.  A
 * controller refuses a module whose abi_version or release differs from
 * what it was built for / the running kernel.
 */
struct svmtrace_version {
	__u32 abi_version;		/* SVMTRACE_ABI_VERSION of the module */
	__u32 flags;			/* 0 */
	char release[64];		/* kernel release the module was built for */
};

/*
 * SVMTRACE_READ_GPA (attached): copy [gpa, gpa + len) of guest-physical
 * memory into the caller's buf.  All or nothing: ENXIO when a page of the
 * range is not guest RAM (MMIO, a hole, past the end), EFAULT when the
 * VMM's memory behind it cannot be read or buf is not writable.  Nothing
 * stays pinned after the call.
 */
#define SVMTRACE_MAX_READ (1u << 20)
struct svmtrace_gpa_read {
	__u64 gpa;
	__u64 buf;			/* user pointer */
	__u32 len;			/* 1..SVMTRACE_MAX_READ */
	__u32 flags;			/* must be 0 */
	__u64 reserved;			/* must be 0 */
};

/* svmtrace_vcpu_state.flags */
#define SVMTRACE_VCPU_STATE_F_RUNNING (1u << 0)	/* in KVM_RUN: values are from its last exit */
#define SVMTRACE_VCPU_STATE_F_GUEST_MODE (1u << 1)	/* running a nested guest of its own */

/*
 * SVMTRACE_GET_VCPU_STATE (attached): what introspection needs from one
 * vCPU, read without stopping it (KVM refuses vCPU ioctls from any process
 * but the VMM).  While the vCPU runs, the values are those of its last
 * VM exit; CR3 and GS base then change with what the guest runs.
 */
struct svmtrace_vcpu_state {
	__u32 vcpu;			/* in: vCPU index */
	__u32 flags;			/* out: SVMTRACE_VCPU_STATE_F_* */
	__u64 rip;
	__u64 rsp;
	__u64 rflags;			/* the guest's own (our TF hidden) */
	__u64 cr0;
	__u64 cr3;
	__u64 cr4;
	__u64 efer;
	__u64 lstar;
	__u64 gs_base;
	__u64 kernel_gs_base;
	__u64 fs_base;
	__u64 idtr_base;
	__u64 gdtr_base;
	__u32 idtr_limit;
	__u32 gdtr_limit;
	__u32 cpl;
	__u32 reserved;
};

/*
 * SVMTRACE_ASKS (armed): the vCPUs an ASK target holds at a thread's first
 * instruction, waiting for SVMTRACE_DECIDE.
 */
struct svmtrace_ask {
	__u32 vcpu;
	__u32 reserved;
	__u64 cr3;			/* the address space, as the vCPU has it */
	__u64 rip;			/* the target's first_rip */
	__u64 rsp;
	__u64 gs_base;			/* the thread's (Windows x64: its TEB) */
};

struct svmtrace_asks {
	__u32 nr;			/* out: entries of asks[] */
	__u32 reserved;
	struct svmtrace_ask asks[SVMTRACE_MAX_STATUS_VCPUS];
};

/* svmtrace_decision.verdict */
enum svmtrace_verdict {
	SVMTRACE_VERDICT_FOREIGN = 0,	/* not the target's: it runs on untraced */
	SVMTRACE_VERDICT_TARGET = 1,	/* add_cr3[] and gates[] join the target */
};

#define SVMTRACE_MAX_DECISION_CR3 2
#define SVMTRACE_MAX_DECISION_GATES 1

/*
 * SVMTRACE_DECIDE (armed): release the vCPU held at a thread's first
 * instruction under cr3.  TARGET adds the CR3s and gates first (checked as
 * SET_TARGET checks them); with FIRST the thread is then traced from that
 * instruction.
 */
struct svmtrace_decision {
	__u32 vcpu;			/* the vCPU that asks */
	__u32 verdict;			/* enum svmtrace_verdict */
	__u64 cr3;			/* the ask's cr3 */
	__u32 nr_cr3;			/* TARGET: 0..SVMTRACE_MAX_DECISION_CR3 */
	__u32 nr_gates;			/* TARGET: 0..SVMTRACE_MAX_DECISION_GATES */
	__u64 add_cr3[SVMTRACE_MAX_DECISION_CR3];
	struct svmtrace_gate gates[SVMTRACE_MAX_DECISION_GATES];
};

#define SVMTRACE_ATTACH _IOW(SVMTRACE_IOC_MAGIC, 0x01, struct svmtrace_attach)
#define SVMTRACE_SET_TARGET _IOW(SVMTRACE_IOC_MAGIC, 0x02, struct svmtrace_target)
#define SVMTRACE_ARM _IO(SVMTRACE_IOC_MAGIC, 0x03)
#define SVMTRACE_STOP _IO(SVMTRACE_IOC_MAGIC, 0x04)
#define SVMTRACE_PAUSE _IO(SVMTRACE_IOC_MAGIC, 0x05)
#define SVMTRACE_RESUME _IO(SVMTRACE_IOC_MAGIC, 0x06)
#define SVMTRACE_STATUS _IOR(SVMTRACE_IOC_MAGIC, 0x07, struct svmtrace_capture_status)
#define SVMTRACE_GET_RING _IOWR(SVMTRACE_IOC_MAGIC, 0x08, struct svmtrace_ring_request)
#define SVMTRACE_DETACH _IO(SVMTRACE_IOC_MAGIC, 0x09)
#define SVMTRACE_VERSION _IOR(SVMTRACE_IOC_MAGIC, 0x0a, struct svmtrace_version)
#define SVMTRACE_READ_GPA _IOW(SVMTRACE_IOC_MAGIC, 0x0b, struct svmtrace_gpa_read)
#define SVMTRACE_GET_VCPU_STATE _IOWR(SVMTRACE_IOC_MAGIC, 0x0c, struct svmtrace_vcpu_state)
#define SVMTRACE_ASKS _IOR(SVMTRACE_IOC_MAGIC, 0x0d, struct svmtrace_asks)
#define SVMTRACE_DECIDE _IOW(SVMTRACE_IOC_MAGIC, 0x0e, struct svmtrace_decision)
/*
 * SVMTRACE_END_ASKS (armed, an ASK target): ask no more.  From here on a
 * return to first_rip under a CR3 that is not targeted runs on untraced,
 * and the vCPUs drop the IRET intercept asking needed everywhere (each at
 * its next entry); vCPUs held already stay held until decided.  The
 * target's FIRST goes on; SVMTRACE_STATUS reports the flags without ASK.
 */
#define SVMTRACE_END_ASKS _IO(SVMTRACE_IOC_MAGIC, 0x0f)

#ifdef __cplusplus
#define SVMTRACE_STATIC_ASSERT static_assert
#else
#define SVMTRACE_STATIC_ASSERT _Static_assert
#endif
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_slot) == 192, "slot is 3 cache lines");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_slot_xstate) == 768, "xstate slot is 12 lines");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_slot_access) == 80, "access layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_slot_mem) == 1344, "mem tail is 21 lines");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_ring_header) == 192, "ring header is 3 lines");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_slot, kind) == 168, "kind after gprs");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_slot, gs_base) == 184, "gs_base last");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_target) == 2488, "target layout");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_target, time) == 2472, "time after first_rip");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_time_costs) == 16, "time costs layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_capture_status) == 6800, "status layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_asks) == 8 + 40 * 64, "asks layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_decision) == 72, "decision layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_version) == 72, "version layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_gpa_read) == 32, "gpa read layout");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_vcpu_state) == 128, "vcpu state layout");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_ring_header, head) == 64,
		       "producer line");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_ring_header, tail) == 128,
		       "consumer line");

#endif /* SVMTRACE_ABI_H */
