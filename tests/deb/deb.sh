#!/bin/sh
# deb.sh: the Debian packages of make deb, as a user gets them (docs/install.md).
#   tests/deb/deb.sh
# 1. lintian (--pedantic, overrides as debian/*.lintian-overrides state them)
#    on every package, in one run: any tag fails its package.
# 2. DKMS, on the host, builds the modules for the lab's 6.1 kernel from
#    svmtrace-dkms's packaged source (tests/deb/dkms-host.sh: dkms add and
#    build with the package's dkms.conf in a private mount namespace whose
#    /var/lib/dkms is a directory of the run, so the host's DKMS state is
#    not touched), then dkms mktarball --binaries-only.  That build must
#    give the modules make kmod gives (modinfo, code size).  For a 6.12
#    kernel whose headers are of another Debian version than
#    linux-source-6.12, a 6.8 kernel and a PREEMPT_RT one, DKMS must refuse
#    (kmod/kernel.sh's line) or skip, and build nothing.  Why on the host:
#    the kbuild of KVM takes about 80 CPU-seconds here and TCG runs L1
#    many times slower; the tarball is DKMS's own way to ship built
#    modules, and the postinst in L1 loads it instead of building
#    (l1-deb.sh).
# 3. L1 (run-l1.sh --hostroot, the host's userspace, Debian's 6.1 kernel and
#    its packaged modules) installs the packages with dpkg -i, loads the
#    modules from updates/dkms with modprobe, runs svmtraced from
#    /usr/bin on the Windows-layout guest, removes svmtrace-dkms with
#    apt-get remove and loads the distribution's modules again
#    (tests/deb/l1-deb.sh).  Judged here, the trace against the reference
#    model as in make e2e.
# Prints "N passed, N failed".  Environment: BUILD (default build),
# DEB_TIMEOUT (L1 seconds, default 1500), E2E_WIN_SEED (as make e2e).
set -u
here=$(cd "$(dirname "$0")/../e2e" && pwd)	# the lab's judges use $here
top=$(cd "$here/../.." && pwd)
build=$top/${BUILD:-build}
bin=$build/bin
debs=$build/deb
run=$debs/run
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$top/debian/changelog")
. "$top/tests/lib/need.sh"
need_cmd lintian "checking the packages (make deps)"
need_cmd dkms "building the modules from svmtrace-dkms (make deps)"
need_cmd unshare "a private /var/lib/dkms for that build (util-linux)"
. "$here/lib/kernel.sh"
. "$here/lib/judge.sh"
rm -rf "$run" && mkdir -p "$run/debs" "$run/expect"

