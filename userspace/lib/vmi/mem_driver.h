/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory-source seam.  A driver fills struct svmtrace_vmi_mem: how to
 * read guest-physical bytes and which vCPU registers it knows.  Files (raw
 * image, QEMU ELF core) are mapped and described as ranges of
 * guest-physical address -> file offset; the live-VM driver (mem_live.c,
 * through the kmod) plugs in its own read op and register source instead.
 */
#ifndef SVMTRACE_VMI_MEM_DRIVER_H
#define SVMTRACE_VMI_MEM_DRIVER_H

#include <svmtrace/vmi.h>

struct vmi_mem_ops {
	const char *kind;
	int (*read)(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
		    struct svmtrace_error *err);
	void (*release)(struct svmtrace_vmi_mem *mem); /* driver-private state */
	/* Live sources: drop cached pages, read the registers again. */
	int (*refresh)(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err);
};

/* [gpa, gpa + mem_size) backed by file bytes [offset, offset + file_size). */
struct vmi_mem_range {
	uint64_t gpa;
	uint64_t mem_size;
	uint64_t offset;
	uint64_t file_size; /* < mem_size: the rest reads as zero (ELF p_filesz) */
};

struct svmtrace_vmi_mem {
	const struct vmi_mem_ops *ops;
	char name[256]; /* the file, for messages */

	/*
	 * Mapped sources: the bytes (headers are parsed from here) and the
	 * sorted, disjoint ranges.  Files also have a page cache that serves
	 * guest reads; buffers are read directly.
	 */
	const uint8_t *map;
	size_t map_len;
	int owns_map; /* munmap on close */
	struct mem_cache *cache;
	struct vmi_mem_range *ranges;
	unsigned int nr_ranges;

	struct svmtrace_vmi_vcpu *vcpus;
	unsigned int nr_vcpus;
	/* Why the vCPU records hold no registers, when the source says (or NULL). */
	const char *vcpu_note;
	void *priv;
};

/* A zeroed source named @name (E_NOMEM in @err when out of memory). */
struct svmtrace_vmi_mem *mem_new(const char *name, struct svmtrace_error *err);

/* The read op of mapped sources. */
int mem_mapped_read(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
		    struct svmtrace_error *err);

/* Sort @mem's ranges and reject overlaps or ranges outside the file. */
int mem_ranges_finish(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err);

/* Driver parsers: fill ranges and vCPUs of a mapped @mem. */
int mem_raw_parse(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err);
int mem_elfcore_parse(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err);

/* The live driver's view of SVMTRACE_GET_VCPU_STATE: what discovery may use. */
struct svmtrace_vcpu_state;
void mem_live_vcpu_from_state(const struct svmtrace_vcpu_state *st, struct svmtrace_vmi_vcpu *v);

/* True when the bytes start like an ELF file. */
bool mem_is_elf(const uint8_t *buf, size_t len);

#endif
