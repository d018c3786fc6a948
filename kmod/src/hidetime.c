// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: virtual time for a target armed with SVMTRACE_TARGET_F_HIDE_TIME
 * (docs/kmod.md, "Virtual time").
 *
 * A stepped instruction costs a VM exit: a thread that reads the TSC
 * around a few of its own instructions sees a thousandfold slowdown.  While
 * a session steps the target in user mode, RDTSC and RDTSCP are
 * intercepted on that vCPU and return a virtual TSC instead, and so does
 * every clock the guest builds on them in user mode (the Hyper-V reference
 * TSC page, kvmclock in the vDSO).  The TSC offset is not touched: it is
 * the vCPU's, shared by the guest kernel and every other thread there.
 *
 * The clock is the target's (one per VM: one target), not a vCPU's:
 *   - a *stretch* is a vCPU stepping the target without a break: from the
 *     entry where the tracer's TF steps a thread of the target (user mode,
 *     or any mode under --kernel) to the entry where it no longer does (a
 *     thread parked in a system call or an interrupt, a session end, a
 *     stop).  Within a stretch the virtual TSC advances by the native cost
 *     of each step: costs.insn_x256 / 256 cycles per #DB step,
 *     costs.tsc_read per RDTSC or RDTSCP, and for an instruction KVM
 *     completes itself (CPUID, I/O, MSR, HLT, MMIO) the time KVM took from
 *     its VM exit plus costs.exit (the world switch the host cannot see),
 *     as it would untraced;
 *   - between stretches it advances with the real TSC: the lag (real minus
 *     virtual) a stretch ends with is what the next one starts with, on any
 *     vCPU, so the clock is continuous across system calls, interrupts,
 *     sessions and vCPU moves;
 *   - every read returns more than any read before it, on any vCPU (the
 *     floor), and at most the reading vCPU's real TSC: time never goes
 *     backwards for the target, and a value it hands to another thread is
 *     never ahead of that thread's own reads.  Not covered: a real value
 *     another thread hands to the target is ahead of the target's reads
 *     (the lag shows).
 *   - a read is never behind the TSC timestamp of the vCPU's kvmclock page
 *     while that page says TSC_STABLE (Linux's vDSO reads it then:
 *     system_time + (TSC - tsc_timestamp) * mul would wrap below it).
 * Kernel-mode reads stay real (no intercept at CPL 0): the guest kernel's
 * timekeeping is shared by every thread and vCPU, and a reader behind the
 * cycle count it recorded last would break it.
 *
 * Contexts: svmtrace_time_entry() before a VM entry, interrupts off
 * (intercepts.c, __svmtrace_entry()); __svmtrace_tsc_exit() and
 * svmtrace_time_completed() in exit handlers, interrupts on, kvm->srcu
 * held; all three in the vCPU's own thread, the only one that touches its
 * vt->vtime.  The VM's clock (lag, floor) is shared by the vCPUs under
 * vclock.lock, a raw spinlock (taken with interrupts off at entry, never in
 * interrupt context), the innermost lock: nothing is taken under it.
 * svmtrace_time_arm() runs under vm->lock before the target is armed.
 */
#include <linux/kvm_host.h>
#include <asm/pvclock-abi.h>

#include "cpuid.h"
#include "hooks.h"
#include "kvm_cache_regs.h"
#include "svmtrace.h"
#include "x86.h"

/* The two instructions the intercepts bring here (second opcode byte). */
#define OP_RDTSC	0x31
#define OP_RDTSCP	0xf9

static u64 guest_tsc(struct kvm_vcpu *vcpu)
{
	return kvm_read_l1_tsc(vcpu, rdtsc());
}

/* The virtual TSC of an open stretch now, before any clamp. */
static u64 stretch_now(struct kvm_vcpu *vcpu, const struct svmtrace_vcpu *vt,
		       const struct svmtrace_vclock *c)
{
	const struct svmtrace_vtime *s = &vt->vtime;
	u64 steps = READ_ONCE(vt->stats.db_exits) - s->anchor_steps;

	return s->base + ((c->costs.insn_x256 * steps + s->extra_x256) >> 8);
}

void svmtrace_time_init(struct svmtrace_vm *vm)
{
	raw_spin_lock_init(&vm->vclock.lock);
}

/*
 * Arm (vm->lock held, before vm->armed is published): a new clock with no
 * lag; the vCPUs' stretches of an earlier arm are stale (gen).
 */
