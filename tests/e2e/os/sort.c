// SPDX-License-Identifier: GPL-2.0
/*
 * os-sort: insertion sort of 50 pseudo-random words, moving itself between
 * the two vCPUs every 16 outer rounds; first touches 32 fresh pages (demand-
 * zero faults).  Traced from gate_main on (gate.h).
 */
#include "gate.h"

const char prog_name[] = "sort";

#define N 50
static u32 data[N];
static volatile u8 fresh[32 * 4096];

static u32 next(u32 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

GATE void gate_main(void)
{
	u32 x = 2463534242u, sum = 0;
	int i, j;

	for (i = 0; i < (int)sizeof(fresh); i += 4096)
		fresh[i] = (u8)i;
	for (i = 0; i < N; i++)
		data[i] = next(&x) % 100000;
	for (i = 1; i < N; i++) {
		u32 v = data[i];

		if (i % 16 == 0)
			pin((i / 16) & 1);
		for (j = i; j > 0 && data[j - 1] > v; j--)
			data[j] = data[j - 1];
		data[j] = v;
	}
	for (i = 0; i < N; i++) {
		if (i && data[i - 1] > data[i])
			die();
		sum = sum * 31 + data[i];
	}
	say(prog_name, "result", sum);
	sys3(SYS_exit_group, 0, 0, 0);
	__builtin_unreachable();
}
