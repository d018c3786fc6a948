// SPDX-License-Identifier: GPL-2.0
/*
 * PID -> the guest-physical page of its PE entry point: the process's image
 * base, AddressOfEntryPoint from the image's own headers (present from the
 * moment the section is mapped, before the loader has run), and the entry
 * VA translated through the process's page tables.
 */
#include "lib/vmi/win_pe_reader.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/x86_walk.h"

#include <string.h>

const char *svmtrace_vmi_page_state_name(enum svmtrace_vmi_page_state state)
{
	switch (state) {
	case SVMTRACE_VMI_PAGE_VALID:
		return "valid";
	case SVMTRACE_VMI_PAGE_TRANSITION:
		return "transition";
	case SVMTRACE_VMI_PAGE_PROTOTYPE:
		return "prototype";
	case SVMTRACE_VMI_PAGE_PROTOTYPE_TRANSITION:
		return "prototype-transition";
	}
	return "?";
}

int svmtrace_vmi_resolve(const struct svmtrace_vmi *vmi, uint64_t pid,
			 struct svmtrace_vmi_entry *out, struct svmtrace_error *err)
{
	struct svmtrace_vmi_process *p = &out->process;
	const struct pe_section *sec;
	struct win_pe_ctx ctx;
	struct pe_reader r;
	struct pe_image img;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = svmtrace_vmi_process_find(vmi, pid, p, err);
	if (rc)
		return rc;
	if (!p->image_base)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"PID %llu (%s) has no user-mode image (no PEB and no section "
				"base)",
				(unsigned long long)pid, p->name);
	ctx = (struct win_pe_ctx){ vmi, p->dtb, p->image_base };
	r = win_pe_reader(&ctx);
	rc = pe_parse(&r, &img, err);
	if (rc)
		return vmi_prefix(err, rc, "PID %llu (%s): PE headers of the image at 0x%llx",
				  (unsigned long long)pid, p->name,
				  (unsigned long long)p->image_base);
	out->image_base = p->image_base;
	out->entry_rva = img.entry_rva;
	out->entry_va = p->image_base + img.entry_rva;
	sec = pe_section_of(&img, img.entry_rva);
	if (sec)
		memcpy(out->section, sec->name, sizeof(out->section));
	if (!img.entry_rva)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"PID %llu (%s): the image at 0x%llx has no entry point",
				(unsigned long long)pid, p->name,
				(unsigned long long)p->image_base);
	rc = svmtrace_vmi_translate(vmi, p->dtb, out->entry_va, &out->where, err);
	if (rc)
		return vmi_prefix(err, rc, "PID %llu (%s): entry point VA 0x%llx",
				  (unsigned long long)pid, p->name,
				  (unsigned long long)out->entry_va);
	out->entry_page = out->where.gpa & ~(X86_PAGE_SIZE - 1);
	return 0;
}
