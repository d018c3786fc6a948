/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsvmtrace: Windows virtual machine introspection.
 *
 * Turns a Windows x64 guest's physical memory into what the tracer needs:
 * the process list, a process's CR3 values, and the guest-physical page that
 * holds the first instruction of its PE entry point.  Three layers, the way
 * LibVMI splits them:
 *
 *   memory   guest-physical reads from a QEMU ELF core (`virsh dump
 *            --memory-only --format=elf`) or a raw image, plus the vCPU
 *            registers the source knows (CR3, GS bases, IDTR, LSTAR);
 *   arch     x86-64 translation, 4-level or 5-level (CR4.LA57) tables,
 *            4 KiB, 2 MiB and 1 GiB pages;
 *   windows  volatility3 ISF profiles chosen by the kernel's PDB GUID,
 *            kernel discovery, EPROCESS list, PEB loader list, PE headers and
 *            Windows' software PTE states (transition, prototype, paged out).
 *
 * No structure offset is compiled in: every offset, symbol RVA and PTE bit
 * position comes from the profile.  docs/vmi.md describes the design.
 *
 * Errors: the library's one convention (svmtrace/status.h): every call that
 * can fail returns 0 or a negative enum svmtrace_status and fills a
 * struct svmtrace_error whose message names the file, address or structure
 * and what was expected.
 */
#ifndef SVMTRACE_VMI_H
#define SVMTRACE_VMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <svmtrace/status.h>

/* ---- memory sources ---------------------------------------------------- */

struct svmtrace_vmi_mem;

/* Which fields of struct svmtrace_vmi_vcpu hold a value. */
enum {
	SVMTRACE_VMI_REG_CR3 = 1 << 0,
	SVMTRACE_VMI_REG_GS_BASE = 1 << 1,
	SVMTRACE_VMI_REG_KERNEL_GS_BASE = 1 << 2,
	SVMTRACE_VMI_REG_IDTR = 1 << 3,
	SVMTRACE_VMI_REG_LSTAR = 1 << 4,
	SVMTRACE_VMI_REG_CR4 = 1 << 5,
};

/* One vCPU's registers as the memory source recorded them. */
struct svmtrace_vmi_vcpu {
	uint32_t valid; /* SVMTRACE_VMI_REG_* */
	uint64_t cr3;
	uint64_t gs_base;
	uint64_t kernel_gs_base;
	uint64_t idtr_base;
	uint64_t lstar;
	uint64_t cr4;  /* CR4.LA57 says how many levels of page tables */
	uint64_t efer; /* live sources only (0 otherwise) */
	uint32_t cpl;	    /* live sources only */
};

/*
 * Open a memory file: a QEMU ELF core (recognised by its ELF header) or
 * anything else as a raw physical image (file offset = guest-physical
 * address).  The file is mapped, not read.
 */
int svmtrace_vmi_mem_open(const char *path, struct svmtrace_vmi_mem **out,
			  struct svmtrace_error *err);

/* The same over caller memory (kept, not copied, until close). */
int svmtrace_vmi_mem_open_buffer(const void *buf, size_t len, const char *name,
				 struct svmtrace_vmi_mem **out, struct svmtrace_error *err);

/* Accepts NULL. */
void svmtrace_vmi_mem_close(struct svmtrace_vmi_mem *mem);

/*
 * A running VM's memory ("live"), read through an attached /dev/svmtrace
 * controller: SVMTRACE_READ_GPA for bytes, SVMTRACE_GET_VCPU_STATE for
 * the registers kernel discovery needs.  Reads go through a page cache that
 * svmtrace_vmi_mem_refresh() empties; the guest keeps running, so callers
 * refresh before every walk and check what they walked (see docs/vmi.md).
 */
int svmtrace_vmi_mem_open_live(int ctl_fd, struct svmtrace_vmi_mem **out,
			       struct svmtrace_error *err);

