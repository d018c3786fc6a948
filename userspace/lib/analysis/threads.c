// SPDX-License-Identifier: GPL-2.0
/*
 * Which thread each record ran in, from capture.json: the threads
 * ("threads": TEB, CR3, IDs) and, per vCPU, from which sequence on it ran
 * which TEB ("thread_switches": [vcpu, first_sequence, teb]).  A record's
 * thread is its vCPU's last switch at or before its sequence, with the
 * record's own CR3 (processes may have TEBs at the same address).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/analysis.h>

#include "lib/analysis/json_get.h"
#include "lib/trace/error.h"

#define CR3_MASK 0x000ffffffffff000ull

struct switch_entry {
	uint32_t vcpu;
	uint64_t first_sequence, teb;
};

struct svmtrace_threads {
	struct svmtrace_thread_info *t;
	size_t n;
	struct switch_entry *sw; /* by vCPU, then first sequence */
	size_t nsw;
};

void svmtrace_threads_free(struct svmtrace_threads *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free((char *)t->t[i].process);
	free(t->t);
	free(t->sw);
	free(t);
}

static int by_vcpu_seq(const void *a, const void *b)
{
	const struct switch_entry *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->first_sequence < y->first_sequence ? -1 : x->first_sequence > y->first_sequence;
}

static int load_threads(struct svmtrace_threads *t, json_object *a)
{
	size_t i, n = json_object_array_length(a);
	const char *p;

	t->t = calloc(n ? n : 1, sizeof(*t->t));
	if (!t->t)
		return -1;
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(a, i);
		struct svmtrace_thread_info *th = &t->t[t->n];

		if (!json_member_num(o, "teb", &th->teb) || !json_member_num(o, "cr3", &th->cr3))
			continue; /* not a usable entry: skipped */
		th->cr3 &= CR3_MASK;
		json_member_num(o, "pid", &th->pid);
		json_member_num(o, "tid", &th->tid);
		json_member_num(o, "start_address", &th->start_address);
		json_member_num(o, "win32_start_address", &th->win32_start_address);
		json_member_num(o, "first_sequence", &th->first_sequence);
		p = json_member_str(o, "process");
		if (p && !(th->process = strdup(p)))
			return -1;
		t->n++;
	}
	return 0;
}

static int load_switches(struct svmtrace_threads *t, json_object *a)
{
	size_t i, n = json_object_array_length(a);
	uint64_t vcpu;

	t->sw = calloc(n ? n : 1, sizeof(*t->sw));
	if (!t->sw)
		return -1;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		struct switch_entry *s = &t->sw[t->nsw];

		if (!json_element_num(e, 0, &vcpu) || vcpu > UINT32_MAX ||
		    !json_element_num(e, 1, &s->first_sequence) || !json_element_num(e, 2, &s->teb))
			continue;
		s->vcpu = (uint32_t)vcpu;
		t->nsw++;
	}
	qsort(t->sw, t->nsw, sizeof(*t->sw), by_vcpu_seq);
	return 0;
}

int svmtrace_threads_load(const char *path, struct svmtrace_threads **out,
			  struct svmtrace_error *err)
{
	json_object *doc = json_object_from_file(path), *a;
	struct svmtrace_threads *t = calloc(1, sizeof(*t));
	int rc = 0;

	*out = NULL;
	if (!doc || !t) {
		free(t);
		json_object_put(doc);
		if (!doc)
			return trace_error_noloc(
				err, errno == ENOENT ? SVMTRACE_E_IO : SVMTRACE_E_FORMAT, path,
				"cannot read it as JSON: %s", json_util_get_last_err());
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	}
	if (json_object_object_get_ex(doc, "threads", &a) &&
	    json_object_is_type(a, json_type_array))
		rc = load_threads(t, a);
	if (!rc && json_object_object_get_ex(doc, "thread_switches", &a) &&
	    json_object_is_type(a, json_type_array))
		rc = load_switches(t, a);
	json_object_put(doc);
	if (rc) {
		svmtrace_threads_free(t);
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	}
	*out = t;
	return 0;
}

size_t svmtrace_threads_count(const struct svmtrace_threads *t)
{
	return t ? t->n : 0;
}

const struct svmtrace_thread_info *svmtrace_threads_at(const struct svmtrace_threads *t,
						       size_t index)
{
	return t && index < t->n ? &t->t[index] : NULL;
}

long svmtrace_threads_find(const struct svmtrace_threads *t, uint32_t vcpu, uint64_t sequence,
			   uint64_t cr3)
{
	size_t lo = 0, hi, i;
	uint64_t teb;

	if (!t || !t->nsw)
		return -1;
	/* The last switch with (vcpu, first_sequence) <= (vcpu, sequence). */
	hi = t->nsw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct switch_entry *s = &t->sw[mid];

		if (s->vcpu < vcpu || (s->vcpu == vcpu && s->first_sequence <= sequence))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->sw[lo - 1].vcpu != vcpu)
		return -1;
	teb = t->sw[lo - 1].teb;
	for (i = 0; i < t->n; i++)
		if (t->t[i].teb == teb && t->t[i].cr3 == (cr3 & CR3_MASK))
			return (long)i;
	return -1;
}
