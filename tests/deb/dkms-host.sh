#!/bin/sh
# dkms-host.sh VERSION ABI SRCTREE OUT: DKMS on the host with the packaged
# svmtrace-dkms (SRCTREE is its usr/src), run by deb.sh under `unshare -m`:
# OUT/var becomes /var/lib/dkms in this mount namespace only, so the
# host's DKMS state (and its signing key) are not touched.
#   1. dkms add, dkms build -k ABI, the built modules to OUT/module,
#      dkms mktarball --binaries-only to OUT/svmtrace-VERSION.dkms.tar.gz;
#      DKMS's output in OUT/build.txt, its status in OUT/build.rc.
#   2. What DKMS does for kernels it must not build for, each against a
#      headers directory made for it from a real one (its .config and the
#      Debian version in include/generated/package.h) under OUT/fake,
#      output in OUT/refuse-CASE.txt, status in OUT/refuse-CASE.rc:
#        mismatch  a 6.12 kernel of another Debian version than the
#                  installed linux-source-6.12
#        series    a 6.8 kernel
#        rt        a PREEMPT_RT 6.12 kernel
set -u
version=$1 abi=$2 src=$3 out=$4
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/var"
mount --bind "$out/var" /var/lib/dkms || exit 1

{
	dkms add -m svmtrace -v "$version" --sourcetree "$src" &&
		nice dkms build -m svmtrace -v "$version" -k "$abi" --sourcetree "$src" &&
		cp -r "/var/lib/dkms/svmtrace/$version/$abi/x86_64/module" "$out/module" &&
		dkms mktarball -m svmtrace -v "$version" -k "$abi" --binaries-only \
			--archive "$out/svmtrace-$version.dkms.tar.gz"
} >"$out/build.txt" 2>&1
echo $? >"$out/build.rc"

# fake_headers NAME REAL-HEADERS DEBIAN-VERSION [CONFIG-LINE]
fake_headers() {
	h=$out/fake/$1
	mkdir -p "$h/include/generated"
	cp "$2/.config" "$h/.config"
	[ -z "${4:-}" ] || echo "$4" >>"$h/.config"
	echo "#define LINUX_PACKAGE_ID \" Debian $3\"" >"$h/include/generated/package.h"
	echo "$h"
}
real612=$(sh -c ". '$top/kmod/kernel.sh' && kernel_default 6.12") || exit 1
hdr612=/usr/src/linux-headers-$real612
refuse() {	# refuse CASE KVER HEADERS
	dkms build -m svmtrace -v "$version" -k "$2" --kernelsourcedir "$3" --sourcetree "$src" \
		>"$out/refuse-$1.txt" 2>&1
	echo $? >"$out/refuse-$1.rc"
	dkms status -m svmtrace -v "$version" -k "$2" >>"$out/refuse-$1.status" 2>&1
}
refuse mismatch 6.12.1+deb12-amd64 "$(fake_headers mismatch "$hdr612" 6.12.1-1~deb12u1)"
refuse series 6.8.12-1-amd64 "$(fake_headers series "$hdr612" 6.8.12-1)"
refuse rt 6.12.1+deb12-rt-amd64 "$(fake_headers rt "$hdr612" 6.12.1-1~deb12u1 CONFIG_PREEMPT_RT=y)"
