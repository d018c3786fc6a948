// SPDX-License-Identifier: GPL-2.0
/*
 * os-xonly: system calls from execute-only code.  The
 * page of xonly_loop() is made PROT_EXEC under a protection key that
 * denies data access (pkey_alloc, pkey_mprotect), as a JIT or a hardened
 * loader maps code.  The CPU fetches it; a data read of it faults.  A
 * tracer that reads the SYSCALL it steps as data cannot see it, leaves it
 * to KVM's emulator unparked, and its TF reaches R11 (the judge fails any
 * TF in the capture's R11).  Needs PKU in the L2 CPU (os.sh gives L1
 * +pku): without it the program says so and fails.  Moves itself between
 * the vCPUs every 8 calls.  Traced from gate_main on (gate.h).
 */
#include "gate.h"

const char prog_name[] = "xonly";

#define XONLY __attribute__((section(".xonly"), aligned(4096), noinline, used))

XONLY static u64 xonly_loop(u64 n)
{
	u64 s = 0, i;

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			pin((i / 8) & 1);
		s = s * 7 + i + (u64)sys3(SYS_getuid, 0, 0, 0);
	}
	return s;
}

GATE void gate_main(void)
{
	long key = sys3(SYS_pkey_alloc, 0, PKEY_DISABLE_ACCESS, 0), r;

	if (key < 0) {
		say(prog_name, "no-pkey", (u64)-key);	/* errno: no PKU in this CPU */
		die();
	}
	r = sys4(SYS_pkey_mprotect, (long)xonly_loop & ~0xfffl, 4096, PROT_EXEC, key);
	if (r) {
		say(prog_name, "no-pkey-mprotect", (u64)-r);
		die();
	}
	say(prog_name, "result", xonly_loop(32));
	sys3(SYS_exit_group, 0, 0, 0);
	__builtin_unreachable();
}
