// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-model: replay a lab program without KVM and write what an
 * exact user-mode instruction tracer must record for it, plus the results
 * the test VMM must print.  See usage[] and docs/lab.md.
 *
 * The recording rules are in tracer.c.  SYSCALL masks TF, so our trap
 * comes after SYSRET, at the user RIP: a system call is one record.  MOV
 * SS holds off the trap for one instruction, so no record (and no guest
 * #DB) follows it: the next trap covers both.  The program's final OUT to
 * PORT_DONE is never completed; the capture is stopped after it.
 *
 * The guest's own single-step #DBs (TF it sets with POPFQ) and the NMIs it
 * asks the VMM for (PORT_NMI) are delivered through its IDT as a CPU does,
 * and its kernel runs in the model too, so the kernel's counters come out
 * as on real hardware.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "../guest/image.h"
#include "model.h"
#include "tracer.h"

static const char usage[] =
	"usage: svmtrace-e2e-model [options] KERNEL.bin PROGRAM.bin\n"
	"Replay a lab program and print the results the test VMM must print.\n"
	"  -c, --vcpus N        vCPUs (1-2, default 1)\n"
	"  -a, --arg X          initial RDI of every vCPU\n"
	"  -o, --expect DIR     write DIR/expected_cpuN.csv: the records a tracer must\n"
	"                       produce (cpu,index,kind,rip,rflags,cr3,reason,rax..r15,\n"
	"                       rflags_undefined)\n"
	"  -n, --max-steps N    give up after N instructions per vCPU (default 100000000)\n"
	"  -h, --help           this text\n";

static void init_cpu(struct model_cpu *c, int index, uint8_t *mem, uint64_t arg)
{
	memset(c, 0, sizeof(*c));
	c->index = index;
	c->mem = mem;
	c->cpl = 3;
	c->rip = USER_ENTRY(index);
	c->rflags = USER_RFLAGS;
	c->cr3 = PML4_GPA;
	c->gpr[RSP] = USER_STACK_TOP(index);
	c->gpr[RDI] = arg;
}

/* Run one vCPU to PORT_DONE; 0 on success. */
static int run_cpu(struct model_cpu *c, struct model_io *io, struct model_trace *t,
		   uint64_t max_steps)
{
	for (uint64_t steps = 0; steps < max_steps; steps++) {
		int from_user = c->cpl == 3;
		int tf_before = !!(c->rflags & RFLAGS_TF);
		enum model_event ev;
		int ours;

		if (from_user && trace_fetch(t, c))
			return -1;
		ours = from_user && trace_stepping(t);
		if (model_step(c, io, &ev))
			return -1;
		if (ev == EV_DONE) {
			trace_stop(t);
			return 0;
		}
		if (c->trap_shadow)
			continue;
		/* Our trap: after a CPL-3 instruction, except that SYSCALL masks
		 * TF and SYSRET brings it back, trapping at the user RIP. */
		if (ev == EV_SYSRET ? trace_stepping(t) : ours && ev != EV_SYSCALL)
			trace_step(t, c);
		/* The guest's own #DB: a trap for TF set before the instruction
		 * (after it for SYSCALL and SYSRET, whose TF is the one they
		 * leave behind). */
		if ((ev == EV_SYSCALL || ev == EV_SYSRET ? !!(c->rflags & RFLAGS_TF) : tf_before))
			if (model_raise_exception(c, 1))
				return -1;
		/* A queued NMI arrives at the next boundary while NMIs are
		 * unmasked; IRETQ unmasks them. */
		if (ev == EV_IRET)
			c->nmi_masked = 0;
		if (c->nmi_pending && !c->nmi_masked) {
			c->nmi_pending--;
			c->nmi_masked = 1;
			if (model_raise_exception(c, 2))
				return -1;
		}
	}
	snprintf(c->error, sizeof(c->error), "no PORT_DONE within %llu instructions",
		 (unsigned long long)max_steps);
	return -1;
}

static uint64_t kdata(const uint8_t *mem, uint64_t gpa)
{
	uint64_t v;

	memcpy(&v, mem + gpa, 8);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "vcpus", required_argument, NULL, 'c' },
		{ "arg", required_argument, NULL, 'a' },
		{ "expect", required_argument, NULL, 'o' },
		{ "max-steps", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct model_cpu cpus[MAX_VCPUS];
	struct model_gates gates = { 0 };
	struct model_io io = { 0 };
	const char *expect = NULL;
	uint64_t arg = 0, max_steps = 100000000, n;
	int nr_vcpus = 1, c, ok = 1;
	size_t ksize, psize;
	char err[512];
	void *kernel, *program;
	uint8_t *mem;

	cli_progname = "svmtrace-e2e-model";
	while ((c = getopt_long(argc, argv, "c:a:o:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			n = parse_u64(optarg, "--vcpus");
			if (n < 1 || n > MAX_VCPUS)
				die("--vcpus %s: expected 1 to %d", optarg, MAX_VCPUS);
			nr_vcpus = n;
			break;
		case 'a':
			arg = parse_u64(optarg, "--arg");
			break;
		case 'o':
			expect = optarg;
			break;
		case 'n':
			max_steps = parse_u64(optarg, "--max-steps");
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(usage, stderr);
		return 2;
	}
	kernel = guest_image_load_file(argv[optind], KERNEL_MAX, &ksize, err, sizeof(err));
	program = kernel ? guest_image_load_file(argv[optind + 1], USER_MAX, &psize, err,
						 sizeof(err))
			 : NULL;
	mem = calloc(1, GUEST_MEM_SIZE);
	if (!program || !mem)
		die("%s", program ? "out of memory" : err);
	if (guest_image_build(mem, kernel, ksize, program, psize, err, sizeof(err)))
		die("%s", err);

	gates.nr = nr_vcpus;
	for (int i = 0; i < nr_vcpus; i++) {
		struct model_trace trace = { .gates = &gates };
		char path[4096];

		init_cpu(&cpus[i], i, mem, arg);
		if (expect) {
			snprintf(path, sizeof(path), "%s/expected_cpu%d.csv", expect, i);
			trace.out = fopen(path, "w");
			if (!trace.out)
				die("%s: %s", path, strerror(errno));
			trace_header(trace.out);
		}
		if (run_cpu(&cpus[i], &io, &trace, max_steps)) {
			printf("cpu%d failed: %s\n", i, cpus[i].error);
			ok = 0;
		} else {
			const struct model_cpu *m = &cpus[i];
			const uint64_t *g = m->gpr;

			printf("cpu%d done status=0x%x rip=0x%llx rflags=0x%llx rax=0x%llx rbx=0x%llx "
			       "rcx=0x%llx rdx=0x%llx rsi=0x%llx rdi=0x%llx rbp=0x%llx rsp=0x%llx "
			       "r8=0x%llx r9=0x%llx r10=0x%llx r11=0x%llx r12=0x%llx r13=0x%llx "
			       "r14=0x%llx r15=0x%llx\n",
			       i, m->status, (unsigned long long)m->rip,
			       (unsigned long long)m->rflags, (unsigned long long)g[RAX],
			       (unsigned long long)g[RBX], (unsigned long long)g[RCX],
			       (unsigned long long)g[RDX], (unsigned long long)g[RSI],
			       (unsigned long long)g[RDI], (unsigned long long)g[RBP],
			       (unsigned long long)g[RSP], (unsigned long long)g[8],
			       (unsigned long long)g[9], (unsigned long long)g[10],
			       (unsigned long long)g[11], (unsigned long long)g[12],
			       (unsigned long long)g[13], (unsigned long long)g[14],
			       (unsigned long long)g[15]);
		}
		if (trace.out && fclose(trace.out))
			die("%s: %s", path, strerror(errno));
	}
	printf("result db_count=%llu db_rip_sum=0x%llx syscalls=%llu nmis=%llu log_sum=0x%llx "
	       "log_count=%llu input_count=%llu\n",
	       (unsigned long long)kdata(mem, KDATA_DB_COUNT),
	       (unsigned long long)kdata(mem, KDATA_DB_RIP_SUM),
	       (unsigned long long)kdata(mem, KDATA_SYSCALLS),
	       (unsigned long long)kdata(mem, KDATA_NMIS), (unsigned long long)io.log_sum,
	       (unsigned long long)io.log_count, (unsigned long long)io.input_count);
	free(kernel);
	free(program);
	free(mem);
	return ok ? 0 : 1;
}
