# Sourced by e2e.sh after judge-capture.sh: judge the lifecycle
# scenarios (l1-lifecycle.sh) in $cap.  Uses judge-capture.sh's helpers.

# dump_cpu NAME N: the decoded trace of vCPU N as $cap/NAME/cpuN.csv.
dump_cpu() {
	"$bin/svmtrace-dump" dump --regs "$cap/$1/trace/svmtrace_trace_cpu$2.bin" \
		>"$cap/$1/cpu$2.csv" 2>"$cap/$1/cpu$2.err"
}

# judge_cut NAME EXPECT-DIR REASON: a trace cut short (stopped, or the VM
# gone): every row but the last is the model's at its sequence number, up
# to the last step recorded; the last row is a session end with REASON
# that repeats the state of the last step produced (published or, when the
# end came while a step waited for room, dropped).
judge_cut() {
	csv=$cap/$1/cpu0.csv
	if ! dump_cpu "$1" 0; then
		bad "capture/$1/trace/cpu0" "svmtrace-dump: $(cat "$cap/$1/cpu0.err")"
		return
	fi
	seq0=$(awk -F, 'NR == 2 { print $2 }' "$csv")
	end=$(tail -n 1 "$csv")
	head -n -1 "$csv" >"$csv.body"
	k=$(($(tail -n 1 "$csv.body" | cut -d, -f2) - seq0 + 1))
	head -n $((k + 1)) "$2/expected_cpu0.csv" >"$csv.want"
	at=$(($(echo "$end" | cut -d, -f2) - seq0))
	state=$(sed -n "$((at + 1))p" "$2/expected_cpu0.csv" | cut -d, -f4,8-23)
	if out=$("$here/check-trace.sh" --gaps "$csv.want" "$csv.body" 2>&1) &&
		[ "$(echo "$end" | cut -d, -f3,7)" = "session_end,$3" ] &&
		[ "$(echo "$end" | cut -d, -f4,8-23)" = "$state" ]; then
		ok "capture/$1/trace/cpu0" "the model's first $k records, then a session end (reason $3) with the state of its record $at: $out"
	else
		bad "capture/$1/trace/cpu0" "$out; end '$end' (want session_end reason $3 with the state of model record $at: $state)"
	fi
}

judge_lifecycle() {
	# vCPU hot-add: the second vCPU, created while armed, traced from
	# its first instruction exactly as the model ran it.
	judge_capture_rc late-vcpu
	judge_audit late-vcpu
	judge_armed_results late-vcpu "$run/expect/smp"
	judge_trace late-vcpu "$run/expect/smp"
	if grep -q '^vcpus 1 -> 2: created while armed' "$cap/late-vcpu/capture.txt" &&
		grep -q '^vcpu1 created$' "$cap/late-vcpu/vmm.txt"; then
		ok capture/late-vcpu/added "vCPU 1 was created after arm and its ring taken then ($(grep '^vcpus' "$cap/late-vcpu/capture.txt"))"
	else
		bad capture/late-vcpu/added "no 'vcpus 1 -> 2' from the capture or no 'vcpu1 created' from the VMM"
	fi

	# The VMM killed while armed, its vCPU blocked on a full ring.
	judge_capture_rc vmm-killed
	if grep -q '^total .* stop=VMM exited consistent$' "$cap/vmm-killed/capture.txt" &&
		[ ! -e "$cap/vmm-killed/timeout.txt" ]; then
		ok capture/vmm-killed/ending "the capture ended by itself when the VMM died: $(grep '^total' "$cap/vmm-killed/capture.txt" | sed 's/.*stop=//')"
	else
		bad capture/vmm-killed/ending "$(cat "$cap/vmm-killed/timeout.txt" 2>/dev/null) $(grep '^total' "$cap/vmm-killed/capture.txt")"
	fi
	judge_cut vmm-killed "$run/expect/bench-kill" 2

	# Stopped while the vCPU runs: the guest finishes untraced.
	judge_capture_rc stop-running
	judge_audit stop-running
	judge_armed_results stop-running "$run/expect/bench-kill"
	judge_cut stop-running "$run/expect/bench-kill" 0

	# Stopped while frames runs: the guest's results
	# are the model's -- no TF in R11, a frame or a PUSHFQ image
	# (frame_tf, log_sum), no #DB (db_count) -- whatever was parked or
	# being stepped over at the stop.  At every point in time
	# l1-lifecycle.sh stopped one (the race is timing-dependent).
	stops=$(sed -n 's/^STOP_FRAMES_AT="\(.*\)"$/\1/p' "$here/l1-lifecycle.sh")
	[ -n "$stops" ] || bad capture/stop-frames "no STOP_FRAMES_AT in $here/l1-lifecycle.sh"
	for at in $stops; do
		name=stop-frames
		[ "$at" = 1 ] || name=stop-frames-$at
		judge_capture_rc "$name"
		judge_audit "$name"
		judge_armed_results "$name" "$run/expect/frames-stop"
		judge_cut "$name" "$run/expect/frames-stop" 0
	done

	# Stopped during 400 rounds of prefixed INT n: the
	# guest finishes untraced, its results the model's.
	judge_capture_rc stop-intpfx
	judge_audit stop-intpfx
	judge_armed_results stop-intpfx "$run/expect/intpfx-stop"
	judge_cut stop-intpfx "$run/expect/intpfx-stop" 0

	# Paused and resumed twice while the vCPU runs: a paused step takes a
	# sequence number, so the records line up with the model's as for drop.
	judge_capture_rc pause-resume
	judge_audit pause-resume
	judge_armed_results pause-resume "$run/expect/bench-kill"
	if ! dump_cpu pause-resume 0; then
		bad capture/pause-resume/trace/cpu0 "svmtrace-dump: $(cat "$cap/pause-resume/cpu0.err")"
	elif out=$("$here/check-trace.sh" --gaps "$run/expect/bench-kill/expected_cpu0.csv" \
		"$cap/pause-resume/cpu0.csv" 2>&1) && [ "$(grep -c '^resumed$' "$cap/pause-resume/capture.txt")" = 2 ] &&
		! echo "$out" | grep -q ' missing in 0 gaps'; then
		ok capture/pause-resume/trace/cpu0 "every record is the model's at its sequence number, gaps where the pauses were: $out"
	else
		bad capture/pause-resume/trace/cpu0 "$out; $(grep -c '^resumed$' "$cap/pause-resume/capture.txt") resumes"
	fi
}
