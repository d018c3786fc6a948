#!/bin/sh
# l1-libvirt.sh: the lab's libvirt scenarios, inside an L1 that runs the
# host's userspace (run-l1.sh --hostroot), started by libvirt.sh.
#   l1-libvirt.sh BOOTS [LINUX-BOOTS [HAND-BOOTS]]
# Loads our modules, starts virtlogd and libvirtd as a distribution would
# (no systemd here), defines every vm-configs/lab-*.xml and runs the
# Windows-layout domain (lab-win) with virsh for each scenario of
# /e2e/libvirt-scenarios (NAME IMAGE MODE TARGET [OPTION...], the options
# added to svmtraced's, e.g. --from first --mem):
#   pid     svmtraced --domain lab-win --pid TARGET, armed before "s"
#   late    svmtraced --domain lab-win --wait-name TARGET: waiting before
#           "s"; at "go" the scheduler has linked the process, and "l" lets
#           it run at once: the kernel holds its first instruction until
#           svmtraced has decided (armed)
#   late-follow
#           the same with --from first --follow: the process and the two it
#           creates (one hollowed) from their first instructions
#   session svmtrace-lab --launch serial lab-win TARGET, a whole session
#           from the snapshot "clean" of the shut-off domain
#   reboot, shutdown, destroy, kill
#           svmtraced --pid TARGET is capturing when the domain is reset
#           (virsh reset), the guest powers off (ACPI, the "p" command),
#           the domain is destroyed, or its QEMU killed (SIGKILL): its
#           exit status and message, the files it leaves, and (reset) that
#           the guest boots again, untraced, and runs to its end
# then BOOTS more plain boots of lab-win (start, "ready", destroy), then
# LINUX-BOOTS (default 0) boots of the Linux L2 (lab-linux.xml: Debian's
# kernel, /e2e/lab-linux.vmlinuz and /e2e/lab-linux.initrd) through
# virsh and HAND-BOOTS (default 0) of the same kernel in QEMU started by
# hand (l1-handqemu.sh), each up to its init's "ready" line; the Linux
# boots through virsh record the interrupts L1's KVM injected and any L0
# delivered twice.  Last, libvirtd stops and our modules are unloaded.
# Records into $E2E_OUT/libvirt/NAME (judged on the host by libvirt.sh);
# stage times (L1 uptime) in $E2E_OUT/libvirt/stages.
set -u
out=$E2E_OUT/libvirt
mkdir -p "$out"
cd /e2e
. ./l1-capture.sh	# wait_line, keep_traces
. ./lab-win.sh
export LIBVIRT_DEFAULT_URI=qemu:///system
fail() { echo "$*" >>"$out/failures"; }
stage() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$out/stages"; }

stage start
kvm-modules load ours >"$out/load.txt" 2>&1 || { fail "kvm-modules load ours"; exit 1; }
# udev's job elsewhere: QEMU runs as libvirt-qemu, a member of group kvm.
chgrp kvm /dev/kvm && chmod 660 /dev/kvm
stage modules
virtlogd -d && libvirtd -d || { fail "virtlogd/libvirtd did not start"; exit 1; }
n=0
until virsh version >"$out/version.txt" 2>&1; do
	n=$((n + 1))
	[ $n -lt 120 ] || { fail "libvirtd did not answer in 120 s"; exit 1; }
	sleep 1
done
stage libvirtd
for xml in vm-configs/lab-*.xml; do
	virsh define "$xml" >>"$out/define.txt" 2>&1 ||
		fail "virsh define $xml: $(grep error: "$out/define.txt" | tail -n 1)"
done
# The real hosts' domains define too (placeholders filled as svmtrace-lab's
# users do; nothing is started), and go again.
for xml in vm-configs/win1*.xml; do
	sed 's|/@[A-Z_]*@|/var/lib/libvirt/images/placeholder|' "$xml" >/tmp/domain.xml
	virsh define /tmp/domain.xml >>"$out/define.txt" 2>&1 ||
		fail "virsh define $xml: $(grep error: "$out/define.txt" | tail -n 1)"
	virsh undefine --nvram "$(basename "$xml" .xml)" >/dev/null 2>&1
done
stage defined

# daemon_start DIR ARGS...: svmtraced on lab-win, its output in DIR.
daemon_start() {
	d=$1; shift
	traces=/tmp/trace.$$
	rm -rf "$traces"
	svmtraced --domain lab-win --profiles /e2e --out "$traces" --policy block \
		--socket /tmp/svmtraced.sock "$@" >"$d/capture.txt" 2>&1 &
	cap_pid=$!
}

