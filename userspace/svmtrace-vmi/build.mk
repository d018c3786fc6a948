# svmtrace-vmi: process list, PID -> CR3 + entry page, modules, on memory dumps.
SVMTRACE_VMI_SRCS := $(wildcard userspace/svmtrace-vmi/*.c) $(CLI_SRCS)
$(eval $(call program,svmtrace-vmi,$(SVMTRACE_VMI_SRCS)))
MAN_PAGES += docs/man/svmtrace-vmi.1
