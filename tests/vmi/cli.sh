#!/bin/sh
# svmtrace-vmi's command line: usage errors, bad memory files, and --help
# in step with the man page.
. "$(dirname "$0")/lib.sh"

MAN=$(dirname "$0")/../../docs/man/svmtrace-vmi.1
"$VMI" --help >"$WORK/help" || fail "--help"
for word in ps resolve modules kernel --memory --vmm-pid --profiles --json --help; do
	grep -q -- "$word" "$WORK/help" || fail "--help lacks $word"
	grep -q -- "$(echo "$word" | sed 's/-/\\\\-/g')" "$MAN" || fail "man page lacks $word"
done
expect_fail 2 "a command is required" "$VMI" --memory x
expect_fail 2 "unknown command: frobnicate" "$VMI" --memory x --profiles y frobnicate
expect_fail 2 "one of --memory FILE and --vmm-pid PID is required" "$VMI" --profiles y ps
expect_fail 2 "one of --memory FILE and --vmm-pid PID is required" "$VMI" --memory x --vmm-pid 1 \
	--profiles y ps
# Without svmtrace's modules there is no /dev/svmtrace; with them, PID 1 holds no VM.
expect_fail 1 "svmtrace's kvm.ko\|--vmm-pid 1: the process holds no KVM VM\|capturing needs root" \
	"$VMI" --vmm-pid 1 --profiles y ps
expect_fail 1 "nosuchfile: No such file" "$VMI" --memory "$WORK/nosuchfile" --profiles y ps
: >"$WORK/empty"
expect_fail 1 "empty: empty file" "$VMI" --memory "$WORK/empty" --profiles y ps
printf '\177ELF\002\001\001' >"$WORK/bad.elf"
expect_fail 1 "bad.elf: ELF64 file of 7 bytes is shorter than its ELF header" "$VMI" --memory "$WORK/bad.elf" --profiles y ps
printf '\177ELF\002\002\001' >"$WORK/big.elf"
expect_fail 1 "big.elf: not a little-endian ELF32/ELF64 file" "$VMI" --memory "$WORK/big.elf" --profiles y ps
gen "$WORK/img" "$WIN10" --scenario small --mem-size 0x8000000
expect_fail 1 "PID: expected an unsigned number" vmi --memory "$WORK/img.raw" resolve abc
# A truncated ELF core names what is missing.
head -c 3000 "$WORK/img.elf" >"$WORK/cut.elf"
expect_fail 1 "cut.elf: .* program headers at offset 0x40 run past the end" vmi --memory "$WORK/cut.elf" ps
head -c $(($(stat -c %s "$WORK/img.elf") / 2)) "$WORK/img.elf" >"$WORK/cut.elf"
expect_fail 1 "cut.elf: memory range at GPA .* beyond the file" vmi --memory "$WORK/cut.elf" ps
