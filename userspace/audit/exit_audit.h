/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the exit-audit BPF program (exit_audit.bpf.c) counts, shared with
 * the userspace that reads it (audit.c).  Plain __u32/__u64 fields: the BPF
 * side gets them from vmlinux.h, userspace from <linux/types.h>.
 */
#ifndef SVMTRACE_EXIT_AUDIT_H
#define SVMTRACE_EXIT_AUDIT_H

/*
 * kvm_exit's vcpu_id (the APIC ID, not the vCPU index: QEMU leaves holes
 * in them for some topologies) indexes the per-vCPU array: KVM_MAX_VCPU_IDS
 * of 6.1 x86.  Larger ids, impossible there, are counted as lost; Debian's
 * 6.12 allows four times as many, for VMs of more than 1024 vCPUs.
 */
#define AUDIT_MAX_VCPU_ID 4096
/* Host time per step, log2 buckets of nanoseconds: bucket b holds [2^b, 2^(b+1)). */
#define AUDIT_HIST_BUCKETS 40

#define AUDIT_EXIT_DB	     0x41u  /* SVM_EXIT_EXCP_BASE + DB_VECTOR */
#define AUDIT_EXIT_NPF	     0x400u /* SVM_EXIT_NPF */
#define AUDIT_EXIT_UD	     0x46u  /* SVM_EXIT_EXCP_BASE + UD_VECTOR */
#define AUDIT_EXIT_IRET	     0x74u  /* SVM_EXIT_IRET */
#define AUDIT_EXIT_CR3_WRITE 0x13u  /* SVM_EXIT_WRITE_CR3 */

struct audit_vcpu {
	__u64 exits;	   /* every VM exit of this vCPU */
	__u64 db_exits;	   /* #DB intercepts */
	__u64 npf_exits;   /* nested page faults (gate faults, MMIO, first touches) */
	/*
	 * What a capture costs the vCPU besides its steps: #UD (SYSCALL and
	 * SYSRET while EFER.SCE is off in the VMCB, and the guest's own), IRET
	 * and CR3-write intercepts (docs/kmod.md, "Which vCPUs pay").
	 */
	__u64 ud_exits;
	__u64 iret_exits;
	__u64 cr3_exits;
	__u64 steps_timed; /* #DB exits followed by a guest entry on this vCPU */
	__u64 step_ns;	   /* their host time, summed */
	__u64 db_exit_ns;  /* the pending #DB exit's time, 0 if none */
	__u32 tid;	   /* the VMM thread that ran this vCPU last */
	__u32 reserved;
	__u64 hist[AUDIT_HIST_BUCKETS];
};

/*
 * The kvm records as Debian's 6.1 and 6.12 lay them out (arch/x86/kvm/trace.h:
 * TRACE_EVENT_KVM_EXIT(kvm_exit), TRACE_EVENT(kvm_entry)), only as far as
 * the program reads them.  kvm.ko has no BTF, so nothing relocates these:
 * audit_format.c checks each field against the event's format file before
 * the program is loaded.  The first 8 bytes are vmlinux's struct
 * trace_entry (common_type, flags, preempt_count, pid).
 */
struct audit_kvm_exit_record {
	__u8 common[8];
	__u32 exit_reason;
	__u64 guest_rip;
	__u32 isa;
	__u64 info1;
	__u64 info2;
	__u32 intr_info;
	__u32 error_code;
	__u32 vcpu_id;
};

struct audit_kvm_entry_record {
	__u8 common[8];
	__u32 vcpu_id;
};

/* Events the program saw but could not file (a vcpu_id past the array). */
struct audit_lost {
	__u64 events;
};

#endif
