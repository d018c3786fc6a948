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
 *
 * --threads follows every thread the process creates (PTRACE_O_TRACECLONE)
 * and writes each thread's records to OUT.TID: the lab's oracle for a
 * multi-threaded program traced in a Linux guest (docs/lab.md).
 *
 * --mem also writes each step's memory accesses (memops.c) to OUT.mem (with
 * --threads each thread's to OUT.TID.mem), the 88-byte records
 * `svmtrace-dump pack --mem` reads.
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
#include "tools/memops.h"
#include <svmtrace/trace.h>

static const char usage[] =
	"usage: svmtrace-steprec [-n MAX] [--skip N] [--cr3 X] [--threads] -o OUT\n"
	"                        -- COMMAND [ARG...]\n"
	"Single-step COMMAND with ptrace and write one 168-byte raw record per\n"
	"instruction to OUT (- for stdout), at most MAX records (default: all).\n"
	"  -n, --max-records MAX  stop after MAX records (the child is killed)\n"
	"      --skip N           step N instructions before recording\n"
	"      --threads          step every thread of the process too; each thread's\n"
	"                         records go to OUT.TID (not with --skip or OUT -)\n"
	"      --cr3 X            CR3 value to store (default 0x1aa000)\n"
	"      --mem              write each step's memory accesses to OUT.mem, with\n"
	"                         --threads to OUT.TID.mem (88-byte records for\n"
	"                         svmtrace-dump pack --mem)\n"
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

/* Step once; false when the child is gone.  *clean: no signal came in between. */
static bool step(pid_t pid, int *exit_status, bool *clean)
{
	int status;
	int sig = 0;

	*clean = true;
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
		*clean = false;
	}
}

/* The accesses of the step that made record @seq. */
static void write_mem(struct memops *mem, FILE *f, const char *path, pid_t pid, uint64_t seq,
		      bool clean)
{
	struct svmtrace_raw_mem acc[SVMTRACE_MEM_MAX_ACCESSES];
	unsigned int n = memops_after(mem, pid, seq, clean, acc);

	if (n && fwrite(acc, sizeof(acc[0]), n, f) != n)
		die("%s: write failed: %s", path, strerror(errno));
}

/* One traced thread of --threads and its file; with --mem its accesses'. */
struct thread_out {
	pid_t tid;
	FILE *f;
	uint64_t seq;
	struct memops *mem;
	FILE *mem_f;
	bool clean; /* no signal came in since its last step */
};

#define MAX_THREADS 64

/*
 * The thread's slot, opened at its first stop; with @mem its accesses
 * file too, and its first instruction is decoded there.
 */
static struct thread_out *thread_of(struct thread_out *t, int *n, pid_t tid, const char *out,
				    bool mem)
{
	struct user_regs_struct regs;
	char path[4096];
	int i;

	for (i = 0; i < *n; i++)
		if (t[i].tid == tid)
			return &t[i];
	if (*n == MAX_THREADS)
		die("more than %d threads", MAX_THREADS);
	snprintf(path, sizeof(path), "%s.%d", out, (int)tid);
	t[*n] = (struct thread_out){ .tid = tid, .f = fopen(path, "wb"), .clean = true };
	if (!t[*n].f)
		die("%s: %s", path, strerror(errno));
	setvbuf(t[*n].f, NULL, _IOFBF, 1 << 20);
	if (mem) {
		snprintf(path, sizeof(path), "%s.%d.mem", out, (int)tid);
		t[*n].mem_f = fopen(path, "wb");
		if (!t[*n].mem_f)
			die("%s: %s", path, strerror(errno));
		t[*n].mem = memops_open();
		if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
			die("ptrace(GETREGS %d): %s", (int)tid, strerror(errno));
		memops_before(t[*n].mem, tid, &regs);
	}
	return &t[(*n)++];
}

static bool thread_known(const struct thread_out *t, int n, pid_t tid)
{
	int i;

	for (i = 0; i < n; i++)
		if (t[i].tid == tid)
			return true;
	return false;
}

