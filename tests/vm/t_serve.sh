#!/usr/bin/env bash
# memmon serve and memmon remote on loopback: the token (401), names that
# try to leave the directory (400), bodies (413, malformed JSON), a round
# trip start/list/stop/fetch whose file equals the server's, a resumed
# fetch and a corrupted one, Range (206/416) and the digest, report and
# timeline, /metrics through promtool, stalled clients, 20 concurrent
# clients beside 4 recordings (a 5th: 429), SIGTERM (complete files),
# kill -9 of the server and of a recording, a restart that finds the old
# recordings, the quota (507), TLS and remote's errors. Runs in the VM from
# the repository root with a fresh memmon.ko loaded.
set -u
M=$PWD/build/bin/memmon
tmp=$(mktemp -d)
D=$tmp/rec
PORT=7420
TPORT=7443
SP=
PY=/usr/bin/python3
. "$(dirname "$0")/tap.sh"

cleanup() {
	[ -n "$SP" ] && kill -9 "$SP" 2>/dev/null
	# the recordings (PR_SET_PDEATHSIG sent them SIGTERM): gone before rmmod
	touch "$tmp"/stop-{1..9}
	for _ in $(seq 300); do
		pgrep -f "$M record" >/dev/null || break
		sleep 0.1
	done
	pkill -9 -f "$M record" 2>/dev/null
	sleep 0.2
	rm -rf "$tmp"
}
trap cleanup EXIT

ip link set lo up
U=http://127.0.0.1:$PORT

up() { # up [OPTIONS]: start the server, wait for /healthz (~60 s at most)
	"$M" serve --dir "$D" --port $PORT --idle-timeout 4 "$@" 2>>"$tmp/serve.log" &
	SP=$!
	for _ in $(seq 600); do
		[ "$(curl -s "$U/healthz")" = ok ] && return 0
		kill -0 $SP 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
down() { # down SIGNAL: stop the server, wait for it; its status
	kill "-$1" $SP
	wait $SP
	local rc=$?
	SP=
	return $rc
}
# st ARGS...: curl with the token, the body in $tmp/body; prints the status
st() { curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $TOK" "$@"; }
is() { # is GOT WANT
	[ "$1" = "$2" ] && return 0
	echo "# got $1, want $2; body: $(head -c 300 "$tmp/body" 2>/dev/null)"
	return 1
}
has() { grep -q -- "$2" "$1"; }
RO=()	# remote's options before HOST
R() { MEMMON_TOKEN=$TOK "$M" remote "${RO[@]}" "127.0.0.1:$PORT" "$@"; }
code() { # code WANT CMD...: CMD exits with WANT; its stdout/err in $tmp/out, err
	local want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq "$want" ] && return 0
	echo "# exit $rc, want $want: $(head -c 300 "$tmp/err")"
	return 1
}
field() { # field NAME KEY: from GET /recordings
	curl -s -H "Authorization: Bearer $TOK" "$U/recordings" |
		$PY -c 'import json,sys
for r in json.load(sys.stdin):
    if r["name"] == sys.argv[1]: print(r.get(sys.argv[2], ""))' "$1" "$2"
}
until_field() { # until_field NAME KEY VALUE|'>0': poll (1 min at most)
	local v end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		v=$(field "$1" "$2")
		case $3 in
		'>0') [ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null && return 0 ;;
		*) [ "$v" = "$3" ] && return 0 ;;
		esac
		sleep 0.2
	done
	echo "# $1: $2 is '$v', want $3"
	return 1
}
# A command that runs (and forks: events) until $tmp/stop-N exists.
waitcmd() { echo "while [ ! -e $tmp/stop-$1 ]; do sleep 0.5; done"; }

t "the server starts" up
if [ -z "$SP" ] || ! kill -0 "$SP"; then
	sed 's/^/# /' "$tmp/serve.log"
	exit 1
