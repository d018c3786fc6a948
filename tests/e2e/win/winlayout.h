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
#define WIN_SCHED_PANIC_OFF   0x800 /* vector v's stub at + v * 16 */
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
#define WIN_TEB_PAGES	 2 /* each thread's TEB, at a place drawn for it */

/* Where threads begin (programs/ntdll.S): every thread's first user-mode
 * instruction is ntdll's LdrInitializeThunk, as in Windows x64, and the
 * context it resumes starts at RtlUserThreadStart. */
#define WIN_LDR_INIT_NAME     "LdrInitializeThunk"
#define WIN_THREAD_START_NAME "RtlUserThreadStart"

/* The structure fields the lab's user code and scheduler read or write
 * (x64 Windows never moved them; wingen checks each against the profile). */
#define WIN_TEB_SELF	     0x30 /* _TEB.NtTib.Self */
#define WIN_TEB_CLIENT_ID    0x40 /* _TEB.ClientId: UniqueProcess, UniqueThread */
#define WIN_TEB_PEB	     0x60 /* _TEB.ProcessEnvironmentBlock */
#define WIN_PEB_IMAGE_BASE   0x10 /* _PEB.ImageBaseAddress */
#define WIN_PEB_LDR	     0x18 /* _PEB.Ldr */
#define WIN_LDR_INITIALIZED  0x04 /* _PEB_LDR_DATA.Initialized (BOOLEAN, then padding) */
#define WIN_LDR_LOAD_ORDER   0x10 /* _PEB_LDR_DATA.InLoadOrderModuleList */
#define WIN_LDRE_DLL_BASE    0x30 /* _LDR_DATA_TABLE_ENTRY.DllBase (links at 0) */
#define WIN_LDRE_ENTRY_POINT 0x38 /* _LDR_DATA_TABLE_ENTRY.EntryPoint */

/* The integer part of the x64 CONTEXT record (winnt.h): RAX..R15 in x86
 * encoding order from CTX_GPR, RIP right after R15. */
#define WIN_CTX_SIZE   0x4d0
#define WIN_CTX_FLAGS  0x30
#define WIN_CTX_EFLAGS 0x44
#define WIN_CTX_GPR    0x78
#define WIN_CTX_RIP    0xf8
#define WIN_CTX_FULL   0x10000b /* CONTEXT_AMD64 | CONTROL | INTEGER | FLOATING_POINT */

/* DllMain and TLS callback reasons (winnt.h). */
#define WIN_DLL_PROCESS_ATTACH 1
#define WIN_DLL_THREAD_ATTACH  2

#define WIN_USER_RFLAGS	 0x3002 /* IOPL 3 (the programs use the lab's ports) */

/* The scheduler's data page.  The first 0x40 bytes are the lab's result
 * counters (guest/layout.h KDATA_*: SYSCALLS at +0x10). */
#define WIN_D_CURRENT	0x40 /* VA of the running process's slot */
#define WIN_D_SCRATCH	   0x48
#define WIN_D_SLOTS	0x58 /* VA of slot 0 */
#define WIN_D_SLOTS_END 0x60 /* VA past the last slot */
#define WIN_D_YIELDS	0x68 /* system calls so far */
#define WIN_D_LINK_AT	0x70 /* at this many system calls, link the late process */
#define WIN_D_LATE_LINKS 0x78 /* its EPROCESS.ActiveProcessLinks (VA) */
#define WIN_D_LATE_SLOT	0x80 /* its slot (VA) */
#define WIN_D_LIST_HEAD 0x88 /* PsActiveProcessHead (VA) */
#define WIN_D_EXITED	   0x90 /* threads that exited */
#define WIN_D_LDR_INIT	   0x98 /* VA of the kernel variable holding LdrInitializeThunk's VA */
#define WIN_D_NTDLL	   0xa0 /* ntdll's base (PspUserThreadStartup hands it over) */
#define WIN_D_CREATABLE	   0xa8 /* VA of the table of processes a process can create */
#define WIN_D_NR_CREATABLE 0xb0

/* The processes NtCreateUserProcess can create: built by the image builder,
 * not linked and not runnable until created.  One entry each, at
 * WIN_CREATABLE_OFF in the data page. */
