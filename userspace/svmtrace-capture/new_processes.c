// SPDX-License-Identifier: GPL-2.0
/*
 * --new-processes: every address space whose first thread begins while the
 * capture runs joins the target there.  The kernel holds such a thread at
 * first_rip (SVMTRACE_TARGET_F_ASK) until we answer; without introspection
 * there is nothing to look at, so the answer is always the same: its CR3
 * joins, and the thread is traced from that first instruction (FIRST).
 * When the kernel's table of address spaces is full the thread runs on
 * untraced, and the summary counts it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/cli.h"
#include "svmtrace-capture/new_processes.h"

static void decide(int ctl, const struct svmtrace_ask *ask, struct new_processes *np)
{
	struct svmtrace_decision d = { .vcpu = ask->vcpu,
				       .verdict = SVMTRACE_VERDICT_TARGET,
				       .cr3 = ask->cr3,
				       .nr_cr3 = 1,
				       .add_cr3 = { ask->cr3 } };

	if (!ioctl(ctl, SVMTRACE_DECIDE, &d)) {
		np->joined++;
		return;
	}
	if (errno == ESRCH) /* stopped meanwhile */
		return;
	if (errno != ENOSPC)
		die("decide about CR3 0x%" PRIx64 " of vCPU %u: %s", (uint64_t)ask->cr3, ask->vcpu,
		    strerror(errno));
	if (!np->lost++)
		warn("CR3 0x%" PRIx64 " is not traced: the kernel's table of address spaces is "
		     "full",
		     (uint64_t)ask->cr3);
	control_release(ctl, ask);
}

const char *new_processes_serve(struct capture *cap, void *ctx)
{
	struct new_processes *np = ctx;
	struct svmtrace_asks asks;
	uint32_t i;

	control_asks(cap->ctl, &asks);
	for (i = 0; i < asks.nr; i++)
		decide(cap->ctl, &asks.asks[i], np);
	return NULL;
}

void new_processes_report(const struct new_processes *np)
{
	printf("new address spaces: joined=%" PRIu64 " lost=%" PRIu64 "\n", np->joined, np->lost);
}
