#!/usr/bin/env bash
# The memmon command against the real module: info, trace (text, JSON,
# event filter, follow children, exit status), record/report, Ctrl-C during
# record, marks, usage errors, permission errors. Runs in the VM from the
# repository root with a fresh memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"
has() { grep -q -- "$2" "$1"; }
hasnt() { ! grep -q -- "$2" "$1"; }
code() { # code WANT CMD...: CMD exits with WANT
	local want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	[ $? -eq "$want" ]
}
PY=/usr/bin/python3

t "memmon binary is built" test -x "$M"
# info: the module answers GET_INFO with ABI 1
t "info exits 0" code 0 "$M" info
t "info shows ABI 1.x" has "$tmp/out" '^abi  *1\.'

# trace -- CMD: the command's events, its mark, its exit; its status is ours
t "trace of a command exits with its status" code 0 "$M" trace -- "$M" mark hello vm
t "trace shows the command's mark" has "$tmp/out" 'mark "hello vm"'
t "trace shows the exec" has "$tmp/out" "exec \"$M\""
t "trace shows the group exit" has "$tmp/out" 'exit exited 0 group'
t "trace shows decoded mmap calls" has "$tmp/out" 'mmap(NULL, [0-9]*, PROT_READ'
t "trace shows file paths of mapped fds" has "$tmp/out" '3</.*libc.so.6>'
t "trace shows faults" has "$tmp/out" 'fault 0x[0-9a-f]* ip=0x[0-9a-f]* '
t "a failing command's status comes back" code 3 "$M" trace -- sh -c 'exit 3'

