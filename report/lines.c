/*
 * lines.c - `report --lines FN`: where inside one function the samples
 * fell, line by line (Quantify's annotated source, from samples).
 *
 * The LINES section holds sampled instruction addresses per context.  For
 * every context of FN (all its call paths; per thread with
 * --threads=each) the addresses inside FN are grouped by their source
 * line, and those outside it - code FN called that has no hooks, such as
 * libc - by the function they lie in, since their lines say nothing about
 * FN.  A row's time is an estimate: its samples times the sample period.
 * The source text is shown where the file named by the debug information
 * can be read.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

struct line_row {
	const char *what; /* "file:line" or "in NAME (MODULE)": the row's key */
	const char *file; /* source file of a line inside FN, else NULL */
	int line;	  /* its line, 0 for rows outside FN or without a line */
	int inlined;	  /* the line is of a function inlined into FN */
	uint64_t samples;
	uint64_t ns;	  /* estimated time: samples times their profile's period */
};

/* The rows of one table: one per key, found through keys. */
struct line_table {
	struct cp_strtab keys;
	struct line_row *rows; /* by key number */
	size_t alloc;
	uint64_t samples, ns;
	uint32_t contexts;     /* of FN, or holding an inlined FN, with samples */
	struct cp_strtab into; /* the functions FN was found inlined into */
};

/* A source file's lines, read once. */
struct source {
	char *path;
	char *text;   /* NULL if unreadable */
	char **line;  /* line[k] starts line k + 1, in text */
	uint32_t nlines;
};

struct sources {
	struct source *s;
	uint32_t n;
	size_t alloc;
	int no_files; /* the profile was loaded with no_files: read no source */
};

static struct line_row *table_row(struct line_table *t, const char *what)
{
	uint32_t k = cp_strtab__add(&t->keys, what);

	if (k >= t->alloc) {
		size_t old = t->alloc;

		ALLOC_GROW(t->rows, k + 1, t->alloc);
		memset(t->rows + old, 0, (t->alloc - old) * sizeof(*t->rows));
	}
	t->rows[k].what = t->keys.s[k];
	return &t->rows[k];
}

/* Which of rp's trees node k of the file belongs to (CP_NONE: its thread was not selected). */
static uint32_t tree_of(const struct cp_report_profile *rp, uint32_t k)
{
	const struct cp_profile_file *pf = rp->pf;

	for (uint32_t i = 0; i < pf->nthreads; i++)
		if (k < pf->threads[i].first_node + pf->threads[i].nnodes)
			return rp->thread_tree[i];
	return CP_NONE;
}

/*
 * Whether a symbol's or DWARF's name is of the function the user named fn,
 * which may carry the " (FILE)" of a name shared by several functions.
 */
static int is_fn(const char *name, const char *fn)
{
	size_t len = cp_fn_name_bare_len(fn);

	return !strcmp(name, fn) || (!strncmp(name, fn, len) && !name[len]);
}

/* Add name to the list of functions FN was found inlined into, if new. */
static void add_into(struct line_table *t, const char *name)
{
	cp_strtab__add(&t->into, name);
}

/*
 * Add the samples at ip of context n (in tree ti, or all into tables[0]
 * with threads merged) to FN's table if they are FN's: those of FN's
 * contexts, and those of any context that lie in a copy of FN inlined
 * into another function (DWARF's inline records: the lines of an inlined
 * body are the inlined function's).  *fn_seen is set when FN is found;
 * ctx (distinct per context) counts the contexts with samples.
 */
