# tests/bench/report.awk - the benchmark table and build/bench.json from the
# lines tests/bench/run-vm and tests/bench/host print (build/bench/bench.log):
#
#   awk -v json=build/bench.json -f tests/bench/report.awk build/bench/bench.log
#
# Input lines (key=value, values with blanks in double quotes):
#   INFO ...                       environment
#   RESULT pass=P config=C workload=W ns_per_op= median_ns_per_op= ops_total=
#          events= lost= ...       one workload run (pass 0: throughput)
#   HOST bench=B ...               a host-side measurement
#   SKIPPED config=C reason="..."  a configuration that did not run
#   BUILDFAIL part=P reason="..."  VMFAIL rc=N
#
# Each run of a configuration C has an untraced partner run of the same
# workload just before it (config=untraced pair=C). Per pass: ratio = C's
# ns/op / its partner's; per-event cost = (C's ns/op - partner's) / (events
# C recorded per op). Over the passes: the median of each; ns/op shown is the
# best pass. events/op = all events recorded / all ops executed (every run,
# warm-up and calibration included); "seen" compares it with what a complete
# tracer records (a tool that does not see faults sees a fraction).
# Everything measured in the VM is in emulated (TCG) time: only ratios, and
# costs relative to one another, mean anything.

function parse(line,	s, kv, eq, k, v) {
	for (k in F)
		delete F[k]
	s = line
	while (match(s, /[A-Za-z_0-9]+=("[^"]*"|[^ ]*)/)) {
		kv = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		eq = index(kv, "=")
		k = substr(kv, 1, eq - 1)
		v = substr(kv, eq + 1)
		if (v ~ /^".*"$/)
			v = substr(v, 2, length(v) - 2)
		F[k] = v
	}
}

function jstr(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	gsub(/\t/, "\\t", s)
	return "\"" s "\""
}

# A JSON value: numbers as numbers, the rest as strings.
function jval(v) {
	if (v ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/)
		return v
	return jstr(v)
}

function jnum(v) {
	return v == "" ? "null" : sprintf("%.6g", v)
}

function add_json(obj) {
	njson++
	JSON[njson] = obj
}

# Median of A[1..n] (sorts A).
function median(A, n,	i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && A[j - 1] > A[j]; j--) {
			t = A[j]
			A[j] = A[j - 1]
			A[j - 1] = t
		}
	if (n == 0)
		return ""
	return n % 2 ? A[(n + 1) / 2] : (A[n / 2] + A[n / 2 + 1]) / 2
}

function fmt(v, f) {
	return v == "" ? "-" : sprintf(f, v)
}

BEGIN {
	# Configurations in table order, and what each one is.
	ncfg = split("untraced untraced2 loaded other memmon record strace perf bpftrace", CFG, " ")
	DESC["untraced"] = "module not loaded"
	DESC["loaded"] = "memmon.ko loaded, no session"
	DESC["other"] = "loaded, another process watched"
	DESC["memmon"] = "memmon watching, drained to nowhere"
	DESC["record"] = "memmon record to a tmpfs file"
	DESC["strace"] = "strace -f -e trace=%memory"
	DESC["perf"] = "perf trace --pf=all -m 16M -e <memory syscalls>"
	DESC["bpftrace"] = "bpftrace sys_enter/exit + page_fault_user"
	DESC["untraced2"] = "untraced again: A/A pair, the noise floor"
	nwl = 0
	nskip = 0
	ninfo = 0
}

$1 == "INFO" {
	parse($0)
	for (k in F) {
		if (!(k in INFO))
			INFOKEYS[++ninfo] = k
		INFO[k] = F[k]
	}
	next
}

$1 == "SKIPPED" || $1 == "BUILDFAIL" || $1 == "VMFAIL" {
	parse($0)
	what = $1 == "SKIPPED" ? F["config"] : $1 == "BUILDFAIL" ? "build " F["part"] : "vm"
	reason = $1 == "VMFAIL" ? "tests/vm/run exited " F["rc"] : F["reason"]
	if (!((what, reason) in SEEN)) {
		SEEN[what, reason] = 1
		nskip++
		SKIPW[nskip] = what
		SKIPR[nskip] = reason
	}
	next
}

