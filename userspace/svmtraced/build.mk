# svmtraced: a libvirt domain (or a VMM's PID) and a Windows process in,
# per-vCPU v5 traces and capture.json out.
SVMTRACED_LIBS := $(shell pkg-config --libs libvirt libvirt-qemu 2>/dev/null || echo -lvirt -lvirt-qemu)
SVMTRACED_CORE := $(addprefix userspace/svmtraced/,options.c meta.c host.c target.c asks.c status.c \
	statusd.c codemap.c threads.c)
SVMTRACED_SRCS := $(addprefix userspace/svmtraced/,main.c domain.c watch.c client.c) \
	$(SVMTRACED_CORE) $(CAPTURE_COMMON_SRCS) $(AUDIT_SRCS) $(CLI_SRCS)
$(eval $(call program,svmtraced,$(SVMTRACED_SRCS),$(SVMTRACED_LIBS) $(AUDIT_LIBS) -pthread))
MAN8_PAGES += docs/man/svmtraced.8
DEB_PACKAGES += libvirt-dev libvirt-clients libvirt-daemon python3

# Its unit test links the pieces that need no VM (and no libvirt).
$(BUILD)/tests/test_svmtraced: $(patsubst %.c,$(BUILD)/obj/%.o,$(SVMTRACED_CORE) \
		$(CAPTURE_COMMON_SRCS) $(CLI_SRCS))
$(BUILD)/tests/test_svmtraced: TEST_EXTRA_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,\
	$(SVMTRACED_CORE) $(CAPTURE_COMMON_SRCS) $(CLI_SRCS))

# The systemd unit, with the installed program's path.
$(BUILD)/svmtraced@.service: userspace/svmtraced/svmtraced@.service.in
	@mkdir -p $(@D)
	sed 's|@BINDIR@|$(PREFIX)/bin|g' $< >$@
UNITS += $(BUILD)/svmtraced@.service
all: $(BUILD)/svmtraced@.service
