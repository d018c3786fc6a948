// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-bench-ring: the capture consumer's throughput.
 *
 *   svmtrace-bench-ring RAW OUT.v5 [--slots N] [--ring-slots N]
 *
 * A producer thread replays the real states of RAW (168-byte records from
 * svmtrace-steprec) into a ring with the kernel's protocol (block policy:
 * it waits for room), as fast as it can, N slots in all.  The consumer --
 * this thread, the same code svmtrace-capture runs -- drains the ring
 * through the v5 writer into OUT.v5.  Printed, from this one run:
 *   ring+writer   slots/s the pipeline sustained end to end (wall time), and
 *                 slots per second of the consumer thread's own CPU time --
 *                 what one consumer core keeps up with (target >= 10 M)
 *   writer        slots/s of the writer alone on the same slots from memory
 *   ring          the same two rates with a consumer that only touches slots
 * Wall-clock rates of a two-thread pipeline on a shared machine: compare
 * the lines with each other, not across runs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <svmtrace/ring.h>
#include <svmtrace/trace.h>

#include "common/cli.h"
#include "raw_slots.h"
#include "../ring/ring_producer.h"

struct bench {
	struct svmtrace_slot *states; /* one replay period */
	size_t nr_states;
	uint64_t slots; /* to produce in all */
	void *mem;
	size_t size;
	struct ring_producer p;
};

static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Slot @i of the synthetic stream: a replayed state with its own seq/TSC. */
static void make_slot(const struct bench *b, uint64_t i, struct svmtrace_slot *s)
{
	*s = b->states[i % b->nr_states];
	s->seq = i;
	s->tsc = 1000 + 50 * i;
	if (i == 0)
		s->kind = SVMTRACE_SLOT_SESSION_START;
}

static void *producer(void *arg)
{
	struct bench *b = arg;
	struct svmtrace_slot *s;
	uint64_t i = 0;

	while (i < b->slots) {
		s = ring_producer_reserve(&b->p);
		if (!s) {
			sched_yield();
			continue;
		}
		make_slot(b, i++, s);
		ring_producer_publish(&b->p);
	}
	ring_producer_close(&b->p);
	return NULL;
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Run the pipeline; @w NULL measures the ring alone.  Returns slots/s of
 * wall time; *per_cpu gets slots per second of the consumer thread's CPU
 * time (it yields when the ring is empty), the rate one core could sustain.
 */
static double pipeline(struct bench *b, uint32_t capacity, struct svmtrace_writer *w,
		       double *per_cpu)
{
	struct svmtrace_ring_consumer c;
	const struct svmtrace_slot *s;
	struct svmtrace_error err;
	uint64_t got = 0, sum = 0;
	pthread_t t;
	size_t n, i;
	double t0, cpu0;
	bool closed;

	ring_memory_init(b->mem, capacity, 0);
	ring_producer_init(&b->p, b->mem);
	if (svmtrace_ring_use_memory(b->mem, b->size, &c, &err))
		die("%s", err.message);
	t0 = wall_seconds();
	cpu0 = thread_cpu_seconds();
	if (pthread_create(&t, NULL, producer, b))
		die("pthread_create failed");
	do {
		closed = svmtrace_ring_closed(&c);
		while ((n = svmtrace_ring_peek(&c, &s)) > 0) {
			for (i = 0; i < n; i++) {
				if (w && svmtrace_writer_append(w, &s[i], &err))
					die("%s", err.message);
				sum += s[i].rip;
			}
			svmtrace_ring_release(&c, n);
			got += n;
		}
		if (!closed)
			sched_yield();
	} while (!closed);
	*per_cpu = (double)got / (thread_cpu_seconds() - cpu0);
	pthread_join(t, NULL);
	if (got != b->slots)
		die("consumer saw %llu slots of %llu (sum %llx)", (unsigned long long)got,
		    (unsigned long long)b->slots, (unsigned long long)sum);
	return (double)got / (wall_seconds() - t0);
}

static struct svmtrace_writer *open_writer(const char *path)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;

	svmtrace_writer_options_init(&o);
	if (svmtrace_writer_open(path, &o, &w, &err))
		die("%s", err.message);
	return w;
}

static uint64_t close_writer(struct svmtrace_writer *w)
{
	struct svmtrace_error err;
	uint64_t bytes;

	if (svmtrace_writer_flush(w, &err))
		die("%s", err.message);
	bytes = svmtrace_writer_stats(w)->file_bytes;
	if (svmtrace_writer_close(w, &err))
		die("%s", err.message);
	return bytes;
}

/* The writer alone, on the same slots made in this thread. */
static double writer_only(struct bench *b, const char *path)
{
	struct svmtrace_writer *w = open_writer(path);
	struct svmtrace_error err;
	struct svmtrace_slot s;
	double t0 = wall_seconds();
	uint64_t i;

	for (i = 0; i < b->slots; i++) {
		make_slot(b, i, &s);
		if (svmtrace_writer_append(w, &s, &err))
			die("%s", err.message);
	}
	close_writer(w);
	return (double)b->slots / (wall_seconds() - t0);
}

int main(int argc, char **argv)
{
	struct bench b = {.slots = 20000000};
	uint32_t capacity = 65536;
	struct svmtrace_writer *w;
	double ring_writer, writer, ring, ring_writer_cpu, ring_cpu;
	uint64_t bytes;
	int i;

	cli_progname = "svmtrace-bench-ring";
	if (argc < 3)
		die("usage: svmtrace-bench-ring RAW OUT.v5 [--slots N] [--ring-slots N]");
	for (i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--slots"))
			b.slots = parse_u64(argv[i + 1], "--slots");
		else if (!strcmp(argv[i], "--ring-slots"))
			capacity = (uint32_t)parse_u64(argv[i + 1], "--ring-slots");
		else
			die("unknown option '%s'", argv[i]);
	}
	if (capacity < 16 || (capacity & (capacity - 1)))
		die("--ring-slots: a power of two >= 16");
	b.states = load_raw_slots(argv[1], 0, &b.nr_states);
	b.size = ring_memory_init(NULL, capacity, 0);
	b.mem = aligned_alloc(4096, (b.size + 4095) & ~(size_t)4095);
	if (!b.mem)
		die("out of memory");

	w = open_writer(argv[2]);
	ring_writer = pipeline(&b, capacity, w, &ring_writer_cpu);
	bytes = close_writer(w);
	writer = writer_only(&b, argv[2]);
	ring = pipeline(&b, capacity, NULL, &ring_cpu);
	printf("ring+writer %.2f M slots/s wall, %.2f M slots per consumer CPU second "
	       "(%llu slots, %.1f bytes/slot in v5)\n",
	       ring_writer / 1e6, ring_writer_cpu / 1e6, (unsigned long long)b.slots,
	       (double)bytes / (double)b.slots);
	printf("writer      %.2f M slots/s (same slots from memory, one thread)\n", writer / 1e6);
	printf("ring        %.2f M slots/s wall, %.2f M per consumer CPU second (slots only "
	       "touched)\n",
	       ring / 1e6, ring_cpu / 1e6);
	printf("ratio ring+writer / writer alone: %.2f\n", ring_writer / writer);
	return 0;
}
