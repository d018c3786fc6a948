// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-e2e-vmm: run one lab program in a fresh KVM guest and print what
 * it computed.  See usage[] and docs/lab-internals.md.
 *
 * A capture tool attaches from another process between "ready" and "start":
 * with --wait the VMM prints its pid, its VM fd (for pidfd_getfd), the guest
 * CR3 and each vCPU's gate GPA (its entry page), then waits for SIGUSR1
 * before the first KVM_RUN.  With
 * --hold it keeps the VM alive after the program ends until a second
 * SIGUSR1, so the capture can be stopped while the vCPUs still exist.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/cli.h"
#include "../guest/image.h"
#include "../guest/results.h"
#include "../win/winimage.h"
#include "vmm.h"

static const char usage[] =
	"usage: svmtrace-e2e-vmm [options] KERNEL.bin PROGRAM.bin\n"
	"       svmtrace-e2e-vmm [options] --win IMAGE.elf\n"
	"Run a lab program (guest/layout.h) in a new KVM guest and print its results.\n"
	"  -W, --win IMAGE.elf  run the Windows-layout guest (win/winlayout.h) that\n"
	"                       svmtrace-e2e-wingen wrote, instead of a program\n"
	"  -g, --go-wait        at PORT_GO (the late process was just linked) wait for\n"
	"                       SIGWINCH before the guest goes on\n"
	"  -O, --log-wait N     after the N-th PORT_LOG write (a process at CPL 3) print\n"
	"                       'log N' and wait for SIGWINCH before the guest goes on\n"
	"  -R, --dump-ready F   write guest RAM to F (raw) before the first KVM_RUN\n"
	"  -G, --dump-go F      ... at PORT_GO\n"
	"  -D, --dump-done F    ... after the guest is done\n"
	"  -c, --vcpus N        vCPUs (1-2, default 1); vCPU n enters at page n\n"
	"  -a, --arg X          initial RDI of every vCPU (e.g. a loop count)\n"
	"  -w, --wait           print 'ready', wait for SIGUSR1 before running\n"
	"  -H, --hold           after the program ends, wait for SIGUSR1 before exiting\n"
	"  -s, --singlestep     KVM_SET_GUEST_DEBUG(SINGLESTEP): exit to userspace every step\n"
	"  -l, --step-log FILE  with --singlestep: one CSV row per step at the program's\n"
	"                       CPL, in the columns of `svmtrace-dump dump --regs`\n"
	"  -x, --x2apic         in-kernel local APIC (KVM_CREATE_IRQCHIP), x2APIC mode\n"
	"  -0, --cpl0           run the program at CPL 0, on supervisor pages (it may WRMSR)\n"
	"  -A, --alt-cr3 N      vCPU N and those after it start under PML4_ALT_GPA, the\n"
	"                       second address space (same mappings): another process\n"
	"  -d, --dr-intercept   KVM_SET_GUEST_DEBUG(ENABLE) alone: KVM keeps intercepting\n"
	"                       the guest's MOV DR, which then never runs natively (the\n"
	"                       lab's workaround for QEMU 7.2's DR7 bug, docs/lab-internals.md)\n"
	"  -q, --quiet-db       the lab kernel's #DB handler makes no VM exit (bench_tf:\n"
	"                       the bare in-kernel #DB that bench-step-cost compares with)\n"
	"  -S, --svme           start with EFER.SVME set, like a guest that runs a\n"
	"                       hypervisor of its own (Windows with VBS)\n"
	"  -B, --debug-at-log   at every write to PORT_LOG, KVM_SET_GUEST_DEBUG(ENABLE), as\n"
	"                       a debugger attaching does (KVM rewrites its #BP intercept)\n"
	"  -P, --no-smap        CR4.SMAP off (on by default where the CPU has it; QEMU 7.2's\n"
	"                       TCG faults an IRETQ at CPL 3 under it, docs/lab.md)\n"
	"  -i, --input-delay-us U  answer each read of PORT_INPUT after U microseconds\n"
	"  -k, --kick-ms N      every N ms, signal each running vCPU thread (as QEMU kicks\n"
	"                       vCPUs to pause them); report how long KVM_RUN kept them\n"
	"  -L, --late-vcpu MS   create the last vCPU only MS ms after the others started\n"
	"                       (after SIGUSR1 with --wait: a vCPU hot-added while traced)\n"
	"  -C, --cpu N          run on host CPU N only, vCPU threads included: a guest\n"
	"                       whose MOV DR7 runs inside QEMU 7.2's TCG leaves its\n"
	"                       breakpoints on a CPU it moves away from (docs/lab-internals.md)\n"
	"  -h, --help           this text\n";

