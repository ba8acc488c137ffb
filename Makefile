# SPDX-License-Identifier: GPL-2.0
#
# memmon: the module (through Kbuild), the library, the tool, the tests.
#
#   make              build memmon.ko, libmemmon and memmon
#   make check        install what is missing, build, run every test suite
#   make check-debug  the in-VM suite on a lockdep/KASAN/kmemleak kernel
#   make demo         boot the test VM, load memmon, show what it sees
#   make bench        benchmarks (in the VM and on the host)
#   make install      library, headers, tool, man pages, udev rule
#   make dkms-install the module, through DKMS, for KVER
#
# The module is built against KDIR: the running kernel's build tree when it
# has one, else the headers of the Debian test kernel (scripts/kver).

KVER	?= $(shell scripts/kver 2>/dev/null)
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KDIR	?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),/usr/src/linux-headers-$(KVER))

PREFIX	?= /usr/local
DESTDIR	?=
VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

CC	?= cc
USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE
B	:= build

.PHONY: all module deps check check-debug demo bench install uninstall \
	dkms-install dkms-uninstall clean vm-tests FORCE

all: module lib tools vm-tests

# Fragments each part of the tree owns: unit tests, library, tools, in-VM
# test programs, benchmarks. Each adds its own targets.
-include tests/unit/unit.mk
-include libmemmon/lib.mk
-include tools/tools.mk
-include tests/vm/vm.mk
-include tests/bench/bench.mk

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

deps:
	scripts/deps

# Sums every suite into one closing line; exits non-zero on any failure.
check: deps
	$(MAKE) all
	tests/check

check-debug:
	scripts/deps --debug
	$(MAKE) all
	tests/check-debug

demo: deps
	$(MAKE) all
	tests/vm/run -- tests/demo

install: lib-install tools-install
	install -D -m 0644 udev/60-memmon.rules $(DESTDIR)/lib/udev/rules.d/60-memmon.rules

uninstall: lib-uninstall tools-uninstall
	rm -f $(DESTDIR)/lib/udev/rules.d/60-memmon.rules

# The module installs like any Debian *-dkms package: sources under
# /usr/src/memmon-VERSION, then dkms add/build/install for KVER.
DKMS_SRC := $(DESTDIR)/usr/src/memmon-$(VERSION)
dkms-install:
	install -d $(DKMS_SRC)
	cp -r Kbuild dkms.conf driver uapi $(DKMS_SRC)/
	dkms add -m memmon -v $(VERSION)
	dkms build -m memmon -v $(VERSION) -k $(KVER)
	dkms install -m memmon -v $(VERSION) -k $(KVER)

dkms-uninstall:
	-dkms remove -m memmon -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

# Not "make -C KDIR M=. clean": Kbuild's clean walks the whole tree,
# build/ included, and would delete the test kernel's modules there.
clean:
	rm -f memmon.ko memmon.o memmon.mod memmon.mod.c memmon.mod.o \
		Module.symvers modules.order .memmon*.cmd .Module.symvers.cmd \
		.modules.order.cmd driver/*.o driver/.*.cmd
	rm -rf $(B)/lib $(B)/bin $(B)/unit $(B)/libunit $(B)/vmtests $(B)/vm
