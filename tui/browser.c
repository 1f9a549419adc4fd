/*
 * browser.c - the terminal browser of `callprof tui` (ncursesw): its
 * state (the profiles shown, the browser's own focus and hide, the
 * metric, the thread, the source lines page), drawing (only the rows on
 * screen), and keys (docs/callprof-tui.1.md lists them).  The model -
 * visible rows, expanded contexts, lists, search - is report/tui.c; the
 * command's options are cli/cmd-tui.c.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "report/tui.h"
#include "tui/browser.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

/* Rows `*` opens at most below a context. */
#define EXPAND_ALL_LIMIT 10000

/* A focus or hide added in the browser (x, X), undone by u. */
struct tui_filter {
	int focus;
	char *pattern;
};

/* The browser's state: what it loaded, what it shows, what the screen holds. */
struct cp_browser {
	const char *const *paths; /* the files (the command's; two: diff mode) */
	uint32_t npaths;	  /* how many */
	struct cp_report_opts ro; /* loading options; threads is set per load */
	const char *const *focus; /* the command line's --focus patterns, NULL-terminated or NULL */
	const char *const *hide;  /* its --hide patterns */
	int regex;		  /* --regex */
	struct tui_filter *filters;	  /* the browser's own focus and hide (x, X), in order */
	uint32_t nfilters;		  /* how many */
	struct cp_report_profile *merged; /* all threads as one tree */
	struct cp_report_profile *each;	  /* one tree per thread, loaded on the first T */
	/* Diff mode (two files): merged is made of these two, side is A's figures. */
	int diff;
	struct cp_report_profile *da, *db;
	struct cp_figures *side;
	int thread;			  /* -1: merged; else a tree of each */
	/* The metric each profile's children are ordered by (CP_METRIC_NR: as loaded). */
	enum cp_metric merged_order, each_order;
	enum cp_metric metric;		  /* the metric shown (m) */
	struct cp_tui t;		  /* the model of the view shown (report/tui.h) */
	char msg[512];			  /* the status line's message, or "" for the facts */
	int help;			  /* the help screen is up (?) */
	/* L: a page of text (report's lines view), scrolled by top */
	char *page;
	char **page_lines;
	uint32_t npage_lines, page_top;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Whether the terminal the keys come from has hung up or is no longer open. */
static int terminal_gone(void)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

	return poll(&p, 1, 0) < 0 ? errno != EINTR :
	       !!(p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/*
 * The next key from the terminal; every wait for one goes through here.
 *
 * CALLPROF_TEST_TUI_KEYS=FILE, for tests only: before each wait, the number of keys read so far
 * (resize events not counted) is written to FILE (through FILE.tmp and a rename, so that a
 * reader never sees half a number).  A test that has sent N keys and finds N in FILE knows that
 * the program has handled them all and written the screen they lead to: the screen it then
 * captures is not one caught in the middle of a redraw or before a key arrived.
 */
static int read_key(void)
{
	static const char *path;
	static int looked;
	static unsigned long keys;
	static int errs; /* ERR in a row */
	int ch;

	if (!looked) {
		looked = 1;
		path = getenv("CALLPROF_TEST_TUI_KEYS");
	}
	if (path && *path) {
		char tmp[4096], num[32];
		int fd, len = snprintf(num, sizeof(num), "%lu\n", keys);

		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) < sizeof(tmp) &&
		    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0) {
			int ok = write(fd, num, (size_t)len) == len;

			if (close(fd) == 0 && ok)
				rename(tmp, path);
		}
	}
	ch = getch();
	if (ch != ERR && ch != KEY_RESIZE)
		keys++;
	/*
	 * getch waits for a key: ERR is a signal (stop_signal then says which)
	 * or input that is gone (a closed window, a killed terminal emulator,
	 * stdin at its end), which must end the browser, not leave it spinning.
	 */
	if (ch != ERR)
		errs = 0;
	else if ((terminal_gone() || ++errs >= 100) && !stop_signal)
		stop_signal = SIGHUP;
	return ch;
}

/* pattern matching exactly name: a glob, or an extended regex with --regex. */
static char *exact_pattern(const char *name, int regex)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	if (regex)
		strbuf_addch(&sb, '^');
	for (p = name; *p; p++) {
		if (regex ? !!strchr("\\^$.[]|()*+?{}", *p) : !!strchr("\\*?[]", *p))
			strbuf_addch(&sb, '\\');
		strbuf_addch(&sb, *p);
	}
	if (regex)
		strbuf_addch(&sb, '$');
	return strbuf_detach(&sb, NULL);
}

/*
 * Load the files in mode with the command line's filters and the
 * browser's: NULL after an error line (which ncurses' screen then shows
 * as the status message, the caller's business).
 */
static struct cp_report_profile *load_paths(struct cp_browser *a, const char *const *paths,
					     uint32_t n, enum cp_thread_mode mode)
{
	struct cp_report_opts ro = a->ro;
	struct cp_report_profile *rp;
	struct cp_view_filter *f;
	char err[256];
	int ret = 0;

	ro.threads = mode;
	rp = cp_report_profile__load_many(paths, n, &ro);
	if (!rp)
		return NULL;
	f = cp_view_filter__new(a->regex, 0);
	for (const char *const *p = a->focus; p && *p; p++)
		cp_view_filter__add(f, 1, *p, err, sizeof(err));
	for (const char *const *p = a->hide; p && *p; p++)
		cp_view_filter__add(f, 0, *p, err, sizeof(err));
	for (uint32_t i = 0; i < a->nfilters; i++)
		if (cp_view_filter__add(f, a->filters[i].focus, a->filters[i].pattern, err,
					sizeof(err)))
			ret = -1;
	if (ret || cp_view_filter__apply(f, rp)) {
		cp_report_profile__free(rp);
		rp = NULL;
	}
	cp_view_filter__free(f);
	return rp;
}

