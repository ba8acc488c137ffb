#!/usr/bin/env bash
# Fidelity on third-party programs: `memmon trace -f` of a real command
# against referees watching the same run.
#   - strace: run under memmon, strace -f traces the command; for every
#     process of the command, memmon's syscall records are the calls strace
#     saw, in the same order, with the same return values (errors too).
#   - the kernel's counters: w_rusage runs the command and reaps it; its
#     rusage (from fork to exit, reaped descendants included) is exactly
#     memmon's HANDLED faults of the command's processes, major ones too,
#     and its ru_maxrss the largest peak RSS of their exit records; and the
#     same through `memmon record` and `memmon report --json` (its
#     "fault_results", major faults and peak_rss_kernel per process).
# The commands are whatever this machine's packages ship (coreutils, gzip
# and perl are Debian's essential set, python3 and strace come from
# scripts/deps), not our workloads; python3 by its path, past any wrapper
# earlier in PATH. One run follows a drop of
# the page cache, so that file faults are major ones.
# Runs in the VM from the repository root with a fresh memmon.ko loaded.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/tap.sh
. tests/vm/tap.sh

M=build/bin/memmon
W=build/vmtests/w_rusage
PY=/usr/bin/python3
SYS=mmap,munmap,mremap,brk,mlock,mlock2,munlock,mlockall,munlockall,fsync,madvise,mprotect
work=$(mktemp -d /tmp/memmon-fidelity.XXXXXX)
trap 'rm -rf "$work"' EXIT
i=0

# shellcheck disable=SC2317 # (called through $referee)
# vs_strace CMD...: memmon's syscall records == strace's, same run
vs_strace() {
	i=$((i + 1))
	"$M" trace -f --json -o "$work/$i.json" -- \
		strace -f -qq -e trace="$SYS" -o "$work/$i.st" "$@" \
		>/dev/null 2>"$work/$i.err" || { cat "$work/$i.err"; return 1; }
	python3 tests/vm/fidelity.py strace "$work/$i.json" "$work/$i.st"
}

# shellcheck disable=SC2317
# vs_rusage CMD...: memmon's faults and peak RSS == the kernel's counters
vs_rusage() {
	i=$((i + 1))
	"$M" trace -f --json -o "$work/$i.json" -- "$W" "$work/$i.ru" "$@" \
		>/dev/null 2>"$work/$i.err" || { cat "$work/$i.err"; return 1; }
	python3 tests/vm/fidelity.py faults "$work/$i.json" "$work/$i.ru"
}

# shellcheck disable=SC2317
# vs_report CMD...: the same, through memmon record and memmon report --json
vs_report() {
	i=$((i + 1))
	"$M" record -f -o "$work/$i.trace" -- "$W" "$work/$i.ru" "$@" \
		>/dev/null 2>"$work/$i.err" || { cat "$work/$i.err"; return 1; }
	"$M" report --json "$work/$i.trace" >"$work/$i.report" 2>"$work/$i.err" ||
		{ cat "$work/$i.err"; return 1; }
	python3 tests/vm/fidelity.py report "$work/$i.report" "$work/$i.ru"
}

threads='import threading
def work():
    b = bytearray(1 << 20)
    b[::4096] = b"x" * 256
ts = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]'
# failing calls: mmap of 2^60 bytes (ENOMEM), munmap of an unaligned
# address (EINVAL), mprotect of an unmapped page (ENOMEM)
errors='syscall(9, 0, 1 << 60, 3, 0x22, -1, 0); syscall(11, 1, 4096);
syscall(10, 4096, 4096, 1)'

# On the debug kernel (tests/check-debug: KASAN, lockdep, kmemleak) every
# exec and ptrace stop costs ~20 times as much: there the kernel paths are
# what is under test, and a shell pipeline under each referee covers them
# (fork, exec, file and anonymous faults, every hooked call the C library
# makes).
full=1
[ -e /sys/kernel/debug/kmemleak ] && full=
for referee in vs_strace vs_rusage vs_report; do
	t "$referee: sh, a pipeline (fork, exec)" $referee sh -c 'ls -l /etc | wc -l'
	[ -n "$full" ] || continue
	t "$referee: gzip" $referee gzip -c docs/benchmarks.md
	t "$referee: sort" $referee sort docs/benchmarks.md
	t "$referee: perl, failing calls" $referee perl -e "$errors"
	t "$referee: python3, four threads" $referee "$PY" -c "$threads"
done
sync
echo 3 >/proc/sys/vm/drop_caches
if [ -n "$full" ]; then
	t "vs_rusage: python3 after drop_caches (major faults)" vs_rusage "$PY" -c pass
else
	t "vs_rusage: gzip after drop_caches (major faults)" vs_rusage gzip -c docs/benchmarks.md
fi
exit "$failed"