/*
 * What the live driver asks of the VM, so that it can also run over other
 * sources (tests run the real VMI stack over an image in memory).
 * read: copy [gpa, gpa + len) with len <= max_read; 0 or -errno (ENXIO:
 * not guest RAM, EINTR: try again).  vcpu: the registers of vCPU @index;
 * 0, -EINVAL past the last vCPU, or -errno.
 */
struct svmtrace_vmi_live_ops {
	int (*read)(void *ctx, uint64_t gpa, void *buf, size_t len);
	int (*vcpu)(void *ctx, unsigned int index, struct svmtrace_vmi_vcpu *out);
	void *ctx;
	size_t max_read;
};

int svmtrace_vmi_mem_open_live_ops(const struct svmtrace_vmi_live_ops *ops, const char *name,
				   struct svmtrace_vmi_mem **out, struct svmtrace_error *err);

/*
 * Live sources: forget every cached page and read the vCPU registers
 * again.  Files: nothing changes, returns 0.
 */
int svmtrace_vmi_mem_refresh(struct svmtrace_vmi_mem *mem, struct svmtrace_error *err);

/* "qemu-elf-core", "raw" or "live". */
const char *svmtrace_vmi_mem_kind(const struct svmtrace_vmi_mem *mem);

/* The file (or buffer name) given at open. */
const char *svmtrace_vmi_mem_name(const struct svmtrace_vmi_mem *mem);

/* Read guest-physical bytes; fails with E_NOT_FOUND outside the source. */
int svmtrace_vmi_mem_read(const struct svmtrace_vmi_mem *mem, uint64_t gpa, void *buf, size_t len,
			  struct svmtrace_error *err);

/* The guest-physical ranges the source holds, in address order. */
unsigned int svmtrace_vmi_mem_range_count(const struct svmtrace_vmi_mem *mem);
void svmtrace_vmi_mem_range(const struct svmtrace_vmi_mem *mem, unsigned int index, uint64_t *gpa,
			    uint64_t *size);

unsigned int svmtrace_vmi_mem_vcpu_count(const struct svmtrace_vmi_mem *mem);
const struct svmtrace_vmi_vcpu *svmtrace_vmi_mem_vcpu(const struct svmtrace_vmi_mem *mem,
						      unsigned int index);

/* ---- profiles ----------------------------------------------------------- */

struct svmtrace_vmi_profile;

/* Load one volatility3 ISF file (.json or .json.xz). */
int svmtrace_vmi_profile_load(const char *path, struct svmtrace_vmi_profile **out,
			      struct svmtrace_error *err);
/* Accepts NULL. */
void svmtrace_vmi_profile_free(struct svmtrace_vmi_profile *profile);

/* "GUID-AGE" as in the file name convention, GUID in upper-case hex. */
const char *svmtrace_vmi_profile_id(const struct svmtrace_vmi_profile *profile);
const char *svmtrace_vmi_profile_path(const struct svmtrace_vmi_profile *profile);

/*
 * Find and load the profile for @id ("GUID-AGE") from @path: a directory
 * (searched recursively for NAME-GUID-AGE.json[.xz] and GUID-AGE.json[.xz];
 * files with other names are opened only when no name matches) or a single
 * file, which must be for @id.  A file for another kernel fails with
 * E_MISMATCH and a message naming both GUIDs.
 */
int svmtrace_vmi_profile_find(const char *path, const char *id, struct svmtrace_vmi_profile **out,
			      struct svmtrace_error *err);

/* ---- the kernel --------------------------------------------------------- */

/* Ways to find ntoskrnl; each is tried in this order. */
enum svmtrace_vmi_method {
	SVMTRACE_VMI_METHOD_LSTAR,	/* LSTAR -> KiSystemCall64[Shadow] */
	SVMTRACE_VMI_METHOD_KPCR,	/* GS/KERNEL_GS_BASE -> KPCR -> IDT[0] */
	SVMTRACE_VMI_METHOD_IDTR,	/* IDTR -> IDT[0] -> KiDivideErrorFault */
	SVMTRACE_VMI_METHOD_STARTBLOCK, /* low-memory processor start block */
	SVMTRACE_VMI_METHOD_PESCAN,	/* physical scan: the kernel's CodeView record */
	SVMTRACE_VMI_METHOD_COUNT
};

