# tests/bench/report.awk - the benchmark table and build/bench.json from the
# lines tests/bench/run-vm and tests/bench/host print (build/bench/bench.log):
#
#   awk -v json=build/bench.json -f tests/bench/report.awk build/bench/bench.log
#
# Input lines (key=value, values with blanks in double quotes):
#   INFO [vm=V kernel=K] ...       environment (per VM kind and kernel when
#                                  vm= is set)
#   RESULT vm=V kernel=K pass=P config=C workload=W ns_per_op=
#          median_ns_per_op= ops_total= events= lost= [pair=C2] ...
#                                  one workload run (pass 0: throughput)
#   WHOLE vm=V kernel=K config=C workload=W iters=N ns=T ops= events= lost=
#   HOST bench=B ...               a host-side measurement
#   SERVE vm=serve kernel=K phase=P ...   memmon serve in the VM
#                                  (tests/bench/serve --vm)
#   PROFILE vm=V kernel=K config=C workload=W share=PCT comm=COMM sym="SYM"
#   SKIPPED [vm=V kernel=K] config=C reason="..."   a configuration that did
#                                  not run
#   BUILDFAIL part=P reason="..."  VMFAIL vm=V kernel=K rc=N
#
# K names the test kernel (6.1, 6.12, rt); logs of one kernel, before
# kernel= existed, have none. Every VM figure is per kernel: the same
# workload on two kernels is two rows, side by side in the tables.
#
# Each run of a configuration C has an untraced partner run of the same
# workload just before it (config=untraced pair=C). Per pass: ratio = C's
# ns/op / its partner's; per-event cost = (C's ns/op - partner's) / (events
# C recorded per op). Over the passes: the median of each; ns/op shown is the
# best pass. events/op = all events recorded / all ops executed (every run,
# warm-up and calibration included); "seen" compares it with what a complete
# tracer records (a tool that does not see faults sees a fraction).
# Everything measured in a VM is emulated time: only ratios, and costs
# relative to one another, mean anything.

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
	if (v == "")
		return "null"
	return v == int(v) && v < 9e15 && v > -9e15 ? sprintf("%.0f", v) : sprintf("%.6g", v)
}

