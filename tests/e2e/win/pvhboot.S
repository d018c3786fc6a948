/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Boot stub of the Windows-layout guest under QEMU (winpvh.h): QEMU's PVH
 * option ROM enters here in 32-bit flat protected mode, paging off,
 * interrupts off, after SeaBIOS.  The stub puts the CPU in the state the
 * lab's VMM gives the guest (vmm/vcpu.c, set_sregs_win and set_msrs): long
 * mode with CR4 as Windows sets it (each feature where CPUID has it, as
 * win/wincpu.c decides for the VMM), Windows' GDT, IDT, TSS and selectors,
 * STAR/LSTAR/SFMASK, GS base = KPCR and KERNEL_GS_BASE = a TEB, all from
 * the boot block.  It prints "ready" on
 * COM1 and waits for "s" there -- meanwhile a tracer finds the kernel from
 * these registers as it would in Windows -- then enters the scheduler with
 * the boot block's RIP and RSP and every other register zero.
 *
 * Paging: until the scheduler's first process switch the CPU runs on the
 * stub's PML4, a copy of Windows' kernel half (PML4 slots 256-511 of the
 * boot CR3) plus an identity map of the first GiB in slot 0 for the stub
 * itself.  The scheduler's first "mov cr3" leaves it for good.
 */
#include "../guest/layout.h"
#include "winlayout.h"
#include "winpvh.h"
#include "com1.h"

#define BOOT(off) (WIN_BOOT_GPA + (off))
#define MSR_EFER	   0xc0000080
#define MSR_STAR	   0xc0000081
#define MSR_LSTAR	   0xc0000082
#define MSR_SFMASK	   0xc0000084
#define MSR_GS_BASE	   0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define CR0_PE_MP_ET_NE_PG 0x80040033
#define CR0_WP		   0x10000

/* EDI |= FLAG if bit BIT of REG (after CPUID) is set. */
#define CR4_IF(reg, bit, flag) test reg, 1 << (bit); jz 9f; or edi, flag; 9:

	.intel_syntax noprefix
	.text
	.code32
entry32:
	cld
	/* Low memory as the image has it (SeaBIOS used it meanwhile). */
	mov	esi, WIN_PVH_LOW_PA
	xor	edi, edi
	mov	ecx, WIN_PVH_LOW_SIZE / 4
	rep movsd
	/* The stub's page tables. */
	mov	edi, WIN_PVH_PML4_PA
	xor	eax, eax
	mov	ecx, 3 * 0x1000 / 4
	rep stosd
	mov	esi, dword ptr [BOOT(WIN_BOOT_OFF_CR3)]
	and	esi, 0xfffff000
	add	esi, 256 * 8
	mov	edi, WIN_PVH_PML4_PA + 256 * 8
	mov	ecx, 256 * 8 / 4
	rep movsd
	mov	dword ptr [WIN_PVH_PML4_PA], WIN_PVH_PDPT_PA + 3
	mov	dword ptr [WIN_PVH_PDPT_PA], WIN_PVH_PD_PA + 3
	mov	edi, WIN_PVH_PD_PA
	mov	eax, 0x83		/* present, writable, 2 MiB */
	mov	ecx, 512
1:	mov	dword ptr [edi], eax
	add	eax, 0x200000
	add	edi, 8
	loop	1b
	/* CR4 (winlayout.h WIN_CR4_*), then long mode.  WP stays off until
	 * Windows' GDT is written (below). */
	mov	edi, WIN_CR4_ALWAYS
	mov	eax, 1
	cpuid
	CR4_IF(edx, 2, WIN_CR4_DE)
	CR4_IF(edx, 3, WIN_CR4_PSE)
	CR4_IF(edx, 7, WIN_CR4_MCE)
	CR4_IF(edx, 13, WIN_CR4_PGE)
	CR4_IF(ecx, 26, WIN_CR4_OSXSAVE)
	xor	eax, eax
	cpuid
	cmp	eax, 7
	jb	2f
	mov	eax, 7
	xor	ecx, ecx
	cpuid
	CR4_IF(ecx, 2, WIN_CR4_UMIP)
	CR4_IF(ebx, 0, WIN_CR4_FSGSBASE)
	CR4_IF(ebx, 7, WIN_CR4_SMEP)
	CR4_IF(ebx, 20, WIN_CR4_SMAP)
