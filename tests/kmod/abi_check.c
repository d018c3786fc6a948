// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-abi-check: every error the control interface documents, against
 * the real kmod (run as root inside the lab's L1, with a test VMM waiting).
 *
 *   svmtrace-abi-check VMM-PID KERNEL.bin
 *   svmtrace-abi-check --nested VMM-PID   (a VMM started with --svme)
 *
 * KERNEL.bin is the lab guest kernel the VMM loaded at KERNEL_GPA: the
 * introspection reads must return exactly its bytes.
 * Each check prints "ok: ..." or "FAIL: ..."; the last line is
 * "N passed, N failed" and the exit status is 0 only when nothing failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <svmtrace/abi.h>

#include "common/cli.h"
#include "../e2e/guest/layout.h"

static int passed, failed;

/* @r is an ioctl's return value: it must fail with @want (0: succeed). */
static void expect(const char *what, int r, int want)
{
	int got = r < 0 ? errno : 0;

	if (got == want) {
		passed++;
		printf("ok: %s -> %s\n", what, want ? strerror(want) : "success");
	} else {
		failed++;
		printf("FAIL: %s -> %s, expected %s\n", what, got ? strerror(got) : "success",
		       want ? strerror(want) : "success");
	}
}

static int open_ctl(void)
{
	int fd = open(SVMTRACE_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("%s: %s", SVMTRACE_DEVICE, strerror(errno));
	return fd;
}

static int vm_fd_of(pid_t pid)
{
	char path[64], link[64];
	int pidfd, fd;
	ssize_t n;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', !strcmp(link, "anon_inode:kvm-vm")))
			break;
	}
	if (fd == 1024)
		die("pid %d holds no KVM VM", (int)pid);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (pidfd < 0 || fd < 0)
		die("pidfd_getfd from pid %d: %s", (int)pid, strerror(errno));
	close(pidfd);
	return fd;
}

static void check_nonroot(void)
{
	int status, fd;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = open(SVMTRACE_DEVICE, O_RDWR);
		_exit(fd >= 0 ? 0 : errno == EACCES ? 1 : 3);
	}
	waitpid(pid, &status, 0);
	errno = EACCES;
	expect("open as uid 65534 (device mode 0600)", WEXITSTATUS(status) == 1 ? -1 : 0, EACCES);
}

static void check_version(int ctl)
{
	struct svmtrace_version v;
	struct utsname u;

	expect("version before attach", ioctl(ctl, SVMTRACE_VERSION, &v), 0);
	errno = EPROTO;
	expect("version is this ABI", v.abi_version == SVMTRACE_ABI_VERSION ? 0 : -1, 0);
	uname(&u);
	errno = EPROTO;
	expect("module built for the running kernel",
	       strncmp(v.release, u.release, sizeof(v.release)) ? -1 : 0, 0);
	expect("read before attach",
	       ioctl(ctl, SVMTRACE_READ_GPA, &(struct svmtrace_gpa_read){ .len = 1 }), ENOTCONN);
}

static int read_gpa(int ctl, uint64_t gpa, void *buf, uint32_t len)
{
	struct svmtrace_gpa_read r = { .gpa = gpa, .buf = (uintptr_t)buf, .len = len };

	return ioctl(ctl, SVMTRACE_READ_GPA, &r);
}

