/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A 64 KiB "BIOS" for QEMU's -bios that puts vCPU 0 in the state a running
 * Windows x64 kernel leaves it in, over the generator's image (loaded into
 * RAM with -device loader), so that QEMU's own dump-guest-memory writes a
 * real x86-64 ELF core with real register notes (tests/vmi/qemu_core.sh).
 *
 * From the reset vector: protected mode, then long mode with CR3 = the
 * kernel's DTB (five-level paging, CR4.LA57, when param_la57 says so).  The
 * stub runs from ROM at 0xffff0000, which the kernel's page tables do not
 * map, so it first points the DTB's top-level entry 0 (empty: the System
 * process has no user half) at its own identity map of the top 2 MiB below
 * 4 GiB, in two pages at PARAM_TABLES (three with a PML4 under the PML5).  Then it loads GS base,
 * KERNEL_GS_BASE, LSTAR and IDTR with the values in the parameter block
 * (patched in by the test) and halts with interrupts off.
 *
 * Assembled at 0xffff0000: ld -Ttext=0xffff0000 --oformat binary.
 */
#define MSR_EFER	   0xc0000080
#define MSR_LSTAR	   0xc0000082
#define MSR_GS_BASE	   0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define ROM		   0xffff0000

	.text
	.code16
	.globl _start
_start:
real_mode:
	cli
	lgdtl %cs:(gdt_desc - ROM)
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	ljmpl $0x08, $protected_mode

	.code32
protected_mode:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	/* PDPT, PD (and PML4) at tables, tables + 4K (+ 8K): 2 MiB page 0xffe00000 */
	movl param_tables, %edi
	movl %edi, %ecx
	xorl %eax, %eax
	movl $(12288 / 4), %ecx
	rep stosl
	movl param_tables, %edi
	leal 0x1003(%edi), %eax		/* PDPT[3] -> PD, present + writable */
	movl %eax, 3 * 8(%edi)
	movl $0xffe00083, 0x1000 + 511 * 8(%edi) /* PD[511]: 2 MiB, present, RW, PS */
	leal 3(%edi), %eax		/* what the DTB's entry 0 points at: the PDPT */
	movl $0x20, %edx		/* CR4.PAE */
	cmpl $0, param_la57
	je 2f
	movl %eax, 0x2000(%edi)		/* five levels: PML4[0] -> PDPT */
	leal 0x2003(%edi), %eax		/* and the PML5's entry 0 -> that PML4 */
	orl $0x1000, %edx		/* CR4.LA57 */
2:	movl param_dtb, %ebx		/* entry 0 of the kernel's DTB */
	andl $0xfffff000, %ebx
	movl %eax, (%ebx)
	movl $0, 4(%ebx)
	movl %cr4, %eax
	orl %edx, %eax
	movl %eax, %cr4
	movl param_dtb, %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $0x900, %eax		/* LME | NXE */
	wrmsr
	movl %cr0, %eax
	orl $0x80000001, %eax		/* PG | PE */
	movl %eax, %cr0
	ljmpl $0x18, $long_mode

	.code64
long_mode:
	movl $MSR_GS_BASE, %ecx
	movl param_gs_base(%rip), %eax
	movl param_gs_base + 4(%rip), %edx
	wrmsr
	movl $MSR_KERNEL_GS_BASE, %ecx
	movl param_kernel_gs_base(%rip), %eax
	movl param_kernel_gs_base + 4(%rip), %edx
	wrmsr
	movl $MSR_LSTAR, %ecx
	movl param_lstar(%rip), %eax
	movl param_lstar + 4(%rip), %edx
	wrmsr
	lidt idt_desc(%rip)
1:	hlt
	jmp 1b

	.align 16
gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* 0x08: 32-bit code, flat */
	.quad 0x00cf92000000ffff	/* 0x10: data, flat */
	.quad 0x00af9a000000ffff	/* 0x18: 64-bit code */
gdt_end:
gdt_desc:
	.word gdt_end - gdt - 1
	.long gdt

	/* The parameter block at ROM + 0xff00: the test patches these. */
	.org 0xff00
params:
param_dtb:		.quad 0
param_gs_base:		.quad 0
param_kernel_gs_base:	.quad 0
param_lstar:		.quad 0
idt_desc:
	.word 0xfff
param_idt_base:		.quad 0
	.align 8
param_tables:		.quad 0
param_la57:		.quad 0

	/* The reset vector: ROM + 0xfff0, CS base 0xffff0000. */
	.org 0xfff0
	.code16
	jmp real_mode
	.org 0x10000
