/*
 * svg.c - `export -f svg`: a flame graph (or, with --icicle, an icicle
 * graph) drawn by callprof itself, as one self-contained SVG file.
 *
 * A frame per calling context, as wide as its weight (export -m; by
 * default the profile's, cp_report_profile__weight: total or CPU time, or
 * its calls and those below it for a profile without times), which the
 * caption names; children left to right
 * in name order, so two exports of one profile are the same file.  The
 * root frame is the whole tree ("all threads", or each thread under it
 * with --threads=each).  Every frame has a tooltip (<title>) with its
 * calls, total and self time.  The colour (--colors) is by default the
 * frame's heat, the share of its width that is its own (self) weight:
 * pale yellow for a frame whose time is its callees', deep red for one
 * that spends it itself; or, with --colors=module, a hue per module (so
 * modules stand apart) and a shade from the name.  Frames
 * narrower than MIN_WIDTH pixels are left out (flame-graph tools do the
 * same), which keeps a graph of a million contexts readable and small;
 * the graph says how many were left out.
 *
 * An inline script (no network, nothing loaded) makes the file
 * interactive where a browser shows it, as flamegraph.pl's: click a frame
 * to zoom to it (its ancestors stay, its callees widen with it, the rest
 * hide), "Reset zoom" or Escape to go back, "Search" (or Ctrl-F) for a
 * regular expression (a plain substring if it is not one): the matching
 * frames turn magenta and the share of the width they cover is shown.
 * The script cuts labels to fit as frame() does, so a zoom re-fits them.
 * Renderers without scripts (rsvg-convert, image viewers) draw the same
 * picture statically.  Every frame is a <g> holding <title>, <rect> and
 * <text>, in this order, and no other <g> starts with a <title>; the
 * script relies on it, and on x and width having two decimals.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

#define WIDTH 1200.0	   /* drawing width, px */
#define PAD 10.0	   /* margin left and right */
#define FRAME_H 16	   /* frame height, px */
#define TOP 40		   /* room for the title */
#define MIN_WIDTH 0.1	   /* narrower frames are not drawn */
#define CHAR_W 7.0	   /* width of a character at font-size 12 (approximate) */
#define FOOT_H 46	   /* room for the two lines below the frames */
#define TITLE_CHARS 100	   /* the title's characters at most (font-size 16, centred) */

struct svg_ctx {
	struct cp_report_profile *rp;
	FILE *fp;
	int icicle;
	enum cp_metric weight; /* inclusive: what a frame's width is */
	enum cp_svg_colors colors;
	int max_depth;	    /* deepest level drawn */
	uint64_t left_out;  /* frames too narrow to draw */
	uint64_t base;	    /* the root's value: the full width */
	const char **module; /* per function: its module's name, for the colour */
	struct strbuf esc;
	struct strbuf vis;  /* a frame's name in its visible form */
};

/*
 * s as XML character data or an attribute value.  s is text in its
 * visible form (cp_visible): valid UTF-8 with no control character, so
 * every character is one XML 1.0 allows (a stray byte or a lone C1 byte
 * would make the file unreadable to an XML parser, and a browser stop
 * drawing there); only the markup characters are left to escape.
 */
static void xml_escape(struct strbuf *sb, const char *s)
{
	strbuf_reset(sb);
	for (; *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&apos;"); break;
		default: strbuf_addch(sb, *s);
		}
	}
}

/*
 * The label of a frame chars characters wide (the script's fit() does the
 * same in the browser, so a zoom fits labels as the file has them): the
 * name, or nothing below 3 characters, or the name shortened keeping its
 * method (cp_short_name).  vis is the name's visible form.
 */
static const char *fit_label(const char *vis, size_t chars, char *buf, size_t size)
{
	if (chars < 3)
		return "";
	if (cp_text_width(vis) <= chars)
		return vis;
	if (chars < 4)
		return "";
	return cp_short_name(vis, (int)chars, buf, size);
}

