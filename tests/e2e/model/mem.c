// SPDX-License-Identifier: GPL-2.0
/*
 * Guest-virtual memory for the model: a 4-level walk of the page tables in
 * the image (4 KiB pages only, as image.c builds them), enforcing present,
 * user and write bits (and SMAP for data: a CPL-0 access to a user page
 * with RFLAGS.AC clear faults), byte by byte so accesses may cross pages.  A
 * failed walk says whether it met an entry not present (c->not_present):
 * the lab kernel maps such pages at a user fetch's #PF (exec.c).  Data
 * accesses (not instruction fetches) also go past the debug registers'
 * data breakpoints, and an access to the lab guest's device page
 * (layout.h, beyond its RAM) is the VMM's, whole, as KVM hands it over.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"

#define PTE_P	 (1ull << 0)
#define PTE_W	 (1ull << 1)
#define PTE_U	 (1ull << 2)
#define PTE_PS	 (1ull << 7)
#define PTE_ADDR 0x000ffffffffff000ull

/* The walk; @user: every level allows user mode (a user page). */
static int walk(struct model_cpu *c, uint64_t va, int write, uint64_t *gpa, int *user)
{
	uint64_t table = c->cr3 & PTE_ADDR;

	c->not_present = 0;
	*user = 1;
	for (int level = 3; level >= 0; level--) {
		uint64_t idx = (va >> (12 + 9 * level)) & 511, pte;

		if (table + idx * 8 + 8 > c->mem_size)
			goto fault;
		memcpy(&pte, c->mem + table + idx * 8, 8);
		c->not_present = !(pte & PTE_P);
		if (!(pte & PTE_P) || (c->cpl == 3 && !(pte & PTE_U)) ||
		    (write && !(pte & PTE_W)) || (level && (pte & PTE_PS)))
			goto fault;
		*user &= !!(pte & PTE_U);
		table = pte & PTE_ADDR;
	}
	*gpa = table | (va & 0xfff);
	if (*gpa < c->mem_size || model_is_mmio(c, *gpa))
		return 0;
fault:
	snprintf(c->error, sizeof(c->error), "page fault (%s) at 0x%llx, CPL %d, RIP 0x%llx",
		 write ? "write" : "read", (unsigned long long)va, c->cpl,
		 (unsigned long long)c->rip);
	return -1;
}

int model_translate(struct model_cpu *c, uint64_t va, int write, uint64_t *gpa)
{
	int user;

	return walk(c, va, write, gpa, &user);
}

/* A data access's translation: SMAP applies. */
static int translate_data(struct model_cpu *c, uint64_t va, int write, uint64_t *gpa)
{
	int user;

	if (walk(c, va, write, gpa, &user))
		return -1;
	if (user && c->smap && c->cpl == 0 && !(c->rflags & RFLAGS_AC)) {
		snprintf(c->error, sizeof(c->error),
			 "page fault (SMAP: %s of user page at 0x%llx, CPL 0, AC clear), RIP 0x%llx",
			 write ? "write" : "read", (unsigned long long)va,
			 (unsigned long long)c->rip);
		return -1;
	}
	return 0;
}

int model_is_mmio(const struct model_cpu *c, uint64_t gpa)
{
	return gpa >= c->mem_size && gpa - MMIO_GPA < 0x1000;
}

/* Bytes a breakpoint of DR7's LEN field @len covers. */
static uint64_t bp_len(uint64_t len)
{
	return len == 2 ? 8 : len + 1;
}

/*
 * A data access to [va, va + len): the data breakpoints DR7 enables for
 * it (R/W 01 writes, 11 reads and writes) that it touches.
 */
static void watch(struct model_cpu *c, uint64_t va, unsigned int len, int write)
{
	uint64_t dr7 = c->dr[7], type, n, start;

	for (int i = 0; i < 4; i++) {
		type = (dr7 >> (16 + i * 4)) & 3;
		n = bp_len((dr7 >> (18 + i * 4)) & 3);
		start = c->dr[i] & ~(n - 1);
		if ((dr7 >> (i * 2)) & 3 && (type == 3 || (type == 1 && write)) &&
		    va < start + n && start < va + len)
			c->dr_hits |= 1ull << i;
	}
}

/* The device page: one access of @len bytes at @gpa (layout.h). */
static void mmio(struct model_cpu *c, uint64_t gpa, void *buf, unsigned int len, int write)
{
	uint64_t v = 0;

	if (write) {
		memcpy(&v, buf, len);
		c->io->log_sum += v;
		c->io->log_count++;
		return;
	}
	v = MMIO_READ_VALUE + (gpa - MMIO_GPA);
	memcpy(buf, &v, len);
	c->io->input_count++;
}

int model_fetch(struct model_cpu *c, uint64_t va, void *buf, unsigned int len)
{
	uint8_t *p = buf;
	uint64_t gpa;

	for (unsigned int i = 0; i < len; i++) {
		if (model_translate(c, va + i, 0, &gpa))
			return -1;
		if (model_is_mmio(c, gpa))
			return model_fail_at(c, va + i, "an instruction fetch from the device page");
		p[i] = c->mem[gpa];
	}
	return 0;
}

/* The instruction's access log: what a memory-operand tracer must record. */
static void log_access(struct model_cpu *c, uint64_t va, const void *buf, unsigned int len,
		       int write)
{
	struct model_access *a;

	if (c->nr_acc == MODEL_MAX_ACCESSES)
		return;
	a = &c->acc[c->nr_acc++];
	a->write = write;
	a->va = va;
	a->len = len;
	memset(a->value, 0, sizeof(a->value));
	memcpy(a->value, buf, len < sizeof(a->value) ? len : sizeof(a->value));
}

static int access(struct model_cpu *c, uint64_t va, void *buf, unsigned int len, int write)
{
	uint8_t *p = buf;
	uint64_t gpa;

	watch(c, va, len, write);
	if (translate_data(c, va, write, &gpa))
		return -1;
	if (model_is_mmio(c, gpa)) {
		if (len > 8 || (gpa & 0xfff) + len > 0x1000)
			return model_fail_at(c, va, "an access that leaves the device page");
		mmio(c, gpa, buf, len, write);
		c->vm_exit = 1;
		log_access(c, va, buf, len, write);
		return 0;
	}
	for (unsigned int i = 0; i < len; i++) {
		if (translate_data(c, va + i, write, &gpa))
			return -1;
		if (model_is_mmio(c, gpa))
			return model_fail_at(c, va + i, "an access that runs into the device page");
		if (write)
			c->mem[gpa] = p[i];
		else
			p[i] = c->mem[gpa];
	}
	log_access(c, va, buf, len, write);
	return 0;
}

int model_read(struct model_cpu *c, uint64_t va, void *buf, unsigned int len)
{
	return access(c, va, buf, len, 0);
}

int model_write(struct model_cpu *c, uint64_t va, const void *buf, unsigned int len)
{
	return access(c, va, (void *)buf, len, 1);
}

int model_fail_at(struct model_cpu *c, uint64_t va, const char *what)
{
	snprintf(c->error, sizeof(c->error), "%s at 0x%llx, RIP 0x%llx", what,
		 (unsigned long long)va, (unsigned long long)c->rip);
	return -1;
}
