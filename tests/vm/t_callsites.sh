#!/usr/bin/env bash
# Call sites (ABI 1.5 user stacks) through the commands: trace -g prints
# w_leak2's leaking functions under its mmap records (text and JSON),
# --no-symbols raw addresses; record keeps build-ids and script resolves
# the same names from the file; a copy of the program changed after the
# recording gives [build-id mismatch: PATH] frames, never names. Runs in
# the VM from the repository root with memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
W=$PWD/build/vmtests/w_leak2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"
PY=/usr/bin/python3
LIBC=$(realpath "$(ldd "$W" | awk '/libc\.so/ { print $3 }')")

t "w_leak2 is there, libc found" test -x "$W" -a -r "$LIBC"

# trace -g: the two call sites under the anonymous mmaps
t "trace -g exits 0" sh -c "'$M' trace -g -- '$W' leak '$LIBC' >'$tmp/g.txt' 2>'$tmp/err'"
t "... leak_small is named under an mmap" grep -Eq '^	 +[0-9a-f]+ leak_small\+0x[0-9a-f]+ \(.*/w_leak2\)' "$tmp/g.txt"
t "... leak_big too" grep -Eq '^	 +[0-9a-f]+ leak_big\+0x[0-9a-f]+ \(.*/w_leak2\)' "$tmp/g.txt"
t "... and do_leak above them (frame pointers)" grep -Eq '^	 +[0-9a-f]+ do_leak\+0x[0-9a-f]+ ' "$tmp/g.txt"
t "... the first frame is in libc" sh -c "grep -A1 'mmap(' '$tmp/g.txt' | grep -Eq '^	 +[0-9a-f]+ .*\(.*libc\.so'"

json_py='import json, sys
sites = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    for f in r.get("stack", []):
        for k in ("ip",):
            assert isinstance(f[k], int), f
        if f.get("sym") in ("leak_small", "leak_big"):
            sites.add(f["sym"])
assert sites == {"leak_small", "leak_big"}, sites'
t "trace -g --json: stack arrays with both sites" sh -c "
	'$M' trace -g --json -- '$W' leak '$LIBC' >'$tmp/g.json' 2>'$tmp/err' &&
	$PY -c '$json_py' '$tmp/g.json'"
t "trace --no-symbols: addresses only" sh -c "
	'$M' trace --no-symbols -- '$W' leak '$LIBC' >'$tmp/raw.txt' 2>'$tmp/err' &&
	grep -Eq '^	 +[0-9a-f]+$' '$tmp/raw.txt' && ! grep -q leak_small '$tmp/raw.txt'"
t "trace --call-graph=fp,4 is accepted" sh -c "'$M' trace --call-graph=fp,4 -- '$W' leak '$LIBC' >/dev/null 2>'$tmp/err'"
t "trace --call-graph=99 is a usage error" sh -c "'$M' trace --call-graph=99 -- true 2>'$tmp/err'; [ \$? -eq 2 ]"

# record: build-ids in the metadata; script resolves; a changed copy does not
cp "$W" "$tmp/w"
t "record -g of a copy of w_leak2" sh -c "'$M' record -g -o '$tmp/r.trace' -- '$tmp/w' leak '$LIBC' 2>'$tmp/err'"
t "script names its call sites" sh -c "'$M' script '$tmp/r.trace' >'$tmp/s.txt' && grep -q ' leak_small+0x' '$tmp/s.txt'"
flip_py='import sys, subprocess
p = sys.argv[1]
out = subprocess.run(["readelf", "-n", p], capture_output=True, text=True).stdout
bid = bytes.fromhex(out.split("Build ID: ")[1].split()[0])
b = bytearray(open(p, "rb").read())
at = b.find(bid)
assert at > 0 and b.find(bid, at + 1) < 0
b[at] ^= 0xff
open(p, "wb").write(b)'
t "the copy changes: its build-id flipped" $PY -c "$flip_py" "$tmp/w"
t "script: [build-id mismatch: PATH], no names from it" sh -c "
	'$M' script '$tmp/r.trace' >'$tmp/m.txt' &&
	grep -q '\[build-id mismatch: $tmp/w\]' '$tmp/m.txt' && ! grep -q ' leak_small+0x' '$tmp/m.txt'"
rm -f "$tmp/w"
t "script: [not found: PATH] once it is gone" sh -c "
	'$M' script '$tmp/r.trace' >'$tmp/n.txt' && grep -q '\[not found: $tmp/w\]' '$tmp/n.txt'"

[ "$failed" = 0 ] || cat "$tmp/err" >&2
exit $failed
