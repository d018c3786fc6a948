# Command-line helpers shared by every svmtrace program (not part of the
# library API: programs link the object directly).
CLI_SRCS := userspace/common/cli.c
