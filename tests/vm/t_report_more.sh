#!/usr/bin/env bash
# memmon trace -c against strace -c, trace's --faults/--failed filters, and
# report's leak split on a program that leaks from two places and maps a
# library (tests/vm/w_leak2.c). Runs in the VM from the repository root
# with memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
W=$PWD/build/vmtests/w_leak2
tmp=$(mktemp -d)
loopdev=
cleanup() {
	mountpoint -q "$tmp/mnt" && umount "$tmp/mnt"
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/instr.sh"	# ext4_mount
PY=/usr/bin/python3
LIBC=$(realpath "$(ldd "$W" | awk '/libc\.so/ { print $3 }')")

calls_of() { # calls_of FILE NAME: the calls column of NAME's summary line
	awk -v n="$2" '$NF == n && $1 ~ /^[0-9.]+$/ { print $4 }' "$1"
}
same_calls() { # same_calls NAME: memmon's count is strace's, and not empty
	local a b
	a=$(calls_of "$tmp/memmon.c" "$1")
	b=$(calls_of "$tmp/strace.c" "$1")
	echo "# $1: memmon ${a:-none}, strace ${b:-none}"
	[ -n "$a" ] && [ "$a" = "$b" ]
}

t "w_leak2 and strace are there" test -x "$W" -a -x /usr/bin/strace -a -r "$LIBC"

# trace -c: the same calls as strace -c -f counts of the same program
t "trace -c -- CMD exits 0" sh -c "'$M' trace -c -- '$W' calls 50 >'$tmp/memmon.c' 2>'$tmp/err'"
t "strace -c -f of the same command" sh -c "strace -f -c -e trace=mmap,munmap,brk -o '$tmp/strace.c' '$W' calls 50"
t "trace -c prints strace's header" grep -q '^% time     seconds  usecs/call     calls    errors syscall' "$tmp/memmon.c"
t "trace -c prints no event lines" sh -c "! grep -q 'mmap(' '$tmp/memmon.c'"
t "mmap calls: as strace counts them" same_calls mmap
t "munmap calls: as strace counts them" same_calls munmap
t "brk calls: as strace counts them" same_calls brk
t "the failed mmap is counted as an error" sh -c "awk '\$NF == \"mmap\" { print \$5 }' '$tmp/memmon.c' | grep -qx 1"
t "the fault table has a total line" grep -Eq '^total +[0-9]+ +[0-9]+$' "$tmp/memmon.c"

# --failed: the one failed call, nothing else
t "trace --failed exits 0" sh -c "'$M' trace --failed -- '$W' calls 5 >'$tmp/failed' 2>'$tmp/err'"
t "... shows the failed mmap" grep -q 'mmap(NULL, 0, .*EINVAL' "$tmp/failed"
t "... and no call that succeeded" sh -c "[ \$(grep -c ') = ' '$tmp/failed') -eq 1 ]"

# --faults=major: a file on a block device (ext4 on a loop device: /tmp
# may be tmpfs, whose pages drop_caches keeps) read after drop_caches
# faults majors; only they show
t "ext4 on a loop device for the cold file" ext4_mount "$tmp/ext4.img" "$tmp/mnt"
dd if=/dev/urandom of="$tmp/mnt/data" bs=1M count=4 status=none
sync
echo 3 >/proc/sys/vm/drop_caches
t "trace --faults=major exits 0" sh -c "'$M' trace --faults=major -e faults -- '$W' touch '$tmp/mnt/data' >'$tmp/major' 2>'$tmp/err'"
t "... shows major faults" grep -q ' fault .* major ' "$tmp/major"
t "... and no minor fault" sh -c "! grep -q ' fault .* minor ' '$tmp/major'"
t "trace --faults=minor shows no major fault" sh -c "
	'$M' trace --faults=minor -e faults -- '$W' touch '$tmp/mnt/data' >'$tmp/minor' 2>&1 &&
	grep -q ' fault .* minor ' '$tmp/minor' && ! grep -q ' fault .* major ' '$tmp/minor'"
t "trace -r prints seconds since the previous event" sh -c "
	'$M' trace -r -e mmap -- '$W' calls 2 >'$tmp/r' 2>&1 &&
	grep -Eq '^ +0\.[0-9]{6} .*mmap\(' '$tmp/r'"

# report: the two leaks, exact; the library apart
leak_py='import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["processes"] if p.get("exe", "").endswith("/w_leak2")]
assert len(p) == 1, [q.get("exe") for q in d["processes"]]
l = p[0]["leaks"]
g = sorted((x["count"], x["size"], x["bytes"]) for x in l["groups"])
assert g == [(1, 1048576, 1048576), (3, 65536, 196608)], l
assert l["bytes"] == 196608 + 1048576, l["bytes"]
files = [f["what"] for f in l["file_mappings"]]
assert sys.argv[2] in files, files
assert not [x for x in l["groups"] if x["what"] != "[anon]"], l["groups"]
# by call site (ABI 1.5 stacks): the two leaking functions, nothing else
sites = sorted((x["stack"][x["call_site"]].get("sym"), x["count"], x["bytes"])
               for x in l["groups"])
assert sites == [("leak_big", 1, 1048576), ("leak_small", 3, 196608)], sites
assert l["grouped_by"] == "kind,call_site", l["grouped_by"]'
t "record of the leaking program" sh -c "'$M' record -o '$tmp/leak.trace' -- '$W' leak '$LIBC' 2>'$tmp/err'"
t "report: exactly its two leaks, exact bytes; the library apart" sh -c "
	'$M' report --json '$tmp/leak.trace' >'$tmp/leak.json' &&
	$PY -c '$leak_py' '$tmp/leak.json' '$LIBC'"
t "report text: the two groups" sh -c "
	'$M' report '$tmp/leak.trace' >'$tmp/leak.txt' &&
	grep -q '1 x 1.0 MiB = 1048576 bytes' '$tmp/leak.txt' &&
	grep -q '3 x 64.0 KiB = 196608 bytes' '$tmp/leak.txt' &&
	grep -q 'leak candidates: .* 4 regions' '$tmp/leak.txt'"
# Without -g every syscall record still carries its call site (the libc
# wrapper's return address); with it, the frames above.
t "report text: the two call sites, without -g" sh -c "
	grep -Eq '^    \\[anon\\] +leak_big\\+0x[0-9a-f]+ \\(.*/w_leak2\\)  1 x 1.0 MiB = 1048576 bytes' '$tmp/leak.txt' &&
	grep -Eq '^    \\[anon\\] +leak_small\\+0x[0-9a-f]+ \\(.*/w_leak2\\)  3 x 64.0 KiB = 196608 bytes' '$tmp/leak.txt'"
t "record -g: the call sites' stacks reach do_leak" sh -c "
	'$M' record -g -o '$tmp/leakg.trace' -- '$W' leak '$LIBC' 2>'$tmp/err' &&
	'$M' report '$tmp/leakg.trace' >'$tmp/leakg.txt' &&
	grep -Eq '^    \\[anon\\] +leak_small\\+0x[0-9a-f]+ \\(.*/w_leak2\\)  3 x 64.0 KiB = 196608 bytes' '$tmp/leakg.txt' &&
	grep -Eq '^	 +[0-9a-f]+ do_leak\\+0x[0-9a-f]+ \\(.*/w_leak2\\)' '$tmp/leakg.txt'"
t "report text: libc is a file mapping, not a leak" sh -c "
	sed -n '/^  file mappings/,/^  [a-z]/p' '$tmp/leak.txt' | grep -q 'libc.so.6'"
t "report latency columns for mmap" grep -Eq '^    mmap +[0-9]+ +0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' "$tmp/leak.txt"

# make demo's command: libc's text is a file mapping, not a leak candidate
sort_py='import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["processes"] if p.get("exe", "").endswith("/sort")][0]
l = p["leaks"]
assert all(g["what"] in ("[anon]", "[heap]", "[shared anon]") for g in l["groups"]), l["groups"]
assert any(f["what"].endswith("/libc.so.6") for f in l["file_mappings"]), l["file_mappings"]'
t "report of sort /etc/services: libc apart from the leak candidates" sh -c "
	'$M' record -o '$tmp/sort.trace' -- sort /etc/services >/dev/null 2>'$tmp/err' &&
	'$M' report --json '$tmp/sort.trace' >'$tmp/sort.json' &&
	$PY -c '$sort_py' '$tmp/sort.json'"

[ "$failed" = 0 ] || cat "$tmp/err" >&2
exit $failed
