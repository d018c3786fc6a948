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
#define WIN_BOOT_OFF_LSTAR   0x38 /* ntoskrnl's KiSystemCall64[Shadow] */
#define WIN_BOOT_OFF_KPCR    0x40 /* GS base (the scheduler runs at CPL 0) */
#define WIN_BOOT_OFF_MEMSIZE 0x48
#define WIN_BOOT_OFF_TEB     0x50 /* KERNEL_GS_BASE: the user GS base SWAPGS brings */
#define WIN_BOOT_OFF_TSC_AUX 0x58 /* what RDTSCP loads into ECX (WIN_TSC_AUX) */
#define WIN_BOOT_SIZE	     0x60

/* TSC_AUX: Windows writes the processor number there; the lab a value no
 * default leaves behind, so that an RDTSCP that loads another one shows. */
#define WIN_TSC_AUX 0x1f

/*
 * CR4 as Windows 10 19041 and Windows 11 22000 set it (the value a Windows
 * 10/11 kernel writes, 0x350ef8 with PGE: DE PSE PAE MCE PGE OSFXSR
 * OSXMMEXCPT UMIP FSGSBASE OSXSAVE SMEP SMAP; no PCIDE, which Windows uses
 * only with KVA shadow on Intel, no PKE, no CET in these builds), each
 * feature bit where the vCPU's CPUID offers it (win/wincpu.c, pvhboot.S).
 * EFER is SCE LME LMA NXE (guest/layout.h GUEST_EFER), as Windows x64 has it.
 */
#define WIN_CR4_ALWAYS	 0x620 /* PAE OSFXSR OSXMMEXCPT: x86-64 has them */
#define WIN_CR4_DE	 (1 << 3)  /* CPUID 1 EDX bit 2 */
#define WIN_CR4_PSE	 (1 << 4)  /* CPUID 1 EDX bit 3 */
#define WIN_CR4_MCE	 (1 << 6)  /* CPUID 1 EDX bit 7 */
#define WIN_CR4_PGE	 (1 << 7)  /* CPUID 1 EDX bit 13 */
#define WIN_CR4_UMIP	 (1 << 11) /* CPUID 7 ECX bit 2 */
#define WIN_CR4_FSGSBASE (1 << 16) /* CPUID 7 EBX bit 0 */
#define WIN_CR4_OSXSAVE	 (1 << 18) /* CPUID 1 ECX bit 26 (XSAVE) */
#define WIN_CR4_SMEP	 (1 << 20) /* CPUID 7 EBX bit 7 */
#define WIN_CR4_SMAP	 (1 << 21) /* CPUID 7 EBX bit 20 */

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

/* Kernel virtual addresses of the lab's own kernel pieces, at fixed places
 * clear of where the generator draws ntoskrnl, the KPCR and the IDT from
 * (tests/vmi/gen/gen_win.c: ntoskrnl below 0xfffff80400000000). */
#define WIN_SCHED_CODE_VA 0xfffff80410c00000 /* sched.S, linked here */
#define WIN_SCHED_CODE_MAX 0x2000
#define WIN_SCHED_SYSCALL_OFF 0x100 /* system call entry (the LSTAR jumps here) */
#define WIN_SCHED_PANIC_OFF 0x400 /* vector v's stub at + v * 16 */
#define WIN_SCHED_DATA_VA 0xfffff80410c10000 /* one page, at PA 0xc000 */
#define WIN_SCHED_DATA_PA 0xc000
#define WIN_GDT_VA	  0xfffff80410c20000
#define WIN_TSS_VA	  0xfffff80410c21000
#define WIN_KSTACK_VA	  0xfffff80410c30000 /* one page; top = + 0x1000 */
#define WIN_PTE_WINDOW_VA 0xfffff80410c40000 /* page tables the scheduler edits */

/*
 * The Hyper-V reference TSC page (svmtrace-e2e-wingen --hv-tsc-page), read
 * only in every process at WIN_HV_TSC_VA, as Windows maps it for user-mode
 * QueryPerformanceCounter: u32 TscSequence (0: invalid), u32 reserved, u64
 * TscScale, s64 TscOffset; time in 100 ns = (TSC * TscScale >> 64) +
 * TscOffset.  The builder fills it as Hyper-V would for a 2.6 GHz TSC
 * (KVM publishes one only with a stable TSC master clock, which L1 under
 * TCG never has).
 */
#define WIN_HV_TSC_VA	    0x7ffe1000
#define WIN_HV_TSC_SCALE    0x00fc0fc0fc0fc0fcull /* 2^64 * 10^7 / 2.6e9 */
#define WIN_HV_TSC_SEQUENCE 1

/* Each process: its PE image at the base the generator drew for it, bound
 * to the DLL every process has (ntdll.dll, at one base the generator drew),
 * and a stack of this many pages at a place drawn for it. */
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
