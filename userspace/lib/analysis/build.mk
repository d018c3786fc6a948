# libsvmtrace: analysis beside the traces (code.bin, module map and symbols).
LIB_SRCS += $(addprefix userspace/lib/analysis/,code.c symbols.c symbols_isf.c \
	json_get.c threads.c)
