# libsvmtrace ring: the consumer side of the per-vCPU rings (mmap, acquire /
# release, counters).  API: include/svmtrace/ring.h.  The userspace producer
# that tests and benchmarks use lives in tests/ring/.
LIB_SRCS += userspace/lib/ring/consumer.c