static uint32_t hash32(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Warm colours for the program, cooler hues for libraries: hue by module. */
static void colour(const char *module, const char *name, char *buf, size_t size)
{
	uint32_t hm = hash32(module ? module : ""), hn = hash32(name);
	int hue = module ? (int)(hm % 300) : 0;

	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", hue, 60 + (int)(hn % 25), 55 + (int)((hn >> 8) % 20));
}

/*
 * Heat: share is the part of the frame's weight that is its own.  Cold
 * frames (time in callees) pale yellow, hot ones (time spent in
 * themselves) deep red.
 */
static void heat(double share, char *buf, size_t size)
{
	if (!(share >= 0))
		share = 0;
	if (share > 1)
		share = 1;
	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", (int)(52 * (1 - share) + 0.5),
		 (int)(75 + 20 * share + 0.5), (int)(80 - 30 * share + 0.5));
}

/* A frame's weight; below: the calls in its subtree (a width by calls). */
static uint64_t value(const struct svg_ctx *c, const struct cp_rnode *n, const uint64_t *below)
{
	return c->weight == CP_METRIC_CALLS ? *below : cp_rnode__metric(n, c->weight);
}

/*
 * A frame; n is its context (NULL for the roots), v its weight.  The
 * tooltip has the context's figures and its share of the weight.
 */
static void frame(struct svg_ctx *c, const char *label, const char *module, double x, double w,
		  int depth, uint64_t calls, uint64_t v, int is_root, const struct cp_rnode *n)
{
	char fill[64], t[32], sf[32];
	double y = c->icicle ? TOP + depth * FRAME_H : 0; /* flame: fixed up by the caller's transform */
	/*
	 * The label fits the width as written (to 0.01 px), which is what the
	 * script's fit() reads back when it unzooms: the same label again.
	 * Bounded before the conversion: w follows the file's figures, which
	 * may be anything.
	 */
	char wbuf[64];
	double fit, pct = c->base ? 100.0 * (double)v / (double)c->base : 0.0;
	size_t chars;
	const char *name;

	snprintf(wbuf, sizeof(wbuf), "%.2f", w);
	fit = (strtod(wbuf, NULL) - 6) / CHAR_W;
	chars = fit <= 0 ? 0 : fit < 4096 ? (size_t)fit : 4096;

	if (depth > c->max_depth)
		c->max_depth = depth;
	if (!c->icicle)
		y = -(double)(depth + 1) * FRAME_H;
	strbuf_reset(&c->vis);
	strbuf_add_visible(&c->vis, label, strlen(label));
	label = c->vis.buf;
	xml_escape(&c->esc, label);
	name = c->esc.buf;
	if (is_root)
		snprintf(fill, sizeof(fill), "hsl(0,0%%,80%%)");
	else if (c->colors == CP_SVG_MODULE || !n)
		colour(module, label, fill, sizeof(fill));
	else
		heat(v ? (double)(c->weight == CP_METRIC_CALLS ?
					  n->calls :
					  cp_rnode__metric(n, cp_metric__exclusive(c->weight))) /
				 (double)v :
			 0,
		     fill, sizeof(fill));
	fprintf(c->fp, "<g><title>%s\n", name);
	if (c->rp->timed && n) {
		cp_fmt_ns(t, sizeof(t), n->total_ns);
		cp_fmt_ns(sf, sizeof(sf), n->self_ns);
		fprintf(c->fp, "%s %" PRIu64 ", total %s, self %s (%.2f%% of all %s)",
			c->rp->sampled ? "samples" : "calls", calls, t, sf, pct,
			cp_metric__name(c->weight));
		if (c->rp->split) {
			char cpu[32], wait[32], inactive[32];

			cp_fmt_ns(cpu, sizeof(cpu), cp_rnode__cpu(n));
			cp_fmt_ns(wait, sizeof(wait), n->wait_ns);
			cp_fmt_ns(inactive, sizeof(inactive), n->inactive_ns);
			fprintf(c->fp, "\ncpu %s, wait %s, inactive %s", cpu, wait, inactive);
		}
		if (c->rp->cpu_sampled)
			fprintf(c->fp, "\nsamples %" PRIu64 ", self %" PRIu64 "%s", n->samples,
				n->self_samples,
				n->samples && n->samples < CP_FEW_SAMPLES ?
					" (few: the times are rough)" : "");
	} else if (c->weight == CP_METRIC_CALLS) {
		fprintf(c->fp, "calls %" PRIu64 ", %" PRIu64 " calls below and including (%.2f%%)",
			calls, v, pct);
	} else {
		if (cp_metric__is_time(c->weight))
			cp_fmt_ns(t, sizeof(t), v);
		else
			snprintf(t, sizeof(t), "%" PRIu64, v);
		fprintf(c->fp, "%s %s (%.2f%%)", cp_metric__name(c->weight), t, pct);
	}
	fprintf(c->fp, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		       "rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">", x, y, w, FRAME_H - 1, fill, x + 3,
		y + FRAME_H - 4);
	{
		/* Cut the name, not an entity: escape the shortened name. */
		char *buf = xmalloc(strlen(label) + 16);

		xml_escape(&c->esc, fit_label(label, chars, buf, strlen(label) + 16));
		fputs(c->esc.buf, c->fp);
		free(buf);
	}
	fputs("</text>", c->fp);
	fprintf(c->fp, "</g>\n");
}

