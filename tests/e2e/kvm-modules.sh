#!/bin/sh
# kvm-modules (inside L1): load or unload KVM.
#   kvm-modules load packaged   Debian's kvm.ko + kvm-amd.ko
#   kvm-modules load ours [P=V...]  our kvm.ko + kvm-amd.ko (from run-l1.sh
#                               --modules), kvm_amd with the parameters P=V too
#   kvm-modules unload          rmmod kvm_amd kvm
# Dependencies (irqbypass.ko, ccp.ko) always come from the packaged image and
# stay loaded, so the two builds can be swapped within one boot.  Our
# kvm-amd.ko of the lab's build (make kmod-lab) loads with
# svmtrace_test_fastpath=1: the emulated CPU has no NRIPS, and without it
# KVM's IRQs-off WRMSR fastpath never runs here; the modules users install
# have no such parameter.
set -e
loaded() {	# loaded PATH.ko: is that module in the kernel?
	n=${1##*/}; n=${n%.ko}
	grep -q "^$(echo "$n" | tr - _) " /proc/modules
}
load() {	# load packaged|ours [KVM_AMD-PARAMETER...]
	set=$1
	shift
	while read -r m; do
		f=/lib/kvm/packaged/$m
		params=
		case $m in */kvm.ko | */kvm-amd.ko) [ "$set" = ours ] && f=/lib/kvm/ours/${m##*/} ;; esac
		case $set:$m in ours:*/kvm-amd.ko) params=$* ;; esac
		case $set:$m in ours:*/kvm-amd.ko) ! grep -q svmtrace_test_fastpath "$f" ||
			params="svmtrace_test_fastpath=1 $params" ;; esac
		# shellcheck disable=SC2086
		loaded "$m" || insmod "$f" $params
	done </lib/kvm/packaged.order
}
case "$1 ${2:-}" in
"load packaged") load packaged ;;
"load ours")
	[ -f /lib/kvm/ours/kvm.ko ] ||
		{ echo "kvm-modules: no modules of ours in this L1 (run-l1.sh --modules)" >&2; exit 1; }
	shift 2
	load ours "$@" ;;
"unload ")
	rmmod kvm_amd
	rmmod kvm ;;
*)
	echo "usage: kvm-modules load packaged|ours | kvm-modules unload" >&2
	exit 2 ;;
esac
[ "$1" = unload ] || [ -c /dev/kvm ] || { echo "kvm-modules: /dev/kvm missing after load" >&2; exit 1; }
