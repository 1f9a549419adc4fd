/*
 * report.js - the script of `callprof export -f html`: reads the profile
 * that report/html.c embedded as JSON (the script element with id
 * "profile", layout in html.c's comment) and draws the page: a flame or
 * icicle graph on a canvas (click to zoom, hover for figures, search
 * highlights), a call tree and a flat profile as sortable tables, the
 * callers and callees of the selected function, and the run's facts as
 * `callprof report`'s banner gives them.  Two switches change the view
 * without exporting again: the metric (what widths, percentages and the
 * tables' order weigh: total, cpu, wait, inactive, samples or calls, as
 * the profile has them; first the export's weight) and the thread (all
 * threads merged, all threads side by side, or one thread: html.c writes
 * the merged tree and every thread's).
 *
 * Plain JavaScript, no libraries: the page must work from disk with no
 * network.  It must stay quick with a million contexts, so the tree lives
 * in typed arrays in depth-first order (a node's subtree is the range
 * [i, end[i])), the graph draws only frames at least MIN_W pixels wide,
 * and the tables create rows only for what is expanded or asked for.
 * Names reach the page through textContent only, never as markup.  This
 * file goes into a script element as it is: it must never hold a '<'
 * followed by '/' or '!' (t0290 checks).
 *
 * window.callprof exposes the state and a few queries for the end-to-end
 * test (tests/e2e/check-html.js) and for anyone poking from the console.
 */
