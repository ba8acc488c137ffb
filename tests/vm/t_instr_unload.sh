#!/usr/bin/env bash
# vmtest: no-module
# The unload hazard: memmon.ko is removed while watched tasks sleep inside
# hooked functions (munmap/mmap/mlock on a held mmap_lock, fsync, page
# faults, a GUP fault), entered while the hooks were attached; the kernel
# must not notice (the runner fails on any WARNING/BUG/Oops). Three cases:
#
#  1. hook_fault_direct=0: every hook is a kretprobe, whose return goes
#     through kernel text; rmmod must not wait for the sleepers, and they
#     must finish normally afterwards.
#  2. the default, handle_mm_fault() through memmon's direct-call
#     trampoline (driver/instr/fault_tramp.c), whose frame is module text on the
#     faulting tasks' stacks; hooks_linger_ms=0, so closing the session
#     detaches the hooks: rmmod must then say the module is in use (EBUSY)
#     and leave it loaded, the tasks still asleep where they were; the
#     hooks attach and detach again meanwhile; once the tasks have
#     finished, rmmod must succeed.
#  3. the trampoline again, the hooks left lingering after the session is
#     closed (hooks_linger_ms=600000): rmmod itself detaches them, and
#     memmon's exit must wait for the sleeping faults (the module is seen
#     "Unloading", rmmod still running, the tasks still asleep), then
#     finish once they have returned.
#
# The slow device: ext4 on dm-delay over a loop device over a file in /tmp.
# It is made with no delay and the files are written and dropped from the
# page cache; for each case the table is reloaded with a delay longer than
# any run (hold), so the tasks sleep exactly as long as the case needs, and
# once w_unload has checked them after rmmod the delay-free table is loaded
# again (release): dm-delay's presuspend issues every held bio at once.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/instr.sh

