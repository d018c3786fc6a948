#!/bin/sh
# step-profile.sh [--modules DIR] [--iterations N] [--top N] [PATH...]: where
# the L1 instructions of a traced single-step go, per kernel function
# (make bench-step-profile).  The per-path totals come from step-cost.sh;
# this says which functions make them up.
#
# L1 boots under -icount (as for step-cost.sh) with a QEMU TCG plugin
# (profile/insncount.c, built here) that counts the instructions executed
# at each kernel address; l1-stepprofile.sh runs bench.bin on each PATH
# (default: paused producer ring) between two marker instructions, and
# profile/attribute.py symbolises the counts with L1's /proc/kallsyms and
# prints instructions per step for each function, one column per path.
# Inlined code counts for the function it was inlined into.  The window
# between the markers is a little wider than the VMM's run that
# step-cost.sh measures (process start and exit around it), so generic
# kernel functions carry some noise; the tracer's and KVM's own functions
# run per step only.  Output: $BUILD/e2e/SERIES/stepprofile/report, SERIES
# the kernel series of the modules (default $BUILD/kmod/6.1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"
BUILD=${BUILD:-build}
bin=$top/$BUILD/bin guest=$top/$BUILD/e2e/guest
modules=$top/$BUILD/kmod/6.1 iterations=5000 rows=40
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--top) rows=$2; shift 2 ;;
	-*) echo "usage: step-profile.sh [--modules DIR] [--iterations N] [--top N] [PATH...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- paused producer ring
need_cmd qemu-system-x86_64 "the step profile (it boots L1 under QEMU)"
need_cmd python3 "the step profile's report"
need_cmd cc "building the QEMU plugin"
for f in "$modules/kvm.ko" "$bin/svmtrace-e2e-vmm" "$bin/svmtrace-capture" "$guest/bench.bin"; do
	[ -e "$f" ] || { echo "step-profile: $f missing (make all kmod)" >&2; exit 1; }
done
. "$here/lib/kernel.sh"
out=$top/$BUILD/e2e/$(kernel_series_of "$(kernel_abi_of_module "$modules/kvm.ko")")/stepprofile
rm -rf "$out" && mkdir -p "$out"
cc -O2 -shared -fPIC -Wall -Wextra -Wno-unused-parameter -o "$out/insncount.so" \
	"$here/profile/insncount.c"
cc -nostdlib -static -o "$out/svmtrace-e2e-marker" "$here/profile/marker.S"
nice "$here/run-l1.sh" --icount --plugin "$out/insncount.so,out=$out/counts.txt" \
	--modules "$modules" --out "$out/l1" --timeout 1800 \
	--add "$bin/svmtrace-e2e-vmm" --add "$bin/svmtrace-capture" --add "$guest/kernel.bin" \
	--add "$guest/bench.bin" --add "$out/svmtrace-e2e-marker" --add "$here/l1-capture.sh" \
	--add "$here/l1-stepprofile.sh" \
	-- sh /e2e/l1-stepprofile.sh "$iterations" "$@" >"$out/run-l1.txt" 2>&1 ||
	{ cat "$out/run-l1.txt"; echo "step-profile: the L1 run failed (see $out/l1)" >&2; exit 1; }
d=$out/l1/stepprofile
[ ! -s "$d/failures" ] || { cat "$d/failures"; exit 1; }
python3 "$here/profile/attribute.py" "$out/counts.txt" "$d/kallsyms.txt" "$d/paths" \
	$((4 * iterations + 2)) "$rows" >"$out/report"
cat "$out/report"