/* Guest memory through the controller, against the file the VMM loaded. */
static void check_read_gpa(int ctl, const char *kernel_path)
{
	static uint8_t want[KERNEL_MAX], got[SVMTRACE_MAX_READ + 1];
	struct svmtrace_gpa_read r = { .buf = (uintptr_t)got, .len = 8 };
	FILE *f = fopen(kernel_path, "rb");
	size_t n;

	if (!f)
		die("%s: %s", kernel_path, strerror(errno));
	n = fread(want, 1, sizeof(want), f);
	fclose(f);
	expect("read the guest kernel", read_gpa(ctl, KERNEL_GPA, got, n), 0);
	errno = EIO;
	expect("its bytes equal KERNEL.bin", memcmp(got, want, n) ? -1 : 0, 0);
	memset(got, 0xa5, 64);
	expect("read across a page boundary", read_gpa(ctl, KERNEL_GPA - 16, got, 48), 0);
	errno = EIO;
	expect("its last 32 bytes equal KERNEL.bin", memcmp(got + 16, want, 32) ? -1 : 0, 0);
	expect("read 1 MiB", read_gpa(ctl, 0, got, SVMTRACE_MAX_READ), 0);
	expect("read the last 8 bytes of RAM", read_gpa(ctl, GUEST_MEM_SIZE - 8, got, 8), 0);
	expect("read past the end of RAM", read_gpa(ctl, GUEST_MEM_SIZE - 8, got, 16), ENXIO);
	expect("read the local APIC page", read_gpa(ctl, 0xfee00000, got, 8), ENXIO);
	expect("read of 0 bytes", read_gpa(ctl, 0, got, 0), EINVAL);
	expect("read above the limit", read_gpa(ctl, 0, got, SVMTRACE_MAX_READ + 1), EINVAL);
	expect("read wrapping around", read_gpa(ctl, ~0ull - 3, got, 8), EINVAL);
	expect("read into an unmapped buffer", read_gpa(ctl, 0, (void *)8, 8), EFAULT);
	r.flags = 1;
	expect("read with flags 1", ioctl(ctl, SVMTRACE_READ_GPA, &r), EINVAL);
	r.flags = 0, r.reserved = 1;
	expect("read with reserved set", ioctl(ctl, SVMTRACE_READ_GPA, &r), EINVAL);
}

/* The waiting VMM set these with KVM_SET_SREGS / KVM_SET_MSRS (layout.h). */
static void check_vcpu_state(int ctl)
{
	struct svmtrace_vcpu_state st = { .vcpu = 99 };

	expect("state of vCPU 99", ioctl(ctl, SVMTRACE_GET_VCPU_STATE, &st), EINVAL);
	st.vcpu = 0;
	expect("state of vCPU 0", ioctl(ctl, SVMTRACE_GET_VCPU_STATE, &st), 0);
	errno = EPROTO;
	expect("its CR3, EFER, LSTAR, IDTR and RIP are the VMM's",
	       st.cr3 == PML4_GPA && st.efer == GUEST_EFER && st.lstar == KERNEL_SYSCALL_ENTRY &&
			       st.idtr_base == IDT_GPA && st.rip == USER_ENTRY(0) && st.cpl == 3 &&
			       !(st.flags & SVMTRACE_VCPU_STATE_F_RUNNING)
		       ? 0
		       : -1,
	       0);
}

static void check_attach(int ctl, int vm)
{
	struct svmtrace_attach a = { .vm_fd = open("/dev/null", O_RDONLY) };

	expect("status before attach",
	       ioctl(ctl, SVMTRACE_STATUS, &(struct svmtrace_capture_status){ 0 }), ENOTCONN);
	expect("attach to /dev/null", ioctl(ctl, SVMTRACE_ATTACH, &a), EMEDIUMTYPE);
	close(a.vm_fd);
	a.vm_fd = 999;
	expect("attach to a closed fd", ioctl(ctl, SVMTRACE_ATTACH, &a), EBADF);
	a.vm_fd = vm;
	a.flags = 1;
	expect("attach with flags 1", ioctl(ctl, SVMTRACE_ATTACH, &a), EINVAL);
	a.flags = 0;
	expect("attach to the VM", ioctl(ctl, SVMTRACE_ATTACH, &a), 0);
	expect("attach twice", ioctl(ctl, SVMTRACE_ATTACH, &a), EISCONN);
}

static void valid_target(struct svmtrace_target *t)
{
	memset(t, 0, sizeof(*t));
	t->nr_cr3 = 1;
	t->cr3[0] = 0x3000;
	t->nr_gates = 1;
	t->gates[0].gpa = 0x100000;
	t->ring_slots = 64;
}

/*
 * Two watched gates in the guest's tables (tests/e2e/guest/layout.h: PML4
 * at 0x3000): the user image's first page (mapped: its gate closes at arm)
 * and the top user page (no PML4 entry: the PML4 page is watched).
 */
static void watch_target(struct svmtrace_target *t)
{
	valid_target(t);
	t->nr_gates = 2;
	t->gates[0] = (struct svmtrace_gate){ .flags = SVMTRACE_GATE_F_WATCH,
					      .va = 0x400000,
					      .dtb = 0x3000 };
	t->gates[1] = (struct svmtrace_gate){ .flags = SVMTRACE_GATE_F_WATCH,
					      .id = 1,
					      .va = 0x7ffffffff000ull,
					      .dtb = 0x3000 };
}

