# libsvmtrace as a shared library and its pkg-config file, for programs
# outside this tree: API = the headers in include/svmtrace/, exported
# through userspace/lib/libsvmtrace.map (tests/lib/exports.sh checks the
# two agree).  Our own programs link the static archive, which also holds
# the internals they share.  Included by the Makefile after every fragment
# (LIB_SRCS is complete then).  The soname's major stays 0 while the API
# may still change.
LIBSVMTRACE_SONAME := libsvmtrace.so.0
LIBSVMTRACE_SO := $(BUILD)/lib/libsvmtrace.so.$(SVMTRACE_VERSION)
LIBSVMTRACE_PC := $(BUILD)/lib/svmtrace.pc
LIBDIR ?= $(PREFIX)/lib
LIB_PIC_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(LIB_SRCS))

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(LIBSVMTRACE_SO): $(LIB_PIC_OBJS) userspace/lib/libsvmtrace.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(LIBSVMTRACE_SONAME) -Wl,--no-undefined \
		-Wl,--version-script=userspace/lib/libsvmtrace.map $(ALL_LDFLAGS) \
		-o $@ $(LIB_PIC_OBJS) $(LIB_LIBS)
	ln -sf $(@F) $(@D)/$(LIBSVMTRACE_SONAME)
	ln -sf $(LIBSVMTRACE_SONAME) $(@D)/libsvmtrace.so

$(LIBSVMTRACE_PC): userspace/lib/svmtrace.pc.in debian/changelog
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(SVMTRACE_VERSION)|' $< >$@


.PHONY: install-lib check-lib-exports
install-lib: $(LIBSVMTRACE_SO) $(LIBSVMTRACE_PC)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/svmtrace
	install -m 644 $(LIBSVMTRACE_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIBSVMTRACE_SO)) $(DESTDIR)$(LIBDIR)/$(LIBSVMTRACE_SONAME)
	ln -sf $(LIBSVMTRACE_SONAME) $(DESTDIR)$(LIBDIR)/libsvmtrace.so
	install -m 644 $(LIBSVMTRACE_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 644 include/svmtrace/*.h $(DESTDIR)$(PREFIX)/include/svmtrace/

check-lib-exports: $(LIBSVMTRACE_SO)
	tests/lib/exports.sh $(LIBSVMTRACE_SO) include/svmtrace
CHECK_STEPS += check-lib-exports

-include $(LIB_PIC_OBJS:.o=.d)
