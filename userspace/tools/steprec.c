// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-steprec: single-step a real Linux process with ptrace and write
 * its post-instruction states as the 168-byte raw records `svmtrace-dump
 * pack` reads.  Tests and benchmarks generate realistic register traces
 * with it at run time instead of committing large files.
 *
 * Each step gives what the kmod would capture: the RIP of the next
 * instruction and the registers after the one that just ran.  CR3 is fixed
 * (a Linux process cannot see its own), TSC is the host's at each stop.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "common/cli.h"
#include <svmtrace/trace.h>

static const char usage[] =
	"usage: svmtrace-steprec [-n MAX] [--skip N] [--cr3 X] -o OUT -- COMMAND [ARG...]\n"
	"Single-step COMMAND with ptrace and write one 168-byte raw record per\n"
	"instruction to OUT (- for stdout), at most MAX records (default: all).\n"
	"  -n, --max-records MAX  stop after MAX records (the child is killed)\n"
	"      --skip N           step N instructions before recording\n"
	"      --cr3 X            CR3 value to store (default 0x1aa000)\n"
	"  -o, --output OUT       output file\n";

static void fill_record(struct svmtrace_raw_record *r, const struct user_regs_struct *u,
			uint64_t seq, uint64_t cr3)
{
	r->seq = seq;
	r->tsc = __rdtsc();
	r->rip = u->rip;
	r->rflags = u->eflags;
	r->cr3 = cr3;
	r->gpr[SVMTRACE_RAX] = u->rax;
	r->gpr[SVMTRACE_RBX] = u->rbx;
	r->gpr[SVMTRACE_RCX] = u->rcx;
	r->gpr[SVMTRACE_RDX] = u->rdx;
	r->gpr[SVMTRACE_RSI] = u->rsi;
	r->gpr[SVMTRACE_RDI] = u->rdi;
	r->gpr[SVMTRACE_RBP] = u->rbp;
	r->gpr[SVMTRACE_RSP] = u->rsp;
	r->gpr[SVMTRACE_R8] = u->r8;
	r->gpr[SVMTRACE_R9] = u->r9;
	r->gpr[SVMTRACE_R10] = u->r10;
	r->gpr[SVMTRACE_R11] = u->r11;
	r->gpr[SVMTRACE_R12] = u->r12;
	r->gpr[SVMTRACE_R13] = u->r13;
	r->gpr[SVMTRACE_R14] = u->r14;
	r->gpr[SVMTRACE_R15] = u->r15;
}

static pid_t start_child(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "svmtrace-steprec: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		die("%s: did not stop at exec (status 0x%x)", argv[0], status);
	/* The child must not outlive us, and exits must be seen as exits. */
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_EXITKILL));
	return pid;
}

/* Step once; false when the child is gone. */
static bool step(pid_t pid, int *exit_status)
{
	int status;
	int sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig) < 0)
			die("ptrace(SINGLESTEP): %s", strerror(errno));
		if (waitpid(pid, &status, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			*exit_status = status;
			return false;
		}
		if (WSTOPSIG(status) == SIGTRAP)
			return true;
		/* A real signal: deliver it on the next step, record nothing. */
		sig = WSTOPSIG(status);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-records", required_argument, NULL, 'n' },
		{ "skip", required_argument, NULL, 's' },
		{ "cr3", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t max = UINT64_MAX, skip = 0, cr3 = 0x1aa000, seq = 0;
	const char *out = NULL;
	int exit_status = 0, c;
	struct user_regs_struct regs;
	struct svmtrace_raw_record rec;
	FILE *f;
	pid_t pid;

	cli_progname = "svmtrace-steprec";
	while ((c = getopt_long(argc, argv, "+n:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			max = parse_u64(optarg, "--max-records");
			break;
		case 's':
			skip = parse_u64(optarg, "--skip");
			break;
		case 'c':
			cr3 = parse_u64(optarg, "--cr3");
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!out || optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
	if (!f)
		die("%s: %s", out, strerror(errno));
	setvbuf(f, NULL, _IOFBF, 1 << 20);

	pid = start_child(argv + optind);
	while (seq < max && step(pid, &exit_status)) {
		if (skip) {
			skip--;
			continue;
		}
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
			die("ptrace(GETREGS): %s", strerror(errno));
		fill_record(&rec, &regs, ++seq, cr3);
		if (fwrite(&rec, sizeof(rec), 1, f) != 1)
			die("%s: write failed: %s", out, strerror(errno));
	}
	if (seq == max)
		kill(pid, SIGKILL);
	if (fclose(f) != 0)
		die("%s: %s", out, strerror(errno));
	fprintf(stderr, "svmtrace-steprec: %llu records\n", (unsigned long long)seq);
	return 0;
}
