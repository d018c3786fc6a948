# Command-line helpers shared by every svmtrace program (not part of the
# library API: programs link the objects directly).
CLI_SRCS := userspace/common/cli.c
# The capture pieces svmtrace-capture and svmtraced share.
CAPTURE_COMMON_SRCS := $(addprefix userspace/common/,control.c stream.c progress.c capture_run.c \
	target_opts.c)
