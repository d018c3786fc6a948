// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-vmi kernel: the kernel, its profile, and what each discovery
 * method finds (they must agree; a method the source cannot serve says why).
 */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/cli.h"

#include <stdio.h>

/* Bytes of guest memory the source holds. */
static uint64_t memory_bytes(const struct svmtrace_vmi_mem *mem)
{
	uint64_t total = 0, gpa, size;
	unsigned int i;

	for (i = 0; i < svmtrace_vmi_mem_range_count(mem); i++) {
		svmtrace_vmi_mem_range(mem, i, &gpa, &size);
		total += size;
	}
	return total;
}

/* What one method found and how. */
static void found_json(json_object *r, const struct svmtrace_vmi_kernel *k)
{
	json_object_object_add(r, "base", vmi_json_hex(k->base));
	json_object_object_add(r, "dtb", vmi_json_hex(k->dtb));
	json_object_object_add(r, "paging_levels", json_object_new_int((int)k->paging_levels));
	json_object_object_add(r, "anchor", vmi_json_hex(k->anchor));
	json_object_object_add(r, "anchor_symbol",
			       k->anchor_symbol[0] ? json_object_new_string(k->anchor_symbol)
						   : NULL);
	json_object_object_add(r, "source", json_object_new_string(k->source));
}

int cmd_kernel(struct vmi_cmd *c, int argc, char **argv)
{
	const struct svmtrace_vmi_profile *prof;
	json_object *o = NULL, *methods = NULL;
	struct svmtrace_vmi_kernel k;
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	int m;

	if (argc)
		die("kernel takes no arguments (got '%s')", argv[0]);
	vmi = vmi_cmd_session(c);
	prof = svmtrace_vmi_profile(vmi);
	k = *svmtrace_vmi_kernel(vmi);
	if (c->json) {
		o = json_object_new_object();
		methods = json_object_new_object();
		json_object_object_add(o, "memory", json_object_new_string(c->memory));
		json_object_object_add(o, "source",
				       json_object_new_string(svmtrace_vmi_mem_kind(c->mem)));
		json_object_object_add(o, "vcpus",
				       json_object_new_uint64(svmtrace_vmi_mem_vcpu_count(c->mem)));
		json_object_object_add(
			o, "ranges", json_object_new_uint64(svmtrace_vmi_mem_range_count(c->mem)));
		json_object_object_add(o, "bytes", json_object_new_uint64(memory_bytes(c->mem)));
		json_object_object_add(o, "kernel", vmi_json_kernel(vmi));
	} else {
		printf("memory:      %s (%s, %u ranges, %llu MiB, %u vCPU records)\n", c->memory,
		       svmtrace_vmi_mem_kind(c->mem), svmtrace_vmi_mem_range_count(c->mem),
		       (unsigned long long)(memory_bytes(c->mem) >> 20),
		       svmtrace_vmi_mem_vcpu_count(c->mem));
		printf("kernel-base: 0x%016llx\n", (unsigned long long)k.base);
		printf("kernel-dtb:  0x%016llx\n", (unsigned long long)k.dtb);
		printf("paging:      %u levels%s\n", k.paging_levels,
		       k.paging_levels == 5 ? " (LA57)" : "");
		printf("pdb:         %s %s\n", k.pdb_name, k.id);
		printf("profile:     %s\n", svmtrace_vmi_profile_path(prof));
		printf("found-by:    %s\n", svmtrace_vmi_method_name(k.method));
	}
	for (m = 0; m < SVMTRACE_VMI_METHOD_COUNT; m++) {
		int rc = svmtrace_vmi_kernel_probe(c->mem, prof, m, &k, &err);

		if (c->json) {
			json_object *r = json_object_new_object();

			json_object_object_add(r, "ok", json_object_new_boolean(!rc));
			if (rc)
				json_object_object_add(r, "error",
						       json_object_new_string(err.message));
			else
				found_json(r, &k);
			json_object_object_add(methods, svmtrace_vmi_method_name(m), r);
		} else if (rc) {
			printf("method %-10s -  %s\n", svmtrace_vmi_method_name(m), err.message);
		} else {
			printf("method %-10s 0x%016llx  from 0x%016llx%s%s (%s)\n",
			       svmtrace_vmi_method_name(m), (unsigned long long)k.base,
			       (unsigned long long)k.anchor, k.anchor_symbol[0] ? " = " : "",
			       k.anchor_symbol, k.source);
		}
	}
	if (c->json) {
		json_object_object_add(o, "methods", methods);
		vmi_json_print(o);
	}
	svmtrace_vmi_close(vmi);
	return 0;
}
