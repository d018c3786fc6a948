// SPDX-License-Identifier: GPL-2.0
/*
 * The module map of a capture (capture.json: modules, their exports, when
 * each was first seen) as a table a VA is looked up in: modules sorted by
 * base, each with its functions sorted by address.  ISF symbol files add
 * functions (symbols_isf.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/analysis.h>

#include "lib/analysis/json_get.h"
#include "lib/analysis/symbols_int.h"
#include "lib/trace/error.h"

struct svmtrace_symbols *svmtrace_symbols_new(void)
{
	return calloc(1, sizeof(struct svmtrace_symbols));
}

void svmtrace_symbols_free(struct svmtrace_symbols *s)
{
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		struct sym_module *m = &s->m[i];

		for (j = 0; j < m->nfuncs; j++)
			free(m->funcs[j].name);
		free(m->funcs);
		free((char *)m->info.name);
		free((char *)m->info.path);
		free((char *)m->info.pdb_id);
		free((char *)m->info.function_from);
	}
	free(s->m);
	free(s);
}

int sym_add_function(struct sym_module *m, uint64_t va, const char *name)
{
	if (va < m->info.base || va - m->info.base >= m->info.size)
		return 0; /* not inside the module: ignored */
	if (m->nfuncs == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct sym_function *f = realloc(m->funcs, cap * sizeof(*f));

		if (!f)
			return -1;
		m->funcs = f;
		m->cap = cap;
	}
	m->funcs[m->nfuncs].va = va;
	m->funcs[m->nfuncs].name = strdup(name);
	if (!m->funcs[m->nfuncs].name)
		return -1;
	m->nfuncs++;
	return 0;
}

static int by_va(const void *a, const void *b)
{
	const struct sym_function *x = a, *y = b;

	if (x->va != y->va)
		return x->va < y->va ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_base(const void *a, const void *b)
{
	const struct sym_module *x = a, *y = b;

	return x->info.base < y->info.base ? -1 : x->info.base > y->info.base;
}

void sym_sort_functions(struct sym_module *m)
{
	size_t i, kept = 0;

	qsort(m->funcs, m->nfuncs, sizeof(*m->funcs), by_va);
	for (i = 0; i < m->nfuncs; i++) { /* one name per address: the first */
		if (kept && m->funcs[kept - 1].va == m->funcs[i].va) {
			free(m->funcs[i].name);
			continue;
		}
		m->funcs[kept++] = m->funcs[i];
	}
	m->nfuncs = kept;
	m->info.nr_functions = kept;
}

static struct sym_module *new_module(struct svmtrace_symbols *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct sym_module *m = realloc(s->m, cap * sizeof(*m));

		if (!m)
			return NULL;
		s->m = m;
		s->cap = cap;
	}
	memset(&s->m[s->n], 0, sizeof(s->m[s->n]));
	return &s->m[s->n++];
}

static char *dup_or_null(const char *t)
{
	return t && *t ? strdup(t) : NULL;
}

/*
 * One element of "modules" (of the process with DTBs @cr3, 0 0: any); 1 when
 * it is not a usable module (skipped).
 */
static int load_module(struct svmtrace_symbols *s, json_object *o, const uint64_t cr3[2])
{
	struct sym_module *m;
	json_object *exports, *seen;
	uint64_t base, size, v;
	const char *name = json_member_str(o, "name");
	char label[48];
	size_t i;

	if (!name || !json_member_num(o, "base", &base) || !json_member_num(o, "size", &size) ||
	    !size || size > UINT32_MAX)
		return 1;
	m = new_module(s);
	if (!m)
		return -1;
	m->info.name = strdup(name);
	m->info.path = dup_or_null(json_member_str(o, "path"));
	m->info.pdb_id = dup_or_null(json_member_str(o, "pdb_id"));
	m->info.base = base;
	m->info.size = (uint32_t)size;
	m->info.cr3[0] = cr3[0] & SYM_CR3_MASK;
	m->info.cr3[1] = cr3[1] & SYM_CR3_MASK;
	if (size > s->max_size)
		s->max_size = size;
	if (json_member_num(o, "entry", &v))
		m->info.entry = v;
	if (json_member_num(o, "pe_timestamp", &v))
		m->info.timestamp = (uint32_t)v;
	if (json_object_object_get_ex(o, "first_seen_sequence", &seen) && seen &&
	    json_object_is_type(seen, json_type_int)) {
		m->info.seen_later = true;
		m->info.first_sequence = json_object_get_uint64(seen);
	}
	if (!m->info.name)
		return -1;
	if (json_object_object_get_ex(o, "exports", &exports) &&
	    json_object_is_type(exports, json_type_array)) {
		for (i = 0; i < json_object_array_length(exports); i++) {
			json_object *e = json_object_array_get_idx(exports, i);
			const char *en = json_member_str(e, "name");
			uint64_t rva, ord = 0;

			if (!json_member_num(e, "rva", &rva))
				continue;
			if (!en || !*en) { /* by ordinal only */
				json_member_num(e, "ordinal", &ord);
				snprintf(label, sizeof(label), "#%" PRIu64, ord);
				en = label;
			}
			if (sym_add_function(m, base + rva, en))
				return -1;
		}
		if (m->nfuncs)
			m->info.function_from = strdup("exports");
	}
	sym_sort_functions(m);
	return 0;
}

int svmtrace_symbols_load_capture(struct svmtrace_symbols *s, const char *path,
				  struct svmtrace_error *err)
{
	json_object *doc = json_object_from_file(path), *mods, *procs, *k;
	bool per_process = false;
	size_t i, j;
	int rc;

