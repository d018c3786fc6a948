#!/bin/sh
# step-cost.sh [--modules DIR] [--iterations N] [--rounds R]: what one traced
# single-step costs, counted in instructions instead of seconds (make bench).
#
# TCG wall time is noise at the scale of one hook, so L1 runs under QEMU's
# -icount (run-l1.sh --icount): 1 ns of L1's virtual time per instruction L1
# or L2 executed.  l1-stepcost.sh single-steps bench.bin on each path; the
# VMM's run time over its steps is the instructions per step, L1 and L2
# together (the L2 program's own instruction is one of them; an emulated
# VMRUN or #VMEXIT counts as one instruction, which it is not on hardware).
#
# Stock KVM has two references.  The test VMM's loop of KVM_RUN with
# KVM_GUESTDBG_SINGLESTEP is the least any exit-to-userspace single-step
# can cost: a lower bound.  What a user of stock KVM runs is gdb's stepi
# through QEMU's gdbstub: l1-gdbstep.sh, in a second L1 (the same kernel,
# -icount) that runs the host's userspace (run-l1.sh --hostroot) for QEMU
# and gdb.  Its cost per step is the difference of a GDB_BIG- and a
# GDB_SMALL-step run over GDB_BIG - GDB_SMALL.
#
# The AMD hardware model adds what icount cannot see: per step, one VMRUN +
# #VMEXIT round trip of ROUNDTRIP_CYCLES (default 1360: "pre-vmrun ->
# post-vmrun +1344..+1376 cycles" measured on an EPYC host by M. Roth,
# LKML, "KVM: SVM: use vmsave/vmload for saving/restoring additional host
# state", December 2020), plus L1's instructions at IPC (default 1) and
# GHZ (default 3): modelled steps/s per vCPU = GHZ * 1e9 / (instructions /
# IPC + ROUNDTRIP_CYCLES).  Deterministic: the same binaries give the same
# counts (give or take timer interrupts) on any host.  STEPCOST_TIMEOUT
# (default 1800) is each L1's limit in seconds of wall time: the counts do
# not depend on the host's load, the time they take does.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"
BUILD=${BUILD:-build}
bin=$top/$BUILD/bin guest=$top/$BUILD/e2e/guest
modules=$top/$BUILD/kmod/6.1 iterations=5000 rounds=2 timeout=${STEPCOST_TIMEOUT:-1800}
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "usage: step-cost.sh [--modules DIR] [--iterations N] [--rounds R]" >&2; exit 2 ;;
	esac
done
need_cmd qemu-system-x86_64 "the step-cost benchmark (it boots L1 under QEMU)"
need_cmd gdb "the step-cost benchmark's stock reference (gdb stepping QEMU's gdbstub in L1)"
gdb_small=200 gdb_big=1200
for f in "$modules/kvm.ko" "$bin/svmtrace-e2e-vmm" "$bin/svmtrace-capture" "$guest/bench.bin" \
	"$guest/bench_sys.bin" "$guest/bench_int.bin" "$guest/bench_cr3.bin" "$guest/bench_tsc.bin" \
	"$guest/steploop.bin"; do
	[ -e "$f" ] || { echo "step-cost: $f missing (make all kmod)" >&2; exit 1; }
done
. "$here/lib/kernel.sh"
out=$top/$BUILD/e2e/$(kernel_series_of "$(kernel_abi_of_module "$modules/kvm.ko")")/stepcost
rm -rf "$out" && mkdir -p "$out"
nice "$here/run-l1.sh" --icount --modules "$modules" --out "$out/l1" --timeout "$timeout" \
	--add "$bin/svmtrace-e2e-vmm" --add "$bin/svmtrace-capture" --add "$guest/kernel.bin" \
	--add "$guest/bench.bin" --add "$guest/bench_tf.bin" --add "$guest/bench_sys.bin" \
	--add "$guest/bench_int.bin" --add "$guest/bench_cr3.bin" --add "$guest/bench_tsc.bin" \
	--add "$here/l1-capture.sh" \
	--add "$here/l1-stepcost.sh" \
	-- sh /e2e/l1-stepcost.sh "$iterations" "$rounds" >"$out/run-l1.txt" 2>&1 ||
	{ cat "$out/run-l1.txt"; echo "step-cost: the L1 run failed (see $out/l1)" >&2; exit 1; }
