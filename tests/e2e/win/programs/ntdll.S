/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntdll.dll of the Windows-layout guest: the DLL every process has in its
 * loader list (second entry, after its own image).  Its export table is
 * what the lab's traces are symbolized with (ntdll.dll!NtTestAlert): the
 * programs call NtTestAlert, which must be the first code in .text
 * (WIN_DLL_CALL_RVA, checked by svmtrace-e2e-wingen).
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
