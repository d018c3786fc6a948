/*
 * svmtrace-e2e-marker: execute the step profile's marker instruction once
 * (insncount.c takes a snapshot of its counts there) and exit.  No libc:
 * the L1 initramfs carries it as it is.
 */
	.globl _start
	.text
_start:
	movabs	$0x5356544d5241524b, %rax
	mov	$60, %eax	/* exit(0) */
	xor	%edi, %edi
	syscall
