// SPDX-License-Identifier: GPL-2.0
/*
 * capture.json: what offline tools need to symbolize the traces (domain,
 * kernel build, process, modules), the options and the counts.  Written at
 * arm and again at the end, each time atomically (tmp + fsync + rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/cli.h"
#include "svmtraced/svmtraced.h"

static json_object *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_object_new_string(buf);
}

static json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *when(double t)
{
	char buf[32];
	time_t s = (time_t)t;
	struct tm tm;

	if (!t)
		return NULL;
	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_object_new_string(buf);
}

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* "GUID-AGE" -> the GUID and the age apart. */
static void add_pdb_id(json_object *o, const char *id)
{
	const char *dash = strrchr(id, '-');

	add(o, "pdb_id", json_object_new_string(id));
	if (!dash)
		return;
	add(o, "pdb_guid", json_object_new_string_len(id, (int)(dash - id)));
	add(o, "pdb_age", json_object_new_int64(strtoll(dash + 1, NULL, 16)));
}

static json_object *kernel(const struct target_info *t)
{
	json_object *o = json_object_new_object();

	add(o, "base", hex(t->kernel->base));
	add(o, "size", json_object_new_int64(t->kernel->size_of_image));
	add(o, "dtb", hex(t->kernel->dtb));
	add(o, "pdb", json_object_new_string(t->kernel->pdb_name));
	add_pdb_id(o, t->kernel->id);
	add(o, "found_by", json_object_new_string(svmtrace_vmi_method_name(t->kernel->method)));
	add(o, "anchor", hex(t->kernel->anchor));
	add(o, "anchor_symbol", str_or_null(t->kernel->anchor_symbol[0] ? t->kernel->anchor_symbol
									   : NULL));
	add(o, "found_from", json_object_new_string(t->kernel->source));
	add(o, "profile", str_or_null(t->profile));
	return o;
}

/* The first record of the process's threads (threads.c), -1 when none ran. */
static int64_t first_sequence(const struct target_info *t, uint64_t pid)
{
	int64_t first = -1;
	size_t i;

	for (i = 0; i < t->nr_threads; i++)
		if (t->threads[i].pid == pid &&
		    (first < 0 || t->threads[i].first_sequence < (uint64_t)first))
			first = (int64_t)t->threads[i].first_sequence;
	return first;
}

/* When it was first seen, and its export directory at that time. */
static void module_extra(json_object *o, const struct module_extra *x)
{
	json_object *a = json_object_new_array();
	size_t i;

	add(o, "first_seen_sequence",
	    x->later ? json_object_new_int64((int64_t)x->first_sequence) : NULL);
	for (i = 0; i < x->nr_exports; i++) {
		json_object *e = json_object_new_object();

		add(e, "name", json_object_new_string(x->exports[i].name));
		add(e, "ordinal", json_object_new_int64(x->exports[i].ordinal));
		add(e, "rva", hex(x->exports[i].rva));
		json_object_array_add(a, e);
	}
	add(o, "exports", a);
	add(o, "exports_error", str_or_null(x->exports_error));
}

static json_object *code(const struct code_stats *c)
{
	json_object *o = json_object_new_object();

	add(o, "file", json_object_new_string("code.bin"));
	add(o, "pages", json_object_new_int64((int64_t)c->pages));
	add(o, "versions", json_object_new_int64((int64_t)c->versions));
	add(o, "changed", json_object_new_int64((int64_t)c->changed));
	add(o, "rechecks", json_object_new_int64((int64_t)c->rechecks));
	add(o, "unreadable", json_object_new_int64((int64_t)c->unreadable));
	add(o, "module_walks", json_object_new_int64((int64_t)c->module_walks));
	add(o, "modules_added", json_object_new_int64((int64_t)c->modules_added));
	add(o, "seconds", json_object_new_double(c->seconds));
	add(o, "error", str_or_null(c->error));
	return o;
}

