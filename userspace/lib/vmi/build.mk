# libsvmtrace: Windows VMI (memory drivers, x86-64 walker, Windows layer).
VMI_LIB_SRCS := $(wildcard userspace/lib/vmi/*.c)
LIB_SRCS += $(VMI_LIB_SRCS)
LIB_LIBS += -ljson-c -llzma
DEB_PACKAGES += liblzma-dev libjson-c-dev
