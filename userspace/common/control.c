// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/svmtrace controller as svmtrace-capture uses it.  The kernel
 * answers with errno values (docs/abi.md); here each becomes a sentence that
 * names the argument at fault.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/capture.h"

int control_open(void)
{
	int fd = open(SVMTRACE_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == EPERM || errno == EACCES)
		die("%s: %s (capturing needs root: CAP_SYS_ADMIN)", SVMTRACE_DEVICE,
		    strerror(errno));
	if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
		die("%s: %s (load svmtrace's kvm.ko: docs/install.md)", SVMTRACE_DEVICE,
		    strerror(errno));
	die("%s: %s", SVMTRACE_DEVICE, strerror(errno));
}

/* The fd number of the one KVM VM in @pid, from /proc/PID/fd. */
int control_find_vm_fd(pid_t pid)
{
	char dir[64], link[PATH_MAX], target[64];
	struct dirent *d;
	int found = -1, count = 0;
	ssize_t n;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		die("--vmm-pid %d: %s: %s", (int)pid, dir, strerror(errno));
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, "anon_inode:kvm-vm")) {
			found = (int)parse_u64(d->d_name, link);
			count++;
		}
	}
	closedir(dp);
	if (!count)
		die("--vmm-pid %d: the process holds no KVM VM (no anon_inode:kvm-vm in %s)",
		    (int)pid, dir);
	if (count > 1)
		die("--vmm-pid %d: the process holds %d KVM VMs; choose one with --vm-fd", (int)pid,
		    count);
	return found;
}

/*
 * A copy of the VMM's VM fd in our table (pidfd_getfd), so that the kernel
 * can check it really is a VM.  *pidfd stays open: it reports the VMM's exit.
 */
int control_vm_fd(pid_t pid, int *vm_fd_number, int *pidfd)
{
	int vm_fd, fd;

	if (*vm_fd_number < 0)
		*vm_fd_number = control_find_vm_fd(pid);
	vm_fd = *vm_fd_number;
	*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (*pidfd < 0)
		die("--vmm-pid %d: pidfd_open: %s", (int)pid, strerror(errno));
	fd = (int)syscall(SYS_pidfd_getfd, *pidfd, vm_fd, 0);
	if (fd < 0)
		die("--vm-fd %d of pid %d: pidfd_getfd: %s", vm_fd, (int)pid, strerror(errno));
	return fd;
}

void control_attach(int ctl, int vm_fd, pid_t pid, int vmm_fd_number)
{
	struct svmtrace_attach a = { .vm_fd = vm_fd };

	if (!ioctl(ctl, SVMTRACE_ATTACH, &a))
		return;
	if (errno == EMEDIUMTYPE)
		die("--vm-fd %d of pid %d is not a KVM VM", vmm_fd_number, (int)pid);
	if (errno == EBUSY)
		die("pid %d: the VM already has an svmtrace controller (another capture runs)",
		    (int)pid);
	die("attach to the VM of pid %d: %s", (int)pid, strerror(errno));
}

/* Which gate is outside guest memory: try them one at a time. */
static void die_gate_outside(int ctl, const struct svmtrace_target *t)
{
	struct svmtrace_target one = *t;
	uint32_t i;

	one.nr_gates = 1;
	for (i = 0; i < t->nr_gates; i++) {
		one.gates[0] = t->gates[i];
		if (ioctl(ctl, SVMTRACE_SET_TARGET, &one) && errno == ENXIO)
			die("--gate-gpa 0x%llx: outside guest memory (no memory slot holds it)",
			    (unsigned long long)t->gates[i].gpa);
	}
	die("--gate-gpa: a gate is outside guest memory");
}

void control_set_target(int ctl, const struct svmtrace_target *t)
{
	if (!ioctl(ctl, SVMTRACE_SET_TARGET, t))
		return;
	if (errno == ENXIO)
		die_gate_outside(ctl, t);
	if (errno == EINVAL)
		die("the kernel rejected the target (%u cr3, %u gates, %u ranges, ring %u slots):"
		    " see docs/abi.md, SVMTRACE_SET_TARGET",
		    t->nr_cr3, t->nr_gates, t->nr_ranges, t->ring_slots);
	die("set target: %s", strerror(errno));
}

void control_arm(int ctl)
{
	if (!ioctl(ctl, SVMTRACE_ARM))
		return;
	if (errno == EALREADY)
		die("arm: the capture is already armed");
	if (errno == EOPNOTSUPP)
		die("arm: the VM's guest state is encrypted (SEV-ES): it cannot be single-stepped");
	if (errno == ENOPROTOOPT)
		die("arm: kvm_amd delivers NMIs with vNMI, which would leave the tracer's TF in NMI"
		    " frames: load it with vnmi=0 (docs/kmod.md)");
	if (errno == ENODEV)
		die("arm: the VM has no vCPU yet");
	if (errno == ENXIO)
		die("arm: kvm_amd runs without nested paging (npt=0): gates need it; load kvm_amd with npt=1");
	if (errno == EBUSY)
		die("arm: kvm_amd delivers interrupts with AVIC (avic=1), past the tracer; load kvm_amd with avic=0");
	die("arm: %s", strerror(errno));
}

void control_stop(int ctl)
{
	if (ioctl(ctl, SVMTRACE_STOP) && errno != ESRCH)
		die("stop: %s", strerror(errno));
}

/* Pausing twice is harmless here: a repeated signal changes nothing. */
void control_pause(int ctl, bool pause)
{
	if (ioctl(ctl, pause ? SVMTRACE_PAUSE : SVMTRACE_RESUME) && errno != EALREADY)
		die("%s: %s", pause ? "pause" : "resume", strerror(errno));
	printf("%s\n", pause ? "paused" : "resumed");
	fflush(stdout);
}

void control_status(int ctl, struct svmtrace_capture_status *st)
{
	if (ioctl(ctl, SVMTRACE_STATUS, st))
		die("status: %s", strerror(errno));
}

/* SVMTRACE_ASKS; none once the capture stopped (ESRCH). */
void control_asks(int ctl, struct svmtrace_asks *asks)
{
	if (!ioctl(ctl, SVMTRACE_ASKS, asks))
		return;
	if (errno != ESRCH)
		die("asks: %s", strerror(errno));
	asks->nr = 0;
}

/* SVMTRACE_DECIDE FOREIGN: the held thread runs on untraced (ESRCH: released already). */
void control_release(int ctl, const struct svmtrace_ask *ask)
{
	struct svmtrace_decision d = { .vcpu = ask->vcpu, .cr3 = ask->cr3 };

	if (ioctl(ctl, SVMTRACE_DECIDE, &d) && errno != ESRCH)
		die("decide about CR3 0x%llx of vCPU %u: %s", (unsigned long long)ask->cr3, ask->vcpu,
		    strerror(errno));
}

int control_get_ring(int ctl, uint32_t vcpu, uint64_t *mmap_size)
{
	struct svmtrace_ring_request req = { .vcpu = vcpu };

	if (ioctl(ctl, SVMTRACE_GET_RING, &req))
		die("ring of vCPU %u: %s", vcpu, strerror(errno));
	*mmap_size = req.mmap_size;
	return req.fd;
}

void control_detach(int ctl)
{
	if (ioctl(ctl, SVMTRACE_DETACH))
		warn("detach: %s", strerror(errno));
}
