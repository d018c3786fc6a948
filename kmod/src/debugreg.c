// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: the DR6 of a guest that owns its debug registers while TF
 * steps it.
 *
 * KVM runs a guest with DR6 = DR6_ACTIVE_LOW and keeps the guest's own in
 * vcpu->arch.dr6, so a #DB exit's DR6 holds only that run's bits, and our
 * single-step's BS stays out of what the guest reads
 * (svmtrace_dr6_drop_own()).  Except in a run after a MOV DR exit when the
 * VMM does not debug the guest: dr_interception() then drops the DR
 * intercepts and runs the guest with its own DR6 (KVM_DEBUGREG_WONT_EXIT),
 * and at the next exit copies the VMCB's DR6 into vcpu->arch.dr6 and takes
 * the intercepts back.  While TF steps, that run is the one MOV DR, and
 * the DR6 at its exit has our trap's BS on top of the guest's bits -- and
 * under QEMU's TCG B0-B3 rewritten as the breakpoints the trap stopped
 * before.  A BS the guest left set says nothing about a trap there.
 *
 * What DR6 holds after that MOV is known at the MOV DR exit: the value a
 * MOV to DR6 writes (DR4 as well with CR4.DE clear), else the guest's DR6
 * before it (svmtrace_dr_exit()).  At the #DB exit that ends the run,
 * vcpu->arch.dr6 gets that value back and the VMCB's DR6 becomes what a
 * run with DR6_ACTIVE_LOW would have left: the bits of this #DB, BS only
 * if RIP moved (a MOV DR completes or faults, it never jumps)
 * (svmtrace_dr6_native()); KVM delivers those to the guest as usual when
 * the #DB is also the guest's.
 *
 * Context: the vCPU thread, interrupts on, kvm->srcu held (the VM exit
 * hook and db_interception(); the IRQs-off fastpath leaves such a #DB exit
 * to the full path).  The fields are the vCPU thread's own: no lock.  The
 * exit hook runs while some VM is armed: after a stop, a last MOV DR that
 * our TF steps keeps our BS in the guest's DR6.
 */
#include <linux/kvm_host.h>
#include <asm/svm.h>

#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/*
 * The value the MOV to a debug register at RIP writes: 0F 23 /r past its
 * prefixes (decode.c, fetched as the CPU fetched it), the source register
 * in ModRM's r/m, extended by REX.B (the CPU takes it as a register
 * whatever mod says).  False when the bytes are not that.
 */
static bool mov_dr_source(struct kvm_vcpu *vcpu, unsigned long *val)
{
	int cpl = static_call(kvm_x86_get_cpl)(vcpu);
	u64 rip = kvm_get_linear_rip(vcpu);
	struct svmtrace_insn in;
	u8 modrm;

	if (svmtrace_insn_fetch(vcpu, cpl, rip, &in) || in.bytes[in.op] != 0x0f ||
	    in.bytes[in.op + 1] != 0x23 || in.op + 2 >= SVMTRACE_INSN_MAX ||
	    svmtrace_fetch_as(vcpu, cpl, rip + in.op + 2, &modrm, 1))
		return false;
	*val = kvm_register_read(vcpu, (modrm & 7) | (in.rex_b ? 8 : 0));
	return true;
}

/*
 * A MOV DR exit (the VM exit hook, @exit_code SVM_EXIT_READ_DR0 to
 * SVM_EXIT_WRITE_DR7, before KVM handles it).  When KVM will run the MOV
 * with the guest's own debug registers and TF steps it, note what DR6
 * holds after it.
 */
void svmtrace_dr_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u32 exit_code)
{
	u32 dr = exit_code - SVM_EXIT_READ_DR0;
	unsigned long val;

	vt->dr_native = false;
	if (vcpu->guest_debug || !(static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF))
		return;	/* KVM emulates it, or no trap follows it */
	if (dr == 16 + 6 || (dr == 16 + 4 && !kvm_read_cr4_bits(vcpu, X86_CR4_DE))) {
		if (!mov_dr_source(vcpu, &val))
			return;
		vt->dr6_guest = (val & DR6_VOLATILE) | DR6_ACTIVE_LOW;
	} else {
		vt->dr6_guest = vcpu->arch.dr6;
	}
	vt->dr_rip = kvm_rip_read(vcpu);
	vt->dr_exit = vcpu->stat.exits;
	vt->dr_native = true;
}

/*
 * A #DB exit (db_interception(), before the tracer looks at @dr6, the
 * VMCB's DR6): if it ends the run of a MOV DR noted by svmtrace_dr_exit(),
 * the guest's DR6 gets its value after the MOV, and @dr6 only this #DB's
 * bits.
 */
void svmtrace_dr6_native(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 *dr6)
{
	u64 bits;

	if (!vt->dr_native || vcpu->stat.exits != vt->dr_exit + 1)
		return;
	vt->dr_native = false;
	bits = *dr6 & (DR6_BD | DR6_BT | DR_TRAP_BITS);
	if (kvm_rip_read(vcpu) != vt->dr_rip)
		bits |= DR6_BS;
	*dr6 = DR6_ACTIVE_LOW | bits;
	vcpu->arch.dr6 = vt->dr6_guest;
}
