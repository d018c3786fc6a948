#!/bin/sh
# images.sh BUILD OUT SEED NAME [pvh]: lay out the Windows-layout guest NAME
# (win10, win11 or timing) from placement seed SEED (each guest its own: win11
# lays out with SEED + 1, timing with SEED + 2) into
# OUT/NAME.{elf,expect,targets,threads,loader},
# and with "pvh" OUT/NAME.pvh too (the same guest for QEMU's PVH boot, as
# libvirt runs it).  BUILD holds what make built: svmtrace-e2e-wingen and
# -winpvh, the scheduler, ntdll.dll, helper.dll and the six programs
# (build.mk E2E_WIN_PROCS, in slot order).
#   win10  Windows 10 19041's profile; no KVA shadow, as Windows runs on AMD
#   win11  Windows 11 22000's profile; a KVA-shadow kernel (LSTAR
#          KiSystemCall64Shadow, the IDT's shadow handlers), beta.exe under
#          its user DTB
#   timing win10 with timing.exe in alpha.exe's place and the Hyper-V
#          reference TSC page in every process (docs/lab.md, "Virtual time")
set -eu
build=$1 out=$2 seed=$3 name=$4
top=$(cd "$(dirname "$0")/../../.." && pwd)
w=$build/e2e/win
first=alpha hv=
case $name in
win10) profile=ntkrnlmp-84A84F4D2218BC053913B1204942618D-1 kva= ;;
win11) profile=ntkrnlmp-0CE4A95C0CD782A7596B034D8648E585-1 kva=--kva-shadow seed=$((seed + 1)) ;;
timing) profile=ntkrnlmp-84A84F4D2218BC053913B1204942618D-1 kva= first=timing hv=--hv-tsc-page \
	seed=$((seed + 2)) ;;
*) echo "images.sh: no guest '$name' (win10, win11, timing)" >&2; exit 2 ;;
esac
mkdir -p "$out"
# shellcheck disable=SC2086
"$build/bin/svmtrace-e2e-wingen" --profile "$top/tests/data/profiles/$profile.json.xz" \
	--sched "$w/sched.bin" --dll "$w/ntdll.dll" --dll2 "$w/helper.dll" --seed "$seed" $kva $hv \
	--out "$out/$name" $first.exe="$w/$first.exe" beta.exe="$w/beta.exe" lazy.exe="$w/lazy.exe" \
	late.exe="$w/late.exe" child.exe="$w/child.exe" hollow.exe="$w/hollow.exe"
[ "${5:-}" != pvh ] || "$build/bin/svmtrace-e2e-winpvh" "$out/$name.elf" "$w/pvhboot.bin" "$out/$name.pvh"
