// SPDX-License-Identifier: GPL-2.0
/*
 * os-noise: the other process beside a traced one (make e2e-os, next to
 * os-calls; docs/lab-internals.md, "A real Linux in L2").  On vCPU 1 alone, system
 * calls without end, until init.sh kills it: getuid by SYSCALL (Linux
 * returns by SYSRET) and getpid by INT 0x80 (the compat entry, returning
 * by IRET), and a line every 4096 rounds.  While a capture of os-calls is
 * armed, none of them may make a VM exit: vCPU 1's #UD and IRET exits in
 * the exit audit are 0.  Not traced: no gate.
 */
#include "rt.h"

enum { SYS32_getpid = 20 };

static long int80(long n)
{
	long r;

	asm volatile("int $0x80" : "=a"(r) : "0"(n) : "r8", "r9", "r10", "r11", "memory");
	return r;
}

__attribute__((noreturn, used)) void noise_main(void);
void noise_main(void)
{
	u64 i;

	pin(1);
	for (i = 1;; i++) {
		sys3(SYS_getuid, 0, 0, 0);
		int80(SYS32_getpid);
		if (!(i & 0xfff))
			say("noise", "rounds", i);
	}
}

asm(".text\n"
    ".globl _start\n"
    "_start:\n\t"
    "xor %ebp, %ebp\n\t"
    "and $-16, %rsp\n\t"
    "call noise_main\n\t"
    "ud2\n");