# boot DIR IMAGE: install IMAGE and start lab-win up to "ready".
boot() {
	mkdir -p "$1"
	lab_win_install "bin/$2.pvh" || { echo "cannot install bin/$2.pvh" >>"$1/timeout.txt"; return 1; }
	t0=$(cut -d' ' -f1 /proc/uptime)
	if ! lab_win_start 180 2>"$1/start.txt"; then
		echo "lab-win never said ready: $(tr '\n' ' ' <"$1/start.txt") $(lab_win_console)" >>"$1/timeout.txt"
		return 1
	fi
	echo "$t0 $(cut -d' ' -f1 /proc/uptime)" >"$1/boot.uptime"
}

# finish DIR: keep the console and the traces, leave lab-win shut off.
finish() {
	lab_win_console >"$1/console.txt"
	virsh domstate lab-win >"$1/domstate.txt" 2>&1
	virsh destroy lab-win >/dev/null 2>&1
	keep_traces "$1"
}

scenario() {	# scenario NAME IMAGE MODE TARGET [OPTION...]
	d=$out/$1 image=$2 mode=$3 target=$4
	shift 4
	boot "$d" "$image" || { finish "$d"; return 1; }
	case $mode in
	late*)
		if [ "$mode" = late ]; then daemon_start "$d" --wait-name "$target" "$@"
		else daemon_start "$d" --wait-name "$target" --from first --follow "$@"; fi
		wait_line "$d/capture.txt" 'waiting for a new process' 120 "$cap_pid" ||
			echo "svmtraced never said it waits for the process" >>"$d/timeout.txt"
		lab_win_send s
		lab_win_wait go 120 || echo "no go line" >>"$d/timeout.txt"
		lab_win_send l
		wait_line "$d/capture.txt" '^armed ' 120 "$cap_pid" ||
			echo "svmtraced never armed" >>"$d/timeout.txt" ;;
	*)
		daemon_start "$d" --pid "$target" "$@"
		wait_line "$d/capture.txt" '^armed ' 120 "$cap_pid" ||
			echo "svmtraced never armed" >>"$d/timeout.txt"
		lab_win_send s
		lab_win_wait go 120 || echo "no go line" >>"$d/timeout.txt"
		case $mode in
		pid) lab_win_send l ;;
		reboot) virsh reset lab-win >"$d/virsh.txt" 2>&1 ;;
		shutdown) lab_win_send p ;;
		destroy) virsh destroy lab-win >"$d/virsh.txt" 2>&1 ;;
		kill) kill -9 "$(cat /run/libvirt/qemu/lab-win.pid)" ;;
		esac ;;
	esac
	case $mode in
	pid | late*)
		lab_win_wait done 120 || echo "the guest never said done" >>"$d/timeout.txt"
		kill -INT "$cap_pid" ;;
	reboot)
		# svmtraced must end by itself; the guest boots again, untraced.
		lab_win_wait ready 120 2 && lab_win_send s && lab_win_wait go 120 2 &&
			lab_win_send l && lab_win_wait done 120 ||
			echo "after the reset the guest did not run to its end" >>"$d/timeout.txt" ;;
	esac
	wait_line "$d/capture.txt" '^svmtraced: ' 60 "$cap_pid" || {
		echo "svmtraced did not end" >>"$d/timeout.txt"
		kill -9 "$cap_pid"
	}
	wait "$cap_pid"; echo $? >"$d/capture.rc"
	finish "$d"
}

# lab_session DIR IMAGE SAMPLE: svmtrace-lab on lab-win, as a user runs it.  The session
# directory is made in L1's /tmp (virsh dump writes there as the QEMU user)
# and comes back without the 64 MiB memory dump, which svmtrace-vmi reads
# here (ps, and every kernel discovery method: DIR/kernel.json).
lab_session() {
	d=$1
	mkdir -p "$d"
	lab_win_install "bin/$2.pvh" && virsh snapshot-create-as lab-win clean >"$d/snapshot.txt" 2>&1 ||
		{ echo "cannot take the snapshot clean: $(cat "$d/snapshot.txt")" >>"$d/timeout.txt"; return 1; }
	t0=$(cut -d' ' -f1 /proc/uptime)
	/e2e/svmtrace-lab --launch serial --profiles /e2e --out /tmp/session lab-win "$3" \
		>"$d/lab.txt" 2>&1
	echo $? >"$d/lab.rc"
	echo "$t0 $(cut -d' ' -f1 /proc/uptime)" >"$d/lab.uptime"
	virsh domstate lab-win >"$d/domstate.txt" 2>&1
	svmtrace-vmi --memory /tmp/session/memory.elf --profiles /e2e ps >"$d/ps.txt" 2>&1
	svmtrace-vmi --memory /tmp/session/memory.elf --profiles /e2e --json kernel >"$d/kernel.json" 2>&1
	rm -f /tmp/session/memory.elf
	cp -r /tmp/session "$d/session" && cp -r /tmp/session/traces "$d/trace"
	virsh snapshot-delete lab-win clean >/dev/null 2>&1
	[ ! -e "$d/timeout.txt" ]
}
while read -r name image mode target options; do
	[ -n "$name" ] || continue
	if [ "$mode" = session ]; then
		lab_session "$out/$name" "$image" "$target"
	else
		# shellcheck disable=SC2086
		scenario "$name" "$image" "$mode" "$target" $options
	fi || fail "scenario $name: $(cat "$out/$name/timeout.txt")"
	stage "$name"
