/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gate.h: the start of the lab's traced Linux L2 programs
 * (docs/lab-internals.md, "A real Linux in L2"), on rt.h's runtime.  Run the
 * program's os_prepare() if it has one (before any capture is armed), find
 * the guest-physical page of the gate section through /proc/self/pagemap
 * (the page locked first), print it, wait for a line on standard input
 * ("go" from L1), then enter the gate page with every register but RSP
 * zeroed, so that the first record depends on nothing the start-up left
 * behind.  gate_main() never returns: its threads end with exit(2), the
 * last one ending the process.  A program that defines OS_START_CPU runs
 * on that vCPU alone from its start on, before its gate.
 */
#ifndef OS_GATE_H
#define OS_GATE_H

#include "rt.h"

#define GATE __attribute__((section(".gate"), aligned(4096), noinline, used))

void gate_main(void);
void gate_enter(void);

/* Every register but RSP zeroed, RFLAGS that of the last XOR, then the gate. */
asm(".text\n"
    ".globl gate_enter\n"
    "gate_enter:\n\t"
    "xor %eax, %eax\n\txor %ebx, %ebx\n\txor %ecx, %ecx\n\txor %edx, %edx\n\t"
    "xor %esi, %esi\n\txor %edi, %edi\n\txor %ebp, %ebp\n\txor %r8d, %r8d\n\t"
    "xor %r9d, %r9d\n\txor %r10d, %r10d\n\txor %r11d, %r11d\n\txor %r12d, %r12d\n\t"
    "xor %r13d, %r13d\n\txor %r14d, %r14d\n\txor %r15d, %r15d\n\t"
    "jmp gate_main\n"
    ".globl _start\n"
    "_start:\n\t"
    "xor %ebp, %ebp\n\t"
    "and $-16, %rsp\n\t"
    "call os_start\n\t"
    "ud2\n");

/* The gate page's guest-physical address, from the locked page's PFN. */
static u64 gate_gpa(void)
{
	u64 va = (u64)gate_main & ~0xffful, entry = 0;
	long fd;

	if (sys3(SYS_mlock, (long)va, 4096, 0))
		die();
	fd = sys3(SYS_open, (long)"/proc/self/pagemap", 0, 0);
	if (fd < 0 || sys4(SYS_pread, fd, (long)&entry, 8, (long)(va / 4096 * 8)) != 8)
		die();
	sys3(SYS_close, fd, 0, 0);
	if (!(entry >> 63) || !(entry & ((1ul << 55) - 1)))
		die(); /* not present, or no PFN (not root) */
	return (entry & ((1ul << 55) - 1)) << 12;
}

extern const char prog_name[];
/* Optional: what a program sets up before it is traced (timing.c). */
void os_prepare(void) __attribute__((weak));

__attribute__((noreturn, used)) void os_start(void);
void os_start(void)
{
	char c = 0;

#ifdef OS_START_CPU
	pin(OS_START_CPU);
#endif
	if (os_prepare)
		os_prepare();
	say(prog_name, "gate_va", (u64)gate_main & ~0xffful);
	say(prog_name, "gate", gate_gpa());
	while (c != '\n')
		if (sys3(SYS_read, 0, (long)&c, 1) != 1)
			die();
	gate_enter();
	__builtin_unreachable();
}

#endif
