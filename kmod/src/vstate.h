/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace: the state of one traced vCPU, as independent dimensions, each
 * an enum, and the events that move them (vstate.c holds the table;
 * docs/kmod.md draws it).  Every change of a dimension is one event,
 * made by svmtrace_go() under vt->lock; an event has one target state and
 * lists the states it may come from, and any other is a bug the kernel
 * log reports (WARN_ON_ONCE).  Unlocked readers use READ_ONCE.
 *
 *   tf       whose TF the vCPU's RFLAGS carries: none of ours, ours
 *            stepping (LIVE), ours stepping one foreign instruction off a
 *            gate (SILENT), or ours kept out of an NMI frame until the
 *            handler's IRET (NMI)
 *   session  the recording: none, opened but its start slot not published
 *            yet (PENDING), or open
 *   gap      steps of the session went unrecorded (pause): the next slot
 *            carries SVMTRACE_SLOT_F_GAP
 *   slot     vt->last, a step the full ring had no room for under the block
 *            policy: held for the request handler, or its wait for room
 *   iret     how the vCPU's next IRET runs (frames.c): intercepted (NONE);
 *            once with our TF, its trap ours (STEP), and that trap resuming
 *            our stepping (RESUME, an NMI handler's IRET); once without
 *            intercept and without a TF of ours (BARE)
 *   handler  a handler was entered while our TF was on: the next IRETQ a
 *            session steps returns from it (hide.c's follow_iret())
 *   sys      a SYSCALL this vCPU parked has not returned to user mode here
 *            yet (frames.c; vt->sys_* say where it returns)
 *   ask      held at a thread's first instruction for the controller's
 *            verdict (first.c), or decided for the target and not yet taken
 *   mem      SVMTRACE_TARGET_F_MEM (memops.c): the instruction at RIP is to
 *            be decoded at KVM_REQ_SVMTRACE before the next entry (DUE), or
 *            was, its reads read, waiting for its step's fill (DECODED)
 *
 * The guest's own TF (vt->guest_tf) is no state of ours: it is the guest's
 * RFLAGS.TF as the tracer follows it (POPF, IRETQ, SYSRET, KVM_SET_REGS).
 */
#ifndef ARCH_X86_KVM_SVMTRACE_VSTATE_H
#define ARCH_X86_KVM_SVMTRACE_VSTATE_H

enum svmtrace_dim {
	SVMTRACE_DIM_TF,
	SVMTRACE_DIM_SESSION,
	SVMTRACE_DIM_GAP,
	SVMTRACE_DIM_SLOT,
	SVMTRACE_DIM_IRET,
	SVMTRACE_DIM_HANDLER,
	SVMTRACE_DIM_SYS,
	SVMTRACE_DIM_ASK,
	SVMTRACE_DIM_MEM,
	SVMTRACE_NR_DIMS
};

/* Ordered: from LIVE on our TF steps (svmtrace_tf_live()). */
enum svmtrace_tf {
	SVMTRACE_TF_NONE,
	SVMTRACE_TF_NMI,
	SVMTRACE_TF_LIVE,
	SVMTRACE_TF_SILENT,
};

enum svmtrace_session {
	SVMTRACE_SESSION_NONE,
	SVMTRACE_SESSION_PENDING,
	SVMTRACE_SESSION_OPEN,
};

enum svmtrace_gap {
	SVMTRACE_GAP_NONE,
	SVMTRACE_GAP_OWED,
};

enum svmtrace_slot_state {
	SVMTRACE_SLOT_NONE,
	SVMTRACE_SLOT_HELD,
	SVMTRACE_SLOT_WAITING,
};

/* How the next IRET of a vCPU runs while a capture is armed (frames.c). */
enum svmtrace_iret {
	SVMTRACE_IRET_NONE,
	SVMTRACE_IRET_STEP,
	SVMTRACE_IRET_RESUME,
	SVMTRACE_IRET_BARE,
};

enum svmtrace_handler {
	SVMTRACE_HANDLER_NONE,
	SVMTRACE_HANDLER_IN,
};

enum svmtrace_sys {
	SVMTRACE_SYS_NONE,
	SVMTRACE_SYS_PARKED,
};

enum svmtrace_ask_state {
	SVMTRACE_ASK_NONE,
	SVMTRACE_ASK_ASKED,
	SVMTRACE_ASK_DECIDED,
};

/* vt->mem (memops.c): the next instruction's decode. */
enum svmtrace_mem_state {
	SVMTRACE_MEM_NONE,
	SVMTRACE_MEM_DUE,
	SVMTRACE_MEM_DECODED,
};

#define SVMTRACE_MAX_STATES 4

/* The events, named after their dimension; each has one target state. */
enum svmtrace_event {
	/* tf */
	SVMTRACE_EV_TF_BEGIN,		/* a session begins: our TF on */
	SVMTRACE_EV_TF_SILENT,		/* a foreign gate fetch: one silent step */
	SVMTRACE_EV_TF_SILENT_DONE,	/* that step's trap */
	SVMTRACE_EV_TF_RELEASE,		/* TF taken back: session over, or stopped */
	SVMTRACE_EV_TF_RETAKE,		/* TF lost without a trap: taken back at once */
	SVMTRACE_EV_TF_KERNEL,		/* a user-only session's step ends in its kernel */
	SVMTRACE_EV_TF_ADOPT,		/* a frame brought our TF back to user mode */
	SVMTRACE_EV_TF_TAKE_THREAD,	/* a parked thread returns: stepped again */
	SVMTRACE_EV_TF_PARK_FRAME,	/* an injected event's frame gets no TF of ours */
	SVMTRACE_EV_TF_PARK_SYSCALL,	/* a SYSCALL's R11 gets no TF of ours */
	SVMTRACE_EV_TF_SYSCALL_UNDONE,	/* ... the SYSCALL faulted instead: stepping on */
	SVMTRACE_EV_TF_LEFTOVER,	/* stopped: an event or SYSCALL drops our TF */
	SVMTRACE_EV_TF_NMI_PARK,	/* an NMI's frame gets no TF of ours */
	SVMTRACE_EV_TF_NMI_LEFTOVER,	/* ... stopped: the TF just goes */
	SVMTRACE_EV_TF_NMI_IRET,	/* the NMI handler's IRET exit */
	SVMTRACE_EV_TF_NMI_STOP,	/* stop before that IRET */
	SVMTRACE_EV_TF_RESUME,		/* the trap after that IRET: stepping on */
	/* session */
	SVMTRACE_EV_SESSION_BEGIN,	/* a gate, FROM_NEXT, a first instruction, an adoption */
	SVMTRACE_EV_SESSION_RESTART,	/* the same thread again after an end of ours */
	SVMTRACE_EV_SESSION_STARTED,	/* its start slot published (or held) */
	SVMTRACE_EV_SESSION_START_DROPPED, /* ... dropped: the next step starts it */
	SVMTRACE_EV_SESSION_END,
	/* gap */
	SVMTRACE_EV_GAP_SKIPPED,	/* the first step while paused */
	SVMTRACE_EV_GAP_MARKED,		/* the next recorded slot carries the gap */
	SVMTRACE_EV_GAP_STOP,
	/* slot */
	SVMTRACE_EV_SLOT_HELD,		/* block policy, ring full */
	SVMTRACE_EV_SLOT_WAIT,		/* the request handler sleeps for room */
	SVMTRACE_EV_SLOT_WOKEN,
	SVMTRACE_EV_SLOT_PUBLISHED,
	SVMTRACE_EV_SLOT_DROPPED,	/* stop, or the consumer went */
	/* iret */
	SVMTRACE_EV_IRET_STEP,		/* an IRET exit: run it once with our TF */
	SVMTRACE_EV_IRET_BARE,		/* ... a TF steps it anyway: run it bare */
	SVMTRACE_EV_IRET_NMI_BARE,	/* an NMI handler's IRET, stopped meanwhile */
	SVMTRACE_EV_IRET_NMI_RESUME,	/* an NMI handler's IRET: our TF back after it */
	SVMTRACE_EV_IRET_EVENT,		/* an event comes before the IRET stepped over */
	SVMTRACE_EV_IRET_TRAP,		/* the trap after the IRET */
	SVMTRACE_EV_IRET_BARE_DONE,	/* any other exit after a bare IRET */
	/* handler */
	SVMTRACE_EV_HANDLER_LOST_TF,	/* TF lost into a handler (--kernel) */
	SVMTRACE_EV_HANDLER_GUEST_DB,	/* the guest's #DB delivered after our step */
	SVMTRACE_EV_HANDLER_RETURNED,	/* the IRETQ stepped out of it */
	SVMTRACE_EV_HANDLER_FORGET,	/* a new session, or back unstepped */
	/* sys */
	SVMTRACE_EV_SYS_PARK,		/* SYSCALL parked, return page known */
	SVMTRACE_EV_SYS_UNMAPPED,	/* ... return page unmapped: not followed */
	SVMTRACE_EV_SYS_RETURN,		/* a return to user mode on this vCPU */
	SVMTRACE_EV_SYS_STOP,
	/* ask */
	SVMTRACE_EV_ASK_ASKED,		/* a first instruction under a foreign CR3 */
	SVMTRACE_EV_ASK_TARGET,		/* SVMTRACE_DECIDE: the target's */
	SVMTRACE_EV_ASK_FOREIGN,	/* SVMTRACE_DECIDE: not the target's */
	SVMTRACE_EV_ASK_DONE,		/* the vCPU runs on (taken, or not) */
	SVMTRACE_EV_ASK_STOP,
	/* mem */
	SVMTRACE_EV_MEM_DUE,		/* stepping goes on: decode before the entry */
	SVMTRACE_EV_MEM_DECODED,	/* KVM_REQ_SVMTRACE decoded it */
	SVMTRACE_EV_MEM_UNSTEPPED,	/* ... the vCPU steps no session of ours now */
	SVMTRACE_EV_MEM_SYSCALL,	/* a parked SYSCALL's step: no operand */
	SVMTRACE_EV_MEM_FILLED,		/* its step's slot got the accesses */
	SVMTRACE_EV_MEM_FORGET,		/* the thread's flow broke */
	SVMTRACE_EV_MEM_STOP,
	SVMTRACE_NR_EVENTS
};

struct svmtrace_vcpu;
void svmtrace_go(struct svmtrace_vcpu *vt, enum svmtrace_event ev);

/* Names for the kernel log and the lab's dump (vstate.c). */
const char *svmtrace_dim_name(enum svmtrace_dim d);
const char *svmtrace_state_name(enum svmtrace_dim d, u8 state);
const char *svmtrace_event_name(enum svmtrace_event ev, enum svmtrace_dim *d, u8 *to,
				u8 *from_mask);

static inline bool svmtrace_tf_live(u8 tf)
{
	return tf >= SVMTRACE_TF_LIVE;
}

/* The IRET runs with our TF: STEP or RESUME. */
static inline bool svmtrace_iret_stepped(u8 iret)
{
	return iret == SVMTRACE_IRET_STEP || iret == SVMTRACE_IRET_RESUME;
}

#endif
