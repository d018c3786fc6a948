# Test and benchmark helpers (built, never installed).
$(eval $(call program,svmtrace-steprec,userspace/tools/steprec.c $(CLI_SRCS),,TOOLS))
