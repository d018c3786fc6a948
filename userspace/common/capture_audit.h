/* SPDX-License-Identifier: GPL-2.0 */
/* --audit for the capture programs (capture_audit.c). */
#ifndef SVMTRACE_CAPTURE_AUDIT_H
#define SVMTRACE_CAPTURE_AUDIT_H

#include <stdbool.h>
#include <sys/types.h>

struct capture;
struct exit_audit;
struct audit_line;

/* Before arm: the audit program on @vmm_pid's threads (dies with the reason). */
struct exit_audit *capture_audit_start(pid_t vmm_pid);
/*
 * After capture_report(): balance every vCPU, print one line each and a
 * verdict; *@lines (cap->nr entries, caller frees) for capture.json.
 * False when a vCPU does not balance.
 */
bool capture_audit_finish(struct capture *cap, struct exit_audit *a, struct audit_line **lines);

#endif