# The tasks sleep while rmmod and the checks after it run: on the debug
# kernel (KASAN, lockdep) detaching the hooks alone takes tens of seconds
# under TCG. The hung-task detector (120 s) is for real hangs, not for a
# test's deliberately held disk: it gets 600 s for this test and its old
# value back afterwards.
HOLD_MS=3600000
hung=/proc/sys/kernel/hung_task_timeout_secs
hung_was=
if [ -w $hung ]; then
	hung_was=$(cat $hung)
	echo 600 >$hung
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
# table MS: dm-delay over the loop device, reads and writes delayed by MS.
table() { echo "0 $sectors delay $loopdev 0 $1 $loopdev 0 $1"; }
# delay MS: load that table. No freeze of the filesystem (--nolockfs): its
# sync would wait on held bios; the suspend issues those (presuspend).
delay() {
	table "$1" | dmsetup load "$dm" && dmsetup suspend --nolockfs "$dm" &&
		dmsetup resume "$dm"
}
cleanup() {
	grep -q '^memmon ' /proc/modules && rmmod memmon
	delay 0 2>/dev/null
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
# Only the calls under test may wait on the held disk. ext4lazyinit zeroes
# inode tables inside a journal handle: held, that handle keeps the next
# commit locked, and every later handle waits for it, so a child would
# sleep in its own mmap() (an atime update) or write() (mtime) instead of
# the call under test. Hence inode tables zeroed by mkfs, and noatime.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 \
	"/dev/mapper/$dm" >/dev/null 2>&1 || skip "mkfs.ext4 failed"
mkdir -p "$work/mnt"
mount -t ext4 -o noatime "/dev/mapper/$dm" "$work/mnt" || skip "mount failed"
for f in cold-a cold-c; do
	head -c 65536 /dev/zero | tr '\0' "${f#cold-}" >"$work/mnt/$f"
done
: >"$work/mnt/dirty-b"
sync
# Data out of the page cache, metadata back in: only the data I/O is slow.
echo 3 >/proc/sys/vm/drop_caches
stat "$work/mnt"/* >/dev/null
delay $HOLD_MS || skip "cannot reload the dm-delay table"

mkfifo "$work/ready" "$work/go"

# Cold data again (the last case read it), then the disk held again.
recool() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	stat "$work/mnt"/* >/dev/null
	delay $HOLD_MS
}

# unload_case MODE INSMOD-ARGS...: MODE free (rmmod must succeed at once),
# busy (rmmod must be refused until the sleepers have finished) or exit
# (rmmod must wait in the module's exit until they have).
unload_case() {
	local mode=$1 line w i idle= rm_pid=
	shift
	n=$((n + 1))
	if insmod "$MEMMON_KO" "$@"; then echo "ok $n - insmod $*"; else
		echo "not ok $n - insmod $*"
		return
	fi
	build/vmtests/w_unload "$work/mnt" "$work/ready" "$work/go" &
	w=$!
	read -r line <"$work/ready"
	n=$((n + 1))
	if [ "$mode" = exit ]; then
		# Expectation: rmmod blocks in memmon's exit, which detached
		# the lingering hooks and waits for the faults' frames.
		rmmod memmon 2>"$work/rmmod.err" &
		rm_pid=$!
		for i in $(seq 300); do
			dmesg | grep -q 'unloading waits for [0-9]* traced page faults' &&
				break
			sleep 0.1
		done
		if [ "$line" = ready ] && kill -0 "$rm_pid" 2>/dev/null &&
			grep -q '^memmon .* Unloading' /proc/modules &&
			dmesg | grep -q 'unloading waits for [0-9]* traced page faults'; then
			echo "ok $n - rmmod with the hooks lingering waits in the module's exit for the faults under the trampoline"
		else
			echo "not ok $n - rmmod with the hooks lingering waits in the module's exit for the faults under the trampoline"
			grep '^memmon ' /proc/modules
		fi
	elif [ "$mode" = free ]; then
		# Expectation: the hooks are detached and nothing pins the module.
		if [ "$line" = ready ] && rmmod memmon; then
			echo "ok $n - rmmod while the watched tasks still sleep in hooked calls"
		else
			echo "not ok $n - rmmod while the watched tasks still sleep in hooked calls"
		fi
	else
		# Expectation: the sleeping faults' frames pin the module.
		if [ "$line" = ready ] && ! rmmod memmon 2>"$work/rmmod.err" &&
			grep -q 'in use' "$work/rmmod.err" &&
			grep -q '^memmon ' /proc/modules; then
			echo "ok $n - rmmod is refused (in use) while watched faults sleep under the trampoline"
		else
			echo "not ok $n - rmmod is refused (in use) while watched faults sleep under the trampoline"
			cat "$work/rmmod.err"
		fi
	fi
	if [ "$mode" = busy ]; then
		# The hooks again while the reference is parked, through
		# /proc/memmon (an idle process watched), and gone again only
		# after the sleepers have returned: that detach finds no frame
		# left and a reference parked by the one before, which must
		# still be dropped.
		(exec sleep 600) &
		idle=$!
		n=$((n + 1))
		if echo "$idle" >/proc/memmon/watch-pids &&
			grep -qx 'hooks_attached 1' /proc/memmon/stats &&
			grep -qx 'fault_hook direct' /proc/memmon/stats; then
			echo "ok $n - the hooks attach again while the module holds itself"
		else
			echo "not ok $n - the hooks attach again while the module holds itself"
		fi
	fi
	echo go >"$work/go"
	# w_unload checks that the tasks still sleep, then says "checked";
	# the disk is released in any case, so that nothing stays held.
	read -r -t 600 line <>"$work/ready"
	n=$((n + 1))
	if [ "$line" = checked ]; then
		echo "ok $n - w_unload checked the sleepers after rmmod"
	else
		echo "not ok $n - w_unload checked the sleepers after rmmod ('$line')"
	fi
	delay 0
	wait $w
	[ "$mode" = free ] && return
	if [ "$mode" = exit ]; then
		n=$((n + 1))
		if wait "$rm_pid" && ! grep -q '^memmon ' /proc/modules; then
			echo "ok $n - ... and rmmod succeeds once they have returned"
		else
			echo "not ok $n - ... and rmmod succeeds once they have returned"
			cat "$work/rmmod.err"
		fi
		return
	fi
	n=$((n + 1))
	if echo "-$idle" >/proc/memmon/watch-pids &&
		grep -qx 'hooks_attached 0' /proc/memmon/stats; then
		echo "ok $n - ... and detach once the sleepers have returned"
	else
		echo "not ok $n - ... and detach once the sleepers have returned"
	fi
	kill "$idle"
	wait "$idle" 2>/dev/null
	n=$((n + 1))
	# Expectation: the last fault's return dropped the pin (a 50 ms poll
	# and an RCU-tasks grace period later); 30 s for the debug kernel.
	for i in $(seq 300); do
		rmmod memmon 2>/dev/null && break
		sleep 0.1
	done
	if grep -q '^memmon ' /proc/modules; then
		echo "not ok $n - rmmod once the faults have returned"
	else
		echo "ok $n - rmmod once the faults have returned"
	fi
}

unload_case free hook_fault_direct=0
recool
unload_case busy hooks_linger_ms=0
recool
unload_case exit hooks_linger_ms=600000
