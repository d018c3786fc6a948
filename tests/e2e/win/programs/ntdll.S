/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntdll.dll of the Windows-layout guest: the DLL every process has in its
 * loader list (second entry, after its own image).  Its export table is
 * what the lab's traces are symbolized with (ntdll.dll!NtTestAlert), and
 * what the programs' imports are bound to.
 */
	.intel_syntax noprefix
	.text
	.globl	NtTestAlert
NtTestAlert:
	xor	eax, eax
	ret

	.globl	DllMain
DllMain:
	mov	eax, 1
	ret
