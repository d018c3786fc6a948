// SPDX-License-Identifier: GPL-2.0
/*
 * svmtraced: one command from a libvirt domain (or a VMM's PID) and a
 * Windows process to per-vCPU v5 traces.
 *
 *   which VM -> refusals about the host -> attach -> find the guest kernel
 *   and the target in live memory -> arm the entry page -> drain the rings
 *   until a signal, a limit, `svmtraced stop` or the VM's end -> stop,
 *   drain, close, capture.json, summary.
 *
 * Whatever ends the daemon, closing /dev/svmtrace detaches and disarms in
 * the kernel (also on SIGKILL), and every file ends with complete frames.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/capture_audit.h"
#include "common/cli.h"
#include "svmtraced/svmtraced.h"

static struct statusd *status_socket; /* removed on every exit path */

static void remove_socket(void)
{
	statusd_close(status_socket);
	status_socket = NULL;
}

/* The VM: a libvirt domain, or the VMM given by PID. */
static void find_vm(const struct daemon_options *o, struct vm_info *vm)
{
	if (o->domain) {
		domain_lookup(o->connect, o->domain, vm);
		return;
	}
	memset(vm, 0, sizeof(*vm));
	vm->vmm_pid = o->vmm_pid;
	snprintf(vm->name, sizeof(vm->name), "vmm%d", (int)o->vmm_pid);
}

static char *make_out_dir(const struct daemon_options *o, const struct vm_info *vm,
			  const struct target_info *t)
{
	char name[512], stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	if (o->out_dir) {
		if (mkdir(o->out_dir, 0755) && errno != EEXIST)
			die("--out %s: %s", o->out_dir, strerror(errno));
		return strdup(o->out_dir);
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (t->nr_procs)
		snprintf(name, sizeof(name), "%s-pid%llu-%s", vm->name,
			 (unsigned long long)t->procs[0].entry.process.pid, stamp);
	else /* --wait-name: the process is not there yet */
		snprintf(name, sizeof(name), "%s-%s-%s", vm->name, o->wait_name, stamp);
	if (mkdir(name, 0755))
		die("output directory %s: %s (choose one with --out)", name, strerror(errno));
	return strdup(name);
}

static void print_armed_one(const struct target_info *t, unsigned int i)
{
	const struct svmtrace_vmi_entry *e = &t->procs[i].entry;
	char gate[TARGET_GATE_TEXT];

	target_gate_text(&t->procs[i], gate);
	printf("armed pid=%llu cr3=0x%llx user_cr3=0x%llx gate=%s entry=0x%llx name=%s\n",
	       (unsigned long long)e->process.pid, (unsigned long long)e->process.dtb,
	       (unsigned long long)e->process.user_dtb, gate, (unsigned long long)e->entry_va,
	       e->process.name);
	fflush(stdout);
}

static void print_armed(const struct target_info *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_procs; i++)
		print_armed_one(t, i);
}

struct run {
	struct status_view view;
	struct statusd *sd;
	struct meta *meta;
	struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_mem *mem;
	const char *out_dir;
};

/* A process joined the target while the capture ran (--wait-name, asks.c). */
static void on_found(void *ctx, unsigned int proc)
{
	struct run *r = ctx;

	print_armed_one(r->meta->target, proc);
	target_modules(r->vmi, r->mem, &((struct target_info *)r->meta->target)->procs[proc]);
	meta_write(r->out_dir, r->meta);
}

/* What sees every drained slot: the thread map, and code.bin unless --no-code. */
struct observers {
	struct thread_map *threads;
	struct codemap *codemap;
};

static void observe(void *ctx, uint32_t vcpu, const struct svmtrace_slot *slots, size_t n,
		    size_t stride)
{
	struct observers *o = ctx;

	threads_observe(o->threads, vcpu, slots, n, stride);
	if (o->codemap)
		codemap_observe(o->codemap, vcpu, slots, n, stride);
}

static const char *on_ask(struct capture *cap, void *ctx)
{
	return asks_serve(cap, ctx);
}

static const char *on_status_request(struct capture *cap, void *ctx)
{
	struct run *r = ctx;

	return statusd_serve(r->sd, &r->view) ? "svmtraced stop" : NULL;
}

static void fill_counts(const struct capture *cap, struct meta_counts *c)
{
	struct svmtrace_ring_counts rc;
	uint32_t i;

	for (i = 0; i < cap->nr; i++) {
		svmtrace_ring_counts(&cap->streams[i].ring, &rc);
		c[i] = (struct meta_counts){ .vcpu = i,
					     .written = cap->streams[i].written,
					     .dropped = rc.dropped,
					     .produced = rc.produced,
					     .discarded = cap->streams[i].discarded };
	}
}

