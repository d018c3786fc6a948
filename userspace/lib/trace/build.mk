# libsvmtrace: the v5 trace format.
LIB_SRCS += $(addprefix userspace/lib/trace/,)
LIB_LIBS += -llz4
