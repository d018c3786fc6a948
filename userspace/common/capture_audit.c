// SPDX-License-Identifier: GPL-2.0
/*
 * --audit for both capture programs: the BPF exit audit runs from before
 * arm to after the last drain, then every vCPU must balance
 *
 *   #DB exits (BPF) = kmod_db_exits + foreign
 *   #DB exits (BPF) = produced - emulated + unrecorded - stepless_ends + foreign
 *
 * where produced is what this capture took from the ring (written,
 * discarded or dropped by the kernel) and the other terms are the module's
 * counters (docs/audit.md explains each).  The first says the module saw
 * every #DB exit; the second that each one is a record or has a reason not
 * to be.  And no vCPU may have more gate faults than BPF saw NPF exits.  A
 * vCPU that does not balance is an error line and a failed capture.
 *
 * The window: ARM resets the module's counters, and the program must be
 * running before ARM to miss nothing.  So the program's counters are read
 * just before ARM (the baseline, subtracted at the end) and just after it;
 * a #DB exit between the two readings could be on either side of the
 * reset, and the audit says so and fails rather than guess.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/capture.h"
#include "common/capture_audit.h"
#include "common/cli.h"

/* Readings taken while a vCPU is between its exit and the module's count retry this often. */
#define SETTLE_TRIES 50
#define SETTLE_US    20000

struct capture_audit {
	struct exit_audit *bpf;
	int ctl;
	uint32_t n;
	uint32_t ids[SVMTRACE_MAX_STATUS_VCPUS];
	struct audit_vcpu base[SVMTRACE_MAX_STATUS_VCPUS];
	uint64_t db_while_arming; /* #DB exits between the readings around ARM */
};

/* The traced vCPUs' vcpu_ids, as kvm:kvm_exit names them. */
static void read_ids(struct capture_audit *ca)
{
	static struct svmtrace_capture_status st;
	uint32_t i;

	control_status(ca->ctl, &st);
	ca->n = st.nr_vcpus < SVMTRACE_MAX_STATUS_VCPUS ? st.nr_vcpus : SVMTRACE_MAX_STATUS_VCPUS;
	for (i = 0; i < ca->n; i++)
		ca->ids[i] = st.vcpus[i].vcpu_id;
}

struct capture_audit *capture_audit_start(pid_t vmm_pid, int ctl)
{
	struct capture_audit *ca = calloc(1, sizeof(*ca));
	char err[768];

	if (!ca)
		die("out of memory");
	ca->ctl = ctl;
	ca->bpf = exit_audit_start(vmm_pid, err, sizeof(err));
	if (!ca->bpf)
		die("--audit: %s", err);
	read_ids(ca);
	if (!exit_audit_read(ca->bpf, ca->ids, ca->base, ca->n))
		die("--audit: reading the BPF counters: %s", strerror(errno));
	return ca;
}

void capture_audit_armed(struct capture_audit *ca)
{
	static struct audit_vcpu now[SVMTRACE_MAX_STATUS_VCPUS];
	uint32_t i;

	if (!exit_audit_read(ca->bpf, ca->ids, now, ca->n))
		die("--audit: reading the BPF counters: %s", strerror(errno));
	for (i = 0; i < ca->n; i++)
		ca->db_while_arming += now[i].db_exits - ca->base[i].db_exits;
}

void capture_audit_close(struct capture_audit *ca)
{
	if (!ca)
		return;
	exit_audit_close(ca->bpf);
	free(ca);
}

/* What the program counted since the baseline. */
static void since_base(struct audit_vcpu *v, const struct audit_vcpu *base)
{
	unsigned int b;

	v->exits -= base->exits;
	v->db_exits -= base->db_exits;
	v->npf_exits -= base->npf_exits;
	v->ud_exits -= base->ud_exits;
	v->iret_exits -= base->iret_exits;
	v->cr3_exits -= base->cr3_exits;
	v->steps_timed -= base->steps_timed;
	v->step_ns -= base->step_ns;
	for (b = 0; b < AUDIT_HIST_BUCKETS; b++)
		v->hist[b] -= base->hist[b];
}