void svmtrace_time_arm(struct svmtrace_vm *vm)
{
	struct svmtrace_vclock *c = &vm->vclock;

	lockdep_assert_held(&vm->lock);
	raw_spin_lock(&c->lock);
	WRITE_ONCE(c->gen, c->gen + 1);
	c->lag = 0;
	c->floor = 0;
	c->costs = vm->target.time;
	raw_spin_unlock(&c->lock);
}

/*
 * Does the vCPU step the target now, and in user mode (@user)?  Its TF is
 * ours in an open session (the guest's own may be on the same bit), of an
 * armed target (@t, NULL when none is) with HIDE_TIME, at a CPL the target
 * records.
 */
static bool stepping(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
		     const struct svmtrace_target *t, bool *user)
{
	u32 flags;

	if (!t)
		return false;
	flags = READ_ONCE(t->flags);
	if (!(flags & SVMTRACE_TARGET_F_HIDE_TIME) || READ_ONCE(vt->tf) != SVMTRACE_TF_LIVE ||
	    READ_ONCE(vt->session) == SVMTRACE_SESSION_NONE)
		return false;
	*user = static_call(kvm_x86_get_cpl)(vcpu) == 3;
	return *user || (flags & SVMTRACE_TARGET_F_KERNEL);
}

/* A stretch opens: the virtual TSC goes on from the lag the last one left. */
static void stretch_open(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	struct svmtrace_vclock *c = &vt->vm->vclock;
	struct svmtrace_vtime *s = &vt->vtime;
	u64 g = guest_tsc(vcpu);

	raw_spin_lock(&c->lock);
	s->base = max(g > c->lag ? g - c->lag : 0, c->floor);
	s->gen = c->gen;
	raw_spin_unlock(&c->lock);
	s->anchor_steps = READ_ONCE(vt->stats.db_exits);
	s->extra_x256 = 0;
	s->open = true;
}

/* A stretch closes: the lag it ends with is the target's until the next. */
static void stretch_close(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	struct svmtrace_vclock *c = &vt->vm->vclock;
	u64 g = guest_tsc(vcpu), v;

	raw_spin_lock(&c->lock);
	if (vt->vtime.gen == c->gen) {
		v = max(min(stretch_now(vcpu, vt, c), g), c->floor);
		c->lag = g > v ? g - v : 0;
	}
	raw_spin_unlock(&c->lock);
	vt->vtime.open = false;
}

/*
 * Before an entry outside guest mode (__svmtrace_entry(), interrupts off):
 * a stretch opens or closes when the vCPU starts or stops stepping the
 * target (@t: the target armed, as the caller read it, or NULL).  True
 * when the target's reads of the TSC on this vCPU are virtual now (user
 * mode): intercepts.c adds RDTSC and RDTSCP.  A plain step of user code
 * changes none of this (no question is asked after one, intercepts.c).
 */
bool svmtrace_time_entry(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt,
			 const struct svmtrace_target *t)
{
	struct svmtrace_vtime *s = &vt->vtime;
	bool user = false, want = stepping(vcpu, vt, t, &user);

	if (s->open && s->gen != READ_ONCE(vt->vm->vclock.gen))
		s->open = false;	/* a stretch of an earlier arm */
	if (want && !s->open)
		stretch_open(vcpu, vt);
	else if (!want && s->open)
		stretch_close(vcpu, vt);
	return want && user;
}

/*
 * KVM completed an instruction of the target (CPUID, I/O, MSR, HLT, MMIO;
 * kvm_vcpu_do_singlestep(), before the step is recorded): it costs what it
 * would untraced, the time KVM took since its VM exit (last_guest_tsc, taken
 * right after every exit the full path handles; for I/O the VMM's part
 * included) and the world switch.  A TSC read counted itself.
 */
void svmtrace_time_completed(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	struct svmtrace_vtime *s = &vt->vtime;
	s64 took;

	if (!s->open || s->read_done)
		return;
	took = guest_tsc(vcpu) - vcpu->arch.last_guest_tsc;
	s->extra_x256 += ((u64)max_t(s64, took, 0) + READ_ONCE(vt->vm->vclock.costs.exit)) << 8;
}

/*
 * A user-mode read of the TSC by the target: the virtual value, which the
 * stretch goes on from.  @g is the real one.
 */
