# Sourced by libvirt.sh: judge the endings and the boots that
# l1-libvirt.sh recorded in $cap.  Uses lib/judge.sh's ok/bad, $bin.

# judge_libvirt_ending NAME WHY: svmtraced ended by itself with exit 0, its
# total line names WHY as the stop reason and says the counts are
# consistent (on every vCPU written + discarded + dropped = what the module
# produced, and the module's own totals agree), every file decodes to its
# last complete frame (svmtrace-dump inspect) and capture.json parses.
judge_libvirt_ending() {
	d=$cap/$1
	if [ "$(cat "$d/capture.rc" 2>/dev/null)" = 0 ] && grep -q "^total .* stop=$2.* consistent$" "$d/capture.txt" &&
		"$bin/svmtrace-dump" inspect "$d"/trace/svmtrace_trace_cpu*.bin >"$d/inspect.txt" 2>&1 &&
		python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])) else 1)' \
			"$d/trace/capture.json" 2>"$d/json.err"; then
		ok "capture/$1/ending" "svmtraced ended by itself ($(grep '^total' "$d/capture.txt" | sed 's/.* stop=//')), exit 0; $(grep '^total' "$d/capture.txt" | sed 's/^total \(written=[0-9]* dropped=[0-9]* discarded=[0-9]* kmod_produced=[0-9]*\).*/\1/'); files decode ($(grep -m 1 'records:' "$d/inspect.txt" | sed 's/^ *//')), capture.json parses"
	else
		bad "capture/$1/ending" "exit $(cat "$d/capture.rc" 2>/dev/null), expected stop=$2: $(tail -n 3 "$d/capture.txt" 2>/dev/null | tr '\n' ' ') $(tail -n 2 "$d/inspect.txt" "$d/json.err" 2>/dev/null | tr '\n' ' ')"
	fi
}

judge_libvirt_endings() {
	judge_libvirt_ending libvirt-reboot "domain reset"
	# Still armed, the second boot's run of alpha.exe would be a second session.
	if grep -q '^svmtrace-lab: done' "$cap/libvirt-reboot/console.txt" 2>/dev/null &&
		! grep -q 'after the reset' "$cap/libvirt-reboot/timeout.txt" 2>/dev/null &&
		grep -q '^ *sessions: *1$' "$cap/libvirt-reboot/inspect.txt"; then
		ok capture/libvirt-reboot/guest "after virsh reset the guest booted again ($(grep -c '^svmtrace-lab: ready' "$cap/libvirt-reboot/console.txt") boots on its console) and ran to its end untraced (one session in the trace)"
	else
		bad capture/libvirt-reboot/guest "after virsh reset: $(tr '\n' ' ' <"$cap/libvirt-reboot/console.txt" 2>/dev/null)"
	fi
	judge_libvirt_ending libvirt-shutdown "domain shutting down"
	if grep -q 'shut off' "$cap/libvirt-shutdown/domstate.txt" 2>/dev/null; then
		ok capture/libvirt-shutdown/guest "the guest powered itself off (ACPI S5) while traced: the domain is shut off"
	else
		bad capture/libvirt-shutdown/guest "after the guest's power-off the domain is '$(cat "$cap/libvirt-shutdown/domstate.txt" 2>/dev/null)'"
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

# judge_libvirt_session NAME: svmtrace-lab ran a whole session: exit 0, a
# progress line per step, session.json with result ok, the memory dump
# lists the sample (svmtrace-vmi ps, offline), the domain reverted (shut
# off, as in the snapshot).
judge_libvirt_session() {
	d=$cap/$1
	if [ "$(cat "$d/lab.rc" 2>/dev/null)" = 0 ] &&
		python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["result"] == "ok" else 1)' \
			"$d/session/session.json" 2>"$d/json.err" &&
		grep -q ' late.exe' "$d/ps.txt" && grep -q 'shut off' "$d/domstate.txt" &&
		[ -s "$d/session/inspect.txt" ] && [ -s "$d/session/stats.txt" ]; then
		ok "capture/$1/session" "svmtrace-lab: $(grep -c '\.\.\.$' "$d/lab.txt") steps in $(awk '{ printf "%.0f", $2 - $1 }' "$d/lab.uptime") s, session.json ok, the memory dump lists late.exe, the domain reverted"
	else
		bad "capture/$1/session" "svmtrace-lab exit $(cat "$d/lab.rc" 2>/dev/null): $(tail -n 3 "$d/lab.txt" 2>/dev/null | tr '\n' ' ') ps: $(tail -n 2 "$d/ps.txt" 2>/dev/null | tr '\n' ' ') state: $(cat "$d/domstate.txt" 2>/dev/null) $(cat "$d/json.err" 2>/dev/null)"
	fi
}

# judge_libvirt_dump_discovery NAME IMAGE: on QEMU's own ELF core of the
# running lab guest (virsh dump, taken when the sample had ended: the
# scheduler at CPL 0 on the kernel's tables, GS base = KPCR), each method
# that can run on a dump finds the builder's kernel its own way; LSTAR,
# which QEMU's notes do not record, says so.
judge_libvirt_dump_discovery() {
	python3 - "$cap/$1/kernel.json" "$win/$2.expect" >"$cap/$1/verdicts" 2>&1 <<'PY' ||
import json, sys
got = json.load(open(sys.argv[1]))["methods"]
want = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] == "kernel":
        want["base"] = int(f[1], 16)
    elif f and f[0] == "layout":
        want.update((k, f[f.index(k) + 1]) for k in ("kpcr", "idt", "startblock"))
    elif f and f[0] == "discovery":
        want.update(kv.split("=") for kv in f[1:])
