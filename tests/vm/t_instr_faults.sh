#!/usr/bin/env bash
# Page-fault records: every class on purpose (anonymous, shmem, file on a
# real block filesystem, swap-in, SIGSEGV) and the fidelity rule (records
# == getrusage, exactly) for single- and multi-threaded and GUP workloads.
# Sets up what build/vmtests/w_faults needs: ext4 on a loop device over a
# file in /tmp (tmpfs), and swap on zram. The test VM always has both
# (modules of the stock kernel, built into the debug one): a part that
# cannot be set up is a failure, and the rest still runs.
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
build/vmtests/w_faults "${args[@]}" && [ $setup_failed = 0 ]
