// SPDX-License-Identifier: GPL-2.0
/*
 * The TSC a lab program reads, as the model knows it.
 *
 * Untraced, a native clock: an ordinary instruction costs 1 cycle, an
 * RDTSC or RDTSCP 40, an instruction the hypervisor completes (CPUID, IN,
 * OUT) 1360 -- the costs --hide-time charges by default, so that the
 * model's run is what the virtual time imitates: a guest on hardware that
 * nobody traces.  Every instruction of every mode counts.
 *
 * Traced (--tsc-from CSV), no model can know the real TSC: each read takes
 * the value the capture recorded, EDX:EAX of the read's own row (the state
 * after it).  Everything else follows from the model's semantics, so every
 * other register of every row is still checked (check-trace.sh); RAX and
 * RDX of a read's row are the only values the trace itself supplies.  With
 * --tsc-check FILE, one line per read for the judge: the delta since the
 * previous read and what virtual time owes for the target's steps in
 * between at these costs, less the fraction of a cycle (each read drops
 * it) -- exactly that when they were ordinary steps and reads of one
 * stretch, at least that when the target was not stepped for a while (a
 * system call, an event: real time passed) or the hypervisor completed one
 * of them (the time it took counts too).
 */
#include <stdlib.h>
#include <string.h>

#include <svmtrace/abi.h>

#include "clock.h"

void clock_init(struct model_clock *k)
{
	memset(k, 0, sizeof(*k));
	k->costs.insn = SVMTRACE_TIME_INSN_X256 / 256.0;
	k->costs.tsc_read = SVMTRACE_TIME_TSC_READ;
	k->costs.exit = SVMTRACE_TIME_EXIT;
	k->exact = 1;
}

int clock_costs(struct model_clock *k, const char *arg)
{
	unsigned long long tsc, ex;
	double insn;
	char end;

	if (sscanf(arg, "%lf,%llu,%llu%c", &insn, &tsc, &ex, &end) != 3 || !(insn > 0) || !tsc ||
	    !ex)
		return -1;
	k->costs.insn = insn;
	k->costs.tsc_read = tsc;
	k->costs.exit = ex;
	return 0;
}

/* Field @n (1-based) of a CSV line, as a number; 0 when absent. */
static uint64_t field(const char *line, int n)
{
	while (--n > 0 && line)
		line = strchr(line, ',') ? strchr(line, ',') + 1 : NULL;
	return line ? strtoull(line, NULL, 0) : 0;
}

int clock_from(struct model_clock *k, const char *path, int cpu, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0;

	if (!f) {
		snprintf(err, len, "%s: cannot open", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		/* cpu,sequence,kind,rip,rflags,cr3,reason,rax,rbx,rcx,rdx,... */
		if (!strncmp(line, "cpu,", 4) || (int)field(line, 1) != cpu)
			continue;
		if (k->nr_values == cap) {
			cap = cap ? 2 * cap : 4096;
			k->values = realloc(k->values, cap * sizeof(*k->values));
			if (!k->values) {
				fclose(f);
				snprintf(err, len, "out of memory");
				return -1;
			}
		}
		k->values[k->nr_values++] = (field(line, 11) & 0xffffffffull) << 32 |
					    (field(line, 8) & 0xffffffffull);
	}
	fclose(f);
	return 0;
}

const char *model_clock_read(struct model_cpu *c, uint64_t *tsc)
{
	struct model_clock *k = c->clock;
	unsigned long long row = *k->row;

	if (!k->values) {
		k->now += (double)k->costs.tsc_read;
		*tsc = (uint64_t)k->now;
		return NULL;
	}
	if (row >= k->nr_values) {
		snprintf(k->why, sizeof(k->why), "a TSC read at row %llu, past the capture's %zu rows",
			 row, k->nr_values);
		return k->why;
	}
	*tsc = k->values[row];
	if (k->check && k->have_prev)
		fprintf(k->check, "row=%llu value=0x%llx delta=%llu owed=%llu %s\n", row,
			(unsigned long long)*tsc, (unsigned long long)(*tsc - k->prev),
			(unsigned long long)k->owed + k->costs.tsc_read,
			k->exact ? "exact" : "at-least");
	k->have_prev = 1;
	k->prev = *tsc;
	k->owed = 0;
	k->exact = 1;
	return NULL;
}

void clock_account(struct model_clock *k, const struct model_cpu *c, int traced, int parked)
{
	double cost = c->insn_class == MODEL_INSN_EXIT	? (double)k->costs.exit :
		      c->insn_class == MODEL_INSN_PLAIN ? k->costs.insn :
							  0; /* a read counted itself */

	if (!k->values) {
		k->now += cost;
		return;
	}
	if (!traced || parked || c->insn_class == MODEL_INSN_EXIT)
		k->exact = 0;
	if (traced && !parked)
		k->owed += cost;
}
