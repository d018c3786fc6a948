// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: keep our TF out of what the traced code can see (hazard 2).
 * (What the guest kernel reads on the way in from user mode -- frames,
 * SYSCALL's R11 -- is frames.c's.)
 *
 * Two places leak it into guest-visible user state, and both are repaired
 * right after the step that leaked it, before the next instruction runs:
 *
 *   PUSHF     stores RFLAGS with our TF on the stack: when the step that
 *             just completed was a PUSHF of any operand size (PUSHFQ,
 *             PUSHFD in 32-bit code such as WoW64, PUSHFW with 66, any
 *             legacy prefixes and REX: decoded from the bytes between the
 *             previous and the new RIP, RSP down by that size), clear TF in
 *             the stored image.
 *   SYSCALL   saves RFLAGS with our TF in R11, which SYSRET leaves there,
 *             when frames.c neither parks TF before it nor cleans R11 after
 *             it (a SYSCALL it did not see): when the step returned from a
 *             SYSCALL at the previous RIP (RIP = RCX = previous RIP + 2,
 *             opcode 0F 05), clear TF in R11.
 *
 * The guest's own TF is followed the same way: a POPF or IRETQ step loads
 * TF from the stack image it popped, so vt->guest_tf becomes that bit.
 * While it is set the guest's single-step traps are delivered to it as on
 * stock KVM, and its own PUSHF images keep their TF.
 *
 * NMI frames: KVM intercepts the IRET of every NMI it injects, so our TF is
 * kept out of the frame and that IRET is stepped, to take it back after.
 *
 * The VMM does not see our TF either: KVM_GET_REGS masks it (also the TF an
 * IRET is stepped with, frames.c), and KVM_SET_REGS keeps it set while
 * taking the VMM's TF as the guest's own.  So a snapshot (savevm, a
 * migration) never carries it: restored on a host without the tracer, the
 * guest goes on without a #DB of ours.
 *
 * Not followed: TF the guest sets with an IRET (or SYSRET) we do not step --
 * a user-only session's return from its kernel -- or with IRETD/IRETW.
 */
#include <linux/kvm_host.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/* Is the instruction fetched at @cpl at @rip @want? */
static bool opcode_at(struct kvm_vcpu *vcpu, int cpl, u64 rip, const u8 *want, unsigned int len)
{
	u8 op[2];

	if (len > sizeof(op) || svmtrace_fetch_as(vcpu, cpl, rip, op, len))
		return false;
	return !memcmp(op, want, len);
}

/*
 * The operand size in bytes of the PUSHF/POPF (@opcode 9C/9D) fetched at
 * @cpl that spans [@rip, @rip + @len), or 0 when those bytes are not that
 * instruction: legacy prefixes, then at most one REX (64-bit mode), then
 * the opcode.
 */
static unsigned int flags_op_size(struct kvm_vcpu *vcpu, int cpl, u64 rip, u64 len, u8 opcode)
{
	bool long64 = is_64_bit_mode(vcpu), o16 = false, rex_w = false;
	int cs_db, cs_l;
	u8 insn[15];
	u64 i;

	if (!len || len > sizeof(insn) || svmtrace_fetch_as(vcpu, cpl, rip, insn, len) ||
	    insn[len - 1] != opcode)
		return 0;
	for (i = 0; i + 1 < len; i++) {
		if (long64 && (insn[i] & 0xf0) == 0x40 && i + 2 == len)
			rex_w = insn[i] & 8;
		else if (insn[i] == 0x66)
			o16 = true;
		else if (!svmtrace_legacy_prefix(insn[i]))
			return 0;
	}
	if (long64)
		return rex_w || !o16 ? 8 : 2;
	static_call(kvm_x86_get_cs_db_l_bits)(vcpu, &cs_db, &cs_l);
	return cs_db != o16 ? 4 : 2;
}

/* RSP as the stack uses it: 64, 32 or 16 bits wide. */
static u64 stack_mask(struct kvm_vcpu *vcpu)
{
	struct kvm_segment ss;

	if (is_64_bit_mode(vcpu))
		return ~0ull;
	static_call(kvm_x86_get_segment)(vcpu, &ss, VCPU_SREG_SS);
	return ss.db ? 0xffffffffull : 0xffffull;
}

/*
 * Could a step that moved RSP by @moved and RIP by @len have been a
 * PUSHF/POPF?  Checked on every step, before any guest memory is read or
 * any segment looked at: the low 32 bits of the move are the move of a
 * 16-, 32- or 64-bit stack pointer alike.
 */
static bool is_flags_push_pop(u64 moved, u64 len)
{
	u32 by = moved;

	return (by == 2 || by == 4 || by == 8) && len >= 1 && len <= 15;
}

/*
 * The image a PUSHF stored is cleaned with the PUSHF's own rights: a user
 * write at CPL 3 (a supervisor write, refused by SMAP, left our TF there).
 */