cases = {"kpcr": ("vCPU 0 GS base -> KPCR 0x%x -> IDT[0]" % int(want["kpcr"], 16), want["idt0"]),
         "idtr": ("vCPU 0 IDTR 0x%x -> IDT[0]" % int(want["idt"], 16), want["idt0"]),
         "startblock": ("start block at GPA 0x%x" % int(want["startblock"], 16), None),
         "pescan": ("CodeView record at GPA ", None)}
for m, (source, symbol) in cases.items():
    r = got.get(m, {})
    good = (r.get("ok") and int(r["base"], 16) == want["base"] and
            r.get("source", "").startswith(source) and r.get("anchor_symbol") == symbol)
    print("%s|%s|%s" % ("ok" if good else "bad", m, "%s from %s (%s)" % (r.get("base"),
          r.get("anchor"), r.get("source")) if good else "want 0x%x from %s, got %s" % (
          want["base"], source, r)))
print("%s|lstar|%s" % ("bad" if got.get("lstar", {}).get("ok") else "ok",
      got.get("lstar", {}).get("error")))
PY
		bad "capture/$1/discovery" "$(tail -n 3 "$cap/$1/verdicts")"
	while IFS='|' read -r verdict m msg; do
		if [ "$verdict" = ok ]; then ok "capture/$1/discovery/$m" "QEMU's core: $msg"
		else bad "capture/$1/discovery/$m" "QEMU's core: $msg"; fi
	done <"$cap/$1/verdicts"
}

# l2_warnings CONSOLE: the WARNING/BUG/Oops lines of an L2 kernel log, less
# the one warning TCG's CPUID leaf 0xD for EPYC causes (DESIGN.md), known by
# its exact text: the WARNING line right after the line
# "XSAVE consistency problem: size 832 != kernel_size 576".  Every other
# warning stays fatal.
l2_warnings() {
	sed 's/\r$//; s/^\[ *[0-9.]*\] //' "$1" | awk '
		$0 == "XSAVE consistency problem: size 832 != kernel_size 576" { xsave = NR; next }
		/^WARNING: / && xsave == NR - 1 { next }
		/WARNING|BUG|Oops/ { print }'
}

# judge_libvirt_linux: (libvirt.sh's $linux_boots > 0) every Linux L2 boot
# through virsh reached its init, with no kernel warning but the known one,
# and L0 delivered none of the interrupts L1's KVM injected twice (QEMU
# 7.2's TCG defect, docs/lab-internals.md; l1-libvirt.sh's redelivery_watch); the
# hand-started ones are reported, not judged.
judge_libvirt_linux() {
	if [ "$linux_boots" = 0 ]; then
		echo "info: the Linux L2 was not booted (--linux-boots 0)"
		return
	fi
	n=$(grep -c ' ok$' "$cap/linux-boots" 2>/dev/null)
	all=$(grep -c . "$cap/linux-boots" 2>/dev/null)
	if [ "${all:-0}" -gt 0 ] && [ "$n" = "$all" ]; then
		ok libvirt/linux "$n of $all boots of Debian's kernel (lab-linux) through virsh reached init ($(grep -h -o 'ready at [0-9.]* s' "$cap"/linux-*/console.txt | tr '\n' ' '))"
	else
		bad libvirt/linux "${n:-0} of ${all:-0} boots of lab-linux reached init: $(tail -n 3 "$cap"/linux-*/console.txt 2>/dev/null | tr '\n' ' ')"
	fi
	for c in "$cap"/linux-*/console.txt; do
		[ -e "$c" ] || continue
		w=$(l2_warnings "$c")
		if [ -z "$w" ]; then
			ok "libvirt/$(basename "$(dirname "$c")")/warnings" "the L2 kernel log has no WARNING/BUG/Oops$(grep -q 'XSAVE consistency problem: size 832 != kernel_size 576' "$c" && echo ' (but the known XSAVE size warning of TCG'\''s EPYC)')"
		else
			bad "libvirt/$(basename "$(dirname "$c")")/warnings" "the L2 kernel log warns: $w"
		fi
	done
	for d in "$cap"/linux-*/; do
		[ -e "$d/injections" ] || continue
		n=$(basename "$d") inj=$(cat "$d/injections")
		if [ "$inj" -gt 0 ] && [ ! -s "$d/redelivered" ]; then
			ok "libvirt/$n/redelivery" "L1's KVM injected $inj interrupts into L2, L0 delivered none twice"
		else
			bad "libvirt/$n/redelivery" "$inj interrupts injected; delivered again as exceptions (EXITINTINFO type 3, vector >= 32): $(head -n 3 "$d/redelivered" | tr '\n' ' ')"
		fi
	done
	[ ! -s "$cap/hand-boots" ] || echo "info: hand-started QEMU: $(tr '\n' ';' <"$cap/hand-boots")"
}
