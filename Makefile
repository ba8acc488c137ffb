# SPDX-License-Identifier: GPL-2.0
#
# memmon: the module (through Kbuild), the library, the tool, the tests.
#
#   make              build memmon.ko, libmemmon and memmon
#   make modules-all  memmon.ko for every test kernel, in build/kmod/KVER/
#   make check        install what is missing, build, run every test suite
#   make soak         long load/unload cycles and fuzzing on every kernel
#   make check-debug  the in-VM suite on a lockdep/KASAN/kmemleak kernel
#   make demo         boot the test VM, load memmon, show what it sees
#   make bench        benchmarks (in the VM and on the host)
#   make install      library, headers, tool, man pages, udev rule
#   make dkms-install the module, through DKMS, for KVER
#   make deb          Debian packages in build/deb/ (debian/, README)
#
# The module is built against KDIR.  KVER=... (a KVER, or a test kernel's
# alias: 6.1, 6.12, rt) builds for that kernel, from its build tree or its
# headers; without it, for the running kernel when it has a build tree, else
# for the default test kernel (scripts/kver).

KVER_GIVEN := $(filter command line environment,$(origin KVER))
ifeq ($(origin KVER),undefined)
KVER	:= $(shell scripts/kver 2>/dev/null)
endif
ifneq ($(filter stock 6.1 6.12 rt,$(KVER)),)
override KVER := $(shell scripts/kver $(KVER))
endif
kdir_of = $(if $(wildcard /lib/modules/$(1)/build/Makefile),/lib/modules/$(1)/build,/usr/src/linux-headers-$(1))
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
ifneq ($(KVER_GIVEN),)
KDIR	?= $(call kdir_of,$(KVER))
else
KDIR	?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(call kdir_of,$(KVER)))
endif

PREFIX	?= /usr/local
DESTDIR	?=
VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

CC	?= cc
USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE
B	:= build

.PHONY: all module kmod modules-all deps check check-debug soak demo bench \
	install uninstall dkms-install dkms-uninstall deb clean vm-tests FORCE

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

# memmon.ko for one test kernel (KVER), built in build/kmod/KVER/ from a copy
# of the module's sources (as tests/check-debug does), so that the tree's own
# memmon.ko stays built for the default kernel.  The copy keeps its objects
# between runs: rsync leaves the excluded build products alone.
KMOD_DIR = $(B)/kmod/$(KVER)
KMOD_KDIR = $(call kdir_of,$(KVER))
kmod:
	@test -n "$(KVER)" || { echo "kmod: no KVER (run scripts/deps)" >&2; exit 1; }
	@test -f $(KMOD_KDIR)/Makefile || \
		{ echo "kmod: no build tree for $(KVER) in $(KMOD_KDIR) (run scripts/deps)" >&2; exit 1; }
	@mkdir -p $(KMOD_DIR)
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='.*.d' \
		--exclude='modules.order' --exclude='Module.symvers' \
		Kbuild dkms.conf driver uapi $(KMOD_DIR)/
	$(MAKE) -C $(KMOD_KDIR) M=$(CURDIR)/$(KMOD_DIR) W=1 modules

# Every test kernel, each tried even when another fails.
modules-all:
	@kvers=$$(scripts/kver --all) || exit 1; failed=; \
	for k in $$kvers; do \
		$(MAKE) --no-print-directory kmod KVER=$$k || failed="$$failed $$k"; \
	done; \
	test -z "$$failed" || { echo "modules-all: memmon.ko did not build for$$failed" >&2; exit 1; }

deps:
	scripts/deps

# Sums every suite into one closing line; exits non-zero on any failure.
check: deps
	$(MAKE) all
	tests/check

# On 6.1, 6.12 and rt: t_instr_cycles for 1000 cycles (100 on rt) and the
# fuzzer for 30 minutes, side by side, then 100 cycles and the command
# tests check-debug leaves out on the debug kernel; MEMMON_SOAK_CYCLES=N and
# MEMMON_SOAK_FUZZ_SECONDS=S ask for other lengths (tests/check).
soak: deps
	$(MAKE) all
	tests/check soak

check-debug:
	scripts/deps --debug
	$(MAKE) all
	tests/check-debug

demo: deps
	$(MAKE) all
	tests/vm/run -- tests/demo

# The udev rule gives /dev/memmon to the group memmon, which sysusers.d
# declares; installing into the running system (no DESTDIR) creates the group
# now rather than at the next boot.
install: lib-install tools-install
	install -D -m 0644 udev/60-memmon.rules $(DESTDIR)/lib/udev/rules.d/60-memmon.rules
	install -D -m 0644 udev/memmon.sysusers $(DESTDIR)/usr/lib/sysusers.d/memmon.conf
	$(if $(DESTDIR),,if command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers memmon.conf; \
	elif ! getent group memmon >/dev/null; then groupadd --system memmon; fi)

uninstall: lib-uninstall tools-uninstall
	rm -f $(DESTDIR)/lib/udev/rules.d/60-memmon.rules \
		$(DESTDIR)/usr/lib/sysusers.d/memmon.conf

# The module installs like any Debian *-dkms package (scripts/dkms-install:
# sources to /usr/src/memmon-VERSION, dkms add/build/install for KVER;
# idempotent; a kernel dkms.conf excludes is skipped, not failed).
dkms-install:
	scripts/dkms-install $(if $(DESTDIR),--root $(DESTDIR)) $(KVER)

dkms-uninstall:
	scripts/dkms-uninstall $(if $(DESTDIR),--root $(DESTDIR))

# memmon-dkms, libmemmon0, libmemmon-dev and memmon in build/deb/, built from
# a copy of the tree's files (git's, tracked and new, or all but build/
# outside git) in build/deb/src, so that the tree stays clean.
deb:
	rm -rf $(B)/deb
	mkdir -p $(B)/deb/src
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z -c -o --exclude-standard | \
			xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\n" "$$f"; done' _ | \
			rsync -a --files-from=- . $(B)/deb/src/; \
	else \
		rsync -a --exclude=/build --exclude='*.o' --exclude='*.ko' . $(B)/deb/src/; \
	fi
	cd $(B)/deb/src && DEB_BUILD_OPTIONS="$$DEB_BUILD_OPTIONS noautodbgsym" \
		dpkg-buildpackage -us -uc -b
	ls $(B)/deb/*.deb

# Not "make -C KDIR M=. clean": Kbuild's clean walks the whole tree,
# build/ included, and would delete the test kernel's modules there.
clean:
	rm -f memmon.ko memmon.o memmon.mod memmon.mod.c memmon.mod.o \
		Module.symvers modules.order .memmon*.cmd .Module.symvers.cmd \
		.modules.order.cmd driver/*.o driver/.*.cmd driver/*/*.o driver/*/.*.cmd
	rm -rf $(B)/lib $(B)/bin $(B)/unit $(B)/libunit $(B)/vmtests $(B)/vm $(B)/kmod
