// SPDX-License-Identifier: GPL-2.0
/* Sessions: memory + kernel + a profile that matches it. */
#include "lib/vmi/win_session.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/x86_walk.h"

#include <stdlib.h>
#include <strings.h>

/* The profile must be this kernel's, and its process list head must be readable. */
static int attach(struct svmtrace_vmi *vmi, struct svmtrace_error *err)
{
	const struct svmtrace_vmi_kernel *k = &vmi->kernel;
	const struct svmtrace_vmi_profile *p = vmi->profile;
	uint64_t head = k->base + p->sym.ps_active_process_head, flink;
	int rc;

	if (strcasecmp(p->id, k->id))
		return vmi_fail(err, SVMTRACE_E_MISMATCH,
				"profile %s is for kernel PDB GUID %s age %u, but the kernel in "
				"memory (at 0x%llx, found by %s) has PDB GUID-age %s",
				p->path, p->guid, p->age, (unsigned long long)k->base,
				svmtrace_vmi_method_name(k->method), k->id);
	rc = win_read_u64(vmi, k->dtb, head, &flink, err);
	if (rc)
		return vmi_prefix(err, SVMTRACE_E_CORRUPT,
				  "PsActiveProcessHead at VA 0x%llx (kernel 0x%llx + RVA 0x%llx)",
				  (unsigned long long)head, (unsigned long long)k->base,
				  (unsigned long long)p->sym.ps_active_process_head);
	return 0;
}

static int session_new(const struct svmtrace_vmi_mem *mem, struct svmtrace_vmi **out,
		       struct svmtrace_error *err)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "out of memory");
	(*out)->mem = mem;
	return 0;
}

int svmtrace_vmi_open_profile(const struct svmtrace_vmi_mem *mem,
			      const struct svmtrace_vmi_profile *profile, struct svmtrace_vmi **out,
			      struct svmtrace_error *err)
{
	struct svmtrace_vmi *vmi;
	int rc = session_new(mem, &vmi, err);

	*out = NULL;
	if (rc)
		return rc;
	vmi->profile = profile;
	rc = svmtrace_vmi_kernel_find(mem, profile, &vmi->kernel, err);
	if (!rc)
		rc = attach(vmi, err);
	if (rc) {
		svmtrace_vmi_close(vmi);
		return rc;
	}
	*out = vmi;
	return 0;
}

int svmtrace_vmi_open(const struct svmtrace_vmi_mem *mem, const char *profiles,
		      struct svmtrace_vmi **out, struct svmtrace_error *err)
{
	struct svmtrace_vmi *vmi;
	int rc = session_new(mem, &vmi, err);

	*out = NULL;
	if (rc)
		return rc;
	rc = svmtrace_vmi_kernel_find(mem, NULL, &vmi->kernel, err);
	if (!rc)
		rc = svmtrace_vmi_profile_find(profiles, vmi->kernel.id, &vmi->owned_profile, err);
	if (!rc) {
		vmi->profile = vmi->owned_profile;
		rc = attach(vmi, err);
	}
	/* The same method again, now that the profile can name its anchor
	 * (kept as found when the anchor is not the symbol it should be). */
	if (!rc) {
		struct svmtrace_vmi_kernel named;

		if (!svmtrace_vmi_kernel_probe(mem, vmi->profile, vmi->kernel.method, &named, NULL) &&
		    named.base == vmi->kernel.base)
			vmi->kernel = named;
	}
	if (rc) {
		svmtrace_vmi_close(vmi);
		return rc;
	}
	*out = vmi;
	return 0;
}

void svmtrace_vmi_close(struct svmtrace_vmi *vmi)
{
	if (!vmi)
		return;
	svmtrace_vmi_profile_free(vmi->owned_profile);
	free(vmi);
}

const struct svmtrace_vmi_kernel *svmtrace_vmi_kernel(const struct svmtrace_vmi *vmi)
{
	return &vmi->kernel;
}

const struct svmtrace_vmi_profile *svmtrace_vmi_profile(const struct svmtrace_vmi *vmi)
{
	return vmi->profile;
}
