#!/bin/sh
# l1-deb.sh: the Debian packages as a user installs them, inside an L1 that
# runs the host's userspace (run-l1.sh --hostroot), started by deb.sh.
#   l1-deb.sh IMAGE PID
# 1. The kernel's module directory is made writable (L1 binds the unpacked
#    image's modules read-only), holding the modules L1 uses, and gets its
#    headers' build link, as linux-headers-ABI gives it; the host's other kernels leave
#    /boot (the postinst would build for the newest installed kernel too,
#    under TCG: L1 is a machine with the one kernel it runs); man-db's
#    trigger is off.
# 2. dpkg -i of every /e2e/debs/*.deb: svmtrace-dkms's postinst loads
#    /e2e/svmtrace-VERSION.dkms.tar.gz (put in its TARBALL_ROOT,
#    /usr/share/svmtrace-dkms; the modules DKMS built on the host from this
#    package's source for this kernel, deb.sh says why) and installs them
#    into updates/dkms with depmod.
# 3. modprobe kvm_amd loads them; svmtraced, as installed (/usr/bin),
#    traces PID of the Windows-layout guest IMAGE (l1-win.sh's
#    win_daemon_run); then rmmod.
# 4. apt-get remove svmtrace-dkms; modprobe kvm_amd loads the distribution's
#    modules again.
# Records into $E2E_OUT/deb (judged on the host by deb.sh).
set -u
out=$E2E_OUT/deb
mkdir -p "$out"
cd /e2e
. ./l1-capture.sh	# wait_line, finish_run, keep_traces
. ./l1-win.sh		# win_daemon_run
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/e2e/bin
fail() { echo "$*" >>"$out/failures"; }
stage() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$out/stages"; }
abi=$(uname -r)
mods=/usr/lib/modules/$abi

# state TAG: what a user would look at -- where modprobe finds KVM, what
# DKMS says, whether svmtrace's control device is there once loaded.
state() {
	{
		echo "kvm $(modinfo -n kvm 2>&1)"
		echo "kvm_amd $(modinfo -n kvm_amd 2>&1)"
		echo "dkms $(dkms status svmtrace 2>&1 | tr '\n' ' ')"
		if modprobe kvm_amd 2>"$out/modprobe-$1.err"; then
			echo "loaded kvm taint=$(cat /sys/module/kvm/taint)" \
				"kvm_amd taint=$(cat /sys/module/kvm_amd/taint)"
		else
			echo "loaded none: $(cat "$out/modprobe-$1.err")"
		fi
		echo "svmtrace_device $([ -e /dev/svmtrace ] && echo present || echo absent)"
	} >"$out/state-$1.txt"
}

stage start
# What udev and systemd would set up: /dev/fd (DKMS uses <(...)), no dialogs.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
export DEBIAN_FRONTEND=noninteractive
# The kernel's module directory, writable, with the modules L1 uses (those
# loaded, 9p and virtio's, and KVM's closure) in place of the image's 4000
# (400 MB read over 9p: depmod, which DKMS runs on each install and
# removal, took eight minutes on them under TCG).
small=/tmp/modules
for m in $( { cut -d' ' -f1 /proc/modules | xargs -r modinfo -n
	modprobe --show-depends kvm_amd | awk '$1 == "insmod" { print $2 }'; } |
	sed "s|.*/modules/$abi/||" | sort -u); do
	mkdir -p "$small/${m%/*}" && cp "$mods/$m" "$small/$m"
done
cp "$mods"/modules.builtin* "$mods/modules.order" "$small/"
mount --bind "$small" "$mods" && depmod -a "$abi" || { fail "cannot make $mods writable"; exit 1; }
ln -sfn "/usr/src/linux-headers-$abi" "$mods/build"
for c in /boot/config-*; do [ "$c" = "/boot/config-$abi" ] || rm -f "$c"; done
rm -f /var/lib/man-db/auto-update
mkdir -p /usr/share/svmtrace-dkms && cp /e2e/svmtrace-*.dkms.tar.gz /usr/share/svmtrace-dkms/
stage prepared

dpkg -i /e2e/debs/*.deb >"$out/install.txt" 2>&1
echo $? >"$out/install.rc"
stage installed
dpkg-query -W -f='${Package} ${Version} ${Status}\n' svmtrace svmtrace-dkms libsvmtrace0 \
	libsvmtrace-dev >"$out/installed.txt" 2>&1
echo "svmtraced $(command -v svmtraced)" >"$out/paths.txt"
# libsvmtrace-dev as a user's build sees it.
cat >/tmp/use.c <<'C'
#include <stdio.h>
#include <svmtrace/trace.h>
int main(void)
{
	printf("%s\n", svmtrace_gpr_names[15]);
	return 0;
}
C
# shellcheck disable=SC2046
cc -o /tmp/use /tmp/use.c $(pkg-config --cflags --libs svmtrace) >"$out/libuse.txt" 2>&1 &&
	/tmp/use >>"$out/libuse.txt" 2>&1 && ldd /tmp/use | grep libsvmtrace >>"$out/libuse.txt"
stage library

state installed
win_daemon_run "$out/win-daemon" "$1" pid "$2" || fail "svmtraced: $(cat "$out/win-daemon/timeout.txt")"
stage traced
rmmod kvm_amd kvm || fail "rmmod of the installed modules"

apt-get remove -y svmtrace-dkms >"$out/remove.txt" 2>&1
echo $? >"$out/remove.rc"
stage removed
state removed
find "$mods/updates" -name '*.ko*' >"$out/updates-after" 2>/dev/null
rmmod kvm_amd kvm