'use strict';
(function () {
	const D = JSON.parse(document.getElementById('profile').textContent);
	const TIMED = !!D.timed;
	/* Off-CPU time measured: cpu, wait and inactive columns. */
	const SPLIT = !!D.split;
	/* CPU time from samples (cpu mode): samples per node, no min or max. */
	const CPU = !!D.cpu_sampled;
	const FEW = CPU ? D.time_source.few_samples : 0;
	const F = D.functions;
	/*
	 * The metrics a view can weigh by (inclusive, as widths need), with
	 * their row keys: inclusive and own (self) figures.
	 */
	const METRICS = [
		{ id: 'total', title: 'Total', words: 'total time', key: 'total', self: 'self', selfTitle: 'Self', on: TIMED },
		{ id: 'cpu', title: 'CPU', words: 'CPU time', key: 'cpu', self: 'selfCpu', selfTitle: 'Self CPU', on: TIMED && (SPLIT || CPU) },
		{ id: 'wait', title: 'Wait', words: 'wait (blocked) time', key: 'wait', self: 'selfWait', selfTitle: 'Self wait', on: SPLIT },
		{ id: 'inactive', title: 'Inactive', words: 'inactive (preempted) time', key: 'inactive', self: 'selfInactive', selfTitle: 'Self inactive', on: SPLIT },
		{ id: 'samples', title: 'Samples', words: 'CPU-time samples', key: 'samples', self: 'selfSamples', selfTitle: 'Self samples', on: CPU },
		{ id: 'calls', title: 'Calls in and below', words: 'calls made in the frame and below it', key: 'below', self: 'calls', selfTitle: 'Calls', on: true },
	].filter((m) => m.on);
	const NFNS = F.name.length;
	const FH = 18;		/* frame height, CSS px */
	const MIN_W = 0.5;	/* narrower frames (and all above them) are not drawn */
	const MAX_ROWS = 1500;	/* levels drawn (a canvas cannot be arbitrarily tall) */
	const MAX_ANCESTORS = 60; /* ancestor rows shown above a zoomed frame */
	const CHILD_CHUNK = 200; /* children rows shown at once under a tree row */
	const FLAT_CHUNK = 500;	/* flat rows shown at once */
	const $ = (id) => document.getElementById(id);

	/* ---- formatting, as callprof report prints ---- */

	function fmtNs(ns) {
		if (ns < 1000)
			return ns + 'ns';
		if (ns < 1e6)
			return (ns / 1e3).toFixed(2) + 'us';
		if (ns < 1e9)
			return (ns / 1e6).toFixed(2) + 'ms';
		return (ns / 1e9).toFixed(3) + 's';
	}

	function fmtSamples(n) {
		return String(n) + (n && n < FEW ? ' (few)' : '');
	}

	/*
	 * Sampled CPU time: whether column key of row r rests on fewer than
	 * FEW samples (none at all is a time below a period, not a guess).
	 */
	function fewSamples(r, key) {
		const n = ['self', 'selfCpu', 'selfPct'].includes(key) ? r.selfSamples :
			['total', 'cpu', 'avg', 'totalPct'].includes(key) ? r.samples : FEW;

		return CPU && n !== undefined && n > 0 && n < FEW;
	}

	function fmtPct(part, base) {
		return base ? (100 * part / base).toFixed(2) + '%' : '-';
	}

	function baseName(path) {
		const i = path.lastIndexOf('/');
		return i < 0 ? path : path.slice(i + 1);
	}

	function pad2(n) {
		return (n < 10 ? '0' : '') + n;
	}

	function fmtDate(ns) {
		const d = new Date(ns / 1e6);
		return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' +
			pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
	}

	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);

		for (const k in attrs || {}) {
			if (k === 'class')
				e.className = attrs[k];
			else if (k === 'text')
				e.textContent = attrs[k];
			else if (attrs[k] !== undefined && attrs[k] !== null)
				e.setAttribute(k, attrs[k]);
		}
		for (const k of kids)
			if (k !== null && k !== undefined)
				e.append(k);
		return e;
	}

	/* ---- functions: where they are, their colour ---- */

	function fnModule(f) {
		return f >= 0 && F.module[f] >= 0 ? D.strings[F.module[f]] : null;
	}

	function fnWhere(f) {
		return f >= 0 && F.file[f] >= 0 ? D.strings[F.file[f]] + ':' + F.line[f] : null;
	}

	/* FNV-1a over UTF-16 units; svg.c hashes bytes, so hues may differ for non-ASCII names. */
	function hash32(s) {
		let h = 2166136261;

		for (let i = 0; i < s.length; i++)
			h = Math.imul(h ^ (s.charCodeAt(i) & 0xff), 16777619) >>> 0;
		return h >>> 0;
	}

	/* As svg.c: the hue from the module (program and libraries apart), the shade from the name. */
	const fnColour = new Array(NFNS);
	for (let f = 0; f < NFNS; f++) {
		const m = fnModule(f);
		const hm = hash32(m ? baseName(m) : ''), hn = hash32(F.name[f]);
		const hue = m ? hm % 300 : 0;

		fnColour[f] = 'hsl(' + hue + ',' + (60 + hn % 25) + '%,' + (55 + (hn >>> 8) % 20) + '%)';
	}

	/* ---- views: one tree, or every thread's under an "all threads" root ---- */

	/*
	 * A view: typed arrays by node in depth-first order.  fn < 0 marks
	 * nodes that are not functions: -1 the root, -2 a thread (labels[]).
	 */
	function makeView(trees, rootLabel) {
		const several = trees.length > 1;
		let n = several ? 1 : 0;

		for (const t of trees)
			n += t.parent.length;
		const v = {
			n: n,
			fn: new Int32Array(n), parent: new Int32Array(n), depth: new Int32Array(n),
			end: new Int32Array(n), calls: new Float64Array(n), value: new Float64Array(n),
			total: new Float64Array(n), self: new Float64Array(n), min: new Float64Array(n),
			max: new Float64Array(n), ovh: new Uint8Array(n), labels: new Map(),
			wait: new Float64Array(n), inactive: new Float64Array(n),
			selfWait: new Float64Array(n), selfInactive: new Float64Array(n),
			samples: new Float64Array(n), selfSamples: new Float64Array(n),
			open: new Float64Array(n), /* calls open at attach, not in calls */
			threads: new Map(),
		};
		let o = 0;

		if (several) {
			v.fn[0] = -1;
			v.parent[0] = -1;
			v.labels.set(0, rootLabel);
			o = 1;
		}
		for (const t of trees) {
			const m = t.parent.length;

			for (let k = 0; k < m; k++) {
				const i = o + k;

				v.fn[i] = t.fn[k];
				v.parent[i] = t.parent[k] < 0 ? (several ? 0 : -1) : o + t.parent[k];
				v.calls[i] = t.calls[k];
				if (TIMED) {
					v.total[i] = t.total[k];
					v.self[i] = t.self[k];
					if (CPU) {
						v.samples[i] = t.samples[k];
						v.selfSamples[i] = t.self_samples[k];
					} else {
						v.min[i] = t.min[k];
						v.max[i] = t.max[k];
					}
				}
				if (SPLIT) {
					v.wait[i] = t.wait[k];
					v.inactive[i] = t.inactive[k];
					v.selfWait[i] = t.self_wait[k];
					v.selfInactive[i] = t.self_inactive[k];
				}
				if (t.overhead)
					v.ovh[i] = t.overhead[k];
				if (t.open)
					v.open[i] = t.open[k];
			}
			if (several)
				v.fn[o] = -2;
			v.labels.set(o, t.label);
			v.threads.set(o, t.threads);
			if (several && TIMED)
				v.total[0] += t.total[0];
			if (several && CPU)
				v.samples[0] += t.samples[0];
			if (several && SPLIT) {
				v.wait[0] += t.wait[0];
				v.inactive[0] += t.inactive[0];
			}
			o += m;
		}
		for (let i = 1; i < n; i++)
			v.depth[i] = v.depth[v.parent[i]] + 1;
		/* A merged profile's tree: its imbalance ranking, and each node's row in it. */
		if (!several && trees[0].imbalance) {
			v.imb = trees[0].imbalance;
			v.imbRow = new Int32Array(n).fill(-1);
			v.imb.node.forEach((i, r) => {
				v.imbRow[i] = r;
			});
		}
		const below = new Float64Array(v.calls);
		for (let i = 0; i < n; i++)
			v.end[i] = i + 1;
		for (let i = n - 1; i > 0; i--) {
			const p = v.parent[i];

			if (v.end[i] > v.end[p])
				v.end[p] = v.end[i];
			below[p] += below[i];
		}
		v.below = below;
		v.cpu = new Float64Array(n);
		v.selfCpu = new Float64Array(n);
		for (let i = 0; i < n; i++) {
			v.cpu[i] = cpuOf(v.total[i], v.wait[i], v.inactive[i]);
			v.selfCpu[i] = cpuOf(v.self[i], v.selfWait[i], v.selfInactive[i]);
		}
		return v;
	}

	/* The per-node figures metric m weighs frames by (inclusive), and their own part. */
	function metricArrays(v, m) {
		const inc = { total: v.total, cpu: v.cpu, wait: v.wait, inactive: v.inactive, samples: v.samples, below: v.below }[m.key];
		const own = { self: v.self, selfCpu: v.selfCpu, selfWait: v.selfWait, selfInactive: v.selfInactive, selfSamples: v.selfSamples, calls: v.calls }[m.self];
		let value = inc;
		if (m.id === 'calls' && !v.below[0] && v.n > 1) {
			/* Coverage: no counts either; every context gets one unit. */
			value = new Float64Array(v.n);
			for (let i = 0; i < v.n; i++)
				value[i] = v.end[i] - i;
		}
		return { value: value, own: own };
	}

	/*
	 * The thread switch: all threads merged (D.trees, as `report` adds
	 * them up), side by side under one root, then each thread alone.
	 */
	const TT = D.thread_trees || [];
	const views = [];
	if (D.trees.length)
		views.push({ label: D.trees[0].label, trees: D.trees, kind: 'merged' });
	if (TT.length > 1) {
		views.push({ label: 'each thread apart', rootLabel: 'all threads', trees: TT, kind: 'each' });
		TT.forEach((t) => views.push({ label: t.label, trees: [t], kind: 'thread' }));
	}
	const firstView = Math.max(0, views.findIndex((v) => v.kind === (D.threads_mode === 'each' ? 'each' : 'merged')));
	const firstMetric = METRICS.find((m) => m.id === D.weight) || METRICS[0];

	const S = {
		view: 0,	  /* index into views */
		zoom: 0,	  /* node the graph is zoomed to */
		icicle: false,
		search: '',
		metric: firstMetric,
		regex: false,
		matched: null,	  /* Uint8Array by node, or null without a search */
		matchCount: 0,	  /* frames matched */
		matchShare: 0,	  /* their share of the root's value, no frame counted twice */
		selName: null,	  /* selected function's name (callers/callees go by name) */
		tab: 'tree',
		treeSort: { key: TIMED ? firstMetric.key : 'calls', desc: true },
		flatSort: { key: TIMED ? firstMetric.self : 'calls', desc: true },
		edgeSort: { key: TIMED ? 'totalPct' : 'calls', desc: true },
		expanded: new Set([0]),
		shown: new Map(), /* tree row -> how many children are shown */
		flatShown: FLAT_CHUNK,
		imbShown: FLAT_CHUNK,
		selNode: null,	  /* the context clicked (its distribution in the side panel) */
	};
	let V = null;

	function name(i) {
		const f = V.fn[i];

		return f >= 0 ? F.name[f] : V.labels.get(i) || '';
	}

	function children(i) {
		const c = [];

		for (let k = i + 1; k < V.end[i]; k = V.end[k])
			c.push(k);
		return c;
	}

	function setView(k) {
		if (!views[k].v)
			views[k].v = makeView(views[k].trees, views[k].rootLabel || views[k].label);
		V = views[k].v;
		weigh();
		S.view = k;
		S.zoom = 0;
		S.expanded = new Set([0]);
		S.shown = new Map();
		S.flatShown = FLAT_CHUNK;
		S.imbShown = FLAT_CHUNK;
		S.selNode = null;
		flat = null;
		$('thread').value = String(k);
		runSearch();
		renderAll();
	}

	/* The view's widths and shares by the metric chosen. */
	function weigh() {
		const a = metricArrays(V, S.metric);

		V.value = a.value;
		V.own = a.own;
	}

	/* Weigh by metric id: widths, percentages and the tables' order follow. */
	function setMetric(id) {
		const m = METRICS.find((x) => x.id === id);

		if (!m)
			return;
		S.metric = m;
		$('metric').value = m.id;
		weigh();
		flat = null;
		if (TIMED) {
			S.treeSort = { key: m.key, desc: true };
			S.flatSort = { key: m.self, desc: true };
			S.edgeSort = { key: 'totalPct', desc: true };
		}
		runSearch();
		renderAll();
	}

	/* ---- the graph ---- */

	const canvas = $('flame');
	const ctx = canvas.getContext('2d');
	const tip = $('tip');
	let L = null;		/* the last layout: frames in drawing order */
	let charW = 7;

	/*
	 * Place the frames: the zoomed node's ancestors as full-width rows, then
	 * its subtree scaled to the width, depth first; a frame narrower than
	 * MIN_W is left out with everything above it.
	 */
	function layout(width) {
		const z = S.zoom;
		let anc = [];

		for (let a = V.parent[z]; a >= 0; a = V.parent[a])
			anc.push(a);
		anc.reverse();
		let hiddenAnc = 0;
		if (anc.length > MAX_ANCESTORS) {
			hiddenAnc = anc.length - MAX_ANCESTORS;
			anc = [anc[0]].concat(anc.slice(hiddenAnc + 1));
		}
		const cap = Math.min(V.end[z] - z, 1 << 20) + anc.length + 1;
		const l = {
			width: width, n: 0, node: new Int32Array(cap), x: new Float64Array(cap),
			w: new Float64Array(cap), row: new Int32Array(cap), rows: 0, culled: 0,
			tooDeep: 0, hiddenAnc: hiddenAnc, ancRows: anc.length,
		};
		const push = (i, x, w, row) => {
			if (l.n === l.node.length) {
				for (const k of ['node', 'x', 'w', 'row']) {
					const a = new l[k].constructor(l.n * 2);

					a.set(l[k]);
					l[k] = a;
				}
			}
			l.node[l.n] = i;
			l.x[l.n] = x;
			l.w[l.n] = w;
			l.row[l.n++] = row;
			if (row + 1 > l.rows)
				l.rows = row + 1;
		};
		anc.forEach((a, r) => push(a, 0, width, r));
		const base = anc.length, dz = V.depth[z];
		const scale = V.value[z] > 0 ? width / V.value[z] : 0;
		/* Next free x under each drawn node, and its right edge: by node. */
		const next = layout.next && layout.next.length >= V.n ? layout.next : (layout.next = new Float64Array(V.n));
		const right = layout.right && layout.right.length >= V.n ? layout.right : (layout.right = new Float64Array(V.n));
		push(z, 0, width, base);
		next[z] = 0;
		right[z] = width;
		for (let i = z + 1; i < V.end[z];) {
			const p = V.parent[i], x = next[p], row = base + V.depth[i] - dz;
			let w = V.value[i] * scale;

			if (x + w > right[p])
				w = Math.max(0, right[p] - x);
			next[p] = x + w;
			if (w < MIN_W || row >= MAX_ROWS) {
				if (w >= MIN_W)
					l.tooDeep += V.end[i] - i;
				else
					l.culled += V.end[i] - i;
				i = V.end[i];
				continue;
			}
			push(i, x, w, row);
			next[i] = x;
			right[i] = x + w;
			i++;
		}
		/* By row, in x order (depth first gives x order within a row). */
		l.rowStart = new Int32Array(l.rows + 1);
		for (let k = 0; k < l.n; k++)
			l.rowStart[l.row[k] + 1]++;
		for (let r = 0; r < l.rows; r++)
			l.rowStart[r + 1] += l.rowStart[r];
		l.byRow = new Int32Array(l.n);
		const fill = l.rowStart.slice(0, l.rows);
		for (let k = 0; k < l.n; k++)
			l.byRow[fill[l.row[k]]++] = k;
		return l;
	}

	function frameY(row) {
		return S.icicle ? row * FH : (L.rows - 1 - row) * FH;
	}

	function draw() {
		const width = Math.max(200, $('graph').clientWidth);
		const dpr = window.devicePixelRatio || 1;

		L = layout(width);
		const height = L.rows * FH;
		canvas.style.width = width + 'px';
		canvas.style.height = height + 'px';
		canvas.width = Math.round(width * dpr);
		canvas.height = Math.round(height * dpr);
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, width, height);
		ctx.font = '12px ' + getComputedStyle(document.body).getPropertyValue('--mono');
		ctx.textBaseline = 'middle';
		charW = ctx.measureText('mmmmmmmmmm').width / 10 || 7;
		const sel = S.selName;
		for (let k = 0; k < L.n; k++) {
			const i = L.node[k], f = V.fn[i], x = L.x[k], w = L.w[k], y = frameY(L.row[k]);
			const isAnc = L.row[k] < L.ancRows;
			let fill = f >= 0 ? fnColour[f] : '#c8c8c8';

			if (S.matched && S.matched[i])
				fill = '#e040e0';
			ctx.globalAlpha = isAnc ? 0.55 : 1;
			ctx.fillStyle = fill;
			ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), FH - 1);
			ctx.globalAlpha = 1;
			if (sel !== null && f >= 0 && F.name[f] === sel && w >= 4) {
				ctx.strokeStyle = '#000';
				ctx.lineWidth = 1.5;
				ctx.strokeRect(x + 0.75, y + 0.75, Math.max(w - 2, 0.5), FH - 2.5);
			}
			const fit = Math.floor((w - 6) / charW);
			if (fit >= 3) {
				const s = name(i);

				ctx.fillStyle = '#000';
				ctx.fillText(s.length > fit ? s.slice(0, fit - 2) + '..' : s, x + 3, y + FH / 2);
			}
		}
		const notes = [];
		notes.push('Width: ' + S.metric.words + '.');
		notes.push('Colour: module.');
		if (L.culled)
			notes.push(L.culled + ' contexts in frames narrower than ' + MIN_W + ' px are not drawn (zoom in to see them).');
		if (L.tooDeep)
			notes.push(L.tooDeep + ' contexts more than ' + MAX_ROWS + ' levels down are not drawn (zoom in to see them).');
		if (L.hiddenAnc)
			notes.push(L.hiddenAnc + ' ancestors of the zoomed frame are not drawn.');
		$('graph-note').textContent = notes.join(' ');
		drawCrumbs();
	}

	function drawCrumbs() {
		const c = $('crumbs'), path = [];

		for (let a = S.zoom; a >= 0; a = V.parent[a])
			path.push(a);
		path.reverse();
		c.textContent = '';
		path.forEach((i, k) => {
			if (k)
				c.append(el('span', { class: 'sep', text: '\u203a' }));
			if (k === path.length - 1)
				c.append(el('span', { text: name(i) }));
			else
				c.append(el('a', { 'data-node': i, text: name(i), title: 'zoom out to this frame' }));
		});
	}

	/* The frame at (x, y) in CSS pixels of the canvas: index into L, or -1. */
	function hit(x, y) {
		if (!L || y < 0 || x < 0)
			return -1;
		let row = Math.floor(y / FH);
		if (!S.icicle)
			row = L.rows - 1 - row;
		if (row < 0 || row >= L.rows)
			return -1;
		let lo = L.rowStart[row], hi = L.rowStart[row + 1] - 1;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1, k = L.byRow[mid];

			if (x < L.x[k])
				hi = mid - 1;
			else if (x >= L.x[k] + L.w[k])
				lo = mid + 1;
			else
				return k;
		}
		return -1;
	}

	function zoomTo(i) {
		S.zoom = i;
		draw();
	}

	function figures(i) {
		const f = V.fn[i], rows = [];
		const root = V.value[0];

		if (f >= 0 || V.fn[i] === -2)
			rows.push(['calls', f >= 0 ? String(V.calls[i]) : V.threads.get(i) + ' thread(s)']);
		if (V.open[i])
			rows.push(['open at attach', V.open[i] + ' (entered before the window: not in calls)']);
		if (TIMED) {
			rows.push(['total', fmtNs(V.total[i]) + (V.ovh[i] & 1 ? ' (mostly hook overhead)' : '')]);
			rows.push(['self', fmtNs(V.self[i]) + (V.ovh[i] & 2 ? ' (mostly hook overhead)' : '')]);
			if (f >= 0 && V.calls[i]) {
				rows.push(['avg / call', fmtNs(Math.floor(V.total[i] / V.calls[i]))]);
				if (!CPU)
					rows.push(['min / max', fmtNs(V.min[i]) + ' / ' + fmtNs(V.max[i])]);
			}
			if (CPU) {
				rows.push(['samples', fmtSamples(V.samples[i]) + ' (self ' + fmtSamples(V.selfSamples[i]) + ')']);
				rows.push(['min / max', 'not measured (sampled CPU time)']);
			}
		} else {
			rows.push(['calls in and below', String(V.below[i])]);
		}
		rows.push([S.metric.id === 'calls' ? 'of the root' : S.metric.title + ' of the root', fmtPct(V.value[i], root)]);
		if (S.zoom && i !== S.zoom && V.value[S.zoom])
			rows.push(['of the zoomed frame', fmtPct(V.value[i], V.value[S.zoom])]);
		const d = distribution(V, i);
		if (d)
			rows.push(...d);
		if (f >= 0) {
			const w = fnWhere(f), m = fnModule(f);

			if (w)
				rows.push(['source', w]);
			if (m)
				rows.push(['module', m]);
			if (F.signal[f])
				rows.push(['', 'a signal handler\'s run']);
		}
		return rows;
	}

	function showTip(k, ev) {
		const i = L.node[k];

		tip.textContent = '';
		tip.append(el('div', { class: 'name', text: name(i) }));
		const t = el('table');
		for (const [a, b] of figures(i))
			t.append(el('tr', null, el('th', { text: a }), el('td', { text: b })));
		tip.append(t);
		tip.hidden = false;
		/* Fixed to the window, so that the graph's edges do not cut it. */
		let x = ev.clientX + 14, y = ev.clientY + 14;
		if (x + tip.offsetWidth > window.innerWidth)
			x = Math.max(0, ev.clientX - tip.offsetWidth - 14);
		if (y + tip.offsetHeight > window.innerHeight)
			y = Math.max(0, ev.clientY - tip.offsetHeight - 14);
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	}

	canvas.addEventListener('mousemove', (ev) => {
		const r = canvas.getBoundingClientRect();
		const k = hit(ev.clientX - r.left, ev.clientY - r.top);

		if (k < 0)
			tip.hidden = true;
		else
			showTip(k, ev);
	});
	canvas.addEventListener('mouseleave', () => {
		tip.hidden = true;
	});
	canvas.addEventListener('click', (ev) => {
		const r = canvas.getBoundingClientRect();
		const k = hit(ev.clientX - r.left, ev.clientY - r.top);

		if (k < 0)
			return;
		const i = L.node[k];
		if (V.fn[i] >= 0)
			select(F.name[V.fn[i]], false, i);
		zoomTo(i);
	});
	$('crumbs').addEventListener('click', (ev) => {
		const a = ev.target.closest('a[data-node]');

		if (a)
			zoomTo(Number(a.dataset.node));
	});
	$('reset').addEventListener('click', () => zoomTo(0));
	document.addEventListener('keydown', (ev) => {
		if (ev.key === 'Escape' && ev.target.tagName !== 'INPUT')
			zoomTo(0);
	});
	function setKind(icicle) {
		S.icicle = icicle;
		$('kind-flame').setAttribute('aria-pressed', String(!icicle));
		$('kind-icicle').setAttribute('aria-pressed', String(icicle));
		draw();
	}
	$('kind-flame').addEventListener('click', () => setKind(false));
	$('kind-icicle').addEventListener('click', () => setKind(true));
	let resizeTimer = 0;
	window.addEventListener('resize', () => {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(draw, 100);
	});

	/* ---- search ---- */

	function runSearch() {
		const q = S.search;
		const input = $('search'), status = $('search-status');

		input.classList.remove('bad');
		S.matched = null;
		S.matchCount = 0;
		S.matchShare = 0;
		if (!q) {
			status.textContent = '';
			return;
		}
		let test;
		if (S.regex) {
			let re;
			try {
				re = new RegExp(q, 'i');
			} catch (e) {
				input.classList.add('bad');
				status.textContent = 'not a regular expression: ' + e.message;
				return;
			}
			test = (s) => re.test(s);
		} else {
			const lq = q.toLowerCase();
			test = (s) => s.toLowerCase().includes(lq);
		}
		const fnHit = new Uint8Array(NFNS);
		for (let f = 0; f < NFNS; f++)
			fnHit[f] = test(F.name[f]) ? 1 : 0;
		const m = new Uint8Array(V.n);
		let count = 0, covered = 0;
		for (let i = 0; i < V.n; i++)
			if (V.fn[i] >= 0 && fnHit[V.fn[i]]) {
				m[i] = 1;
				count++;
			}
		/* The share: matched frames with no matched frame below the root above them. */
		for (let i = 1; i < V.n;) {
			if (m[i]) {
				covered += V.value[i];
				i = V.end[i];
			} else {
				i++;
			}
		}
		S.matched = m;
		S.matchCount = count;
		S.matchShare = V.value[0] ? covered / V.value[0] : 0;
		status.textContent = count + ' frame' + (count === 1 ? '' : 's') + ' matched, ' +
			(100 * S.matchShare).toFixed(2) + '% of ' + (S.metric.id === 'calls' ? 'all calls' : 'the ' + S.metric.words);
	}

	let searchTimer = 0;
	$('search').addEventListener('input', () => {
		clearTimeout(searchTimer);
		searchTimer = setTimeout(() => {
			S.search = $('search').value;
			runSearch();
			draw();
		}, 120);
	});
	$('regex').addEventListener('change', () => {
		S.regex = $('regex').checked;
		runSearch();
		draw();
	});

	/* ---- tables ---- */

	/* Columns: key, title, value(row), format; time columns only with times. */
	function columns(kind) {
		const c = [{ key: 'name', title: 'Function', name: true }];

		if (kind === 'edge') {
			/* The side panel is narrow: the calls and the chosen metric only. */
			const m = S.metric;
			c.push({ key: 'calls', title: D.sampled ? 'Samples' : 'Calls', fmt: String });
			if (TIMED && m.id !== 'calls')
				c.push({ key: 'weight', title: m.title, fmt: m.id === 'samples' ? String : fmtNs });
			c.push({ key: 'totalPct', title: (m.id === 'calls' ? 'Calls in and below' : m.title) + ' %', pct: 'weight' });
			return c;
		}

		c.push({ key: 'calls', title: D.sampled ? 'Samples' : 'Calls', fmt: String });
		if (TIMED) {
			c.push({ key: 'total', title: 'Total', fmt: fmtNs });
			/* The tree splits the total, the flat profile the self time. */
			if (SPLIT && kind === 'tree') {
				c.push({ key: 'cpu', title: 'CPU', fmt: fmtNs });
				c.push({ key: 'wait', title: 'Wait', fmt: fmtNs });
				c.push({ key: 'inactive', title: 'Inactive', fmt: fmtNs });
			}
			c.push({ key: 'self', title: 'Self', fmt: fmtNs });
			if (SPLIT && kind === 'flat') {
				c.push({ key: 'selfCpu', title: 'Self CPU', fmt: fmtNs });
				c.push({ key: 'selfWait', title: 'Self wait', fmt: fmtNs });
				c.push({ key: 'selfInactive', title: 'Self inactive', fmt: fmtNs });
			}
			const m = S.metric;
			c.push({ key: 'totalPct', title: (m.id === 'calls' ? 'Calls in and below' : m.title) + ' %', pct: 'weight' });
			c.push({ key: 'selfPct', title: m.selfTitle + ' %', pct: 'ownWeight' });
			if (kind !== 'edge') {
				c.push({ key: 'avg', title: 'Avg', fmt: fmtNs });
				if (!CPU) {
					c.push({ key: 'min', title: 'Min', fmt: fmtNs });
					c.push({ key: 'max', title: 'Max', fmt: fmtNs });
				}
			}
			if (CPU && kind !== 'edge') {
				c.push({ key: 'samples', title: 'Samples', fmt: fmtSamples });
				c.push({ key: 'selfSamples', title: 'Self samples', fmt: fmtSamples });
			}
		} else if (kind === 'tree') {
			c.push({ key: 'below', title: 'Calls in and below', fmt: String });
			c.push({ key: 'belowPct', title: '%', pct: 'below' });
		}
		return c;
	}

	function header(table, cols, sort, onSort) {
		const tr = el('tr');

		for (const c of cols) {
			const th = el('th', { class: (c.name ? 'name ' : '') + 'sortable', 'data-key': c.key, text: c.title, title: 'sort by ' + c.title.toLowerCase() });

			if (sort.key === c.key)
				th.setAttribute('aria-sort', sort.desc ? 'descending' : 'ascending');
			th.addEventListener('click', () => {
				if (sort.key === c.key) {
					sort.desc = !sort.desc;
				} else {
					sort.key = c.key;
					sort.desc = !c.name;
				}
				onSort();
			});
			tr.append(th);
		}
		const thead = table.tHead;
		thead.textContent = '';
		thead.append(tr);
	}

	function cells(tr, cols, r, base) {
		for (const c of cols) {
			if (c.name)
				continue;
			let v = c.pct ? r[c.pct] : r[c.key], text;

			if (v === undefined || v === null || (c.key === 'min' || c.key === 'max' || c.key === 'avg') && !r.calls) {
				text = '-';
				v = '';
			} else if (c.pct) {
				text = fmtPct(v, base);
				v = base ? 100 * v / base : 0;
			} else {
				text = c.fmt(v);
			}
			if (text !== '-' && fewSamples(r, c.key))
				text = '?' + text;
			/* Sampled in code without hooks (cpu mode): its calls were not counted. */
			if (CPU && c.key === 'calls' && !v)
				text = '-';
			const td = el('td', { class: 'c-' + c.key, 'data-v': v, text: text });
			if ((c.key === 'total' && r.ovh & 1) || (c.key === 'self' && r.ovh & 2)) {
				td.classList.add('ovh');
				td.title = 'mostly hook overhead';
				td.textContent = '~' + text;
			}
			tr.append(td);
		}
	}

	function compare(sort, a, b) {
		let d;

		/* A share orders as what it is a share of. */
		const key = sort.key === 'totalPct' ? 'weight' : sort.key === 'selfPct' ? 'ownWeight' :
			sort.key.endsWith('Pct') ? sort.key.slice(0, -3) : sort.key;

		if (key === 'name')
			d = a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
		else
			d = (a[key] || 0) - (b[key] || 0);
		if (sort.desc)
			d = -d;
		return d || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.id - b.id;
	}

	/* A tree node's row values. */
	function nodeRow(i) {
		return {
			id: i, name: name(i), fn: V.fn[i], calls: V.fn[i] >= 0 ? V.calls[i] : null,
			total: TIMED ? V.total[i] : undefined, self: TIMED ? V.self[i] : undefined,
			avg: TIMED && V.calls[i] ? Math.floor(V.total[i] / V.calls[i]) : undefined,
			min: TIMED && !CPU && V.fn[i] >= 0 ? V.min[i] : undefined,
			max: TIMED && !CPU && V.fn[i] >= 0 ? V.max[i] : undefined,
			samples: CPU ? V.samples[i] : undefined, selfSamples: CPU ? V.selfSamples[i] : undefined,
			below: V.below[i], ovh: V.ovh[i],
			cpu: SPLIT || CPU ? V.cpu[i] : undefined,
			wait: SPLIT ? V.wait[i] : undefined, inactive: SPLIT ? V.inactive[i] : undefined,
			selfCpu: SPLIT || CPU ? V.selfCpu[i] : undefined,
			selfWait: SPLIT ? V.selfWait[i] : undefined, selfInactive: SPLIT ? V.selfInactive[i] : undefined,
			weight: V.value[i], ownWeight: V.own[i],
		};
	}

	/* Total less off-CPU time, never below 0 (compensation shrinks only the total). */
	function cpuOf(total, wait, inactive) {
		return Math.max(0, total - wait - inactive);
	}

	function renderTree() {
		const table = $('tree-table'), cols = columns('tree'), body = table.tBodies[0];
		const base = V.value[0];
		const frag = document.createDocumentFragment();
		const stack = [{ i: 0 }];

		header(table, cols, S.treeSort, renderTree);
		while (stack.length) {
			const it = stack.pop();

			if (it.more !== undefined) {
				const tr = el('tr', { class: 'more', 'data-parent': it.more });
				tr.append(el('td', { colspan: cols.length, text: '\u2026 ' + it.left + ' more (show ' + Math.min(it.left, CHILD_CHUNK) + ')', style: 'padding-left:' + (8 + 16 * (it.depth + 1)) + 'px' }));
				frag.append(tr);
				continue;
			}
			const i = it.i, r = nodeRow(i), kids = V.end[i] > i + 1;
			const open = kids && S.expanded.has(i), depth = V.depth[i];
			const tr = el('tr', { 'data-node': i, 'data-depth': depth, 'data-parent': V.parent[i] >= 0 ? V.parent[i] : null, 'data-fn': r.fn >= 0 ? r.fn : null });

			if (r.fn >= 0 && r.name === S.selName)
				tr.classList.add('sel');
			const td = el('td', { class: 'name', title: r.name, style: 'padding-left:' + (8 + 16 * depth) + 'px' });
			td.append(el('span', { class: 'tog', text: kids ? (open ? '\u25be' : '\u25b8') : '' }));
			const share = base ? r.weight / base : 0;
			td.append(el('span', { class: 'bar', style: 'width:' + Math.round(40 * share) + 'px' }));
			td.append(el('span', { class: 'nm' + (r.fn < 0 ? ' pseudo' : ''), text: r.name }));
			if (V.open[i])
				td.append(el('span', { class: 'open', text: V.open[i] === 1 ? ' (open at attach)' : ' (' + V.open[i] + ' open at attach)' }));
			tr.append(td);
			cells(tr, cols, r, base);
			frag.append(tr);
			if (!open)
				continue;
			const c = children(i).map(nodeRow).sort((a, b) => compare(S.treeSort, a, b));
			const limit = S.shown.get(i) || CHILD_CHUNK;
			if (c.length > limit)
				stack.push({ more: i, left: c.length - limit, depth: depth });
			for (let k = Math.min(limit, c.length) - 1; k >= 0; k--)
				stack.push({ i: c[k].id });
		}
		body.textContent = '';
		body.append(frag);
	}

	$('tree-table').tBodies[0].addEventListener('click', (ev) => {
		const more = ev.target.closest('tr.more');

		if (more) {
			const p = Number(more.dataset.parent);
			S.shown.set(p, (S.shown.get(p) || CHILD_CHUNK) + CHILD_CHUNK);
			renderTree();
			return;
		}
		const tr = ev.target.closest('tr[data-node]');
		if (!tr)
			return;
		const i = Number(tr.dataset.node);
		if (ev.target.classList.contains('tog') || V.fn[i] < 0) {
			toggle(i);
			return;
		}
		select(F.name[V.fn[i]], true, i);
	});
	$('tree-table').tBodies[0].addEventListener('dblclick', (ev) => {
		const tr = ev.target.closest('tr[data-node]');

		if (tr && !ev.target.classList.contains('tog'))
			toggle(Number(tr.dataset.node));
	});

	function toggle(i) {
		if (V.end[i] <= i + 1)
			return;
		if (S.expanded.has(i))
			S.expanded.delete(i);
		else
			S.expanded.add(i);
		renderTree();
	}

	/* ---- flat profile: per function, recursion counted once ---- */

	let flat = null;

	function computeFlat() {
		const calls = new Float64Array(NFNS), total = new Float64Array(NFNS);
		const self = new Float64Array(NFNS), min = new Float64Array(NFNS), max = new Float64Array(NFNS);
		const selfWait = new Float64Array(NFNS), selfInactive = new Float64Array(NFNS);
		const samples = new Float64Array(NFNS), selfSamples = new Float64Array(NFNS);
		const wait = new Float64Array(NFNS), inactive = new Float64Array(NFNS), below = new Float64Array(NFNS);
		const active = new Int32Array(NFNS), path = [];

		for (let i = 1; i < V.n; i++) {
			const f = V.fn[i];

			while (path.length >= V.depth[i]) {
				const g = path.pop();

				if (g >= 0)
					active[g]--;
			}
			path.push(f);
			if (f < 0)
				continue;
			if (V.calls[i] && (!calls[f] || V.min[i] < min[f]))
				min[f] = V.min[i];
			if (V.max[i] > max[f])
				max[f] = V.max[i];
			calls[f] += V.calls[i];
			self[f] += V.self[i];
			selfWait[f] += V.selfWait[i];
			selfInactive[f] += V.selfInactive[i];
			selfSamples[f] += V.selfSamples[i];
			if (!active[f]) {
				total[f] += V.total[i];
				samples[f] += V.samples[i];
				wait[f] += V.wait[i];
				inactive[f] += V.inactive[i];
				below[f] += V.below[i];
			}
			active[f]++;
		}
		const rows = [];
		for (let f = 0; f < NFNS; f++) {
			if (!calls[f] && !total[f])
				continue;
			rows.push({
				id: f, fn: f, name: F.name[f], calls: calls[f],
				total: TIMED ? total[f] : undefined, self: TIMED ? self[f] : undefined,
				avg: TIMED && calls[f] ? Math.floor(total[f] / calls[f]) : undefined,
				min: TIMED && !CPU ? min[f] : undefined, max: TIMED && !CPU ? max[f] : undefined, ovh: 0,
				samples: CPU ? samples[f] : undefined, selfSamples: CPU ? selfSamples[f] : undefined,
				selfCpu: SPLIT || CPU ? cpuOf(self[f], selfWait[f], selfInactive[f]) : undefined,
				selfWait: SPLIT ? selfWait[f] : undefined,
				selfInactive: SPLIT ? selfInactive[f] : undefined,
				cpu: SPLIT || CPU ? cpuOf(total[f], wait[f], inactive[f]) : undefined,
				wait: SPLIT ? wait[f] : undefined, inactive: SPLIT ? inactive[f] : undefined,
				below: below[f],
			});
		}
		/* The chosen metric's figures: what the shares and the order go by. */
		for (const r of rows) {
			r.weight = r[S.metric.key] || 0;
			r.ownWeight = r[S.metric.self] || 0;
		}
		return rows;
	}

	function renderFlat() {
		const table = $('flat-table'), cols = columns('flat'), body = table.tBodies[0];
		const base = V.value[0];

		if (!flat)
			flat = computeFlat();
		header(table, cols, S.flatSort, renderFlat);
		const rows = flat.slice().sort((a, b) => compare(S.flatSort, a, b));
		const frag = document.createDocumentFragment();
		for (const r of rows.slice(0, S.flatShown)) {
			const tr = el('tr', { 'data-fn': r.fn, class: r.name === S.selName ? 'sel' : null });
			tr.append(el('td', { class: 'name', title: r.name, text: r.name }));
			cells(tr, cols, r, base);
			frag.append(tr);
		}
		if (rows.length > S.flatShown) {
			const tr = el('tr', { class: 'more' });
			tr.append(el('td', { colspan: cols.length, text: '\u2026 ' + (rows.length - S.flatShown) + ' more (show all)' }));
			frag.append(tr);
		}
		if (!rows.length)
			frag.append(el('tr', { class: 'empty' }, el('td', { colspan: cols.length, text: 'No function was called.' })));
		body.textContent = '';
		body.append(frag);
	}

	$('flat-table').tBodies[0].addEventListener('click', (ev) => {
		if (ev.target.closest('tr.more')) {
			S.flatShown = Infinity;
			renderFlat();
			return;
		}
		const tr = ev.target.closest('tr[data-fn]');
		if (tr)
			select(F.name[Number(tr.dataset.fn)], true);
	});

	function setTab(tab) {
		S.tab = tab;
		for (const k of ['tree', 'flat', 'imb']) {
			if (!$('tab-' + k))
				continue;
			$('tab-' + k).setAttribute('aria-selected', String(tab === k));
			$('pane-' + k).hidden = tab !== k;
		}
		if (tab === 'flat')
			renderFlat();
		if (tab === 'imb')
			renderImb();
	}
	$('tab-tree').addEventListener('click', () => setTab('tree'));
	$('tab-flat').addEventListener('click', () => setTab('flat'));

	/* ---- imbalance: a merged profile's call paths, as report --imbalance ---- */

	/* The merged view: the only one with the inputs' distribution. */
	const imbView = views.findIndex((w) => w.kind === 'merged' && w.trees.length === 1 && w.trees[0].imbalance);

	/* A value of the imbalance's unit: a time, or calls (the mean and stddev with one decimal). */
	function fmtImb(v, frac) {
		if (TIMED)
			return fmtNs(Math.max(0, Math.floor(v + 0.5)));
		return frac ? v.toFixed(1) : String(v);
	}

	function inputName(k) {
		return D.inputs && k < D.inputs.length ? D.inputs[k] : '-';
	}

	function pathOf(i) {
		const p = [];

		for (let a = i; a > 0 && V.fn[a] >= 0; a = V.parent[a])
			p.push(name(a));
		return p.reverse().join(' > ');
	}

	/* Row r of view v's imbalance ranking, as report --imbalance shows it. */
	function imbRow(v, r) {
		const m = v.imb;

		return {
			node: m.node[r], value: fmtImb(m.value[r], false),
			pct: (m.whole ? 100 * m.value[r] / m.whole : 0).toFixed(2),
			mean: fmtImb(m.mean[r], true), stddev: fmtImb(m.stddev[r], true),
			min: fmtImb(m.min[r], false), max: fmtImb(m.max[r], false),
			calls: String(v.calls[m.node[r]]),
			maxAt: inputName(m.max_in[r]), minAt: inputName(m.min_in[r]),
		};
	}

	/* Node i's distribution over the inputs: [label, text] rows, or null. */
	function distribution(v, i) {
		if (!v.imbRow || v.imbRow[i] < 0)
			return null;
		const r = imbRow(v, v.imbRow[i]);

		return [
			['imbalance', r.value + ' (' + r.pct + '% of all ' + v.imb.of + ', rank ' + (v.imbRow[i] + 1) + ' of ' + v.imb.node.length + ')'],
			['mean / stddev', r.mean + ' / ' + r.stddev + ' (' + v.imb.of + ' per input)'],
			['max', r.max + ' at ' + r.maxAt],
			['min', r.min + ' at ' + r.minAt],
		];
	}

	const IMB_COLS = [
		['value', 'Imbalance'], ['pct', 'Imb %'], ['mean', 'Mean'], ['stddev', 'Stddev'],
		['min', 'Min'], ['max', 'Max'], ['calls', 'Calls'], ['maxAt', 'Max at'],
		['minAt', 'Min at'], ['path', 'Call path'],
	];

	function renderImb() {
		const table = $('imb-table'), body = table.tBodies[0], note = $('imb-note');

		if (imbView < 0)
			return;
		if (S.view !== imbView) {
			note.textContent = 'The imbalance is of all threads merged: switch Threads to ' + views[imbView].label + ' to see it.';
			body.textContent = '';
			return;
		}
		const m = V.imb, n = m.node.length;
		note.textContent = 'What the other inputs lost waiting for the slowest, per call path: the sum over the ' + D.inputs.length +
			' inputs of (max - value), on ' + m.of + '. Largest first.' +
			(m.unknown ? ' ' + m.unknown + ' call paths without the per-input distribution are left out.' : '');
		const tr = el('tr');
		for (const [k, t] of IMB_COLS)
			tr.append(el('th', { class: k === 'path' ? 'name' : null, 'data-key': k, text: t }));
		table.tHead.textContent = '';
		table.tHead.append(tr);
		const frag = document.createDocumentFragment();
		for (let r = 0; r < Math.min(n, S.imbShown); r++) {
			const row = imbRow(V, r), i = row.node;
			const t = el('tr', { 'data-node': i, class: i === S.selNode ? 'sel' : null });

			row.path = pathOf(i);
			for (const [k] of IMB_COLS)
				t.append(el('td', { class: (k === 'path' ? 'name ' : '') + 'c-' + k, title: k === 'path' ? row.path : null, text: row[k] }));
			frag.append(t);
		}
		if (n > S.imbShown)
			frag.append(el('tr', { class: 'more' }, el('td', { colspan: IMB_COLS.length, text: '\u2026 ' + (n - S.imbShown) + ' more (show all)' })));
		if (!n)
			frag.append(el('tr', { class: 'empty' }, el('td', { colspan: IMB_COLS.length, text: 'No call path with the distribution.' })));
		body.textContent = '';
		body.append(frag);
	}

	if (imbView >= 0) {
		$('tab-flat').after(el('button', { type: 'button', role: 'tab', id: 'tab-imb', 'aria-selected': 'false', title: 'call paths by the time the other inputs lost waiting for the slowest', text: 'Imbalance' }));
		const pane = el('div', { id: 'pane-imb', role: 'tabpanel', hidden: '' },
			el('p', { id: 'imb-note', class: 'note' }),
			el('table', { id: 'imb-table', class: 'grid' }, el('thead'), el('tbody')));
		$('pane-flat').after(pane);
		$('tab-imb').addEventListener('click', () => setTab('imb'));
		$('imb-table').tBodies[0].addEventListener('click', (ev) => {
			if (ev.target.closest('tr.more')) {
				S.imbShown = Infinity;
				renderImb();
				return;
			}
			const tr = ev.target.closest('tr[data-node]');
			if (tr) {
				const i = Number(tr.dataset.node);
				select(F.name[V.fn[i]], true, i);
			}
		});
	}

	/* ---- the selected function: callers and callees, as report --callers/--callees ---- */

	function edges(sel) {
		const callers = new Map(), callees = new Map();
		let found = false;
		const add = (m, f, i) => {
			let a = m.get(f);

			if (!a) {
				a = {
					id: f, fn: f, name: f >= 0 ? F.name[f] : '[thread start]', calls: 0,
					total: TIMED ? 0 : undefined, self: TIMED ? 0 : undefined, ovh: 0,
					weight: 0, ownWeight: 0,
				};
				m.set(f, a);
			}
			a.calls += V.calls[i];
			a.weight += V.value[i];
			a.ownWeight += V.own[i];
			if (TIMED) {
				a.total += V.total[i];
				a.self += V.self[i];
			}
		};
		for (let i = 1; i < V.n; i++) {
			const f = V.fn[i];

			if (f < 0 || F.name[f] !== sel)
				continue;
			found = true;
			const p = V.parent[i];
			add(callers, V.fn[p] >= 0 ? V.fn[p] : -1, i);
			for (const c of children(i))
				add(callees, V.fn[c], c);
		}
		return { found: found, callers: [...callers.values()], callees: [...callees.values()] };
	}

	function renderEdges() {
		const info = $('fn-info'), sel = S.selName;
		const base = V.value[0];

		for (const id of ['callers', 'callees']) {
			$(id).tHead.textContent = '';
			$(id).tBodies[0].textContent = '';
		}
		info.textContent = '';
		if (sel === null) {
			info.append(el('p', { class: 'note', text: 'Click a frame or a row to see who calls the function and what it calls.' }));
			return;
		}
		const e = edges(sel);
		info.append(el('p', { class: 'fname', text: sel }));
		if (!e.found) {
			info.append(el('p', { class: 'note', text: 'Not called in this thread.' }));
			return;
		}
		const own = (flat || (flat = computeFlat())).filter((r) => r.name === sel);
		const sum = (k) => own.reduce((s, r) => s + (r[k] || 0), 0);
		const dl = el('dl');
		const fact = (a, b) => {
			dl.append(el('dt', { text: a }), el('dd', { text: b }));
		};
		fact('calls', String(sum('calls')));
		if (TIMED) {
			fact('total', fmtNs(sum('total')) + (S.metric.id === 'total' ? ' (' + fmtPct(sum('total'), base) + ')' : ''));
			fact('self', fmtNs(sum('self')) + (S.metric.id === 'total' ? ' (' + fmtPct(sum('self'), base) + ')' : ''));
			if (S.metric.id !== 'total') {
				const m = S.metric, fmt = m.id === 'samples' || m.id === 'calls' ? String : fmtNs;
				fact(m.title.toLowerCase(), fmt(sum('weight')) + ' (' + fmtPct(sum('weight'), base) + ')');
				fact(m.selfTitle.toLowerCase(), fmt(sum('ownWeight')) + ' (' + fmtPct(sum('ownWeight'), base) + ')');
			}
		}
		for (const r of own) {
			const w = fnWhere(r.fn), m = fnModule(r.fn);

			if (w)
				fact('source', w);
			if (m)
				fact('module', m);
		}
		info.append(dl);
		const d = S.selNode !== null && V.fn[S.selNode] >= 0 && F.name[V.fn[S.selNode]] === sel ? distribution(V, S.selNode) : null;
		if (d) {
			const dd = el('dl', { id: 'dist' });
			info.append(el('h3', { text: 'This context across the ' + D.inputs.length + ' inputs' }),
				el('p', { class: 'mono path', text: pathOf(S.selNode) }), dd);
			for (const [a, b] of d)
				dd.append(el('dt', { text: a }), el('dd', { text: b }));
		}
		const cols = columns('edge');
		for (const [id, rows, arrow] of [['callers', e.callers, '\u2190 '], ['callees', e.callees, '\u2192 ']]) {
			const table = $(id);
			header(table, cols, S.edgeSort, renderEdges);
			rows.sort((a, b) => compare(S.edgeSort, a, b));
			const body = table.tBodies[0];
			for (const r of rows) {
				const tr = el('tr', { 'data-fn': r.fn >= 0 ? r.fn : null });
				tr.append(el('td', { class: 'name', title: r.name, text: arrow + r.name }));
				cells(tr, cols, r, base);
				body.append(tr);
			}
			if (!rows.length)
				body.append(el('tr', { class: 'empty' }, el('td', { colspan: cols.length, text: id === 'callers' ? 'None.' : 'It calls no instrumented function.' })));
		}
	}

	for (const id of ['callers', 'callees'])
		$(id).tBodies[0].addEventListener('click', (ev) => {
			const tr = ev.target.closest('tr[data-fn]');

			if (tr)
				select(F.name[Number(tr.dataset.fn)], true);
		});

	/* Select a function (callers, callees), and the context node of it if one was clicked. */
	function select(fnName, redraw, node) {
		S.selName = fnName;
		S.selNode = node === undefined ? null : node;
		renderEdges();
		if (S.tab === 'flat')
			renderFlat();
		if (S.tab === 'imb')
			renderImb();
		renderTree();
		if (redraw)
			draw();
	}

	/* ---- the run's facts, as the report's banner ---- */

	function renderMeta() {
		const P = D.processes, p = P[0], C = D.compensation;
		const facts = $('facts'), warn = $('warnings');
		let threads = 0;

		for (const t of D.trees)
			threads += t.threads;
		$('title').textContent = D.file;
		$('command').textContent = p.command.join(' ');
		const fact = (s) => facts.append(el('li', { text: s }));
		const w = (s) => warn.append(el('li', { text: s }));
		if (P.length > 1)
			fact(P.length + ' processes merged (pid ' + P.map((q) => q.pid).join(', ') + '), first started ' + fmtDate(Math.min(...P.map((q) => q.start_unix_ns))));
		else
			fact('pid ' + p.pid + ', started ' + fmtDate(p.start_unix_ns) + ', ran ' + fmtNs(p.duration_ns));
		fact(threads + ' thread' + (threads === 1 ? '' : 's'));
		fact(D.calls + ' calls');
		fact(D.paths + ' call paths');
		fact('mode: ' + p.mode + (p.mode === 'counting' ? ' (exact call counts, no times)' : p.mode === 'coverage' ? ' (the functions that ran; no counts, no times)' : ''));
		if (CPU) {
			const T = D.time_source;
			fact('time: CPU time sampled at ' + T.sample_hz + ' Hz (one sample per ' + fmtNs(T.period_ns) + ' of CPU time) on the exact call tree: ' + T.samples + ' samples, ' + fmtPct(T.kernel_samples, T.samples) + ' of them in the kernel; counts are exact; min and max per call are not measured');
			fact('profiler\'s own share: ' + (100 * T.profiler_share).toFixed(1) + '% of the CPU time (samples in callprof\'s hooks), left out of every figure; \'?\' marks times resting on fewer than ' + FEW + ' samples');
			if (T.lost_samples)
				w(T.lost_samples + ' samples stand for CPU time at unknown addresses (a full ring, or a thread\'s latest samples at the dump): counted in their context\'s self time');
			if (T.samples < 100 * FEW)
				w('only ' + T.samples + ' samples: the times are rough (a time resting on k samples is known to about +-100/sqrt(k) %)');
		}
		if (TIMED && !CPU) {
			fact('clock: ' + p.clock + (p.clock.startsWith('tsc') ? ' at ' + (p.ticks_per_second / 1e9).toFixed(3) + ' GHz' : ''));
			const per = C.caller_ns_per_call.toFixed(1) + 'ns per call in the caller, ' + C.callee_ns_per_call.toFixed(1) + 'ns in the callee';
			if (C.applied)
				fact('overhead compensated: ' + per + '; ' + fmtNs(C.subtracted_ns) + ' of ' + fmtNs(C.raw_ns) + ' subtracted (' + fmtPct(C.subtracted_ns, C.raw_ns) + ')');
			else if (C.calibrated)
				fact('raw times: they include hook overhead of ' + per);
			else
				fact('raw times: hook overhead was not calibrated');
		}
		for (const q of P) {
			const pre = P.length > 1 ? 'pid ' + q.pid + ': ' : '';
			const l = q.lost;

			if (q.reconciled_frames)
				w(pre + q.reconciled_frames + ' frames were abandoned by longjmp or exceptions (their exit hooks never ran) and were closed when control left them');
			if (l.calls || l.events || l.unpaired_exits || l.threads)
				w(pre + 'incomplete: ' + l.calls + ' calls in unrecorded paths, ' + l.events + ' events dropped, ' + l.unpaired_exits + ' unpaired exits, ' + l.threads + ' threads not set up');
			if (l.signals)
				w(pre + l.signals + ' signal handler runs were not recorded: the signal arrived while a hook was running');
			if (q.ended === 'killed')
				w(pre + 'the process was killed and the profile written by callprof\'s watcher: calls still open then are counted with time up to that moment');
			else if (q.ended === 'abnormally')
				w(pre + 'the process ended abnormally (fatal signal, abort or _exit): calls still open then are counted with time up to that moment');
		}
		const meta = $('meta');
		for (const q of P) {
			const t = el('table');
			const row = (a, b) => t.append(el('tr', null, el('th', { text: a }), el('td', { class: 'mono', text: String(b) })));
			row('profile', q.file);
			row('command', q.command.join(' '));
			row('executable', q.executable);
			row('host', q.hostname);
			row('pid / ppid', q.pid + ' / ' + q.ppid);
			row('recording mode', q.mode);
			row('clock', q.clock + ', ' + q.ticks_per_second + ' ticks per second');
			row('started', fmtDate(q.start_unix_ns) + ' (' + new Date(q.start_unix_ns / 1e6).toISOString() + ')');
			row('duration', fmtNs(q.duration_ns));
			row('ended', q.ended + (q.forked ? '; a forked child' : ''));
			row('lost', 'calls ' + q.lost.calls + ', events ' + q.lost.events + ', unpaired exits ' + q.lost.unpaired_exits + ', threads ' + q.lost.threads + ', signals ' + q.lost.signals);
			row('reconciled frames', q.reconciled_frames);
			meta.append(t);
		}
		const t = el('table');
		const row = (a, b) => t.append(el('tr', null, el('th', { text: a }), el('td', { class: 'mono', text: String(b) })));
		row('threads', D.threads_mode === 'each' ? 'a tree per thread' : 'merged');
		row('compensation', C.applied ? 'applied' : 'not applied');
		row('hook overhead per call', C.caller_ns_per_call.toFixed(2) + 'ns in the caller, ' + C.callee_ns_per_call.toFixed(2) + 'ns in the callee' + (C.calibrated ? '' : ' (not calibrated)'));
		row('time subtracted', fmtNs(C.subtracted_ns) + ' of ' + fmtNs(C.raw_ns) + ' (' + C.subtracted_ns + 'ns of ' + C.raw_ns + 'ns)');
		meta.append(t);
		document.title = 'callprof: ' + D.file;
	}

	function renderAll() {
		draw();
		renderTree();
		if (S.tab === 'flat')
			renderFlat();
		if (S.tab === 'imb')
			renderImb();
		renderEdges();
	}

	/* ---- start ---- */

	const sel = $('thread');
	views.forEach((v, k) => sel.append(el('option', { value: k, text: v.label })));
	sel.disabled = views.length < 2;
	sel.addEventListener('change', () => setView(Number(sel.value)));
	const msel = $('metric');
	METRICS.forEach((m) => msel.append(el('option', { value: m.id, text: m.id === 'calls' ? 'calls (in and below)' : m.id })));
	msel.value = S.metric.id;
	msel.disabled = METRICS.length < 2;
	msel.addEventListener('change', () => setMetric(msel.value));
	renderMeta();
	setView(firstView);

	window.callprof = {
		data: D,
		state: S,
		view: () => V,
		name: name,
		children: children,
		zoomTo: zoomTo,
		select: (n) => select(n, true),
		/* The imbalance table's rows as shown (null: the page has none). */
		imbalance: () => (imbView < 0 ? null : V.imb ? V.imb.node.map((i, r) => Object.assign(imbRow(V, r), { path: pathOf(i) })) : []),
		setView: setView,
		setMetric: setMetric,
		views: () => views.map((v) => ({ label: v.label, kind: v.kind })),
		flat: () => flat || (flat = computeFlat()),
		/* Where node i is drawn, in CSS pixels of the canvas, or null. */
		frameRect: (i) => {
			for (let k = 0; k < L.n; k++)
				if (L.node[k] === i)
					return { x: L.x[k], y: frameY(L.row[k]), w: L.w[k], h: FH - 1, width: L.width };
			return null;
		},
		drawn: () => L.n,
	};
})();