/* Step @tid once more (it may have died meanwhile: ESRCH). */
static void resume(pid_t tid, int sig)
{
	if (ptrace(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
		die("ptrace(SINGLESTEP %d): %s", (int)tid, strerror(errno));
}

/*
 * --threads: step every thread until the process is gone.  A thread's
 * first stop (SIGSTOP, auto-attached) and the parent's clone event stop
 * are not steps; a trap is one, recorded in that thread's file.
 */
static uint64_t step_threads(pid_t pid, const char *out, uint64_t max, uint64_t cr3, bool mem)
{
	char path[4096];
	struct thread_out threads[MAX_THREADS];
	struct user_regs_struct regs;
	struct svmtrace_raw_record rec;
	struct thread_out *t;
	uint64_t total = 0;
	int n = 0, status, i;
	pid_t tid;

	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE));
	thread_of(threads, &n, pid, out, mem);
	resume(pid, 0);
	while (total < max) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0 && errno == ECHILD)
			break; /* every thread is gone */
		if (tid < 0)
			die("waitpid: %s", strerror(errno));
		if (WIFEXITED(status) || WIFSIGNALED(status))
			continue;
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_CLONE << 8))) {
			resume(tid, 0); /* the parent inside clone: not a step */
		} else if (WSTOPSIG(status) == SIGTRAP) {
			t = thread_of(threads, &n, tid, out, mem);
			if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
				die("ptrace(GETREGS): %s", strerror(errno));
			fill_record(&rec, &regs, ++t->seq, cr3);
			if (fwrite(&rec, sizeof(rec), 1, t->f) != 1)
				die("%s.%d: write failed: %s", out, (int)tid, strerror(errno));
			if (mem) {
				snprintf(path, sizeof(path), "%s.%d.mem", out, (int)tid);
				write_mem(t->mem, t->mem_f, path, tid, t->seq, t->clean);
				t->clean = true;
				memops_before(t->mem, tid, &regs);
			}
			total++;
			resume(tid, 0);
		} else if (WSTOPSIG(status) == SIGSTOP && !thread_known(threads, n, tid)) {
			thread_of(threads, &n, tid, out, mem); /* a new thread's first stop */
			resume(tid, 0);
		} else {
			if (thread_known(threads, n, tid))
				thread_of(threads, &n, tid, out, mem)->clean = false;
			resume(tid, WSTOPSIG(status)); /* a real signal */
		}
	}
	if (total == max)
		kill(pid, SIGKILL);
	for (i = 0; i < n; i++) {
		if (fclose(threads[i].f) != 0 ||
		    (threads[i].mem_f && fclose(threads[i].mem_f) != 0))
			die("%s.%d: %s", out, (int)threads[i].tid, strerror(errno));
		memops_close(threads[i].mem);
	}
	return total;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-records", required_argument, NULL, 'n' },
		{ "skip", required_argument, NULL, 's' },
		{ "cr3", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", no_argument, NULL, 't' },
		{ "mem", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t max = UINT64_MAX, skip = 0, cr3 = 0x1aa000, seq = 0;
	const char *out = NULL;
	bool threads = false, clean;
	int exit_status = 0, c;
	struct memops *mem = NULL;
	FILE *mem_f = NULL;
	char mem_path[4096];
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
		case 't':
			threads = true;
			break;
		case 'm':
			mem = memops_open();
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
	if (threads) {
		if (skip || !strcmp(out, "-"))
			die("--threads writes OUT.TID files: no --skip, no OUT -");
		pid = start_child(argv + optind);
		seq = step_threads(pid, out, max, cr3, mem != NULL);
		memops_close(mem);
		fprintf(stderr, "svmtrace-steprec: %llu records\n", (unsigned long long)seq);
		return 0;
	}
	f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
	if (!f)
		die("%s: %s", out, strerror(errno));
	setvbuf(f, NULL, _IOFBF, 1 << 20);

	if (mem) {
		if (!strcmp(out, "-"))
			die("--mem writes OUT.mem: no OUT -");
		snprintf(mem_path, sizeof(mem_path), "%s.mem", out);
		mem_f = fopen(mem_path, "wb");
		if (!mem_f)
			die("%s: %s", mem_path, strerror(errno));
	}

	pid = start_child(argv + optind);
	if (mem && ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		die("ptrace(GETREGS): %s", strerror(errno));
	for (;;) {
		if (mem)
			memops_before(mem, pid, &regs);
		if (seq >= max || !step(pid, &exit_status, &clean))
			break;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
			die("ptrace(GETREGS): %s", strerror(errno));
		if (skip) {
			skip--;
			continue;
		}
		fill_record(&rec, &regs, ++seq, cr3);
		if (fwrite(&rec, sizeof(rec), 1, f) != 1)
			die("%s: write failed: %s", out, strerror(errno));
		if (mem)
			write_mem(mem, mem_f, mem_path, pid, seq, clean);
	}
	if (seq == max)
		kill(pid, SIGKILL);
	if (fclose(f) != 0)
		die("%s: %s", out, strerror(errno));
	if (mem_f && fclose(mem_f) != 0)
		die("%s: %s", mem_path, strerror(errno));
	memops_close(mem);
	fprintf(stderr, "svmtrace-steprec: %llu records\n", (unsigned long long)seq);
	return 0;
}
