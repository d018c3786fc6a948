// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-kvm-hold-vm: create one (empty) KVM VM and keep it until stdin
 * closes, so that tests have a real process holding a KVM VM fd for
 * --vmm-pid.  Prints "ready" once the VM exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/cli.h"

int main(void)
{
	char c;
	int kvm, vm;

	cli_progname = "svmtrace-kvm-hold-vm";
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("/dev/kvm: %s", strerror(errno));
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM: %s", strerror(errno));
	printf("ready\n");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	close(vm);
	close(kvm);
	return 0;
}
