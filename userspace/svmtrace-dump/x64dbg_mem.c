// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/x64dbg_mem.h"

#include <stdlib.h>
#include <string.h>

#include "common/cli.h"

#define PIECE 8 /* x64dbg's duint on x64 */
/*
 * The image never holds more than this many 8-byte blocks (about 100 MiB);
 * past it, it forgets everything, which only leaves more accesses out.
 */
#define IMAGE_MAX_BLOCKS (1u << 22)
/* The most bytes one instruction's recorded accesses cover. */
#define STEP_MAX_BYTES (SVMTRACE_MEM_MAX_ACCESSES * SVMTRACE_MEM_MAX_VALUE)

void x64dbg_mem_free(struct x64dbg_mem *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->used = 0;
}

void x64dbg_mem_forget(struct x64dbg_mem *m)
{
	if (m->used)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->used = 0;
}

static size_t slot_index(const struct x64dbg_mem *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
}

/* The slot of @key, or where it goes; NULL when absent and !@create. */
static struct x64dbg_image_slot *image_slot(struct x64dbg_mem *m, uint64_t addr, bool create)
{
	uint64_t key = (addr >> 3) + 1;
	size_t i;

	if (create && (m->used + 1) * 2 > m->cap) {
		struct x64dbg_image_slot *old = m->slots;
		size_t oc = m->cap;

		if (oc >= IMAGE_MAX_BLOCKS) {
			x64dbg_mem_forget(m);
		} else {
			m->cap = oc ? oc * 2 : 1024;
			m->slots = calloc(m->cap, sizeof(*m->slots));
			if (!m->slots)
				die("out of memory");
			for (size_t k = 0; k < oc; k++) {
				if (!old[k].block)
					continue;
				for (i = slot_index(m, old[k].block); m->slots[i].block;
				     i = (i + 1) & (m->cap - 1))
					;
				m->slots[i] = old[k];
			}
			free(old);
		}
	}
	if (!m->cap)
		return NULL;
	for (i = slot_index(m, key); m->slots[i].block; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].block == key)
			return &m->slots[i];
	if (!create)
		return NULL;
	m->used++;
	m->slots[i].block = key;
	return &m->slots[i];
}

static bool image_get(struct x64dbg_mem *m, uint64_t addr, uint8_t *b)
{
	const struct x64dbg_image_slot *s = image_slot(m, addr, false);

	if (!s || !(s->known >> (addr & 7) & 1))
		return false;
	*b = s->bytes[addr & 7];
	return true;
}

static void image_put(struct x64dbg_mem *m, uint64_t addr, bool known, uint8_t b)
{
	struct x64dbg_image_slot *s = image_slot(m, addr, known);

	if (!s)
		return;
	if (known) {
		s->bytes[addr & 7] = b;
		s->known |= (uint8_t)(1u << (addr & 7));
	} else {
		s->known &= (uint8_t) ~(1u << (addr & 7));
	}
}

/* Forget [lo, lo + size), modulo 2^64: by its blocks, or by the image's when fewer. */
static void image_erase(struct x64dbg_mem *m, uint64_t lo, uint64_t size)
{
	if (size / PIECE + 2 < m->used) {
		for (uint64_t i = 0; i < size; i++)
			image_put(m, lo + i, false, 0);
		return;
	}
	for (size_t k = 0; k < m->cap; k++) {
		struct x64dbg_image_slot *s = &m->slots[k];

		for (unsigned int i = 0; s->block && i < PIECE; i++)
			if (((s->block - 1) << 3 | i) - lo < size)
				s->known &= (uint8_t) ~(1u << i);
	}
}

static bool reads(const struct svmtrace_mem_access *a)
{
	return a->kind == SVMTRACE_MEM_READ || a->kind == SVMTRACE_MEM_RMW;
}

static bool writes(const struct svmtrace_mem_access *a)
{
	return a->kind == SVMTRACE_MEM_WRITE || a->kind == SVMTRACE_MEM_RMW;
}

/* Does @a cover @addr?  An unrecorded access of unknown size (0) may cover any byte. */
static bool covers(const struct svmtrace_mem_access *a, uint64_t addr)
{
	if (a->kind == SVMTRACE_MEM_UNRECORDED && !a->size)
		return true;
	return addr - a->addr < a->size;
}

/* A byte's value before and after the instruction; false where not known. */
struct byte_state {
	bool before_known, after_known;
	uint8_t before, after;
};

