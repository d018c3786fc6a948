#!/bin/sh
# l1-win.sh: captures of the Windows-layout guest inside L1 (sourced by
# l1-lab.sh after l1-capture.sh; docs/lab.md, "The Windows-layout guest").
#
# win_capture_run DIR IMAGE MODE PID
#   IMAGE is /e2e/IMAGE.elf (svmtrace-e2e-wingen); /e2e/IMAGE.targets has
#   the builder's record of each process (name pid dtb user-dtb entry-va
#   entry-gpa state).  The VMM starts with --win --wait --hold --go-wait and
#   writes its RAM to a file when ready, at PORT_GO and when done.  The
#   target is resolved from the *running guest's* memory with svmtrace-vmi
#   on those dumps (VMI knows nothing of the builder: it finds the kernel,
#   the profile by PDB GUID, the process list, the PE header):
#     pid   resolve PID on the ready dump, arm svmtrace-capture with its entry
#           page and DTBs (both with KVA shadow), start the guest.
#     lazy  the ready dump must say "not resident" (exit 3); the capture is
#           armed with --gate-va on the entry VA it names (the kernel watches
#           the page table); after the run the done dump must resolve to the
#           page the builder made resident.
#     late  the ready dump has no such process (exit 1); the guest starts
#           untraced; at PORT_GO (the scheduler just linked the process)
#           the go dump is resolved, the capture armed, then SIGWINCH.
#     first resolve PID on the ready dump for its DTBs; the capture gets
#           --first-rip, where the builder put ntdll's LdrInitializeThunk
#           (IMAGE.loader): no gate, the process is traced from its first
#           instruction.
#     new   --first-rip and --new-processes, no --cr3: every process whose
#           first thread begins after arm (all of them: the guest has not
#           run yet) joins the target at that instruction.
#   DIR gets vmm.txt, resolve-{ready,go,done}.{json,rc}, capture.txt,
#   capture.rc, vmm.rc, trace/, timeout.txt when a step timed out.
#
# win_daemon_run DIR IMAGE MODE PID-or-NAME
#   The same guest traced by svmtraced (--vmm-pid, --pid or --wait-name,
#   --profiles /e2e, and $WIN_DAEMON_ARGS), which resolves from live memory
#   itself; first and late-first with --from first (where threads begin, from
#   the profile and ntdll's exports); late-follow also with --follow (the
#   processes late.exe creates, one of them hollowed), late-follow-max with
#   --max-processes 2 (the hollowed one is lost).  late* let the guest run on
#   at PORT_GO at once: only the kernel's hold of the new process's first
#   instruction (the asks) can catch it.

# json_field FILE NAME: a string or number member of svmtrace-vmi's JSON.
json_field() {
	sed -n "s/^ *\"$2\": \"*\([^\",]*\)\"*,*\$/\1/p" "$1" | head -n 1
}

# win_resolve DIR TAG RAW PID: svmtrace-vmi resolve on a RAM dump.
win_resolve() {
	t0=$(cut -d' ' -f1 /proc/uptime)
	svmtrace-vmi --memory "$3" --profiles /e2e --json resolve "$4" >"$1/resolve-$2.json" \
		2>"$1/resolve-$2.err"
	echo $? >"$1/resolve-$2.rc"
	echo "$t0 $(cut -d' ' -f1 /proc/uptime)" >"$1/resolve-$2.uptime"
	rm -f "$3"
}

# win_arm DIR GATE CR3...: start svmtrace-capture, wait for "armed"
# (DIR/armed.uptime: L1 uptime when it did).  GATE is --gate-gpa GPA or
# --gate-va VA (as one word).  $WIN_CAPTURE_ARGS, when set, are added.
win_arm() {
	d=$1 gate=$2; shift 2
	cr3s=
	for c in "$@"; do [ -z "$c" ] || [ "$c" = null ] || cr3s="$cr3s --cr3 $c"; done
	# shellcheck disable=SC2086
	svmtrace-capture --vmm-pid "$vmm_pid" $gate $cr3s --out "$traces" --quiet \
		--policy block --audit ${WIN_CAPTURE_ARGS:-} >"$d/capture.txt" 2>&1 &
	cap_pid=$!
	wait_line "$d/capture.txt" '^armed$' 30 "$cap_pid" || {
		echo "capture never armed" >>"$d/timeout.txt"
		return 1
	}
	cut -d' ' -f1 /proc/uptime >"$d/armed.uptime"
}

