// check-html.js --html FILE --json FILE [CHECKS...]: open a page written by
// `callprof export -f html` in Debian's chromium (driven by playwright-core)
// and check it against callprof's own numbers: the json export of the same
// profile (--json) and `callprof report` outputs the test script saved.
// Prints "ok - WHAT" per check; on the first failure prints why and exits 1.
//
// Always: the page loads with no console error or warning and no page
// error, requests nothing but its own file (http and https requests are
// aborted and fail the check), and its model holds the json export's calls
// and times (and samples, for a cpu-mode profile) for every call path; a
// cpu-mode page names its time source and has no min or max columns.  Then, as asked:
//
//   --click NAME          clicking NAME's first frame zooms to it (it then
//                         spans the width, its ancestors stay), selects it
//   --search TEXT         the search highlights exactly the frames whose
//                         name holds TEXT (any case), counted as the json says
//   --regex RE            the same as a regular expression
//   --expand NAME         expanding NAME's row in the call tree shows its
//                         children with their calls
//   --flat FILE           the Functions table is `report --flat --fields=
//                         calls,total,self,name --sort=name` (FILE), and
//                         recursion-aware sums of the json
//   --callers NAME=FILE   selecting NAME lists `report --callers NAME
//                         --fields=calls,name` (FILE) as its callers
//   --callees NAME=FILE   ... and `report --callees` (lines added up)
//   --threads             (an export with --threads=each) it opens on the
//                         threads side by side; one option per tree plus
//                         "all threads" and "each thread apart"; each shows
//                         that tree
//   --empty               a profile in which nothing was called
//   --big                 a large tree: narrow frames are left out and
//                         drawn after a zoom
//   --metric ID=FILE      the Weight switch offers ID and starts at the json's
//                         weight; switching to ID re-weights the frames (widths
//                         in proportion to ID's figures), the call tree's
//                         percentages and its order, and the tree's cpu figures
//                         are `report --sort=cpu --fields=calls,cpu,cpu-percent,
//                         name` (FILE)'s
//   --first ID            ... and the export's weight is ID
//   --each-json FILE      the thread switch of a merged export: each thread's
//                         view is that thread's tree in FILE (`export -f json
//                         --threads=each`)
//   --thread-report FILE  ... and its calls and cpu are those of `report
//                         --threads=each --fields=calls,cpu,name` (FILE)
//   --imbalance FILE      (a merged profile) the Imbalance tab's table is
//                         `report --imbalance` (FILE): its rows, cell by cell,
//                         are the table's first rows, in that order; clicking
//                         the first row shows that context's distribution in
//                         the side panel, naming the inputs holding max and min.
//                         Without it, a profile whose json has no imbalance
//                         (no per-input distribution) must show no such tab
//   --layout N            at 1400x900 and 1920x1080: the graph, the tables and
//                         the side panel do not overlap, every header of the
//                         tables (Max among them) can be seen, and names in the
//                         Function column show at least N characters
//   --open N              expand the call tree down to depth N (for the picture)
//   --select NAME         select NAME (for the picture)
//   --screenshot PNG      save a picture of the whole page (with --search's
//                         highlights)
'use strict';
const fs = require('fs');
const { pathToFileURL } = require('url');
const { chromium } = require('playwright-core');

const args = {};
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i];
	if (!a.startsWith('--'))
		throw new Error('unexpected argument ' + a);
	const key = a.slice(2);
	if (['threads', 'empty', 'big'].includes(key))
		args[key] = true;
	else
		args[key] = process.argv[++i];
}

let failed = false;
function ok(what) {
	console.log('ok - ' + what);
}
function fail(what, detail) {
	console.log('not ok - ' + what);
	if (detail !== undefined)
		console.log('# ' + (typeof detail === 'string' ? detail : JSON.stringify(detail, null, 1)).split('\n').join('\n# '));
	failed = true;
	throw new Error('check failed: ' + what);
}
function check(cond, what, detail) {
	if (cond)
		ok(what);
	else
		fail(what, typeof detail === 'function' ? detail() : detail);
}
function sameJSON(a, b) {
	return JSON.stringify(a) === JSON.stringify(b);
}

// ---- the reference: callprof's json export ----

const J = JSON.parse(fs.readFileSync(args.json, 'utf8'));
const fnName = (f) => (f === null ? null : J.functions[f].name);

// Per tree: children lists and the path of names of every node.
function treeInfo(t) {
	const n = t.nodes.length, kids = Array.from({ length: n }, () => []), paths = new Array(n);
	for (let i = 1; i < n; i++)
		kids[t.nodes[i].parent].push(i);
	paths[0] = '';
	for (let i = 1; i < n; i++) {
		const p = t.nodes[i].parent;
		paths[i] = (paths[p] ? paths[p] + ';' : '') + fnName(t.nodes[i].function);
	}
	// The frame widths of a profile without times: the calls in and below.
	const below = t.nodes.map((n) => n.calls);
	for (let i = n - 1; i > 0; i--)
		below[t.nodes[i].parent] += below[i];
	return { t, kids, paths, below };
}
const trees = J.trees.map(treeInfo);

// Calls, total and self per path of names (names can repeat, so add up).
function pathSums(infos) {
	const m = {};
	for (const { t, paths } of infos)
		for (let i = 1; i < t.nodes.length; i++) {
			const n = t.nodes[i], s = m[paths[i]] || (m[paths[i]] = [0, 0, 0, 0, 0]);
			s[0] += n.calls;
			s[1] += n.total_ns || 0;
			s[2] += n.self_ns || 0;
			s[3] += n.samples || 0;	// cpu-mode profiles only
			s[4] += n.self_samples || 0;
		}
	return m;
}

