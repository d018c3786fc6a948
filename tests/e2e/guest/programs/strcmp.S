/* SPDX-License-Identifier: GPL-2.0 */
/*
 * strcmp: the string instructions a password check is made of, for a
 * tracer that records memory operands (--mem).  The length of the typed
 * string (REPNE SCASB for its NUL), the typed string against the secret
 * (REPE CMPSB, which stops at the first byte that differs), the secret
 * copied into a buffer (REP MOVSB) and compared with its copy (REPE CMPSB
 * over all of it).  Every iteration of a REP instruction is its own step.
 * The reference model replays no string instruction: stock single-stepping
 * is the oracle of its records (programs.list: STEPLOG only), and
 * judge-memrange.sh checks its accesses against what these bytes and the
 * instructions' definitions say.  Logs a checksum of the counts.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	cld
	lea	rdi, [rip + typed]		/* strlen(typed) */
	xor	eax, eax
	mov	rcx, -1
	repne scasb
	not	rcx
	lea	r12, [rcx - 1]			/* 12 */
	lea	rsi, [rip + typed]		/* typed against the secret */
	lea	rdi, [rip + secret]
	mov	rcx, r12
	repe cmpsb				/* stops after the 'x' */
	lea	r12, [r12 + rcx * 8]		/* + 4 left * 8 */
	lea	rsi, [rip + secret]		/* the secret into the buffer */
	lea	rdi, [rip + copy]
	mov	ecx, 12
	rep movsb
	lea	rsi, [rip + secret]		/* and compared with it */
	lea	rdi, [rip + copy]
	mov	ecx, 12
	repe cmpsb
	setz	al
	add	r12, rax
	mov	eax, r12d
	log_done

	.org 0x1000
/* Page 1: data. */
typed:
	.ascii	"hello, wxrld\0"
	.org 0x1000 + 0x20
secret:
	.ascii	"hello, world"
	.org 0x1000 + 0x40
copy:
	.fill	16, 1, 0
