/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The image's TLS directory (IMAGE_TLS_DIRECTORY64, which the linker points
 * the PE's TLS data directory at through _tls_used), with one callback
 * that ntdll's loader calls before the entry point (programs/ntdll.S):
 * tls_directory CALLBACK, in the section the image keeps its data in.
 */
.macro	tls_directory callback
	/* raw data start and end, index, callbacks (VAs) */
	.p2align 3
	.globl	_tls_used
_tls_used:
	.quad	tls_data, tls_data + 8, tls_index, tls_callbacks
	.long	0, 0
tls_callbacks:
	.quad	\callback, 0
tls_index:
	.long	0
tls_data:
	.quad	0
.endm
