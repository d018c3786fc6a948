# Sourced by e2e.sh: the lab's throughput report from l1-lab.sh's bench
# rounds ($run/l1/bench, $run/l1/capture/bench-rN).  Each figure is the
# median of three rounds; the rounds interleave the three measurements so a
# busy host slows them alike.

median3() { sort -n | sed -n 2p; }

# stock_rate SET: median steps/s of stock single-stepping on SET.
stock_rate() {
	for r in 1 2 3; do
		sed -n 's/^singlestep .*steps_per_s=\([0-9]*\).*/\1/p' "$run/l1/bench/$1-r$r.txt" 2>/dev/null
	done | median3
}

# capture_rate: median steps/s of ring capture (records over the VMM's run time).
capture_rate() {
	for r in 1 2 3; do
		d=$run/l1/capture/bench-r$r
		secs=$(sed -n 's/^run seconds=\([0-9.]*\).*/\1/p' "$d/vmm.txt" 2>/dev/null)
		steps=$(sed -n 's/^total written=\([0-9]*\).*/\1/p' "$d/capture.txt" 2>/dev/null)
		awk -v s="${steps:-0}" -v t="${secs:-0}" 'BEGIN { if (t > 0 && s > 0) printf "%d\n", (s - 1) / t }'
	done | median3
}

bench_report() {
	packaged=$(stock_rate packaged)
	echo "bench: stock KVM_SET_GUEST_DEBUG single-step (exit to userspace per step), packaged modules: ${packaged:-?} steps/s"
	[ -n "$modules" ] || return 0
	ours=$(stock_rate ours)
	ring=$(capture_rate)
	echo "bench: the same on our modules, unarmed: ${ours:-?} steps/s"
	echo "bench: ring capture (records written, ring holding the whole run): ${ring:-?} steps/s"
	awk -v r="${ring:-0}" -v p="${packaged:-0}" -v o="${ours:-0}" 'BEGIN {
		if (p > 0) printf "bench: ratio ring capture / stock single-step (packaged) = %.2f (target >= 2)\n", r / p
		if (p > 0) printf "bench: ratio stock single-step ours unarmed / packaged = %.2f\n", o / p }'
}
