#!/usr/bin/env bash
# vmtest: no-module
# The gates (driver/instr/hooks.c): while a session is enabled, an unwatched
# task's faults and hooked syscalls stop at a gate in front of each
# kretprobe and never reach its instance pool; someone else's kprobe on the
# same function still sees every call; a watched task is still recorded.
# A gate is memmon's own ftrace filter, which fires the kretprobe
# (registered disabled) itself, or with hook_kprobes=1 a kprobe in front of
# the armed kretprobe (driver/instr/hooks.c, "Gates"); handle_mm_fault() is by
# default hooked by memmon's direct-call trampoline instead
# (driver/instr/fault_tramp.c), which keeps unwatched faults out by itself:
# every way is checked.
#
# The workload is python3 renamed "gatewl" (PR_SET_NAME) touching every
# page of a 64 MiB mapping (4 MiB on the debug kernel, where KASAN and
# lockdep check each fault under TCG) with THP off for it: one minor fault
# per page after the rename, which is what the foreign kprobe's hits are
# counted against.
set -u
cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "$0")/tap.sh"
P=/proc/memmon
T=/sys/kernel/tracing
KP=memmon_gate_test
MIB=64
[ -e /sys/kernel/debug/kmemleak ] && MIB=4
PAGES=$((MIB * 256))
churn=
late=
anchor=
cleanup() {
	[ -n "$churn" ] && kill "$churn" 2>/dev/null
	[ -n "$late" ] && kill "$late" 2>/dev/null
	[ -n "$anchor" ] && kill "$anchor" 2>/dev/null
	wait 2>/dev/null
	[ -d $T/events/kprobes/$KP ] && echo 0 >$T/events/kprobes/$KP/enable
	[ -e $T/kprobe_events ] && echo "-:$KP" >>$T/kprobe_events 2>/dev/null
	grep -q '^memmon ' /proc/modules && rmmod memmon
	rm -f /tmp/memmon-gate.ev
}
trap cleanup EXIT

workload() {
	python3 -c '
import ctypes, mmap, sys
ctypes.CDLL(None).prctl(15, b"gatewl", 0, 0, 0)
m = mmap.mmap(-1, int(sys.argv[1]) << 20)
m.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(0, len(m), 4096):
    m[i] = 1
' "$MIB"
}
stat() { awk -v k="$1" '$1 == k { print $2 }' $P/stats; }
# attached: the session is enabled and the hooks are in (procfs.c's session)
attached() { grep -qx "hooks_attached 1" $P/stats; }

# The unwatched workload stops at $1: gate_skipped grows by a fault a page.
gate_keeps_out() {
	local s0 s1
	s0=$(stat gate_skipped)
	workload
	s1=$(stat gate_skipped)
	echo "# gate_skipped $s0 -> $s1"
	t "$1 kept the unwatched faults out ($((s1 - s0)) >= $PAGES)" \
		test $((s1 - s0)) -ge $PAGES
}
# The watched churn's mmap calls and faults are recorded (through $1).
watched_come_through() {
	dd if=$P/events iflag=nonblock bs=64k count=64 of=/tmp/memmon-gate.ev 2>/dev/null
	t "the watched process's mmap calls come through$1" \
		grep -q " $churn/$churn mmap(" /tmp/memmon-gate.ev
	t "... and its faults" grep -q " $churn/$churn fault addr=" /tmp/memmon-gate.ev
}

mountpoint -q $T || mount -t tracefs none $T
t "insmod (hooks_linger_ms=0: no probes left from a session before)" \
	insmod "$MEMMON_KO" hooks_linger_ms=0
t "no gate while nothing is watched" test "$(stat gates_armed)" = 0

# 1. Someone else's kprobe first, then memmon attaches: the aggregate is
# [gate, memmon's kretprobe, theirs], and the gate must let the unwatched
# calls through to theirs.
t "a tracefs kprobe on handle_mm_fault" sh -c \
	"echo 'p:$KP handle_mm_fault' >>$T/kprobe_events && echo 1 >$T/events/kprobes/$KP/enable"
# The watched process: mmap, touch, munmap, brk, fork in a loop.
(exec -a w_churn build/vmtests/w_watch --churn) &
churn=$!
t "watching a busy process attaches the hooks" sh -c \
	"echo $churn >$P/watch-pids && grep -qx 'hooks_attached 1' $P/stats"
t "gates are armed" test "$(stat gates_armed)" -gt 0
t "handle_mm_fault is hooked through the direct-call trampoline" \
	test "$(stat fault_hook)" = direct
t "... and so are the syscalls" test "$(stat syscall_hook)" = ftrace
# Only the workload's hits go into the buffer (the watched churn faults
# too, and in a buffer it shared with them the oldest of the workload's
# were overwritten on a busy host), and the buffer must have lost nothing
# for the count to mean anything.
t "... filtered to the workload" sh -c "echo 'comm == \"gatewl\"' >$T/events/kprobes/$KP/filter"
echo 8192 >$T/buffer_size_kb
echo >$T/trace
workload
hits=$(grep -c 'gatewl-[0-9]* .*: '"$KP"':' $T/trace)
overrun=$(cat $T/per_cpu/cpu*/stats | awk '$1 == "overrun:" { n += $2 } END { print n + 0 }')
echo "# tracefs kprobe: $hits hits of the unwatched workload, $overrun overwritten"
t "the trace buffer overwrote nothing ($overrun)" test "$overrun" = 0
t "the foreign kprobe saw every unwatched fault ($hits >= $PAGES)" test "$hits" -ge $PAGES
t "remove the tracefs kprobe" sh -c \
	"echo 0 >$T/events/kprobes/$KP/enable && echo '-:$KP' >>$T/kprobe_events"

