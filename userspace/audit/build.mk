# The exit audit (--audit of svmtrace-capture and svmtraced): a BPF program
# (clang -target bpf) against vmlinux.h from the BTF of the kernel the lab
# runs (vmlinux-h.sh says why that one), embedded through a libbpf skeleton
# (bpftool gen skeleton).  The programs link AUDIT_SRCS and AUDIT_LIBS.
BPF_DIR := $(BUILD)/bpf
BPF_CC ?= clang
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
AUDIT_SRCS := userspace/audit/audit.c userspace/audit/audit_format.c \
	userspace/common/capture_audit.c
AUDIT_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
DEB_PACKAGES += libbpf-dev bpftool libelf-dev zlib1g-dev

$(BPF_DIR)/vmlinux.h: userspace/audit/vmlinux-h.sh tests/e2e/lib/kernel.sh
	nice userspace/audit/vmlinux-h.sh $(BUILD) $@

$(BPF_DIR)/exit_audit.bpf.o: userspace/audit/exit_audit.bpf.c userspace/audit/exit_audit.h \
		$(BPF_DIR)/vmlinux.h
	$(BPF_CC) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 -I$(BPF_DIR) \
		-Iuserspace/audit -c -o $@ $<

$(BPF_DIR)/exit_audit.skel.h: $(BPF_DIR)/exit_audit.bpf.o
	$(BPFTOOL) gen skeleton $< name exit_audit_bpf >$@.tmp
	mv $@.tmp $@

$(BUILD)/obj/userspace/audit/audit.o: $(BPF_DIR)/exit_audit.skel.h
$(BUILD)/obj/userspace/audit/audit.o: ALL_CFLAGS += -I$(BPF_DIR)

# The layout check's unit test links it alone (no libbpf).
$(BUILD)/tests/test_audit_format: $(BUILD)/obj/userspace/audit/audit_format.o
$(BUILD)/tests/test_audit_format: TEST_EXTRA_OBJS = $(BUILD)/obj/userspace/audit/audit_format.o
