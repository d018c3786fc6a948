#!/bin/sh
# l1-handqemu.sh: the lab's Linux L2 (vm-configs/lab-linux.xml) booted
# through virsh, or by hand in QEMU, up to its init's "ready" line (sourced
# by l1-libvirt.sh after vm-configs/lab-win.sh).  DESIGN.md saw QEMU started
# by hand hang early in the L2 kernel where libvirt's start worked; both
# hung alike, from one TCG defect in L0 (docs/lab-internals.md, "Limits of
# QEMU 7.2's TCG").  The hand variants take libvirt's differences one at a time:
#   plain    qemu-system-x86_64 -accel kvm -cpu host,-svm, as root
#   paused   the same with -S, continued over QMP once QEMU is up
#   qemuuser the same run as libvirt-qemu:kvm, as libvirt runs it
#   libvirt  libvirt's own command line for lab-linux (virsh
#            domxml-to-native), run by hand as root, continued over QMP
# Each DIR gets console.txt, how.txt (the command) and ready.txt.
HAND_VARIANTS=${HAND_VARIANTS:-plain paused qemuuser libvirt}
LINUX_SECONDS=${LINUX_SECONDS:-240}

linux_boot_virsh() {
	mkdir -p "$1"
	LAB_WIN=lab-linux lab_win_serial_reset
	virsh start lab-linux >"$1/how.txt" 2>&1 || return 1
	LAB_WIN=lab-linux lab_win_wait ready "$LINUX_SECONDS"
	rc=$?
	LAB_WIN=lab-linux lab_win_console >"$1/console.txt"
	virsh destroy lab-linux >/dev/null 2>&1
	return $rc
}

# qmp_cont SOCKET: continue a QEMU started with -S.
qmp_cont() {
	python3 - "$1" <<'PY'
import json, socket, sys, time
for _ in range(100):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); break
    except OSError:
        time.sleep(0.1)
f = s.makefile("rw")
f.readline()
for cmd in ("qmp_capabilities", "cont"):
    f.write(json.dumps({"execute": cmd}) + "\n"); f.flush(); print(f.readline().strip())
PY
}

linux_boot_hand() {
	# (QMP's socket in /tmp: the results share, 9p, has no UNIX sockets)
	d=$1 console=$1/console.txt qmp=/tmp/hand-$2.qmp
	rm -f "$qmp"
	mkdir -p "$d"
	set -- qemu-system-x86_64 -machine pc,accel=kvm -cpu host,-svm -m 256 -smp 1 -nodefaults \
		-kernel "$LAB_DIR/lab-linux.vmlinuz" -initrd "$LAB_DIR/lab-linux.initrd" \
		-append "console=ttyS0 panic=-1 loglevel=5 mitigations=off" -display none \
		-serial "file:$console" -qmp "unix:$qmp,server=on,wait=off" -no-reboot
	case $2 in
	plain) ;;
	paused) set -- "$@" -S ;;
	qemuuser)
		chmod 777 "$d"
		set -- setpriv --reuid=libvirt-qemu --regid=kvm --init-groups "$@" ;;
	libvirt)
		# libvirt's own command line (with -S; its serial is our FIFOs
		# and console log), run by hand as root.
		LAB_WIN=lab-linux lab_win_serial_reset
		argv=$(virsh domxml-to-native qemu-argv --domain lab-linux 2>"$d/qemu.txt") || return 1
		qmp=$(echo "$argv" | sed -n 's/.*id=charmonitor,path=\([^,]*\),.*/\1/p')
		mkdir -p "$(dirname "$qmp")"
		console=$LAB_DIR/lab-linux.console
		eval "set -- env $argv" ;;
	esac
	echo "$*" >"$d/how.txt"
	"$@" >>"$d/qemu.txt" 2>&1 &
	q=$!
	case $2 in paused | libvirt) qmp_cont "$qmp" >>"$d/qemu.txt" 2>&1 ;; esac
	n=$((LINUX_SECONDS * 10)) rc=1
	while [ $n -gt 0 ] && kill -0 $q 2>/dev/null; do
		grep -q '^svmtrace-lab: ready' "$console" 2>/dev/null && { rc=0; break; }
		sleep 0.1
		n=$((n - 1))
	done
	kill -9 $q 2>/dev/null
	wait $q
	[ "$console" = "$d/console.txt" ] || cp "$console" "$d/console.txt"
	return $rc
}
