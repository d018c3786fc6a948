/* SPDX-License-Identifier: GPL-2.0 */
/* The image builder's import binding (winbind.c). */
#ifndef E2E_WIN_BIND_H
#define E2E_WIN_BIND_H

#include "../../vmi/gen/gen.h"

/*
 * Fill @exe's import address table (in its mapped image) with the
 * addresses of the exports of @dll (the file @dll_path, whose base name the
 * imports must name) mapped at @dll_base.  Returns how many imports were
 * bound; dies naming the import that cannot be.
 */
int win_bind_imports(struct gen_pe *exe, const char *exe_path, const struct gen_pe *dll,
		     const char *dll_path, uint64_t dll_base);

/* The RVA of the function @dll (the file @dll_path) exports as @name; dies
 * when it exports none. */
uint32_t win_export_rva(const struct gen_pe *dll, const char *dll_path, const char *name);

#endif
