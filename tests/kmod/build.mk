# Kernel-interface checks that run inside the nested lab (tests/e2e runs
# them in L1): svmtrace-abi-check exercises every documented control error.
$(eval $(call program,svmtrace-abi-check,tests/kmod/abi_check.c $(CLI_SRCS),,TOOLS))