/*
 * The SVG's script (see the top of the file).  No "]]>" in it: it goes in
 * a CDATA section; nor the words min or max (t0492: a cpu-mode graph
 * mentions neither).  The C side defines FH, ICICLE, TOP, PAD, W and CHAR_W
 * before it.
 */
static const char script[] =
	"'use strict';\n"
	"var frames = [], zoomed = null, query = '';\n"
	"var svg = document.documentElement;\n"
	"function depthOf(y) { return ICICLE ? Math.round((y - TOP) / FH) : Math.round(-y / FH) - 1; }\n"
	"function init() {\n"
	"  var gs = document.querySelectorAll('g');\n"
	"  for (var k = 0; k < gs.length; k++) {\n"
	"    var g = gs[k], r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"    if (!g.firstElementChild || g.firstElementChild.tagName !== 'title') continue;\n"
	"    var f = { g: g, r: r, t: t, name: g.querySelector('title').textContent.split('\\n')[0],\n"
	"      x: parseFloat(r.getAttribute('x')), w: parseFloat(r.getAttribute('width')),\n"
	"      fill: r.getAttribute('fill') };\n"
	"    f.d = depthOf(parseFloat(r.getAttribute('y')));\n"
	"    g.cpFrame = f;\n"
	"    g.style.cursor = 'pointer';\n"
	"    g.addEventListener('click', function (ev) { zoom(this.cpFrame); ev.stopPropagation(); });\n"
	"    frames.push(f);\n"
	"  }\n"
	"  document.getElementById('reset').addEventListener('click', unzoom);\n"
	"  document.getElementById('search').addEventListener('click', function () {\n"
	"    if (query) search(''); else askSearch();\n"
	"  });\n"
	"  document.getElementById('matched').addEventListener('click', function () { search(''); });\n"
	"  window.addEventListener('keydown', function (ev) {\n"
	"    if (ev.key === 'Escape') { unzoom(); search(''); }\n"
	"    else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') { ev.preventDefault(); askSearch(); }\n"
	"  });\n"
	"}\n"
	/* Characters (code points) in s, as cp_text_width counts them. */
	"function cw(s) { return Array.from(s).length; }\n"
	/* cp_short_name (report/output.c), step by step: keep the method. */
	"function shortName(name, width) {\n"
	"  var o = '', depth = 0, i, k;\n"
	"  for (i = 0; i < name.length; i++) {\n"
	"    var ch = name[i], op = i >= 8 && name.slice(i - 8, i) === 'operator';\n"
	"    if (ch === '<' && i > 0 && name[i - 1] !== '<' && name[i - 1] !== ' ' && !op) {\n"
	"      if (depth++ === 0) o += '<...';\n"
	"      continue;\n"
	"    }\n"
	"    if (ch === '>' && depth > 0) { if (--depth === 0) o += '>'; continue; }\n"
	"    if (!depth) o += ch;\n"
	"  }\n"
	"  if (cw(o) > width) {\n"
	"    var close = o.lastIndexOf(')'), open = -1, level = 0;\n"
	"    for (var q = close; close >= 0 && q >= 0; q--) {\n"
	"      level += o[q] === ')' ? 1 : o[q] === '(' ? -1 : 0;\n"
	"      if (!level) { open = q; break; }\n"
	"    }\n"
	"    if (open >= 0 && close - open > 4) o = o.slice(0, open + 1) + '...' + o.slice(close);\n"
	"  }\n"
	"  var seps = [];\n"
	"  depth = 0;\n"
	"  for (i = 0; i < o.length && seps.length < 64; i++) {\n"
	"    if ('({['.indexOf(o[i]) >= 0) depth++;\n"
	"    else if (')}]'.indexOf(o[i]) >= 0 && depth > 0) depth--;\n"
	"    else if (!depth && o[i] === ':' && o[i + 1] === ':' && i + 2 < o.length) seps.push(i++);\n"
	"  }\n"
	"  for (k = 0; k < seps.length && 3 + cw(o.slice(seps[k])) > width; k++);\n"
	"  if (seps.length && cw(o) > width) o = '...' + o.slice(seps[k < seps.length ? k : seps.length - 1]);\n"
	"  if (cw(o) > width && o.slice(0, 5) === '...::') o = o.slice(5);\n"
	"  if (cw(o) > width && o.length > 5 && o.slice(-5) === '(...)') o = o.slice(0, -5);\n"
	"  if (cw(o) > width && width > 3) o = Array.from(o).slice(0, width - 3).join('') + '...';\n"
	"  return o;\n"
	"}\n"
	/* The label that fits width w: as fit_label() in svg.c makes it. */
	"function fit(name, w) {\n"
	"  var n = Math.floor((w - 6) / CHAR_W);\n"
	"  if (n < 3) return '';\n"
	"  if (cw(name) <= n) return name;\n"
	"  return n < 4 ? '' : shortName(name, n);\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  f.r.setAttribute('x', x.toFixed(2));\n"
	"  f.r.setAttribute('width', w.toFixed(2));\n"
	"  f.t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  f.t.textContent = fit(f.name, w);\n"
	"}\n"
	"var EPS = 0.011;\n"
	/* Zoom to frame z: its ancestors full width, its subtree scaled, the rest hidden. */
	"function zoom(z) {\n"
	"  var scale = z.w > 0 ? W / z.w : 1;\n"
	"  zoomed = z;\n"
	"  for (var k = 0; k < frames.length; k++) {\n"
	"    var f = frames[k], inside = f.x >= z.x - EPS && f.x + f.w <= z.x + z.w + EPS;\n"
	"    var around = f.x <= z.x + EPS && f.x + f.w >= z.x + z.w - EPS;\n"
	"    if (f.d < z.d && around) {\n"
	"      f.g.style.display = '';\n"
	"      f.g.style.opacity = '0.6';\n"
	"      place(f, PAD, W);\n"
	"    } else if (f.d >= z.d && inside && (f.d > z.d || f === z)) {\n"
	"      f.g.style.display = '';\n"
	"      f.g.style.opacity = '';\n"
	"      place(f, PAD + (f.x - z.x) * scale, f.w * scale);\n"
	"    } else {\n"
	"      f.g.style.display = 'none';\n"
	"    }\n"
	"  }\n"
	"  document.getElementById('reset').style.display = '';\n"
	"}\n"
	"function unzoom() {\n"
	"  zoomed = null;\n"
	"  for (var k = 0; k < frames.length; k++) {\n"
	"    var f = frames[k];\n"
	"    f.g.style.display = '';\n"
	"    f.g.style.opacity = '';\n"
	"    place(f, f.x, f.w);\n"
	"  }\n"
	"  document.getElementById('reset').style.display = 'none';\n"
	"}\n"
	"function askSearch() {\n"
	"  var q = window.prompt('Search for (a regular expression, or a plain substring):', query);\n"
	"  if (q !== null) search(q);\n"
	"}\n"
	/* Highlight the frames whose name matches q; show the share of the width they cover. */
	"function search(q) {\n"
	"  var test = null, re = null, status = document.getElementById('matched');\n"
	"  query = q || '';\n"
	"  if (q) {\n"
	"    try { re = new RegExp(q); } catch (e) { re = null; }\n"
	"    test = re ? function (s) { return re.test(s); } : function (s) { return s.indexOf(q) >= 0; };\n"
	"  }\n"
	"  var spans = [], count = 0;\n"
	"  for (var k = 0; k < frames.length; k++) {\n"
	"    var f = frames[k], hit = test !== null && f.d > 0 && test(f.name);\n"
	"    f.hit = hit;\n"
	"    f.r.setAttribute('fill', hit ? '#e040e0' : f.fill);\n"
	"    if (hit) { count++; spans.push([f.x, f.x + f.w]); }\n"
	"  }\n"
	/* The union of the matched frames' spans: a frame below a matched one counts once. */
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var covered = 0, end = -1;\n"
	"  for (var i = 0; i < spans.length; i++) {\n"
	"    var a = spans[i][0] > end ? spans[i][0] : end;\n"
	"    if (spans[i][1] > a) covered += spans[i][1] - a;\n"
	"    if (spans[i][1] > end) end = spans[i][1];\n"
	"  }\n"
	"  svg.cpMatch = { count: count, share: covered / W };\n"
	"  status.textContent = test ? 'Matched: ' + count + ' frame' + (count === 1 ? '' : 's') + ', ' +\n"
	"    (100 * covered / W).toFixed(2) + '%' : '';\n"
	"  document.getElementById('search').textContent = test ? 'Clear search' : 'Search';\n"
	"}\n"
	"init();\n";

