# tests/lib/run-scripts.sh: exit 77 is a SKIP locally and a FAIL under
# CI=true, even for a script that skips without looking at CI itself.
set -eu
printf 'echo "SKIP: nothing here"; exit 77\n' >"$WORK/skips.sh"
printf 'exit 0\n' >"$WORK/passes.sh"
run() {
	TMPROOT=$WORK/tmp sh tests/lib/run-scripts.sh "$WORK/passes.sh" "$WORK/skips.sh" >"$WORK/out" 2>&1
}
mkdir -p "$WORK/tmp"
CI= run || { cat "$WORK/out"; echo "a local skip failed the run"; exit 1; }
grep -q "^SKIP: $WORK/skips.sh: SKIP: nothing here" "$WORK/out"
if CI=true run; then
	cat "$WORK/out"; echo "a skip passed under CI=true"; exit 1
fi
grep -q "^FAIL: $WORK/skips.sh skipped under CI=true: SKIP: nothing here" "$WORK/out"
grep -q "^PASS: $WORK/passes.sh" "$WORK/out"
