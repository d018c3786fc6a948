// SPDX-License-Identifier: GPL-2.0
/*
 * os-timing: the timing checks anti-analysis code runs to tell that it is
 * being traced, in a Linux process traced from gate_main on (gate.h), written
 * from their published descriptions (pafish's rdtsc_diff and
 * rdtsc_diff_vmexit, al-khaser's rdtsc_diff_locky ratio) and the two that
 * go around the TSC: a second process's view, the kernel's clock.  Each
 * prints its least sample; the verdict has a bit per check (set: "traced"):
 *    1 rdtsc     back-to-back RDTSCs, the least of 16 deltas above 750
 *    2 cpuid     the least RDTSC delta around CPUID below 10 times the
 *                least back-to-back one
 *    4 rdtscp    as 1, with RDTSCP
 *    8 tsc_aux   an RDTSCP whose ECX is not the CPU getcpu() names before
 *                and after it (Linux: TSC_AUX = node << 12 | cpu)
 *   16 counter   a loop of 1000 iterations lasts more than 10000 increments
 *                of a counter another process (the watcher, on vCPU 0) keeps
 *                running (the median of 8 loops, on vCPU 1)
 *   32 cross_tsc the watcher's last published TSC is above a TSC we read
 *                after it
 *   64 kernel    the TSC ran 2 times slower against the kernel's clock
 *                (clock_gettime, a system call) over the checks above than
 *                over a nanosleep of 100 ms (long, so that the few stepped
 *                instructions around it weigh little: under TCG a step can
 *                take a millisecond of real time that virtual time hides)
 * And what virtual time must keep whatever the mode (counts, all 0):
 *   backwards    a read below an earlier one of the same thread, or below a
 *                value the process's other thread published before it (one
 *                thread, thread1 4001, reads and publishes while main runs
 *                the checks; both move between the vCPUs)
 *   ahead        the watcher read a TSC below a value we published before
 *   early        nanosleep(100 ms) woke before 100 ms of CLOCK_MONOTONIC
 * Cross-thread comparisons read with LFENCE; RDTSC (no earlier load may
 * pass it).  The watcher is another process, forked before the capture is
 * armed (os_prepare()): not traced, its time is the real one.
 */
#include "gate.h"

const char prog_name[] = "timing";

enum {
	SYS_mmap = 9,
	SYS_getpid = 39,
	SYS_getppid = 110,
	SYS_sched_yield = 24,
	SYS_nanosleep = 35,
	SYS_fork = 57,
	SYS_clock_gettime = 228,
	SYS_getcpu = 309,
};

#define SAMPLES	  16
#define TSC_LIMIT 750
#define RATIO	  10
#define LOOP	  1000
#define COUNTS	  10000
#define SLOWER	  2
#define SLEEP_NS  100000000ul
#define STACK	  16384

/* The page the watcher shares with us (MAP_SHARED before the fork). */
struct shared {
	volatile u64 counter;	/* the watcher's increments */
	volatile u64 watcher;	/* the watcher's last TSC */
	volatile u64 ours;	/* our last TSC */
	volatile u64 ahead;	/* watcher reads below ours */
	volatile u64 stop;
};

/* A traced thread's reads (read_tsc()). */
struct reader {
	u64 last;
	volatile u64 published;
	struct reader *other;
};

static struct shared *sh;
static struct reader readers[2];
static volatile u64 backwards, thread1_done;
u8 thread_stacks[1][STACK] __attribute__((aligned(64)));

static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 asm("r10") = d, r8 asm("r8") = e, r9 asm("r9") = f;
	long r;

	asm volatile("syscall"
		     : "=a"(r)
		     : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
		     : "rcx", "r11", "memory");
	return r;
}

static inline u64 rdtsc(void)
{
	u32 lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (u64)hi << 32 | lo;
}

static inline u64 rdtsc_ordered(void)
{
	u32 lo, hi;

	asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (u64)hi << 32 | lo;
}

static inline u64 rdtscp(u32 *aux)
{
	u32 lo, hi, c;

	asm volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c)::"memory");
	*aux = c;
	return (u64)hi << 32 | lo;
}

static inline void cpuid0(void)
{
	u32 a = 0, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d)::"memory");
}

static u64 now_ns(void)
{
	u64 ts[2];

	sys3(SYS_clock_gettime, 1 /* CLOCK_MONOTONIC */, (long)ts, 0);
	return ts[0] * 1000000000ul + ts[1];
}

/* A read of one traced thread, checked against its own and the other's. */
static u64 read_tsc(struct reader *r)
{
	u64 other = r->other->published, v = rdtsc_ordered();

	if (v < r->last || v < other)
		backwards++;
	r->last = v;
	r->published = v;
	sh->ours = v;
	return v;
}

/*
 * The watcher: counts, publishes its TSC, and checks ours against it, until
 * told to stop or its parent is gone.
 */
static __attribute__((noreturn)) void watcher(long parent)
{
	u64 ours, mine, n = 0;

	pin(0);
	while (!sh->stop && (++n % 65536 || sys3(SYS_getppid, 0, 0, 0) == parent)) {
		sh->counter++;
		ours = sh->ours;
		mine = rdtsc_ordered();
		if (mine < ours)
			sh->ahead++;
		sh->watcher = mine;
	}
	sys3(SYS_exit, 0, 0, 0);
	__builtin_unreachable();
}

