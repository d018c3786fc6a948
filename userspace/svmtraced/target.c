// SPDX-License-Identifier: GPL-2.0
/*
 * Live introspection: from --pid / --name / --wait-name to the target's
 * CR3 values and the guest-physical page of its PE entry point, or (--from
 * first) to where every thread begins.
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

#define POLL_MS	   20

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

bool target_transient(int rc)
{
	return rc == SVMTRACE_E_CORRUPT || rc == SVMTRACE_E_NOT_RESIDENT;
}

struct svmtrace_vmi *target_open_mem(struct svmtrace_vmi_mem *mem, const struct daemon_options *o)
{
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	int rc = 0, i;

	for (i = 0; i < TARGET_WALK_TRIES; i++) {
		if (i) {
			usleep(TARGET_WALK_PAUSE_US); /* e.g. a vCPU between two states */
			refresh(mem);
		}
		rc = svmtrace_vmi_open(mem, o->profiles, &vmi, &err);
		if (!rc)
			return vmi;
		if (!target_transient(rc) && rc != SVMTRACE_E_NOT_FOUND)
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

	for (i = 0; i < TARGET_WALK_TRIES; i++) {
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
		if (rc && !target_transient(rc))
			die("process list: %s", err.message);
	}
	die("process list: it changed under %d pairs of walks in a row%s%s", TARGET_WALK_TRIES,
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

	for (i = 0; i < TARGET_WALK_TRIES; i++) {
		refresh(mem);
		rc = svmtrace_vmi_resolve(vmi, pid, out, err);
		if (rc == SVMTRACE_E_NOT_RESIDENT || (rc && !target_transient(rc)))
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
			 (unsigned long long)pid, TARGET_WALK_TRIES);
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

/* @pid's process, read twice alike (its DTBs, for --from first). */
static int process_stable(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, uint64_t pid,
			  struct svmtrace_vmi_process *out, struct svmtrace_error *err)
{
	struct svmtrace_vmi_process again;
	int i, rc = 0;

	for (i = 0; i < TARGET_WALK_TRIES; i++) {
		refresh(mem);
		rc = svmtrace_vmi_process_find(vmi, pid, out, err);
		if (!rc) {
			refresh(mem);
			rc = svmtrace_vmi_process_find(vmi, pid, &again, err);
		}
		if (!rc && again.dtb == out->dtb && again.user_dtb == out->user_dtb &&
		    again.eprocess == out->eprocess)
			return 0;
		if (rc && !target_transient(rc))
			return rc;
	}
	return rc ? rc : SVMTRACE_E_CORRUPT;
}

/*
 * --from first needs the process's DTBs; its entry point is only noted (the
 * image headers may not be resident yet: a process that has not run).
 */
static void resolve_first(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, uint64_t pid,
			  struct target_proc *out)
{
	struct svmtrace_error err;
	int rc = resolve_stable(vmi, mem, pid, &out->entry, &err);

	out->first = true;
	if (!rc)
		return;
	if (rc != SVMTRACE_E_NOT_RESIDENT)
		die("%s", err.message);
	memset(&out->entry, 0, sizeof(out->entry));
	if (process_stable(vmi, mem, pid, &out->entry.process, &err))
		die("%s", err.message);
	out->entry.image_base = out->entry.process.image_base;
}

/* What the process was started with, where readable (capture.json). */
static void command_line(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, uint64_t pid,
			 struct target_proc *out)
{
	struct svmtrace_error err;

	refresh(mem);
	if (svmtrace_vmi_command_line(vmi, pid, out->command_line, sizeof(out->command_line), &err))
		out->command_line[0] = '\0';
}

/*
 * Resolve @pid.  An entry page that is not resident is gated where Windows
 * will map it: the kernel watches the page tables for the entry VA
 * (SVMTRACE_GATE_F_WATCH), so nothing is guessed and nothing polled.  Only
 * when the image headers are not resident either is the process polled
 * until they are, since the entry VA is read from them.
 */

void target_resolve_pid(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
			const struct daemon_options *o, struct statusd *sd, uint64_t pid,
			struct target_proc *out)
{
	double deadline = now_seconds() + o->resolve_timeout;
	struct svmtrace_error err;
	bool said = false;
	int rc;

	command_line(vmi, mem, pid, out);
	if (o->from == FROM_FIRST) {
		resolve_first(vmi, mem, pid, out);
		return;
	}
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

bool target_name_matches(const char *want, const char *have)
{
	size_t n = strlen(want);

	if (n > SVMTRACE_VMI_NAME_MAX)
		n = SVMTRACE_VMI_NAME_MAX;
	return strlen(have) == n && !strncasecmp(want, have, n);
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
		if (!target_name_matches(o->name, l[i].name))
			continue;
		if (o->newest) {
			pids[0] = l[i].pid;
			n = 1;
			continue;
		}
		if (n == SVMTRACED_MAX_NAMED)
			die("--name %s: more than %d live processes of that image; choose one with "
			    "--pid or --newest",
			    o->name, SVMTRACED_MAX_NAMED);
		pids[n++] = l[i].pid;
	}
	free(l);
	if (!n)
		die("--name %s: no live process of that image (--wait-name waits for one)",
		    o->name);
	return n;
}

/*
 * Where threads begin (--from first, --wait-name, --follow), read twice
 * alike; and for --follow, that a thread's process and start can be told
 * (the ETHREAD fields, walked on System's thread list).  Refused here, at
 * arm time, with what is missing.
 */
static void thread_start(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
			 const struct daemon_options *o, struct target_info *t)
{
	const char *what = o->follow ? "--follow" : o->wait_name ? "--wait-name" : "--from first";
	struct svmtrace_vmi_thread_start again;
	struct svmtrace_vmi_thread *list;
	struct svmtrace_error err;
	size_t n;
	int i, rc = 0;

	if (o->follow) {
		refresh(mem);
		if (svmtrace_vmi_threads(vmi, 4, &list, &n, &err))
			die("--follow cannot tell which process a new thread is of: %s",
			    err.message);
		free(list);
	}

	for (i = 0; i < TARGET_WALK_TRIES; i++) {
		refresh(mem);
		rc = svmtrace_vmi_thread_start(vmi, &t->thread_start, &err);
		if (!rc) {
			refresh(mem);
			rc = svmtrace_vmi_thread_start(vmi, &again, &err);
		}
		if (!rc && again.ldr_initialize_thunk == t->thread_start.ldr_initialize_thunk) {
			t->has_thread_start = true;
			return;
		}
		if (rc && !target_transient(rc))
			break;
	}
	die("%s needs where threads begin in the guest: %s", what,
	    rc ? err.message : "it changed between reads");
}

int target_proc_index(const struct target_info *t, uint64_t cr3)
{
	const uint64_t mask = 0x000ffffffffff000ull;
	unsigned int i;

	for (i = 0; i < t->nr_procs; i++) {
		const struct svmtrace_vmi_process *p = &t->procs[i].entry.process;

		if ((p->dtb & mask) == (cr3 & mask) ||
		    (p->user_dtb && (p->user_dtb & mask) == (cr3 & mask)))
			return (int)i;
	}
	return -1;
}

bool target_process_of_cr3(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, uint64_t cr3,
			   struct svmtrace_vmi_process *out)
{
	struct svmtrace_vmi_process *l;
	uint64_t want = cr3 & 0x000ffffffffff000ull;
	bool found = false;
	size_t n, i;

	processes_stable(vmi, mem, &l, &n);
	for (i = 0; i < n && !found; i++)
		if (l[i].dtb == want || (l[i].user_dtb && l[i].user_dtb == want)) {
			*out = l[i];
			found = true;
		}
	free(l);
	return found;
}

void target_resolve(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
		    const struct daemon_options *o, struct statusd *sd, struct target_info *t)
{
	uint64_t pids[SVMTRACED_MAX_NAMED];
	unsigned int n = 1, i;
	double t0;

	t->kernel = svmtrace_vmi_kernel(vmi);
	t->profile = svmtrace_vmi_profile_path(svmtrace_vmi_profile(vmi));
	if (o->from == FROM_FIRST || o->wait_name)
		thread_start(vmi, mem, o, t);
	if (o->wait_name) {
		/* What is there now is not new; the kernel asks about the rest (asks.c). */
		processes_stable(vmi, mem, &t->before, &t->nr_before);
		t->waiting = true;
		return;
	}
	if (o->name)
		n = pick_by_name(vmi, mem, o, pids);
	else
		pids[0] = o->pid;
	t0 = now_seconds();
	for (i = 0; i < n; i++)
		target_resolve_pid(vmi, mem, o, sd, pids[i], &t->procs[i]);
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
	if (p->first)
		snprintf(buf, TARGET_GATE_TEXT, "first");
	else if (p->watch_entry)
		snprintf(buf, TARGET_GATE_TEXT, "watch");
	else
		snprintf(buf, TARGET_GATE_TEXT, "0x%llx", (unsigned long long)p->entry.entry_page);
}

bool target_gate(const struct target_proc *p, uint32_t id, struct svmtrace_gate *g)
{
	const struct svmtrace_vmi_entry *e = &p->entry;

	memset(g, 0, sizeof(*g));
	g->id = id;
	if (p->watch_entry) {
		/* The page the kernel DTB will map at the entry VA. */
		g->flags = SVMTRACE_GATE_F_WATCH;
		g->va = e->entry_va & ~0xfffULL;
		g->dtb = e->process.dtb;
		return true;
	}
	g->gpa = e->entry_page;
	return e->entry_page; /* --from next without a resident entry page: none */
}

void target_fill(const struct target_info *t, const struct daemon_options *o,
		 struct svmtrace_target *kt)
{
	struct svmtrace_gate g;
	unsigned int i, j;

	kt->nr_cr3 = 0;
	kt->nr_gates = 0;
	if (t->has_thread_start) {
		kt->first_rip = t->thread_start.ldr_initialize_thunk;
		if (o->from == FROM_FIRST)
			kt->flags |= SVMTRACE_TARGET_F_FIRST;
		if (t->waiting || o->follow)
			kt->flags |= SVMTRACE_TARGET_F_ASK;
	}
	for (i = 0; i < t->nr_procs; i++) {
		const struct svmtrace_vmi_entry *e = &t->procs[i].entry;

		/* Both DTBs: with KVA shadow user mode runs on the user one. */
		add_cr3(kt, e->process.dtb);
		add_cr3(kt, e->process.user_dtb);
		/* --from first needs no gate: the kernel sees every thread begin. */
		if (o->from == FROM_FIRST || !target_gate(&t->procs[i], kt->nr_gates, &g))
			continue;
		/* Processes of one image share its physical code page: one gate. */
		for (j = 0; j < kt->nr_gates && (g.flags || kt->gates[j].gpa != g.gpa); j++)
			;
		if (j == kt->nr_gates)
			kt->gates[kt->nr_gates++] = g;
	}
}

void target_modules(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, struct target_proc *p)
{
	const struct svmtrace_vmi_process *pr = &p->entry.process;
	struct svmtrace_error err;
	size_t i;
	int rc = 0, tries;

	for (tries = 0; tries < TARGET_WALK_TRIES; tries++) {
		refresh(mem);
		rc = svmtrace_vmi_modules(vmi, pr->pid, &p->modules, &p->nr_modules, &err);
		if (!rc || !target_transient(rc))
			break;
	}
	if (rc) {
		snprintf(p->modules_error, sizeof(p->modules_error), "%s", err.message);
		p->nr_modules = 0;
		return;
	}
	p->module_ids = calloc(p->nr_modules + 1, sizeof(*p->module_ids));
	p->module_extra = calloc(p->nr_modules + 1, sizeof(*p->module_extra));
	if (!p->module_ids || !p->module_extra)
		die("out of memory");
	for (i = 0; i < p->nr_modules; i++) {
		if (svmtrace_vmi_image_id(vmi, pr->dtb, p->modules[i].base, &p->module_ids[i],
					  &err))
			p->module_ids[i].size_of_image = 0; /* headers not resident */
		target_module_exports(vmi, p, i);
	}
}

void target_module_exports(struct svmtrace_vmi *vmi, struct target_proc *p, size_t i)
{
	struct module_extra *x = &p->module_extra[i];
	struct svmtrace_error err;

	if (svmtrace_vmi_exports(vmi, p->entry.process.dtb, p->modules[i].base, &x->exports,
				 &x->nr_exports, &err))
		snprintf(x->exports_error, sizeof(x->exports_error), "%s", err.message);
}
