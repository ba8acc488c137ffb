#!/usr/bin/env bash
# vmtest: no-module
# 100 load/unload cycles (or $MEMMON_CYCLES) with the hooks attached and
# firing: two unwatched workloads and one watched workload run all along,
# and so does w_sessions, which opens, watches the third, maps, reads and
# closes sessions whenever the module is there; each cycle loads
# memmon.ko, watches the third for a moment (attach, records, detach) and
# removes the module (again after a short wait while one of those sessions
# holds it). No cycle may fail, the watched workload must be recorded, no
# session step may fail, and the kernel's memory counters must not grow
# beyond noise (the runner fails the run on any kernel warning).
#
# Under QEMU's multi-threaded TCG this crashes the kernel whatever the
# module (tests/vm/repro/kretprobe-tcg.sh); tests/vm/run uses one host
# thread for the vCPUs for that reason.
#
# The two unwatched workloads run at nice 19: with all three at nice 0,
# three CPU-bound loops on two vCPUs (one host thread) starve
# insmod/attach/rmmod, and a cycle takes ~9.5 s instead of ~5 s. They still
# run all along (the cycle is one task: a vCPU is theirs whenever it waits),
# and the hooks fire from them throughout attach and detach. The watched
# one stays at nice 0, or on the debug kernel it hardly runs in the 100 ms
# it is watched (1 record per cycle, seen).
set -u
cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/leak.sh"

pids=()
sess_out=$(mktemp)
cleanup() {
	[ -n "${sess_pid:-}" ] && kill "$sess_pid" 2>/dev/null
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	grep -q '^memmon ' /proc/modules && rmmod memmon
}
trap cleanup EXIT

churn() { (exec nice -n "$1" build/vmtests/w_watch --churn) & pids+=($!); }
churn 19
churn 19
churn 0
watched=${pids[2]}
build/vmtests/w_sessions "$watched" >"$sess_out" &
sess_pid=$!

# rmmod, again while a session of w_sessions holds the module (each holds
# it a few ms out of ~25): at most 500 tries, counted in $busy.
busy=0
unload() {
	local i
	for ((i = 0; i < 500; i++)); do
		rmmod memmon 2>/dev/null && return 0
		busy=$((busy + 1))
		sleep 0.01
	done
	rmmod memmon
}

rec_total=0
cycle() {
	local i out nrec
	for ((i = 0; i < $1; i++)); do
		insmod "$MEMMON_KO" || return 1
		out=$(build/vmtests/w_watch "$watched" 100) || { unload; return 1; }
		unload || return 1
		read -r _ nrec _ <<<"$out"
		rec_total=$((rec_total + nrec))
	done
}

# 100 cycles after 5 that settle the allocators for leak.sh's counters. On
# the debug kernel (tests/check-debug) 4 after 1: KASAN and lockdep make a
# cycle ~40 s instead of ~7, the counters are not bounded there (leak.sh)
# and kmemleak checks, object by object, what they can only bound.
# MEMMON_CYCLES=N asks for N: tests/check runs the kernels after the first
# short, to keep make check's time (the full length is `make soak`).
N=100
W=5
[ -e /sys/kernel/debug/kmemleak ] && N=4 W=1
if [ -n "${MEMMON_CYCLES:-}" ]; then
	case $MEMMON_CYCLES in
	*[!0-9]* | 0) echo "not ok - MEMMON_CYCLES='$MEMMON_CYCLES' is no positive number"; exit 1 ;;
	esac
	N=$MEMMON_CYCLES
fi

t "$W warm-up cycles" cycle $W
leak_mark
rec_total=0
t "$N cycles: load, watch a busy process for 100 ms, unload" cycle $N
leak_check "$N cycles" 512
echo "# $rec_total records over $N cycles"
t "the watched workload was recorded" test "$rec_total" -gt $N
t "the workloads are still running" kill -0 "${pids[@]}"
kill "$sess_pid"
wait "$sess_pid"
sess_rc=$?
sess_pid=
read -r _ nsess _ nrec _ absent _ sfail <"$sess_out"
echo "# w_sessions: ${nsess:-?} sessions, ${nrec:-?} records, ${absent:-?} opens with no module;" \
	"rmmod retried $busy times"
t "w_sessions ended cleanly (status $sess_rc)" test "$sess_rc" -eq 0
t "sessions came and went during the cycles (${nsess:-none})" test "${nsess:-0}" -gt 0
t "no session step failed (${sfail:-?})" test "${sfail:-1}" -eq 0
rm -f "$sess_out"
exit $failed