double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

void wait_signal(int sig)
{
	sigset_t set;
	int got;

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigwait(&set, &got);
}

/* Guest RAM: 2 MiB aligned and THP-backed when possible, so KVM maps it with
 * large NPT pages and a tracer must split the one that covers a gate. */
static uint8_t *alloc_guest_ram(uint64_t size)
{
	size_t align = 0x200000;
	uint8_t *p = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *mem;

	if (p == MAP_FAILED)
		return NULL;
	mem = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	madvise(mem, size, MADV_HUGEPAGE);
	return mem;
}

static void create_vm(struct vmm *vm, const char *kernel_path, const char *program_path,
		      int nr_vcpus)
{
	char err[512];
	struct kvm_userspace_memory_region region;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		die("/dev/kvm: %s", strerror(errno));
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		die("KVM_CREATE_VM: %s", strerror(errno));
	vm->mem_size = vm->win ? WIN_MEM_SIZE : GUEST_MEM_SIZE;
	vm->mem = alloc_guest_ram(vm->mem_size);
	if (!vm->mem)
		die("cannot allocate %llu bytes of guest RAM", (unsigned long long)vm->mem_size);
	if (vm->win ? win_image_load(vm->mem, vm->mem_size, kernel_path, err, sizeof(err))
		    : guest_image_load(vm->mem, kernel_path, program_path, vm->cpl0, err,
				       sizeof(err)))
		die("%s", err);
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = vm->mem_size,
		.userspace_addr = (uintptr_t)vm->mem,
	};
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
	if (vm->x2apic && ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		die("KVM_CREATE_IRQCHIP: %s", strerror(errno));
	for (int i = 0; i < nr_vcpus; i++)
		if (vcpu_create(vm, i, err, sizeof(err)))
			die("%s", err);
}

/* --late-vcpu: the last vCPU, created and started while the others run. */
static void start_late_vcpu(struct vmm *vm, pthread_t *thread, uint64_t late_ms)
{
	struct timespec gap = { .tv_sec = late_ms / 1000, .tv_nsec = (long)(late_ms % 1000) * 1000000 };
	int i = vm->nr_vcpus - 1;
	char err[512];

	nanosleep(&gap, NULL);
	if (vcpu_create(vm, i, err, sizeof(err)))
		die("%s", err);
	printf("vcpu%d created\n", i);
	fflush(stdout);
	if (pthread_create(thread, NULL, vcpu_thread, &vm->vcpus[i]))
		die("cannot start vCPU thread %d", i);
}

int vmm_dump(const struct vmm *vm, const char *path)
{
	FILE *f = fopen(path, "wb");
	int bad;

	if (!f)
		return -1;
	bad = fwrite(vm->mem, 1, vm->mem_size, f) != vm->mem_size;
	return fclose(f) || bad ? -1 : 0;
}

static void dump_or_die(const struct vmm *vm, const char *path)
{
	if (path && vmm_dump(vm, path))
		die("%s: %s", path, strerror(errno));
}

static void on_kick(int sig)
{
	(void)sig; /* only there to interrupt KVM_RUN */
}

/*
 * --kick-ms: what QEMU does to pause or stop a VM -- signal every vCPU
 * thread so that KVM_RUN returns -EINTR -- until every vCPU thread ended.
 */
static void kick_until_done(struct vmm *vm, pthread_t *threads)
{
	struct sigaction sa = { .sa_handler = on_kick }; /* no SA_RESTART */
	struct timespec gap = { .tv_sec = vm->kick_ms / 1000,
				.tv_nsec = (long)(vm->kick_ms % 1000) * 1000000 };
	int running;

	sigaction(SIGUSR2, &sa, NULL);
	do {
		nanosleep(&gap, NULL);
		running = 0;
		for (int i = 0; i < vm->nr_vcpus; i++) {
			if (__atomic_load_n(&vm->vcpus[i].exited, __ATOMIC_ACQUIRE))
				continue;
			running++;
			if (!pthread_kill(threads[i], SIGUSR2))
				vm->kicks++;
		}
	} while (running);
}