# 2. memmon alone on handle_mm_fault: the unwatched faults stop at the
# trampoline's own test.
gate_keeps_out "the trampoline"

# 3. The watched process's calls go through the gates to the kretprobes.
watched_come_through ""

# 3b. The filters keep each CPU's last verdict and its quiet process
# (driver/emit.h), dropped by every change of the watch table: a process
# that has been faulting unwatched is recorded as soon as it is watched,
# and no longer once it is not. Nothing else changes the table meanwhile
# (churn, which forks, is gone; an idle process keeps the session on), and
# the process has CPU 1 to itself (this script and its commands stay on
# CPU 0, where their own lookups would replace the verdict), so a change
# that did not drop the verdicts would show.
taskset -pc 0 $$ >/dev/null
(exec -a w_anchor sleep 600) &
anchor=$!
echo "$anchor" >$P/watch-pids
kill "$churn"
wait "$churn" 2>/dev/null
churn=
taskset -c 1 python3 -c '
import ctypes, mmap
ctypes.CDLL(None).prctl(15, b"gatelate", 0, 0, 0)
m = mmap.mmap(-1, 1 << 20)
while True:
    for i in range(0, len(m), 4096):
        m[i] = 1
    m.madvise(mmap.MADV_DONTNEED)
' &
late=$!
drain() { dd if=$P/events iflag=nonblock bs=64k count=1024 2>/dev/null; }
# python3 may be a launcher script (pyenv) that execs it later: wait for
# the loop itself (its name), at most 60 s.
for _ in $(seq 600); do
	grep -qx gatelate /proc/$late/comm 2>/dev/null && break
	sleep 0.1
done
t "the late process runs its fault loop" grep -qx gatelate /proc/$late/comm
drain >/dev/null
sleep 1
drain >/tmp/memmon-gate.ev
t "a process faulting unwatched is not recorded" \
	sh -c "! grep -q ' $late/$late fault addr=' /tmp/memmon-gate.ev"
echo "$late" >$P/watch-pids
# Its next faults must come through; give a slow VM up to 10 s.
: >/tmp/memmon-gate.ev
for _ in $(seq 20); do
	sleep 0.5
	drain >>/tmp/memmon-gate.ev
	grep -q " $late/$late fault addr=" /tmp/memmon-gate.ev && break
done
t "... once watched, its faults are recorded" \
	grep -q " $late/$late fault addr=" /tmp/memmon-gate.ev
echo "-$late" >$P/watch-pids
drain >/dev/null
sleep 1
drain >/tmp/memmon-gate.ev
t "... and once unwatched, no longer" \
	sh -c "! grep -q ' $late/$late fault addr=' /tmp/memmon-gate.ev"
kill "$late" "$anchor"
wait "$late" "$anchor" 2>/dev/null
late=
anchor=
taskset -pc 0-1 $$ >/dev/null
t "rmmod" rmmod memmon
t "the gates went with the module" test ! -e $P

# 3c. hook_fault_direct=0: handle_mm_fault() through the ftrace filter
# and its kretprobe, like the syscalls.
t "insmod hook_fault_direct=0" insmod "$MEMMON_KO" hooks_linger_ms=0 hook_fault_direct=0
(exec -a w_churn build/vmtests/w_watch --churn) &
churn=$!
t "watching it attaches the hooks" sh -c \
	"echo $churn >$P/watch-pids && grep -qx 'hooks_attached 1' $P/stats"
t "handle_mm_fault is hooked through the ftrace filter" \
	test "$(stat fault_hook)" = ftrace
gate_keeps_out "the ftrace filter"
watched_come_through " the ftrace filter"
kill "$churn"
wait "$churn" 2>/dev/null
churn=
t "rmmod (hook_fault_direct=0)" rmmod memmon

# 4. hook_kprobes=1: the kretprobes armed as kprobes, kprobe gates in
# front of them; the same checks of the unwatched and the watched calls.
t "insmod hook_kprobes=1" insmod "$MEMMON_KO" hooks_linger_ms=0 hook_kprobes=1
(exec -a w_churn build/vmtests/w_watch --churn) &
churn=$!
t "watching it attaches the hooks" sh -c \
	"echo $churn >$P/watch-pids && grep -qx 'hooks_attached 1' $P/stats"
t "handle_mm_fault is hooked by a kprobe" test "$(stat fault_hook)" = kprobe
t "... and so are the syscalls" test "$(stat syscall_hook)" = kprobe
gate_keeps_out "the kprobe gate"
watched_come_through " the kprobes"
kill "$churn"
wait "$churn" 2>/dev/null
churn=
t "rmmod (hook_kprobes=1)" rmmod memmon
exit $failed
