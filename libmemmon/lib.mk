# SPDX-License-Identifier: GPL-2.0
#
# libmemmon: build/lib/libmemmon.a, build/lib/libmemmon.so.0 (+ .so link),
# build/lib/libmemmon.pc. Included by the top Makefile; standalone too:
#   make -f libmemmon/lib.mk lib lib-unit
#
# Targets: lib, lib-install, lib-uninstall (DESTDIR, PREFIX, LIBDIR: e.g.
# /usr/lib/x86_64-linux-gnu; the library installs as libmemmon.so.0.1.0
# with the .so.0 and .so links; LDFLAGS are added to the link),
# lib-unit (build and run the test_lib_* and, with tools/tools.mk, the
# test_cli_* cmocka tests under ASan/UBSan into build/libunit, without
# tests/unit/unit.mk), lib-check-headers (every public/uapi header alone,
# as C and C++; test_lib_man does the same inside unit-check).
# The unit tests are appended to UNIT_TESTS with per-test _SRCS, _CFLAGS,
# _LIBS and _ENV for tests/unit/unit.mk. Uses from the top Makefile, with
# defaults when run alone: B, CC, CXX, PREFIX, DESTDIR, USER_CFLAGS.
# Needs: libjansson-dev, libzstd-dev, libisal-dev (crc32), libcmocka-dev.

B		?= build
CC		?= cc
CXX		?= c++
PREFIX		?= /usr/local
DESTDIR		?=
LIBDIR		?= $(PREFIX)/lib
USER_CFLAGS	?= -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE

LIB_VERSION	:= 0.1.0
LIB_SONAME	:= libmemmon.so.0
LIB_DIR		:= $(B)/lib
LIB_A		:= $(LIB_DIR)/libmemmon.a
LIB_SO		:= $(LIB_DIR)/$(LIB_SONAME)
LIB_PC		:= $(LIB_DIR)/libmemmon.pc

LIB_SRCS	:= $(addprefix libmemmon/,session.c ring.c merge.c decode.c \
			paths.c json.c $(LIB_TRACE_SRCS))