#define WIN_CREATABLE_OFF 0x900
#define WIN_C_SIZE	  0x20
#define WIN_C_SLOT	  0x00 /* VA of its first thread's slot */
#define WIN_C_LINKS	  0x08 /* its EPROCESS.ActiveProcessLinks (VA) */
#define WIN_C_PPID	  0x10 /* its EPROCESS.InheritedFromUniqueProcessId (VA) */
#define WIN_C_USED	  0x18 /* 1 once created */

#define WIN_SLOT_OFF  0x100 /* slots start here in the data page, up to WIN_CREATABLE_OFF */
#define WIN_SLOT_SIZE 0x100
#define WIN_MAX_SLOTS 8
/* A slot: one thread. */
#define WIN_S_STATE  0x00 /* 0 not yet runnable, 1 runnable, 2 exited */
#define WIN_S_CR3    0x08 /* the CR3 its user mode runs under */
#define WIN_S_RIP    0x10
#define WIN_S_RFLAGS 0x18
#define WIN_S_GPR    0x20 /* 16 GPRs in x86 encoding order (RAX RCX RDX RBX RSP ...) */
#define WIN_S_PTE_VA 0xa0 /* non-zero: before its first run, write ... */
#define WIN_S_PTE    0xa8 /* ... this valid PTE there (its entry page) */
#define WIN_S_PID    0xb0
#define WIN_S_TEB	    0xb8 /* its TEB: the user GS base */
#define WIN_S_TID	    0xc0
#define WIN_S_KCR3	    0xc8 /* its process's kernel DTB (a system call runs on it) */
#define WIN_S_FRESH	    0xd0 /* 1: never ran (PspUserThreadStartup's work is due) */
#define WIN_S_FULL	    0xd8 /* 1: return with the whole context (IRETQ), not SYSRETQ */
#define WIN_S_SPARE	    0xe0 /* a slot ready for a thread its process creates (0: none) */
#define WIN_S_ETHREAD_LINKS 0xe8 /* its ETHREAD.ThreadListEntry (VA) ... */
#define WIN_S_THREAD_HEAD   0xf0 /* ... linked here (EPROCESS.ThreadListHead) once it exists */
#define WIN_S_W32START	    0xf8 /* its ETHREAD.Win32StartAddress (VA): what its creator named */

/* System call numbers (RAX) of the lab's processes; arguments as in
 * Windows: R10 (the caller's RCX), RDX, R8, R9. */
#define WIN_SYS_YIELD	 0
#define WIN_SYS_EXIT	 1 /* the calling thread ends */
#define WIN_SYS_CONTINUE 2 /* NtContinue(R10 = CONTEXT *) */
/* NtCreateThreadEx(R10 = start address, RDX = parameter): RAX = the thread
 * ID, or WIN_STATUS_NO_MEMORY when its process has no slot left for one. */
#define WIN_SYS_CREATE_THREAD 3
/* NtCreateUserProcess(R10 = which of the creatable processes, RDX = flags):
 * RAX = its PID, RDX = its first thread's ID; WIN_CREATE_SUSPENDED: that
 * thread waits for NtResumeThread. */
#define WIN_SYS_CREATE_PROCESS 4
#define WIN_CREATE_SUSPENDED   1
/* NtWriteVirtualMemory(R10 = PID, RDX = VA there, R8 = VA here, R9 = bytes: a
 * multiple of 8, at most a page). */
#define WIN_SYS_WRITE_VM 5
/* NtGetContextThread / NtSetContextThread(R10 = thread ID, RDX = CONTEXT *):
 * the integer part. */
#define WIN_SYS_GET_CONTEXT   6
#define WIN_SYS_SET_CONTEXT   7
#define WIN_SYS_RESUME_THREAD 8 /* NtResumeThread(R10 = thread ID) */
#define WIN_STATUS_NO_MEMORY  0xc0000017
#define WIN_STATUS_INVALID    0xc000000d /* STATUS_INVALID_PARAMETER */

/* in: the scheduler stops here once it linked the late process into the
 * process list, before that process ever runs.  With --go-wait the VMM
 * holds the vCPU until SIGWINCH (a tracer attaches meanwhile). */
#define PORT_GO	 0xe5
#define GO_VALUE 0x60

#endif /* E2E_WIN_LAYOUT_H */