static void free_profiles(struct cp_browser *a)
{
	if (a->diff) {
		cp_tui__diff_free(a->merged, a->side);
		cp_report_profile__free(a->da);
		cp_report_profile__free(a->db);
		a->da = a->db = NULL;
		a->side = NULL;
	} else {
		cp_report_profile__free(a->merged);
	}
	cp_report_profile__free(a->each);
	a->merged = a->each = NULL;
}

/*
 * The merged profile: the files as one, or in diff mode the two files'
 * union (A's figures in a->side).  NULL after an error line.
 */
static struct cp_report_profile *load(struct cp_browser *a, enum cp_thread_mode mode)
{
	struct cp_report_profile *pa, *pb, *rp;
	struct cp_figures *side = NULL;

	if (!a->diff || mode != CP_THREADS_MERGED)
		return load_paths(a, a->paths, a->npaths, mode);
	pa = load_paths(a, a->paths, 1, mode);
	pb = pa ? load_paths(a, a->paths + 1, 1, mode) : NULL;
	rp = pb ? cp_tui__diff_profile(pa, pb, &side) : NULL;
	if (pb && !rp)
		cp_error("tui: out of memory");
	if (!rp) {
		cp_report_profile__free(pa);
		cp_report_profile__free(pb);
		return NULL;
	}
	/* Replaced only now: on failure the profiles shown stay whole. */
	a->da = pa;
	a->db = pb;
	a->side = side;
	return rp;
}

/* The report's weight; in diff mode, diff's (both sides' where they agree). */
static enum cp_metric default_weight(const struct cp_browser *a)
{
	return a->diff ? cp_report_profile__pair_weight(a->da, a->db) :
			 cp_report_profile__weight(a->merged, NULL, 0);
}

static struct cp_report_profile *current(struct cp_browser *a)
{
	return a->thread < 0 ? a->merged : a->each;
}

static int show(struct cp_browser *a)
{
	enum cp_metric *order = a->thread < 0 ? &a->merged_order : &a->each_order;
	int sorted = *order == a->metric;

	cp_tui__release(&a->t);
	*order = a->metric;
	if (cp_tui__init(&a->t, current(a), a->thread < 0 ? 0 : (uint32_t)a->thread, a->metric,
			 sorted, a->thread < 0 && a->diff ? a->side : NULL))
		return -1;
	return 0;
}

/*
 * What the report's functions print on stderr while the screen is up
 * (warnings, an error line) goes to a temporary file instead of over the
 * screen; stderr_end puts its first line into msg (when there is one).
 */
static int stderr_begin(FILE **tmp)
{
	int saved;

	*tmp = tmpfile();
	if (!*tmp)
		return -1;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	if (saved < 0 || dup2(fileno(*tmp), STDERR_FILENO) < 0) {
		if (saved >= 0)
			close(saved);
		fclose(*tmp);
		*tmp = NULL;
		return -1;
	}
	return saved;
}

static void stderr_end(FILE *tmp, int saved, char *msg, size_t size)
{
	char line[512];

	if (!tmp)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	if (fgets(line, sizeof(line), tmp)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(msg, size, "%s", line);
	}
	fclose(tmp);
}

/* ---- drawing ---- */

/*
 * Write s at the cursor in at most cols columns (UTF-8 through the locale;
 * a byte that is no character shows as '?').  The columns used.  Text
 * from the profile (names, paths, labels) goes through cp_visible first,
 * as report shows it (\x1b, \n, \xff for a byte that is no UTF-8); text
 * already in that form (the lines page, a message caught from stderr) not
 * again.
 */
static int put_text(const char *s, int cols)
{
	mbstate_t st;
	int used = 0;

	memset(&st, 0, sizeof(st));
	while (*s && used < cols) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s, MB_CUR_MAX, &st);
		int w;

		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&st, 0, sizeof(st));
			addch('?');
			used++;
			s++;
			continue;
		}
		w = wcwidth(wc);
		if (w < 0) {
			addch('?');
			used++;
		} else {
			if (used + w > cols)
				break;
			addnstr(s, (int)k);
			used += w;
		}
		s += k;
	}
	return used;
}

static void fmt_value(char *buf, size_t size, uint64_t v, enum cp_metric m)
{
	if (cp_metric__is_time(m))
		cp_fmt_ns(buf, size, v);
	else
		snprintf(buf, size, "%" PRIu64, v);
}

static const char *view_name(const struct cp_browser *a, char *buf, size_t size)
{
	const struct cp_tui *t = &a->t;
	static const char *const sorts[] = { "inclusive", "self", "calls", "name" };
	const char *fn = t->subject != CP_NONE ? t->rp->fns[t->subject].name : NULL;

	switch (t->view) {
	case CP_TUI_FLAT:
		snprintf(buf, size, "flat (sort: %s%s)", sorts[t->sort],
			 t->side && t->sort != CP_TUI_SORT_NAME ? " change" : "");
		break;
	case CP_TUI_CALLERS:
		snprintf(buf, size, "callers of %s", fn ? cp_visible(fn) : "?");
		break;
	case CP_TUI_CALLEES:
		snprintf(buf, size, "callees of %s", fn ? cp_visible(fn) : "?");
		break;
	case CP_TUI_IMBALANCE:
		snprintf(buf, size, "imbalance of %s", t->rp->timed ? "self CPU time" : "calls");
		break;
	default:
		snprintf(buf, size, "%s", t->side ? "tree, largest change first" : "tree");
		break;
	}
	return buf;
}