// A function's total counts only contexts it is not already active above.
function flatOf(infos) {
	const m = {};
	for (const { t } of infos)
		for (let i = 1; i < t.nodes.length; i++) {
			const n = t.nodes[i], f = n.function;
			let nested = false;
			for (let a = n.parent; a > 0; a = t.nodes[a].parent)
				if (t.nodes[a].function === f)
					nested = true;
			const s = m[f] || (m[f] = { name: fnName(f), calls: 0, total: 0, self: 0 });
			s.calls += n.calls;
			s.self += n.self_ns || 0;
			if (!nested)
				s.total += n.total_ns || 0;
		}
	return m;
}

// A json node's figure for metric id (the page's metric switch); below: the calls in and below it.
function nodeValue(n, below, id) {
	switch (id) {
	case 'total': return n.total_ns;
	case 'cpu': return Math.max(0, n.total_ns - (n.wait_ns || 0) - (n.inactive_ns || 0));
	case 'wait': return n.wait_ns;
	case 'inactive': return n.inactive_ns;
	case 'samples': return n.samples;
	default: return below;
	}
}

// `report` rows: leading numbers (calls, and times as the report prints
// them), then the name after the two spaces that end the last column.
function reportRows(file, nnum) {
	const rows = [];
	for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
		if (!line.trim() || line.trim().startsWith('at ') || line.trim().startsWith('inlined'))
			continue;
		const m = line.match(new RegExp('^\\s*' + '(\\S+)\\s+'.repeat(nnum) + '(.*)$'));
		if (!m)
			throw new Error('cannot read report line: ' + line);
		rows.push({ nums: m.slice(1, nnum + 1), name: m[nnum + 1] });
	}
	return rows;
}

// "3.25us" (perhaps "~3.25us", or "?3.25us" on few samples) in ns, and
// half its last digit's worth.
function parseTime(s) {
	const m = s.replace(/^[~?]/, '').match(/^([0-9.]+)(ns|us|ms|s)$/);
	const unit = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[m[2]];
	const decimals = (m[1].split('.')[1] || '').length;
	return { ns: Number(m[1]) * unit, slack: 0.5 * unit * Math.pow(10, -decimals) + 1e-6 * unit };
}

// ---- the switches and the layout ----

// `report --fields=calls,cpu[,cpu-percent],name` tree output by thread
// section ("" for a merged report): rows of calls, cpu, its share and
// name, leaving out code without hooks ("-" calls).
function reportSections(file) {
	const out = {};
	let cur = '', pct = false;
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		const sec = line.match(/^== (.*?) \(/);
		if (sec) {
			cur = sec[1];
			continue;
		}
		if (/^\s*calls\s/.test(line))
			pct = /cpu%/.test(line);
		const m = line.match(pct ? /^\s*(\S+)\s+(\S+)\s+(\S+)  (\s*)(\S.*)$/ : /^\s*(\S+)\s+(\S+)()  (\s*)(\S.*)$/);
		if (!m || line.startsWith('#') || m[1] === 'calls' || m[1] === '-')
			continue;
		(out[cur] || (out[cur] = [])).push({ calls: Number(m[1]), cpu: m[2], pct: m[3], depth: m[4].length / 2, name: m[5] });
	}
	return out;
}

// Every report row (a context: name, depth, calls) has a node of the page's
// current view with that name, depth and calls and its cpu to the report's precision.
async function matchReport(page, rows, what) {
	const nodes = await page.evaluate(() => {
		const V = callprof.view(), r = [];
		for (let i = 1; i < V.n; i++)
			if (V.fn[i] >= 0)
				r.push({ name: callprof.name(i), depth: V.depth[i] - (V.fn[V.parent[i]] === -2 ? 1 : 0), calls: V.calls[i], cpu: V.cpu[i], root: V.cpu[0] });
		return r;
	});
	/* The report's cpu% (--sort=cpu): the share of the root's cpu, as the page's CPU %. */
	const pctOk = (r, n) => !r.pct || Math.abs(Number(r.pct.replace(/^[?~]/, '')) - (n.root ? 100 * n.cpu / n.root : 0)) <= 0.0051;
	const bad = rows.filter((r) => {
		const t = parseTime(r.cpu);
		return !nodes.some((n) => n.name === r.name && n.depth === r.depth + 1 && n.calls === r.calls && Math.abs(n.cpu - t.ns) <= t.slack && pctOk(r, n));
	});
	check(rows.length > 0 && !bad.length, what + ': every row of the report (' + rows.length + ') has its context with its calls, cpu' + (rows[0] && rows[0].pct ? ' and cpu%' : ''), bad);
}

// `report --imbalance` rows: cells cut at the header's columns (the
// holders' names hold spaces), the call path to the end of the line.
function imbalanceRows(file) {
	const lines = fs.readFileSync(file, 'utf8').split('\n');
	const h = lines.findIndex((l) => /^ *imbalance +imb% /.test(l));
	if (h < 0)
		throw new Error(file + ': no imbalance header');
	const head = lines[h], at = (w) => head.indexOf(w);
	const cuts = [at('max-at'), at('min-at'), at('call path')];
	const keys = ['value', 'pct', 'mean', 'stddev', 'min', 'max', 'calls'];
	return lines.slice(h + 1).filter((l) => l.trim()).map((l) => {
		const r = {}, nums = l.slice(0, cuts[0]).trim().split(/\s+/);
		keys.forEach((k, n) => {
			r[k] = nums[n];
		});
		r.maxAt = l.slice(cuts[0], cuts[1]).trim();
		r.minAt = l.slice(cuts[1], cuts[2]).trim();
		r.path = l.slice(cuts[2]);
		return r;
	});
}

