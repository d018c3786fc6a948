/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsvmtrace: the consumer side of a per-vCPU ring (abi.h), and a
 * userspace producer that follows the kernel's protocol exactly, for tests
 * and benchmarks.
 *
 * Consumer loop:
 *
 *	while ((n = svmtrace_ring_peek(&c, &slots)) > 0) {
 *		use slots[0..n);
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

struct svmtrace_ring_consumer {
	int fd; /* -1 for a ring in plain memory */
	struct svmtrace_ring_header *hdr;
	struct svmtrace_slot *slots;
	size_t map_size; /* bytes mapped (0: memory not ours) */
	uint32_t capacity;
	uint64_t tail; /* our copy of hdr->tail */
};

/*
 * mmap the ring behind @fd (@size from SVMTRACE_GET_RING) and validate its
 * header.  On error returns -1 with a message in @err.
 */
int svmtrace_ring_map(struct svmtrace_ring_consumer *c, int fd, size_t size, char *err,
		      size_t errlen);
/* Consume a ring that lives in memory (tests, benchmarks). */
int svmtrace_ring_use_memory(struct svmtrace_ring_consumer *c, void *mem, size_t size, char *err,
			     size_t errlen);
/* Unmap (a mapped ring) and close its fd. */
void svmtrace_ring_unmap(struct svmtrace_ring_consumer *c);

/* Published slots not yet released, as one contiguous run at *first. */
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
	*first = &c->slots[index];
	return (size_t)avail;
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

/*
 * The userspace producer: the kernel's protocol (ring.c in kmod) over a
 * ring in memory.  Reserve a slot, fill it, publish; when reserve fails
 * the step is dropped (drop policy) or the caller waits (block policy).
 */
struct svmtrace_ring_producer {
	struct svmtrace_ring_header *hdr;
	struct svmtrace_slot *slots;
	uint32_t capacity;
	uint64_t head;
	uint64_t tail_cache;		/* consumer's tail when last read */
	uint64_t produced;
	uint64_t dropped;
	uint64_t pending_drops;
};

/* Lay out a ring of @capacity slots in @mem; returns the bytes it needs
 * when @mem is NULL. */
size_t svmtrace_ring_init_memory(void *mem, uint32_t capacity, uint32_t vcpu);
void svmtrace_ring_producer_init(struct svmtrace_ring_producer *p, void *mem);
struct svmtrace_slot *svmtrace_ring_reserve(struct svmtrace_ring_producer *p);
void svmtrace_ring_publish(struct svmtrace_ring_producer *p);
void svmtrace_ring_drop(struct svmtrace_ring_producer *p);
/* Mark the ring closed (no slot will follow). */
void svmtrace_ring_close(struct svmtrace_ring_producer *p);

#endif
