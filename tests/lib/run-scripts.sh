#!/bin/sh
# Run test scripts one by one; report each as PASS, SKIP (exit 77) or FAIL.
# Every script gets a fresh scratch directory in $WORK.  Under CI=true a
# skip is a failure: a machine that cannot run a test never passes by
# skipping it, whatever the script itself does with CI.
set -u
fail=0
for t in "$@"; do
	WORK=$(mktemp -d "${TMPROOT:-/tmp}/$(basename "$t" .sh).XXXXXX" 2>/dev/null) ||
		{ mkdir -p "${TMPROOT:-/tmp}" && WORK=$(mktemp -d "${TMPROOT:-/tmp}/$(basename "$t" .sh).XXXXXX"); }
	export WORK
	sh "$t" >"$WORK.log" 2>&1
	rc=$?
	case $rc in
	0) echo "PASS: $t"; rm -rf "$WORK" "$WORK.log" ;;
	77)
		if [ "${CI:-}" = true ]; then
			echo "FAIL: $t skipped under CI=true: $(grep '^SKIP' "$WORK.log" | head -n 1)"
			fail=1
		else
			echo "SKIP: $t: $(grep '^SKIP' "$WORK.log" | head -n 1)"
		fi ;;
	*) echo "FAIL: $t (exit $rc); last lines of $WORK.log:"; tail -n 30 "$WORK.log"; fail=1 ;;
	esac
done
exit $fail