async function checkImbalance(page, reportFile) {
	const t0 = J.trees.length === 1 ? J.trees[0].nodes : [];
	const has = t0.some((n) => n.spread && n.spread.imbalance);
	const tab = await page.locator('#tab-imb').count();
	if (!reportFile) {
		if (!has)
			check(tab === 0 && (await page.evaluate(() => callprof.imbalance())) === null,
				'no per-input distribution: no Imbalance tab');
		return;
	}
	check(has && tab === 1, 'a merged profile with the distribution: the page has an Imbalance tab');
	await page.locator('#tab-imb').click();
	const shown = await page.$$eval('#imb-table tbody tr[data-node]', (trs) => trs.map((tr) => {
		const r = {};
		for (const td of tr.querySelectorAll('td'))
			r[td.className.replace(/^name /, '').replace(/^c-/, '')] = td.textContent;
		return r;
	}));
	const heads = await page.$$eval('#imb-table thead th', (ths) => ths.map((th) => th.textContent));
	check(sameJSON(heads, ['Imbalance', 'Imb %', 'Mean', 'Stddev', 'Min', 'Max', 'Calls', 'Max at', 'Min at', 'Call path']),
		'... with report --imbalance\'s columns', heads);
	const exp = imbalanceRows(reportFile);
	const got = shown.slice(0, exp.length);
	check(exp.length > 0 && sameJSON(got, exp),
		'its first ' + exp.length + ' rows are report --imbalance\'s, cell by cell (first: ' + (exp[0] && exp[0].path) + ', max at ' + (exp[0] && exp[0].maxAt) + ')', { got, exp });
	const ins = await page.evaluate(() => callprof.data.inputs);
	const named = new Set(exp.flatMap((r) => [r.maxAt, r.minAt]));
	check([...named].every((n) => ins.includes(n)), 'the inputs it names are the profile\'s (' + [...named].join(', ') + ')', ins);
	await page.locator('#imb-table tbody tr[data-node]').first().click();
	const dist = await page.$$eval('#fn-info #dist dt, #fn-info #dist dd', (es) => es.map((e) => e.textContent));
	const pathShown = await page.$eval('#fn-info .path', (e) => e.textContent);
	const d = {};
	for (let k = 0; k + 1 < dist.length; k += 2)
		d[dist[k]] = dist[k + 1];
	const e = exp[0];
	check(pathShown === e.path && d.max === e.max + ' at ' + e.maxAt && d.min === e.min + ' at ' + e.minAt &&
		d['mean / stddev'].startsWith(e.mean + ' / ' + e.stddev) && d.imbalance.startsWith(e.value + ' (' + e.pct + '%'),
		'clicking the first row shows its distribution in the side panel (max ' + e.max + ' at ' + e.maxAt + ')', { pathShown, d, e });
	check(await page.locator('#imb-table tbody tr.sel').count() === 1, '... and marks its row');
	await page.locator('#tab-tree').click();
}

async function checkMetric(page, id, reportFile) {
	const ids = await page.$$eval('#metric option', (os) => os.map((o) => o.value));
	const first = await page.evaluate(() => callprof.state.metric.id);
	const weight = await page.evaluate(() => callprof.data.weight);
	check(ids.includes(id) && first === weight && (!args.first || first === args.first),
		'the weight switch offers ' + ids.join(', ') + ' and starts at the export\'s weight (' + weight + ')', { ids, first, weight });
	const other = ids.find((m) => m !== id);
	for (const m of [other, id]) {
		await page.locator('#metric').selectOption(m);
		await page.locator('#tab-tree').click();
		const st = await page.evaluate(() => {
			const V = callprof.view(), kids = callprof.children(0), r0 = callprof.frameRect(0);
			const rows = [...document.querySelectorAll('#tree-table tbody tr[data-parent="0"]')].map((tr) => ({
				node: Number(tr.dataset.node), pct: tr.querySelector('.c-totalPct').textContent,
			}));
			return {
				metric: callprof.state.metric.id, sortKey: callprof.state.treeSort.key,
				head: document.querySelector('#tree-table thead th[data-key="totalPct"]').textContent,
				rootW: r0.w, root: V.value[0],
				kids: kids.map((i) => ({ i, v: V.value[i], r: callprof.frameRect(i) })), rows,
			};
		});
		// The json's figure of the merged tree's top-level contexts, by name.
		const info = trees[0], want = {};
		for (const k of info.kids[0])
			want[fnName(info.t.nodes[k].function)] = nodeValue(info.t.nodes[k], info.below[k], m);
		const root = nodeValue(info.t.nodes[0], info.below[0], m);
		const names = await page.evaluate((ks) => ks.map((i) => callprof.name(i)), st.kids.map((k) => k.i));
		// As wide as their figure; where the children's figures add up to
		// more than the parent's (cpu is clamped at 0 context by context),
		// the last ones are cut at the parent's edge, or left out.
		let used = 0;
		const widthsOk = st.root === root && st.kids.every((k, n) => {
			const w = st.rootW * k.v / st.root, full = used >= st.rootW - 1;
			const ok = k.v === want[names[n]] && (k.r ?
				Math.abs(k.r.w - w) < 0.01 || (k.r.w < w && Math.abs(k.r.x + k.r.w - st.rootW) < 0.01) :
				w < 1 || full || used + w > st.rootW - 1);
			used += k.r ? k.r.w : 0;
			return ok;
		});
		check(st.metric === m && widthsOk, 'weight ' + m + ': the top frames are as wide as their ' + m + ' in the json', { st, want, root });
		const pctOk = st.rows.length === st.kids.length && st.rows.every((r) => {
			const n = st.kids.find((k) => k.i === r.node);
			/* '?': a share resting on few samples. */
			return r.pct.replace(/^[?~]/, '') === (root ? (100 * n.v / root).toFixed(2) + '%' : '-');
		});
		const order = st.rows.map((r) => st.kids.find((k) => k.i === r.node).v);
		check(pctOk && sameJSON(order, order.slice().sort((a, b) => b - a)) && / %$/.test(st.head),
			'... the call tree\'s "' + st.head + '" column is their share, and it orders them by ' + m, st.rows);
	}
	if (reportFile)
		await matchReport(page, reportSections(reportFile)[''] || [], 'weight ' + id);
}

