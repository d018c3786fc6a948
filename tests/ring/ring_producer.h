/* SPDX-License-Identifier: GPL-2.0 */
/* Tests and benchmarks only: a userspace ring producer (not libsvmtrace API). */
#ifndef SVMTRACE_TESTS_RING_PRODUCER_H
#define SVMTRACE_TESTS_RING_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include <svmtrace/ring.h>

/*
 * The userspace producer: the kernel's protocol (ring.c in kmod) over a
 * ring in memory.  Reserve a slot, fill it, publish; when reserve fails
 * the step is dropped (drop policy) or the caller waits (block policy).
 */
struct ring_producer {
	struct svmtrace_ring_header *hdr;
	struct svmtrace_slot *slots;
	uint32_t capacity;
	uint64_t head;
	uint64_t tail_cache; /* consumer's tail when last read */
	uint64_t produced;
	uint64_t dropped;
	uint64_t pending_drops;
};

/* Lay out a ring of @capacity slots in @mem; returns the bytes it needs
 * when @mem is NULL. */
size_t ring_memory_init(void *mem, uint32_t capacity, uint32_t vcpu);
void ring_producer_init(struct ring_producer *p, void *mem);
struct svmtrace_slot *ring_producer_reserve(struct ring_producer *p);
void ring_producer_publish(struct ring_producer *p);
void ring_producer_drop(struct ring_producer *p);
/* Mark the ring closed (no slot will follow). */
void ring_producer_close(struct ring_producer *p);

#endif
