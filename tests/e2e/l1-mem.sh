#!/bin/sh
# l1-mem.sh: captures with memory operands (--mem), inside L1 (sourced by
# l1-lab.sh after l1-capture.sh; judged on the host by judge-mem.sh).
#
# mem_set DIR: our modules loaded, each program of MEM_PROGRAMS (NAME VCPUS
# ARG, from programs.list) captured with --mem --policy block into
# DIR/NAME (l1-capture.sh's capture_run).
MEM_PROGRAMS="straight 1 0
pushpop 1 0
smp 2 0
memops 1 0"

mem_set() {
	mkdir -p "$1"
	echo "$MEM_PROGRAMS" | while read -r name vcpus arg; do
		capture_run "$1/$name" -c "$vcpus" -a "$arg" kernel.bin "$name.bin" -- \
			--policy block --mem ||
			echo "mem capture $name: $(cat "$1/$name/timeout.txt")" >>"$1/failures"
	done
}