/* The banner's facts: threads, calls, call paths, time source. */
static void facts(const struct cp_browser *a, char *buf, size_t size)
{
	const struct cp_report_profile *rp = a->merged;
	const struct cp_meta *m = &rp->pf->meta;
	const char *src;
	uint32_t nthreads = rp->ntrees ? rp->trees[0].nthreads : 0;

	if (m->mode == CP_MODE_SAMPLED)
		src = "sampled";
	else if (rp->cpu_sampled)
		src = "cpu: sampled CPU time, exact calls";
	else if (!rp->timed)
		src = m->mode == CP_MODE_COVERAGE ? "coverage: no times" : "counting: no times";
	else
		src = rp->pf->ninputs ? "clock: each input's own" :
		      m->clock == CP_CLOCK_TSC ? "clock: tsc" :
		      m->clock == CP_CLOCK_TSC_FAST ? "clock: tsc-fast" : "clock: monotonic";
	snprintf(buf, size, "%u thread%s, %" PRIu64 " %s, %" PRIu64 " call paths, %s%s  (? help)",
		 nthreads, nthreads == 1 ? "" : "s", rp->sampled ? m->samples : rp->calls,
		 rp->sampled ? "samples" : "calls", rp->paths, src,
		 a->nfilters ? "; filtered (u undoes)" : "");
}

static void draw_help(void)
{
	static const char *const lines[] = {
		"callprof tui keys (any key leaves this screen)",
		"",
		"  Up/Down, k/j      move            PgUp/PgDn      a screen up/down",
		"  Home/End, g/G     first/last row",
		"  Right, l, +       expand          Left, h, -     collapse, or go to the parent",
		"  Enter             tree: expand/collapse; lists: go to its first context",
		"  *, e              expand everything below (at most 10000 rows)",
		"  c                 collapse all",
		"  t                 tree view       F, f           flat view",
		"  s                 flat view: next sort column (inclusive, self, calls, name)",
		"  C                 callers of the selected function",
		"  E                 callees of the selected function",
		"  /                 search names (a part, or a glob; Enter)  n/N  next/previous",
		"  x                 focus on the selected function      X    hide it",
		"  u                 undo focus and hide",
		"  I                 imbalance view (merged profiles): call paths by the time the",
		"                    other inputs lost waiting for the slowest, the row's distribution",
		"  m                 next metric     T              next thread (all, then each)",
		"  L                 source lines of the selected function (sampled profiles)",
		"  ?                 this help       q, Ctrl-C      quit",
		NULL,
	};

	erase();
	for (int i = 0; lines[i] && i < LINES; i++) {
		move(i, 0);
		put_text(lines[i], COLS);
	}
	refresh();
}

/* An imbalance figure: a time, or calls (frac: one decimal, for means), as report --imbalance. */
static void fmt_imb(const struct cp_report_profile *rp, char *buf, size_t size, double v, int frac)
{
	if (rp->timed)
		cp_fmt_ns(buf, size, cp_ns_from_double(v + 0.5));
	else if (frac)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.0f", v);
}

/* Context node's call path, "main > solve > f", its last levels where it is deep. */
static void path_of(const struct cp_report_profile *rp, uint32_t node, char *buf, size_t size)
{
	const struct cp_rtree *tr = &rp->trees[0];
	uint32_t up[64], d = 0, i;
	size_t len = 0;

	for (i = node; i != CP_NONE && i != 0 && d < ARRAY_SIZE(up); i = tr->n[i].parent)
		up[d++] = i;
	buf[0] = '\0';
	if (i != CP_NONE && i != 0)
		len = (size_t)snprintf(buf, size, "...");
	while (d-- && len < size) {
		const char *nm = cp_rnode__name(rp, &tr->n[up[d]]);

		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " > " : "",
					cp_visible(nm ? nm : "?"));
	}
}

/*
 * The imbalance view: report --imbalance's columns that fit a screen, a row
 * per call path, and on the line above the status the selected row's
 * distribution (mean, stddev, min and max with the inputs holding them).
 */
