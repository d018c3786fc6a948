#!/bin/sh
# lab-win.sh: drive the lab's Windows-layout domain (lab-win.xml) through
# virsh and its serial port; sourced by the nested lab (tests/e2e) and by
# svmtrace-lab.  Needs LAB_DIR (default /var/lib/svmtrace/lab, the paths in
# lab-win.xml) and virsh's connection (LIBVIRT_DEFAULT_URI or qemu:///system).
#
#   lab_win_install IMAGE.pvh   the image as the domain's <kernel>, its
#                               (unused) snapshot disk if missing, and
#   lab_win_serial_reset        fresh serial FIFOs and no console log
#   lab_win_start               virsh start; waits for "ready" (the kernel
#                               state is set up, the scheduler not started)
#   lab_win_send CHAR           a command on COM1: s (start), l (launch)
#   lab_win_wait WORD SECONDS [N]
#                               wait for the Nth (default first) line
#                               "svmtrace-lab: WORD" on the console (a
#                               reset boots again into the same log)
#   lab_win_console             the console so far
#   lab_win_launch SECONDS      start the scheduler ("s"); at "go" (the late
#                               process linked, not yet run) launch it ("l"):
#                               a tracer waiting for it (svmtraced
#                               --wait-name) holds its first instruction
LAB_DIR=${LAB_DIR:-/var/lib/svmtrace/lab}
LAB_WIN=lab-win

lab_win_install() {
	mkdir -p "$LAB_DIR" || return 1
	cp "$1" "$LAB_DIR/$LAB_WIN.elf" && chmod 644 "$LAB_DIR/$LAB_WIN.elf" || return 1
	[ -e "$LAB_DIR/$LAB_WIN.qcow2" ] || qemu-img create -q -f qcow2 "$LAB_DIR/$LAB_WIN.qcow2" 1M ||
		return 1
	lab_win_serial_reset
}

lab_win_serial_reset() {
	rm -f "$LAB_DIR/$LAB_WIN.serial.in" "$LAB_DIR/$LAB_WIN.serial.out" "$LAB_DIR/$LAB_WIN.console"
	# QEMU opens both FIFOs read-write (never blocks); libvirt gives them
	# to the QEMU user.  The .out FIFO is never read: the log has it all.
	mkfifo "$LAB_DIR/$LAB_WIN.serial.in" "$LAB_DIR/$LAB_WIN.serial.out"
}

lab_win_console() {
	cat "$LAB_DIR/$LAB_WIN.console" 2>/dev/null
}

lab_win_wait() {
	n=$(($2 * 10))
	while [ $n -gt 0 ]; do
		[ "$(grep -c "^svmtrace-lab: $1" "$LAB_DIR/$LAB_WIN.console" 2>/dev/null)" -ge "${3:-1}" ] &&
			return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

lab_win_send() {	# (with no QEMU holding the FIFO, opening it would block)
	timeout 10 sh -c 'printf "%s" "$1" >"$2"' - "$1" "$LAB_DIR/$LAB_WIN.serial.in"
}

lab_win_start() {
	virsh start "$LAB_WIN" >/dev/null || return 1
	lab_win_wait ready "${1:-120}"
}

lab_win_launch() {
	lab_win_send s && lab_win_wait go "$1" && lab_win_send l
}
