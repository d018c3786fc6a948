// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace ring producer for tests and benchmarks (not part of libsvmtrace).  It follows the
 * kernel producer (kmod/src/ring.c) step for step: private head and counters, clamped use of the
 * consumer's tail, one slot kept free for a final session_end, gap marking on the first slot after
 * a loss, and a release store of head to publish.
 */
#include <string.h>

#include "ring_producer.h"

size_t ring_memory_init(void *mem, uint32_t capacity, uint32_t vcpu)
{
	size_t size = SVMTRACE_RING_HEADER_SIZE + (size_t)capacity * sizeof(struct svmtrace_slot);
	struct svmtrace_ring_header *h = mem;

	if (!mem)
		return size;
	memset(mem, 0, size);
	h->magic = SVMTRACE_RING_MAGIC;
	h->abi_version = SVMTRACE_ABI_VERSION;
	h->slot_size = sizeof(struct svmtrace_slot);
	h->capacity = capacity;
	h->vcpu = vcpu;
	h->data_offset = SVMTRACE_RING_HEADER_SIZE;
	h->wake_batch = capacity / 16;
	return size;
}

void ring_producer_init(struct ring_producer *p, void *mem)
{
	memset(p, 0, sizeof(*p));
	p->hdr = mem;
	p->slots = (struct svmtrace_slot *)((char *)mem + SVMTRACE_RING_HEADER_SIZE);
	p->capacity = p->hdr->capacity;
}

/* Free slots as of the consumer's tail, clamped like the kernel does. */
static uint64_t ring_free(struct ring_producer *p)
{
	uint64_t used;

	p->tail_cache = __atomic_load_n(&p->hdr->tail, __ATOMIC_ACQUIRE);
	used = p->head - p->tail_cache;
	return used >= p->capacity ? 0 : p->capacity - used;
}

struct svmtrace_slot *ring_producer_reserve(struct ring_producer *p)
{
	/* Only read the consumer's cache line when the last view was full. */
	if (p->head - p->tail_cache >= p->capacity - 1 && ring_free(p) <= 1)
		return NULL;
	return &p->slots[p->head & (p->capacity - 1)];
}

void ring_producer_publish(struct ring_producer *p)
{
	struct svmtrace_slot *slot = &p->slots[p->head & (p->capacity - 1)];

	if (p->pending_drops) {
		slot->flags |= SVMTRACE_SLOT_F_GAP;
		slot->dropped = p->pending_drops;
		p->pending_drops = 0;
	}
	p->produced++;
	__atomic_store_n(&p->hdr->produced, p->produced, __ATOMIC_RELAXED);
	__atomic_store_n(&p->hdr->head, ++p->head, __ATOMIC_RELEASE);
}

void ring_producer_drop(struct ring_producer *p)
{
	p->produced++;
	p->dropped++;
	p->pending_drops++;
	__atomic_store_n(&p->hdr->produced, p->produced, __ATOMIC_RELAXED);
	__atomic_store_n(&p->hdr->dropped, p->dropped, __ATOMIC_RELAXED);
}

void ring_producer_close(struct ring_producer *p)
{
	__atomic_store_n(&p->hdr->closed, 1, __ATOMIC_RELEASE);
}