static void add_sample(struct cp_report_profile *rp, const char *fn, struct line_table *tables,
		       uint32_t ti, const struct cp_rnode *n, uint64_t ip, uint64_t samples,
		       uint64_t ns, struct cp_u64map *counted, uint64_t ctx, int *fn_seen)
{
	struct line_table *t = &tables[rp->threads == CP_THREADS_EACH ? ti : 0];
	const char *in = "?", *file, *module, *const *inl = NULL;
	struct line_row *r;
	int line, ninl = 0, pos = -1, own;
	char *what;

	if (n->fn == CP_NONE)
		return;
	own = cp_fn_name_matches(cp_rnode__name(rp, n), fn);
	if (ip >= CP_IP_PSEUDO_LIMIT || rp->pf->meta.mode != CP_MODE_CPU) {
		in = cp_symbolizer__fn_name(rp->sym, ip);
		ninl = cp_symbolizer__inlined(rp->sym, ip, &inl);
		/* FN's place in the chain: the function holding ip (0), or inlined. */
		if (is_fn(in, fn))
			pos = 0;
		for (int i = 0; pos < 0 && i < ninl; i++)
			if (is_fn(inl[i], fn))
				pos = i + 1;
	}
	if (!own && pos <= 0)
		return;
	if (pos > 0)
		*fn_seen = 1;
	line = 0;
	file = NULL;
	if (rp->pf->meta.mode == CP_MODE_CPU && ip < CP_IP_PSEUDO_LIMIT) {
		what = xstrdup(ip == CP_IP_KERNEL ? "[kernel: system calls, page faults]" :
			       "[address unknown: a full ring, or not yet read at the dump]");
	} else if (pos < 0) {
		module = cp_symbolizer__module(rp->sym, ip, NULL);
		if (module && strrchr(module, '/'))
			module = strrchr(module, '/') + 1;
		what = module ? xstrfmt("in %s (%s)", cp_visible(in), cp_visible(module)) :
				 xstrfmt("in %s", cp_visible(in));
	} else if (!cp_symbolizer__line(rp->sym, ip, &file, &line)) {
		const char *base = strrchr(file, '/');

		/* A line of a function inlined into FN (or into FN's inlined copy). */
		if (pos < ninl)
			what = xstrfmt("%s:%d (inlined %s)", cp_visible(base ? base + 1 : file), line,
				       cp_visible(inl[ninl - 1]));
		else
			what = xstrfmt("%s:%d", cp_visible(base ? base + 1 : file), line);
	} else if (pos < ninl) {
		what = xstrfmt("(no line information) (inlined %s)", cp_visible(inl[ninl - 1]));
	} else {
		what = xstrdup("(no line information)");
	}
	if (pos > 0)
		add_into(t, in);
	r = table_row(t, what);
	free(what);
	r->file = file;
	r->line = line;
	r->inlined = pos >= 0 && pos < ninl;
	r->samples += samples;
	r->ns += ns;
	t->samples += samples;
	t->ns += ns;
	if (cp_u64map__get(counted, ctx) == CP_U64MAP_NONE) {
		cp_u64map__get_or_add(counted, ctx, 0);
		t->contexts++;
	}
}

/*
 * Add rp's samples of FN into tables (one per tree, or one with threads
 * merged): one file's (LINES, per context of the file; the profiler's own
 * samples are in no context's time), or several files' (rp->lines, at
 * their common addresses, the profiler's samples left out already).
 */