# win_vmm_start DIR IMAGE [VMM-ARG...]: the guest's VMM, waiting for SIGUSR1
# (--wait --hold --go-wait); sets vmm_pid and traces; false without a ready
# line.
win_vmm_start() {
	d=$1 img=$2
	shift 2
	mkdir -p "$d"
	traces=/tmp/trace.$$
	rm -rf "$traces"
	svmtrace-e2e-vmm --win "/e2e/bin/$img.elf" --wait --hold --go-wait "$@" >"$d/vmm.txt" 2>&1 &
	vmm_pid=$!
	wait_line "$d/vmm.txt" '^ready ' 30 "$vmm_pid" && return 0
	echo "no ready line from the VMM" >>"$d/timeout.txt"
	kill -9 "$vmm_pid" 2>/dev/null; wait "$vmm_pid"
	return 1
}

win_capture_run() {
	dir=$1 image=$2 mode=$3 pid=$4
	tmp=/tmp/win.$$
	cap_pid=
	win_vmm_start "$dir" "$image" --dump-ready "$tmp.ready" --dump-go "$tmp.go" \
		--dump-done "$tmp.done" || return 1
	win_resolve "$dir" ready "$tmp.ready" "$pid"
	case $mode in
	pid)
		win_arm "$dir" "--gate-gpa $(json_field "$dir/resolve-ready.json" entry_page)" \
			"$(json_field "$dir/resolve-ready.json" dtb)" \
			"$(json_field "$dir/resolve-ready.json" user_dtb)" || mode=failed ;;
	first)
		win_arm "$dir" "--first-rip $(awk '$1 == "LdrInitializeThunk" { print $2 }' \
			"/e2e/$image.loader")" "$(json_field "$dir/resolve-ready.json" dtb)" \
			"$(json_field "$dir/resolve-ready.json" user_dtb)" || mode=failed ;;
	new)
		win_arm "$dir" "--first-rip $(awk '$1 == "LdrInitializeThunk" { print $2 }' \
			"/e2e/$image.loader") --new-processes" || mode=failed ;;
	lazy)
		# Not resident yet: a watched gate on its entry VA, walked in its DTB.
		va=$(json_field "$dir/resolve-ready.json" entry_va)
		win_arm "$dir" "--gate-va $(printf '0x%x' $((va & ~0xfff)))" \
			"$(json_field "$dir/resolve-ready.json" dtb)" || mode=failed ;;
	esac
	kill -USR1 "$vmm_pid"
	if wait_line "$dir/vmm.txt" '^go ' 60 "$vmm_pid"; then
		if [ "$mode" = late ]; then
			win_resolve "$dir" go "$tmp.go" "$pid"
			win_arm "$dir" "--gate-gpa $(json_field "$dir/resolve-go.json" entry_page)" \
				"$(json_field "$dir/resolve-go.json" dtb)" \
				"$(json_field "$dir/resolve-go.json" user_dtb)" || mode=failed
		fi
		rm -f "$tmp.go"
		kill -WINCH "$vmm_pid"
	else
		echo "the guest never reached PORT_GO" >>"$dir/timeout.txt"
	fi
	wait_line "$dir/vmm.txt" '^holding$' 120 "$vmm_pid" ||
		echo "the guest did not finish (no holding line)" >>"$dir/timeout.txt"
	win_resolve "$dir" "done" "$tmp.done" "$pid"
	if [ -n "$cap_pid" ]; then
		kill -INT "$cap_pid" 2>/dev/null
		wait "$cap_pid"; echo $? >"$dir/capture.rc"
	fi
	kill -USR1 "$vmm_pid" 2>/dev/null
	wait "$vmm_pid"; echo $? >"$dir/vmm.rc"
	rm -rf "$tmp".*
	keep_traces "$dir"
}

