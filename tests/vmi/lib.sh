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

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# gen PREFIX PROFILE [generator options]: write PREFIX.{raw,elf,expect}
gen() {
	prefix=$1 profile=$2
	shift 2
	"$BIN/vmi-genimage" --profile "$profile" --exe "$VMI_PE/target.exe" \
		--dll "$VMI_PE/helper.dll" --out "$prefix" "$@" || fail "vmi-genimage $*"
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
