// SPDX-License-Identifier: GPL-2.0
/*
 * Code bytes as executed, and modules that appear while tracing.
 *
 * Every slot the daemon drains passes here before it is released (the
 * vCPU never waits for this: it runs in the daemon's drain loop, the vCPU
 * only fills the ring).  Pages are the process's whose DTB the slot's CR3
 * is (processes have different code at one VA: a child, a hollowed one).
 * When a vCPU's RIP enters a page it was not on before:
 *   - a page never seen: translate it through the slot's CR3 and read its
 *     4 KiB through the live memory driver (cache emptied first: the bytes
 *     of now, not of an earlier walk), append it to code.bin with the
 *     slot's sequence; a user page outside every known module makes us
 *     re-walk the loader list, and modules new to it are added with that
 *     sequence and their exports;
 *   - a page seen more than RECHECK_SECONDS ago: read it again, and append
 *     a new version when its bytes or its GPA changed (packers, JITs).
 * So a version's first sequence is the first record at which the daemon saw
 * those bytes: a change between two checks of a page is seen at the next
 * entry after the interval, not at the instant of the write.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/analysis.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

#define RECHECK_SECONDS	  0.25
#define MAX_MODULE_WALKS  1000
#define USER_VA_END	  0x0000800000000000ull
#define CR3_ADDRESS_MASK  0x000ffffffffff000ull
#define PAGE_MASK	  (~(uint64_t)(SVMTRACE_CODE_PAGE - 1))
#define MAX_TRACKED_VCPUS 256

struct cm_page {
	uint64_t va; /* 0 = empty slot (page 0 is never code) */
	int space;   /* whose: the index of its process, -1 another address space's */
	uint64_t gpa;
	double checked;
	uint8_t *bytes; /* NULL: could not be read */
};

struct codemap {
	struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_mem *mem;
	struct target_info *t;
	struct svmtrace_code_writer *w;
	struct cm_page *pages; /* open addressing by (space, VA) */
	size_t cap, used;
	uint64_t last_page[MAX_TRACKED_VCPUS], last_cr3[MAX_TRACKED_VCPUS];
	bool failed;
};

static size_t slot_of(const struct codemap *cm, int space, uint64_t va)
{
	return (size_t)((((va >> 12) + (uint64_t)(space + 1) * 0x10001) * 0x9e3779b97f4a7c15ull) >>
			24) &
	       (cm->cap - 1);
}

static struct cm_page *find(struct codemap *cm, int space, uint64_t va)
{
	size_t i;

	for (i = slot_of(cm, space, va); cm->pages[i].va; i = (i + 1) & (cm->cap - 1))
		if (cm->pages[i].va == va && cm->pages[i].space == space)
			return &cm->pages[i];
	return &cm->pages[i]; /* the empty slot it would go in */
}

static void grow(struct codemap *cm)
{
	struct cm_page *old = cm->pages;
	size_t cap = cm->cap, i;

	cm->cap = cap ? cap * 2 : 1024;
	cm->pages = calloc(cm->cap, sizeof(*cm->pages));
	if (!cm->pages)
		die("out of memory for %zu code pages", cm->cap);
	for (i = 0; i < cap; i++)
		if (old[i].va)
			*find(cm, old[i].space, old[i].va) = old[i];
	free(old);
}

struct codemap *codemap_open(const char *out_dir, struct svmtrace_vmi *vmi,
			     struct svmtrace_vmi_mem *mem, struct target_info *t)
{
	struct codemap *cm = calloc(1, sizeof(*cm));
	struct svmtrace_error err;
	char path[PATH_MAX];

	if (!cm)
		die("out of memory");
	cm->vmi = vmi;
	cm->mem = mem;
	cm->t = t;
	grow(cm);
	snprintf(path, sizeof(path), "%s/code.bin", out_dir);
	if (svmtrace_code_writer_open(path, &cm->w, &err))
		die("%s", err.message);
	t->code.enabled = true;
	return cm;
}

/* Read the page @va through @cr3 into @buf; false (counted) when we cannot. */
static bool read_page(struct codemap *cm, uint64_t cr3, uint64_t va, uint64_t *gpa, uint8_t *buf)
{
	struct svmtrace_vmi_translation tr;
	struct svmtrace_error err;

	if (svmtrace_vmi_mem_refresh(cm->mem, &err) ||
	    svmtrace_vmi_translate(cm->vmi, cr3 & CR3_ADDRESS_MASK, va, &tr, &err) ||
	    svmtrace_vmi_mem_read(cm->mem, tr.gpa & PAGE_MASK, buf, SVMTRACE_CODE_PAGE, &err)) {
		cm->t->code.unreadable++;
		if (!cm->t->code.error[0])
			snprintf(cm->t->code.error, sizeof(cm->t->code.error),
				 "page 0x%llx (first of its kind): %s", (unsigned long long)va,
				 err.message);
		return false;
	}
	*gpa = tr.gpa & PAGE_MASK;
	return true;
}

static void save(struct codemap *cm, const struct cm_page *p, uint64_t cr3, uint64_t seq)
{
	struct svmtrace_code_page cp = { .va = p->va, .gpa = p->gpa, .cr3 = cr3 & CR3_ADDRESS_MASK,
					 .first_sequence = seq, .bytes = p->bytes };
	struct svmtrace_error err;

	if (cm->failed)
		return;
	if (svmtrace_code_writer_add(cm->w, &cp, &err)) {
		warn("%s: code.bin stops here", err.message);
		snprintf(cm->t->code.error, sizeof(cm->t->code.error), "%s", err.message);
		cm->failed = true;
		return;
	}
	cm->t->code.versions++;
}

