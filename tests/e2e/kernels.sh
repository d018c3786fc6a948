#!/bin/sh
# kernels.sh: one lab on every supported kernel at once (docs/lab.md,
# "Two kernels").
#   tests/e2e/kernels.sh --modules DIR [--modules DIR]... -- LAB [ARG...]
# Runs `LAB --modules DIR ARG...` for each DIR (our modules for one kernel,
# kmod/build.sh's OUTDIR) side by side: each L1 is single-threaded TCG, so
# two of them fill the two cores a lab machine has.  Each run's output goes
# to build/e2e/SERIES/LAB.log and is printed whole once all have ended.
# Then the runs are compared row by row: every check (PASS/FAIL/XFAIL line)
# must exist on every kernel with the same outcome; a check that passes on
# one kernel and not on another is a failure (`FAIL: kernels/ID`), not a
# known one.  Exits non-zero when a run failed or the rows differ.
# Environment: BUILD (default build), E2E_WIN_SEED (the seed every run lays
# the Windows-layout guests out from; default: a new one, printed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib/kernel.sh"

usage() { echo "usage: kernels.sh --modules DIR... -- LAB [ARG...]" >&2; exit 2; }
dirs=
while [ $# -ge 2 ] && [ "$1" = --modules ]; do
	dirs="$dirs $2"
	shift 2
done
[ $# -ge 2 ] && [ "$1" = -- ] && [ -n "$dirs" ] || usage
shift
lab=$1; shift
name=$(basename "$lab" .sh)
build=$top/${BUILD:-build}

# One layout of the Windows-layout guests for every kernel (e2e.sh and
# libvirt.sh lay them out anew from this seed), so that the runs differ in
# the kernel alone.
E2E_WIN_SEED=${E2E_WIN_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export E2E_WIN_SEED
echo "kernels: the Windows-layout guests from seed $E2E_WIN_SEED on every kernel"
pids= series_list=
for d in $dirs; do
	[ -f "$d/kvm.ko" ] || { echo "kernels: $d/kvm.ko missing (make kmod)" >&2; exit 1; }
	s=$(kernel_series_of "$(kernel_abi_of_module "$d/kvm.ko")")
	mkdir -p "$build/e2e/$s"
	echo "kernels: $name on Linux $s ($(kernel_abi_of_module "$d/kvm.ko")), log: $build/e2e/$s/$name.log"
	"$lab" --modules "$d" "$@" >"$build/e2e/$s/$name.log" 2>&1 &
	pids="$pids $!"
	series_list="$series_list $s"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done

# Every check line of each run: ID<TAB>outcome.
rows() {
	LC_ALL=C sed -n 's/^\(PASS\|FAIL (XPASS)\|FAIL\|XFAIL\): \([^ ]*\): .*/\2\t\1/p' "$build/e2e/$1/$name.log" |
		LC_ALL=C sort -u
}
for s in $series_list; do
	echo "=== $name on Linux $s ==="
	cat "$build/e2e/$s/$name.log"
	rows "$s" >"$build/e2e/$s/$name.rows"
done
first=${series_list# }; first=${first%% *}
differ=0
for s in $series_list; do
	[ "$s" = "$first" ] && continue
	# IDs whose outcome differs, or that one kernel has and the other lacks.
	LC_ALL=C join -t "$(printf '\t')" -a 1 -a 2 -e missing -o 0,1.2,2.2 \
		"$build/e2e/$first/$name.rows" "$build/e2e/$s/$name.rows" |
		awk -F '\t' -v a="$first" -v b="$s" '$2 != $3 {
			printf "FAIL: kernels/%s: Linux %s %s, Linux %s %s\n", $1, a, $2, b, $3; n++ }
			END { exit n > 0 }' || differ=1
done
n=$(wc -l <"$build/e2e/$first/$name.rows")
if [ $differ -eq 0 ]; then
	echo "kernels: $name: the same $n checks with the same outcome on Linux$series_list"
else
	echo "kernels: $name: the kernels disagree (FAIL: kernels/... above)"
fi
[ $rc -eq 0 ] && [ $differ -eq 0 ]
