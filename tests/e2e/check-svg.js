// check-svg.js --svg FILE [--json FILE --weight METRIC --click NAME --search TEXT]:
// open a graph written by `callprof export -f svg -m METRIC` in Debian's
// chromium (driven by playwright-core) and drive its inline script as a
// user would.  Prints "ok - WHAT" per check; on the first failure prints
// why and exits 1.  Without --click, only the picture's layout is checked.
//
//   - it loads with no console or page error and requests nothing;
//   - every frame's label fits it (the name, or shortened), a shortened
//     C++ name keeps its method, and the title and the lines below the
//     frames lie inside the picture (nothing cut);
//   - clicking the widest frame whose name holds NAME zooms to it: its
//     rectangle spans the drawing's width, its ancestors stay full width, frames beside it
//     hide, and its label is re-fitted to the new width;
//   - "Reset zoom" puts every frame back where it was;
//   - "Search" (its prompt answered with TEXT, a regular expression)
//     colours exactly the frames whose name matches, and the status says
//     how many and the share of the width (METRIC's, all top-level
//     contexts) they cover, as the json says (no frame counted under
//     another matched one).
'use strict';
const fs = require('fs');
const { pathToFileURL } = require('url');
const { chromium } = require('playwright-core');

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
	args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

let failed = false;
function check(cond, what, detail) {
	if (cond) {
		console.log('ok - ' + what);
		return;
	}
	console.log('not ok - ' + what);
	if (detail !== undefined)
		console.log('# ' + JSON.stringify(detail, null, 1).split('\n').join('\n# '));
	failed = true;
	throw new Error('check failed: ' + what);
}

const J = args.json ? JSON.parse(fs.readFileSync(args.json, 'utf8')) : null;
function value(t, i, below) {
	const n = t.nodes[i];
	switch (args.weight) {
	case 'total': return n.total_ns;
	case 'cpu': return Math.max(0, n.total_ns - (n.wait_ns || 0) - (n.inactive_ns || 0));
	case 'samples': return n.samples;
	default: return below[i];
	}
}

