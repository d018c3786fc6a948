/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory map and conventions of the lab's L2 guest, shared by the test VMM
 * (which builds the machine), the guest assembly (kernel.S, programs) and the
 * reference model (which replays the programs without any KVM).  Only plain
 * #defines, so the assembler can include it too.
 *
 * The guest is a 64-bit machine set up entirely by the VMM (no BIOS): paging
 * on, a tiny kernel at CPL 0 (IDT, #DB handler, SYSCALL entry) and the test
 * program at CPL 3 in its own address range, so the tracer's default
 * user-only mode sees exactly the program's instructions.
 */
#ifndef E2E_GUEST_LAYOUT_H
#define E2E_GUEST_LAYOUT_H

#define GUEST_MEM_SIZE 0x400000 /* 4 MiB of RAM at GPA 0, 2 MiB aligned */

/* System structures (guest-physical = kernel-virtual below 2 MiB). */
#define GDT_GPA	      0x1000
#define TSS_GPA(cpu)  (0x1800 + (cpu)*0x100)
#define IDT_GPA	      0x2000
#define IDT_VECTORS   0x22 /* exceptions 0-31, INT_VECTOR, IRQ_VECTOR */
#define INT_VECTOR    0x20 /* INT n from CPL 3 (DPL 3 gate) */
#define IRQ_VECTOR    0x21 /* the external interrupt PORT_IRQ asks the VMM for */
#define PML4_GPA      0x3000 /* guest CR3 */
#define PDPT_GPA      0x4000
#define PD_GPA	      0x5000
#define PT_KERNEL_GPA 0x6000 /* 4 KiB pages for VA 0 - 2 MiB */
#define PT_USER_GPA   0x7000 /* 4 KiB pages for VA 4 - 6 MiB */
#define PML4_ALT_GPA  0xf000 /* a second address space, same mappings */

/* GDT selectors.  STAR wants kernel CS, SS = CS + 8; user SS = base + 8, CS = base + 16. */
#define SEL_KERNEL_CS	   0x08
#define SEL_KERNEL_SS	   0x10
#define SEL_STAR_USER_BASE 0x18 /* a 32-bit user code slot SYSRET skips */
#define SEL_USER_SS	   0x23 /* 0x20 | RPL 3 */
#define SEL_USER_CS	   0x2b /* 0x28 | RPL 3 */
#define SEL_TSS(cpu)	   (0x30 + (cpu)*0x10)

/* The kernel image (kernel.S) is loaded at KERNEL_GPA and linked there. */
#define KERNEL_GPA	     0x8000
#define KERNEL_MAX	     0x4000
#define KERNEL_SYSCALL_ENTRY 0x8000 /* LSTAR */
#define KERNEL_DB_HANDLER    0x8100 /* IDT vector 1 */
#define KERNEL_NMI_HANDLER   0x8180 /* IDT vector 2 */
#define KERNEL_EXC_STUBS     0x8200 /* vector v at + v * KERNEL_EXC_STUB_SIZE */
#define KERNEL_EXC_STUB_SIZE 16
#define KERNEL_UD_HANDLER    0x8400 /* IDT vector 6: skips a UD2, drops TF */
#define KERNEL_INT_HANDLER   0x8440 /* IDT vector INT_VECTOR: drops TF */
#define KERNEL_GP_HANDLER    0x8480 /* IDT vector 13: skips a HLT */
#define KERNEL_IRQ_HANDLER   0x84c0 /* IDT vector IRQ_VECTOR: counts interrupts */
#define KERNEL_PF_HANDLER    0x8500 /* IDT vector 14: maps the lazy pages below */
#define KERNEL_BP_HANDLER    0x85c0 /* IDT vector 3 (INT3 from CPL 3): collects frame TF */

/*
 * Demand paging: two aliases of the program image's first LAZY_PAGES pages
 * that no page table maps at the start, and that the kernel's #PF handler
 * maps at their first touch (as an OS maps an image's pages), entry by
 * entry: at LAZY_PTE_VA, in the program's own 2 MiB (PT_USER_GPA's entries
 * there are not present), and at LAZY_PML4_VA, under a PML4 entry that is
 * not present (the handler writes it, then the tables LAZY_*_GPA below it).
 */
#define LAZY_PAGES    16
#define LAZY_PTE_VA   (USER_VA + 0x100000)
#define LAZY_PML4_VA  0x8000000000
#define LAZY_PDPT_GPA 0x10000
#define LAZY_PD_GPA   0x11000
#define LAZY_PT_GPA   0x12000

/* Kernel counters the VMM reads after the run (one page, supervisor only). */
#define KDATA_GPA	   0xc000
#define KDATA_DB_COUNT	   (KDATA_GPA + 0x00) /* #DBs the guest handled */
#define KDATA_DB_RIP_SUM   (KDATA_GPA + 0x08) /* sum of their frame RIPs */
#define KDATA_SYSCALLS	   (KDATA_GPA + 0x10) /* SYSCALLs served */
#define KDATA_NMIS	   (KDATA_GPA + 0x18) /* NMIs handled */
#define KDATA_NMI_FRAME_TF (KDATA_GPA + 0x20) /* TF bits seen in NMI frames */
#define KDATA_DB_QUIET	   (KDATA_GPA + 0x28) /* set by the VMM: #DBs make no VM exit */
#define KDATA_FRAME_TF	   (KDATA_GPA + 0x30) /* TF bits seen in #UD/#GP/IRQ frames, SYSCALL's R11 */
#define KDATA_IRQS	   (KDATA_GPA + 0x38) /* external interrupts handled */

#define KSTACK_TOP(cpu) (0xe000 + (cpu)*0x1000) /* TSS.RSP0 */

/* The user program: image at USER_VA (backed by USER_GPA), vCPU n enters at
 * USER_VA + n * 4 KiB (each vCPU's entry page can be its own gate) with
 * RSP = USER_STACK_TOP(n) and every other GPR zero. */
#define USER_VA		    0x400000
#define USER_GPA	    0x100000
#define USER_MAX	    0x40000
#define USER_SPAN	    0x200000 /* VA 4 MiB - 6 MiB is user-mapped */
#define USER_STACK_TOP(cpu) (USER_VA + USER_SPAN - 0x1000 - (cpu)*0x2000)
#define USER_ENTRY(cpu)	    (USER_VA + (cpu)*0x1000)
#define USER_VA_TO_GPA(va)  ((va)-USER_VA + USER_GPA)

/*
 * A page of device memory above the stacks: no RAM behind MMIO_GPA, so KVM
 * hands every access to the VMM (KVM_EXIT_MMIO).  A write adds the value
 * written to the log checksum (log_sum, log_count), a read returns
 * MMIO_READ_VALUE plus the offset in the page, zero-extended from the
 * access size (counted in input_count).
 */
#define MMIO_GPA	0x800000
#define MMIO_VA		(USER_VA + USER_SPAN - 0x1000)
#define MMIO_READ_VALUE 0x3c3c0000

#define USER_RFLAGS 0x3002 /* IOPL 3 (user I/O allowed), IF 0 */
#define MAX_VCPUS   2

/* MSRs. */
#define GUEST_EFER  0xd01 /* SCE | LME | LMA | NXE */
#define GUEST_STAR  ((0x18ull << 48) | (0x08ull << 32))
#define GUEST_FMASK 0x47700 /* TF IF DF IOPL NT AC, as Linux/Windows mask TF */

/* I/O ports the programs use (OUT/IN from CPL 3, IOPL 3). */
#define PORT_DONE   0xe0 /* out: the program ends, EAX = status */
#define PORT_PANIC  0xe1 /* out: unexpected exception, EAX = vector */
#define PORT_LOG    0xe2 /* out: VMM adds EAX to a checksum */
#define PORT_INPUT  0xe3 /* in: VMM answers INPUT_VALUE */
#define PORT_NMI    0xe4 /* out: VMM queues EAX NMIs (KVM_NMI) */
#define PORT_IRQ    0xe5 /* out: VMM injects vector EAX (KVM_INTERRUPT) once IF allows */
#define PORT_NOP    0xe6 /* out: nothing (a VM exit, e.g. inside a handler) */
#define PORT_VALUE  0xe7 /* out: VMM prints "value cpuN EAX" (a measurement) */
#define INPUT_VALUE 0x5eed1234

/* CPUID leaf 0 as the VMM sets it (max basic leaf 0xd, "AuthenticAMD"). */
#define CPUID0_EAX 0xd
#define CPUID0_EBX 0x68747541
#define CPUID0_ECX 0x444d4163
#define CPUID0_EDX 0x69746e65

#endif /* E2E_GUEST_LAYOUT_H */
