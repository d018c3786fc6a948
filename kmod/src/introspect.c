// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace introspection requests: guest-physical memory and the vCPU
 * registers that Windows kernel discovery needs, for a controller that is
 * not the VMM (KVM refuses VM and vCPU ioctls from any other process).
 *
 * Guest memory is read through the VMM's own mapping of its memslots
 * (kvm->mm), one page at a time with a plain page reference that is dropped
 * before the next page: nothing stays pinned.  Only gfns of user memslots
 * are readable; MMIO, holes and KVM's private slots are ENXIO.
 */
#include <linux/highmem.h>
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svm/svm.h"
#include "svmtrace.h"
#include "x86.h"

/* Every page of [gpa, gpa + len) is in a user memslot. */
static bool range_is_ram(struct kvm *kvm, u64 gpa, u32 len)
{
	gfn_t gfn, last = gpa_to_gfn(gpa + len - 1);
	bool ram = true;
	int idx;

	idx = srcu_read_lock(&kvm->srcu);
	for (gfn = gpa_to_gfn(gpa); ram && gfn <= last; gfn++)
		ram = kvm_is_visible_memslot(gfn_to_memslot(kvm, gfn));
	srcu_read_unlock(&kvm->srcu, idx);
	return ram;
}

/*
 * A reference on the page behind @gpa in the VMM's @mm.  kvm->srcu is held
 * only to find the address: the page itself may be slow to come (swapped
 * out, userfaultfd), and a reader inside kvm->srcu would hold up every
 * memslot update (and so vCPU creation) meanwhile.  The reference keeps
 * the page; a memslot moved in between is read where it was.
 */
static int gpa_page(struct kvm *kvm, struct mm_struct *mm, u64 gpa, struct page **page)
{
	unsigned long hva;
	long got;
	int idx;

	idx = srcu_read_lock(&kvm->srcu);
	hva = gfn_to_hva(kvm, gpa_to_gfn(gpa));
	srcu_read_unlock(&kvm->srcu, idx);
	if (kvm_is_error_hva(hva))
		return -ENXIO;
	mmap_read_lock(mm);
	got = svmtrace_gup_remote(mm, hva, page);
	mmap_read_unlock(mm);
	return got == 1 ? 0 : -EFAULT;	/* not readable in the VMM: VM_IO, PFNMAP, gone */
}

/*
 * A naturally aligned u64 of guest memory, for the tracer itself, from any
 * thread (kvm_read_guest() reads through current->mm, which is the VMM's
 * only in its own threads).  No lock of the tracer's may be held.
 */
int svmtrace_read_guest_u64(struct kvm *kvm, u64 gpa, u64 *val)
{
	struct page *page;
	void *kaddr;
	int r;

	if (!mmget_not_zero(kvm->mm))
		return -ESRCH;	/* the VMM's address space is gone */
	r = gpa_page(kvm, kvm->mm, gpa, &page);
	mmput(kvm->mm);
	if (r)
		return r;
	kaddr = kmap_local_page(page);
	*val = READ_ONCE(*(u64 *)(kaddr + offset_in_page(gpa)));
	kunmap_local(kaddr);
	put_page(page);
	return 0;
}

/*
 * Copy @n bytes at @gpa (inside one page) to @buf through the VMM's mm:
 * resolved and referenced first, copied with no lock held (the caller's
 * buffer may fault, or be userfaultfd memory of its own).
 */
static int copy_gpa_page(struct kvm *kvm, struct mm_struct *mm, u64 gpa, void __user *buf,
			 u32 n)
{
	struct page *page;
	void *kaddr;
	int r;

	r = gpa_page(kvm, mm, gpa, &page);
	if (r)
		return r;
	kaddr = kmap_local_page(page);
	if (copy_to_user(buf, kaddr + offset_in_page(gpa), n))
		r = -EFAULT;
	kunmap_local(kaddr);
	put_page(page);
	return r;
}