/* The qsort_r context of by_name: the siblings sorted are node indexes of tree. */
struct sibling_order {
	const struct cp_rtree *tree;	    /* the nodes indexed */
	const struct cp_report_profile *rp; /* their names */
};

static int by_name(const void *pa, const void *pb, void *arg)
{
	const struct sibling_order *o = arg;
	const struct cp_rnode *a = &o->tree->n[*(const uint32_t *)pa];
	const struct cp_rnode *b = &o->tree->n[*(const uint32_t *)pb];
	int c = strcmp(cp_rnode__name(o->rp, a), cp_rnode__name(o->rp, b));

	return c ? c : (*(const uint32_t *)pa > *(const uint32_t *)pb) -
		       (*(const uint32_t *)pa < *(const uint32_t *)pb);
}

/*
 * Draw tree t's contexts below its root, starting at x, one level above
 * depth0: breadth by explicit stack (trees can be a million levels deep).
 */
static void draw_tree(struct svg_ctx *c, const struct cp_rtree *t, double x0, int depth0,
		      double scale)
{
	uint64_t *below = xcalloc(t->nn, sizeof(*below));
	uint32_t *size = xcalloc(t->nn, sizeof(*size)); /* contexts in the subtree */
	double *x = xcalloc(t->nn, sizeof(*x));
	uint32_t *stack = NULL, *kids = NULL;
	size_t ns = 0, salloc = 0, kalloc = 0;
	struct sibling_order order = { t, c->rp };

	for (uint32_t i = t->nn; i-- > 1;) {
		below[i] += t->n[i].calls;
		below[t->n[i].parent] += below[i];
		size[i]++;
		size[t->n[i].parent] += size[i];
	}
	x[0] = x0;
	ALLOC_GROW(stack, ns + 1, salloc);
	stack[ns++] = 0;
	while (ns) {
		uint32_t i = stack[--ns], nk = 0;
		double cx = x[i];

		for (uint32_t k = t->n[i].first_child; k != CP_NONE; k = t->n[k].next) {
			ALLOC_GROW(kids, nk + 1, kalloc);
			kids[nk++] = k;
		}
		qsort_r(kids, nk, sizeof(*kids), by_name, &order);
		for (uint32_t k = 0; k < nk; k++) {
			const struct cp_rnode *n = &t->n[kids[k]];
			double w = (double)value(c, n, &below[kids[k]]) * scale;

			if (w < MIN_WIDTH) {
				c->left_out += size[kids[k]]; /* it and everything above it */
				continue;
			}
			x[kids[k]] = cx;
			frame(c, cp_rnode__name(c->rp, n), c->module[n->fn], cx, w,
			      depth0 + (int)n->depth, n->calls, value(c, n, &below[kids[k]]), 0, n);
			cx += w;
			ALLOC_GROW(stack, ns + 1, salloc);
			stack[ns++] = kids[k];
		}
	}
	free(below);
	free(size);
	free(x);
	free(stack);
	free(kids);
}

