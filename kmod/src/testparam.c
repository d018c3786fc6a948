// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only knobs, built into the nested lab's modules only (kmod/build.sh
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