fi
TOK=$(cat "$D/token" 2>/dev/null)
t "the token file is created 0600" test "$(stat -c %a "$D/token")" = 600
t "/healthz needs no token" is "$(curl -s -o /dev/null -w '%{http_code}' "$U/healthz")" 200
t "no token: 401" is "$(curl -s -o "$tmp/body" -w '%{http_code}' "$U/recordings")" 401
t "401 says nothing" test ! -s "$tmp/body"
t "wrong token: 401" is "$(curl -s -o "$tmp/body" -w '%{http_code}' \
	-H "Authorization: Bearer ${TOK}x" "$U/recordings")" 401
t "a token is not taken from the query" is "$(curl -s -o /dev/null -w '%{http_code}' \
	"$U/recordings?token=$TOK")" 401
t "remote: 401 explained" code 1 env MEMMON_TOKEN=nope "$M" remote 127.0.0.1:$PORT list
t "remote: 401 message" has "$tmp/err" 'refused the token (401)'
t "../ in a name: 400" is "$(st --path-as-is "$U/recordings/../token/file")" 400
t "..%2F in a name: 400" is "$(st --path-as-is "$U/recordings/..%2Ftoken/file")" 400
t "%2F in a name: 400" is "$(st --path-as-is "$U/recordings/a%2F..%2F..%2Fetc/file")" 400
t "a bad name to start: 400" is "$(st -d '{"name":"../x","cmd":["true"]}' "$U/recordings")" 400
t "malformed JSON: 400" is "$(st -d '{"cmd":["true"' "$U/recordings")" 400
t "malformed JSON: said so" has "$tmp/body" 'malformed JSON'
head -c 200000 /dev/zero | tr '\0' ' ' >"$tmp/big"
t "oversized body: 413" is "$(st --data-binary @"$tmp/big" "$U/recordings")" 413
t "oversized chunked body: 413" is "$(st -H 'Transfer-Encoding: chunked' \
	--data-binary @"$tmp/big" "$U/recordings")" 413
t "a cgroup outside /sys/fs/cgroup: 400" is "$(st -d '{"cgroup":"/etc"}' "$U/recordings")" 400
t "a cgroup climbing out: 400" is "$(st -d '{"cgroup":"a/../../../etc"}' "$U/recordings")" 400
t "the server still answers" is "$(st "$U/recordings")" 200

# a cgroup target: its member's marks are recorded
grep -q '^cgroup2 /sys/fs/cgroup ' /proc/mounts ||
	mount -t cgroup2 none /sys/fs/cgroup
CGN=memmon-t-serve-$$
mkdir -p "/sys/fs/cgroup/$CGN"
sh -c 'echo $$ >"$1/cgroup.procs" && while [ ! -e "$2" ]; do "$3" mark member; sleep 0.2; done' \
	member "/sys/fs/cgroup/$CGN" "$tmp/stop-8" "$M" &
cgm=$!
t "remote start -G" code 0 R start --name cg -m 64K -G "$CGN"
t "cg: events recorded" until_field cg events '>0'
t "remote stop cg" code 0 R stop cg
touch "$tmp/stop-8"
wait $cgm
t "cg: the member's marks are in the file" sh -c "'$M' script '$D/cg.memmon' | grep -q 'mark \"member\"'"
rmdir "/sys/fs/cgroup/$CGN"
t "remote delete cg" code 0 R delete cg

# round trip
t "remote start" code 0 R start --name r1 -- sh -c "$(waitcmd 1)"
t "remote start prints the name" has "$tmp/out" '^r1$'
t "list: r1 running" until_field r1 state running
t "list: r1's events grow" until_field r1 events '>0'
curl -s -H "Authorization: Bearer $TOK" "$U/recordings" >"$tmp/list"
t "list: lost per CPU" has "$tmp/list" lost_per_cpu
t "remote list" code 0 R list
t "remote list shows r1" has "$tmp/out" '^r1  *running'
curl -s -H "Authorization: Bearer $TOK" "$U/metrics" >"$tmp/metrics"
t "/metrics of a live recording passes promtool" promtool check metrics <"$tmp/metrics"
t "/metrics has the recorded shell's faults" \
	has "$tmp/metrics" '^memmon_faults_total{pid="[0-9]*",comm="[a-z]*",class='
