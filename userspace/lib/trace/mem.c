// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/trace/wire.h"

int mem_init(struct mem_coder *c)
{
	memset(c, 0, sizeof(*c));
	c->entries = calloc(MEM_PREDICT_ENTRIES, sizeof(*c->entries));
	if (!c->entries)
		return -1;
	c->epoch = 1;
	return 0;
}

void mem_free(struct mem_coder *c)
{
	free(c->entries);
	c->entries = NULL;
}

void mem_frame_start(struct mem_coder *c)
{
	c->last_end = 0;
	/* entries are zeroed with epoch 0, which is never current */
	if (++c->epoch == 0) {
		memset(c->entries, 0, MEM_PREDICT_ENTRIES * sizeof(*c->entries));
		c->epoch = 1;
	}
}

/* The entry of the instruction at @from: the same index as the GPR table's. */
static struct mem_entry *mem_slot(struct mem_coder *c, uint64_t from)
{
	return &c->entries[(from * 0x9e3779b97f4a7c15ull) >> (64 - MEM_PREDICT_BITS)];
}

static bool has_read(unsigned int kind)
{
	return kind == SVMTRACE_MEM_READ || kind == SVMTRACE_MEM_RMW;
}

static bool has_write(unsigned int kind)
{
	return kind == SVMTRACE_MEM_WRITE || kind == SVMTRACE_MEM_RMW;
}

const char *mem_access_check(const struct svmtrace_mem_access *a)
{
	if (a->kind > SVMTRACE_MEM_RMW)
		return "kind is not 0..3";
	if (a->kind == SVMTRACE_MEM_UNRECORDED)
		return a->why >= 1 && a->why <= SVMTRACE_MEM_WHY_MAX
			       ? NULL
			       : "unrecorded, why is not 1..4";
	if (a->why)
		return "recorded, why is not 0";
	if (a->size < 1 || a->size > SVMTRACE_MEM_MAX_VALUE)
		return "recorded, size is not 1..32";
	return NULL;
}

/*
 * Where access @k's stored address difference counts from: what the entry
 * predicts for it (its last address plus its stride), else the end of the
 * access before it in the record, else (a delta's first) the end of the
 * frame's last access, else 0.  Full records (@e NULL, @delta false) depend
 * on nothing before them.
 */
static uint64_t addr_base(const struct mem_coder *c, const struct mem_entry *e, bool delta,
			  unsigned int k)
{
	if (e && k < e->n)
		return e->acc[k].addr + e->acc[k].stride;
	if (k)
		return c->acc[k - 1].addr + c->acc[k - 1].size;
	return delta ? c->last_end : 0;
}

