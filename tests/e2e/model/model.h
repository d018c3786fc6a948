/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace-e2e-model: a reference interpreter for the lab's guest programs.
 * It knows nothing about KVM or the tracer: it executes the same kernel and
 * program images, instruction by instruction, for the small x86-64 subset
 * the programs use, and says which states a user-mode instruction tracer
 * must record.  Anything outside the subset is an error, never a guess.
 */
#ifndef E2E_MODEL_H
#define E2E_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "../guest/layout.h"
#include "../win/winlayout.h"

#define RFLAGS_CF    0x1ull
#define RFLAGS_PF    0x4ull
#define RFLAGS_AF    0x10ull
#define RFLAGS_ZF    0x40ull
#define RFLAGS_SF    0x80ull
#define RFLAGS_TF    0x100ull
#define RFLAGS_IF    0x200ull
#define RFLAGS_DF    0x400ull
#define RFLAGS_OF    0x800ull
#define RFLAGS_RF    0x10000ull
#define RFLAGS_AC    0x40000ull
#define RFLAGS_ARITH (RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_OF)

/* Debug registers (a CPU's reset values; CR4.DE is clear, so DR4 and DR5
 * are DR6 and DR7). */
#define DR6_FIXED 0xffff0ff0ull
#define DR6_BS	  0x4000ull
#define DR7_FIXED 0x400ull

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI }; /* x86 encoding order */

/* What one executed instruction did besides changing registers/memory. */
enum model_event {
	EV_NONE,
	EV_DONE,    /* out PORT_DONE: the program ends here (not executed) */
	EV_SYSCALL, /* entered the kernel through SYSCALL */
	EV_SYSRET,  /* returned to CPL 3 from a system call */
	EV_IRET,    /* returned from an interrupt or exception */
	EV_RAISED,  /* INT n or a fault: delivered through the IDT, no trap */
};

struct model_io;

/* What an instruction costs a clock (clock.c), by what it is. */
enum model_insn_class {
	MODEL_INSN_PLAIN, /* the CPU executes it */
	MODEL_INSN_TSC,	  /* RDTSC, RDTSCP: the read counts its own cost */
	MODEL_INSN_EXIT,  /* the hypervisor completes it (CPUID, IN, OUT) */
};

struct model_clock;

#define MODEL_MAX_PARKS 256
#define MODEL_MAX_ACCESSES 16

/* One data access an instruction made (mem.c logs them, in order). */
struct model_access {
	int write;
	uint64_t va;
	unsigned int len;
	uint8_t value[32]; /* the bytes read or written (the first 32) */
};

/* Session end reasons (include/svmtrace/abi.h SVMTRACE_END_*). */
#define MODEL_END_STOP	0
#define MODEL_END_CR3	1
#define MODEL_END_INT	5
#define MODEL_END_EVENT 6

struct model_cpu {
	int index;
	uint64_t gpr[16]; /* x86 encoding order (RAX RCX RDX RBX ...) */
	uint64_t rip;
	uint64_t rflags;
	uint64_t cr3;
	int cpl;
	uint64_t undefined_flags; /* RFLAGS bits the last instruction left undefined */
	int next_rip_override;	  /* the instruction set RIP itself */
	int trap_shadow;	  /* MOV SS: no single-step trap after it */
	int our_tf;		  /* the tracer's TF is set (kept out of rflags) */
	/* Threads whose SYSCALL our TF stepped: it waits for their return
	 * point (RCX, RSP and RCX's physical page), one entry each. */
	struct model_park {
		int used;
		uint64_t rip, rsp, gpa;
	} parks[MODEL_MAX_PARKS];
	int nmi_pending;	  /* NMIs queued through PORT_NMI */
	int nmi_masked;		  /* in the NMI handler, until IRETQ */
	int irq_pending;	  /* PORT_IRQ asked for irq_vector */
	int irq_vector;
	uint64_t dr[8];		  /* DR0-DR3, DR6, DR7 (4 and 5 unused) */
	uint64_t dr_hits;	  /* B0-B3: data breakpoints this instruction hit */
	int vm_exit;		  /* this instruction always makes a VM exit */
	int raised_int;		  /* ... raised its event itself (INT n, INT3) */
	struct model_io *io;	  /* where the device page's accesses count */
	uint32_t status;	  /* EAX at PORT_DONE */
	uint8_t *mem;		  /* mem_size bytes, shared by all vCPUs */
	uint64_t mem_size;
	uint64_t lstar; /* SYSCALL entry */
	uint64_t cr2;	/* the last #PF's address */
	int demand_paging; /* a user fetch of a page not present is a #PF (the lab kernel) */
	int not_present;   /* the last failed translation met an entry not present */
	uint64_t tsc_aux;		 /* what RDTSCP loads into ECX */
	struct model_clock *clock;	 /* what RDTSC reads (clock.c) */
	enum model_insn_class insn_class; /* of the last instruction */
	uint64_t gs_base, kernel_gs_base; /* SWAPGS exchanges them */
	int smap; /* CR4.SMAP: CPL-0 data accesses to user pages need RFLAGS.AC */
	/* The data accesses of the last instruction (model_step clears them). */
	struct model_access acc[MODEL_MAX_ACCESSES];
	int nr_acc;
	char error[256];
};

/* Totals the VMM's device model would have counted. */
struct model_io {
	uint64_t log_sum, log_count, input_count;
};

/* mem.c: linear (virtual) memory through the guest's own page tables.
 * model_read/model_write are data accesses (data breakpoints, the device
 * page); model_fetch reads instruction bytes. */
int model_translate(struct model_cpu *c, uint64_t va, int write, uint64_t *gpa);
int model_is_mmio(const struct model_cpu *c, uint64_t gpa);
int model_read(struct model_cpu *c, uint64_t va, void *buf, unsigned int len);
int model_write(struct model_cpu *c, uint64_t va, const void *buf, unsigned int len);
int model_fetch(struct model_cpu *c, uint64_t va, void *buf, unsigned int len);
int model_fail_at(struct model_cpu *c, uint64_t va, const char *what);

/* flags.c: RFLAGS after an ALU operation of `bits` (32 or 64) width. */
uint64_t flags_add(uint64_t a, uint64_t b, uint64_t r, int bits);
uint64_t flags_sub(uint64_t a, uint64_t b, uint64_t r, int bits);
uint64_t flags_logic(uint64_t r, int bits);
uint64_t flags_szp(uint64_t r, int bits);

/* exec.c: B0-B3 of the execute breakpoints (enabled or not) at @rip, as
 * QEMU's TCG reports them in DR6 with every #DB. */
uint64_t model_exec_bp_matches(const struct model_cpu *c, uint64_t rip);
/* exec.c: an enabled execute breakpoint at RIP that RF does not suppress:
 * deliver its #DB (a fault: nothing executes); 1 when it did. */
int model_exec_breakpoint(struct model_cpu *c);
/*
 * clock.c: the TSC an RDTSC or RDTSCP reads now (its own cost included);
 * NULL, or why there is none.
 */
const char *model_clock_read(struct model_cpu *c, uint64_t *tsc);

/* exec.c: execute one instruction; -1 with c->error set on anything unknown. */
int model_step(struct model_cpu *c, struct model_io *io, enum model_event *ev);
/* exec.c: deliver a trap or interrupt without error code (#DB, NMI)
 * through the IDT. */
int model_raise_exception(struct model_cpu *c, int vector);
/* ... with an error code pushed when @code >= 0 (#GP). */
int model_raise_exception_e(struct model_cpu *c, int vector, int64_t code);

#endif /* E2E_MODEL_H */