# -p: stops by itself when the process exits; -o writes there. The target
# lives until told (no "sleep 10" that a slow attach could outlast: on the
# debug kernel attaching takes seconds) and is told once the tracer has
# written its first event, i.e. is watching.
waiter() { # waiter FILE: a process that lives until FILE exists
	sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done' "$1" &
}
first_event() { # first_event FILE: the tracer wrote to FILE (~2 min at most)
	local i
	for ((i = 0; i < 1200; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
traced_p() { # traced_p OUT [twice]: trace -o OUT -p W (or -p W,W); its status
	local out=$1 sp tp rc pids
	rm -f "$tmp/go"
	waiter "$tmp/go"
	sp=$!
	pids=$sp
	[ "${2:-}" = twice ] && pids=$sp,$sp
	timeout 300 "$M" trace -o "$out" -p "$pids" >"$tmp/out" 2>"$tmp/err" &
	tp=$!
	first_event "$out" || echo "# no event from the tracer in 2 min"
	touch "$tmp/go"
	wait "$tp"
	rc=$?
	wait "$sp"
	return $rc
}
t "trace -p stops when the process exits" traced_p "$tmp/o.txt"
t "... and wrote the exit to -o FILE" has "$tmp/o.txt" 'exit exited 0 group'
t "... and nothing to stdout" test ! -s "$tmp/out"
t "the same PID twice is one watch" traced_p "$tmp/o2.txt" twice

# a known mapping, strace style
t "trace of a 1 MiB shared anonymous mmap" code 0 "$M" trace -e mmap -- \
	$PY -c 'import mmap; mmap.mmap(-1, 1 << 20)'
t "... is decoded with its flags" has "$tmp/out" \
	'mmap(NULL, 1048576, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0) = 0x'
t "-e mmap shows no faults" hasnt "$tmp/out" ' fault '
t "-e mmap shows no munmap" hasnt "$tmp/out" 'munmap('

# JSON lines
t "trace --json exits 0" code 0 "$M" trace --json -- "$M" mark json
t "every --json line is a JSON object" $PY -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert isinstance(o, dict) and "type" in o and "time_ns" in o
    n += 1
assert n > 10
' "$tmp/out"

# The end of a trace accounts for every event. The command stops its
# tracer (its parent) while it faults 4096 pages through 8 KiB rings, so
# nothing drains them whatever the machine's speed: losses for sure, some
# of them still pending when the command exits. (A reader merely blocked on
# a full pipe no longer loses: trace drains into its own memory.)
plain_storm='import mmap; m = mmap.mmap(-1, 16 << 20)
for i in range(0, 16 << 20, 4096): m[i] = 1'
storm='import mmap, os, signal
os.kill(os.getppid(), signal.SIGSTOP)
m = mmap.mmap(-1, 16 << 20)
for i in range(0, 16 << 20, 4096): m[i] = 1
os.kill(os.getppid(), signal.SIGCONT)'
lossy() { # lossy OUT ARGS...: trace ARGS -- storm, its tracer stopped meanwhile
	local out=$1
	shift
	"$M" trace -m 8K "$@" -o "$out" -- $PY -c "$storm" 2>"$tmp/err"
	grep -q 'LOST' "$tmp/err"
}
t "trace --json -m 8K of a storm it could not drain loses events" lossy "$tmp/lost.json" --json
t "... and its output accounts for each, per CPU" $PY -c '
import json, sys, collections
ev, lost, st = collections.Counter(), collections.Counter(), {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["type"] == "stats":
        st[o["cpu"]] = o
        continue
    assert not st, "records after the stats"
    if o["type"] == "lost":
        lost[o["cpu"]] += o["count"]
    else:
        ev[o["cpu"]] += 1
assert st and sum(s["lost"] for s in st.values()) > 0
for c, s in st.items():
    assert s["produced"] == s["delivered"] + s["lost"], s
    assert s["lost"] == lost[c], (c, s, lost[c])
    assert s["delivered"] == ev[c], (c, s, ev[c])
assert set(ev) | set(lost) <= set(st)
' "$tmp/lost.json"
t "trace -m 8K (text) of a storm it could not drain loses events" lossy "$tmp/lost.txt"
t "... and its LOST lines add up to each CPU's loss" $PY -c '
import re, sys, collections
lost, st = collections.Counter(), {}
for line in open(sys.argv[1]):
    m = re.match(r"# cpu(\d+): produced (\d+) delivered (\d+) lost (\d+)$", line)
    if m:
        c, p, d, l = map(int, m.groups())
        assert p == d + l
        st[c] = l
        continue
    assert not st, "lines after the stats"
    m = re.search(r"\[cpu(\d+)\] lost (\d+) events", line)
    if m:
        lost[int(m.group(1))] += int(m.group(2))
assert st and sum(st.values()) > 0
assert all(st[c] == lost[c] for c in st), (st, lost)
' "$tmp/lost.txt"

# --no-loss: the storm (without stopping its tracer, which would make it
# wait the whole 60 s), read late, through 64 KiB rings loses nothing: the
# command waits for room (up to the 60 s asked for) when the rings fill.
t "trace --no-loss=60000 -m 64K of a storm read late exits 0" code 0 \
	sh -c "\"$M\" trace --json -m 64K --no-loss=60000 -- $PY -c '$plain_storm' |
		{ sleep 3; cat >\"$tmp/noloss.json\"; }"
t "... and loses nothing" $PY -c '
import json, sys
st = [o for o in map(json.loads, open(sys.argv[1])) if o["type"] in ("stats", "lost")]
assert st and all(o["type"] == "stats" and o["lost"] == 0 for o in st), st
assert sum(o["produced"] for o in st) > 4096
' "$tmp/noloss.json"
t "--no-loss=0: a usage error" code 2 "$M" trace --no-loss=0 -p 1
t "--no-loss=60001: a usage error" code 2 "$M" record --no-loss=60001 -p 1

# -f: a child's mark (the child is a new process of the shell)
t "trace -f follows children" code 0 "$M" trace -f -- sh -c "$M mark from-child; true"
t "... and shows the child's mark" has "$tmp/out" 'mark "from-child"'
t "... and the fork" has "$tmp/out" ' fork [0-9]*/[0-9]*'

# record / report
t "record -- CMD exits 0" code 0 "$M" record -o "$tmp/a.trace" -- "$M" mark rec
t "record says how many events it wrote" has "$tmp/err" 'events written to'
t "report reads it" code 0 "$M" report "$tmp/a.trace"
t "report shows the process and its exit" has "$tmp/out" "($M), exited 0"
t "report shows the leak candidates" has "$tmp/out" 'still mapped at exit'
t "report shows no loss" has "$tmp/out" '^lost events: 0$'
t "report --json is one JSON document" sh -c "'$M' report --json '$tmp/a.trace' | $PY -c 'import json,sys; d=json.load(sys.stdin); assert d[\"processes\"]'"
# The heap, grown by many brk calls (malloc's main arena), is the one
# region the kernel has: the same start and size as the [heap] line of
# the process's own /proc/self/maps at its end.
heap_perl='my @a; push @a, "x" x 1000 for 1..20000;
open(my $f, "<", "/proc/self/maps") or die; print grep { /\[heap\]/ } <$f>;'
heap_py='import json, sys
maps = open(sys.argv[2]).read().split()
start, end = (int(x, 16) for x in maps[0].split("-"))
p = json.load(open(sys.argv[1]))["processes"][0]
heap = [r for r in p["still_mapped"] if r["what"] == "[heap]"]
assert p["calls"]["brk"]["count"] >= 10, p["calls"]["brk"]
assert len(heap) == 1, "%d [heap] regions" % len(heap)
assert int(heap[0]["addr"], 16) == start and heap[0]["size"] == end - start, (heap, maps)'
t "record of a heap grown by brk" code 0 sh -c "'$M' record -o '$tmp/heap.trace' -- perl -e '$heap_perl' >'$tmp/heap.maps'"
t "report: that heap is one region, as in /proc/PID/maps" sh -c "
	'$M' report --json '$tmp/heap.trace' >'$tmp/heap.json' &&
	$PY -c '$heap_py' '$tmp/heap.json' '$tmp/heap.maps'"
t "record -z writes a smaller file that reads the same" sh -c "
	'$M' record -z -o '$tmp/z.trace' -- '$M' mark rec 2>/dev/null &&
	'$M' report '$tmp/z.trace' | grep -q 'exited 0'"

# A tiny ring loses, and report says exactly what the kernel counted: the
# command stops the recorder (its parent) while it faults 4096 pages into
# 8 KiB per-CPU rings, then lets it go on. record prints the kernel's
# per-CPU lost counts (GET_STATS); report must show the same, per CPU.
t "record -m 8K with the recorder stopped exits 0" code 0 "$M" record -f -m 8K -o "$tmp/tiny.trace" -- \
	sh -c "kill -STOP \$PPID; $PY -c 'import mmap
m = mmap.mmap(-1, 16 << 20)
for i in range(0, 16 << 20, 4096): m[i] = 1'; kill -CONT \$PPID"
lost_rec=$(sed -n 's/^memmon record: LOST \([0-9]*\) events:\(.*\)$/\1\2/p' "$tmp/err")
t "... and reports a loss, per CPU ($lost_rec)" test -n "$lost_rec"
t "report of that file reads" code 0 "$M" report "$tmp/tiny.trace"
lost_rep=$(sed -n 's/^lost events: \([0-9]*\)\(.*\)$/\1\2/p' "$tmp/out")
t "... and shows exactly the same loss ($lost_rep)" test "$lost_rep" = "$lost_rec"

# Ctrl-C during record leaves a complete file
sleep 30 &
victim=$!
"$M" record -o "$tmp/int.trace" -p $victim 2>"$tmp/int.err" &
rec=$!
sleep 2
kill -INT $rec
wait $rec
t "record stops on SIGINT with status 0" test $? -eq 0
kill $victim 2>/dev/null
t "the interrupted file reads" code 0 "$M" report "$tmp/int.trace"
t "... and is complete (not truncated)" hasnt "$tmp/err" truncated

# usage errors: exit 2 and a message
t "bad event name: exit 2" code 2 "$M" trace -e bogus -p 1
t "... lists the valid events" has "$tmp/err" 'Valid events: all, syscalls, faults'
t "bad ring size: exit 2" code 2 "$M" trace -m 3M -p 1
t "ring size beyond the module's limit: exit 1 with the limits hint" code 1 "$M" trace -m 4G -- true
t "... names memmon info" has "$tmp/err" "memmon info"
t "PID not found: exit 1" code 1 "$M" trace -p 4194303
t "mark with nobody watching succeeds" code 0 "$M" mark nobody

# --version names this program's and the loaded module's versions and ABI
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
t "--version: exit 0" code 0 "$M" --version
t "... this program's version and ABI ($ver)" grep -qx "memmon $ver (ABI [0-9]*\.[0-9]*)" "$tmp/out"
t "... the loaded module's version and ABI" grep -qx "module: memmon $ver (ABI [0-9]*\.[0-9]*)" "$tmp/out"

# info lists the live sessions (everyone's, as root): a record of ours
sleep 30 &
victim=$!
"$M" record -o "$tmp/live.trace" -p $victim 2>/dev/null &
rec=$!
listed=
for _ in $(seq 50); do
	"$M" info >"$tmp/info" 2>&1
	if awk -v p=$rec '$2 == p && $3 == "memmon" && $5 == "on" && $6 == 1' "$tmp/info" | grep -q .; then
		listed=1
		break
	fi
	sleep 0.1
done
sed -n '/^sessions/,$p' "$tmp/info" | sed 's/^/# /'
t "info lists the running record's session: its pid, enabled, 1 watched" test -n "$listed"
kill -INT $rec
wait $rec
kill $victim 2>/dev/null
wait $victim 2>/dev/null
"$M" info >"$tmp/info2" 2>&1
t "... and no longer once it has ended" sh -c "! awk -v p=$rec '\$2 == p' '$tmp/info2' | grep -q ."

# permissions: an unprivileged user is told which gate refused and every
# way through it. The node as the module makes it (root's, 0600): the
# device's mode and group, the group route, and CAP_PERFMON (require_cap=Y).
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
dev_mode=$(stat -c %a /dev/memmon)
dev_group=$(stat -c %g /dev/memmon)
t "unprivileged info fails" code 1 nobody "$M" info
t "... naming the device's mode" has "$tmp/err" 'the device is mode 0600, owner uid 0'
t "... the way to join its group" has "$tmp/err" 'usermod -aG'
t "... naming CAP_PERFMON and require_cap=Y" has "$tmp/err" 'require_cap=Y) also needs CAP_PERFMON'
t "... and how to lift it" has "$tmp/err" 'options memmon require_cap=0'
# The node given to a group, as the udev rule does (nogroup here: the VM's
# /etc is the host's, read-only): a member passes the node and meets the
# module's capability check; a non-member is told to join.
chgrp 65534 /dev/memmon && chmod 0660 /dev/memmon
t "a member of the device's group without CAP_PERFMON is refused" code 1 nobody "$M" info
t "... by the module: EPERM, require_cap=Y named" has "$tmp/err" 'Operation not permitted: the memmon module requires CAP_PERFMON (or CAP_SYS_ADMIN) to open it (its parameter require_cap=Y)'
t "... not by the node" hasnt "$tmp/err" 'the device is mode'
t "a non-member is refused" code 1 setpriv --reuid=65534 --regid=1 --clear-groups "$M" info
t "... and told which group to join" has "$tmp/err" "mode 0660, owner uid 0, group nogroup; this user (uid 65534) is neither its owner nor in its group"
t "... by name" has "$tmp/err" "usermod -aG nogroup"
chgrp "$dev_group" /dev/memmon && chmod "$dev_mode" /dev/memmon
exit $failed
