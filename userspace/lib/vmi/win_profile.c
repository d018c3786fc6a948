// SPDX-License-Identifier: GPL-2.0
/* Loading struct svmtrace_vmi_profile from an ISF file. */
#include "lib/vmi/win_profile.h"
#include "lib/vmi/isf.h"
#include "lib/vmi/vmi_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loader {
	struct isf *isf;
	struct svmtrace_error *err;
	int rc; /* first failure; later lookups are skipped */
};

static void offset(struct loader *l, const char *type, const char *field, uint32_t *out)
{
	struct isf_field f;

	if (l->rc)
		return;
	l->rc = isf_field(l->isf, type, field, &f, l->err);
	if (!l->rc && f.bit_length)
		l->rc = vmi_fail(l->err, SVMTRACE_E_FORMAT,
				 "%s: %s.%s is a bitfield, expected a whole member",
				 isf_name(l->isf), type, field);
	if (l->rc)
		vmi_prefix(l->err, l->rc, "profile lacks what VMI needs");
	else
		*out = (uint32_t)f.offset;
}

static void bits(struct loader *l, const char *type, const char *field, struct win_bits *out)
{
	struct isf_field f;

	if (l->rc)
		return;
	l->rc = isf_field(l->isf, type, field, &f, l->err);
	if (!l->rc && (!f.bit_length || f.offset != 0))
		l->rc = vmi_fail(l->err, SVMTRACE_E_FORMAT,
				 "%s: %s.%s is not a bitfield of the PTE's first quadword",
				 isf_name(l->isf), type, field);
	if (l->rc)
		vmi_prefix(l->err, l->rc, "profile lacks what VMI needs");
	else
		*out = (struct win_bits){ f.bit_position, f.bit_length };
}

static void optional_symbol(struct loader *l, const char *name, struct win_symbol *out)
{
	out->present = !l->rc && !isf_symbol(l->isf, name, &out->rva, NULL);
}

/* A member the Windows layer can do without: false when absent, naming it in @missing. */
static bool optional_offset(struct isf *isf, const char *type, const char *field, uint32_t *out,
			    char *missing, size_t size)
{
	struct isf_field f;

	if (!isf_field(isf, type, field, &f, NULL) && !f.bit_length) {
		*out = (uint32_t)f.offset;
		return true;
	}
	if (missing && !missing[0])
		snprintf(missing, size, "%s.%s", type, field);
	return false;
}

/* Threads and where they begin: optional, a profile without them still loads. */
static void load_threads(struct loader *l, struct svmtrace_vmi_profile *p)
{
	char *miss = p->threads.missing;
	size_t n = sizeof(p->threads.missing);
	bool ok = true;

	if (l->rc)
		return;
	optional_symbol(l, "PspLoaderInitRoutine", &p->sym.psp_loader_init_routine);
	optional_symbol(l, "PspUserThreadStart", &p->sym.psp_user_thread_start);
	optional_symbol(l, "PsNtdllExports", &p->sym.ps_ntdll_exports);
	p->ntdll_exports.present =
		optional_offset(l->isf, "_PS_NTDLL_EXPORTS", "LdrInitializeThunk",
				&p->ntdll_exports.ldr_initialize_thunk, NULL, 0) &&
		optional_offset(l->isf, "_PS_NTDLL_EXPORTS", "RtlUserThreadStart",
				&p->ntdll_exports.rtl_user_thread_start, NULL, 0);
	p->cmdline.present =
		optional_offset(l->isf, "_PEB", "ProcessParameters", &p->cmdline.params, NULL, 0) &&
		optional_offset(l->isf, "_RTL_USER_PROCESS_PARAMETERS", "CommandLine",
				&p->cmdline.command_line, NULL, 0);
	ok &= optional_offset(l->isf, "_EPROCESS", "ThreadListHead", &p->threads.list_head, miss,
			      n);
	ok &= optional_offset(l->isf, "_ETHREAD", "ThreadListEntry", &p->threads.list_entry, miss,
			      n);
	ok &= optional_offset(l->isf, "_ETHREAD", "Tcb", &p->threads.tcb, miss, n);
	ok &= optional_offset(l->isf, "_ETHREAD", "Cid", &p->threads.cid, miss, n);
	ok &= optional_offset(l->isf, "_CLIENT_ID", "UniqueProcess", &p->threads.unique_process,
			      miss, n);
	ok &= optional_offset(l->isf, "_CLIENT_ID", "UniqueThread", &p->threads.unique_thread, miss,
			      n);
	ok &= optional_offset(l->isf, "_KTHREAD", "Teb", &p->threads.teb, miss, n);
	ok &= optional_offset(l->isf, "_ETHREAD", "StartAddress", &p->threads.start_address, miss,
			      n);
	ok &= optional_offset(l->isf, "_ETHREAD", "Win32StartAddress",
			      &p->threads.win32_start_address, miss, n);
	p->threads.present = ok;
}

