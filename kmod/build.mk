# kmod: svmtrace's patched kvm.ko + kvm-amd.ko, built out of tree against
# Debian kernels (kmod/build.sh checks the kernel and vermagic).
#
#   make kmod                   one build per supported series, for the amd64
#                               kernel of the installed linux-source-SERIES:
#                               $(BUILD)/kmod/SERIES/{kvm.ko,kvm-amd.ko,abi}
#   make kmod KVER=RELEASE      for one installed kernel (its `uname -r`):
#                               $(BUILD)/kmod/RELEASE/
#   make kmod-lab               the same per series with the nested lab's
#                               test-only knobs (kmod/src/testparam.c,
#                               kmod/patches/SERIES/*-lab-*.patch), in
#                               $(BUILD)/kmod-lab/SERIES, for `make e2e` only
#
# The labs run on every series in KMOD_SERIES (make e2e KMOD_SERIES=6.12
# runs one).
KMOD_DIR := $(BUILD)/kmod
KMOD_LAB_DIR := $(BUILD)/kmod-lab
KMOD_SERIES ?= 6.1 6.12
KMOD_DIRS = $(addprefix $(KMOD_DIR)/,$(KMOD_SERIES))
KMOD_LAB_DIRS = $(addprefix $(KMOD_LAB_DIR)/,$(KMOD_SERIES))
# --modules DIR for each kernel, as tests/e2e/kernels.sh takes them.
KMOD_MODULES = $(foreach d,$(KMOD_DIRS),--modules $(d))
KMOD_LAB_MODULES = $(foreach d,$(KMOD_LAB_DIRS),--modules $(d))
KMOD_INPUTS := kmod/build.sh kmod/kernel.sh \
	$(wildcard kmod/patches/*/*.patch kmod/src/*.[ch] kmod/src/*/*.c) include/svmtrace/abi.h

DEB_PACKAGES += linux-source-6.1 linux-headers-amd64 linux-source-6.12 linux-headers-6.12-amd64 \
	kmod patch binutils xz-utils

.PHONY: kmod
ifdef KVER
kmod:
	nice kmod/build.sh --kver $(KVER) $(KMOD_DIR)/$(KVER)
else
kmod: $(addsuffix /.built,$(KMOD_DIRS))
endif

$(KMOD_DIR)/%/.built: $(KMOD_INPUTS)
	nice kmod/build.sh --series $* $(KMOD_DIR)/$*
	@touch $@

.PHONY: kmod-lab
kmod-lab: $(addsuffix /.built,$(KMOD_LAB_DIRS))

$(KMOD_LAB_DIR)/%/.built: $(KMOD_INPUTS)
	nice kmod/build.sh --lab --series $* $(KMOD_LAB_DIR)/$*
	@touch $@
