#!/bin/sh
# e2e.sh: the nested-SVM lab, end to end (docs/lab.md).
#   tests/e2e/e2e.sh [--modules DIR] [--bench-iterations N]
# Boots one L1 (run-l1.sh) and runs l1-lab.sh there for the packaged KVM
# and, with --modules (our build), for ours unarmed and for ours capturing;
# then judges on the host:
#   - every program's results (VMM output) equal the reference model's;
#   - stock single-step logs equal the model's expected records exactly;
#   - our modules, unarmed, give the packaged modules' results;
#   - captures (judge-capture.sh): counts add up, traced programs compute
#     what they should, decoded traces equal the model's records exactly,
#     block loses nothing, drop shows its gaps, a killed consumer never
#     wedges the guest, non-root is refused, rmmod works afterwards;
#   - the --mem captures (judge-mem.sh): every record's memory accesses
#     (address, size, values read and written) equal the model's;
#   - what a user sees of them (judge-memrange.sh): dump --mem-range over a
#     decrypted buffer and over string compares, and the Tenet export read
#     back with its memory entries;
#   - the --xstate capture of ymm.bin (judge-xstate.sh): YMM0-15 and
#     XSTATE_BV after every step as ymm.S's instructions define them;
#   - the L1 kernel log has no WARNING/BUG/Oops, soft lockup or RCU stall;
# and reports stock single-step and ring capture throughput and their
# ratio.  Prints "N passed, N failed".
# Environment: BUILD (default build), E2E_TIMEOUT (L1 seconds, default 900),
# E2E_RUN (where results go, default $BUILD/e2e/SERIES/run, SERIES the
# modules' kernel series, 6.1 without --modules), E2E_WIN_SEED (where
# the Windows-layout guests' kernel, images and frames go; default: a new
# seed each run, printed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"

modules= bench_iterations=15000
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
. "$here/lib/kernel.sh"
series=6.1
[ -z "$modules" ] || series=$(kernel_series_of "$(kernel_abi_of_module "$modules/kvm.ko")")
run=${E2E_RUN:-$build/e2e/$series/run}
for f in "$bin/svmtrace-e2e-vmm" "$bin/svmtrace-e2e-model" "$guest/kernel.bin" "$guest/bench.bin"; do
	[ -e "$f" ] || { echo "e2e: $f missing (make e2e builds it)" >&2; exit 1; }
done
rm -rf "$run" && mkdir -p "$run/expect" "$run/l1"

. "$here/lib/judge.sh"

# --- what each program must do, from the reference model ---------------------
programs=$(grep -v '^#' "$here/programs.list" | awk 'NF { print $1 }')
# Programs whose stock single-step log programs.list asks for (STEPLOG yes
# or only): each must have one, compared with the model (or, for only, with
# the packaged modules' log); a missing log is a failure.
steplogs=$(grep -v '^#' "$here/programs.list" | awk 'NF && ($4 == "yes" || $4 == "only") { print $1 }')
adds="--add $bin/svmtrace-e2e-vmm --add $guest/kernel.bin --add $guest/bench.bin --add $guest/ipi.bin"
adds="$adds --add $guest/running.bin --add $guest/hostile.bin --add $guest/drheavy.bin"
adds="$adds --add $guest/dbgregs.bin --add $guest/int3k.bin --add $guest/pause.bin"
adds="$adds --add $guest/syscost.bin"
adds="$adds --add $here/l1-lab.sh --add $here/l1-capture.sh --add $here/l1-lifecycle.sh"
adds="$adds --add $here/l1-debug.sh --add $here/l1-mem.sh"
adds="$adds --add $here/programs.list"
model_expect() {	# model_expect NAME PROGRAM VCPUS ARG [MODEL-OPTION...]
	me_dir=$run/expect/$1 me_name=$1 me_prog=$2 me_vcpus=$3 me_arg=$4
	shift 4
	mkdir -p "$me_dir"
	"$bin/svmtrace-e2e-model" -c "$me_vcpus" -a "$me_arg" "$@" -o "$me_dir" \
		"$guest/kernel.bin" "$guest/$me_prog.bin" >"$me_dir/results.txt" ||
		bad "model/$me_name" "the model cannot replay it: $(grep failed "$me_dir/results.txt")"
}
oracle_programs=
while read -r name vcpus arg steplog _; do
	if [ "$steplog" = only ]; then oracle_programs="$oracle_programs $name"
	else model_expect "$name" "$name" "$vcpus" "$arg"; fi
	adds="$adds --add $guest/$name.bin"