static bool in_module(const struct target_proc *t, uint64_t va)
{
	size_t i;

	for (i = 0; i < t->nr_modules; i++)
		if (va - t->modules[i].base < t->modules[i].size)
			return true;
	return false;
}

static bool known_base(const struct target_proc *t, uint64_t base)
{
	size_t i;

	for (i = 0; i < t->nr_modules; i++)
		if (t->modules[i].base == base)
			return true;
	return false;
}

/* Re-walk the loader list of process @tp; modules new to us were first seen at @seq. */
static void walk_modules(struct codemap *cm, struct target_proc *tp, uint64_t seq)
{
	struct target_info *g = cm->t;
	struct target_proc *t = tp;
	const struct svmtrace_vmi_process *p = &tp->entry.process;
	struct svmtrace_vmi_module *list;
	struct svmtrace_error err;
	size_t n, i, k;

	if (g->code.module_walks >= MAX_MODULE_WALKS)
		return;
	g->code.module_walks++;
	if (svmtrace_vmi_mem_refresh(cm->mem, &err) ||
	    svmtrace_vmi_modules(cm->vmi, p->pid, &list, &n, &err))
		return; /* e.g. the loader is linking an entry: the next new page retries */
	for (i = 0; i < n; i++) {
		if (known_base(t, list[i].base))
			continue;
		k = t->nr_modules;
		t->modules = realloc(t->modules, (k + 1) * sizeof(*t->modules));
		t->module_ids = realloc(t->module_ids, (k + 1) * sizeof(*t->module_ids));
		t->module_extra = realloc(t->module_extra, (k + 1) * sizeof(*t->module_extra));
		if (!t->modules || !t->module_ids || !t->module_extra)
			die("out of memory");
		t->modules[k] = list[i];
		memset(&t->module_ids[k], 0, sizeof(t->module_ids[k]));
		memset(&t->module_extra[k], 0, sizeof(t->module_extra[k]));
		if (svmtrace_vmi_image_id(cm->vmi, p->dtb, list[i].base, &t->module_ids[k], &err))
			t->module_ids[k].size_of_image = 0;
		t->module_extra[k].later = true;
		t->module_extra[k].first_sequence = seq;
		t->nr_modules = k + 1;
		target_module_exports(cm->vmi, t, k);
		g->code.modules_added++;
	}
	free(list);
}

/* The RIP of @s entered page @va (a page change on its vCPU); @batch is
 * when the drained batch was taken (one clock read per batch). */
static void entered(struct codemap *cm, const struct svmtrace_slot *s, uint64_t va, double batch)
{
	uint8_t buf[SVMTRACE_CODE_PAGE];
	int space = target_proc_index(cm->t, s->cr3);
	struct cm_page *p = find(cm, space, va);
	uint64_t gpa;
	double now;

	if (p->va && batch - p->checked < RECHECK_SECONDS)
		return;
	now = now_seconds();
	if (!p->va) { /* never seen */
		if (cm->used * 2 >= cm->cap) {
			grow(cm);
			p = find(cm, space, va);
		}
		p->va = va;
		p->space = space;
		p->checked = now;
		cm->used++;
		cm->t->code.pages++;
		if (va < USER_VA_END && space >= 0 && !in_module(&cm->t->procs[space], va))
			walk_modules(cm, &cm->t->procs[space], s->seq);
		if (read_page(cm, s->cr3, va, &p->gpa, buf)) {
			p->bytes = malloc(SVMTRACE_CODE_PAGE);
			if (!p->bytes)
				die("out of memory");
			memcpy(p->bytes, buf, sizeof(buf));
			save(cm, p, s->cr3, s->seq);
		}
	} else { /* seen: did it change? */
		p->checked = now;
		cm->t->code.rechecks++;
		if (!read_page(cm, s->cr3, va, &gpa, buf))
			return;
		if (p->bytes && gpa == p->gpa && !memcmp(p->bytes, buf, sizeof(buf)))
			return;
		if (p->bytes) {
			cm->t->code.changed++;
		} else if (!(p->bytes = malloc(SVMTRACE_CODE_PAGE))) { /* first readable now */
			die("out of memory");
		}
		memcpy(p->bytes, buf, sizeof(buf));
		p->gpa = gpa;
		save(cm, p, s->cr3, s->seq);
	}
	cm->t->code.seconds += now_seconds() - now;
}

void codemap_observe(void *ctx, uint32_t vcpu, const struct svmtrace_slot *slots, size_t n,
		     size_t stride)
{
	struct codemap *cm = ctx;
	uint64_t *last = &cm->last_page[vcpu % MAX_TRACKED_VCPUS];
	uint64_t *last_cr3 = &cm->last_cr3[vcpu % MAX_TRACKED_VCPUS];
	double batch = now_seconds();
	size_t i;

	for (i = 0; i < n; i++) {
		const struct svmtrace_slot *s =
			(const struct svmtrace_slot *)((const char *)slots + i * stride);
		uint64_t va = s->rip & PAGE_MASK;

		if (s->kind == SVMTRACE_SLOT_SESSION_END) {
			*last = 0; /* the next session re-enters its first page */
			continue;
		}
		if (va == *last && s->cr3 == *last_cr3)
			continue;
		*last = va;
		*last_cr3 = s->cr3;
		if (va)
			entered(cm, s, va, batch);
	}
}

void codemap_close(struct codemap *cm)
{
	struct svmtrace_error err;
	size_t i;

	if (!cm)
		return;
	if (svmtrace_code_writer_close(cm->w, &err)) {
		warn("%s", err.message);
		snprintf(cm->t->code.error, sizeof(cm->t->code.error), "%s", err.message);
	}
	for (i = 0; i < cm->cap; i++)
		free(cm->pages[i].bytes);
	free(cm->pages);
	free(cm);
}
