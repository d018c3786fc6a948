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

#include "common/cli.h"
#include "svmtrace-capture/capture.h"

static const char usage_text[] =
	"usage: svmtrace-capture --vmm-pid PID (--gate-gpa GPA... | --from-next) --cr3 CR3...\n"
	"                        --out DIR [--vm-fd N] [--policy drop|block] [--kernel]\n"
	"                        [--rip-range A-B]... [--duration S] [--max-records N]\n"
	"                        [--ring-slots N] [--wake-batch N] [--consumer-delay-us U]\n"
	"                        [--quiet]\n"
	"Trace the target of a running KVM VM into per-vCPU v5 files (needs root and\n"
	"svmtrace's kvm.ko).\n"
	"\n"
	"  --vmm-pid PID         the process that owns the VM (e.g. QEMU)\n"
	"  --vm-fd N             the VM's fd number in that process (default: its only VM)\n"
	"  --gate-gpa GPA        guest-physical page whose first execution starts a session;\n"
	"                        repeat for more gates (ids 0, 1, ... in order; at most 64)\n"
	"  --from-next           also start a session wherever a vCPU leaves user mode of a\n"
	"                        traced address space (a VM exit): a running process is\n"
	"                        traced from its next user instruction, gates optional\n"
	"  --cr3 CR3             address space to trace; repeat (at most 16)\n"
	"  --out DIR             where svmtrace_trace_cpu{N}.bin are written\n"
	"  --policy drop|block   full ring: count the step as dropped (default) or make\n"
	"                        the vCPU wait for room (lossless)\n"
	"  --kernel              record kernel-mode (CPL 0) steps too\n"
	"  --rip-range A-B       record only steps whose RIP is in [A, B); repeat (at most 16)\n"
	"  --duration S          stop after S seconds\n"
	"  --max-records N       stop once N records are written\n"
	"  --ring-slots N        slots per vCPU ring, a power of two (default 65536)\n"
	"  --wake-batch N        wake this consumer every N slots (default ring-slots/16)\n"
	"  --consumer-delay-us U sleep U microseconds per slot (testing backpressure)\n"
	"  --quiet               no progress line\n"
	"  -h, --help            this text\n"
	"\n"
	"SIGINT or SIGTERM stops the capture cleanly; SIGUSR1 pauses recording (the\n"
	"sessions and rings stay) and SIGUSR2 resumes it.  \"armed\" is printed on stdout once\n"
	"the capture is armed; a summary follows at the end.  Exit status 0 when every\n"
	"vCPU's written + dropped records equal what the kernel produced.  See\n"
	"svmtrace-capture(1).\n";

static volatile sig_atomic_t stop_requested, pause_requested = -1;

static void on_signal(int sig)
{
	if (sig == SIGUSR1 || sig == SIGUSR2)
		pause_requested = sig == SIGUSR1;
	else
		stop_requested = sig;
}

static void usage(FILE *f, int status)
{
	fputs(usage_text, f);
	exit(status);
}

