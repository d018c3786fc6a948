/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small vocabulary every svmtrace command shares: how to die with a
 * message, and how to read numbers from arguments with an error that names
 * the argument.
 */
#ifndef SVMTRACE_CLI_H
#define SVMTRACE_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Set once by main(): the prefix of every message ("svmtrace-dump"). */
extern const char *cli_progname;

/* Print "progname: message" to stderr and exit with status 1. */
__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);

/* Print "progname: message" to stderr. */
__attribute__((format(printf, 1, 2))) void warn(const char *fmt, ...);

/*
 * Parse a whole argument as an unsigned 64-bit number (decimal, or hex with
 * 0x); dies naming @what on anything else.
 */
uint64_t parse_u64(const char *arg, const char *what);

/* Parse "A-B" (each as parse_u64) into *lo and *hi, dying unless A <= B. */
void parse_range(const char *arg, const char *what, uint64_t *lo, uint64_t *hi);

/*
 * Parse a --rip-range "A-B": the half-open range [A, B), the same in every
 * program (the kernel filter's struct svmtrace_rip_range is half-open too).
 * Dies on an empty range (A == B).
 */
void parse_rip_range(const char *arg, uint64_t *lo, uint64_t *hi);
/* The same for option @what (e.g. "--mem-range"). */
void parse_half_open(const char *arg, const char *what, uint64_t *lo, uint64_t *hi);

#endif
