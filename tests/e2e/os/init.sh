#!/bin/busybox sh
# /init of the Linux L2 of `make e2e-os` (docs/lab-internals.md, "A real Linux in L2";
# built by tests/e2e/os/initramfs.sh).  For each program: run it traced (it
# prints its gate and waits for a line from L1, which arms
# svmtrace-capture --adopt-cr3 first), wait for a line again (L1 stopped the
# capture: no other process may run under a CR3 the capture adopted), then
# run it single-stepped by svmtrace-steprec --threads, records to the 9p
# share.  Every run starts with an empty environment (env -i), so that the
# two runs' stacks are laid out alike.  os-calls runs traced beside another
# process, os-noise, started before it and killed once L1 stopped the
# capture.  Console lines "svmtrace-os: ...".
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev	# /dev/null: the shell's background jobs read it (os-noise)
while read -r m; do insmod "/lib/modules/$m" || echo "svmtrace-os: insmod $m failed"; done </lib/modules/order
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /out ||
	echo "svmtrace-os: no results share"
echo "svmtrace-lab: ready at $(cut -d' ' -f1 /proc/uptime) s"
echo "svmtrace-os: aslr $(cat /proc/sys/kernel/randomize_va_space) cpus $(grep -c ^processor /proc/cpuinfo)"
# What the kernel enabled of what the emulated CPU offers (CR4.SMEP, SMAP, PKE).
echo "svmtrace-os: cpu-protections$(grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
	grep -x -E 'smep|smap|pku|ospke' | sed 's/^/ /' | tr -d '\n')"
noise=
for p in flags xonly sort hash threads calls; do
	[ "$p" != calls ] || { /bin/os-noise & noise=$!; }
	grep LOC /proc/interrupts | tr -s ' ' | sed "s/^/svmtrace-os: $p timer-before /"
	time -f "%F %R %w %c" -o "/out/$p.rusage" env -i "/bin/os-$p"
	echo "svmtrace-os: $p exited $?"
	# Builtins only until L1 stopped the capture: a new process could get
	# the page-table root the capture adopted and be traced as the program.
	read -r _
	[ -z "$noise" ] || { kill "$noise"; wait "$noise"; noise=; }
	grep LOC /proc/interrupts | tr -s ' ' | sed "s/^/svmtrace-os: $p timer-after /"
	echo go | time -f "%F %R %w %c" -o "/out/$p.ptrace-rusage" \
		env -i /bin/steprec --threads -o "/out/$p.ptrace" -- "/bin/os-$p" >"/out/$p.ptrace-out" 2>&1
	echo "svmtrace-os: $p ptrace exited $?"
done
sync
echo "svmtrace-os: all done"
poweroff -f
