#!/usr/bin/env bash
# memmon trace -G and record -G: a cgroup's processes, those of its descendant cgroups,
# and those that join after the trace started, with their children; never
# a process outside it. Runs in the VM from the repository root as root
# with a fresh memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
tmp=$(mktemp -d)
. "$(dirname "$0")/tap.sh"
grep -q '^cgroup2 /sys/fs/cgroup ' /proc/mounts ||
	mount -t cgroup2 none /sys/fs/cgroup || exit 1
cg=memmon-t-cgroup-$$
CG=/sys/fs/cgroup/$cg
mkdir -p "$CG/sub"
cleanup() {
	touch "$tmp/stop"
	wait 2>/dev/null
	rmdir "$CG/sub" "$CG" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# member NAME DIR: a shell that joins DIR, then marks NAME (a child process
# each time) until told to stop.
member() {
	sh -c 'echo $$ >"$1/cgroup.procs" && while [ ! -e "$3" ]; do "$4" mark "$2"; sleep 0.05; done' \
		member "$2" "$1" "$tmp/stop" "$M" &
}
# until_has FILE TEXT: wait (at most 120 s) until FILE holds TEXT.
until_has() {
	local i
	for i in $(seq 1200); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

member early "$CG"
early=$!
until_has "$CG/cgroup.procs" "^$early\$"
"$M" trace -G "$cg" -e mark,lifecycle -o "$tmp/out" 2>"$tmp/err" &
tr=$!
t "a member from before the trace is watched" until_has "$tmp/out" 'mark "early"'
member nested "$CG/sub"
t "a member of a descendant cgroup joining later is watched" until_has "$tmp/out" 'mark "nested"'
member late "$CG"
t "a process joining later is watched" until_has "$tmp/out" 'mark "late"'
"$M" mark outsider
touch "$tmp/stop"
wait "$early"
kill -INT "$tr"
wait "$tr"
t "the trace ends on SIGINT with status 0" test $? -eq 0
t "... having seen nothing from outside the cgroup" sh -c "! grep -q outsider '$tmp/out'"
t "... and the members' children (each mark is one)" sh -c "[ \$(grep -c 'mark \"early\"' '$tmp/out') -ge 1 ] && grep -q 'fork' '$tmp/out'"
t "... and accounts for every event" sh -c "grep -q '^# cpu.*produced' '$tmp/out' && ! grep -qE '^# cpu.* lost [1-9]' '$tmp/out'"

# memmon record -G: the same targets, into a file
rm -f "$tmp/stop"
member early2 "$CG"
early2=$!
until_has "$CG/cgroup.procs" "^$early2\$"
"$M" record -G "$CG" -e mark,lifecycle -o "$tmp/rec.mmt" 2>"$tmp/rerr" &
rec=$!
member late2 "$CG/sub"
for _ in $(seq 1200); do
	"$M" script "$tmp/rec.mmt" 2>/dev/null | grep -q 'mark "late2"' && break
	sleep 0.1
done
"$M" mark outsider2
touch "$tmp/stop"
wait "$early2"
kill -INT "$rec"
wait "$rec"
t "record -G ends on SIGINT with status 0" test $? -eq 0
"$M" script "$tmp/rec.mmt" >"$tmp/rec.txt" 2>"$tmp/rec.err"
t "record -G: the file reads" test $? -eq 0
t "record -G: a member from before" grep -q 'mark "early2"' "$tmp/rec.txt"
t "record -G: a member of a descendant cgroup joining later" grep -q 'mark "late2"' "$tmp/rec.txt"
t "record -G: nothing from outside the cgroup" sh -c "! grep -q outsider2 '$tmp/rec.txt'"
t "record -G: the cgroup is in the file's metadata" sh -c "'$M' report --json '$tmp/rec.mmt' | grep -q '$cg'"

"$M" trace -G memmon-no-such-cgroup -- true >"$tmp/o2" 2>"$tmp/e2"
t "an unknown cgroup is an error" test $? -eq 1
t "... that names it" grep -q "cgroup 'memmon-no-such-cgroup': No such file or directory" "$tmp/e2"
exit $failed
