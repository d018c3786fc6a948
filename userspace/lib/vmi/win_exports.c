// SPDX-License-Identifier: GPL-2.0
/* A mapped image's export directory, for symbolizing traces. */
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/win_pe_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct export_list {
	struct svmtrace_vmi_export *list;
	size_t count, cap;
};

static int add_export(void *ctx, const char *name, uint32_t ordinal, uint32_t rva)
{
	struct export_list *l = ctx;

	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct svmtrace_vmi_export *n = realloc(l->list, cap * sizeof(*n));

		if (!n)
			return SVMTRACE_E_NOMEM;
		l->list = n;
		l->cap = cap;
	}
	snprintf(l->list[l->count].name, sizeof(l->list[l->count].name), "%s", name ? name : "");
	l->list[l->count].ordinal = ordinal;
	l->list[l->count].rva = rva;
	l->count++;
	return 0;
}

int svmtrace_vmi_exports(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t base,
			 struct svmtrace_vmi_export **list, size_t *count,
			 struct svmtrace_error *err)
{
	struct win_pe_ctx ctx = { .vmi = vmi, .dtb = dtb, .base = base };
	struct pe_reader r = win_pe_reader(&ctx);
	struct export_list l = { 0 };
	struct pe_image img;
	int rc;

	*list = NULL;
	*count = 0;
	rc = pe_parse(&r, &img, err);
	if (!rc)
		rc = pe_exports_each(&r, &img, add_export, &l, err);
	if (rc == SVMTRACE_E_NOMEM)
		rc = vmi_fail(err, rc, "export list: out of memory");
	if (rc) {
		free(l.list);
		return rc;
	}
	*list = l.list;
	*count = l.count;
	return 0;
}
