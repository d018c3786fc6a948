#!/bin/sh
# step-cost.sh [--modules DIR] [--iterations N] [--rounds R]: what one traced
# single-step costs, counted in instructions instead of seconds (make bench).
#
# TCG wall time is noise at the scale of one hook, so L1 runs under QEMU's
# -icount (run-l1.sh --icount): 1 ns of L1's virtual time per instruction L1
# or L2 executed.  l1-stepcost.sh single-steps bench.bin on four paths; the
# VMM's run time over its steps is the instructions per step, L1 and L2
# together (the L2 program's own instruction is one of them; an emulated
# VMRUN or #VMEXIT counts as one instruction, which it is not on hardware).
#
# The AMD hardware model adds what icount cannot see: per step, one VMRUN +
# #VMEXIT round trip of ROUNDTRIP_CYCLES (default 1360: "pre-vmrun ->
# post-vmrun +1344..+1376 cycles" measured on an EPYC host by M. Roth,
# LKML, "KVM: SVM: use vmsave/vmload for saving/restoring additional host
# state", December 2020), plus L1's instructions at IPC (default 1) and
# GHZ (default 3): modelled steps/s per vCPU = GHZ * 1e9 / (instructions /
# IPC + ROUNDTRIP_CYCLES).  Deterministic: the same binaries give the same
# counts (give or take timer interrupts) on any host.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"
BUILD=${BUILD:-build}
bin=$top/$BUILD/bin guest=$top/$BUILD/e2e/guest out=$top/$BUILD/e2e/stepcost
modules=$top/$BUILD/kmod iterations=5000 rounds=2
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "usage: step-cost.sh [--modules DIR] [--iterations N] [--rounds R]" >&2; exit 2 ;;
	esac
done
need_cmd qemu-system-x86_64 "the step-cost benchmark (it boots L1 under QEMU)"
for f in "$modules/kvm.ko" "$bin/svmtrace-e2e-vmm" "$bin/svmtrace-capture" "$guest/bench.bin"; do
	[ -e "$f" ] || { echo "step-cost: $f missing (make all kmod)" >&2; exit 1; }
done
rm -rf "$out" && mkdir -p "$out"
nice "$here/run-l1.sh" --icount --modules "$modules" --out "$out/l1" --timeout 900 \
	--add "$bin/svmtrace-e2e-vmm" --add "$bin/svmtrace-capture" --add "$guest/kernel.bin" \
	--add "$guest/bench.bin" --add "$guest/bench_tf.bin" --add "$here/l1-capture.sh" \
	--add "$here/l1-stepcost.sh" \
	-- sh /e2e/l1-stepcost.sh "$iterations" "$rounds" >"$out/run-l1.txt" 2>&1 ||
	{ cat "$out/run-l1.txt"; echo "step-cost: the L1 run failed (see $out/l1)" >&2; exit 1; }
d=$out/l1/stepcost
[ ! -s "$d/failures" ] || { cat "$d/failures"; exit 1; }

