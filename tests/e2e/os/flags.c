// SPDX-License-Identifier: GPL-2.0
/*
 * os-flags: PUSHFQ, POP, PUSH, POPFQ, as code that saves and restores its
 * flags does, moving itself between the two vCPUs every 16 rounds (issue
 * 25 point 2).  Linux runs with CR4.SMAP where the CPU has it: a tracer
 * that cleans its TF out of the PUSHF image with a supervisor write to the
 * user stack is refused there, the image keeps the TF, POPFQ loads it, and
 * the next trap goes to the process (SIGTRAP).  Prints a result without the
 * TF bits: under ptrace the images hold ptrace's TF, which the judge allows
 * there and only there, as exactly that bit (ptrace-tf-in-pushf), and
 * counts: one per image.  Traced from gate_main on (gate.h).
 */
#include "gate.h"

const char prog_name[] = "flags";

GATE void gate_main(void)
{
	u64 f, sum = 0;
	int i;

	for (i = 0; i < 64; i++) {
		if (i % 16 == 0)
			pin((i / 16) & 1);
		asm volatile("pushfq\n\tpop %0\n\tpush %0\n\tpopfq" : "=&r"(f) : : "memory", "cc");
		sum = sum * 31 + (f & ~0x100ul) + i;
	}
	say(prog_name, "result", sum);
	sys3(SYS_exit_group, 0, 0, 0);
	__builtin_unreachable();
}
