// SPDX-License-Identifier: GPL-2.0
/*
 * os-calls: a traced process that makes system calls while another process
 * makes nothing else on the other vCPU (os-noise).  It runs on vCPU 0 alone
 * from its start on (OS_START_CPU, before its gate), so that vCPU 1's exits,
 * as the exit audit counts them, are the other process's.  1024 rounds of
 * getuid and an FNV-1a step over its results.  Traced from gate_main on
 * (gate.h).
 */
#define OS_START_CPU 0
#include "gate.h"

const char prog_name[] = "calls";

GATE void gate_main(void)
{
	u64 h = 0xcbf29ce484222325ul;
	int i;

	for (i = 0; i < 1024; i++) {
		h ^= (u64)sys3(SYS_getuid, 0, 0, 0) + (u64)i;
		h *= 0x100000001b3ul;
	}
	say(prog_name, "result", h);
	sys3(SYS_exit_group, 0, 0, 0);
	__builtin_unreachable();
}
