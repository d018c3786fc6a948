// SPDX-License-Identifier: GPL-2.0
/* svmtrace-vmi ps: the process list. */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/cli.h"

#include <stdio.h>
#include <stdlib.h>

/* An address column: hex, or "-" for none. */
static const char *column(char *buf, uint64_t v)
{
	if (!v)
		return "-";
	snprintf(buf, 19, "0x%016llx", (unsigned long long)v);
	return buf;
}

static json_object *process_json(const struct svmtrace_vmi_process *p)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_uint64(p->pid));
	json_object_object_add(o, "ppid", json_object_new_uint64(p->ppid));
	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "eprocess", vmi_json_hex(p->eprocess));
	json_object_object_add(o, "dtb", vmi_json_hex(p->dtb));
	json_object_object_add(o, "user_dtb", p->user_dtb ? vmi_json_hex(p->user_dtb) : NULL);
	json_object_object_add(o, "dtb_raw", vmi_json_hex(p->dtb_raw));
	json_object_object_add(o, "user_dtb_raw", vmi_json_hex(p->user_dtb_raw));
	json_object_object_add(o, "peb", p->peb ? vmi_json_hex(p->peb) : NULL);
	json_object_object_add(o, "image_base", p->image_base ? vmi_json_hex(p->image_base) : NULL);
	return o;
}

int cmd_ps(struct vmi_cmd *c, int argc, char **argv)
{
	struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_process *list;
	struct svmtrace_error err;
	size_t n, i;

	if (argc)
		die("ps takes no arguments (got '%s')", argv[0]);
	vmi = vmi_cmd_session(c);
	if (svmtrace_vmi_processes(vmi, &list, &n, &err))
		die("%s", err.message);
	if (c->json) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		for (i = 0; i < n; i++)
			json_object_array_add(a, process_json(&list[i]));
		json_object_object_add(o, "kernel", vmi_json_kernel(vmi));
		json_object_object_add(o, "processes", a);
		vmi_json_print(o);
	} else {
		printf("%-8s %-8s %-15s  %-18s  %-18s  %-18s  %s\n", "PID", "PPID", "NAME", "DTB",
		       "USER-DTB", "PEB", "IMAGE-BASE");
		for (i = 0; i < n; i++) {
			char a[19], b[19], c2[19], d[19];

			printf("%-8llu %-8llu %-15s  %-18s  %-18s  %-18s  %s\n",
			       (unsigned long long)list[i].pid, (unsigned long long)list[i].ppid,
			       list[i].name, column(a, list[i].dtb), column(b, list[i].user_dtb),
			       column(c2, list[i].peb), column(d, list[i].image_base));
		}
	}
	free(list);
	svmtrace_vmi_close(vmi);
	return 0;
}
