/* SPDX-License-Identifier: GPL-2.0 */
/* The symbol table's insides, shared by symbols.c and symbols_isf.c. */
#ifndef SVMTRACE_LIB_SYMBOLS_INT_H
#define SVMTRACE_LIB_SYMBOLS_INT_H

#include <svmtrace/analysis.h>

struct sym_function {
	uint64_t va;
	char *name;
};

struct sym_module {
	struct svmtrace_module_info info;
	struct sym_function *funcs; /* sorted by va, one per address */
	size_t nfuncs, cap;
};

/* An address space: CR3 bits 51:12. */
#define SYM_CR3_MASK 0x000ffffffffff000ull

struct svmtrace_symbols {
	struct sym_module *m; /* sorted by base */
	size_t n, cap;
	uint64_t max_size; /* of a module: how far below an address its module can start */
};

/* Add a function at @va (ignored outside the module); -1 out of memory. */
int sym_add_function(struct sym_module *m, uint64_t va, const char *name);
/* Sort and keep one name per address (call after adding). */
void sym_sort_functions(struct sym_module *m);

#endif
