/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace-steprec --mem: the memory accesses of one ptrace step of a real
 * process.  Before the step the instruction at RIP is decoded (Capstone)
 * and its operands' addresses computed from the registers; the accessed
 * bytes are read from the process before the step (what a read sees) and
 * after it (what a write left).  An oracle written apart from the capture
 * path, for tests and benchmarks.
 */
#ifndef SVMTRACE_TOOLS_MEMOPS_H
#define SVMTRACE_TOOLS_MEMOPS_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/user.h>

#include <svmtrace/trace.h>

struct memops;

struct memops *memops_open(void);
void memops_close(struct memops *m);

/*
 * Before stepping @pid, whose registers are @regs: decode the instruction
 * and read what its accesses read.
 */
void memops_before(struct memops *m, pid_t pid, const struct user_regs_struct *regs);

/*
 * After the step: read what the writes left and hand out the accesses,
 * sequence @seq, as raw records (at most SVMTRACE_MEM_MAX_ACCESSES).
 * @clean is false when a signal was delivered during the step: the
 * instruction's accesses are then unknown, and one unrecorded access says so.
 */
unsigned int memops_after(struct memops *m, pid_t pid, uint64_t seq, bool clean,
			  struct svmtrace_raw_mem *out);

#endif
