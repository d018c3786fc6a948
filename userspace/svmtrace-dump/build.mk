# svmtrace-dump: offline analysis of v5 files, one subcommand per cmd_*.c.
DUMP_SRCS := $(addprefix userspace/svmtrace-dump/,main.c cmd_inspect.c cmd_dump.c cmd_stats.c \
	cmd_pack.c cmd_calltree.c cmd_export.c cmd_report.c files.c lookahead.c out.c counts.c \
	analysis.c memtext.c x64dbg_mem.c) $(CLI_SRCS)
$(eval $(call program,svmtrace-dump,$(DUMP_SRCS),-lcapstone -ljson-c))
DEB_PACKAGES += libcapstone-dev
MAN_PAGES += docs/man/svmtrace-dump.1
