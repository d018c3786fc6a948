/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtrace-capture internals: the control device (control.c), the per-vCPU
 * drain into v5 files (drain.c) and the progress line (progress.c).
 */
#ifndef SVMTRACE_CAPTURE_H
#define SVMTRACE_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <svmtrace/abi.h>
#include <svmtrace/ring.h>
#include <svmtrace/trace.h>

struct capture_options {
	pid_t vmm_pid;
	int vm_fd; /* in the VMM, -1 = find it */
	const char *out_dir;
	struct svmtrace_target target;
	double duration;		/* seconds, 0 = until a signal */
	uint64_t max_records;		/* 0 = no limit */
	unsigned int consumer_delay_us; /* per slot: a deliberately slow consumer */
	bool quiet;
};

/* control.c: every call dies with a message naming what was wrong. */
int control_open(void);
int control_vm_fd(pid_t pid, int *vm_fd_number, int *pidfd);
void control_attach(int ctl, int vm_fd, pid_t pid, int vmm_fd_number);
void control_set_target(int ctl, const struct svmtrace_target *t);
void control_arm(int ctl);
void control_stop(int ctl);
void control_pause(int ctl, bool pause);
void control_status(int ctl, struct svmtrace_capture_status *st);
int control_get_ring(int ctl, uint32_t vcpu, uint64_t *mmap_size);
void control_detach(int ctl);

/* drain.c: one per vCPU. */
struct vcpu_stream {
	uint32_t vcpu;
	struct svmtrace_ring_consumer ring;
	struct svmtrace_writer *writer;
	uint64_t written; /* slots appended to the file */
	bool done;	  /* closed and drained */
};

void stream_open(struct vcpu_stream *s, uint32_t vcpu, int ring_fd, uint64_t mmap_size,
		 const char *out_dir);
/* Append every published slot; returns how many. */
uint64_t stream_drain(struct vcpu_stream *s, unsigned int delay_us);
void stream_close(struct vcpu_stream *s);

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

#endif
