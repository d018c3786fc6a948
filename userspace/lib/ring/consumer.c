// SPDX-License-Identifier: GPL-2.0
/*
 * Ring consumer: map a per-vCPU ring and check that its header describes a
 * ring this library can read before anything trusts it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <svmtrace/ring.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int check_header(const struct svmtrace_ring_header *h, size_t size, char *err, size_t errlen)
{
	if (h->magic != SVMTRACE_RING_MAGIC)
		return fail(err, errlen, "ring header: magic 0x%08x, expected 0x%08x", h->magic,
			    SVMTRACE_RING_MAGIC);
	if (h->abi_version != SVMTRACE_ABI_VERSION)
		return fail(err, errlen, "ring header: ABI version %u, this build reads %u",
			    h->abi_version, SVMTRACE_ABI_VERSION);
	if (h->slot_size != sizeof(struct svmtrace_slot))
		return fail(err, errlen, "ring header: slot size %u, expected %zu", h->slot_size,
			    sizeof(struct svmtrace_slot));
	if (!h->capacity || (h->capacity & (h->capacity - 1)))
		return fail(err, errlen, "ring header: capacity %u is not a power of two",
			    h->capacity);
	if (h->data_offset != SVMTRACE_RING_HEADER_SIZE ||
	    h->data_offset + (uint64_t)h->capacity * h->slot_size > size)
		return fail(err, errlen,
			    "ring header: %u slots at offset %llu do not fit in %zu bytes",
			    h->capacity, (unsigned long long)h->data_offset, size);
	return 0;
}

int svmtrace_ring_use_memory(struct svmtrace_ring_consumer *c, void *mem, size_t size, char *err,
			     size_t errlen)
{
	struct svmtrace_ring_header *h = mem;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (size < SVMTRACE_RING_HEADER_SIZE)
		return fail(err, errlen, "ring of %zu bytes is smaller than its header", size);
	if (check_header(h, size, err, errlen))
		return -1;
	c->hdr = h;
	c->slots = (struct svmtrace_slot *)((char *)mem + h->data_offset);
	c->capacity = h->capacity;
	c->tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	return 0;
}

int svmtrace_ring_map(struct svmtrace_ring_consumer *c, int fd, size_t size, char *err,
		      size_t errlen)
{
	void *mem;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return fail(err, errlen, "mmap of ring fd %d (%zu bytes): %s", fd, size,
			    strerror(errno));
	if (svmtrace_ring_use_memory(c, mem, size, err, errlen)) {
		munmap(mem, size);
		return -1;
	}
	c->fd = fd;
	c->map_size = size;
	return 0;
}

void svmtrace_ring_unmap(struct svmtrace_ring_consumer *c)
{
	if (c->map_size)
		munmap(c->hdr, c->map_size);
	if (c->fd >= 0)
		close(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void svmtrace_ring_counts(const struct svmtrace_ring_consumer *c, struct svmtrace_ring_counts *n)
{
	n->head = __atomic_load_n(&c->hdr->head, __ATOMIC_ACQUIRE);
	n->produced = __atomic_load_n(&c->hdr->produced, __ATOMIC_RELAXED);
	n->dropped = __atomic_load_n(&c->hdr->dropped, __ATOMIC_RELAXED);
	n->wakeups = __atomic_load_n(&c->hdr->wakeups, __ATOMIC_RELAXED);
}
