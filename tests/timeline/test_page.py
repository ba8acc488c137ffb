#!/usr/bin/python3
"""memmon timeline's page in a real browser (Debian's headless chromium
through chromedriver and python3-selenium).

    test_page.py PAGE.html REPORT.json SCREENSHOT.png [CHROME.json]
    test_page.py --load-only PAGE.html     (a big page: load time, no errors)

Loads the page, checks that it logged no console error, that the lanes,
processes and counts it reports (window.memmonTimeline.summary()) equal
`memmon report --json` of the same trace, that wheel zoom and a drag
selection change the visible range and the selection summary, that hovering
a call shows its decoded text; saves a screenshot. CHROME.json, `memmon
export --format chrome` of the same trace, is then handed to the same page
and checked there by JavaScript against the Trace Event Format's rules
(check_chrome). Prints `ok N - ...` /
`not ok N - ...` and closes with `timeline: N passed, N failed`.
"""
import json
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By

# report's fault classes (memmon_fault_class__name) -> the page's
CLASS = {'none': 'other', 'anon': 'anon', 'swap': 'swap', 'file': 'file',
         'shmem': 'shmem', 'other': 'other', 'unknown': 'other'}
# report's calls (memmon_sys__name) -> the page's kinds
KIND = {'mmap': 'mmap', 'mmap2': 'mmap', 'old_mmap': 'mmap', 'munmap': 'munmap',
        'brk': 'brk', 'mremap': 'mremap', 'mlock': 'mlock', 'mlock2': 'mlock',
        'munlock': 'mlock', 'mlockall': 'mlock', 'munlockall': 'mlock',
        'madvise': 'madvise', 'mprotect': 'mprotect', 'fsync': 'fsync'}

passed = failed = 0


def check(cond, what, detail=''):
    global passed, failed
    n = passed + failed + 1
    if cond:
        passed += 1
        print(f'ok {n} - {what}')
    else:
        failed += 1
        print(f'not ok {n} - {what}')
        if detail:
            for line in str(detail).splitlines()[:20]:
                print(f'#   {line}')
    sys.stdout.flush()
    return cond


def expected_proc(p):
    """What the page must say of one of report's processes."""
    faults = {c: {'minor': 0, 'major': 0} for c in ('anon', 'file', 'shmem', 'swap', 'other')}
    for name, v in p.get('faults', {}).items():
        faults[CLASS[name]]['minor'] += v['minor']
        faults[CLASS[name]]['major'] += v['major']
    calls = {k: 0 for k in set(KIND.values())}
    nfailed = 0
    for name, v in p.get('calls', {}).items():
        calls[KIND[name]] += v['count']
        nfailed += v['failed']
    return {'tgid': p['tgid'], 'parent': p.get('parent', 0), 'exe': p.get('exe'),
            'faults_by_class': faults, 'faults_total': p['faults_total'],
            'calls_by_kind': calls, 'failed': nfailed,
            'bytes_mapped': p['bytes_mapped'], 'bytes_unmapped': p['bytes_unmapped']}


def got_proc(p):
    return {k: p[k] for k in ('tgid', 'parent', 'exe', 'faults_by_class', 'faults_total',
                              'calls_by_kind', 'failed', 'bytes_mapped', 'bytes_unmapped')}


def main():
    if sys.argv[1] == '--load-only':
        page, report, shot, chrome = sys.argv[2], None, None, None
    else:
        page, report_path, shot = sys.argv[1:4]
        chrome = sys.argv[4] if len(sys.argv) > 4 else None
        with open(report_path) as f:
            report = json.load(f)
        span = None
        if len(sys.argv) > 5:
            with open(sys.argv[5]) as f:
                span = json.load(f)

    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get('CHROMIUM', '/usr/bin/chromium')
    for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
              '--window-size=1600,1000', '--force-device-scale-factor=1'):
        opts.add_argument(a)
    opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = webdriver.Chrome(service=Service(os.environ.get('CHROMEDRIVER', '/usr/bin/chromedriver')),
                              options=opts)
    try:
        run(driver, page, report, shot)
        if chrome:
            check_chrome(driver, chrome, report, span)
    finally:
        driver.quit()