d=$out/l1/stepcost
[ ! -s "$d/failures" ] || { cat "$d/failures"; exit 1; }
# The same kernel (--modules picks it) with the host's userspace, for QEMU and gdb.
nice "$here/run-l1.sh" --icount --hostroot --modules "$modules" --out "$out/gdb" --timeout "$timeout" \
	--add "$guest/steploop.bin" --add "$here/l1-gdbstep.sh" --add "$here/l1-gdbstep.py" \
	-- sh /e2e/l1-gdbstep.sh "$rounds" "$gdb_small" "$gdb_big" >"$out/run-gdb.txt" 2>&1 ||
	{ cat "$out/run-gdb.txt"; echo "step-cost: the gdbstub L1 run failed (see $out/gdb)" >&2; exit 1; }
[ ! -s "$out/gdb/failures" ] || { cat "$out/gdb/failures"; exit 1; }

# per_step FILE...: median over the rounds of run-time ns / steps.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
vmm_ns() { sed -n 's/^\(run\|singlestep\) .*seconds=\([0-9.]*\).*/\2/p' "$1"; }
per_step() {
	for f in "$@"; do
		awk -v t="$(vmm_ns "$f")" -v s=$((4 * iterations + 2)) 'BEGIN { printf "%.0f\n", t * 1e9 / s }'
	done | median
}
packaged=$(per_step "$d"/packaged-r*.txt)
# gdb's per-step cost, round by round: the GDB_BIG-step run less the
# GDB_SMALL-step one.  Where it goes, by L1's clock ticks summed over the
# rounds: gdb's process, QEMU's, user mode; an L1 that idled in between
# (waiting for the host, e.g. the 9p root) counted time, not instructions.
# gdb stepped exactly N instructions when steploop's ECX (0 at reset, one
# decrement per four steps) reads -floor(N / 4).
gdb_value() { sed -n "s/^$1 \([0-9a-fx]*\)\$/\1/p" "$2"; }	# gdb_value NAME FILE
gdb_run() {	# gdb_run STEPS ROUND: the run's file, once it is complete and its ECX agrees
	f=$out/gdb/gdbstub-$1-r$2.txt
	for v in ns all_ticks idle_ticks user_ticks gdb_ticks qemu_ticks; do
		[ -n "$(gdb_value $v "$f")" ] || { echo "step-cost: $f: no $v line from gdb" >&2; return 1; }
	done
	ecx=$(gdb_value ecx "$f") want=$(((1 << 32) - $1 / 4))
	if [ -z "$ecx" ] || [ $((ecx)) -ne "$want" ]; then
		echo "step-cost: $f: gdb did not step $1 instructions (ECX ${ecx:-missing}, want $(printf %#x "$want"))" >&2
		return 1
	fi
	echo "$f"
}
gdb_rounds='' all_ticks=0 idle_ticks=0 user_ticks=0 gdb_ticks=0 qemu_ticks=0 r=1
while [ $r -le "$rounds" ]; do
	small=$(gdb_run "$gdb_small" $r) && big=$(gdb_run "$gdb_big" $r) || exit 1
	ns=$(($(gdb_value ns "$big") - $(gdb_value ns "$small")))
	gdb_rounds="$gdb_rounds $((ns / (gdb_big - gdb_small)))"
	for v in all_ticks idle_ticks user_ticks gdb_ticks qemu_ticks; do
		eval "$v=\$(($v + $(gdb_value $v "$big") - $(gdb_value $v "$small")))"
	done
	r=$((r + 1))
done
# shellcheck disable=SC2086 # one per-step figure per round
gdbstub=$(printf '%s\n' $gdb_rounds | median)
[ $((100 * idle_ticks)) -le "$all_ticks" ] || {
	echo "step-cost: L1 idled for $idle_ticks of $((all_ticks + idle_ticks)) ticks while gdb stepped (more than 1 %): the gdbstub row would count waiting as instructions" >&2
	exit 1
}
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
producer_mem=$(per_step "$d"/producer-mem-r*/vmm.txt)
ring_mem=$(per_step "$d"/ring-mem-r*/vmm.txt)
producer_hide=$(per_step "$d"/producer-hide-r*/vmm.txt)
producer_tsc=$(per_step "$d"/producer-tsc-r*/vmm.txt)
producer_tsc_hide=$(per_step "$d"/producer-tsc-hide-r*/vmm.txt)
for f in "$d"/producer-r*/capture.txt "$d"/ring-r*/capture.txt "$d"/audit-r*/capture.txt \
	"$d"/producer-xstate-r*/capture.txt "$d"/ring-xstate-r*/capture.txt \
	"$d"/producer-mem-r*/capture.txt "$d"/ring-mem-r*/capture.txt \
	"$d"/producer-hide-r*/capture.txt "$d"/producer-tsc-r*/capture.txt \
	"$d"/producer-tsc-hide-r*/capture.txt; do
	grep -q ' consistent$' "$f" || { echo "step-cost: $f: capture counts do not add up" >&2; exit 1; }
