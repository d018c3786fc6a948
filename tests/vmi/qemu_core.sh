#!/bin/sh
# A real QEMU ELF core, made in the test run: QEMU (TCG) with the generator's
# image in RAM (-device loader) and a tiny long-mode stub as its firmware
# (qemu/stub.S: CR3 = the kernel's DTB, GS bases and IDTR as a running
# kernel leaves them), dumped with QMP dump-guest-memory.  svmtrace-vmi must
# find the kernel through the core's register notes and resolve every
# process exactly as the generator says; also for a guest with five-level
# page tables (CR4.LA57 on an LA57 CPU, QEMU's own CR4 in the notes).  The same guest dumped before its
# vCPU ran (still in real mode) gives QEMU's EM_386 core: it must be read
# too, the kernel found from memory alone, and each register method must
# say why it cannot work.
. "$(dirname "$0")/lib.sh"
need_cmd qemu-system-x86_64 "QEMU's own ELF cores (dump-guest-memory)"
need_cmd python3 "driving QMP"
need_cmd cc "assembling the long-mode stub"
need_cmd ld "linking the long-mode stub"

here=$(dirname "$0")/qemu
TABLES=0x4000000	# the stub's page tables: the 64 MiB after the image

cc -c -o "$WORK/stub.o" "$here/stub.S" || fail "assembling the stub"
ld -Ttext=0xffff0000 --oformat binary -o "$WORK/stub.bin" "$WORK/stub.o" || fail "linking the stub"
[ "$(wc -c <"$WORK/stub.bin")" = 65536 ] || fail "the stub is not 64 KiB"

# dump CORE WAIT [QEMU OPTIONS]: run the guest, dump it to CORE when vCPU 0
# halted in long mode (WAIT=run) or at once (WAIT=none), and quit
dump() {
	core=$1 wait=$2
	shift 2
	rm -f "$WORK/qmp.sock"
	timeout 120 qemu-system-x86_64 -machine pc,accel=tcg -m 128M -nodefaults \
		-display none -bios "$WORK/guest.bin" \
		-device loader,file="$WORK/low.bin",addr=0,force-raw=on \
		-device loader,file="$WORK/high.bin",addr=0x100000,force-raw=on \
		-qmp unix:"$WORK/qmp.sock",server=on,wait=off "$@" >"$WORK/qemu.log" 2>&1 &
	qemu=$!
	python3 "$here/core.py" qmp "$WORK/qmp.sock" "$core" "$wait" ||
		{ kill "$qemu" 2>/dev/null; cat "$WORK/qemu.log"; fail "QMP session"; }
	wait "$qemu" || { cat "$WORK/qemu.log"; fail "QEMU exited $?"; }
}

for p in "$WIN10" "$WIN11" "$WIN10 la57"; do
	set -- $p
	p=$1 la57=${2:-} cpu=
	[ -z "$la57" ] || cpu="-cpu qemu64,+la57"
	gen "$WORK/img" "$p" --scenario small --mem-size "$TABLES" ${la57:+--la57}
	cp "$WORK/stub.bin" "$WORK/guest.bin"
	regs=$(python3 "$here/core.py" params "$WORK/img.elf" "$WORK/img.raw" "$WORK/guest.bin" \
		"$TABLES") || fail "stub parameters: $regs"
	cr3=$(echo "$regs" | sed 's/.*cr3=\(0x[0-9a-f]*\).*/\1/')
	python3 "$here/core.py" split "$WORK/img.raw" "$WORK/low.bin" "$WORK/high.bin"
	base=$(awk '$1 == "kernel" { print $2 }' "$WORK/img.expect")

	# shellcheck disable=SC2086
	dump "$WORK/core.elf" run $cpu
	[ "$(python3 "$here/core.py" elf "$WORK/core.elf")" = "ELF64 EM_X86_64 1" ] ||
		fail "QEMU's core: $(python3 "$here/core.py" elf "$WORK/core.elf")"
	vmi --memory "$WORK/core.elf" kernel >"$WORK/kernel" || fail "kernel on QEMU's core"
	grep -q "^method kpcr  *$base  from " "$WORK/kernel" || fail "kpcr did not find $base: $(cat "$WORK/kernel")"
	grep -q "^method idtr  *$base  from " "$WORK/kernel" || fail "idtr did not find $base: $(cat "$WORK/kernel")"
	[ $(($(awk '$1 == "kernel-dtb:" { print $2 }' "$WORK/kernel"))) = $((cr3)) ] ||
		fail "kernel DTB is not the core's CR3 $cr3: $(cat "$WORK/kernel")"
	if [ -n "$la57" ]; then
		grep -q "^paging: *5 levels (LA57)\$" "$WORK/kernel" ||
			fail "QEMU's LA57 core: $(cat "$WORK/kernel")"
	fi
	check_image "$WORK/core.elf" "$WORK/img.expect" "$WORK/img.raw"
	rm -f "$WORK/core.elf"
	echo "ok: $(basename "$p")${la57:+ LA57}: QEMU x86-64 core, kernel found by its registers"
	[ -z "$la57" ] || continue

	dump "$WORK/core386.elf" none -S
	python3 "$here/core.py" elf "$WORK/core386.elf" | grep -Eqx 'ELF(32|64) EM_386 1' ||
		fail "QEMU's core of a real-mode vCPU: $(python3 "$here/core.py" elf "$WORK/core386.elf")"
	vmi --memory "$WORK/core386.elf" kernel >"$WORK/kernel" || fail "kernel on QEMU's EM_386 core"
	grep -q "^found-by: *startblock\$" "$WORK/kernel" || fail "EM_386: $(cat "$WORK/kernel")"
	grep -q "^kernel-base: *$base\$" "$WORK/kernel" || fail "EM_386: $(cat "$WORK/kernel")"
	for m in lstar kpcr idtr; do
		grep -q "^method $m .*vCPU 0 was not in long mode when dumped" "$WORK/kernel" ||
			fail "EM_386: method $m does not say why: $(cat "$WORK/kernel")"
	done
	check_image "$WORK/core386.elf" "$WORK/img.expect" "$WORK/img.raw"
	rm -f "$WORK/core386.elf"
	echo "ok: $(basename "$p"): QEMU EM_386 core, kernel found in memory"
done