LIB_TRACE_SRCS	:=
LIB_SRCS	+= $(wildcard libmemmon/trace_*.c)
LIB_HDRS	:= $(wildcard libmemmon/include/memmon/*.h) libmemmon/internal.h \
		   $(wildcard libmemmon/*.h) uapi/linux/memmon.h uapi/memmon_names.h \
		   uapi/memmon_rec_check.h
LIB_OBJS	:= $(patsubst libmemmon/%.c,$(LIB_DIR)/obj/%.o,$(LIB_SRCS))
LIB_INC		:= -I uapi -I libmemmon/include -I libmemmon
LIB_CFLAGS	:= $(filter-out -std=%,$(USER_CFLAGS)) -std=gnu11 -D_GNU_SOURCE \
		   -fvisibility=hidden -fPIC -fno-semantic-interposition $(LIB_INC)
# What a program linking libmemmon.a also needs.
LIB_DEPLIBS	:= -ljansson -lzstd -lisal -lz

.PHONY: lib lib-install lib-uninstall lib-unit lib-check-headers

lib: $(LIB_A) $(LIB_SO) $(LIB_DIR)/libmemmon.so $(LIB_PC)

$(LIB_DIR)/obj/%.o: libmemmon/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) libmemmon/libmemmon.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=libmemmon/libmemmon.map -Wl,--no-undefined \
		-o $@ $(LIB_OBJS) $(LIB_DEPLIBS)

$(LIB_DIR)/libmemmon.so: $(LIB_SO)
	ln -sf $(LIB_SONAME) $@

# Regenerated whenever PREFIX/LIBDIR change (written only if different).
$(LIB_PC): libmemmon/libmemmon.pc.in libmemmon-pc-force
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@VERSION@|$(LIB_VERSION)|' $< > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; \
	 echo "  GEN     $@ (prefix $(PREFIX))"; fi

.PHONY: libmemmon-pc-force
libmemmon-pc-force:

LIB_MAN3	:= docs/man/libmemmon.3
LIB_MAN5	:= docs/man/memmon-trace-file.5

lib-install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/memmon $(DESTDIR)$(PREFIX)/include/linux
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libmemmon.so.$(LIB_VERSION)
	ln -sf libmemmon.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libmemmon.so
	install -m 0644 $(LIB_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 0644 libmemmon/include/memmon/*.h $(DESTDIR)$(PREFIX)/include/memmon/
	install -m 0644 uapi/linux/memmon.h $(DESTDIR)$(PREFIX)/include/linux/memmon.h
	$(foreach m,$(wildcard $(LIB_MAN3)),install -D -m 0644 $(m) \
		$(DESTDIR)$(PREFIX)/share/man/man3/$(notdir $(m));)
	$(foreach m,$(wildcard $(LIB_MAN5)),install -D -m 0644 $(m) \
		$(DESTDIR)$(PREFIX)/share/man/man5/$(notdir $(m));)

lib-uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libmemmon.a $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
	      $(DESTDIR)$(LIBDIR)/libmemmon.so.$(LIB_VERSION) \
	      $(DESTDIR)$(LIBDIR)/libmemmon.so $(DESTDIR)$(LIBDIR)/pkgconfig/libmemmon.pc \
	      $(DESTDIR)$(PREFIX)/include/linux/memmon.h \
	      $(DESTDIR)$(PREFIX)/share/man/man3/libmemmon.3 \
	      $(DESTDIR)$(PREFIX)/share/man/man5/memmon-trace-file.5
	rm -rf $(DESTDIR)$(PREFIX)/include/memmon

# ---------------------------------------------------------------------
# Unit tests. Each test compiles the library sources itself, with the
# sanitizers, so that ASan/UBSan watch the library code and not only the
# test.

LIB_TEST_SAN	:= -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all
LIB_TESTS	:= test_lib_ring test_lib_merge test_lib_decode test_lib_json \
		   test_lib_format \
		   $(notdir $(basename $(wildcard tests/unit/test_lib_trace*.c))) \
		   $(notdir $(basename $(wildcard tests/unit/test_lib_man*.c)))
LIB_TESTS	:= $(sort $(LIB_TESTS))

define lib_test_vars
$(1)_SRCS	:= tests/unit/$(1).c $(LIB_SRCS)
$(1)_CFLAGS	:= $(LIB_TEST_SAN) -iquote libmemmon $(LIB_INC) -I tests/unit -O1
$(1)_ENV	:= ASAN_OPTIONS=detect_leaks=1
$(1)_LIBS	:= $(LIB_TEST_SAN) -lcmocka $(LIB_DEPLIBS)
endef
$(foreach t,$(LIB_TESTS),$(eval $(call lib_test_vars,$(t))))
UNIT_TESTS	+= $(LIB_TESTS)

LIB_UNIT_DIR	:= $(B)/libunit
LIB_UNIT_BINS	:= $(addprefix $(LIB_UNIT_DIR)/,$(LIB_TESTS))

$(LIB_UNIT_DIR)/%: tests/unit/%.c $(LIB_SRCS) $(LIB_HDRS) $(wildcard tests/unit/*.h tools/*.[ch])
	@mkdir -p $(@D)
	$(CC) $(filter-out -O2 -std=%,$(USER_CFLAGS)) -std=gnu11 $($*_CFLAGS) \
		-o $@ $($*_SRCS) $($*_LIBS)

# $$: tools/tools.mk, read after this file, appends its CLI tests.
.SECONDEXPANSION:
lib-unit: $$(LIB_UNIT_BINS)
	@set -e; for t in $(LIB_UNIT_BINS); do echo "# $$t"; $$t; done

# Every public header alone, as C and as C++ (rule 16).
lib-check-headers:
	@mkdir -p $(B)/hdrcheck
	@set -e; for h in memmon/memmon.h memmon/decode.h memmon/trace.h linux/memmon.h; do \
		echo "#include <$$h>" > $(B)/hdrcheck/t.c; \
		$(CC) -std=c99 -Wall -Wextra -Werror -pedantic-errors -Wno-variadic-macros \
			-I uapi -I libmemmon/include -fsyntax-only $(B)/hdrcheck/t.c; \
		cp $(B)/hdrcheck/t.c $(B)/hdrcheck/t.cc; \
		$(CXX) -std=c++11 -Wall -Wextra -Werror -I uapi -I libmemmon/include \
			-fsyntax-only $(B)/hdrcheck/t.cc; \
		echo "header ok: $$h"; \
	done

# test_lib_format holds the formatters to their reference: the originals.
test_lib_format_SRCS	+= tests/unit/ref_format.c

# The trace tests check the file's CRC-32 against zlib's own (the oracle).
$(foreach t,$(filter test_lib_trace%,$(LIB_TESTS)),$(eval $(t)_LIBS += -lz))

# test_lib_man builds the man page's examples from the repository root.
test_lib_man_CFLAGS	+= -DREPO_ROOT='"$(CURDIR)"'
