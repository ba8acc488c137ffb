#!/usr/bin/env bash
# memmon record --overwrite, the flight recorder, against the real module:
# a fault storm through 16 KiB overwrite rings, a SIGUSR1 snapshot while it
# runs and the end. Each part is readable alone and accounts exactly:
# produced = delivered + lost per CPU, the parts chain and end at the
# kernel's counters; what the rings wrote over is lost (in LOST records),
# the oldest events are gone and the newest are kept. Runs in the VM from
# the repository root with memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'touch "$tmp/stop"; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"
has() { grep -q -- "$2" "$1"; }
hasnt() { ! grep -q -- "$2" "$1"; }
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

# Faults until told to stop; says when it has made many.
cat >"$tmp/storm.py" <<'PYEOF'
import mmap, os, sys
stop, busy = sys.argv[1], sys.argv[2]
i = 0
while not os.path.exists(stop):
    m = mmap.mmap(-1, 1 << 20)
    for off in range(0, 1 << 20, 4096):
        m[off] = 1
    m.close()
    i += 1
    if i == 20:
        open(busy, 'w').close()
PYEOF
# The workload on one CPU: its first mark and its storm share a ring, so the
# storm writes over the mark wherever the scheduler puts it.
"$M" record --overwrite -f -m 16K -o "$tmp/fr" -- taskset -c 0 sh -c \
	"'$M' mark first && '$PY' '$tmp/storm.py' '$tmp/stop' '$tmp/busy' && '$M' mark last" \
	>"$tmp/out" 2>"$tmp/err" &
rec=$!
t "the storm runs under the flight recorder" appears "$tmp/busy"
kill -USR1 $rec
t "SIGUSR1 writes a snapshot: part 1 closed, part 2 begun" appears "$tmp/fr.2"
touch "$tmp/stop"
wait $rec
rc=$?
t "record --overwrite exits 0" test $rc -eq 0
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
t "part 1 (the snapshot) is readable alone" readable "$tmp/fr.1"
t "part 2 (the end) is readable alone" readable "$tmp/fr.2"
t "the snapshot lost the oldest events: the first mark was written over" hasnt "$tmp/fr.1.script" 'mark "first"'
t "... and kept the newest: faults" has "$tmp/fr.1.script" 'fault 0x'
t "the end holds the last mark" has "$tmp/fr.2.script" 'mark "last"'
cat >"$tmp/check.py" <<'PYEOF'
import json, sys
base = sys.argv[1]
prev_end, lost_total = None, 0
for n in (1, 2):
    j = json.load(open('%s.%d.json' % (base, n)))
    m = j['meta']
    st, before = m['cpu_stats'], m['stream_before']
    for c, s in enumerate(st):
        if s['delivered'] + s['lost'] != s['produced']:
            sys.exit('# part %d cpu %d: %s' % (n, c, s))
    if prev_end is not None and [(s['delivered'], s['lost']) for s in before] != prev_end:
        sys.exit('# part %d does not begin where part %d ended' % (n, n - 1))
    prev_end = [(p['delivered'] + s['delivered'], p['lost'] + s['lost'])
                for p, s in zip(before, st)]
    lost_total += j['lost']
    if n == 1 and j['lost'] == 0:
        sys.exit('# the snapshot lost nothing: the rings were not written over')
k = json.load(open('%s.2.json' % base))['meta']['kernel_cpu_stats']
if prev_end != [(s['delivered'], s['lost']) for s in k]:
    sys.exit('# the parts end at %s, the kernel at %s' % (prev_end, k))
print('# %d events overwritten or dropped, accounted in LOST records' % lost_total)
PYEOF
t "each part accounts produced = delivered + lost; they chain to the kernel's counters" \
	$PY "$tmp/check.py" "$tmp/fr"

"$M" record --overwrite --no-loss -o "$tmp/x" -- true 2>"$tmp/e2"
t "--overwrite with --no-loss is a usage error" test $? -eq 2
t "... saying why" has "$tmp/e2" 'drops the oldest events by design'
exit $failed
