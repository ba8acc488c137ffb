# SPDX-License-Identifier: GPL-2.0
#
# The memmon command: build/bin/memmon, linked with build/lib/libmemmon.a
# (so it runs without the shared library installed). Included by the top
# Makefile after libmemmon/lib.mk; standalone:
#   make -f libmemmon/lib.mk -f tools/tools.mk tools
#
# Targets: tools, tools-install, tools-uninstall (DESTDIR, PREFIX); adds
# build/libunit/test_lib_device (run in the VM by tests/vm/t_cli_lib.sh)
# to vm-tests, and the test_cli_* unit tests to UNIT_TESTS.
# Needs: liburcu-dev (rculfhash, wfcqueue) besides what libmemmon needs.

B		?= build
CC		?= cc
PREFIX		?= /usr/local
DESTDIR		?=
USER_CFLAGS	?= -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE

TOOLS_BIN	:= $(B)/bin/memmon
# Everything but main.c also goes into the CLI unit tests.
TOOLS_SRCS	:= $(filter-out tools/main.c,$(wildcard tools/*.c))
TOOLS_OBJS	:= $(patsubst tools/%.c,$(B)/bin/obj/%.o,$(TOOLS_SRCS) tools/main.c)
# The project's one version number (dkms.conf's, as the module's).
MEMMON_PKG_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
TOOLS_CFLAGS	:= $(filter-out -std=%,$(USER_CFLAGS)) -std=gnu11 -D_GNU_SOURCE \
		   -I uapi -I libmemmon/include -I tools \
		   -DMEMMON_VERSION='"$(MEMMON_PKG_VERSION)"'
TOOLS_LIBS	:= -lurcu-cds -lurcu -lurcu-common -lpthread

.PHONY: tools tools-install tools-uninstall

tools: $(TOOLS_BIN)

$(B)/bin/obj/%.o: tools/%.c $(wildcard tools/*.h) $(wildcard libmemmon/include/memmon/*.h) \
		uapi/linux/memmon.h uapi/memmon_names.h
	@mkdir -p $(@D)
	$(CC) $(TOOLS_CFLAGS) -c -o $@ $<

$(TOOLS_BIN): $(TOOLS_OBJS) $(B)/lib/libmemmon.a
	$(CC) -o $@ $(TOOLS_OBJS) $(B)/lib/libmemmon.a -ljansson -lzstd -lisal -lz $(TOOLS_LIBS)

tools-install: tools
	install -D -m 0755 $(TOOLS_BIN) $(DESTDIR)$(PREFIX)/bin/memmon
	$(if $(wildcard docs/man/memmon.1),install -D -m 0644 docs/man/memmon.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/memmon.1)

tools-uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/memmon $(DESTDIR)$(PREFIX)/share/man/man1/memmon.1

# CLI tests: the tool's code (without main) run in-process under the
# sanitizers; see tests/unit/test_cli_args.c.
define cli_test_vars
$(1)_SRCS	:= tests/unit/$(1).c $(TOOLS_SRCS) $(LIB_SRCS)
$(1)_CFLAGS	:= $(LIB_TEST_SAN) -iquote libmemmon -I uapi -I libmemmon/include -I tools -I tests/unit -O1 \
		   -DMEMMON_VERSION='"$(MEMMON_PKG_VERSION)"'
$(1)_LIBS	:= $(LIB_TEST_SAN) -lcmocka -ljansson -lzstd -lisal -lz $(TOOLS_LIBS)
$(1)_ENV	:= ASAN_OPTIONS=detect_leaks=1
endef
CLI_TESTS	:= $(notdir $(basename $(wildcard tests/unit/test_cli_*.c)))
$(foreach t,$(CLI_TESTS),$(eval $(call cli_test_vars,$(t))))
UNIT_TESTS	+= $(CLI_TESTS)
LIB_UNIT_BINS	+= $(addprefix $(B)/libunit/,$(CLI_TESTS))
# The fake /dev/memmon of test_cli_fakedev answers through these wrappers.
test_cli_fakedev_LIBS	+= -Wl,--wrap=ioctl,--wrap=mmap,--wrap=munmap

# libmemmon against the real module, run in the VM by tests/vm/t_cli_lib.sh
# (not a host unit test: it needs /dev/memmon). Built with the VM tests.
LIB_DEVICE_TEST	:= $(B)/libunit/test_lib_device

$(LIB_DEVICE_TEST): tests/unit/test_lib_device.c $(B)/lib/libmemmon.a \
		$(wildcard libmemmon/include/memmon/*.h) uapi/linux/memmon.h uapi/memmon_names.h
	@mkdir -p $(@D)
	$(CC) $(TOOLS_CFLAGS) -o $@ $< $(B)/lib/libmemmon.a -lcmocka -ljansson -lzstd -lisal -lz

vm-tests: $(LIB_DEVICE_TEST)

# rec_pipe's two threads under ThreadSanitizer as well (the handover of
# batches between the reader and the consumer).
UNIT_TESTS			+= test_cli_rec_pipe_tsan
test_cli_rec_pipe_tsan_SRCS	:= tests/unit/test_cli_rec_pipe.c tools/rec_pipe.c tools/rec_queue.c \
				   $(LIB_SRCS)
test_cli_rec_pipe_tsan_CFLAGS	:= -pthread -fsanitize=thread -O1 -iquote libmemmon \
				   -I libmemmon/include -I tools
test_cli_rec_pipe_tsan_LIBS	:= -fsanitize=thread -ljansson -lzstd -lisal -lz -lpthread
test_cli_rec_pipe_tsan_ENV	:= TSAN_OPTIONS=halt_on_error=1

# rec_queue's handover, in trace's direction, under ThreadSanitizer.
UNIT_TESTS			+= test_cli_rec_queue_tsan
test_cli_rec_queue_tsan_SRCS	:= tests/unit/test_cli_rec_queue.c tools/rec_queue.c
test_cli_rec_queue_tsan_CFLAGS	:= -pthread -fsanitize=thread -O1 -I uapi -I libmemmon/include -I tools
test_cli_rec_queue_tsan_LIBS	:= -fsanitize=thread -lpthread
test_cli_rec_queue_tsan_ENV	:= TSAN_OPTIONS=halt_on_error=1
