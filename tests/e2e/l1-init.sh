#!/bin/sh
# /init of the lab's L1 initramfs (installed by run-l1.sh): mount the basics
# and the 9p results share, run /e2e/command, save its status and the kernel
# log to the share, power off.
export PATH=/e2e/bin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "l1: init at $(cut -d' ' -f1 /proc/uptime)s, $(uname -r), $(nproc) CPUs"
grep -qw svm /proc/cpuinfo || echo "l1: WARNING: this CPU has no svm flag"

while read -r m; do
	insmod "/lib/kvm/packaged/$m" || echo "l1: insmod $m failed"
done </lib/kvm/share.order
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out; then
	echo "l1: cannot mount the results share; powering off"
	poweroff -f
fi
echo "boot_seconds $(cut -d' ' -f1 /proc/uptime)" >>/out/timing

export E2E_OUT=/out
cd /e2e
set --
while read -r a; do set -- "$@" "$a"; done </e2e/command
echo "l1: running: $*"
{ "$@"; echo $? >/tmp/rc; } 2>&1 | tee /out/command.log
rc=$(cat /tmp/rc 2>/dev/null)
echo "run_seconds_at_end $(cut -d' ' -f1 /proc/uptime)" >>/out/timing
dmesg >/out/dmesg.txt
echo "${rc:-2}" >/out/rc
sync
umount /out
poweroff -f
