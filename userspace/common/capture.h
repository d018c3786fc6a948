/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capture pieces svmtrace-capture and svmtraced share: the control
 * device (control.c), one vCPU's ring drained into its v5 file (stream.c),
 * the progress line (progress.c) and the capture loop around them: open the
 * rings, drain until a stop reason, stop, drain the rest, report the counts
 * (capture_run.c).
 */
#ifndef SVMTRACE_CAPTURE_H
#define SVMTRACE_CAPTURE_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <svmtrace/abi.h>
#include <svmtrace/ring.h>
#include <svmtrace/trace.h>

/* control.c: every call dies with a message naming what was wrong. */
int control_open(void);
/* The fd number of @pid's only KVM VM (dies naming what is wrong). */
int control_find_vm_fd(pid_t pid);
int control_vm_fd(pid_t pid, int *vm_fd_number, int *pidfd);
void control_attach(int ctl, int vm_fd, pid_t pid, int vmm_fd_number);
void control_set_target(int ctl, const struct svmtrace_target *t);
void control_arm(int ctl);
void control_stop(int ctl);
void control_pause(int ctl, bool pause);
void control_status(int ctl, struct svmtrace_capture_status *st);
void control_asks(int ctl, struct svmtrace_asks *asks);
void control_release(int ctl, const struct svmtrace_ask *ask);
int control_get_ring(int ctl, uint32_t vcpu, uint64_t *mmap_size);
void control_detach(int ctl);

/*
 * target_opts.c: the options both capture programs take, for their
 * getopt_long tables (CAPTURE_LONGOPTS) and switch (capture_opt).
 */
enum {
	OPT_POLICY = 0x100,
	OPT_KERNEL,
	OPT_RIP_RANGE,
	OPT_DURATION,
	OPT_MAX_RECORDS,
	OPT_RING_SLOTS,
	OPT_WAKE_BATCH,
	OPT_XSTATE,
	OPT_ANCHOR_INTERVAL,
	OPT_HIDE_TIME,
	OPT_TIME_COSTS,
	OPT_MEM,
};
#define CAPTURE_LONGOPTS                                                                           \
	{ "policy", required_argument, NULL, OPT_POLICY },                                         \
		{ "kernel", no_argument, NULL, OPT_KERNEL },                                       \
		{ "rip-range", required_argument, NULL, OPT_RIP_RANGE },                           \
		{ "duration", required_argument, NULL, OPT_DURATION },                             \
		{ "max-records", required_argument, NULL, OPT_MAX_RECORDS },                       \
		{ "ring-slots", required_argument, NULL, OPT_RING_SLOTS },                         \
		{ "wake-batch", required_argument, NULL, OPT_WAKE_BATCH },                         \
		{ "xstate", no_argument, NULL, OPT_XSTATE },                                       \
		{ "anchor-interval", required_argument, NULL, OPT_ANCHOR_INTERVAL },               \
		{ "hide-time", no_argument, NULL, OPT_HIDE_TIME },                                 \
		{ "mem", no_argument, NULL, OPT_MEM },                                             \
	{                                                                                          \
		"time-costs", required_argument, NULL, OPT_TIME_COSTS                              \
	}

/* The usage lines of the capture options both programs word alike. */
#define CAPTURE_MEM_HELP                                                                           \
	"  --mem                 record each instruction's memory operands: address, size,\n"      \
	"                        values read and written (1536-byte ring slots, 2112 with\n"       \
	"                        --xstate: --ring-slots at most 262144; every step takes\n"        \
	"                        KVM's full exit path)\n"
#define CAPTURE_TIME_HELP                                                                          \
	"  --hide-time           the target's user-mode TSC reads (RDTSC, RDTSCP, QPC through\n"   \
	"                        the reference TSC page) see native-looking time: a virtual\n"     \
	"                        TSC that advances by each traced instruction's native cost\n"     \
	"  --time-costs I,T,E    with --hide-time: guest TSC cycles per instruction (a decimal,\n" \
	"                        default 1), per RDTSC or RDTSCP (40), and per exit round trip\n"  \
	"                        added to an instruction KVM completes (1360)\n"

struct capture_limits;
uint32_t parse_u32(const char *arg, const char *what, uint64_t min, uint64_t max);
double parse_seconds(const char *arg, const char *what);
/* Apply option @c (an OPT_*); false if @c is not one of them. */
bool capture_opt(int c, const char *arg, struct svmtrace_target *t, struct capture_limits *lim);
/*
 * After parsing: the wake batch fits the ring, the ring fits --xstate,
 * --time-costs comes with --hide-time.
 */
void target_opt_check(const struct svmtrace_target *t);