function add_json(obj) {
	JSON[++njson] = obj
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

function info(v, k) {
	return (v "." k) in INFO ? INFO[v "." k] : INFO[k]
}

# The key of a VM kind on one kernel: "icount/6.12" ("icount" in a log of
# one kernel without kernel= fields).
function vkey(v, k) {
	return k != "" ? v "/" k : v
}

function kernel_seen(k) {
	if (!(k in KSEEN)) {
		KSEEN[k] = 1
		KORD[++nk] = k
	}
}

function kname(k) {
	return k != "" ? k : "-"
}

BEGIN {
	# Configurations in table order, and what each one is.
	ncfg = split("untraced untraced2 loaded other memmon memmon_g record strace perf bpftrace ebpf lttng", CFG, " ")
	DESC["untraced"] = "module not loaded"
	DESC["untraced2"] = "untraced again: A/A pair, the noise floor"
	DESC["loaded"] = "memmon.ko loaded, no session"
	DESC["other"] = "loaded, another (idle) process watched"
	DESC["memmon"] = "memmon watching it, drained to nowhere (tests/bench/drain)"
	DESC["memmon_g"] = "the same with user stacks, 8 frames (drain -g 8, memmon trace -g)"
	DESC["record"] = "memmon record -o <tmpfs file>"
	DESC["strace"] = "strace -f -e trace=%memory -o <tmpfs file>"
	DESC["perf"] = "perf trace --pf=all -m 16M -e <memory syscalls>"
	DESC["bpftrace"] = "bpftrace sys_enter/exit_<call> + page_fault_user, printf each"
	DESC["ebpf"] = "eBPF peer: fentry/fexit on memmon's functions, BPF ring buffer (tests/bench/ebpf)"
	DESC["lttng"] = "LTTng 2.13 kernel tracer: --syscall + x86_exceptions_page_fault_user, pid tracker, consumerd to tmpfs"
	nvm = split("icount fault smp", VMS, " ")
	VMDESC["icount"] = "1 vCPU, qemu -icount shift=0: guest time = instructions executed, 1 ns each (deterministic; tracer and consumer share the CPU, so their cost counts, all but the consumer's work between the timed windows: see the whole runs)"
	VMDESC["fault"] = "the icount VM in a boot of its own, the fault loop only, untraced, watched, and under the eBPF peer: the per-kernel cost per watched fault"
	VMDESC["smp"] = "2 vCPUs, multi-threaded TCG in real host time (noisy: see the untraced2 A/A ratio)"
}

$1 == "INFO" {
	parse($0)
	v = F["vm"]
	# Logs of one kernel said kernel=KVER; now kernel= is its name (6.1,
	# 6.12, rt: no dash) and kver= the KVER.
	if (v != "" && F["kernel"] ~ /-/) {
		F["kver"] = F["kernel"]
		delete F["kernel"]
	}
	if (v != "")
		v = vkey(v, F["kernel"])
	for (k in F) {
		if (k == "vm" || k == "kernel")
			continue
		kk = v != "" ? v "." k : k
		if (!(kk in INFO))
			INFOKEYS[++ninfo] = kk
		INFO[kk] = F[k]
	}
	next
}

$1 == "SKIPPED" || $1 == "BUILDFAIL" || $1 == "VMFAIL" {
	parse($0)
	if ($1 == "SKIPPED")
		what = (F["vm"] != "" ? vkey(F["vm"], F["kernel"]) ":" : "") F["config"]
	else if ($1 == "BUILDFAIL")
		what = "build:" F["part"]
	else
		what = "vm:" vkey(F["vm"], F["kernel"])
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
	# Throughput storms are pass 0; the rest is workloads.
	kernel_seen(F["kernel"])
	v = vkey(F["vm"], F["kernel"])
	w = v ":" F["workload"]
	c = F["config"]
	p = F["pass"]
	if (p == 0) {
		# Throughput: one run each.
		key = c SUBSEP w
		if (!(key in TP))
			TPK[++ntp] = key
		TP[key] = 1
		TPKER[key] = F["kernel"]
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
		WLVM[w] = v
		WLKIND[w] = F["vm"]
		WLKER[w] = F["kernel"]
		WLNAME[w] = F["workload"]
	}
	if (!(F["workload"] in WNSEEN)) {
		WNSEEN[F["workload"]] = 1
		WN[++nwn] = F["workload"]
	}
	EPO_EXPECT[w] = F["events_per_op"]
	ns = F["ns_per_op"] + 0
	key = c SUBSEP w
	if (c == "untraced") {
		# Partner runs of configuration "pair" (paired VM), or the
		# pass's references (pair empty).
		pk = F["pair"] SUBSEP w
		UL[pk, ++UN[pk]] = ns
		key = c SUBSEP w
		XL[key, ++XN[key]] = ns
		next
	}
	XL[key, ++XN[key]] = ns
	EV[key] += F["events"]
	OPS[key] += F["ops_total"]
	if (F["lost_whole_pass"] != "")
		PASSLOST[c, v, p] = F["lost"]
	else
		LOST[key] += F["lost"]
	if (F["enable_ns"] != "") {
		if (!(v in NEN))
			ENV_[++nenv] = v
		EN[v, ++NEN[v]] = F["enable_ns"]
		DIS[v, NEN[v]] = F["disable_ns"]
	}
	if (F["fault_hook"] != "")
		HOOK[key] = F["fault_hook"]
	# The eBPF peer checks itself against the workload's known counts.
	if (F["complete"] != "") {
		NCHK[key]++
		if (F["complete"] != 1)
			NINC[key]++
	}
	next
}

$1 == "WHOLE" {
	parse($0)
	kernel_seen(F["kernel"])
	w = vkey(F["vm"], F["kernel"]) ":" F["workload"]
	c = F["config"]
	n = F["iters"] + 0
	key = c SUBSEP w SUBSEP n
	if (!(w in WHWSEEN)) {
		WHWSEEN[w] = 1
		WHW[++nwhw] = w
	}
	if (!((c SUBSEP w) in WHN)) {
		WHK[++nwh] = c SUBSEP w
		WHNAME[c SUBSEP w] = F["workload"]
		WHVM[c SUBSEP w] = F["vm"]
		WHKER[c SUBSEP w] = F["kernel"]
	}
	WHN[c SUBSEP w] = 1
	if (!((c SUBSEP w) in WHLO) || n < WHLO[c SUBSEP w])
		WHLO[c SUBSEP w] = n
	if (n > WHHI[c SUBSEP w])
		WHHI[c SUBSEP w] = n
	WHT[key, ++WHR[key]] = F["ns"]
	WHOPS[key] += F["ops"]
	WHEV[key] += F["events"]
	WHLOST[c SUBSEP w] += F["lost"]
	next
}

$1 == "PROFILE" {
	parse($0)
	c = (F["kernel"] != "" ? F["kernel"] " " : "") F["config"]
	if (!(c in PROFN))
		PROFC[++nprofc] = c
	n = ++PROFN[c]
	PROFS[c, n] = sprintf("%6.2f%%  %-8s %s", F["share"], F["comm"], F["sym"])
	PROFW = F["workload"]
	add_json("{\"kind\":\"profile\",\"vm\":" jstr(F["vm"]) ",\"kernel\":" jstr(F["kernel"]) ",\"configuration\":" jstr(F["config"]) \
		",\"workload\":" jstr(F["workload"]) ",\"share_pct\":" jnum(F["share"]) \
		",\"comm\":" jstr(F["comm"]) ",\"symbol\":" jstr(F["sym"]) "}")
	next
}

$1 == "HOST" {
	parse($0)
	nhost++
	obj = "{\"kind\":\"host\""
	for (k in F)
		obj = obj "," jstr(k) ":" jval(F[k])
	HOSTLINE[nhost] = $0
	add_json(obj "}")
	next
}

# memmon serve's figures in the VM; its host ones are HOST bench=serve_*.
$1 == "SERVE" {
	parse($0)
	nserve++
	obj = "{\"kind\":\"serve\""
	for (k in F)
		obj = obj "," jstr(k) ":" jval(F[k])
	SERVELINE[nserve] = $0
	add_json(obj "}")
	next
}

# Ratios, medians and per-event costs of every (configuration, workload):
# ns/op is the median of the configuration's runs, its reference the median
# of its untraced partners (or of the pass's untraced runs).
function compute(	i, j, k, w, c, key, pk, n, bkey, vv, parts, lo, hi) {
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		for (j = 1; j <= ncfg; j++) {
			c = CFG[j]
			key = c SUBSEP w
			if (!(key in XN))
				continue
			n = XN[key]
			lo = hi = XL[key, 1]
			for (k = 1; k <= n; k++) {
				A[k] = XL[key, k]
				if (A[k] < lo)
					lo = A[k]
				if (A[k] > hi)
					hi = A[k]
			}
			NS[key] = median(A, n)
			SPREAD[key] = n > 1 && NS[key] > 0 ? (hi - lo) / NS[key] : ""
			pk = (c SUBSEP w) in UN ? c SUBSEP w : "" SUBSEP w
			if (c == "untraced" || !(pk in UN)) {
				REFB[key] = c == "untraced" ? NS[key] : ""
				RATIO[key] = c == "untraced" ? 1 : ""
				continue
			}
			for (k = 1; k <= UN[pk]; k++)
				A[k] = UL[pk, k]
			REFB[key] = median(A, UN[pk])
			RATIO[key] = REFB[key] > 0 ? NS[key] / REFB[key] : ""
			EPO[key] = OPS[key] > 0 && EV[key] > 0 ? EV[key] / OPS[key] : ""
			PEV[key] = EPO[key] != "" && RATIO[key] != "" ? (NS[key] - REFB[key]) / EPO[key] : ""
			SEEN_[key] = EPO[key] != "" && EPO_EXPECT[w] > 0 ? EPO[key] / EPO_EXPECT[w] : ""
			if (c == "bpftrace" || c == "perf") {
				# Their losses are per pass, over all its workloads.
				LOSTV[key] = 0
				for (vv in PASSLOST) {
					split(vv, parts, SUBSEP)
					if (parts[1] == c && parts[2] == WLVM[w])
						LOSTV[key] += PASSLOST[vv]
				}
			} else {
				LOSTV[key] = LOST[key]
			}
		}
		for (j = 1; j <= ncfg; j++) {
			key = CFG[j] SUBSEP w
			bkey = "bpftrace" SUBSEP w
			VSB[key] = PEV[key] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? PEV[key] / PEV[bkey] : ""
			bkey = "ebpf" SUBSEP w
			VSE[key] = PEV[key] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? PEV[key] / PEV[bkey] : ""
			bkey = "lttng" SUBSEP w
			VSL[key] = PEV[key] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? PEV[key] / PEV[bkey] : ""
		}
	}
}

