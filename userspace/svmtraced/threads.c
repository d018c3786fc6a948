// SPDX-License-Identifier: GPL-2.0
/*
 * Which thread each record is.  Every slot carries the vCPU's GS base after
 * the step, which in user mode is the running thread's (Windows x64: its
 * TEB, which the kernel loads into KERNEL_GS_BASE at every switch and
 * SWAPGS makes the GS base on the way to user mode).  A vCPU's user-mode
 * records between two changes of it (or of CR3: processes may put their
 * threads' TEBs at the same address) are one thread's: svmtraced notes each
 * change (capture.json "thread_switches": vCPU, first sequence, TEB) and
 * looks each TEB up when it first appears, in the thread list of the
 * process whose CR3 the record has (ETHREAD: thread ID, start addresses;
 * capture.json "threads").  Kernel-mode steps (--kernel) keep the thread
 * of the user-mode steps before them: their GS base is the kernel's.
 *
 * A TEB that a process reuses for a later thread is looked up once, at its
 * first appearance under that CR3: the later thread gets the earlier one's
 * IDs (docs/analysis.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

#define MAX_TRACKED_VCPUS 256

struct thread_map {
	struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_mem *mem;
	struct target_info *t;
	/* the vCPU's GS base and CR3 at its last user step */
	uint64_t last_gs[MAX_TRACKED_VCPUS], last_cr3[MAX_TRACKED_VCPUS];
};

struct thread_map *threads_open(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
				struct target_info *t)
{
	struct thread_map *m = calloc(1, sizeof(*m));

	if (!m)
		die("out of memory");
	m->vmi = vmi;
	m->mem = mem;
	m->t = t;
	return m;
}

void threads_close(struct thread_map *m)
{
	free(m);
}

static struct thread_seen *seen(struct target_info *t, uint64_t teb, uint64_t cr3)
{
	size_t i;

	for (i = 0; i < t->nr_threads; i++)
		if (t->threads[i].teb == teb && t->threads[i].cr3 == cr3)
			return &t->threads[i];
	return NULL;
}

/* Who the thread with @teb under @cr3 is: its process's thread list, now. */
static void look_up(struct thread_map *m, struct thread_seen *th)
{
	struct svmtrace_vmi_process p;
	struct svmtrace_vmi_thread *list;
	struct svmtrace_error err;
	size_t n, i;
	int rc, tries;

	if (!target_process_of_cr3(m->vmi, m->mem, th->cr3, &p)) {
		snprintf(th->error, sizeof(th->error), "no process has CR3 0x%llx",
			 (unsigned long long)th->cr3);
		return;
	}
	th->pid = p.pid;
	snprintf(th->process, sizeof(th->process), "%s", p.name);
	/* the guest runs on: a thread it is adding may be half in the list */
	for (tries = 1;; tries++) {
		rc = svmtrace_vmi_mem_refresh(m->mem, &err);
		if (!rc)
			rc = svmtrace_vmi_threads(m->vmi, p.pid, &list, &n, &err);
		if (!rc || !target_transient(rc) || tries == TARGET_WALK_TRIES)
			break;
		usleep(TARGET_WALK_PAUSE_US);
	}
	if (rc) {
		snprintf(th->error, sizeof(th->error), "%s", err.message);
		return;
	}
	for (i = 0; i < n && list[i].teb != th->teb; i++)
		;
	if (i < n) {
		th->tid = list[i].tid;
		th->start_address = list[i].start_address;
		th->win32_start_address = list[i].win32_start_address;
	} else {
		snprintf(th->error, sizeof(th->error),
			 "no thread of PID %llu has the TEB 0x%llx (%zu threads)",
			 (unsigned long long)p.pid, (unsigned long long)th->teb, n);
	}
	free(list);
}

static void grow(void **v, size_t n, size_t size)
{
	void *p = realloc(*v, (n + 1) * size);

	if (!p)
		die("out of memory");
	*v = p;
}

/* @s ran on @vcpu under another thread than its last user step. */
static void switched(struct thread_map *m, uint32_t vcpu, const struct svmtrace_slot *s)
{
	struct target_info *t = m->t;
	uint64_t cr3 = s->cr3 & 0x000ffffffffff000ull;
	struct thread_seen *th = seen(t, s->gs_base, cr3);

	grow((void **)&t->switches, t->nr_switches, sizeof(*t->switches));
	t->switches[t->nr_switches++] =
		(struct thread_switch){ .vcpu = vcpu, .first_sequence = s->seq, .teb = s->gs_base };
	if (th)
		return;
	grow((void **)&t->threads, t->nr_threads, sizeof(*t->threads));
	th = &t->threads[t->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->teb = s->gs_base;
	th->cr3 = cr3;
	th->first_sequence = s->seq;
	look_up(m, th);
}

void threads_observe(void *ctx, uint32_t vcpu, const struct svmtrace_slot *slots, size_t n,
		     size_t stride)
{
	struct thread_map *m = ctx;
	uint64_t *gs = &m->last_gs[vcpu % MAX_TRACKED_VCPUS];
	uint64_t *cr3 = &m->last_cr3[vcpu % MAX_TRACKED_VCPUS];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct svmtrace_slot *s =
			(const struct svmtrace_slot *)((const char *)slots + i * stride);

		if (s->kind == SVMTRACE_SLOT_SESSION_END || (s->flags & SVMTRACE_SLOT_F_KERNEL))
			continue;
		if (s->kind == SVMTRACE_SLOT_SESSION_START || s->gs_base != *gs || s->cr3 != *cr3)
			switched(m, vcpu, s);
		*gs = s->gs_base;
		*cr3 = s->cr3;
	}
}
