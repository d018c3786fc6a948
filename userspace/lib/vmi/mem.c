// SPDX-License-Identifier: GPL-2.0
/*
 * Memory sources: open a file (or caller buffer), pick the driver from its
 * first bytes, and dispatch reads to it.
 */
#include "lib/vmi/mem_cache.h"
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/vmi_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct vmi_mem_ops raw_ops = {
	.kind = "raw",
	.read = mem_mapped_read,
};

static const struct vmi_mem_ops elfcore_ops = {
	.kind = "qemu-elf-core",
	.read = mem_mapped_read,
};

static int mem_parse(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	if (mem_is_elf(mem->map, mem->map_len)) {
		mem->ops = &elfcore_ops;
		return mem_elfcore_parse(mem, err);
	}
	mem->ops = &raw_ops;
	return mem_raw_parse(mem, err);
}

struct svmtrace_vmi_mem *mem_new(const char *name, struct svmtrace_error *err)
{
	struct svmtrace_vmi_mem *mem = calloc(1, sizeof(*mem));

	if (!mem) {
		vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", name);
		return NULL;
	}
	snprintf(mem->name, sizeof(mem->name), "%s", name);
	return mem;
}

int svmtrace_vmi_mem_open_buffer(const void *buf, size_t len, const char *name,
				 struct svmtrace_vmi_mem **out, struct svmtrace_error *err)
{
	struct svmtrace_vmi_mem *mem;
	int rc;

	*out = NULL;
	if (!buf || !len)
		return vmi_fail(err, SVMTRACE_E_FORMAT, "%s: empty memory image", name);
	mem = mem_new(name, err);
	if (!mem)
		return SVMTRACE_E_NOMEM;
	mem->map = buf;
	mem->map_len = len;
	rc = mem_parse(mem, err);
	if (rc) {
		svmtrace_vmi_mem_close(mem);
		return rc;
	}
	*out = mem;
	return 0;
}

int svmtrace_vmi_mem_open(const char *path, struct svmtrace_vmi_mem **out,
			  struct svmtrace_error *err)
{
	struct svmtrace_vmi_mem *mem;
	const uint8_t *map;
	size_t len;
	int fd, rc;

	*out = NULL;
	rc = vmi_map_file(path, &map, &len, &fd, err);
	if (rc)
		return rc;
	mem = mem_new(path, err);
	if (mem)
		mem->cache = mem_cache_new(fd); /* owns fd from here */
	if (!mem || !mem->cache) {		/* the cache did not take the fd */
		close(fd);
		munmap((void *)map, len);
		free(mem);
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", path);
	}
	mem->map = map;
	mem->map_len = len;
	mem->owns_map = 1;
	rc = mem_parse(mem, err);
	if (rc) {
		svmtrace_vmi_mem_close(mem);
		return rc;
	}
	*out = mem;
	return 0;
}

void svmtrace_vmi_mem_close(struct svmtrace_vmi_mem *mem)
{
	if (!mem)
		return;
	if (mem->ops && mem->ops->release)
		mem->ops->release(mem);
	if (mem->owns_map)
		munmap((void *)mem->map, mem->map_len);
	mem_cache_free(mem->cache);
	free(mem->ranges);
	free(mem->vcpus);
	free(mem);
}

int svmtrace_vmi_mem_refresh(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	return mem->ops->refresh ? mem->ops->refresh(mem, err) : 0;
}

const char *svmtrace_vmi_mem_kind(const struct svmtrace_vmi_mem *mem)
{
	return mem->ops->kind;
}

const char *svmtrace_vmi_mem_name(const struct svmtrace_vmi_mem *mem)
{
	return mem->name;
}

int svmtrace_vmi_mem_read(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
			  struct svmtrace_error *err)
{
	if (len > UINT64_MAX - gpa)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: GPA 0x%llx + %zu wraps around",
				mem->name, (unsigned long long)gpa, len);
	return mem->ops->read(mem, gpa, buf, len, err);
}

unsigned int svmtrace_vmi_mem_range_count(const struct svmtrace_vmi_mem *mem)
{
	return mem->nr_ranges;
}

void svmtrace_vmi_mem_range(const struct svmtrace_vmi_mem *mem, unsigned int index, uint64_t *gpa,
			    uint64_t *size)
{
	*gpa = index < mem->nr_ranges ? mem->ranges[index].gpa : 0;
	*size = index < mem->nr_ranges ? mem->ranges[index].mem_size : 0;
}

unsigned int svmtrace_vmi_mem_vcpu_count(const struct svmtrace_vmi_mem *mem)
{
	return mem->nr_vcpus;
}

const struct svmtrace_vmi_vcpu *svmtrace_vmi_mem_vcpu(const struct svmtrace_vmi_mem *mem,
						      unsigned int index)
{
	return index < mem->nr_vcpus ? &mem->vcpus[index] : NULL;
}
