// SPDX-License-Identifier: GPL-2.0
/* The process list: PsActiveProcessHead -> EPROCESS.ActiveProcessLinks. */
#include "lib/vmi/win_session.h"
#include "lib/vmi/vmi_error.h"

#include <stdlib.h>
#include <string.h>

#define WIN_MAX_PROCESSES 65536

static uint64_t process_head(const struct svmtrace_vmi *vmi)
{
	return vmi->kernel.base + vmi->profile->sym.ps_active_process_head;
}

/* Image base from the PEB (pageable) or, failing that, the EPROCESS. */
static void read_image_base(const struct svmtrace_vmi *vmi, struct svmtrace_vmi_process *p,
			    uint64_t section_base)
{
	const struct svmtrace_vmi_profile *prof = vmi->profile;

	p->image_base = section_base;
	if (p->peb)
		win_read_u64(vmi, p->dtb, p->peb + prof->peb.image_base, &p->image_base, NULL);
	if (!p->image_base)
		p->image_base = section_base;
}

int win_process_read(const struct svmtrace_vmi *vmi, uint64_t link, struct svmtrace_vmi_process *p,
		     struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *prof = vmi->profile;
	uint64_t dtb = vmi->kernel.dtb, ep, section_base;
	int rc;

	memset(p, 0, sizeof(*p));
	p->eprocess = ep = link - prof->eprocess.links;
	rc = win_read_u64(vmi, dtb, ep + prof->eprocess.pid, &p->pid, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, ep + prof->eprocess.ppid, &p->ppid, err);
	if (!rc)
		rc = svmtrace_vmi_read_va(vmi, dtb, ep + prof->eprocess.name, p->name,
					  prof->eprocess.name_len, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, ep + prof->eprocess.pcb + prof->kprocess.dtb,
				  &p->dtb_raw, err);
	if (!rc && prof->kprocess.has_user_dtb)
		rc = win_read_u64(vmi, dtb, ep + prof->eprocess.pcb + prof->kprocess.user_dtb,
				  &p->user_dtb_raw, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, ep + prof->eprocess.peb, &p->peb, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, ep + prof->eprocess.section_base, &section_base, err);
	if (rc)
		return vmi_prefix(err, SVMTRACE_E_CORRUPT, "EPROCESS at VA 0x%llx",
				  (unsigned long long)ep);
	p->name[SVMTRACE_VMI_NAME_MAX] = '\0';
	p->dtb = win_dtb_mask(p->dtb_raw);
	p->user_dtb = win_dtb_mask(p->user_dtb_raw);
	read_image_base(vmi, p, section_base);
	return 0;
}

struct collect {
	const struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_process *list;
	size_t count, cap;
};

static int collect_one(void *ctx, uint64_t link, struct svmtrace_error *err)
{
	struct collect *c = ctx;

	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct svmtrace_vmi_process *l = realloc(c->list, cap * sizeof(*l));

		if (!l)
			return vmi_fail(err, SVMTRACE_E_NOMEM, "process list: out of memory");
		c->list = l;
		c->cap = cap;
	}
	return win_process_read(c->vmi, link, &c->list[c->count++], err);
}

int svmtrace_vmi_processes(const struct svmtrace_vmi *vmi, struct svmtrace_vmi_process **list,
			   size_t *count, struct svmtrace_error *err)
{
	struct collect c = { vmi, NULL, 0, 0 };
	int rc = win_list_walk(vmi, vmi->kernel.dtb, process_head(vmi), WIN_MAX_PROCESSES,
			       "process list (PsActiveProcessHead)", collect_one, &c, err);

	if (rc) {
		free(c.list);
		*list = NULL;
		*count = 0;
		return rc;
	}
	*list = c.list;
	*count = c.count;
	return 0;
}

struct find {
	const struct svmtrace_vmi *vmi;
	uint64_t pid;
	struct svmtrace_vmi_process *out;
	int found;
};

/* Compare the PID first: only the match is read in full (its PEB is in
 * another address space, and touching every process's page tables is what
 * makes a lookup slow on a large image). */
static int find_one(void *ctx, uint64_t link, struct svmtrace_error *err)
{
	struct find *f = ctx;
	const struct svmtrace_vmi_profile *p = f->vmi->profile;
	uint64_t pid;
	int rc = win_read_u64(f->vmi, f->vmi->kernel.dtb,
			      link - p->eprocess.links + p->eprocess.pid, &pid, err);

	if (rc)
		return vmi_prefix(err, SVMTRACE_E_CORRUPT, "EPROCESS at VA 0x%llx",
				  (unsigned long long)(link - p->eprocess.links));
	if (pid != f->pid)
		return 0;
	rc = win_process_read(f->vmi, link, f->out, err);
	f->found = !rc;
	return rc ? rc : 1;
}

int svmtrace_vmi_process_find(const struct svmtrace_vmi *vmi, uint64_t pid,
			      struct svmtrace_vmi_process *out, struct svmtrace_error *err)
{
	struct find f = { vmi, pid, out, 0 };
	int rc = win_list_walk(vmi, vmi->kernel.dtb, process_head(vmi), WIN_MAX_PROCESSES,
			       "process list (PsActiveProcessHead)", find_one, &f, err);

	if (rc)
		return rc;
	if (!f.found)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "no process with PID %llu",
				(unsigned long long)pid);
	return 0;
}