# Whole runs: per op = (median time of the 2N-op runs - median of the N-op
# runs) / (ops of a 2N run - ops of an N run), for each configuration and
# its untraced reference of the same boot.
function whole_compute(	i, k, cw, parts, lo, hi, tlo, thi, dops, ukey, bkey) {
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		lo = cw SUBSEP WHLO[cw]
		hi = cw SUBSEP WHHI[cw]
		if (WHLO[cw] == WHHI[cw] || !WHR[lo] || !WHR[hi])
			continue
		for (k = 1; k <= WHR[lo]; k++)
			A[k] = WHT[lo, k]
		tlo = median(A, WHR[lo])
		for (k = 1; k <= WHR[hi]; k++)
			A[k] = WHT[hi, k]
		thi = median(A, WHR[hi])
		dops = WHOPS[hi] / WHR[hi] - WHOPS[lo] / WHR[lo]
		if (dops <= 0)
			continue
		WPO[cw] = (thi - tlo) / dops
		WEPO[cw] = (WHEV[hi] / WHR[hi] - WHEV[lo] / WHR[lo]) / dops
		WRUNS[cw] = WHR[lo] < WHR[hi] ? WHR[lo] : WHR[hi]
	}
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		split(cw, parts, SUBSEP)
		ukey = "untraced" SUBSEP parts[2]
		if (parts[1] == "untraced" || !(cw in WPO) || !(ukey in WPO) || WPO[ukey] <= 0)
			continue
		WRATIO[cw] = WPO[cw] / WPO[ukey]
		WPEV[cw] = WEPO[cw] > 0 ? (WPO[cw] - WPO[ukey]) / WEPO[cw] : ""
	}
	# Then against bpftrace's (known only once every WPEV is).
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		if (!(cw in WRATIO))
			continue
		split(cw, parts, SUBSEP)
		bkey = "bpftrace" SUBSEP parts[2]
		# bpftrace's whole-run cost if it was measured, else its
		# windowed one (which leaves its lagging reader out).
		if (bkey in WPEV && WPEV[bkey] != "" && WPEV[bkey] > 0)
			WVSB[cw] = WPEV[cw] != "" ? WPEV[cw] / WPEV[bkey] : ""
		else
			WVSB[cw] = WPEV[cw] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? WPEV[cw] / PEV[bkey] : ""
		WVSBW[cw] = bkey in WPEV && WPEV[bkey] > 0 ? "whole" : "windowed"
		# Against the eBPF peer's, the same way.
		bkey = "ebpf" SUBSEP parts[2]
		if (bkey in WPEV && WPEV[bkey] != "" && WPEV[bkey] > 0)
			WVSE[cw] = WPEV[cw] != "" ? WPEV[cw] / WPEV[bkey] : ""
		else
			WVSE[cw] = WPEV[cw] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? WPEV[cw] / PEV[bkey] : ""
		WVSEW[cw] = bkey in WPEV && WPEV[bkey] > 0 ? "whole" : "windowed"
		# And LTTng's.
		bkey = "lttng" SUBSEP parts[2]
		if (bkey in WPEV && WPEV[bkey] != "" && WPEV[bkey] > 0)
			WVSL[cw] = WPEV[cw] != "" ? WPEV[cw] / WPEV[bkey] : ""
		else
			WVSL[cw] = WPEV[cw] != "" && PEV[bkey] != "" && PEV[bkey] > 0 ? WPEV[cw] / PEV[bkey] : ""
		WVSLW[cw] = bkey in WPEV && WPEV[bkey] > 0 ? "whole" : "windowed"
	}
}

function whole_table(	i, j, kk, v, cw, ukey, c, w) {
	if (!nwh)
		return
	print "== Whole runs (icount VM): every instruction from the tracer's start to its exit, its reader's"
	print "   work and final drain included. ns/op = (median CPU time of the 2N-op runs -"
	print "   median of the N-op runs) / N ops: what every run pays once (exec, start-up, ENABLE, exit) cancels"
	printf "%-6s %-6s %-10s %7s %2s %10s %10s %7s %7s %5s %9s %9s %9s %9s %9s\n", "kernel", "wl", "config", "-n", "n", "ns/op", "untr ns/op", "ratio", "ev/op", "lost", "ns/event", "windowed", "/bpftrace", "/ebpf", "/lttng"
	# Workload by workload, each kernel's rows after one another.
	for (i = 1; i <= nwn; i++) for (kk = 1; kk <= nk; kk++) for (v = 1; v <= nvm; v++) for (j = 1; j <= ncfg; j++) {
		c = CFG[j]
		w = vkey(VMS[v], KORD[kk]) ":" WN[i]
		cw = c SUBSEP w
		if (!(cw in WPO))
			continue
		ukey = "untraced" SUBSEP w
		printf "%-6s %-6s %-10s %7d %2d %10.0f %10s %7s %7s %5s %9s %9s %9s %9s %9s\n", kname(WHKER[cw]), WHNAME[cw], c, WHLO[cw], WRUNS[cw], WPO[cw],
			fmt(c == "untraced" ? "" : WPO[ukey], "%.0f"), fmt(c == "untraced" ? 1 : WRATIO[cw], "%.3f"),
			c == "untraced" ? "-" : fmt(WEPO[cw], "%.3f"), c == "untraced" ? "-" : WHLOST[cw],
			c == "untraced" ? "-" : fmt(WPEV[cw], "%.0f"), c == "untraced" ? "-" : fmt(PEV[cw], "%.0f"),
			c == "untraced" ? "-" : fmt(WVSB[cw], "%.3f") (WVSB[cw] != "" && WVSBW[cw] == "windowed" ? "w" : ""),
			c == "untraced" || c == "ebpf" ? "-" : fmt(WVSE[cw], "%.3f") (WVSE[cw] != "" && WVSEW[cw] == "windowed" ? "w" : ""),
			c == "untraced" || c == "lttng" ? "-" : fmt(WVSL[cw], "%.3f") (WVSL[cw] != "" && WVSLW[cw] == "windowed" ? "w" : "")
		add_json("{\"kind\":\"whole_run\",\"vm\":" jstr(WHVM[cw]) ",\"kernel\":" jstr(WHKER[cw]) \
			",\"kver\":" jstr(info(vkey(WHVM[cw], WHKER[cw]), "kver")) ",\"workload\":" jstr(WHNAME[cw]) \
			",\"configuration\":" jstr(c) ",\"iters\":" WHLO[cw] ",\"runs\":" WRUNS[cw] \
			",\"ns_per_op\":" jnum(WPO[cw]) ",\"untraced_ns_per_op\":" jnum(c == "untraced" ? WPO[cw] : WPO[ukey]) \
			",\"ratio\":" jnum(c == "untraced" ? 1 : WRATIO[cw]) ",\"events_per_op\":" jnum(c == "untraced" ? "" : WEPO[cw]) \
			",\"lost\":" jnum(c == "untraced" ? "" : WHLOST[cw]) ",\"ns_per_event\":" jnum(c == "untraced" ? "" : WPEV[cw]) \
			",\"vs_bpftrace\":" jnum(c == "untraced" ? "" : WVSB[cw]) \
			",\"vs_ebpf\":" jnum(c == "untraced" || c == "ebpf" ? "" : WVSE[cw]) \
			",\"vs_lttng\":" jnum(c == "untraced" || c == "lttng" ? "" : WVSL[cw]) "}")
	}
	print "-n: wl -n of the shorter runs (N); n: runs of each size; untr ns/op: the same untraced; ns/event = (ns/op - untr"
	print "ns/op) / ev/op; windowed: ns/event of the configuration in the table above (best of -k timed"
	print "windows, no consumer work between them); /bpftrace: this ns/event over bpftrace's whole-run one"
	print "(over its windowed one, marked w, where bpftrace had no whole runs: that leaves its lagging"
	print "reader's work out and favours bpftrace); /ebpf: the same over the eBPF peer's (its set-up and"
	print "teardown CPU left out: see tests/bench/run-vm); /lttng: over LTTng's (its session daemon's and"
	print "consumer's CPU included). bpftrace is attached once: its runs count the workload's"
	print "CPU time plus its own threads' (schedstat) until its reader has caught up."
	print ""
}

