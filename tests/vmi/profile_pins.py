#!/usr/bin/env python3
# A second reader of the ISF profiles that shares no code with libsvmtrace:
# Python's lzma and json over the files.  Every pin in
# tests/data/profile-pins.txt must be what the profile says, and every profile
# the pins name must be in each directory given (the repository's copies,
# and the team's shared copies when they are there).
# Usage: profile_pins.py PINS DIR...
import json
import lzma
import os
import sys


def value(isf, name):
    if name.startswith("symbol:"):
        return isf["symbols"][name[len("symbol:"):]]["address"]
    member, _, attr = name.partition(":")
    type_name, field = member.split(".")
    entry = isf["user_types"][type_name]["fields"][field]
    return entry["type"][attr] if attr else entry["offset"]


def main():
    pins_path, dirs = sys.argv[1], sys.argv[2:]
    pins = {}
    for line in open(pins_path):
        line = line.split("#", 1)[0].split()
        if line:
            profile, name, want = line
            pins.setdefault(profile, []).append((name, int(want, 0)))
    if len(pins) < 2:
        sys.exit("FAIL: %s pins %d profiles, expected both" % (pins_path, len(pins)))
    checked = 0
    for d in dirs:
        for profile, entries in sorted(pins.items()):
            path = os.path.join(d, "ntkrnlmp-%s.json.xz" % profile)
            isf = json.load(lzma.open(path))
            pdb = isf["metadata"]["windows"]["pdb"]
            if "%s-%d" % (pdb["GUID"].upper(), pdb["age"]) != profile:
                sys.exit("FAIL: %s is for %s-%d" % (path, pdb["GUID"], pdb["age"]))
            for name, want in entries:
                got = value(isf, name)
                if got != want:
                    sys.exit("FAIL: %s: %s is %#x, pinned %#x" % (path, name, got, want))
                checked += 1
    print("profile pins: %d values in %d directories agree" % (checked, len(dirs)))


main()
