#!/bin/sh
# make demo: svmtrace as it is used, on this machine, without AMD hardware.
#   docs/demo-lab.sh --modules DIR
# Boots the lab's L1 (Debian's kernel under QEMU TCG with an emulated AMD
# CPU with SVM, running this machine's own userspace, tests/e2e/run-l1.sh
# --hostroot) with our patched kvm.ko + kvm-amd.ko, and there
# (docs/demo-l1.sh) starts libvirtd, the lab's Windows-layout domain with
# virsh, svmtraced --domain --wait-name, launches the process and shows its
# trace.  One "demo:" line per stage; the files stay in build/demo-lab/.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
[ "${1:-}" = --modules ] && [ -n "${2:-}" ] || { echo "usage: demo-lab.sh --modules DIR" >&2; exit 2; }
modules=$2
build=$top/${BUILD:-build}
out=$build/demo-lab
win=$build/e2e/win
t0=$(date +%s)
echo "demo: [1/7] built: our modules ($modules), svmtraced, svmtrace-dump, the Windows-layout guest ($win/win11.pvh)"
rm -rf "$out" && mkdir -p "$out/l1"
echo "demo: [2/7] booting L1: Debian's kernel, QEMU TCG, AMD EPYC with SVM + NPT, this machine's userspace"
nice "$top/tests/e2e/run-l1.sh" --hostroot --modules "$modules" --mem 1536 --out "$out/l1" \
	--timeout 420 --add "$top/docs/demo-l1.sh" --add "$top/vm-configs/lab-win.sh" \
	--add "$top/vm-configs" --add "$build/bin/svmtraced" --add "$build/bin/svmtrace-dump" \
	--add "$win/win11.pvh" $(ls "$top"/tests/data/profiles/*.json.xz | sed 's/^/--add /') \
	-- sh /e2e/demo-l1.sh 2>"$out/run-l1.txt" &
l1=$!
# The transcript as L1 writes it (through the results share).
until [ -e "$out/l1/command.log" ] || ! kill -0 $l1 2>/dev/null; do sleep 1; done
tail -n +1 -f --pid=$l1 "$out/l1/command.log" 2>/dev/null
wait $l1; rc=$?
echo
if [ $rc -ne 0 ]; then
	echo "demo: failed (exit $rc); L1's console: $out/l1/console.log"
	tail -n 5 "$out/run-l1.txt" "$out/l1/console.log"
	exit 1
fi
echo "demo: done in $(($(date +%s) - t0)) s; the trace is in $out/l1/traces/"
