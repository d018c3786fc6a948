#!/bin/sh
# l1-mem.sh: captures with memory operands (--mem), inside L1 (sourced by
# l1-lab.sh after l1-capture.sh; judged on the host by judge-mem.sh).
#
# mem_set DIR: our modules loaded, each program of MEM_PROGRAMS (NAME VCPUS
# ARG, from programs.list; judged against the model's accesses) and of
# MEM_DATA_PROGRAMS (which the model does not replay; judged from their
# data, judge-memrange.sh) captured with --mem --policy block into DIR/NAME
# (l1-capture.sh's capture_run).
MEM_PROGRAMS="straight 1 0
pushpop 1 0
smp 2 0
memops 1 0"
MEM_DATA_PROGRAMS="strcmp 1 0"

mem_set() {
	mkdir -p "$1"
	printf '%s\n%s\n' "$MEM_PROGRAMS" "$MEM_DATA_PROGRAMS" | while read -r name vcpus arg; do
		capture_run "$1/$name" -c "$vcpus" -a "$arg" kernel.bin "$name.bin" -- \
			--policy block --mem ||
			echo "mem capture $name: $(cat "$1/$name/timeout.txt")" >>"$1/failures"
	done
}