/* Before the capture is armed (rt.h): the shared page and the watcher. */
void os_prepare(void)
{
	long parent = sys3(SYS_getpid, 0, 0, 0);

	sh = (struct shared *)sys6(SYS_mmap, 0, 4096, 3 /* RW */, 0x21 /* SHARED | ANONYMOUS */,
				   -1, 0);
	if ((long)sh < 0)
		die();
	if (sys3(SYS_fork, 0, 0, 0) == 0)
		watcher(parent);
}

static void thread1(long n)
{
	int i;

	for (i = 0; i < 256; i++) {
		if (i % 32 == 0)
			pin((i / 32) & 1);
		read_tsc(&readers[n]);
		sys3(SYS_sched_yield, 0, 0, 0);
	}
	thread1_done = 1;
	thread_exit(0);
}

/* @least, or @b - @a when it is less. */
static inline u64 min_delta(u64 least, u64 a, u64 b)
{
	return b - a < least ? b - a : least;
}

/* The least of SAMPLES back-to-back deltas of RDTSC (@p 0) or RDTSCP (@p 1). */
static u64 least_pair(int p, u64 *aux_bad)
{
	u64 least = ~0ul, a, b;
	long cpu0, cpu1;
	u32 aux;
	int i;

	for (i = 0; i < SAMPLES; i++) {
		if (p) {
			sys3(SYS_getcpu, (long)&cpu0, 0, 0);
			a = rdtscp(&aux);
			b = rdtscp(&aux);
			sys3(SYS_getcpu, (long)&cpu1, 0, 0);
			if ((u32)cpu0 == (u32)cpu1 && (aux & 0xfff) != (u32)cpu0)
				(*aux_bad)++;
		} else {
			a = rdtsc();
			b = rdtsc();
		}
		least = min_delta(least, a, b);
	}
	return least;
}

static u64 least_cpuid(void)
{
	u64 least = ~0ul, a, b;
	int i;

	for (i = 0; i < SAMPLES / 2; i++) {
		a = rdtsc();
		cpuid0();
		b = rdtsc();
		least = min_delta(least, a, b);
	}
	return least;
}

/*
 * The median number of the watcher's increments a loop of LOOP iterations
 * lasts: not the least, since the watcher shares its vCPU with thread1 and
 * may not run at all during one loop; not the most, since a tick that
 * preempts us during one loop lets it run.
 */
static u64 median_counts(void)
{
	u64 n[SAMPLES / 2], c0, v;
	volatile u64 sink = 0;
	int i, j;

	for (i = 0; i < SAMPLES / 2; i++) {
		c0 = sh->counter;
		for (j = 0; j < LOOP; j++)
			sink += j;
		v = sh->counter - c0;
		for (j = i; j > 0 && n[j - 1] > v; j--)
			n[j] = n[j - 1];
		n[j] = v;
	}
	return n[SAMPLES / 4];
}

/* TSC cycles per kernel nanosecond, x1000, since @t0 and @v0. */
static u64 rate_since(u64 t0, u64 v0, u64 *ns)
{
	u64 v1 = read_tsc(&readers[0]), t1 = now_ns();

	*ns = t1 - t0;
	return t1 > t0 ? (v1 - v0) * 1000 / (t1 - t0) : 0;
}

GATE void gate_main(void)
{
	u64 verdict = 0, aux_bad = 0, plain, v, t0, v0, ns, checks, w;
	u64 req[2] = { 0, SLEEP_NS };

	readers[0].other = &readers[1];
	readers[1].other = &readers[0];
	t0 = now_ns();
	v0 = read_tsc(&readers[0]);
	if (spawn(4001, thread_stacks[0], STACK, thread1, 1) != 4001)
		die();

	pin(0);
	plain = least_pair(0, &aux_bad);
	say(prog_name, "rdtsc", plain);
	verdict |= plain > TSC_LIMIT ? 1 : 0;
	pin(1);
	v = least_cpuid();
	say(prog_name, "cpuid", v);
	verdict |= v < RATIO * plain ? 2 : 0;
	pin(0);
	v = least_pair(1, &aux_bad);
	say(prog_name, "rdtscp", v);
	verdict |= v > TSC_LIMIT ? 4 : 0;
	say(prog_name, "tsc_aux_bad", aux_bad);
	verdict |= aux_bad ? 8 : 0;
	pin(1);
	v = median_counts();
	say(prog_name, "counter", v);
	verdict |= v > COUNTS ? 16 : 0;
	w = sh->watcher;
	v = read_tsc(&readers[0]);
	say(prog_name, "cross_tsc_behind", v < w ? w - v : 0);
	verdict |= v < w ? 32 : 0;
	checks = rate_since(t0, v0, &ns);
	say(prog_name, "checks_rate_x1000", checks);
	say(prog_name, "checks_ns", ns);
	pin(0);
	t0 = now_ns();
	v0 = read_tsc(&readers[0]);
	sys3(SYS_nanosleep, (long)req, 0, 0);
	v = rate_since(t0, v0, &ns);
	say(prog_name, "sleep_rate_x1000", v);
	say(prog_name, "slept_ns", ns);
	verdict |= checks * SLOWER < v ? 64 : 0;

	while (!thread1_done)
		sys3(SYS_sched_yield, 0, 0, 0);
	sh->stop = 1;
	say(prog_name, "verdict", verdict);
	say(prog_name, "backwards", backwards);
	say(prog_name, "ahead", sh->ahead);
	say(prog_name, "early", ns < SLEEP_NS);
	sys3(SYS_exit_group, 0, 0, 0);
	__builtin_unreachable();
}
