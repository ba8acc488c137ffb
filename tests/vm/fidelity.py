#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare what `memmon trace --json` recorded of a run with a referee's
view of the same run (t_cli_fidelity.sh).

  fidelity.py strace EVENTS.json STRACE.out
      STRACE.out is `strace -f -qq -o` of the same run, restricted to the
      syscalls memmon hooks. For every process strace saw, memmon's syscall
      records must be the same calls in the same order with the same return
      values; memmon must have nothing of any other process than strace
      itself (the tracer runs under the watch too: its own calls are
      memmon's to record and strace's not to see).

  fidelity.py faults EVENTS.json RUSAGE.out
      RUSAGE.out is w_rusage's line for a child it ran and reaped. memmon's
      HANDLED fault records of that child and of its descendants must count
      exactly the child's minflt + majflt, the major ones exactly majflt
      (the kernel's rule: hook_faults.c); the largest peak_rss of their
      exit records must be ru_maxrss (the kernel keeps the largest high
      water mark of the child and of what it reaped).

  fidelity.py report REPORT.json RUSAGE.out
      REPORT.json is `memmon report --json` of a `memmon record -f` of the
      same kind of run: the same three sums, from the report's processes
      (the child's tree by their "parent"): "handled" fault results, major
      faults, and the largest kernel peak RSS at exit.

Prints one line saying what matched, or what did not; exits 1 on a mismatch
and 2 on unusable input.
"""
import collections
import errno
import json
import re
import sys


def load_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def parse_strace(path):
    """Per pid, the list of (name, ret); joins <unfinished>/<resumed>."""
    calls = collections.defaultdict(list)
    pending = {}
    done = re.compile(r'^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\w+)(?:\s+(E\w+))?')
    unfinished = re.compile(r'^(\d+)\s+(\w+)\((.*)\s+<unfinished \.\.\.>$')
    resumed = re.compile(r'^(\d+)\s+<\.\.\. (\w+) resumed>.*\)\s+=\s+(-?\w+)(?:\s+(E\w+))?')
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            m = unfinished.match(line)
            if m:
                pending[int(m.group(1))] = m.group(2)
                calls[int(m.group(1))].append(None)  # keeps the order
                continue
            m = resumed.match(line)
            if m:
                pid = int(m.group(1))
                ret = to_ret(m.group(3), m.group(4))
                i = calls[pid].index(None)
                calls[pid][i] = (pending.pop(pid), ret)
                continue
            m = done.match(line)
            if m:
                pid = int(m.group(1))
                calls[pid].append((m.group(2), to_ret(m.group(4), m.group(5))))
                continue
            if re.match(r'^\d+\s+(---|\+\+\+)', line):
                continue  # signals, exits
            sys.exit(f'fidelity: {path}: cannot read: {line!r}')
    if pending:
        sys.exit(f'fidelity: {path}: calls never resumed: {pending}')
    return calls


def to_ret(val, err):
    if err:  # "-1 ENOMEM": the kernel returned -ENOMEM
        return -getattr(errno, err)
    return int(val, 0)


def check_strace(events, st_path):
    lost(events)
    st = parse_strace(st_path)
    execs = [e for e in events if e['type'] == 'exec']
    tracer = {e['tgid'] for e in execs if e['path'].endswith('/strace')}
    mm = collections.defaultdict(list)
    for e in events:
        if e['type'] == 'syscall':
            mm[e['tid']].append((e['name'], e['ret']))
    n = sum(len(v) for v in st.values())
    if not tracer:
        print('not ok: no exec of strace among memmon\'s records')
        return 1
    if n == 0:
        print('not ok: strace saw no calls: nothing compared')
        return 1
    bad = []
    for pid in sorted(set(st) | set(mm)):
        if pid in tracer and pid not in st:
            continue
        a, b = st.get(pid, []), mm.get(pid, [])
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                         min(len(a), len(b)))
            bad.append(f'pid {pid}: strace {len(a)} calls, memmon {len(b)}, '
                       f'first difference at call {first}: '
                       f'{a[first] if first < len(a) else None} vs '
                       f'{b[first] if first < len(b) else None}')
    if bad:
        print('not ok: ' + '; '.join(bad[:5]))
        return 1
    print(f'ok: {n} calls of {len(st)} tasks, same calls, order and '
          f'return values as strace')
    return 0


def warn_lost(n):
    """Events the rings dropped: a count mismatch is then no surprise."""
    if n:
        print(f'# memmon lost {n} events (ring overflow): a mismatch below '
              f'is that, not a fidelity bug')


def lost(events):
    warn_lost(sum(e.get('count', 0) for e in events if e['type'] == 'lost'))


def check_faults(events, ru_path):
    lost(events)
    ru = read_rusage(ru_path)
    tree = {int(ru['pid'])}
    for e in events:  # forks come in time order, parents first
        if e['type'] == 'fork' and e['tgid'] in tree:
            tree.add(e['child_tgid'])
    handled = major = 0
    for e in events:
        if e['type'] == 'fault' and e['tgid'] in tree and e['result'] == 'handled':
            handled += 1
            major += bool(e['major'])
    peak = max((e['peak_rss'] for e in events
                if e['type'] == 'exit' and e['tgid'] in tree and e['group']),
               default=None)
    return compare('memmon trace', tree, handled, major, peak, ru)


def compare(what, tree, handled, major, peak, ru):
    want = int(ru['minflt']) + int(ru['majflt'])
    maxrss = int(ru['maxrss']) * 1024
    if handled != want or major != int(ru['majflt']):
        print(f'not ok: {what}, {len(tree)} processes: memmon counted '
              f'{handled} faults ({major} major), the kernel {want} '
              f'({ru["majflt"]} major)')
        return 1
    if not want:
        print('not ok: the kernel counted no fault: nothing compared')
        return 1
    if peak != maxrss:
        print(f'not ok: {what}: largest peak RSS at exit {peak}, the '
              f'kernel\'s ru_maxrss {maxrss} bytes')
        return 1
    print(f'ok: {what}: {len(tree)} processes, {handled} faults ({major} '
          f'major), peak RSS {peak} bytes, as the kernel counted')
    return 0


def read_rusage(path):
    with open(path) as f:
        return dict(kv.split('=') for kv in f.read().split())


def check_report(report_path, ru_path):
    ru = read_rusage(ru_path)
    with open(report_path) as f:
        report = json.load(f)
    procs = report['processes']
    warn_lost(report.get('lost', 0))
    tree = {int(ru['pid'])}
    grew = True
    while grew:  # the report lists processes by tgid, not in fork order
        grew = False
        for p in procs:
            if p.get('parent') in tree and p['tgid'] not in tree:
                tree.add(p['tgid'])
                grew = True
    mine = [p for p in procs if p['tgid'] in tree]
    handled = sum(p.get('fault_results', {}).get('handled', 0) for p in mine)
    major = sum(c['major'] for p in mine for c in p['faults'].values())
    peak = max((p['peak_rss_kernel'] for p in mine if 'peak_rss_kernel' in p),
               default=None)
    return compare('memmon report', tree, handled, major, peak, ru)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ('strace', 'faults', 'report'):
        sys.exit(__doc__)
    if sys.argv[1] == 'report':
        return check_report(sys.argv[2], sys.argv[3])
    events = load_events(sys.argv[2])
    if sys.argv[1] == 'strace':
        return check_strace(events, sys.argv[3])
    return check_faults(events, sys.argv[3])


if __name__ == '__main__':
    sys.exit(main())
