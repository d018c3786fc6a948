// SPDX-License-Identifier: GPL-2.0
/* A process's modules (PEB.Ldr.InLoadOrderModuleList) and command line. */
#include "lib/vmi/win_session.h"
#include "lib/vmi/vmi_error.h"

#include <stdlib.h>
#include <string.h>

#define WIN_MAX_MODULES 16384

struct modules {
	const struct svmtrace_vmi *vmi;
	uint64_t dtb;
	struct svmtrace_vmi_module *list;
	size_t count, cap;
};

static int module_one(void *ctx, uint64_t link, struct svmtrace_error *err)
{
	struct modules *m = ctx;
	const struct svmtrace_vmi_profile *p = m->vmi->profile;
	uint64_t entry = link - p->ldr_entry.links;
	struct svmtrace_vmi_module *mod;
	int rc;

	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		struct svmtrace_vmi_module *l = realloc(m->list, cap * sizeof(*l));

		if (!l)
			return vmi_fail(err, SVMTRACE_E_NOMEM, "module list: out of memory");
		m->list = l;
		m->cap = cap;
	}
	mod = &m->list[m->count];
	memset(mod, 0, sizeof(*mod));
	rc = win_read_u64(m->vmi, m->dtb, entry + p->ldr_entry.dll_base, &mod->base, err);
	if (!rc)
		rc = win_read_u32(m->vmi, m->dtb, entry + p->ldr_entry.size, &mod->size, err);
	if (!rc)
		rc = win_read_u64(m->vmi, m->dtb, entry + p->ldr_entry.entry, &mod->entry, err);
	if (!rc)
		rc = win_read_unicode(m->vmi, m->dtb, entry + p->ldr_entry.base_name, mod->name,
				      sizeof(mod->name), err);
	if (!rc)
		rc = win_read_unicode(m->vmi, m->dtb, entry + p->ldr_entry.full_name, mod->path,
				      sizeof(mod->path), err);
	if (rc)
		return vmi_prefix(err, rc, "LDR_DATA_TABLE_ENTRY at VA 0x%llx",
				  (unsigned long long)entry);
	m->count++;
	return 0;
}

int svmtrace_vmi_modules(const struct svmtrace_vmi *vmi, uint64_t pid,
			 struct svmtrace_vmi_module **list, size_t *count,
			 struct svmtrace_error *err)
{
	struct svmtrace_vmi_process proc;
	struct modules m = { vmi, 0, NULL, 0, 0 };
	uint64_t ldr;
	int rc;

	*list = NULL;
	*count = 0;
	rc = svmtrace_vmi_process_find(vmi, pid, &proc, err);
	if (rc)
		return rc;
	if (!proc.peb)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"PID %llu (%s) has no PEB: a kernel process has no loader list",
				(unsigned long long)pid, proc.name);
	m.dtb = proc.dtb;
	rc = win_read_u64(vmi, proc.dtb, proc.peb + vmi->profile->peb.ldr, &ldr, err);
	if (rc)
		return vmi_prefix(err, rc, "PID %llu (%s): PEB at VA 0x%llx",
				  (unsigned long long)pid, proc.name, (unsigned long long)proc.peb);
	if (!ldr)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"PID %llu (%s): PEB.Ldr is NULL: the loader has not run yet (a "
				"process that was just created)",
				(unsigned long long)pid, proc.name);
	rc = win_list_walk(vmi, proc.dtb, ldr + vmi->profile->ldr_load_order, WIN_MAX_MODULES,
			   "module list (PEB.Ldr.InLoadOrderModuleList)", module_one, &m, err);
	if (rc) {
		free(m.list);
		return vmi_prefix(err, rc, "PID %llu (%s)", (unsigned long long)pid, proc.name);
	}
	*list = m.list;
	*count = m.count;
	return 0;
}

int svmtrace_vmi_command_line(const struct svmtrace_vmi *vmi, uint64_t pid, char *out, size_t size,
			      struct svmtrace_error *err)
{
	const struct svmtrace_vmi_profile *prof = vmi->profile;
	struct svmtrace_vmi_process proc;
	uint64_t params;
	int rc;

	out[0] = '\0';
	if (!prof->cmdline.present)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
				"profile lacks _PEB.ProcessParameters or "
				"_RTL_USER_PROCESS_PARAMETERS.CommandLine");
	rc = svmtrace_vmi_process_find(vmi, pid, &proc, err);
	if (rc)
		return rc;
	if (!proc.peb)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "PID %llu (%s) has no PEB",
				(unsigned long long)pid, proc.name);
	rc = win_read_u64(vmi, proc.dtb, proc.peb + prof->cmdline.params, &params, err);
	if (!rc && !params)
		rc = vmi_fail(err, SVMTRACE_E_NOT_FOUND, "PEB.ProcessParameters is NULL");
	if (!rc)
		rc = win_read_unicode(vmi, proc.dtb, params + prof->cmdline.command_line, out, size,
				      err);
	return rc ? vmi_prefix(err, rc, "PID %llu (%s): command line", (unsigned long long)pid,
			       proc.name)
		  : 0;
}
