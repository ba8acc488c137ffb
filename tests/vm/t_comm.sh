#!/usr/bin/env bash
# COMM records (ABI 1.4): a thread's name once per change, never per event.
# w_comm renames its threads by prctl(PR_SET_NAME), a write to
# /proc/self/task/TID/comm and pthread_setname_np(), then execs; a process
# that never renames gets one COMM per thread when it starts being watched.
# Runs in the VM from the repository root with a fresh memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
W=$PWD/build/vmtests/w_comm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"
PY=/usr/bin/python3
count() { # count FILE PATTERN N: exactly N lines of FILE match PATTERN
	[ "$(grep -c -- "$2" "$1")" -eq "$3" ]
}

t "w_comm is built" test -x "$W"

# trace -- CMD: memmon forks, watches the child (still "memmon"), enables,
# and the child execs w_comm, renames, execs true.
t "trace of the renaming workload exits 0" \
	sh -c "'$M' trace -- '$W' rename >'$tmp/r.txt' 2>'$tmp/r.err'"
# one name per thread at watch start: the forked child, not yet exec'd
t "one COMM at watch start" count "$tmp/r.txt" ' comm watch ' 1
t "... the forked child's name" count "$tmp/r.txt" ' comm watch "memmon"$' 1
# exec renames: recorded once, as exec, after the EXEC record
t "exec of w_comm: one COMM" count "$tmp/r.txt" ' comm exec "w_comm"$' 1
t "exec of true: one COMM" count "$tmp/r.txt" ' comm exec "true"$' 1
t "the exec COMM follows its EXEC" sh -c "grep -E ' (exec \"/usr/bin/true\"|comm exec \"true\")$' '$tmp/r.txt' |
	sed -n '1s/.* exec .*/x/p;2s/.* comm exec .*/y/p' | tr -d '\n' | grep -qx xy"
# each rename once, whichever way it was done
t "PR_SET_NAME of the main thread: one COMM" count "$tmp/r.txt" ' comm rename "cm-main"$' 1
t "PR_SET_NAME by a thread: one COMM" count "$tmp/r.txt" ' comm rename "cm-prctl"$' 1
t "write to /proc/self/task/TID/comm: one COMM" count "$tmp/r.txt" ' comm rename "cm-proc"$' 1
t "pthread_setname_np: one COMM" count "$tmp/r.txt" ' comm rename "cm-pthread"$' 1
t "seven COMM records in all" count "$tmp/r.txt" ' comm ' 7
# the three renames of the second thread are that thread's records
t "the second thread's renames carry its tid" $PY -c '
import re, sys
tids = {}
for line in open(sys.argv[1]):
    m = re.search(r" (\d+)/(\d+) comm rename \"(cm-[a-z]+)\"$", line)
    if m:
        tids[m.group(3)] = (m.group(1), m.group(2))
main = tids["cm-main"]
assert main[0] == main[1], tids
for n in ("cm-prctl", "cm-proc", "cm-pthread"):
    assert tids[n][0] == main[0] and tids[n][1] != main[1], tids
' "$tmp/r.txt"

# JSON: type, why and the name
t "trace --json of the workload exits 0" \
	sh -c "'$M' trace --json -- '$W' rename >'$tmp/r.json' 2>/dev/null"
t "JSON COMM records: why and comm, once each" $PY -c '
import json, sys
got = [(r["why"], r["comm"]) for r in map(json.loads, open(sys.argv[1]))
       if r["type"] == "comm"]
want = [("watch", "memmon"), ("exec", "w_comm"), ("rename", "cm-main"),
        ("rename", "cm-prctl"), ("rename", "cm-proc"),
        ("rename", "cm-pthread"), ("exec", "true")]
assert sorted(got) == sorted(want), got
' "$tmp/r.json"

# -e selects them with the lifecycle records
t "trace -e faults shows no COMM" \
	sh -c "'$M' trace -e faults -- '$W' rename >'$tmp/f.txt' 2>/dev/null"
t "... none" count "$tmp/f.txt" ' comm ' 0

# record / report: the process is named by its last comm and exec path
t "record of the workload exits 0" \
	sh -c "'$M' record -o '$tmp/r.trace' -- '$W' rename 2>/dev/null"
t "script shows the COMM records" \
	sh -c "'$M' script '$tmp/r.trace' >'$tmp/s.txt' && grep -c ' comm ' '$tmp/s.txt' | grep -qx 7"
t "report names the process by its last comm" \
	sh -c "'$M' report '$tmp/r.trace' | grep -qE '^process [0-9]+ true \\(/usr/bin/true\\)'"
t "report --json has the comm" sh -c "'$M' report --json '$tmp/r.trace' |
	$PY -c 'import json,sys; d=json.load(sys.stdin); assert [p for p in d[\"processes\"] if p.get(\"comm\") == \"true\"], d[\"processes\"]'"

# a running process that never renames: one COMM per thread at watch start
rm -f "$tmp/go"
"$W" wait "$tmp/go" &
wp=$!
for ((i = 0; i < 600; i++)); do
	[ "$(ls /proc/$wp/task 2>/dev/null | wc -l)" -eq 3 ] && break
	sleep 0.1
done
timeout 300 "$M" trace -o "$tmp/w.txt" -p "$wp" 2>"$tmp/w.err" &
tp=$!
for ((i = 0; i < 1200; i++)); do
	[ -s "$tmp/w.txt" ] && break
	sleep 0.1
done
touch "$tmp/go"
t "trace -p of a three-thread process exits 0" wait "$tp"
wait "$wp"
t "one COMM per thread at watch start" count "$tmp/w.txt" ' comm watch "w_comm"$' 3
t "... on three distinct threads" sh -c "grep ' comm watch ' '$tmp/w.txt' |
	sed -E 's|.* [0-9]+/([0-9]+) comm .*|\\1|' | sort -u | wc -l | grep -qx 3"
t "... and no other COMM" count "$tmp/w.txt" ' comm ' 3

exit $failed
