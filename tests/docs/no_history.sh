# The docs describe what is; what was goes to CHANGELOG.md and to git.  No
# document a user reads (README.md, docs/*.md, the man pages,
# vm-configs/README.md) may name an issue, a branch, a development session
# or stop, a closing note, a commit, the date of a run, or tell a
# before/after story.  Each pattern below is one way such text was written;
# a line that matches is printed with the rule it breaks.
set -eu
cd "${TOP:-.}"
docs="README.md vm-configs/README.md $(ls docs/*.md docs/man/*.[18])"
status=0
rule() {	# rule NAME ERE: case-insensitive, .TH lines of man pages exempt
	if grep -n -i -E -- "$2" $docs | grep -v -E '^[^:]+:[0-9]+:\.TH ' >"$WORK/hits"; then
		while IFS= read -r hit; do printf '%s: %s\n' "$1" "$hit"; done <"$WORK/hits"
		status=1
	fi
}
rule "an issue number" '(^|[^a-z])issues? #?[0-9]'
rule "a closing note" 'closing note'
rule "a branch" '(^|[^a-z])branch([^-a-z]|$)'
rule "a development stop or session" '(^|[^a-z])stops? [0-9]+([^0-9]|$)|-s[0-9]{2}([^0-9]|$)|(development|helper|lead).s? session'
rule "a commit" '(^|[^a-z])(main|master) at |(^|[^a-z])commit [0-9a-f]{7}'
rule "a date" '(^|[^0-9])20[0-9]{2}-[01][0-9]([^0-9]|$)|(january|february|march|april|may|june|july|august|september|october|november|december) 20[0-9]{2}'
rule "a before/after story" '\| *before *\||before the fix|after the fix|was fixed|the old modules|modules before|(^|[^a-z])no longer([^a-z]|$)|(^|[^a-z])any ?more([^a-z]|$)|(^|[^a-z])used to be|since (issue|stop|branch)'
rule "a file outside the repository" 'DESIGN\.md|seed 0[0-9]{2}'
# The code's comments describe what is, too: no issue numbers in the
# sources, scripts and configurations (CHANGELOG.md is where they belong).
if find kmod userspace include tests vm-configs debian Makefile -type f \
	! -path '*/fuzz/corpus/*' ! -name '*.bin' -print0 2>/dev/null |
	xargs -0 grep -n -I -i -E '(^|[^a-z])issues? #?[0-9]' >"$WORK/hits"; then
	sed 's/^/an issue number in code: /' "$WORK/hits"
	status=1
fi
[ $status = 0 ] || echo "docs: move history to CHANGELOG.md or git, say what is"
exit $status
