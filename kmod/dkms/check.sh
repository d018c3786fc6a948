#!/bin/sh
# kmod/dkms/check.sh build KVER [HEADERS] | installed
#
# What DKMS (dkms.conf) asks before and after building svmtrace's modules,
# each answer one line on stderr saying what to do.
#
#   build KVER [HEADERS]
#                (PRE_BUILD, and again before kmod/build.sh in MAKE): can
#                kmod/build.sh build for KVER against HEADERS (DKMS's
#                kernel source directory) (kmod/kernel.sh: the series,
#                PREEMPT_RT, the headers, linux-source-SERIES of their
#                Debian version), and under Secure Boot, has DKMS a key to
#                sign the modules with?  DKMS ignores PRE_BUILD's status
#                and hides MAKE's output in make.log: PRE_BUILD shows the
#                verdict, MAKE enforces it.
#   installed    (POST_INSTALL): under Secure Boot, is DKMS's key enrolled
#                (the modules load only then)?  Never fails.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/kmod/kernel.sh"

# DKMS's signing certificate: framework.conf's mok_certificate, else its
# default (DKMS creates it with openssl before the first signed build).
mok_certificate=/var/lib/dkms/mok.pub
for f in /etc/dkms/framework.conf /etc/dkms/framework.conf.d/*.conf; do
	[ -r "$f" ] || continue
	c=$(sed -n 's/^[[:space:]]*mok_certificate=["'\'']\{0,1\}\([^"'\'']*\).*/\1/p' "$f" | tail -n 1)
	[ -z "$c" ] || mok_certificate=$c
done
secure_boot() {
	command -v mokutil >/dev/null 2>&1 && mokutil --sb-state 2>/dev/null | grep -q 'SecureBoot enabled'
}

case ${1:-} in
build)
	[ -n "${2:-}" ] || kernel_die "usage: kmod/dkms/check.sh build KVER [HEADERS] | installed"
	kernel_resolve "$2" "${3:-}"
	if secure_boot && [ ! -f "$mok_certificate" ]; then
		kernel_die "Secure Boot is on and DKMS has no key to sign the modules with" \
			"($mok_certificate; DKMS makes one with openssl): apt-get install openssl," \
			"then dkms autoinstall -k $2"
	fi
	kernel_note "$2: linux-source-$series $src_ver and its headers; building" ;;
installed)
	if secure_boot && ! mokutil --test-key "$mok_certificate" 2>/dev/null | grep -q 'already enrolled'; then
		kernel_note "Secure Boot is on and DKMS's key is not enrolled, so the modules" \
			"will not load: mokutil --import $mok_certificate, reboot, enroll it"
	fi ;;
*)
	kernel_die "usage: kmod/dkms/check.sh build KVER [HEADERS] | installed" ;;
esac
exit 0
