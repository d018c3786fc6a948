# libFuzzer targets for the trace reader.  They are built with clang straight
# from the library sources (libsvmtrace.a is built with gcc, without
# sanitizers).  `make fuzz` runs every target in FUZZ_TARGETS for
# FUZZ_SECONDS; `make check` replays each committed corpus once (the rule is
# in the top Makefile, after every fragment has added its targets).
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-std=gnu11 -D_GNU_SOURCE -Iinclude -Iuserspace
TRACE_LIB_SRCS := $(filter userspace/lib/trace/%,$(LIB_SRCS))

$(FUZZ_DIR)/fuzz_trace_reader: tests/fuzz/fuzz_trace_reader.c $(TRACE_LIB_SRCS) \
		$(wildcard userspace/lib/trace/*.h include/svmtrace/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_trace_reader.c $(TRACE_LIB_SRCS) -llz4
FUZZ_TARGETS += $(FUZZ_DIR)/fuzz_trace_reader

# The kernel capture's instruction decoder: guest code is untrusted bytes.
$(FUZZ_DIR)/fuzz_kmod_memdecode: tests/fuzz/fuzz_kmod_memdecode.c kmod/src/memdecode.c kmod/src/memdecode_maps.c \
		kmod/src/memdecode.h include/svmtrace/abi.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_kmod_memdecode.c
FUZZ_TARGETS += $(FUZZ_DIR)/fuzz_kmod_memdecode
