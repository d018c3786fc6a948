// SPDX-License-Identifier: GPL-2.0
/*
 * The exit audit: an account of the traced VM's exits that does not trust
 * svmtrace's module.  Classic tracepoint programs on kvm:kvm_exit and
 * kvm:kvm_entry, filtered to the VMM's threads, count #DB and NPF exits
 * (and #UD, IRET and CR3-write exits: what arming costs the vCPU besides
 * its steps) per vCPU and time each #DB exit to the vCPU's next entry (the host's
 * cost of one step).
 *
 * Why not CO-RE for the kvm records: kvm.ko is built without BTF, so the
 * records' layout cannot be relocated; exit_audit.h declares them as 6.1
 * and 6.12 lay them out and userspace compares every field the program reads
 * against the tracepoint's format file before loading it (audit_format.c).
 * The common
 * header, struct trace_entry, is vmlinux's: vmlinux.h marks it
 * preserve_access_index, so its pid is read through a CO-RE relocation
 * against the running kernel's BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "exit_audit.h"

/* Set by userspace before load: the VMM's process id. */
const volatile __u32 vmm_tgid;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AUDIT_MAX_VCPU_ID);
	__type(key, u32);
	__type(value, struct audit_vcpu);
} vcpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct audit_lost);
} lost SEC(".maps");

/* The vCPU's counters, or NULL for another process's vCPU (or an id past the array). */
static struct audit_vcpu *vcpu_of(unsigned int vcpu_id)
{
	u32 key = vcpu_id, zero = 0;
	struct audit_vcpu *v;
	struct audit_lost *l;

	if ((u32)(bpf_get_current_pid_tgid() >> 32) != vmm_tgid)
		return NULL;
	v = bpf_map_lookup_elem(&vcpus, &key);
	if (!v) {
		l = bpf_map_lookup_elem(&lost, &zero);
		if (l)
			__sync_fetch_and_add(&l->events, 1);
	}
	return v;
}

static u32 log2_bucket(u64 v)
{
	u32 b = 0;
	int i;

	/* Bounded for the verifier: 6 halvings cover 64 bits. */
	for (i = 5; i >= 0; i--) {
		u32 shift = 1u << i;

		if (v >> shift) {
			v >>= shift;
			b += shift;
		}
	}
	return b < AUDIT_HIST_BUCKETS ? b : AUDIT_HIST_BUCKETS - 1;
}

/* One writer per vCPU (its own thread), so plain increments do. */
SEC("tracepoint/kvm/kvm_exit")
int audit_exit(struct audit_kvm_exit_record *ctx)
{
	struct trace_entry *ent = (struct trace_entry *)ctx;
	struct audit_vcpu *v = vcpu_of(ctx->vcpu_id);

	if (!v)
		return 0;
	v->tid = BPF_CORE_READ(ent, pid);
	v->exits++;
	if (ctx->exit_reason == AUDIT_EXIT_DB) {
		v->db_exits++;
		v->db_exit_ns = bpf_ktime_get_ns();
	} else if (ctx->exit_reason == AUDIT_EXIT_NPF) {
		v->npf_exits++;
	} else if (ctx->exit_reason == AUDIT_EXIT_UD) {
		v->ud_exits++;
	} else if (ctx->exit_reason == AUDIT_EXIT_IRET) {
		v->iret_exits++;
	} else if (ctx->exit_reason == AUDIT_EXIT_CR3_WRITE) {
		v->cr3_exits++;
	}
	return 0;
}

SEC("tracepoint/kvm/kvm_entry")
int audit_entry(struct audit_kvm_entry_record *ctx)
{
	struct audit_vcpu *v = vcpu_of(ctx->vcpu_id);
	u64 ns;
	u32 b;

	if (!v || !v->db_exit_ns)
		return 0;
	ns = bpf_ktime_get_ns() - v->db_exit_ns;
	v->db_exit_ns = 0;
	v->steps_timed++;
	v->step_ns += ns;
	b = log2_bucket(ns);
	if (b < AUDIT_HIST_BUCKETS)
		v->hist[b]++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