static void load_structures(struct loader *l, struct svmtrace_vmi_profile *p)
{
	struct isf_field f;

	offset(l, "_EPROCESS", "Pcb", &p->eprocess.pcb);
	offset(l, "_EPROCESS", "ActiveProcessLinks", &p->eprocess.links);
	offset(l, "_EPROCESS", "UniqueProcessId", &p->eprocess.pid);
	offset(l, "_EPROCESS", "InheritedFromUniqueProcessId", &p->eprocess.ppid);
	offset(l, "_EPROCESS", "ImageFileName", &p->eprocess.name);
	offset(l, "_EPROCESS", "Peb", &p->eprocess.peb);
	offset(l, "_EPROCESS", "SectionBaseAddress", &p->eprocess.section_base);
	if (!l->rc && !isf_field(l->isf, "_EPROCESS", "ImageFileName", &f, NULL))
		p->eprocess.name_len = f.count && f.count < SVMTRACE_VMI_NAME_MAX
					       ? (uint32_t)f.count
					       : SVMTRACE_VMI_NAME_MAX;
	offset(l, "_KPROCESS", "DirectoryTableBase", &p->kprocess.dtb);
	p->kprocess.has_user_dtb =
		!l->rc && !isf_field(l->isf, "_KPROCESS", "UserDirectoryTableBase", &f, NULL);
	if (p->kprocess.has_user_dtb)
		p->kprocess.user_dtb = (uint32_t)f.offset;
	offset(l, "_PEB", "ImageBaseAddress", &p->peb.image_base);
	offset(l, "_PEB", "Ldr", &p->peb.ldr);
	offset(l, "_PEB_LDR_DATA", "InLoadOrderModuleList", &p->ldr_load_order);
	offset(l, "_LDR_DATA_TABLE_ENTRY", "InLoadOrderLinks", &p->ldr_entry.links);
	offset(l, "_LDR_DATA_TABLE_ENTRY", "DllBase", &p->ldr_entry.dll_base);
	offset(l, "_LDR_DATA_TABLE_ENTRY", "SizeOfImage", &p->ldr_entry.size);
	offset(l, "_LDR_DATA_TABLE_ENTRY", "EntryPoint", &p->ldr_entry.entry);
	offset(l, "_LDR_DATA_TABLE_ENTRY", "BaseDllName", &p->ldr_entry.base_name);
	offset(l, "_LDR_DATA_TABLE_ENTRY", "FullDllName", &p->ldr_entry.full_name);
	offset(l, "_UNICODE_STRING", "Length", &p->ustr.length);
	offset(l, "_UNICODE_STRING", "Buffer", &p->ustr.buffer);
	offset(l, "_LIST_ENTRY", "Flink", &p->list.flink);
	offset(l, "_LIST_ENTRY", "Blink", &p->list.blink);
	offset(l, "_KPCR", "Self", &p->kpcr.self);
	offset(l, "_KPCR", "IdtBase", &p->kpcr.idt_base);
	bits(l, "_MMPTE_HARDWARE", "Valid", &p->pte.valid);
	bits(l, "_MMPTE_TRANSITION", "Transition", &p->pte.transition);
	bits(l, "_MMPTE_TRANSITION", "PageFrameNumber", &p->pte.trans_pfn);
	bits(l, "_MMPTE_PROTOTYPE", "Prototype", &p->pte.prototype);
	bits(l, "_MMPTE_PROTOTYPE", "ProtoAddress", &p->pte.proto_address);
	bits(l, "_MMPTE_SOFTWARE", "PageFileHigh", &p->pte.pagefile_high);
}

int win_profile_from_isf(struct isf *isf, const char *path, struct svmtrace_vmi_profile *p,
			 struct svmtrace_error *err)
{
	struct loader l = { isf, err, 0 };

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", path);
	snprintf(p->guid, sizeof(p->guid), "%s", isf_pdb_guid(isf));
	p->age = isf_pdb_age(isf);
	snprintf(p->id, sizeof(p->id), "%s-%u", p->guid, p->age);
	snprintf(p->database, sizeof(p->database), "%s", isf_pdb_database(isf));

	l.rc = isf_symbol(isf, "PsActiveProcessHead", &p->sym.ps_active_process_head, err);
	if (l.rc)
		return vmi_prefix(err, l.rc, "profile lacks what VMI needs");
	optional_symbol(&l, "KiSystemCall64", &p->sym.ki_system_call64);
	optional_symbol(&l, "KiSystemCall64Shadow", &p->sym.ki_system_call64_shadow);
	optional_symbol(&l, "KiDivideErrorFault", &p->sym.ki_divide_error_fault);
	optional_symbol(&l, "KiDivideErrorFaultShadow", &p->sym.ki_divide_error_fault_shadow);
	optional_symbol(&l, "PsInitialSystemProcess", &p->sym.ps_initial_system_process);
	load_structures(&l, p);
	load_threads(&l, p);
	return l.rc;
}

int svmtrace_vmi_profile_load(const char *path, struct svmtrace_vmi_profile **out,
			      struct svmtrace_error *err)
{
	struct svmtrace_vmi_profile *p;
	struct isf *isf;
	int rc;

	*out = NULL;
	rc = isf_load_file(path, &isf, err);
	if (rc)
		return rc;
	p = malloc(sizeof(*p));
	if (!p) {
		isf_free(isf);
		return vmi_fail(err, SVMTRACE_E_NOMEM, "%s: out of memory", path);
	}
	rc = win_profile_from_isf(isf, path, p, err);
	isf_free(isf);
	if (rc) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void svmtrace_vmi_profile_free(struct svmtrace_vmi_profile *profile)
{
	free(profile);
}

const char *svmtrace_vmi_profile_id(const struct svmtrace_vmi_profile *profile)
{
	return profile->id;
}

const char *svmtrace_vmi_profile_path(const struct svmtrace_vmi_profile *profile)
{
	return profile->path;
}
