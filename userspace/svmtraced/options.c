// SPDX-License-Identifier: GPL-2.0
/* svmtraced's command line: every mistake dies with the argument named. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

const char options_usage[] =
	"usage: svmtraced (--domain DOMAIN [--connect URI] | --vmm-pid PID [--vm-fd N])\n"
	"                 (--pid N | --name IMAGE [--newest] | --wait-name IMAGE)\n"
	"                 [--from entry|next|first] [--follow [--max-processes N]]\n"
	"                 [--resolve-timeout S] [--profiles PATH]\n"
	"                 [--out DIR] [--policy drop|block] [--kernel] [--rip-range A-B]...\n"
	"                 [--duration S] [--max-records N] [--max-bytes N[K|M|G]]\n"
	"                 [--ring-slots N] [--wake-batch N] [--socket PATH] [--no-code]\n"
	"                 [--xstate] [--mem] [--anchor-interval N] [--hide-time [--time-costs I,T,E]]\n"
	"                 [--audit] [--quiet]\n"
	"       svmtraced status [--socket PATH]\n"
	"       svmtraced stop [--socket PATH]\n"
	"Trace every user-mode instruction of a process in a running Windows VM (KVM on\n"
	"AMD with svmtrace's kvm-amd) into per-vCPU v5 files and capture.json.\n"
	"\n"
	"  --domain DOMAIN       libvirt domain: name, UUID or ID (running, KVM, this host)\n"
	"  --connect URI         libvirt URI (default: LIBVIRT_DEFAULT_URI, then qemu:///system)\n"
	"  --vmm-pid PID         the process that owns the VM, without libvirt\n"
	"  --vm-fd N             the VM's fd number in that process (default: its only VM)\n"
	"  --pid N               the target process (its PID in the guest)\n"
	"  --name IMAGE          every live process of this image name (at most 8)\n"
	"  --newest              with --name: only the newest such process\n"
	"  --wait-name IMAGE     wait for a new process of this image, trace it from its entry\n"
	"                        (the kernel holds every new thread's first instruction until\n"
	"                        svmtraced has looked at its process; svmtraced(8) says what\n"
	"                        window is left)\n"
	"  --from entry|next|first\n"
	"                        start at the PE entry point (default); next: also at the next\n"
	"                        user-mode instruction of a running process (any VM exit in it);\n"
	"                        first: at every thread's first user-mode instruction\n"
	"                        (ntdll!LdrInitializeThunk: the loader, TLS callbacks and\n"
	"                        DllMain calls before the entry point, and every later thread)\n"
	"  --follow              with --from first: also every process the target creates,\n"
	"                        recursively, each from its first instruction\n"
	"  --max-processes N     with --follow: trace at most N processes in all (default 128);\n"
	"                        the rest run untraced, listed in capture.json lost\n"
	"  --resolve-timeout S   wait at most S seconds for the image headers to become\n"
	"                        resident (default 60; a non-resident entry page is watched)\n"
	"  --profiles PATH       ISF profile directory or file (default " SVMTRACED_PROFILES ")\n"
	"  --out DIR             output directory (default: a new one named after the\n"
	"                        domain, the PID and the time)\n"
	"  --policy drop|block   full ring: count the step as dropped (default) or make the\n"
	"                        vCPU wait for room (lossless)\n"
	"  --kernel              record kernel-mode (CPL 0) steps too\n"
	"  --rip-range A-B       record only steps whose RIP is in [A, B); repeat (at most 16)\n"
	"  --duration S          stop after S seconds of capture\n"
	"  --max-records N       stop once N records are written\n"
	"  --max-bytes N         disk budget of all trace files (K, M, G suffixes): stop\n"
	"                        before it is passed\n"
	"  --ring-slots N        slots per vCPU ring, a power of two (default 65536)\n"
	"  --wake-batch N        wake the daemon every N slots (default ring-slots/16)\n"
	"  --xstate              record YMM0-15 and XSTATE_BV with every step (768-byte ring\n"
	"                        slots: --ring-slots at most 1048576)\n" CAPTURE_MEM_HELP
	"  --anchor-interval N   a full record every N records in the files (default 256;\n"
	"                        smaller: a TSC more often, larger files)\n" CAPTURE_TIME_HELP
	"  --socket PATH         status socket (default " SVMTRACED_SOCKET_DIR
	"/svmtraced-PID.sock)\n"
	"  --no-code             no code.bin (code pages as executed) and no re-walk of the\n"
	"                        loader list for modules loaded while tracing\n"
	"  --audit               count the VM's #DB and NPF exits with eBPF (kvm tracepoints)\n"
	"                        and check per vCPU that they balance the records; the\n"
	"                        result goes to capture.json, a mismatch fails the run\n"
	"  --quiet               no progress line\n"
	"  -h, --help            this text\n"
	"\n"
	"Commands:\n"
	"  status                print the state of every running svmtraced\n"
	"  stop                  end a running capture (like SIGTERM)\n"
	"\n"
	"SIGINT/SIGTERM stop the capture cleanly, SIGUSR1 pauses and SIGUSR2 resumes.\n"
	"\"armed pid=N cr3=0x... gate=0x...\" is printed on stdout once armed, a summary\n"
	"at the end.  See svmtraced(8).\n";

/* A byte count with an optional binary K, M, G or T suffix. */
static uint64_t parse_bytes(const char *arg, const char *what)
{
	static const char units[] = "KMGT";
	char buf[64];
	size_t n = strlen(arg);
	const char *u;
	uint64_t v, mul = 1;

	if (!n || n >= sizeof(buf))
		die("%s: expected a byte count, got '%s'", what, arg);
	strcpy(buf, arg);
	u = strchr(units, buf[n - 1] & ~0x20);
	if (buf[n - 1] && u) {
		mul = 1ULL << (10 * (u - units + 1));
		buf[n - 1] = '\0';
	}
	v = parse_u64(buf, what);
	if (!v || v > UINT64_MAX / mul)
		die("%s: expected a byte count > 0, got '%s'", what, arg);
	return v * mul;
}

