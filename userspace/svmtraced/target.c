// SPDX-License-Identifier: GPL-2.0
/*
 * Live introspection: from --pid / --name / --wait-name to the target's
 * CR3 values and the guest-physical page of its PE entry point.
 *
 * The guest runs while we read it.  Every answer is read twice, each time
 * through an emptied cache, and kept only when both reads agree; a walk that
 * fails or disagrees is repeated a few times, then we give up with the
 * reason.  An entry page that is not resident is gated when the guest maps
 * it (a kernel watch on its page tables), never guessed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

#define WALK_TRIES	  5
#define POLL_MS		  20
#define WAIT_NAME_POLL_MS 50

static struct status_view idle_view(const char *phase)
{
	return (struct status_view){ .phase = phase, .ctl = -1 };
}

static void refresh(struct svmtrace_vmi_mem *mem)
{
	struct svmtrace_error err;

	if (svmtrace_vmi_mem_refresh(mem, &err))
		die("live VM: %s", err.message);
}

/* Problems that another look at a changing guest may not have. */
static bool transient(int rc)
{
	return rc == SVMTRACE_E_CORRUPT || rc == SVMTRACE_E_NOT_RESIDENT;
}

struct svmtrace_vmi *target_open_mem(struct svmtrace_vmi_mem *mem, const struct daemon_options *o)
{
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	int rc = 0, i;

	for (i = 0; i < WALK_TRIES; i++) {
		if (i) {
			usleep(20000); /* e.g. a vCPU between two states */
			refresh(mem);
		}
		rc = svmtrace_vmi_open(mem, o->profiles, &vmi, &err);
		if (!rc)
			return vmi;
		if (!transient(rc) && rc != SVMTRACE_E_NOT_FOUND)
			break;
	}
	die("finding the guest kernel in live memory: %s", err.message);
}

struct svmtrace_vmi *target_open(int ctl, const struct daemon_options *o,
				 struct svmtrace_vmi_mem **mem)
{
	struct svmtrace_error err;

	if (svmtrace_vmi_mem_open_live(ctl, mem, &err))
		die("live VM: %s", err.message);
	return target_open_mem(*mem, o);
}

static bool same_processes(const struct svmtrace_vmi_process *a, size_t na,
			   const struct svmtrace_vmi_process *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].pid != b[i].pid || a[i].eprocess != b[i].eprocess ||
		    a[i].dtb != b[i].dtb || a[i].user_dtb != b[i].user_dtb)
			return false;
	return true;
}

/* The process list, walked twice with the same result. */
static void processes_stable(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
			     struct svmtrace_vmi_process **list, size_t *count)
{
	struct svmtrace_vmi_process *a = NULL, *b = NULL;
	struct svmtrace_error err = { 0 };
	size_t na, nb;
	int i, rc;

	for (i = 0; i < WALK_TRIES; i++) {
		refresh(mem);
		rc = svmtrace_vmi_processes(vmi, &a, &na, &err);
		if (!rc) {
			refresh(mem);
			rc = svmtrace_vmi_processes(vmi, &b, &nb, &err);
		}
		if (!rc && same_processes(a, na, b, nb)) {
			free(b);
			*list = a;
			*count = na;
			return;
		}
		free(a);
		free(b);
		a = b = NULL;
		if (rc && !transient(rc))
			die("process list: %s", err.message);
	}
	die("process list: it changed under %d pairs of walks in a row%s%s", WALK_TRIES,
	    err.message[0] ? "; last error: " : "", err.message);
}

static bool same_entry(const struct svmtrace_vmi_entry *a, const struct svmtrace_vmi_entry *b)
{
	return a->entry_page == b->entry_page && a->entry_va == b->entry_va &&
	       a->process.dtb == b->process.dtb && a->process.user_dtb == b->process.user_dtb;
}

/* Resolve @pid twice with the same answer; returns 0 or the VMI status. */
static int resolve_stable(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, uint64_t pid,
			  struct svmtrace_vmi_entry *out, struct svmtrace_error *err)
{
	struct svmtrace_vmi_entry again;
	int i, rc = 0;

	for (i = 0; i < WALK_TRIES; i++) {
		refresh(mem);
		rc = svmtrace_vmi_resolve(vmi, pid, out, err);
		if (rc == SVMTRACE_E_NOT_RESIDENT || (rc && !transient(rc)))
			return rc;
		if (rc)
			continue;
		refresh(mem);
		rc = svmtrace_vmi_resolve(vmi, pid, &again, err);
		if (!rc && same_entry(out, &again))
			return 0;
	}
	if (!rc)
		snprintf(err->message, sizeof(err->message),
			 "PID %llu: its entry resolved differently in %d pairs of reads in a row",
			 (unsigned long long)pid, WALK_TRIES);
	return rc ? rc : SVMTRACE_E_CORRUPT;
}

