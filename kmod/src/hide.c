// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: keep our TF out of what the traced code can see (hazard 2).
 *
 * Two places leak it into guest-visible user state, and both are repaired
 * right after the step that leaked it, before the next instruction runs:
 *
 *   PUSHF(Q)  stores RFLAGS with our TF on the stack: when the step that
 *             just completed was a PUSHFQ (RSP down by 8, the opcode at
 *             the previous RIP is [REX.W] 9C), clear TF in the stored image.
 *   SYSCALL   saves RFLAGS with our TF in R11, which SYSRET leaves there:
 *             when the step returned from a SYSCALL at the previous RIP
 *             (RIP = RCX = previous RIP + 2, opcode 0F 05), clear TF in R11.
 *
 * The guest's own TF is followed the same way: a POPF(Q) step loads TF from
 * the stack image it popped, so vt->guest_tf becomes that bit.  While it is
 * set the guest's single-step traps are delivered to it as on stock KVM,
 * and its own PUSHF images keep their TF.
 *
 * The VMM does not see our TF either: KVM_GET_REGS masks it, and
 * KVM_SET_REGS keeps it set while taking the VMM's TF as the guest's own.
 *
 * Not hidden: RFLAGS images in interrupt/exception frames and in the saved
 * R11 that the guest kernel sees before it returns (docs/kmod.md).  Not
 * followed: TF the guest sets with IRET or in a frame it returns through.
 */
#include <linux/kvm_host.h>

#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

static bool opcode_at(struct kvm_vcpu *vcpu, u64 rip, const u8 *want, unsigned int len)
{
	struct x86_exception e;
	u8 op[2];

	if (len > sizeof(op) || kvm_read_guest_virt(vcpu, rip, op, len, &e))
		return false;
	return !memcmp(op, want, len);
}

static void hide_in_pushf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	static const u8 pushfq[] = { 0x9c }, rex_pushfq[] = { 0x48, 0x9c };
	struct x86_exception e;
	u64 len = rip - vt->prev_rip, image;

	if (rsp != vt->prev_rsp - 8 || (len != 1 && len != 2))
		return;
	if (!opcode_at(vcpu, vt->prev_rip, len == 1 ? pushfq : rex_pushfq, len))
		return;
	if (kvm_read_guest_virt(vcpu, rsp, &image, sizeof(image), &e) || !(image & X86_EFLAGS_TF))
		return;
	image &= ~X86_EFLAGS_TF;
	kvm_write_guest_virt_system(vcpu, rsp, &image, sizeof(image), &e);
}

static void hide_in_syscall_r11(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip)
{
	static const u8 syscall[] = { 0x0f, 0x05 };
	unsigned long r11 = kvm_register_read(vcpu, VCPU_REGS_R11);

	if (rip != vt->prev_rip + 2 || kvm_rcx_read(vcpu) != rip || !(r11 & X86_EFLAGS_TF))
		return;
	if (opcode_at(vcpu, vt->prev_rip, syscall, sizeof(syscall)))
		kvm_register_write(vcpu, VCPU_REGS_R11, r11 & ~X86_EFLAGS_TF);
}

/* A POPFQ step: the guest's own TF is now the bit it popped. */
static void follow_popf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	static const u8 popfq[] = { 0x9d }, rex_popfq[] = { 0x48, 0x9d };
	struct x86_exception e;
	u64 len = rip - vt->prev_rip, image;

	if (rsp != vt->prev_rsp + 8 || (len != 1 && len != 2))
		return;
	if (!opcode_at(vcpu, vt->prev_rip, len == 1 ? popfq : rex_popfq, len))
		return;
	if (!kvm_read_guest_virt(vcpu, vt->prev_rsp, &image, sizeof(image), &e))
		vt->guest_tf = image & X86_EFLAGS_TF;
}

/* A new starting point (session start, after KVM's own step): no repair. */
void svmtrace_hide_restart(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	vt->prev_valid = false;
	svmtrace_hide_tf(vcpu, vt);
}

/* After a traced step: repair what it leaked, remember where it ended. */
void svmtrace_hide_tf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	u64 rip = kvm_rip_read(vcpu), rsp = kvm_rsp_read(vcpu);

	if (vt->prev_valid) {
		if (!vt->guest_tf) {
			hide_in_pushf(vcpu, vt, rip, rsp);
			hide_in_syscall_r11(vcpu, vt, rip);
		}
		follow_popf(vcpu, vt, rip, rsp);
	}
	vt->prev_rip = rip;
	vt->prev_rsp = rsp;
	vt->prev_valid = true;
}

unsigned long __svmtrace_regs_get_rflags(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);

	if (vt && READ_ONCE(vt->tf_live) && !READ_ONCE(vt->guest_tf))
		rflags &= ~X86_EFLAGS_TF;
	return rflags;
}

unsigned long __svmtrace_regs_set_rflags(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);

	if (!vt || !READ_ONCE(vt->tf_live))
		return rflags;
	mutex_lock(&vt->lock);
	if (vt->tf_live) {
		bool stepping = static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF;

		vt->guest_tf = rflags & X86_EFLAGS_TF;
		if (stepping)
			rflags |= X86_EFLAGS_TF;
	}
	mutex_unlock(&vt->lock);
	return rflags;
}