static void check_image(const char *arg, const char *what)
{
	if (!*arg || strlen(arg) > 255 || strchr(arg, '\\') || strchr(arg, '/'))
		die("%s '%s': expected an image file name such as sample.exe", what, arg);
}

static void validate(struct daemon_options *o, bool max_procs_set)
{
	const struct svmtrace_target *t = &o->target;
	int targets = !!o->pid + !!o->name + !!o->wait_name;

	if (!o->domain == !o->vmm_pid)
		die("give the VM with exactly one of --domain or --vmm-pid (see --help)");
	if (o->connect && !o->domain)
		die("--connect is for --domain (a libvirt URI)");
	if (o->vm_fd >= 0 && !o->vmm_pid)
		die("--vm-fd is for --vmm-pid");
	if (targets != 1)
		die("give the target with exactly one of --pid, --name or --wait-name (see "
		    "--help)");
	if (o->newest && !o->name)
		die("--newest is for --name");
	if (o->from == FROM_NEXT && o->wait_name)
		die("--from next is for a running process; --wait-name starts at the entry point");
	if (o->from == FROM_NEXT)
		o->target.flags |= SVMTRACE_TARGET_F_FROM_NEXT;
	if (max_procs_set && !o->follow)
		die("--max-processes is for --follow");
	if (o->follow && o->from != FROM_FIRST)
		die("--follow traces the processes the target creates from their first "
		    "instruction: it needs --from first");
	target_opt_check(t);
}

void options_parse(int argc, char **argv, struct daemon_options *o)
{
	static const struct option longopts[] = { { "connect", required_argument, NULL, 'C' },
						  { "domain", required_argument, NULL, 'd' },
						  { "vmm-pid", required_argument, NULL, 'V' },
						  { "vm-fd", required_argument, NULL, 'f' },
						  { "pid", required_argument, NULL, 'p' },
						  { "name", required_argument, NULL, 'n' },
						  { "newest", no_argument, NULL, 'N' },
						  { "follow", no_argument, NULL, 'L' },
						  { "max-processes", required_argument, NULL, 'M' },
						  { "wait-name", required_argument, NULL, 'W' },
						  { "from", required_argument, NULL, 'F' },
						  { "resolve-timeout", required_argument, NULL,
						    'T' },
						  { "profiles", required_argument, NULL, 'P' },
						  { "out", required_argument, NULL, 'o' },
						  { "max-bytes", required_argument, NULL, 'b' },
						  { "socket", required_argument, NULL, 'S' },
						  { "audit", no_argument, NULL, 'A' },
						  { "quiet", no_argument, NULL, 'q' },
						  { "no-code", no_argument, NULL, 'c' },
						  { "help", no_argument, NULL, 'h' },
						  CAPTURE_LONGOPTS,
						  { 0 } };
	struct svmtrace_target *t = &o->target;
	bool max_procs_set = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->vm_fd = -1;
	o->resolve_timeout = 60;
	o->max_procs = SVMTRACED_MAX_PROCS;
	o->profiles = SVMTRACED_PROFILES;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			o->connect = optarg;
			break;
		case 'd':
			if (!*optarg)
				die("--domain: empty name");
			o->domain = optarg;
			break;
		case 'V':
			o->vmm_pid = (pid_t)parse_u32(optarg, "--vmm-pid", 1, INT32_MAX);
			break;
		case 'f':
			o->vm_fd = (int)parse_u32(optarg, "--vm-fd", 0, INT32_MAX);
			break;
		case 'p':
			o->pid = parse_u64(optarg, "--pid");
			if (!o->pid || o->pid > UINT32_MAX)
				die("--pid %s: expected a Windows process ID 1..4294967295",
				    optarg);
			break;
		case 'n':
			check_image(optarg, "--name");
			o->name = optarg;
			break;
		case 'N':
			o->newest = true;
			break;
		case 'L':
			o->follow = true;
			break;
		case 'M':
			o->max_procs = parse_u32(optarg, "--max-processes", 1, SVMTRACED_MAX_PROCS);
			max_procs_set = true;
			break;
		case 'W':
			check_image(optarg, "--wait-name");
			o->wait_name = optarg;
			break;
		case 'F':
			if (!strcmp(optarg, "entry"))
				o->from = FROM_ENTRY;
			else if (!strcmp(optarg, "next"))
				o->from = FROM_NEXT;
			else if (!strcmp(optarg, "first"))
				o->from = FROM_FIRST;
			else
				die("--from: expected entry, next or first, got '%s'", optarg);
			break;
		case 'T':
			o->resolve_timeout = parse_seconds(optarg, "--resolve-timeout");
			break;
		case 'P':
			o->profiles = optarg;
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 'b':
			o->lim.max_bytes = parse_bytes(optarg, "--max-bytes");
			break;
		case 'S':
			o->socket = optarg;
			break;
		case 'A':
			o->audit = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'c':
			o->no_code = true;
			break;
		case 'h':
			fputs(options_usage, stdout);
			exit(0);
		default:
			if (capture_opt(c, optarg, t, &o->lim))
				break;
			fputs(options_usage, stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	validate(o, max_procs_set);
}