	if (!doc)
		return trace_error_noloc(err, errno == ENOENT ? SVMTRACE_E_IO : SVMTRACE_E_FORMAT,
					 path, "cannot read it as JSON: %s",
					 json_util_get_last_err());
	if (!json_member_str(doc, "format") ||
	    strcmp(json_member_str(doc, "format"), "svmtrace-capture")) {
		json_object_put(doc);
		return trace_error_noloc(err, SVMTRACE_E_FORMAT, path,
					 "not a capture.json (\"format\" is not "
					 "\"svmtrace-capture\")");
	}
	/*
	 * Every process's modules, each tagged with its DTBs (processes may
	 * map different images at one address), or, from a capture.json
	 * without them, the one list of "modules".
	 */
	rc = 0;
	if (json_object_object_get_ex(doc, "processes", &procs) &&
	    json_object_is_type(procs, json_type_array)) {
		for (i = 0; !rc && i < json_object_array_length(procs); i++) {
			json_object *p = json_object_array_get_idx(procs, i);
			uint64_t cr3[2] = { 0, 0 };

			if (!json_object_object_get_ex(p, "modules", &mods) ||
			    !json_object_is_type(mods, json_type_array))
				continue;
			json_member_num(p, "dtb", &cr3[0]);
			json_member_num(p, "user_dtb", &cr3[1]);
			for (j = 0; rc >= 0 && j < json_object_array_length(mods); j++)
				rc = load_module(s, json_object_array_get_idx(mods, j), cr3);
			per_process = true;
		}
	}
	if (!per_process && json_object_object_get_ex(doc, "modules", &mods) &&
	    json_object_is_type(mods, json_type_array)) {
		static const uint64_t any[2] = { 0, 0 };

		for (i = 0; rc >= 0 && i < json_object_array_length(mods); i++)
			rc = load_module(s, json_object_array_get_idx(mods, i), any);
	}
	if (rc < 0) {
		json_object_put(doc);
		return trace_error_noloc(err, SVMTRACE_E_NOMEM, path, "out of memory");
	}
	/* The kernel image as one more module (for --kernel traces). */
	if (json_object_object_get_ex(doc, "kernel", &k) && k) {
		struct sym_module *m;
		uint64_t base, size;

		if (json_member_num(k, "base", &base) && json_member_num(k, "size", &size) &&
		    size && size <= UINT32_MAX && (m = new_module(s))) {
			m->info.name = strdup("ntoskrnl.exe");
			m->info.pdb_id = dup_or_null(json_member_str(k, "pdb_id"));
			m->info.base = base;
			m->info.size = (uint32_t)size;
			if (size > s->max_size)
				s->max_size = size;
		}
	}
	json_object_put(doc);
	qsort(s->m, s->n, sizeof(*s->m), by_base);
	return 0;
}

size_t svmtrace_symbols_module_count(const struct svmtrace_symbols *s)
{
	return s ? s->n : 0;
}

const struct svmtrace_module_info *svmtrace_symbols_module(const struct svmtrace_symbols *s,
							   size_t i)
{
	return s && i < s->n ? &s->m[i].info : NULL;
}

/* Is module @m one of the address space @cr3's (0: any; an untagged module is everyone's)? */
static bool module_of(const struct sym_module *m, uint64_t cr3)
{
	cr3 &= SYM_CR3_MASK;
	return !cr3 || (!m->info.cr3[0] && !m->info.cr3[1]) || m->info.cr3[0] == cr3 ||
	       m->info.cr3[1] == cr3;
}

bool svmtrace_symbols_lookup(const struct svmtrace_symbols *s, uint64_t cr3, uint64_t va,
			     struct svmtrace_symbol *out)
{
	size_t lo = 0, hi, mi;
	const struct sym_module *m = NULL;

	out->module = -1;
	out->function = NULL;
	out->function_va = out->function_end = 0;
	if (!s || !s->n)
		return false;
	hi = s->n;
	while (lo < hi) { /* the last module with base <= va */
		size_t mid = lo + (hi - lo) / 2;

		if (s->m[mid].info.base <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Modules of several processes may overlap: the nearest below va that holds it. */
	for (mi = lo; mi-- > 0 && va - s->m[mi].info.base < s->max_size;) {
		if (va - s->m[mi].info.base < s->m[mi].info.size && module_of(&s->m[mi], cr3)) {
			m = &s->m[mi];
			break;
		}
	}
	if (!m)
		return false;
	out->module = (int)mi;
	out->function_end = m->info.base + m->info.size;
	lo = 0;
	hi = m->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->funcs[mid].va <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		out->function = m->funcs[lo - 1].name;
		out->function_va = m->funcs[lo - 1].va;
	} else {
		out->function_va = m->info.base;
	}
	if (lo < m->nfuncs)
		out->function_end = m->funcs[lo].va;
	return true;
}

size_t svmtrace_symbols_format(const struct svmtrace_symbols *s, uint64_t cr3, uint64_t va,
			       char *buf, size_t size)
{
	struct svmtrace_symbol sym;
	const char *mod;
	int n;

	if (!size)
		return 0;
	if (!svmtrace_symbols_lookup(s, cr3, va, &sym)) {
		buf[0] = 0;
		return 0;
	}
	mod = s->m[sym.module].info.name;
	if (!sym.function)
		n = snprintf(buf, size, "%s+0x%" PRIx64, mod, va - s->m[sym.module].info.base);
	else if (va == sym.function_va)
		n = snprintf(buf, size, "%s!%s", mod, sym.function);
	else
		n = snprintf(buf, size, "%s!%s+0x%" PRIx64, mod, sym.function, va - sym.function_va);
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}