# The rows of workload key w (one kernel's) in the table of VM kind vm.
function workload_rows(vm, w,	j, c, key, silent) {
	for (j = 1; j <= ncfg; j++) {
		c = CFG[j]
		key = c SUBSEP w
		if (!(key in XN))
			continue
		silent = c == "untraced" || c == "untraced2" || c == "loaded" || c == "other"
		printf "%-6s %-6s %-10s %2d %10.0f %6s %10s %7s %7s %5s %5s %9s %9s %9s %9s\n", kname(WLKER[w]), WLNAME[w], c, XN[key], NS[key],
			fmt(SPREAD[key] == "" ? "" : SPREAD[key] * 100, "%.1f%%"), fmt(REFB[key], "%.0f"), fmt(RATIO[key], "%.3f"),
			silent ? "-" : fmt(EPO[key], "%.3f"),
			silent ? "-" : fmt(SEEN_[key] * 100, "%.0f%%"),
			silent ? "-" : LOSTV[key] (c == "bpftrace" || c == "perf" ? "*" : ""),
			silent ? "-" : fmt(PEV[key], "%.0f"), silent ? "-" : fmt(VSB[key], "%.3f"),
			silent || c == "ebpf" ? "-" : fmt(VSE[key], "%.3f"),
			silent || c == "lttng" ? "-" : fmt(VSL[key], "%.3f")
		add_json("{\"kind\":\"workload\",\"vm\":" jstr(vm) ",\"kernel\":" jstr(WLKER[w]) \
			",\"kver\":" jstr(info(WLVM[w], "kver")) ",\"workload\":" jstr(WLNAME[w]) \
			",\"configuration\":" jstr(c) ",\"description\":" jstr(DESC[c]) \
			",\"runs\":" XN[key] ",\"ns_per_op\":" jnum(NS[key]) \
			",\"spread\":" jnum(SPREAD[key]) \
			",\"untraced_ns_per_op\":" jnum(REFB[key]) \
			",\"ratio_to_untraced\":" jnum(RATIO[key]) ",\"events\":" jnum(EV[key]) \
			",\"ops_total\":" jnum(OPS[key]) ",\"events_per_op\":" jnum(EPO[key]) \
			",\"events_per_op_expected\":" jnum(EPO_EXPECT[w]) \
			",\"lost\":" jnum(LOSTV[key]) ",\"per_event_ns\":" jnum(PEV[key]) \
			",\"per_event_vs_bpftrace\":" jnum(VSB[key]) \
			",\"per_event_vs_ebpf\":" jnum(VSE[key]) \
			",\"per_event_vs_lttng\":" jnum(VSL[key]) \
			",\"complete_runs\":" jnum(NCHK[key] != "" ? NCHK[key] - NINC[key] : "") \
			",\"incomplete_runs\":" jnum(NCHK[key] != "" ? NINC[key] + 0 : "") \
			",\"time_base\":" jstr(vm == "icount" ? "icount: emulated instructions, 1 ns each" : "TCG real time (emulated)") "}")
	}
}

function workload_table(vm,	i, kk, w, any, vk, printed, part, first) {
	any = 0
	for (i = 1; i <= nwl; i++)
		if (WLKIND[WL[i]] == vm)
			any = 1
	if (!any)
		return
	print "== " vm " VM: " VMDESC[vm]
	for (kk = 1; kk <= nk; kk++) {
		vk = vkey(vm, KORD[kk])
		any = 0
		for (i = 1; i <= nwl; i++)
			if (WLVM[WL[i]] == vk)
				any = 1
		if (!any)
			continue
		# A kernel measured on part of the workloads (the fault-only
		# boots) says which.
		part = first != "" && info(vk, "workloads") " " info(vk, "configs") != first ? \
			"; only " info(vk, "workloads") " under " info(vk, "configs") : ""
		if (first == "")
			first = info(vk, "workloads") " " info(vk, "configs")
		print "   kernel " (KORD[kk] != "" ? KORD[kk] " = " : "") info(vk, "kver") ", " info(vk, "cpus") " vCPU(s); passes " info(vk, "passes") "; wl " info(vk, "wlargs") part
	}
	printf "%-6s %-6s %-10s %2s %10s %6s %10s %7s %7s %5s %5s %9s %9s %9s %9s\n", "kernel", "wl", "config", "n", "ns/op", "spread", "untr ns/op", "ratio", "ev/op", "seen", "lost", "ns/event", "/bpftrace", "/ebpf", "/lttng"
	# Workload by workload, each kernel's rows after one another.
	for (i = 1; i <= nwn; i++) {
		printed = 0
		for (kk = 1; kk <= nk; kk++) {
			w = vkey(vm, KORD[kk]) ":" WN[i]
			if (w in WLSEEN) {
				workload_rows(vm, w)
				printed = 1
			}
		}
		if (printed)
			print ""
	}
}

