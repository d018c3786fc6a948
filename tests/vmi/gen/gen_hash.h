/* SPDX-License-Identifier: GPL-2.0 */
/* A u64 -> u64 hash map (open addressing), the generator's bookkeeping. */
#ifndef SVMTRACE_VMI_GEN_HASH_H
#define SVMTRACE_VMI_GEN_HASH_H

#include <stddef.h>
#include <stdint.h>

struct gen_hash {
	uint64_t *keys; /* UINT64_MAX = empty (never a real key) */
	uint64_t *vals;
	size_t cap, used;
};

void gen_hash_init(struct gen_hash *h);
void gen_hash_free(struct gen_hash *h);
void gen_hash_put(struct gen_hash *h, uint64_t key, uint64_t val);
/* 1 and *val if present, else 0. */
int gen_hash_get(const struct gen_hash *h, uint64_t key, uint64_t *val);

#endif