win_daemon_run() {
	dir=$1 image=$2 mode=$3 target=$4
	win_vmm_start "$dir" "$image" || return 1
	case $mode in
	late) sel="--wait-name $target" ;;
	late-first) sel="--wait-name $target --from first" ;;
	late-follow) sel="--wait-name $target --from first --follow" ;;
	late-follow-max) sel="--wait-name $target --from first --follow --max-processes 2" ;;
	first) sel="--pid $target --from first" ;;
	*) sel="--pid $target" ;;
	esac
	sock=/tmp/svmtraced.$$.sock
	# shellcheck disable=SC2086
	svmtraced --vmm-pid "$vmm_pid" $sel --profiles /e2e --out "$traces" --policy block \
		--socket "$sock" --audit ${WIN_DAEMON_ARGS:-} >"$dir/capture.txt" 2>&1 &
	cap_pid=$!
	case $mode in
	pid|first)	# armed before the guest runs at all
		wait_line "$dir/capture.txt" '^armed ' 60 "$cap_pid" ||
			echo "svmtraced never armed" >>"$dir/timeout.txt" ;;
	lazy)	# the entry page is not resident: a watched gate, armed before the guest runs
		wait_line "$dir/capture.txt" '^armed .* gate=watch ' 60 "$cap_pid" ||
			echo "svmtraced never armed a watched gate" >>"$dir/timeout.txt" ;;
	late*)	# armed and waiting (its "before" list taken) before the guest runs
		wait_line "$dir/capture.txt" 'waiting for a new process' 60 "$cap_pid" ||
			echo "svmtraced never said it waits for the process" >>"$dir/timeout.txt" ;;
	esac
	kill -USR1 "$vmm_pid"
	if wait_line "$dir/vmm.txt" '^go ' 60 "$vmm_pid"; then
		# late*: the process is in the list now and goes on at once; the
		# kernel holds its first instruction until svmtraced decided.
		kill -WINCH "$vmm_pid"
	else
		echo "the guest never reached PORT_GO" >>"$dir/timeout.txt"
	fi
	# From another process, as a user would: the daemon's status, then stop.
	if [ "$mode" = pid ] && wait_line "$dir/vmm.txt" '^holding$' 120 "$vmm_pid"; then
		svmtraced status --socket "$sock" >"$dir/status.txt" 2>&1
		svmtraced stop --socket "$sock" >"$dir/stop.txt" 2>&1
	fi
	finish_run "$dir" 120
}

# win_daemon_ending DIR IMAGE PID HOW: whatever ends svmtraced, the VM is
# left unarmed and keeps running, and the files are complete
# (never leave the guest worse).
#   sigkill   svmtraced is killed (SIGKILL) once armed, before the guest
#             runs: the guest then runs to its end untraced, and a second
#             svmtraced can attach and arm at once (the kernel detached).
#   vmm-gone  the VMM is killed (SIGKILL) while svmtraced traces the guest
#             (held at PORT_GO): svmtraced must end by itself, exit 0 and
#             leave decodable files and capture.json.
win_daemon_ending() {
	dir=$1 image=$2 pid=$3 how=$4
	win_vmm_start "$dir" "$image" || return 1
	svmtraced --vmm-pid "$vmm_pid" --pid "$pid" --profiles /e2e --out "$traces" \
		--policy block >"$dir/capture.txt" 2>&1 &
	cap_pid=$!
	wait_line "$dir/capture.txt" '^armed ' 60 "$cap_pid" || echo "never armed" >>"$dir/timeout.txt"
	case $how in
	sigkill)
		kill -9 "$cap_pid"
		wait "$cap_pid"; echo $? >"$dir/capture.rc"
		kill -USR1 "$vmm_pid"
		wait_line "$dir/vmm.txt" '^go ' 60 "$vmm_pid" && kill -WINCH "$vmm_pid"
		wait_line "$dir/vmm.txt" '^holding$' 120 "$vmm_pid" ||
			echo "the guest did not finish" >>"$dir/timeout.txt"
		svmtraced --vmm-pid "$vmm_pid" --pid "$pid" --profiles /e2e --out /tmp/again.$$ \
			--duration 1 >"$dir/again.txt" 2>&1
		echo $? >"$dir/again.rc"
		rm -rf /tmp/again.$$
		kill -USR1 "$vmm_pid"
		wait "$vmm_pid"; echo $? >"$dir/vmm.rc" ;;
	vmm-gone)
		kill -USR1 "$vmm_pid"
		wait_line "$dir/vmm.txt" '^go ' 60 "$vmm_pid" || echo "no go line" >>"$dir/timeout.txt"
		kill -9 "$vmm_pid"
		wait "$vmm_pid"
		wait_line "$dir/capture.txt" '^svmtraced: done' 30 "$cap_pid" ||
			{ echo "svmtraced did not end after its VMM died" >>"$dir/timeout.txt"; kill -9 "$cap_pid"; }
		wait "$cap_pid"; echo $? >"$dir/capture.rc" ;;
	esac
	keep_traces "$dir"
}