static void draw_imbalance(struct cp_browser *a, int height)
{
	struct cp_tui *t = &a->t;
	const struct cp_report_profile *rp = t->rp;
	const struct cp_imbalance_row *sel;
	char buf[2048], path[1024], v[4][32], maxin[320], minin[320];
	int wmax = 6;

	for (uint32_t r = 0; r < cp_tui__nrows(t); r++) {
		cp_input_name(rp->pf, cp_tui__imbalance_row(t, r)->im.max_in, maxin, sizeof(maxin));
		if ((int)strlen(maxin) > wmax)
			wmax = (int)strlen(maxin) > 40 ? 40 : (int)strlen(maxin);
	}
	snprintf(buf, sizeof(buf), "%10s %7s %10s %10s %10s  %-*s  %s", "imbalance", "imb%", "mean",
		 "max", "calls", wmax, "max-at", "call path");
	attron(A_BOLD);
	move(1, 0);
	put_text(buf, COLS);
	attroff(A_BOLD);
	for (uint32_t r = t->top; r < cp_tui__nrows(t) && r < t->top + (uint32_t)height; r++) {
		const struct cp_imbalance *im = &cp_tui__imbalance_row(t, r)->im;
		int x;

		fmt_imb(rp, v[0], sizeof(v[0]), (double)im->imbalance, 0);
		fmt_imb(rp, v[1], sizeof(v[1]), im->mean, 1);
		fmt_imb(rp, v[2], sizeof(v[2]), (double)im->max, 0);
		cp_input_name(rp->pf, im->max_in, maxin, sizeof(maxin));
		path_of(rp, cp_tui__imbalance_row(t, r)->node, path, sizeof(path));
		if (r == t->sel)
			attron(A_REVERSE);
		if (cp_tui__row_matches(t, r))
			attron(A_BOLD);
		move(2 + (int)(r - t->top), 0);
		snprintf(buf, sizeof(buf), "%10s %7.2f %10s %10s %10" PRIu64 "  %-*.*s  %s", v[0],
			 t->imb_whole ? 100.0 * (double)im->imbalance / (double)t->imb_whole : 0.0,
			 v[1], v[2], rp->trees[0].n[cp_tui__imbalance_row(t, r)->node].calls, wmax,
			 wmax, maxin, path);
		x = put_text(buf, COLS);
		if (r == t->sel)
			for (; x < COLS; x++)
				addch(' ');
		attroff(A_REVERSE | A_BOLD);
	}
	sel = cp_tui__imbalance_row(t, t->sel);
	move(LINES - 2, 0);
	if (!sel) {
		put_text("no call path with the per-input distribution", COLS);
		return;
	}
	fmt_imb(rp, v[0], sizeof(v[0]), sel->im.mean, 1);
	fmt_imb(rp, v[1], sizeof(v[1]), sel->im.stddev, 1);
	fmt_imb(rp, v[2], sizeof(v[2]), (double)sel->im.min, 0);
	fmt_imb(rp, v[3], sizeof(v[3]), (double)sel->im.max, 0);
	cp_input_name(rp->pf, sel->im.max_in, maxin, sizeof(maxin));
	cp_input_name(rp->pf, sel->im.min_in, minin, sizeof(minin));
	snprintf(buf, sizeof(buf), "over %u inputs: mean %s  stddev %s  min %s at %s  max %s at %s",
		 rp->ninputs, v[0], v[1], v[2], minin, v[3], maxin);
	attron(A_BOLD);
	put_text(buf, COLS);
	attroff(A_BOLD);
}