static void stop_if_asked(struct statusd *sd, const char *phase, int ms)
{
	struct status_view v = idle_view(phase);

	if (statusd_wait(sd, &v, ms) || capture_stop_signal()) {
		fprintf(stderr, "svmtraced: stopped while %s: nothing was armed\n", phase);
		exit(0);
	}
}

/*
 * Resolve @pid.  An entry page that is not resident is gated where Windows
 * will map it: the kernel watches the page tables for the entry VA
 * (SVMTRACE_GATE_F_WATCH), so nothing is guessed and nothing polled.  Only
 * when the image headers are not resident either is the process polled
 * until they are, since the entry VA is read from them.
 */
static void resolve_waiting(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
			    const struct daemon_options *o, struct statusd *sd, uint64_t pid,
			    struct target_proc *out)
{
	double deadline = now_seconds() + o->resolve_timeout;
	struct svmtrace_error err;
	bool said = false;
	int rc;

	while ((rc = resolve_stable(vmi, mem, pid, &out->entry, &err)) ==
	       SVMTRACE_E_NOT_RESIDENT) {
		out->entry.entry_page = 0;
		if (o->from == FROM_NEXT) {
			/* A running process: its next instruction starts the session. */
			warn("%s; tracing from its next user-mode instruction without a gate",
			     err.message);
			return;
		}
		if (out->entry.entry_va) {
			warn("%s; the kernel watches its page tables and gates the page when "
			     "Windows maps it",
			     err.message);
			out->watch_entry = true;
			return;
		}
		if (!said)
			warn("%s; waiting up to %.1f s for its headers to become resident",
			     err.message, o->resolve_timeout);
		said = true;
		if (now_seconds() >= deadline)
			die("the image headers of PID %llu did not become resident within %.1f s "
			    "(--resolve-timeout): %s",
			    (unsigned long long)pid, o->resolve_timeout, err.message);
		stop_if_asked(sd, "waiting for the image headers", POLL_MS);
	}
	if (rc)
		die("%s", err.message);
	if (said)
		warn("PID %llu: the image headers are resident now", (unsigned long long)pid);
}

/* EPROCESS.ImageFileName keeps the first 15 characters. */
static bool name_matches(const char *want, const char *have)
{
	size_t n = strlen(want);

	if (n > SVMTRACE_VMI_NAME_MAX)
		n = SVMTRACE_VMI_NAME_MAX;
	return strlen(have) == n && !strncasecmp(want, have, n);
}

static bool in_list(const struct svmtrace_vmi_process *l, size_t n, uint64_t pid, uint64_t ep)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].pid == pid && l[i].eprocess == ep)
			return true;
	return false;
}

/* The PIDs to trace for --name: every match, or the newest (the list's last). */
static unsigned int pick_by_name(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
				 const struct daemon_options *o, uint64_t *pids)
{
	struct svmtrace_vmi_process *l;
	unsigned int n = 0;
	size_t count, i;

	processes_stable(vmi, mem, &l, &count);
	for (i = 0; i < count; i++) {
		if (!name_matches(o->name, l[i].name))
			continue;
		if (o->newest) {
			pids[0] = l[i].pid;
			n = 1;
			continue;
		}
		if (n == SVMTRACED_MAX_PROCS)
			die("--name %s: more than %d live processes of that image; choose one with "
			    "--pid or --newest",
			    o->name, SVMTRACED_MAX_PROCS);
		pids[n++] = l[i].pid;
	}
	free(l);
	if (!n)
		die("--name %s: no live process of that image (--wait-name waits for one)",
		    o->name);
	return n;
}

/* --wait-name: a process of that image that was not there when we started. */
static uint64_t wait_for_name(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
			      const struct daemon_options *o, struct statusd *sd)
{
	struct svmtrace_vmi_process *before, *now;
	size_t nb, nn, i;
	uint64_t pid = 0;

	processes_stable(vmi, mem, &before, &nb);
	if (!o->quiet)
		fprintf(stderr, "svmtraced: waiting for a new process named %s\n", o->wait_name);
	while (!pid) {
		stop_if_asked(sd, "waiting for the process", WAIT_NAME_POLL_MS);
		processes_stable(vmi, mem, &now, &nn);
		for (i = 0; i < nn && !pid; i++)
			if (name_matches(o->wait_name, now[i].name) &&
			    !in_list(before, nb, now[i].pid, now[i].eprocess))
				pid = now[i].pid;
		free(now);
	}
	free(before);
	return pid;
}

