/* SPDX-License-Identifier: GPL-2.0 */
/* --audit for the capture programs (capture_audit.c). */
#ifndef SVMTRACE_CAPTURE_AUDIT_H
#define SVMTRACE_CAPTURE_AUDIT_H

#include <stdbool.h>
#include <sys/types.h>

struct capture;
struct capture_audit;
struct audit_line;

/*
 * Attached, right before ARM: the audit program on @vmm_pid's threads and
 * its baseline (dies with the reason).  @ctl: the attached control fd.
 */
struct capture_audit *capture_audit_start(pid_t vmm_pid, int ctl);
/* Right after ARM: whether a #DB exit fell between the baseline and the reset. */
void capture_audit_armed(struct capture_audit *ca);
/*
 * After capture_report(): balance every vCPU, print one line each and a
 * verdict; *@lines (cap->nr entries, caller frees) for capture.json.
 * False when a vCPU does not balance.
 */
bool capture_audit_finish(struct capture *cap, struct capture_audit *ca, struct audit_line **lines);
void capture_audit_close(struct capture_audit *ca);

#endif
