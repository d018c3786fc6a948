# Sourced by e2e.sh: judge virtual time (--hide-time; docs/lab.md, "Virtual
# time") from what l1-time.sh recorded.  Uses lib/judge.sh (ok, bad,
# results, win_target, model_win), judge-capture.sh and judge-win.sh's
# functions, and e2e.sh's $run, $cap, $bin, $build, $win.
#
# timing.exe (tests/e2e/win/programs/timing.S) logs its verdict << 20: bit 1
# RDTSC, 2 CPUID, 4 RDTSCP, 16 QPC (the checks that read the TSC), 8 an
# RDTSCP that loaded another TSC_AUX than its kernel's.  The guest's other
# processes log values that sum below 1 << 20 (proc.S, helper.dll), so
# log_sum's upper bits are the verdict.
TIME_TSC_CHECKS=23
TIME_CAPTURES="time-traced time-hide time-costs time-hide-daemon time-hide-first"

time_verdict() {	# time_verdict RESULTS-FILE: the verdict timing.exe logged
	sum=$(sed -n 's/^result .* log_sum=\(0x[0-9a-f]*\) .*/\1/p' "$1" 2>/dev/null)
	[ -n "$sum" ] && echo $((sum >> 20))
}

time_costs() {	# time_costs NAME: the --time-costs l1-time.sh gave it, if any
	case $1 in time-costs) echo 0.5,30,1000 ;; esac
}

time_mode() {	# time_mode NAME: where l1-time.sh's capture NAME starts (l1-win.sh modes)
	case $1 in time-hide-first) echo first ;; *) echo pid ;; esac
}

# time_least NAME: "check=least sample" for each check, from the trace rows
# at timing.exe's *_least labels (R12 there; timing.S).
time_least() {
	entry=$(win_target timing 1200 5)
	syms=$(x86_64-w64-mingw32-nm "$build/e2e/win/timing.exe" 2>/dev/null)
	start=$(echo "$syms" | awk '$3 == "start" { print $1 }')
	for check in rdtsc cpuid rdtscp qpc; do
		sym=$(echo "$syms" | awk -v l="${check}_least" '$3 == l { print $1 }')
		va=$(printf '0x%x' $((entry + 0x${sym:-0} - 0x${start:-0})))
		r12=$(awk -F, -v va="$va" 'tolower($4) == va { print $20; exit }' "$cap/$1/cpu0.csv")
		printf '%s=%d ' "$check" "${r12:-0}"
	done
}

# judge_time_model NAME: the reference model replays timing.exe with the TSC
# values the capture recorded (EDX:EAX of each read's row: the only values it
# takes from the trace), so that everything else -- RDTSCP's ECX, the QPC
# arithmetic, every branch the values decide -- is checked row by row.
judge_time_model() {
	if ! "$bin/svmtrace-dump" dump --regs "$cap/$1/trace/svmtrace_trace_cpu0.bin" \
		>"$cap/$1/cpu0.csv" 2>"$cap/$1/cpu0.err"; then
		bad "capture/$1/trace/cpu0" "svmtrace-dump: $(cat "$cap/$1/cpu0.err")"
		return 1
	fi
	costs=$(time_costs "$1")
	model_win "$1" timing 1200 "$(time_mode "$1")" --tsc-from "$cap/$1/cpu0.csv" --tsc-check "$run/expect/$1/tsc" \
		${costs:+--time-costs "$costs"}
}

# judge_time_clock NAME: each read's delta from the previous one is what
# virtual time owes the target's steps in between: exactly, within a
# stretch of ordinary steps; at least, across a system call (real time
# passes) or an instruction KVM completes (the time it took counts).
judge_time_clock() {
	f=$run/expect/$1/tsc.cpu0
	if out=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if ($NF == "exact") { n++; if (v["delta"] != v["owed"]) { print "row " v["row"] ": delta " v["delta"] " != " v["owed"]; bad = 1; exit } }
		else { m++; if (v["delta"] + 0 < v["owed"] + 0) { print "row " v["row"] ": delta " v["delta"] " < " v["owed"]; bad = 1; exit } }
		} END { if (!bad) printf "%d reads exactly as owed, %d across a system call or CPUID at least as owed", n, m; exit bad || !n || !m }' "$f" 2>&1); then
		ok "capture/$1/clock" "$out"
	else
		bad "capture/$1/clock" "${out:-no reads in $f}"
	fi
}

