#!/usr/bin/env bash
# vmtest: no-module
# Module lifecycle: load, the device node, modinfo, unload; 100 load/unload
# cycles with no leak in slab, per-CPU or vmalloc memory beyond noise.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/leak.sh"
loaded() { grep -q '^memmon ' /proc/modules; }
not_loaded() { ! loaded; }

t "memmon is not loaded before the test" not_loaded
t "insmod memmon.ko succeeds" insmod "$MEMMON_KO"
t "memmon appears in /proc/modules" loaded
t "/dev/memmon is a character device" test -c /dev/memmon
# The default mode is 0600 root:root: only root (or a udev rule) grants access.
t "/dev/memmon has mode 0600" test "$(stat -c %a /dev/memmon)" = 600
t "/dev/memmon is owned by root" test "$(stat -c %u:%g /dev/memmon)" = 0:0
t "/dev/memmon opens read-write as root" sh -c 'exec 3<>/dev/memmon'
t "misc class knows the device" test -e /sys/class/misc/memmon/dev
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
t "module version is the dkms.conf version ($ver)" \
	test "$(cat /sys/module/memmon/version 2>/dev/null)" = "$ver"
t "modinfo: license GPL" sh -c "modinfo -F license '$MEMMON_KO' | grep -qx GPL"
t "modinfo: description present" sh -c "test -n \"\$(modinfo -F description '$MEMMON_KO')\""
t "every parameter has a description" sh -c \
	"! modinfo -F parm '$MEMMON_KO' | grep -v ':.\{10,\}'"
t "rmmod memmon succeeds" rmmod memmon
t "/dev/memmon is gone after rmmod" test ! -e /dev/memmon
t "memmon is not loaded after rmmod" not_loaded

# Leak check: settle the allocators with a few cycles, then compare the
# kernel's own memory counters across 100 more (leak.sh).
cycle() {
	local i
	for ((i = 0; i < $1; i++)); do
		insmod "$MEMMON_KO" || return 1
		exec 3<>/dev/memmon || return 1
		exec 3>&-
		rmmod memmon || return 1
	done
}

# 100 cycles; 10 on the debug kernel (tests/check-debug), where a cycle
# takes ~7 s instead of ~1.
N=100
[ -e /sys/kernel/debug/kmemleak ] && N=10

t "10 warm-up load/unload cycles" cycle 10
leak_mark
t "$N load/unload cycles, each opening the device" cycle $N
leak_check "$N cycles" 256
exit $failed
