#!/bin/sh
# e2e.sh: the nested-SVM lab, end to end (docs/lab.md).
#   tests/e2e/e2e.sh [--modules DIR] [--bench-iterations N]
# Boots one L1 (run-l1.sh) and runs l1-lab.sh there for the packaged KVM
# and, with --modules (our build), for ours; then judges on the host:
#   - every program's results (VMM output) equal the reference model's;
#   - stock single-step logs equal the model's expected records exactly;
#   - our modules, unarmed, give the packaged modules' results;
#   - the L1 kernel log has no WARNING/BUG/Oops;
# and reports stock single-step throughput.  Prints "N passed, N failed".
# Environment: BUILD (default build), E2E_TIMEOUT (L1 seconds, default 600).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"

modules= bench_iterations=25000
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--bench-iterations) bench_iterations=$2; shift 2 ;;
	*) echo "usage: e2e.sh [--modules DIR] [--bench-iterations N]" >&2; exit 2 ;;
	esac
done

need_cmd qemu-system-x86_64 "booting L1 under TCG (qemu-system-x86)"
need_cmd busybox "the L1 initramfs (busybox-static)"
need_cmd cpio "packing the L1 initramfs"
need_cmd apt-get "fetching the L1 kernel image"
need_cmd dpkg-deb "unpacking the L1 kernel image"
need_cmd depmod "indexing the L1 kernel modules (kmod)"
need_cmd modinfo "checking module vermagic (kmod)"

build=$top/${BUILD:-build}
bin=$build/bin
guest=$build/e2e/guest
run=$build/e2e/run
for f in "$bin/svmtrace-e2e-vmm" "$bin/svmtrace-e2e-model" "$guest/kernel.bin" "$guest/bench.bin"; do
	[ -e "$f" ] || { echo "e2e: $f missing (make e2e builds it)" >&2; exit 1; }
done
rm -rf "$run" && mkdir -p "$run/expect" "$run/l1"

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
results() { grep -E '^(cpu[0-9]+ (done|failed)|result) ' "$1" 2>/dev/null; }

# --- what each program must do, from the reference model ---------------------
programs=$(grep -v '^#' "$here/programs.list" | awk 'NF { print $1 }')
adds="--add $bin/svmtrace-e2e-vmm --add $guest/kernel.bin --add $guest/bench.bin"
adds="$adds --add $here/l1-lab.sh --add $here/programs.list"
grep -v "^#" "$here/programs.list" | while read -r name vcpus arg steplog; do
	[ -n "$name" ] || continue
	mkdir -p "$run/expect/$name"
	"$bin/svmtrace-e2e-model" -c "$vcpus" -a "$arg" -o "$run/expect/$name" \
		"$guest/kernel.bin" "$guest/$name.bin" >"$run/expect/$name/results.txt" ||
		{ echo "e2e: the model failed on $name:" >&2; cat "$run/expect/$name/results.txt" >&2; }
done
for name in $programs; do
	adds="$adds --add $guest/$name.bin"
	if grep -q failed "$run/expect/$name/results.txt"; then
		bad "model replays $name: $(grep failed "$run/expect/$name/results.txt")"
	fi
done

# --- one L1 boot for every scenario ------------------------------------------
sets=packaged
[ -z "$modules" ] || sets="packaged ours"
# shellcheck disable=SC2086
nice "$here/run-l1.sh" ${modules:+--modules "$modules"} --out "$run/l1" --timeout "${E2E_TIMEOUT:-600}" \
	$adds -- sh /e2e/l1-lab.sh "$bench_iterations" $sets
rc=$?
if [ $rc -eq 0 ]; then ok "L1 booted and ran the scenarios ($(tr '\n' ' ' <"$run/l1/timing"))"
else bad "L1 run (exit $rc; see $run/l1/console.log)"; fi

# --- judge --------------------------------------------------------------------
for set in $sets; do
	dir=$run/l1/$set
	[ ! -s "$dir/failures" ] || bad "$set: $(tr '\n' ';' <"$dir/failures")"
	for name in $programs; do
		if [ -s "$dir/$name.txt" ] && results "$dir/$name.txt" >"$run/$set-$name.got" &&
			results "$run/expect/$name/results.txt" | diff -u - "$run/$set-$name.got" >"$run/$set-$name.diff"; then
			ok "$set: $name results equal the model's"
		else
			bad "$set: $name results differ from the model's:"; cat "$run/$set-$name.diff" "$dir/$name.txt" 2>/dev/null
		fi
		[ -e "$dir/$name.steps.csv" ] || continue
		for exp in "$run/expect/$name"/expected_cpu*.csv; do
			if out=$("$here/check-trace.sh" "$exp" "$dir/$name.steps.csv" 2>&1); then
				ok "$set: $name stock single-step log, $out"
			else
				bad "$set: $name stock single-step log: $out"
			fi
		done
	done
done
if [ -n "$modules" ]; then
	for name in $programs; do
		if cmp -s "$run/packaged-$name.got" "$run/ours-$name.got"; then
			ok "ours unarmed: $name results equal the packaged modules'"
		else
			bad "ours unarmed: $name results differ from the packaged modules'"
		fi
	done
fi
if [ -s "$run/l1/dmesg.txt" ] && ! grep -E 'WARNING|BUG|Oops|Call Trace' "$run/l1/dmesg.txt"; then
	ok "L1 kernel log has no WARNING/BUG/Oops"
else
	bad "L1 kernel log (see $run/l1/dmesg.txt)"
fi

# --- benchmark report ----------------------------------------------------------
for set in $sets; do
	line=$(grep '^singlestep ' "$run/l1/$set/bench-singlestep.txt" 2>/dev/null)
	echo "bench: stock KVM_SET_GUEST_DEBUG single-step, $set modules: ${line:-none}"
done | tee "$run/bench.txt"

echo "e2e: $pass passed, $fail failed"
[ $fail -eq 0 ]
