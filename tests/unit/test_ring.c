// SPDX-License-Identifier: GPL-2.0
/*
 * The per-vCPU ring protocol: the userspace producer (the kernel's rules)
 * against the consumer library -- layout checks, wrap-around batches, full
 * rings and gap marking, a hostile tail, and a two-thread run that must
 * deliver every slot once and in order.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/ring.h>

#include "../ring/ring_producer.h"

struct mem_ring {
	void *mem;
	size_t size;
	struct ring_producer p;
	struct svmtrace_ring_consumer c;
};

static void ring_setup(struct mem_ring *r, uint32_t capacity)
{
	struct svmtrace_error err;

	r->size = ring_memory_init(NULL, capacity, 3);
	r->mem = aligned_alloc(4096, (r->size + 4095) & ~(size_t)4095);
	ck_assert_ptr_nonnull(r->mem);
	ring_memory_init(r->mem, capacity, 3);
	ring_producer_init(&r->p, r->mem);
	ck_assert_int_eq(svmtrace_ring_use_memory(r->mem, r->size, &r->c, &err), 0);
}

static void ring_teardown(struct mem_ring *r)
{
	free(r->mem);
}

/* Publish one slot whose seq is @seq; false when the ring was full. */
static bool produce(struct mem_ring *r, uint64_t seq)
{
	struct svmtrace_slot *s = ring_producer_reserve(&r->p);

	if (!s) {
		ring_producer_drop(&r->p);
		return false;
	}
	memset(s, 0, sizeof(*s));
	s->seq = seq;
	s->rip = 0x400000 + seq;
	s->kind = SVMTRACE_SLOT_INSTRUCTION;
	ring_producer_publish(&r->p);
	return true;
}

START_TEST(header_is_validated)
{
	struct mem_ring r;
	struct svmtrace_ring_header *h;
	struct svmtrace_error err;

	ring_setup(&r, 64);
	h = r.mem;
	ck_assert_uint_eq(r.c.capacity, 64);
	ck_assert_uint_eq(h->slot_size, sizeof(struct svmtrace_slot));

	h->magic = 0x12345678;
	ck_assert_int_eq(svmtrace_ring_use_memory(r.mem, r.size, &r.c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "magic 0x12345678"));
	h->magic = SVMTRACE_RING_MAGIC;

	h->capacity = 48;
	ck_assert_int_eq(svmtrace_ring_use_memory(r.mem, r.size, &r.c, &err), SVMTRACE_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(err.message, "capacity 48 is not a power of two"));
	h->capacity = 128;
	ck_assert_int_eq(svmtrace_ring_use_memory(r.mem, r.size, &r.c, &err), SVMTRACE_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(err.message, "do not fit"));
	h->capacity = 64;

	h->slot_size = 704;
	ck_assert_int_eq(svmtrace_ring_use_memory(r.mem, r.size, &r.c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "slot size 704"));
	h->slot_size = sizeof(struct svmtrace_slot);

	h->abi_version = 99;
	ck_assert_int_eq(svmtrace_ring_use_memory(r.mem, r.size, &r.c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "ABI version 99"));
	ring_teardown(&r);
}
END_TEST

/* A zeroed ring of @size bytes at @h whose header says @flags and @slot_size. */
static void header_init(struct svmtrace_ring_header *h, size_t size, uint32_t capacity,
			uint32_t flags, uint32_t slot_size)
{
	ck_assert_ptr_nonnull(h);
	memset(h, 0, size);
	h->magic = SVMTRACE_RING_MAGIC;
	h->abi_version = SVMTRACE_ABI_VERSION;
	h->capacity = capacity;
	h->data_offset = SVMTRACE_RING_HEADER_SIZE;
	h->flags = flags;
	h->slot_size = slot_size;
}

/*
 * An xstate ring (SVMTRACE_TARGET_F_XSTATE): 768-byte slots, the header's
 * flag and slot size must agree, and a peeked run strides by the slot
 * size across the wrap, tails included.
 */
