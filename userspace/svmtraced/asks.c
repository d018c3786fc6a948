// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's asks (SVMTRACE_TARGET_F_ASK): while svmtraced waits for a
 * process (--wait-name) or follows the target's children (--follow), every
 * new thread of an address space that is not the target's is held by the
 * kernel at its first instruction (ntdll's LdrInitializeThunk) until we have
 * looked at its process.  A new process of the awaited name, or one whose
 * parent is traced, joins the target there -- its CR3s, and with --from
 * entry the gate on its entry page -- before any of its instructions ran:
 * nothing is polled and nothing is missed.  Every other thread runs on
 * untraced.  Without --follow nothing is asked once the awaited process
 * joined: the kernel stops holding threads and the rest of the guest stops
 * paying for the asks (SVMTRACE_END_ASKS).
 *
 * What the kernel cannot take (its table of CR3s or gates is full) is a
 * process we lose: it runs untraced, and capture.json says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

/* The process was there when svmtraced started (same PID, same EPROCESS). */
static bool was_there(const struct target_info *t, const struct svmtrace_vmi_process *p)
{
	size_t i;

	for (i = 0; i < t->nr_before; i++)
		if (t->before[i].pid == p->pid && t->before[i].eprocess == p->eprocess)
			return true;
	return false;
}

/* A process of the awaited name that was not there when we started. */
static bool awaited(const struct ask_ctx *a, const struct svmtrace_vmi_process *p)
{
	return a->t->waiting && target_name_matches(a->opt->wait_name, p->name) &&
	       !was_there(a->t, p);
}

static void lose(struct target_info *t, const struct svmtrace_vmi_process *p, const char *why)
{
	struct lost_proc *l = realloc(t->lost, (t->nr_lost + 1) * sizeof(*l));

	if (!l)
		die("out of memory");
	t->lost = l;
	l = &t->lost[t->nr_lost++];
	l->pid = p->pid;
	snprintf(l->name, sizeof(l->name), "%s", p->name);
	snprintf(l->reason, sizeof(l->reason), "%s", why);
	warn("PID %llu (%s) is not traced: %s", (unsigned long long)p->pid, p->name, why);
}

/*
 * Make @p (asked about by @ask) the target's: resolve it as the options say
 * and hand the kernel its CR3s and gate.  False when the kernel had no room.
 */
static bool join(int ctl, struct ask_ctx *a, const struct svmtrace_ask *ask,
		 const struct svmtrace_vmi_process *p)
{
	struct target_info *t = a->t;
	struct target_proc *tp;
	struct svmtrace_decision d = { .vcpu = ask->vcpu,
				       .verdict = SVMTRACE_VERDICT_TARGET,
				       .cr3 = ask->cr3 };

	if (t->nr_procs >= a->opt->max_procs) {
		char why[64];

		snprintf(why, sizeof(why), "--max-processes %u reached", a->opt->max_procs);
		lose(t, p, why);
		return false;
	}
	tp = &t->procs[t->nr_procs];
	memset(tp, 0, sizeof(*tp));
	target_resolve_pid(a->vmi, a->mem, a->opt, a->sd, p->pid, tp);
	d.add_cr3[d.nr_cr3++] = tp->entry.process.dtb;
	if (tp->entry.process.user_dtb)
		d.add_cr3[d.nr_cr3++] = tp->entry.process.user_dtb;
	/* Its gate's id as target_fill() would give it: the number of procs before it. */
	if (a->opt->from != FROM_FIRST && target_gate(tp, t->nr_procs, &d.gates[0]))
		d.nr_gates = 1;
	if (ioctl(ctl, SVMTRACE_DECIDE, &d)) {
		if (errno != ENOSPC)
			die("decide about PID %llu: %s", (unsigned long long)p->pid,
			    strerror(errno));
		lose(t, p, "the kernel's table of address spaces or gates is full");
		return false;
	}
	t->nr_procs++;
	return true;
}

/* --follow: its parent is traced (children of children too, as they join). */
static bool child_of_target(const struct ask_ctx *a, const struct svmtrace_vmi_process *p)
{
	unsigned int i;

	for (i = 0; a->opt->follow && i < a->t->nr_procs; i++)
		if (a->t->procs[i].entry.process.pid == p->ppid)
			return true;
	return false;
}

/* One held thread: whose is it, and is it to be traced? */
static void serve_one(int ctl, struct ask_ctx *a, const struct svmtrace_ask *ask)
{
	struct svmtrace_vmi_process p;
	bool child, wanted;

	a->t->asks.held++;
	if (!target_process_of_cr3(a->vmi, a->mem, ask->cr3, &p)) {
		warn("a thread began under CR3 0x%llx, which no process in the list has: not "
		     "traced",
		     (unsigned long long)ask->cr3);
		control_release(ctl, ask);
		return;
	}
	child = child_of_target(a, &p);
	wanted = awaited(a, &p);
	if ((!wanted && !child) || !join(ctl, a, ask, &p)) {
		control_release(ctl, ask);
		return;
	}
	a->t->asks.joined++;
	a->t->procs[a->t->nr_procs - 1].followed = child && !wanted;
	if (wanted)
		a->t->waiting = false;
	if (!a->t->waiting && !a->opt->follow && !a->t->asks.ended) {
		if (ioctl(ctl, SVMTRACE_END_ASKS) && errno != ESRCH)
			die("end the asks: %s", strerror(errno));
		a->t->asks.ended = true;
	}
	if (a->found)
		a->found(a->found_ctx, a->t->nr_procs - 1);
}

const char *asks_serve(struct capture *cap, struct ask_ctx *a)
{
	struct svmtrace_asks asks;
	uint32_t i;
	double t0;

	control_asks(cap->ctl, &asks);
	t0 = now_seconds();
	for (i = 0; i < asks.nr; i++)
		serve_one(cap->ctl, a, &asks.asks[i]);
	a->t->asks.seconds += now_seconds() - t0;
	return NULL;
}
