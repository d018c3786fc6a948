// SPDX-License-Identifier: GPL-2.0
/* svmtrace-vmi resolve PID: what svmtraced arms the gate with. */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/cli.h"

#include <stdio.h>

static json_object *entry_json(const struct svmtrace_vmi_entry *e, int rc,
			       const struct svmtrace_error *err)
{
	const struct svmtrace_vmi_process *p = &e->process;
	json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_uint64(p->pid));
	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "dtb", vmi_json_hex(p->dtb));
	json_object_object_add(o, "user_dtb", p->user_dtb ? vmi_json_hex(p->user_dtb) : NULL);
	json_object_object_add(o, "image_base", vmi_json_hex(e->image_base));
	json_object_object_add(o, "entry_rva", vmi_json_hex(e->entry_rva));
	json_object_object_add(o, "entry_va", vmi_json_hex(e->entry_va));
	json_object_object_add(o, "section", json_object_new_string(e->section));
	json_object_object_add(o, "resident", json_object_new_boolean(!rc));
	if (rc) {
		json_object_object_add(o, "reason", json_object_new_string(err->message));
		return o;
	}
	json_object_object_add(o, "entry_gpa", vmi_json_hex(e->where.gpa));
	json_object_object_add(o, "entry_page", vmi_json_hex(e->entry_page));
	json_object_object_add(o, "page_size", json_object_new_uint64(e->where.page_size));
	json_object_object_add(
		o, "state", json_object_new_string(svmtrace_vmi_page_state_name(e->where.state)));
	json_object_object_add(o, "pte", vmi_json_hex(e->where.pte));
	if (e->where.prototype_va)
		json_object_object_add(o, "prototype_pte_va", vmi_json_hex(e->where.prototype_va));
	return o;
}

static void print_entry(const struct svmtrace_vmi_entry *e)
{
	const struct svmtrace_vmi_process *p = &e->process;

	printf("pid:         %llu\n", (unsigned long long)p->pid);
	printf("name:        %s\n", p->name);
	printf("dtb:         0x%016llx\n", (unsigned long long)p->dtb);
	if (p->user_dtb)
		printf("user-dtb:    0x%016llx\n", (unsigned long long)p->user_dtb);
	else
		printf("user-dtb:    -\n");
	printf("image-base:  0x%016llx\n", (unsigned long long)e->image_base);
	printf("entry-rva:   0x%x\n", e->entry_rva);
	printf("entry-va:    0x%016llx\n", (unsigned long long)e->entry_va);
	printf("section:     %s\n", e->section[0] ? e->section : "-");
	printf("entry-gpa:   0x%016llx\n", (unsigned long long)e->where.gpa);
	printf("entry-page:  0x%016llx\n", (unsigned long long)e->entry_page);
	printf("page-size:   0x%llx\n", (unsigned long long)e->where.page_size);
	printf("state:       %s\n", svmtrace_vmi_page_state_name(e->where.state));
	printf("pte:         0x%016llx\n", (unsigned long long)e->where.pte);
	if (e->where.prototype_va)
		printf("prototype:   0x%016llx\n", (unsigned long long)e->where.prototype_va);
}

int cmd_resolve(struct vmi_cmd *c, int argc, char **argv)
{
	struct svmtrace_vmi_entry e;
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	uint64_t pid;
	int rc;

	if (argc != 1)
		die("resolve takes one PID");
	pid = vmi_cmd_pid(argv[0]);
	vmi = vmi_cmd_session(c);
	rc = svmtrace_vmi_resolve(vmi, pid, &e, &err);
	if (rc && rc != SVMTRACE_E_NOT_RESIDENT)
		die("%s", err.message);
	if (c->json)
		vmi_json_print(entry_json(&e, rc, &err));
	else if (!rc)
		print_entry(&e);
	svmtrace_vmi_close(vmi);
	if (rc) {
		warn("not resident: %s", err.message);
		return EXIT_NOT_RESIDENT;
	}
	return 0;
}