void target_resolve(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
		    const struct daemon_options *o, struct statusd *sd, struct target_info *t)
{
	uint64_t pids[SVMTRACED_MAX_PROCS];
	unsigned int n = 1, i;
	double t0;

	t->kernel = svmtrace_vmi_kernel(vmi);
	t->profile = svmtrace_vmi_profile_path(svmtrace_vmi_profile(vmi));
	if (o->wait_name)
		pids[0] = wait_for_name(vmi, mem, o, sd);
	else if (o->name)
		n = pick_by_name(vmi, mem, o, pids);
	else
		pids[0] = o->pid;
	t0 = now_seconds();
	for (i = 0; i < n; i++)
		resolve_waiting(vmi, mem, o, sd, pids[i], &t->procs[i]);
	t->nr_procs = n;
	t->resolve_seconds = now_seconds() - t0;
}

static void add_cr3(struct svmtrace_target *kt, uint64_t cr3)
{
	uint32_t i;

	if (!cr3)
		return;
	for (i = 0; i < kt->nr_cr3; i++)
		if (kt->cr3[i] == cr3)
			return;
	kt->cr3[kt->nr_cr3++] = cr3;
}

void target_gate_text(const struct target_proc *p, char buf[TARGET_GATE_TEXT])
{
	if (p->watch_entry)
		snprintf(buf, TARGET_GATE_TEXT, "watch");
	else
		snprintf(buf, TARGET_GATE_TEXT, "0x%llx", (unsigned long long)p->entry.entry_page);
}

/* A gate on the page the kernel DTB will map at the entry VA. */
static void add_watch(struct svmtrace_target *kt, const struct svmtrace_vmi_entry *e)
{
	struct svmtrace_gate *g = &kt->gates[kt->nr_gates];

	g->flags = SVMTRACE_GATE_F_WATCH;
	g->va = e->entry_va & ~0xfffULL;
	g->dtb = e->process.dtb;
	g->id = kt->nr_gates++;
}

void target_fill(const struct target_info *t, struct svmtrace_target *kt)
{
	unsigned int i, j;

	kt->nr_cr3 = 0;
	kt->nr_gates = 0;
	for (i = 0; i < t->nr_procs; i++) {
		const struct svmtrace_vmi_entry *e = &t->procs[i].entry;

		/* Both DTBs: with KVA shadow user mode runs on the user one. */
		add_cr3(kt, e->process.dtb);
		add_cr3(kt, e->process.user_dtb);
		if (t->procs[i].watch_entry) {
			add_watch(kt, e);
			continue;
		}
		/* --from next without a resident entry page: no gate. */
		if (!e->entry_page)
			continue;
		/* Processes of one image share its physical code page: one gate. */
		for (j = 0; j < kt->nr_gates && kt->gates[j].gpa != e->entry_page; j++)
			;
		if (j == kt->nr_gates) {
			kt->gates[j].gpa = e->entry_page;
			kt->gates[j].id = j;
			kt->nr_gates++;
		}
	}
}

void target_modules(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, struct target_info *t)
{
	const struct svmtrace_vmi_process *p = &t->procs[0].entry.process;
	struct svmtrace_error err;
	size_t i;
	int rc = 0, tries;

	for (tries = 0; tries < WALK_TRIES; tries++) {
		refresh(mem);
		rc = svmtrace_vmi_modules(vmi, p->pid, &t->modules, &t->nr_modules, &err);
		if (!rc || !transient(rc))
			break;
	}
	if (rc) {
		snprintf(t->modules_error, sizeof(t->modules_error), "%s", err.message);
		t->nr_modules = 0;
		return;
	}
	t->module_ids = calloc(t->nr_modules + 1, sizeof(*t->module_ids));
	t->module_extra = calloc(t->nr_modules + 1, sizeof(*t->module_extra));
	if (!t->module_ids || !t->module_extra)
		die("out of memory");
	for (i = 0; i < t->nr_modules; i++) {
		if (svmtrace_vmi_image_id(vmi, p->dtb, t->modules[i].base, &t->module_ids[i], &err))
			t->module_ids[i].size_of_image = 0; /* headers not resident */
		target_module_exports(vmi, t, i);
	}
}

void target_module_exports(struct svmtrace_vmi *vmi, struct target_info *t, size_t i)
{
	const struct svmtrace_vmi_process *p = &t->procs[0].entry.process;
	struct module_extra *x = &t->module_extra[i];
	struct svmtrace_error err;

	if (svmtrace_vmi_exports(vmi, p->dtb, t->modules[i].base, &x->exports, &x->nr_exports,
				 &err))
		snprintf(x->exports_error, sizeof(x->exports_error), "%s", err.message);
}
