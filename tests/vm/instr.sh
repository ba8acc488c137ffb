# Shell helpers of the instrumentation tests (sourced by t_instr_*.sh).
#
# The VM runs the test kernel with the host's root, whose /lib/modules has
# nothing for it: modules come from $MEMMON_KMOD_ROOT, from the test
# kernel's tree that scripts/deps unpacks, build/kernel/$KVER/root, or, for
# the debug kernel, from scripts/debug-kernel's cache.

kver=$(uname -r)

# kmod MODULE...: load modules (and their dependencies) of the test kernel.
kmod() {
	local m root
	for m; do
		grep -q "^${m//-/_} " /proc/modules && continue
		modprobe -q "$m" 2>/dev/null && continue
		# The test kernel's tree, seen through the host's root (for the
		# debug kernel tests/vm/run sets MEMMON_KMOD_ROOT to its cache):
		# its modules.builtin says what is built in.
		for root in ${MEMMON_KMOD_ROOT:-} "build/kernel/$kver/root"; do
			[ -d "$root/lib/modules/$kver" ] || continue
			modprobe -q -d "$root" "$m" 2>/dev/null && continue 2
		done
		return 1
	done
}

# ext4_mount IMAGE DIR: a fresh 64 MiB ext4 on a loop device over IMAGE,
# mounted on DIR; sets loopdev.
ext4_mount() {
	local img=$1 dir=$2
	kmod loop ext4 || return 1
	grep -qw ext4 /proc/filesystems || return 1
	truncate -s 64M "$img" || return 1
	mkfs.ext4 -q -F "$img" >/dev/null 2>&1 || return 1
	loopdev=$(losetup -f --show "$img") || return 1
	mkdir -p "$dir" && mount -t ext4 "$loopdev" "$dir"
}

# zram_swap: 128 MiB of swap on zram0; sets swapdev.
zram_swap() {
	kmod zram || return 1
	[ -e /sys/block/zram0/disksize ] || return 1
	echo 128M >/sys/block/zram0/disksize || return 1
	mkswap /dev/zram0 >/dev/null 2>&1 || return 1
	swapon /dev/zram0 || return 1
	swapdev=/dev/zram0
}