const char *svmtrace_vmi_method_name(enum svmtrace_vmi_method method);

struct svmtrace_vmi_kernel {
	uint64_t base; /* ntoskrnl's image base (VA) */
	uint64_t dtb;  /* page-table root that maps it */
	uint32_t paging_levels; /* 4, or 5 with CR4.LA57: every DTB of the guest */
	uint32_t size_of_image;
	char pdb_name[64]; /* from the RSDS record, e.g. "ntkrnlmp.pdb" */
	char id[48];	   /* "GUID-AGE" from the RSDS record */
	enum svmtrace_vmi_method method;
	/* How the method got there: the address inside the kernel it started
	 * from, the profile symbol that address is ("" when no profile
	 * checked it), and where it came from, e.g. "vCPU 1 KERNEL_GS_BASE ->
	 * KPCR 0x... -> IDT[0]" or "start block at GPA 0x1000". */
	uint64_t anchor;
	char anchor_symbol[40];
	char source[96];
};

/*
 * Find the kernel with one method.  Methods that read Windows structures
 * (KPCR) need @profile; the others run without one and read the GUID from
 * the image they find.  E_NOT_FOUND when the source lacks what the method
 * needs (e.g. no LSTAR in an ELF core), with the reason.
 */
int svmtrace_vmi_kernel_probe(const struct svmtrace_vmi_mem *mem,
			      const struct svmtrace_vmi_profile *profile,
			      enum svmtrace_vmi_method method, struct svmtrace_vmi_kernel *out,
			      struct svmtrace_error *err);

/* Try every method in order; the first that succeeds wins. */
int svmtrace_vmi_kernel_find(const struct svmtrace_vmi_mem *mem,
			     const struct svmtrace_vmi_profile *profile,
			     struct svmtrace_vmi_kernel *out, struct svmtrace_error *err);

/* ---- a session: memory + kernel + profile ------------------------------- */

struct svmtrace_vmi;

/*
 * Find the kernel, select its profile from @profiles (directory or file, see
 * svmtrace_vmi_profile_find) and check the profile against the image.
 * @mem must outlive the session.
 */
int svmtrace_vmi_open(const struct svmtrace_vmi_mem *mem, const char *profiles,
		      struct svmtrace_vmi **out, struct svmtrace_error *err);

/* The same with a profile already loaded (borrowed; must outlive the session). */
int svmtrace_vmi_open_profile(const struct svmtrace_vmi_mem *mem,
			      const struct svmtrace_vmi_profile *profile, struct svmtrace_vmi **out,
			      struct svmtrace_error *err);

/* Accepts NULL. */
void svmtrace_vmi_close(struct svmtrace_vmi *vmi);

const struct svmtrace_vmi_kernel *svmtrace_vmi_kernel(const struct svmtrace_vmi *vmi);
const struct svmtrace_vmi_profile *svmtrace_vmi_profile(const struct svmtrace_vmi *vmi);

/* ---- processes ---------------------------------------------------------- */

#define SVMTRACE_VMI_NAME_MAX 15 /* EPROCESS.ImageFileName */

struct svmtrace_vmi_process {
	uint64_t pid;
	uint64_t ppid;
	char name[SVMTRACE_VMI_NAME_MAX + 1];
	uint64_t eprocess; /* VA of the EPROCESS */
	uint64_t dtb;	   /* DirectoryTableBase, PCID bits 11:0 masked */
	uint64_t user_dtb; /* UserDirectoryTableBase (KVA shadow), masked;
			      0 when the process has none */
	uint64_t dtb_raw;  /* the fields as stored */
	uint64_t user_dtb_raw;
	uint64_t peb;	     /* 0 for kernel processes */
	uint64_t image_base; /* PEB.ImageBaseAddress, else SectionBaseAddress */
};

/*
 * Walk PsActiveProcessHead.  A cycle that does not return to the head, a
 * Flink whose Blink does not point back, or a link that leaves memory fails
 * with E_CORRUPT naming the entry; the walk is bounded, never hangs.
 * *list is malloc'ed; free() it.
 */
