# kmod: svmtrace's patched kvm.ko + kvm-amd.ko, built out of tree against the
# pinned Debian kernel (kmod/build.sh resolves it from apt/dpkg and checks
# vermagic).  Results in $(BUILD)/kmod: kvm.ko, kvm-amd.ko, abi.
# kmod-lab: the same with the nested lab's test-only knobs (kmod/src/testparam.c,
# kmod/patches/6.1/*-lab-*.patch), in $(BUILD)/kmod-lab, for `make e2e` only.
KMOD_DIR := $(BUILD)/kmod
KMOD_LAB_DIR := $(BUILD)/kmod-lab
KMOD_INPUTS := kmod/build.sh $(wildcard kmod/patches/6.1/*.patch kmod/src/*.[ch]) \
	include/svmtrace/abi.h

DEB_PACKAGES += linux-source-6.1 linux-headers-amd64 kmod patch binutils xz-utils

.PHONY: kmod
kmod: $(KMOD_DIR)/.built

$(KMOD_DIR)/.built: $(KMOD_INPUTS)
	nice kmod/build.sh $(KMOD_DIR)
	@touch $@

.PHONY: kmod-lab
kmod-lab: $(KMOD_LAB_DIR)/.built

$(KMOD_LAB_DIR)/.built: $(KMOD_INPUTS)
	nice kmod/build.sh --lab $(KMOD_LAB_DIR)
	@touch $@
