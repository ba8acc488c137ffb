#!/usr/bin/env bash
# Not a test: reproduces a crash of the test kernel that has nothing to do
# with memmon (no module is loaded). Arms and disarms a plain tracefs
# kretprobe on handle_mm_fault while three processes fault in a loop.
#
#   MEMMON_VM_ACCEL=mttcg tests/vm/run --no-module -- tests/vm/repro/kretprobe-tcg.sh
#       2 vCPUs on 2 host threads: oops, RIP 0x0, within seconds
#   tests/vm/run --no-module -- tests/vm/repro/kretprobe-tcg.sh
#       2 vCPUs on one host thread (the runner's default): survives 300 cycles
#   tests/vm/run --no-module --smp 1 -- tests/vm/repro/kretprobe-tcg.sh
#       1 vCPU: survives 300 cycles
#
# Seen with Debian 6.1.0-57-amd64 (6.1.192) under QEMU 7.2 TCG: an emulation
# problem of cross-vCPU code modification, by all signs (the guest is the
# same in all three runs). Needs build/vmtests/w_watch (make vm-tests).
set -u
cd "$(dirname "$0")/../../.." || exit 1
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T
for _ in 1 2 3; do (exec -a w_churn build/vmtests/w_watch --churn) & done
for ((i = 0; i < 300; i++)); do
	echo 'r:memmonrepro handle_mm_fault' >$T/kprobe_events || exit 1
	echo 1 >$T/events/kprobes/memmonrepro/enable
	sleep 0.05
	echo 0 >$T/events/kprobes/memmonrepro/enable
	echo >$T/kprobe_events
done
echo "survived $i arm/disarm cycles"
kill %1 %2 %3