$1 == "RESULT" {
	parse($0)
	w = F["workload"]
	c = F["config"]
	p = F["pass"]
	if (p == 0) {
		# Throughput: one run each.
		key = c SUBSEP w
		if (!(key in TP))
			TPK[++ntp] = key
		TP[key] = 1
		TPNS[key] = F["ns_per_op"]
		TPOPS[key] = F["ops_total"]
		TPSEC[key] = F["seconds"]
		TPEV[key] = F["events"]
		TPLOST[key] = F["lost"]
		TPPROD[key] = F["produced"]
		TPBYTES[key] = F["bytes"] != "" ? F["bytes"] : F["trace_bytes"]
		next
	}
	if (!(w in WLSEEN)) {
		WLSEEN[w] = 1
		WL[++nwl] = w
	}
	EPO_EXPECT[w] = F["events_per_op"]
	ns = F["ns_per_op"] + 0
	if (c == "untraced") {
		U[p, F["pair"], w] = ns
		key = c SUBSEP w
		if (!(key in BEST) || ns < BEST[key]) {
			BEST[key] = ns
			MED[key] = F["median_ns_per_op"] + 0
		}
		NPASS[key]++
		next
	}
	key = c SUBSEP w
	if (!(key in BEST) || ns < BEST[key]) {
		BEST[key] = ns
		MED[key] = F["median_ns_per_op"] + 0
	}
	X[p, c, w] = ns
	XEPO[p, c, w] = F["ops_total"] > 0 ? F["events"] / F["ops_total"] : 0
	NP = ++NPASS[key]
	PASSOF[key, NP] = p
	EV[key] += F["events"]
	OPS[key] += F["ops_total"]
	if (F["lost_whole_pass"] != "")
		BTLOST[p] = F["lost"]
	else
		LOST[key] += F["lost"]
	next
}

$1 == "HOST" {
	parse($0)
	nhost++
	obj = "{\"kind\":\"host\""
	for (k in F) {
		obj = obj "," jstr(k) ":" jval(F[k])
	}
	HOSTLINE[nhost] = $0
	add_json(obj "}")
	next
}