done
for f in "$d"/audit-r*/capture.txt; do
	grep -q '^audit balanced$' "$f" || { echo "step-cost: $f: the exit audit did not balance" >&2; exit 1; }
done
{
	echo "path instructions_per_step"
	echo "stock_singlestep_packaged $packaged"
	echo "stock_singlestep_gdbstub_packaged $gdbstub"
	echo "stock_singlestep_ours_unarmed $ours"
	echo "stock_db_exit_in_kernel $guest_tf"
	echo "db_exit_in_kernel_paused $paused"
	echo "ring_capture_producer_only $producer"
	echo "ring_capture $ring"
	echo "ring_capture_with_audit $audit"
	echo "ring_capture_producer_xstate $producer_xstate"
	echo "ring_capture_xstate $ring_xstate"
	echo "ring_capture_producer_mem $producer_mem"
	echo "ring_capture_mem $ring_mem"
	echo "ring_capture_producer_hide_time $producer_hide"
	echo "tsc_loop_producer $producer_tsc"
	echo "tsc_loop_producer_hide_time $producer_tsc_hide"
} >"$out/table"
echo "foreign_instruction_on_a_gated_page $foreign" >"$out/foreign"
# "vs stock" is against the test VMM's single-step (the lower bound), "vs gdb"
# against gdb stepping QEMU's gdbstub (what a stock user runs).
awk -v ipc="${IPC:-1}" -v ghz="${GHZ:-3}" -v rt="${ROUNDTRIP_CYCLES:-1360}" -v n=$((4 * iterations + 2)) \
	-v gn="$gdb_small/$gdb_big" -v at="$all_ticks" -v ut="$user_ticks" -v gt="$gdb_ticks" -v qt="$qemu_ticks" '
	NR == 1 { next }
	{ path[NR] = $1; ins[$1] = $2; sps[$1] = ghz * 1e9 / ($2 / ipc + rt) }
	END {
		stock = "stock_singlestep_packaged"; gdb = "stock_singlestep_gdbstub_packaged"
		printf "step cost (L1+L2 instructions per single-step under -icount, %d steps; gdb: %s steps, their difference; median of rounds)\n", n, gn
		printf "%-34s %12s %16s %10s %10s\n", "path", "instr/step", "model steps/s", "vs stock", "vs gdb"
		for (i = 2; i <= NR; i++) {
			p = path[i]
			printf "%-34s %12d %16.0f %9.2fx %9.2fx\n", p, ins[p], sps[p], sps[p] / sps[stock], sps[p] / sps[gdb]
		}
		printf "model: %.1f GHz, IPC %.1f, one VMRUN round trip of %d cycles per step\n", ghz, ipc, rt
		printf "ring capture / stock single-step instructions (goal <= 0.2): %.3f of the test VMM'"'"'s (a lower bound for stock), %.4f of gdb stepping QEMU'"'"'s gdbstub\n",
			ins["ring_capture"] / ins[stock], ins["ring_capture"] / ins[gdb]
		paused = ins["db_exit_in_kernel_paused"]; tf = ins["stock_db_exit_in_kernel"]
		producer = ins["ring_capture_producer_only"]; ring = ins["ring_capture"]
		if (at > 0)
			printf "gdb stepping QEMU'"'"'s gdbstub, by L1'"'"'s clock ticks: %.0f%% in gdb'"'"'s process, %.0f%% in QEMU'"'"'s (KVM_RUN included), %.0f%% in user mode\n",
				100 * gt / at, 100 * qt / at, 100 * ut / at
		printf "the tracer over a stock in-kernel #DB exit: paused %+.1f%%, recording (vCPU side) %+.1f%% (goal <= 10%%)\n",
			100 * (paused - tf) / tf, 100 * (producer - tf) / tf
		printf "the exit audit (--audit, BPF on kvm_exit and kvm_entry) adds %+d instructions per step to a ring capture (%+.1f%%)\n",
			ins["ring_capture_with_audit"] - ring, 100 * (ins["ring_capture_with_audit"] - ring) / ring
		px = ins["ring_capture_producer_xstate"]; rx = ins["ring_capture_xstate"]
		printf "--xstate (YMM0-15 and XSTATE_BV, 768-byte slots) adds %+d instructions per step on the vCPU side (%+.1f%%), %+d to a ring capture with its consumer (%+.1f%%)\n",
			px - producer, 100 * (px - producer) / producer, rx - ring, 100 * (rx - ring) / ring
		pm = ins["ring_capture_producer_mem"]; rm = ins["ring_capture_mem"]
		printf "--mem (memory operands, 1536-byte slots, the full exit path) adds %+d instructions per step on the vCPU side (%+.1f%%), %+d to a ring capture with its consumer (%+.1f%%)\n",
			pm - producer, 100 * (pm - producer) / producer, rm - ring, 100 * (rm - ring) / ring
		ph = ins["ring_capture_producer_hide_time"]; pt = ins["tsc_loop_producer"]
		pth = ins["tsc_loop_producer_hide_time"]
		printf "--hide-time adds %+d instructions per plain step on the vCPU side (%+.1f%%); a traced TSC read (bench_tsc.bin: one in four steps) costs %+d more with it, read natively %d in all, made virtual %d\n",
			ph - producer, 100 * (ph - producer) / producer, 4 * (pth - pt), 4 * pt - 3 * producer, 4 * pth - 3 * ph
	}' "$out/table"
