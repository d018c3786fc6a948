// SPDX-License-Identifier: GPL-2.0
/*
 * Reads from a mapped file described by ranges (guest-physical address ->
 * file offset), shared by the raw and the ELF-core drivers.
 */
#include "lib/vmi/mem_cache.h"
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/vmi_error.h"

#include <stdlib.h>
#include <string.h>

/* The range holding @gpa, or NULL.  Ranges are sorted and disjoint. */
static const struct vmi_mem_range *range_find(const struct svmtrace_vmi_mem *mem, uint64_t gpa)
{
	unsigned int lo = 0, hi = mem->nr_ranges;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct vmi_mem_range *r = &mem->ranges[mid];

		if (gpa < r->gpa)
			hi = mid;
		else if (gpa - r->gpa >= r->mem_size)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

int mem_mapped_read(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
		    struct svmtrace_error *err)
{
	uint8_t *dst = buf;

	while (len) {
		const struct vmi_mem_range *r = range_find(mem, gpa);
		uint64_t in = gpa - (r ? r->gpa : 0);
		size_t n;

		if (!r)
			return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
					"GPA 0x%llx is outside the memory in %s",
					(unsigned long long)gpa, mem->name);
		n = r->mem_size - in < len ? (size_t)(r->mem_size - in) : len;
		if (in >= r->file_size) {
			memset(dst, 0, n);
		} else {
			size_t have = r->file_size - in < n ? (size_t)(r->file_size - in) : n;

			if (!mem->cache)
				memcpy(dst, mem->map + r->offset + in, have);
			else if (mem_cache_read(mem->cache, r->offset + in, dst, have, mem->name,
						err))
				return err ? err->status : SVMTRACE_E_IO;
			memset(dst + have, 0, n - have);
		}
		dst += n;
		gpa += n;
		len -= n;
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct vmi_mem_range *x = a, *y = b;

	return x->gpa < y->gpa ? -1 : x->gpa > y->gpa;
}

int mem_ranges_finish(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	unsigned int i;

	qsort(mem->ranges, mem->nr_ranges, sizeof(*mem->ranges), range_cmp);
	for (i = 0; i < mem->nr_ranges; i++) {
		const struct vmi_mem_range *r = &mem->ranges[i];

		if (r->mem_size == 0 || r->gpa + r->mem_size < r->gpa)
			return vmi_fail(err, SVMTRACE_E_FORMAT,
					"%s: memory range at GPA 0x%llx has a bad size 0x%llx",
					mem->name, (unsigned long long)r->gpa,
					(unsigned long long)r->mem_size);
		if (r->file_size > r->mem_size || r->offset > mem->map_len ||
		    r->file_size > mem->map_len - r->offset)
			return vmi_fail(err, SVMTRACE_E_FORMAT,
					"%s: memory range at GPA 0x%llx needs file bytes "
					"0x%llx+0x%llx, beyond the file's %zu bytes",
					mem->name, (unsigned long long)r->gpa,
					(unsigned long long)r->offset,
					(unsigned long long)r->file_size, mem->map_len);
		if (i && mem->ranges[i - 1].gpa + mem->ranges[i - 1].mem_size > r->gpa)
			return vmi_fail(err, SVMTRACE_E_FORMAT,
					"%s: memory ranges overlap at GPA 0x%llx", mem->name,
					(unsigned long long)r->gpa);
	}
	return 0;
}
