// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-vmi threads [PID]: where threads begin, and a process's command
 * line and threads.
 */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/cli.h"

#include <stdio.h>
#include <stdlib.h>

static json_object *start_json(const struct svmtrace_vmi_thread_start *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ldr_initialize_thunk", vmi_json_hex(s->ldr_initialize_thunk));
	json_object_object_add(o, "rtl_user_thread_start", vmi_json_hex(s->rtl_user_thread_start));
	json_object_object_add(o, "source", json_object_new_string(s->source));
	json_object_object_add(o, "ntdll_base", vmi_json_hex(s->ntdll_base));
	json_object_object_add(o, "check", json_object_new_string(s->check));
	return o;
}

static json_object *threads_json(const struct svmtrace_vmi_thread *t, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "tid", json_object_new_uint64(t[i].tid));
		json_object_object_add(o, "pid", json_object_new_uint64(t[i].pid));
		json_object_object_add(o, "ethread", vmi_json_hex(t[i].ethread));
		json_object_object_add(o, "teb", vmi_json_hex(t[i].teb));
		json_object_object_add(o, "start_address", vmi_json_hex(t[i].start_address));
		json_object_object_add(o, "win32_start_address",
				       vmi_json_hex(t[i].win32_start_address));
		json_object_array_add(a, o);
	}
	return a;
}

int cmd_threads(struct vmi_cmd *c, int argc, char **argv)
{
	struct svmtrace_vmi_thread_start s;
	struct svmtrace_vmi_thread *list = NULL;
	struct svmtrace_error err;
	struct svmtrace_vmi *vmi;
	size_t n = 0, i;
	uint64_t pid = 0;
	char why[512], cmd[1024];
	bool started;

	if (argc > 1)
		die("threads takes at most one PID");
	if (argc)
		pid = vmi_cmd_pid(argv[0]);
	vmi = vmi_cmd_session(c);
	/* Where threads begin: required alone, a line of its own beside a PID's threads. */
	started = !svmtrace_vmi_thread_start(vmi, &s, &err);
	if (!started && !argc)
		die("%s", err.message);
	if (!started)
		snprintf(why, sizeof(why), "%s", err.message);
	if (argc && svmtrace_vmi_threads(vmi, pid, &list, &n, &err))
		die("%s", err.message);
	if (argc && svmtrace_vmi_command_line(vmi, pid, cmd, sizeof(cmd), &err))
		snprintf(cmd, sizeof(cmd), "(%s)", err.message);
	if (c->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "thread_start",
				       started ? start_json(&s) : json_object_new_string(why));
		if (argc) {
			json_object_object_add(o, "pid", json_object_new_uint64(pid));
			json_object_object_add(o, "command_line", json_object_new_string(cmd));
			json_object_object_add(o, "threads", threads_json(list, n));
		}
		vmi_json_print(o);
	} else {
		if (started) {
			printf("first instruction: 0x%016llx  ntdll!LdrInitializeThunk (%s)\n",
			       (unsigned long long)s.ldr_initialize_thunk, s.source);
			printf("thread start:      0x%016llx  ntdll!RtlUserThreadStart\n",
			       (unsigned long long)s.rtl_user_thread_start);
			printf("check:             %s\n", s.check);
		} else {
			printf("thread start:      not known: %s\n", why);
		}
		if (argc)
			printf("command line:      %s\n", cmd);
		if (argc)
			printf("%-8s  %-18s  %-18s  %-18s  %s\n", "TID", "ETHREAD", "TEB", "START",
			       "WIN32START");
		for (i = 0; i < n; i++)
			printf("%-8llu  0x%016llx  0x%016llx  0x%016llx  0x%016llx\n",
			       (unsigned long long)list[i].tid, (unsigned long long)list[i].ethread,
			       (unsigned long long)list[i].teb,
			       (unsigned long long)list[i].start_address,
			       (unsigned long long)list[i].win32_start_address);
	}
	free(list);
	svmtrace_vmi_close(vmi);
	return 0;
}