awk '{ printf "a gate costs another process %d instructions per instruction it runs on the gated page (stepped silently, the gate closed behind it)\n", $2 }' "$out/foreign"

# What arming costs the rest of the guest: bench_sys.bin's SYSCALL /
# SYSRETQ, bench_int.bin's INT n / IRETQ and bench_cr3.bin's SYSCALL / MOV
# CR3 / SYSRETQ round trips (the loop's DEC and JNZ included), untraced, on
# each module set and while a capture of another address space is armed
# (with --first-rip too, and asking about new processes: --new-processes).
# Per round trip: the run of ten times ITERATIONS less the run of a fifth
# of that, over the difference, so what a run costs besides its loop (the
# first entry, the gate's faults) drops out.  The kernel of bench_sys and
# bench_cr3 must have counted every call.  The VM exits per round trip come
# from the exit audit's runs of the same (exits_armed), the same
# difference; the model adds a VMRUN round trip per exit.
arming=$((iterations * 10)) small=$((iterations * 2))	# as l1-stepcost.sh runs them
for n in "$small" "$arming"; do
	for p in sys cr3; do
		for f in "$d"/$p-packaged-$n-r*.txt "$d"/$p-ours-$n-r*.txt "$d"/$p-armed-$n-r*/vmm.txt \
				"$d"/$p-first-$n-r*/vmm.txt "$d"/$p-ask-$n-r*/vmm.txt; do
			grep -q "^result .* syscalls=$n " "$f" ||
				{ echo "step-cost: $f: bench_$p did not make $n system calls" >&2; exit 1; }
		done
	done