/* Upper bound (ns) of the bucket where @pct percent of the timed steps are reached. */
static uint64_t percentile(const struct audit_vcpu *v, unsigned int pct)
{
	uint64_t want = (v->steps_timed * pct + 99) / 100, sum = 0;
	unsigned int b;

	for (b = 0; b < AUDIT_HIST_BUCKETS; b++) {
		sum += v->hist[b];
		if (want && sum >= want)
			return 2ull << b;
	}
	return 0;
}

static void fill_line(const struct capture *cap, uint32_t i, const struct audit_vcpu *v,
		      const struct svmtrace_vcpu_status *k_st, struct audit_line *l)
{
	const struct svmtrace_counters *k = &k_st->counters;
	struct svmtrace_ring_counts rc;

	svmtrace_ring_counts(&cap->streams[i].ring, &rc);
	*l = (struct audit_line){ .vcpu = i,
				  .vcpu_id = k_st->vcpu_id,
				  .db_exits = v->db_exits,
				  .npf_exits = v->npf_exits,
				  .exits = v->exits,
				  .ud_exits = v->ud_exits,
				  .iret_exits = v->iret_exits,
				  .cr3_exits = v->cr3_exits,
				  .produced = cap->streams[i].written + cap->streams[i].discarded +
					      rc.dropped,
				  .kmod_db_exits = k->db_exits,
				  .emulated = k->emulated_steps,
				  .unrecorded = k->steps_unrecorded,
				  .stepless_ends = k->stepless_ends,
				  .foreign = k->db_foreign,
				  .gate_faults = k->npf_exits,
				  .steps_timed = v->steps_timed,
				  .step_ns = v->step_ns,
				  .step_p50_ns = percentile(v, 50),
				  .step_p99_ns = percentile(v, 99) };
	l->exits_ok = l->db_exits == l->kmod_db_exits + l->foreign;
	l->records_ok = (int64_t)l->db_exits == audit_expected_db(l);
	l->gates_ok = l->npf_exits >= l->gate_faults;
	l->balanced = l->exits_ok && l->records_ok && l->gates_ok;
}

static bool same_counters(const struct svmtrace_capture_status *a,
			  const struct svmtrace_capture_status *b)
{
	return !memcmp(&a->total, &b->total, sizeof(a->total));
}

/*
 * One reading of the BPF counters between two identical module readings:
 * a #DB exit the BPF program saw but whose handler has not counted it yet
 * would otherwise look like a miscount.  Retried for a second at most.
 */
static bool settle(struct capture *cap, struct capture_audit *ca, struct audit_line *lines,
		   uint32_t n, uint32_t *ids)
{
	static struct svmtrace_capture_status s1, s2;
	static struct audit_vcpu v[SVMTRACE_MAX_STATUS_VCPUS];
	bool all = false;
	uint32_t i, tries;

	for (tries = 0; tries < SETTLE_TRIES && !all; tries++) {
		if (tries)
			usleep(SETTLE_US);
		if (ioctl(cap->ctl, SVMTRACE_STATUS, &s1)) {
			warn("--audit: reading the module's counters: %s", strerror(errno));
			return false;
		}
		/* kvm:kvm_exit names a vCPU by its vcpu_id, the module by its index. */
		for (i = 0; i < n; i++)
			ids[i] = s1.vcpus[i].vcpu_id;
		if (!exit_audit_read(ca->bpf, ids, v, n) || ioctl(cap->ctl, SVMTRACE_STATUS, &s2)) {
			warn("--audit: reading the counters: %s", strerror(errno));
			return false;
		}
		all = same_counters(&s1, &s2);
		for (i = 0; i < n; i++) {
			/* A vCPU index keeps its vcpu_id: the baseline is the same vCPU's. */
			if (i < ca->n && ids[i] == ca->ids[i])
				since_base(&v[i], &ca->base[i]);
			fill_line(cap, i, &v[i], &s2.vcpus[i], &lines[i]);
			all &= lines[i].balanced;
		}
	}
	return true;
}

