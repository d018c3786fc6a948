#!/bin/busybox sh
# /init of the Linux L2 of `make e2e-os` (docs/lab-internals.md, "A real Linux in L2";
# built by tests/e2e/os/initramfs.sh).  Booted with svmtrace_os=untraced
# (the packaged modules' boot): the timing checks untraced, then power off.
# Otherwise: the timing checks traced without and with --hide-time, then
# for each program: run it traced (it prints its gate and waits for a line
# from L1, which arms svmtrace-capture --adopt-cr3 first), wait for a line
# again (L1 stopped the capture: no other process may run under a CR3 the
# capture adopted), then run it single-stepped by svmtrace-steprec
# --threads --mem (memory operands read with ptrace before and after each
# step), records to the 9p share; and threads once more, traced with
# --hide-time.  Every run starts with an empty environment (env -i), so
# that the runs' stacks are laid out alike.  os-calls runs traced beside
# another process, os-noise, started before it and killed once L1 stopped
# the capture.  Console lines "svmtrace-os: ...".
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
# The SIMD and bit-manipulation extensions the L2 has (os-memforms uses SSSE3, SSE4.1/4.2,
# MOVBE, AES, PCLMULQDQ; the VEX forms need XSAVE, which L2's Linux turns off).
echo "svmtrace-os: cpu-extensions$(grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
	grep -x -E 'ssse3|sse4_1|sse4_2|movbe|aes|pclmulqdq|xsave|avx|avx2|bmi1|bmi2|sha_ni|umip' |
	sed 's/^/ /' | tr -d '\n')"
echo "svmtrace-os: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
timer() { grep LOC /proc/interrupts | tr -s ' ' | sed "s/^/svmtrace-os: $1 timer-$2 /"; }
# traced NAME PROGRAM: one traced run, then a line from L1 once it stopped the capture.
traced() {
	timer "$1" before
	env -i "/bin/os-$2"
	echo "svmtrace-os: $1 exited $?"
	# Builtins only until L1 stopped the capture: a new process could get
	# the page-table root the capture adopted and be traced as the program.
	read -r _
	timer "$1" after
}
if grep -q svmtrace_os=untraced /proc/cmdline; then
	timer timing-untraced before
	env -i /bin/os-timing
	echo "svmtrace-os: timing-untraced exited $?"
	timer timing-untraced after
	poweroff -f
fi
traced timing-traced timing
traced timing-hide timing
noise=
for p in flags xonly sort hash threads calls memforms; do
	[ "$p" != calls ] || { /bin/os-noise & noise=$!; }
	timer "$p" before
	time -f "%F %R %w %c" -o "/out/$p.rusage" env -i "/bin/os-$p"
	echo "svmtrace-os: $p exited $?"
	read -r _	# as in traced()
	[ -z "$noise" ] || { kill "$noise"; wait "$noise"; noise=; }
	timer "$p" after
	echo go | time -f "%F %R %w %c" -o "/out/$p.ptrace-rusage" \
		env -i /bin/steprec --threads --mem -o "/out/$p.ptrace" -- "/bin/os-$p" >"/out/$p.ptrace-out" 2>&1
	echo "svmtrace-os: $p ptrace exited $?"
done
traced threads-hide threads
sync
echo "svmtrace-os: all done"
poweroff -f
