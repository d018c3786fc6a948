// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only knobs and counters, built into the nested lab's modules only (kmod/build.sh
 * --lab, `make kmod-lab`): the modules users install do not have them.  The nested lab proves
 * that the exit audit (--audit) catches what the module's own accounting
 * cannot: kvm.svmtrace_test_lose_step=N makes the next N recordable steps
 * vanish -- no slot, no drop, no count -- as a bug in the capture path
 * would.  The module's counters then still agree with the ring (written +
 * dropped = produced), but the #DB exits the BPF program saw no longer
 * balance.  Default 0: one load of a global per recorded step
 * (svmtrace_test_lose_step(), inline in svmtrace.h).
 */
#include <linux/module.h>

#include "svmtrace.h"

unsigned int svmtrace_lose_step;
module_param_named(svmtrace_test_lose_step, svmtrace_lose_step, uint, 0644);
MODULE_PARM_DESC(svmtrace_test_lose_step,
		 "test only: lose the next N recordable steps silently (the exit audit must fail)");

/* The parameter is set: take one unit of it, if another step did not. */
bool svmtrace_test_lose_step_slow(void)
{
	unsigned int n = READ_ONCE(svmtrace_lose_step);

	return n && cmpxchg(&svmtrace_lose_step, n, n - 1) == n;
}

/*
 * kvm.svmtrace_test_transitions (read-only): every transition of a vCPU's
 * state (vstate.c) the module made since it was loaded, one line each --
 * "DIMENSION EVENT FROM TO COUNT" for every row of the table, count 0
 * included, then "DIMENSION EVENT FROM - COUNT unlisted" for each event
 * made from a state the table does not list (the kernel log has its
 * WARNING too).  The lab checks it against docs/kmod.md's table.
 */
static atomic_long_t transitions[SVMTRACE_NR_EVENTS][SVMTRACE_MAX_STATES];

void svmtrace_test_transition(enum svmtrace_event ev, u8 from)
{
	if (ev < SVMTRACE_NR_EVENTS && from < SVMTRACE_MAX_STATES)
		atomic_long_inc(&transitions[ev][from]);
}

static int transitions_get(char *buf, const struct kernel_param *kp)
{
	enum svmtrace_dim d;
	int len = 0, ev;
	u8 from, to, mask;
	const char *name;
	long n;

	for (ev = 0; ev < SVMTRACE_NR_EVENTS; ev++) {
		name = svmtrace_event_name(ev, &d, &to, &mask) ?: "?";
		for (from = 0; from < SVMTRACE_MAX_STATES; from++) {
			n = atomic_long_read(&transitions[ev][from]);
			if (mask & BIT(from))
				len += scnprintf(buf + len, PAGE_SIZE - len, "%s %s %s %s %ld\n",
						 svmtrace_dim_name(d), name,
						 svmtrace_state_name(d, from),
						 svmtrace_state_name(d, to), n);
			else if (n)
				len += scnprintf(buf + len, PAGE_SIZE - len,
						 "%s %s %s - %ld unlisted\n", svmtrace_dim_name(d),
						 name, svmtrace_state_name(d, from), n);
		}
	}
	return len;
}

static const struct kernel_param_ops transitions_ops = {
	.get = transitions_get,
};
module_param_cb(svmtrace_test_transitions, &transitions_ops, NULL, 0444);
MODULE_PARM_DESC(svmtrace_test_transitions,
		 "test only: the vCPU state transitions made, per row of the table (read-only)");
