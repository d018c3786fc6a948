# Test-data generators (built, never installed).
$(eval $(call program,svmtrace-synth-raw,tests/tools/synth_raw.c $(CLI_SRCS),,TOOLS))
$(eval $(call program,svmtrace-gap-trace,tests/tools/gap_trace.c $(CLI_SRCS),,TOOLS))
$(eval $(call program,svmtrace-kvm-hold-vm,tests/tools/kvm_hold_vm.c $(CLI_SRCS),,TOOLS))