done <<EOF
$(grep -v '^#' "$here/programs.list" | awk NF)
EOF
# The Windows-layout guest (docs/lab-internals.md): one image per profile,
# laid out anew each run (win/images.sh), and the capture scenarios NAME
# IMAGE MODE PID IMAGE-NAME (l1-win.sh).
win=$run/win
win_images="win10 win11"
win_seed=${E2E_WIN_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
for image in $win_images timing; do
	"$here/win/images.sh" "$build" "$win" "$win_seed" "$image" >"$run/win-$image.log" 2>&1 ||
		{ echo "e2e: laying out $image: $(cat "$run/win-$image.log")" >&2; exit 1; }
done
echo "info: the Windows-layout guests laid out with seed $win_seed (E2E_WIN_SEED=$win_seed repeats them)"
win_scenarios="win10-pid win10 pid 1200 alpha.exe
win11-kva win11 pid 1204 beta.exe
win10-lazy win10 lazy 1208 lazy.exe
win11-late win11 late 1212 late.exe
win10-first win10 first 1200 alpha.exe
win11-first-kva win11 first 1204 beta.exe
win11-late-first win11 late-first 1212 late.exe
win10-late-follow win10 late-follow 1212 late.exe
win11-late-follow-max win11 late-follow-max 1212 late.exe
win11-new win11 new 1200 alpha.exe"
echo "$win_images" >"$run/win-images"
echo "$win_scenarios" >"$run/win-scenarios"
adds="$adds --add $run/win-images --add $run/win-scenarios --add $here/l1-win.sh"
adds="$adds --add $bin/svmtrace-vmi $(ls "$top"/tests/data/profiles/*.json.xz | sed 's/^/--add /')"
for image in $win_images; do
	adds="$adds --add $win/$image.elf --add $win/$image.targets --add $win/$image.loader"
done
# The images as VMI reads them, on the host (the initial memory, an ELF
# core): the process list and every entry page as the builder placed them.
profiles=$top/tests/data/profiles
for image in $win_images; do
	vmi() { "$bin/svmtrace-vmi" --memory "$win/$image.elf" --profiles "$profiles" "$@"; }
	listed=$(vmi ps 2>&1 | awk 'NR > 1 { printf "%s:%s ", $1, $3 }')
	if [ "$listed" = "4:System 1200:alpha.exe 1204:beta.exe 1208:lazy.exe " ]; then
		ok "image/$image/ps" "svmtrace-vmi lists $listed(late.exe is not linked yet)"
	else
		bad "image/$image/ps" "svmtrace-vmi lists '$listed'"
	fi
	while read -r pname pid dtb udtb entry gpa state ppid; do
		out=$(vmi resolve "$pid" 2>&1); rc=$?
		got=$(echo "$out" | awk '$1 == "entry-gpa:" || $1 == "dtb:" || $1 == "user-dtb:" { print $2 }' |
			awk '{ if ($0 == "-") print "0x0"; else { sub(/^0x0*/, "0x"); print } }' | tr '\n' ' ')
		case $state in
		valid) [ $rc = 0 ] && [ "$got" = "$dtb $udtb $gpa " ] ;;
		lazy) [ $rc = 3 ] && echo "$out" | grep -q 'not resident' ;;
		late|created) [ $rc = 1 ] && echo "$out" | grep -q 'no process' ;;
		esac && ok "image/$image/resolve/$pid" "$pname ($state, parent $ppid): $(echo "$out" | grep -m 1 "entry-gpa\|not resident\|no process")" ||
			bad "image/$image/resolve/$pid" "$pname ($state, parent $ppid): exit $rc, got '$got', builder: $dtb $udtb $gpa: $out"
	done <"$win/$image.targets"
done

for image in $win_images timing; do	# untraced: what packaged/ours must print
	mkdir -p "$run/expect/$image"
	"$bin/svmtrace-e2e-model" --win "$win/$image.elf" >"$run/expect/$image/results.txt" ||
		bad "model/$image" "the model cannot replay it: $(grep failed "$run/expect/$image/results.txt")"
done
# Virtual time (docs/lab.md, "Virtual time"): timing.exe's checks in the
# Windows-layout guest (l1-time.sh, judge-time.sh).
adds="$adds --add $win/timing.elf --add $here/l1-time.sh"
while read -r name image mode pid pname; do
	model_win "$name" "$image" "$pid" "$mode"
done <<WIN
$win_scenarios
WIN

