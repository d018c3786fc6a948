// SPDX-License-Identifier: GPL-2.0
#include "svmtrace-dump/counts.h"

#include <stdlib.h>

#include "common/cli.h"

static size_t slot_of(const struct counts *c, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (c->cap - 1);
}

static void grow(struct counts *c)
{
	struct counts bigger = { .cap = c->cap ? c->cap * 2 : 4096 };

	bigger.e = calloc(bigger.cap, sizeof(*bigger.e));
	if (!bigger.e)
		die("out of memory for %zu counters", bigger.cap);
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->e[i].count)
			continue;
		for (j = slot_of(&bigger, c->e[i].key); bigger.e[j].count;
		     j = (j + 1) & (bigger.cap - 1))
			;
		bigger.e[j] = c->e[i];
	}
	bigger.used = c->used;
	free(c->e);
	*c = bigger;
}

void counts_init(struct counts *c)
{
	c->e = NULL;
	c->cap = 0;
	c->used = 0;
	grow(c);
}

void counts_free(struct counts *c)
{
	free(c->e);
	c->e = NULL;
}

void counts_add(struct counts *c, uint64_t key)
{
	size_t i;

	for (i = slot_of(c, key); c->e[i].count; i = (i + 1) & (c->cap - 1)) {
		if (c->e[i].key == key) {
			c->e[i].count++;
			return;
		}
	}
	c->e[i].key = key;
	c->e[i].count = 1;
	if (++c->used * 2 > c->cap)
		grow(c);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct count_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

size_t counts_top(const struct counts *c, struct count_entry *top, size_t n)
{
	size_t filled = 0;

	if (!n)
		return 0;
	/* Keep the best n in top[], sorted; entries beyond it are rare enough to insert. */
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->e[i].count)
			continue;
		if (filled == n && by_count_desc(&c->e[i], &top[n - 1]) >= 0)
			continue;
		j = filled < n ? filled++ : n - 1;
		while (j > 0 && by_count_desc(&c->e[i], &top[j - 1]) < 0) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = c->e[i];
	}
	return filled;
}
