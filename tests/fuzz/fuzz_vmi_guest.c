// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: guest memory.  The input is a memory file (a QEMU ELF
 * core, or a raw image); with the Windows 10 profile it goes through the
 * whole pipeline: ELF parsing, kernel discovery (every method), page walks
 * with Windows PTE states, the process list, PE headers and loader lists,
 * thread lists, command lines and where threads begin.
 * Nothing may crash or hang whatever the guest memory says.
 */
#include <svmtrace/vmi.h>

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct svmtrace_vmi_profile *profile;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct svmtrace_error err;

	(void)argc;
	(void)argv;
	if (svmtrace_vmi_profile_load(VMI_FUZZ_PROFILE, &profile, &err)) {
		fprintf(stderr, "fuzz_vmi_guest: %s\n", err.message);
		exit(1);
	}
	return 0;
}

static void each_process(const struct svmtrace_vmi *vmi)
{
	struct svmtrace_vmi_thread_start start;
	struct svmtrace_vmi_process *list;
	struct svmtrace_vmi_module *mods;
	struct svmtrace_vmi_thread *threads;
	struct svmtrace_error err;
	struct svmtrace_vmi_entry e;
	char cmdline[256];
	size_t n, i, nm;

	if (svmtrace_vmi_processes(vmi, &list, &n, &err))
		return;
	for (i = 0; i < n && i < 32; i++) {
		svmtrace_vmi_resolve(vmi, list[i].pid, &e, &err);
		if (!svmtrace_vmi_modules(vmi, list[i].pid, &mods, &nm, &err))
			free(mods);
		if (!svmtrace_vmi_threads(vmi, list[i].pid, &threads, &nm, &err))
			free(threads);
		svmtrace_vmi_command_line(vmi, list[i].pid, cmdline, sizeof(cmdline), &err);
	}
	free(list);
	svmtrace_vmi_thread_start(vmi, &start, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct svmtrace_vmi_mem *mem;
	struct svmtrace_error err;
	struct svmtrace_vmi_kernel k;
	struct svmtrace_vmi *vmi;
	int m;

	if (svmtrace_vmi_mem_open_buffer(data, size, "fuzz", &mem, &err))
		return 0;
	for (m = 0; m < SVMTRACE_VMI_METHOD_COUNT; m++)
		svmtrace_vmi_kernel_probe(mem, profile, m, &k, &err);
	if (!svmtrace_vmi_open_profile(mem, profile, &vmi, &err)) {
		each_process(vmi);
		svmtrace_vmi_close(vmi);
	}
	svmtrace_vmi_mem_close(mem);
	return 0;
}