START_TEST(xstate_ring_strides_by_its_slot_size)
{
	enum { CAP = 16 };
	size_t size = SVMTRACE_RING_HEADER_SIZE + CAP * sizeof(struct svmtrace_slot_xstate);
	struct svmtrace_ring_header *h = aligned_alloc(4096, size);
	struct svmtrace_slot_xstate *slots = (void *)((char *)h + SVMTRACE_RING_HEADER_SIZE);
	const struct svmtrace_slot *s;
	struct svmtrace_ring_consumer c;
	struct svmtrace_error err;
	size_t n;

	header_init(h, size, CAP, SVMTRACE_RING_F_XSTATE, sizeof(struct svmtrace_slot));
	ck_assert_int_eq(svmtrace_ring_use_memory(h, size, &c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "slot size 192, expected 768 (xstate ring)"));
	h->flags = 0;
	h->slot_size = sizeof(struct svmtrace_slot_xstate);
	ck_assert_int_eq(svmtrace_ring_use_memory(h, size, &c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "slot size 768, expected 192"));
	h->flags = 4;
	ck_assert_int_eq(svmtrace_ring_use_memory(h, size, &c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "unknown flags 0x4"));
	h->flags = SVMTRACE_RING_F_XSTATE;
	ck_assert_int_eq(svmtrace_ring_use_memory(h, size, &c, &err), 0);
	ck_assert_uint_eq(c.slot_size, 768);

	/* Slots 0..19 published, 0..11 released: 12..15 sit at the end, 16..19 at the start. */
	for (uint64_t i = 0; i < 20; i++) {
		slots[i % CAP].base.seq = i;
		slots[i % CAP].base.flags = SVMTRACE_SLOT_F_XSTATE;
		slots[i % CAP].ymm[15][3] = 0x1000 + i;
	}
	h->head = 20;
	svmtrace_ring_release(&c, 12);
	n = svmtrace_ring_peek(&c, &s);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		const struct svmtrace_slot_xstate *x =
			(const struct svmtrace_slot_xstate *)svmtrace_ring_slot(&c, s, i);

		ck_assert_uint_eq(x->base.seq, 12 + i);
		ck_assert_uint_eq(x->ymm[15][3], 0x1000 + 12 + i);
	}
	svmtrace_ring_release(&c, n);
	n = svmtrace_ring_peek(&c, &s);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(svmtrace_ring_slot(&c, s, 3)->seq, 19);
	free(h);
}
END_TEST

/*
 * A mem ring of an xstate capture (SVMTRACE_TARGET_F_MEM and _XSTATE):
 * 192 + 576 + 1344 = 2112-byte slots, the memory tail after the YMM
 * tail, found only on slots that say they have one.
 */
START_TEST(mem_ring_has_its_tail_after_the_xstate_tail)
{
	enum { CAP = 16, SLOT = 2112 };
	size_t size = SVMTRACE_RING_HEADER_SIZE + CAP * SLOT;
	struct svmtrace_ring_header *h = aligned_alloc(4096, size);
	char *slots = (char *)h + SVMTRACE_RING_HEADER_SIZE;
	const struct svmtrace_slot_mem *t;
	const struct svmtrace_slot *s;
	struct svmtrace_ring_consumer c;
	struct svmtrace_error err;

	header_init(h, size, CAP, SVMTRACE_RING_F_MEM | SVMTRACE_RING_F_XSTATE, 768);
	ck_assert_int_eq(svmtrace_ring_use_memory(h, size, &c, &err), SVMTRACE_E_MISMATCH);
	ck_assert_ptr_nonnull(strstr(err.message, "expected 2112 (xstate ring) (mem ring)"));
	h->slot_size = SLOT;
	ck_assert_int_eq(svmtrace_ring_use_memory(h, size, &c, &err), 0);
	/* slot 1: seq 1, one access at byte 768 + 64 of the slot */
	((struct svmtrace_slot *)(slots + SLOT))->seq = 1;
	((struct svmtrace_slot *)(slots + SLOT))->flags = SVMTRACE_SLOT_F_MEM;
	slots[SLOT + 768] = 1;							/* nr */
	memcpy(slots + SLOT + 768 + 64, "\x88\x77\x66\x55\x44\x33\x22\x11", 8); /* addr */
	h->head = 2;
	ck_assert_uint_eq(svmtrace_ring_peek(&c, &s), 2);
	ck_assert_ptr_null(svmtrace_ring_slot_mem(&c, svmtrace_ring_slot(&c, s, 0)));
	t = svmtrace_ring_slot_mem(&c, svmtrace_ring_slot(&c, s, 1));
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->nr, 1);
	ck_assert_uint_eq(t->accesses[0].addr, 0x1122334455667788ull);
	free(h);
}
END_TEST

START_TEST(peek_stops_at_the_wrap)
{
	const struct svmtrace_slot *s;
	struct mem_ring r;
	uint64_t seq = 0;
	size_t n;

	ring_setup(&r, 16);
	for (; seq < 10; seq++)
		ck_assert(produce(&r, seq));
	ck_assert_uint_eq(svmtrace_ring_peek(&r.c, &s), 10);
	ck_assert_uint_eq(s[9].seq, 9);
	svmtrace_ring_release(&r.c, 10);
	for (; seq < 20; seq++)
		ck_assert(produce(&r, seq));
	/* slots 10..15 sit at the end, 16..19 at the start */
	n = svmtrace_ring_peek(&r.c, &s);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(s[0].seq, 10);
	svmtrace_ring_release(&r.c, n);
	n = svmtrace_ring_peek(&r.c, &s);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(s[0].seq, 16);
	ck_assert_uint_eq(s[3].seq, 19);
	svmtrace_ring_release(&r.c, n);
	ck_assert_uint_eq(svmtrace_ring_peek(&r.c, &s), 0);
	ring_teardown(&r);
}
END_TEST

