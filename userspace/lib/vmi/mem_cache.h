/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a memory file with pread() (or a live VM's memory through a fill
 * callback) through a small page cache.
 *
 * VMI hops between scattered pages (page tables, one EPROCESS per process),
 * touching each only a few times.  Through a mapping every first touch is a
 * page fault, which costs far more than a pread() on virtualised hosts
 * (measured here: ~150 us against ~5 us), so file-backed guest reads go
 * through this cache and only the file's headers are read from the mapping.
 * Not thread-safe: a memory source serves one thread at a time.
 */
#ifndef SVMTRACE_VMI_MEM_CACHE_H
#define SVMTRACE_VMI_MEM_CACHE_H

#include <svmtrace/vmi.h>

#define MEM_CACHE_PAGES 512 /* 2 MiB, direct-mapped by file page */

struct mem_cache;

struct mem_cache *mem_cache_new(int fd);

/*
 * A cache over a source without a file (a live VM): @fill reads the 4 KiB
 * page at @off (page aligned) into @page, or fails filling @err.  A live
 * guest changes its memory under the cache: mem_cache_invalidate() before
 * every walk that must see the present.
 */
typedef int (*mem_cache_fill_fn)(void *ctx, uint64_t off, uint8_t *page,
				 struct svmtrace_error *err);
struct mem_cache *mem_cache_new_fill(mem_cache_fill_fn fill, void *ctx);
void mem_cache_invalidate(struct mem_cache *c);
void mem_cache_free(struct mem_cache *c);

/* Read file bytes [off, off + len) (the caller checked they exist). */
int mem_cache_read(struct mem_cache *c, uint64_t off, void *buf, size_t len, const char *name,
		   struct svmtrace_error *err);

#endif