model_expect bench bench 1 "$bench_iterations"
model_expect bench-drop bench 1 2000
model_expect bench-kill bench 1 25000
model_expect frames-stop frames 1 400
model_expect intpfx-stop intpfx 1 400
model_expect bench-kick bench 1 300
model_expect running running 1 2000
# The guest's own debugging (l1-debug.sh): untraced and traced user-only
# (CPL-0 programs: no records), and --kernel.
debug_programs="dbgregs int3k pause"
model_expect dbgregs dbgregs 1 0 --cpl0
model_expect dbgregs-kernel dbgregs 1 0 --cpl0 --kernel
model_expect int3k int3k 1 0 --cpl0
model_expect int3k-kernel int3k 1 0 --cpl0 --kernel
model_expect pause pause 1 0
model_expect mmio-kernel mmio 1 0 --kernel
model_expect nmi-kernel nmi 1 0 --kernel
# Watched gates on lazy.bin's demand-paged aliases (layout.h, l1-lab.sh).
model_expect watch-pte lazy 1 0 --gate-va 0x504000
model_expect watch-pml4 lazy 1 1 --gate-va 0x8000004000
syscost_rounds=500	# l1-lab.sh runs it with this argument
model_expect syscost syscost 1 "$syscost_rounds"	# vCPU 0 alone: judge-syscost.sh

# --- one L1 boot for every scenario ------------------------------------------
sets="packaged bench-stock"
if [ -n "$modules" ]; then
	sets="packaged ours capture bench"
	for f in svmtrace-capture svmtrace-dump svmtrace-abi-check; do
		[ -x "$bin/$f" ] || { echo "e2e: $bin/$f missing (make all builds it)" >&2; exit 1; }
	done
	adds="$adds --add $bin/svmtrace-capture --add $bin/svmtrace-abi-check"
	# svmtraced traces the Windows-layout guest too, once it is built.
	[ ! -x "$bin/svmtraced" ] || adds="$adds --add $bin/svmtraced"
fi
# shellcheck disable=SC2086
nice "$here/run-l1.sh" ${modules:+--modules "$modules"} --out "$run/l1" --timeout "${E2E_TIMEOUT:-900}" \
	$adds -- sh /e2e/l1-lab.sh "$bench_iterations" $sets
rc=$?
if [ $rc -eq 0 ]; then ok l1/boot "L1 booted and ran the scenarios ($(tr '\n' ' ' <"$run/l1/timing"))"
else bad l1/boot "L1 run exited $rc (see $run/l1/console.log)"; fi

# --- judge --------------------------------------------------------------------
# Programs beyond the model (STEPLOG only): the packaged modules' stock
# single-step log, split per vCPU, and their results are the expectation.
for name in $oracle_programs; do
	mkdir -p "$run/expect/$name"
	steps=$run/l1/packaged/$name.steps.csv
	results "$run/l1/packaged/$name.steps.txt" >"$run/expect/$name/results.txt"
	for n in $(awk -F, 'NR > 1 { print $1 }' "$steps" 2>/dev/null | sort -u); do
		awk -F, -v n="$n" 'NR == 1 || $1 == n' "$steps" >"$run/expect/$name/expected_cpu$n.csv"
	done
	if grep -q '^cpu0 done status=0x0 ' "$run/expect/$name/results.txt" &&
		[ -s "$run/expect/$name/expected_cpu0.csv" ]; then
		ok "packaged/$name/oracle" "stock single-stepping ran it: $(awk 'END { print NR - 1 }' "$steps") steps, $(grep '^result' "$run/expect/$name/results.txt" | cut -d' ' -f7-8)"
	else
		bad "packaged/$name/oracle" "no stock single-step log to judge it by: $(cat "$run/l1/packaged/$name.steps.txt" 2>/dev/null)"
	fi
done
[ ! -s "$run/l1/bench/failures" ] || bad bench/scenarios "$(tr '\n' ';' <"$run/l1/bench/failures")"
for set in packaged ${modules:+ours}; do
	dir=$run/l1/$set
	[ ! -s "$dir/failures" ] || bad "$set/scenarios" "$(tr '\n' ';' <"$dir/failures")"
	for name in $programs $win_images $debug_programs; do
		if [ -s "$dir/$name.txt" ] && results "$dir/$name.txt" >"$run/$set-$name.got" &&
			results "$run/expect/$name/results.txt" | diff -u - "$run/$set-$name.got" >"$run/$set-$name.diff"; then
			ok "$set/$name/results" "results equal the model's"
		else
			bad "$set/$name/results" "results differ from the model's:"; cat "$run/$set-$name.diff" "$dir/$name.txt" 2>/dev/null
		fi
		case " $(echo $steplogs) " in
		*" $name "*) ;;
		*) continue ;;
		esac
		case " $oracle_programs " in *" $name "*) [ "$set" != packaged ] || continue ;; esac
		if [ ! -s "$dir/$name.steps.csv" ]; then
			bad "$set/$name/steplog" "programs.list asks for a stock single-step log; $dir/$name.steps.csv is missing or empty"
			continue
		fi
		for exp in "$run/expect/$name"/expected_cpu*.csv; do
			if out=$("$here/check-trace.sh" "$exp" "$dir/$name.steps.csv" 2>&1); then
				ok "$set/$name/steplog" "stock single-step log, $out"
			else
				bad "$set/$name/steplog" "stock single-step log: $out"
			fi
		done
	done
