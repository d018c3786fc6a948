// SPDX-License-Identifier: GPL-2.0
/*
 * Function names from volatility3 ISF symbol files for user modules
 * (ntdll, kernel32, ...): the file whose name ends in the module's
 * GUID-AGE (its CodeView record, as capture.json gives it) adds its
 * "symbols" as functions, on top of the exports.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <svmtrace/analysis.h>

#include "lib/analysis/symbols_int.h"
#include "lib/trace/error.h"
#include "lib/vmi/isf.h"

static struct {
	struct svmtrace_symbols *s;
	size_t matched;
	int status;
	struct svmtrace_error *err;
} walk;

struct isf_add {
	struct sym_module *m;
	int failed;
};

static int add_symbol(void *ctx, const char *name, uint64_t rva)
{
	struct isf_add *a = ctx;

	if (sym_add_function(a->m, a->m->info.base + rva, name)) {
		a->failed = 1;
		return 1;
	}
	return 0;
}

/* Does file name @base name the PDB @id: "[NAME-]GUID-AGE.json[.xz]"? */
static bool names_id(const char *base, const char *id)
{
	size_t n = strlen(id), len = strlen(base);
	const char *ext;

	if (len > 8 && !strcmp(base + len - 8, ".json.xz"))
		len -= 8;
	else if (len > 5 && !strcmp(base + len - 5, ".json"))
		len -= 5;
	else
		return false;
	if (len < n || strncasecmp(base + len - n, id, n))
		return false;
	ext = base + len - n;
	return ext == base || ext[-1] == '-';
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	struct svmtrace_error verr;
	struct isf *isf;
	size_t i;

	if (type != FTW_F)
		return 0;
	for (i = 0; i < walk.s->n; i++) {
		struct sym_module *m = &walk.s->m[i];
		struct isf_add a = { m, 0 };
		char from[600];

		if (!m->info.pdb_id || !names_id(base, m->info.pdb_id))
			continue;
		if (isf_load_file(path, &isf, &verr)) {
			walk.status = trace_error_noloc(walk.err, SVMTRACE_E_FORMAT, path, "%s",
							verr.message);
			return 1;
		}
		isf_symbols_each(isf, add_symbol, &a);
		isf_free(isf);
		if (a.failed) {
			walk.status = trace_error_noloc(walk.err, SVMTRACE_E_NOMEM, path,
							"out of memory");
			return 1;
		}
		sym_sort_functions(m);
		snprintf(from, sizeof(from), "%s%sisf:%s",
			 m->info.function_from ? m->info.function_from : "",
			 m->info.function_from ? "+" : "", base);
		free((char *)m->info.function_from);
		m->info.function_from = strdup(from);
		walk.matched++;
	}
	return 0;
}

int svmtrace_symbols_load_isf_dir(struct svmtrace_symbols *s, const char *dir, size_t *matched,
				  struct svmtrace_error *err)
{
	walk.s = s;
	walk.matched = 0;
	walk.status = 0;
	walk.err = err;
	if (nftw(dir, visit, 16, FTW_PHYS) < 0)
		return trace_error_noloc(err, SVMTRACE_E_IO, dir, "cannot walk the directory");
	if (matched)
		*matched = walk.matched;
	return walk.status;
}
