# Sourced by the lab scripts: find and unpack the Debian kernel image the L1
# guest boots.  The image is fetched with `apt-get download` and unpacked with
# `dpkg-deb -x` under the build tree -- never installed on the host, whose
# kernel we cannot change anyway (DESIGN.md: the host /dev/kvm is not SVM).

# The kernel series svmtrace supports and how a release names its series
# (kernel_series_of): kmod/kernel.sh, shared with the build.
. "$top/kmod/kernel.sh"

# kernel_abi_of_module KO: the ABI (e.g. 6.1.0-57-amd64) a module was built
# for, from its vermagic, so L1 boots exactly the kernel the kmod targets.
kernel_abi_of_module() {
	modinfo -F vermagic "$1" | cut -d' ' -f1
}

# kernel_abi_pinned: the image ABI that matches the pinned linux-source-6.1
# (same Debian version), resolved from apt at run time because the archive
# moves.  Prints e.g. 6.1.0-57-amd64.
kernel_abi_pinned() {
	src=$(apt-cache show linux-source-6.1 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	[ -n "$src" ] || { echo "kernel: apt knows no linux-source-6.1 (run apt-get update)" >&2; return 1; }
	abi=$(apt-cache show linux-image-amd64 2>/dev/null | awk -v v="$src" '
		/^Version: / { ver = $2 }
		/^Depends: / && ver == v { if (match($0, /linux-image-[0-9.]+-[0-9]+-amd64/))
			print substr($0, RSTART + 12, RLENGTH - 12) }' | head -n 1)
	[ -n "$abi" ] || { echo "kernel: no linux-image-amd64 of version $src in apt" >&2; return 1; }
	echo "$abi"
}

# kernel_fetch ABI DIR: unpack linux-image-ABI into DIR (once; a stamp file
# marks a complete unpack) and index its modules with depmod.  Afterwards
# DIR/vmlinuz and DIR/lib/modules/ABI exist.  Labs started side by side
# (kernels.sh, or two at once by hand) share DIR: the first unpacks it under
# DIR.lock, the others wait for it and find it complete.
kernel_fetch() {
	abi=$1 dir=$2
	case $dir in /*) ;; *) dir=$PWD/$dir ;; esac	# apt-get runs in $dir/deb
	[ -e "$dir/.complete" ] && return 0
	mkdir -p "$(dirname "$dir")" || return 1
	(flock 9 && kernel_unpack "$abi" "$dir") 9>"$dir.lock"
}

# kernel_unpack ABI DIR: kernel_fetch's work, under its lock.
kernel_unpack() {
	[ -e "$2/.complete" ] && return 0
	rm -rf "$2" && mkdir -p "$2/deb" || return 1
	echo "kernel: fetching linux-image-$1" >&2
	kernel_image_download "$1" "$2/deb" || {
		cat "$2/deb/apt.log" >&2; echo "kernel: apt-get download linux-image-$1 failed" >&2; return 1; }
	dpkg-deb -x "$2"/deb/*.deb "$2/root" || return 1
	depmod -b "$2/root" "$1" || return 1
	ln -s "root/boot/vmlinuz-$1" "$2/vmlinuz"
	rm -rf "$2/deb"
	touch "$2/.complete"
}

# kernel_module_closure MODDIR NAME...: every module file (relative to
# MODDIR) that NAME... need, dependencies first, each once; modules built
# into the kernel (6.12's virtio_pci) need no file.
kernel_module_closure() {
	moddir=$1; shift
	awk -v want="$*" '
		FILENAME ~ /modules\.builtin$/ { name = $1; sub(/.*\//, "", name); sub(/\.ko$/, "", name)
		  gsub(/-/, "_", name); builtin[name] = 1; next }
		{ sub(/:$/, "", $1); name = $1; sub(/.*\//, "", name); sub(/\.ko.*$/, "", name)
		  gsub(/-/, "_", name); path[name] = $1
		  deps[name] = ""; for (i = 2; i <= NF; i++) { d = $i; sub(/.*\//, "", d)
			sub(/\.ko.*$/, "", d); gsub(/-/, "_", d); deps[name] = deps[name] " " d } }
		function visit(n,   k, a, i) {
			if (n in seen || n in builtin) return; seen[n] = 1
			if (!(n in path)) { print "kernel: no module " n > "/dev/stderr"; bad = 1; return }
			k = split(deps[n], a, " "); for (i = k; i >= 1; i--) visit(a[i])
			print path[n] }
		END { n = split(want, w, " "); for (i = 1; i <= n; i++) { m = w[i]; gsub(/-/, "_", m); visit(m) }
		      exit bad }' "$moddir/modules.builtin" "$moddir/modules.dep"
}

# kernel_modules_unpack MODDIR DEST ORDER NAME...: the modules NAME... need
# (kernel_module_closure) copied under DEST, compressed ones (6.12 ships
# .ko.xz) unpacked so that busybox's insmod loads them; ORDER gets their
# paths under DEST in load order.
kernel_modules_unpack() {
	moddir=$1 dest=$2 order=$3; shift 3
	kernel_module_closure "$moddir" "$@" >"$order.all" || return 1
	: >"$order"
	while read -r m; do
		mkdir -p "$dest/$(dirname "$m")"
		case $m in
		*.ko.xz) xz -dc "$moddir/$m" >"$dest/${m%.xz}" || return 1; m=${m%.xz} ;;
		*.ko.zst) zstd -qdc "$moddir/$m" >"$dest/${m%.zst}" || return 1; m=${m%.zst} ;;
		*) cp "$moddir/$m" "$dest/$m" || return 1 ;;
		esac
		echo "$m" >>"$order"
	done <"$order.all"
	rm -f "$order.all"
}
