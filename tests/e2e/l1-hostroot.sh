#!/bin/sh
# l1-hostroot.sh: sourced by l1-init.sh (PID 1, in the initramfs) when L1 was
# booted with run-l1.sh --hostroot: give L1 a real userspace and run the rest
# of l1-init.sh there (DESIGN.md, "Real userspace in L1").
#   - the host's / (virtio-9p tag hostroot, read-only) under a tmpfs overlay
#     covering all of it, so daemons write where they are used to;
#   - /proc, /sys, /dev, /tmp and the results share /out moved over, a fresh
#     /run, the image's modules bound at /usr/lib/modules/ABI for modprobe;
#   - /e2e, the KVM modules (/lib/kvm) and kvm-modules carried over;
#   - busybox as /e2e/bin/poweroff: the host's poweroff wants systemd.
# Then switch_root runs /e2e/init (this l1-init.sh) with L1_ROOT=host.
hostroot_switch() {
	read -r abi moddir </e2e/hostroot
	new=/newroot
	mkdir -p /host /upper "$new"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot /host ||
		return 1
	mount -t tmpfs -o mode=755 upper /upper && mkdir -p /upper/data /upper/work || return 1
	mount -t overlay overlay -o lowerdir=/host,upperdir=/upper/data,workdir=/upper/work "$new" ||
		return 1
	mkdir -p "$new/e2e" "$new/out" "$new/lib/kvm" "$new/usr/lib/modules/$abi"
	cp -a /e2e/. "$new/e2e/"
	cp -a /lib/kvm/. "$new/lib/kvm/"
	cp /bin/kvm-modules "$new/e2e/bin/" && cp /init "$new/e2e/init"
	cp /bin/busybox "$new/e2e/bin/busybox" && ln -sf busybox "$new/e2e/bin/poweroff"
	mount --bind "/host$moddir" "$new/usr/lib/modules/$abi"
	echo "l1: switching to the host's root at $(cut -d' ' -f1 /proc/uptime)s"
	for m in proc sys dev tmp out; do mount --move "/$m" "$new/$m"; done
	mount -t tmpfs -o mode=755 run "$new/run"
	mkdir -p "$new/dev/shm" && mount -t tmpfs -o mode=1777 shm "$new/dev/shm"
	mount -t cgroup2 cgroup2 "$new/sys/fs/cgroup" 2>/dev/null
	export L1_ROOT=host
	exec switch_root "$new" /bin/sh /e2e/init
}
