#!/bin/sh
# step-cost-kernels.sh SERIES... : the step-cost tables of several kernels
# side by side (make bench), from build/e2e/SERIES/stepcost, which
# step-cost.sh --modules build/kmod/SERIES wrote: instructions per step on
# each path, what a foreign instruction on a gated page costs, and what
# arming costs the rest of the guest.  A missing table is an error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-build}
files=
for s in "$@"; do
	d=$top/$BUILD/e2e/$s/stepcost
	for f in table foreign arming; do
		[ -s "$d/$f" ] || { echo "step-cost-kernels: $d/$f missing (step-cost.sh did not finish)" >&2; exit 1; }
	done
	files="$files $s:$d"
done
# One row per path: the path, then each kernel's figure, from
# "path value" (table, foreign) and "name packaged unarmed armed ..." (arming).
for sd in $files; do
	s=${sd%%:*} d=${sd#*:}
	awk -v s="$s" 'NR > 1 { print s, $1, $2 }' "$d/table"
	awk -v s="$s" '{ print s, $1, $2 }' "$d/foreign"
	awk -v s="$s" 'NR > 1 { print s, $1 "_round_trip_ours_unarmed", $3; print s, $1 "_round_trip_armed", $4 }' "$d/arming"
done | awk -v order="$*" '
	{ if (!($2 in seen)) { seen[$2] = 1; rows[++n] = $2 } v[$2, $1] = $3 }
	END {
		k = split(order, ks, " ")
		printf "step cost on each kernel (L1+L2 instructions under -icount; tests/e2e/step-cost.sh per kernel)\n"
		printf "%-44s", "path"
		for (j = 1; j <= k; j++) printf " %12s", "Linux " ks[j]
		printf "\n"
		for (i = 1; i <= n; i++) {
			printf "%-44s", rows[i]
			for (j = 1; j <= k; j++) printf " %12s", ((rows[i], ks[j]) in v) ? v[rows[i], ks[j]] : "-"
			printf "\n"
		}
		printf "%-44s", "ring_capture / stock_singlestep_packaged"
		for (j = 1; j <= k; j++)
			printf " %12.3f", v["ring_capture", ks[j]] / v["stock_singlestep_packaged", ks[j]]
		printf "\n"
	}'