static void draw(struct cp_browser *a)
{
	struct cp_tui *t = &a->t;
	struct cp_report_profile *rp = current(a);
	enum cp_metric m = a->metric;
	enum cp_metric incl = cp_metric__inclusive(m), excl = cp_metric__exclusive(m);
	/* The flat list sorted by self: its percent, bar and diff columns are the self share. */
	enum cp_metric shown = t->view == CP_TUI_FLAT && t->sort == CP_TUI_SORT_SELF ? excl : m;
	int height = LINES - 3 - (t->view == CP_TUI_IMBALANCE), time_cols = m == CP_METRIC_CALLS && rp->timed;
	uint64_t whole = cp_tui__whole(t);
	char buf[1024], vname[512];
	uint32_t r;

	if (height < 1)
		height = 1;
	cp_tui__clamp(t, (uint32_t)height);
	erase();
	/* title */
	if (a->thread < 0)
		snprintf(buf, sizeof(buf), "all (%u)", rp->ntrees ? rp->trees[0].nthreads : 0);
	else
		snprintf(buf, sizeof(buf), "%s (%d/%u)", cp_visible(rp->trees[a->thread].label),
			 a->thread + 1,
			 rp->ntrees);
	attron(A_REVERSE);
	move(0, 0);
	{
		char title[4096];

		char files[1024];

		if (a->diff)
			snprintf(files, sizeof(files), "diff %s -> %s", cp_visible(a->paths[0]),
				 cp_visible(a->paths[1]));
		else
			snprintf(files, sizeof(files), "%s", cp_visible(a->merged->pf->path));
		snprintf(title, sizeof(title), "callprof tui: %s  view: %s  metric: %s  thread: %s",
			 files, view_name(a, vname, sizeof(vname)), cp_metric__name(m), buf);
		int w = put_text(title, COLS);

		for (; w < COLS; w++)
			addch(' ');
	}
	attroff(A_REVERSE);
	if (t->view == CP_TUI_IMBALANCE) {
		draw_imbalance(a, height);
		goto status;
	}
	/* header */
	snprintf(buf, sizeof(buf), "%10s %10.10s %10.10s %7s  %-10s  %s", "calls",
		 time_cols ? "total" : cp_metric__name(incl),
		 time_cols ? "self" : cp_metric__name(excl), shown == m ? "percent" : "self %",
		 "", "name");
	if (a->diff) {
		char la[32], lb[32];

		snprintf(la, sizeof(la), "%s A", cp_metric__name(shown));
		snprintf(lb, sizeof(lb), "%s B", cp_metric__name(shown));
		snprintf(buf, sizeof(buf), "%10.10s %10.10s %11s %8s  %s", la, lb, "delta",
			 "change", "name");
	}
	attron(A_BOLD);
	move(1, 0);
	put_text(buf, COLS);
	attroff(A_BOLD);
	/* rows */
	for (r = t->top; r < cp_tui__nrows(t) && r < t->top + (uint32_t)height; r++) {
		struct cp_figures f;
		char calls[32], vi[32], vs[32], bar[16];
		uint64_t v;
		double pct;
		int x, indent, bw, name_cols;
		uint32_t depth = cp_tui__depth(t, r);

		cp_tui__figures(t, r, &f);
		/* Code without hooks sampled (cpu mode) has no count: "-", as report shows it. */
		if (rp->cpu_sampled && !f.calls)
			snprintf(calls, sizeof(calls), "-");
		else
			snprintf(calls, sizeof(calls), "%" PRIu64, f.calls);
		if (time_cols) {
			cp_fmt_ns(vi, sizeof(vi), f.total_ns);
			cp_fmt_ns(vs, sizeof(vs), f.self_ns);
		} else {
			fmt_value(vi, sizeof(vi), cp_figures__metric(&f, incl), incl);
			fmt_value(vs, sizeof(vs), cp_figures__metric(&f, excl), excl);
		}
		v = cp_figures__metric(&f, shown);
		pct = whole ? 100.0 * (double)v / (double)whole : 0.0;
		bw = (int)(pct / 10.0 + 0.5);
		if (bw > 10)
			bw = 10;
		memset(bar, '#', (size_t)bw);
		bar[bw] = '\0';
		if (r == t->sel)
			attron(A_REVERSE);
		if (cp_tui__row_matches(t, r))
			attron(A_BOLD);
		move(2 + (int)(r - t->top), 0);
		if (a->diff) {
			struct cp_figures fa;
			uint64_t va, vb;
			char sa[32], sb[32], sd[32], ch[16];

			cp_tui__side_figures(t, r, &fa);
			va = cp_figures__metric(&fa, shown);
			vb = v;
			fmt_value(sa, sizeof(sa), va, shown);
			fmt_value(sb, sizeof(sb), vb, shown);
			fmt_value(sd + 1, sizeof(sd) - 1, vb > va ? vb - va : va - vb, shown);
			sd[0] = vb > va ? '+' : vb < va ? '-' : ' ';
			if (!va && vb)
				snprintf(ch, sizeof(ch), "new");
			else if (va && !vb)
				snprintf(ch, sizeof(ch), "gone");
			else if (va)
				snprintf(ch, sizeof(ch), "%+.1f%%",
					 100.0 * ((double)vb - (double)va) / (double)va);
			else
				ch[0] = '\0';
			{
				/* the sign right before the number */
				char *q = sd + 1;

				while (*q == ' ') {
					q[-1] = ' ';
					q++;
				}
				if (q > sd + 1)
					q[-1] = vb > va ? '+' : vb < va ? '-' : ' ';
			}
			snprintf(buf, sizeof(buf), "%10s %10s %11s %8s  ", sa, sb, sd, ch);
		} else {
			snprintf(buf, sizeof(buf), "%10s %10s %10s %6.2f%%  %-10s  ", calls, vi, vs,
				 pct, bar);
		}
		x = put_text(buf, COLS);
		name_cols = COLS - x;
		indent = t->view == CP_TUI_TREE ? (int)(depth > 0 ? depth - 1 : 0) * 2 : 0;
		if (indent > name_cols / 2)
			indent = name_cols / 2;
		for (int i = 0; i < indent && x < COLS; i++, x++)
			addch(' ');
		if (t->view == CP_TUI_TREE && x + 2 <= COLS) {
			addch(cp_tui__is_open(t, r) ? '-' : cp_tui__has_children(t, r) ? '+' : ' ');
			addch(' ');
			x += 2;
		}
		x += put_text(cp_visible(cp_tui__name(t, r)), COLS - x);
		if (r == t->sel)
			for (; x < COLS; x++)
				addch(' ');
		attroff(A_REVERSE | A_BOLD);
	}
status:
	move(LINES - 1, 0);
	if (a->msg[0]) {
		put_text(a->msg, COLS);
	} else {
		facts(a, buf, sizeof(buf));
		put_text(buf, COLS);
	}
	refresh();
}

/* ---- actions ---- */

/* The metrics m cycles through, those rp has. */
static void next_metric(struct cp_browser *a)
{
	static const enum cp_metric cycle[] = { CP_METRIC_TOTAL, CP_METRIC_SELF, CP_METRIC_CPU,
						CP_METRIC_WAIT, CP_METRIC_INACTIVE,
						CP_METRIC_CALLS };
	const size_t n = sizeof(cycle) / sizeof(cycle[0]);
	size_t i = 0, k;

	for (k = 0; k < n; k++)
		if (cycle[k] == a->metric)
			i = k;
	for (k = 1; k <= n; k++) {
		enum cp_metric m = cycle[(i + k) % n];

		if (cp_metric__available(current(a), m)) {
			a->metric = m;
			break;
		}
	}
	*(a->thread < 0 ? &a->merged_order : &a->each_order) = a->metric;
	if (cp_tui__set_metric(&a->t, a->metric))
		snprintf(a->msg, sizeof(a->msg), "out of memory");
	else
		snprintf(a->msg, sizeof(a->msg), "metric: %s", cp_metric__name(a->metric));
}

