/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rt.h: the whole runtime of the lab's Linux L2 programs
 * (docs/lab-internals.md, "A real Linux in L2").  No libc: glibc's start-up and threads mix AT_RANDOM
 * into registers (stack guard, pointer mangling in setjmp and atexit), so
 * two runs would differ for reasons of their own.  Here every register of
 * the traced part is a function of the program alone: raw system calls,
 * threads by clone3 with fixed thread ids (set_tid: the parent sees the same
 * RAX in every run), no time, no pid, no vDSO.  The traced programs' start
 * is gate.h's.
 */
#ifndef OS_RT_H
#define OS_RT_H

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned char u8;

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

static __attribute__((noreturn, unused)) void die(void)
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

#endif