# per_step FILE...: median over the rounds of run-time ns / steps.
vmm_ns() { sed -n 's/^\(run\|singlestep\) .*seconds=\([0-9.]*\).*/\2/p' "$1"; }
per_step() {
	for f in "$@"; do
		awk -v t="$(vmm_ns "$f")" -v s=$((4 * iterations + 2)) 'BEGIN { printf "%.0f\n", t * 1e9 / s }'
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
packaged=$(per_step "$d"/packaged-r*.txt)
# The guest's own #DBs: per trap, minus the trapping instruction and the
# quiet handler's eight (kernel.S, --quiet-db).
guest_tf=$(for f in "$d"/guest-tf-r*.txt; do
	n=$(sed -n 's/^result db_count=\([0-9]*\).*/\1/p' "$f")
	awk -v t="$(vmm_ns "$f")" -v n="${n:-0}" 'BEGIN { if (n > 0) printf "%.0f\n", t * 1e9 / n - 9 }'
done | sort -n | head -n 1)
ours=$(per_step "$d"/ours-r*.txt)
paused=$(per_step "$d"/paused-r*/vmm.txt)
producer=$(per_step "$d"/producer-r*/vmm.txt)
ring=$(per_step "$d"/ring-r*/vmm.txt)
audit=$(per_step "$d"/audit-r*/vmm.txt)
foreign=$(per_step "$d"/foreign-r*/vmm.txt)
producer_xstate=$(per_step "$d"/producer-xstate-r*/vmm.txt)
ring_xstate=$(per_step "$d"/ring-xstate-r*/vmm.txt)
for f in "$d"/producer-r*/capture.txt "$d"/ring-r*/capture.txt "$d"/audit-r*/capture.txt \
	"$d"/producer-xstate-r*/capture.txt "$d"/ring-xstate-r*/capture.txt; do
	grep -q ' consistent$' "$f" || { echo "step-cost: $f: capture counts do not add up" >&2; exit 1; }
done
for f in "$d"/audit-r*/capture.txt; do
	grep -q '^audit balanced$' "$f" || { echo "step-cost: $f: the exit audit did not balance" >&2; exit 1; }
done
{
	echo "path instructions_per_step"
	echo "stock_singlestep_packaged $packaged"
	echo "stock_singlestep_ours_unarmed $ours"
	echo "stock_db_exit_in_kernel $guest_tf"
	echo "db_exit_in_kernel_paused $paused"
	echo "ring_capture_producer_only $producer"
	echo "ring_capture $ring"
	echo "ring_capture_with_audit $audit"
	echo "ring_capture_producer_xstate $producer_xstate"
	echo "ring_capture_xstate $ring_xstate"
} >"$out/table"
echo "foreign_instruction_on_a_gated_page $foreign" >"$out/foreign"
awk -v ipc="${IPC:-1}" -v ghz="${GHZ:-3}" -v rt="${ROUNDTRIP_CYCLES:-1360}" -v n=$((4 * iterations + 2)) '
	NR == 1 { next }
	{ path[NR] = $1; ins[NR] = $2 }
	END {
		printf "step cost (L1+L2 instructions per single-step under -icount, %d steps, median of rounds)\n", n
		printf "%-32s %12s %16s %10s\n", "path", "instr/step", "model steps/s", "vs stock"
		for (i = 2; i <= NR; i++) {
			sps[i] = ghz * 1e9 / (ins[i] / ipc + rt)
			printf "%-32s %12d %16.0f %9.2fx\n", path[i], ins[i], sps[i], sps[i] / sps[2]
		}
		printf "model: %.1f GHz, IPC %.1f, one VMRUN round trip of %d cycles per step\n", ghz, ipc, rt
		printf "ring capture / stock single-step instructions: %.3f (goal <= 0.2)\n", ins[7] / ins[2]
		printf "the tracer over a stock in-kernel #DB exit: paused %+.1f%%, recording (vCPU side) %+.1f%% (goal <= 10%%)\n",
			100 * (ins[5] - ins[4]) / ins[4], 100 * (ins[6] - ins[4]) / ins[4]
		printf "the exit audit (--audit, BPF on kvm_exit and kvm_entry) adds %+d instructions per step to a ring capture (%+.1f%%)\n",
			ins[8] - ins[7], 100 * (ins[8] - ins[7]) / ins[7]
		printf "--xstate (YMM0-15 and XSTATE_BV, 768-byte slots) adds %+d instructions per step on the vCPU side (%+.1f%%), %+d to a ring capture with its consumer (%+.1f%%)\n",
			ins[9] - ins[6], 100 * (ins[9] - ins[6]) / ins[6], ins[10] - ins[7], 100 * (ins[10] - ins[7]) / ins[7]
	}' "$out/table"
awk '{ printf "a gate costs another process %d instructions per instruction it runs on the gated page (stepped silently, the gate closed behind it)\n", $2 }' "$out/foreign"
