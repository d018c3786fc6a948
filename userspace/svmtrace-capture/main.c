// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-capture: attach to a running VM, arm a capture, drain every
 * vCPU's ring into svmtrace_trace_cpu{N}.bin until a signal, a limit or the
 * VMM's exit, then stop, drain the rest and check that the counts add up.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/capture_audit.h"
#include "common/cli.h"
#include "common/capture.h"
#include "svmtrace-capture/new_processes.h"

struct capture_options {
	pid_t vmm_pid;
	int vm_fd; /* in the VMM, -1 = find it */
	const char *out_dir;
	struct svmtrace_target target;
	struct capture_limits lim;
	bool quiet;
	bool audit;
};

static const char usage_text[] =
	"usage: svmtrace-capture --vmm-pid PID\n"
	"                        (--gate-gpa GPA... | --gate-va VA... | --from-next | --first-rip "
	"VA)\n"
	"                        (--cr3 CR3... | --adopt-cr3 | --first-rip VA --new-processes)\n"
	"                        --out DIR [--vm-fd N] [--policy drop|block] [--kernel]\n"
	"                        [--rip-range A-B]... [--duration S] [--max-records N]\n"
	"                        [--ring-slots N] [--wake-batch N] [--consumer-delay-us U]\n"
	"                        [--xstate] [--mem] [--anchor-interval N]\n"
	"                        [--hide-time [--time-costs I,T,E]] [--audit] [--quiet]\n"
	"Trace the target of a running KVM VM into per-vCPU v5 files (needs root and\n"
	"svmtrace's kvm.ko).\n"
	"\n"
	"  --vmm-pid PID         the process that owns the VM (e.g. QEMU)\n"
	"  --vm-fd N             the VM's fd number in that process (default: its only VM)\n"
	"  --gate-gpa GPA        guest-physical page whose first execution starts a session;\n"
	"                        repeat for more gates (ids 0, 1, ... in order; at most 64)\n"
	"  --gate-va VA          guest-virtual page, mapped now or later in the first --cr3's\n"
	"                        page tables: the gate closes on whatever page the guest maps\n"
	"                        there (the kernel watches the tables; for a page that is not\n"
	"                        resident yet); counts as a gate\n"
	"  --from-next           also start a session wherever a vCPU leaves user mode of a\n"
	"                        traced address space (a VM exit): a running process is\n"
	"                        traced from its next user instruction, gates optional\n"
	"  --first-rip VA        every thread begins in user mode at VA (Windows x64: ntdll's\n"
	"                        LdrInitializeThunk): a thread of a --cr3 address space is\n"
	"                        traced from its first instruction, gates optional\n"
	"  --new-processes       with --first-rip: every address space whose first thread\n"
	"                        begins after arming is traced from that instruction (the\n"
	"                        kernel holds the thread until its CR3 joined; at most 256\n"
	"                        address spaces in all, the rest counted as lost);\n"
	"                        every vCPU intercepts IRET meanwhile\n"
	"  --cr3 CR3             address space to trace; repeat (at most 16)\n"
	"  --adopt-cr3           trace the address space that first runs a --gate-gpa page\n"
	"                        in user mode (for a program that knows its code's\n"
	"                        guest-physical page but not its CR3)\n"
	"  --out DIR             where svmtrace_trace_cpu{N}.bin are written\n"
	"  --policy drop|block   full ring: count the step as dropped (default) or make\n"
	"                        the vCPU wait for room (lossless)\n"
	"  --kernel              record kernel-mode (CPL 0) steps too\n"
	"  --rip-range A-B       record only steps whose RIP is in [A, B); repeat (at most 16)\n"
	"  --duration S          stop after S seconds\n"
	"  --max-records N       stop once N records are written\n"
	"  --ring-slots N        slots per vCPU ring, a power of two (default 65536)\n"
	"  --wake-batch N        wake this consumer every N slots (default ring-slots/16)\n"
	"  --xstate              record YMM0-15 and XSTATE_BV with every step (768-byte ring\n"
	"                        slots: --ring-slots at most 1048576)\n" CAPTURE_MEM_HELP
	"  --consumer-delay-us U sleep U microseconds per slot (testing backpressure)\n"
	"  --anchor-interval N   a full record every N records in the files (default 256;\n"
	"                        smaller: a TSC more often, larger files)\n" CAPTURE_TIME_HELP
	"  --audit               count the VM's #DB and NPF exits with eBPF (kvm tracepoints)\n"
	"                        and check per vCPU that they balance the records\n"
	"  --quiet               no progress line\n"
	"  -h, --help            this text\n"
	"\n"
	"SIGINT or SIGTERM stops the capture cleanly; SIGUSR1 pauses recording (the\n"
	"sessions and rings stay) and SIGUSR2 resumes it.  \"armed\" is printed on stdout once\n"
	"the capture is armed; a summary follows at the end.  Exit status 0 when every\n"
	"vCPU's written + dropped records equal what the kernel produced (and, with\n"
	"--audit, every vCPU's #DB exits balance).  See svmtrace-capture(1).\n";