t "/metrics has per-CPU delivered" has "$tmp/metrics" '^memmon_cpu_events_delivered_total{recording="r1",cpu="0"}'
t "/metrics counts the session" has "$tmp/metrics" '^memmon_sessions 1$'
t "fetching a running recording: 409" is "$(st "$U/recordings/r1/file")" 409
t "remote stop" code 0 R stop r1
t "stopped: finished" is "$(field r1 state)" finished
t "remote fetch" code 0 R fetch r1 -o "$tmp/r1.memmon"
t "fetch verified the digest" has "$tmp/err" 'digest verified'
t "the fetched file equals the server's" cmp "$D/r1.memmon" "$tmp/r1.memmon"
t "memmon report reads the fetched file" code 0 "$M" report "$tmp/r1.memmon"
t "the fetched file is complete" test ! -s "$tmp/err"
size=$(stat -c %s "$D/r1.memmon")
truncate -s $((size / 2)) "$tmp/r1.memmon"
t "an interrupted fetch resumes" code 0 R fetch r1 -o "$tmp/r1.memmon"
t "resumed: said so" has "$tmp/err" '(resumed)'
t "the resumed file equals the server's" cmp "$D/r1.memmon" "$tmp/r1.memmon"
t "a complete file fetched again: verified" code 0 R fetch r1 -o "$tmp/r1.memmon"
printf 'X' | dd of="$tmp/r1.memmon" bs=1 seek=100 conv=notrunc status=none
truncate -s $((size - 10)) "$tmp/r1.memmon"
t "a damaged partial file: digest mismatch" code 1 R fetch r1 -o "$tmp/r1.memmon"
t "digest mismatch: said so" has "$tmp/err" 'digest mismatch'
t "Range: 206" is "$(st -r 0-99 "$U/recordings/r1/file")" 206
t "Range: 100 bytes" test "$(stat -c %s "$tmp/body")" = 100
head -c 100 "$D/r1.memmon" >"$tmp/head100"
t "Range: the right bytes" cmp "$tmp/body" "$tmp/head100"
t "Range past the end: 416" is "$(st -r "$size-" "$U/recordings/r1/file")" 416
want="sha-256=:$(openssl dgst -sha256 -binary "$D/r1.memmon" | base64 -w0):"
curl -s -D "$tmp/hdr" -o /dev/null -H "Authorization: Bearer $TOK" "$U/recordings/r1/file"
t "Repr-Digest is the file's SHA-256" has "$tmp/hdr" "^Repr-Digest: $want"
t "GET .../report: 200" is "$(st "$U/recordings/r1/report")" 200
t "the report is memmon report --json" has "$tmp/body" '"processes"'
t "remote timeline" code 0 R timeline r1 -o "$tmp/r1.html"
t "the timeline is a page" has "$tmp/r1.html" '<html'
t "GET .../files lists part 0" is "$(st "$U/recordings/r1/files")" 200
t "remote fetch of no such recording: 404" code 1 R fetch nope -o "$tmp/nope"
t "404 explained" has "$tmp/err" 'not found (404)'

# stalled clients: an upload that stops half way, a download read slowly
$PY - "$PORT" "$TOK" >"$tmp/stall" 2>&1 <<'PYEOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(("POST /recordings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
           "Content-Length: 1000\r\n\r\n{\"cmd\":" % sys.argv[2]).encode())
s.settimeout(120)
t0 = time.time()
try:
    d = s.recv(100)
except Exception as e:
    d = repr(e).encode()
