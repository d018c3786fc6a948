# Sourced by libvirt.sh: judge the endings and the boots that
# l1-libvirt.sh recorded in $cap.  Uses lib/judge.sh's ok/bad, $bin.

# judge_libvirt_ending NAME WHY: svmtraced ended by itself with exit 0, its
# total line names WHY as the stop reason, every file decodes to its last
# complete frame (svmtrace-dump inspect) and capture.json parses.
judge_libvirt_ending() {
	d=$cap/$1
	if [ "$(cat "$d/capture.rc" 2>/dev/null)" = 0 ] && grep -q "stop=$2" "$d/capture.txt" &&
		"$bin/svmtrace-dump" inspect "$d"/trace/svmtrace_trace_cpu*.bin >"$d/inspect.txt" 2>&1 &&
		python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])) else 1)' \
			"$d/trace/capture.json" 2>"$d/json.err"; then
		ok "capture/$1/ending" "svmtraced ended by itself ($(grep '^total' "$d/capture.txt" | sed 's/.* stop=//')), exit 0; files decode ($(grep -m 1 'records:' "$d/inspect.txt" | sed 's/^ *//')), capture.json parses"
	else
		bad "capture/$1/ending" "exit $(cat "$d/capture.rc" 2>/dev/null), expected stop=$2: $(tail -n 3 "$d/capture.txt" 2>/dev/null | tr '\n' ' ') $(tail -n 2 "$d/inspect.txt" "$d/json.err" 2>/dev/null | tr '\n' ' ')"
	fi
}

judge_libvirt_endings() {
	judge_libvirt_ending libvirt-reboot "domain reset"
	if grep -q '^svmtrace-lab: done' "$cap/libvirt-reboot/console.txt" 2>/dev/null &&
		! grep -q 'after the reset' "$cap/libvirt-reboot/timeout.txt" 2>/dev/null; then
		ok capture/libvirt-reboot/guest "after virsh reset the guest booted again and ran to its end: $(grep -c '^svmtrace-lab: ready' "$cap/libvirt-reboot/console.txt") boots on its console"
	else
		bad capture/libvirt-reboot/guest "after virsh reset: $(tr '\n' ' ' <"$cap/libvirt-reboot/console.txt" 2>/dev/null)"
	fi
	judge_libvirt_ending libvirt-destroy "domain destroyed"
	judge_libvirt_ending libvirt-kill "QEMU died"
}

# judge_libvirt_boots N: every plain boot of lab-win reached "ready".
judge_libvirt_boots() {
	good=$(grep -c ' ok$' "$cap/boots" 2>/dev/null)
	times=$(for f in "$cap"/boot-*/boot.uptime; do
		[ -e "$f" ] && awk '{ printf "%.1f ", $2 - $1 }' "$f"; done)
	if [ "${good:-0}" = "$1" ]; then
		ok libvirt/boots "$1 of $1 consecutive boots of lab-win through libvirt reached ready (virsh start to ready, s: $times)"
	else
		bad libvirt/boots "${good:-0} of $1 boots of lab-win reached ready: $(tr '\n' ' ' <"$cap/boots" 2>/dev/null)"
	fi
}
