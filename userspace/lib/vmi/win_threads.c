// SPDX-License-Identifier: GPL-2.0
/*
 * Threads: where every thread begins (the kernel's record of ntdll's thread
 * start, checked against ntdll.dll's exports) and a process's threads
 * (EPROCESS.ThreadListHead -> ETHREAD.ThreadListEntry).
 */
#include "lib/vmi/win_session.h"
#include "lib/vmi/vmi_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define WIN_MAX_THREADS 65536

/* The kernel's copies of LdrInitializeThunk and RtlUserThreadStart; 1 when the profile has none. */
static int kernel_record(const struct svmtrace_vmi *vmi, uint64_t *ldr, uint64_t *user,
			 char *source, size_t size, struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = vmi->profile;
	uint64_t kb = vmi->kernel.base, dtb = vmi->kernel.dtb, at_ldr, at_user = 0;
	int rc;

	if (p->sym.psp_loader_init_routine.present) {
		at_ldr = kb + p->sym.psp_loader_init_routine.rva;
		if (p->sym.psp_user_thread_start.present)
			at_user = kb + p->sym.psp_user_thread_start.rva;
		snprintf(source, size, "PspLoaderInitRoutine");
	} else if (p->sym.ps_ntdll_exports.present && p->ntdll_exports.present) {
		at_ldr = kb + p->sym.ps_ntdll_exports.rva + p->ntdll_exports.ldr_initialize_thunk;
		at_user = kb + p->sym.ps_ntdll_exports.rva + p->ntdll_exports.rtl_user_thread_start;
		snprintf(source, size, "PsNtdllExports.LdrInitializeThunk");
	} else {
		return 1;
	}
	rc = win_read_u64(vmi, dtb, at_ldr, ldr, err);
	if (!rc && at_user)
		rc = win_read_u64(vmi, dtb, at_user, user, err);
	if (rc)
		return vmi_prefix(err, rc, "%s", source);
	return 0;
}

/* ntdll.dll in @pid's loader list: its base and the two exports; 0 or a status. */
static int ntdll_exports(const struct svmtrace_vmi *vmi, const struct svmtrace_vmi_process *proc,
			 uint64_t *base, uint64_t *ldr, uint64_t *user, struct svmtrace_error *err)
{
	struct svmtrace_vmi_module *mods;
	struct svmtrace_vmi_export *ex;
	size_t nmods, nex, i;
	int rc;

	rc = svmtrace_vmi_modules(vmi, proc->pid, &mods, &nmods, err);
	if (rc)
		return rc;
	for (i = 0; i < nmods && strcasecmp(mods[i].name, "ntdll.dll"); i++)
		;
	if (i == nmods) {
		free(mods);
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "PID %llu (%s) has no ntdll.dll",
				(unsigned long long)proc->pid, proc->name);
	}
	*base = mods[i].base;
	free(mods);
	rc = svmtrace_vmi_exports(vmi, proc->dtb, *base, &ex, &nex, err);
	if (rc)
		return vmi_prefix(err, rc, "ntdll.dll at 0x%llx in PID %llu",
				  (unsigned long long)*base, (unsigned long long)proc->pid);
	*ldr = *user = 0;
	for (i = 0; i < nex; i++) {
		if (!strcmp(ex[i].name, "LdrInitializeThunk"))
			*ldr = *base + ex[i].rva;
		else if (!strcmp(ex[i].name, "RtlUserThreadStart"))
			*user = *base + ex[i].rva;
	}
	free(ex);
	if (!*ldr)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"ntdll.dll at 0x%llx exports no LdrInitializeThunk",
				(unsigned long long)*base);
	return 0;
}

/* The first process whose loader list shows ntdll.dll's exports; 0 or the last reason. */
static int find_ntdll(const struct svmtrace_vmi *vmi, uint64_t *base, uint64_t *ldr, uint64_t *user,
		      struct svmtrace_error *err)
{
	struct svmtrace_vmi_process *list;
	size_t n, i;
	int rc;

	rc = svmtrace_vmi_processes(vmi, &list, &n, err);
	if (rc)
		return rc;
	rc = vmi_fail(err, SVMTRACE_E_NOT_FOUND, "no process has a PEB");
	for (i = 0; i < n && rc; i++)
		if (list[i].peb)
			rc = ntdll_exports(vmi, &list[i], base, ldr, user, err);
	free(list);
	return rc;
}

int svmtrace_vmi_thread_start(const struct svmtrace_vmi *vmi, struct svmtrace_vmi_thread_start *out,
			      struct svmtrace_error *err)
{
	struct svmtrace_error kerr = { 0 }, xerr = { 0 };
	uint64_t kldr = 0, kuser = 0, base = 0, xldr = 0, xuser = 0;
	int krc, xrc;

