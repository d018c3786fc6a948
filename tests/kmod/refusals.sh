#!/bin/sh
# kmod/build.sh refuses the kernels it cannot build for, each in one line on
# stderr that says what to do, exit 1, and nothing under its OUTDIR:
# - a series without a patch set (kmod/patches/SERIES);
# - a kernel without headers;
# - headers of another Debian version than the installed linux-source-6.12
#   (Debian's own linux-headers package of another 6.12 version, unpacked);
# - a PREEMPT_RT kernel (Debian's linux-headers-*-rt-amd64, unpacked);
# - headers that are not a Debian kernel's.
# The packages come from apt (apt-get download) and are never installed.
# Environment: BUILD (default build).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"
need_cmd apt-get "fetching Debian's headers packages"
need_cmd dpkg-deb "unpacking them"
. "$top/kmod/kernel.sh"
work=$top/${BUILD:-build}/kmod-refusals
rm -rf "$work/out" && mkdir -p "$work/debs"
pass=0 fail=0

# refused NAME MESSAGE ARG...: build.sh ARG... $work/out/NAME fails with one
# line on stderr that contains MESSAGE, and leaves no file.
refused() {
	name=$1 msg=$2; shift 2
	if "$top/kmod/build.sh" "$@" "$work/out/$name" >"$work/$name.out" 2>"$work/$name.err"; then
		echo "FAIL: kmod/refuse/$name: build.sh $* succeeded"; fail=$((fail + 1)); return
	fi
	if [ "$(wc -l <"$work/$name.err")" -ne 1 ] || ! grep -qF -- "$msg" "$work/$name.err"; then
		echo "FAIL: kmod/refuse/$name: expected one line with '$msg', got:"; cat "$work/$name.err"
		fail=$((fail + 1))
	elif [ -n "$(find "$work/out" -type f 2>/dev/null)" ]; then
		echo "FAIL: kmod/refuse/$name: files left under $work/out"; fail=$((fail + 1))
	else
		echo "PASS: kmod/refuse/$name: $(cat "$work/$name.err")"; pass=$((pass + 1))
	fi
}

# unpack PACKAGE: Debian's package, unpacked under $work/debs (once).
unpack() {
	[ -e "$work/debs/$1/.complete" ] && return 0
	rm -rf "$work/debs/$1" && mkdir -p "$work/debs/$1"
	(cd "$work/debs/$1" && apt-get download -q "$1" >apt.log 2>&1) ||
		{ cat "$work/debs/$1/apt.log"; echo "FAIL: apt-get download $1"; return 1; }
	dpkg-deb -x "$work/debs/$1"/*.deb "$work/debs/$1/root" && touch "$work/debs/$1/.complete"
}

refused unsupported "Linux 6.8 (6.8.12-1-amd64) is not supported: svmtrace supports the series 6.1, 6.12" \
	--kver 6.8.12-1-amd64
refused no-headers "no headers for 6.12.1+deb12-amd64 at /usr/src/linux-headers-6.12.1+deb12-amd64: apt-get install linux-headers-6.12.1+deb12-amd64" \
	--kver 6.12.1+deb12-amd64

# Another 6.12 than the installed linux-source-6.12, and the RT flavour of
# the installed one.
src=$(kernel_pkg_version linux-source-6.12)
[ -n "$src" ] || skip_or_fail "linux-source-6.12 is not installed (make deps)"
cur=$(kernel_default 6.12) || exit 1
other=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb[0-9]+-amd64$' |
	awk '{ print $1 }' | sort -V | while read -r p; do
		v=$(apt-cache show "$p" | sed -n 's/^Version: //p' | head -n 1)
		[ "$v" = "$src" ] || echo "$p $v"
	done | tail -n 1)
[ -n "$other" ] || skip_or_fail "apt knows no linux-headers-6.12.*-amd64 but the installed version's"
set -- $other
okver=${1#linux-headers-}
unpack "$1" || exit 1
refused mismatch "linux-source-6.12 $src does not match the headers of $okver ($2): apt-get install linux-source-6.12=$2" \
	--kver "$okver" --headers "$work/debs/$1/root/usr/src/$1"
rt=linux-headers-${cur%-amd64}-rt-amd64
unpack "$rt" || exit 1
refused rt "${rt#linux-headers-} is a PREEMPT_RT kernel, which svmtrace does not support" \
	--kver "${rt#linux-headers-}" --headers "$work/debs/$rt/root/usr/src/$rt"
mkdir -p "$work/plain"
cp "/usr/src/linux-headers-$cur/.config" "$work/plain/"
refused not-debian "are not a Debian kernel's headers" --kver "$cur" --headers "$work/plain"

echo "kmod refusals: $pass passed, $fail failed"
[ $fail -eq 0 ]
