# Every program's --help and its man page name the same long options, and
# the same subcommands: a user reads one or the other, never both.
set -eu
status=0
for page in docs/man/*.1 docs/man/*.8; do
	prog=$(basename "$page"); prog=${prog%.[18]}
	[ -x "$BIN/$prog" ] || { echo "$prog: man page without a built program"; status=1; continue; }
	"$BIN/$prog" --help >"$WORK/help"
	# subcommands: help lines "  name ..." whose name is a word in the man page's COMMANDS
	for cmd in $(sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' "$WORK/help" | sort -u); do
		if "$BIN/$prog" "$cmd" --help >"$WORK/sub" 2>/dev/null; then
			cat "$WORK/sub" >>"$WORK/help"
			grep -q "^\.B $cmd" "$page" || { echo "$prog: '$cmd' missing from $page"; status=1; }
		fi
	done
	grep -o -- '--[a-z][a-z0-9-]*' "$WORK/help" | sort -u >"$WORK/help.opts"
	sed 's/\\-/-/g' "$page" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u >"$WORK/man.opts"
	if ! diff "$WORK/help.opts" "$WORK/man.opts" >"$WORK/diff"; then
		echo "$prog: --help (<) and $page (>) differ:"; cat "$WORK/diff"; status=1
	fi
done
exit $status
