/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Windows layer reads from a profile, resolved once at load time:
 * symbol RVAs, structure member offsets and the bit positions of the
 * software PTE formats.  Every number here comes from the ISF file; a
 * required entry the file lacks fails the load with its name.
 */
#ifndef SVMTRACE_VMI_WIN_PROFILE_H
#define SVMTRACE_VMI_WIN_PROFILE_H

#include <svmtrace/vmi.h>

#include <limits.h>
#include <stdbool.h>

struct isf;

/* A bitfield: @len bits from bit @pos. */
struct win_bits {
	unsigned int pos, len;
};

static inline uint64_t win_bits_get(struct win_bits b, uint64_t v)
{
	return (v >> b.pos) & (b.len == 64 ? ~0ULL : (1ULL << b.len) - 1);
}

/* An optional symbol. */
struct win_symbol {
	bool present;
	uint64_t rva;
};

struct win_pte_layout {
	struct win_bits valid;	       /* _MMPTE_HARDWARE.Valid */
	struct win_bits transition;    /* _MMPTE_TRANSITION.Transition */
	struct win_bits trans_pfn;     /* _MMPTE_TRANSITION.PageFrameNumber */
	struct win_bits prototype;     /* _MMPTE_PROTOTYPE.Prototype */
	struct win_bits proto_address; /* _MMPTE_PROTOTYPE.ProtoAddress (signed) */
	struct win_bits pagefile_high; /* _MMPTE_SOFTWARE.PageFileHigh */
};

struct svmtrace_vmi_profile {
	char id[48]; /* "GUID-AGE" */
	char guid[33];
	uint32_t age;
	char database[64];
	char path[PATH_MAX];

	struct {
		uint64_t ps_active_process_head;
		struct win_symbol ki_system_call64, ki_system_call64_shadow;
		struct win_symbol ki_divide_error_fault, ki_divide_error_fault_shadow;
		struct win_symbol ps_initial_system_process;
		/* Where threads begin: Windows 10 keeps ntdll's addresses in two
		 * variables, Windows 11 in _PS_NTDLL_EXPORTS PsNtdllExports. */
		struct win_symbol psp_loader_init_routine, psp_user_thread_start;
		struct win_symbol ps_ntdll_exports;
	} sym;
	struct {
		bool present;
		uint32_t ldr_initialize_thunk, rtl_user_thread_start;
	} ntdll_exports; /* _PS_NTDLL_EXPORTS */
	struct {
		bool present; /* _PEB.ProcessParameters, _RTL_USER_PROCESS_PARAMETERS.CommandLine */
		uint32_t params, command_line;
	} cmdline;
	/*
	 * Threads (optional: without them svmtrace_vmi_threads() says which
	 * field the profile lacks, in threads_missing).
	 */
	struct {
		bool present;
		char missing[96];
		uint32_t list_head;			     /* _EPROCESS.ThreadListHead */
		uint32_t list_entry;			     /* _ETHREAD.ThreadListEntry */
		uint32_t tcb, cid;			     /* _ETHREAD.Tcb, .Cid */
		uint32_t unique_process, unique_thread;	     /* _CLIENT_ID */
		uint32_t teb;				     /* _KTHREAD.Teb */
		uint32_t start_address, win32_start_address; /* _ETHREAD */
	} threads;
	struct {
		uint32_t pcb, links, pid, ppid, name, name_len, peb, section_base;
	} eprocess;
	struct {
		uint32_t dtb, user_dtb;
		bool has_user_dtb;
	} kprocess;
	struct {
		uint32_t image_base, ldr;
	} peb;
	uint32_t ldr_load_order; /* _PEB_LDR_DATA.InLoadOrderModuleList */
	struct {
		uint32_t links, dll_base, size, entry, base_name, full_name;
	} ldr_entry;
	struct {
		uint32_t length, buffer;
	} ustr;
	struct {
		uint32_t flink, blink;
	} list;
	struct {
		uint32_t self, idt_base;
	} kpcr;
	struct win_pte_layout pte;
};

/* Fill @p from @isf (the file named @path). */
int win_profile_from_isf(struct isf *isf, const char *path, struct svmtrace_vmi_profile *p,
			 struct svmtrace_error *err);

#endif