static json_object *modules(const struct target_proc *t)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < t->nr_modules; i++) {
		const struct svmtrace_vmi_module *m = &t->modules[i];
		const struct svmtrace_vmi_image_id *id = t->module_ids ? &t->module_ids[i] : NULL;
		json_object *o = json_object_new_object();

		add(o, "name", json_object_new_string(m->name));
		add(o, "path", json_object_new_string(m->path));
		add(o, "base", hex(m->base));
		add(o, "size", json_object_new_int64(m->size));
		if (id && id->size_of_image)
			add(o, "pe_timestamp", hex(id->time_date_stamp));
		if (id && id->has_codeview) {
			add(o, "pdb", json_object_new_string(id->pdb_name));
			add_pdb_id(o, id->id);
		}
		if (t->module_extra)
			module_extra(o, &t->module_extra[i]);
		json_object_array_add(a, o);
	}
	return a;
}

/* --hide-time: the costs the kernel applies (a 0 takes its default). */
static json_object *time_costs(const struct svmtrace_time_costs *c)
{
	json_object *o = json_object_new_object();

	add(o, "insn_cycles",
	    json_object_new_double((c->insn_x256 ? c->insn_x256 : SVMTRACE_TIME_INSN_X256) / 256.0));
	add(o, "tsc_read_cycles",
	    json_object_new_int64(c->tsc_read ? c->tsc_read : SVMTRACE_TIME_TSC_READ));
	add(o, "exit_cycles", json_object_new_int64(c->exit ? c->exit : SVMTRACE_TIME_EXIT));
	return o;
}

/* The traced processes under @pid (their ppid), each with its own children. */
static json_object *children(const struct target_info *t, uint64_t pid, unsigned int depth)
{
	json_object *a = json_object_new_array();
	unsigned int i;

	for (i = 0; depth < SVMTRACED_MAX_PROCS && i < t->nr_procs; i++) {
		const struct svmtrace_vmi_process *p = &t->procs[i].entry.process;
		json_object *o;

		if (p->ppid != pid || p->pid == pid)
			continue;
		o = json_object_new_object();
		add(o, "pid", json_object_new_int64((int64_t)p->pid));
		add(o, "name", json_object_new_string(p->name));
		add(o, "children", children(t, p->pid, depth + 1));
		json_object_array_add(a, o);
	}
	return a;
}