START_TEST(full_ring_drops_and_marks_the_gap)
{
	const struct svmtrace_slot *s;
	struct svmtrace_ring_counts n;
	struct mem_ring r;
	uint64_t seq;

	ring_setup(&r, 16);
	/* One slot stays free for a final session_end: 15 fit. */
	for (seq = 0; seq < 15; seq++)
		ck_assert(produce(&r, seq));
	ck_assert(!produce(&r, 15));
	ck_assert(!produce(&r, 16));
	svmtrace_ring_counts(&r.c, &n);
	ck_assert_uint_eq(n.head, 15);
	ck_assert_uint_eq(n.dropped, 2);
	ck_assert_uint_eq(n.produced, 17);

	ck_assert_uint_eq(svmtrace_ring_peek(&r.c, &s), 15);
	ck_assert_uint_eq(s[14].flags & SVMTRACE_SLOT_F_GAP, 0);
	svmtrace_ring_release(&r.c, 15);
	ck_assert(produce(&r, 17));
	ck_assert_uint_eq(svmtrace_ring_peek(&r.c, &s), 1);
	ck_assert_uint_eq(s[0].seq, 17);
	ck_assert_uint_eq(s[0].flags & SVMTRACE_SLOT_F_GAP, SVMTRACE_SLOT_F_GAP);
	ck_assert_uint_eq(s[0].dropped, 2);
	svmtrace_ring_release(&r.c, 1);
	ck_assert(produce(&r, 18));
	ck_assert_uint_eq(svmtrace_ring_peek(&r.c, &s), 1);
	ck_assert_uint_eq(s[0].flags & SVMTRACE_SLOT_F_GAP, 0);
	ring_teardown(&r);
}
END_TEST

START_TEST(hostile_tail_is_clamped)
{
	const struct svmtrace_slot *s;
	struct svmtrace_ring_header *h;
	struct mem_ring r;
	uint64_t seq, published = 0;

	ring_setup(&r, 16);
	h = r.mem;
	/* A consumer that claims to be far ahead of the producer: once the
	 * producer looks at that tail the ring counts as full (it drops), so
	 * it never overwrites more than the ring's one lap. */
	h->tail = 1000;
	for (seq = 0; seq < 40; seq++)
		published += produce(&r, seq);
	ck_assert_uint_le(published, 15);
	ck_assert_uint_eq(r.p.dropped, 40 - published);
	/* A corrupt head never makes peek hand out more than the ring. */
	h->head = 1u << 30;
	r.c.tail = 0;
	ck_assert_uint_le(svmtrace_ring_peek(&r.c, &s), 16);
	ring_teardown(&r);
}
END_TEST

START_TEST(close_is_seen)
{
	struct mem_ring r;

	ring_setup(&r, 16);
	ck_assert(!svmtrace_ring_closed(&r.c));
	ring_producer_close(&r.p);
	ck_assert(svmtrace_ring_closed(&r.c));
	ring_teardown(&r);
}
END_TEST

#define THREAD_SLOTS 200000

static void *producer_thread(void *arg)
{
	struct mem_ring *r = arg;
	uint64_t seq = 0;

	while (seq < THREAD_SLOTS) {
		struct svmtrace_slot *s = ring_producer_reserve(&r->p);

		if (!s) { /* block policy: wait for room */
			sched_yield();
			continue;
		}
		s->seq = seq;
		s->rip = ~seq;
		s->flags = 0;
		ring_producer_publish(&r->p);
		seq++;
	}
	ring_producer_close(&r->p);
	return NULL;
}

START_TEST(two_threads_deliver_every_slot_in_order)
{
	const struct svmtrace_slot *s;
	struct mem_ring r;
	pthread_t t;
	uint64_t next = 0;
	size_t n, i;
	bool closed;

	ring_setup(&r, 256);
	ck_assert_int_eq(pthread_create(&t, NULL, producer_thread, &r), 0);
	do {
		closed = svmtrace_ring_closed(&r.c);
		while ((n = svmtrace_ring_peek(&r.c, &s)) > 0) {
			for (i = 0; i < n; i++) {
				ck_assert_uint_eq(s[i].seq, next);
				ck_assert_uint_eq(s[i].rip, ~next);
				next++;
			}
			svmtrace_ring_release(&r.c, n);
		}
		if (!closed)
			sched_yield();
	} while (!closed);
	pthread_join(t, NULL);
	ck_assert_uint_eq(next, THREAD_SLOTS);
	ck_assert_uint_eq(r.p.dropped, 0);
	ring_teardown(&r);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("protocol");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, header_is_validated);
	tcase_add_test(tc, xstate_ring_strides_by_its_slot_size);
	tcase_add_test(tc, mem_ring_has_its_tail_after_the_xstate_tail);
	tcase_add_test(tc, peek_stops_at_the_wrap);
	tcase_add_test(tc, full_ring_drops_and_marks_the_gap);
	tcase_add_test(tc, hostile_tail_is_clamped);
	tcase_add_test(tc, close_is_seen);
	tcase_add_test(tc, two_threads_deliver_every_slot_in_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