static void add_gate(struct svmtrace_target *t, const char *arg)
{
	if (t->nr_gates == SVMTRACE_MAX_GATES)
		die("--gate-gpa: at most %d gates", SVMTRACE_MAX_GATES);
	t->gates[t->nr_gates].gpa = parse_u64(arg, "--gate-gpa");
	if (t->gates[t->nr_gates].gpa & 0xfff)
		die("--gate-gpa %s: not 4 KiB aligned (a gate is one page)", arg);
	t->gates[t->nr_gates].id = t->nr_gates;
	t->nr_gates++;
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

static void add_range(struct svmtrace_target *t, const char *arg)
{
	uint64_t lo, hi;

	if (t->nr_ranges == SVMTRACE_MAX_RANGES)
		die("--rip-range: at most %d ranges", SVMTRACE_MAX_RANGES);
	parse_range(arg, "--rip-range", &lo, &hi);
	if (lo == hi)
		die("--rip-range %s: empty range (the end is exclusive)", arg);
	t->ranges[t->nr_ranges].start = lo;
	t->ranges[t->nr_ranges].end = hi;
	t->nr_ranges++;
}

static uint32_t parse_u32(const char *arg, const char *what, uint64_t min, uint64_t max)
{
	uint64_t v = parse_u64(arg, what);

	if (v < min || v > max)
		die("%s %s: expected %llu..%llu", what, arg, (unsigned long long)min,
		    (unsigned long long)max);
	return (uint32_t)v;
}

static void parse_options(int argc, char **argv, struct capture_options *o)
{
	static const struct option longopts[] = {
		{"vmm-pid", required_argument, NULL, 'p'},
		{"vm-fd", required_argument, NULL, 'f'},
		{"gate-gpa", required_argument, NULL, 'g'},
		{"cr3", required_argument, NULL, 'c'},
		{"out", required_argument, NULL, 'o'},
		{"policy", required_argument, NULL, 'P'},
		{"kernel", no_argument, NULL, 'k'},
		{"from-next", no_argument, NULL, 'n'},
		{"rip-range", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'},
		{"max-records", required_argument, NULL, 'm'},
		{"ring-slots", required_argument, NULL, 's'},
		{"wake-batch", required_argument, NULL, 'w'},
		{"consumer-delay-us", required_argument, NULL, 'D'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0}};
	struct svmtrace_target *t = &o->target;
	char *end;
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
			add_gate(t, optarg);
			break;
		case 'c':
			add_cr3(t, optarg);
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 'k':
			t->flags |= SVMTRACE_TARGET_F_KERNEL;
			break;
		case 'n':
			t->flags |= SVMTRACE_TARGET_F_FROM_NEXT;
			break;
		case 'r':
			add_range(t, optarg);
			break;
		case 'm':
			o->max_records = parse_u64(optarg, "--max-records");
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'P':
			if (!strcmp(optarg, "drop"))
				t->policy = SVMTRACE_POLICY_DROP;
			else if (!strcmp(optarg, "block"))
				t->policy = SVMTRACE_POLICY_BLOCK;
			else
				die("--policy: expected drop or block, got '%s'", optarg);
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0))
				die("--duration: expected seconds > 0, got '%s'", optarg);
			break;
		case 's':
			t->ring_slots = parse_u32(optarg, "--ring-slots", SVMTRACE_MIN_RING_SLOTS,
						  SVMTRACE_MAX_RING_SLOTS);
			if (t->ring_slots & (t->ring_slots - 1))
				die("--ring-slots %s: not a power of two", optarg);
			break;
		case 'w':
			t->wake_batch = parse_u32(optarg, "--wake-batch", 1, UINT32_MAX);
			break;
		case 'D':
			o->consumer_delay_us = parse_u32(optarg, "--consumer-delay-us", 0, 1000000);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (!o->vmm_pid || !(t->nr_gates || (t->flags & SVMTRACE_TARGET_F_FROM_NEXT)) ||
	    !t->nr_cr3 || !o->out_dir)
		die("--vmm-pid, --gate-gpa (or --from-next), --cr3 and --out are required "
		    "(see --help)");
	if (t->wake_batch &&
	    t->wake_batch > (t->ring_slots ? t->ring_slots : SVMTRACE_DEFAULT_RING_SLOTS) / 2)
		die("--wake-batch %u: at most half the ring", t->wake_batch);
}

static void setup_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

struct capture {
	struct capture_options opt;
	int ctl, vm_fd, pidfd;
	uint32_t nr;
	struct vcpu_stream *streams;
	struct pollfd *fds; /* rings, then the VMM's pidfd */
	struct progress progress;
};

static uint64_t written_total(const struct capture *cap)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < cap->nr; i++)
		sum += cap->streams[i].written;
	return sum;
}

static void open_streams(struct capture *cap)
{
	struct svmtrace_capture_status st;
	uint64_t size;
	uint32_t i;
	int fd;

	control_status(cap->ctl, &st);
	cap->nr = st.nr_vcpus;
	cap->streams = calloc(cap->nr, sizeof(*cap->streams));
	cap->fds = calloc(cap->nr + 1, sizeof(*cap->fds));
	if (!cap->streams || !cap->fds)
		die("out of memory");
	for (i = 0; i < cap->nr; i++) {
		fd = control_get_ring(cap->ctl, i, &size);
		stream_open(&cap->streams[i], i, fd, size, cap->opt.out_dir);
		cap->fds[i].fd = fd;
		cap->fds[i].events = POLLIN;
	}
	cap->fds[cap->nr].fd = cap->pidfd;
	cap->fds[cap->nr].events = POLLIN;
}

