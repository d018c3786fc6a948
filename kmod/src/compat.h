/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace: the kernel and KVM interfaces whose form differs between the
 * supported series.  Each series implements these in kmod/src/SERIES/compat.c
 * (kmod/build.sh copies the one of the target's series); everything else in
 * kmod/src is one source for all series.  None is on a step's path.
 */
#ifndef ARCH_X86_KVM_SVMTRACE_COMPAT_H
#define ARCH_X86_KVM_SVMTRACE_COMPAT_H

#include <linux/file.h>
#include <linux/kvm_host.h>
#include <linux/mm_types.h>

/*
 * The IRQs-off step path (__svmtrace_db_fastpath(), svmtrace_tight_loop())
 * takes vt->lock with mutex_trylock() and wakes the consumer through a
 * spinlock_t: both sleeping locks on PREEMPT_RT.  kmod/build.sh and the
 * DKMS package refuse such kernels earlier, with the same reason.
 */
#ifdef CONFIG_PREEMPT_RT
#error "svmtrace does not support PREEMPT_RT kernels: build for the non-RT flavour"
#endif

struct x86_exception;

/* The file of a descriptor got with fdget() (the accessor since 6.12). */
struct file *svmtrace_fd_file(struct fd f);

/* Set and clear flags of a VMA being mapped (vm_flags is const since 6.3). */
void svmtrace_vma_flags_mod(struct vm_area_struct *vma, vm_flags_t set, vm_flags_t clear);

/* One page of @mm at @addr, referenced (get_user_pages_remote()); mmap lock held. */
long svmtrace_gup_remote(struct mm_struct *mm, unsigned long addr, struct page **page);

/* Queue a #PF for the guest as a failed read of its memory raised it. */
void svmtrace_inject_page_fault(struct kvm_vcpu *vcpu, struct x86_exception *fault);

/* @la is not canonical for the vCPU's linear addresses. */
bool svmtrace_noncanonical(struct kvm_vcpu *vcpu, u64 la);

/*
 * vNMI is in use (kvm_amd's vnmi on a CPU with VNMI and vGIF, 6.5+): NMIs
 * reach the guest without the IRET intercept hide.c needs.  ARM refuses.
 */
bool svmtrace_vnmi_active(void);

/*
 * A gate closes (gate.c): take execute permission from the 4 KiB SPTE that
 * maps @gfn, faults in flight for it retrying.  1 when the TLBs were
 * flushed, 0 when no SPTE maps it executable, -1 when that is not possible
 * (a huge page, the shadow MMU): zap the page instead.  kvm->srcu held.
 */
int svmtrace_mmu_deny_exec(struct kvm *kvm, gfn_t gfn);

#endif
