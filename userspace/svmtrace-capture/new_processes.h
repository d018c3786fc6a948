/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SVMTRACE_CAPTURE_NEW_PROCESSES_H
#define SVMTRACE_CAPTURE_NEW_PROCESSES_H

#include <stdint.h>

#include "common/capture.h"

/* --new-processes: what the kernel's asks brought (new_processes.c). */
struct new_processes {
	uint64_t joined; /* address spaces that joined the target */
	uint64_t lost;	 /* threads that ran on untraced: no room for their CR3 */
};

/* capture.on_ask: every held thread's address space joins the target. */
const char *new_processes_serve(struct capture *cap, void *ctx);
void new_processes_report(const struct new_processes *np);

#endif
