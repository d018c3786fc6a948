# svmtrace — top-level build.
#
# One non-recursive make.  Every directory adds its part through a build.mk
# fragment (sources to the library, programs, tests, check steps), so this file
# only holds the shared rules and the user-facing targets:
#
#   make            build all userspace (library, programs, test programs)
#   make check      run every test: unit (Check), CLI, fuzz regression, e2e lab
#   make kmod       build the patched kvm.ko / kvm-amd.ko
#   make e2e        the nested-SVM lab under QEMU TCG
#   make demo       svmtrace as used: libvirt, QEMU, svmtraced --domain in the lab
#   make demo-userspace  the README's worked example on a ptrace'd process
#   make bench      benchmarks (ratios against baselines measured in one run)
#   make fuzz       run every libFuzzer target for FUZZ_SECONDS each
#   make deps       install the Debian packages the build and the tests need
#                   (first, once: make check and make demo only name what is missing)
#   make install    install programs, man pages, the systemd unit, libsvmtrace
#                   (shared library, headers, pkg-config) under PREFIX and the
#                   DKMS source of the modules under /usr/src
#   make deb        the Debian packages (dpkg-buildpackage from debian/) in
#                   $(BUILD)/deb: svmtrace, svmtrace-dkms, libsvmtrace0,
#                   libsvmtrace-dev

PREFIX ?= /usr/local
# The Debian changelog's version is the project's (the package is native).
SVMTRACE_VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
BUILD ?= build
CC ?= cc
CFLAGS ?= -O2 -g
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wvla -Wno-unused-parameter
ALL_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -Iinclude -Iuserspace $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(LDFLAGS)

LIBSVMTRACE := $(BUILD)/lib/libsvmtrace.a

# Filled in by the build.mk fragments.
LIB_SRCS :=
LIB_LIBS :=
PROGRAMS :=
TOOLS :=
ALL_PROGRAM_SRCS :=
CHECK_STEPS :=
BENCH_STEPS :=
FUZZ_TARGETS :=
MAN_PAGES :=
MAN8_PAGES :=
SHARE_FILES :=
UNITS :=
DEB_PACKAGES :=

# Packages every part needs; fragments add their own to DEB_PACKAGES.
DEB_PACKAGES += build-essential pkg-config clang libclang-rt-14-dev llvm liblz4-dev lz4 \
	check libsubunit-dev zstd xz-utils time perl

.PHONY: all programs check bench fuzz deps install clean demo kmod e2e deb
all:

# $(call program,NAME,SOURCES[,EXTRA_LDLIBS[,LIST]]) links $(BUILD)/bin/NAME
# against libsvmtrace.  LIST is PROGRAMS (installed, the default) or TOOLS
# (test and benchmark helpers, built but never installed).
define program
$(or $(4),PROGRAMS) += $(BUILD)/bin/$(1)
ALL_PROGRAM_SRCS += $(2)
$(BUILD)/bin/$(1): $(patsubst %.c,$(BUILD)/obj/%.o,$(2)) $(LIBSVMTRACE)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $(patsubst %.c,$(BUILD)/obj/%.o,$(2)) $(LIBSVMTRACE) $(3) $$(LIB_LIBS)
endef

include $(sort $(wildcard userspace/*/build.mk userspace/lib/*/build.mk))
include $(sort $(wildcard tests/*/build.mk kmod/build.mk kmod/dkms/build.mk vm-configs/build.mk \
	docs/build.mk))

# obj/<path>.o for every userspace C file; header dependencies via -MMD.
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
$(LIBSVMTRACE): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

include userspace/lib/shared.mk

# What `make install` installs; `all` adds the tests and the lab.
programs: $(PROGRAMS) $(UNITS) $(SHARE_FILES) $(LIBSVMTRACE_SO) $(LIBSVMTRACE_PC)
all: $(LIBSVMTRACE) programs $(TOOLS)

# Every fuzz target replays its committed corpus once in `make check`.  Defined
# here, after every fragment, so that FUZZ_TARGETS is complete.
.PHONY: check-fuzz-corpus
check-fuzz-corpus: $(FUZZ_TARGETS)
	@set -e; for f in $(FUZZ_TARGETS); do \
		n=$$(basename $$f); log=$(BUILD)/fuzz-$$n-replay.log; \
		if ! $$f -runs=0 tests/fuzz/corpus/$$n >$$log 2>&1; then \
			tail -n 40 $$log; echo "FAIL: $$n on its committed corpus"; exit 1; fi; \
		echo "fuzz corpus replay: $$n: $$(grep -E '^Done' $$log)"; \
	done
CHECK_STEPS += check-fuzz-corpus

check: deps-hint all $(CHECK_STEPS)
	@echo "make check: all steps passed"

bench: all $(BENCH_STEPS)

fuzz: $(FUZZ_TARGETS)
	@set -e; for f in $(FUZZ_TARGETS); do \
		n=$$(basename $$f); mkdir -p $(BUILD)/fuzz-corpus/$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz-$$n- \
			$(BUILD)/fuzz-corpus/$$n tests/fuzz/corpus/$$n; \
	done

# The packages of DEB_PACKAGES that dpkg does not list as installed.
DEPS_MISSING = for p in $(sort $(DEB_PACKAGES)); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done

deps:
	@if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	missing=$$($(DEPS_MISSING)); \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; exit 0; fi; \
	echo "deps: installing" $$missing; \
	$$SUDO apt-get update -q && \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing

# make check and make demo install nothing (that takes root and changes the
# machine: make deps does it, once); they say first what is missing.
.PHONY: deps-hint
deps-hint:
	@command -v dpkg-query >/dev/null || exit 0; missing=$$($(DEPS_MISSING)); \
	[ -z "$$missing" ] || echo "make: Debian packages missing:" $$missing "-- 'make deps'" \
		"installs them; what needs them skips (and fails under CI=true)" >&2

install: programs install-lib install-dkms
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(MAN8_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	$(if $(UNITS),install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR) && \
		install -m 644 $(UNITS) $(DESTDIR)$(SYSTEMD_UNIT_DIR)/)
	$(if $(SHARE_FILES),install -d $(DESTDIR)$(PREFIX)/share/svmtrace && \
		install -m 644 $(SHARE_FILES) $(DESTDIR)$(PREFIX)/share/svmtrace/)

# make deb: dpkg-buildpackage (debian/) in a copy of the tree under
# $(DEB_DIR), where it also leaves the .debs (it writes them next to the
# source directory).  The copy holds what git tracks or would track, as a
# fresh clone has it plus uncommitted changes; outside a git checkout of
# this tree (an unpacked source tarball), every file but $(BUILD).
DEB_DIR := $(BUILD)/deb
DEB_PACKAGES += dpkg-dev debhelper dh-dkms lintian
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/svmtrace-$(SVMTRACE_VERSION)
	{ if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ]; then \
		git ls-files -z -c -o --exclude-standard; \
	else \
		find . \( -path './$(BUILD)' -o -path ./.git \) -prune -o ! -type d -print0; \
	fi; } | tar -c --null --ignore-failed-read -T - -f - | \
		tar -x -C $(DEB_DIR)/svmtrace-$(SVMTRACE_VERSION)
	cd $(DEB_DIR)/svmtrace-$(SVMTRACE_VERSION) && \
		nice dpkg-buildpackage -b -us -uc -j2 >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "make deb: failed (log: $(DEB_DIR)/build.log)"; exit 1; }
	@ls $(DEB_DIR)/*.deb

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(patsubst %.c,$(BUILD)/obj/%.d,$(ALL_PROGRAM_SRCS))