done </e2e/libvirt-scenarios

# Plain boots, counted: how reliably does L2 boot through libvirt?
i=0
while [ $i -lt "$1" ]; do
	i=$((i + 1))
	if boot "$out/boot-$i" win10; then echo "boot $i ok" >>"$out/boots"
	else echo "boot $i failed" >>"$out/boots"; fi
	virsh destroy lab-win >/dev/null 2>&1
done
stage boots

# QEMU 7.2's TCG can deliver an interrupt L1's KVM injected into L2 a second
# time (docs/lab-internals.md, "Limits of QEMU 7.2's TCG"): its VMRUN leaves the
# vector in exception_index, and an exit to TCG's main loop before the
# next exception or #VMEXIT delivers it again as an exception, so the next
# #VMEXIT reports it in EXITINTINFO as type 3 (exception) with a vector of
# 32 or more -- no CPU can raise that.  ftrace keeps only those exits, and
# every injection, for each Linux boot.
tr=/sys/kernel/tracing
redelivery_watch() {
	echo 0 >$tr/tracing_on && echo >$tr/trace && echo 4096 >$tr/buffer_size_kb &&
		echo '(intr_info >= 0x320 && intr_info <= 0x3ff) || (intr_info >= 0x80000320 && intr_info <= 0x800003ff)' \
			>$tr/events/kvm/kvm_exit/filter &&
		echo 1 >$tr/events/kvm/kvm_exit/enable && echo 1 >$tr/events/kvm/kvm_inj_virq/enable &&
		echo 1 >$tr/tracing_on || fail "cannot trace kvm_exit and kvm_inj_virq in $tr"
}
redelivery_collect() {	# DIR: injections (a count) and redelivered (the exits)
	echo 0 >$tr/tracing_on
	grep -c 'kvm_inj_virq:' $tr/trace >"$1/injections"
	grep 'kvm_exit:' $tr/trace >"$1/redelivered"
	echo 0 >$tr/events/kvm/kvm_exit/enable && echo 0 >$tr/events/kvm/kvm_inj_virq/enable
	echo 0 >$tr/events/kvm/kvm_exit/filter
}

# The Linux L2, through libvirt (and by hand, to compare).
. ./l1-handqemu.sh
mkdir -p "$LAB_DIR" && cp lab-linux.vmlinuz "$LAB_DIR/lab-linux.vmlinuz" && cp lab-linux.initrd "$LAB_DIR/lab-linux.initrd" &&
	chmod 644 "$LAB_DIR/lab-linux.vmlinuz" "$LAB_DIR/lab-linux.initrd" || fail "cannot install the Linux L2"
i=0
while [ $i -lt "${2:-0}" ]; do
	i=$((i + 1))
	redelivery_watch
	linux_boot_virsh "$out/linux-$i" && echo "linux $i ok" >>"$out/linux-boots" ||
		echo "linux $i failed" >>"$out/linux-boots"
	redelivery_collect "$out/linux-$i"
done
stage linux-virsh
i=0
while [ $i -lt "${3:-0}" ]; do
	i=$((i + 1))
	for how in $HAND_VARIANTS; do
		linux_boot_hand "$out/hand-$how-$i" "$how" && echo "hand $how $i ok" >>"$out/hand-boots" ||
			echo "hand $how $i failed" >>"$out/hand-boots"
	done
done
stage linux-hand
virsh list --all >"$out/list.txt" 2>&1
# Our modules must unload after all that: sessions ended by a reset, a
# power-off, a destroy and a killed QEMU.  libvirtd goes first (it keeps
# /dev/kvm open).
pkill -x libvirtd
n=0
while pgrep -x libvirtd >/dev/null && [ $n -lt 100 ]; do
	n=$((n + 1)); sleep 0.1
done
kvm-modules unload >"$out/unload.txt" 2>&1 && echo "unloaded" >>"$out/unload.txt"
stage unload
true
