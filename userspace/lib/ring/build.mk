# libsvmtrace ring: the consumer side of the per-vCPU rings (mmap, acquire /
# release, counters) and a userspace producer with the kernel's protocol
# for tests and benchmarks.  API: include/svmtrace/ring.h.
LIB_SRCS += userspace/lib/ring/consumer.c userspace/lib/ring/producer.c
