# Sourced by kmod/build.sh and the DKMS build (kmod/dkms/): which Debian
# kernel a build targets, and whether svmtrace supports it.
#
# A target is a kernel release (KVER, `uname -r` of the kernel that will load
# the modules: 6.1.0-57-amd64, 6.12.118+deb12-amd64).  Its headers are
# linux-headers-KVER's (/lib/modules/KVER/build), its KVM source the
# installed linux-source-SERIES tarball, which must be the Debian version
# the headers were built from (the archive carries one linux-source-SERIES
# at a time; a kernel of another version needs that version's source).
#
# Every function reports what is wrong on stderr as one line saying what to
# do (kernel_die), so that make, DKMS and apt show the user one sentence.

# Series with a hook patch in kmod/patches/SERIES.
KERNEL_SERIES_SUPPORTED="6.1 6.12"

kernel_die() {
	echo "kmod: $*" >&2
	exit 1
}

kernel_note() {
	echo "kmod: $*" >&2
}

# kernel_series_of KVER: 6.12.118+deb12-amd64 -> 6.12, 6.1.0-57-amd64 -> 6.1.
kernel_series_of() {
	echo "$1" | sed -n 's/^\([0-9]*\.[0-9]*\)[.-].*/\1/p'
}

# kernel_check_series SERIES KVER: refuse a series without a patch set.
kernel_check_series() {
	case " $KERNEL_SERIES_SUPPORTED " in
	*" $1 "*) ;;
	*) kernel_die "Linux ${1:-?} (${2:-?}) is not supported: svmtrace supports the series" \
		"$(echo "$KERNEL_SERIES_SUPPORTED" | sed 's/ /, /g')" ;;
	esac
}

# kernel_upstream DEBVERSION: 6.12.118-1~deb12u1 -> 6.12.118, 6.1.192-3 -> 6.1.192.
kernel_upstream() {
	echo "$1" | sed -n 's/^\([0-9]*\.[0-9]*\.[0-9]*\)-.*/\1/p'
}

# kernel_pkg_version PACKAGE: the installed version, or nothing.
kernel_pkg_version() {
	dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "install" && $3 == "installed" { print $4 }'
}

# kernel_default SERIES: the KVER of the plain amd64 flavour built from the
# installed linux-source-SERIES (the lab's kernel of that series): an
# installed linux-headers-*-amd64 of the same version, else the one the
# headers meta-package of that version depends on (then not installed, which
# kernel_resolve says).  Never -rt-amd64 or -cloud-amd64.
kernel_default() {
	series=$1
	kernel_check_series "$series" "linux-source-$series"
	src_ver=$(kernel_pkg_version "linux-source-$series")
	[ -n "$src_ver" ] || kernel_die "linux-source-$series is not installed (make deps, or" \
		"apt-get install linux-source-$series)"
	re="^linux-headers-$(echo "$series" | sed 's/\./\\./')[.][0-9]+(-[0-9]+|\\+deb[0-9]+)-amd64\$"
	kver=$(dpkg-query -W -f='${Package} ${Version} ${Status}\n' "linux-headers-$series.*" \
		2>/dev/null | awk -v v="$src_ver" -v re="$re" '
		$1 ~ re && $2 == v && / installed$/ { sub(/^linux-headers-/, "", $1); print $1 }' |
		sort -V | tail -n 1)
	[ -n "$kver" ] || kver=$(apt-cache show linux-headers-amd64 "linux-headers-$series-amd64" \
		2>/dev/null | awk -v v="$src_ver" '
		/^Version: / { ver = $2 }
		/^Depends: / && ver == v {
			if (match($0, /linux-headers-[0-9.]+(-[0-9]+|\+deb[0-9]+)-amd64/))
				print substr($0, RSTART + 14, RLENGTH - 14) }' | head -n 1)
	[ -n "$kver" ] || kernel_die "no linux-headers-*-amd64 of version $src_ver (linux-source-$series)" \
		"is installed or known to apt: apt-get update, then make deps"
	echo "$kver"
}

# kernel_resolve KVER [HEADERS]: check everything a build for KVER needs
# and set
#   series      6.12
#   hdr         its headers: HEADERS, else /lib/modules/KVER/build, else
#               /usr/src/linux-headers-KVER
#   hdr_ver     the Debian version the headers were built from (their
#               include/generated/package.h)
#   src_ver     linux-source-SERIES's version (equal to hdr_ver)
#   tarball     /usr/src/linux-source-SERIES.tar.xz
kernel_resolve() {
	kver=$1
	series=$(kernel_series_of "$kver")
	kernel_check_series "$series" "$kver"
	hdr=${2:-}
	[ -n "$hdr" ] || hdr=/lib/modules/$kver/build
	[ -d "$hdr" ] || hdr=/usr/src/linux-headers-$kver
	[ -f "$hdr/.config" ] || kernel_die "no headers for $kver at $hdr:" \
		"apt-get install linux-headers-$kver"
	kernel_check_config "$kver" "$hdr/.config"
	hdr_ver=$(sed -n 's/^#define LINUX_PACKAGE_ID " Debian \(.*\)"$/\1/p' \
		"$hdr/include/generated/package.h" 2>/dev/null || true)
	[ -n "$hdr_ver" ] || kernel_die "$hdr are not a Debian kernel's headers (no Debian version" \
		"in include/generated/package.h): svmtrace builds from Debian's linux-source packages"
	src_ver=$(kernel_pkg_version "linux-source-$series")
	tarball=/usr/src/linux-source-$series.tar.xz
	[ -n "$src_ver" ] || kernel_die "linux-source-$series is not installed: the modules for $kver" \
		"are built from it (apt-get install linux-source-$series=$hdr_ver)"
	[ "$src_ver" = "$hdr_ver" ] || kernel_die "linux-source-$series $src_ver does not match" \
		"the headers of $kver ($hdr_ver): apt-get install linux-source-$series=$hdr_ver"
	[ -f "$tarball" ] || kernel_die "$tarball missing although linux-source-$series is installed" \
		"(apt-get install --reinstall linux-source-$series)"
}

# kernel_check_config KVER CONFIG: the kernel configurations svmtrace refuses.
kernel_check_config() {
	if grep -q '^CONFIG_PREEMPT_RT=y' "$2"; then
		kernel_die "$1 is a PREEMPT_RT kernel, which svmtrace does not support (its step path" \
			"runs with interrupts off and takes locks that sleep on RT): use the amd64 flavour"
	fi
	grep -q '^CONFIG_KVM_AMD=m' "$2" ||
		kernel_die "$1 does not build kvm-amd as a module (CONFIG_KVM_AMD): nothing to replace"
}

# kernel_image_download KVER DIR: linux-image-KVER's .deb into DIR (apt-get
# download; nothing is installed), else linux-image-KVER-unsigned's: the
# same kernel and modules from Debian's linux source package, where the
# signed one comes from linux-signed-amd64, which can lag behind it.  apt's
# output goes to DIR/apt.log.
kernel_image_download() {
	(cd "$2" && { apt-get download -q "linux-image-$1" ||
		apt-get download -q "linux-image-$1-unsigned"; }) >"$2/apt.log" 2>&1
}