(async () => {
	const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
	try {
		const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
		const url = pathToFileURL(args.svg).href, problems = [], requests = [];
		page.on('console', (m) => {
			if (m.type() === 'error' || m.type() === 'warning')
				problems.push(m.text());
		});
		page.on('pageerror', (e) => problems.push(e.message));
		page.on('request', (r) => {
			if (r.url() !== url)
				requests.push(r.url());
		});
		await page.goto(url, { waitUntil: 'load' });
		check(!problems.length && !requests.length && await page.evaluate(() => document.documentElement.tagName === 'svg' && !!document.querySelector('script')),
			'the SVG loads in chromium with its script, no errors, no requests', { problems, requests });

		/* A frame: a <g> that starts with its <title>. */
		const frames = () => page.evaluate(() => [...document.querySelectorAll('g')].filter((g) => g.firstElementChild && g.firstElementChild.tagName === 'title').map((g) => {
			const r = g.querySelector('rect');
			return {
				name: g.querySelector('title').textContent.split('\n')[0], x: Number(r.getAttribute('x')),
				w: Number(r.getAttribute('width')), y: Number(r.getAttribute('y')), fill: r.getAttribute('fill'),
				shown: getComputedStyle(g).display !== 'none', label: g.querySelector('text').textContent,
			};
		}));
		const before = await frames();
		const W = before[0].w, X = before[0].x;
		const cw = (s) => Array.from(s).length;
		const roomOf = (f) => Math.floor((f.w - 6) / 7);
		const fitted = (f, label) => {
			const room = roomOf(f);
			return room < 3 ? label === '' : cw(f.name) <= room ? label === f.name :
				cw(label) <= room && label !== f.name;
		};
		/*
		 * A shortened C++ name keeps its method (the last name before its
		 * parameters) where the frame has room for it: how wide a frame is
		 * depends on the run (a loaded machine's threads wait longer).
		 */
		const method = (s) => { const m = s.replace(/\(.*$/, '').match(/([A-Za-z_~][A-Za-z0-9_]*)(<[^<>]*>)?$/); return m ? m[1] : null; };
		const cut = before.filter((f) => f.label !== f.name && /::/.test(f.name) && method(f.name) &&
			roomOf(f) >= Math.max(24, cw(method(f.name))));
		check(cut.every((f) => f.label.includes(method(f.name))),
			'the ' + cut.length + ' shortened C++ labels keep their method', cut.filter((f) => !f.label.includes(method(f.name))).slice(0, 5));
		check(before.every((f) => fitted(f, f.label)), 'every label fits its frame',
			before.filter((f) => !fitted(f, f.label)).slice(0, 5));
		/* The title and the lines below the frames are drawn whole, inside the picture. */
		const outside = await page.evaluate(() => {
			const svg = document.documentElement, vb = svg.viewBox.baseVal;
			return [...svg.querySelectorAll(':scope > text')].filter((t) => t.textContent).map((t) => {
				const b = t.getBBox();
				return { text: t.textContent, x: b.x, y: b.y, right: b.x + b.width, bottom: b.y + b.height };
			}).filter((b) => b.x < 0 || b.y < 0 || b.right > vb.width || b.bottom > vb.height);
		});
		check(!outside.length, 'the title and the footer lie inside the picture', outside);
		if (!args.click)
			return;

		let k = -1;
		before.forEach((f, i) => {
			if (f.name.includes(args.click) && f.w < W - 1 && (k < 0 || f.w > before[k].w))
				k = i;
		});
		check(k >= 0, 'a frame of ' + args.click + ' narrower than the drawing (' + (k >= 0 ? before[k].w : 0) + ' of ' + W + ')');
		const z = before[k];
		const box = await page.locator('g:has(> title)').nth(k).locator('rect').boundingBox();
		await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
		const after = await frames();
		const up = (f) => (before[0].y < z.y ? f.y < z.y : f.y > z.y);	// icicle or flame
		const anc = before.map((f, i) => i).filter((i) => up(before[i]) && before[i].x <= z.x + 0.01 && before[i].x + before[i].w >= z.x + z.w - 0.01);
		const beside = before.map((f, i) => i).filter((i) => before[i].y === z.y && i !== k);
		check(Math.abs(after[k].x - X) < 0.01 && Math.abs(after[k].w - W) < 0.01 && after[k].shown,
			'clicking it zooms to it: it spans the width', after[k]);
		check(anc.length > 0 && anc.every((i) => after[i].shown && Math.abs(after[i].w - W) < 0.01),
			'its ' + anc.length + ' ancestors stay, full width');
		check(beside.length > 0 && beside.every((i) => !after[i].shown), 'the ' + beside.length + ' frames beside it hide');
		const n = Math.floor((W - 6) / 7);
		check(fitted({ name: z.name, w: W }, after[k].label) && cw(after[k].label) >= cw(z.label) &&
			(cw(z.name) > n || after[k].label === z.name),
			'its label is re-fitted to the width (' + JSON.stringify(z.label) + ' -> ' + JSON.stringify(after[k].label) + ')');

		await page.locator('#reset').click();
		const reset = await frames();
		check(JSON.stringify(reset) === JSON.stringify(before) && !(await page.locator('#reset').isVisible()),
			'"Reset zoom" puts every frame back and hides itself');

		page.once('dialog', (d) => d.accept(args.search));
		await page.locator('#search').click();
		await page.waitForFunction(() => document.documentElement.cpMatch !== undefined);
		const re = new RegExp(args.search);
		const lit = await frames();
		const wrong = lit.filter((f, i) => i > 0 && (f.fill === '#e040e0') !== re.test(f.name));
		const count = lit.filter((f) => f.fill === '#e040e0').length;
		// The json's share: matched contexts with no matched context above them.
		let covered = 0, root = 0;
		for (const t of J.trees) {
			const below = t.nodes.map((x) => x.calls);
			for (let i = t.nodes.length - 1; i > 0; i--)
				below[t.nodes[i].parent] += below[i];
			const hit = (i) => i > 0 && re.test(J.functions[t.nodes[i].function].name);
			// The drawing's width: the top-level contexts (svg.c's tree_value).
			for (let i = 1; i < t.nodes.length; i++)
				if (t.nodes[i].parent === 0)
					root += value(t, i, below);
			for (let i = 1; i < t.nodes.length; i++) {
				let a = t.nodes[i].parent;
				while (a > 0 && !hit(a))
					a = t.nodes[a].parent;
				if (hit(i) && a <= 0)
					covered += value(t, i, below);
			}
		}
		const status = await page.locator('#matched').textContent();
		const m = status.match(/^Matched: (\d+) frames?, ([0-9.]+)%$/);
		check(count > 0 && !wrong.length && m && Number(m[1]) === count,
			'searching ' + JSON.stringify(args.search) + ' colours exactly the ' + count + ' frames that match', { wrong, status });
		check(Math.abs(Number(m[2]) - 100 * covered / root) < 0.02,
			'... and the share they cover is the json\'s (' + m[2] + '% of ' + args.weight + ')', { status, want: 100 * covered / root });
		await page.locator('#search').click();
		const cleared = await frames();
		check(JSON.stringify(cleared) === JSON.stringify(before) && (await page.locator('#matched').textContent()) === '',
			'clicking "Clear search" restores the colours');
		check(!problems.length, 'no console or page errors along the way', problems);
	} finally {
		await browser.close();
	}
})().catch((e) => {
	if (!failed)
		console.log('not ok - ' + (e && e.stack ? e.stack : e));
	process.exit(1);
});
