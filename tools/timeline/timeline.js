/*
 * memmon timeline: draws the JSON that `memmon timeline` embeds
 * (#memmon-data; its fields are described in tools/timeline_out.c) on one
 * canvas. Plain JS, no library, no network. window.memmonTimeline is the
 * page's API (summary, view, zoom, select), used by tests/timeline/.
 *
 * Times are ns relative to D.t0. A bucket row is
 *   [index, (minor, major) x 5 classes, calls x 8 kinds, failed, mapped,
 *    unmapped, latency x 16, (rss anon, file, shmem, swap)?]
 */
(function () {
	'use strict';

	var D = JSON.parse(document.getElementById('memmon-data').textContent);
	var NC = D.classes.length, NK = D.kinds.length, NL = D.lat_lt_ns.length;
	var F_FAULT = 1, F_CALL = F_FAULT + 2 * NC, F_FAILED = F_CALL + NK;
	var F_MAPPED = F_FAILED + 1, F_UNMAPPED = F_MAPPED + 1, F_LAT = F_UNMAPPED + 1;
	var F_RSS = F_LAT + NL;
	var KIND_COL = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#d62728'];
	var CLASS_COL = ['#4e79a7', '#59a14f', '#b07aa1', '#e15759', '#888888'];
	var RSS_COL = ['#4e79a7', '#59a14f', '#b07aa1', '#e15759'];
	var GUTTER = 210, AXIS = 44, HEAT = 15, MARKS = 14, RSSH = 18, PAD = 5, THREAD = 15;
	var END = Math.max(D.duration, 1);
	var BW = D.bucket_ns;

	var canvas = document.getElementById('tl');
	var ctx = canvas.getContext('2d');
	var main = document.getElementById('main');
	var tip = document.getElementById('tip');

	/* ---- the data, indexed ------------------------------------------ */

	var procs = D.processes.slice();
	procs.sort(function (a, b) { return a.start - b.start || a.tgid - b.tgid; });
	var byTgid = {};
	var calls = D.detail.calls;		/* sorted by time */
	procs.forEach(function (p) {
		byTgid[p.tgid] = p;
		p.expanded = false;
		p.calls_detail = [];
		p.tid_detail = {};
		p.rssMax = 0;
		/*
		 * Net bytes mapped by the traced calls (mmap, brk up, minus
		 * munmap, brk down; as report counts them): not the virtual
		 * size, which mappings made before the trace also hold.
		 */
		p.netMax = 0;
		p.netMin = 0;
		var net = 0;
		p.buckets.forEach(function (r) {
			net += r[F_MAPPED] - r[F_UNMAPPED];
			p.netMax = Math.max(p.netMax, net);
			p.netMin = Math.min(p.netMin, net);
			if (r.length > F_RSS) {
				var s = r[F_RSS] + r[F_RSS + 1] + r[F_RSS + 2] + r[F_RSS + 3];
				if (s > p.rssMax)
					p.rssMax = s;
			}
		});
		p.threads.sort(function (a, b) { return a.start - b.start || a.tid - b.tid; });
	});
	calls.forEach(function (c) {
		var p = byTgid[c[2]];
		if (!p)
			return;
		p.calls_detail.push(c);
		(p.tid_detail[c[3]] = p.tid_detail[c[3]] || []).push(c);
	});
	var fsyncs = calls.filter(function (c) { return c[4] === 7; });
	/* [first, last, calls]: every call between first and last is in detail */
	var EXACT = D.detail.exact || [];

	function basename(s) {
		if (!s)
			return '';
		var i = s.lastIndexOf('/');
		return i >= 0 ? s.slice(i + 1) : s;
	}

	function procName(p) {
		return p.exe ? basename(p.exe) : '?';
	}

	/* Sum of bucket rows over [a, b) (ns), every process or one. */
	function aggregate(a, b, only) {
		var s = { faults: [], calls: [], failed: 0, mapped: 0, unmapped: 0, lat: [], records: 0 };
		var i;
		for (i = 0; i < NC; i++)
			s.faults.push([0, 0]);
		for (i = 0; i < NK; i++)
			s.calls.push(0);
		for (i = 0; i < NL; i++)
			s.lat.push(0);
		var lo = Math.floor(a / BW), hi = Math.ceil(b / BW);
		(only ? [only] : procs).forEach(function (p) {
			p.buckets.forEach(function (r) {
				if (r[0] < lo || r[0] >= hi)
					return;
				for (var c = 0; c < NC; c++) {
					s.faults[c][0] += r[F_FAULT + 2 * c];
					s.faults[c][1] += r[F_FAULT + 2 * c + 1];
				}
				for (var k = 0; k < NK; k++)
					s.calls[k] += r[F_CALL + k];
				s.failed += r[F_FAILED];
				s.mapped += r[F_MAPPED];
				s.unmapped += r[F_UNMAPPED];
				for (var l = 0; l < NL; l++)
					s.lat[l] += r[F_LAT + l];
			});
		});
		s.lost = 0;
		D.lost_intervals.forEach(function (x) {
			if (x[1] >= a && x[0] < b)
				s.lost += x[2];
		});
		s.marks = D.marks.filter(function (m) { return m[0] >= a && m[0] < b; }).length;
		s.detail = 0;
		for (i = lowerBound(calls, a); i < calls.length && calls[i][0] < b; i++)
			s.detail++;
		return s;
	}

	function lowerBound(arr, t) {
		var lo = 0, hi = arr.length;
		while (lo < hi) {
			var m = (lo + hi) >> 1;
			if (arr[m][0] < t)
				lo = m + 1;
			else
				hi = m;
		}
		return lo;
	}

	/* ---- view state --------------------------------------------------- */

	var view = { a: 0, b: END };
	var sel = null;			/* [a, b] ns, or null */
	var lanes = [];			/* {y, h, p, thread?}, y in content pixels */
	/*
	 * The canvas is the viewport of #main (sticky), never the whole
	 * content: a canvas taller than ~32k pixels does not draw, and a
	 * trace may have thousands of lanes. #spacer makes the scroll height;
	 * lanes are drawn shifted by S, the axis stays on top.
	 */
	var W = 0, H = 0, VH = 0, S = 0;
	var spacer = document.getElementById('spacer');

	function X(t) {
		return GUTTER + (t - view.a) / (view.b - view.a) * (W - GUTTER);
	}

	function T(x) {
		return view.a + (x - GUTTER) / (W - GUTTER) * (view.b - view.a);
	}

	function setView(a, b) {
		var minSpan = 1000;	/* 1 us */
		if (!(b > a))
			return;
		if (b - a < minSpan) {
			var m = (a + b) / 2;
			a = m - minSpan / 2;
			b = m + minSpan / 2;
		}
		var span = Math.min(b - a, END * 1.1);
		if (a < -END * 0.05)
			a = -END * 0.05;
		if (a + span > END * 1.05)
			a = END * 1.05 - span;
		view.a = a;
		view.b = a + span;
		draw();
	}

	function zoom(f, center) {
		if (center === undefined)
			center = (view.a + view.b) / 2;
		setView(center - (center - view.a) * f, center + (view.b - center) * f);
	}

	function layout() {
		var y = AXIS;
		lanes = [];
		procs.forEach(function (p) {
			var h = PAD + HEAT + 2 + MARKS + 2 + RSSH + PAD;
			lanes.push({ y: y, h: h, p: p });
			y += h;
			if (p.expanded) {
				p.threads.forEach(function (t) {
					lanes.push({ y: y, h: THREAD, p: p, thread: t });
					y += THREAD;
				});
			}
		});
		return y + 20;
	}

	function resize() {
		var dpr = window.devicePixelRatio || 1;
		W = Math.max(main.clientWidth, 400);
		H = layout();
		VH = Math.max(main.clientHeight, 200);
		spacer.style.height = Math.max(0, H - VH) + 'px';
		S = Math.min(main.scrollTop, Math.max(0, H - VH));
		if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(VH * dpr)) {
			canvas.width = Math.round(W * dpr);
			canvas.height = Math.round(VH * dpr);
			canvas.style.width = W + 'px';
			canvas.style.height = VH + 'px';
		}
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	}

	/* ---- drawing ------------------------------------------------------ */

	function fmtDur(ns) {
		var a = Math.abs(ns);
		if (a >= 1e9)
			return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + ' s';
		if (a >= 1e6)
			return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 2) + ' ms';
		if (a >= 1e3)
			return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 2) + ' \u00b5s';
		return Math.round(ns) + ' ns';
	}

	function fmtBytes(v) {
		var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
		while (v >= 1024 && i < u.length - 1) {
			v /= 1024;
			i++;
		}
		return (i ? v.toFixed(1) : v) + ' ' + u[i];
	}

	function pad(n, w) {
		var s = String(n);
		while (s.length < w)
			s = '0' + s;
		return s;
	}

	function fmtWall(t) {
		if (!D.has_rt)
			return '';
		var ms = D.rt0_ms + t / 1e6;
		var d = new Date(Math.floor(ms));
		return pad(d.getUTCHours(), 2) + ':' + pad(d.getUTCMinutes(), 2) + ':' +
			pad(d.getUTCSeconds(), 2) + '.' + pad(Math.floor((ms % 1000 + 1000) % 1000 * 1000), 6) + ' UTC';
	}

	function niceStep(span, n) {
		var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
		return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
	}

	function drawAxis() {
		/* room for the wall clock's "hh:mm:ss.fff" under each tick */
		var step = niceStep(view.b - view.a, Math.max(2, (W - GUTTER) / (D.has_rt ? 150 : 110)));
		var t = Math.ceil(view.a / step) * step;
		ctx.fillStyle = '#fff';
		ctx.fillRect(0, 0, W, AXIS);
		ctx.lineWidth = 1;
		ctx.strokeStyle = '#ccc';
		ctx.beginPath();
		ctx.moveTo(0, AXIS - 0.5);
		ctx.lineTo(W, AXIS - 0.5);
		ctx.stroke();
		/* the exact windows, where every call is in detail: green */
		ctx.fillStyle = '#2ca02c';
		EXACT.forEach(function (w) {
			var a = X(w[0]), b = X(w[1]);
			if (b < GUTTER || a > W)
				return;
			a = Math.max(GUTTER, a);
			ctx.fillRect(a, AXIS - 4, Math.max(2, b - a), 3);
		});
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		ctx.fillStyle = '#333';
		ctx.fillText('relative time', 6, 6);
		if (D.has_rt)
			ctx.fillText('wall clock', 6, 22);
		for (; t <= view.b; t += step) {
			var x = X(t);
			if (x < GUTTER)
				continue;
			ctx.strokeStyle = '#eee';
			ctx.beginPath();
			ctx.moveTo(Math.round(x) + 0.5, AXIS);
			ctx.lineTo(Math.round(x) + 0.5, VH);
			ctx.stroke();
			ctx.strokeStyle = '#999';
			ctx.beginPath();
			ctx.moveTo(Math.round(x) + 0.5, AXIS - 6);
			ctx.lineTo(Math.round(x) + 0.5, AXIS);
			ctx.stroke();
			ctx.fillStyle = '#333';
			var digits = Math.max(0, Math.min(9, -Math.floor(Math.log10(step / 1e9))));
			ctx.fillText('+' + (t / 1e9).toFixed(digits) + ' s', x + 2, 6);
			if (D.has_rt) {
				ctx.fillStyle = '#777';
				var w = fmtWall(t);
				ctx.fillText(w.slice(0, Math.max(12, 9 + digits)), x + 2, 22);
			}
		}
	}

	/* Per pixel column sums of one quantity of a lane's buckets in view. */
	function columns(p, get) {
		var n = Math.ceil(W - GUTTER), col = new Float64Array(n + 1), max = 0;
		var lo = Math.floor(view.a / BW), hi = Math.ceil(view.b / BW);
		p.buckets.forEach(function (r) {
			if (r[0] < lo || r[0] > hi)
				return;
			var v = get(r);
			if (!v)
				return;
			var x0 = X(r[0] * BW) - GUTTER, x1 = X((r[0] + 1) * BW) - GUTTER;
			var c0 = Math.max(0, Math.floor(x0)), c1 = Math.min(n, Math.max(c0 + 1, Math.ceil(x1)));
			for (var c = c0; c < c1; c++)
				col[c] += v;
		});
		for (var c = 0; c <= n; c++)
			if (col[c] > max)
				max = col[c];
		return { col: col, max: max };
	}

	function drawHeat(p, y) {
		/* one row per class (anon, file, shmem, swap+other), then majors */
		var rows = [[0], [1], [2], [3, 4]], h = HEAT / 5;
		var k;
		for (k = 0; k < 5; k++) {
			var get = k < 4 ? (function (cls) {
				return function (r) {
					var v = 0;
					cls.forEach(function (c) { v += r[F_FAULT + 2 * c] + r[F_FAULT + 2 * c + 1]; });
					return v;
				};
			})(rows[k]) : function (r) {
				var v = 0;
				for (var c = 0; c < NC; c++)
					v += r[F_FAULT + 2 * c + 1];
				return v;
			};
			var cs = columns(p, get);
			if (!cs.max)
				continue;
			ctx.fillStyle = k < 4 ? CLASS_COL[rows[k][0]] : '#000';
			var lm = Math.log(1 + cs.max);
			for (var c = 0; c < cs.col.length; c++) {
				if (!cs.col[c])
					continue;
				ctx.globalAlpha = 0.25 + 0.75 * Math.log(1 + cs.col[c]) / lm;
				ctx.fillRect(GUTTER + c, y + k * h, 1, h - 0.5);
			}
			ctx.globalAlpha = 1;
		}
	}

	function drawCalls(list, p, y, h, withBuckets) {
		var i, x0, x1;
		if (withBuckets) {
			/* the calls not drawn one by one: per-bucket counts, faint */
			var cs = columns(p, function (r) {
				var v = 0;
				for (var k = 0; k < NK; k++)
					v += r[F_CALL + k];
				return v;
			});
			ctx.fillStyle = '#bbb';
			for (var c = 0; c < cs.col.length; c++)
				if (cs.col[c])
					ctx.fillRect(GUTTER + c, y + h - 3, 1, 3);
		}
		for (i = lowerBound(list, view.a - 1e9); i < list.length && list[i][0] <= view.b; i++) {
			var m = list[i];
			x0 = X(m[0]);
			x1 = X(m[0] + m[1]);
			if (x1 < GUTTER)
				continue;
			ctx.fillStyle = KIND_COL[m[4]] || '#000';
			ctx.fillRect(Math.max(GUTTER, x0), y + 1, Math.max(1.5, x1 - x0), h - 5);
			if (m[5]) {
				ctx.fillStyle = '#d00';
				ctx.beginPath();
				ctx.moveTo(x0 - 3, y - 2);
				ctx.lineTo(x0 + 3, y - 2);
				ctx.lineTo(x0, y + 3);
				ctx.fill();
			}
		}
	}

	function drawNet(p, y) {
		var span = p.netMax - p.netMin, net = 0, first = true;
		if (!span)
			return;
		function Y(v) {
			return y + RSSH - (v - p.netMin) / span * (RSSH - 2);
		}
		ctx.strokeStyle = '#222';
		ctx.lineWidth = 1;
		ctx.beginPath();
		ctx.moveTo(Math.max(GUTTER, X(p.start)), Y(0));
		p.buckets.forEach(function (r) {
			if (r[F_MAPPED] === r[F_UNMAPPED])
				return;
			var x = X(r[0] * BW);
			ctx.lineTo(Math.max(GUTTER, Math.min(W, x)), Y(net));
			net += r[F_MAPPED] - r[F_UNMAPPED];
			ctx.lineTo(Math.max(GUTTER, Math.min(W, x)), Y(net));
			first = false;
		});
		if (!first)
			ctx.lineTo(Math.max(GUTTER, Math.min(W, X(p.end))), Y(net));
		ctx.stroke();
		ctx.fillStyle = '#222';
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		ctx.fillText('mapped ' + fmtBytes(p.netMax), 110, y - 9);
	}

	function drawRss(p, y) {
		drawNet(p, y);
		if (!p.rssMax)
			return;
		var lo = Math.floor(view.a / BW), hi = Math.ceil(view.b / BW);
		var last = null;
		p.buckets.forEach(function (r) {
			if (r.length <= F_RSS)
				return;
			if (r[0] > hi)
				return;
			var x0 = Math.max(GUTTER, X(r[0] * BW));
			var x1 = Math.min(W, X((r[0] + 1) * BW));
			if (last && r[0] >= lo) {
				/* hold the previous value until this bucket */
				stack(last, Math.max(GUTTER, X((last[0] + 1) * BW)), x0, y);
			}
			if (r[0] >= lo)
				stack(r, x0, x1, y);
			last = r;
		});
		if (last && last[0] < hi)
			stack(last, Math.max(GUTTER, X((last[0] + 1) * BW)), Math.min(W, X(p.end)), y);
		ctx.fillStyle = '#555';
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		ctx.fillText('rss ' + fmtBytes(p.rssMax), 110, y + 2);

		function stack(r, x0, x1, y) {
			if (x1 <= x0)
				return;
			var base = y + RSSH;
			for (var k = 0; k < 4; k++) {
				var hh = r[F_RSS + k] / p.rssMax * RSSH;
				if (!hh)
					continue;
				ctx.fillStyle = RSS_COL[k];
				ctx.globalAlpha = 0.55;
				ctx.fillRect(x0, base - hh, Math.max(1, x1 - x0), hh);
				base -= hh;
			}
			ctx.globalAlpha = 1;
		}
	}

	function drawLane(l, index) {
		var p = l.p, y = l.y;
		ctx.fillStyle = index % 2 ? '#fcfcfc' : '#f3f5f7';
		ctx.fillRect(0, y, W, l.h);
		ctx.font = '12px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		if (l.thread) {
			var t = l.thread;
			ctx.fillStyle = '#555';
			ctx.fillText('   thread ' + t.tid, 8, y + 1);
			var x0 = Math.max(GUTTER, X(t.start)), x1 = Math.min(W, X(t.end));
			ctx.fillStyle = '#c9d3dd';
			if (x1 >= GUTTER && x0 <= W)
				ctx.fillRect(x0, y + THREAD / 2 - 1, Math.max(1, x1 - x0), 2);
			drawCalls(p.tid_detail[t.tid] || [], p, y + 2, THREAD - 2, false);
			return;
		}
		ctx.fillStyle = '#222';
		var tri = p.threads.length > 1 ? (p.expanded ? '\u25be ' : '\u25b8 ') : '  ';
		ctx.fillText(tri + p.tgid + ' ' + procName(p), 6, y + 3);
		ctx.fillStyle = '#777';
		ctx.font = '10px system-ui, sans-serif';
		var sub = p.threads.length + ' thr';
		if (p.exited)
			sub += ', ' + p.exit_text;
		ctx.fillText(sub, 18, y + 19);
		/* lifetime */
		var a = Math.max(GUTTER, X(p.start)), b = Math.min(W, X(p.exited ? p.exit_t : p.end));
		if (b >= GUTTER && a <= W) {
			ctx.fillStyle = '#dfe6ec';
			ctx.fillRect(a, y + 2, Math.max(1, b - a), l.h - 4);
		}
		drawHeat(p, y + PAD);
		drawCalls(p.calls_detail, p, y + PAD + HEAT + 2, MARKS, true);
		drawRss(p, y + PAD + HEAT + 2 + MARKS + 2);
		/* exec: a diamond and the new name; exit: a cross */
		ctx.font = '10px system-ui, sans-serif';
		p.events.forEach(function (e) {
			if (e[2] === null)
				return;
			var x = X(e[0]);
			if (x < GUTTER || x > W)
				return;
			ctx.fillStyle = '#333';
			ctx.beginPath();
			ctx.moveTo(x, y + 1);
			ctx.lineTo(x + 4, y + 5);
			ctx.lineTo(x, y + 9);
			ctx.lineTo(x - 4, y + 5);
			ctx.fill();
			ctx.fillText('exec ' + basename(e[2]), x + 6, y + l.h - 13);
		});
		if (p.exited) {
			var xe = X(p.exit_t);
			if (xe >= GUTTER && xe <= W) {
				ctx.strokeStyle = '#333';
				ctx.beginPath();
				ctx.moveTo(xe - 4, y + 2);
				ctx.lineTo(xe + 4, y + 10);
				ctx.moveTo(xe + 4, y + 2);
				ctx.lineTo(xe - 4, y + 10);
				ctx.stroke();
			}
		}
	}

	function laneOf(p) {
		for (var i = 0; i < lanes.length; i++)
			if (lanes[i].p === p && !lanes[i].thread)
				return lanes[i];
		return null;
	}

	function drawForks() {
		ctx.strokeStyle = '#6a7f94';
		ctx.fillStyle = '#6a7f94';
		ctx.lineWidth = 1;
		procs.forEach(function (p) {
			var from = laneOf(p);
			p.events.forEach(function (e) {
				if (e[2] !== null || !byTgid[e[1]])
					return;
				var to = laneOf(byTgid[e[1]]), x = X(e[0]);
				if (!to || x < GUTTER || x > W)
					return;
				var y0 = from.y + from.h / 2, y1 = to.y + 3;
				ctx.beginPath();
				ctx.moveTo(x, y0);
				ctx.lineTo(x, y1);
				ctx.stroke();
				ctx.beginPath();
				ctx.moveTo(x - 3, y1 - 5);
				ctx.lineTo(x + 3, y1 - 5);
				ctx.lineTo(x, y1);
				ctx.fill();
			});
		});
	}

	function drawRules() {
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		/* lost intervals: shaded, at least 2 px, with their counts */
		D.lost_intervals.forEach(function (x) {
			var a = X(x[0]), b = X(x[1]);
			if (b < GUTTER || a > W)
				return;
			a = Math.max(GUTTER, a);
			ctx.fillStyle = 'rgba(220,40,40,0.18)';
			ctx.fillRect(a, S + AXIS, Math.max(2, b - a), VH - AXIS);
			ctx.fillStyle = '#b00';
			ctx.fillText('lost ' + x[2] + ' (cpu' + x[3] + ')', a + 3, S + VH - 16);
		});
		/* fsync rules while they stay readable; the marks show the rest */
		var lo = lowerBound(fsyncs, view.a), hi = lowerBound(fsyncs, view.b);
		fsyncs.slice(lo, hi - lo > 200 ? lo : hi).forEach(function (c) {
			var x = X(c[0]);
			if (x < GUTTER || x > W)
				return;
			ctx.strokeStyle = 'rgba(214,39,40,0.5)';
			ctx.setLineDash([2, 3]);
			ctx.beginPath();
			ctx.moveTo(Math.round(x) + 0.5, S + AXIS);
			ctx.lineTo(Math.round(x) + 0.5, S + VH);
			ctx.stroke();
			ctx.setLineDash([]);
			ctx.fillStyle = '#a22';
			ctx.fillText('fsync', x + 2, S + AXIS + 2);
		});
		D.marks.forEach(function (m) {
			var x = X(m[0]);
			if (x < GUTTER || x > W)
				return;
			ctx.strokeStyle = '#7a4fbf';
			ctx.setLineDash([5, 3]);
			ctx.beginPath();
			ctx.moveTo(Math.round(x) + 0.5, S + AXIS);
			ctx.lineTo(Math.round(x) + 0.5, S + VH);
			ctx.stroke();
			ctx.setLineDash([]);
			ctx.fillStyle = '#5a2f9f';
			ctx.fillText(m[3], x + 3, S + AXIS + 12);
		});
	}

	function drawSelection() {
		if (!sel)
			return;
		var a = Math.max(GUTTER, X(sel[0])), b = Math.min(W, X(sel[1]));
		if (b < GUTTER || a > W)
			return;
		ctx.fillStyle = 'rgba(40,110,220,0.15)';
		ctx.fillRect(a, S + AXIS, Math.max(1, b - a), VH - AXIS);
		ctx.strokeStyle = 'rgba(40,110,220,0.8)';
		ctx.strokeRect(a + 0.5, S + AXIS + 0.5, Math.max(1, b - a) - 1, VH - AXIS - 1);
	}

	var drawn = 0;
	function draw() {
		resize();
		ctx.clearRect(0, 0, W, VH);
		ctx.save();
		ctx.translate(0, -S);
		lanes.forEach(function (l, i) {
			if (l.y + l.h >= S + AXIS && l.y <= S + VH)
				drawLane(l, i);
		});
		drawForks();
		drawRules();
		drawSelection();
		ctx.restore();
		drawAxis();
		ctx.strokeStyle = '#ccc';
		ctx.beginPath();
		ctx.moveTo(GUTTER - 0.5, 0);
		ctx.lineTo(GUTTER - 0.5, VH);
		ctx.stroke();
		drawn++;
	}

	/* ---- the side panel ----------------------------------------------- */

	function esc(s) {
		return String(s).replace(/[&<>"]/g, function (c) {
			return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
		});
	}

	function selectionSummary() {
		if (!sel)
			return null;
		var s = aggregate(sel[0], sel[1]);
		var out = {
			start_ns: sel[0], end_ns: sel[1], calls: {}, calls_total: 0, failed: s.failed,
			bytes_mapped: s.mapped, bytes_unmapped: s.unmapped, faults: {}, faults_total: 0,
			lost: s.lost, marks: s.marks, detail_calls: s.detail, latency: s.lat,
			bucket_ns: BW
		};
		D.kinds.forEach(function (k, i) {
			out.calls[k] = s.calls[i];
			out.calls_total += s.calls[i];
		});
		D.classes.forEach(function (c, i) {
			out.faults[c] = { minor: s.faults[i][0], major: s.faults[i][1] };
			out.faults_total += s.faults[i][0] + s.faults[i][1];
		});
		return out;
	}

	function showSelection() {
		var el = document.getElementById('sel');
		var s = selectionSummary();
		if (!s) {
			el.textContent = 'Drag over the lanes to select an interval.';
			drawLatency(null);
			return;
		}
		var h = '<p>+' + (s.start_ns / 1e9).toFixed(6) + ' s \u2026 +' + (s.end_ns / 1e9).toFixed(6) +
			' s (' + fmtDur(s.end_ns - s.start_ns) + ', at ' + fmtDur(BW) + ' buckets)</p>';
		h += '<table><tr><th>calls</th><th>count</th></tr>';
		D.kinds.forEach(function (k, i) {
			h += '<tr><td><span style="color:' + KIND_COL[i] + '">\u25a0</span> ' + k + '</td><td>' +
				s.calls[k] + '</td></tr>';
		});
		h += '<tr><td>failed</td><td>' + s.failed + '</td></tr>';
		h += '<tr><td>bytes mapped</td><td>' + fmtBytes(s.bytes_mapped) + '</td></tr>';
		h += '<tr><td>bytes unmapped</td><td>' + fmtBytes(s.bytes_unmapped) + '</td></tr></table>';
		h += '<table><tr><th>faults</th><th>minor</th><th>major</th></tr>';
		D.classes.forEach(function (c, i) {
			h += '<tr><td><span style="color:' + CLASS_COL[i] + '">\u25a0</span> ' + c + '</td><td>' +
				s.faults[c].minor + '</td><td>' + s.faults[c].major + '</td></tr>';
		});
		h += '<tr><td>total</td><td colspan="2">' + s.faults_total + '</td></tr></table>';
		h += '<p>lost events: ' + s.lost + '; markers: ' + s.marks + '; calls in detail: ' +
			s.detail_calls + '</p>';
		el.innerHTML = h;
		el.setAttribute('data-calls', s.calls_total);
		el.setAttribute('data-faults', s.faults_total);
		drawLatency(s.latency);
	}

	function drawLatency(lat) {
		var c = document.getElementById('lat'), g = c.getContext('2d');
		g.clearRect(0, 0, c.width, c.height);
		g.font = '10px system-ui, sans-serif';
		g.fillStyle = '#555';
		if (!lat) {
			g.fillText('(no selection)', 10, 20);
			return;
		}
		var max = Math.max.apply(null, lat), bw = (c.width - 20) / NL;
		if (!max) {
			g.fillText('no faults in the selection', 10, 20);
			return;
		}
		for (var i = 0; i < NL; i++) {
			var h = lat[i] / max * (c.height - 40);
			g.fillStyle = '#4e79a7';
			g.fillRect(10 + i * bw, c.height - 25 - h, bw - 2, h);
			if (lat[i]) {
				g.fillStyle = '#333';
				g.fillText(String(lat[i]), 10 + i * bw, c.height - 28 - h);
			}
		}
		g.fillStyle = '#555';
		g.fillText('< ' + fmtDur(D.lat_lt_ns[0]), 8, c.height - 12);
		g.fillText('\u2265 ' + fmtDur(D.lat_lt_ns[NL - 2]), c.width - 60, c.height - 12);
		g.fillText('faults by time in the handler (log2 buckets)', 60, c.height - 2);
	}

	function select(a, b) {
		if (a === null || a === undefined) {
			sel = null;
		} else {
			if (b < a) {
				var t = a;
				a = b;
				b = t;
			}
			sel = [Math.max(0, a), Math.min(END, b)];
		}
		showSelection();
		draw();
	}

	/* ---- interaction -------------------------------------------------- */

	var drag = null;

	/* y: on the canvas; cy: in the content (lanes' coordinates) */
	function pos(ev) {
		var r = canvas.getBoundingClientRect();
		return { x: ev.clientX - r.left, y: ev.clientY - r.top, cy: ev.clientY - r.top + S };
	}

	canvas.addEventListener('wheel', function (ev) {
		var p = pos(ev);
		if (p.x < GUTTER)
			return;
		ev.preventDefault();
		zoom(Math.exp(ev.deltaY * 0.0015), T(p.x));
	}, { passive: false });

	canvas.addEventListener('mousedown', function (ev) {
		var p = pos(ev);
		if (p.x < GUTTER) {
			for (var i = 0; i < lanes.length; i++) {
				var l = lanes[i];
				if (!l.thread && p.cy >= l.y && p.cy < l.y + l.h && p.y >= AXIS) {
					l.p.expanded = !l.p.expanded;
					draw();
				}
			}
			return;
		}
		drag = { x: p.x, t: T(p.x), a: view.a, b: view.b, pan: ev.shiftKey || p.y < AXIS || ev.button === 1 };
		ev.preventDefault();
	});

	window.addEventListener('mousemove', function (ev) {
		var p = pos(ev);
		if (drag) {
			if (drag.pan) {
				var dt = (p.x - drag.x) / (W - GUTTER) * (drag.b - drag.a);
				setView(drag.a - dt, drag.b - dt);
			} else if (Math.abs(p.x - drag.x) > 2) {
				sel = [Math.min(drag.t, T(p.x)), Math.max(drag.t, T(p.x))];
				draw();
			}
			return;
		}
		hover(p, ev);
	});

	window.addEventListener('mouseup', function (ev) {
		if (!drag)
			return;
		var p = pos(ev);
		if (!drag.pan && Math.abs(p.x - drag.x) > 2)
			select(drag.t, T(p.x));
		drag = null;
	});

	canvas.addEventListener('dblclick', function () {
		if (sel)
			setView(sel[0], sel[1]);
	});

	canvas.addEventListener('mouseleave', function () {
		tip.hidden = true;
	});

	window.addEventListener('keydown', function (ev) {
		var span = view.b - view.a;
		if (ev.key === '+' || ev.key === '=')
			zoom(0.5);
		else if (ev.key === '-')
			zoom(2);
		else if (ev.key === '0')
			setView(0, END);
		else if (ev.key === 'ArrowLeft')
			setView(view.a - span / 5, view.b - span / 5);
		else if (ev.key === 'ArrowRight')
			setView(view.a + span / 5, view.b + span / 5);
		else if (ev.key === 'Escape')
			select(null);
	});

	document.getElementById('zoom-in').onclick = function () { zoom(0.5); };
	document.getElementById('zoom-out').onclick = function () { zoom(2); };
	document.getElementById('reset').onclick = function () { setView(0, END); };
	document.getElementById('zoom-sel').onclick = function () {
		if (sel)
			setView(sel[0], sel[1]);
	};
	document.getElementById('expand').onclick = function () {
		var any = procs.some(function (p) { return !p.expanded; });
		procs.forEach(function (p) { p.expanded = any; });
		draw();
	};
	window.addEventListener('resize', draw);
	main.addEventListener('scroll', function () {
		tip.hidden = true;
		draw();
	});

	function hover(p, ev) {
		var text = null;
		if (p.x >= GUTTER && p.x <= W && p.y >= AXIS && p.y <= VH) {
			var t = T(p.x), slack = 4 / (W - GUTTER) * (view.b - view.a);
			var l = null;
			for (var i = 0; i < lanes.length; i++)
				if (p.cy >= lanes[i].y && p.cy < lanes[i].y + lanes[i].h)
					l = lanes[i];
			if (l) {
				var list = l.thread ? (l.p.tid_detail[l.thread.tid] || []) : l.p.calls_detail;
				var best = null, bd = Infinity;
				for (var j = lowerBound(list, t - slack - 1e9); j < list.length && list[j][0] <= t + slack; j++) {
					var m = list[j], d = t < m[0] ? m[0] - t : t > m[0] + m[1] ? t - m[0] - m[1] : 0;
					if (d <= slack && d < bd) {
						best = m;
						bd = d;
					}
				}
				if (best)
					text = best[6] + '\n' + D.kinds[best[4]] + (best[5] ? ', FAILED' : '') +
						' at +' + (best[0] / 1e9).toFixed(6) + ' s ' + fmtWall(best[0]) +
						', took ' + fmtDur(best[1]) + '\npid ' + best[2] + ' tid ' + best[3];
				D.marks.forEach(function (m) {
					if (Math.abs(m[0] - t) <= slack)
						text = 'marker: ' + m[3] + '\n+' + (m[0] / 1e9).toFixed(6) + ' s, pid ' + m[1];
				});
				D.lost_intervals.forEach(function (x) {
					if (!text && t >= x[0] - slack && t <= x[1] + slack)
						text = x[2] + ' events lost on cpu' + x[3] + '\n+' + (x[0] / 1e9).toFixed(6) +
							' s \u2026 +' + (x[1] / 1e9).toFixed(6) + ' s';
				});
				if (!text && !l.thread) {
					var b = Math.floor(t / BW), r = null;
					l.p.buckets.forEach(function (x) {
						if (x[0] === b)
							r = x;
					});
					text = l.p.tgid + ' ' + (l.p.exe || '?');
					if (l.p.parent)
						text += ' (child of ' + l.p.parent + ')';
					if (r) {
						var f = [];
						D.classes.forEach(function (c, i) {
							if (r[F_FAULT + 2 * i] || r[F_FAULT + 2 * i + 1])
								f.push(c + ' ' + r[F_FAULT + 2 * i] + '/' + r[F_FAULT + 2 * i + 1]);
						});
						text += '\nat +' + (b * BW / 1e9).toFixed(6) + ' s (' + fmtDur(BW) + '): faults minor/major ' +
							(f.join(', ') || 'none');
						var cs = [];
						D.kinds.forEach(function (k, i) {
							if (r[F_CALL + i])
								cs.push(k + ' ' + r[F_CALL + i]);
						});
						if (cs.length)
							text += '\ncalls ' + cs.join(', ');
						if (r.length > F_RSS)
							text += '\nrss anon ' + fmtBytes(r[F_RSS]) + ', file ' + fmtBytes(r[F_RSS + 1]) +
								', shmem ' + fmtBytes(r[F_RSS + 2]) + ', swap ' + fmtBytes(r[F_RSS + 3]);
					}
				}
			}
		}
		if (!text) {
			tip.hidden = true;
			return;
		}
		tip.textContent = text;
		tip.hidden = false;
		var mr = main.getBoundingClientRect();
		tip.style.left = Math.min(ev.clientX - mr.left + 14, W - 300) + 'px';
		tip.style.top = (ev.clientY - mr.top + main.scrollTop + 14) + 'px';
	}

	/* ---- header, legend, API ------------------------------------------ */

	function summary() {
		var tot = aggregate(-1, END + BW * 2);
		var threads = 0;
		var out = {
			title: D.title, records: D.records, duration_ns: D.duration, bucket_ns: BW,
			lost: D.lost, lost_intervals: D.lost_intervals.length, marks: D.marks.length,
			detail_kept: D.detail.kept, detail_total: D.detail.total,
			exact_windows: EXACT.length, exact_calls: EXACT.reduce(function (n, w) { return n + w[2]; }, 0),
			lanes: lanes.length, processes: [], calls: {}, faults: {}, failed: tot.failed,
			bytes_mapped: tot.mapped, bytes_unmapped: tot.unmapped, view: [view.a, view.b],
			drawn: drawn
		};
		D.kinds.forEach(function (k, i) { out.calls[k] = tot.calls[i]; });
		D.classes.forEach(function (c, i) { out.faults[c] = { minor: tot.faults[i][0], major: tot.faults[i][1] }; });
		procs.forEach(function (p) {
			var s = aggregate(-1, END + BW * 2, p), f = {}, c = {}, ft = 0, ct = 0;
			D.classes.forEach(function (cl, i) {
				f[cl] = { minor: s.faults[i][0], major: s.faults[i][1] };
				ft += s.faults[i][0] + s.faults[i][1];
			});
			D.kinds.forEach(function (k, i) {
				c[k] = s.calls[i];
				ct += s.calls[i];
			});
			threads += p.threads.length;
			out.processes.push({
				tgid: p.tgid, parent: p.parent, exe: p.exe, name: procName(p), exited: p.exited,
				threads: p.threads.length, start_ns: p.start, calls_by_kind: c, calls_total: ct,
				failed: s.failed, faults_by_class: f, faults_total: ft,
				bytes_mapped: s.mapped, bytes_unmapped: s.unmapped
			});
		});
		out.threads = threads;
		return out;
	}

	document.getElementById('title').textContent = D.title;
	(function () {
		var s = summary();
		var info = s.processes.length + ' processes, ' + s.threads + ' threads, ' + D.records + ' records over ' +
			fmtDur(D.duration) + (D.has_rt ? ' from ' + fmtWall(0) : '') + '; ' + D.lost + ' events lost' +
			'; ' + D.detail.kept + ' of ' + D.detail.total + ' calls drawn one by one' +
			(EXACT.length && D.detail.kept < D.detail.total ? ' (all of them in the ' + EXACT.length +
			 ' windows marked green on the time axis)' : '') +
			(D.truncated ? '; TRUNCATED trace' : '');
		document.getElementById('info').textContent = info;
		var lg = '';
		D.kinds.forEach(function (k, i) {
			lg += '<span class="sw" style="background:' + KIND_COL[i] + '"></span>' + esc(k);
		});
		lg += ' &nbsp;| faults:';
		D.classes.forEach(function (c, i) {
			lg += '<span class="sw" style="background:' + CLASS_COL[i] + '"></span>' + esc(c);
		});
		lg += '<span class="sw" style="background:#000"></span>major';
		lg += ' &nbsp;| <span style="color:#d00">\u25bc</span> failed call';
		lg += '<span class="sw" style="background:rgba(220,40,40,0.3)"></span>lost events';
		document.getElementById('legend').innerHTML = lg;
	})();

	window.memmonTimeline = {
		data: D,
		summary: summary,
		view: function () { return [view.a, view.b]; },
		setView: setView,
		zoom: zoom,
		select: select,
		selection: function () { return sel ? sel.slice() : null; },
		selectionSummary: selectionSummary,
		/*
		 * Scroll tgid's lane into view; the canvas y of the middle of its
		 * call marks (where a mouse hovers them), or null.
		 */
		reveal: function (tgid) {
			var l = byTgid[tgid] ? laneOf(byTgid[tgid]) : null;
			if (!l)
				return null;
			main.scrollTop = Math.max(0, l.y - AXIS - 40);
			draw();
			return l.y - S + PAD + HEAT + 2 + MARKS / 2;
		},
		expand: function (tgid, on) {
			if (byTgid[tgid]) {
				byTgid[tgid].expanded = on !== false;
				draw();
			}
		},
		X: X,
		T: T
	};
	draw();
	showSelection();
})();
