# Sourced by the VMI test scripts.  Environment from tests/vmi/build.mk:
# BIN (built programs), WORK (scratch dir), VMI_PROFILES (the two shared ISF
# profiles), VMI_PE (the mingw-built test programs).
. "$(dirname "$0")/../lib/need.sh"

need_file "$VMI_PROFILES/ntkrnlmp-84A84F4D2218BC053913B1204942618D-1.json.xz" \
	"the Windows 10 19041 profile (tests/data/profiles)"
need_file "$VMI_PROFILES/ntkrnlmp-0CE4A95C0CD782A7596B034D8648E585-1.json.xz" \
	"the Windows 11 22000 profile (tests/data/profiles)"
need_file "$VMI_PE/target.exe" "the test program built with mingw-w64"

WIN10=$VMI_PROFILES/ntkrnlmp-84A84F4D2218BC053913B1204942618D-1.json.xz
WIN11=$VMI_PROFILES/ntkrnlmp-0CE4A95C0CD782A7596B034D8648E585-1.json.xz
VMI=$BIN/svmtrace-vmi

# Where the generator puts the kernel, images and frames: a new seed each
# run (VMI_SEED=N repeats one), named by every failure.
VMI_SEED=${VMI_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}

fail() {
	echo "FAIL: $* (generator seed $VMI_SEED: VMI_SEED=$VMI_SEED repeats it)" >&2
	exit 1
}

# gen PREFIX PROFILE [generator options]: write PREFIX.{raw,elf,expect}
gen() {
	prefix=$1 profile=$2
	shift 2
	"$BIN/vmi-genimage" --profile "$profile" --exe "$VMI_PE/target.exe" \
		--dll "$VMI_PE/helper.dll" --out "$prefix" --seed "$VMI_SEED" "$@" ||
		fail "vmi-genimage $*"
}

# layout FIELD: kpcr, idt or startblock from the generator's expect file
layout() {
	awk -v f="$1" '$1 == "layout" { for (i = 2; i < NF; i++) if ($i == f) print $(i + 1) }' \
		"$WORK/img.expect"
}

# vmi ARGS...: run svmtrace-vmi with the shared profile directory, bounded in time
vmi() {
	timeout 60 "$VMI" --profiles "$VMI_PROFILES" "$@"
}

# expect_fail STATUS PATTERN CMD...: CMD must exit STATUS and say PATTERN on stderr
expect_fail() {
	want=$1 pattern=$2
	shift 2
	"$@" >"$WORK/out" 2>"$WORK/err"
	got=$?
	[ "$got" = "$want" ] || fail "$* exited $got, expected $want; stderr: $(cat "$WORK/err")"
	grep -q -- "$pattern" "$WORK/err" ||
		fail "$*: stderr does not say '$pattern': $(cat "$WORK/err")"
}

# bytes_at FILE OFFSET: 16 bytes at OFFSET as lower-case hex
bytes_at() {
	dd if="$1" iflag=skip_bytes,count_bytes skip=$(($2)) count=16 bs=4096 2>/dev/null |
		od -An -tx1 | tr -d ' \n'
}

# check_image IMAGE EXPECT RAW: ps, resolve and modules on IMAGE say exactly
# what the generator's EXPECT says; each entry GPA holds the PE's entry bytes
# (read from RAW, the generator's raw image).
check_image() {
	img=$1 exp=$2 raw=$3

	vmi --memory "$img" ps >"$WORK/ps" || fail "ps on $img"
	tail -n +2 "$WORK/ps" | awk '{ print "process", $0 }' | tr -s ' ' >"$WORK/ps.got"
	grep '^process ' "$exp" >"$WORK/ps.want"
	diff -u "$WORK/ps.want" "$WORK/ps.got" || fail "ps on $img differs from the generator's"

	grep '^entry ' "$exp" | while read -r _ pid gpa va state size bytes; do
		if [ "$gpa" = notresident ]; then
			expect_fail 3 "not resident:.*$va" vmi --memory "$img" resolve "$pid"
			continue
		fi
		vmi --memory "$img" resolve "$pid" >"$WORK/r" || fail "resolve $pid on $img"
		grep -q "^entry-gpa: *$gpa\$" "$WORK/r" || fail "PID $pid: want GPA $gpa: $(cat "$WORK/r")"
		grep -q "^entry-va: *$va\$" "$WORK/r" || fail "PID $pid: want VA $va"
		grep -q "^state: *$state\$" "$WORK/r" || fail "PID $pid: want state $state"
		grep -q "^page-size: *$size\$" "$WORK/r" || fail "PID $pid: want page size $size"
		page=$(grep '^entry-page:' "$WORK/r" | awk '{ print $2 }')
		[ $((page)) -eq $((gpa & ~4095)) ] || fail "PID $pid: entry page $page"
		got=$(bytes_at "$raw" "$gpa")
		[ "$got" = "$bytes" ] || fail "PID $pid: bytes at GPA $gpa are $got, the PE has $bytes"
	done || exit 1

	for pid in $(grep '^module ' "$exp" | awk '{ print $2 }' | sort -u); do
		vmi --memory "$img" modules "$pid" >"$WORK/m" || fail "modules $pid on $img"
		tail -n +2 "$WORK/m" | awk -v p="$pid" '{ print "module", p, $1, $2, $4, $5 }' >"$WORK/m.got"
		grep "^module $pid " "$exp" >"$WORK/m.want"
		diff -u "$WORK/m.want" "$WORK/m.got" || fail "modules $pid on $img"
	done
	if grep -q '^process 1248 ' "$exp"; then
		expect_fail 1 "PEB.Ldr is NULL" vmi --memory "$img" modules 1248
	fi
	expect_fail 1 "no process with PID 999" vmi --memory "$img" resolve 999
}
