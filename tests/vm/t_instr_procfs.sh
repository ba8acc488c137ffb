#!/usr/bin/env bash
# vmtest: no-module
# /proc/memmon round trip: watch a busy process through watch-pids, read
# its events as text (non-blocking and blocking), stop watching, the error
# cases, rmmod while a reader is blocked in events, and procfs=0.
set -u
cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "$0")/tap.sh"
P=/proc/memmon
churn=
reader=
cleanup() {
	[ -n "$churn" ] && kill "$churn" 2>/dev/null
	[ -n "$reader" ] && kill "$reader" 2>/dev/null
	wait 2>/dev/null
	grep -q '^memmon ' /proc/modules && rmmod memmon
	rm -f /tmp/memmon-procfs.*
}
trap cleanup EXIT

t "insmod" insmod "$MEMMON_KO"
t "$P is a directory, mode 500" test "$(stat -c %a $P)" = 500
t "watch-pids has mode 600" test "$(stat -c %a $P/watch-pids)" = 600
t "events has mode 400" test "$(stat -c %a $P/events)" = 400
t "nothing is watched at first" test -z "$(cat $P/watch-pids)"
t "stats: hooks not attached while nothing is watched" \
	grep -qx "hooks_attached 0" $P/stats

(exec -a w_churn build/vmtests/w_watch --churn) &
churn=$!
# Expectation: writing a PID watches it and attaches the hooks.
t "echo PID > watch-pids" sh -c "echo $churn > $P/watch-pids"
t "watch-pids lists it" test "$(cat $P/watch-pids)" = "$churn"
t "stats: hooks attached" grep -qx "hooks_attached 1" $P/stats
t "sessions has mode 400" test "$(stat -c %a $P/sessions)" = 400
sed 's/^/# /' $P/sessions
# Expectation: /proc/memmon's own session, opened by the writer above, one
# process watched, enabled.
t "sessions: the text interface's session, enabled, 1 watched" \
	awk '$1 == "session" && $10 == 1 && $12 == 1 { ok = 1 } END { exit !ok }' $P/sessions
sleep 1
dd if=$P/events iflag=nonblock bs=64k count=64 of=/tmp/memmon-procfs.ev 2>/dev/null
echo "# $(wc -l </tmp/memmon-procfs.ev) lines, e.g.:"
grep -m1 ' mmap(' /tmp/memmon-procfs.ev | sed 's/^/# /'
grep -m1 ' fault ' /tmp/memmon-procfs.ev | sed 's/^/# /'
t "events: mmap lines of the process" \
	grep -q "^[0-9]*\.[0-9]\{6\} $churn/$churn mmap(addr=0x0, len=0x10000, prot=0x3, flags=0x22, fd=0xf*, off=0x0) = 0x[0-9a-f]* [0-9]*us$" \
	/tmp/memmon-procfs.ev
t "events: munmap and brk lines" sh -c \
	"grep -q ' $churn/$churn munmap(addr=0x' /tmp/memmon-procfs.ev && grep -q ' brk(brk=0x0) = 0x[0-9a-f]* old=0x' /tmp/memmon-procfs.ev"
t "events: anonymous write faults, minor, handled" \
	grep -q " $churn/$churn fault addr=0x[0-9a-f]* ip=0x[0-9a-f]* write anon minor handled [0-9]*us pfn=0x[0-9a-f]* new$" \
	/tmp/memmon-procfs.ev
t "events: fork and exit lines of its children" sh -c \
	"grep -q ' $churn/$churn fork child=' /tmp/memmon-procfs.ev || grep -q ' exit code=0 group' /tmp/memmon-procfs.ev"
t "events: only the watched process" sh -c \
	"! grep -v ' $churn/' /tmp/memmon-procfs.ev | grep -v ' exit ' | grep -q ."
t "events: blocking read returns lines" sh -c "timeout 20 cat $P/events | head -n 5 | wc -l | grep -qx 5"

# Expectation: the errors of WATCH_ADD/DEL, as errno of write().
t "a PID watched twice: EEXIST" bash -c "! echo $churn > $P/watch-pids 2>/tmp/memmon-procfs.err && grep -q 'File exists' /tmp/memmon-procfs.err"
t "no such process: ESRCH" bash -c "! echo 4000000 > $P/watch-pids 2>/tmp/memmon-procfs.err && grep -q 'No such process' /tmp/memmon-procfs.err"
t "not a number: EINVAL" bash -c "! echo 12abc > $P/watch-pids 2>/tmp/memmon-procfs.err && grep -q 'Invalid argument' /tmp/memmon-procfs.err"
t "PID 0: EINVAL" sh -c "! echo 0 > $P/watch-pids 2>/dev/null"
t "-PID stops watching" sh -c "echo -$churn > $P/watch-pids && test -z \"\$(cat $P/watch-pids)\""
# The probes go hooks_linger_ms (2 s) after the last session is disabled.
detached() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -qx "hooks_attached 0" $P/stats && return 0
		sleep 0.1
	done
	return 1
}
t "stats: hooks detached again (after the linger)" detached
t "-PID of an unwatched process: ENOENT" bash -c "! echo -$churn > $P/watch-pids 2>/tmp/memmon-procfs.err && grep -q 'No such file' /tmp/memmon-procfs.err"

# A reader asleep in events does not keep the module.
dd if=$P/events iflag=nonblock bs=64k count=1024 of=/dev/null 2>/dev/null
cat $P/events >/tmp/memmon-procfs.tail &
reader=$!
sleep 0.5
t "the reader is asleep in events" sh -c "grep -q '^State:.*S' /proc/$reader/status"
t "rmmod while it sleeps there" rmmod memmon
t "the reader got end of file" sh -c "timeout 10 tail --pid=$reader -f /dev/null"
reader=
t "/proc/memmon is gone" test ! -e $P

t "insmod procfs=0" insmod "$MEMMON_KO" procfs=0
t "procfs=0: no /proc/memmon" test ! -e $P
t "rmmod" rmmod memmon
exit $failed
