/* SPDX-License-Identifier: GPL-2.0 */
/*
 * helper.dll: the DLL every process of the Windows-layout guest has in
 * its loader list (second entry, after its own image).  Never called.
 */
	.intel_syntax noprefix
	.text
	.globl	DllMain
DllMain:
	mov	eax, 1
	ret
