# svmtrace-capture: attach, arm, drain the per-vCPU rings into v5 files.
CAPTURE_SRCS := $(addprefix userspace/svmtrace-capture/,main.c control.c drain.c progress.c) \
	$(CLI_SRCS)
$(eval $(call program,svmtrace-capture,$(CAPTURE_SRCS)))
MAN_PAGES += docs/man/svmtrace-capture.1