# --- 1. lintian ------------------------------------------------------------------
lintian --pedantic --info --show-overrides --fail-on none "$debs"/*.deb >"$run/lintian.txt" 2>&1
lrc=$?
for d in "$debs"/*.deb; do
	p=$(dpkg-deb -f "$d" Package)
	tags=$(grep -E "^[EWIPXC]: $p( \(binary\))?: " "$run/lintian.txt")
	if [ "$lrc" = 0 ] && [ -z "$tags" ]; then
		ok "deb/lintian/$p" "no tags$(grep -c "^O: $p: " "$run/lintian.txt" | sed 's/^0$//; s/^[1-9].*/ besides & override(s) (debian\/*.lintian-overrides)/')"
	else
		bad "deb/lintian/$p" "lintian exit $lrc: $(echo "$tags" | tr '\n' ';')"
	fi
	case $p in *-dbgsym) ;; *) cp "$d" "$run/debs/" ;; esac
done

# --- 2. DKMS with the packaged source -------------------------------------------
abi=$(kernel_abi_pinned) || { echo "deb: cannot resolve the lab kernel's ABI" >&2; exit 1; }
dk=$run/dkms
mkdir -p "$dk/root"
dpkg-deb -x "$debs/svmtrace-dkms_${version}_amd64.deb" "$dk/root"
# The packaged source is the modules users install: none of the lab's
# test-only knobs (kmod/build.sh --lab).
src=$dk/root/usr/src/svmtrace-$version
files=$(find "$src" -type f 2>/dev/null | wc -l)
lab=$(find "$src" -name '*-lab-*' -o -name testparam.c 2>/dev/null)
if [ -f "$src/dkms.conf" ] && [ -z "$lab" ]; then
	ok deb/dkms/source "/usr/src/svmtrace-$version holds $files files, none of the lab's (*-lab-*.patch, testparam.c)"
else
	bad deb/dkms/source "/usr/src/svmtrace-$version ($files files) has no dkms.conf or holds the lab's test-only knobs: $(echo "$lab" | tr '\n' ' ')"
fi
# Not root: a user namespace makes us root over our own files.
userns=; [ "$(id -u)" = 0 ] || userns=-r
unshare $userns -m "$top/tests/deb/dkms-host.sh" "$version" "$abi" "$dk/root/usr/src" "$dk"
tarball=$dk/svmtrace-$version.dkms.tar.gz
# mod_facts KO: what identifies a build of a module without its signature
# and paths (ours carry no srcversion): modinfo's name, license,
# dependencies, vermagic and parameters, and the size of its code.
mod_facts() {
	modinfo "$1" | grep -E '^(name|license|depends|vermagic|parm):'
	size -A "$1" | awk '$1 == ".text" { print "text", $2 }'
}
ours=$build/kmod/6.1
if [ "$(cat "$dk/build.rc")" = 0 ] && [ -s "$tarball" ] && for m in kvm kvm-amd; do
	mod_facts "$dk/module/$m.ko" >"$dk/$m.facts"
	mod_facts "$ours/$m.ko" | cmp -s - "$dk/$m.facts" || exit 1
done; then
	ok deb/dkms/build "dkms build for $abi from the packaged source: the modules of make kmod ($(grep -c '^parm' "$dk/kvm.facts") + $(grep -c '^parm' "$dk/kvm-amd.facts") parameters, .text $(sed -n 's/^text //p' "$dk/kvm.facts") + $(sed -n 's/^text //p' "$dk/kvm-amd.facts") bytes, vermagic $(modinfo -F vermagic "$dk/module/kvm.ko" | cut -d' ' -f1)); $(grep -c '^Signing module' "$dk/build.txt") signed with DKMS's key ($(modinfo -F signer "$dk/module/kvm.ko"))"
else
	bad deb/dkms/build "dkms exit $(cat "$dk/build.rc"): $(tail -n 5 "$dk/build.txt" | tr '\n' ';'); facts: $(for m in kvm kvm-amd; do mod_facts "$ours/$m.ko" | diff - "$dk/$m.facts" | tr '\n' ' '; done)"
	echo "deb: $pass passed, $fail failed"
	exit 1
fi
# A kernel DKMS must not build for: skipped (77, BUILD_EXCLUSIVE) or
# refused with kmod/kernel.sh's line, and nothing built for it.
src_ver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
want="kmod: linux-source-6.12 $src_ver does not match the headers of 6.12.1+deb12-amd64 (6.12.1-1~deb12u1): apt-get install linux-source-6.12=6.12.1-1~deb12u1"
for c in mismatch series rt; do
	rc=$(cat "$dk/refuse-$c.rc" 2>/dev/null)
	case $c in
	mismatch) [ "$rc" != 0 ] && [ "$rc" != 77 ] && grep -qxF "$want" "$dk/refuse-$c.txt" ;;
	*) [ "$rc" = 77 ] && grep -q 'BUILD_EXCLUSIVE' "$dk/refuse-$c.txt" ;;
	esac && ! grep -q ': built\|: installed' "$dk/refuse-$c.status" &&
		ok "deb/dkms/refuse-$c" "dkms build exit $rc, nothing built: $(grep -m 1 '^kmod: \|BUILD_EXCLUSIVE' "$dk/refuse-$c.txt")" ||
		bad "deb/dkms/refuse-$c" "dkms build exit $rc: $(grep -v '^$' "$dk/refuse-$c.txt" | head -n 8 | tr '\n' ';') status: $(cat "$dk/refuse-$c.status")"
done

# --- 3. installed in L1 ------------------------------------------------------------
win=$run/win
seed=${E2E_WIN_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
"$here/win/images.sh" "$build" "$win" "$seed" win10 >"$run/win10.log" 2>&1 ||
	{ echo "deb: laying out win10: $(cat "$run/win10.log")" >&2; exit 1; }
echo "info: the Windows-layout guest laid out with seed $seed (E2E_WIN_SEED=$seed repeats it)"
model_win win10-pid win10 1200 pid
adds="--add $run/debs --add $tarball --add $top/tests/deb/l1-deb.sh --add $here/l1-capture.sh"
adds="$adds --add $here/l1-win.sh --add $bin/svmtrace-e2e-vmm --add $win/win10.elf"
adds="$adds --add $win/win10.targets $(ls "$top"/tests/data/profiles/*.json.xz | sed 's/^/--add /')"
# shellcheck disable=SC2086
nice "$here/run-l1.sh" --hostroot --kabi "$abi" --out "$run/l1" --timeout "${DEB_TIMEOUT:-1500}" \
	$adds -- sh l1-deb.sh win10 1200 >"$run/l1.log" 2>&1
echo "info: L1 ended with $?; stages (L1 uptime): $(tr '\n' ' ' <"$run/l1/deb/stages" 2>/dev/null)"
d=$run/l1/deb
[ ! -s "$d/failures" ] || bad deb/l1/steps "$(tr '\n' ';' <"$d/failures")"

installed=$(grep -c ' install ok installed$' "$d/installed.txt" 2>/dev/null)
if [ "$(cat "$d/install.rc" 2>/dev/null)" = 0 ] && [ "$installed" = 4 ] &&
	grep -q "^svmtraced /usr/bin/svmtraced$" "$d/paths.txt"; then
	ok deb/install "dpkg -i of the four packages: $(grep -m 1 'installed' "$d/install.txt" 2>/dev/null); $(grep -i 'dkms.tar.gz\|Installing to' "$d/install.txt" | head -n 2 | tr '\n' ' ')"
else
	bad deb/install "dpkg -i exit $(cat "$d/install.rc" 2>/dev/null), $installed installed: $(tail -n 5 "$d/install.txt" 2>/dev/null | tr '\n' ';')"
fi
if grep -qx "r15" "$d/libuse.txt" 2>/dev/null &&
	grep -Eq "libsvmtrace.so.0 => (/usr)?/lib/x86_64-linux-gnu/libsvmtrace.so.0 " "$d/libuse.txt"; then
	ok deb/libsvmtrace-dev "a program built with pkg-config --cflags --libs svmtrace runs on /usr/lib/x86_64-linux-gnu/libsvmtrace.so.0"
else
	bad deb/libsvmtrace-dev "$(tr '\n' ';' <"$d/libuse.txt" 2>/dev/null)"
fi

# Which modules are loaded: ours are out of tree (taint O), the image's
# are not; only ours make /dev/svmtrace.
s=$d/state-installed.txt
if grep -q "^kvm /lib/modules/$abi/updates/dkms/kvm.ko$" "$s" 2>/dev/null &&
	grep -q "^kvm_amd /lib/modules/$abi/updates/dkms/kvm-amd.ko$" "$s" &&
	grep -q "^dkms svmtrace/$version, $abi, x86_64: installed" "$s" &&
	grep -q '^loaded kvm taint=[A-Z]*O[A-Z]* kvm_amd taint=[A-Z]*O[A-Z]*$' "$s" &&
	grep -q '^svmtrace_device present$' "$s"; then
	ok deb/modules/installed "modinfo and modprobe find DKMS's modules in updates/dkms ($(grep '^loaded' "$s")), dkms status says installed, /dev/svmtrace present"
else
	bad deb/modules/installed "$(tr '\n' ';' <"$s" 2>/dev/null)"
fi

. "$here/judge-capture.sh"
. "$here/judge-win.sh"
cap=$d	# the lab's judges read $cap/NAME (judge-capture.sh sets the lab's)
judge_win_armed win-daemon win10 1200
judge_capture_rc win-daemon
judge_audit win-daemon
judge_armed_results win-daemon "$run/expect/win10-pid"
judge_trace win-daemon "$run/expect/win10-pid"
judge_win_first win-daemon win10 1200 pid

s=$d/state-removed.txt
if [ "$(cat "$d/remove.rc" 2>/dev/null)" = 0 ] &&
	grep -q "^kvm /lib/modules/$abi/kernel/arch/x86/kvm/kvm.ko$" "$s" 2>/dev/null &&
	grep -q "^kvm_amd /lib/modules/$abi/kernel/arch/x86/kvm/kvm-amd.ko$" "$s" &&
	grep -q "^dkms $" "$s" && grep -q '^loaded kvm taint= kvm_amd taint=$' "$s" &&
	grep -q '^svmtrace_device absent$' "$s" && [ -e "$d/updates-after" ] && [ ! -s "$d/updates-after" ]; then
	ok deb/modules/removed "apt-get remove svmtrace-dkms: updates/dkms is empty, dkms status too, modinfo and modprobe find the distribution's modules again (untainted), no /dev/svmtrace"
else
	bad deb/modules/removed "apt-get remove exit $(cat "$d/remove.rc" 2>/dev/null): $(tr '\n' ';' <"$s" 2>/dev/null) left in updates: $(cat "$d/updates-after" 2>/dev/null)"
fi
if [ -s "$run/l1/dmesg.txt" ] && ! grep -E 'WARNING|BUG|Oops|Call Trace' "$run/l1/dmesg.txt"; then
	ok deb/l1/dmesg "L1 kernel log has no WARNING/BUG/Oops"
else
	bad deb/l1/dmesg "L1 kernel log has warnings, or none was written (see $run/l1/dmesg.txt)"
fi
echo "deb: $pass passed, $fail failed"
[ "$fail" = 0 ]
