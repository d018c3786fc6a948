// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/mem_cache.h"
#include "lib/vmi/vmi_error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CACHE_PAGE 4096ULL

struct mem_cache {
	int fd;			/* file sources: closed with the cache; else -1 */
	mem_cache_fill_fn fill; /* live sources: fills one page */
	void *ctx;
	uint64_t tags[MEM_CACHE_PAGES]; /* file page index + 1; 0 = empty */
	uint8_t pages[MEM_CACHE_PAGES][CACHE_PAGE];
};

struct mem_cache *mem_cache_new(int fd)
{
	struct mem_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->fd = fd;
	return c;
}

struct mem_cache *mem_cache_new_fill(mem_cache_fill_fn fill, void *ctx)
{
	struct mem_cache *c = calloc(1, sizeof(*c));

	if (c) {
		c->fd = -1;
		c->fill = fill;
		c->ctx = ctx;
	}
	return c;
}

void mem_cache_invalidate(struct mem_cache *c)
{
	if (c)
		memset(c->tags, 0, sizeof(c->tags));
}

void mem_cache_free(struct mem_cache *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

/* The cached copy of file page @index, read on a miss (short at EOF). */
static const uint8_t *page(struct mem_cache *c, uint64_t index, const char *name,
			   struct svmtrace_error *err)
{
	size_t slot = (size_t)(index % MEM_CACHE_PAGES);
	ssize_t got;

	if (c->tags[slot] == index + 1)
		return c->pages[slot];
	c->tags[slot] = 0;
	if (c->fill) {
		if (c->fill(c->ctx, index * CACHE_PAGE, c->pages[slot], err))
			return NULL;
		c->tags[slot] = index + 1;
		return c->pages[slot];
	}
	do
		got = pread(c->fd, c->pages[slot], CACHE_PAGE, (off_t)(index * CACHE_PAGE));
	while (got < 0 && errno == EINTR);
	if (got < 0) {
		vmi_fail(err, SVMTRACE_E_IO, "%s: read at offset 0x%llx: %s", name,
			 (unsigned long long)(index * CACHE_PAGE), strerror(errno));
		return NULL;
	}
	memset(c->pages[slot] + got, 0, CACHE_PAGE - (size_t)got);
	c->tags[slot] = index + 1;
	return c->pages[slot];
}

int mem_cache_read(struct mem_cache *c, uint64_t off, void *buf, size_t len, const char *name,
		   struct svmtrace_error *err)
{
	uint8_t *dst = buf;

	while (len) {
		size_t in = (size_t)(off % CACHE_PAGE);
		size_t n = CACHE_PAGE - in < len ? (size_t)(CACHE_PAGE - in) : len;
		const uint8_t *p = page(c, off / CACHE_PAGE, name, err);

		if (!p)
			return err ? err->status : SVMTRACE_E_IO;
		memcpy(dst, p + in, n);
		dst += n;
		off += n;
		len -= n;
	}
	return 0;
}