async function checkThreadViews(page, eachFile, reportFile) {
	const E = JSON.parse(fs.readFileSync(eachFile, 'utf8'));
	const views = await page.evaluate(() => callprof.views());
	const labels = views.filter((v) => v.kind === 'thread').map((v) => v.label);
	check(!(await page.locator('#thread').isDisabled()) &&
		sameJSON(labels, E.trees.map((t) => t.label)) && views[0].kind === 'merged' && views[1].kind === 'each',
		'a merged export\'s thread switch offers all threads, side by side, and each of ' + labels.join(', '), views);
	const rep = reportFile ? reportSections(reportFile) : {};
	for (let k = 0; k < E.trees.length; k++) {
		const t = E.trees[k], vi = views.findIndex((v) => v.kind === 'thread' && v.label === t.label);
		await page.locator('#thread').selectOption(String(vi));
		const got = await page.evaluate(() => {
			const V = callprof.view(), r = [];
			for (let i = 1; i < V.n; i++)
				r.push([callprof.name(i), V.depth[i], V.calls[i], V.total[i], V.self[i]]);
			return r.sort();
		});
		const info = treeInfo(t), want = [];
		const depth = (i) => (i ? depth(t.nodes[i].parent) + 1 : 0);
		for (let i = 1; i < t.nodes.length; i++)
			want.push([fnName(t.nodes[i].function), depth(i), t.nodes[i].calls, t.nodes[i].total_ns || 0, t.nodes[i].self_ns || 0]);
		want.sort();
		check(info && sameJSON(got, want), 'thread ' + t.label + ': its view is its tree of the --threads=each json (' + want.length + ' contexts)',
			() => ({ got: got.slice(0, 5), want: want.slice(0, 5) }));
		if (reportFile)
			await matchReport(page, rep[t.label] || [], 'thread ' + t.label);
	}
	await page.locator('#thread').selectOption('0');
}

async function checkLayout(page, minChars) {
	for (const [w, h] of [[1400, 900], [1920, 1080]]) {
		await page.setViewportSize({ width: w, height: h });
		await page.evaluate(() => new Promise((r) => setTimeout(r, 250)));	// the graph redraws
		for (const tab of ['tree', 'flat']) {
			await page.locator('#tab-' + tab).click();
			const st = await page.evaluate(([tab, minChars]) => {
				const box = (e) => e.getBoundingClientRect();
				const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
				const tables = document.querySelector('.tables'), panel = document.getElementById('fn-panel');
				const graph = document.getElementById('graph');
				const table = document.getElementById(tab + '-table');
				const res = { overlaps: [], hidden: [], short: [], heads: [] };
				for (const [a, b] of [['tables', tables], ['graph', graph]])
					for (const [c, d] of [['panel', panel], ['tables', tables]])
						if (a !== c && overlap(box(b), box(d)))
							res.overlaps.push(a + ' and ' + c);
				// What can be seen of the table: no wider than its own box, which the panel is beside.
				const tb = box(table), cb = box(tables);
				const seenRight = getComputedStyle(tables).overflowX === 'visible' ? tb.right : Math.min(tb.right, cb.right);
				if (seenRight > box(panel).left + 0.5 && box(panel).top < tb.bottom)
					res.overlaps.push('table and panel');
				for (const th of table.querySelectorAll('thead th')) {
					th.scrollIntoView({ block: 'nearest', inline: 'nearest' });
					const r = box(th), e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
					res.heads.push(th.textContent);
					if (!e || !th.contains(e))
						res.hidden.push(th.textContent + ' under ' + (e ? e.tagName + '#' + e.id + '.' + e.className : 'nothing'));
				}
				tables.scrollLeft = 0;
				window.scrollTo(0, 0);
				// Visible characters of the first rows' names (top-level rows in the tree).
				const cells = [...table.querySelectorAll('tbody tr td.name')].slice(0, 30);
				for (const td of cells) {
					const tr = td.parentElement;
					if (tab === 'tree' && Number(tr.dataset.depth) > 2)
						continue;
					const text = td.querySelector('.nm') || td, name = text.textContent;
					const c = document.createElement('canvas').getContext('2d');
					c.font = getComputedStyle(td).font;
					const charW = c.measureText('m'.repeat(10)).width / 10;
					const right = box(td).right - parseFloat(getComputedStyle(td).paddingRight);
					const seen = Math.floor((Math.min(right, box(text).right) - box(text).left) / charW + 0.01);
					if (seen < Math.min(minChars, name.length))
						res.short.push(name.slice(0, 40) + ': ' + seen + ' characters');
				}
				res.names = cells.length;
				return res;
			}, [tab, minChars]);
			check(!st.overlaps.length, w + 'x' + h + ', ' + tab + ': the graph, the tables and the side panel do not overlap', st.overlaps);
			check(!st.hidden.length && (tab !== 'flat' || !J.timed || J.time_source && J.time_source.source === 'cpu-samples' || st.heads.includes('Max')),
				'... every header of the table (' + st.heads.length + (st.heads.includes('Max') ? ', Max among them' : '') + ') can be seen', st.hidden);
			check(st.names > 0 && !st.short.length, '... names show at least ' + minChars + ' characters', st.short);
		}
	}
	await page.setViewportSize({ width: 1280, height: 900 });
}