# The cost of a watched fault on each kernel: the icount VM's fault loop
# (one op = one fault) watched by drain against the same boot's untraced
# runs, in instructions. The kernels' fault hooks are held to 6.1's figure
# (issue 24: within 1.25x); "cost" is what memmon adds to a fault, and the
# whole watched fault is shown too (the kernel's own fault path differs).
function fault_compute(	kk, k, w, m) {
	for (kk = 1; kk <= nk; kk++) {
		k = KORD[kk]
		# The boot of its own (--vm fault), else the icount pass's.
		FVM[k] = "fault"
		w = vkey("fault", k) ":fault"
		m = "memmon" SUBSEP w
		if (!(m in NS) || REFB[m] == "") {
			FVM[k] = "icount"
			w = vkey("icount", k) ":fault"
			m = "memmon" SUBSEP w
		}
		if (!(m in NS) || REFB[m] == "")
			continue
		FK[++nfk] = k
		FW[k] = NS[m]
		FU[k] = REFB[m]
		FC[k] = NS[m] - REFB[m]
	}
	FBASE = nfk ? FK[1] : ""
	for (kk = 1; kk <= nfk; kk++)
		if (FK[kk] == "6.1")
			FBASE = "6.1"
}

function fault_table(	kk, k, m) {
	if (nfk < 1)
		return
	print "== Per watched fault, per kernel (icount VM, fault loop: instructions per fault)"
	printf "%-6s %-26s %-6s %-9s %10s %10s %8s %9s %9s\n", "kernel", "kver", "boot", "hook", "untraced", "watched", "cost", "cost/" FBASE, "watched/" FBASE
	for (kk = 1; kk <= nfk; kk++) {
		k = FK[kk]
		m = "memmon" SUBSEP vkey(FVM[k], k) ":fault"
		printf "%-6s %-26s %-6s %-9s %10.1f %10.1f %8.1f %9.3f %9.3f\n", kname(k), info(vkey(FVM[k], k), "kver"), FVM[k],
			(m in HOOK) ? HOOK[m] : "?", FU[k], FW[k], FC[k],
			(FC[FBASE] > 0 ? FC[k] / FC[FBASE] : 0), (FW[FBASE] > 0 ? FW[k] / FW[FBASE] : 0)
		add_json("{\"kind\":\"fault_per_kernel\",\"vm\":" jstr(FVM[k]) ",\"kernel\":" jstr(k) \
			",\"kver\":" jstr(info(vkey(FVM[k], k), "kver")) ",\"fault_hook\":" jstr(HOOK[m]) \
			",\"untraced_per_fault\":" jnum(FU[k]) ",\"watched_per_fault\":" jnum(FW[k]) \
			",\"cost_per_fault\":" jnum(FC[k]) ",\"base_kernel\":" jstr(FBASE) \
			",\"cost_vs_base\":" jnum(FC[FBASE] > 0 ? FC[k] / FC[FBASE] : "") \
			",\"watched_vs_base\":" jnum(FW[FBASE] > 0 ? FW[k] / FW[FBASE] : "") \
			",\"time_base\":\"icount: emulated instructions\"}")
	}
	print "boot: fault = a boot running only this (run-vm --vm fault), icount = the icount pass's rows;"
	print "untraced, watched: ns/op of the fault loop (best of -k windows; in the icount VM, instructions per"
	print "fault) without the module and watched by drain; cost = watched - untraced: what memmon adds to a"
	print "fault (its hook, the record, the drain); hook: /proc/memmon/stats fault_hook during the run."
	print ""
}

function throughput_table(	i, key, parts, c, w, ops_s, ukey, slow, evs, v, mbs, sec, kk) {
	if (!ntp)
		return
	# The storms last as long on every kernel.
	sec = info("smp", "storm_seconds")
	for (kk = 1; kk <= nk && sec == ""; kk++)
		sec = info(vkey("smp", KORD[kk]), "storm_seconds")
	print "== Throughput: storms on every vCPU of the smp VM for " sec " s (TCG real time)"
	printf "%-6s %-6s %-10s %12s %9s %11s %9s %11s %11s\n", "kernel", "storm", "config", "ops/s", "slowdown", "events", "lost", "events/s", "MB/s"
	for (i = 1; i <= ntp; i++) {
		key = TPK[i]
		split(key, parts, SUBSEP)
		c = parts[1]
		w = parts[2]
		v = w
		sub(/^[^:]*:/, "", v)
		ops_s = TPSEC[key] > 0 ? TPOPS[key] / TPSEC[key] : ""
		ukey = "untraced" SUBSEP w
		slow = (ukey in TP) && TPNS[ukey] > 0 ? TPNS[key] / TPNS[ukey] : ""
		evs = TPSEC[key] > 0 && TPEV[key] != "" ? TPEV[key] / TPSEC[key] : ""
		mbs = TPSEC[key] > 0 && TPBYTES[key] != "" ? TPBYTES[key] / TPSEC[key] / 1e6 : ""
		printf "%-6s %-6s %-10s %12.0f %9s %11s %9s %11s %11s\n", kname(TPKER[key]), v, c, ops_s, fmt(slow, "%.3f"),
			c == "untraced" ? "-" : TPEV[key], c == "untraced" ? "-" : TPLOST[key],
			c == "untraced" ? "-" : fmt(evs, "%.0f"), c == "untraced" ? "-" : fmt(mbs, "%.2f")
		add_json("{\"kind\":\"throughput\",\"vm\":\"smp\",\"kernel\":" jstr(TPKER[key]) ",\"workload\":" jstr(v) ",\"configuration\":" jstr(c) \
			",\"ops\":" jnum(TPOPS[key]) ",\"seconds\":" jnum(TPSEC[key]) \
			",\"ops_per_s\":" jnum(ops_s) ",\"ns_per_op\":" jnum(TPNS[key]) \
			",\"ratio_to_untraced\":" jnum(slow) ",\"events\":" jnum(TPEV[key]) \
			",\"lost\":" jnum(TPLOST[key]) ",\"produced\":" jnum(TPPROD[key]) \
			",\"events_per_s\":" jnum(evs) ",\"bytes\":" jnum(TPBYTES[key]) \
			",\"mb_per_s\":" jnum(mbs) ",\"time_base\":\"TCG real time (emulated)\"}")
		if (c == "memmon" && v == "storm")
			STORM_LOST[TPKER[key]] = TPLOST[key]
		if (c == "record" && v == "storm")
			REC_LOST[TPKER[key]] = TPLOST[key]
		if (c == "ebpf" && v == "storm")
			EBPF_LOST[TPKER[key]] = TPLOST[key]
		if (v == "storm" && (c == "trace" || c == "trace-json" || c == "noloss")) {
			TRACE_LOST[TPKER[key], c] = TPLOST[key]
			if (c == "noloss")
				NOLOSS_SLOW[TPKER[key]] = slow
		}
	}
	print "ops/s: storm = faults, mark = MEMMON_IOC_MARK calls, of all threads; slowdown: ns/op over the"
	print "untraced storm's; events/s: records delivered to the consumer per second of storm."
	print ""
}

