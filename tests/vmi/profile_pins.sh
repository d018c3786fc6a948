# The real profiles' offsets, PTE bit positions and symbol RVAs, pinned in
# tests/data/profile-pins.txt, read by Python's json (a reader that shares no
# code with libsvmtrace; test_vmi_pins.c checks the library against the same
# pins).  The team's shared copies are checked too when they are there.
set -eu
. "$(dirname "$0")/lib.sh"
need_cmd python3 "the second ISF reader"
dirs=$VMI_PROFILES
shared=$(dirname "$0")/../../../shared/profiles
if [ -d "$shared" ]; then
	dirs="$dirs $shared"
fi
python3 "$(dirname "$0")/profile_pins.py" "$(dirname "$0")/../data/profile-pins.txt" $dirs