int svmtrace_read_gpa(struct kvm *kvm, void __user *arg)
{
	struct svmtrace_gpa_read req;
	struct mm_struct *mm = kvm->mm;
	void __user *buf;
	u32 n, done = 0;
	int r = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved || !req.len || req.len > SVMTRACE_MAX_READ ||
	    req.gpa + req.len < req.gpa)
		return -EINVAL;
	buf = u64_to_user_ptr(req.buf);
	if (!mmget_not_zero(mm))
		return -ESRCH;	/* the VMM's address space is gone */
	if (!range_is_ram(kvm, req.gpa, req.len))
		r = -ENXIO;
	while (!r && done < req.len) {
		n = min_t(u32, req.len - done, PAGE_SIZE - offset_in_page(req.gpa + done));
		r = copy_gpa_page(kvm, mm, req.gpa + done, buf + done, n);
		done += n;
		if (!r && fatal_signal_pending(current))
			r = -EINTR;
		cond_resched();
	}
	mmput(mm);
	return r;
}

static u64 vcpu_msr(struct kvm_vcpu *vcpu, u32 index)
{
	struct msr_data msr = { .index = index, .host_initiated = true };

	return static_call(kvm_x86_get_msr)(vcpu, &msr) ? 0 : msr.data;
}

/*
 * Read without stopping the vCPU, from what lives as long as the vCPU:
 * vcpu->arch and the VMCB of the vCPU's own (L1) state, vmcb01, whose save
 * area the CPU writes at every VM exit.  Never through svm->vmcb and KVM's
 * accessors: while the guest runs a nested guest of its own that points at
 * vmcb02, which a nested exit on the vCPU's thread may free meanwhile.  A
 * running vCPU yields the values of its last exit (the guest's own state
 * while it runs a nested guest); with vcpu->mutex free (not in KVM_RUN) they
 * are consistent.  MSR reads of LSTAR and KERNEL_GS_BASE come from vmcb01
 * too (svm_get_msr()).
 */
static void read_vcpu_state(struct kvm_vcpu *vcpu, struct svmtrace_vcpu_state *st)
{
	const struct vmcb_save_area *save = &to_svm(vcpu)->vmcb01.ptr->save;

	st->rip = READ_ONCE(vcpu->arch.regs[VCPU_REGS_RIP]);
	st->rsp = READ_ONCE(vcpu->arch.regs[VCPU_REGS_RSP]);
	st->rflags = svmtrace_regs_get_rflags(vcpu, READ_ONCE(save->rflags));
	st->cr0 = READ_ONCE(vcpu->arch.cr0);
	st->cr3 = READ_ONCE(vcpu->arch.cr3);
	st->cr4 = READ_ONCE(vcpu->arch.cr4);
	st->efer = READ_ONCE(vcpu->arch.efer);
	st->lstar = vcpu_msr(vcpu, MSR_LSTAR);
	st->kernel_gs_base = vcpu_msr(vcpu, MSR_KERNEL_GS_BASE);
	st->gs_base = READ_ONCE(save->gs.base);
	st->fs_base = READ_ONCE(save->fs.base);
	st->idtr_base = READ_ONCE(save->idtr.base);
	st->idtr_limit = READ_ONCE(save->idtr.limit);
	st->gdtr_base = READ_ONCE(save->gdtr.base);
	st->gdtr_limit = READ_ONCE(save->gdtr.limit);
	st->cpl = READ_ONCE(save->cpl);
	if (is_guest_mode(vcpu))
		st->flags |= SVMTRACE_VCPU_STATE_F_GUEST_MODE;
}

int svmtrace_get_vcpu_state(struct kvm *kvm, void __user *arg)
{
	struct svmtrace_vcpu_state st = {};
	struct kvm_vcpu *vcpu;
	bool idle;

	if (copy_from_user(&st.vcpu, arg, sizeof(st.vcpu)))
		return -EFAULT;
	if (st.vcpu >= atomic_read(&kvm->online_vcpus))
		return -EINVAL;
	vcpu = kvm_get_vcpu(kvm, st.vcpu);
	if (!vcpu)
		return -EINVAL;
	if (vcpu->arch.guest_state_protected)
		return -EOPNOTSUPP;	/* SEV-ES: the state is encrypted */
	idle = mutex_trylock(&vcpu->mutex);
	read_vcpu_state(vcpu, &st);
	if (idle)
		mutex_unlock(&vcpu->mutex);
	else
		st.flags |= SVMTRACE_VCPU_STATE_F_RUNNING;
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}
