// SPDX-License-Identifier: GPL-2.0
/*
 * The live memory driver: a running VM's guest-physical memory and vCPU
 * registers through an attached /dev/svmtrace controller.
 *
 * Small reads (page tables, list links, headers) go through the page cache
 * one 4 KiB page per SVMTRACE_READ_GPA; larger ones go straight to the VM
 * in pieces of at most SVMTRACE_MAX_READ.  The guest runs on while we read:
 * svmtrace_vmi_mem_refresh() empties the cache and re-reads the registers,
 * and callers walk twice and compare (docs/vmi.md, "Live guests").
 */
#include "lib/vmi/mem_cache.h"
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/vmi_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <svmtrace/abi.h>

#define LIVE_PAGE	 4096ULL
#define LIVE_MAX_VCPUS	 288 /* KVM_MAX_VCPUS of the pinned kernel */
#define LIVE_EINTR_TRIES 8
#define LIVE_CACHED_MAX	 (2 * LIVE_PAGE) /* larger reads bypass the cache */

struct live {
	struct svmtrace_vmi_live_ops ops;
};

/* One read of at most max_read bytes, errno mapped to a VMI status. */
static int live_read_chunk(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
			   struct svmtrace_error *err)
{
	const struct live *l = mem->priv;
	int rc, tries = 0;

	do
		rc = l->ops.read(l->ops.ctx, gpa, buf, len);
	while (rc == -EINTR && ++tries < LIVE_EINTR_TRIES);
	if (!rc)
		return 0;
	if (rc == -ENXIO)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"%s: GPA 0x%llx (+%zu) is not guest RAM (MMIO, a hole or past "
				"the end)",
				mem->name, (unsigned long long)gpa, len);
	if (rc == -ESRCH)
		return vmi_fail(err, SVMTRACE_E_IO, "%s: the VM's memory is gone (VMM exited)",
				mem->name);
	if (rc == -EINVAL)
		return vmi_fail(err, SVMTRACE_E_INVALID,
				"%s: the kernel refused a read of %zu bytes at GPA 0x%llx",
				mem->name, len, (unsigned long long)gpa);
	return vmi_fail(err, SVMTRACE_E_IO, "%s: read of GPA 0x%llx (+%zu): %s", mem->name,
			(unsigned long long)gpa, len, strerror(-rc));
}

static int live_fill(void *ctx, uint64_t gpa, uint8_t *page, struct svmtrace_error *err)
{
	return live_read_chunk(ctx, gpa, page, LIVE_PAGE, err);
}

static int live_read(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
		     struct svmtrace_error *err)
{
	const struct live *l = mem->priv;
	uint8_t *dst = buf;
	size_t n;
	int rc;

	if (len <= LIVE_CACHED_MAX)
		return mem_cache_read(mem->cache, gpa, buf, len, mem->name, err);
	while (len) {
		n = len < l->ops.max_read ? len : l->ops.max_read;
		rc = live_read_chunk(mem, gpa, dst, n, err);
		if (rc)
			return rc;
		dst += n;
		gpa += n;
		len -= n;
	}
	return 0;
}

/* Re-read every vCPU's registers: index 0 up to the first -EINVAL. */
static int live_vcpus(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	const struct live *l = mem->priv;
	struct svmtrace_vmi_vcpu v;
	unsigned int i;
	int rc;

	mem->nr_vcpus = 0;
	for (i = 0; i < LIVE_MAX_VCPUS; i++) {
		memset(&v, 0, sizeof(v));
		rc = l->ops.vcpu(l->ops.ctx, i, &v);
		if (rc == -EINVAL)
			break;
		if (rc)
			return vmi_fail(err, SVMTRACE_E_IO, "%s: registers of vCPU %u: %s",
					mem->name, i, strerror(-rc));
		mem->vcpus[mem->nr_vcpus++] = v;
	}
	if (!mem->nr_vcpus)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "%s: the VM has no vCPU", mem->name);
	return 0;
}

static int live_refresh(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err)
{
	mem_cache_invalidate(mem->cache);
	return live_vcpus(mem, err);
}

static void live_release(struct svmtrace_vmi_mem *mem)
{
	free(mem->priv);
	mem->priv = NULL;
}

static const struct vmi_mem_ops live_ops = {
	.kind = "live",
	.read = live_read,
	.release = live_release,
	.refresh = live_refresh,
};