int main(int argc, char **argv)
{
	struct daemon_options opt;
	struct target_info t;
	struct svmtrace_vmi_mem *mem;
	struct svmtrace_vmi *vmi;
	struct capture cap = { 0 };
	struct meta_counts *counts;
	struct capture_audit *audit = NULL;
	struct audit_line *audit_lines = NULL;
	struct vm_info vm;
	struct codemap *codemap = NULL;
	struct observers obs = { 0 };
	struct ask_ctx asks;
	struct run run;
	struct meta m;
	const char *why;
	int vmm_fd_number;
	bool ok;

	cli_progname = "svmtraced";
	if (argc > 1 && (!strcmp(argv[1], "status") || !strcmp(argv[1], "stop")))
		return client_main(argc, argv);
	options_parse(argc, argv, &opt);
	capture_setup_signals();
	memset(&t, 0, sizeof(t));

	find_vm(&opt, &vm);
	vmm_fd_number = opt.vm_fd >= 0 ? opt.vm_fd : control_find_vm_fd(vm.vmm_pid);
	cap.ctl = host_open_control();
	cap.vm_fd = control_vm_fd(vm.vmm_pid, &vmm_fd_number, &cap.pidfd);
	control_attach(cap.ctl, cap.vm_fd, vm.vmm_pid, vmm_fd_number);
	status_socket = statusd_open(opt.socket);
	/* Before capture_open_streams(), which copies it into the poll set:
	 * left at 0 it polled stdin, and without a socket a readable stdin
	 * made statusd_serve(NULL) crash (seen in the nested lab). */
	cap.extra_fd = statusd_fd(status_socket);
	atexit(remove_socket);

	vmi = target_open(cap.ctl, &opt, &mem);
	target_resolve(vmi, mem, &opt, status_socket, &t);
	target_fill(&t, &opt, &opt.target);
	cap.out_dir = make_out_dir(&opt, &vm, &t);
	cap.lim = opt.lim;
	cap.quiet = opt.quiet;
	control_set_target(cap.ctl, &opt.target);
	/* Counting starts before arm, which resets the module's counters. */
	if (opt.audit)
		audit = capture_audit_start(vm.vmm_pid, cap.ctl);
	/* --wait-name: the kernel holds every new thread for asks.c to look at. */
	asks = (struct ask_ctx){ .vmi = vmi,
				 .mem = mem,
				 .opt = &opt,
				 .t = &t,
				 .sd = status_socket,
				 .found = on_found,
				 .found_ctx = &run };
	if (opt.target.flags & SVMTRACE_TARGET_F_ASK) {
		cap.on_ask = on_ask;
		cap.ask_ctx = &asks;
	}
	control_arm(cap.ctl);
	if (audit)
		capture_audit_armed(audit);
	capture_open_streams(&cap);
	print_armed(&t);
	if (t.waiting && !opt.quiet)
		fprintf(stderr, "svmtraced: waiting for a new process named %s\n", opt.wait_name);

	/* The module list takes a while: after arm, so the entry is not missed. */
	for (unsigned int i = 0; i < t.nr_procs; i++)
		target_modules(vmi, mem, &t.procs[i]);
	/* Threads, code pages and late modules from every drained slot (the
	 * rings fill meanwhile; nothing is lost, the first drain sees every
	 * slot). */
	obs.threads = threads_open(vmi, mem, &t);
	if (!opt.no_code)
		obs.codemap = codemap = codemap_open(cap.out_dir, vmi, mem, &t);
	/* For the streams of vCPUs created while armed, too. */
	cap.observe = observe;
	cap.observe_ctx = &obs;
	for (uint32_t i = 0; i < cap.nr; i++) {
		cap.streams[i].observe = observe;
		cap.streams[i].observe_ctx = &obs;
	}
	counts = calloc(cap.nr + 1, sizeof(*counts));
	if (!counts)
		die("out of memory");
	m = (struct meta){ .vm = &vm,
			   .opt = &opt,
			   .target = &t,
			   .counts = counts,
			   .nr_counts = cap.nr,
			   .state = "recording",
			   .started = (double)time(NULL) };
	meta_write(cap.out_dir, &m);

	run = (struct run){ .view = { .cap = &cap, .ctl = cap.ctl, .target = &t },
			    .sd = status_socket,
			    .meta = &m,
			    .vmi = vmi,
			    .mem = mem,
			    .out_dir = cap.out_dir };
	cap.extra_fd = statusd_fd(status_socket);
	cap.on_extra = on_status_request;
	if (opt.domain)
		cap.stop_reason = domain_watch_reason;
	cap.ctx = &run;
	why = capture_loop(&cap);
	if (opt.domain && !strcmp(why, "VMM exited"))
		why = domain_watch_settle(why);

	control_stop(cap.ctl);
	capture_drain_rest(&cap);
	progress_update(&cap.progress, cap.streams, cap.nr, true);
	ok = capture_report(&cap, why);
	m.syscalls_unrecorded = cap.parks_evicted;
	if (audit) {
		m.audit_ok = capture_audit_finish(&cap, audit, &audit_lines);
		m.audit = audit_lines;
		ok &= m.audit_ok;
	}
	/* vCPUs created while armed have streams of their own by now. */
	counts = realloc(counts, (cap.nr + 1) * sizeof(*counts));
	if (!counts)
		die("out of memory");
	m.counts = counts;
	m.nr_counts = cap.nr;
	fill_counts(&cap, counts);
	ok &= capture_close_streams(&cap);
	codemap_close(codemap);
	threads_close(obs.threads);
	m.state = "ended";
	m.end_reason = why;
	m.ended = (double)time(NULL);
	ok &= meta_write(cap.out_dir, &m);
	control_detach(cap.ctl);
	close(cap.vm_fd);
	close(cap.ctl);
	printf("svmtraced: %s, traces in %s\n", ok ? "done" : "done with errors", cap.out_dir);
	svmtrace_vmi_close(vmi);
	svmtrace_vmi_mem_close(mem);
	capture_audit_close(audit);
	free(audit_lines);
	return ok ? 0 : 1;
}
