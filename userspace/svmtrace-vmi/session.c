// SPDX-License-Identifier: GPL-2.0
/* Helpers the subcommands share: session, PID argument, JSON values. */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/capture.h"
#include "common/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int vmi_cmd_attach(pid_t pid)
{
	int ctl = control_open(), vm_fd_number = -1, pidfd;
	int vm_fd = control_vm_fd(pid, &vm_fd_number, &pidfd);

	control_attach(ctl, vm_fd, pid, vm_fd_number);
	close(vm_fd);
	close(pidfd);
	return ctl;
}

struct svmtrace_vmi *vmi_cmd_session(struct vmi_cmd *c)
{
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;

	if (svmtrace_vmi_open(c->mem, c->profiles, &vmi, &err))
		die("%s", err.message);
	return vmi;
}

uint64_t vmi_cmd_pid(const char *arg)
{
	if (!arg)
		die("a PID is required (see svmtrace-vmi ps)");
	return parse_u64(arg, "PID");
}

json_object *vmi_json_hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)v);
	return json_object_new_string(buf);
}

json_object *vmi_json_kernel(const struct svmtrace_vmi *vmi)
{
	const struct svmtrace_vmi_kernel *k = svmtrace_vmi_kernel(vmi);
	json_object *o = json_object_new_object();

	json_object_object_add(o, "base", vmi_json_hex(k->base));
	json_object_object_add(o, "dtb", vmi_json_hex(k->dtb));
	json_object_object_add(o, "paging_levels", json_object_new_int((int)k->paging_levels));
	json_object_object_add(o, "pdb", json_object_new_string(k->pdb_name));
	json_object_object_add(o, "pdb_id", json_object_new_string(k->id));
	json_object_object_add(o, "method",
			       json_object_new_string(svmtrace_vmi_method_name(k->method)));
	json_object_object_add(
		o, "profile",
		json_object_new_string(svmtrace_vmi_profile_path(svmtrace_vmi_profile(vmi))));
	return o;
}

void vmi_json_print(json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}