static void usage(FILE *f, int status)
{
	fputs(usage_text, f);
	exit(status);
}

/* --gate-gpa GPA, or --gate-va VA (@watch: its table root is set later). */
static void add_gate(struct svmtrace_target *t, const char *opt, const char *arg, bool watch)
{
	struct svmtrace_gate *g = &t->gates[t->nr_gates];
	uint64_t page;

	if (t->nr_gates == SVMTRACE_MAX_GATES)
		die("%s: at most %d gates", opt, SVMTRACE_MAX_GATES);
	page = parse_u64(arg, opt);
	if (page & 0xfff)
		die("%s %s: not 4 KiB aligned (a gate is one page)", opt, arg);
	if (watch && (uint64_t)((int64_t)(page << 16) >> 16) != page)
		die("%s %s: not a canonical address", opt, arg);
	if (watch) {
		g->flags = SVMTRACE_GATE_F_WATCH;
		g->va = page;
	} else {
		g->gpa = page;
	}
	g->id = t->nr_gates++;
}

/*
 * --adopt-cr3 takes the CR3 from the first user-mode fetch of a gate page:
 * it needs a --gate-gpa and replaces --cr3; a watched gate needs a root.
 */
static void adopt_check(const struct svmtrace_target *t)
{
	uint32_t i;

	if (!(t->flags & SVMTRACE_TARGET_F_ADOPT_CR3))
		return;
	if (t->nr_cr3)
		die("--adopt-cr3 and --cr3 exclude each other");
	if (!t->nr_gates)
		die("--adopt-cr3 needs a --gate-gpa to adopt the address space from");
	for (i = 0; i < t->nr_gates; i++)
		if (t->gates[i].flags & SVMTRACE_GATE_F_WATCH)
			die("--adopt-cr3 does not go with --gate-va (its tables need a --cr3)");
}

/* Watched gates walk the first --cr3's tables. */
static void set_watch_roots(struct svmtrace_target *t)
{
	uint32_t i;

	for (i = 0; i < t->nr_gates; i++)
		if (t->gates[i].flags & SVMTRACE_GATE_F_WATCH)
			t->gates[i].dtb = t->cr3[0];
}

static void add_cr3(struct svmtrace_target *t, const char *arg)
{
	if (t->nr_cr3 == SVMTRACE_MAX_CR3)
		die("--cr3: at most %d address spaces", SVMTRACE_MAX_CR3);
	t->cr3[t->nr_cr3] = parse_u64(arg, "--cr3");
	if (!(t->cr3[t->nr_cr3] & 0x000ffffffffff000ULL))
		die("--cr3 %s: no page-table base in bits 51:12", arg);
	t->nr_cr3++;
}

