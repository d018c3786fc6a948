// SPDX-License-Identifier: GPL-2.0
/* svmtrace's compat.h for Linux 6.1. */
#include <linux/kvm_host.h>
#include <linux/mm.h>

#include "mmu.h"
#include "mmu/mmu_internal.h"
#include "mmu/tdp_mmu.h"
#include "svmtrace.h"
#include "x86.h"

struct file *svmtrace_fd_file(struct fd f)
{
	return f.file;
}

void svmtrace_vma_flags_mod(struct vm_area_struct *vma, vm_flags_t set, vm_flags_t clear)
{
	vma->vm_flags = (vma->vm_flags & ~clear) | set;
}

long svmtrace_gup_remote(struct mm_struct *mm, unsigned long addr, struct page **page)
{
	return get_user_pages_remote(mm, addr, 1, 0, page, NULL, NULL);
}

void svmtrace_inject_page_fault(struct kvm_vcpu *vcpu, struct x86_exception *fault)
{
	kvm_inject_page_fault(vcpu, fault);
}

bool svmtrace_noncanonical(struct kvm_vcpu *vcpu, u64 la)
{
	return is_noncanonical_address(la, vcpu);
}

bool svmtrace_vnmi_active(void)
{
	return false;	/* KVM has no vNMI before 6.5 */
}

int svmtrace_mmu_deny_exec(struct kvm *kvm, gfn_t gfn)
{
	unsigned long hva = gfn_to_hva(kvm, gfn);
	int r;

	if (!is_tdp_mmu_enabled(kvm) || kvm_is_error_hva(hva))
		return -1;
	write_lock(&kvm->mmu_lock);
	kvm_mmu_invalidate_begin(kvm, hva, hva + PAGE_SIZE);
	r = kvm_tdp_mmu_deny_exec_gfn(kvm, 0, gfn);
	if (r > 0)
		kvm_flush_remote_tlbs_with_address(kvm, gfn, 1);
	kvm_mmu_invalidate_end(kvm, hva, hva + PAGE_SIZE);
	write_unlock(&kvm->mmu_lock);
	return r;
}
