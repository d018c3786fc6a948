# Checks of the documentation (tests/docs/*.sh): no history in the docs a
# user reads (it goes to CHANGELOG.md), every command a doc shows exists
# with its options, every pointer to a doc and its section resolves.
# Cheap (seconds); they need the built programs for their --help.
DOC_TESTS := $(sort $(wildcard tests/docs/*.sh))

.PHONY: check-docs
check-docs: all
	@BIN=$(abspath $(BUILD)/bin) TMPROOT=$(abspath $(BUILD)/tmp) \
		tests/lib/run-scripts.sh $(DOC_TESTS)
CHECK_STEPS += check-docs
