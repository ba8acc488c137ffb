#!/usr/bin/env bash
# vmtest: no-module
# The fuzzer, build/vmtests/w_fuzz (tests/vm/w_fuzz.c): root and nobody
# workers drive every entry point of /dev/memmon and /proc/memmon with
# random and boundary arguments while a watched churn maps, faults, forks,
# execs a plain and a setuid image, and exits.
#
#   MEMMON_FUZZ_SECONDS  how long (default 40; make soak asks for 1800)
#   MEMMON_FUZZ_SEED     replay a run: the seed every run prints
#   MEMMON_FUZZ_WORKERS  worker processes, half root, half nobody (default 6)
#
# w_fuzz judges its own calls (every worker ends by itself, the watching
# session's accounting is exact, the users' charges are what they were);
# here: the module unloads afterwards and the kernel said nothing (the
# runner also fails the VM on any report, and the debug kernel's kmemleak
# scan follows the suite).
set -u
cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "$0")/tap.sh"

secs=${MEMMON_FUZZ_SECONDS:-40}
workers=${MEMMON_FUZZ_WORKERS:-6}
dir=$(mktemp -d /tmp/memmon-fuzz-XXXXXX)

cleanup() {
	mountpoint -q "$dir" && umount "$dir"
	rmdir "$dir"
	grep -q '^memmon ' /proc/modules && rmmod memmon
}
trap cleanup EXIT

# The setuid image needs a filesystem without nosuid, readable by nobody.
t "a tmpfs for the images" mount -t tmpfs -o mode=0755 memmon-fuzz "$dir"
params="require_cap=0 max_user_sessions=8 user_ring_kb=2048 ring_size_max=4194304"
marker="memmon-fuzz-$$-$(date +%s)"
echo "$marker" >/dev/kmsg
t "load memmon.ko $params" insmod "$MEMMON_KO" $params
chmod 0666 /dev/memmon

build/vmtests/w_fuzz --dir "$dir" --seconds "$secs" --workers "$workers" \
	${MEMMON_FUZZ_SEED:+--seed "$MEMMON_FUZZ_SEED"}
rc=$?
t "w_fuzz exited 0 (status $rc)" test $rc -eq 0
t "rmmod memmon after the fuzz" rmmod memmon

# What the kernel logged since the marker.
log=$(dmesg | sed -n "/$marker/,\$p")
reports=$(grep -E 'WARNING|BUG|Oops|KASAN|UBSAN|lockdep|circular locking|Call Trace|general protection|hung_task' <<<"$log")
[ -n "$reports" ] && printf '# %s\n' "$reports" | head -n 60
t "no kernel report during the fuzz" test -z "$reports"
exit $failed