static void parse_options(int argc, char **argv, struct capture_options *o)
{
	static const struct option longopts[] = { { "vmm-pid", required_argument, NULL, 'p' },
						  { "vm-fd", required_argument, NULL, 'f' },
						  { "gate-gpa", required_argument, NULL, 'g' },
						  { "gate-va", required_argument, NULL, 'v' },
						  { "cr3", required_argument, NULL, 'c' },
						  { "out", required_argument, NULL, 'o' },
						  { "from-next", no_argument, NULL, 'n' },
						  { "first-rip", required_argument, NULL, 'F' },
						  { "adopt-cr3", no_argument, NULL, 'a' },
						  { "new-processes", no_argument, NULL, 'N' },
						  { "consumer-delay-us", required_argument, NULL,
						    'D' },
						  { "audit", no_argument, NULL, 'A' },
						  { "quiet", no_argument, NULL, 'q' },
						  { "help", no_argument, NULL, 'h' },
						  CAPTURE_LONGOPTS,
						  { 0 } };
	struct svmtrace_target *t = &o->target;
	int c;

	memset(o, 0, sizeof(*o));
	o->vm_fd = -1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->vmm_pid = (pid_t)parse_u32(optarg, "--vmm-pid", 1, INT32_MAX);
			break;
		case 'f':
			o->vm_fd = (int)parse_u32(optarg, "--vm-fd", 0, INT32_MAX);
			break;
		case 'g':
			add_gate(t, "--gate-gpa", optarg, false);
			break;
		case 'v':
			add_gate(t, "--gate-va", optarg, true);
			break;
		case 'c':
			add_cr3(t, optarg);
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 'n':
			t->flags |= SVMTRACE_TARGET_F_FROM_NEXT;
			break;
		case 'F':
			t->flags |= SVMTRACE_TARGET_F_FIRST;
			t->first_rip = parse_u64(optarg, "--first-rip");
			if (!t->first_rip || t->first_rip >= 0x0000800000000000ULL)
				die("--first-rip %s: not a user-mode address", optarg);
			break;
		case 'a':
			t->flags |= SVMTRACE_TARGET_F_ADOPT_CR3;
			break;
		case 'N':
			t->flags |= SVMTRACE_TARGET_F_ASK;
			break;
		case 'A':
			o->audit = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'D':
			o->lim.consumer_delay_us =
				parse_u32(optarg, "--consumer-delay-us", 0, 1000000);
			break;
		default:
			if (capture_opt(c, optarg, t, &o->lim))
				break;
			usage(stderr, 2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if ((t->flags & SVMTRACE_TARGET_F_ASK) && !(t->flags & SVMTRACE_TARGET_F_FIRST))
		die("--new-processes needs --first-rip (where a new thread begins)");
	if (!o->vmm_pid ||
	    !(t->nr_gates ||
	      (t->flags & (SVMTRACE_TARGET_F_FROM_NEXT | SVMTRACE_TARGET_F_FIRST))) ||
	    !(t->nr_cr3 || (t->flags & (SVMTRACE_TARGET_F_ADOPT_CR3 | SVMTRACE_TARGET_F_ASK))) ||
	    !o->out_dir)
		die("--vmm-pid, --gate-gpa or --gate-va (or --from-next or --first-rip), --cr3 (or "
		    "--adopt-cr3 or --new-processes) and --out are required (see --help)");
	if ((t->flags & SVMTRACE_TARGET_F_FIRST) && (t->flags & SVMTRACE_TARGET_F_ADOPT_CR3))
		die("--first-rip does not go with --adopt-cr3 (it needs the address spaces)");
	adopt_check(t);
	set_watch_roots(t);
	target_opt_check(t);
}

int main(int argc, char **argv)
{
	struct capture_options opt;
	struct capture cap = { 0 };
	struct capture_audit *audit = NULL;
	struct new_processes new_procs = { 0 };
	struct audit_line *audit_lines = NULL;
	const char *why;
	int vmm_fd_number;
	bool ok;

	cli_progname = "svmtrace-capture";
	parse_options(argc, argv, &opt);
	if (mkdir(opt.out_dir, 0755) && errno != EEXIST)
		die("--out %s: %s", opt.out_dir, strerror(errno));
	capture_setup_signals();

	cap.out_dir = opt.out_dir;
	cap.lim = opt.lim;
	cap.quiet = opt.quiet;
	cap.extra_fd = -1;
	if (opt.target.flags & SVMTRACE_TARGET_F_ASK) {
		cap.on_ask = new_processes_serve;
		cap.ask_ctx = &new_procs;
	}
	cap.ctl = control_open();
	vmm_fd_number = opt.vm_fd;
	cap.vm_fd = control_vm_fd(opt.vmm_pid, &vmm_fd_number, &cap.pidfd);
	control_attach(cap.ctl, cap.vm_fd, opt.vmm_pid, vmm_fd_number);
	control_set_target(cap.ctl, &opt.target);
	/* Counting starts before arm, which resets the module's counters. */
	if (opt.audit)
		audit = capture_audit_start(opt.vmm_pid, cap.ctl);
	control_arm(cap.ctl);
	if (audit)
		capture_audit_armed(audit);
	capture_open_streams(&cap);
	printf("armed\n");
	fflush(stdout);

	why = capture_loop(&cap);
	control_stop(cap.ctl);
	capture_drain_rest(&cap);
	progress_update(&cap.progress, cap.streams, cap.nr, true);
	ok = capture_report(&cap, why);
	if (cap.on_ask)
		new_processes_report(&new_procs);
	if (audit)
		ok &= capture_audit_finish(&cap, audit, &audit_lines);
	ok &= capture_close_streams(&cap);
	control_detach(cap.ctl);
	close(cap.vm_fd);
	close(cap.ctl);
	capture_audit_close(audit);
	free(audit_lines);
	return ok ? 0 : 1;
}
