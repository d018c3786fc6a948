// SPDX-License-Identifier: GPL-2.0
/*
 * One vCPU's stream: its mmap'ed ring in, its v5 file out.  Slots go to
 * the writer straight from the ring, a contiguous batch at a time.
 */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtrace-capture/capture.h"

void stream_open(struct vcpu_stream *s, uint32_t vcpu, int ring_fd, uint64_t mmap_size,
		 const char *out_dir)
{
	struct svmtrace_writer_options o;
	struct svmtrace_error err;
	char path[PATH_MAX], msg[256];

	s->vcpu = vcpu;
	s->written = 0;
	s->done = false;
	if (svmtrace_ring_map(&s->ring, ring_fd, mmap_size, msg, sizeof(msg)))
		die("vCPU %u: %s", vcpu, msg);
	svmtrace_writer_options_init(&o);
	o.cpu = vcpu;
	snprintf(path, sizeof(path), "%s/svmtrace_trace_cpu%u.bin", out_dir, vcpu);
	if (svmtrace_writer_open(&s->writer, path, &o, &err))
		die("%s", err.message);
}

uint64_t stream_drain(struct vcpu_stream *s, unsigned int delay_us)
{
	const struct svmtrace_slot *slots;
	struct svmtrace_error err;
	uint64_t total = 0;
	size_t n, i;

	while ((n = svmtrace_ring_peek(&s->ring, &slots)) > 0) {
		for (i = 0; i < n; i++) {
			if (svmtrace_writer_append(s->writer, &slots[i], &err))
				die("%s", err.message);
			if (delay_us)
				usleep(delay_us);
		}
		svmtrace_ring_release(&s->ring, n);
		s->written += n;
		total += n;
	}
	return total;
}

void stream_close(struct vcpu_stream *s)
{
	struct svmtrace_error err;

	if (svmtrace_writer_close(s->writer, &err))
		die("%s", err.message);
	s->writer = NULL;
	svmtrace_ring_unmap(&s->ring);
}
