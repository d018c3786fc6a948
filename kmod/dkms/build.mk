# svmtrace-dkms: the modules' source as DKMS builds it, under
# /usr/src/svmtrace-VERSION (make install, the svmtrace-dkms package): the
# repository's kmod/build.sh, kmod/kernel.sh, the patches, kmod/src and
# include/svmtrace/abi.h in their places, so kmod/build.sh runs there as it
# does here, and dkms.conf (kmod/dkms/dkms.conf with the version and the
# supported series of kmod/kernel.sh filled in).  The nested lab's
# test-only knobs (kmod/patches/SERIES/*-lab-*.patch, kmod/src/testparam.c)
# stay out: DKMS builds the modules users install, as make kmod does.
#
# kmod/dkms/modules_to_force_install goes to DKMS's list of that name: the
# distribution's kvm.ko and ours both carry no MODULE_VERSION, which
# DKMS's version check on installation reads as "the same module already
# in the kernel" and then refuses to install ours; the entry
# svmtrace_version-override skips that check (and only that) for svmtrace.
DKMS_CONF := $(BUILD)/dkms/dkms.conf
DKMS_SOURCES = kmod/build.sh kmod/kernel.sh kmod/dkms/check.sh include/svmtrace/abi.h \
	$(foreach f,$(wildcard kmod/patches/*/*.patch),$(if $(findstring -lab-,$(notdir $(f))),,$(f))) \
	$(filter-out kmod/src/testparam.c,$(wildcard kmod/src/*.[ch] kmod/src/*/*.c))
DKMS_DEST = $(DESTDIR)/usr/src/svmtrace-$(SVMTRACE_VERSION)
DEB_PACKAGES += dkms

$(DKMS_CONF): kmod/dkms/dkms.conf kmod/kernel.sh debian/changelog
	@mkdir -p $(@D)
	series=$$(. ./kmod/kernel.sh && echo "$$KERNEL_SERIES_SUPPORTED" | sed 's/\./\\\\./g; s/ /|/g'); \
	sed -e 's/#MODULE_VERSION#/$(SVMTRACE_VERSION)/' \
		-e "s/^BUILD_EXCLUSIVE_KERNEL=.*/BUILD_EXCLUSIVE_KERNEL=\"^($$series)\\\\.\"/" $< >$@
all: $(DKMS_CONF)

.PHONY: install-dkms
install-dkms: $(DKMS_CONF)
	@set -e; for f in $(DKMS_SOURCES); do \
		mode=644; [ ! -x $$f ] || mode=755; \
		install -D -m $$mode $$f $(DKMS_DEST)/$$f; \
	done
	install -m 644 $(DKMS_CONF) $(DKMS_DEST)/dkms.conf
	install -D -m 644 kmod/dkms/modules_to_force_install \
		$(DESTDIR)/usr/share/dkms/modules_to_force_install/svmtrace