done
round_trip() {	# round_trip NAME SUFFIX: e.g. sys-ours .txt, int-armed /vmm.txt
	k=1
	while [ $k -le "$rounds" ]; do
		a=$(vmm_ns "$d/$1-$small-r$k$2") b=$(vmm_ns "$d/$1-$arming-r$k$2")
		[ -n "$a" ] && [ -n "$b" ] ||
			{ echo "step-cost: no run time in $d/$1-{$small,$arming}-r$k$2" >&2; return 1; }
		awk -v a="$a" -v b="$b" -v n=$((arming - small)) \
			'BEGIN { printf "%.0f\n", (b - a) * 1e9 / n }'
		k=$((k + 1))
	done
}
audit_exits() {	# audit_exits DIR: the vCPU's exits in the audited run
	f=$1/capture.txt
	grep -q '^audit balanced$' "$f" ||
		{ echo "step-cost: $f: the exit audit did not balance" >&2; return 1; }
	sed -n 's/^audit vcpu0 .* exits=\([0-9]*\) .*/\1/p' "$f"
}
exits_per_round_trip() {	# exits_per_round_trip NAME: e.g. sys-exits, the audited pair's difference
	a=$(audit_exits "$d/$1-$small") && b=$(audit_exits "$d/$1-$arming") &&
		[ -n "$a" ] && [ -n "$b" ] || return 1
	awk -v a="$a" -v b="$b" -v n=$((arming - small)) 'BEGIN { printf "%.2f\n", (b - a) / n }'
}
{
	echo "round_trip packaged ours_unarmed armed armed_first exits_armed asking exits_asking"
	for p in sys int cr3; do
		line=$p
		for run in $p-packaged:.txt $p-ours:.txt $p-armed:/vmm.txt $p-first:/vmm.txt; do
			per=$(round_trip "${run%%:*}" "${run#*:}") || exit 1
			line="$line $(echo "$per" | median)"
		done
		exits=$(exits_per_round_trip $p-exits) && per=$(round_trip $p-ask /vmm.txt) &&
			ask_exits=$(exits_per_round_trip $p-ask-exits) || exit 1
		echo "$line $exits $(echo "$per" | median) $ask_exits"
	done
} >"$out/arming"
# The unarmed figures are a dozen instructions, within a timer interrupt's
# noise: what arming adds is the figure, not a ratio.  The guest model:
# CTX_SWITCHES context switches (one CR3 load each) and SYSCALLS system
# calls per second, what arming adds to them as a share of one vCPU.
awk -v ipc="${IPC:-1}" -v ghz="${GHZ:-3}" -v rt="${ROUNDTRIP_CYCLES:-1360}" -v n="$small/$arming" \
	-v cs="${CTX_SWITCHES:-10000}" -v sc="${SYSCALLS:-100000}" '
	BEGIN { name["sys"] = "SYSCALL/SYSRETQ"; name["int"] = "INT n/IRETQ"; name["cr3"] = "SYSCALL/MOV CR3/SYSRETQ" }
	NR == 1 { next }
	{ p[NR] = $1; pk[NR] = $2; un[NR] = $3; ar[NR] = $4; fi[NR] = $5; ex[NR] = $6
	  as[NR] = $7; ax[NR] = $8
	  ns[$1] = ((ar[NR] - un[NR]) / ipc + ex[NR] * rt) / ghz
	  na[$1] = ((as[NR] - un[NR]) / ipc + ax[NR] * rt) / ghz }
	END {
		printf "what arming costs the rest of the guest (L1+L2 instructions per untraced round trip, runs of %s iterations, their difference; armed: a capture of another address space; exits: the exit audit'"'"'s, per round trip; first: armed with --first-rip)\n", n
		printf "%-24s %9s %13s %9s %12s %7s %17s %9s %12s\n", "round trip", "packaged", "ours unarmed", "armed", "armed adds", "exits", "model adds (ns)", "first", "first adds"
		for (i = 2; i <= NR; i++)
			printf "%-24s %9d %13d %9d %12d %7.2f %17.0f %9d %12d\n", name[p[i]], pk[i], un[i], ar[i], ar[i] - un[i], ex[i], ns[p[i]], fi[i], fi[i] - ar[i]
		printf "asking about new processes (--new-processes; svmtraced --follow, --wait-name until its process started): every vCPU intercepts IRET\n"
		printf "%-24s %9s %12s %7s %17s\n", "round trip", "asking", "asking adds", "exits", "model adds (ns)"
		for (i = 2; i <= NR; i++)
			printf "%-24s %9d %12d %7.2f %17.0f\n", name[p[i]], as[i], as[i] - un[i], ax[i], na[p[i]]
		printf "model: each exit a VMRUN round trip of %d cycles, the added instructions at IPC %.1f and %.1f GHz\n", rt, ipc, ghz
		printf "a guest with %d context switches (one CR3 load each) and %d system calls per second, while another process is captured: %.0f us per second of a vCPU (%.2f %%)\n",
			cs, sc, (cs * ns["cr3"] + sc * ns["sys"]) / 1000, (cs * ns["cr3"] + sc * ns["sys"]) / 1e7
		printf "the same guest while a capture asks about new processes: %.0f us per second of a vCPU (%.2f %%)\n",
			(cs * na["cr3"] + sc * na["sys"]) / 1000, (cs * na["cr3"] + sc * na["sys"]) / 1e7
	}' "$out/arming"