/*
 * Sees every slot a stream takes from its ring, before the slots are
 * released (svmtraced: code pages and modules, off the vCPU's path): @n
 * slots from @slots, @stride bytes apart (the ring's slot size).
 */
typedef void (*slot_observer_fn)(void *ctx, uint32_t vcpu, const struct svmtrace_slot *slots,
				 size_t n, size_t stride);

/* stream.c: one per vCPU. */
struct vcpu_stream {
	slot_observer_fn observe; /* optional */
	void *observe_ctx;
	uint32_t vcpu;
	struct svmtrace_ring_consumer ring;
	struct svmtrace_writer *writer;
	uint64_t written;   /* slots appended to the file */
	uint64_t discarded; /* slots released unwritten: disk budget or write error */
	bool failed;	    /* the writer failed (e.g. ENOSPC): slots are discarded */
	char error[sizeof(((struct svmtrace_error *)0)->message)]; /* why it failed */
	bool done;						   /* closed and drained */
};

/* @anchor_interval: records between full records, 0 = the writer's default. */
void stream_open(struct vcpu_stream *s, uint32_t vcpu, int ring_fd, uint64_t mmap_size,
		 const char *out_dir, uint32_t anchor_interval);
/*
 * Append every published slot while the file stays below @byte_cap bytes
 * (UINT64_MAX: no cap); past it, or once the writer failed, slots are
 * released and counted as discarded.  Returns how many slots were taken.
 */
uint64_t stream_drain(struct vcpu_stream *s, unsigned int delay_us, uint64_t byte_cap);
uint64_t stream_file_bytes(const struct vcpu_stream *s);
/* Close the file (renamed into place); false, with a warning, on error. */
bool stream_close(struct vcpu_stream *s);

/* progress.c */
struct progress {
	bool tty;
	double start;
	double last;
	uint64_t last_records; /* at the last redraw: the rate is recent */
};

double now_seconds(void);
void progress_init(struct progress *p, bool quiet);
void progress_update(struct progress *p, const struct vcpu_stream *s, uint32_t n, bool final);

/* capture_run.c */
struct capture_limits {
	double duration;		/* seconds, 0 = until a signal */
	uint64_t max_records;		/* 0 = no limit */
	uint64_t max_bytes;		/* disk budget of all files, 0 = none */
	unsigned int consumer_delay_us; /* per slot: a deliberately slow consumer */
	uint32_t anchor_interval;	/* of the files (--anchor-interval), 0 = default */
};

struct capture {
	int ctl, vm_fd, pidfd;
	const char *out_dir;
	struct capture_limits lim;
	bool quiet;
	uint32_t nr;
	struct vcpu_stream *streams;
	struct pollfd *fds; /* rings, the VMM's pidfd, extra_fd if >= 0, ctl if on_ask */
	struct progress progress;
	double started;
	double vcpus_checked; /* when SVMTRACE_STATUS was last asked for new vCPUs */

	/* Optional: one more fd to watch (svmtraced's status socket). */
	int extra_fd;
	/* Called when extra_fd is readable; returns a stop reason or NULL. */
	const char *(*on_extra)(struct capture *cap, void *ctx);
	/* Optional: called when the control fd is readable (the kernel holds a
	 * thread for a decision, SVMTRACE_TARGET_F_ASK); a stop reason or NULL. */
	const char *(*on_ask)(struct capture *cap, void *ask_ctx);
	void *ask_ctx;
	/* capture_report(): system calls whose record the kernel could not keep */
	uint64_t parks_evicted;
	/* Optional: asked on every turn of the loop (at least every 100 ms);
	 * a reason ends the capture (svmtraced: the domain was reset). */
	const char *(*stop_reason)(void *ctx);
	void *ctx;
	bool paused;

	/* Optional: given to every stream (see slot_observer_fn). */
	slot_observer_fn observe;
	void *observe_ctx;
};

/* SIGINT/SIGTERM request a stop, SIGUSR1/SIGUSR2 pause/resume. */
void capture_setup_signals(void);
/* The signal that asked for a stop, 0 if none. */
int capture_stop_signal(void);

/* After arm: one ring and one file per vCPU. */
void capture_open_streams(struct capture *cap);
/* Drain until a stop reason; returns it ("SIGINT", "duration", ...). */
const char *capture_loop(struct capture *cap);
/* After stop every ring is closed; take what is left. */
void capture_drain_rest(struct capture *cap);
/* Flush every file and print the counts; true when they add up. */
bool capture_report(struct capture *cap, const char *why);
/* Close every file; false if one failed. */
bool capture_close_streams(struct capture *cap);

uint64_t capture_written(const struct capture *cap);
uint64_t capture_file_bytes(const struct capture *cap);

#endif
