# libsvmtrace: the v5 trace format (encoder, decoder, frames, files).
LIB_SRCS += $(addprefix userspace/lib/trace/,encode.c decode.c predict.c mem.c writer.c reader.c \
	lz4_block.c error.c names.c raw.c)
LIB_LIBS += -llz4