/*
 * Replay the instruction's accesses, in their order, on one byte: the first
 * access to it tells its old value when it reads it; the last one its new
 * value (what it wrote, or read); an unrecorded one makes it unknown.
 * Bytes no access touches keep the image's value.
 */
static struct byte_state byte_state(struct x64dbg_mem *m, const struct svmtrace_mem_access *acc,
				    unsigned int n, uint64_t addr)
{
	struct byte_state s = { 0 };
	bool touched = false;

	s.before_known = image_get(m, addr, &s.before);
	s.after_known = s.before_known;
	s.after = s.before;
	for (unsigned int k = 0; k < n; k++) {
		const struct svmtrace_mem_access *a = &acc[k];
		uint64_t off = addr - a->addr;

		if (!covers(a, addr))
			continue;
		if (a->kind == SVMTRACE_MEM_UNRECORDED) {
			s.after_known = false;
		} else {
			if (reads(a)) {
				if (!touched) {
					s.before_known = true;
					s.before = a->read_value[off];
				}
				s.after_known = true;
				s.after = a->read_value[off];
			}
			if (writes(a)) {
				s.after_known = true;
				s.after = a->write_value[off];
			}
		}
		touched = true;
	}
	return s;
}

/* Access @k's pieces into @out; false when a byte of one is not known. */
static bool pieces(struct x64dbg_mem *m, const struct svmtrace_mem_access *acc, unsigned int n,
		   unsigned int k, struct x64dbg_entry *out)
{
	const struct svmtrace_mem_access *a = &acc[k];
	unsigned int np = (a->size + PIECE - 1) / PIECE;

	for (unsigned int p = 0; p < np; p++) {
		struct x64dbg_entry *e = &out[p];

		e->addr = a->addr + (uint64_t)p * PIECE;
		e->old_bytes = e->new_bytes = 0;
		for (unsigned int i = 0; i < PIECE; i++) {
			struct byte_state s = byte_state(m, acc, n, e->addr + i);

			if (!s.before_known || !s.after_known)
				return false;
			e->old_bytes |= (uint64_t)s.before << (8 * i);
			e->new_bytes |= (uint64_t)s.after << (8 * i);
		}
	}
	return true;
}

/* The image after the instruction: what its accesses left, unrecorded ones forgotten. */
static void learn(struct x64dbg_mem *m, const struct svmtrace_mem_access *acc, unsigned int n)
{
	uint64_t addr[STEP_MAX_BYTES];
	struct byte_state after[STEP_MAX_BYTES];
	unsigned int nb = 0, k;
	bool wild = false;

	for (k = 0; k < n; k++) {
		if (acc[k].kind == SVMTRACE_MEM_UNRECORDED)
			continue;
		for (uint32_t i = 0; i < acc[k].size; i++) {
			addr[nb] = acc[k].addr + i;
			after[nb++] = byte_state(m, acc, n, acc[k].addr + i);
		}
	}
	for (k = 0; k < n; k++) {
		if (acc[k].kind != SVMTRACE_MEM_UNRECORDED)
			continue;
		if (!acc[k].size)
			wild = true;
		else
			image_erase(m, acc[k].addr, acc[k].size);
	}
	if (wild)
		x64dbg_mem_forget(m);
	for (unsigned int i = 0; i < nb; i++)
		image_put(m, addr[i], after[i].after_known, after[i].after);
}

unsigned int x64dbg_mem_step(struct x64dbg_mem *m, const struct svmtrace_mem_access *acc,
			     unsigned int n, struct x64dbg_entry *out)
{
	struct x64dbg_entry e[SVMTRACE_MEM_MAX_VALUE / PIECE];
	unsigned int nout = 0;

	for (unsigned int k = 0; k < n; k++) {
		unsigned int np = (acc[k].size + PIECE - 1) / PIECE;

		m->counts.accesses++;
		if (!out)
			m->counts.no_block++;
		else if (acc[k].kind == SVMTRACE_MEM_UNRECORDED)
			m->counts.unrecorded++;
		else if (!pieces(m, acc, n, k, e))
			m->counts.unknown++;
		else if (nout + np > X64DBG_MAX_ENTRIES)
			m->counts.over_limit++;
		else
			for (unsigned int p = 0; p < np; p++)
				out[nout++] = e[p];
	}
	learn(m, acc, n);
	return nout;
}

uint64_t x64dbg_mem_left_out(const struct x64dbg_mem_counts *c)
{
	return c->unknown + c->unrecorded + c->no_block + c->over_limit;
}
