# make demo: svmtrace as it is used -- the lab's L1 runs libvirtd, the
# Windows-layout domain and svmtraced --domain (docs/demo-lab.sh; needs our
# modules, hence kmod).  make demo-userspace: the README's worked example on
# a ptrace'd Linux process (docs/demo.sh), no KVM needed.
.PHONY: demo-userspace
demo: deps-hint all kmod $(BUILD)/e2e/win/win11.pvh
	BUILD=$(BUILD) sh docs/demo-lab.sh --modules $(KMOD_DIR)/$(firstword $(KMOD_SERIES))
demo-userspace: all
	BIN=$(BUILD)/bin DEMO_DIR=$(BUILD)/demo sh docs/demo.sh
