// SPDX-License-Identifier: GPL-2.0
#include "gen_hash.h"
#include "gen.h"

#include <stdlib.h>
#include <string.h>

static void alloc(struct gen_hash *h, size_t cap)
{
	h->cap = cap;
	h->used = 0;
	h->keys = malloc(cap * sizeof(*h->keys));
	h->vals = malloc(cap * sizeof(*h->vals));
	if (!h->keys || !h->vals)
		gen_die("out of memory");
	memset(h->keys, 0xff, cap * sizeof(*h->keys));
}

void gen_hash_init(struct gen_hash *h)
{
	alloc(h, 1024);
}

void gen_hash_free(struct gen_hash *h)
{
	free(h->keys);
	free(h->vals);
}

static size_t slot(const struct gen_hash *h, uint64_t key)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 32) & (h->cap - 1);

	while (h->keys[i] != UINT64_MAX && h->keys[i] != key)
		i = (i + 1) & (h->cap - 1);
	return i;
}

void gen_hash_put(struct gen_hash *h, uint64_t key, uint64_t val)
{
	size_t s;

	if ((h->used + 1) * 2 > h->cap) {
		struct gen_hash old = *h;
		size_t i;

		alloc(h, old.cap * 2);
		for (i = 0; i < old.cap; i++)
			if (old.keys[i] != UINT64_MAX)
				gen_hash_put(h, old.keys[i], old.vals[i]);
		gen_hash_free(&old);
	}
	s = slot(h, key);
	if (h->keys[s] == UINT64_MAX)
		h->used++;
	h->keys[s] = key;
	h->vals[s] = val;
}

int gen_hash_get(const struct gen_hash *h, uint64_t key, uint64_t *val)
{
	size_t s = slot(h, key);

	if (h->keys[s] == UINT64_MAX)
		return 0;
	*val = h->vals[s];
	return 1;
}
