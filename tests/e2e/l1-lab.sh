#!/bin/sh
# l1-lab.sh: the lab's scenarios, run inside L1 by e2e.sh through run-l1.sh.
#   l1-lab.sh BENCH_ITERATIONS MODULE-SET...
# For each MODULE-SET (packaged, ours) it loads that KVM, runs every program
# of programs.list in the test VMM (results in $E2E_OUT/SET/NAME.txt), runs
# the STEPLOG programs again under stock KVM_SET_GUEST_DEBUG single-stepping
# (NAME.steps.csv), measures stock single-step throughput on bench.bin
# (bench-singlestep.txt) and unloads KVM again.  Everything is judged on
# the host; this script only records, and notes failures in SET/failures.
set -u
bench_iterations=$1; shift
cd /e2e

run_set() {	# run_set SET
	set_dir=$E2E_OUT/$1
	mkdir -p "$set_dir"
	if ! kvm-modules load "$1" >"$set_dir/load.txt" 2>&1; then
		echo "kvm-modules load $1 failed" >>"$set_dir/failures"
		return
	fi
	grep -v "^#" programs.list | while read -r name vcpus arg steplog; do
		[ -n "$name" ] || continue
		svmtrace-e2e-vmm -c "$vcpus" -a "$arg" kernel.bin "$name.bin" \
			>"$set_dir/$name.txt" 2>&1 || echo "vmm $name exited $?" >>"$set_dir/failures"
		[ "$steplog" = yes ] || continue
		svmtrace-e2e-vmm -c "$vcpus" -a "$arg" -s -l "$set_dir/$name.steps.csv" kernel.bin \
			"$name.bin" >"$set_dir/$name.steps.txt" 2>&1 ||
			echo "vmm --singlestep $name exited $?" >>"$set_dir/failures"
	done
	svmtrace-e2e-vmm -s -a "$bench_iterations" kernel.bin bench.bin \
		>"$set_dir/bench-singlestep.txt" 2>&1 || echo "singlestep bench exited $?" >>"$set_dir/failures"
	kvm-modules unload >>"$set_dir/load.txt" 2>&1 || echo "kvm-modules unload failed" >>"$set_dir/failures"
}

for set in "$@"; do
	echo "l1-lab: module set $set"
	run_set "$set"
done