	memset(out, 0, sizeof(*out));
	krc = kernel_record(vmi, &kldr, &kuser, out->source, sizeof(out->source), &kerr);
	xrc = find_ntdll(vmi, &base, &xldr, &xuser, &xerr);
	if (krc && xrc)
		return vmi_fail(err, krc < 0 ? krc : xrc,
				"where threads begin: %s; and ntdll.dll's exports: %s",
				krc < 0 ? kerr.message
					: "the profile has neither PspLoaderInitRoutine nor "
					  "PsNtdllExports",
				xerr.message);
	if (!krc && !xrc && (kldr != xldr || (kuser && xuser && kuser != xuser)))
		return vmi_fail(
			err, SVMTRACE_E_CORRUPT,
			"%s says threads begin at 0x%llx (then 0x%llx), ntdll.dll's exports "
			"say 0x%llx (0x%llx)",
			out->source, (unsigned long long)kldr, (unsigned long long)kuser,
			(unsigned long long)xldr, (unsigned long long)xuser);
	out->ntdll_base = base;
	if (krc) {
		out->ldr_initialize_thunk = xldr;
		out->rtl_user_thread_start = xuser;
		snprintf(out->source, sizeof(out->source), "ntdll.dll exports");
		snprintf(out->check, sizeof(out->check), "no kernel record: %s",
			 krc < 0 ? kerr.message
				 : "the profile has neither PspLoaderInitRoutine nor "
				   "PsNtdllExports");
		return 0;
	}
	out->ldr_initialize_thunk = kldr;
	out->rtl_user_thread_start = kuser ? kuser : xuser;
	if (xrc)
		snprintf(out->check, sizeof(out->check), "not checked against ntdll.dll: %s",
			 xerr.message);
	else
		snprintf(out->check, sizeof(out->check),
			 "ntdll.dll at 0x%llx exports LdrInitializeThunk there",
			 (unsigned long long)base);
	return 0;
}

struct thread_list {
	const struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_thread *list;
	size_t count, cap;
};

static int thread_one(void *ctx, uint64_t link, struct svmtrace_error *err)
{
	struct thread_list *l = ctx;
	const struct svmtrace_vmi *vmi = l->vmi;
	const typeof(vmi->profile->threads) *f = &vmi->profile->threads;
	uint64_t dtb = vmi->kernel.dtb, et = link - f->list_entry;
	struct svmtrace_vmi_thread *t;
	int rc;

	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct svmtrace_vmi_thread *n = realloc(l->list, cap * sizeof(*n));

		if (!n)
			return vmi_fail(err, SVMTRACE_E_NOMEM, "thread list: out of memory");
		l->list = n;
		l->cap = cap;
	}
	t = &l->list[l->count];
	memset(t, 0, sizeof(*t));
	t->ethread = et;
	rc = win_read_u64(vmi, dtb, et + f->cid + f->unique_thread, &t->tid, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, et + f->cid + f->unique_process, &t->pid, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, et + f->tcb + f->teb, &t->teb, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, et + f->start_address, &t->start_address, err);
	if (!rc)
		rc = win_read_u64(vmi, dtb, et + f->win32_start_address, &t->win32_start_address,
				  err);
	if (rc)
		return vmi_prefix(err, SVMTRACE_E_CORRUPT, "ETHREAD at VA 0x%llx",
				  (unsigned long long)et);
	l->count++;
	return 0;
}

int svmtrace_vmi_threads(const struct svmtrace_vmi *vmi, uint64_t pid,
			 struct svmtrace_vmi_thread **list, size_t *count,
			 struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *p = vmi->profile;
	struct thread_list l = { vmi, NULL, 0, 0 };
	struct svmtrace_vmi_process proc;
	int rc;

	*list = NULL;
	*count = 0;
	if (!p->threads.present)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "profile lacks what threads need: %s",
				p->threads.missing);
	rc = svmtrace_vmi_process_find(vmi, pid, &proc, err);
	if (rc)
		return rc;
	rc = win_list_walk(vmi, vmi->kernel.dtb, proc.eprocess + p->threads.list_head,
			   WIN_MAX_THREADS, "thread list (EPROCESS.ThreadListHead)", thread_one, &l,
			   err);
	if (rc) {
		free(l.list);
		return vmi_prefix(err, rc, "PID %llu (%s)", (unsigned long long)pid, proc.name);
	}
	*list = l.list;
	*count = l.count;
	return 0;
}
