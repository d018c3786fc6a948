# svmtrace-capture: attach, arm, drain the per-vCPU rings into v5 files.
CAPTURE_SRCS := userspace/svmtrace-capture/main.c userspace/svmtrace-capture/new_processes.c \
	$(CAPTURE_COMMON_SRCS) $(AUDIT_SRCS) $(CLI_SRCS)
$(eval $(call program,svmtrace-capture,$(CAPTURE_SRCS),$(AUDIT_LIBS)))
MAN_PAGES += docs/man/svmtrace-capture.1
