#!/usr/bin/env bash
# vmtest: no-module
# The unload hazard: memmon.ko is removed while watched tasks sleep inside
# hooked functions (munmap/mmap/mlock on a held mmap_lock, fsync, page
# faults, a GUP fault), entered while the hooks were attached. rmmod must
# not wait for them, they must finish normally afterwards, and the kernel
# must not notice (the runner fails on any WARNING/BUG/Oops).
#
# The slow device: ext4 on dm-delay over a loop device over a file in /tmp.
# It is made with no delay, the files are written and dropped from the page
# cache, then the table is reloaded with DELAY_MS on reads and writes.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/instr.sh

# The sleeps must outlast rmmod and the checks after it: 10 s on the stock
# kernel; on the debug kernel (KASAN, lockdep) detaching the hooks alone
# takes tens of seconds under TCG, and 10 s was seen to run out there.
# With 60 s a task waits on several delayed I/Os in a row, past the
# debug kernel's hung-task warning (120 s), which fails the run: that
# detector is for real hangs, not for a test's deliberately slow disk, so
# it gets 600 s for this test and its old value back afterwards.
DELAY_MS=10000
hung=/proc/sys/kernel/hung_task_timeout_secs
hung_was=
if [ -e /sys/kernel/debug/kmemleak ]; then
	DELAY_MS=60000
	if [ -w $hung ]; then
		hung_was=$(cat $hung)
		echo 600 >$hung
	fi
fi
n=0
# The test VM always has these (modules of the stock kernel, built into
# the debug one): not being able to set them up is a failure, not a skip.
skip() {
	n=$((n + 1))
	echo "not ok $n - unload while tasks sleep in hooked calls: cannot set up the slow device: $*"
	exit 1
}

work=$(mktemp -d /tmp/memmon-unload.XXXXXX)
loopdev=
sectors=0
dm=memmon-slow-$$
# table DELAY_MS: dm-delay over the loop device, reads and writes delayed.
table() { echo "0 $sectors delay $loopdev 0 $1 $loopdev 0 $1"; }
cleanup() {
	grep -q '^memmon ' /proc/modules && rmmod memmon
	table 0 | dmsetup load "$dm" 2>/dev/null && dmsetup suspend "$dm" &&
		dmsetup resume "$dm"
	mountpoint -q "$work/mnt" && umount "$work/mnt"
	dmsetup remove "$dm" 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	rm -rf "$work"
	[ -n "$hung_was" ] && echo "$hung_was" >$hung
}
trap cleanup EXIT

kmod loop dm-delay ext4 || skip "no loop/dm-delay/ext4 modules"
truncate -s 64M "$work/img" && loopdev=$(losetup -f --show "$work/img") ||
	skip "no loop device"
sectors=$(blockdev --getsz "$loopdev")
table 0 | dmsetup create "$dm" || skip "dmsetup create failed"
# No udev in the VM: make /dev/mapper/$dm ourselves.
dmsetup mknodes "$dm"
mkfs.ext4 -q -F "/dev/mapper/$dm" >/dev/null 2>&1 || skip "mkfs.ext4 failed"
mkdir -p "$work/mnt"
mount -t ext4 "/dev/mapper/$dm" "$work/mnt" || skip "mount failed"
for f in cold-a cold-c; do
	head -c 65536 /dev/zero | tr '\0' "${f#cold-}" >"$work/mnt/$f"
done
: >"$work/mnt/dirty-b"
sync
# Data out of the page cache, metadata back in: only the data I/O is slow.
echo 3 >/proc/sys/vm/drop_caches
stat "$work/mnt"/* >/dev/null
table $DELAY_MS | dmsetup load "$dm" && dmsetup suspend "$dm" &&
	dmsetup resume "$dm" || skip "cannot reload the dm-delay table"

n=$((n + 1))
if insmod "$MEMMON_KO"; then echo "ok $n - insmod"; else
	echo "not ok $n - insmod"
	exit 1
fi
mkfifo "$work/ready" "$work/go"
build/vmtests/w_unload "$work/mnt" "$work/ready" "$work/go" &
w=$!
read -r line <"$work/ready"
n=$((n + 1))
# Expectation: the hooks are detached and nothing pins the module.
if [ "$line" = ready ] && rmmod memmon; then
	echo "ok $n - rmmod while the watched tasks still sleep in hooked calls"
else
	echo "not ok $n - rmmod while the watched tasks still sleep in hooked calls"
fi
echo go >"$work/go"
wait $w