# judge_time_first NAME: the first record is the state after timing.exe's
# first instruction (xor r15d, r15d: 3 bytes); from a thread's first
# instruction, after ntdll!LdrInitializeThunk's (judge_win_first).
judge_time_first() {
	if win_from_first "$(time_mode "$1")"; then
		judge_win_first "$1" timing 1200 first
		return
	fi
	first=$(awk -F, '$3 == "session_start" { print $4; exit }' "$cap/$1/cpu0.csv" 2>/dev/null)
	entry=$(win_target timing 1200 5)
	if [ -n "$first" ] && [ $((first)) -eq $((entry + 3)) ]; then
		ok "capture/$1/first" "first record at $first: the instruction after the entry point $entry"
	else
		bad "capture/$1/first" "first record at '${first:-none}', expected entry $entry + 3"
	fi
}

judge_time_verdict() {	# judge_time_verdict NAME WANT TEXT
	v=$(time_verdict "$cap/$1/vmm.txt")
	if [ -n "$v" ] && [ "$v" = "$2" ]; then
		ok "capture/$1/verdict" "$3 (verdict $v; least samples: $(time_least "$1"))"
	else
		bad "capture/$1/verdict" "verdict '${v:-none}', expected $2 ($3); least samples: $(time_least "$1")"
	fi
}

judge_time() {
	# Untraced: every check passes, on the packaged modules as on ours.
	for set in packaged ours; do
		v=$(time_verdict "$run/l1/$set/timing.txt")
		if results "$run/l1/$set/timing.txt" >"$run/$set-timing.got" &&
			results "$run/expect/timing/results.txt" | cmp -s - "$run/$set-timing.got"; then
			ok "$set/timing/results" "untraced, no check says traced (verdict $v), results equal the model's"
		else
			bad "$set/timing/results" "untraced verdict '${v:-none}' (0 expected), or results differ from the model's"
		fi
	done
	if cmp -s "$run/packaged-timing.got" "$run/ours-timing.got"; then
		ok unarmed/timing "results on our modules, unarmed, equal the packaged modules'"
	else
		bad unarmed/timing "results on our modules, unarmed, differ from the packaged modules'"
	fi
	for name in $TIME_CAPTURES; do
		case $name in time-hide-daemon | time-hide-first) [ -d "$cap/$name" ] || continue ;; esac
		judge_capture_rc "$name"
		judge_audit "$name"
		judge_time_model "$name" || continue
		judge_armed_results "$name" "$run/expect/$name"
		judge_trace "$name" "$run/expect/$name"
		judge_time_first "$name"
		case $name in
		time-traced)
			judge_time_verdict "$name" $TIME_TSC_CHECKS "traced without --hide-time, every check that reads the TSC detects the tracer" ;;
		*)
			judge_time_verdict "$name" 0 "traced with --hide-time, no check detects the tracer"
			judge_win_unseen "$name" timing
			judge_time_clock "$name" ;;
		esac
	done
	# svmtraced from the first instruction: the loader's steps count as the
	# entry point's do, and every TSC read after them is virtual.
	if [ -d "$cap/time-hide-first" ]; then
		judge_win_armed time-hide-first timing 1200 first
		judge_win_loader time-hide-first timing 1200
	fi
	if [ -d "$cap/time-hide-daemon" ]; then
		judge_win_armed time-hide-daemon timing 1200
		judge_daemon_audit_json time-hide-daemon
		if out=$(python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["options"]["hide_time"]
assert h == {"insn_cycles": 1.0, "tsc_read_cycles": 40, "exit_cycles": 1360}, h
print(h)' "$cap/time-hide-daemon/trace/capture.json" 2>&1); then
			ok capture/time-hide-daemon/options "capture.json records the costs the kernel applied: $out"
		else
			bad capture/time-hide-daemon/options "$(echo "$out" | tail -n 1)"
		fi
	fi
	# Programs that read no TSC: --hide-time changes nothing in their traces.
	for name in emulated frames smp; do
		judge_capture_rc "$name-hide"
		judge_audit "$name-hide"
		judge_armed_results "$name-hide" "$run/expect/$name"
		judge_trace "$name-hide" "$run/expect/$name"
	done
}