int svmtrace_vmi_mem_open_live_ops(const struct svmtrace_vmi_live_ops *ops, const char *name,
				   struct svmtrace_vmi_mem **out, struct svmtrace_error *err)
{
	struct svmtrace_vmi_mem *mem;
	struct live *l;
	int rc;

	*out = NULL;
	if (!ops->read || !ops->vcpu || ops->max_read < LIVE_PAGE)
		return vmi_fail(err, SVMTRACE_E_INVALID,
				"%s: a live source needs read and vcpu ops and reads of >= 4 KiB",
				name);
	mem = mem_new(name, err);
	if (!mem)
		return SVMTRACE_E_NOMEM;
	mem->ops = &live_ops;
	l = calloc(1, sizeof(*l));
	mem->priv = l;
	mem->vcpus = calloc(LIVE_MAX_VCPUS, sizeof(*mem->vcpus));
	if (l)
		mem->cache = mem_cache_new_fill(live_fill, mem);
	if (!l || !mem->vcpus || !mem->cache) {
		svmtrace_vmi_mem_close(mem);
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", name);
	}
	l->ops = *ops;
	rc = live_vcpus(mem, err);
	if (rc) {
		svmtrace_vmi_mem_close(mem);
		return rc;
	}
	*out = mem;
	return 0;
}

/* ---- the ops over /dev/svmtrace ---- */

static int ioctl_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	int ctl_fd = (int)(intptr_t)ctx;
	struct svmtrace_gpa_read req = {
		.gpa = gpa,
		.buf = (uint64_t)(uintptr_t)buf,
		.len = (uint32_t)len,
	};

	return ioctl(ctl_fd, SVMTRACE_READ_GPA, &req) ? -errno : 0;
}

/*
 * What discovery may use: a vCPU in long mode with paging has a CR3, IDTR
 * and LSTAR of the guest's kernel.  A vCPU in guest mode runs a nested
 * guest of its own (e.g. VBS): its state is not the kernel's, none is valid.
 */
void mem_live_vcpu_from_state(const struct svmtrace_vcpu_state *st, struct svmtrace_vmi_vcpu *v)
{
	memset(v, 0, sizeof(*v));
	v->cr3 = st->cr3;
	v->gs_base = st->gs_base;
	v->kernel_gs_base = st->kernel_gs_base;
	v->idtr_base = st->idtr_base;
	v->lstar = st->lstar;
	v->cr4 = st->cr4;
	v->efer = st->efer;
	v->cpl = st->cpl;
	if (st->flags & SVMTRACE_VCPU_STATE_F_GUEST_MODE)
		return;
	if (!(st->efer & (1ULL << 10)) || !(st->cr0 & (1ULL << 31)))
		return; /* not in long mode with paging (yet) */
	v->valid = SVMTRACE_VMI_REG_CR3 | SVMTRACE_VMI_REG_IDTR | SVMTRACE_VMI_REG_KERNEL_GS_BASE |
		   SVMTRACE_VMI_REG_GS_BASE | SVMTRACE_VMI_REG_CR4;
	if (st->lstar)
		v->valid |= SVMTRACE_VMI_REG_LSTAR;
}

static int ioctl_vcpu(void *ctx, unsigned int index, struct svmtrace_vmi_vcpu *out)
{
	int ctl_fd = (int)(intptr_t)ctx;
	struct svmtrace_vcpu_state st = { .vcpu = index };

	if (ioctl(ctl_fd, SVMTRACE_GET_VCPU_STATE, &st))
		return -errno;
	mem_live_vcpu_from_state(&st, out);
	return 0;
}

int svmtrace_vmi_mem_open_live(int ctl_fd, struct svmtrace_vmi_mem **out,
			       struct svmtrace_error *err)
{
	struct svmtrace_vmi_live_ops ops = {
		.read = ioctl_read,
		.vcpu = ioctl_vcpu,
		.max_read = SVMTRACE_MAX_READ,
	};
	char name[64];

	ops.ctx = (void *)(intptr_t)ctl_fd;
	snprintf(name, sizeof(name), "live VM (%s fd %d)", SVMTRACE_DEVICE, ctl_fd);
	return svmtrace_vmi_mem_open_live_ops(&ops, name, out, err);
}