2:	mov	cr4, edi
	mov	eax, WIN_PVH_PML4_PA
	mov	cr3, eax
	mov	ecx, MSR_EFER
	mov	eax, GUEST_EFER & ~0x400	/* LMA is the CPU's to set */
	xor	edx, edx
	wrmsr
	mov	eax, CR0_PE_MP_ET_NE_PG
	mov	cr0, eax
	lgdt	[boot_gdtr]
	.byte	0xea			/* ljmp WIN_SEL_KERNEL_CS:entry64 */
	.long	entry64
	.word	WIN_SEL_KERNEL_CS

	.code64
entry64:
	mov	rsp, qword ptr [BOOT(WIN_BOOT_OFF_RSP)]
	/* Windows' GDT, then its selectors (CS through a far return). */
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_GDT)]
	mov	qword ptr [rip + win_gdtr + 2], rax
	lgdt	[rip + win_gdtr]
	push	WIN_SEL_KERNEL_CS
	lea	rax, [rip + 2f]
	push	rax
	retfq
2:	mov	eax, WIN_SEL_KERNEL_SS
	mov	ss, eax
	mov	eax, WIN_SEL_USER_SS
	mov	ds, eax
	mov	es, eax
	mov	fs, eax
	mov	gs, eax
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_IDT)]
	mov	qword ptr [rip + win_idtr + 2], rax
	lidt	[rip + win_idtr]
	/* LTR wants an available TSS descriptor (type 9, not busy 11). */
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_GDT)]
	and	byte ptr [rax + WIN_SEL_TSS + 5], ~0x02
	mov	eax, WIN_SEL_TSS
	ltr	ax
	mov	rax, cr0
	or	eax, CR0_WP
	mov	cr0, rax
	/* The MSRs (after the GS load, which clears the GS base). */
	mov	ecx, MSR_STAR			/* WIN_STAR, without its C suffixes */
	mov	rax, (WIN_SEL_USER32_CS << 48) | (WIN_SEL_KERNEL_CS << 32)
	call	wrmsr64
	mov	ecx, MSR_LSTAR
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_LSTAR)]
	call	wrmsr64
	mov	ecx, MSR_SFMASK
	mov	eax, GUEST_FMASK
	call	wrmsr64
	mov	ecx, MSR_GS_BASE
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_KPCR)]
	call	wrmsr64
	mov	ecx, MSR_KERNEL_GS_BASE
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_TEB)]
	call	wrmsr64

	com1_puts msg_ready
	com1_wait 's'

	/* The scheduler, entered as the lab's VMM enters it. */
	mov	rax, qword ptr [BOOT(WIN_BOOT_OFF_RIP)]
	mov	qword ptr [rip + sched_rip], rax
	mov	rsp, qword ptr [BOOT(WIN_BOOT_OFF_RSP)]
	push	2
	popfq
	xor	eax, eax
	xor	ebx, ebx
	xor	ecx, ecx
	xor	edx, edx
	xor	esi, esi
	xor	edi, edi
	xor	ebp, ebp
	xor	r8d, r8d
	xor	r9d, r9d
	xor	r10d, r10d
	xor	r11d, r11d
	xor	r12d, r12d
	xor	r13d, r13d
	xor	r14d, r14d
	xor	r15d, r15d
	jmp	qword ptr [rip + sched_rip]

wrmsr64:				/* MSR ECX = RAX */
	mov	rdx, rax
	shr	rdx, 32
	wrmsr
	ret

	.p2align 3
boot_gdt:				/* only for the jump into long mode */
	.quad	0
	.quad	0
	.quad	0x00af9a000000ffff	/* WIN_SEL_KERNEL_CS: 64-bit code */
	.quad	0x00cf92000000ffff	/* WIN_SEL_KERNEL_SS: data */
boot_gdtr:
	.word	4 * 8 - 1
	.long	boot_gdt
	.p2align 3
	.word	0, 0, 0
win_gdtr:
	.word	WIN_GDT_LIMIT
	.quad	0
	.word	0, 0, 0
win_idtr:
	.word	WIN_IDT_VECTORS * 16 - 1
	.quad	0
sched_rip:
	.quad	0
msg_ready:
	.asciz	"svmtrace-lab: ready\n"
