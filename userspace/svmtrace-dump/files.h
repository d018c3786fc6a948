/* SPDX-License-Identifier: GPL-2.0 */
/* Opening trace files and reporting how reading them ended, the same way in every command. */
#ifndef SVMTRACE_DUMP_FILES_H
#define SVMTRACE_DUMP_FILES_H

#include <stdbool.h>

#include <svmtrace/trace.h>

/* Open @path for reading or die with the reader's message. */
struct svmtrace_reader *open_trace(const char *path);

/*
 * @ret is the last svmtrace_reader_next() result.  Prints the error, or for
 * a truncated file a note that every complete frame was read; returns the
 * exit status it deserves (truncation is 0 only with @allow_truncated).
 */
int finish_trace(struct svmtrace_reader *r, int ret, bool allow_truncated);

#endif