done
# The ipi program (x2APIC, CPL 0) is beyond the model: stock single-stepping
# on the packaged modules is its oracle, and every module set must agree.
if results "$run/l1/packaged/ipi.txt" >"$run/packaged-ipi.got" && grep -q '^cpu0 done status=0x[1-9a-f]' "$run/packaged-ipi.got"; then
	ok packaged/ipi/results "x2APIC self-IPIs at CPL 0 ran ($(cut -d' ' -f1-3 "$run/packaged-ipi.got" | head -n 1))"
else
	bad packaged/ipi/results "the ipi program did not finish: $(cat "$run/l1/packaged/ipi.txt" 2>/dev/null)"
fi
if [ -n "$modules" ]; then
	if results "$run/l1/ours/ipi.txt" | cmp -s - "$run/packaged-ipi.got"; then
		ok ours/ipi/results "results on our modules equal the packaged modules'"
	else
		bad ours/ipi/results "results on our modules differ: $(cat "$run/l1/ours/ipi.txt" 2>/dev/null)"
	fi
	read -r before after <"$run/l1/ours/ipi.fastpath" 2>/dev/null
	if [ "$((${after:-0} - ${before:-0}))" -ge 100 ] 2>/dev/null; then
		ok ours/ipi/fastpath "kvm-amd's IRQs-off WRMSR fastpath completed $((after - before)) of its WRMSRs"
	else
		bad ours/ipi/fastpath "the WRMSR fastpath did not run (hits ${before:-?} -> ${after:-?})"
	fi
	. "$here/judge-capture.sh"
	judge_capture_set
	judge_stepper_hazards
	. "$here/judge-syscost.sh"
	judge_syscost "$syscost_rounds"
	. "$here/judge-lifecycle.sh"
	judge_lifecycle
	. "$here/judge-xstate.sh"
	judge_xstate
	. "$here/judge-mem.sh"
	judge_mem_set
	. "$here/judge-memrange.sh"
	judge_memrange_set
	. "$here/judge-win.sh"
	judge_win_set
	for image in $win_images; do judge_win_discovery "$image"; done
	judge_daemon_endings
	. "$here/judge-time.sh"
	judge_time
	. "$here/judge-vstate.sh"
	judge_vstate "$run/l1/capture/transitions.txt" "$here/../../docs/kmod.md"
	for name in selfstep-cpl0 drheavy; do
		results "$run/l1/packaged/$name.txt" >"$run/packaged-$name.got"
		results "$run/l1/ours/$name.txt" >"$run/ours-$name.got"
	done
	for name in $programs $win_images selfstep-cpl0 drheavy $debug_programs; do
		if [ -s "$run/packaged-$name.got" ] && cmp -s "$run/packaged-$name.got" "$run/ours-$name.got"; then
			ok "unarmed/$name" "results on our modules, unarmed, equal the packaged modules'"
		else
			bad "unarmed/$name" "results on our modules, unarmed, differ from the packaged modules'"
		fi
	done
	. "$here/judge-debug.sh"
	judge_debug
fi
if [ -s "$run/l1/dmesg.txt" ] && ! grep -E 'WARNING|BUG|Oops|Call Trace' "$run/l1/dmesg.txt"; then
	ok l1/dmesg "L1 kernel log has no WARNING/BUG/Oops"
else
	bad l1/dmesg "L1 kernel log has warnings (see $run/l1/dmesg.txt)"
fi
# A CPU that does not schedule for 20 s (soft lockup; L1 panics on one) or
# holds up RCU for 21 s (stall): the kernel log, or the console when the
# panic kept L1 from writing it.
lockups='soft lockup|rcu: INFO|rcu_.*stall|detected stalls|hung_task|blocked for more than'
if [ -s "$run/l1/console.log" ] && ! grep -E "$lockups" "$run/l1/console.log" "$run/l1/dmesg.txt" 2>/dev/null; then
	ok l1/lockups "no soft lockup, RCU stall or hung task in L1's kernel log or console"
else
	bad l1/lockups "L1 reported a soft lockup, RCU stall or hung task (or wrote no console log)"
fi

# --- benchmark report ----------------------------------------------------------
. "$here/bench-report.sh"
bench_report | tee "$run/bench.txt"

[ $xfail -eq 0 ] || echo "e2e: $xfail known failures (tests/e2e/known-failures)"
echo "e2e: $pass passed, $fail failed"
[ $fail -eq 0 ]