/* process_tree: every traced process whose parent is not traced, and below it its descendants. */
static json_object *process_tree(const struct target_info *t)
{
	json_object *a = json_object_new_array();
	unsigned int i, j;

	for (i = 0; i < t->nr_procs; i++) {
		const struct svmtrace_vmi_process *p = &t->procs[i].entry.process;
		json_object *o;

		for (j = 0; j < t->nr_procs; j++)
			if (j != i && t->procs[j].entry.process.pid == p->ppid)
				break;
		if (j < t->nr_procs)
			continue; /* under its parent */
		o = json_object_new_object();
		add(o, "pid", json_object_new_int64((int64_t)p->pid));
		add(o, "name", json_object_new_string(p->name));
		add(o, "children", children(t, p->pid, 1));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *process(const struct target_info *t, const struct target_proc *p)
{
	const struct svmtrace_vmi_entry *e = &p->entry;
	json_object *o = json_object_new_object();
	int64_t first = first_sequence(t, e->process.pid);

	add(o, "pid", json_object_new_int64((int64_t)e->process.pid));
	add(o, "ppid", json_object_new_int64((int64_t)e->process.ppid));
	add(o, "name", json_object_new_string(e->process.name));
	add(o, "command_line", str_or_null(p->command_line));
	add(o, "followed", json_object_new_boolean(p->followed));
	add(o, "first_sequence", first < 0 ? NULL : json_object_new_int64(first));
	add(o, "eprocess", hex(e->process.eprocess));
	add(o, "dtb", hex(e->process.dtb));
	add(o, "user_dtb", e->process.user_dtb ? hex(e->process.user_dtb) : NULL);
	add(o, "peb", hex(e->process.peb));
	add(o, "image_base", hex(e->image_base));
	add(o, "entry_rva", hex(e->entry_rva));
	add(o, "entry_va", hex(e->entry_va));
	add(o, "entry_section", json_object_new_string(e->section));
	add(o, "entry_gpa", hex(e->where.gpa));
	add(o, "entry_page", hex(e->entry_page));
	add(o, "entry_page_state",
	    json_object_new_string(svmtrace_vmi_page_state_name(e->where.state)));
	add(o, "modules", modules(p));
	add(o, "modules_error", str_or_null(p->modules_error));
	return o;
}

static json_object *options(const struct daemon_options *op)
{
	const struct svmtrace_target *t = &op->target;
	json_object *o = json_object_new_object(), *r = json_object_new_array();
	uint32_t i;

	add(o, "from",
	    json_object_new_string(op->from == FROM_NEXT    ? "next"
				   : op->from == FROM_FIRST ? "first"
							    : "entry"));
	add(o, "policy",
	    json_object_new_string(t->policy == SVMTRACE_POLICY_BLOCK ? "block" : "drop"));
	add(o, "kernel", json_object_new_boolean(t->flags & SVMTRACE_TARGET_F_KERNEL));
	add(o, "xstate", json_object_new_boolean(t->flags & SVMTRACE_TARGET_F_XSTATE));
	add(o, "mem", json_object_new_boolean(t->flags & SVMTRACE_TARGET_F_MEM));
	add(o, "hide_time", t->flags & SVMTRACE_TARGET_F_HIDE_TIME ? time_costs(&t->time) : NULL);
	for (i = 0; i < t->nr_ranges; i++) {
		json_object *p = json_object_new_array();

		json_object_array_add(p, hex(t->ranges[i].start));
		json_object_array_add(p, hex(t->ranges[i].end));
		json_object_array_add(r, p);
	}
	add(o, "rip_ranges", r);
	add(o, "duration", op->lim.duration ? json_object_new_double(op->lim.duration) : NULL);
	add(o, "max_records",
	    op->lim.max_records ? json_object_new_int64((int64_t)op->lim.max_records) : NULL);
	add(o, "max_bytes",
	    op->lim.max_bytes ? json_object_new_int64((int64_t)op->lim.max_bytes) : NULL);
	add(o, "ring_slots",
	    json_object_new_int64(t->ring_slots ? t->ring_slots : SVMTRACE_DEFAULT_RING_SLOTS));
	add(o, "wake_batch", t->wake_batch ? json_object_new_int64(t->wake_batch) : NULL);
	add(o, "name", str_or_null(op->name));
	add(o, "wait_name", str_or_null(op->wait_name));
	add(o, "follow", json_object_new_boolean(op->follow));
	add(o, "newest", json_object_new_boolean(op->newest));
	add(o, "audit", json_object_new_boolean(op->audit));
	return o;
}

static json_object *armed_target(const struct target_info *t, const struct daemon_options *op)
{
	struct svmtrace_target kt;
	json_object *o = json_object_new_object(), *c = json_object_new_array(),
		    *g = json_object_new_array(), *w = json_object_new_array();
	uint32_t i;

	memset(&kt, 0, sizeof(kt));
	target_fill(t, op, &kt);
	for (i = 0; i < kt.nr_cr3; i++)
		json_object_array_add(c, hex(kt.cr3[i]));
	for (i = 0; i < kt.nr_gates; i++) {
		const struct svmtrace_gate *k = &kt.gates[i];
		json_object *one;

		if (!(k->flags & SVMTRACE_GATE_F_WATCH)) {
			json_object_array_add(g, hex(k->gpa));
			continue;
		}
		one = json_object_new_object();
		add(one, "va", hex(k->va));
		add(one, "dtb", hex(k->dtb));
		json_object_array_add(w, one);
	}
	add(o, "cr3", c);
	add(o, "gates", g);
	add(o, "watched_gates", w);
	add(o, "first_rip", kt.first_rip ? hex(kt.first_rip) : NULL);
	add(o, "resolve_seconds", json_object_new_double(t->resolve_seconds));
	return o;
}

/* Where threads begin, and how svmtraced knows (--from first, --wait-name). */
static json_object *thread_start(const struct svmtrace_vmi_thread_start *s)
{
	json_object *o = json_object_new_object();

	add(o, "ldr_initialize_thunk", hex(s->ldr_initialize_thunk));
	add(o, "rtl_user_thread_start",
	    s->rtl_user_thread_start ? hex(s->rtl_user_thread_start) : NULL);
	add(o, "source", json_object_new_string(s->source));
	add(o, "ntdll_base", s->ntdll_base ? hex(s->ntdll_base) : NULL);
	add(o, "check", json_object_new_string(s->check));
	return o;
}

/* The threads the records ran in, and where each vCPU changed thread (threads.c). */
static json_object *threads(const struct target_info *t)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < t->nr_threads; i++) {
		const struct thread_seen *th = &t->threads[i];
		json_object *o = json_object_new_object();

		add(o, "teb", hex(th->teb));
		add(o, "cr3", hex(th->cr3));
		add(o, "pid", th->pid ? json_object_new_int64((int64_t)th->pid) : NULL);
		add(o, "process", str_or_null(th->process));
		add(o, "tid", th->tid ? json_object_new_int64((int64_t)th->tid) : NULL);
		add(o, "start_address", th->tid ? hex(th->start_address) : NULL);
		add(o, "win32_start_address", th->tid ? hex(th->win32_start_address) : NULL);
		add(o, "first_sequence", json_object_new_int64((int64_t)th->first_sequence));
		add(o, "error", str_or_null(th->error));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *thread_switches(const struct target_info *t)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < t->nr_switches; i++) {
		json_object *e = json_object_new_array();

		json_object_array_add(e, json_object_new_int64(t->switches[i].vcpu));
		json_object_array_add(
			e, json_object_new_int64((int64_t)t->switches[i].first_sequence));
		json_object_array_add(e, hex(t->switches[i].teb));
		json_object_array_add(a, e);
	}
	return a;
}