print("closed" if d == b"" else "got %r" % d)
PYEOF
stall=$!
curl -s --limit-rate 2k -o /dev/null -H "Authorization: Bearer $TOK" "$U/recordings/r1/file" &
slow=$!
t "beside stalled clients: list" is "$(st "$U/recordings")" 200
t "beside stalled clients: a fetch" code 0 R fetch r1 -o "$tmp/r1b.memmon"
t "beside stalled clients: the file" cmp "$D/r1.memmon" "$tmp/r1b.memmon"
wait $stall
t "the stalled upload is closed by the idle time-out" has "$tmp/stall" closed
kill $slow 2>/dev/null
wait $slow 2>/dev/null

# a recording that cannot start its session: failed, the reason listed
t "start big (rings past the user's locked-memory limit)" is "$(st -d '{"name":"big","ring_size":"128M","cmd":["true"]}' \
	"$U/recordings")" 201
t "big: failed" until_field big state failed
field big error >"$tmp/big.error"
t "big: the reason is listed" has "$tmp/big.error" RLIMIT_MEMLOCK
t "remote list shows why big failed" code 0 R list
t "remote list: big's reason" has "$tmp/out" '^ *error: .*RLIMIT_MEMLOCK'
t "delete big" code 0 R delete big

# 4 recordings at most; finished ones do not count. Small rings: four
# sessions' default rings would pass the per-user limit of locked memory
# (RLIMIT_MEMLOCK), which the server, its capabilities dropped, is held to.
t "start q1 (exits at once)" is "$(st -d '{"name":"q1","cmd":["true"]}' "$U/recordings")" 201
t "q1 finishes" until_field q1 state finished
for i in 2 3 4 5; do
	t "start r$i" is "$(st -d "{\"name\":\"r$i\",\"ring_size\":\"64K\",\"cmd\":[\"sh\",\"-c\",\"$(waitcmd $i)\"]}" \
		"$U/recordings")" 201
done
t "a 5th running recording: 429" is "$(st -d '{"name":"r6","cmd":["true"]}' "$U/recordings")" 429 ||
	curl -s -H "Authorization: Bearer $TOK" "$U/recordings" | sed 's/^/# /'

for i in $(seq 20); do
	case $((i % 4)) in
	0) curl -s -o "$tmp/c$i" -w '%{http_code}\n' -H "Authorization: Bearer $TOK" "$U/recordings" ;;
	1) curl -s -o "$tmp/c$i" -w '%{http_code}\n' -H "Authorization: Bearer $TOK" "$U/metrics" ;;
	2) curl -s -o "$tmp/c$i" -w '%{http_code}\n' -H "Authorization: Bearer $TOK" "$U/recordings/r1/file" ;;
	3) curl -s -o "$tmp/c$i" -w '%{http_code}\n' -H "Authorization: Bearer $TOK" \
		-d '{"name":"x'$i'","cmd":["true"]}' "$U/recordings" ;;
	esac >"$tmp/code$i" &
done
wait $(jobs -p | grep -v "^$SP\$")
ok20() {
	local i c bad=0
	for i in $(seq 20); do
		c=$(cat "$tmp/code$i")
		case $((i % 4)) in
		3) [ "$c" = 429 ] || { echo "# client $i: $c"; bad=1; } ;;
		*) [ "$c" = 200 ] || { echo "# client $i: $c"; bad=1; } ;;
		esac
	done
	return $bad
}
t "20 concurrent clients: each answered (starts: 429)" ok20
t "still 4 running" is "$(curl -s -H "Authorization: Bearer $TOK" "$U/recordings" | grep -c '"running"')" 4
curl -s -H "Authorization: Bearer $TOK" "$U/metrics" >"$tmp/metrics"
t "/metrics of 4 recordings passes promtool" promtool check metrics <"$tmp/metrics"
t "/metrics counts 4 sessions" has "$tmp/metrics" '^memmon_sessions 4$'
until_field r5 events '>0' >/dev/null

# SIGTERM: every recording finishes its file
t "SIGTERM: the server exits 0" down TERM
for i in 2 3 4 5; do
	t "SIGTERM: r$i's file is complete" code 0 "$M" report "$D/r$i.memmon"
	t "SIGTERM: r$i not truncated" test ! -s "$tmp/err"
