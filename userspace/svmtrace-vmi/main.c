// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-vmi: look inside a Windows guest's memory -- list processes,
 * resolve a PID to its CR3 values and entry-point page, list its modules.
 */
#include "svmtrace-vmi/vmi_cmd.h"
#include "common/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"Usage: svmtrace-vmi --memory FILE --profiles DIR|FILE [--json] COMMAND [ARG]\n"
	"       svmtrace-vmi --vmm-pid PID --profiles DIR|FILE [--json] COMMAND [ARG]\n"
	"\n"
	"Introspect a Windows x64 guest's memory: a dump, or a running VM's.\n"
	"\n"
	"Commands:\n"
	"  ps             list processes: PID, parent, name, DTB, user DTB, PEB, image base\n"
	"  resolve PID    CR3 values, image base, entry VA and the guest-physical page\n"
	"                 holding the PE entry point (exit 3 when it is not resident)\n"
	"  modules PID    the process's loaded modules (base, size, entry, name, path)\n"
	"  kernel         where the kernel is, as each discovery method sees it\n"
	"  threads [PID]  where every thread begins (ntdll!LdrInitializeThunk, from the\n"
	"                 kernel's record checked against ntdll's exports); with a PID,\n"
	"                 its threads (TID, ETHREAD, TEB, start addresses)\n"
	"\n"
	"Options:\n"
	"  -m, --memory FILE     QEMU ELF core (virsh dump --memory-only --format=elf)\n"
	"                        or raw physical memory image\n"
	"  -V, --vmm-pid PID     the running VM of this VMM (QEMU) process, read through\n"
	"                        /dev/svmtrace (root; not while a capture holds the VM)\n"
	"  -p, --profiles PATH   volatility3 ISF profile, or a directory searched for the\n"
	"                        one matching the kernel's PDB GUID (default:\n"
	"                        $SVMTRACE_PROFILES)\n"
	"  -j, --json            machine-readable JSON output\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: 0 success, 1 error, 2 usage, 3 entry page not resident.\n";

__attribute__((noreturn)) static void usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s%s\nTry 'svmtrace-vmi --help'.\n", cli_progname, what, arg);
	exit(EXIT_USAGE);
}

static const struct {
	const char *name;
	int (*run)(struct vmi_cmd *c, int argc, char **argv);
} commands[] = {
	{ "ps", cmd_ps },	  { "resolve", cmd_resolve }, { "modules", cmd_modules },
	{ "kernel", cmd_kernel }, { "threads", cmd_threads },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "memory", required_argument, NULL, 'm' },
		{ "vmm-pid", required_argument, NULL, 'V' },
		{ "profiles", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vmi_cmd c = { .profiles = getenv("SVMTRACE_PROFILES") };
	struct svmtrace_error err;
	const char *vmm_pid = NULL;
	size_t i;
	int opt, rc, ctl = -1;

	cli_progname = "svmtrace-vmi";
	while ((opt = getopt_long(argc, argv, "m:V:p:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			c.memory = optarg;
			break;
		case 'V':
			vmm_pid = optarg;
			break;
		case 'p':
			c.profiles = optarg;
			break;
		case 'j':
			c.json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			usage_error("bad option", "");
		}
	}
	if (optind >= argc)
		usage_error("a command is required (ps, resolve, modules, kernel)", "");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[optind], commands[i].name))
			break;
	if (i == sizeof(commands) / sizeof(commands[0]))
		usage_error("unknown command: ", argv[optind]);
	if (!c.memory == !vmm_pid)
		usage_error("one of --memory FILE and --vmm-pid PID is required", "");
	if (!c.profiles)
		usage_error("--profiles DIR|FILE (or $SVMTRACE_PROFILES) is required", "");
	if (vmm_pid) {
		ctl = vmi_cmd_attach((pid_t)parse_u64(vmm_pid, "--vmm-pid"));
		c.memory = "live VM";
		if (svmtrace_vmi_mem_open_live(ctl, &c.mem, &err))
			die("%s", err.message);
	} else if (svmtrace_vmi_mem_open(c.memory, &c.mem, &err)) {
		die("%s", err.message);
	}
	rc = commands[i].run(&c, argc - optind - 1, argv + optind + 1);
	svmtrace_vmi_mem_close(c.mem);
	if (ctl >= 0)
		close(ctl); /* detaches */
	return rc;
}