static void add_samples(struct cp_report_profile *rp, const char *fn, struct line_table *tables,
			int *fn_seen)
{
	const struct cp_profile_file *pf = rp->pf;
	uint64_t period = pf->meta.sample_period_ns;
	struct cp_u64map counted; /* contexts with samples */

	cp_u64map__init(&counted, 64);
	for (uint32_t ti = 0; ti < rp->ntrees && !*fn_seen; ti++)
		for (uint32_t i = 1; i < rp->trees[ti].nn; i++)
			if (cp_fn_name_matches(cp_rnode__name(rp, &rp->trees[ti].n[i]), fn))
				*fn_seen = 1;
	for (uint32_t k = 0; rp->nfiles && k < rp->nlines; k++) {
		const struct cp_rline *l = &rp->lines[k];

		if (l->node != CP_NONE) /* else left out by a filter */
			add_sample(rp, fn, tables, l->tree, &rp->trees[l->tree].n[l->node], l->ip,
				   l->samples, l->ns, &counted, (uint64_t)l->tree << 32 | l->node,
				   fn_seen);
	}
	for (uint32_t k = 0; !rp->nfiles && k < pf->nlines; k++) {
		const struct cp_line_rec *l = &pf->lines[k];
		uint32_t ti = tree_of(rp, l->node), id = rp->node_map[l->node];

		if (ti == CP_NONE || id == CP_NONE) /* left out by --threads or a filter */
			continue;
		if (cp_report_profile__profilers_ip(rp, l->ip))
			continue; /* the profiler's share: in no context's time */
		add_sample(rp, fn, tables, ti, &rp->trees[ti].n[id], l->ip, l->samples,
			   l->samples * period, &counted, l->node, fn_seen);
	}
	cp_u64map__release(&counted);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct line_row *a = pa, *b = pb;
	int c;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	/*
	 * Lines of FN first, then those of the functions inlined into it, by
	 * file then line number; then the functions it called.
	 */
	if (!a->line != !b->line)
		return a->line ? -1 : 1;
	if (a->inlined != b->inlined)
		return a->inlined ? 1 : -1;
	if (a->line && b->file && a->file && (c = strcmp(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return strcmp(a->what, b->what);
}

/*
 * Line `line` of file `path`, without its indentation; NULL if not readable.
 * The path comes from the profile (a merged one names files itself): only
 * a regular file is read, never a device or a FIFO that would not end.
 */
static const char *source_line(struct sources *src, const char *path, int line)
{
	struct source *s = NULL;

	for (uint32_t i = 0; i < src->n; i++)
		if (!strcmp(src->s[i].path, path))
			s = &src->s[i];
	if (!s && src->no_files)
		return NULL;
	if (!s) {
		struct strbuf sb = STRBUF_INIT;
		/* O_NONBLOCK: opening a FIFO would wait for a writer. */
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		FILE *f = NULL;
		char buf[8192];
		size_t got, alloc = 0;
		struct stat st;

		ALLOC_GROW(src->s, src->n + 1, src->alloc);
		s = &src->s[src->n++];
		memset(s, 0, sizeof(*s));
		s->path = xstrdup(path);
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))))
			close(fd);
		if (!f)
			return NULL;
		while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
			strbuf_add(&sb, buf, got);
		fclose(f);
		s->text = strbuf_detach(&sb, NULL);
		for (char *p = s->text; *p;) {
			char *nl = strchr(p, '\n');

			ALLOC_GROW(s->line, s->nlines + 1, alloc);
			s->line[s->nlines++] = p;
			if (!nl)
				break;
			*nl = '\0';
			p = nl + 1;
		}
	}
	if (!s->text || line < 1 || (uint32_t)line > s->nlines)
		return NULL;
	return s->line[line - 1] + strspn(s->line[line - 1], " \t");
}

/*
 * The line column's widest: a row's key is "file:line", and a line of a
 * function inlined into FN adds "(inlined NAME)", where a C++ NAME can be
 * 200 characters long; the source text comes after the column, and must
 * stay on a terminal's first screen (the tui's L page too).
 */
#define LINE_COL_MAX 64

/* Row r's key as the line column shows it: an inlined name shortened to fit (buf, size bytes). */
static const char *line_col(const struct line_row *r, char *buf, size_t size)
{
	const char *in = strstr(r->what, " (inlined ");
	size_t pre, len = strlen(r->what);
	char name[1024], sbuf[1024];
	int room;

	if (cp_text_width(r->what) <= LINE_COL_MAX || !in || r->what[len - 1] != ')')
		return cp_short_name(r->what, LINE_COL_MAX, buf, size);
	pre = (size_t)(in - r->what) + strlen(" (inlined ");
	/* The room left for the name after "FILE:LINE (inlined " and before ")". */
	room = LINE_COL_MAX - (int)cp_text_width(r->what) + (int)cp_text_width(r->what + pre) - 1;
	if (room < 12 || len - pre - 1 >= sizeof(name))
		return cp_short_name(r->what, LINE_COL_MAX, buf, size);
	memcpy(name, r->what + pre, len - pre - 1);
	name[len - pre - 1] = '\0';
	snprintf(buf, size, "%.*s%s)", (int)pre, r->what,
		 cp_short_name(name, room, sbuf, sizeof(sbuf)));
	return buf;
}

/*
 * A source line as the column shows it: tabs to spaces (stops of 8), a
 * carriage return at the end dropped, then its visible form (the file is
 * the program's: it may hold anything).
 */
static void put_source(const char *text, FILE *fp)
{
	struct strbuf sb = STRBUF_INIT;
	size_t col = 0, len = strlen(text);

	if (len && text[len - 1] == '\r')
		len--;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\t') {
			do
				strbuf_addch(&sb, ' ');
			while (++col % 8);
			continue;
		}
		strbuf_addch(&sb, text[i]);
		col += ((unsigned char)text[i] & 0xc0) != 0x80;
	}
	cp_fput_visible(fp, sb.buf, sb.len);
	strbuf_release(&sb);
}

