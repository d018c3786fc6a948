# make demo: the README's worked example.
demo: all
	BIN=$(BUILD)/bin DEMO_DIR=$(BUILD)/demo sh docs/demo.sh
