# SPDX-License-Identifier: GPL-2.0
#
# tests/unit/unit.mk - host unit tests (cmocka). Included by the top-level
# Makefile; also usable alone, from the repository root:
#
#	make -f tests/unit/unit.mk unit-check
#
# Adding a test (in any fragment, included before or after this one; paths
# are relative to the repository root, the binary's name starts with test_):
#
#	UNIT_TESTS        += test_foo
#	test_foo_SRCS     := tests/unit/test_foo.c libmemmon/foo.c
#	test_foo_CFLAGS   := -I libmemmon/include     # optional, after UNIT_CFLAGS
#	test_foo_LIBS     := -lrt                     # optional, after -lcmocka
#	test_foo_ENV      := FOO_OPTIONS=1            # optional, set when run
#	test_foo_CC       := clang                    # optional, default $(UNIT_CC)
#
# The binary is build/unit/test_foo, compiled and linked from all of its SRCS
# in one compiler run, so a source may be built twice under two names with
# different flags: see test_ring_stress and test_ring_stress_tsan. A SRCS
# entry may be an archive (the CLI tests share one: tools/tools.mk). A binary depends on its SRCS, on every header under
# uapi/, driver/, tests/unit/ and libmemmon/, and on this file.
#
# Targets:
#	unit-build	build every test in UNIT_TESTS
#	unit-check	build and run them all; each run's output (cmocka in TAP
#			form, sanitizer reports) goes to build/unit/<name>.log;
#			prints one line per binary, its log when it failed, and
#			last exactly one summary line:
#				unit: N passed, N failed
#			where N counts test cases over all binaries. A binary that
#			exits non-zero without a failing case (a sanitizer report,
#			a crash) counts one failure, plus one for each planned case
#			it never reported. Exits non-zero if anything failed.
#	unit-clean	remove build/unit

unit_saved_goal := $(.DEFAULT_GOAL)

UNIT_OUT	?= build/unit
UNIT_CC		?= $(CC)
UNIT_CFLAGS	?= -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		   -I uapi -I tests/unit -I driver/transport
UNIT_LIBS	?= -lcmocka
UNIT_MK		:= $(lastword $(MAKEFILE_LIST))

# Headers anything may include: rebuild on any change, tests are cheap.
UNIT_HDRS	= $(wildcard uapi/*.h uapi/linux/*.h driver/*.h driver/*/*.h tests/unit/*.h \
			     libmemmon/*.h libmemmon/include/*/*.h)

UNIT_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer

# --- driver/transport/ring.h ----------------------------------------------
UNIT_TESTS		+= test_ring test_ring_stress test_ring_stress_tsan

UNIT_TESTS		+= test_rec_check
test_rec_check_SRCS	:= tests/unit/test_rec_check.c
test_rec_check_CFLAGS	:= $(UNIT_SAN)

test_ring_SRCS		:= tests/unit/test_ring.c
test_ring_CFLAGS	:= $(UNIT_SAN)
test_ring_ENV		:= ASAN_OPTIONS=detect_leaks=1

test_ring_stress_SRCS	:= tests/unit/test_ring_stress.c
test_ring_stress_CFLAGS	:= -pthread

test_ring_stress_tsan_SRCS	:= tests/unit/test_ring_stress.c
test_ring_stress_tsan_CFLAGS	:= -pthread -fsanitize=thread -O1
test_ring_stress_tsan_ENV	:= TSAN_OPTIONS=halt_on_error=1
# ---------------------------------------------------------------------------

.PHONY: unit-build unit-check unit-clean

# $$(...) in prerequisites is expanded after every makefile was read, so
# tests appended to UNIT_TESTS by later fragments are included. This applies
# to the rules that follow in the including Makefile too: "$$" in their
# prerequisites means "$".
.SECONDEXPANSION:

$(UNIT_OUT)/test_%: $$(test_$$*_SRCS) $$(UNIT_HDRS) $(UNIT_MK)
	@mkdir -p $(@D)
	$(or $(test_$*_CC),$(UNIT_CC)) $(UNIT_CFLAGS) $(test_$*_CFLAGS) \
		-o $@ $(test_$*_SRCS) $(UNIT_LIBS) $(test_$*_LIBS)

unit-build: $$(addprefix $(UNIT_OUT)/,$$(UNIT_TESTS))

# Counting, from a TAP log: "1..N" plans, "ok"/"not ok" lines; see above.
define unit_count
awk -v rc=$$rc '/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); plan += $$1 } \
	/^ok / { ok++ } /^not ok / { nok++ } \
	END { miss = plan - ok - nok; if (miss > 0) nok += miss; \
	      if (rc != 0 && nok == 0) nok = 1; print ok + 0, nok + 0 }'
endef

# One shell line per test: run it, count its cases, report it. A test that
# hangs is killed after UNIT_TIMEOUT seconds (a failure, exit 124), so a
# deadlock fails the suite instead of stalling CI.
UNIT_TIMEOUT ?= 600
define unit_run_one
	env CMOCKA_MESSAGE_OUTPUT=TAP $($(1)_ENV) timeout -k 10 $(UNIT_TIMEOUT) $(UNIT_OUT)/$(1) \
		>$(UNIT_OUT)/$(1).log 2>&1; rc=$$?; \
	set -- $$($(unit_count) $(UNIT_OUT)/$(1).log); \
	pass=$$((pass + $$1)); fail=$$((fail + $$2)); \
	if [ $$2 -eq 0 ]; then \
		echo "  PASS $(1) ($$1 cases)"; \
	else \
		echo "  FAIL $(1) ($$2 of $$(($$1 + $$2)) cases failed, exit $$rc):"; \
		sed 's/^/    | /' $(UNIT_OUT)/$(1).log; \
	fi;
endef

unit-check: unit-build
	@pass=0; fail=0; \
	$(foreach t,$(UNIT_TESTS),$(call unit_run_one,$(t))) \
	echo "unit: $$pass passed, $$fail failed"; \
	[ $$fail -eq 0 ]

unit-clean:
	rm -rf $(UNIT_OUT)

.DEFAULT_GOAL := $(unit_saved_goal)