static void hide_in_pushf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	unsigned int size;
	u64 mask, image = 0;

	if (!is_flags_push_pop(vt->prev_rsp - rsp, rip - vt->prev_rip))
		return;
	mask = stack_mask(vcpu);
	size = flags_op_size(vcpu, vt->prev_cpl, vt->prev_rip, rip - vt->prev_rip, 0x9c);
	if (!size || ((vt->prev_rsp - rsp) & mask) != size)
		return;
	rsp &= mask;
	if (svmtrace_read_as(vcpu, vt->prev_cpl, rsp, &image, size) || !(image & X86_EFLAGS_TF))
		return;
	image &= ~X86_EFLAGS_TF;
	svmtrace_write_as(vcpu, vt->prev_cpl, rsp, &image, size);
}

/*
 * Checked on every step: RIP first, and R11 read raw.  SYSCALL exists only
 * in 64-bit mode, where kvm_register_read() would return the same value
 * after asking for CS.L (a segment read through kvm-amd, ~100 instructions).
 */
static void hide_in_syscall_r11(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip,
				u64 rsp)
{
	static const u8 syscall[] = { 0x0f, 0x05 };
	unsigned long r11;

	/*
	 * A SYSCALL round trip leaves RSP as it was.  Another thread whose
	 * jump lands two bytes after this vCPU's last (SYSCALL) step, with its
	 * RCX by chance equal, has its own RSP: its R11 is not ours to touch
	 * (make e2e-os saw exactly that).
	 */
	if (rip != vt->prev_rip + 2 || rsp != vt->prev_rsp || kvm_rcx_read(vcpu) != rip)
		return;
	r11 = kvm_register_read_raw(vcpu, VCPU_REGS_R11);
	if (!(r11 & X86_EFLAGS_TF))
		return;
	if (opcode_at(vcpu, vt->prev_cpl, vt->prev_rip, syscall, sizeof(syscall)))
		kvm_register_write(vcpu, VCPU_REGS_R11, r11 & ~X86_EFLAGS_TF);
}

/* A POPF step: the guest's own TF is now the bit it popped. */
static void follow_popf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	unsigned int size;
	u64 mask, image = 0;

	if (!is_flags_push_pop(rsp - vt->prev_rsp, rip - vt->prev_rip))
		return;
	mask = stack_mask(vcpu);
	size = flags_op_size(vcpu, vt->prev_cpl, vt->prev_rip, rip - vt->prev_rip, 0x9d);
	if (!size || ((rsp - vt->prev_rsp) & mask) != size)
		return;
	if (!svmtrace_read_as(vcpu, vt->prev_cpl, vt->prev_rsp & mask, &image, size))
		vt->guest_tf = image & X86_EFLAGS_TF;
}

/*
 * An IRETQ step (64-bit mode): the guest's own TF is now the bit in the
 * RFLAGS image it popped (RIP, CS, RFLAGS, RSP, SS at the old RSP).  IRETQ
 * loads RSP from its frame: a step that left RSP alone or moved it like a
 * push or pop was no IRETQ, and nothing is read (checked on every step).
 * The IRETQ and its frame are read with the rights of the CPL the IRETQ ran
 * at, not the one it returned to: an IRETQ from CPL 0 to 3 is kernel code,
 * its frame on the kernel stack (read with the user's rights, the kernel's
 * IRETQ was not found, and a --kernel session took the guest's TF coming
 * back from its #DB handler for ours: guest_db lost its #DBs); one from
 * CPL 3 to 3 is user code with its frame on the user stack (read with the
 * supervisor's, SMAP refused both).
 */
static void follow_iret(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip, u64 rsp)
{
	u64 image = 0;
	u8 insn[2];

	if (rsp == vt->prev_rsp || is_flags_push_pop(rsp - vt->prev_rsp, 1) ||
	    is_flags_push_pop(vt->prev_rsp - rsp, 1) || !is_64_bit_mode(vcpu) ||
	    svmtrace_fetch_as(vcpu, vt->prev_cpl, vt->prev_rip, insn, sizeof(insn)) ||
	    (insn[0] & 0xf8) != 0x48 || insn[1] != 0xcf ||
	    svmtrace_read_as(vcpu, vt->prev_cpl, vt->prev_rsp + 16, &image, sizeof(image)))
		return;
	vt->guest_tf = image & X86_EFLAGS_TF;
	if (vt->handler == SVMTRACE_HANDLER_IN) {
		/*
		 * Returning from a handler entered while our TF was on: the
		 * frame's TF may be ours; the guest's is what it was then
		 * (or what the handler left of it).
		 */
		vt->guest_tf &= vt->iret_guest_tf;
		svmtrace_go(vt, SVMTRACE_EV_HANDLER_RETURNED);
	}
}

/*
 * KVM injects an NMI at the next entry (svm_inject_nmi(): interrupts on,
 * kvm->srcu held) and intercepts its handler's IRET.  Delivery would push
 * RFLAGS with our TF into the NMI frame, where the guest's handler reads
 * it (hazard 2): take our TF out of RFLAGS first and park it
 * (vt->tf NMI: a trap in the handler is not ours).  At the IRET exit
 * (svmtrace_nmi_iret()) that IRET is stepped with our TF (frames.c,
 * vt->iret RESUME), and the trap after it, where the NMI came,
 * takes our TF back: the trap after the next instruction is ours again.
 * Our TF is never in guest memory.  Under --kernel the handler is the
 * target's too: TF stays ours (LIVE), and as after any event that took
 * it, the first exit in the handler -- its IRET's at the latest -- ends the
 * session and follows the handler from there (step.c, lost_tf()).
 */