static void print_line(const struct audit_line *l)
{
	printf("audit vcpu%u vcpu_id=%u db_exits=%llu = kmod_db_exits %llu + foreign %llu: %s; "
	       "= produced %llu - emulated %llu + unrecorded %llu - stepless_ends %llu + foreign %llu: "
	       "%s; npf_exits=%llu >= gate_faults %llu: %s; steps_timed=%llu step_ns_mean=%llu "
	       "step_ns_p50<=%llu step_ns_p99<=%llu exits=%llu ud_exits=%llu iret_exits=%llu "
	       "cr3_exits=%llu\n",
	       l->vcpu, l->vcpu_id, (unsigned long long)l->db_exits,
	       (unsigned long long)l->kmod_db_exits, (unsigned long long)l->foreign,
	       l->exits_ok ? "ok" : "MISMATCH", (unsigned long long)l->produced,
	       (unsigned long long)l->emulated, (unsigned long long)l->unrecorded,
	       (unsigned long long)l->stepless_ends, (unsigned long long)l->foreign,
	       l->records_ok ? "ok" : "MISMATCH", (unsigned long long)l->npf_exits,
	       (unsigned long long)l->gate_faults, l->gates_ok ? "ok" : "MISMATCH",
	       (unsigned long long)l->steps_timed,
	       (unsigned long long)(l->steps_timed ? l->step_ns / l->steps_timed : 0),
	       (unsigned long long)l->step_p50_ns, (unsigned long long)l->step_p99_ns,
	       (unsigned long long)l->exits, (unsigned long long)l->ud_exits,
	       (unsigned long long)l->iret_exits,
	       (unsigned long long)l->cr3_exits);
}

bool capture_audit_finish(struct capture *cap, struct capture_audit *ca, struct audit_line **out)
{
	uint32_t n = cap->nr < SVMTRACE_MAX_STATUS_VCPUS ? cap->nr : SVMTRACE_MAX_STATUS_VCPUS, i;
	uint32_t ids[SVMTRACE_MAX_STATUS_VCPUS];
	/* cap->nr entries (capture.json has one per vCPU); past the audit's reach, zero. */
	struct audit_line *lines = calloc(cap->nr ? cap->nr : 1, sizeof(*lines));
	uint64_t others;
	bool ok = true;

	if (!lines)
		die("out of memory");
	*out = lines;
	if (cap->nr > SVMTRACE_MAX_STATUS_VCPUS) {
		warn("--audit: %u vCPUs, the audit covers the first %u", cap->nr, n);
		ok = false;
	}
	if (!settle(cap, ca, lines, n, ids))
		return false;
	for (i = 0; i < n; i++) {
		print_line(&lines[i]);
		if (!lines[i].exits_ok) {
			warn("--audit: vCPU %u: BPF saw %llu #DB exits, the module accounts for "
			     "%llu (%llu steps + %llu foreign)",
			     i, (unsigned long long)lines[i].db_exits,
			     (unsigned long long)(lines[i].kmod_db_exits + lines[i].foreign),
			     (unsigned long long)lines[i].kmod_db_exits,
			     (unsigned long long)lines[i].foreign);
			ok = false;
		}
		if (!lines[i].gates_ok) {
			warn("--audit: vCPU %u: the module counted %llu gate faults, BPF saw only "
			     "%llu NPF exits",
			     i, (unsigned long long)lines[i].gate_faults,
			     (unsigned long long)lines[i].npf_exits);
			ok = false;
		}
		if (!lines[i].records_ok) {
			warn("--audit: vCPU %u: BPF saw %llu #DB exits, the records account for "
			     "%lld: a step vanished without a record, a drop or a reason",
			     i, (unsigned long long)lines[i].db_exits,
			     (long long)audit_expected_db(&lines[i]));
			ok = false;
		}
	}
	/* Not part of any equation: vCPUs created after attach are never traced. */
	others = exit_audit_others(ca->bpf, ids, n);
	if (others)
		printf("audit: %llu exits of the VMM's other vCPUs (not traced)\n",
		       (unsigned long long)others);
	if (ca->db_while_arming) {
		warn("--audit: %llu #DB exits happened while ARM reset the module's counters: "
		     "the audit cannot tell on which side of the reset they fell",
		     (unsigned long long)ca->db_while_arming);
		ok = false;
	}
	printf("audit %s\n", ok ? "balanced" : "FAILED");
	fflush(stdout);
	return ok;
}
