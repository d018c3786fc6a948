#!/bin/sh
# deb.sh: the Debian packages of make deb, as a user gets them (docs/install.md).
#   tests/deb/deb.sh
# 1. lintian (--pedantic, overrides as debian/*.lintian-overrides state them)
#    on every package: any tag fails.
# 2. DKMS, on the host, builds the modules for the lab's 6.1 kernel from
#    svmtrace-dkms's packaged source (dkms add/build with the package's
#    dkms.conf, in a private mount namespace whose /var/lib/dkms is a
#    directory under the run: the host's DKMS state is not touched), then
#    dkms mktarball --binaries-only.  That build must give the modules make
#    kmod gives (srcversion, vermagic).  Why on the host: L1 runs under
#    TCG, where the same kbuild of KVM takes tens of minutes; the tarball
#    is DKMS's own way to ship built modules, and the postinst in L1 loads
#    it instead of building (l1-deb.sh).
# 3. L1 (run-l1.sh --hostroot, the host's userspace, Debian's 6.1 kernel and
#    its packaged modules) installs the packages with dpkg -i, loads the
#    modules from updates/dkms with modprobe, runs svmtraced from
#    /usr/bin on the Windows-layout guest, removes svmtrace-dkms with
#    apt-get remove and loads the distribution's modules again
#    (tests/deb/l1-deb.sh).  Judged here, the trace against the reference
#    model as in make e2e.
# Prints "N passed, N failed".  Environment: BUILD (default build),
# DEB_TIMEOUT (L1 seconds, default 900), E2E_WIN_SEED (as make e2e).
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
for d in "$debs"/*.deb; do
	p=$(dpkg-deb -f "$d" Package)
	if lintian --pedantic --info --fail-on error,warning,info,pedantic "$d" \
		>"$run/lintian-$p.txt" 2>&1; then
		ok "deb/lintian/$p" "no tags$(grep -c '^O: ' "$run/lintian-$p.txt" | sed 's/^0$//; s/^[1-9].*/ besides & override(s) (debian\/*.lintian-overrides)/')"
	else
		bad "deb/lintian/$p" "$(grep -v '^N:' "$run/lintian-$p.txt" | grep -v 'root privileges' | tr '\n' ';')"
	fi
	case $p in *-dbgsym) ;; *) cp "$d" "$run/debs/" ;; esac
done

# --- 2. DKMS builds from the packaged source ----------------------------------
abi=$(kernel_abi_pinned) || { echo "deb: cannot resolve the lab kernel's ABI" >&2; exit 1; }
dk=$run/dkms
mkdir -p "$dk/var" "$dk/root"
dpkg-deb -x "$debs/svmtrace-dkms_${version}_amd64.deb" "$dk/root"
tarball=$run/svmtrace-$version.dkms.tar.gz
src=$dk/root/usr/src
unshare -m sh -c "mount --bind '$dk/var' /var/lib/dkms &&
	dkms add -m svmtrace -v '$version' --sourcetree '$src' &&
	nice dkms build -m svmtrace -v '$version' -k '$abi' --sourcetree '$src' &&
	cp -r /var/lib/dkms/svmtrace/'$version'/'$abi'/x86_64/module '$dk/module' &&
	dkms mktarball -m svmtrace -v '$version' -k '$abi' --binaries-only --archive '$tarball'" \
	>"$dk/dkms.txt" 2>&1
echo $? >"$dk/rc"
ours=$build/kmod/6.1
if [ "$(cat "$dk/rc")" = 0 ] && [ -s "$tarball" ] && for m in kvm kvm-amd; do
	[ "$(modinfo -F srcversion "$dk/module/$m.ko")" = "$(modinfo -F srcversion "$ours/$m.ko")" ] &&
		[ "$(modinfo -F vermagic "$dk/module/$m.ko")" = "$(modinfo -F vermagic "$ours/$m.ko")" ] || exit 1
done; then
	ok deb/dkms/build "dkms build for $abi from the packaged source: the modules of make kmod (srcversion $(modinfo -F srcversion "$dk/module/kvm.ko"), $(modinfo -F vermagic "$dk/module/kvm.ko" | cut -d' ' -f1)); $(grep -c '^Signing module' "$dk/dkms.txt") signed with DKMS's key"
else
	bad deb/dkms/build "dkms exit $(cat "$dk/rc"): $(tail -n 5 "$dk/dkms.txt" | tr '\n' ';')"
	echo "deb: $pass passed, $fail failed"
	exit 1
fi

# --- 3. installed in L1 ------------------------------------------------------------
win=$run/win
seed=${E2E_WIN_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
"$here/win/images.sh" "$build" "$win" "$seed" win10 >"$run/win10.log" 2>&1 ||
	{ echo "deb: laying out win10: $(cat "$run/win10.log")" >&2; exit 1; }
echo "info: the Windows-layout guest laid out with seed $seed (E2E_WIN_SEED=$seed repeats it)"
model_win win10-pid win10 1200
adds="--add $run/debs --add $tarball --add $top/tests/deb/l1-deb.sh --add $here/l1-capture.sh"
adds="$adds --add $here/l1-win.sh --add $bin/svmtrace-e2e-vmm --add $win/win10.elf"
adds="$adds --add $win/win10.targets $(ls "$top"/tests/data/profiles/*.json.xz | sed 's/^/--add /')"
# shellcheck disable=SC2086
nice "$here/run-l1.sh" --hostroot --kabi "$abi" --out "$run/l1" --timeout "${DEB_TIMEOUT:-900}" \
	$adds -- sh l1-deb.sh win10 1200 >"$run/l1.log" 2>&1
echo "info: L1 ended with $?; stages (L1 uptime): $(tr '\n' ' ' <"$run/l1/deb/stages" 2>/dev/null)"
d=$run/l1/deb
cap=$run/l1/deb	# the lab's judges read $cap/NAME
[ ! -s "$d/failures" ] || bad deb/l1/steps "$(tr '\n' ';' <"$d/failures")"

installed=$(grep -c ' install ok installed$' "$d/installed.txt" 2>/dev/null)
if [ "$(cat "$d/install.rc" 2>/dev/null)" = 0 ] && [ "$installed" = 4 ] &&
	grep -q "^svmtraced /usr/bin/svmtraced$" "$d/paths.txt"; then
	ok deb/install "dpkg -i of the four packages: $(grep -m 1 'installed' "$d/install.txt" 2>/dev/null); $(grep -i 'dkms.tar.gz\|Installing to' "$d/install.txt" | head -n 2 | tr '\n' ' ')"
else
	bad deb/install "dpkg -i exit $(cat "$d/install.rc" 2>/dev/null), $installed installed: $(tail -n 5 "$d/install.txt" 2>/dev/null | tr '\n' ';')"
fi
if grep -qx "r15" "$d/libuse.txt" 2>/dev/null &&
	grep -q "libsvmtrace.so.0 => /usr/lib/x86_64-linux-gnu/libsvmtrace.so.0" "$d/libuse.txt"; then
	ok deb/libsvmtrace-dev "a program built with pkg-config --cflags --libs svmtrace runs on /usr/lib/x86_64-linux-gnu/libsvmtrace.so.0"
else
	bad deb/libsvmtrace-dev "$(tr '\n' ';' <"$d/libuse.txt" 2>/dev/null)"
fi

s=$d/state-installed.txt
want="$(modinfo -F srcversion "$dk/module/kvm.ko") kvm_amd $(modinfo -F srcversion "$dk/module/kvm-amd.ko")"
if grep -q "^kvm /lib/modules/$abi/updates/dkms/kvm.ko$" "$s" 2>/dev/null &&
	grep -q "^kvm_amd /lib/modules/$abi/updates/dkms/kvm-amd.ko$" "$s" &&
	grep -q "^dkms svmtrace/$version, $abi, x86_64: installed" "$s" &&
	grep -q "^loaded kvm $want$" "$s" && grep -q '^svmtrace_device present$' "$s"; then
	ok deb/modules/installed "modprobe loads DKMS's modules from updates/dkms ($(grep '^loaded' "$s")), /dev/svmtrace present"
else
	bad deb/modules/installed "$(tr '\n' ';' <"$s" 2>/dev/null) (want srcversions $want)"
fi

. "$here/judge-capture.sh"
. "$here/judge-win.sh"
judge_win_armed win-daemon win10 1200
judge_capture_rc win-daemon
judge_audit win-daemon
judge_armed_results win-daemon "$run/expect/win10-pid"
judge_trace win-daemon "$run/expect/win10-pid"
judge_win_first win-daemon win10 1200

s=$d/state-removed.txt
packaged=$(tr '\n' ' ' <"$d/packaged.srcversion" 2>/dev/null | awk '{ print $1 " kvm_amd " $2 }')
if [ "$(cat "$d/remove.rc" 2>/dev/null)" = 0 ] &&
	grep -q "^kvm /lib/modules/$abi/kernel/arch/x86/kvm/kvm.ko$" "$s" 2>/dev/null &&
	grep -q "^kvm_amd /lib/modules/$abi/kernel/arch/x86/kvm/kvm-amd.ko$" "$s" &&
	grep -q "^dkms $" "$s" && grep -q "^loaded kvm $packaged$" "$s" &&
	grep -q '^svmtrace_device absent$' "$s"; then
	ok deb/modules/removed "apt-get remove svmtrace-dkms: modprobe loads the distribution's modules again ($(grep '^loaded' "$s")), no /dev/svmtrace"
else
	bad deb/modules/removed "apt-get remove exit $(cat "$d/remove.rc" 2>/dev/null): $(tr '\n' ';' <"$s" 2>/dev/null) (want $packaged)"
fi
if [ -s "$run/l1/dmesg.txt" ] && ! grep -E 'WARNING|BUG|Oops|Call Trace' "$run/l1/dmesg.txt"; then
	ok deb/l1/dmesg "L1 kernel log has no WARNING/BUG/Oops"
else
	bad deb/l1/dmesg "L1 kernel log has warnings, or none was written (see $run/l1/dmesg.txt)"
fi
echo "deb: $pass passed, $fail failed"
[ "$fail" = 0 ]
