// SPDX-License-Identifier: GPL-2.0
/*
 * One vCPU's stream: its mmap'ed ring in, its v5 file out.  Slots go to
 * the writer straight from the ring, a contiguous batch at a time.  A
 * writer that fails (the disk is full) or a file at its byte cap stops
 * taking records: the slots are still released, so the kernel never waits
 * on us, and counted as discarded.  The file keeps every complete frame.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/capture.h"

void stream_open(struct vcpu_stream *s, uint32_t vcpu, int ring_fd, uint64_t mmap_size,
		 const char *out_dir, uint32_t anchor_interval)
{
	struct svmtrace_writer_options o;
	struct svmtrace_error err;
	char path[PATH_MAX];

	memset(s, 0, sizeof(*s));
	s->vcpu = vcpu;
	if (svmtrace_ring_map(ring_fd, mmap_size, &s->ring, &err))
		die("vCPU %u: %s", vcpu, err.message);
	svmtrace_writer_options_init(&o);
	o.cpu = vcpu;
	o.mem = s->ring.flags & SVMTRACE_RING_F_MEM;
	if (anchor_interval)
		o.anchor_interval = anchor_interval;
	snprintf(path, sizeof(path), "%s/svmtrace_trace_cpu%u.bin", out_dir, vcpu);
	if (svmtrace_writer_open(path, &o, &s->writer, &err))
		die("%s", err.message);
}

uint64_t stream_file_bytes(const struct vcpu_stream *s)
{
	return s->writer ? svmtrace_writer_stats(s->writer)->file_bytes : 0;
}

/*
 * The accesses of a slot of a mem ring (--mem) into @out; how many.  A
 * step the kernel gave no tail (it always does) is not written as one
 * without accesses: one unrecorded access says they are unknown.  The
 * writer checks each access; nr is clamped here (the ring is shared).
 */
static unsigned int slot_accesses(const struct vcpu_stream *s, const struct svmtrace_slot *slot,
				  struct svmtrace_mem_access *out)
{
	const struct svmtrace_slot_mem *t = svmtrace_ring_slot_mem(&s->ring, slot);
	unsigned int nr, i;

	if (slot->kind == SVMTRACE_SLOT_SESSION_END)
		return 0;
	if (!t) {
		memset(out, 0, sizeof(*out));
		out->kind = SVMTRACE_MEM_UNRECORDED;
		out->why = SVMTRACE_MEM_WHY_UNDECODED;
		return 1;
	}
	nr = t->nr < SVMTRACE_MEM_MAX_ACCESSES ? t->nr : SVMTRACE_MEM_MAX_ACCESSES;
	for (i = 0; i < nr; i++) {
		const struct svmtrace_slot_access *a = &t->accesses[i];

		memset(&out[i], 0, sizeof(out[i]));
		out[i].addr = a->addr;
		out[i].size = a->size;
		out[i].kind = a->kind;
		out[i].why = a->why;
		memcpy(out[i].read_value, a->read_value, sizeof(out[i].read_value));
		memcpy(out[i].write_value, a->write_value, sizeof(out[i].write_value));
	}
	return nr;
}

/*
 * A slot with its YMM tail (--xstate) goes to the file with it; a slot of
 * an xstate ring without SVMTRACE_SLOT_F_XSTATE has no valid tail.  A slot
 * of a mem ring (--mem) goes with its accesses.
 */
static int write_slot(struct vcpu_stream *s, const struct svmtrace_slot *slot,
		      struct svmtrace_error *err)
{
	const struct svmtrace_slot_xstate *x = NULL;
	struct svmtrace_mem_access mem[SVMTRACE_MEM_MAX_ACCESSES];

	if ((s->ring.flags & SVMTRACE_RING_F_XSTATE) && (slot->flags & SVMTRACE_SLOT_F_XSTATE))
		x = (const struct svmtrace_slot_xstate *)slot;
	if (s->ring.flags & SVMTRACE_RING_F_MEM)
		return svmtrace_writer_append_mem(s->writer, slot, x, mem,
						  slot_accesses(s, slot, mem), err);
	if (x)
		return svmtrace_writer_append_xstate(s->writer, x, err);
	return svmtrace_writer_append(s->writer, slot, err);
}

static void append(struct vcpu_stream *s, const struct svmtrace_slot *slot, uint64_t byte_cap)
{
	struct svmtrace_error err;

	if (s->failed || stream_file_bytes(s) >= byte_cap) {
		s->discarded++;
		return;
	}
	if (write_slot(s, slot, &err)) {
		uint64_t kept = svmtrace_writer_stats(s->writer)->records;

		s->failed = true;
		snprintf(s->error, sizeof(s->error), "%s", err.message);
		warn("vCPU %u: %s: recording stops here", s->vcpu, err.message);
		/* The frame the failed write held is lost with this slot. */
		s->discarded += s->written - kept + 1;
		s->written = kept;
		return;
	}
	s->written++;
}

uint64_t stream_drain(struct vcpu_stream *s, unsigned int delay_us, uint64_t byte_cap)
{
	const struct svmtrace_slot *slots;
	uint64_t total = 0;
	size_t n, i;

	while ((n = svmtrace_ring_peek(&s->ring, &slots)) > 0) {
		if (s->observe)
			s->observe(s->observe_ctx, s->vcpu, slots, n, s->ring.slot_size);
		for (i = 0; i < n; i++) {
			append(s, svmtrace_ring_slot(&s->ring, slots, i), byte_cap);
			if (delay_us)
				usleep(delay_us);
		}
		svmtrace_ring_release(&s->ring, n);
		total += n;
	}
	return total;
}

bool stream_close(struct vcpu_stream *s)
{
	struct svmtrace_error err;
	bool ok = true;

	if (s->writer && svmtrace_writer_close(s->writer, &err)) {
		warn("vCPU %u: %s", s->vcpu, err.message);
		ok = false;
	}
	s->writer = NULL;
	svmtrace_ring_unmap(&s->ring);
	return ok;
}