static void next_thread(struct cp_browser *a)
{
	uint32_t nthreads = a->merged->ntrees ? a->merged->trees[0].nthreads : 0;

	if (a->diff) {
		snprintf(a->msg, sizeof(a->msg), "diff mode compares all threads merged");
		return;
	}
	if (nthreads <= 1 && a->thread < 0) {
		snprintf(a->msg, sizeof(a->msg), "the profile has one thread");
		return;
	}
	if (!a->each) {
		mvprintw(LINES - 1, 0, "loading the threads...");
		clrtoeol();
		refresh();
		FILE *tmp;
		int saved = stderr_begin(&tmp);
		char err[512] = "";

		a->each = load(a, CP_THREADS_EACH);
		stderr_end(tmp, saved, err, sizeof(err));
		a->each_order = CP_METRIC_NR;
		if (!a->each) {
			snprintf(a->msg, sizeof(a->msg), "%s",
				 err[0] ? err : "could not load the threads");
			return;
		}
	}
	a->thread = a->thread + 1 >= (int)a->each->ntrees ? -1 : a->thread + 1;
	if (show(a))
		snprintf(a->msg, sizeof(a->msg), "out of memory");
	else if (a->thread < 0)
		snprintf(a->msg, sizeof(a->msg), "thread: all");
	else
		snprintf(a->msg, sizeof(a->msg), "thread: %s",
			 cp_visible(a->each->trees[a->thread].label));
}

/* Reload with the browser's filters (x, X, u); back to all threads merged.  0 or -1. */
static int reload(struct cp_browser *a)
{
	struct cp_report_profile *rp;

	mvprintw(LINES - 1, 0, "loading...");
	clrtoeol();
	refresh();
	{
		FILE *tmp;
		int saved = stderr_begin(&tmp);
		char err[512] = "";

		struct cp_report_profile *oa = a->da, *ob = a->db;
		struct cp_figures *oside = a->side;

		rp = load(a, CP_THREADS_MERGED);
		stderr_end(tmp, saved, err, sizeof(err));
		if (!rp) {
			snprintf(a->msg, sizeof(a->msg), "%s", err[0] ? err : "could not load");
			return -1;
		}
		if (a->diff) {
			cp_tui__diff_free(a->merged, oside);
			cp_report_profile__free(oa);
			cp_report_profile__free(ob);
			a->merged = NULL;
		}
	}
	cp_tui__release(&a->t);
	cp_report_profile__free(a->merged);
	cp_report_profile__free(a->each);
	a->merged = rp;
	a->merged_order = CP_METRIC_NR;
	a->each = NULL;
	a->thread = -1;
	if (!cp_metric__available(rp, a->metric))
		a->metric = default_weight(a);
	if (show(a)) {
		snprintf(a->msg, sizeof(a->msg), "out of memory");
		return -1;
	}
	return 0;
}

static void add_filter(struct cp_browser *a, int focus)
{
	uint32_t fn = cp_tui__fn(&a->t, a->t.sel);
	const char *name;
	struct tui_filter *f;

	if (fn == CP_NONE) {
		snprintf(a->msg, sizeof(a->msg), "no function selected");
		return;
	}
	name = current(a)->fns[fn].name;
	f = realloc(a->filters, (a->nfilters + 1) * sizeof(*f));
	if (!f || !name)
		return;
	a->filters = f;
	f[a->nfilters].focus = focus;
	f[a->nfilters].pattern = exact_pattern(name, a->regex);
	a->nfilters++;
	/* name is the profile's, which reload frees */
	snprintf(a->msg, sizeof(a->msg), "%s %s (u undoes)", focus ? "focus on" : "hid",
		 cp_visible(name));
	if (reload(a)) {
		/* nothing left (hiding the only function): the filter goes again */
		free(a->filters[--a->nfilters].pattern);
	}
}

static void undo_filters(struct cp_browser *a)
{
	if (!a->nfilters) {
		snprintf(a->msg, sizeof(a->msg), "no focus or hide to undo");
		return;
	}
	for (uint32_t i = 0; i < a->nfilters; i++)
		free(a->filters[i].pattern);
	a->nfilters = 0;
	snprintf(a->msg, sizeof(a->msg), "focus and hide undone");
	reload(a);
}

static void search_prompt(struct cp_browser *a)
{
	char pat[256];
	size_t len = 0;
	int ch;

	pat[0] = '\0';
	for (;;) {
		move(LINES - 1, 0);
		clrtoeol();
		addch('/');
		put_text(cp_visible(pat), COLS - 1);
		refresh();
		ch = read_key();
		if (ch == ERR && stop_signal)
			return;
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
			break;
		if (ch == 27 || ch == 3 || ch == 7) { /* Esc, Ctrl-C, Ctrl-G */
			a->msg[0] = '\0';
			return;
		}
		if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
			if (len) {
				/* a whole UTF-8 character */
				do
					len--;
				while (len && ((unsigned char)pat[len] & 0xc0) == 0x80);
				pat[len] = '\0';
			}
			continue;
		}
		if (ch == KEY_RESIZE || ch < 32 || ch > 255 || len + 1 >= sizeof(pat))
			continue;
		pat[len++] = (char)ch;
		pat[len] = '\0';
	}
	if (!len) {
		cp_tui__search(&a->t, NULL);
		snprintf(a->msg, sizeof(a->msg), "search cleared");
		return;
	}
	if (!cp_tui__search(&a->t, pat)) {
		snprintf(a->msg, sizeof(a->msg), "no match for '%s'", cp_visible(pat));
		return;
	}
	cp_tui__next_match(&a->t, 1);
	snprintf(a->msg, sizeof(a->msg), "match %u/%u for '%s'", a->t.cur_match + 1,
		 a->t.nmatches, cp_visible(pat));
}

