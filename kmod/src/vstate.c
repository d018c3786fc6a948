// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace: the transition table of a vCPU's tracer state (vstate.h).
 * Each event has one dimension, one target state and the set of states it
 * may come from; svmtrace_go() makes it.  An event from a state the table
 * does not list is a bug: the kernel log says which (once), and the event
 * still moves the dimension to its target, as the code asked.  docs/kmod.md
 * draws the same table, with the hook and the context of each event; the
 * lab's build counts every transition it makes (testparam.c) and the lab
 * checks those against that drawing.
 *
 * Context: the caller holds vt->lock (any of the vCPU's hooks, stop, the
 * controller's decision); never the IRQs-off fastpath, whose plain step
 * changes no state.
 */
#include <linux/kvm_host.h>

#include "svmtrace.h"

struct dim_info {
	const char *name;
	size_t offset;		/* of its u8 in struct svmtrace_vcpu */
	const char *states[SVMTRACE_MAX_STATES];
};

#define DIM(d, name, field, ...) \
	[SVMTRACE_DIM_##d] = { name, offsetof(struct svmtrace_vcpu, field), { __VA_ARGS__ } }

static const struct dim_info dims[SVMTRACE_NR_DIMS] = {
	DIM(TF, "tf", tf, "NONE", "NMI", "LIVE", "SILENT"),
	DIM(SESSION, "session", session, "NONE", "PENDING", "OPEN"),
	DIM(GAP, "gap", gap, "NONE", "OWED"),
	DIM(SLOT, "slot", slot, "NONE", "HELD", "WAITING"),
	DIM(IRET, "iret", iret, "NONE", "STEP", "RESUME", "BARE"),
	DIM(HANDLER, "handler", handler, "NONE", "IN"),
	DIM(SYS, "sys", sys, "NONE", "PARKED"),
	DIM(ASK, "ask", ask_state, "NONE", "ASKED", "DECIDED"),
	DIM(MEM, "mem", mem_state, "NONE", "DUE", "DECODED"),
};

struct edge {
	const char *name;
	u8 dim;
	u8 to;
	u8 from;		/* BIT(state) of each state it may come from */
};

/* EDGE(dimension, event, target, from...): state names without prefix. */
#define S(d, s) SVMTRACE_##d##_##s
#define F(d, s) BIT(S(d, s))
#define EDGE(d, ev, to_, from_) \
	[SVMTRACE_EV_##d##_##ev] = { #ev, SVMTRACE_DIM_##d, S(d, to_), from_ }

static const struct edge edges[SVMTRACE_NR_EVENTS] = {
	/* NONE, or LIVE left over by a stop whose trap has not come yet */
	EDGE(TF, BEGIN, LIVE, F(TF, NONE) | F(TF, LIVE)),
	EDGE(TF, SILENT, SILENT, F(TF, NONE) | F(TF, LIVE)),
	EDGE(TF, SILENT_DONE, NONE, F(TF, SILENT)),
	EDGE(TF, RELEASE, NONE, F(TF, LIVE)),
	EDGE(TF, RETAKE, LIVE, F(TF, LIVE)),
	EDGE(TF, KERNEL, NONE, F(TF, LIVE)),
	EDGE(TF, ADOPT, LIVE, F(TF, NONE)),
	EDGE(TF, TAKE_THREAD, LIVE, F(TF, NONE)),
	EDGE(TF, PARK_FRAME, NONE, F(TF, LIVE)),
	EDGE(TF, PARK_SYSCALL, NONE, F(TF, LIVE)),
	EDGE(TF, SYSCALL_UNDONE, LIVE, F(TF, NONE)),
	EDGE(TF, LEFTOVER, NONE, F(TF, LIVE)),
	EDGE(TF, NMI_PARK, NMI, F(TF, LIVE)),
	EDGE(TF, NMI_LEFTOVER, NONE, F(TF, LIVE)),
	EDGE(TF, NMI_IRET, NONE, F(TF, NMI)),
	EDGE(TF, NMI_STOP, NONE, F(TF, NMI)),
	EDGE(TF, RESUME, LIVE, F(TF, NONE) | F(TF, LIVE)),

	EDGE(SESSION, BEGIN, PENDING, F(SESSION, NONE)),
	EDGE(SESSION, RESTART, PENDING, F(SESSION, NONE)),
	EDGE(SESSION, STARTED, OPEN, F(SESSION, PENDING)),
	EDGE(SESSION, START_DROPPED, PENDING, F(SESSION, PENDING) | F(SESSION, OPEN)),
	EDGE(SESSION, END, NONE, F(SESSION, NONE) | F(SESSION, PENDING) | F(SESSION, OPEN)),

	EDGE(GAP, SKIPPED, OWED, F(GAP, NONE)),
	EDGE(GAP, MARKED, NONE, F(GAP, OWED)),
	EDGE(GAP, STOP, NONE, F(GAP, NONE) | F(GAP, OWED)),

	EDGE(SLOT, HELD, HELD, F(SLOT, NONE)),
	EDGE(SLOT, WAIT, WAITING, F(SLOT, HELD)),
	EDGE(SLOT, WOKEN, HELD, F(SLOT, WAITING)),
	EDGE(SLOT, PUBLISHED, NONE, F(SLOT, HELD)),
	EDGE(SLOT, DROPPED, NONE, F(SLOT, HELD) | F(SLOT, WAITING)),

	EDGE(IRET, STEP, STEP, F(IRET, NONE)),
	EDGE(IRET, BARE, BARE, F(IRET, NONE)),
	EDGE(IRET, NMI_BARE, BARE, F(IRET, NONE) | F(IRET, BARE)),
	EDGE(IRET, NMI_RESUME, RESUME, F(IRET, NONE) | F(IRET, BARE)),
	EDGE(IRET, EVENT, NONE, F(IRET, STEP) | F(IRET, RESUME)),
	EDGE(IRET, TRAP, NONE, F(IRET, STEP) | F(IRET, RESUME) | F(IRET, BARE)),
	EDGE(IRET, BARE_DONE, NONE, F(IRET, BARE)),

	EDGE(HANDLER, LOST_TF, IN, F(HANDLER, NONE)),
	EDGE(HANDLER, GUEST_DB, IN, F(HANDLER, NONE) | F(HANDLER, IN)),
	EDGE(HANDLER, RETURNED, NONE, F(HANDLER, IN)),
	EDGE(HANDLER, FORGET, NONE, F(HANDLER, NONE) | F(HANDLER, IN)),

	EDGE(SYS, PARK, PARKED, F(SYS, NONE) | F(SYS, PARKED)),
	EDGE(SYS, UNMAPPED, NONE, F(SYS, NONE) | F(SYS, PARKED)),
	EDGE(SYS, RETURN, NONE, F(SYS, NONE) | F(SYS, PARKED)),
	EDGE(SYS, STOP, NONE, F(SYS, NONE) | F(SYS, PARKED)),

	EDGE(ASK, ASKED, ASKED, F(ASK, NONE)),
	EDGE(ASK, TARGET, DECIDED, F(ASK, ASKED)),
	EDGE(ASK, FOREIGN, NONE, F(ASK, ASKED)),
	EDGE(ASK, DONE, NONE, F(ASK, NONE) | F(ASK, ASKED) | F(ASK, DECIDED)),
	EDGE(ASK, STOP, NONE, F(ASK, NONE) | F(ASK, ASKED) | F(ASK, DECIDED)),

	EDGE(MEM, DUE, DUE, F(MEM, NONE) | F(MEM, DUE) | F(MEM, DECODED)),
	EDGE(MEM, DECODED, DECODED, F(MEM, DUE)),
	EDGE(MEM, UNSTEPPED, NONE, F(MEM, DUE)),
	EDGE(MEM, SYSCALL, DECODED, F(MEM, NONE) | F(MEM, DUE) | F(MEM, DECODED)),
	EDGE(MEM, FILLED, NONE, F(MEM, DECODED)),
	EDGE(MEM, FORGET, NONE, F(MEM, NONE) | F(MEM, DUE) | F(MEM, DECODED)),
	EDGE(MEM, STOP, NONE, F(MEM, NONE) | F(MEM, DUE) | F(MEM, DECODED)),
};

void svmtrace_go(struct svmtrace_vcpu *vt, enum svmtrace_event ev)
{
	const struct edge *e = &edges[ev];
	u8 *state = (u8 *)vt + dims[e->dim].offset;
	u8 from = *state;

	lockdep_assert_held(&vt->lock);
	svmtrace_test_transition(ev, from);
	WARN_ONCE(!(e->from & BIT(from)), "svmtrace: vCPU %u: %s %s from %s, not in the table\n",
		  vt->index, dims[e->dim].name, e->name, svmtrace_state_name(e->dim, from));
	WRITE_ONCE(*state, e->to);
}

const char *svmtrace_dim_name(enum svmtrace_dim d)
{
	return dims[d].name;
}

const char *svmtrace_state_name(enum svmtrace_dim d, u8 state)
{
	return state < SVMTRACE_MAX_STATES && dims[d].states[state] ? dims[d].states[state] : "?";
}

/* Event @ev's name, and in *@d, *@to, *@from_mask its row of the table. */
const char *svmtrace_event_name(enum svmtrace_event ev, enum svmtrace_dim *d, u8 *to,
				u8 *from_mask)
{
	*d = edges[ev].dim;
	*to = edges[ev].to;
	*from_mask = edges[ev].from;
	return edges[ev].name;
}