static uint64_t tree_value(enum cp_metric weight, const struct cp_rtree *t)
{
	uint64_t v = 0;

	if (weight == CP_METRIC_CALLS) {
		for (uint32_t i = 1; i < t->nn; i++)
			CP_ADD_SAT(v, t->n[i].calls);
		return v;
	}
	for (uint32_t k = t->n[0].first_child; k != CP_NONE; k = t->n[k].next)
		CP_ADD_SAT(v, cp_rnode__metric(&t->n[k], weight));
	return v;
}

/* The caption's words for what a frame's width is. */
static const char *width_words(const struct cp_report_profile *rp, enum cp_metric weight)
{
	switch (weight) {
	case CP_METRIC_CALLS:
		return "calls below and including";
	case CP_METRIC_CPU:
		return rp->cpu_sampled ? "CPU time sampled (counts exact; hover for samples)" :
					 "CPU time (total - wait - inactive)";
	case CP_METRIC_WAIT:
		return "wait (blocked) time";
	case CP_METRIC_INACTIVE:
		return "inactive (preempted) time";
	case CP_METRIC_SAMPLES:
		return "CPU-time samples";
	default:
		return rp->cpu_sampled ? "total time: CPU time sampled, off-CPU time measured, counts "
					 "exact (hover for samples)" :
					 "total time";
	}
}

