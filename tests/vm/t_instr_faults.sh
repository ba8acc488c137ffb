#!/usr/bin/env bash
# Page-fault records: every class on purpose (anonymous, shmem, file on a
# real block filesystem, swap-in, SIGSEGV) and the fidelity rule (records
# == getrusage, exactly) for single- and multi-threaded and GUP workloads.
# Sets up what build/vmtests/w_faults needs: ext4 on a loop device over a
# file in /tmp (tmpfs), and swap on zram. The test VM always has both
# (modules of the stock kernel, built into the debug one): a part that
# cannot be set up is a failure, and the rest still runs. All of it twice:
# with the native page-table walk (the default) and with the generic one.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/instr.sh

work=$(mktemp -d /tmp/memmon-faults.XXXXXX)
loopdev=
cleanup() {
	[ -n "$swapdev" ] && swapoff "$swapdev" 2>/dev/null
	[ -n "$swapdev" ] && echo 1 >/sys/block/zram0/reset 2>/dev/null
	mountpoint -q "$work/mnt" && umount "$work/mnt"
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	rm -rf "$work"
}
swapdev=
trap cleanup EXIT

args=()
setup_failed=0
if ext4_mount "$work/ext4.img" "$work/mnt"; then
	args+=(--dir "$work/mnt")
else
	echo "not ok - file-backed faults: cannot set up ext4 on a loop device"
	setup_failed=1
fi
if zram_swap; then
	args+=(--swap)
else
	echo "not ok - swap-in faults: cannot set up swap on zram"
	setup_failed=1
fi
rc=0
build/vmtests/w_faults "${args[@]}" || rc=1
if grep -qx 'fault_walk native' /proc/memmon/stats; then
	echo "ok - /proc/memmon/stats says fault_walk native by default"
else
	echo "not ok - by default /proc/memmon/stats says $(grep fault_walk /proc/memmon/stats)"
	rc=1
fi

# Again with Xen PV's page-table walk (the kernel's accessors), which no
# Xen PV guest here would otherwise run: hook_walk_generic=1 (read at
# attach) on the same faults, every check the same.
if rmmod memmon && insmod "$MEMMON_KO" hook_walk_generic=1; then
	echo "ok - generic walk: memmon.ko reloaded with hook_walk_generic=1"
	build/vmtests/w_faults "${args[@]}" |
		sed -E 's/^((not )?ok [0-9]+ - )/\1generic walk: /'
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	if grep -qx 'fault_walk generic' /proc/memmon/stats; then
		echo "ok - generic walk: /proc/memmon/stats says fault_walk generic"
	else
		echo "not ok - generic walk: /proc/memmon/stats says $(grep fault_walk /proc/memmon/stats)"
		rc=1
	fi
else
	echo "not ok - generic walk: cannot reload memmon.ko with hook_walk_generic=1"
	rc=1
fi

# The kretprobe, which memmon falls back to where the trampoline cannot be
# had (a BPF fentry program or a livepatch holding handle_mm_fault()'s
# direct-call slot, hook_fault_direct=0): the same checks, since a fallback
# that loses faults silently is the fidelity bug this file exists to catch.
if rmmod memmon && insmod "$MEMMON_KO" hook_fault_direct=0; then
	echo "ok - kretprobe: memmon.ko reloaded with hook_fault_direct=0"
	build/vmtests/w_faults "${args[@]}" |
		sed -E 's/^((not )?ok [0-9]+ - )/\1kretprobe: /'
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	hook=$(sed -n 's/^fault_hook //p' /proc/memmon/stats)
	if [ "$hook" = ftrace ] || [ "$hook" = kprobe ]; then
		echo "ok - kretprobe: /proc/memmon/stats says fault_hook $hook"
	else
		echo "not ok - kretprobe: /proc/memmon/stats says fault_hook '$hook'"
		rc=1
	fi
else
	echo "not ok - kretprobe: cannot reload memmon.ko with hook_fault_direct=0"
	rc=1
fi
[ $rc = 0 ] && [ $setup_failed = 0 ]
