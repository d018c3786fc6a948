# VMI tests: the synthetic Windows memory generator, the PE programs it loads
# (built with mingw-w64 at test time), the command-level tests that run
# svmtrace-vmi on generated images for both shared profiles, the libFuzzer
# targets and the resolve benchmark.
MINGW_CC ?= x86_64-w64-mingw32-gcc
VMI_PROFILES ?= $(abspath tests/data/profiles)
VMI_PE := $(BUILD)/vmi-pe

VMI_GEN_SRCS := $(wildcard tests/vmi/gen/*.c)
$(eval $(call program,vmi-genimage,$(VMI_GEN_SRCS),,TOOLS))
# svmtraced's target resolution over the live driver, reading an image.
$(eval $(call program,vmi-live-target,tests/vmi/live_target.c $(SVMTRACED_CORE) \
	$(CAPTURE_COMMON_SRCS) $(CLI_SRCS),,TOOLS))

# The DLL first: the program links against its import library.
$(VMI_PE)/helper.dll: tests/vmi/pe/helper.c
	@mkdir -p $(@D)
	$(MINGW_CC) -O2 -s -shared -o $@ $< -Wl,--out-implib,$(VMI_PE)/libhelper.a
$(VMI_PE)/target.exe: tests/vmi/pe/target.c $(VMI_PE)/helper.dll
	$(MINGW_CC) -O2 -s -o $@ $< -L$(VMI_PE) -lhelper
$(VMI_PE)/tiny.exe: tests/vmi/pe/tiny.c
	@mkdir -p $(@D)
	$(MINGW_CC) -O2 -s -nostdlib -e start -o $@ $<
VMI_PE_FILES := $(VMI_PE)/helper.dll $(VMI_PE)/target.exe $(VMI_PE)/tiny.exe

DEB_PACKAGES += gcc-mingw-w64-x86-64
# qemu_core.sh: a real QEMU ELF core (dump-guest-memory)
DEB_PACKAGES += qemu-system-x86

# Command-level tests: tests/vmi/*.sh except the sourced lib.sh.
VMI_TESTS := $(filter-out tests/vmi/lib.sh,$(sort $(wildcard tests/vmi/*.sh)))
.PHONY: check-vmi
check-vmi: all $(VMI_PE_FILES)
	@BIN=$(abspath $(BUILD)/bin) TMPROOT=$(abspath $(BUILD)/tmp) \
		VMI_PROFILES=$(VMI_PROFILES) VMI_PE=$(abspath $(VMI_PE)) \
		tests/lib/run-scripts.sh $(VMI_TESTS)
CHECK_STEPS += check-vmi

# libFuzzer targets, built with clang and sanitizers straight from the
# library sources (libsvmtrace.a is built with gcc and no sanitizers).
VMI_FUZZ_FLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude -Iuserspace \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
VMI_FUZZ_PROFILE := $(VMI_PROFILES)/ntkrnlmp-84A84F4D2218BC053913B1204942618D-1.json.xz
VMI_FUZZ_OBJS := $(patsubst %.c,$(BUILD)/fuzz-vmi-obj/%.o,$(VMI_LIB_SRCS))
VMI_FUZZERS := $(addprefix $(BUILD)/fuzz/,fuzz_vmi_isf fuzz_vmi_pe fuzz_vmi_guest)

$(BUILD)/fuzz-vmi-obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(VMI_FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
		-DVMI_FUZZ_PROFILE='"$(VMI_FUZZ_PROFILE)"' -MMD -MP -c -o $@ $<
$(BUILD)/fuzz/fuzz_vmi_%: $(BUILD)/fuzz-vmi-obj/tests/fuzz/fuzz_vmi_%.o $(VMI_FUZZ_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(VMI_FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ -ljson-c -llzma
-include $(VMI_FUZZ_OBJS:.o=.d) $(VMI_FUZZERS:$(BUILD)/fuzz/%=$(BUILD)/fuzz-vmi-obj/tests/fuzz/%.d)
FUZZ_TARGETS += $(VMI_FUZZERS)

.SECONDARY: $(VMI_FUZZ_OBJS) $(VMI_FUZZERS:$(BUILD)/fuzz/%=$(BUILD)/fuzz-vmi-obj/tests/fuzz/%.o)

# Benchmark: profile load (vs. a full json-c parse, same run) and PID ->
# entry page on a 4 GiB image with 300 processes, raw and ELF core.
$(eval $(call program,vmi-bench,tests/vmi/bench/vmi_bench.c,,TOOLS))
VMI_BENCH := $(BUILD)/bench-vmi
.PHONY: bench-vmi
bench-vmi: all $(VMI_PE_FILES)
	@mkdir -p $(VMI_BENCH)
	$(BUILD)/bin/vmi-genimage --profile $(VMI_PROFILES)/ntkrnlmp-0CE4A95C0CD782A7596B034D8648E585-1.json.xz \
		--exe $(VMI_PE)/target.exe --dll $(VMI_PE)/helper.dll --mem-size 0x100000000 \
		--decoys 300 --out $(VMI_BENCH)/win11-4g
	$(BUILD)/bin/vmi-bench $(VMI_BENCH)/win11-4g.raw,$(VMI_BENCH)/win11-4g.elf 1240 \
		$(VMI_PROFILES)/ntkrnlmp-0CE4A95C0CD782A7596B034D8648E585-1.json.xz \
		$(VMI_PROFILES)/ntkrnlmp-84A84F4D2218BC053913B1204942618D-1.json.xz
BENCH_STEPS += bench-vmi
