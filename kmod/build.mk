# kmod: svmtrace's patched kvm.ko + kvm-amd.ko, built out of tree against the
# pinned Debian kernel (kmod/build.sh resolves it from apt/dpkg and checks
# vermagic).  Results in $(BUILD)/kmod: kvm.ko, kvm-amd.ko, abi.
KMOD_DIR := $(BUILD)/kmod
KMOD_INPUTS := kmod/build.sh $(wildcard kmod/patches/6.1/*.patch kmod/src/*.[ch]) \
	include/svmtrace/abi.h

DEB_PACKAGES += linux-source-6.1 linux-headers-amd64 kmod patch binutils xz-utils

.PHONY: kmod
kmod: $(KMOD_DIR)/.built

$(KMOD_DIR)/.built: $(KMOD_INPUTS)
	nice kmod/build.sh $(KMOD_DIR)
	@touch $@
