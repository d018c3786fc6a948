// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace's compat.h for Linux 6.12.  Since 6.6 the MMU's invalidation and
 * TLB flushes take gfn ranges; 6.5 brought vNMI.
 */
#include <linux/kvm_host.h>
#include <linux/mm.h>

#include "mmu.h"
#include "mmu/tdp_mmu.h"
#include "svmtrace.h"
#include "x86.h"

struct file *svmtrace_fd_file(struct fd f)
{
	return fd_file(f);
}

void svmtrace_vma_flags_mod(struct vm_area_struct *vma, vm_flags_t set, vm_flags_t clear)
{
	vm_flags_mod(vma, set, clear);
}

long svmtrace_gup_remote(struct mm_struct *mm, unsigned long addr, struct page **page)
{
	return get_user_pages_remote(mm, addr, 1, 0, page, NULL);
}

void svmtrace_inject_page_fault(struct kvm_vcpu *vcpu, struct x86_exception *fault)
{
	kvm_inject_page_fault(vcpu, fault, false);
}

bool svmtrace_noncanonical(struct kvm_vcpu *vcpu, u64 la)
{
	return is_noncanonical_address(la, vcpu, 0);
}

/* kvm_amd drops the vNMI callbacks unless vnmi, vGIF and VNMI are all there. */
bool svmtrace_vnmi_active(void)
{
	return kvm_x86_ops.set_vnmi_pending;
}

int svmtrace_mmu_deny_exec(struct kvm *kvm, gfn_t gfn)
{
	int r;

	if (!tdp_mmu_enabled || !kvm_is_visible_gfn(kvm, gfn))
		return -1;
	write_lock(&kvm->mmu_lock);
	kvm_mmu_invalidate_begin(kvm);
	kvm_mmu_invalidate_range_add(kvm, gfn, gfn + 1);
	r = kvm_tdp_mmu_deny_exec_gfn(kvm, 0, gfn);
	if (r > 0)
		kvm_flush_remote_tlbs_range(kvm, gfn, 1);
	kvm_mmu_invalidate_end(kvm);
	write_unlock(&kvm->mmu_lock);
	return r;
}