// ---- the page ----

(async () => {
	const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
	try {
		const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
		const url = pathToFileURL(args.html).href;
		const problems = [], requests = [];

		page.on('console', (m) => {
			if (m.type() === 'error' || m.type() === 'warning')
				problems.push('console ' + m.type() + ': ' + m.text());
		});
		page.on('pageerror', (e) => problems.push('page error: ' + e.message));
		page.on('request', (r) => {
			if (r.url() !== url)
				requests.push(r.url());
		});
		await page.route(/^https?:/, (route) => {
			requests.push(route.request().url());
			route.abort();
		});
		const t0 = Date.now();
		await page.goto(url, { waitUntil: 'load' });
		await page.waitForFunction(() => window.callprof !== undefined, null, { timeout: 30000 });
		console.log('# loaded in ' + (Date.now() - t0) + ' ms, ' +
			(await page.evaluate(() => callprof.view().n)) + ' nodes, ' +
			(await page.evaluate(() => callprof.drawn())) + ' frames drawn');
		check(!problems.length, 'the page loads with no console or page errors', problems.join('\n'));
		check(!requests.length, 'the page requests nothing but its own file', requests.join('\n'));

		const width = await page.evaluate(() => callprof.frameRect(0).width);
		const canvas = page.locator('#flame');

		// The page's tree, per path of names, is the json's.
		const pageSums = await page.evaluate(() => {
			const V = callprof.view(), m = {}, paths = new Array(V.n);
			paths[0] = '';
			for (let i = 1; i < V.n; i++) {
				const p = V.parent[i];
				const own = V.fn[i] >= 0 ? callprof.name(i) : null;
				paths[i] = own === null ? '' : (paths[p] ? paths[p] + ';' : '') + own;
				if (own === null)
					continue;
				const s = m[paths[i]] || (m[paths[i]] = [0, 0, 0, 0, 0]);
				s[0] += V.calls[i];
				s[1] += V.total[i];
				s[2] += V.self[i];
				s[3] += V.samples[i];
				s[4] += V.selfSamples[i];
			}
			return m;
		});
		const want = pathSums(trees);
		const keys = Object.keys(want).sort();
		check(sameJSON(keys, Object.keys(pageSums).sort()) &&
			keys.every((k) => sameJSON(want[k], pageSums[k])),
			'the page holds the json export\'s calls, total, self and samples of every call path (' + keys.length + ')',
			() => keys.filter((k) => !sameJSON(want[k], pageSums[k])).slice(0, 5).map((k) => k + ': ' + JSON.stringify(want[k]) + ' vs ' + JSON.stringify(pageSums[k])).join('\n'));

		// Sampled CPU time (cpu mode): the banner names the source, the call
		// tree shows samples and no min or max (they were not measured).
		if (J.time_source && J.time_source.source === 'cpu-samples') {
			const facts = await page.locator('#facts').innerText();
			const heads = await page.$$eval('#tree-table thead th', (ths) => ths.map((th) => th.textContent));
			const rootSamples = await page.evaluate(() => callprof.view().samples[0]);
			const want = J.trees.reduce((a, t) => a + t.nodes[0].samples, 0);
			check(facts.includes('CPU time sampled at ' + J.time_source.sample_hz + ' Hz') &&
				facts.includes(J.time_source.samples + ' samples') &&
				heads.includes('Samples') && heads.includes('Self samples') &&
				!heads.includes('Min') && !heads.includes('Max') && rootSamples === want,
				'cpu mode: the facts name the time source, the tree has samples (' + want + ') and no min or max',
				() => facts + '\n' + heads.join(',') + '\nroot samples ' + rootSamples + ' not ' + want);
		}

		// Where node i is drawn, relative to the canvas.
		const rect = (i) => page.evaluate((k) => callprof.frameRect(k), i);
		const nodesNamed = (name) => page.evaluate((nm) => {
			const V = callprof.view(), r = [];
			for (let i = 0; i < V.n; i++)
				if (V.fn[i] >= 0 && callprof.name(i) === nm)
					r.push(i);
			return r;
		}, name);

		// The json's count of frames whose name passes test, and the share
		// of the root's value they cover (no frame counted under another).
		const metricId = await page.evaluate(() => callprof.state.metric.id);
		const metricWords = await page.evaluate(() => callprof.state.metric.words);
		const expectedSearch = (test) => {
			let count = 0, covered = 0, root = 0;
			for (const { t, below } of trees) {
				const hit = (i) => i > 0 && test(fnName(t.nodes[i].function));
				const value = (i) => nodeValue(t.nodes[i], below[i], metricId);
				root += value(0);
				for (let i = 1; i < t.nodes.length; i++) {
					if (!hit(i))
						continue;
					count++;
					let a = t.nodes[i].parent;
					while (a > 0 && !hit(a))
						a = t.nodes[a].parent;
					if (a <= 0)
						covered += value(i);
				}
			}
			return { count, share: root ? covered / root : 0 };
		};
		const runSearch = async (text, regex, test) => {
			await page.locator('#regex').setChecked(regex);
			await page.locator('#search').fill(text);
			await page.waitForFunction((q) => callprof.state.search === q, text);
			const st = await page.evaluate(() => ({
				count: callprof.state.matchCount, share: callprof.state.matchShare,
				status: document.getElementById('search-status').textContent,
			}));
			const exp = expectedSearch(test);
			check(st.count === exp.count && st.status.startsWith(exp.count + ' frame'),
				'searching ' + (regex ? 'the regex ' : '') + JSON.stringify(text) + ' matches ' + exp.count + ' frames, as the json says', st);
			const of = metricId === 'calls' ? 'all calls' : 'the ' + metricWords;
			check(st.status.includes((100 * exp.share).toFixed(2) + '% of ' + of),
				'... covering ' + (100 * exp.share).toFixed(2) + '% of ' + of, st.status);
			// Every drawn frame is highlighted if and only if it matched.
			const wrong = await page.evaluate(() => {
				/* Read a copy: reading the page's canvas again and again makes chromium warn. */
				const c = document.getElementById('flame'), copy = document.createElement('canvas');
				copy.width = c.width;
				copy.height = c.height;
				const g = copy.getContext('2d', { willReadFrequently: true });
				g.drawImage(c, 0, 0);
				const img = g.getImageData(0, 0, c.width, c.height);
				const dpr = c.width / parseFloat(c.style.width), V = callprof.view(), bad = [];
				let seen = 0;
				for (let i = 0; i < V.n; i++) {
					const r = callprof.frameRect(i);
					if (!r || r.w < 3)
						continue;
					/* Left of the name (drawn from x + 3); nothing is selected yet, so no outline. */
					const o = 4 * (Math.floor((r.y + r.h / 2) * dpr) * c.width + Math.floor((r.x + 1.5) * dpr));
					const px = img.data.subarray(o, o + 4);
					const lit = px[0] === 0xe0 && px[1] === 0x40 && px[2] === 0xe0;
					seen++;
					if (lit !== !!callprof.state.matched[i])
						bad.push(callprof.name(i) + (lit ? ' lit' : ' not lit') + ' at ' + JSON.stringify(r) + ': ' + Array.from(px));
				}
				return { seen, bad };
			});
			check(wrong.seen > 0 && !wrong.bad.length, 'the drawn frames that matched, and only they, are highlighted (' + wrong.seen + ' looked at)', wrong.bad.join('\n'));
		};
		if (args.search) {
			const q = args.search.toLowerCase();
			await runSearch(args.search, false, (s) => s.toLowerCase().includes(q));
		}
		if (args.regex) {
			const re = new RegExp(args.regex, 'i');
			await runSearch(args.regex, true, (s) => re.test(s));
		}
		if (args.search || args.regex) {
			await page.locator('#regex').setChecked(true);
			await page.locator('#search').fill('(');
			await page.waitForFunction(() => callprof.state.search === '(');
			check(problems.length === 0 && /not a regular expression/.test(await page.locator('#search-status').innerText()),
				'a broken regex is reported on the page, not thrown', problems.join('\n'));
			await page.locator('#regex').setChecked(false);
			await page.locator('#search').fill('');
			await page.waitForFunction(() => callprof.state.search === '' && !callprof.state.matched);
		}

		if (args.click) {
			const cands = await nodesNamed(args.click);
			// The widest that is narrower than the graph: mouse positions are whole pixels.
			let node = -1, r = null;
			for (const i of cands) {
				const ri = await rect(i);
				if (ri && ri.w >= 4 && ri.w < width - 1 && (!r || ri.w > r.w)) {
					node = i;
					r = ri;
				}
			}
			check(node >= 0, 'a frame of ' + args.click + ' is drawn narrower than the graph');
			const parent = await page.evaluate((i) => callprof.view().parent[i], node);
			await canvas.hover({ position: { x: r.x + r.w / 2, y: r.y + r.h / 2 } });
			const tipText = await page.locator('#tip').innerText();
			const calls = await page.evaluate((i) => callprof.view().calls[i], node);
			check(await page.locator('#tip').isVisible() && tipText.includes(args.click) &&
				new RegExp('calls\\s+' + calls + '\\b').test(tipText),
				'hovering the frame shows its name and calls (' + calls + ')', tipText);
			await canvas.click({ position: { x: r.x + r.w / 2, y: r.y + r.h / 2 } });
			const zoom = await page.evaluate(() => callprof.state.zoom);
			const after = await rect(node), pr = await rect(parent);
			check(zoom === node && after && after.x === 0 && after.w === width,
				'clicking the frame zooms to it: it spans the full width', { zoom, node, after, width });
			check(pr && pr.x === 0 && pr.w === width, 'its parent stays drawn, full width', pr);
			check(await page.locator('#fn-info .fname').innerText() === args.click,
				'clicking the frame selects its function');
			await page.locator('#crumbs a').first().click();
			check(await page.evaluate(() => callprof.state.zoom) === 0, 'the breadcrumb\'s root zooms back out');
			await canvas.click({ position: { x: r.x + r.w / 2, y: r.y + r.h / 2 } });
			await page.locator('#reset').click();
			check(await page.evaluate(() => callprof.state.zoom) === 0 && (await rect(node)).w === r.w,
				'reset zoom draws the frame as before');
			await page.locator('#kind-icicle').click();
			const ic = await rect(0);
			check(ic.y === 0, 'the icicle toggle puts the root at the top', ic);
			await page.locator('#kind-flame').click();
			check((await rect(0)).y > 0 || (await page.evaluate(() => callprof.drawn())) === 1,
				'the flame toggle puts it back at the bottom');
		}

		// Rows of the call tree under node i: [name, calls].
		const treeRowsUnder = (i) => page.$$eval('#tree-table tbody tr[data-parent="' + i + '"]',
			(trs) => trs.map((tr) => [tr.querySelector('.nm').textContent, Number(tr.querySelector('.c-calls').dataset.v)]));
		const jsonKids = (info, i) => info.kids[i].map((k) => [fnName(info.t.nodes[k].function), info.t.nodes[k].calls]);
		const sorted = (a) => a.slice().sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]));

		if (args.expand) {
			const info = trees[0];
			const jn = info.kids[0].find((k) => fnName(info.t.nodes[k].function) === args.expand);
			const pn = (await page.evaluate(() => callprof.children(0).map((i) => [i, callprof.name(i)])))
				.find((c) => c[1] === args.expand)[0];
			const row = page.locator('#tree-table tbody tr[data-node="' + pn + '"]');
			check(await row.count() === 1 && (await treeRowsUnder(pn)).length === 0,
				'the call tree shows ' + args.expand + ' collapsed');
			await row.locator('.tog').click();
			const got = await treeRowsUnder(pn), exp = jsonKids(info, jn);
			check(got.length > 0 && sameJSON(sorted(got), sorted(exp)),
				'expanding it shows its ' + exp.length + ' children with their calls', { got, exp });
			const kidsCalls = got.map((r) => r[1]);
			const order = await page.$$eval('#tree-table thead th', (ths) => ths.map((th) => th.dataset.key));
			await page.locator('#tree-table thead th[data-key="calls"]').click();
			const byCalls = (await treeRowsUnder(pn)).map((r) => r[1]);
			check(order.includes('calls') && sameJSON(byCalls, kidsCalls.slice().sort((a, b) => b - a)),
				'clicking the calls header sorts the rows by calls', byCalls);
			await row.locator('.tog').click();
			check((await treeRowsUnder(pn)).length === 0, 'clicking again collapses it');
		}

		if (args.flat) {
			await page.locator('#tab-flat').click();
			const rows = await page.$$eval('#flat-table tbody tr[data-fn]', (trs) => trs.map((tr) => {
				const v = (k) => {
					const td = tr.querySelector('.c-' + k);
					return td ? Number(td.dataset.v) : null;
				};
				return { name: tr.querySelector('.name').textContent, calls: v('calls'), total: v('total'), self: v('self') };
			}));
			const rep = reportRows(args.flat, J.timed ? 3 : 1);
			const byName = (a) => a.slice().sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.calls - y.calls));
			const got = byName(rows), exp = byName(rep.map((r) => ({ name: r.name, calls: r.nums[0] === '-' ? 0 : Number(r.nums[0]), t: r.nums[1], s: r.nums[2] })));
			check(got.length === exp.length && got.every((r, k) => r.name === exp[k].name && r.calls === exp[k].calls),
				'the Functions table has report --flat\'s functions and calls (' + exp.length + ')', { got, exp });
			if (J.timed) {
				const off = got.filter((r, k) => {
					const t = parseTime(exp[k].t), s = parseTime(exp[k].s);
					return Math.abs(r.total - t.ns) > t.slack || Math.abs(r.self - s.ns) > s.slack;
				});
				check(!off.length, '... and its total and self, to the report\'s precision', off);
				const fl = flatOf(trees);
				const exact = Object.values(fl).filter((s) => s.calls || s.total).map((s) => ({ name: s.name, calls: s.calls, total: s.total, self: s.self }));
				check(sameJSON(byName(exact), got), '... exactly the json\'s sums (total counting recursion once)', { exact, got });
			}
		}

		if (args.callers || args.callees) {
			const sel = (args.callers || args.callees).split('=')[0];
			if (!(await page.locator('#pane-flat').isVisible()))
				await page.locator('#tab-flat').click();
			await page.locator('#flat-table tbody tr[data-fn]').filter({ has: page.locator('td.name', { hasText: new RegExp('^' + sel.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$') }) }).first().click();
			check(await page.locator('#fn-info .fname').innerText() === sel, 'clicking ' + sel + '\'s row selects it');
			for (const [kind, spec] of [['callers', args.callers], ['callees', args.callees]]) {
				if (!spec)
					continue;
				const file = spec.slice(spec.indexOf('=') + 1);
				const exp = {};
				for (const r of reportRows(file, 1))
					if (/^(<-|->) /.test(r.name)) {
						const n = r.name.slice(3);
						exp[n] = (exp[n] || 0) + Number(r.nums[0]);
					}
				const rows = await page.$$eval('#' + kind + ' tbody tr:not(.empty)', (trs) => trs.map((tr) => [tr.querySelector('.name').textContent.slice(2), Number(tr.querySelector('.c-calls').dataset.v)]));
				const got = {};
				for (const [n, c] of rows)
					got[n] = (got[n] || 0) + c;
				check(Object.keys(exp).length > 0 && sameJSON(Object.entries(got).sort(), Object.entries(exp).sort()),
					'its ' + kind + ' and their calls are report --' + kind + '\'s', { got, exp });
			}
		}

		if (args.threads) {
			const first = await page.evaluate(() => callprof.views()[callprof.state.view].kind);
			check(first === 'each', 'exported with --threads=each, the page opens on the threads side by side', first);
			const opts = await page.$$eval('#thread option', (os) => os.map((o) => o.textContent));
			check(sameJSON(opts, ['all threads', 'each thread apart', ...J.trees.map((t) => t.label)]),
				'the thread switch offers all threads, each thread apart and each thread', opts);
			const seen = new Set();
			for (let k = 0; k < J.trees.length; k++) {
				await page.locator('#thread').selectOption(String(k + 2));
				const root = await page.$eval('#tree-table tbody tr[data-node="0"] .nm', (e) => e.textContent);
				const top = await treeRowsUnder(0), exp = jsonKids(trees[k], 0);
				const r0 = await rect(0);
				const sums = await page.evaluate(() => {
					const V = callprof.view();
					let c = 0;
					for (let i = 1; i < V.n; i++)
						c += V.calls[i];
					return [V.n, c];
				});
				const jc = trees[k].t.nodes.reduce((s, n) => s + n.calls, 0);
				check(root === J.trees[k].label && sameJSON(sorted(top), sorted(exp)) &&
					r0.w === width && sameJSON(sums, [trees[k].t.nodes.length, jc]),
					'thread ' + J.trees[k].label + ': its own tree (' + sums[0] + ' nodes, ' + jc + ' calls)',
					{ root, top, exp, sums });
				seen.add(JSON.stringify(sorted(top)) + sums);
			}
			check(seen.size > 1, 'the threads\' trees differ');
			await page.locator('#thread').selectOption('0');
		}

		await checkImbalance(page, args.imbalance);
		if (args.metric)
			await checkMetric(page, args.metric.split('=')[0], args.metric.slice(args.metric.indexOf('=') + 1));
		if (args['each-json'])
			await checkThreadViews(page, args['each-json'], args['thread-report']);
		if (args.layout)
			await checkLayout(page, Number(args.layout));

		if (args.empty) {
			const st = await page.evaluate(() => ({ n: callprof.view().n, drawn: callprof.drawn() }));
			const flatText = await (async () => {
				await page.locator('#tab-flat').click();
				return page.locator('#flat-table tbody').innerText();
			})();
			await page.locator('#search').fill('main');
			await page.waitForFunction(() => callprof.state.search === 'main');
			check(st.n === 1 && st.drawn === 1 && /No function was called/.test(flatText) &&
				/^0 frames/.test(await page.locator('#search-status').innerText()),
				'an empty profile shows its root alone and says no function was called', st);
		}

		if (args.big) {
			const st = await page.evaluate(() => ({ n: callprof.view().n, drawn: callprof.drawn(), note: document.getElementById('graph-note').textContent }));
			check(st.drawn < st.n && /not drawn/.test(st.note), 'frames too narrow to see are not drawn, and the page says so (' + st.drawn + ' of ' + st.n + ')', st);
			// A frame two levels below the widest top-level one, with contexts left out above it.
			const k = await page.evaluate(() => {
				let i = 0;
				for (let d = 0; d < 3; d++)
					i = callprof.children(i).reduce((a, b) => (callprof.view().value[b] > callprof.view().value[a] ? b : a));
				return i;
			});
			const r = await rect(k);
			const drawnBelow = () => page.evaluate((i) => {
				let c = 0;
				for (let j = i; j < callprof.view().end[i]; j++)
					c += callprof.frameRect(j) ? 1 : 0;
				return c;
			}, k);
			const before = await drawnBelow();
			const t1 = Date.now();
			await canvas.click({ position: { x: r.x + r.w / 2, y: r.y + r.h / 2 } });
			const st2 = await page.evaluate(() => ({ zoom: callprof.state.zoom, drawn: callprof.drawn() }));
			console.log('# zoomed in ' + (Date.now() - t1) + ' ms');
			const after = await drawnBelow();
			check(st2.zoom === k && after > before, 'zooming draws more of the frames below the clicked one (' + before + ', then ' + after + ')', st2);
			const rows = await page.locator('#tree-table tbody tr').count();
			check(rows < 300, 'the call tree starts with few rows (' + rows + '), not one per context');
		}

		if (args.open) {
			await page.locator('#tab-tree').click();
			for (;;) {
				const closed = page.locator('#tree-table tbody tr').filter({ has: page.locator('.tog', { hasText: '\u25b8' }) });
				const rows = await closed.evaluateAll((trs, n) => trs.filter((tr) => Number(tr.dataset.depth) < n).length, Number(args.open));
				if (!rows)
					break;
				const all = await closed.all();
				for (const tr of all)
					if (Number(await tr.getAttribute('data-depth')) < Number(args.open)) {
						await tr.locator('.tog').click();
						break;
					}
			}
		}
		if (args.select) {
			await page.locator('#tab-tree').click();
			await page.evaluate((n) => callprof.select(n), args.select);
		}
		if (args.screenshot) {
			if (args.search) {
				await page.locator('#search').fill(args.search);
				await page.waitForFunction((q) => callprof.state.search === q, args.search);
			}
			await page.mouse.move(0, 0);
			await page.screenshot({ path: args.screenshot, fullPage: true });
			ok('screenshot ' + args.screenshot);
		}
		check(!problems.length, 'no console or page errors along the way', problems.join('\n'));
	} finally {
		await browser.close();
	}
})().catch((e) => {
	if (!failed)
		console.log('not ok - ' + (e && e.stack ? e.stack : e));
	process.exit(1);
});