# win_discovery_run DIR IMAGE: every kernel discovery method on its own
# (svmtrace-vmi --json kernel), each saying how it found the kernel, judged
# by judge-win.sh's judge_win_discovery.  On the running guest, through
# /dev/svmtrace (svmtrace-vmi --vmm-pid):
#   ready  before its first instruction: the scheduler at CPL 0 on the
#          kernel's page tables, GS base = KPCR (DIR/kernel-ready.json)
#   user   held after the second PORT_LOG write, in beta.exe at CPL 3 (on
#          its user DTB in the KVA-shadow image): GS base = its TEB, the
#          KPCR in KERNEL_GS_BASE (DIR/kernel-user.json)
# and offline, on the guest's RAM dumped at ready: as it is
# (kernel-dump.json) and with the processor start block wiped, where only
# the physical scan is left (kernel-nostartblock.json).
win_discovery_run() {
	d=$1 img=$2 dump=/tmp/discovery.$$.raw
	win_vmm_start "$d" "$img" --log-wait 2 --dump-ready "$dump" || return 1
	win_kernel_json "$d" ready --vmm-pid "$vmm_pid"
	kill -USR1 "$vmm_pid"
	if wait_line "$d/vmm.txt" '^log 2 ' 60 "$vmm_pid"; then
		win_kernel_json "$d" user --vmm-pid "$vmm_pid"
	else
		echo "the guest never reached its second PORT_LOG" >>"$d/timeout.txt"
	fi
	kill -WINCH "$vmm_pid"
	wait_line "$d/vmm.txt" '^go ' 60 "$vmm_pid" && kill -WINCH "$vmm_pid"
	wait_line "$d/vmm.txt" '^holding$' 120 "$vmm_pid" ||
		echo "the guest did not finish (no holding line)" >>"$d/timeout.txt"
	kill -USR1 "$vmm_pid"
	wait "$vmm_pid"; echo $? >"$d/vmm.rc"
	win_kernel_json "$d" dump --memory "$dump"
	sb=$(sed -n 's/.*"source": "start block at GPA \(0x[0-9a-f]*\)".*/\1/p' "$d/kernel-dump.json")
	if [ -n "$sb" ]; then
		dd if=/dev/zero of="$dump" bs=4096 seek=$((sb / 4096)) count=1 conv=notrunc 2>/dev/null
		win_kernel_json "$d" nostartblock --memory "$dump"
	else
		echo "no start block found in the dump" >>"$d/timeout.txt"
	fi
	rm -f "$dump"
	[ ! -e "$d/timeout.txt" ]
}

# win_kernel_json DIR TAG SOURCE...: svmtrace-vmi SOURCE --json kernel
win_kernel_json() {
	d_=$1 tag_=$2
	shift 2
	svmtrace-vmi "$@" --profiles /e2e --json kernel >"$d_/kernel-$tag_.json" 2>"$d_/kernel-$tag_.err"
	echo $? >"$d_/kernel-$tag_.rc"
}
