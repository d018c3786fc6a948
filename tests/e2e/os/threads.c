// SPDX-License-Identifier: GPL-2.0
/*
 * os-threads: three threads of one process (one CR3) on two vCPUs.  The
 * main thread starts two more with fixed ids (4001, 4002: clone3 set_tid),
 * then each hashes its own 256 bytes in fresh pages, moving between the vCPUs
 * every 64 bytes (the three contend for two vCPUs: preemption), prints its
 * result and ends with exit(2); the last one ends the process.  No thread
 * waits for another: what each one executes does not depend on the
 * interleaving.  Traced from gate_main on (gate.h).
 */
#include "gate.h"

const char prog_name[] = "threads";

#define LEN   256
#define STACK 16384
static u8 bufs[3][LEN * 4];
u8 thread_stacks[2][STACK] __attribute__((aligned(64)));

static void work(long n)
{
	u8 *b = bufs[n];
	u64 h = 0xcbf29ce484222325ul ^ (u64)n;
	u32 x = 777 + (u32)n;
	const char *names[] = { "thread0", "thread1", "thread2" };
	int i;

	for (i = 0; i < LEN; i++) {
		x = x * 1103515245u + 12345u;
		b[i * 4] = (u8)(x >> 16);
	}
	for (i = 0; i < LEN; i++) {
		if (i % 64 == 0)
			pin((int)((i / 64 + n) & 1));
		h ^= b[i * 4];
		h *= 0x100000001b3ul;
	}
	say(prog_name, names[n], h);
	thread_exit(0);
}

GATE void gate_main(void)
{
	if (spawn(4001, thread_stacks[0], STACK, work, 1) != 4001 ||
	    spawn(4002, thread_stacks[1], STACK, work, 2) != 4002)
		die();
	work(0);
}
