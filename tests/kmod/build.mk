# Kernel-interface checks that run inside the nested lab (tests/e2e runs
# them in L1): svmtrace-abi-check exercises every documented control error.
$(eval $(call program,svmtrace-abi-check,tests/kmod/abi_check.c $(CLI_SRCS),,TOOLS))

# kmod/build.sh's refusals (tests/kmod/refusals.sh): unsupported series,
# missing or mismatched headers, PREEMPT_RT, with Debian's real packages.
.PHONY: check-kmod-refusals
check-kmod-refusals:
	BUILD=$(BUILD) tests/kmod/refusals.sh
CHECK_STEPS += check-kmod-refusals
