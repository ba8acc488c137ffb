#!/usr/bin/env bash
# memmon top in a real terminal: tmux runs it on a workload that faults,
# send-keys drives it (sort keys, pause, q), capture-pane reads the screen;
# and --batch's blocks. Runs in the VM from the repository root with a
# fresh memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
tmp=$(mktemp -d)
. "$(dirname "$0")/tap.sh"
export TERM=xterm-256color TMUX_TMPDIR=$tmp
TM="tmux -L memmon-top"
wp=
cleanup() {
	$TM kill-server 2>/dev/null
	[ -n "$wp" ] && kill "$wp" 2>/dev/null && wait "$wp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# Maps, touches and unmaps 4 MiB of anonymous memory, again and again:
# anon faults and mmap/munmap calls every interval, until killed.
/usr/bin/python3 -c '
import mmap, time
while True:
    m = mmap.mmap(-1, 4 << 20)
    m.write(b"x" * (4 << 20))
    m.close()
    time.sleep(0.02)
' &
wp=$!

screen() { $TM capture-pane -p -t top >"$tmp/screen"; }
# until SECONDS CMD...: CMD on a fresh capture, retried up to SECONDS
# (attaching takes seconds on the debug kernel); the last screen stays in
# $tmp/screen for the diagnostics.
until_screen() {
	local i lim=$(($1 * 10))
	shift
	for ((i = 0; i < lim; i++)); do
		screen
		"$@" && return 0
		sleep 0.1
	done
	echo "# screen:"
	sed 's/^/#   /' "$tmp/screen"
	return 1
}
shows() { grep -q -- "$1" "$tmp/screen"; }
hides() { ! grep -q -- "$1" "$tmp/screen"; }
# The workload's line: its PID, comm python3 and FLT/s (third column) > 0.
faulting() {
	awk -v p="$wp" '$1 == p && $2 == "python3" && $3 != "0" { ok = 1 }
		END { exit !ok }' "$tmp/screen"
}
key() { $TM send-keys -t top "$@"; }

t "tmux is installed" test -x /usr/bin/tmux
t "tmux session starts" $TM new-session -d -s top -x 160 -y 40 \
	"$M top -p $wp; echo TOP_EXIT=\$?; sleep 600"
t "screen shows the header" until_screen 120 shows 'memmon top .*events/s: .*lost: '
t "screen shows the columns, sorted by faults" until_screen 10 shows 'PID COMM .*\*FLT/s'
t "workload line: pid, comm, non-zero fault rate" until_screen 120 faulting
t "header names the sort: faults" shows 'sort: FLT/s'
key r
t "r sorts by RSS" until_screen 30 shows 'sort: RSS$'
t "the RSS column is marked" shows '\*RSS '
key '>'
t "> moves the sort to the RSS trend" until_screen 30 shows 'sort: RSS/s'
key m
t "m sorts by major faults" until_screen 30 shows 'sort: MAJ/s'
key s
t "s sorts by syscalls" until_screen 30 shows 'sort: SYS/s'
key f
t "f sorts by faults again" until_screen 30 shows '\*FLT/s'
key Space
t "space pauses" until_screen 30 shows 'PAUSED'
key p
t "p resumes" until_screen 30 hides 'PAUSED'
key q
t "q exits with status 0" until_screen 30 shows '^TOP_EXIT=0$'

# --batch: two blocks, each with the workload's line, then exit 0.
$M top -p "$wp" --batch -n 2 -d 0.5 >"$tmp/batch" 2>"$tmp/err"
rc=$?
t "batch exits 0" test "$rc" -eq 0
t "batch prints two blocks" test "$(grep -c '^memmon top ' "$tmp/batch")" -eq 2
t "batch shows the workload in each block" \
	test "$(awk -v p="$wp" '$1 == p && $2 == "python3"' "$tmp/batch" | wc -l)" -eq 2
t "batch has no error output" test ! -s "$tmp/err"
[ "$failed" = 0 ] || sed 's/^/# batch: /' "$tmp/batch" "$tmp/err"

# -a: the busiest processes by their /proc fault counters; the workload,
# faulting all along, is among the 5 busiest.
$M top -a -N 5 --batch -n 3 >"$tmp/all" 2>"$tmp/err"
t "-a batch exits 0" test $? -eq 0
t "-a watches the faulting workload" awk -v p="$wp" \
	'$1 == p && $2 == "python3" && $3 != "0" { ok = 1 } END { exit !ok }' "$tmp/all"
[ "$failed" = 0 ] || sed 's/^/# all: /' "$tmp/all" "$tmp/err"

# Usage errors need no terminal and no module.
t "interactive without a terminal is refused" \
	sh -c "'$M' top -p $wp </dev/null >/dev/null 2>'$tmp/err'; [ \$? -eq 2 ]"
t "... with the reason" grep -q 'needs a terminal' "$tmp/err"

exit $failed
