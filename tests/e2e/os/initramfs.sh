#!/bin/sh
# initramfs.sh OUT.cpio MODDIR BINDIR: the initramfs of the Linux L2 of
# `make e2e-os` (docs/lab-internals.md, "A real Linux in L2"): a static busybox, the
# kernel's virtio-9p modules from MODDIR (the results share), the programs
# BINDIR/os-* and BINDIR/steprec (static), and tests/e2e/os/init.sh as /init.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
. "$here/../lib/kernel.sh"
busybox=$(command -v busybox) || { echo "os initramfs: busybox not installed (make deps)" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/out" "$root/lib/modules"
cp "$busybox" "$root/bin/busybox"
kernel_modules_unpack "$2" "$root/lib/modules" "$root/lib/modules/order" virtio_pci 9pnet_virtio 9p
cp "$3"/os-* "$3/steprec" "$root/bin/"
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$1"