static u64 virtual_read(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, u64 g)
{
	const struct pvclock_vcpu_time_info *pv = &vcpu->arch.hv_clock;
	struct svmtrace_vclock *c = &vt->vm->vclock;
	struct svmtrace_vtime *s = &vt->vtime;
	u64 v;

	raw_spin_lock(&c->lock);
	if (s->gen != c->gen) {
		raw_spin_unlock(&c->lock);
		return g;
	}
	v = min(stretch_now(vcpu, vt, c) + c->costs.tsc_read, g);
	/* kvmclock as Linux's vDSO reads it (TSC_STABLE): never below its timestamp */
	if (pv->flags & PVCLOCK_TSC_STABLE_BIT)
		v = max(v, pv->tsc_timestamp);
	v = max(v, c->floor + 1);
	c->floor = v;
	raw_spin_unlock(&c->lock);
	s->base = v;
	s->anchor_steps = READ_ONCE(vt->stats.db_exits);
	s->extra_x256 = 0;
	return v;
}

/*
 * The instruction at RIP, fetched as the CPU fetched it at @cpl
 * (decode.c): OP_RDTSC, OP_RDTSCP, or 0 for anything else (rewritten since
 * the exit, or unreadable now: the CPU runs it again, and faults itself).
 * Prefixes change nothing for either; with LOCK the CPU raises #UD itself.
 * QEMU's TCG reports RDTSCP as an RDTSC exit: the bytes decide.
 */
static u8 tsc_opcode(struct kvm_vcpu *vcpu, int cpl)
{
	unsigned long rip = kvm_get_linear_rip(vcpu);
	struct svmtrace_insn in;
	u8 modrm;

	if (svmtrace_insn_fetch(vcpu, cpl, rip, &in) || in.lock || in.bytes[in.op] != 0x0f)
		return 0;
	if (in.bytes[in.op + 1] == OP_RDTSC)
		return OP_RDTSC;
	/* 0F 01 F9; the third byte may be on the next page, which decode.c did not read */
	if (in.bytes[in.op + 1] != 0x01 || in.op + 2 >= SVMTRACE_INSN_MAX ||
	    svmtrace_fetch_as(vcpu, cpl, rip + in.op + 2, &modrm, 1))
		return 0;
	return modrm == OP_RDTSCP ? OP_RDTSCP : 0;
}

/*
 * svm_handle_exit(): an RDTSC or RDTSCP exit for the intercepts
 * svmtrace_time_entry() asked for (interrupts on, kvm->srcu held).  The
 * instruction is completed as the CPU would (#GP with CR4.TSD above CPL 0,
 * #UD for an RDTSCP the guest's CPUID lacks; TSC_AUX into ECX), with the
 * virtual TSC while a stretch of the target is open at CPL 3, the real one
 * otherwise (a read that raced with the stretch's end), and skipped as KVM
 * skips what it completes: the next RIP from the VMCB with NRIPS, from
 * KVM's decoder without; kvm_vcpu_do_singlestep() then records the step.
 */
int __svmtrace_tsc_exit(struct kvm_vcpu *vcpu, struct svmtrace_vcpu **vtp)
{
	struct svmtrace_vcpu *vt = svmtrace_vcpu_cached(vcpu, vtp);
	int cpl = static_call(kvm_x86_get_cpl)(vcpu);
	u8 op = tsc_opcode(vcpu, cpl);
	u64 v, aux = 0;
	int r;

	if (!op)
		return 1;
	if (cpl && kvm_read_cr4_bits(vcpu, X86_CR4_TSD)) {
		kvm_inject_gp(vcpu, 0);
		return 1;
	}
	if (op == OP_RDTSCP && !guest_cpuid_has(vcpu, X86_FEATURE_RDTSCP)) {
		kvm_queue_exception(vcpu, UD_VECTOR);
		return 1;
	}
	v = guest_tsc(vcpu);
	if (vt && vt->vtime.open && cpl == 3)
		v = virtual_read(vcpu, vt, v);
	kvm_rax_write(vcpu, (u32)v);
	kvm_rdx_write(vcpu, v >> 32);
	if (op == OP_RDTSCP) {
		__kvm_get_msr(vcpu, MSR_TSC_AUX, &aux, true);
		kvm_rcx_write(vcpu, (u32)aux);
	}
	if (!vt)
		return kvm_skip_emulated_instruction(vcpu);
	vt->vtime.read_done = true;	/* the step's cost is in @v */
	r = kvm_skip_emulated_instruction(vcpu);
	vt->vtime.read_done = false;
	return r;
}
EXPORT_SYMBOL_GPL(__svmtrace_tsc_exit);
