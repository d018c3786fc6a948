// SPDX-License-Identifier: GPL-2.0
/*
 * The capture loop both capture programs run once the kernel is armed:
 * drain every vCPU's ring into its file until a signal, a limit, the
 * VMM's exit or the caller's hook says stop; then, after the caller's
 * SVMTRACE_STOP, drain what is left and check that every produced step was
 * written, dropped by the kernel, or discarded by us (disk budget).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/cli.h"
#include "common/capture.h"

/* Bytes a stream may still add after its last check: one frame and its header. */
#define FRAME_MARGIN (65536 + 1024)

static volatile sig_atomic_t stop_requested, pause_requested = -1;

static void on_signal(int sig)
{
	if (sig == SIGUSR1 || sig == SIGUSR2)
		pause_requested = sig == SIGUSR1;
	else
		stop_requested = sig;
}

void capture_setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int capture_stop_signal(void)
{
	return stop_requested;
}

uint64_t capture_written(const struct capture *cap)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < cap->nr; i++)
		sum += cap->streams[i].written;
	return sum;
}

uint64_t capture_file_bytes(const struct capture *cap)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < cap->nr; i++)
		sum += stream_file_bytes(&cap->streams[i]);
	return sum;
}

/*
 * Rings and files for the kernel's vCPUs [cap->nr, nr): the first ones
 * after arm, and later those KVM created while armed (the kernel traces
 * them from their first instruction, docs/abi.md).  The fds after the
 * rings (the VMM's pidfd, extra_fd) move up.
 */
static void add_streams(struct capture *cap, uint32_t nr)
{
	struct vcpu_stream *streams = realloc(cap->streams, nr * sizeof(*streams));
	struct pollfd *fds = realloc(cap->fds, (nr + 3) * sizeof(*fds));
	uint64_t size;
	uint32_t i;
	int fd;

	if (!streams || !fds)
		die("out of memory");
	cap->streams = streams;
	cap->fds = fds;
	for (i = cap->nr; i < nr; i++) {
		fd = control_get_ring(cap->ctl, i, &size);
		stream_open(&cap->streams[i], i, fd, size, cap->out_dir, cap->lim.anchor_interval);
		cap->streams[i].observe = cap->observe;
		cap->streams[i].observe_ctx = cap->observe_ctx;
		cap->fds[i].fd = fd;
		cap->fds[i].events = POLLIN;
	}
	cap->nr = nr;
	cap->fds[nr].fd = cap->pidfd;
	cap->fds[nr].events = POLLIN;
	cap->fds[nr + 1].fd = cap->extra_fd >= 0 ? cap->extra_fd : -1;
	cap->fds[nr + 1].events = POLLIN;
	cap->fds[nr + 2].fd = cap->on_ask ? cap->ctl : -1;
	cap->fds[nr + 2].events = POLLIN;
}

void capture_open_streams(struct capture *cap)
{
	struct svmtrace_capture_status st;

	control_status(cap->ctl, &st);
	cap->nr = 0;
	cap->streams = NULL;
	cap->fds = NULL;
	add_streams(cap, st.nr_vcpus);
	progress_init(&cap->progress, cap->quiet);
	cap->started = now_seconds();
	cap->vcpus_checked = cap->started;
}

/*
 * Take the rings of vCPUs KVM created since the last look: at most every
 * 100 ms while capturing, and once more (@now) after stop.
 */
static void add_new_vcpus(struct capture *cap, bool now_too)
{
	struct svmtrace_capture_status st;
	double now = now_seconds();

	if (!now_too && now - cap->vcpus_checked < 0.1)
		return;
	cap->vcpus_checked = now;
	control_status(cap->ctl, &st);
	if (st.nr_vcpus > cap->nr) {
		printf("vcpus %u -> %u: created while armed, traced from their start\n", cap->nr,
		       st.nr_vcpus);
		fflush(stdout);
		add_streams(cap, st.nr_vcpus);
	}
}

/* The size a stream's file may reach now without the budget being passed. */
static uint64_t byte_cap(const struct capture *cap)
{
	uint64_t used = capture_file_bytes(cap) + (uint64_t)cap->nr * FRAME_MARGIN;

	if (!cap->lim.max_bytes)
		return UINT64_MAX;
	return used >= cap->lim.max_bytes ? 0 : cap->lim.max_bytes - used;
}

/* Drain every stream; each may grow by what the budget still allows. */
static void drain_all(struct capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->nr; i++) {
		struct vcpu_stream *s = &cap->streams[i];
		uint64_t room = byte_cap(cap), have = stream_file_bytes(s);

		stream_drain(s, cap->lim.consumer_delay_us,
			     room == UINT64_MAX ? UINT64_MAX : have + room);
	}
}

static const char *limit_reached(struct capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->nr; i++)
		if (cap->streams[i].failed)
			return "write error";
	if (cap->lim.max_records && capture_written(cap) >= cap->lim.max_records)
		return "max-records";
	if (cap->lim.max_bytes && byte_cap(cap) == 0)
		return "max-bytes";
	if (cap->lim.duration && now_seconds() >= cap->started + cap->lim.duration)
		return "duration";
	return NULL;
}

