// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace memory operands (SVMTRACE_TARGET_F_MEM): the accesses of each
 * traced instruction, with the values read and written.
 *
 * Before an instruction runs -- at the exit of the step before it, or where
 * a session begins -- its bytes are fetched and decoded (memdecode.c), the
 * linear address of each access computed from the registers as they are
 * then (segment base, ModRM/SIB or RIP-relative, rSI/rDI of a string
 * instruction, rSP of the stack), and what a read will see is read now:
 * svmtrace_mem_prepare().  At the exit of its own step the bytes each write
 * left are read at the same addresses, and the lot goes into the memory
 * tail of that step's slot: svmtrace_mem_fill().  A REP string instruction
 * traps after every iteration: one iteration is one step.
 *
 * Guest memory is read with the rights of the instruction (access.c), by
 * kvm_vcpu_read_guest(), which may sleep (a fault on the VMM's mapping of
 * guest RAM).  So both run only where sleeping is allowed, in the vCPU's
 * thread with interrupts on, under kvm->srcu and vt->lock: the fill in the
 * #DB exit handler's full path and in the steps KVM completes, the decode
 * in KVM_REQ_SVMTRACE right before the guest entry that runs the
 * instruction (svmtrace_mem_due() asks for it wherever stepping goes on,
 * also where a session begins under RCU, in the NPF exit of a gate).  The
 * IRQs-off fastpath never records a step of a capture with F_MEM:
 * plain_step() declines it there (step.c).
 *
 * The decoded instruction is kept with the CR3 it was decoded under, and
 * forgotten when the thread's flow breaks (a step adopted from a frame, a
 * #DB handed to the guest's handler): a step without it gets one
 * UNRECORDED access (undecoded, no address), never another instruction's.
 * Where the decode is is vt->mem_state (vstate.h): NONE, DUE (asked for,
 * before the next entry), DECODED (waiting for its step's fill).
 */
#include <linux/kvm_host.h>

#include "hooks.h"
#include "kvm_cache_regs.h"
#include "memdecode.h"
#include "svmtrace.h"
#include "x86.h"

/* The base of segment @seg (x86 numbering, which KVM's VCPU_SREG_* follow). */
static u64 seg_base(struct kvm_vcpu *vcpu, bool long64, u8 seg)
{
	BUILD_BUG_ON(VCPU_SREG_FS != 4 || VCPU_SREG_GS != 5 || VCPU_SREG_ES != 0 ||
		     VCPU_SREG_SS != 2 || VCPU_SREG_DS != 3);
	/* 64-bit mode adds only the FS and GS bases */
	if (long64 && seg != VCPU_SREG_FS && seg != VCPU_SREG_GS)
		return 0;
	return static_call(kvm_x86_get_segment_base)(vcpu, seg);
}

/* GPR @reg (x86 numbering, as VCPU_REGS_*), 32 bits of it in 32-bit code. */
static u64 gpr(struct kvm_vcpu *vcpu, u8 reg)
{
	return kvm_register_read(vcpu, reg);
}

/* The bit offset register of BT/BTS/BTR/BTC m, r moves the address. */
static s64 bt_offset(struct kvm_vcpu *vcpu, const struct svmtrace_memdecode *d, u32 size)
{
	u64 v = gpr(vcpu, d->bt_reg);
	s64 bits = size == 2 ? (s16)v : size == 4 ? (s32)v : (s64)v;

	return (bits >> 3) & ~(s64)(size - 1);
}

/*
 * The linear address of @op, in code at @rip of @long64 (else 32-bit), for
 * the instruction before it runs.
 */
static u64 op_addr(struct kvm_vcpu *vcpu, const struct svmtrace_memdecode *d,
		   const struct svmtrace_memop *op, u64 rip, bool long64)
{
	u64 mask = d->addr16 ? 0xffffULL : d->addr32 ? 0xffffffffULL : ~0ULL, ea;
	u8 seg = d->seg == SVMTRACE_SEG_DEFAULT ? VCPU_SREG_DS : d->seg;

	switch (op->form) {
	case SVMTRACE_FORM_MODRM:
		ea = d->disp;
		if (d->riprel)
			ea += rip + d->len;
		if (d->base != SVMTRACE_REG_NONE) {
			ea += gpr(vcpu, d->base);
			if (d->pop_rsp)
				ea += op->size;	/* POP m computes it after the pop */
			if (d->seg == SVMTRACE_SEG_DEFAULT &&
			    (d->base == VCPU_REGS_RSP || d->base == VCPU_REGS_RBP))
				seg = VCPU_SREG_SS;
		}
		if (d->index != SVMTRACE_REG_NONE)
			ea += gpr(vcpu, d->index) * d->scale;
		if (d->bt_reg != SVMTRACE_REG_NONE)
			ea += bt_offset(vcpu, d, op->size);
		break;
	case SVMTRACE_FORM_RSI:
		ea = gpr(vcpu, VCPU_REGS_RSI);
		break;
	case SVMTRACE_FORM_RDI:
		ea = gpr(vcpu, VCPU_REGS_RDI);
		seg = VCPU_SREG_ES;	/* no override */
		break;
	case SVMTRACE_FORM_POP:
	case SVMTRACE_FORM_PUSH:
	case SVMTRACE_FORM_LEAVE:
	case SVMTRACE_FORM_ENTER:
		/* the stack: rSP (PUSH: below it), rBP (LEAVE), below rBP (ENTER's copies) */
		ea = gpr(vcpu, op->form == SVMTRACE_FORM_LEAVE || op->form == SVMTRACE_FORM_ENTER ?
				       VCPU_REGS_RBP : VCPU_REGS_RSP);
		if (op->form == SVMTRACE_FORM_PUSH || op->form == SVMTRACE_FORM_ENTER)
			ea -= op->size;
		seg = VCPU_SREG_SS;
		mask = long64 ? ~0ULL : 0xffffffffULL;
		break;
	case SVMTRACE_FORM_XLAT:
		ea = gpr(vcpu, VCPU_REGS_RBX) + (u8)gpr(vcpu, VCPU_REGS_RAX);
		break;
	default:
		return 0;
	}
	ea = (ea & mask) + seg_base(vcpu, long64, seg);
	return long64 ? ea : (u32)ea;
}

static void unrecorded(struct svmtrace_slot_access *a, u8 why)
{
	a->kind = SVMTRACE_MEM_UNRECORDED;
	a->why = why;
	memset(a->read_value, 0, sizeof(a->read_value));
	memset(a->write_value, 0, sizeof(a->write_value));
}

/* @a->size bytes at @a->addr into @buf; UNRECORDED with the reason if not. */
static void read_value(struct kvm_vcpu *vcpu, int cpl, struct svmtrace_slot_access *a, u8 *buf)
{
	int r = svmtrace_read_as(vcpu, cpl, a->addr, buf, a->size);

	if (r)
		unrecorded(a, r == -ENXIO ? SVMTRACE_MEM_WHY_UNREADABLE : SVMTRACE_MEM_WHY_FAULT);
}

/* A string instruction repeated zero times accesses nothing. */
static bool rep_done(struct kvm_vcpu *vcpu, const struct svmtrace_memdecode *d)
{
	u64 rcx = gpr(vcpu, VCPU_REGS_RCX);

	return d->rep && !(d->addr16 ? (u16)rcx : d->addr32 ? (u32)rcx : rcx);
}

/*
 * Decode the instruction the vCPU runs next and read what it will read.
 * vt->lock held, interrupts on, kvm->srcu held (reads may sleep).
 */
static void prepare(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	struct svmtrace_mem_next *m = &vt->mem;
	struct svmtrace_memdecode d;
	struct svmtrace_slot_access *a;
	u8 code[SVMTRACE_INSN_MAX];
	unsigned int n, i;
	int cs_db, cs_l;
	bool long64;
	u64 rip;

	lockdep_assert_held(&vt->lock);
	might_sleep();
	rip = kvm_rip_read(vcpu);
	svmtrace_go(vt, SVMTRACE_EV_MEM_DECODED);
	m->rip = rip;
	m->cr3 = kvm_read_cr3(vcpu);
	m->cpl = static_call(kvm_x86_get_cpl)(vcpu);
	m->nr = 0;
	long64 = is_64_bit_mode(vcpu);
	static_call(kvm_x86_get_cs_db_l_bits)(vcpu, &cs_db, &cs_l);
	n = min_t(unsigned int, sizeof(code), PAGE_SIZE - offset_in_page(rip));
	if ((!long64 && !cs_db) || svmtrace_fetch_as(vcpu, m->cpl, rip, code, n)) {
		/* 16-bit code; or bytes that cannot be fetched (the fetch will fault) */
		svmtrace_memdecode(code, 0, long64, &d);
	} else {
		if (n < sizeof(code) &&
		    !svmtrace_fetch_as(vcpu, m->cpl, rip + n, code + n, sizeof(code) - n))
			n = sizeof(code);
		svmtrace_memdecode(code, n, long64, &d);
	}
	if (d.ok && rep_done(vcpu, &d))
		return;
	for (i = 0; i < d.nr; i++) {
		a = &m->acc[m->nr++];
		memset(a, 0, sizeof(*a));
		a->kind = d.ops[i].kind;
		a->why = d.ops[i].why;
		a->size = d.ops[i].size;
		a->addr = op_addr(vcpu, &d, &d.ops[i], rip, long64);
		if (a->kind == SVMTRACE_MEM_UNRECORDED)
			continue;
		if (a->size > SVMTRACE_MEM_MAX_VALUE) {
			unrecorded(a, SVMTRACE_MEM_WHY_TOO_LARGE);
			continue;
		}
		if (a->kind != SVMTRACE_MEM_WRITE)
			read_value(vcpu, m->cpl, a, a->read_value);
	}
}

/*
 * Stepping goes on: the instruction at RIP runs next.  It is decoded in
 * KVM_REQ_SVMTRACE (svmtrace_mem_request()), before the guest entry.
 * Callable in any context of the vCPU's thread, vt->lock held; after the
 * step's own svmtrace_mem_fill().
 */
void svmtrace_mem_due(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	lockdep_assert_held(&vt->lock);
	if (!svmtrace_mem_on(vt))
		return;
	svmtrace_go(vt, SVMTRACE_EV_MEM_DUE);
	kvm_make_request(KVM_REQ_SVMTRACE, vcpu);
}

/*
 * The flow of the thread broke (a step adopted from a frame, a #DB handed
 * to the guest's handler): what was decoded may not be what runs.
 * vt->lock held.
 */
void svmtrace_mem_forget(struct svmtrace_vcpu *vt)
{
	svmtrace_go(vt, SVMTRACE_EV_MEM_FORGET);
}

/*
 * The step recorded next is a SYSCALL, recorded where its thread returns
 * to user mode (frames.c): what was decoded before it may have been
 * replaced by other threads' steps meanwhile, but a SYSCALL has no memory
 * operand.  vt->lock held.
 */
void svmtrace_mem_none(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	lockdep_assert_held(&vt->lock);
	if (!svmtrace_mem_on(vt))
		return;
	svmtrace_go(vt, SVMTRACE_EV_MEM_SYSCALL);
	vt->mem.nr = 0;
	vt->mem.cr3 = kvm_read_cr3(vcpu);
}

/*
 * KVM_REQ_SVMTRACE, before the guest entry (interrupts on, kvm->srcu and
 * vt->lock held): the decode svmtrace_mem_due() asked for, if the vCPU
 * still steps a session of ours.
 */
void svmtrace_mem_request(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt)
{
	lockdep_assert_held(&vt->lock);
	if (vt->mem_state != SVMTRACE_MEM_DUE)
		return;
	if (vt->tf == SVMTRACE_TF_LIVE && vt->session != SVMTRACE_SESSION_NONE && svmtrace_mem_on(vt))
		prepare(vcpu, vt);
	else
		svmtrace_go(vt, SVMTRACE_EV_MEM_UNSTEPPED);
}

/*
 * A capture stops: nothing decoded outlives it.  vt->lock held.
 */
void svmtrace_mem_stop(struct svmtrace_vcpu *vt)
{
	svmtrace_go(vt, SVMTRACE_EV_MEM_STOP);
}

/*
 * The memory tail of @s, the slot of the step that just ran (a ring slot
 * or vt->last): the accesses decoded before it, with what its writes left.
 * vt->lock held, interrupts on, kvm->srcu held.
 */
void svmtrace_mem_fill(struct kvm_vcpu *vcpu, struct svmtrace_vcpu *vt, struct svmtrace_slot *s)
{
	struct svmtrace_slot_mem *t = (void *)s + vt->ring->mem_offset;
	struct svmtrace_mem_next *m = &vt->mem;
	struct svmtrace_slot_access *a;
	u32 i;

	lockdep_assert_held(&vt->lock);
	might_sleep();
	memset(t, 0, sizeof(*t));
	s->flags |= SVMTRACE_SLOT_F_MEM;
	if (vt->mem_state != SVMTRACE_MEM_DECODED ||
	    ((m->cr3 ^ kvm_read_cr3(vcpu)) & SVMTRACE_CR3_MASK)) {
		t->nr = 1;
		unrecorded(&t->accesses[0], SVMTRACE_MEM_WHY_UNDECODED);
		return;
	}
	svmtrace_go(vt, SVMTRACE_EV_MEM_FILLED);
	t->nr = m->nr;
	for (i = 0; i < m->nr; i++) {
		a = &t->accesses[i];
		*a = m->acc[i];
		if (a->kind == SVMTRACE_MEM_WRITE || a->kind == SVMTRACE_MEM_RMW)
			read_value(vcpu, m->cpl, a, a->write_value);
	}
}
