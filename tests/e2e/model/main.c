// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-model: replay a lab program without KVM and write what an
 * exact user-mode instruction tracer must record for it, plus the results
 * the test VMM must print.  See usage[] and docs/lab.md.
 *
 * Recording rule (the capture semantics of DESIGN.md and seed 000): one
 * record per instruction that starts at CPL 3, holding the state after it;
 * a SYSCALL is one record at the user RIP SYSRET returns to (TF is masked on
 * the way in and SYSRET's trap fires in user mode).  The first record is the
 * session_start (the gate page is the entry page); the program's final OUT
 * to PORT_DONE is never completed, so after the last record comes the
 * session_end a stop produces, at the RIP of that OUT.
 *
 * The guest's own single-step #DBs (TF it sets with POPFQ) are delivered
 * through its IDT exactly as a CPU does, and its kernel runs in the model
 * too, so the kernel's counters come out as on real hardware.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "../guest/image.h"
#include "model.h"

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

/* Seed order of GPRs in files: RAX RBX RCX RDX RSI RDI RBP RSP R8..R15. */
static const int file_order[16] = { RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP,
				    8, 9, 10, 11, 12, 13, 14, 15 };

static void emit(FILE *f, const struct model_cpu *c, uint64_t index, const char *kind,
		 unsigned int reason, uint64_t undefined)
{
	fprintf(f, "%d,%llu,%s,0x%llx,0x%llx,0x%x,%u", c->index, (unsigned long long)index, kind,
		(unsigned long long)c->rip, (unsigned long long)c->rflags, PML4_GPA, reason);
	for (int i = 0; i < 16; i++)
		fprintf(f, ",0x%llx", (unsigned long long)c->gpr[file_order[i]]);
	fprintf(f, ",0x%llx\n", (unsigned long long)undefined);
}

static void init_cpu(struct model_cpu *c, int index, uint8_t *mem, uint64_t arg)
{
	memset(c, 0, sizeof(*c));
	c->index = index;
	c->mem = mem;
	c->cpl = 3;
	c->rip = USER_ENTRY(index);
	c->rflags = USER_RFLAGS;
	c->gpr[RSP] = USER_STACK_TOP(index);
	c->gpr[RDI] = arg;
}

/* Run one vCPU to PORT_DONE; 0 on success. */
static int run_cpu(struct model_cpu *c, struct model_io *io, FILE *out, uint64_t max_steps)
{
	uint64_t records = 0;

	for (uint64_t steps = 0; steps < max_steps; steps++) {
		int from_user = c->cpl == 3;
		int tf_before = !!(c->rflags & RFLAGS_TF);
		enum model_event ev;

		if (model_step(c, io, &ev))
			return -1;
		if (ev == EV_DONE) {
			if (out)
				emit(out, c, records, "session_end", 0, 0);
			return 0;
		}
		if (out && ((from_user && c->cpl == 3) || ev == EV_SYSRET)) {
			emit(out, c, records, records ? "instruction" : "session_start",
			     records ? 0 : c->index, c->undefined_flags);
			records++;
		}
		/* The guest's own #DB: a trap for TF set before the instruction
		 * (after it for SYSCALL and SYSRET, whose TF is the one they
		 * leave behind). */
		if ((ev == EV_SYSCALL || ev == EV_SYSRET ? !!(c->rflags & RFLAGS_TF) : tf_before))
			if (model_raise_db(c))
				return -1;
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

	for (int i = 0; i < nr_vcpus; i++) {
		FILE *out = NULL;
		char path[4096];

		init_cpu(&cpus[i], i, mem, arg);
		if (expect) {
			snprintf(path, sizeof(path), "%s/expected_cpu%d.csv", expect, i);
			out = fopen(path, "w");
			if (!out)
				die("%s: %s", path, strerror(errno));
			fputs("cpu,index,kind,rip,rflags,cr3,reason,rax,rbx,rcx,rdx,rsi,rdi,rbp,rsp,"
			      "r8,r9,r10,r11,r12,r13,r14,r15,rflags_undefined\n", out);
		}
		if (run_cpu(&cpus[i], &io, out, max_steps)) {
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
		if (out && fclose(out))
			die("%s: %s", path, strerror(errno));
	}
	printf("result db_count=%llu db_rip_sum=0x%llx syscalls=%llu log_sum=0x%llx "
	       "log_count=%llu input_count=%llu\n",
	       (unsigned long long)kdata(mem, KDATA_DB_COUNT),
	       (unsigned long long)kdata(mem, KDATA_DB_RIP_SUM),
	       (unsigned long long)kdata(mem, KDATA_SYSCALLS), (unsigned long long)io.log_sum,
	       (unsigned long long)io.log_count, (unsigned long long)io.input_count);
	free(kernel);
	free(program);
	free(mem);
	return ok ? 0 : 1;
}