static void print_table(struct line_table *t, const char *fn, struct sources *src, FILE *fp)
{
	uint32_t n = t->keys.n;
	int width = 4;
	char time[32], total[32], col[1024];

	cp_fmt_ns(total, sizeof(total), t->ns);
	if (!t->samples) {
		fprintf(fp, "%s: no samples\n", cp_visible(fn));
		return;
	}
	fprintf(fp, "%s: %" PRIu64 " samples (%s) in %u call path%s", cp_visible(fn), t->samples,
		total, t->contexts, t->contexts == 1 ? "" : "s");
	if (t->into.n) {
		char **into = xmalloc(t->into.n * sizeof(*into));

		memcpy(into, t->into.s, t->into.n * sizeof(*into));
		qsort(into, t->into.n, sizeof(*into), str_cmp);
		for (uint32_t k = 0; k < t->into.n; k++)
			fprintf(fp, "%s%s", k ? ", " : "; inlined into ", cp_visible(into[k]));
		free(into);
	}
	fputc('\n', fp);
	qsort(t->rows, n, sizeof(*t->rows), row_cmp);
	for (uint32_t k = 0; k < n; k++)
		if (t->rows[k].line) {
			int w = (int)cp_text_width(line_col(&t->rows[k], col, sizeof(col)));

			if (w > width)
				width = w;
		}
	fprintf(fp, "%10s  %7s  %10s  %-*s  source\n", "samples", "percent", "time", width, "line");
	for (uint32_t k = 0; k < n; k++) {
		const struct line_row *r = &t->rows[k];
		const char *text = r->line ? source_line(src, r->file, r->line) : NULL;

		cp_fmt_ns(time, sizeof(time), r->ns);
		fprintf(fp, "%10" PRIu64 "  %7.2f  %10s  ", r->samples,
			100.0 * (double)r->samples / (double)t->samples, time);
		if (text && *text) {
			const char *c = line_col(r, col, sizeof(col));

			/* Padded by characters: a UTF-8 file name is wider in bytes. */
			fprintf(fp, "%s%*s  ", c, width - (int)cp_text_width(c), "");
			put_source(text, fp);
			fputc('\n', fp);
		} else {
			fprintf(fp, "%s\n", r->what);
		}
	}
}

/* The names of the code at ip and of that inlined there into cand, but for contexts' names. */
static void code_names(struct cp_report_profile *rp, uint64_t ip, uint32_t ncontexts,
		       struct cp_strtab *cand)
{
	const char *const *inl = NULL;
	int ninl = cp_symbolizer__inlined(rp->sym, ip, &inl);

	for (int i = -1; i < ninl; i++) {
		const char *name = i < 0 ? cp_symbolizer__fn_name(rp->sym, ip) : inl[i];
		int known = 0;

		for (uint32_t c = 0; c < ncontexts && !known; c++)
			known = cp_fn_name_matches(cand->s[c], name);
		if (!known)
			cp_strtab__add(cand, name);
	}
}

/*
 * The names FN may be, into cand: those of the contexts, and of the code
 * the samples fell in, inlined functions too (a function inlined
 * everywhere has no context of its own).  A code name that is a
 * context's name without its " (FILE)" is that context's.  The samples
 * are add_samples' own: one file's, or several files' rp->lines.
 */
static void candidates(struct cp_report_profile *rp, struct cp_strtab *cand)
{
	const struct cp_profile_file *pf = rp->pf;
	int cpu = pf->meta.mode == CP_MODE_CPU;
	uint32_t ncontexts;

	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		for (uint32_t i = 1; i < rp->trees[ti].nn; i++) {
			const char *name = cp_rnode__name(rp, &rp->trees[ti].n[i]);

			if (name)
				cp_strtab__add(cand, name);
		}
	ncontexts = cand->n;
	for (uint32_t k = 0; rp->nfiles && k < rp->nlines; k++) {
		const struct cp_rline *l = &rp->lines[k];

		if (l->node != CP_NONE && !(l->ip < CP_IP_PSEUDO_LIMIT && cpu))
			code_names(rp, l->ip, ncontexts, cand);
	}
	for (uint32_t k = 0; !rp->nfiles && k < pf->nlines; k++) {
		const struct cp_line_rec *l = &pf->lines[k];

		if (tree_of(rp, l->node) == CP_NONE || rp->node_map[l->node] == CP_NONE ||
		    (l->ip < CP_IP_PSEUDO_LIMIT && cpu) || cp_report_profile__profilers_ip(rp, l->ip))
			continue;
		code_names(rp, l->ip, ncontexts, cand);
	}
}