static int report(const struct vmm *vm, double seconds)
{
	uint64_t steps = 0;
	int ok = 1;

	for (int i = 0; i < vm->nr_vcpus; i++) {
		const struct vcpu *v = &vm->vcpus[i];

		steps += v->steps;
		if (v->done) {
			vcpu_print_final(v);
		} else {
			printf("cpu%d failed: %s\n", i, v->error[0] ? v->error : "stopped");
			ok = 0;
		}
	}
	results_print_totals(vm->mem, vm->log_sum, vm->log_count, vm->input_count);
	if (vm->kick_ms) {
		uint64_t interrupted = 0;
		double run_max = 0;

		for (int i = 0; i < vm->nr_vcpus; i++) {
			interrupted += vm->vcpus[i].interrupted;
			if (vm->vcpus[i].run_max > run_max)
				run_max = vm->vcpus[i].run_max;
		}
		printf("kicks sent=%llu eintr=%llu kvm_run_max_ms=%.0f\n",
		       (unsigned long long)vm->kicks, (unsigned long long)interrupted,
		       run_max * 1000);
	}
	if (vm->singlestep)
		printf("singlestep steps=%llu seconds=%.6f steps_per_s=%.0f\n",
		       (unsigned long long)steps, seconds, seconds > 0 ? steps / seconds : 0.0);
	else
		printf("run seconds=%.6f\n", seconds);
	fflush(stdout);
	return ok;
}

