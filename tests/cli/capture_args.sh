# svmtrace-capture: bad arguments are refused with a message naming the
# argument before anything touches the kernel (the kernel-side errors are
# checked in the lab by svmtrace-abi-check and the e2e capture scenarios;
# --help against the man page by help_matches_man.sh).
set -eu
C="$BIN/svmtrace-capture"

expect_fail() {	# expect_fail MESSAGE ARGS...: exits non-zero, stderr has MESSAGE
	msg=$1
	shift
	if "$C" "$@" >"$WORK/out" 2>"$WORK/err"; then
		echo "expected failure: $*"; exit 1
	fi
	grep -qF -- "$msg" "$WORK/err" || { echo "stderr lacks '$msg':"; cat "$WORK/err"; exit 1; }
}

g="--vmm-pid 1 --cr3 0x3000 --out $WORK/o"
expect_fail "--vmm-pid, --gate-gpa or --gate-va (or --from-next or --first-rip), --cr3 (or --adopt-cr3 or --new-processes) and --out are required" --vmm-pid 1 --out "$WORK/o"
expect_fail "--new-processes needs --first-rip" --vmm-pid 1 --gate-gpa 0 --new-processes --out "$WORK/o"
expect_fail "--adopt-cr3 and --cr3 exclude each other" --vmm-pid 1 --gate-gpa 0 --cr3 0x3000 --adopt-cr3 --out "$WORK/o"
expect_fail "--adopt-cr3 needs a --gate-gpa" --vmm-pid 1 --from-next --adopt-cr3 --out "$WORK/o"
expect_fail "--adopt-cr3 does not go with --gate-va" --vmm-pid 1 --gate-va 0x400000 --adopt-cr3 --out "$WORK/o"
# shellcheck disable=SC2086
expect_fail "--gate-gpa 0x100010: not 4 KiB aligned" $g --gate-gpa 0x100010
# shellcheck disable=SC2086
expect_fail "--gate-gpa: expected an unsigned number" $g --gate-gpa zz
expect_fail "--cr3 0xfff: no page-table base" --vmm-pid 1 --gate-gpa 0 --cr3 0xfff --out "$WORK/o"
# shellcheck disable=SC2086
expect_fail "--policy: expected drop or block, got 'lossy'" $g --gate-gpa 0 --policy lossy
# shellcheck disable=SC2086
expect_fail "--ring-slots 1000: not a power of two" $g --gate-gpa 0 --ring-slots 1000
# shellcheck disable=SC2086
expect_fail "--ring-slots 8: expected 16..4194304" $g --gate-gpa 0 --ring-slots 8
# shellcheck disable=SC2086
expect_fail "--wake-batch 40: at most half the ring" $g --gate-gpa 0 --ring-slots 64 --wake-batch 40
# shellcheck disable=SC2086
expect_fail "--ring-slots 2097152: at most 1048576 with --xstate" $g --gate-gpa 0 --xstate --ring-slots 2097152
# shellcheck disable=SC2086
expect_fail "--duration: expected seconds > 0, got '-1'" $g --gate-gpa 0 --duration -1
# shellcheck disable=SC2086
expect_fail "--rip-range 0x10-0x10: empty range" $g --gate-gpa 0 --rip-range 0x10-0x10
# shellcheck disable=SC2086
expect_fail "--anchor-interval 0: expected 1..4294967295" $g --gate-gpa 0 --anchor-interval 0
# shellcheck disable=SC2086
expect_fail "--anchor-interval: expected an unsigned number" $g --gate-gpa 0 --anchor-interval 1k
# shellcheck disable=SC2086
expect_fail "--time-costs: only with --hide-time" $g --gate-gpa 0 --time-costs 1,40,1360
# shellcheck disable=SC2086
expect_fail "--time-costs 1,40: expected INSN,TSC,EXIT (cycles: a decimal, two integers)" $g --gate-gpa 0 --hide-time --time-costs 1,40
# shellcheck disable=SC2086
expect_fail "--time-costs 300,40,1360: INSN expected in 1/256..256 cycles" $g --gate-gpa 0 --hide-time --time-costs 300,40,1360
# shellcheck disable=SC2086
expect_fail "--time-costs 1,0,1360: expected INSN,TSC,EXIT (cycles: a decimal, two integers)" $g --gate-gpa 0 --hide-time --time-costs 1,0,1360
# shellcheck disable=SC2086
expect_fail "--time-costs 1,40,2000000: EXIT expected in 1..1048576 cycles" $g --gate-gpa 0 --hide-time --time-costs 1,40,2000000
# shellcheck disable=SC2086
expect_fail "unexpected argument 'extra'" $g --gate-gpa 0 extra
gates=
i=0
while [ $i -le 64 ]; do gates="$gates --gate-gpa $((i * 4096))"; i=$((i + 1)); done
# shellcheck disable=SC2086
expect_fail "--gate-gpa: at most 64 gates" $g $gates
echo "capture argument checks passed"
