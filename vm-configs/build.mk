# vm-configs/: libvirt domains a user starts from (README.md).  `make check`
# validates every XML against libvirt's own schemas; the nested lab
# (tests/e2e/libvirt.sh) also defines and starts the lab-*.xml domains with a
# real libvirtd, which catches what the schema does not.
VM_CONFIGS := $(sort $(wildcard vm-configs/*.xml))

# libvirtd, virtlogd and QEMU's driver for the lab's L1 (which runs the
# host's root file system); virt-xml-validate comes with the clients;
# qemu-img makes the lab domain's snapshot disk; win11.xml's TPM 2.0 and
# Secure Boot firmware need swtpm and ovmf even to be defined (the lab
# defines it: libvirt checks swtpm's capabilities then).
DEB_PACKAGES += libvirt-clients libvirt-daemon-system libvirt-daemon-driver-qemu dnsmasq-base \
	qemu-utils swtpm swtpm-tools ovmf

.PHONY: check-vm-configs
check-vm-configs:
	@command -v virt-xml-validate >/dev/null || \
		{ echo "FAIL: virt-xml-validate not installed (make deps: libvirt-clients)"; exit 1; }
	@set -e; for f in $(VM_CONFIGS); do virt-xml-validate $$f domain; done
CHECK_STEPS += check-vm-configs

# svmtrace-lab: a shell script over virsh, installed with the programs; it
# sources lab-win.sh (the lab guest's serial commands) from next to itself
# or from ../share/svmtrace, as built here and as installed.
$(BUILD)/bin/svmtrace-lab: vm-configs/svmtrace-lab $(BUILD)/share/svmtrace/lab-win.sh
	@mkdir -p $(@D)
	install -m 755 $< $@
$(BUILD)/share/svmtrace/lab-win.sh: vm-configs/lab-win.sh
	@mkdir -p $(@D)
	install -m 644 $< $@
PROGRAMS += $(BUILD)/bin/svmtrace-lab
SHARE_FILES += $(BUILD)/share/svmtrace/lab-win.sh
MAN_PAGES += docs/man/svmtrace-lab.1