done
norec() { ! pgrep -f "$M record -o $D/"; }
t "no recording outlives the server" norec

# restart: the old recordings are listed
t "the server restarts" up
t "after a restart r1 is listed" is "$(field r1 state)" found
t "after a restart r5 is listed" is "$(field r5 state)" found
t "after a restart r1 can be fetched" code 0 R fetch r1 -o "$tmp/r1c.memmon"
# the server keeps finished files' digests: one that changes gets a new one
printf 'x' >>"$D/r1.memmon"
want="sha-256=:$(openssl dgst -sha256 -binary "$D/r1.memmon" | base64 -w0):"
curl -s -D "$tmp/hdr2" -o /dev/null -r 0-0 -H "Authorization: Bearer $TOK" "$U/recordings/r1/file"
t "a file changed after its fetch: its new digest" has "$tmp/hdr2" "^Repr-Digest: $want"
t "remote delete" code 0 R delete q1
t "deleted: gone" is "$(st "$U/recordings/q1/file")" 404
t "deleted: its file too" test ! -e "$D/q1.memmon"

# kill -9 of a recording: a torn file that report reads up to the damage
t "start k1" is "$(st -d "{\"name\":\"k1\",\"cmd\":[\"sh\",\"-c\",\"$(waitcmd 6)\"]}" "$U/recordings")" 201
t "k1 records" until_field k1 events '>0'
kill -9 "$(field k1 pid)"
t "k1 killed: failed" until_field k1 state failed
t "memmon report reads the torn k1" code 0 "$M" report "$D/k1.memmon"
t "report says where k1 was torn" has "$tmp/err" 'truncated at offset'
# kill -9 of the server: its recording gets SIGTERM and completes the file
t "start k2" is "$(st -d "{\"name\":\"k2\",\"cmd\":[\"sh\",\"-c\",\"$(waitcmd 7)\"]}" "$U/recordings")" 201
t "k2 records" until_field k2 events '>0'
down KILL
gone() {
	for _ in $(seq 600); do
		pgrep -f "$M record -o $D/k2" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}
t "kill -9 of the server: its recording ends" gone
t "memmon report reads k2 after kill -9 of the server" code 0 "$M" report "$D/k2.memmon"

# quota
t "the server restarts with a quota" up --quota 4K
t "over the quota: 507" is "$(st -d '{"cmd":["true"]}' "$U/recordings")" 507
t "507 says why" has "$tmp/body" 'quota'
t "remote: 507 explained" code 1 R start -- true
t "remote: 507 message" has "$tmp/err" 'out of disk quota (507)'
down TERM
t "remote: connection refused explained" code 1 R list
t "refused: said so" has "$tmp/err" 'cannot connect'

# TLS with a self-signed certificate
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 2>/dev/null
PORT=$TPORT
U=https://127.0.0.1:$PORT
upt() {
	"$M" serve --dir "$D" --port $PORT --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem" \
		2>>"$tmp/serve.log" &
	SP=$!
	for _ in $(seq 600); do
		[ "$(curl -s --cacert "$tmp/cert.pem" "$U/healthz")" = ok ] && return 0
		kill -0 $SP 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
t "the server starts with TLS" upt
RO=(--cacert "$tmp/cert.pem")
t "remote over TLS with --cacert" code 0 R list
t "TLS: lists r1" has "$tmp/out" '^r1 '
t "TLS: fetch" code 0 R fetch r1 -o "$tmp/r1t.memmon"
t "TLS: the file equals the server's" cmp "$D/r1.memmon" "$tmp/r1t.memmon"
RO=(--tls)
t "TLS without the certificate: refused" code 1 R list
t "TLS failure explained" has "$tmp/err" 'TLS failure'
RO=()
t "plain HTTP to the TLS port: an error" code 1 R list
down TERM
echo "# serve log:"
sed 's/^/# /' "$tmp/serve.log" | tail -20
exit $failed
