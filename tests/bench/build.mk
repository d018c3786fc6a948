# Benchmarks (make bench): numbers and ratios, never pass/fail timings.
$(eval $(call program,svmtrace-bench-trace,tests/bench/bench_trace.c tests/bench/raw_slots.c $(CLI_SRCS),,TOOLS))

.PHONY: bench-trace
bench-trace: all
	@rm -f $(BUILD)/bench/table
	BIN=$(BUILD)/bin BENCH_DIR=$(BUILD)/bench sh tests/bench/trace.sh
BENCH_STEPS += bench-trace

# The capture consumer (ring + v5 writer) against a synthetic producer
# thread replaying real states (tests/bench/bench_ring.c).
$(eval $(call program,svmtrace-bench-ring,tests/bench/bench_ring.c tests/bench/raw_slots.c tests/ring/ring_producer.c $(CLI_SRCS),,TOOLS))

.PHONY: bench-ring
bench-ring: all
	BIN=$(BUILD)/bin BENCH_DIR=$(BUILD)/bench sh tests/bench/ring.sh
BENCH_STEPS += bench-ring

# dump --symbols --disasm on one core (tests/bench/analysis.sh; the target is >= 1 M rows/s).
.PHONY: bench-analysis
bench-analysis: all
	BIN=$(BUILD)/bin BENCH_DIR=$(BUILD)/bench sh tests/bench/analysis.sh
BENCH_STEPS += bench-analysis

# Memory operands: file size with and without them on the trace workloads
# (recorded with svmtrace-steprec --mem), per record and per access.
.PHONY: bench-mem
bench-mem: all
	BIN=$(BUILD)/bin BENCH_DIR=$(BUILD)/bench sh tests/bench/mem.sh
BENCH_STEPS += bench-mem
