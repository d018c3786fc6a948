// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-model: replay a lab program without KVM and write what an
 * exact user-mode instruction tracer must record for it, plus the results
 * the test VMM must print.  See usage[] and docs/lab-internals.md.
 *
 * The recording rules are in tracer.c.  Our TF is kept apart from the
 * guest's (c->our_tf), never in a frame or R11.  The tracer parks it
 * before a SYSCALL and takes it back at the return point, so the trap
 * comes at the user RIP after SYSRET: a system call is one record.  A
 * guest kernel that returns to another process first (the Windows-layout
 * guest's scheduler, --win) runs that process untraced, and the target's
 * TF comes back when the kernel returns to its SYSCALL's return point.  MOV
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
#include "../guest/results.h"
#include "../win/winimage.h"
#include "clock.h"
#include "model.h"
#include "tracer.h"

static const char usage[] =
	"usage: svmtrace-e2e-model [options] KERNEL.bin PROGRAM.bin\n"
	"       svmtrace-e2e-model [options] --win IMAGE.elf --gate-gpa G --target-cr3 C...\n"
	"Replay a lab program and print the results the test VMM must print.\n"
	"  -W, --win IMAGE.elf  the Windows-layout guest (svmtrace-e2e-wingen's image):\n"
	"                       start in its scheduler at CPL 0 as the boot block says\n"
	"  -g, --gate-gpa G     (with --win) a gated page; repeat (none: an untraced run)\n"
	"  -t, --target-cr3 C   (with --win) a CR3 of the target set; repeat\n"
	"  -G, --gate-va VA     (without --win) a watched gate instead of the entry pages:\n"
	"                       the page the guest's page tables map at VA, once they do;\n"
	"                       repeat\n"
	"  -f, --first-rip VA   (with --win) threads begin at VA (ntdll's\n"
	"                       LdrInitializeThunk): those of the target set are traced\n"
	"                       from there (svmtraced --from first)\n"
	"  -c, --vcpus N        vCPUs (1-2, default 1)\n"
	"  -a, --arg X          initial RDI of every vCPU\n"
	"  -0, --cpl0           run the program at CPL 0 (as the VMM's --cpl0)\n"
	"  -k, --kernel         the records of a --kernel capture: every CPL, and a\n"
	"                       session end where an event takes the tracer's TF\n"
	"  -o, --expect DIR     write DIR/expected_cpuN.csv: the records a tracer must\n"
	"                       produce (cpu,index,kind,rip,rflags,cr3,reason,rax..r15,\n"
	"                       rflags_undefined, gs_base: the thread's TEB in user mode)\n"
	"                       and DIR/expected_mem_cpuN.csv: each record's data accesses\n"
	"                       (index,mem; mem as svmtrace-dump dump --mem writes it)\n"
	"  -n, --max-steps N    give up after N instructions per vCPU (default 100000000)\n"
	"  -T, --tsc-from CSV   (with --expect) the TSC each RDTSC or RDTSCP reads is the\n"
	"                       EDX:EAX of its row in this capture (svmtrace-dump dump\n"
	"                       --regs); without it, a native clock (clock.c)\n"
	"  -K, --tsc-check FILE (with --tsc-from) one line per read: the delta since the\n"
	"                       previous read and what virtual time owes for the steps\n"
	"                       in between (exact, or at least)\n"
	"  -C, --time-costs I,T,E  cycles an instruction, a TSC read and an exit cost the\n"
	"                       clocks (default 1,40,1360, as --hide-time's)\n"
	"  -h, --help           this text\n";

static void init_cpu_win(struct model_cpu *c, uint8_t *mem)
{
	memset(c, 0, sizeof(*c));
	c->mem = mem;
	c->mem_size = WIN_MEM_SIZE;
	c->lstar = win_boot(mem, WIN_BOOT_OFF_LSTAR);
	c->cpl = 0;
	c->rip = win_boot(mem, WIN_BOOT_OFF_RIP);
	c->rflags = 0x2;
	c->cr3 = win_boot(mem, WIN_BOOT_OFF_CR3);
	c->gpr[RSP] = win_boot(mem, WIN_BOOT_OFF_RSP);
	c->tsc_aux = win_boot(mem, WIN_BOOT_OFF_TSC_AUX);
	c->gs_base = win_boot(mem, WIN_BOOT_OFF_KPCR); /* as the VMM loads them */
	c->kernel_gs_base = win_boot(mem, WIN_BOOT_OFF_TEB);
	c->smap = 1; /* the VMM sets CR4.SMAP as Windows does; the lab's vCPU has it */
}

static void init_cpu(struct model_cpu *c, int index, uint8_t *mem, uint64_t arg, int cpl0)
{
	memset(c, 0, sizeof(*c));
	c->index = index;
	c->mem = mem;
	c->mem_size = GUEST_MEM_SIZE;
	c->lstar = KERNEL_SYSCALL_ENTRY;
	c->cpl = cpl0 ? 0 : 3;
	c->rip = USER_ENTRY(index);
	c->rflags = USER_RFLAGS;
	c->cr3 = PML4_GPA;
	c->gpr[RSP] = USER_STACK_TOP(index);
	c->gpr[RDI] = arg;
	c->demand_paging = 1;
}

/* What --kernel does not model (tracer.c): -1 with c->error set. */
static int kernel_unmodelled(struct model_cpu *c, const char *what)
{
	snprintf(c->error, sizeof(c->error), "%s while traced with --kernel (RIP 0x%llx)", what,
		 (unsigned long long)c->rip);
	return -1;
}

/* Run one vCPU to PORT_DONE; 0 on success. */
static int run_cpu(struct model_cpu *c, struct model_io *io, struct model_trace *t,
		   uint64_t max_steps)
{
	for (uint64_t steps = 0; steps < max_steps; steps++) {
		int traced_cpl = t->kernel || c->cpl == 3, from_user = c->cpl == 3;
		int tf_before = !!(c->rflags & RFLAGS_TF);
		enum model_event ev;
		int ours, db, r;

		if (traced_cpl && trace_fetch(t, c))
			return -1;
		/* An instruction breakpoint's #DB comes before the instruction. */
		r = model_exec_breakpoint(c);
		if (r < 0)
			return -1;
		if (r) {
			if (traced_cpl && c->our_tf)
				trace_lost(t, 0);
			continue;
		}
		ours = traced_cpl && c->our_tf;
		if (model_step(c, io, &ev))
			return -1;
		if (ev == EV_DONE) {
			trace_stop(t);
			return 0;
		}
		clock_account(c->clock, c, ours, ev == EV_SYSCALL || ev == EV_RAISED);
		/* RF holds off instruction breakpoints until an instruction
		 * completes; IRETQ loads it. */
		if (ev != EV_IRET)
			c->rflags &= ~RFLAGS_RF;
		if (ev == EV_RAISED) {
			if (ours)
				trace_lost(t, c->raised_int);
			continue;
		}
		if (c->trap_shadow)
			continue;
		if (t->kernel && ours && (ev == EV_SYSCALL || ev == EV_SYSRET))
			return kernel_unmodelled(c, "SYSCALL or SYSRET");
		/* Our trap: after a CPL-3 instruction, except that SYSCALL masks
		 * TF and a return to user mode may take it back, with the
		 * SYSCALL's record at its return point. */
		if (ev == EV_SYSRET || (ev == EV_IRET && !from_user && c->cpl == 3 && !c->our_tf)) {
			if (trace_user_return(t, c))
				trace_step(t, c);
		} else if (ours && ev != EV_SYSCALL) {
			trace_step(t, c);
		}
		/* The guest's own #DB: a trap for TF set before the instruction
		 * (after it for SYSCALL and SYSRET, whose TF is the one they
		 * leave behind), or for the data breakpoints it hit; DR6 as the
		 * lab's CPU writes it (exec.c). */
		db = ev == EV_SYSCALL || ev == EV_SYSRET ? !!(c->rflags & RFLAGS_TF) : tf_before;
		if (db || c->dr_hits) {
			c->dr[6] = (c->dr[6] & ~0xfull) | c->dr_hits |
				   model_exec_bp_matches(c, c->rip) | (db ? DR6_BS : 0);
			if (model_raise_exception(c, 1))
				return -1;
			if (ours)
				trace_lost(t, 0);
		}
		/* A queued NMI arrives at the next boundary while NMIs are
		 * unmasked; IRETQ unmasks them. */
		if (ev == EV_IRET)
			c->nmi_masked = 0;
		if (c->nmi_pending && !c->nmi_masked) {
			c->nmi_pending--;
			c->nmi_masked = 1;
			if (model_raise_exception(c, 2))
				return -1;
			if (traced_cpl && c->our_tf)
				trace_lost(t, 0);
		}
		/* The interrupt PORT_IRQ asked for arrives at the first
		 * boundary with IF set (the VMM injects it when KVM says the
		 * window is open; the lab's programs set IF with POPFQ, which
		 * has no interrupt shadow). */
		if (c->irq_pending && (c->rflags & RFLAGS_IF)) {
			c->irq_pending = 0;
			if (model_raise_exception(c, c->irq_vector))
				return -1;
			if (traced_cpl && c->our_tf)
				trace_lost(t, 0);
		}
	}
	snprintf(c->error, sizeof(c->error), "no PORT_DONE within %llu instructions",
		 (unsigned long long)max_steps);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"vcpus", required_argument, NULL, 'c'},
		{"arg", required_argument, NULL, 'a'},
		{"cpl0", no_argument, NULL, '0'},
		{"kernel", no_argument, NULL, 'k'},
		{"expect", required_argument, NULL, 'o'},
		{"max-steps", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{"win", required_argument, NULL, 'W'},
		{"gate-gpa", required_argument, NULL, 'g'},
		{"target-cr3", required_argument, NULL, 't'},
		{"gate-va", required_argument, NULL, 'G'},
		{"tsc-from", required_argument, NULL, 'T'},
		{"tsc-check", required_argument, NULL, 'K'},
		{"time-costs", required_argument, NULL, 'C'},
		{"first-rip", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	const char *win_image = NULL, *tsc_from = NULL, *tsc_check = NULL, *costs = NULL;
	static struct model_clock clocks[MAX_VCPUS];
	static struct model_cpu cpus[MAX_VCPUS];
	struct model_gates gates = {0};
	struct model_io io = {0};
	const char *expect = NULL;
	uint64_t arg = 0, max_steps = 100000000, n;
	int nr_vcpus = 1, c, ok = 1, cpl0 = 0, kernel = 0;
	char err[512];
	uint8_t *mem;

	cli_progname = "svmtrace-e2e-model";
	while ((c = getopt_long(argc, argv, "c:a:0ko:n:hW:g:t:G:T:K:C:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'T':
			tsc_from = optarg;
			break;
		case 'K':
			tsc_check = optarg;
			break;
		case 'C':
			costs = optarg;
			break;
		case '0':
			cpl0 = 1;
			break;
		case 'k':
			kernel = 1;
			break;
		case 'W':
			win_image = optarg;
			break;
		case 'g':
			if (gates.nr == MODEL_MAX_GATES)
				die("--gate-gpa: at most %d", MODEL_MAX_GATES);
			gates.gpa[gates.nr++] = parse_u64(optarg, "--gate-gpa") & ~0xfffull;
			break;
		case 'G':
			if (gates.nr == MODEL_MAX_GATES)
				die("--gate-va: at most %d", MODEL_MAX_GATES);
			gates.va[gates.nr] = parse_u64(optarg, "--gate-va") & ~0xfffull;
			gates.gpa[gates.nr] = MODEL_GATE_UNMAPPED;
			gates.watched[gates.nr++] = 1;
			break;
		case 'f':
			gates.first_rip = parse_u64(optarg, "--first-rip");
			break;
		case 't':
			if (gates.nr_cr3 == MODEL_MAX_CR3)
				die("--target-cr3: at most %d", MODEL_MAX_CR3);
			gates.cr3[gates.nr_cr3++] = parse_u64(optarg, "--target-cr3");
			break;
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
	if (argc - optind != (win_image ? 0 : 2)) {
		fputs(usage, stderr);
		return 2;
	}
	if (tsc_from && !expect)
		die("--tsc-from: only with --expect (the rows count the reads)");
	if (tsc_check && !tsc_from)
		die("--tsc-check: only with --tsc-from");
	if (win_image) {
		for (int i = 0; i < gates.nr; i++)
			if (gates.watched[i])
				die("--gate-va does not go with --win");
		if (nr_vcpus != 1)
			die("--win runs one vCPU");
		mem = calloc(1, WIN_MEM_SIZE);
		if (!mem)
			die("out of memory");
		if (win_image_load(mem, WIN_MEM_SIZE, win_image, err, sizeof(err)))
			die("%s", err);
	} else {
		for (int i = 0; i < gates.nr; i++)
			if (!gates.watched[i])
				die("--gate-gpa goes with --win");
		if (gates.nr_cr3 || gates.first_rip)
			die("--target-cr3 and --first-rip go with --win");
		mem = calloc(1, GUEST_MEM_SIZE);
		if (!mem)
			die("out of memory");
		if (guest_image_load(mem, argv[optind], argv[optind + 1], 0, err, sizeof(err)))
			die("%s", err);
		if (!gates.nr) {	/* the entry pages */
			gates.nr = nr_vcpus;
			for (int i = 0; i < nr_vcpus; i++)
				gates.gpa[i] = USER_VA_TO_GPA(USER_ENTRY(i));
		}
		gates.nr_cr3 = 1;
		gates.cr3[0] = PML4_GPA;
	}

	for (int i = 0; i < nr_vcpus; i++) {
		struct model_trace trace = {.gates = &gates, .kernel = kernel};
		char path[4096];

		if (win_image)
			init_cpu_win(&cpus[i], mem);
		else
			init_cpu(&cpus[i], i, mem, arg, cpl0);
		cpus[i].io = &io;
		cpus[i].dr[6] = DR6_FIXED;
		cpus[i].dr[7] = DR7_FIXED;
		clock_init(&clocks[i]);
		if (costs && clock_costs(&clocks[i], costs))
			die("--time-costs %s: expected INSN,TSC,EXIT", costs);
		if (tsc_from && clock_from(&clocks[i], tsc_from, i, err, sizeof(err)))
			die("--tsc-from: %s", err);
		clocks[i].row = &trace.rows;
		cpus[i].clock = &clocks[i];
		if (expect) {
			snprintf(path, sizeof(path), "%s/expected_cpu%d.csv", expect, i);
			trace.out = fopen(path, "w");
			if (!trace.out)
				die("%s: %s", path, strerror(errno));
			trace_header(trace.out);
			snprintf(path, sizeof(path), "%s/expected_mem_cpu%d.csv", expect, i);
			trace.mem = fopen(path, "w");
			if (!trace.mem)
				die("%s: %s", path, strerror(errno));
			trace_mem_header(trace.mem);
		}
		if (tsc_check) {
			snprintf(path, sizeof(path), "%s.cpu%d", tsc_check, i);
			clocks[i].check = fopen(path, "w");
			if (!clocks[i].check)
				die("%s: %s", path, strerror(errno));
		}
		if (run_cpu(&cpus[i], &io, &trace, max_steps)) {
			printf("cpu%d failed: %s\n", i, cpus[i].error);
			ok = 0;
		} else {
			const uint64_t *g = cpus[i].gpr;
			const uint64_t gpr[16] = {g[RAX], g[RBX], g[RCX], g[RDX], g[RSI], g[RDI],
						  g[RBP], g[RSP], g[8],	  g[9],	  g[10],  g[11],
						  g[12],  g[13],  g[14],  g[15]};

			results_print_cpu(i, cpus[i].status, cpus[i].rip, cpus[i].rflags, gpr);
		}
		if (trace.out && fclose(trace.out))
			die("%s: %s", path, strerror(errno));
		if (trace.mem && fclose(trace.mem))
			die("expected_mem_cpu%d.csv: %s", i, strerror(errno));
		if (clocks[i].check && fclose(clocks[i].check))
			die("--tsc-check: write failed");
		free(clocks[i].values);
	}
	results_print_totals(mem, io.log_sum, io.log_count, io.input_count);
	free(mem);
	return ok ? 0 : 1;
}
