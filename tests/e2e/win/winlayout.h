/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lab's Windows-layout L2 guest (docs/lab-internals.md, "The
 * Windows-layout guest"): addresses and conventions shared by the image builder
 * (svmtrace-e2e-wingen, which lays out a Windows x64 kernel from an ISF
 * profile with the VMI generator's pieces), the CPL-0 scheduler
 * (win/sched.S), the PE programs (win/programs/), the test VMM and the
 * reference model.  Plain #defines, so the assembler can include it too.
 *
 * Guest-physical memory is WIN_MEM_SIZE bytes.  Everything the generator
 * allocates is scattered above 16 MiB, as a real allocator's pages are; only
 * the processor start block (PA 0x1000), the boot block (PA 0x3000) and the
 * scheduler's data page (PA 0xc000, where the lab's result counters live,
 * guest/layout.h KDATA_*) sit at fixed low addresses.
 */
#ifndef E2E_WIN_LAYOUT_H
#define E2E_WIN_LAYOUT_H

#define WIN_MEM_SIZE 0x2000000 /* 32 MiB */

/* Boot block: how the VMM and the model start the vCPU (little-endian u64s). */
#define WIN_BOOT_GPA	     0x3000
#define WIN_BOOT_MAGIC	     0x42414c4e49574d53 /* "SMWINLAB" */
#define WIN_BOOT_OFF_MAGIC   0x00
#define WIN_BOOT_OFF_RIP     0x08 /* scheduler start, CPL 0 */
#define WIN_BOOT_OFF_CR3     0x10 /* the System (kernel) page tables */
#define WIN_BOOT_OFF_RSP     0x18 /* kernel stack top */
#define WIN_BOOT_OFF_GDT     0x20
#define WIN_BOOT_OFF_IDT     0x28
#define WIN_BOOT_OFF_TSS     0x30
#define WIN_BOOT_OFF_LSTAR   0x38 /* ntoskrnl's KiSystemCall64 */
#define WIN_BOOT_OFF_KPCR    0x40 /* GS base and KERNEL_GS_BASE */
#define WIN_BOOT_OFF_MEMSIZE 0x48

/* Windows' GDT selectors (KGDT64_*) and MSRs. */
#define WIN_SEL_KERNEL_CS 0x10
#define WIN_SEL_KERNEL_SS 0x18
#define WIN_SEL_USER32_CS 0x23
#define WIN_SEL_USER_SS	  0x2b
#define WIN_SEL_USER_CS	  0x33
#define WIN_SEL_TSS	  0x40
#define WIN_GDT_LIMIT	  0x4f
#define WIN_STAR	  ((0x23ull << 48) | (0x10ull << 32))
#define WIN_IDT_VECTORS	  32

/* Kernel virtual addresses of the lab's own kernel pieces (the generator
 * puts ntoskrnl at 0xfffff80412600000, the KPCR and IDT at
 * 0xfffff80410a00000 and 0xfffff80410a20000). */
#define WIN_SCHED_CODE_VA 0xfffff80410c00000 /* sched.S, linked here */
#define WIN_SCHED_CODE_MAX 0x2000
#define WIN_SCHED_SYSCALL_OFF 0x100 /* system call entry (KiSystemCall64 jumps here) */
#define WIN_SCHED_PANIC_OFF 0x400 /* vector v's stub at + v * 16 */
#define WIN_SCHED_DATA_VA 0xfffff80410c10000 /* one page, at PA 0xc000 */
#define WIN_SCHED_DATA_PA 0xc000
#define WIN_GDT_VA	  0xfffff80410c20000
#define WIN_TSS_VA	  0xfffff80410c21000
#define WIN_KSTACK_VA	  0xfffff80410c30000 /* one page; top = + 0x1000 */
#define WIN_PTE_WINDOW_VA 0xfffff80410c40000 /* page tables the scheduler edits */

/* The DLL every process has in its loader list (ntdll.dll, programs/ntdll.S)
 * is mapped here (the generator's DLL_VA); the programs call the function
 * it exports at WIN_DLL_CALL_RVA (its .text start; wingen checks). */
#define WIN_DLL_VA	 0x00007ffb12340000
#define WIN_DLL_CALL_RVA 0x1000
#define WIN_DLL_CALL_NAME "NtTestAlert"

/* Each process: its PE image at the generator's image base, a stack. */
#define WIN_USTACK_VA	 0x000000c5a0c00000
#define WIN_USTACK_PAGES 2
#define WIN_USER_RFLAGS	 0x3002 /* IOPL 3 (the programs use the lab's ports) */

/* The scheduler's data page.  The first 0x40 bytes are the lab's result
 * counters (guest/layout.h KDATA_*: SYSCALLS at +0x10). */
#define WIN_D_CURRENT	0x40 /* VA of the running process's slot */
#define WIN_D_SCRATCH	0x48
#define WIN_D_KCR3	0x50 /* kernel DTB, loaded on every system call */
#define WIN_D_SLOTS	0x58 /* VA of slot 0 */
#define WIN_D_SLOTS_END 0x60 /* VA past the last slot */
#define WIN_D_YIELDS	0x68 /* system calls so far */
#define WIN_D_LINK_AT	0x70 /* at this many system calls, link the late process */
#define WIN_D_LATE_LINKS 0x78 /* its EPROCESS.ActiveProcessLinks (VA) */
#define WIN_D_LATE_SLOT	0x80 /* its slot (VA) */
#define WIN_D_LIST_HEAD 0x88 /* PsActiveProcessHead (VA) */
#define WIN_D_EXITED	0x90 /* processes that exited */

#define WIN_SLOT_OFF  0x100 /* slots start here in the data page */
#define WIN_SLOT_SIZE 0x100
#define WIN_MAX_SLOTS 8
/* A slot: one process's thread. */
#define WIN_S_STATE  0x00 /* 0 not yet runnable, 1 runnable, 2 exited */
#define WIN_S_CR3    0x08 /* the CR3 its user mode runs under */
#define WIN_S_RIP    0x10
#define WIN_S_RFLAGS 0x18
#define WIN_S_GPR    0x20 /* 16 GPRs in x86 encoding order (RAX RCX RDX RBX RSP ...) */
#define WIN_S_PTE_VA 0xa0 /* non-zero: before its first run, write ... */
#define WIN_S_PTE    0xa8 /* ... this valid PTE there (its entry page) */
#define WIN_S_PID    0xb0

/* System call numbers (RAX) of the lab's processes. */
#define WIN_SYS_YIELD 0
#define WIN_SYS_EXIT  1

/* in: the scheduler stops here once it linked the late process into the
 * process list, before that process ever runs.  With --go-wait the VMM
 * holds the vCPU until SIGWINCH (a tracer attaches meanwhile). */
#define PORT_GO	 0xe5
#define GO_VALUE 0x60

#endif /* E2E_WIN_LAYOUT_H */
