#!/bin/sh
# l1-stepprofile.sh ITERATIONS PATH... (inside an L1 booted by step-profile.sh
# with the insncount plugin): run bench.bin (4 * ITERATIONS + 2 steps) on
# each PATH on our modules, with svmtrace-e2e-marker right before the guest
# starts and right after it is done, so the plugin's snapshots bracket each
# run.  PATHs, as in l1-stepcost.sh: paused (armed, capture paused), producer
# (consumer stopped until the guest is done), ring (svmtrace-capture
# draining meanwhile).  $E2E_OUT/stepprofile/ gets kallsyms.txt (our
# modules loaded), paths (one line per PATH, in marker order) and each
# run's capture_run directory.
set -u
iterations=$1
shift
cd /e2e
. ./l1-capture.sh
CAPTURE_AUDIT=
out=$E2E_OUT/stepprofile
mkdir -p "$out"
: >"$out/paths"
kvm-modules load ours || { echo "cannot load our modules" >>"$out/failures"; exit 1; }
# Kernel addresses for the symbols (root reads them when kptr_restrict is 0).
echo 0 >/proc/sys/kernel/kptr_restrict
cat /proc/kallsyms >"$out/kallsyms.txt"
after='(wait_line "$dir/vmm.txt" "^holding" 300 "$vmm_pid"; svmtrace-e2e-marker'
for path in "$@"; do
	case $path in
	paused)
		CAPTURE_BEFORE_START='kill -USR1 $cap_pid; sleep 1; svmtrace-e2e-marker'
		CAPTURE_AFTER_START="$after) &" ;;
	producer)
		CAPTURE_BEFORE_START='kill -STOP $cap_pid; svmtrace-e2e-marker'
		CAPTURE_AFTER_START="$after; kill -CONT \$cap_pid) &" ;;
	ring)
		CAPTURE_BEFORE_START='svmtrace-e2e-marker'
		CAPTURE_AFTER_START="$after) &" ;;
	*) echo "unknown path $path" >>"$out/failures"; continue ;;
	esac
	CAPTURE_BEFORE_START=$CAPTURE_BEFORE_START CAPTURE_AFTER_START=$CAPTURE_AFTER_START \
		capture_run "$out/$path" -a "$iterations" kernel.bin bench.bin -- \
		--policy block --ring-slots 131072 || echo "$path capture failed" >>"$out/failures"
	# Both markers ran (the second one in the background): this run's pair.
	wait
	echo "$path" >>"$out/paths"
done
kvm-modules unload
