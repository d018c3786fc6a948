/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an exact user-mode tracer records while the model runs a program:
 * gates (vCPU n's entry page is gate n), sessions, and their records.
 */
#ifndef E2E_MODEL_TRACER_H
#define E2E_MODEL_TRACER_H

#include <stdio.h>

#include "model.h"

/* The gates of the VM: shared by its vCPUs, like the NPT they live in. */
#define MODEL_MAX_GATES 16
#define MODEL_MAX_CR3	16
#define MODEL_GATE_UNMAPPED (~0ull)
struct model_gates {
	int nr;
	uint64_t gpa[MODEL_MAX_GATES]; /* the gated 4 KiB pages */
	/* A watched gate (--gate-va): its gpa is MODEL_GATE_UNMAPPED until the
	 * tables at cr3[0] map va, then the page they map there. */
	uint64_t va[MODEL_MAX_GATES];
	int watched[MODEL_MAX_GATES];
	int open[MODEL_MAX_GATES];
	int nr_cr3;
	uint64_t cr3[MODEL_MAX_CR3]; /* the target set (bits 11:0 ignored) */
	uint64_t first_rip; /* non-zero: threads begin here, traced from there (--first-rip) */
};

/* The session-start reason of a thread's first instruction (abi.h). */
#define MODEL_SESSION_FIRST 0xfffffffeu

/* One vCPU's view of the capture. */
struct model_trace {
	FILE *out; /* expected_cpuN.csv, or NULL */
	FILE *mem; /* expected_mem_cpuN.csv: each record's memory accesses, or NULL */
	struct model_gates *gates;
	int kernel;  /* --kernel: every CPL is traced */
	int in_hole; /* --kernel: our TF went with an event, back at the next VM exit */
	int in_session, start_pending, start_gate;
	int silent, silent_gate; /* stepping one instruction off a foreign gate fetch */
	unsigned long long rows;
	struct model_cpu last; /* state of the last record (session_end repeats it) */
	uint64_t last_undefined;
};

void trace_header(FILE *out);
void trace_mem_header(FILE *out);
/* Before an instruction executes: its fetch may hit a closed gate. */
int trace_fetch(struct model_trace *t, struct model_cpu *c);
/* Is our TF on this vCPU now (a session, or a silent step)? */
int trace_stepping(const struct model_trace *t);
/* A single-step trap of ours arrived with the CPU in state c. */
void trace_step(struct model_trace *t, struct model_cpu *c);
/* --kernel: an event delivered to a handler took our TF (@by_int: INT n or
 * INT3 raised it). */
void trace_lost(struct model_trace *t, int by_int);
/* The guest kernel returned to user mode (SYSRETQ, IRETQ) while our TF was
 * parked: stepping may resume here; 1 when a record is due now. */
int trace_user_return(struct model_trace *t, struct model_cpu *c);
/* The program ended and the capture is stopped. */
void trace_stop(struct model_trace *t);

#endif /* E2E_MODEL_TRACER_H */
