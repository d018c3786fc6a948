/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsvmtrace: the consumer side of a per-vCPU ring (abi.h).  The producer
 * is the kernel (kmod/src/ring.c); tests and benchmarks have their own
 * userspace copy of its protocol in tests/ring/.
 *
 * Errors: the library's one convention (svmtrace/status.h).
 *
 * Consumer loop:
 *
 *	while ((n = svmtrace_ring_peek(&c, &slots)) > 0) {
 *		use svmtrace_ring_slot(&c, slots, 0..n);
 *		svmtrace_ring_release(&c, n);
 *	}
 *	then poll() the ring fd (POLLIN: more slots; POLLHUP: capture stopped)
 *
 * peek returns a contiguous run (it stops at the wrap point), so a batch is
 * one pointer and a count.  The consumer must poll() whenever it has drained
 * the ring: with the block policy that poll() is what releases a vCPU
 * waiting for room.
 */
#ifndef SVMTRACE_RING_H
#define SVMTRACE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <svmtrace/abi.h>
#include <svmtrace/status.h>

struct svmtrace_ring_consumer {
	int fd; /* -1 for a ring in plain memory */
	struct svmtrace_ring_header *hdr;
	struct svmtrace_slot *slots;
	uint32_t slot_size; /* bytes from one slot to the next (svmtrace_ring_slot_bytes()) */
	uint32_t flags;	    /* the header's SVMTRACE_RING_F_* */
	size_t map_size;    /* bytes mapped (0: memory not ours) */
	uint32_t capacity;
	uint64_t tail; /* our copy of hdr->tail */
};

/*
 * mmap the ring behind @fd (@size from SVMTRACE_GET_RING) into @c and
 * validate its header: 0, SVMTRACE_E_IO (mmap failed), SVMTRACE_E_MISMATCH
 * (magic, ABI version or slot size of another build) or SVMTRACE_E_FORMAT
 * (capacity or layout that cannot be).  On success @c owns @fd.
 */
int svmtrace_ring_map(int fd, size_t size, struct svmtrace_ring_consumer *c,
		      struct svmtrace_error *err);
/* Consume a ring that lives in memory (tests, benchmarks); same checks. */
int svmtrace_ring_use_memory(void *mem, size_t size, struct svmtrace_ring_consumer *c,
			     struct svmtrace_error *err);
/* Unmap (a mapped ring) and close its fd.  Accepts NULL. */
void svmtrace_ring_unmap(struct svmtrace_ring_consumer *c);

/* The slot size a ring with header flags @flags has (SVMTRACE_RING_F_*). */
static inline size_t svmtrace_ring_slot_size(uint32_t flags)
{
	return svmtrace_ring_slot_bytes(flags);
}

/*
 * Published slots not yet released, as one contiguous run at *first:
 * slot_size bytes apart (svmtrace_ring_slot()).
 */
static inline size_t svmtrace_ring_peek(struct svmtrace_ring_consumer *c,
					const struct svmtrace_slot **first)
{
	uint64_t head = __atomic_load_n(&c->hdr->head, __ATOMIC_ACQUIRE);
	uint64_t avail = head - c->tail;
	uint64_t index = c->tail & (c->capacity - 1);

	if (avail > c->capacity) /* never trust a corrupt header */
		avail = c->capacity;
	if (avail > c->capacity - index)
		avail = c->capacity - index;
	*first = (const struct svmtrace_slot *)((const char *)c->slots + index * c->slot_size);
	return (size_t)avail;
}

/*
 * Slot @i of a run from svmtrace_ring_peek().  In an xstate ring a slot
 * with SVMTRACE_SLOT_F_XSTATE is the base of a struct svmtrace_slot_xstate.
 */
static inline const struct svmtrace_slot *svmtrace_ring_slot(const struct svmtrace_ring_consumer *c,
							     const struct svmtrace_slot *first,
							     size_t i)
{
	return (const struct svmtrace_slot *)((const char *)first + i * c->slot_size);
}

/*
 * The memory tail of @slot (a slot of @c) when it has one
 * (SVMTRACE_SLOT_F_MEM in a ring with SVMTRACE_RING_F_MEM), else NULL.
 * Its nr is clamped by the caller: the ring is shared memory.
 */
static inline const struct svmtrace_slot_mem *
svmtrace_ring_slot_mem(const struct svmtrace_ring_consumer *c, const struct svmtrace_slot *slot)
{
	if (!(c->flags & SVMTRACE_RING_F_MEM) || !(slot->flags & SVMTRACE_SLOT_F_MEM))
		return NULL;
	return (const struct svmtrace_slot_mem *)((const char *)slot +
						  svmtrace_ring_mem_offset(c->flags));
}

/* Give @n slots back to the producer. */
static inline void svmtrace_ring_release(struct svmtrace_ring_consumer *c, size_t n)
{
	c->tail += n;
	__atomic_store_n(&c->hdr->tail, c->tail, __ATOMIC_RELEASE);
}

/* The producer will publish nothing more (capture stopped). */
static inline bool svmtrace_ring_closed(const struct svmtrace_ring_consumer *c)
{
	return __atomic_load_n(&c->hdr->closed, __ATOMIC_ACQUIRE) != 0;
}

/* Producer counters, as of now. */
struct svmtrace_ring_counts {
	uint64_t head;	   /* slots published */
	uint64_t produced; /* published + dropped */
	uint64_t dropped;
	uint64_t wakeups;
};
void svmtrace_ring_counts(const struct svmtrace_ring_consumer *c, struct svmtrace_ring_counts *n);

#endif