/*
 * "Flame graph: PATH" in at most TITLE_CHARS characters: a long path keeps
 * its end (the file's name), "...".  malloc'd.
 */
static char *graph_title(const char *path, int icicle)
{
	const char *vis = cp_visible(path), *kind = icicle ? "Icicle graph: " : "Flame graph: ";
	size_t room = TITLE_CHARS - strlen(kind), w = cp_text_width(vis);

	while (w > room && *vis) {
		/* Drop characters from the left until "..." and the rest fit. */
		do
			vis++;
		while (((unsigned char)*vis & 0xc0) == 0x80);
		if (--w + 3 <= room)
			return xstrfmt("%s...%s", kind, vis);
	}
	return xstrfmt("%s%s", kind, vis);
}

int cp_export_svg(struct cp_report_profile *rp, int icicle, enum cp_metric weight,
		  enum cp_svg_colors colors, FILE *fp)
{
	struct svg_ctx c = { .rp = rp, .fp = fp, .icicle = icicle,
			     .weight = cp_metric__inclusive(weight), .colors = colors };
	double width = WIDTH - 2 * PAD, x = PAD;
	char *body = NULL, *title;
	size_t body_len = 0;
	FILE *out = fp;
	int levels;

	strbuf_init(&c.esc, 0);
	strbuf_init(&c.vis, 0);
	c.module = xcalloc(rp->nfns + 1, sizeof(*c.module));
	for (uint32_t f = 0; f < rp->nfns; f++) {
		struct cp_fn_where w;
		const char *slash;

		cp_report_profile__fn_where(rp, f, &w);
		slash = w.module ? strrchr(w.module, '/') : NULL;
		c.module[f] = slash ? slash + 1 : w.module;
	}
	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		CP_ADD_SAT(c.base, tree_value(c.weight, &rp->trees[ti]));
	/* The frames go to memory first: the height depends on the depth drawn. */
	c.fp = open_memstream(&body, &body_len);
	if (!c.fp)
		cp_die("out of memory");
	frame(&c, rp->threads == CP_THREADS_EACH ? "all threads" : rp->trees[0].label, NULL, x,
	      width, 0, 0, c.base, 1, NULL);
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];
		uint64_t v = tree_value(c.weight, t);
		double w = c.base ? width * (double)v / (double)c.base : 0;

		if (rp->threads == CP_THREADS_EACH) {
			if (w < MIN_WIDTH) {
				c.left_out += t->nn; /* the thread's frame and its contexts */
				continue;
			}
			frame(&c, t->label, NULL, x, w, 1, t->nthreads, v, 1, NULL);
		}
		draw_tree(&c, t, x, rp->threads == CP_THREADS_EACH ? 1 : 0,
			  c.base ? width / (double)c.base : 0);
		x += w;
	}
	fclose(c.fp);
	levels = c.max_depth + 1;

	title = graph_title(rp->pf->path, icicle);
	xml_escape(&c.esc, title);
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		     "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"12\">\n",
		(int)WIDTH, TOP + levels * FRAME_H + FOOT_H, (int)WIDTH, TOP + levels * FRAME_H + FOOT_H);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n"
		     "<text x=\"%d\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">%s</text>\n",
		(int)(WIDTH / 2), c.esc.buf);
	free(title);
	/* Two lines, each within the width at font-size 12 (< 130 characters). */
	fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#666\">width: %s; hover for calls, total and "
		     "self</text>\n", (int)PAD, TOP + levels * FRAME_H + 20, width_words(rp, c.weight));
	fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#666\">colour: %s%s</text>\n", (int)PAD,
		TOP + levels * FRAME_H + 36,
		colors == CP_SVG_MODULE ? "module" :
					  "self share (yellow: in callees, red: own)",
		c.left_out ? "; some frames too narrow to draw are left out" : "");
	/* The script's controls; "Reset zoom" shows once zoomed. */
	fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"24\" style=\"display:none;cursor:pointer\" "
		     "fill=\"#0b57d0\">Reset zoom</text>\n"
		     "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\" "
		     "style=\"cursor:pointer\" fill=\"#0b57d0\">Search</text>\n"
		     "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\" "
		     "style=\"cursor:pointer\"></text>\n",
		(int)PAD, (int)(WIDTH - PAD), (int)(WIDTH - PAD), TOP + levels * FRAME_H + 20);
	if (icicle)
		fprintf(out, "<g>\n");
	else
		fprintf(out, "<g transform=\"translate(0,%d)\">\n", TOP + levels * FRAME_H);
	fwrite(body, 1, body_len, out);
	fprintf(out, "</g>\n");
	if (c.left_out)
		fprintf(out, "<!-- %" PRIu64 " frames left out: narrower than %.1f px, or above "
			     "such a frame -->\n", c.left_out, MIN_WIDTH);
	/* After the frames, which it looks up as it runs. */
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\nvar FH = %d, ICICLE = %d, TOP = %d, "
		     "PAD = %.1f, W = %.1f, CHAR_W = %.1f;\n%s]]></script>\n",
		FRAME_H, !!icicle, TOP, PAD, WIDTH - 2 * PAD, CHAR_W, script);
	fprintf(out, "</svg>\n");
	free(body);
	free(c.module);
	strbuf_release(&c.esc);
	strbuf_release(&c.vis);
	/*
	 * A write error stays in out's error flag: the caller, who knows the
	 * file's name and closes it, reports it (cp_outfile__commit, or the
	 * check of stdout); the graph is larger than a stdio buffer, so the
	 * error happens here, where the name is not known.
	 */
	return 0;
}
