/* SPDX-License-Identifier: GPL-2.0 */
/*
 * helper.dll of the Windows-layout guest: a DLL in every process's loader
 * list (after ntdll.dll) whose DllMain the loader calls before the image's
 * entry point, once per process and once per later thread -- code that
 * runs before a debugger's entry breakpoint.  It logs the reason on
 * PORT_LOG, so the guest's results show that it ran.
 */
#include "../../guest/layout.h"
#include "../winlayout.h"

	.intel_syntax noprefix
	/* exported by name (ld leaves DllMain out of --export-all-symbols), so traces name it */
	.section .drectve
	.ascii	" -export:DllMain"
	.text
	.globl	DllMain
DllMain:				/* RCX = base, EDX = reason, R8 = reserved */
	lea	eax, [rdx + 0x100]
	out	PORT_LOG, eax
	mov	eax, 1
	ret
