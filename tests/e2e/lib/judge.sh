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
# ENTRY-VA ENTRY-GPA STATE PARENT-PID), fields 1-8; STATE created: a process
# another creates at run time (NtCreateUserProcess).
win_target() { awk -v p="$2" -v f="$3" '$2 == p { print $f }' "$win/$1.targets"; }

# win_loader IMAGE NAME: where the builder put a loader function (IMAGE.loader:
# LdrInitializeThunk, RtlUserThreadStart, DllMain of helper.dll, tls_callback.PID).
win_loader() { awk -v n="$2" '$1 == n { print $2 }' "$win/$1.loader"; }

# win_from_first MODE: the scenario traces from every thread's first instruction.
win_from_first() { case $1 in first|late-first|late-follow*|new) return 0 ;; esac; return 1; }

# win_traced IMAGE PID MODE: the PIDs a capture of PID in MODE traces, one a
# line: PID, and with --follow every process it creates, recursively (field
# 8 of IMAGE.targets, in the builder's order: parents first); with
# --max-processes 2 (late-follow-max) the first two, the children in the
# order they start (child.exe runs when created; hollow.exe waits for its
# resume).
win_traced() {
	case $3 in
	late-follow) awk -v p="$2" 'BEGIN { t[p] = 1; print p } t[$8] && !t[$2] { t[$2] = 1; print $2 }' "$win/$1.targets" ;;
	late-follow-max) win_traced "$1" "$2" late-follow | head -n 2 ;;
	new) awk '{ print $2 }' "$win/$1.targets" ;;	# every process: none ran before arm
	*) echo "$2" ;;
	esac
}

# win_dtbs IMAGE PID MODE: the DTBs (kernel and user) of what win_traced lists.
win_dtbs() {
	for p_ in $(win_traced "$1" "$2" "$3"); do
		win_target "$1" "$p_" 3
		[ "$(win_target "$1" "$p_" 4)" = 0x0 ] || win_target "$1" "$p_" 4
	done
}

# model_win NAME IMAGE PID MODE [MODEL-ARG...]: the records of a trace of PID
# (and with --follow its children: every DTB of win_traced's processes is the
# target's).
model_win() {
	mw_name=$1 mw_image=$2 mw_pid=$3 mw_mode=$4
	shift 4
	mkdir -p "$run/expect/$mw_name"
	if win_from_first "$mw_mode"; then start="--first-rip $(win_loader "$mw_image" LdrInitializeThunk)"
	else start="--gate-gpa $(win_target "$mw_image" "$mw_pid" 6)"; fi
	# shellcheck disable=SC2046,SC2086
	"$bin/svmtrace-e2e-model" --win "$win/$mw_image.elf" -o "$run/expect/$mw_name" $start \
		$(win_dtbs "$mw_image" "$mw_pid" "$mw_mode" | sed 's/^/--target-cr3 /') "$@" \
		>"$run/expect/$mw_name/results.txt" ||
		bad "model/$mw_name" "the model cannot replay it: $(grep failed "$run/expect/$mw_name/results.txt")"
}