/* Drain until a stop reason; returns why ("signal", "duration", ...). */
static const char *capture_loop(struct capture *cap)
{
	double deadline = cap->opt.duration ? now_seconds() + cap->opt.duration : 0;
	uint32_t i;

	for (;;) {
		for (i = 0; i < cap->nr; i++)
			stream_drain(&cap->streams[i], cap->opt.consumer_delay_us);
		progress_update(&cap->progress, cap->streams, cap->nr, false);
		if (stop_requested)
			return stop_requested == SIGINT ? "SIGINT" : "SIGTERM";
		if (pause_requested >= 0) {
			control_pause(cap->ctl, pause_requested);
			pause_requested = -1;
		}
		if (cap->opt.max_records && written_total(cap) >= cap->opt.max_records)
			return "max-records";
		if (deadline && now_seconds() >= deadline)
			return "duration";
		/* poll() also releases a vCPU waiting for room (block policy). */
		if (poll(cap->fds, cap->nr + 1, 100) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (cap->fds[cap->nr].revents & POLLIN)
			return "VMM exited";
	}
}

/* After stop every ring is closed; take what is left. */
static void drain_rest(struct capture *cap)
{
	bool all_done;
	uint32_t i;

	do {
		all_done = true;
		for (i = 0; i < cap->nr; i++) {
			struct vcpu_stream *s = &cap->streams[i];
			bool closed = svmtrace_ring_closed(&s->ring);

			stream_drain(s, cap->opt.consumer_delay_us);
			s->done = closed;
			all_done &= closed;
		}
		if (!all_done)
			poll(cap->fds, cap->nr, 100);
	} while (!all_done);
}

/* Print the counts; true when every vCPU's written + dropped = produced. */
static bool report(struct capture *cap, const char *why)
{
	struct svmtrace_capture_status st;
	struct svmtrace_ring_counts c;
	struct svmtrace_error err;
	uint64_t w = 0, d = 0, p = 0, bytes = 0;
	bool ok = true;
	uint32_t i;

	control_status(cap->ctl, &st);
	for (i = 0; i < cap->nr; i++) {
		struct vcpu_stream *s = &cap->streams[i];

		svmtrace_ring_counts(&s->ring, &c);
		if (svmtrace_writer_flush(s->writer, &err))
			die("%s", err.message);
		bytes += svmtrace_writer_stats(s->writer)->file_bytes;
		printf("vcpu%u written=%llu dropped=%llu kmod_produced=%llu", i,
		       (unsigned long long)s->written, (unsigned long long)c.dropped,
		       (unsigned long long)c.produced);
		/* The status structure details the first 64 vCPUs. */
		if (i < SVMTRACE_MAX_STATUS_VCPUS)
			printf(" sessions=%llu", (unsigned long long)st.vcpus[i].counters.sessions);
		putchar('\n');
		if (s->written + c.dropped != c.produced) {
			warn("vCPU %u: %llu written + %llu dropped != %llu produced by the kernel",
			     i, (unsigned long long)s->written, (unsigned long long)c.dropped,
			     (unsigned long long)c.produced);
			ok = false;
		}
		w += s->written;
		d += c.dropped;
		p += c.produced;
	}
	if (w != st.total.records || d != st.total.drops) {
		warn("kernel status says %llu records, %llu drops; the files hold %llu, rings "
		     "dropped %llu",
		     (unsigned long long)st.total.records, (unsigned long long)st.total.drops,
		     (unsigned long long)w, (unsigned long long)d);
		ok = false;
	}
	printf("total written=%llu dropped=%llu kmod_produced=%llu kmod_records=%llu "
	       "kmod_drops=%llu "
	       "db_exits=%llu emulated_steps=%llu gate_faults=%llu bytes=%llu stop=%s %s\n",
	       (unsigned long long)w, (unsigned long long)d, (unsigned long long)p,
	       (unsigned long long)st.total.records, (unsigned long long)st.total.drops,
	       (unsigned long long)st.total.db_exits, (unsigned long long)st.total.emulated_steps,
	       (unsigned long long)st.total.npf_exits, (unsigned long long)bytes, why,
	       ok ? "consistent" : "INCONSISTENT");
	return ok;
}

int main(int argc, char **argv)
{
	struct capture cap = {0};
	const char *why;
	bool ok;
	uint32_t i;
	int vmm_fd_number;

	cli_progname = "svmtrace-capture";
	parse_options(argc, argv, &cap.opt);
	if (mkdir(cap.opt.out_dir, 0755) && errno != EEXIST)
		die("--out %s: %s", cap.opt.out_dir, strerror(errno));
	setup_signals();

	cap.ctl = control_open();
	vmm_fd_number = cap.opt.vm_fd;
	cap.vm_fd = control_vm_fd(cap.opt.vmm_pid, &vmm_fd_number, &cap.pidfd);
	control_attach(cap.ctl, cap.vm_fd, cap.opt.vmm_pid, vmm_fd_number);
	control_set_target(cap.ctl, &cap.opt.target);
	control_arm(cap.ctl);
	open_streams(&cap);
	progress_init(&cap.progress, cap.opt.quiet);
	printf("armed\n");
	fflush(stdout);

	why = capture_loop(&cap);
	control_stop(cap.ctl);
	drain_rest(&cap);
	progress_update(&cap.progress, cap.streams, cap.nr, true);
	ok = report(&cap, why);
	for (i = 0; i < cap.nr; i++)
		stream_close(&cap.streams[i]);
	control_detach(cap.ctl);
	close(cap.vm_fd);
	close(cap.ctl);
	return ok ? 0 : 1;
}
