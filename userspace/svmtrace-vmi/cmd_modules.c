// SPDX-License-Identifier: GPL-2.0
/* svmtrace-vmi modules PID: the PEB loader list. */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/cli.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_modules(struct vmi_cmd *c, int argc, char **argv)
{
	struct svmtrace_vmi_module *list;
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	size_t n, i;
	uint64_t pid;

	if (argc != 1)
		die("modules takes one PID");
	pid = vmi_cmd_pid(argv[0]);
	vmi = vmi_cmd_session(c);
	if (svmtrace_vmi_modules(vmi, pid, &list, &n, &err))
		die("%s", err.message);
	if (c->json) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		for (i = 0; i < n; i++) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "base", vmi_json_hex(list[i].base));
			json_object_object_add(m, "size", vmi_json_hex(list[i].size));
			json_object_object_add(m, "entry", vmi_json_hex(list[i].entry));
			json_object_object_add(m, "name", json_object_new_string(list[i].name));
			json_object_object_add(m, "path", json_object_new_string(list[i].path));
			json_object_array_add(a, m);
		}
		json_object_object_add(o, "pid", json_object_new_uint64(pid));
		json_object_object_add(o, "modules", a);
		vmi_json_print(o);
	} else {
		printf("%-18s  %-10s  %-18s  %-24s  %s\n", "BASE", "SIZE", "ENTRY", "NAME", "PATH");
		for (i = 0; i < n; i++)
			printf("0x%016llx  0x%08x  0x%016llx  %-24s  %s\n",
			       (unsigned long long)list[i].base, list[i].size,
			       (unsigned long long)list[i].entry, list[i].name, list[i].path);
	}
	free(list);
	svmtrace_vmi_close(vmi);
	return 0;
}