int svmtrace_vmi_processes(const struct svmtrace_vmi *vmi, struct svmtrace_vmi_process **list,
			   size_t *count, struct svmtrace_error *err);

/* The process with @pid; E_NOT_FOUND if the list has none. */
int svmtrace_vmi_process_find(const struct svmtrace_vmi *vmi, uint64_t pid,
			      struct svmtrace_vmi_process *out, struct svmtrace_error *err);

/* ---- translation -------------------------------------------------------- */

/* How a virtual address reached its physical page. */
enum svmtrace_vmi_page_state {
	SVMTRACE_VMI_PAGE_VALID,		/* hardware-valid PTE */
	SVMTRACE_VMI_PAGE_TRANSITION,		/* not valid, but the page is still in RAM
						   (standby/modified list) */
	SVMTRACE_VMI_PAGE_PROTOTYPE,		/* PTE refers to a prototype PTE that is
						   valid */
	SVMTRACE_VMI_PAGE_PROTOTYPE_TRANSITION, /* ... that is in transition */
};

const char *svmtrace_vmi_page_state_name(enum svmtrace_vmi_page_state state);

struct svmtrace_vmi_translation {
	uint64_t va;
	uint64_t gpa;	    /* guest-physical address of va */
	uint64_t page_size; /* 4 KiB, 2 MiB or 1 GiB mapping */
	enum svmtrace_vmi_page_state state;
	uint64_t pte;	       /* the entry that decided (leaf, or the prototype) */
	uint64_t prototype_va; /* prototype PTE's VA for PROTOTYPE* states */
};

/*
 * Translate @va through @dtb the way Windows' memory manager sees it.  When
 * the page is not in memory: E_NOT_RESIDENT and a message that says why
 * (demand-zero, in the page file, file-backed and not read yet, ...).
 */
int svmtrace_vmi_translate(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va,
			   struct svmtrace_vmi_translation *out, struct svmtrace_error *err);

/* Read guest-virtual bytes through @dtb (page by page). */
int svmtrace_vmi_read_va(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t va, void *buf,
			 size_t len, struct svmtrace_error *err);

/* ---- what the tracer needs ---------------------------------------------- */

struct svmtrace_vmi_entry {
	struct svmtrace_vmi_process process;
	uint64_t image_base;
	uint32_t entry_rva; /* OptionalHeader.AddressOfEntryPoint */
	uint64_t entry_va;
	char section[9];		       /* name of the section that holds the entry */
	struct svmtrace_vmi_translation where; /* entry_va -> entry GPA */
	uint64_t entry_page;		       /* where.gpa rounded down to 4 KiB: the page to
						  gate */
};

/*
 * Resolve @pid's PE entry point to its guest-physical page.  E_NOT_RESIDENT
 * (with the reason) when the header or the entry page is not in memory: the
 * caller should wait and retry, never guess.
 */
int svmtrace_vmi_resolve(const struct svmtrace_vmi *vmi, uint64_t pid,
			 struct svmtrace_vmi_entry *out, struct svmtrace_error *err);

struct svmtrace_vmi_module {
	uint64_t base;
	uint32_t size;
	uint64_t entry; /* LDR_DATA_TABLE_ENTRY.EntryPoint */
	char name[128]; /* BaseDllName, UTF-8 */
	char path[520]; /* FullDllName, UTF-8 */
};

/*
 * @pid's loaded modules from PEB.Ldr.InLoadOrderModuleList (bounded, cycle
 * checked like the process list).  *list is malloc'ed; free() it.
 */
int svmtrace_vmi_modules(const struct svmtrace_vmi *vmi, uint64_t pid,
			 struct svmtrace_vmi_module **list, size_t *count,
			 struct svmtrace_error *err);

/* What identifies a mapped PE image for symbolization. */
struct svmtrace_vmi_image_id {
	uint32_t time_date_stamp; /* FileHeader.TimeDateStamp */
	uint32_t size_of_image;
	bool has_codeview; /* the fields below are valid */
	uint32_t age;
	char pdb_name[64];
	char id[48]; /* "GUID-AGE", GUID in upper-case hex */
};

