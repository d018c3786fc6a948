#!/bin/sh
# Profile selection: by GUID from a directory (by name, or by contents when
# the name does not say), explicit files, and clear errors on mismatches.
. "$(dirname "$0")/lib.sh"

gen "$WORK/w10" "$WIN10" --scenario small --mem-size 0x8000000

# An explicit profile for another kernel: both GUIDs in the message.
expect_fail 1 "0CE4A95C0CD782A7596B034D8648E585.*84A84F4D2218BC053913B1204942618D-1" \
	"$VMI" --memory "$WORK/w10.raw" --profiles "$WIN11" ps
# A directory without this kernel's profile.
mkdir "$WORK/only11" && cp "$WIN11" "$WORK/only11/"
expect_fail 1 "no profile for kernel PDB GUID-age 84A84F4D2218BC053913B1204942618D-1" \
	"$VMI" --memory "$WORK/w10.raw" --profiles "$WORK/only11" ps
# A profile under a name without the GUID is still found (by its metadata).
mkdir -p "$WORK/renamed/sub" && cp "$WIN10" "$WORK/renamed/sub/kernel.json.xz" &&
	cp "$WIN11" "$WORK/renamed/"
"$VMI" --memory "$WORK/w10.raw" --profiles "$WORK/renamed" kernel >"$WORK/k" ||
	fail "renamed profile not found"
grep -q "profile: *$WORK/renamed/sub/kernel.json.xz" "$WORK/k" || fail "wrong profile: $(cat "$WORK/k")"
# Uncompressed .json works too.
xz -dc "$WIN10" >"$WORK/w10.json"
"$VMI" --memory "$WORK/w10.elf" --profiles "$WORK/w10.json" ps >/dev/null || fail "plain JSON profile"
# Broken profiles: truncated xz, bad JSON, not a Windows ISF.
head -c 100000 "$WIN10" >"$WORK/cut.json.xz"
expect_fail 1 "cut.json.xz: xz data ends early" "$VMI" --memory "$WORK/w10.raw" --profiles "$WORK/cut.json.xz" ps
head -c 300000 "$WORK/w10.json" >"$WORK/cut.json"
expect_fail 1 "cut.json: byte [0-9]*:" "$VMI" --memory "$WORK/w10.raw" --profiles "$WORK/cut.json" ps
echo '{"metadata": {}, "symbols": {}}' >"$WORK/empty.json"
expect_fail 1 "not a Windows kernel ISF" "$VMI" --memory "$WORK/w10.raw" --profiles "$WORK/empty.json" ps
# A profile missing a field VMI needs names it.
sed 's/"UniqueProcessId"/"UniqueProcessIdRenamed"/' "$WORK/w10.json" >"$WORK/nopid.json"
expect_fail 1 "_EPROCESS.UniqueProcessId" "$VMI" --memory "$WORK/w10.raw" --profiles "$WORK/nopid.json" ps