# |A/A ratio - 1| of workload w: how far apart two identical runs land.
function noise(w,	r) {
	r = RATIO["untraced2" SUBSEP w]
	if (r == "")
		return 0
	return r < 1 ? 1 - r : r - 1
}

function targets(	i, w, key, o, n, m, cw, parts, kk, k, r) {
	print "== Targets (reported, never enforced)"
	for (kk = 1; kk <= nfk; kk++) {
		k = FK[kk]
		if (k == FBASE || FC[FBASE] <= 0)
			continue
		r = FC[k] / FC[FBASE]
		printf "  cost per watched fault <= 1.25x %s's, %-6s %6.1f vs %.1f instructions, %.3fx   %s (whole watched fault %.3fx)\n", FBASE, k ":", FC[k], FC[FBASE], r,
			r <= 1.25 ? "met" : sprintf("MISSED by %.0f instructions", FC[k] - 1.25 * FC[FBASE]), FW[k] / FW[FBASE]
	}
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "memmon" SUBSEP w
		if (VSB[key] == "")
			continue
		if (PEV[key] <= 0 || RATIO[key] - 1 <= 2 * noise(w))
			printf "  per-event cost <= 1/3 of bpftrace's, %-18s not measurable: the slowdown is within the A/A noise\n", w ":"
		else
			printf "  per-event cost <= 1/3 of bpftrace's, %-18s %6.3f of bpftrace's   %s\n", w ":", VSB[key],
				VSB[key] <= 1 / 3 ? "met" : sprintf("MISSED: %.1fx the target", VSB[key] * 3)
	}
	# The same on whole runs (the consumer's every instruction), against
	# bpftrace's windowed cost: the stricter reading.
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		if (WVSB[cw] == "")
			continue
		split(cw, parts, SUBSEP)
		if (parts[1] != "memmon" && parts[1] != "record")
			continue
		printf "  per-event cost <= 1/3 of bpftrace's, whole run, %-6s %-18s %6.3f of bpftrace's%s   %s\n", parts[1], parts[2] ":", WVSB[cw],
			WVSBW[cw] == "windowed" ? " (windowed)" : "",
			WVSB[cw] <= 1 / 3 ? "met" : sprintf("MISSED: %.1fx the target", WVSB[cw] * 3)
	}
	# Issue 31: against eBPF at its best (tests/bench/ebpf), 0.8 of its
	# cost per recorded event, windowed and on whole runs.
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "memmon" SUBSEP w
		if (VSE[key] == "")
			continue
		if (PEV[key] <= 0 || RATIO[key] - 1 <= 2 * noise(w))
			printf "  per-event cost <= 0.8 of the eBPF peer's, %-18s not measurable: the slowdown is within the A/A noise\n", w ":"
		else
			printf "  per-event cost <= 0.8 of the eBPF peer's, %-18s %6.3f of its   %s\n", w ":", VSE[key],
				VSE[key] <= 0.8 ? "met" : sprintf("MISSED: %.2fx the target", VSE[key] / 0.8)
	}
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		if (WVSE[cw] == "")
			continue
		split(cw, parts, SUBSEP)
		# The peer drains to nowhere, as drain does: memmon record,
		# which writes a trace, is not like for like (its /ebpf column
		# stays in the table).
		if (parts[1] != "memmon")
			continue
		# A run that cost less than untraced is noise, not a result.
		if (WVSE[cw] <= 0) {
			printf "  per-event cost <= 0.8 of the eBPF peer's, whole run, %-6s %-18s not measurable: cheaper than untraced\n", parts[1], parts[2] ":"
			continue
		}
		printf "  per-event cost <= 0.8 of the eBPF peer's, whole run, %-6s %-18s %6.3f of its%s   %s\n", parts[1], parts[2] ":", WVSE[cw],
			WVSEW[cw] == "windowed" ? " (windowed)" : "",
			WVSE[cw] <= 0.8 ? "met" : sprintf("MISSED: %.2fx the target", WVSE[cw] / 0.8)
	}
	# A peer is only a yardstick when it recorded everything.
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "ebpf" SUBSEP w
		if (NCHK[key] == "")
			continue
		printf "  eBPF peer complete (no drops, every known event), %-18s %d of %d runs   %s\n", w ":", NCHK[key] - NINC[key], NCHK[key],
			NINC[key] ? "INCOMPLETE: its figures favour it" : "met"
	}
	# Issue 31: against LTTng's kernel tracer, 0.8 of its cost per
	# recorded event, windowed and on whole runs (kernels it builds for).
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "memmon" SUBSEP w
		if (VSL[key] == "")
			continue
		if (PEV[key] <= 0 || RATIO[key] - 1 <= 2 * noise(w))
			printf "  per-event cost <= 0.8 of LTTng's, %-18s not measurable: the slowdown is within the A/A noise\n", w ":"
		else
			printf "  per-event cost <= 0.8 of LTTng's, %-18s %6.3f of its   %s\n", w ":", VSL[key],
				VSL[key] <= 0.8 ? "met" : sprintf("MISSED: %.2fx the target", VSL[key] / 0.8)
	}
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		if (WVSL[cw] == "")
			continue
		split(cw, parts, SUBSEP)
		if (parts[1] != "memmon")
			continue
		if (WVSL[cw] <= 0) {
			printf "  per-event cost <= 0.8 of LTTng's, whole run, %-6s %-18s not measurable: cheaper than untraced\n", parts[1], parts[2] ":"
			continue
		}
		printf "  per-event cost <= 0.8 of LTTng's, whole run, %-6s %-18s %6.3f of its%s   %s\n", parts[1], parts[2] ":", WVSL[cw],
			WVSLW[cw] == "windowed" ? " (windowed)" : "",
			WVSL[cw] <= 0.8 ? "met" : sprintf("MISSED: %.2fx the target", WVSL[cw] / 0.8)
	}
	# LTTng counts its own discarded events: a run that lost any favours it.
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "lttng" SUBSEP w
		if (LOSTV[key] == "")
			continue
		printf "  LTTng complete (nothing discarded), %-18s lost %s   %s\n", w ":", LOSTV[key],
			LOSTV[key] == 0 ? "met" : "INCOMPLETE: its figures favour it"
	}
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		if (WLNAME[w] != "fault" || WLKIND[w] == "fault")
			continue
		key = "memmon" SUBSEP w
		if (RATIO[key] == "")
			continue
		if (noise(w) > 0.05)
			printf "  traced fault loop <= 5%% slower, %-18s not measurable (A/A noise %.0f%%)\n", w ":", noise(w) * 100
		else
			printf "  traced fault loop <= 5%% slower, %-18s %+6.1f%%   %s\n", w ":", (RATIO[key] - 1) * 100,
				RATIO[key] <= 1.05 ? "met" : sprintf("MISSED by %.1f points", (RATIO[key] - 1.05) * 100)
	}
	for (i = 1; i <= nwh; i++) {
		cw = WHK[i]
		split(cw, parts, SUBSEP)
		if (WHNAME[cw] != "fault" || parts[1] != "memmon" || WRATIO[cw] == "")
			continue
		printf "  traced fault loop <= 5%% slower, whole run, %-18s %+6.1f%%   %s\n", parts[2] ":", (WRATIO[cw] - 1) * 100,
			WRATIO[cw] <= 1.05 ? "met" : sprintf("MISSED by %.1f points", (WRATIO[cw] - 1.05) * 100)
	}
	for (i = 1; i <= nwl; i++) {
		w = WL[i]
		key = "other" SUBSEP w
		if (RATIO[key] == "")
			continue
		n = ("untraced2" SUBSEP w) in RATIO ? sprintf(" (A/A noise %+.1f%%)", (RATIO["untraced2" SUBSEP w] - 1) * 100) : ""
		if (noise(w) > 0.01)
			printf "  unwatched process <= 1%% slower, %-18s not measurable%s\n", w ":", n
		else
			printf "  unwatched process <= 1%% slower, %-18s %+6.1f%%   %s%s\n", w ":", (RATIO[key] - 1) * 100,
				RATIO[key] <= 1.01 ? "met" : sprintf("MISSED by %.1f points", (RATIO[key] - 1.01) * 100), n
	}
	for (kk = 1; kk <= nk; kk++) {
		k = KORD[kk]
		if (k in STORM_LOST)
			printf "  zero lost, fastest fault storm, drained, %-6s       lost %s   %s\n", k ":", STORM_LOST[k], STORM_LOST[k] == 0 ? "met" : "MISSED"
		if (k in REC_LOST)
			printf "  zero lost, fastest fault storm, memmon record, %-6s lost %s   %s\n", k ":", REC_LOST[k], REC_LOST[k] == 0 ? "met" : "MISSED"
		# Not memmon's target: whether the peer's storm row is complete.
		if (k in EBPF_LOST)
			printf "  (eBPF peer) zero lost, fastest fault storm, %-6s   lost %s   %s\n", k ":", EBPF_LOST[k], EBPF_LOST[k] == 0 ? "complete" : "INCOMPLETE"
		if ((k, "trace") in TRACE_LOST)
			printf "  zero lost, fastest fault storm, memmon trace -o, %-6s lost %s   %s\n", k ":", TRACE_LOST[k, "trace"], TRACE_LOST[k, "trace"] == 0 ? "met" : "MISSED"
		if ((k, "trace-json") in TRACE_LOST)
			printf "  zero lost, fastest fault storm, trace --json -o, %-6s lost %s   %s\n", k ":", TRACE_LOST[k, "trace-json"], TRACE_LOST[k, "trace-json"] == 0 ? "met" : "MISSED"
		if ((k, "noloss") in TRACE_LOST)
			printf "  zero lost, fastest storm, --no-loss 64 KiB, %-6s lost %s   %s (slowdown %sx)\n", k ":", TRACE_LOST[k, "noloss"], TRACE_LOST[k, "noloss"] == 0 ? "met" : "MISSED", fmt(NOLOSS_SLOW[k], "%.2f")
	}
	for (i = 1; i <= nhost; i++) {
		o = HOSTLINE[i]
		if (o ~ /bench=drain_rate/ && match(o, /events_per_s=[0-9.e+]+/)) {
			n = substr(o, RSTART + 13, RLENGTH - 13) + 0
			m = o
			sub(/.*mode=/, "", m)
			sub(/ .*/, "", m)
			printf "  userspace drain >= 50 M events/s, %-8s      %.1f M/s   %s\n", m ":", n / 1e6,
				(n >= 50e6 ? "met" : sprintf("MISSED: %.0f%% of the target", n / 50e6 * 100))
		}
		# Both clocks: the CPU time it costs (the stable figure on a
		# shared host) and the wall time a user waits (report reads on
		# a second thread, so the two differ).
		# The trace's locality: real programs', or uniform (worst case).
		loc = ""
		if (match(o, / locality=[a-z]+/))
			loc = ", " substr(o, RSTART + 10, RLENGTH - 10)
		if (o ~ /bench=report / && match(o, / gb_per_s=[0-9.e+]+/)) {
			n = substr(o, RSTART + 10, RLENGTH - 10) + 0
			printf "  %-47s %.2f GB/s   %s\n", "memmon report >= 1 GB/s, CPU time" loc ":", n,
				(n >= 1 ? "met" : sprintf("MISSED: %.0f%% of the target", n * 100))
		}
		if (o ~ /bench=report / && match(o, /wall_gb_per_s=[0-9.e+]+/)) {
			n = substr(o, RSTART + 14, RLENGTH - 14) + 0
			printf "  %-47s %.2f GB/s   %s\n", "memmon report >= 1 GB/s, wall time" loc ":", n,
				(n >= 1 ? "met" : sprintf("MISSED: %.0f%% of the target", n * 100))
		}
		# Formatting must keep up with recording: #26.
		if (o ~ /bench=callgrind path=decode_/ && match(o, /ir_per_event=[0-9.]+/)) {
			n = substr(o, RSTART + 13, RLENGTH - 13) + 0
			m = o
			sub(/.*path=decode_/, "", m)
			sub(/ .*/, "", m)
			printf "  %-47s %.0f instructions   %s\n", "decoder <= 600 instructions/event, " m ":", n,
				n <= 600 ? "met" : sprintf("MISSED: %.1fx the target", n / 600)
		}
		if (o ~ /bench=report / && match(o, /peak_rss_kb=[0-9]+/)) {
			n = substr(o, RSTART + 12, RLENGTH - 12) / 1024
			printf "  %-47s %.1f MiB   %s\n", "memmon report peak RSS < 64 MiB" loc ":", n,
				n < 64 ? "met" : sprintf("MISSED by %.1f MiB", n - 64)
		}
	}
	print ""
}

