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

__attribute__((format(printf, 3, 4))) static int fail(struct svmtrace_error *err, int status,
						      const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	err->status = status;
	err->offset = 0;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return status;
}

static int check_header(const struct svmtrace_ring_header *h, size_t size,
			struct svmtrace_error *err)
{
	if (h->magic != SVMTRACE_RING_MAGIC)
		return fail(err, SVMTRACE_E_MISMATCH, "ring header: magic 0x%08x, expected 0x%08x",
			    h->magic, SVMTRACE_RING_MAGIC);
	if (h->abi_version != SVMTRACE_ABI_VERSION)
		return fail(err, SVMTRACE_E_MISMATCH,
			    "ring header: ABI version %u, this build reads %u", h->abi_version,
			    SVMTRACE_ABI_VERSION);
	if (h->flags & ~(SVMTRACE_RING_F_XSTATE | SVMTRACE_RING_F_MEM))
		return fail(err, SVMTRACE_E_MISMATCH, "ring header: unknown flags 0x%x", h->flags);
	if (h->slot_size != svmtrace_ring_slot_size(h->flags))
		return fail(err, SVMTRACE_E_MISMATCH, "ring header: slot size %u, expected %zu%s%s",
			    h->slot_size, svmtrace_ring_slot_size(h->flags),
			    h->flags & SVMTRACE_RING_F_XSTATE ? " (xstate ring)" : "",
			    h->flags & SVMTRACE_RING_F_MEM ? " (mem ring)" : "");
	if (!h->capacity || (h->capacity & (h->capacity - 1)))
		return fail(err, SVMTRACE_E_FORMAT,
			    "ring header: capacity %u is not a power of two", h->capacity);
	if (h->data_offset != SVMTRACE_RING_HEADER_SIZE ||
	    h->data_offset + (uint64_t)h->capacity * h->slot_size > size)
		return fail(err, SVMTRACE_E_FORMAT,
			    "ring header: %u slots at offset %llu do not fit in %zu bytes",
			    h->capacity, (unsigned long long)h->data_offset, size);
	return 0;
}

int svmtrace_ring_use_memory(void *mem, size_t size, struct svmtrace_ring_consumer *c,
			     struct svmtrace_error *err)
{
	struct svmtrace_ring_header *h = mem;
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (size < SVMTRACE_RING_HEADER_SIZE)
		return fail(err, SVMTRACE_E_FORMAT, "ring of %zu bytes is smaller than its header",
			    size);
	ret = check_header(h, size, err);
	if (ret)
		return ret;
	c->hdr = h;
	c->slots = (struct svmtrace_slot *)((char *)mem + h->data_offset);
	c->slot_size = h->slot_size;
	c->flags = h->flags;
	c->capacity = h->capacity;
	c->tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	return 0;
}

int svmtrace_ring_map(int fd, size_t size, struct svmtrace_ring_consumer *c,
		      struct svmtrace_error *err)
{
	void *mem;
	int ret;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return fail(err, SVMTRACE_E_IO, "mmap of ring fd %d (%zu bytes): %s", fd, size,
			    strerror(errno));
	ret = svmtrace_ring_use_memory(mem, size, c, err);
	if (ret) {
		munmap(mem, size);
		return ret;
	}
	c->fd = fd;
	c->map_size = size;
	return 0;
}

void svmtrace_ring_unmap(struct svmtrace_ring_consumer *c)
{
	if (!c)
		return;
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
