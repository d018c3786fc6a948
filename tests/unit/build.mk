# Unit tests: every tests/unit/test_*.c is one Check program linked against
# libsvmtrace and the shared helpers in support.c (and the userspace ring
# producer in tests/ring/).  `make check-unit` runs
# them all.
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
UNIT_SUPPORT := $(BUILD)/obj/tests/unit/support.o $(BUILD)/obj/tests/ring/ring_producer.o
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(UNIT_SUPPORT) $(LIBSVMTRACE)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(TEST_EXTRA_OBJS) $(UNIT_SUPPORT) $(LIBSVMTRACE) $(LIB_LIBS) $(CHECK_LIBS)

ALL_PROGRAM_SRCS += $(UNIT_SRCS) tests/unit/support.c tests/ring/ring_producer.c
all: $(UNIT_TESTS)

# Every test's scratch files (support.c's scratch_path) go under one
# directory, removed once all passed (kept after a failure, to look at).
UNIT_TMP := $(abspath $(BUILD)/tmp/unit)
.PHONY: check-unit
check-unit: $(UNIT_TESTS)
	@set -e; rm -rf $(UNIT_TMP); mkdir -p $(UNIT_TMP); \
	for t in $(UNIT_TESTS); do echo "unit: $$t"; TMPDIR=$(UNIT_TMP) $$t; done; \
	rm -rf $(UNIT_TMP)
CHECK_STEPS += check-unit
# Keep the test objects: they are not intermediate files to delete.
.SECONDARY: $(patsubst tests/unit/%.c,$(BUILD)/obj/tests/unit/%.o,$(UNIT_SRCS))
