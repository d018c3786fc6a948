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

#include <linux/types.h>

#define SVMTRACE_ABI_VERSION 1

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
};

/* svmtrace_slot.flags */
#define SVMTRACE_SLOT_F_GAP	(1u << 0)	/* dropped > 0: slots were lost before this one */
#define SVMTRACE_SLOT_F_KERNEL	(1u << 1)	/* RIP was in kernel mode (CPL 0) */
#define SVMTRACE_SLOT_F_XSTATE	(1u << 2)	/* the svmtrace_slot_xstate tail is valid */

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
	__u32 vcpu;			/* vCPU index that produced the step */
	__u32 reserved;
};

/*
 * A ring created with SVMTRACE_RING_F_XSTATE carries this larger slot
 * (768 bytes, twelve cache lines): the base slot plus YMM0-15.
 */
struct svmtrace_slot_xstate {
	struct svmtrace_slot base;
	__u64 xstate_bv;		/* XSAVE header bitmap of the captured state */
	__u64 reserved[7];
	__u64 ymm[16][4];		/* YMMn as four little-endian quadwords */
};

#define SVMTRACE_RING_MAGIC	0x474e5254u	/* "TRNG" */
#define SVMTRACE_RING_F_XSTATE	(1u << 0)

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
	__u8 pad1[32];

	/* consumer cache line */
	__u64 tail;			/* slots consumed */
	__u32 wake_batch;		/* wake the consumer every N slots (0 = 1) */
	__u32 reserved;
	__u8 pad2[48];
};

#define SVMTRACE_RING_HEADER_SIZE 4096

#ifdef __cplusplus
#define SVMTRACE_STATIC_ASSERT static_assert
#else
#define SVMTRACE_STATIC_ASSERT _Static_assert
#endif
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_slot) == 192, "slot is 3 cache lines");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_slot_xstate) == 768, "xstate slot is 12 lines");
SVMTRACE_STATIC_ASSERT(sizeof(struct svmtrace_ring_header) == 192, "ring header is 3 lines");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_slot, kind) == 168, "kind after gprs");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_ring_header, head) == 64,
		       "producer line");
SVMTRACE_STATIC_ASSERT(__builtin_offsetof(struct svmtrace_ring_header, tail) == 128,
		       "consumer line");

#endif /* SVMTRACE_ABI_H */