/* The low @size bytes of @v, memory order. */
static void reg_bytes(uint64_t v, uint32_t size, uint8_t *out)
{
	for (uint32_t i = 0; i < size; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

static bool reg_matches(uint64_t v, const uint8_t *value, uint32_t size)
{
	uint8_t b[8];

	if (size > 8)
		return false;
	reg_bytes(v, size, b);
	return !memcmp(b, value, size);
}

/* The values of a part in order (read before written), for WIRE_SRC_PREV. */
struct prev_value {
	const uint8_t *bytes; /* NULL: none yet */
	uint32_t size;
};

/*
 * The entries learn every delta's part: its accesses (up to
 * MEM_PREDICT_ACCESSES, else none) with the stride from the entry's last
 * addresses when it predicted the same access, else 0.
 */
static void learn(struct mem_coder *c, struct mem_entry *e, bool hit, uint64_t from)
{
	unsigned int n = c->n <= MEM_PREDICT_ACCESSES ? c->n : 0;

	for (unsigned int k = 0; k < n; k++) {
		struct mem_learned *l = &e->acc[k];

		l->stride = hit && k < e->n ? c->acc[k].addr - l->addr : 0;
		l->addr = c->acc[k].addr;
		l->size = c->acc[k].size;
		l->desc = c->desc[k];
		l->regs = c->regs[k];
		l->why = c->acc[k].why;
	}
	e->rip = from;
	e->epoch = c->epoch;
	e->n = (uint8_t)n;
}

static void part_done(struct mem_coder *c, struct mem_entry *e, bool hit, uint64_t from)
{
	if (c->n)
		c->last_end = c->acc[c->n - 1].addr + c->acc[c->n - 1].size;
	if (e)
		learn(c, e, hit, from);
}

/* ---- encoder ---- */

/*
 * The source of a value: the one the entry's access used when it still
 * gives the value (so that the part stays predicted), else the value
 * before it, else the lowest GPR whose low bytes it is, else the RIP's
 * low bytes, else stored.  *reg gets the GPR.
 */
static unsigned int choose_source(const uint8_t *value, uint32_t size,
				  const struct svmtrace_state *st, const struct prev_value *prev,
				  int hint, unsigned int hint_reg, unsigned int *reg)
{
	bool prev_ok = prev->bytes && prev->size == size && !memcmp(prev->bytes, value, size);

	*reg = 0;
	if (hint == WIRE_SRC_STORED)
		return WIRE_SRC_STORED;
	if (hint == WIRE_SRC_PREV && prev_ok)
		return WIRE_SRC_PREV;
	if (hint == WIRE_SRC_REG && reg_matches(st->gpr[hint_reg], value, size)) {
		*reg = hint_reg;
		return WIRE_SRC_REG;
	}
	if (hint == WIRE_SRC_RIP && reg_matches(st->rip, value, size))
		return WIRE_SRC_RIP;
	if (prev_ok)
		return WIRE_SRC_PREV;
	for (unsigned int i = 0; i < SVMTRACE_NR_GPRS && size <= 8; i++) {
		if (reg_matches(st->gpr[i], value, size)) {
			*reg = i;
			return WIRE_SRC_REG;
		}
	}
	if (reg_matches(st->rip, value, size))
		return WIRE_SRC_RIP;
	return WIRE_SRC_STORED;
}

/* Descriptor and registers of access @k (into c->desc/regs), sources chosen. */
static void describe(struct mem_coder *c, const struct mem_entry *e, unsigned int k,
		     const struct svmtrace_state *st, struct prev_value *prev)
{
	const struct svmtrace_mem_access *a = &c->acc[k];
	const struct mem_learned *l =
		e && k < e->n && (e->acc[k].desc & WIRE_MEM_KIND) == a->kind ? &e->acc[k] : NULL;
	unsigned int rs = 0, ws = 0, rr = 0, wr = 0;

	if (has_read(a->kind)) {
		rs = choose_source(a->read_value, a->size, st, prev,
				   l ? l->desc >> WIRE_MEM_RSRC & 3 : -1, l ? l->regs >> 4 : 0,
				   &rr);
		*prev = (struct prev_value){ a->read_value, a->size };
	}
	if (has_write(a->kind)) {
		ws = choose_source(a->write_value, a->size, st, prev,
				   l ? l->desc >> WIRE_MEM_WSRC & 3 : -1, l ? l->regs & 15 : 0,
				   &wr);
		*prev = (struct prev_value){ a->write_value, a->size };
	}
	c->desc[k] = (uint8_t)(a->kind | rs << WIRE_MEM_RSRC | ws << WIRE_MEM_WSRC);
	c->regs[k] = (uint8_t)(rr << 4 | wr);
}

/* Does entry @e predict the part in c->acc, descriptors included? */
/*
 * Does entry @e predict the part in c->acc: its kinds, sizes, reasons and
 * value sources (its shape), and with @addresses their addresses too?
 */
static bool part_predicted(const struct mem_coder *c, const struct mem_entry *e, bool addresses)
{
	if (!e->n || e->n != c->n)
		return false;
	for (unsigned int k = 0; k < c->n; k++) {
		const struct mem_learned *l = &e->acc[k];
		const struct svmtrace_mem_access *a = &c->acc[k];

		if (l->desc != c->desc[k] || l->regs != c->regs[k] || l->why != a->why ||
		    l->size != a->size || (addresses && l->addr + l->stride != a->addr))
			return false;
	}
	return true;
}

static uint8_t *put_values(const struct mem_coder *c, unsigned int k, uint8_t *p)
{
	const struct svmtrace_mem_access *a = &c->acc[k];

	if (has_read(a->kind) && (c->desc[k] >> WIRE_MEM_RSRC & 3) == WIRE_SRC_STORED) {
		memcpy(p, a->read_value, a->size);
		p += a->size;
	}
	if (has_write(a->kind) && (c->desc[k] >> WIRE_MEM_WSRC & 3) == WIRE_SRC_STORED) {
		memcpy(p, a->write_value, a->size);
		p += a->size;
	}
	return p;
}

/*
 * The part as head 0x81 at @out: the entry's shape, each access's address
 * from the entry's prediction, then its stored values.  Returns its end.
 */
static uint8_t *put_shaped(const struct mem_coder *c, const struct mem_entry *e, uint8_t *out)
{
	uint8_t *p = out;

	*p++ = WIRE_MEM_SHAPED;
	for (unsigned int k = 0; k < c->n; k++) {
		p = wire_put_varint(p,
				    zigzag(c->acc[k].addr - (e->acc[k].addr + e->acc[k].stride)));
		p = put_values(c, k, p);
	}
	return p;
}

static unsigned int varint_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * The GPR of @st to count @addr from when that, with its byte, is shorter
 * than counting from @base (the address rules'); the lowest of the
 * shortest.  -1: @base is as short.
 */
static int base_register(const struct svmtrace_state *st, uint64_t addr, uint64_t base)
{
	unsigned int best = varint_len(zigzag(addr - base));
	int reg = -1;

	for (int i = 0; i < SVMTRACE_NR_GPRS; i++) {
		unsigned int len = 1 + varint_len(zigzag(addr - st->gpr[i]));

		if (len < best) {
			best = len;
			reg = i;
		}
	}
	return reg;
}

size_t mem_encode(struct mem_coder *c, bool delta, uint64_t from, const struct svmtrace_state *st,
		  const struct svmtrace_mem_access *acc, unsigned int n, uint8_t *out)
{
	struct mem_entry *e = delta ? mem_slot(c, from) : NULL;
	bool hit = e && e->epoch == c->epoch && e->rip == from;
	const struct mem_entry *pred = hit ? e : NULL;
	struct prev_value prev = { NULL, 0 };
	uint8_t *p = out + 1;

	c->n = n;
	memcpy(c->acc, acc, n * sizeof(*acc));
	for (unsigned int k = 0; k < n; k++)
		describe(c, pred, k, st, &prev);
	if (pred && part_predicted(c, pred, true)) {
		out[0] = WIRE_MEM_PREDICTED;
		for (unsigned int k = 0; k < n; k++)
			p = put_values(c, k, p);
	} else {
		out[0] = (uint8_t)n;
		for (unsigned int k = 0; k < n; k++) {
			const struct svmtrace_mem_access *a = &c->acc[k];
			unsigned int rs = c->desc[k] >> WIRE_MEM_RSRC & 3;
			unsigned int ws = c->desc[k] >> WIRE_MEM_WSRC & 3;

			uint64_t base = addr_base(c, pred, delta, k);
			int reg = base_register(st, a->addr, base);

			*p++ = c->desc[k] | (reg >= 0 ? WIRE_MEM_BASE : 0);
			if ((has_read(a->kind) && rs == WIRE_SRC_REG) ||
			    (has_write(a->kind) && ws == WIRE_SRC_REG))
				*p++ = c->regs[k];
			if (a->kind == SVMTRACE_MEM_UNRECORDED)
				*p++ = a->why;
			if (reg >= 0) {
				*p++ = (uint8_t)reg;
				base = st->gpr[reg];
			}
			p = wire_put_varint(p, zigzag(a->addr - base));
			p = wire_put_varint(p, a->size);
			p = put_values(c, k, p);
		}
		if (pred && part_predicted(c, pred, false)) {
			uint8_t shaped[WIRE_MEM_MAX];
			uint8_t *end = put_shaped(c, pred, shaped);

			if (end - shaped <= p - out) { /* not longer: the shape's form */
				memcpy(out, shaped, (size_t)(end - shaped));
				p = out + (end - shaped);
			}
		}
	}
	part_done(c, e, hit, from);
	return (size_t)(p - out);
}

/* ---- decoder ---- */

__attribute__((format(printf, 3, 4), cold)) static const uint8_t *fail(char *why, size_t why_size,
								       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
	return NULL;
}

struct part_reader {
	const uint8_t *end;
	char *why;
	size_t why_size;
	unsigned int k; /* the access being read, for messages */
};

#define FAIL(r, ...) fail((r)->why, (r)->why_size, __VA_ARGS__)

static const uint8_t *get_varint(struct part_reader *r, const uint8_t *p, uint64_t *v,
				 const char *what)
{
	const uint8_t *q = wire_get_varint(p, r->end, v);

	if (!q)
		return FAIL(r,
			    "memory access %u: %s varint runs past the frame, over 10 bytes or "
			    "past 64 bits",
			    r->k, what);
	return q;
}

/* One value of access @a from @src (read: @rd) into @dst. */
static const uint8_t *get_value(struct part_reader *r, const uint8_t *p, unsigned int src,
				unsigned int reg, const struct svmtrace_mem_access *a,
				const struct svmtrace_state *st, struct prev_value *prev,
				uint8_t *dst, const char *what)
{
	switch (src) {
	case WIRE_SRC_STORED:
		if ((size_t)(r->end - p) < a->size)
			return FAIL(r,
				    "memory access %u: %s value needs %u bytes, the frame has %zu",
				    r->k, what, a->size, (size_t)(r->end - p));
		memcpy(dst, p, a->size);
		p += a->size;
		break;
	case WIRE_SRC_REG:
		if (a->size > 8)
			return FAIL(r,
				    "memory access %u: %s value of %u bytes from register %s "
				    "(registers give at most 8)",
				    r->k, what, a->size, svmtrace_gpr_names[reg]);
		reg_bytes(st->gpr[reg], a->size, dst);
		break;
	case WIRE_SRC_RIP:
		if (a->size > 8)
			return FAIL(r,
				    "memory access %u: %s value of %u bytes from the RIP "
				    "(at most 8)",
				    r->k, what, a->size);
		reg_bytes(st->rip, a->size, dst);
		break;
	case WIRE_SRC_PREV:
		if (!prev->bytes)
			return FAIL(r,
				    "memory access %u: %s value repeats the value before it, "
				    "and the record has none",
				    r->k, what);
		if (prev->size != a->size)
			return FAIL(r, "memory access %u: %s value of %u bytes repeats one of %u",
				    r->k, what, a->size, prev->size);
		memcpy(dst, prev->bytes, a->size);
		break;
	}
	*prev = (struct prev_value){ dst, a->size };
	return p;
}

static const uint8_t *get_values(struct part_reader *r, const uint8_t *p, unsigned int desc,
				 unsigned int regs, struct svmtrace_mem_access *a,
				 const struct svmtrace_state *st, struct prev_value *prev)
{
	if (has_read(a->kind)) {
		p = get_value(r, p, desc >> WIRE_MEM_RSRC & 3, regs >> 4, a, st, prev,
			      a->read_value, "read");
		if (!p)
			return NULL;
	}
	if (has_write(a->kind))
		p = get_value(r, p, desc >> WIRE_MEM_WSRC & 3, regs & 15, a, st, prev,
			      a->write_value, "written");
	return p;
}

/* An explicit access @k at @p. */
static const uint8_t *explicit_access(struct mem_coder *c, struct part_reader *r, const uint8_t *p,
				      const struct mem_entry *pred, bool delta,
				      const struct svmtrace_state *st, struct prev_value *prev)
{
	struct svmtrace_mem_access *a = &c->acc[r->k];
	unsigned int desc, kind, rs, ws, regs = 0;
	uint64_t v, base;

	if (p >= r->end)
		return FAIL(r, "memory access %u runs past the end of the frame", r->k);
	desc = *p++;
	kind = desc & WIRE_MEM_KIND;
	rs = desc >> WIRE_MEM_RSRC & 3;
	ws = desc >> WIRE_MEM_WSRC & 3;
	if (desc & WIRE_MEM_RESERVED)
		return FAIL(r, "memory access %u: descriptor 0x%02x has reserved bits 0x%02x set",
			    r->k, desc, desc & WIRE_MEM_RESERVED);
	if ((rs && !has_read(kind)) || (ws && !has_write(kind)))
		return FAIL(r,
			    "memory access %u: descriptor 0x%02x gives a source to a value %s %s "
			    "access does not have",
			    r->k, desc, kind == SVMTRACE_MEM_UNRECORDED ? "an" : "a",
			    svmtrace_mem_kind_name(kind));
	if (rs == WIRE_SRC_REG || ws == WIRE_SRC_REG) {
		if (p >= r->end)
			return FAIL(r, "memory access %u: registers byte runs past the frame",
				    r->k);
		regs = *p++;
		if ((rs != WIRE_SRC_REG && regs >> 4) || (ws != WIRE_SRC_REG && regs & 15))
			return FAIL(r,
				    "memory access %u: registers byte 0x%02x names a register "
				    "for a value not taken from one",
				    r->k, regs);
	}
	memset(a, 0, sizeof(*a));
	a->kind = (uint8_t)kind;
	if (kind == SVMTRACE_MEM_UNRECORDED) {
		if (p >= r->end)
			return FAIL(r, "memory access %u: why byte runs past the frame", r->k);
		a->why = *p++;
		if (a->why < 1 || a->why > SVMTRACE_MEM_WHY_MAX)
			return FAIL(r, "memory access %u: unrecorded for reason %u (expected 1..4)",
				    r->k, a->why);
	}
	base = addr_base(c, pred, delta, r->k);
	if (desc & WIRE_MEM_BASE) {
		if (p >= r->end)
			return FAIL(r, "memory access %u: base register byte runs past the frame",
				    r->k);
		if (*p >= SVMTRACE_NR_GPRS)
			return FAIL(r, "memory access %u: base register %u (expected 0..15)", r->k,
				    *p);
		base = st->gpr[*p++];
	}
	if (!(p = get_varint(r, p, &v, "address")))
		return NULL;
	a->addr = base + unzigzag(v);
	if (!(p = get_varint(r, p, &v, "size")))
		return NULL;
	if (kind != SVMTRACE_MEM_UNRECORDED && (v < 1 || v > SVMTRACE_MEM_MAX_VALUE))
		return FAIL(r, "memory access %u: size %llu is outside 1..32", r->k,
			    (unsigned long long)v);
	if (v > UINT32_MAX)
		return FAIL(r, "memory access %u: size %llu does not fit in 32 bits", r->k,
			    (unsigned long long)v);
	a->size = (uint32_t)v;
	c->desc[r->k] =
		(uint8_t)(desc & ~WIRE_MEM_BASE); /* how the address was stored: not learned */
	c->regs[r->k] = (uint8_t)regs;
	return get_values(r, p, desc, regs, a, st, prev);
}

/* A predicted access @k: entry @e's, at its next address; stored values at @p. */
static const uint8_t *predicted_access(struct mem_coder *c, struct part_reader *r, const uint8_t *p,
				       const struct mem_entry *e, bool shaped,
				       const struct svmtrace_state *st, struct prev_value *prev)
{
	const struct mem_learned *l = &e->acc[r->k];
	struct svmtrace_mem_access *a = &c->acc[r->k];
	uint64_t v = 0;

	if (shaped && !(p = get_varint(r, p, &v, "address")))
		return NULL;
	memset(a, 0, sizeof(*a));
	a->kind = l->desc & WIRE_MEM_KIND;
	a->why = l->why;
	a->size = l->size;
	a->addr = l->addr + l->stride + unzigzag(v);
	c->desc[r->k] = l->desc;
	c->regs[r->k] = l->regs;
	return get_values(r, p, l->desc, l->regs, a, st, prev);
}

const uint8_t *mem_decode(struct mem_coder *c, bool delta, uint64_t from,
			  const struct svmtrace_state *st, const uint8_t *p, const uint8_t *end,
			  char *why, size_t why_size)
{
	struct part_reader r = { end, why, why_size, 0 };
	struct mem_entry *e = delta ? mem_slot(c, from) : NULL;
	bool hit = e && e->epoch == c->epoch && e->rip == from;
	const struct mem_entry *pred = hit ? e : NULL;
	struct prev_value prev = { NULL, 0 };
	unsigned int head;

	c->n = 0;
	if (p >= end)
		return fail(why, why_size, "memory part runs past the end of the frame");
	head = *p++;
	if (head == WIRE_MEM_PREDICTED || head == WIRE_MEM_SHAPED) {
		if (!delta)
			return fail(
				why, why_size,
				"memory part of a full record is predicted (0x%02x): full records "
				"predict nothing",
				head);
		if (!pred || !pred->n)
			return fail(why, why_size,
				    "memory part predicts the accesses of 0x%llx, which has %s",
				    (unsigned long long)from,
				    !pred ? "no history" : "none in its history");
		for (r.k = 0; r.k < pred->n; r.k++)
			if (!(p = predicted_access(c, &r, p, pred, head == WIRE_MEM_SHAPED, st,
						   &prev)))
				return NULL;
		c->n = pred->n;
	} else if (head <= SVMTRACE_MEM_MAX_ACCESSES) {
		for (r.k = 0; r.k < head; r.k++) {
			if (!(p = explicit_access(c, &r, p, pred, delta, st, &prev)))
				return NULL;
			c->n = r.k + 1;
		}
	} else {
		return fail(why, why_size,
			    "memory part header 0x%02x (expected 0..16, 0x80 or 0x81)", head);
	}
	part_done(c, e, hit, from);
	return p;
}