void __svmtrace_nmi_injected(struct kvm_vcpu *vcpu)
{
	const struct svmtrace_target *t;
	struct svmtrace_vcpu *vt;
	struct svmtrace_vm *vm;

	if (is_guest_mode(vcpu))
		return;
	vt = svmtrace_vcpu_of(vcpu, &vm);
	if (!vt || (!svmtrace_tf_live(READ_ONCE(vt->tf)) &&
		    !svmtrace_iret_stepped(READ_ONCE(vt->iret))))
		return;
	mutex_lock(&vt->lock);
	svmtrace_iret_event(vcpu, vt);	/* the NMI comes before an IRET we step over */
	t = rcu_dereference_protected(vm->armed, lockdep_is_held(&vt->lock));
	if (vt->tf == SVMTRACE_TF_LIVE && !vt->guest_tf &&
	    (static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF)) {
		static_call(kvm_x86_set_rflags)(vcpu, static_call(kvm_x86_get_rflags)(vcpu) &
						       ~X86_EFLAGS_TF);
		/* After a stop no step of ours follows the handler either. */
		if (!t)
			svmtrace_go(vt, SVMTRACE_EV_TF_NMI_LEFTOVER);
		else if (!(t->flags & SVMTRACE_TARGET_F_KERNEL))
			svmtrace_go(vt, SVMTRACE_EV_TF_NMI_PARK);
	}
	mutex_unlock(&vt->lock);
}
EXPORT_SYMBOL_GPL(__svmtrace_nmi_injected);

/*
 * The IRET exit of an NMI handler whose frame we kept our TF out of (exit
 * hook, vt->lock held): true when our stepping goes on where the NMI
 * interrupted it -- the capture still armed -- and the IRET is to be
 * stepped for that (frames.c, svmtrace_iret_exit()).
 */
bool svmtrace_nmi_iret(struct kvm_vcpu *vcpu, struct svmtrace_vm *vm, struct svmtrace_vcpu *vt)
{
	lockdep_assert_held(&vt->lock);
	if (vt->tf != SVMTRACE_TF_NMI)
		return false;
	svmtrace_go(vt, SVMTRACE_EV_TF_NMI_IRET);
	return rcu_access_pointer(vm->armed) && vt->ring;
}

/* A new starting point (session start, after KVM's own step): no repair. */
void svmtrace_hide_restart(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	vt->prev_valid = false;
	svmtrace_hide_tf(vcpu, vt);
}

/*
 * The repairs and the following of the guest's TF, for a step that may
 * need one (svmtrace_hide_step() decides): out of line, so that the common
 * step pays for none of their stack frame.
 */
noinline void svmtrace_hide_repair(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 rip,
				   u64 rsp)
{
	if (!vt->guest_tf) {
		hide_in_pushf(vcpu, vt, rip, rsp);
		hide_in_syscall_r11(vcpu, vt, rip, rsp);
	}
	follow_popf(vcpu, vt, rip, rsp);
	follow_iret(vcpu, vt, rip, rsp);
}

/* After a traced step: repair what it leaked, remember where it ended. */
void svmtrace_hide_tf(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	svmtrace_hide_step(vcpu, vt, kvm_rip_read(vcpu), kvm_rsp_read(vcpu),
			   static_call(kvm_x86_get_cpl)(vcpu));
}

/* An IRET stepped with our TF (frames.c): that TF is ours alone. */
static bool iret_stepped(const struct svmtrace_vcpu *vt)
{
	return svmtrace_iret_stepped(READ_ONCE(vt->iret));
}

unsigned long __svmtrace_regs_get_rflags(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);

	if (vt && ((svmtrace_tf_live(READ_ONCE(vt->tf)) && !READ_ONCE(vt->guest_tf)) ||
		   iret_stepped(vt)))
		rflags &= ~X86_EFLAGS_TF;
	return rflags;
}

unsigned long __svmtrace_regs_set_rflags(struct kvm_vcpu *vcpu, unsigned long rflags)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_of(vcpu, NULL);

	if (!vt || (!svmtrace_tf_live(READ_ONCE(vt->tf)) && !iret_stepped(vt)))
		return rflags;
	mutex_lock(&vt->lock);
	if (svmtrace_iret_stepped(vt->iret)) {
		rflags |= X86_EFLAGS_TF;	/* the IRET pops the guest's own */
	} else if (svmtrace_tf_live(vt->tf)) {
		bool stepping = static_call(kvm_x86_get_rflags)(vcpu) & X86_EFLAGS_TF;

		vt->guest_tf = rflags & X86_EFLAGS_TF;
		if (stepping)
			rflags |= X86_EFLAGS_TF;
	}
	mutex_unlock(&vt->lock);
	return rflags;
}