static void move_sel(struct cp_tui *t, long delta)
{
	long n = (long)cp_tui__nrows(t), s = (long)t->sel + delta;

	if (s >= n)
		s = n - 1;
	if (s < 0)
		s = 0;
	t->sel = (uint32_t)s;
}

/* Enter in a list: the row's context in the tree. */
static void jump_to_tree(struct cp_browser *a)
{
	struct cp_tui *t = &a->t;
	uint32_t node;

	if (t->sel >= t->nlist)
		return;
	node = t->list[t->sel].first;
	cp_tui__tree(t);
	if (node == CP_NONE || cp_tui__reveal(t, node) == CP_NONE)
		snprintf(a->msg, sizeof(a->msg), "no context of it in the tree");
}

static void page_free(struct cp_browser *a)
{
	free(a->page);
	free(a->page_lines);
	a->page = NULL;
	a->page_lines = NULL;
	a->npage_lines = a->page_top = 0;
}

/* L: report's lines view of the selected function, as a page of text. */
static void lines_page(struct cp_browser *a)
{
	uint32_t fn = cp_tui__fn(&a->t, a->t.sel), cap = 0;
	struct cp_view_opts vo = { 0 };
	char *buf = NULL, err[512] = "", *p;
	size_t len = 0;
	FILE *mem, *tmp;
	int saved, ret;

	if (fn == CP_NONE || !current(a)->fns[fn].name) {
		snprintf(a->msg, sizeof(a->msg), "no function selected");
		return;
	}
	vo.function = current(a)->fns[fn].name;
	mem = open_memstream(&buf, &len);
	if (!mem)
		return;
	saved = stderr_begin(&tmp);
	ret = cp_view_lines(a->diff ? a->db : current(a), &vo, mem);
	stderr_end(tmp, saved, err, sizeof(err));
	fclose(mem);
	if (ret) {
		free(buf);
		snprintf(a->msg, sizeof(a->msg), "%s", err[0] ? err : "no source lines");
		return;
	}
	page_free(a);
	a->page = buf;
	for (p = buf; p && *p;) {
		char *nl = strchr(p, '\n');

		if (a->npage_lines == cap) {
			char **l;

			cap = cap ? cap * 2 : 64;
			l = realloc(a->page_lines, cap * sizeof(*l));
			if (!l)
				break;
			a->page_lines = l;
		}
		a->page_lines[a->npage_lines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
}

static void draw_page(struct cp_browser *a)
{
	int height = LINES - 2 > 1 ? LINES - 2 : 1;

	if (a->npage_lines > (uint32_t)height && a->page_top > a->npage_lines - (uint32_t)height)
		a->page_top = a->npage_lines - (uint32_t)height;
	if (a->npage_lines <= (uint32_t)height)
		a->page_top = 0;
	erase();
	attron(A_REVERSE);
	move(0, 0);
	{
		int w = put_text("callprof tui: source lines (q, L or Esc: back; arrows, PgUp/PgDn "
				 "scroll)", COLS);

		for (; w < COLS; w++)
			addch(' ');
	}
	attroff(A_REVERSE);
	for (int i = 0; i < height && a->page_top + (uint32_t)i < a->npage_lines; i++) {
		move(1 + i, 0);
		put_text(a->page_lines[a->page_top + (uint32_t)i], COLS);
	}
	refresh();
}

/* A key on the page: scroll or leave. */
static void page_key(struct cp_browser *a, int ch)
{
	int height = LINES - 2 > 1 ? LINES - 2 : 1;

	switch (ch) {
	case KEY_UP:
	case 'k':
		if (a->page_top)
			a->page_top--;
		break;
	case KEY_DOWN:
	case 'j':
		a->page_top++;
		break;
	case KEY_PPAGE:
		a->page_top = a->page_top > (uint32_t)height ? a->page_top - (uint32_t)height : 0;
		break;
	case KEY_NPAGE:
	case ' ':
		a->page_top += (uint32_t)height;
		break;
	case KEY_HOME:
	case 'g':
		a->page_top = 0;
		break;
	case KEY_END:
	case 'G':
		a->page_top = a->npage_lines;
		break;
	case KEY_RESIZE:
		break;
	default: /* q, L, Esc, anything else: back */
		page_free(a);
		break;
	}
}

/* One key: 0 to go on, 1 to quit. */
static int key(struct cp_browser *a, int ch)
{
	struct cp_tui *t = &a->t;
	int page = LINES - 3 > 1 ? LINES - 3 : 1;
	uint32_t fn;

	a->msg[0] = '\0';
	if (a->help) {
		a->help = 0;
		return 0;
	}
	if (a->page) {
		if (ch == 3)
			return 1;
		page_key(a, ch);
		return 0;
	}
	switch (ch) {
	case 'q':
	case 3: /* Ctrl-C in raw mode */
		return 1;
	case KEY_UP:
	case 'k':
		move_sel(t, -1);
		break;
	case KEY_DOWN:
	case 'j':
		move_sel(t, 1);
		break;
	case KEY_PPAGE:
		move_sel(t, -page);
		break;
	case KEY_NPAGE:
	case ' ':
		move_sel(t, page);
		break;
	case KEY_HOME:
	case 'g':
		t->sel = 0;
		break;
	case KEY_END:
	case 'G':
		move_sel(t, (long)cp_tui__nrows(t));
		break;
	case KEY_RIGHT:
	case 'l':
	case '+':
		if (cp_tui__expand(t, t->sel))
			snprintf(a->msg, sizeof(a->msg), "out of memory");
		break;
	case KEY_LEFT:
	case 'h':
	case '-':
		if (t->view != CP_TUI_TREE)
			break;
		if (cp_tui__is_open(t, t->sel))
			cp_tui__collapse(t, t->sel);
		else
			t->sel = cp_tui__parent_row(t, t->sel);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (t->view != CP_TUI_TREE)
			jump_to_tree(a);
		else if (cp_tui__is_open(t, t->sel))
			cp_tui__collapse(t, t->sel);
		else if (cp_tui__expand(t, t->sel))
			snprintf(a->msg, sizeof(a->msg), "out of memory");
		break;
	case '*':
	case 'e':
		if (cp_tui__expand_all(t, t->sel, EXPAND_ALL_LIMIT))
			snprintf(a->msg, sizeof(a->msg), "out of memory");
		break;
	case 'c':
		cp_tui__collapse_all(t);
		break;
	case 'F':
	case 'f':
		if (cp_tui__flat(t))
			snprintf(a->msg, sizeof(a->msg), "out of memory");
		break;
	case 't':
		cp_tui__tree(t);
		break;
	case 's':
		if (t->view == CP_TUI_FLAT)
			cp_tui__cycle_sort(t);
		else
			snprintf(a->msg, sizeof(a->msg), "s sorts the flat view (F)");
		break;
	case 'C':
	case 'E':
		fn = cp_tui__fn(t, t->sel);
		if (fn == CP_NONE)
			snprintf(a->msg, sizeof(a->msg), "no function selected");
		else if (ch == 'C' ? cp_tui__callers(t, fn) : cp_tui__callees(t, fn))
			snprintf(a->msg, sizeof(a->msg), "out of memory");
		else if (!t->nlist)
			snprintf(a->msg, sizeof(a->msg), "%s has no %s",
				 cp_visible(current(a)->fns[fn].name),
				 ch == 'C' ? "callers" : "callees");
		break;
	case '/':
		search_prompt(a);
		break;
	case 'n':
	case 'N':
		if (cp_tui__next_match(t, ch == 'n' ? 1 : -1))
			snprintf(a->msg, sizeof(a->msg), t->pattern ? "no match" : "no search (/)");
		else
			snprintf(a->msg, sizeof(a->msg), "match %u/%u for '%s'", t->cur_match + 1,
				 t->nmatches, cp_visible(t->pattern));
		break;
	case 'x':
	case 'X':
		add_filter(a, ch == 'x');
		break;
	case 'u':
		undo_filters(a);
		break;
	case 'I':
		if (cp_tui__imbalance(t))
			snprintf(a->msg, sizeof(a->msg), "no imbalance view: %s",
				 a->thread >= 0 ? "it is of all threads merged (T)" :
				 a->diff ? "not in diff mode" :
				 "the profile is no merge of several runs or ranks with their "
				 "distribution (callprof merge makes one)");
		break;
	case 'm':
		next_metric(a);
		break;
	case 'T':
		next_thread(a);
		break;
	case 'L':
		lines_page(a);
		break;
	case '?':
		a->help = 1;
		break;
	case KEY_RESIZE:
	default:
		break;
	}
	return 0;
}

int cp_browser__run(struct cp_browser *a)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	initscr();
	raw();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	while (!stop_signal) {
		int ch;

		if (a->help)
			draw_help();
		else if (a->page)
			draw_page(a);
		else
			draw(a);
		ch = read_key();
		if (ch == ERR)
			continue;
		if (key(a, ch))
			break;
	}
	endwin();
	return stop_signal && stop_signal != SIGINT ? 128 + stop_signal : 0;
}

struct cp_browser *cp_browser__new(const struct cp_browser_opts *o)
{
	struct cp_browser *a = xcalloc(1, sizeof(*a));

	setlocale(LC_ALL, "");
	a->paths = o->paths;
	a->npaths = o->npaths;
	a->diff = o->npaths == 2;
	a->ro = *o->ro;
	a->focus = o->focus;
	a->hide = o->hide;
	a->regex = o->regex;
	a->thread = -1;
	a->merged = load(a, CP_THREADS_MERGED);
	a->merged_order = a->each_order = CP_METRIC_NR;
	if (!a->merged)
		goto fail;
	if (o->sort) {
		int m = cp_metric__parse(a->merged, o->sort, "--sort");

		if (m < 0)
			goto fail;
		a->metric = (enum cp_metric)m;
	} else {
		a->metric = default_weight(a);
	}
	if (o->each && !a->diff) { /* diff mode: merged only */
		a->each = load(a, CP_THREADS_EACH);
		if (!a->each)
			goto fail;
		a->thread = 0;
	}
	if (show(a)) {
		cp_error("tui: out of memory");
		goto fail;
	}
	if (o->imbalance && cp_tui__imbalance(&a->t)) {
		cp_error("--imbalance needs a merged profile of several runs or ranks: '%s' is not "
			 "one (callprof merge makes one)", cp_visible(a->merged->pf->path));
		goto fail;
	}
	return a;
fail:
	cp_browser__free(a);
	return NULL;
}

void cp_browser__free(struct cp_browser *a)
{
	if (!a)
		return;
	page_free(a);
	cp_tui__release(&a->t);
	free_profiles(a);
	for (uint32_t i = 0; i < a->nfilters; i++)
		free(a->filters[i].pattern);
	free(a->filters);
	free(a);
}