const char *capture_loop(struct capture *cap)
{
	const char *why;

	for (;;) {
		add_new_vcpus(cap, false);
		drain_all(cap);
		progress_update(&cap->progress, cap->streams, cap->nr, false);
		if (stop_requested)
			return stop_requested == SIGINT ? "SIGINT" : "SIGTERM";
		if (pause_requested >= 0) {
			control_pause(cap->ctl, pause_requested);
			cap->paused = pause_requested;
			pause_requested = -1;
		}
		why = limit_reached(cap);
		if (!why && cap->stop_reason)
			why = cap->stop_reason(cap->ctx);
		if (why)
			return why;
		/* poll() also releases a vCPU waiting for room (block policy). */
		if (poll(cap->fds, cap->nr + 3, 100) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (cap->fds[cap->nr].revents & POLLIN)
			return "VMM exited";
		if ((cap->fds[cap->nr + 1].revents & POLLIN) && cap->on_extra) {
			why = cap->on_extra(cap, cap->ctx);
			if (why)
				return why;
		}
		if ((cap->fds[cap->nr + 2].revents & POLLIN) && cap->on_ask) {
			why = cap->on_ask(cap, cap->ask_ctx);
			if (why)
				return why;
		}
	}
}

void capture_drain_rest(struct capture *cap)
{
	bool all_done;
	uint32_t i;

	add_new_vcpus(cap, true);
	do {
		all_done = true;
		for (i = 0; i < cap->nr; i++) {
			struct vcpu_stream *s = &cap->streams[i];

			s->done = svmtrace_ring_closed(&s->ring);
			all_done &= s->done;
		}
		drain_all(cap);
		if (!all_done)
			poll(cap->fds, cap->nr, 100);
	} while (!all_done);
}

bool capture_report(struct capture *cap, const char *why)
{
	struct svmtrace_capture_status st;
	struct svmtrace_ring_counts c;
	struct svmtrace_error err;
	uint64_t w = 0, d = 0, x = 0, p = 0, bytes = 0;
	bool ok = true, kernel_ok = true;
	uint32_t i;

	/* After the VM went away the kernel may no longer answer: count what we can. */
	if (ioctl(cap->ctl, SVMTRACE_STATUS, &st)) {
		warn("status after stop: %s (kernel totals not compared)", strerror(errno));
		memset(&st, 0, sizeof(st));
		kernel_ok = false;
	}
	for (i = 0; i < cap->nr; i++) {
		struct vcpu_stream *s = &cap->streams[i];

		svmtrace_ring_counts(&s->ring, &c);
		if (!s->failed && svmtrace_writer_flush(s->writer, &err)) {
			warn("vCPU %u: %s", i, err.message);
			s->failed = true;
		}
		bytes += stream_file_bytes(s);
		printf("vcpu%u written=%llu dropped=%llu kmod_produced=%llu", i,
		       (unsigned long long)s->written, (unsigned long long)c.dropped,
		       (unsigned long long)c.produced);
		if (s->discarded)
			printf(" discarded=%llu", (unsigned long long)s->discarded);
		/* The status structure details the first 64 vCPUs. */
		if (i < SVMTRACE_MAX_STATUS_VCPUS)
			printf(" sessions=%llu", (unsigned long long)st.vcpus[i].counters.sessions);
		putchar('\n');
		if (s->written + s->discarded + c.dropped != c.produced) {
			warn("vCPU %u: %llu written + %llu discarded + %llu dropped != %llu "
			     "produced "
			     "by the kernel",
			     i, (unsigned long long)s->written, (unsigned long long)s->discarded,
			     (unsigned long long)c.dropped, (unsigned long long)c.produced);
			ok = false;
		}
		w += s->written;
		x += s->discarded;
		d += c.dropped;
		p += c.produced;
	}
	cap->parks_evicted = st.parks_evicted;
	if (st.parks_evicted)
		warn("%llu system calls of the target have no record: more of its threads were in "
		     "a system call at once than the kernel keeps",
		     (unsigned long long)st.parks_evicted);
	if (kernel_ok && (w + x != st.total.records || d != st.total.drops)) {
		warn("kernel status says %llu records, %llu drops; the files hold %llu (%llu "
		     "discarded), rings dropped %llu",
		     (unsigned long long)st.total.records, (unsigned long long)st.total.drops,
		     (unsigned long long)w, (unsigned long long)x, (unsigned long long)d);
		ok = false;
	}
	printf("total written=%llu dropped=%llu discarded=%llu kmod_produced=%llu "
	       "kmod_records=%llu kmod_drops=%llu db_exits=%llu emulated_steps=%llu "
	       "gate_faults=%llu bytes=%llu stop=%s %s\n",
	       (unsigned long long)w, (unsigned long long)d, (unsigned long long)x,
	       (unsigned long long)p, (unsigned long long)st.total.records,
	       (unsigned long long)st.total.drops, (unsigned long long)st.total.db_exits,
	       (unsigned long long)st.total.emulated_steps, (unsigned long long)st.total.npf_exits,
	       (unsigned long long)bytes, why, ok ? "consistent" : "INCONSISTENT");
	fflush(stdout);
	return ok;
}

bool capture_close_streams(struct capture *cap)
{
	bool ok = true;
	uint32_t i;

	for (i = 0; i < cap->nr; i++)
		ok &= stream_close(&cap->streams[i]);
	return ok;
}
