# VMI tests: the synthetic Windows memory generator, the PE programs it loads
# (built with mingw-w64 at test time), the command-level tests that run
# svmtrace-vmi on generated images for both shared profiles, the libFuzzer
# targets and the resolve benchmark.
MINGW_CC ?= x86_64-w64-mingw32-gcc
VMI_PROFILES ?= $(abspath ../shared/profiles)
VMI_PE := $(BUILD)/vmi-pe

VMI_GEN_SRCS := $(wildcard tests/vmi/gen/*.c)
$(eval $(call program,vmi-genimage,$(VMI_GEN_SRCS),,TOOLS))

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

# Command-level tests: tests/vmi/*.sh except the sourced lib.sh.
VMI_TESTS := $(filter-out tests/vmi/lib.sh,$(sort $(wildcard tests/vmi/*.sh)))
.PHONY: check-vmi
check-vmi: all $(VMI_PE_FILES)
	@BIN=$(abspath $(BUILD)/bin) TMPROOT=$(abspath $(BUILD)/tmp) \
		VMI_PROFILES=$(VMI_PROFILES) VMI_PE=$(abspath $(VMI_PE)) \
		tests/lib/run-scripts.sh $(VMI_TESTS)
CHECK_STEPS += check-vmi