/* --cpu: this thread, and every thread it creates after, on host CPU @cpu only. */
static void pin_to_cpu(uint64_t cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("--cpu %llu: sched_setaffinity: %s", (unsigned long long)cpu, strerror(errno));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "vcpus", required_argument, NULL, 'c' },
		{ "arg", required_argument, NULL, 'a' },
		{ "wait", no_argument, NULL, 'w' },
		{ "hold", no_argument, NULL, 'H' },
		{ "singlestep", no_argument, NULL, 's' },
		{ "step-log", required_argument, NULL, 'l' },
		{ "x2apic", no_argument, NULL, 'x' },
		{ "cpl0", no_argument, NULL, '0' },
		{ "svme", no_argument, NULL, 'S' },
		{ "no-smap", no_argument, NULL, 'P' },
		{ "debug-at-log", no_argument, NULL, 'B' },
		{ "dr-intercept", no_argument, NULL, 'd' },
		{ "alt-cr3", required_argument, NULL, 'A' },
		{ "quiet-db", no_argument, NULL, 'q' },
		{ "kick-ms", required_argument, NULL, 'k' },
		{ "late-vcpu", required_argument, NULL, 'L' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "input-delay-us", required_argument, NULL, 'i' },
		{ "win", required_argument, NULL, 'W' },
		{ "go-wait", no_argument, NULL, 'g' },
		{ "log-wait", required_argument, NULL, 'O' },
		{ "dump-ready", required_argument, NULL, 'R' },
		{ "dump-go", required_argument, NULL, 'G' },
		{ "dump-done", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *win_image = NULL, *dump_ready = NULL, *dump_done = NULL;
	static struct vmm vm = { .nr_vcpus = 1, .alt_cr3 = MAX_VCPUS };
	pthread_t threads[MAX_VCPUS];
	int wait = 0, hold = 0, quiet_db = 0, c, ok, early;
	uint64_t n, late_ms = 0, cpu = UINT64_MAX;
	sigset_t usr1;
	double t0;

	cli_progname = "svmtrace-e2e-vmm";
	while ((c = getopt_long(argc, argv, "c:a:wHsl:x0dqSPBk:L:C:i:hW:gO:R:G:D:A:", opts, NULL)) != -1) {
		switch (c) {
		case 'W':
			win_image = optarg;
			vm.win = 1;
			break;
		case 'g':
			vm.go_wait = 1;
			break;
		case 'O':
			vm.log_wait = parse_u64(optarg, "--log-wait");
			if (!vm.log_wait)
				die("--log-wait 0: the first PORT_LOG write is 1");
			break;
		case 'R':
			dump_ready = optarg;
			break;
		case 'G':
			vm.dump_go = optarg;
			break;
		case 'D':
			dump_done = optarg;
			break;
		case 'c':
			n = parse_u64(optarg, "--vcpus");
			if (n < 1 || n > MAX_VCPUS)
				die("--vcpus %s: expected 1 to %d", optarg, MAX_VCPUS);
			vm.nr_vcpus = n;
			break;
		case 'a':
			vm.arg = parse_u64(optarg, "--arg");
			break;
		case 'w':
			wait = 1;
			break;
		case 'H':
			hold = 1;
			break;
		case 's':
			vm.singlestep = 1;
			break;
		case 'l':
			vm.step_log = fopen(optarg, "w");
			if (!vm.step_log)
				die("%s: %s", optarg, strerror(errno));
			fputs("cpu,sequence,kind,rip,rflags,cr3,reason,rax,rbx,rcx,rdx,rsi,rdi,rbp,"
			      "rsp,r8,r9,r10,r11,r12,r13,r14,r15\n",
			      vm.step_log);
			break;
		case 'x':
			vm.x2apic = 1;
			break;
		case '0':
			vm.cpl0 = 1;
			break;
		case 'S':
			vm.svme = 1;
			break;
		case 'P':
			vm.no_smap = 1;
			break;
		case 'B':
			vm.debug_at_log = 1;
			break;
		case 'd':
			vm.dr_intercept = 1;
			break;
		case 'A':
			n = parse_u64(optarg, "--alt-cr3");
			if (n >= MAX_VCPUS)
				die("--alt-cr3 %s: expected a vCPU, 0 to %d", optarg, MAX_VCPUS - 1);
			vm.alt_cr3 = n;
			break;
		case 'q':
			quiet_db = 1;
			break;
		case 'k':
			vm.kick_ms = parse_u64(optarg, "--kick-ms");
			if (!vm.kick_ms || vm.kick_ms > 10000)
				die("--kick-ms %s: expected 1 to 10000", optarg);
			break;
		case 'L':
			late_ms = parse_u64(optarg, "--late-vcpu");
			if (!late_ms || late_ms > 60000)
				die("--late-vcpu %s: expected 1 to 60000", optarg);
			break;
		case 'C':
			cpu = parse_u64(optarg, "--cpu");
			if (cpu >= CPU_SETSIZE)
				die("--cpu %s: expected a CPU number below %d", optarg, CPU_SETSIZE);
			break;
		case 'i':
			vm.input_delay_us = parse_u64(optarg, "--input-delay-us");
			if (vm.input_delay_us > 1000000)
				die("--input-delay-us %s: expected at most 1000000", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != (vm.win ? 0 : 2)) {
		fputs(usage, stderr);
		return 2;
	}
	if (vm.win && vm.nr_vcpus != 1)
		die("--win runs one vCPU");
	if (vm.win && quiet_db)
		die("--quiet-db is for the lab kernel, not --win");
	if (vm.step_log && !vm.singlestep)
		die("--step-log needs --singlestep");
	if (late_ms && (vm.nr_vcpus < 2 || vm.kick_ms))
		die("--late-vcpu needs --vcpus 2 and no --kick-ms");
	early = late_ms ? vm.nr_vcpus - 1 : vm.nr_vcpus;
	if (cpu != UINT64_MAX)
		pin_to_cpu(cpu);

	/* SIGUSR1 is only ever taken with sigwait(), in this thread. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigaddset(&usr1, SIGWINCH); /* PORT_GO's (SIGUSR2 kicks vCPUs), sigwait() in the vCPU thread */
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);

	if (vm.win) {
		create_vm(&vm, win_image, NULL, 1);
		dump_or_die(&vm, dump_ready);
		printf("ready pid=%d vmfd=%d guest=win vcpus=1 mem=0x%llx cr4=0x%llx\n", getpid(),
		       vm.vm_fd, (unsigned long long)vm.mem_size,
		       (unsigned long long)vm.vcpus[0].win_cr4);
	} else {
		create_vm(&vm, argv[optind], argv[optind + 1], early);
		if (quiet_db)
			*(uint64_t *)(vm.mem + KDATA_DB_QUIET) = 1;
		dump_or_die(&vm, dump_ready);
		printf("ready pid=%d vmfd=%d cr3=0x%x cr4=0x%llx vcpus=%d", getpid(), vm.vm_fd,
		       PML4_GPA, (unsigned long long)vcpu_cr4(&vm.vcpus[0]), vm.nr_vcpus);
		for (int i = 0; i < vm.nr_vcpus; i++)
			printf(" gate%d=0x%llx", i,
			       (unsigned long long)USER_VA_TO_GPA(USER_ENTRY(i)));
		printf("\n");
	}
	fflush(stdout);
	if (wait)
		wait_signal(SIGUSR1);

	t0 = now_seconds();
	for (int i = 0; i < early; i++)
		if (pthread_create(&threads[i], NULL, vcpu_thread, &vm.vcpus[i]))
			die("cannot start vCPU thread %d", i);
	if (late_ms)
		start_late_vcpu(&vm, &threads[vm.nr_vcpus - 1], late_ms);
	if (vm.kick_ms)
		kick_until_done(&vm, threads);
	for (int i = 0; i < vm.nr_vcpus; i++)
		pthread_join(threads[i], NULL);
	ok = report(&vm, now_seconds() - t0);
	dump_or_die(&vm, dump_done);
	if (vm.step_log)
		fclose(vm.step_log);
	if (hold) {
		printf("holding\n");
		fflush(stdout);
		wait_signal(SIGUSR1);
	}
	return ok ? 0 : 1;
}