/*
 * Read the headers (and the CodeView record, when its page is resident) of
 * the image mapped at @base in @dtb.  E_NOT_RESIDENT when the headers are
 * paged out.
 */
int svmtrace_vmi_image_id(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t base,
			  struct svmtrace_vmi_image_id *out, struct svmtrace_error *err);

/* One entry of a module's export directory. */
struct svmtrace_vmi_export {
	char name[128]; /* empty: exported by ordinal only */
	uint32_t ordinal; /* biased by the directory's Base, as tools show it */
	uint32_t rva;
};

/*
 * The export directory of the image mapped at @base in @dtb, forwarders
 * left out, in the directory's order (named exports first).  E_NOT_FOUND
 * when the image has none, E_NOT_RESIDENT when a page of it is paged out.
 * *list is malloc'ed (NULL when *count is 0); free() it.
 */
int svmtrace_vmi_exports(const struct svmtrace_vmi *vmi, uint64_t dtb, uint64_t base,
			 struct svmtrace_vmi_export **list, size_t *count,
			 struct svmtrace_error *err);

/*
 * @pid's command line (PEB.ProcessParameters.CommandLine, UTF-8, truncated to
 * fit @size).  E_NOT_FOUND for a process without a PEB or parameters yet,
 * E_NOT_RESIDENT when a page of it is paged out.
 */
int svmtrace_vmi_command_line(const struct svmtrace_vmi *vmi, uint64_t pid, char *out, size_t size,
			      struct svmtrace_error *err);

/* ---- threads ----------------------------------------------------------- */

/*
 * Where every thread of the guest begins in user mode.  Windows x64 starts
 * each new thread at ntdll!LdrInitializeThunk (PspUserThreadStartup points
 * its trap frame there, the loader runs, then NtContinue resumes the context
 * its creator gave it, at ntdll!RtlUserThreadStart).  ntdll is mapped at the
 * same address in every process.
 */
struct svmtrace_vmi_thread_start {
	uint64_t ldr_initialize_thunk;	/* every thread's first instruction */
	uint64_t rtl_user_thread_start; /* where its own context begins; 0: unknown */
	char source[64];		/* where ldr_initialize_thunk came from: the kernel
					   variable's name, or "ntdll.dll exports" */
	uint64_t ntdll_base;		/* 0 when no loader list showed ntdll.dll */
	char check[640];		/* how the exports confirmed it, or why they could not */
};

/*
 * Read the kernel's own record (profile: PspLoaderInitRoutine and
 * PspUserThreadStart, or PsNtdllExports) and check it against ntdll.dll's
 * export table, from the first process whose loader list has ntdll.dll.
 * Either alone answers when the other is missing; E_CORRUPT when they
 * disagree, E_NOT_FOUND (both reasons) when neither is there.
 */
int svmtrace_vmi_thread_start(const struct svmtrace_vmi *vmi, struct svmtrace_vmi_thread_start *out,
			      struct svmtrace_error *err);

struct svmtrace_vmi_thread {
	uint64_t ethread;	      /* VA of the ETHREAD */
	uint64_t tid;		      /* Cid.UniqueThread */
	uint64_t pid;		      /* Cid.UniqueProcess */
	uint64_t teb;		      /* KTHREAD.Teb: its user GS base; 0 for a kernel thread */
	uint64_t start_address;	      /* ETHREAD.StartAddress */
	uint64_t win32_start_address; /* ETHREAD.Win32StartAddress: what its creator named */
};

/*
 * @pid's threads, from EPROCESS.ThreadListHead (bounded and cycle-checked
 * like the process list).  E_NOT_FOUND naming the field when the profile
 * lacks one.  *list is malloc'ed; free() it.
 */
int svmtrace_vmi_threads(const struct svmtrace_vmi *vmi, uint64_t pid,
			 struct svmtrace_vmi_thread **list, size_t *count,
			 struct svmtrace_error *err);

#endif