static void release_tables(struct line_table *tables, uint32_t ntables)
{
	for (uint32_t ti = 0; ti < ntables; ti++) {
		cp_strtab__release(&tables[ti].keys);
		cp_strtab__release(&tables[ti].into);
		free(tables[ti].rows);
		memset(&tables[ti], 0, sizeof(tables[ti]));
	}
}

/* FN's tables (tables[ntables], cleared first), as add_samples fills them. */
static uint64_t fill_tables(struct cp_report_profile *rp, const char *fn, struct line_table *tables,
			    uint32_t ntables)
{
	uint64_t samples = 0;
	int seen = 0;

	release_tables(tables, ntables);
	add_samples(rp, fn, tables, &seen);
	for (uint32_t ti = 0; ti < ntables; ti++)
		samples += tables[ti].samples;
	return samples;
}

/* qsort_r order of named functions: more samples (arg: uint64_t[] by name) first. */
static int named_cmp(const void *pa, const void *pb, void *arg)
{
	const uint64_t *samples = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (samples[a] != samples[b])
		return samples[a] > samples[b] ? -1 : 1;
	return (a > b) - (a < b);
}

int cp_view_lines(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	uint32_t ntables = rp->threads == CP_THREADS_EACH ? rp->ntrees : 0, nnamed = 0;
	uint32_t *named;
	struct line_table *tables;
	struct sources src = { .no_files = rp->no_files };
	struct cp_strtab cand = { 0 };
	struct cp_name_pattern *pat;
	uint64_t *samples;
	uint8_t *hit;

	if (!(rp->nfiles ? rp->nlines : rp->pf->nlines))
		return cp_error("profile '%s' has no sampled lines: record with --time=cpu (the "
				"default) or --sample",
				rp->pf->path);
	/* Which functions FUNCTION names, before anything is printed. */
	candidates(rp, &cand);
	pat = cp_name_pattern__new(o->function, 0, NULL, 0);
	hit = xcalloc(cand.n ? cand.n : 1, 1);
	if (!cp_name_pattern__select(pat, (const char *const *)cand.s, cand.n, hit)) {
		int ret = cp_report_no_function(pat, (const char *const *)cand.s, cand.n,
						rp->pf->path);

		free(hit);
		cp_name_pattern__free(pat);
		cp_strtab__release(&cand);
		return ret;
	}
	tables = xcalloc(ntables ? ntables : 1, sizeof(*tables));
	named = xcalloc(cand.n, sizeof(*named));
	samples = xcalloc(cand.n, sizeof(*samples));
	for (uint32_t c = 0; c < cand.n; c++)
		if (hit[c]) {
			named[nnamed++] = c;
			samples[c] = fill_tables(rp, cand.s[c], tables, ntables ? ntables : 1);
		}
	qsort_r(named, nnamed, sizeof(*named), named_cmp, samples);
	cp_report_banner(rp, "lines", fp);
	if (nnamed > 1)
		fprintf(fp, "# '%s' names %u functions: each is shown, the most sampled first\n",
			cp_visible(o->function), nnamed);
	for (uint32_t k = 0; k < nnamed; k++) {
		const char *fn = cand.s[named[k]];
		int shown = 0;

		fill_tables(rp, fn, tables, ntables ? ntables : 1);
		for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
			/* Per thread: only those where FN was sampled. */
			if (rp->threads == CP_THREADS_EACH && !tables[ti].samples)
				continue;
			cp_tree_header(rp, &rp->trees[ti], 1, fp);
			print_table(&tables[ti], fn, &src, fp);
			shown = 1;
		}
		if (!shown)
			fprintf(fp, "%s: no samples\n", cp_visible(fn));
	}
	release_tables(tables, ntables ? ntables : 1);
	free(tables);
	free(named);
	free(samples);
	free(hit);
	cp_name_pattern__free(pat);
	cp_strtab__release(&cand);
	for (uint32_t i = 0; i < src.n; i++) {
		free(src.s[i].path);
		free(src.s[i].text);
		free(src.s[i].line);
	}
	free(src.s);
	return 0;
}