# memmon serve (tests/bench/serve): the host's HOST bench=serve_* lines
# and the VM's SERVE lines, in one table.
function serve_table(	i, o, any, k) {
	any = nserve
	for (i = 1; i <= nhost; i++)
		if (HOSTLINE[i] ~ /bench=serve_/)
			any = 1
	if (!any)
		return
	print "== memmon serve (tests/bench/serve): host figures are real time on the host's CPUs"
	for (i = 1; i <= nhost; i++) {
		o = HOSTLINE[i]
		if (o !~ /bench=serve_fetch /)
			continue
		parse(o)
		if (!k++) {
			printf "  fetch over loopback of a found %.0f-byte recording, best of %s:\n", F["file_bytes"], F["runs"]
			printf "  %-8s %9s %9s %13s %11s %13s\n", "client", "seconds", "MB/s", "server CPU s", "server s/GB", "client CPU s"
		}
		printf "  %-8s %9.3f %9s %13.3f %11.3f %13.3f\n", F["client"], F["seconds"],
			F["client"] == "range0" ? "-" : sprintf("%.1f", F["mb_per_s"]), F["server_cpu_s"],
			F["server_cpu_s_per_gb"], F["client_cpu_s"]
	}
	if (k)
		print "  remote: memmon remote fetch (its digest check included); curl: curl -o; range0: Range: 0-0, one byte"
	for (i = 1; i <= nhost; i++) {
		o = HOSTLINE[i]
		parse(o)
		if (o ~ /bench=serve_list /)
			printf "  GET /recordings, the found file read %s: %.3f s, server CPU %.3f s\n",
				F["pass"] == "cold" ? "through (first list)" : "again (cached)", F["seconds"], F["server_cpu_s"]
		if (o ~ /bench=serve_idle /)
			printf "  idle server, %s s after its start: %.2f %% of one CPU, %.1f wakeups/s\n", F["seconds"], F["cpu_percent"], F["wakeups_per_s"]
	}
	if (nserve) {
		print "  in the VM (TCG real time: an emulated CPU, shares far above hardware's), a steady recording:"
		printf "  %-6s %-9s %8s %9s %9s %7s %9s %6s %8s\n", "kernel", "phase", "seconds", "server %", "record %", "VM %", "events/s", "polls", "worst s"
		for (i = 1; i <= nserve; i++) {
			parse(SERVELINE[i])
			printf "  %-6s %-9s %8.1f %9.2f %9s %7s %9s %6s %8s\n", kname(F["kernel"]), F["phase"], F["seconds"],
				F["server_cpu_percent"], fmt(F["record_cpu_percent"], "%.2f"), fmt(F["vm_busy_percent"], "%.1f"),
				fmt(F["events_per_s"], "%.0f"), F["phase"] == "idle" ? "-" : F["polls"], (F["polls"] > 0 ? fmt(F["worst_list_s"], "%.3f") : "-")
		}
		print "  %: CPU time over the window in % of one CPU; record: the memmon record child; VM: all of the VM's CPU;"
		print "  polled: a client lists the recordings once a second (worst s: its slowest answer)"
	}
	print ""
}

