// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: guest memory read and written with the rights of the guest
 * instruction that made the access.  The tracer reads what a stepped
 * instruction read (a POPF's image, an IRETQ's frame, the instruction
 * bytes themselves) and cleans what it wrote (a PUSHF's image); doing so
 * with other rights than the instruction's fails where the instruction did
 * not:
 *   - data at CPL 3 is a user access: KVM's *_system helpers walk as the
 *     supervisor, which SMAP (CR4.SMAP) refuses on user pages whatever
 *     RFLAGS.AC says (an implicit supervisor access from CPL 3);
 *   - instruction bytes are a fetch: protection keys (PKRU) govern data
 *     accesses only, so a data read of execute-only code fails where the
 *     CPU's fetch did not, and SMAP does not apply to fetches (SMEP and NX
 *     do).
 * @cpl is the CPL the instruction ran at; KVM decides SMAP for supervisor
 * data accesses by the vCPU's CPL and RFLAGS.AC now, which differ from the
 * instruction's only after a change of privilege (IRETQ), whose frame is on
 * a supervisor page anyway.
 *
 * Context: the vCPU's thread, kvm->srcu held (exit handlers, injection
 * hooks).
 */
#include <linux/kvm_host.h>

#include "kvm_emulate.h"
#include "svmtrace.h"

/* The guest-physical address of @gva for @access, INVALID_GPA if it faults. */
gpa_t svmtrace_gva_to_gpa(struct kvm_vcpu *vcpu, gva_t gva, u64 access)
{
	struct kvm_mmu *mmu = vcpu->arch.walk_mmu;
	struct x86_exception e;

	return mmu->gva_to_gpa(vcpu, mmu, gva, access, &e);
}

/*
 * @len bytes at @gva, page by page, read or written (@access:
 * PFERR_WRITE_MASK).  -EFAULT where the guest's walk faults, -ENXIO where
 * it leads to no guest RAM (device memory) or the VMM's memory behind it
 * cannot be accessed.
 */
static int access_guest(struct kvm_vcpu *vcpu, gva_t gva, void *buf, unsigned int len,
			u64 access)
{
	unsigned int n;
	gpa_t gpa;
	int r;

	for (; len; gva += n, buf += n, len -= n) {
		n = min_t(unsigned int, len, PAGE_SIZE - offset_in_page(gva));
		gpa = svmtrace_gva_to_gpa(vcpu, gva, access);
		if (gpa == INVALID_GPA)
			return -EFAULT;
		if (access & PFERR_WRITE_MASK)
			r = kvm_vcpu_write_guest(vcpu, gpa, buf, n);
		else
			r = kvm_vcpu_read_guest(vcpu, gpa, buf, n);
		if (r)
			return -ENXIO;
	}
	return 0;
}

/* Data at @gva as an instruction at @cpl read it; -EFAULT where it would fault, -ENXIO. */
int svmtrace_read_as(struct kvm_vcpu *vcpu, int cpl, gva_t gva, void *buf, unsigned int len)
{
	return access_guest(vcpu, gva, buf, len, svmtrace_data_access(cpl, false));
}

/* ... and wrote it. */
int svmtrace_write_as(struct kvm_vcpu *vcpu, int cpl, gva_t gva, const void *buf,
		      unsigned int len)
{
	return access_guest(vcpu, gva, (void *)buf, len, svmtrace_data_access(cpl, true));
}

/* Instruction bytes at @rip as the CPU fetched them at @cpl. */
int svmtrace_fetch_as(struct kvm_vcpu *vcpu, int cpl, gva_t rip, void *buf, unsigned int len)
{
	return access_guest(vcpu, rip, buf, len, svmtrace_fetch_access(cpl));
}
