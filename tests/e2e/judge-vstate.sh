# Sourced by e2e.sh: judge the vCPU state machine (kmod/src/vstate.c) from
# the transitions the capture set made, as the lab build's modules count
# them (kvm.svmtrace_test_transitions, testparam.c; l1-lab.sh keeps them in
# capture/transitions.txt), against the table docs/kmod.md draws.  Uses
# lib/judge.sh (ok, bad) and e2e.sh's $run; $here/../../docs is the doc.
#
# Each line of the dump: "DIMENSION EVENT FROM TO COUNT" for every row of
# the module's table, "DIMENSION EVENT FROM - COUNT unlisted" for an event
# made from a state the table does not list.  The doc's rows are
# "| DIMENSION | EVENT | FROM, FROM... | TO | where |".

# vstate_doc_rows DOC: "DIMENSION EVENT FROM TO", one per from-state, sorted.
vstate_doc_rows() {
	awk -F'|' '$2 ~ /^ *(tf|session|gap|slot|iret|handler|sys|ask|mem) *$/ && $3 ~ /^ *[A-Z_]+ *$/ {
		gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $5)
		n = split($4, from, ",")
		for (i = 1; i <= n; i++) { gsub(/ /, "", from[i]); print $2, $3, from[i], $5 }
	}' "$1" | sort
}

# judge_vstate DUMP DOC
judge_vstate() {
	if [ ! -s "$1" ]; then
		bad vstate/dump "no transition counts from the capture set ($1)"
		return
	fi
	unlisted=$(grep ' unlisted$' "$1")
	if [ -z "$unlisted" ]; then
		ok vstate/unlisted "the captures made no transition the table does not list"
	else
		bad vstate/unlisted "transitions outside the table: $(echo "$unlisted" | tr '\n' ';')"
	fi
	grep -v ' unlisted$' "$1" | awk '{ print $1, $2, $3, $4 }' | sort >"$run/vstate.code"
	vstate_doc_rows "$2" >"$run/vstate.doc"
	if [ -s "$run/vstate.doc" ] && cmp -s "$run/vstate.code" "$run/vstate.doc"; then
		ok vstate/doc "docs/kmod.md draws the module's table ($(wc -l <"$run/vstate.doc") transitions)"
	else
		bad vstate/doc "docs/kmod.md and the module's table differ (< module, > doc): $(diff "$run/vstate.code" "$run/vstate.doc" | grep '^[<>]' | tr '\n' ';')"
	fi
	made=$(awk '!/ unlisted$/ && $5 > 0' "$1" | wc -l)
	never=$(awk '!/ unlisted$/ && $5 == 0 { printf "%s %s %s->%s; ", $1, $2, $3, $4 }' "$1")
	echo "vstate: the captures made $made of the table's $(grep -vc ' unlisted$' "$1") transitions${never:+; never: $never}"
}
