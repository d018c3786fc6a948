# svmtrace-vmi: process list, PID -> CR3 + entry page, modules, on memory dumps
# or a running VM (through /dev/svmtrace, the controller code of userspace/common).
SVMTRACE_VMI_SRCS := $(wildcard userspace/svmtrace-vmi/*.c) userspace/common/control.c $(CLI_SRCS)
$(eval $(call program,svmtrace-vmi,$(SVMTRACE_VMI_SRCS)))
MAN_PAGES += docs/man/svmtrace-vmi.1
