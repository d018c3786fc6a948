# The Debian packages in make check (tests/deb/deb.sh): lintian on each,
# DKMS building the modules from svmtrace-dkms's source, and the packages
# installed, used and removed in the lab's L1.  The lab's pieces (kmod,
# the Windows-layout guest, the VMM and the model) are named in the recipe:
# their variables come from fragments read after this one.
DEB_PACKAGES += util-linux
.PHONY: check-deb
check-deb: deb all
	$(MAKE) --no-print-directory $(KMOD_DIR)/6.1/.built $(E2E_WIN_INPUTS)
	BUILD=$(BUILD) tests/deb/deb.sh
CHECK_STEPS += check-deb
