#!/bin/sh
# /init of the lab's L1 initramfs (installed by run-l1.sh): mount the basics
# and the 9p results share, run /e2e/command, save its status and the kernel
# log to the share, power off.  A command still running after /e2e/deadline
# seconds (a hang in the kernel under test) gets status 124, and the stacks
# of the blocked tasks go to the kernel log first (SysRq w).  With
# /e2e/hostroot (run-l1.sh --hostroot) it first moves to the host's root
# file system (l1-hostroot.sh) and runs again from there, with L1_ROOT=host.
export PATH=/e2e/bin:/bin:/usr/sbin:/usr/bin:/sbin
if [ "${L1_ROOT:-}" != host ]; then
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	mount -t tmpfs tmp /tmp
	# tracefs: the exit audit (--audit) reads the kvm events' format files there.
	mount -t tracefs tracefs /sys/kernel/tracing
	echo "l1: init at $(cut -d' ' -f1 /proc/uptime)s, $(uname -r), $(nproc) CPUs"
	grep -qw svm /proc/cpuinfo || echo "l1: WARNING: this CPU has no svm flag"
	# khugepaged is of no use here and was seen locking up both CPUs under TCG;
	# page faults still give the VMM's MADV_HUGEPAGE memory its 2 MiB pages.
	echo 86400000 >/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
	echo 86400000 >/sys/kernel/mm/transparent_hugepage/khugepaged/alloc_sleep_millisecs

	while read -r m; do
		insmod "/lib/kvm/packaged/$m" || echo "l1: insmod $m failed"
	done </lib/kvm/share.order
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out; then
		echo "l1: cannot mount the results share; powering off"
		poweroff -f
	fi
	echo "boot_seconds $(cut -d' ' -f1 /proc/uptime)" >>/out/timing
	if [ -e /e2e/hostroot ]; then
		. /e2e/l1-hostroot.sh
		hostroot_switch
		echo "l1: cannot switch to the host's root; powering off"
		echo 2 >/out/rc
		poweroff -f
	fi
fi

export E2E_OUT=/out
cd /e2e
set --
while read -r a; do set -- "$@" "$a"; done </e2e/command
echo "l1: running: $*"
{ "$@"; echo $? >/tmp/rc; } 2>&1 | tee /out/command.log &
deadline=$(cat /e2e/deadline)
while [ ! -e /tmp/rc ] && [ "$deadline" -gt 0 ]; do
	sleep 1
	deadline=$((deadline - 1))
done
if [ ! -e /tmp/rc ]; then
	echo "l1: COMMAND still running at its deadline; blocked tasks:"
	echo w >/proc/sysrq-trigger
	sleep 1
	echo 124 >/tmp/rc
fi
rc=$(cat /tmp/rc)
echo "run_seconds_at_end $(cut -d' ' -f1 /proc/uptime)" >>/out/timing
dmesg >/out/dmesg.txt
echo "$rc" >/out/rc
sync
umount /out
poweroff -f
