/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exit audit (--audit of svmtrace-capture and svmtraced): an eBPF
 * account of the traced VM's #DB and NPF exits, taken on KVM's own
 * tracepoints, balanced per vCPU against the records the capture produced
 * (docs/audit.md).
 *
 *   audit.c          load, attach, read the BPF program (libbpf skeleton)
 *   audit_format.c   the kvm records' layout against tracefs' format files
 *   capture_audit.c  the equation per vCPU, printed (userspace/common)
 */
#ifndef SVMTRACE_AUDIT_H
#define SVMTRACE_AUDIT_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/exit_audit.h"

struct exit_audit;

/*
 * Check the kvm events' layout, load the program filtered to @vmm_pid's
 * threads and attach it.  NULL with a one-line reason in @err otherwise.
 */
struct exit_audit *exit_audit_start(pid_t vmm_pid, char *err, size_t err_size);
/* The counters of the vCPUs whose vcpu_ids are @ids[0..@n-1]; false on error. */
bool exit_audit_read(struct exit_audit *a, const uint32_t *ids, struct audit_vcpu *out, uint32_t n);
/*
 * Exits of the VMM's vCPUs that are not among @ids[0..@n-1] (created after
 * attach, so never traced), and events with a vcpu_id past the array.
 */
uint64_t exit_audit_others(struct exit_audit *a, const uint32_t *ids, uint32_t n);
void exit_audit_close(struct exit_audit *a);

/*
 * audit_format.c: 0, or -1 with the first mismatch described in @err.
 * @tracefs: where tracefs is mounted, NULL for the usual places.
 */
int audit_check_formats(const char *tracefs, char *err, size_t err_size);

/*
 * One vCPU's balance, two equations and a bound (the terms: docs/audit.md):
 *   exits:   db_exits = kmod_db_exits + foreign
 *   records: db_exits = produced - emulated + unrecorded - stepless_ends + foreign
 *   gates:   npf_exits >= gate_faults (every gate fault is an NPF exit)
 * db_exits and npf_exits are the BPF program's, produced is what the
 * capture took from the ring (written + discarded + dropped), the other
 * terms are the module's counters.
 */
struct audit_line {
	uint32_t vcpu;	  /* the module's vCPU index */
	uint32_t vcpu_id; /* KVM's vcpu_id, as the tracepoints name it */
	uint64_t db_exits, npf_exits;
	/* in no equation, reported: all exits, and what arming costs besides steps */
	uint64_t exits, ud_exits, iret_exits, cr3_exits;
	uint64_t produced;
	uint64_t kmod_db_exits, emulated, unrecorded, stepless_ends, foreign, gate_faults;
	uint64_t steps_timed, step_ns;
	uint64_t step_p50_ns, step_p99_ns; /* upper bounds of their log2 buckets */
	bool exits_ok, records_ok, gates_ok, balanced;
};

/* The right-hand side of the records equation. */
int64_t audit_expected_db(const struct audit_line *l);

#endif