/* One field broken at a time: each must be refused. */
static void check_targets(int ctl)
{
	struct svmtrace_target t;

	valid_target(&t), t.nr_cr3 = 0;
	expect("target with 0 cr3", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.nr_cr3 = SVMTRACE_MAX_CR3 + 1;
	expect("target with 17 cr3", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.nr_gates = SVMTRACE_MAX_GATES + 1;
	expect("target with 65 gates", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.nr_gates = 0;
	expect("target with 0 gates", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.nr_ranges = SVMTRACE_MAX_RANGES + 1;
	expect("target with 17 ranges", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.nr_ranges = 1, t.ranges[0].start = 5, t.ranges[0].end = 5;
	expect("empty rip range", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.gates[0].gpa = 0x100010;
	expect("unaligned gate", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.nr_gates = 2, t.gates[1] = t.gates[0], t.gates[1].id = 1;
	expect("duplicate gate page", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.gates[0].gpa = 0x7fff0000000ull;
	expect("gate outside guest memory", ioctl(ctl, SVMTRACE_SET_TARGET, &t), ENXIO);
	valid_target(&t), t.ring_slots = 1000;
	expect("ring of 1000 slots", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.ring_slots = SVMTRACE_MAX_RING_SLOTS * 2;
	expect("ring too large", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_XSTATE,
			  t.ring_slots = SVMTRACE_MAX_XSTATE_RING_SLOTS * 2;
	expect("xstate ring too large", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.policy = 7;
	expect("policy 7", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_MEM,
			  t.ring_slots = SVMTRACE_MAX_MEM_RING_SLOTS * 2;
	expect("mem ring too large", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_MEM | SVMTRACE_TARGET_F_XSTATE,
			  t.ring_slots = SVMTRACE_MAX_MEM_RING_SLOTS * 2;
	expect("mem and xstate ring too large", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = 0x100;
	expect("unknown target flag", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.reserved = 1;
	expect("reserved field set", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.cr3[0] = 0xfff;
	expect("cr3 without a base", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.wake_batch = 64;
	expect("wake batch above half the ring", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.gates[0].flags = 2;
	expect("unknown gate flag", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.gates[0].va = 0x400000;
	expect("gate with a VA but no watch", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	watch_target(&t), t.gates[0].gpa = 0x100000;
	expect("watched gate with a GPA", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	watch_target(&t), t.gates[0].va = 0x400010;
	expect("watched gate unaligned", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	watch_target(&t), t.gates[0].va = 0x0000800000000000ull;
	expect("watched gate not canonical", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	watch_target(&t), t.gates[0].dtb = 0xfff;
	expect("watched gate without a root", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	watch_target(&t), t.gates[1].va = t.gates[0].va;
	expect("duplicate watched gate", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_ADOPT_CR3;
	expect("adopt with a cr3 given", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_ADOPT_CR3 | SVMTRACE_TARGET_F_FROM_NEXT;
	t.nr_cr3 = 0, t.nr_gates = 0;
	expect("adopt without a gate", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	watch_target(&t), t.flags = SVMTRACE_TARGET_F_ADOPT_CR3, t.nr_cr3 = 0;
	expect("adopt from a watched gate", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.time.tsc_read = 40;
	expect("time costs without hide-time", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_HIDE_TIME;
	t.time.insn_x256 = SVMTRACE_TIME_MAX_INSN_X256 + 1;
	expect("hide-time, instruction cost too high", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_HIDE_TIME;
	t.time.tsc_read = SVMTRACE_TIME_MAX_TSC_READ + 1;
	expect("hide-time, TSC read cost too high", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_HIDE_TIME, t.time.exit = SVMTRACE_TIME_MAX_EXIT + 1;
	expect("hide-time, exit cost too high", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_HIDE_TIME, t.time.reserved = 1;
	expect("hide-time, reserved cost set", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EINVAL);
	valid_target(&t), t.flags = SVMTRACE_TARGET_F_HIDE_TIME, t.first_rip = 0x400000;
	expect("hide-time with a first RIP but no FIRST", ioctl(ctl, SVMTRACE_SET_TARGET, &t),
	       EINVAL);
}

static int open_fds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += !access(path, F_OK);
	}
	return n;
}

/*
 * A reply the kernel cannot write back must not leave a ring fd behind (on a
 * fresh arm, so vCPU 0's ring is not taken yet).
 */
static void check_ring_reply_fault(int ctl)
{
	struct svmtrace_ring_request *ro =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int before;

	if (ro == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	ro->vcpu = 0;
	mprotect(ro, 4096, PROT_READ);
	expect("arm again", ioctl(ctl, SVMTRACE_ARM), 0);
	before = open_fds();
	expect("ring into a read-only reply", ioctl(ctl, SVMTRACE_GET_RING, ro), EFAULT);
	errno = EMFILE;
	expect("no ring fd left behind", open_fds() == before ? 0 : -1, 0);
	expect("stop again", ioctl(ctl, SVMTRACE_STOP), 0);
	munmap(ro, 4096);
}

/*
 * Armed with SVMTRACE_TARGET_F_XSTATE and/or SVMTRACE_TARGET_F_MEM
 * (@flags): the rings carry the tails, slots of @slot_size bytes, and say
 * so in their header (@ring_flags).
 */
static void check_ring_tails(int ctl, uint32_t flags, uint32_t ring_flags, uint32_t slot_size,
			     const char *what)
{
	struct svmtrace_ring_request req = { .vcpu = 0 };
	struct svmtrace_ring_header *h;
	struct svmtrace_target t;
	char name[96];

	valid_target(&t);
	t.flags = flags;
	snprintf(name, sizeof(name), "target with %s", what);
	expect(name, ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	snprintf(name, sizeof(name), "arm with %s", what);
	expect(name, ioctl(ctl, SVMTRACE_ARM), 0);
	snprintf(name, sizeof(name), "%s ring of vCPU 0", what);
	expect(name, ioctl(ctl, SVMTRACE_GET_RING, &req), 0);
	errno = EPROTO;
	snprintf(name, sizeof(name), "%s ring size", what);
	expect(name, req.mmap_size == SVMTRACE_RING_HEADER_SIZE + 64ull * slot_size ? 0 : -1, 0);
	h = mmap(NULL, req.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, req.fd, 0);
	snprintf(name, sizeof(name), "mmap the %s ring", what);
	expect(name, h == MAP_FAILED ? -1 : 0, 0);
	if (h != MAP_FAILED) {
		errno = EPROTO;
		snprintf(name, sizeof(name), "%s ring header", what);
		expect(name, h->slot_size == slot_size && h->flags == ring_flags ? 0 : -1, 0);
		munmap(h, req.mmap_size);
	}
	close(req.fd);
	snprintf(name, sizeof(name), "stop with %s", what);
	expect(name, ioctl(ctl, SVMTRACE_STOP), 0);
}

/* Armed with watched gates: one maps at once, one stays watched until stop. */
static void check_watch(int ctl)
{
	struct svmtrace_capture_status st;
	struct svmtrace_target t;

	watch_target(&t);
	expect("target with watched gates", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("arm with watched gates", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("status while watching", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("one gate still watched", st.nr_gates == 2 && st.nr_watching == 1 ? 0 : -1, 0);
	expect("stop while watching", ioctl(ctl, SVMTRACE_STOP), 0);
	expect("status after stop", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("nothing watched after stop", st.nr_watching == 0 ? 0 : -1, 0);
	valid_target(&t);
	expect("target again", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
}

/*
 * Armed with virtual time, default costs, then with set costs from threads'
 * first instructions (FIRST, no gate): the status shows the flags.
 */
static void check_hide_time(int ctl)
{
	const uint32_t first = SVMTRACE_TARGET_F_HIDE_TIME | SVMTRACE_TARGET_F_FIRST;
	struct svmtrace_capture_status st;
	struct svmtrace_target t;

	valid_target(&t), t.flags = SVMTRACE_TARGET_F_HIDE_TIME;
	expect("target with hide-time", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("arm with hide-time", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("status with hide-time", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("hide-time in the status", st.flags & SVMTRACE_TARGET_F_HIDE_TIME ? 0 : -1, 0);
	expect("stop with hide-time", ioctl(ctl, SVMTRACE_STOP), 0);
	valid_target(&t), t.flags = first, t.nr_gates = 0, t.first_rip = 0x400000;
	t.time = (struct svmtrace_time_costs){ .insn_x256 = 128, .tsc_read = 30, .exit = 1000 };
	expect("target with hide-time from the first instruction",
	       ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("arm with hide-time from the first instruction", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("status with hide-time from the first instruction", ioctl(ctl, SVMTRACE_STATUS, &st),
	       0);
	errno = EPROTO;
	expect("hide-time and first in the status", (st.flags & first) == first ? 0 : -1, 0);
	expect("stop with hide-time from the first instruction", ioctl(ctl, SVMTRACE_STOP), 0);
	valid_target(&t);
	expect("target again", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
}

/*
 * Asking about new address spaces, then not (END_ASKS): the status drops
 * ASK and keeps FIRST; a target that never asked, or an idle VM, refuses.
 */
static void check_end_asks(int ctl)
{
	const uint32_t ask = SVMTRACE_TARGET_F_ASK | SVMTRACE_TARGET_F_FIRST;
	struct svmtrace_capture_status st;
	struct svmtrace_target t;

	expect("end asks when idle", ioctl(ctl, SVMTRACE_END_ASKS), ESRCH);
	valid_target(&t), t.flags = ask, t.nr_gates = 0, t.nr_cr3 = 0, t.first_rip = 0x400000;
	expect("target asking", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("arm asking", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("status asking", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("ask in the status", (st.flags & ask) == ask ? 0 : -1, 0);
	expect("end asks", ioctl(ctl, SVMTRACE_END_ASKS), 0);
	expect("end asks twice", ioctl(ctl, SVMTRACE_END_ASKS), 0);
	expect("status after the asks", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("first without ask in the status",
	       (st.flags & ask) == SVMTRACE_TARGET_F_FIRST ? 0 : -1, 0);
	expect("stop asking", ioctl(ctl, SVMTRACE_STOP), 0);
	expect("arm asking again", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("status asking again", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("ask in the status again", (st.flags & ask) == ask ? 0 : -1, 0);
	expect("stop asking again", ioctl(ctl, SVMTRACE_STOP), 0);
	valid_target(&t);
	expect("target again", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("arm without asks", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("end asks of a target that does not ask", ioctl(ctl, SVMTRACE_END_ASKS), EINVAL);
	expect("stop without asks", ioctl(ctl, SVMTRACE_STOP), 0);
}

/*
 * Armed to adopt the CR3 (the VM is held, nothing fetches the gate): no
 * address space in force, so the status counts none until a gate fetch.
 */
static void check_adopt(int ctl)
{
	struct svmtrace_capture_status st;
	struct svmtrace_target t;

	valid_target(&t), t.flags = SVMTRACE_TARGET_F_ADOPT_CR3, t.nr_cr3 = 0;
	expect("target adopting its cr3", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("status before arm", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("no cr3 before adoption", st.nr_cr3 == 0 ? 0 : -1, 0);
	expect("arm adopting", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("status while adopting", ioctl(ctl, SVMTRACE_STATUS, &st), 0);
	errno = EPROTO;
	expect("no cr3 adopted yet",
	       st.nr_cr3 == 0 && (st.flags & SVMTRACE_TARGET_F_ADOPT_CR3) ? 0 : -1, 0);
	expect("stop adopting", ioctl(ctl, SVMTRACE_STOP), 0);
	valid_target(&t);
	expect("target again", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
}

static void check_lifecycle(int ctl, int vm)
{
	struct svmtrace_ring_request req = { .vcpu = 99 };
	struct svmtrace_attach a = { .vm_fd = vm };
	struct svmtrace_target t;
	int other = open_ctl();
	void *map;

	expect("arm without a target", ioctl(ctl, SVMTRACE_ARM), ENOENT);
	expect("stop when idle", ioctl(ctl, SVMTRACE_STOP), ESRCH);
	expect("pause when idle", ioctl(ctl, SVMTRACE_PAUSE), ESRCH);
	expect("second controller on the VM", ioctl(other, SVMTRACE_ATTACH, &a), EBUSY);
	close(other);
	valid_target(&t);
	expect("valid target", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("ring before arm",
	       ioctl(ctl, SVMTRACE_GET_RING, &(struct svmtrace_ring_request){ 0 }), ESRCH);
	expect("arm", ioctl(ctl, SVMTRACE_ARM), 0);
	expect("arm twice", ioctl(ctl, SVMTRACE_ARM), EALREADY);
	expect("target while armed", ioctl(ctl, SVMTRACE_SET_TARGET, &t), EBUSY);
	expect("ring of vCPU 99", ioctl(ctl, SVMTRACE_GET_RING, &req), EINVAL);
	req.vcpu = 0;
	expect("ring of vCPU 0", ioctl(ctl, SVMTRACE_GET_RING, &req), 0);
	expect("ring of vCPU 0 again", ioctl(ctl, SVMTRACE_GET_RING, &req), EBUSY);
	map = mmap(NULL, req.mmap_size * 2, PROT_READ, MAP_SHARED, req.fd, 0);
	expect("mmap twice the ring", map == MAP_FAILED ? -1 : 0, EINVAL);
	map = mmap(NULL, req.mmap_size, PROT_READ | PROT_EXEC, MAP_SHARED, req.fd, 0);
	expect("mmap the ring executable", map == MAP_FAILED ? -1 : 0, EPERM);
	map = mmap(NULL, req.mmap_size, PROT_READ, MAP_PRIVATE, req.fd, 0);
	expect("mmap the ring private", map == MAP_FAILED ? -1 : 0, EINVAL);
	map = mmap(NULL, req.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, req.fd, 0);
	expect("mmap the ring", map == MAP_FAILED ? -1 : 0, 0);
	if (map != MAP_FAILED) {
		errno = EPROTO;
		expect("ring magic",
		       ((struct svmtrace_ring_header *)map)->magic == SVMTRACE_RING_MAGIC ? 0 : -1,
		       0);
		munmap(map, req.mmap_size);
	}
	close(req.fd);
	expect("pause", ioctl(ctl, SVMTRACE_PAUSE), 0);
	expect("pause twice", ioctl(ctl, SVMTRACE_PAUSE), EALREADY);
	expect("resume", ioctl(ctl, SVMTRACE_RESUME), 0);
	expect("resume twice", ioctl(ctl, SVMTRACE_RESUME), EALREADY);
	expect("stop", ioctl(ctl, SVMTRACE_STOP), 0);
	expect("stop twice", ioctl(ctl, SVMTRACE_STOP), ESRCH);
	check_ring_tails(ctl, SVMTRACE_TARGET_F_XSTATE, SVMTRACE_RING_F_XSTATE, 768, "xstate");
	check_ring_tails(ctl, SVMTRACE_TARGET_F_MEM, SVMTRACE_RING_F_MEM, 192 + 1344, "mem");
	check_ring_tails(ctl, SVMTRACE_TARGET_F_XSTATE | SVMTRACE_TARGET_F_MEM,
			 SVMTRACE_RING_F_XSTATE | SVMTRACE_RING_F_MEM, 768 + 1344,
			 "xstate and mem");
	check_watch(ctl);
	check_adopt(ctl);
	check_hide_time(ctl);
	check_end_asks(ctl);
	check_ring_reply_fault(ctl);
	expect("unknown ioctl", ioctl(ctl, _IO(SVMTRACE_IOC_MAGIC, 0x7f)), ENOTTY);
	expect("detach", ioctl(ctl, SVMTRACE_DETACH), 0);
	expect("stop after detach", ioctl(ctl, SVMTRACE_STOP), ENOTCONN);
}

/* A guest with EFER.SVME runs guests of its own: arm must refuse it. */
static int check_nested(pid_t pid)
{
	struct svmtrace_attach a = { .vm_fd = vm_fd_of(pid) };
	struct svmtrace_vcpu_state st = { .vcpu = 0 };
	struct svmtrace_target t;
	int ctl = open_ctl();

	expect("attach to the VM", ioctl(ctl, SVMTRACE_ATTACH, &a), 0);
	expect("state of vCPU 0", ioctl(ctl, SVMTRACE_GET_VCPU_STATE, &st), 0);
	errno = EPROTO;
	expect("its EFER has SVME", st.efer & (1ull << 12) ? 0 : -1, 0);
	valid_target(&t);
	expect("valid target", ioctl(ctl, SVMTRACE_SET_TARGET, &t), 0);
	expect("arm a guest with EFER.SVME", ioctl(ctl, SVMTRACE_ARM), EPROTONOSUPPORT);
	close(ctl);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	int ctl, vm;

	cli_progname = "svmtrace-abi-check";
	if (argc == 3 && !strcmp(argv[1], "--nested"))
		return check_nested((pid_t)parse_u64(argv[2], "VMM-PID"));
	if (argc != 3)
		die("usage: svmtrace-abi-check VMM-PID KERNEL.bin | --nested VMM-PID");
	vm = vm_fd_of((pid_t)parse_u64(argv[1], "VMM-PID"));
	check_nonroot();
	ctl = open_ctl();
	check_version(ctl);
	check_attach(ctl, vm);
	check_read_gpa(ctl, argv[2]);
	check_vcpu_state(ctl);
	check_targets(ctl);
	check_lifecycle(ctl, vm);
	close(ctl);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
