// SPDX-License-Identifier: GPL-2.0
/*
 * The options both capture programs take (--policy, --kernel, --rip-range,
 * --duration, --max-records, --ring-slots, --wake-batch, --xstate, --mem,
 * --anchor-interval, --hide-time, --time-costs), parsed into the kernel
 * target and the limits the same way, dying with the argument named.
 */
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/capture.h"

uint32_t parse_u32(const char *arg, const char *what, uint64_t min, uint64_t max)
{
	uint64_t v = parse_u64(arg, what);

	if (v < min || v > max)
		die("%s %s: expected %llu..%llu", what, arg, (unsigned long long)min,
		    (unsigned long long)max);
	return (uint32_t)v;
}

double parse_seconds(const char *arg, const char *what)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > 0) || v > 1e9)
		die("%s: expected seconds > 0, got '%s'", what, arg);
	return v;
}

static void policy(struct svmtrace_target *t, const char *arg)
{
	if (!strcmp(arg, "drop"))
		t->policy = SVMTRACE_POLICY_DROP;
	else if (!strcmp(arg, "block"))
		t->policy = SVMTRACE_POLICY_BLOCK;
	else
		die("--policy: expected drop or block, got '%s'", arg);
}

static void rip_range(struct svmtrace_target *t, const char *arg)
{
	uint64_t lo, hi;

	if (t->nr_ranges == SVMTRACE_MAX_RANGES)
		die("--rip-range: at most %d ranges", SVMTRACE_MAX_RANGES);
	parse_rip_range(arg, &lo, &hi);
	t->ranges[t->nr_ranges].start = lo;
	t->ranges[t->nr_ranges].end = hi;
	t->nr_ranges++;
}

/*
 * --time-costs INSN,TSC,EXIT: guest TSC cycles an instruction takes (a
 * decimal, kept in 1/256 cycles), an RDTSC or RDTSCP takes, and an exit
 * round trip adds to an instruction KVM completes.
 */
static void time_costs(struct svmtrace_target *t, const char *arg)
{
	const char *what = "--time-costs";
	char *end, *e2, *e3;
	double insn = strtod(arg, &end);
	unsigned long long tsc = *end == ',' ? strtoull(end + 1, &e2, 10) : 0;
	unsigned long long ex = tsc && *e2 == ',' ? strtoull(e2 + 1, &e3, 10) : 0;

	if (end == arg || !tsc || !ex || *e3 || e2 == end + 1 || e3 == e2 + 1)
		die("%s %s: expected INSN,TSC,EXIT (cycles: a decimal, two integers)", what, arg);
	if (!(insn * 256 >= 1) || insn * 256 > SVMTRACE_TIME_MAX_INSN_X256)
		die("%s %s: INSN expected in 1/256..%u cycles", what, arg,
		    SVMTRACE_TIME_MAX_INSN_X256 / 256);
	if (tsc > SVMTRACE_TIME_MAX_TSC_READ)
		die("%s %s: TSC expected in 1..%u cycles", what, arg, SVMTRACE_TIME_MAX_TSC_READ);
	if (ex > SVMTRACE_TIME_MAX_EXIT)
		die("%s %s: EXIT expected in 1..%u cycles", what, arg, SVMTRACE_TIME_MAX_EXIT);
	t->time.insn_x256 = (uint32_t)(insn * 256 + 0.5);
	t->time.tsc_read = (uint32_t)tsc;
	t->time.exit = (uint32_t)ex;
}

bool capture_opt(int c, const char *arg, struct svmtrace_target *t, struct capture_limits *lim)
{
	switch (c) {
	case OPT_POLICY:
		policy(t, arg);
		return true;
	case OPT_KERNEL:
		t->flags |= SVMTRACE_TARGET_F_KERNEL;
		return true;
	case OPT_RIP_RANGE:
		rip_range(t, arg);
		return true;
	case OPT_DURATION:
		lim->duration = parse_seconds(arg, "--duration");
		return true;
	case OPT_MAX_RECORDS:
		lim->max_records = parse_u64(arg, "--max-records");
		return true;
	case OPT_RING_SLOTS:
		t->ring_slots = parse_u32(arg, "--ring-slots", SVMTRACE_MIN_RING_SLOTS,
					  SVMTRACE_MAX_RING_SLOTS);
		if (t->ring_slots & (t->ring_slots - 1))
			die("--ring-slots %s: not a power of two", arg);
		return true;
	case OPT_WAKE_BATCH:
		t->wake_batch = parse_u32(arg, "--wake-batch", 1, UINT32_MAX);
		return true;
	case OPT_XSTATE:
		t->flags |= SVMTRACE_TARGET_F_XSTATE;
		return true;
	case OPT_MEM:
		t->flags |= SVMTRACE_TARGET_F_MEM;
		return true;
	case OPT_ANCHOR_INTERVAL:
		lim->anchor_interval = parse_u32(arg, "--anchor-interval", 1, UINT32_MAX);
		return true;
	case OPT_HIDE_TIME:
		t->flags |= SVMTRACE_TARGET_F_HIDE_TIME;
		return true;
	case OPT_TIME_COSTS:
		time_costs(t, arg);
		return true;
	}
	return false;
}

void target_opt_check(const struct svmtrace_target *t)
{
	if (t->wake_batch &&
	    t->wake_batch > (t->ring_slots ? t->ring_slots : SVMTRACE_DEFAULT_RING_SLOTS) / 2)
		die("--wake-batch %u: at most half the ring", t->wake_batch);
	/* 768-byte slots: the kernel caps the ring at the same 768 MiB. */
	if ((t->flags & SVMTRACE_TARGET_F_XSTATE) && t->ring_slots > SVMTRACE_MAX_XSTATE_RING_SLOTS)
		die("--ring-slots %u: at most %u with --xstate", t->ring_slots,
		    SVMTRACE_MAX_XSTATE_RING_SLOTS);
	/* 1536- or 2112-byte slots: at most 528 MiB per ring. */
	if ((t->flags & SVMTRACE_TARGET_F_MEM) && t->ring_slots > SVMTRACE_MAX_MEM_RING_SLOTS)
		die("--ring-slots %u: at most %u with --mem", t->ring_slots,
		    SVMTRACE_MAX_MEM_RING_SLOTS);
	if (t->time.insn_x256 && !(t->flags & SVMTRACE_TARGET_F_HIDE_TIME))
		die("--time-costs: only with --hide-time");
}
