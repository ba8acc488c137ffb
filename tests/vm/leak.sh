# shellcheck shell=bash
# tests/vm/leak.sh - bound the kernel's own memory counters across the
# repeated body of a test (module load/unload cycles), sourced after tap.sh:
#
#   leak_mark             settle the allocators, note SUnreclaim, Percpu and
#                         VmallocUsed from /proc/meminfo
#   leak_check WHAT KB    settle again, print the three deltas, and assert
#                         unreclaimable slab grew by < KB kB, per-CPU memory
#                         by < 64 kB and vmalloc use by < 256 kB over WHAT
#
# A leak of one small object per cycle is below these bounds; kmemleak finds
# it. On the debug kernel (tests/check-debug) the counters are only printed:
# KASAN's quarantine keeps freed objects for a while and kmemleak adds its
# own metadata, so they grow with no leak (t_load: +436 kB over 100 cycles,
# measured); there the runner's kmemleak scan after the suite checks the
# objects themselves and fails on any that memmon left behind.

leak_meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
leak_settle() { sync; echo 3 >/proc/sys/vm/drop_caches; sleep 0.5; }

leak_mark() {
	leak_settle
	leak_s0=$(leak_meminfo SUnreclaim)
	leak_p0=$(leak_meminfo Percpu)
	leak_v0=$(leak_meminfo VmallocUsed)
}

leak_check() {
	local what=$1 slab_kb=$2 s1 p1 v1
	leak_settle
	s1=$(leak_meminfo SUnreclaim)
	p1=$(leak_meminfo Percpu)
	v1=$(leak_meminfo VmallocUsed)
	echo "# SUnreclaim ${leak_s0} -> ${s1} kB, Percpu ${leak_p0} -> ${p1} kB, VmallocUsed ${leak_v0} -> ${v1} kB"
	if [ -e /sys/kernel/debug/kmemleak ]; then
		echo "# debug kernel: memory counters not bounded (KASAN quarantine); kmemleak checks"
		return
	fi
	t "unreclaimable slab grew by < $slab_kb kB over $what" test $((s1 - leak_s0)) -lt "$slab_kb"
	t "per-CPU memory grew by < 64 kB over $what" test $((p1 - leak_p0)) -lt 64
	t "vmalloc use grew by < 256 kB over $what" test $((v1 - leak_v0)) -lt 256
}
