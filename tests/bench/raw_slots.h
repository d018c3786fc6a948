/* SPDX-License-Identifier: GPL-2.0 */
/* Loading svmtrace-steprec's raw records as slots, for the benchmarks. */
#ifndef SVMTRACE_BENCH_RAW_SLOTS_H
#define SVMTRACE_BENCH_RAW_SLOTS_H

#include <stddef.h>

#include <svmtrace/abi.h>

/*
 * Read every 168-byte record of @path into instruction slots, leaving
 * @spare zeroed slots after them for the caller; dies on error.  *n is
 * the number of records.
 */
struct svmtrace_slot *load_raw_slots(const char *path, size_t spare, size_t *n);

#endif
