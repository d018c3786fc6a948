# libsvmtrace: what every part shares -- the status names (svmtrace/status.h)
# and the little-endian loads and stores (le.h).
LIB_SRCS += userspace/lib/common/status.c
