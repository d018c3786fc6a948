# Command-level tests: every tests/cli/*.sh runs against the built programs
# in $(BUILD)/bin.  Exit 0 passes, 77 skips (with its reason printed), any
# other status fails.
CLI_TESTS := $(sort $(wildcard tests/cli/*.sh))

.PHONY: check-cli
check-cli: all
	@BIN=$(abspath $(BUILD)/bin) TMPROOT=$(abspath $(BUILD)/tmp) \
		tests/lib/run-scripts.sh $(CLI_TESTS)
CHECK_STEPS += check-cli

# refdecode_agrees.sh runs the reference decoder written from docs/format.md.
DEB_PACKAGES += python3

# report.sh opens svmtrace-dump's HTML report in a real headless browser.
DEB_PACKAGES += chromium
