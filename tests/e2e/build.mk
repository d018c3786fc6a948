# The nested-SVM lab (docs/lab.md): a test VMM and guest programs that run
# as L2 inside an L1 Debian kernel booted under QEMU TCG with AMD SVM + NPT.
# `make e2e` runs every scenario; it is also a `make check` step.

E2E_DIR := $(BUILD)/e2e
E2E_GUEST := tests/e2e/guest
E2E_PROGRAMS := $(sort $(basename $(notdir $(wildcard $(E2E_GUEST)/programs/*.S))))
E2E_BINS := $(E2E_DIR)/guest/kernel.bin $(patsubst %,$(E2E_DIR)/guest/%.bin,$(E2E_PROGRAMS))

$(eval $(call program,svmtrace-e2e-vmm,tests/e2e/vmm/main.c tests/e2e/vmm/vcpu.c \
	tests/e2e/guest/image.c tests/e2e/guest/results.c tests/e2e/win/winimage.c tests/e2e/win/wincpu.c \
	$(CLI_SRCS),-pthread,TOOLS))

# Guest code: preprocess (layout.h), assemble with GNU as, link at its load
# address, keep the ELF for `objdump -d` and flatten it for the VMM.
# $(call e2e_flat,LOAD-ADDRESS)
define e2e_flat
	@mkdir -p $(@D)
	$(CC) -E -P -I$(E2E_GUEST) -x assembler-with-cpp $< -o $(@:.bin=.s)
	as --64 -o $(@:.bin=.o) $(@:.bin=.s)
	ld -m elf_x86_64 -Ttext=$(1) -e $(1) -o $(@:.bin=.elf) $(@:.bin=.o)
	objcopy -O binary $(@:.bin=.elf) $@
endef
$(E2E_DIR)/guest/kernel.bin: $(E2E_GUEST)/kernel.S $(E2E_GUEST)/layout.h
	$(call e2e_flat,0x8000)
$(E2E_DIR)/guest/%.bin: $(E2E_GUEST)/programs/%.S $(E2E_GUEST)/layout.h $(E2E_GUEST)/program.h \
		$(E2E_GUEST)/gate.h
	$(call e2e_flat,0x400000)

all: $(E2E_BINS)

DEB_PACKAGES += qemu-system-x86 busybox-static cpio binutils kmod apt binutils-mingw-w64-x86-64
# procps: pkill and pgrep in the libvirt lab's L1 (l1-libvirt.sh), which runs the host's userspace
DEB_PACKAGES += procps
$(eval $(call program,svmtrace-e2e-model,tests/e2e/model/main.c tests/e2e/model/exec.c \
	tests/e2e/model/flags.c tests/e2e/model/mem.c tests/e2e/model/tracer.c tests/e2e/model/clock.c \
	tests/e2e/guest/image.c tests/e2e/guest/results.c tests/e2e/win/winimage.c $(CLI_SRCS),,TOOLS))

# The Windows-layout guest (docs/lab.md): svmtrace-e2e-wingen lays it out
# from an ISF profile with the VMI generator's pieces (tests/vmi/gen, all but
# its main); the scheduler is flat code like kernel.bin; the processes are
# real PE32+ images linked by the mingw-w64 binutils from one source with
# per-process SEED and ROUNDS, importing from ntdll.dll.  The images of the
# guest, one per committed profile, are laid out by the lab scripts with a
# new placement seed each run (tests/e2e/win/images.sh); make builds
# their pieces.
E2E_WIN := $(E2E_DIR)/win
$(eval $(call program,svmtrace-e2e-wingen,tests/e2e/win/wingen.c tests/e2e/win/winbind.c \
	$(filter-out tests/vmi/gen/gen_main.c,$(wildcard tests/vmi/gen/*.c)),,TOOLS))
$(E2E_WIN)/sched.bin: tests/e2e/win/sched.S tests/e2e/win/winlayout.h tests/e2e/win/com1.h $(E2E_GUEST)/layout.h
	$(call e2e_flat,0xfffff80410c00000)
MINGW_AS ?= x86_64-w64-mingw32-as
MINGW_LD ?= x86_64-w64-mingw32-ld
# A program's PE32+ image from its source, linked against ntdll.dll (its
# imports): $(call e2e_win_exe,CPP-FLAGS)
define e2e_win_exe
	@mkdir -p $(@D)
	$(CC) -E -P $(1) -x assembler-with-cpp $< -o $(@:.exe=.s)
	$(MINGW_AS) -o $(@:.exe=.o) $(@:.exe=.s)
	$(MINGW_LD) --build-id -e start --subsystem console --export-all-symbols -o $@ \
		$(@:.exe=.o) $(E2E_WIN)/ntdll.dll
endef
# NAME SEED ROUNDS THREADS DROPPER: plain (creates a thread), KVA shadow (win11), lazy
# entry page, late (creates child and hollow, hollowing the second), and those two
# (win/images.sh has the names)
E2E_WIN_PROCS := alpha:7:3:1:0 beta:11:3:0:0 lazy:13:2:0:0 late:17:2:0:1 child:19:2:0:0 \
	hollow:23:2:0:0
define e2e_win_pe
$(E2E_WIN)/$(word 1,$(subst :, ,$(1))).exe: tests/e2e/win/programs/proc.S tests/e2e/win/winlayout.h \
		tests/e2e/win/programs/tls.h $(E2E_GUEST)/layout.h $(E2E_WIN)/ntdll.dll
	$$(call e2e_win_exe,-DSEED=$(word 2,$(subst :, ,$(1))) -DROUNDS=$(word 3,$(subst :, ,$(1))) \
		-DTHREADS=$(word 4,$(subst :, ,$(1))) -DDROPPER=$(word 5,$(subst :, ,$(1))))
endef
$(foreach p,$(E2E_WIN_PROCS),$(eval $(call e2e_win_pe,$(p))))
# The DLLs in every loader list: ntdll.dll (where threads begin) and helper.dll.
$(E2E_WIN)/%.dll: tests/e2e/win/programs/%.S tests/e2e/win/winlayout.h $(E2E_GUEST)/layout.h
	@mkdir -p $(@D)
	$(CC) -E -P -x assembler-with-cpp $< -o $(@:.dll=.s)
	$(MINGW_AS) -o $(@:.dll=.o) $(@:.dll=.s)
	$(MINGW_LD) --build-id --dll -e DllMain --export-all-symbols -o $@ $(@:.dll=.o)
# Built by a pattern rule, yet not intermediate: keep them (and their link time).
.SECONDARY: $(E2E_WIN)/ntdll.dll $(E2E_WIN)/helper.dll
E2E_WIN_PES := $(foreach p,$(E2E_WIN_PROCS),$(E2E_WIN)/$(word 1,$(subst :, ,$(p))).exe)
# The timing checks (docs/lab.md, "Virtual time"): timing.exe, which
# win/images.sh puts in alpha.exe's place in its timing guest.
$(E2E_WIN)/timing.exe: tests/e2e/win/programs/timing.S tests/e2e/win/winlayout.h \
		tests/e2e/win/programs/tls.h $(E2E_GUEST)/layout.h $(E2E_WIN)/ntdll.dll
	$(call e2e_win_exe,)

# The same guests as QEMU boots them through libvirt (vm-configs/lab-win.xml,
# win/winpvh.h): each image with the PVH boot stub, as an ELF for <kernel>.
$(eval $(call program,svmtrace-e2e-winpvh,tests/e2e/win/winpvh.c tests/e2e/win/winimage.c,,TOOLS))
$(E2E_WIN)/pvhboot.bin: tests/e2e/win/pvhboot.S tests/e2e/win/winpvh.h tests/e2e/win/com1.h \
		tests/e2e/win/winlayout.h $(E2E_GUEST)/layout.h
	$(call e2e_flat,0x800000) # WIN_PVH_STUB_PA
# What win/images.sh lays the guests out from (the lab scripts, each run
# with a new seed); and the guests with seed 1 (make demo).
E2E_WIN_INPUTS := $(BUILD)/bin/svmtrace-e2e-wingen $(BUILD)/bin/svmtrace-e2e-winpvh \
	$(E2E_WIN)/sched.bin $(E2E_WIN)/ntdll.dll $(E2E_WIN)/helper.dll $(E2E_WIN_PES) \
	$(E2E_WIN)/pvhboot.bin
$(E2E_WIN)/win%.pvh: $(E2E_WIN_INPUTS) tests/e2e/win/images.sh tests/data/profiles/*.json.xz
	tests/e2e/win/images.sh $(BUILD) $(E2E_WIN) 1 win$* pvh

# The lab runs our modules, in the lab's build with its test-only knobs
# (`make kmod-lab`), on every kernel of KMOD_SERIES side by side
# (tests/e2e/kernels.sh: one L1 per kernel, the runs compared check by
# check); without kmod/ in the tree, the packaged modules only.
# KMOD_LAB_MODULES comes from kmod/build.mk, read after this fragment, hence
# the test here and the late expansion.  The other labs run the modules
# users install ($(KMOD_MODULES)).
.PHONY: e2e check-e2e
e2e: $(BUILD)/bin/svmtrace-e2e-vmm $(BUILD)/bin/svmtrace-e2e-model $(E2E_BINS) $(E2E_WIN_INPUTS) \
	$(E2E_WIN)/timing.exe
ifneq ($(wildcard kmod/build.mk),)
e2e: kmod-lab
endif
e2e:
	BUILD=$(BUILD) $(if $(KMOD_LAB_MODULES),tests/e2e/kernels.sh $(KMOD_LAB_MODULES) --) tests/e2e/e2e.sh
check-e2e: e2e
CHECK_STEPS += check-e2e

# The real stack in L1 (docs/lab.md, "libvirt in L1"): libvirtd, virsh,
# QEMU booting the Windows-layout guest, svmtraced --domain.  Needs our
# modules; LAB_BOOTS plain boots of the guest are counted, and
# LAB_LINUX_BOOTS boots of the Linux L2 (Debian's kernel, 1-3 min each on
# the loaded 2-core machine) must each reach its init.
LAB_BOOTS ?= 3
LAB_LINUX_BOOTS ?= 2
.PHONY: e2e-libvirt check-e2e-libvirt
e2e-libvirt: kmod $(BUILD)/bin/svmtraced $(BUILD)/bin/svmtrace-dump $(BUILD)/bin/svmtrace-e2e-model \
		$(E2E_WIN_INPUTS)
	BUILD=$(BUILD) tests/e2e/kernels.sh $(KMOD_MODULES) -- tests/e2e/libvirt.sh \
		--boots $(LAB_BOOTS) --linux-boots $(LAB_LINUX_BOOTS)
check-e2e-libvirt: e2e-libvirt
CHECK_STEPS += check-e2e-libvirt

# The cost of one traced single-step in instructions (QEMU -icount), per
# path, with a model for AMD hardware (tests/e2e/step-cost.sh).  Its stock
# reference as users run it, gdb stepping QEMU's gdbstub in L1, steps
# steploop.bin (QEMU's firmware there) with the host's gdb.
$(E2E_DIR)/guest/steploop.bin: $(E2E_GUEST)/steploop.S
	$(call e2e_flat,0)
DEB_PACKAGES += gdb
.PHONY: bench-step-cost
bench-step-cost: $(BUILD)/bin/svmtrace-e2e-vmm $(BUILD)/bin/svmtrace-capture $(E2E_BINS) \
	$(E2E_DIR)/guest/steploop.bin kmod
	BUILD=$(BUILD) tests/e2e/kernels.sh $(KMOD_MODULES) -- tests/e2e/step-cost.sh
	BUILD=$(BUILD) tests/e2e/step-cost-kernels.sh $(KMOD_SERIES)
BENCH_STEPS += bench-step-cost

# Where those instructions go: per kernel function, counted by a QEMU TCG
# plugin (tests/e2e/step-profile.sh).  Not part of `make bench`: the plugin
# makes L1 several times slower.
.PHONY: bench-step-profile
bench-step-profile: $(BUILD)/bin/svmtrace-e2e-vmm $(BUILD)/bin/svmtrace-capture $(E2E_BINS) kmod
	BUILD=$(BUILD) tests/e2e/kernels.sh $(KMOD_MODULES) -- tests/e2e/step-profile.sh

# A real operating system in L2 (docs/lab.md, "A real Linux in L2"): Debian's
# kernel with two vCPUs under QEMU in L1 runs deterministic programs
# (tests/e2e/os, no libc), traced by svmtrace-capture --adopt-cr3 and
# single-stepped by ptrace inside the guest (a static svmtrace-steprec).
# A `make check` step: 174-197 s on the quiet machine, ~10 minutes at load 15.
E2E_OS := $(BUILD)/e2e/os
E2E_OS_PROGS := $(patsubst tests/e2e/os/%.c,$(E2E_OS)/os-%,$(wildcard tests/e2e/os/*.c))
$(E2E_OS)/os-%: tests/e2e/os/%.c tests/e2e/os/rt.h tests/e2e/os/gate.h
	@mkdir -p $(@D)
	$(CC) -O2 -static -nostdlib -ffreestanding -fno-pie -no-pie -fno-stack-protector \
		-fno-asynchronous-unwind-tables -Wall -Wextra -Werror -o $@ $<
$(E2E_OS)/steprec: userspace/tools/steprec.c userspace/tools/memops.c $(CLI_SRCS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -static -o $@ userspace/tools/steprec.c userspace/tools/memops.c \
		$(CLI_SRCS) -lcapstone
.PHONY: e2e-os check-e2e-os
e2e-os: kmod $(BUILD)/bin/svmtrace-capture $(BUILD)/bin/svmtrace-dump $(E2E_OS_PROGS) $(E2E_OS)/steprec
	BUILD=$(BUILD) tests/e2e/kernels.sh $(KMOD_MODULES) -- tests/e2e/os.sh
check-e2e-os: e2e-os
CHECK_STEPS += check-e2e-os
