# Test and benchmark helpers (built, never installed).
$(eval $(call program,svmtrace-steprec,userspace/tools/steprec.c userspace/tools/memops.c \
	$(CLI_SRCS),-lcapstone,TOOLS))