/* Processes svmtraced meant to trace and could not. */
static json_object *lost(const struct target_info *t)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < t->nr_lost; i++) {
		json_object *o = json_object_new_object();

		add(o, "pid", json_object_new_int64((int64_t)t->lost[i].pid));
		add(o, "name", json_object_new_string(t->lost[i].name));
		add(o, "reason", json_object_new_string(t->lost[i].reason));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *counts(const struct meta *m)
{
	json_object *a = json_object_new_array();
	uint32_t i;

	for (i = 0; i < m->nr_counts; i++) {
		const struct meta_counts *c = &m->counts[i];
		json_object *o = json_object_new_object();

		add(o, "vcpu", json_object_new_int64(c->vcpu));
		add(o, "written", json_object_new_int64((int64_t)c->written));
		add(o, "dropped", json_object_new_int64((int64_t)c->dropped));
		add(o, "produced", json_object_new_int64((int64_t)c->produced));
		add(o, "discarded", json_object_new_int64((int64_t)c->discarded));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *u64(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

/* --audit: the equation and its terms per vCPU (userspace/audit/audit.h). */
static json_object *audit(const struct meta *m)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	uint32_t i;

	add(o, "balanced", json_object_new_boolean(m->audit_ok));
	add(o, "equations",
	    json_object_new_string("db_exits = kmod_db_exits + foreign; db_exits = produced - "
				   "emulated + unrecorded - stepless_ends + foreign; npf_exits >= "
				   "gate_faults"));
	for (i = 0; i < m->nr_counts; i++) {
		const struct audit_line *l = &m->audit[i];
		json_object *v = json_object_new_object();

		add(v, "vcpu", json_object_new_int64(l->vcpu));
		add(v, "vcpu_id", json_object_new_int64(l->vcpu_id));
		add(v, "db_exits", u64(l->db_exits));
		add(v, "kmod_db_exits", u64(l->kmod_db_exits));
		add(v, "produced", u64(l->produced));
		add(v, "emulated", u64(l->emulated));
		add(v, "unrecorded", u64(l->unrecorded));
		add(v, "stepless_ends", u64(l->stepless_ends));
		add(v, "foreign", u64(l->foreign));
		add(v, "balanced", json_object_new_boolean(l->balanced));
		add(v, "npf_exits", u64(l->npf_exits));
		add(v, "gate_faults", u64(l->gate_faults));
		add(v, "steps_timed", u64(l->steps_timed));
		add(v, "step_ns_mean", u64(l->steps_timed ? l->step_ns / l->steps_timed : 0));
		add(v, "step_ns_p50_max", u64(l->step_p50_ns));
		add(v, "step_ns_p99_max", u64(l->step_p99_ns));
		add(v, "exits", u64(l->exits));
		add(v, "ud_exits", u64(l->ud_exits));
		add(v, "iret_exits", u64(l->iret_exits));
		add(v, "cr3_exits", u64(l->cr3_exits));
		json_object_array_add(a, v);
	}
	add(o, "vcpus", a);
	return o;
}

static json_object *document(const struct meta *m)
{
	json_object *o = json_object_new_object(), *d = json_object_new_object();
	const struct target_info *t = m->target;
	unsigned int i;

	add(o, "format", json_object_new_string("svmtrace-capture"));
	add(o, "version", json_object_new_int(1));
	add(o, "state", json_object_new_string(m->state));
	add(o, "started", when(m->started));
	add(o, "ended", when(m->ended));
	add(o, "end_reason", str_or_null(m->end_reason));
	add(d, "name", str_or_null(m->vm->name));
	add(d, "uuid", str_or_null(m->vm->uuid));
	add(d, "vmm_pid", json_object_new_int64(m->vm->vmm_pid));
	add(o, "domain", d);
	if (t && t->kernel)
		add(o, "kernel", kernel(t));
	if (t && t->has_thread_start)
		add(o, "thread_start", thread_start(&t->thread_start));
	if (t)
		add(o, "lost", lost(t));
	if (t && t->asks.held) {
		json_object *a = json_object_new_object();

		add(a, "held", json_object_new_int64((int64_t)t->asks.held));
		add(a, "joined", json_object_new_int64((int64_t)t->asks.joined));
		add(a, "seconds", json_object_new_double(t->asks.seconds));
		add(a, "ended", json_object_new_boolean(t->asks.ended));
		add(o, "asks", a);
	}
	add(o, "syscalls_unrecorded", json_object_new_int64((int64_t)m->syscalls_unrecorded));
	if (t && t->waiting)
		add(o, "waiting_for", json_object_new_string(m->opt->wait_name));
	if (t && t->nr_procs) {
		json_object *a = json_object_new_array();

		add(o, "process", process(t, &t->procs[0]));
		for (i = 0; i < t->nr_procs; i++)
			json_object_array_add(a, process(t, &t->procs[i]));
		add(o, "processes", a);
		add(o, "process_tree", process_tree(t));
		add(o, "target", armed_target(t, m->opt));
		add(o, "modules", modules(&t->procs[0]));
		add(o, "modules_error", str_or_null(t->procs[0].modules_error));
		add(o, "code", t->code.enabled ? code(&t->code) : NULL);
		add(o, "threads", threads(t));
		add(o, "thread_switches", thread_switches(t));
	}
	add(o, "options", options(m->opt));
	add(o, "vcpus", counts(m));
	add(o, "audit", m->audit ? audit(m) : NULL);
	return o;
}

bool meta_write(const char *dir, const struct meta *m)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	json_object *doc = document(m);
	const char *text = json_object_to_json_string_ext(
		doc,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = strlen(text);
	bool ok = false;
	int fd;

	snprintf(path, sizeof(path), "%s/capture.json", dir);
	snprintf(tmp, sizeof(tmp), "%s/.capture.json.tmp", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		warn("%s: %s", tmp, strerror(errno));
	} else if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd)) {
		warn("%s: %s", tmp, strerror(errno ? errno : EIO));
		close(fd);
		unlink(tmp);
	} else if (close(fd) || rename(tmp, path)) {
		warn("%s: %s", path, strerror(errno));
		unlink(tmp);
	} else {
		ok = true;
	}
	json_object_put(doc);
	return ok;
}
