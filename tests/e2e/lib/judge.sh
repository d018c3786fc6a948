# Sourced by the lab's host-side scripts (e2e.sh, libvirt.sh): how a check
# is reported, and the reference model's view of the Windows-layout guest.
# Uses $here (tests/e2e), $bin, $win (build/e2e/win) and $run.

# ok|bad CHECK-ID TEXT.  A check listed in known-failures (ID, then why)
# that fails is an XFAIL and does not fail the lab; one that passes is an
# XPASS and does, so the list always says exactly what is broken.
pass=0 fail=0 xfail=0
known() { grep -v '^#' "$here/known-failures" | awk -v id="$1" '$1 == id { $1 = ""; print substr($0, 2); f = 1 } END { exit !f }'; }
ok() {
	if why=$(known "$1"); then fail=$((fail + 1)); echo "FAIL (XPASS): $1: $2 -- remove it from tests/e2e/known-failures ($why)"
	else pass=$((pass + 1)); echo "PASS: $1: $2"; fi
}
bad() {
	if why=$(known "$1"); then xfail=$((xfail + 1)); echo "XFAIL: $1: $2 -- known: $why"
	else fail=$((fail + 1)); echo "FAIL: $1: $2"; fi
}
results() { grep -E '^(cpu[0-9]+ (done|failed)|result)[ :]' "$1" 2>/dev/null; }

# win_target IMAGE PID FIELD: the builder's record (NAME PID DTB USER-DTB
# ENTRY-VA ENTRY-GPA STATE), fields 1-7.
win_target() { awk -v p="$2" -v f="$3" '$2 == p { print $f }' "$win/$1.targets"; }

model_win() {	# model_win NAME IMAGE PID [MODEL-ARG...]: the records of a trace of PID
	mw_name=$1 mw_image=$2 mw_pid=$3
	shift 3
	mkdir -p "$run/expect/$mw_name"
	udtb=$(win_target "$mw_image" "$mw_pid" 4)
	# shellcheck disable=SC2046
	"$bin/svmtrace-e2e-model" --win "$win/$mw_image.elf" -o "$run/expect/$mw_name" \
		--gate-gpa "$(win_target "$mw_image" "$mw_pid" 6)" \
		--target-cr3 "$(win_target "$mw_image" "$mw_pid" 3)" \
		$([ "$udtb" = 0x0 ] || echo "--target-cr3 $udtb") "$@" >"$run/expect/$mw_name/results.txt" ||
		bad "model/$mw_name" "the model cannot replay it: $(grep failed "$run/expect/$mw_name/results.txt")"
}
