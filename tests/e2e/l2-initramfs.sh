#!/bin/sh
# l2-initramfs.sh OUT.cpio: the initramfs of the lab's Linux L2
# (vm-configs/lab-linux.xml): a static busybox and an /init that prints
# "svmtrace-lab: ready" on the console once the kernel ran it, then idles.
set -eu
busybox=$(command -v busybox) || { echo "l2-initramfs: busybox not installed (make deps)" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/proc"
cp "$busybox" "$root/bin/busybox"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
echo "svmtrace-lab: ready at $(/bin/busybox cut -d' ' -f1 /proc/uptime) s"
while :; do /bin/busybox sleep 3600; done
INIT
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$1"