def run(driver, page, report, shot):
    t = time.monotonic()
    driver.get('file://' + os.path.abspath(page))
    ready = driver.execute_script('return !!(window.memmonTimeline && window.memmonTimeline.summary().drawn)')
    load_s = time.monotonic() - t
    nav = driver.execute_script(
        'var n = performance.getEntriesByType("navigation")[0];'
        'return n ? n.loadEventEnd : null;')
    check(ready, f'the page loads and draws (get() {load_s:.2f} s, load event at {nav} ms)')
    if not ready:
        print_logs(driver)
        return
    logs = driver.get_log('browser')
    errors = [l for l in logs if l.get('level') == 'SEVERE']
    check(not errors, f'no console errors ({len(logs)} console entries)',
          '\n'.join(l.get('message', '') for l in errors))
    if report is None:
        # a big page: it must open in under 3 s, and zoom and select fast
        check(load_s < 3, f'opened in under 3 s ({load_s:.2f} s)')
        t = time.monotonic()
        driver.execute_script('window.memmonTimeline.zoom(0.25); '
                              'window.memmonTimeline.select(0, window.memmonTimeline.data.duration / 2)')
        dt = time.monotonic() - t
        check(dt < 1, f'zoom and a selection redraw in under 1 s ({dt:.2f} s)')
        check_exact(driver)
        return

    s = driver.execute_script('return window.memmonTimeline.summary()')
    procs = report['processes']
    want_tgids = sorted(p['tgid'] for p in procs)
    got_tgids = sorted(p['tgid'] for p in s['processes'])
    check(want_tgids == got_tgids, f'the page has report\'s {len(want_tgids)} processes',
          f'report {want_tgids}\npage   {got_tgids}')
    check(s['lanes'] == len(procs), f'one lane per process ({s["lanes"]})')
    check(s['records'] == report['records'], f'records: {s["records"]} == report\'s {report["records"]}')
    check(s['lost'] == report['lost'], f'lost events: {s["lost"]} == report\'s {report["lost"]}')
    starts = [p['start_ns'] for p in s['processes']]
    check(starts == sorted(starts), 'lanes are ordered by start')

    byt = {p['tgid']: p for p in s['processes']}
    bad = []
    for p in procs:
        want = expected_proc(p)
        got = got_proc(byt[p['tgid']]) if p['tgid'] in byt else None
        if got != want:
            bad.append(f'{p["tgid"]}: report {json.dumps(want, sort_keys=True)}')
            bad.append(f'{" " * len(str(p["tgid"]))}  page   {json.dumps(got, sort_keys=True)}')
    check(not bad, 'per process: name, parent, faults by class (minor/major), calls by kind, '
          'failed calls and bytes equal report --json', '\n'.join(bad))
    nf = sum(p['faults_total'] for p in procs)
    nc = sum(v['count'] for p in procs for v in p['calls'].values())
    check(nf > 0 and nc > 0, f'the trace has faults ({nf}) and calls ({nc}) to draw')
    names = {p['name'] for p in s['processes']}
    check({'sort', 'gzip'} <= names and any(n.startswith('python3') for n in names),
          'exec names: sort, gzip and python3 have lanes', sorted(names))
    multi = [p for p in s['processes'] if p['threads'] >= 3]
    check(bool(multi), 'python3\'s threads are in its lane (>= 3 threads)',
          [(p['tgid'], p['name'], p['threads']) for p in s['processes']])
    check(s['marks'] >= 2, f'the markers of memmon mark are there ({s["marks"]})')
    check(s['exact_windows'] >= 1 and s['exact_calls'] == nc,
          f'exact windows: {s["exact_windows"]} holding all {s["exact_calls"]} calls (report: {nc})')
    check_exact(driver)

    canvas = driver.find_element(By.ID, 'tl')
    # zoom: wheel events at the middle of the plot
    v0 = driver.execute_script('return window.memmonTimeline.view()')
    driver.execute_script('''
        var c = document.getElementById('tl'), r = c.getBoundingClientRect();
        for (var i = 0; i < 3; i++)
            c.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: r.left + 210 + (r.width - 210) / 2,
                                                     clientY: r.top + 60, bubbles: true, cancelable: true}));''')
    v1 = driver.execute_script('return window.memmonTimeline.view()')
    check(v1[1] - v1[0] < (v0[1] - v0[0]) * 0.5,
          f'wheel zooms in: visible span {v0[1] - v0[0]:.0f} -> {v1[1] - v1[0]:.0f} ns')
    driver.execute_script('window.memmonTimeline.setView(0, window.memmonTimeline.data.duration)')
    v2 = driver.execute_script('return window.memmonTimeline.view()')
    check(abs((v2[1] - v2[0]) - s['duration_ns']) <= 1, 'setView back to the whole trace')

    # a drag selection over the middle third, with the mouse
    w = canvas.size['width']
    x0 = 210 + (w - 210) // 3
    x1 = 210 + 2 * (w - 210) // 3
    r = rect(driver)
    ab = ActionBuilder(driver)
    ab.pointer_action.move_to_location(int(r['left'] + x0), int(r['top'] + 60))
    ab.pointer_action.pointer_down()
    ab.pointer_action.move_to_location(int(r['left'] + (x0 + x1) // 2), int(r['top'] + 60))
    ab.pointer_action.move_to_location(int(r['left'] + x1), int(r['top'] + 60))
    ab.pointer_action.pointer_up()
    ab.perform()
    sel = driver.execute_script('return window.memmonTimeline.selection()')
    ss = driver.execute_script('return window.memmonTimeline.selectionSummary()')
    dur = s['duration_ns']
    check(sel is not None and abs(sel[0] - dur / 3) < dur * 0.02 and abs(sel[1] - 2 * dur / 3) < dur * 0.02,
          f'a drag selects the middle third ({sel})')
    text = driver.find_element(By.ID, 'sel').text
    check(ss is not None and 'bytes mapped' in text and ss['calls_total'] + ss['faults_total'] > 0,
          f'the selection summary shows counts ({ss and ss["calls_total"]} calls, '
          f'{ss and ss["faults_total"]} faults, {ss and fmt(ss["bytes_mapped"])} mapped)')
    tot_f = sum(v['minor'] + v['major'] for v in s['faults'].values())
    check(ss is not None and ss['faults_total'] < tot_f, 'the selection counts fewer faults than the whole')
    # a selection of everything counts everything
    driver.execute_script('window.memmonTimeline.select(0, window.memmonTimeline.data.duration + 1)')
    sa = driver.execute_script('return window.memmonTimeline.selectionSummary()')
    tot_c = sum(s['calls'].values())
    check(sa['faults_total'] == nf and sa['calls_total'] == nc,
          f'selecting the whole trace counts report\'s faults ({sa["faults_total"]}/{nf}) '
          f'and calls ({sa["calls_total"]}/{nc}; page {tot_c})')
    check(sum(sa['latency']) == sa['faults_total'],
          'the fault-latency distribution of the selection counts its faults')

    # hover: the decoded call under the mouse
    hov = driver.execute_script('''
        var T = window.memmonTimeline, D = T.data, calls = D.detail.calls;
        var c = null;
        for (var i = 0; i < calls.length; i++)
            if (calls[i][4] === 0) { c = calls[i]; break; }
        if (!c) return null;
        T.select(null);
        T.setView(c[0] - 5e5, c[0] + 5e5);
        return {t: c[0], tgid: c[2], text: c[6], x: T.X(c[0])};''')
    if hov:
        y = driver.execute_script('return window.memmonTimeline.reveal(arguments[0])', hov['tgid'])
        r = rect(driver)
        ab = ActionBuilder(driver)
        ab.pointer_action.move_to_location(int(r['left'] + hov['x'] + 1), int(r['top'] + y))
        ab.perform()
        tip = driver.find_element(By.ID, 'tip')
        tiptext = tip.text if tip.is_displayed() else ''
        check('mmap(' in tiptext and '=' in tiptext,
              f'hovering an mmap mark shows the decoded call: {tiptext.splitlines()[0] if tiptext else None!r}',
              f'expected {hov["text"]!r} (y {y})')
    else:
        check(False, 'the trace has an mmap call in detail to hover')

    # the picture: the whole run, python3 expanded, a selection
    driver.execute_script('''
        var T = window.memmonTimeline, d = T.data.duration;
        document.getElementById("main").scrollTop = 0;
        T.setView(0, d);
        T.summary().processes.forEach(function (p) { if (p.threads > 1) T.expand(p.tgid, true); });
        T.select(d * 0.35, d * 0.55);
        document.getElementById("tip").hidden = true;''')
    driver.save_screenshot(shot)
    check(os.path.getsize(shot) > 10000, f'screenshot saved: {shot} ({os.path.getsize(shot)} bytes)')
    logs = driver.get_log('browser')
    errors = [l for l in logs if l.get('level') == 'SEVERE']
    check(not errors, 'still no console errors after zoom, selection and hover',
          '\n'.join(l.get('message', '') for l in errors))


# The Trace Event Format's rules, run in the browser on the parsed export
# (JSON.parse is the parser Perfetto UI and chrome://tracing use). Returns
# {error} when it does not parse, else counts and, per rule, the first
# offending events.
CHROME_JS = r'''
var text = arguments[0], out = {bad: {}, n: 0, x: 0, m: 0, c: 0, i: 0};
var doc;
try { doc = JSON.parse(text); } catch (e) { return {error: String(e)}; }
function bad(rule, ev) {
    var l = out.bad[rule] = out.bad[rule] || [];
    if (l.length < 3) l.push(JSON.stringify(ev).slice(0, 200));
}
if (!doc || !Array.isArray(doc.traceEvents)) return {error: 'no traceEvents array'};
out.unit = doc.displayTimeUnit === undefined ? null : doc.displayTimeUnit;
var isInt = Number.isInteger, pname = {}, tname = {}, used = {};
var stacks = {}, tsMin = Infinity, tsMax = -Infinity;
doc.traceEvents.forEach(function (e) {
    out.n++;
    if (typeof e !== 'object' || e === null) { bad('an event is an object', e); return; }
    if (typeof e.ph !== 'string' || e.ph.length !== 1) bad('ph is one character', e);
    if (typeof e.name !== 'string') bad('name is a string', e);
    if (!isInt(e.pid) || e.pid < 0 || !isInt(e.tid) || e.tid < 0)
        bad('pid and tid are non-negative integers', e);
    if (e.ph === 'M') {
        out.m++;
        if (e.name === 'process_name') pname[e.pid] = true;
        else if (e.name === 'thread_name') tname[e.pid + '/' + e.tid] = true;
        else bad('M events are process_name or thread_name', e);
        if (!e.args || typeof e.args.name !== 'string') bad('M events have args.name', e);
        return;
    }
    if (typeof e.ts !== 'number' || !isFinite(e.ts) || e.ts < 0)
        bad('ts is a finite number (us)', e);
    if (typeof e.cat !== 'string') bad('cat is a string', e);
    used[e.pid + '/' + e.tid] = e.pid;
    tsMin = Math.min(tsMin, e.ts);
    tsMax = Math.max(tsMax, e.ts + (e.dur || 0));
    if (e.ph === 'X') {
        out.x++;
        if (typeof e.dur !== 'number' || !(e.dur >= 0)) bad('X events have dur >= 0', e);
        (stacks[e.pid + '/' + e.tid] = stacks[e.pid + '/' + e.tid] || []).push(e);
    } else if (e.ph === 'C') {
        out.c++;
        var k = e.args ? Object.keys(e.args) : [];
        if (!k.length || k.some(function (n) { return typeof e.args[n] !== 'number'; }))
            bad('C events have args of numbers', e);
    } else if (e.ph === 'i' || e.ph === 'I') {
        out.i++;
        if (e.s !== undefined && ['g', 'p', 't'].indexOf(e.s) < 0) bad('i scope is g, p or t', e);
    } else {
        bad('ph is one of M X C i', e);
    }
});
Object.keys(used).forEach(function (pt) {
    if (!pname[used[pt]]) bad('an M process_name names every pid used', pt);
    if (!tname[pt]) bad('an M thread_name names every pid/tid used', pt);
});
// X events of one thread nest: each ends before the one it starts in ends
Object.keys(stacks).forEach(function (pt) {
    var l = stacks[pt].sort(function (a, b) { return a.ts - b.ts || b.dur - a.dur; }), open = [];
    l.forEach(function (e) {
        while (open.length && open[open.length - 1] <= e.ts + 1e-3) open.pop();
        if (open.length && e.ts + e.dur > open[open.length - 1] + 1e-3)
            bad('X events of a thread nest', e);
        open.push(e.ts + e.dur);
    });
});
out.tsMin = tsMin;
out.tsMax = tsMax;
return out;
'''

CHROME_RULES = ('ph is one character', 'name is a string', 'pid and tid are non-negative integers',
                'ts is a finite number (us)', 'cat is a string', 'X events have dur >= 0',
                'C events have args of numbers', 'i scope is g, p or t', 'ph is one of M X C i',
                'M events are process_name or thread_name', 'M events have args.name',
                'an M process_name names every pid used',
                'an M thread_name names every pid/tid used', 'X events of a thread nest')


def check_chrome(driver, path, report, span=None):
    """memmon export --format chrome of the same trace, in the same page.
    span: the first and last time_ns of the records the export shows (all
    but the COMM and AUXV records of a watch's start), else report's
    processes' lifetimes, which begin with those records."""
    with open(path) as f:
        text = f.read()
    r = driver.execute_script(CHROME_JS, text)
    if not check(r and 'error' not in r, f'{path} ({len(text)} bytes) parses in Chromium as '
                 'a Trace Event Format object with a traceEvents array', r and r.get('error')):
        return
    for rule in CHROME_RULES:
        check(rule not in r['bad'], f'chrome export: {rule}', '\n'.join(r['bad'].get(rule, [])))
    check(r['unit'] in (None, 'ms', 'ns'), f'chrome export: displayTimeUnit ({r["unit"]}) is ms or ns')
    nc = sum(v['count'] for p in report['processes'] for v in p['calls'].values())
    check(r['x'] == nc, f'chrome export: {r["x"]} X events == report\'s {nc} calls '
          f'({r["n"]} events: {r["m"]} M, {r["c"]} C, {r["i"]} i)')
    # ts is in microseconds: the events span the records' times (ns), not a
    # thousandth or a thousand times that
    if span:
        lo, hi = span['first_ns'] / 1e3, span['last_ns'] / 1e3
    else:
        lo = min(p['first_ns'] for p in report['processes']) / 1e3
        hi = max(p['last_ns'] for p in report['processes']) / 1e3
    check(r['n'] > r['m'] and abs(r['tsMin'] - lo) <= 0.01 * (hi - lo) + 1e3 and
          abs(r['tsMax'] - hi) <= 0.01 * (hi - lo) + 1e3,
          f'chrome export: ts in microseconds: {r["tsMin"]:.0f}..{r["tsMax"]:.0f} us, '
          f'records {lo:.0f}..{hi:.0f}')
    logs = driver.get_log('browser')
    errors = [l for l in logs if l.get('level') == 'SEVERE']
    check(not errors, 'no console errors after the chrome export',
          '\n'.join(l.get('message', '') for l in errors))


def check_exact(driver):
    """Each exact window holds every call of its time range in the detail."""
    r = driver.execute_script('''
        var D = window.memmonTimeline.data, bad = [];
        (D.detail.exact || []).forEach(function (w) {
            var n = D.detail.calls.filter(function (c) { return c[0] >= w[0] && c[0] <= w[1]; }).length;
            if (n !== w[2]) bad.push([w[0], w[1], w[2], n]);
        });
        return {n: (D.detail.exact || []).length, bad: bad};''')
    check(r['n'] > 0 and not r['bad'], f'each of the {r["n"]} exact windows has its calls in detail',
          r['bad'][:5])


def rect(driver):
    """The canvas's rectangle in the viewport (it scrolls with #main)."""
    return driver.execute_script('var r = document.getElementById("tl").getBoundingClientRect();'
                                 'return {left: r.left, top: r.top};')


def fmt(v):
    return f'{v / 1024:.0f} KiB'


def print_logs(driver):
    for l in driver.get_log('browser'):
        print(f'#   {l.get("level")}: {l.get("message")}')


if __name__ == '__main__':
    try:
        main()
    except Exception as e:  # a crash is a failure, never a silent pass
        check(False, f'the browser test ran to its end: {type(e).__name__}: {e}')
    print(f'timeline: {passed} passed, {failed} failed')
    sys.exit(1 if failed else 0)
