/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lazy: a process whose entry page is mapped on demand while the rest of
 * it runs (a watched gate).  Its code on pages 0-2 and
 * its data on pages 5-12 are touched first, each page a TLB miss whose
 * walk reads the page tables; then it calls lazyfn through an alias that
 * no table maps yet (layout.h): RDI 0 the alias at LAZY_PTE_VA, in the
 * program's own 2 MiB, whose missing entry is in the same page table as
 * every other user page's; RDI 1 the one at LAZY_PML4_VA, under a missing
 * PML4 entry, which every walk of the address space reads.  The fetch
 * faults, the kernel's #PF handler writes the entries, and lazyfn runs
 * from page 4 of the image.  A capture gates it with --gate-va on the
 * alias (`watch-pte`, `watch-pml4`); a tracer that write-protects the
 * table with the missing entry makes every walk of it fault, and the
 * program never gets there.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0: code on pages 1 and 2, data on 5-12, then the lazy page. */
start:
	mov	r12, rdi
	mov	ebx, 5
	call	page1fn
	call	page2fn
	lea	rsi, [rip + data]
	mov	ecx, 8
1:	add	rbx, qword ptr [rsi]	/* a new page each time */
	add	rsi, 0x1000
	dec	ecx
	jnz	1b
	mov	rax, LAZY_PTE_VA + 0x4000
	test	r12, r12
	jz	2f
	mov	rax, LAZY_PML4_VA + 0x4000
2:	call	rax			/* lazyfn, through the alias */
	add	ebx, eax
	call	page1fn
	mov	eax, ebx
	log_done

	.org 0x1000
page1fn:
	add	ebx, 7
	shl	ebx, 1
	ret

	.org 0x2000
page2fn:
	xor	ebx, 0x55
	ret

	.org 0x4000
/* Page 4, run through an alias: nothing here may depend on its address. */
lazyfn:
	mov	eax, 3
	mov	ecx, 4
3:	add	eax, ecx
	shl	eax, 1
	dec	ecx
	jnz	3b
	ret

	.org 0x5000
/* Pages 5-12: one quad at the start of each. */
data:
	.irp n, 1, 2, 3, 4, 5, 6, 7, 8
	.quad	0x1000 * \n + \n
	.org data + 0x1000 * \n
	.endr
