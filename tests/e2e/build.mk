# The nested-SVM lab (docs/lab.md): a test VMM and guest programs that run
# as L2 inside an L1 Debian kernel booted under QEMU TCG with AMD SVM + NPT.
# `make e2e` runs every scenario; it is also a `make check` step.

E2E_DIR := $(BUILD)/e2e
E2E_GUEST := tests/e2e/guest
E2E_PROGRAMS := $(sort $(basename $(notdir $(wildcard $(E2E_GUEST)/programs/*.S))))
E2E_BINS := $(E2E_DIR)/guest/kernel.bin $(patsubst %,$(E2E_DIR)/guest/%.bin,$(E2E_PROGRAMS))

$(eval $(call program,svmtrace-e2e-vmm,tests/e2e/vmm/main.c tests/e2e/vmm/vcpu.c \
	tests/e2e/guest/image.c tests/e2e/guest/results.c $(CLI_SRCS),-pthread,TOOLS))

# Guest code: preprocess (layout.h), assemble with GNU as, link at its load
# address, keep the ELF for `objdump -d` and flatten it for the VMM.
# $(call e2e_flat,LOAD-ADDRESS)
define e2e_flat
	@mkdir -p $(@D)
	$(CC) -E -P -I$(E2E_GUEST) -x assembler-with-cpp $< -o $(@:.bin=.s)
	as --64 -o $(@:.bin=.o) $(@:.bin=.s)
	ld -m elf_x86_64 -Ttext=$(1) -e $(1) -o $(@:.bin=.elf) $(@:.bin=.o)
	objcopy -O binary $(@:.bin=.elf) $@
endef
$(E2E_DIR)/guest/kernel.bin: $(E2E_GUEST)/kernel.S $(E2E_GUEST)/layout.h
	$(call e2e_flat,0x8000)
$(E2E_DIR)/guest/%.bin: $(E2E_GUEST)/programs/%.S $(E2E_GUEST)/layout.h
	$(call e2e_flat,0x400000)

all: $(E2E_BINS)

DEB_PACKAGES += qemu-system-x86 busybox-static cpio binutils kmod apt
$(eval $(call program,svmtrace-e2e-model,tests/e2e/model/main.c tests/e2e/model/exec.c \
	tests/e2e/model/flags.c tests/e2e/model/mem.c tests/e2e/model/tracer.c \
	tests/e2e/guest/image.c tests/e2e/guest/results.c $(CLI_SRCS),,TOOLS))

# With the kmod in the tree, the lab also runs our modules: `make kmod`
# first, then e2e.sh --modules $(KMOD_DIR) (set by kmod/build.mk, which is
# read after this fragment, hence the test here and the late expansion).
.PHONY: e2e check-e2e
e2e: $(BUILD)/bin/svmtrace-e2e-vmm $(BUILD)/bin/svmtrace-e2e-model $(E2E_BINS)
ifneq ($(wildcard kmod/build.mk),)
e2e: kmod
endif
e2e:
	BUILD=$(BUILD) tests/e2e/e2e.sh $(if $(KMOD_DIR),--modules $(KMOD_DIR))
check-e2e: e2e
CHECK_STEPS += check-e2e

# The cost of one traced single-step in instructions (QEMU -icount), per
# path, with a model for AMD hardware (tests/e2e/step-cost.sh).
.PHONY: bench-step-cost
bench-step-cost: $(BUILD)/bin/svmtrace-e2e-vmm $(BUILD)/bin/svmtrace-capture $(E2E_BINS)
ifneq ($(wildcard kmod/build.mk),)
bench-step-cost: kmod
endif
bench-step-cost:
	BUILD=$(BUILD) tests/e2e/step-cost.sh
BENCH_STEPS += bench-step-cost
