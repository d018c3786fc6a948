# Sourced by test scripts.  need_cmd / need_file decide whether a test can
# run here: when something is missing, a local run skips with one line that
# says why (exit 77), while CI (CI=true) fails instead, so a machine that
# lacks a dependency can never pass by skipping.

skip_or_fail() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $* (CI=true: missing dependencies are failures)" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

need_cmd() {	# need_cmd COMMAND WHAT-IT-IS-FOR
	command -v "$1" >/dev/null 2>&1 || skip_or_fail "$1 not installed (needed for $2; run make deps)"
}

need_file() {	# need_file PATH WHAT-IT-IS-FOR
	[ -e "$1" ] || skip_or_fail "$1 not found (needed for $2; run make deps)"
}
