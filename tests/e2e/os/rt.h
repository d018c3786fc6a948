/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rt.h: the whole runtime of the lab's Linux L2 programs
 * (docs/lab-internals.md, "A real Linux in L2").  No libc: glibc's start-up and threads mix AT_RANDOM
 * into registers (stack guard, pointer mangling in setjmp and atexit), so
 * two runs would differ for reasons of their own.  Here every register of
 * the traced part is a function of the program alone: raw system calls,
 * threads by clone3 with fixed thread ids (set_tid: the parent sees the same
 * RAX in every run), no time, no pid, no vDSO.
 *
 * The start: run the program's os_prepare() if it has one (before any
 * capture is armed), find the guest-physical page of the gate section
 * through /proc/self/pagemap (the page locked first), print it, wait for a
 * line on standard input ("go" from L1), then enter the gate page with
 * every register but RSP zeroed, so that the first record depends on
 * nothing the start-up left behind.  gate_main() never returns: its threads end with
 * exit(2), the last one ending the process.
 */
#ifndef OS_RT_H
#define OS_RT_H

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define GATE __attribute__((section(".gate"), aligned(4096), noinline, used))

enum {
	SYS_read = 0,
	SYS_write = 1,
	SYS_open = 2,
	SYS_close = 3,
	SYS_pread = 17,
	SYS_mlock = 149,
	SYS_exit = 60,
	SYS_exit_group = 231,
	SYS_sched_setaffinity = 203,
	SYS_getuid = 102,
	SYS_pkey_mprotect = 329,
	SYS_pkey_alloc = 330,
	SYS_clone3 = 435
};

#define PROT_EXEC	    4
#define PKEY_DISABLE_ACCESS 1

static inline long sys3(long n, long a, long b, long c)
{
	long r;

	asm volatile("syscall" : "=a"(r) : "0"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

static inline long sys4(long n, long a, long b, long c, long d)
{
	register long r10 asm("r10") = d;
	long r;

	asm volatile("syscall"
		     : "=a"(r)
		     : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
		     : "rcx", "r11", "memory");
	return r;
}

static __attribute__((noreturn, unused)) void thread_exit(int code)
{
	sys3(SYS_exit, code, 0, 0);
	__builtin_unreachable();
}

static __attribute__((noreturn)) void die(void)
{
	sys3(SYS_exit_group, 1, 0, 0);
	__builtin_unreachable();
}

/* One line, written at once (threads print whole lines). */
static void say(const char *name, const char *what, u64 value)
{
	char buf[128];
	u64 n = 0, i;
	const char *parts[] = { "svmtrace-os: ", name, " ", what, "=0x" };

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const char *p = parts[i]; *p; p++)
			buf[n++] = *p;
	for (i = 0; i < 16; i++)
		buf[n++] = "0123456789abcdef"[(value >> (60 - 4 * i)) & 15];
	buf[n++] = '\n';
	sys3(SYS_write, 1, (long)buf, (long)n);
}

/* Run the calling thread on @cpu only: a migration whenever it changes. */
static void pin(int cpu)
{
	u64 mask = 1ul << cpu;

	sys3(SYS_sched_setaffinity, 0, sizeof(mask), (long)&mask);
}

/* clone3's arguments (linux/sched.h), with set_tid. */
struct clone_args {
	u64 flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
		set_tid_size, cgroup;
};

#define CLONE_THREAD_FLAGS 0x00010f00ul /* VM | FS | FILES | SIGHAND | THREAD */

/*
 * A thread with the fixed id @tid on @stack, running @fn(@arg).  The child
 * returns from the same SYSCALL with RAX 0 and the parent's registers:
 * R12/R13 carry fn and arg over.
 */
static __attribute__((unused)) long spawn(long tid, void *stack, u64 size, void (*fn)(long),
					  long arg)
{
	long tids[1] = { tid };
	struct clone_args ca = { .flags = CLONE_THREAD_FLAGS,
				 .stack = (u64)stack,
				 .stack_size = size,
				 .set_tid = (u64)tids,
				 .set_tid_size = 1 };
	register long r12 asm("r12") = (long)fn;
	register long r13 asm("r13") = arg;
	long r;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "mov %%r13, %%rdi\n\t"
		     "call *%%r12\n\t"
		     "ud2\n"
		     "1:"
		     : "=a"(r)
		     : "0"((long)SYS_clone3), "D"(&ca), "S"(sizeof(ca)), "r"(r12), "r"(r13)
		     : "rcx", "r11", "memory");
	return r;
}

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