END {
	compute()
	whole_compute()
	fault_compute()
	print "memmon benchmarks, " INFO["date"] ", commit " INFO["commit"] "; host " INFO["host"] ", " INFO["host_cpu"] " x" INFO["host_cpus"]
	print "The VM runs Debian's kernel under qemu TCG, an emulator: its ns are EMULATED time, not hardware"
	print "time. Only ratios to untraced runs of the same boot, and costs compared with one another, mean"
	print "anything."
	print ""
	for (i = 1; i <= nvm; i++)
		workload_table(VMS[i])
	if (nwl) {
		for (j = 1; j <= ncfg; j++)
			printf "  %-10s %s\n", CFG[j], DESC[CFG[j]]
		print "n: runs (processes) of the configuration; ns/op: their median, each the best of its -k"
		print "repetitions; spread: (max - min) / median over the runs; untr ns/op: median of the untraced"
		print "reference runs (module not loaded): its partners just before it (smp), the pass's untraced runs"
		print "(icount); ratio = ns/op / untr ns/op; ev/op: events the tool recorded per op; seen: ev/op against"
		print "a complete record of those syscalls and faults; ns/event = (ns/op - untr ns/op) / ev/op;"
		print "/bpftrace, /ebpf, /lttng: ns/event over bpftrace's, the eBPF peer's, LTTng's, on the same workload. * perf and bpftrace losses are per"
		print "pass, over all its workloads."
		print ""
	}
	fault_table()
	whole_table()
	if (nenv) {
		print "== Session set-up: MEMMON_IOC_ENABLE and DISABLE, median over the memmon runs"
		for (e = 1; e <= nenv; e++) {
			v = ENV_[e]
			for (k = 1; k <= NEN[v]; k++)
				A[k] = EN[v, k]
			en = median(A, NEN[v])
			for (k = 1; k <= NEN[v]; k++)
				A[k] = DIS[v, k]
			printf "   %-12s (%d runs): ENABLE %.1f M ns, DISABLE %.1f M ns%s\n", v, NEN[v], en / 1e6, median(A, NEN[v]) / 1e6, v ~ /^icount/ ? " (emulated instructions)" : ""
		}
		print "   attaching every hook (first session) and detaching them (last): a one-off cost per session."
		print ""
	}
	throughput_table()
	if (nprofc) {
		print "== Where the instructions go: perf cpu-clock, whole VM, steady state of the " PROFW " loop (icount VM)"
		print "   % of the busy samples; the top symbols, then the instrumentation's total and other processes'"
		for (i = 1; i <= nprofc; i++) {
			c = PROFC[i]
			print "  " c ":"
			for (j = 1; j <= PROFN[c]; j++)
				print "    " PROFS[c, j]
		}
		print ""
	}
	if (nhost) {
		print "== Host (real hardware time, no VM)"
		for (i = 1; i <= nhost; i++) {
			l = HOSTLINE[i]
			# in their own table below
			if (l ~ /bench=serve_/)
				continue
			sub(/^HOST /, "", l)
			print "  " l
		}
		print ""
	}
	serve_table()
	targets()
	if (nskip) {
		print "== SKIPPED (not measured; never reported as results)"
		for (i = 1; i <= nskip; i++)
			printf "  %-16s %s\n", SKIPW[i], SKIPR[i]
		print ""
	}
	if (json != "") {
		printf "{\n  \"environment\": {" > json
		for (i = 1; i <= ninfo; i++)
			printf "%s\n    %s: %s", (i > 1 ? "," : ""), jstr(INFOKEYS[i]), jval(INFO[INFOKEYS[i]]) > json
		printf "\n  },\n  \"note\": \"VM figures are emulated time (qemu TCG): compare ratios, not absolute ns\",\n" > json
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
