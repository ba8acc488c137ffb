#!/usr/bin/env bash
# memmon record's stop conditions and parts against the real module:
# --max-size/--rotate under a fault storm (the kept parts, their numbers,
# each readable alone, each part's accounting and the chain from one kept
# part to the next and to the kernel's counters), --duration,
# --until-mark (the mark is the last mark in the file) and the SIGUSR1
# snapshot. Runs in the VM from the repository root with memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
PY=/usr/bin/python3
tmp=$(mktemp -d)
waiters=()
cleanup() {
	local p
	for p in "${waiters[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"
has() { grep -q -- "$2" "$1"; }
hasnt() { ! grep -q -- "$2" "$1"; }
# A process (and its children, sleep) that lives until FILE exists.
waiter() {
	sh -c 'while [ ! -e "$0" ]; do sleep 0.1; done' "$1" &
	waiters+=($!)
}
appears() { # appears FILE: FILE exists within 2 min
	local i
	for ((i = 0; i < 1200; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
readable() { # readable FILE: report (text, JSON) and script read it whole
	"$M" report "$1" >/dev/null 2>"$tmp/rerr" &&
	"$M" report --json "$1" >"$1.json" 2>>"$tmp/rerr" &&
	"$M" script "$1" >"$1.script" 2>>"$tmp/rerr" &&
	hasnt "$tmp/rerr" truncated
}

# The checks on the parts' metadata, one per call: check WHAT BASE KEEP.
cat >"$tmp/check.py" <<'PYEOF'
import json, os, sys

what, base, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
d, b = os.path.dirname(base), os.path.basename(base)
nums = sorted(int(f[len(b) + 1:]) for f in os.listdir(d)
              if f.startswith(b + '.') and f[len(b) + 1:].isdigit())


def fail(msg):
    print('# ' + msg)
    sys.exit(1)


def rep(n):
    with open('%s.%d.json' % (base, n)) as f:
        return json.load(f)


if what == 'kept':
    # exactly KEEP parts, the newest: last-KEEP+1..last, and more were made
    if len(nums) != keep or nums != list(range(nums[-1] - keep + 1, nums[-1] + 1)):
        fail('parts on disk: %s' % nums)
    if nums[-1] <= keep:
        fail('no rotation happened: last part %d' % nums[-1])
    print('# parts %d..%d kept' % (nums[0], nums[-1]))
elif what == 'accounting':
    prev_end, total_lost = None, 0
    for n in nums:
        j = rep(n)
        m = j['meta']
        if m.get('part') != n:
            fail('part %d says part %s' % (n, m.get('part')))
        st, before = m['cpu_stats'], m['stream_before']
        for c, s in enumerate(st):
            # each part: its events plus its losses are what it accounts for
            if s['delivered'] + s['lost'] != s['produced']:
                fail('part %d cpu %d: %s' % (n, c, s))
        # the report's loss is the part's own
        lost = sum(s['lost'] for s in st)
        total_lost += lost
        if j['lost'] != lost:
            fail('part %d: report lost %d, cpu_stats %d' % (n, j['lost'], lost))
        if m['events'] != sum(s['delivered'] for s in st):
            fail('part %d: events %d != delivered' % (n, m['events']))
        # the next part begins where this one ended, on every CPU
        if prev_end is not None:
            got = [(s['delivered'], s['lost']) for s in before]
            if got != prev_end:
                fail('part %d begins at %s, part %d ended at %s' % (n, got, n - 1, prev_end))
        prev_end = [(p['delivered'] + s['delivered'], p['lost'] + s['lost'])
                    for p, s in zip(before, st)]
        if m['last_part'] != (n == nums[-1]):
            fail('part %d: last_part %s' % (n, m['last_part']))
    # the last part ends at the kernel's own counters: nothing missing
    k = rep(nums[-1])['meta']['kernel_cpu_stats']
    want = [(s['delivered'], s['lost']) for s in k]
    if prev_end != want:
        fail('the parts end at %s, the kernel at %s' % (prev_end, want))
    if any(s['produced'] != s['delivered'] + s['lost'] for s in k):
        fail('kernel counters: %s' % k)
    print('# kept parts: %d events lost, kernel produced %d' %
          (total_lost, sum(s['produced'] for s in k)))
elif what == 'snapshot':
    # part 1 is a closed, complete part; part 2 the last
    if nums != [1, 2]:
        fail('parts %s' % nums)
    if rep(1)['meta']['last_part'] or not rep(2)['meta']['last_part']:
        fail('last_part flags wrong')
    if rep(1)['truncated'] or rep(2)['truncated']:
        fail('truncated')
elif what == 'after_mark':
    with open(base + '.json') as f:
        m = json.load(f)['meta']
    # the "after" mark and its process's exit were left out, and counted
    if sum(m['after_mark']) < 1:
        fail('after_mark %s' % m['after_mark'])
PYEOF
check() { $PY "$tmp/check.py" "$@"; }

t "memmon binary is built" test -x "$M"

# --- rotation under a fault storm: 16 KiB parts, 3 kept, a small ring so
# that the storm loses events.
cat >"$tmp/storm.py" <<'PYEOF'
import mmap
for i in range(8):
    m = mmap.mmap(-1, 2 << 20)
    for off in range(0, 2 << 20, 4096):
        m[off] = 1
    m.close()
PYEOF
timeout 300 "$M" record -m 16K --max-size 16K --rotate 3 -o "$tmp/rot" \
	-- $PY "$tmp/storm.py" >"$tmp/out" 2>"$tmp/err"
rc=$?
t "record with --max-size --rotate exits 0" test $rc -eq 0
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
t "record names the parts it wrote" has "$tmp/err" "written to $tmp/rot.1..$tmp/rot."
t "exactly the newest 3 parts are kept" check kept "$tmp/rot" 3
for f in "$tmp"/rot.[0-9]*; do
	case $f in *.json | *.script) continue ;; esac
	t "part ${f##*.} is readable by report and script" readable "$f"
done
t "each kept part accounts produced = delivered + lost, and they chain" \
	check accounting "$tmp/rot" 3

# --- --duration: stops by itself while the process lives on.
waiter "$tmp/dur-go"
wp=$!
timeout 120 "$M" record --duration 2 -f -p "$wp" -o "$tmp/dur.trace" \
	>"$tmp/out" 2>"$tmp/err"
t "--duration stops the recording, exit 0" test $? -eq 0
t "... saying why" has "$tmp/err" "duration reached"
t "... while the watched process still runs" kill -0 "$wp"
t "... and the file is complete" readable "$tmp/dur.trace"
touch "$tmp/dur-go"

# --- --until-mark: one CPU, so the workload's stream is in one order; what
# follows the mark in it is not in the file.
cat >"$tmp/marks.sh" <<MARKS
"$M" mark first
"$M" mark STOP
"$M" mark after
while [ ! -e "$tmp/um-go" ]; do sleep 0.1; done
MARKS
timeout 120 "$M" record --until-mark STOP -f -o "$tmp/um.trace" \
	-- taskset -c 0 sh "$tmp/marks.sh" >"$tmp/out" 2>"$tmp/err"
t "--until-mark stops the recording, exit 0" test $? -eq 0
t "... saying why" has "$tmp/err" "mark recorded"
t "... and the file is complete" readable "$tmp/um.trace"
t "the marks before it are there" has "$tmp/um.trace.script" 'mark "first"'
t "the mark is there" has "$tmp/um.trace.script" 'mark "STOP"'
t "the mark after it is not" hasnt "$tmp/um.trace.script" 'mark "after"'
last_mark() { grep -o 'mark "[a-zA-Z]*"' "$1" | tail -1; }
t "the mark is the last mark" test "$(last_mark "$tmp/um.trace.script")" = 'mark "STOP"'
t "the events left out are counted (after_mark)" check after_mark "$tmp/um.trace" 0

# --- SIGUSR1: the part so far closed, readable, recording goes on.
waiter "$tmp/snap-go"
wp=$!
# No timeout(1) around it: the signal must reach memmon; it ends with the
# waiter.
"$M" record --max-size 1G -f -p "$wp" -o "$tmp/snap" >"$tmp/out" 2>"$tmp/err" &
rp=$!
appears "$tmp/snap.1"
kill -USR1 "$rp"
t "SIGUSR1 starts part 2" appears "$tmp/snap.2"
t "... while part 1 is readable now" readable "$tmp/snap.1"
touch "$tmp/snap-go"
wait "$rp"
t "the recording goes on and ends, exit 0" test $? -eq 0
t "part 2 is readable" readable "$tmp/snap.2"
t "part 1 is a complete non-last part, part 2 the last" check snapshot "$tmp/snap" 0

# --- SIGUSR1 without --max-size: ignored, said so.
waiter "$tmp/usr-go"
wp=$!
"$M" record -f -p "$wp" -o "$tmp/usr.trace" >"$tmp/out" 2>"$tmp/uerr" &
rp=$!
appears "$tmp/usr.trace"
kill -USR1 "$rp"
for ((i = 0; i < 1200; i++)); do
	has "$tmp/uerr" "SIGUSR1 ignored" && break
	sleep 0.1
done
touch "$tmp/usr-go"
wait "$rp"
t "SIGUSR1 without --max-size: exit 0" test $? -eq 0
t "... with a warning" has "$tmp/uerr" "SIGUSR1 ignored: snapshots need --max-size"
t "... and one complete file" readable "$tmp/usr.trace"

echo "# $n tests"
exit $failed