END {
	btl = 0
	for (p in BTLOST)
		btl += BTLOST[p]
	print "memmon benchmarks (" INFO["date"] ", commit " INFO["commit"] ")"
	print "VM: Debian kernel " INFO["kernel"] ", " INFO["cpus"] " vCPUs, qemu TCG; host " INFO["host_cpu"] " (" INFO["host_cpus"] " CPUs)"
	print "TCG is an emulator: ns below are EMULATED time. Only the ratios to the untraced run of"
	print "the same boot, and costs compared with one another, mean anything; they are not hardware figures."
	print ""
	printf "%-6s %-10s %11s %11s %7s %8s %6s %6s %10s %9s\n", "wl", "config", "ns/op", "untr ns/op", "ratio", "ev/op", "seen", "lost", "ns/event", "/bpftrace"
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		for (j = 1; j <= ncfg; j++) {
			c = CFG[j]
			key = c SUBSEP w
			if (!(key in BEST))
				continue
			if (c == "untraced") {
				RATIO[key] = 1
				REFB[key] = BEST[key]
				continue
			}
			nr = 0
			ne = 0
			refb = ""
			for (k = 1; k <= NPASS[key]; k++) {
				p = PASSOF[key, k]
				if (!((p, c, w) in U))
					continue
				u = U[p, c, w]
				if (refb == "" || u < refb)
					refb = u
				R[++nr] = X[p, c, w] / u
				if (XEPO[p, c, w] > 0)
					PE[++ne] = (X[p, c, w] - u) / XEPO[p, c, w]
			}
			REFB[key] = refb
			RATIO[key] = median(R, nr)
			PEV[key] = median(PE, ne)
			EPO[key] = OPS[key] > 0 && EV[key] > 0 ? EV[key] / OPS[key] : ""
			SEEN_[key] = EPO[key] != "" && EPO_EXPECT[w] > 0 ? EPO[key] / EPO_EXPECT[w] : ""
			LOSTV[key] = c == "bpftrace" ? btl : LOST[key]
		}
		for (j = 1; j <= ncfg; j++) {
			c = CFG[j]
			key = c SUBSEP w
			if (!(key in BEST))
				continue
			bkey = "bpftrace" SUBSEP w
			vsb = PEV[key] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? PEV[key] / PEV[bkey] : ""
			VSB[key] = vsb
			silent = c == "untraced" || c == "untraced2" || c == "loaded" || c == "other"
			printf "%-6s %-10s %11.0f %11s %7s %8s %6s %6s %10s %9s\n", w, c, BEST[key],
				fmt(REFB[key], "%.0f"), fmt(RATIO[key], "%.3f"),
				silent ? "-" : fmt(EPO[key], "%.3f"),
				silent ? "-" : fmt(SEEN_[key] * 100, "%.0f%%"),
				silent ? "-" : LOSTV[key] (c == "bpftrace" ? "*" : ""),
				silent ? "-" : fmt(PEV[key], "%.0f"), silent ? "-" : fmt(vsb, "%.3f")
			add_json("{\"kind\":\"workload\",\"workload\":" jstr(w) ",\"configuration\":" jstr(c) \
				",\"description\":" jstr(DESC[c]) \
				",\"ns_per_op\":" jnum(BEST[key]) ",\"median_ns_per_op\":" jnum(MED[key]) \
				",\"untraced_ns_per_op\":" jnum(REFB[key]) \
				",\"ratio_to_untraced\":" jnum(RATIO[key]) ",\"events\":" jnum(EV[key]) \
				",\"ops_total\":" jnum(OPS[key]) ",\"events_per_op\":" jnum(EPO[key]) \
				",\"events_per_op_expected\":" jnum(EPO_EXPECT[w]) \
				",\"lost\":" jnum(LOSTV[key]) ",\"per_event_ns\":" jnum(PEV[key]) \
				",\"per_event_vs_bpftrace\":" jnum(vsb) ",\"passes\":" NPASS[key] \
				",\"time_base\":\"TCG-emulated\"}")
		}
		print ""
	}
	for (j = 1; j <= ncfg; j++)
		printf "  %-10s %s\n", CFG[j], DESC[CFG[j]]
	print "ns/op: best of " INFO["passes"] " passes, each the best of wl " INFO["wlargs"] "; untr ns/op: its untraced"
	print "partner runs (module not loaded, run just before); ratio and ns/event: medians over the passes of"
	print "the pairs; ns/event = (ns/op - untraced) / ev/op; ev/op: events the tool recorded per op; seen: ev/op"
	print "against a complete record of the syscalls and faults; /bpftrace: ns/event over bpftrace's, same workload."
	if ("bpftrace" SUBSEP WL[1] in BEST)
		print "* bpftrace losses are counted per pass over all its workloads."
	print ""

	if (ntp) {
		print "Throughput (" INFO["cpus"] " vCPUs, storms of " INFO["storm_seconds"] " s; TCG time)"
		printf "%-6s %-10s %14s %12s %12s %10s %12s\n", "storm", "config", "ops/s", "slowdown", "events", "lost", "events/s"
		for (i = 1; i <= ntp; i++) {
			split(TPK[i], kk, SUBSEP)
			c = kk[1]
			w = kk[2]
			key = TPK[i]
			ops_s = TPSEC[key] > 0 ? TPOPS[key] / TPSEC[key] : ""
			ukey = "untraced" SUBSEP w
			slow = (ukey in TP) && TPNS[ukey] > 0 ? TPNS[key] / TPNS[ukey] : ""
			evs = TPSEC[key] > 0 && TPEV[key] != "" ? TPEV[key] / TPSEC[key] : ""
			printf "%-6s %-10s %14.0f %12s %12s %10s %12s\n", w, c, ops_s, fmt(slow, "%.3f"),
				TPEV[key] == "" ? "-" : TPEV[key], TPLOST[key] == "" ? "-" : TPLOST[key], fmt(evs, "%.0f")
			add_json("{\"kind\":\"throughput\",\"workload\":" jstr(w) ",\"configuration\":" jstr(c) \
				",\"ops\":" jnum(TPOPS[key]) ",\"seconds\":" jnum(TPSEC[key]) \
				",\"ops_per_s\":" jnum(ops_s) ",\"ns_per_op\":" jnum(TPNS[key]) \
				",\"ratio_to_untraced\":" jnum(slow) ",\"events\":" jnum(TPEV[key]) \
				",\"lost\":" jnum(TPLOST[key]) ",\"produced\":" jnum(TPPROD[key]) \
				",\"events_per_s\":" jnum(evs) ",\"bytes\":" jnum(TPBYTES[key]) \
				",\"time_base\":\"TCG-emulated\"}")
			if (c == "memmon" && w == "storm")
				STORM_LOST = TPLOST[key]
		}
		print ""
	}

	if (nhost) {
		print "Host (real hardware time, no VM)"
		for (i = 1; i <= nhost; i++) {
			l = HOSTLINE[i]
			sub(/^HOST /, "", l)
			print "  " l
		}
		print ""
	}

	# Targets: reported, never enforced.
	print "Targets (reported, not enforced)"
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "memmon" SUBSEP w
		if (VSB[key] != "")
			printf "  per-event cost <= 1/3 of bpftrace, %-6s: %.3f of bpftrace  %s\n", w, VSB[key],
				VSB[key] <= 1 / 3 ? "met" : sprintf("MISSED by %.1fx", VSB[key] * 3)
	}
	key = "memmon" SUBSEP "fault"
	if (RATIO[key] != "")
		printf "  traced fault loop <= 5%% slower: %+.1f%%  %s\n", (RATIO[key] - 1) * 100,
			RATIO[key] <= 1.05 ? "met" : sprintf("MISSED by %.1f points", (RATIO[key] - 1.05) * 100)
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "other" SUBSEP w
		if (RATIO[key] != "")
			printf "  unwatched process <= 1%% slower, %-6s: %+.1f%%  %s\n", w, (RATIO[key] - 1) * 100,
				RATIO[key] <= 1.01 ? "met" : sprintf("MISSED by %.1f points (untraced2 noise: %+.1f%%)",
					(RATIO[key] - 1.01) * 100, ("untraced2" SUBSEP w in RATIO) ? (RATIO["untraced2" SUBSEP w] - 1) * 100 : 0)
	}
	if (STORM_LOST != "")
		printf "  zero lost in the fastest fault storm: lost %s  %s\n", STORM_LOST, STORM_LOST == 0 ? "met" : "MISSED"
	print ""

	if (nskip) {
		print "SKIPPED (not measured; never reported as results)"
		for (i = 1; i <= nskip; i++)
			printf "  %-12s %s\n", SKIPW[i], SKIPR[i]
		print ""
	}

	if (json != "") {
		printf "{\n  \"environment\": {" > json
		for (i = 1; i <= ninfo; i++)
			printf "%s\n    %s: %s", (i > 1 ? "," : ""), jstr(INFOKEYS[i]), jval(INFO[INFOKEYS[i]]) > json
		printf "\n  },\n  \"note\": \"VM figures are TCG-emulated time: compare ratios, not absolute ns\",\n" > json
		printf "  \"measurements\": [" > json
		for (i = 1; i <= njson; i++)
			printf "%s\n    %s", (i > 1 ? "," : ""), JSON[i] > json
		printf "\n  ],\n  \"skipped\": [" > json
		for (i = 1; i <= nskip; i++)
			printf "%s\n    {\"what\": %s, \"reason\": %s}", (i > 1 ? "," : ""), jstr(SKIPW[i]), jstr(SKIPR[i]) > json
		printf "\n  ]\n}\n" > json
		close(json)
		print "wrote " json
	}
}
