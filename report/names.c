/*
 * names.c - naming functions: the one matcher behind every option that
 * names a function (report --callers, --callees, --lines, --focus, --hide
 * in report, export, diff and tui, the tui's search, record's and
 * attach's --include, --exclude, --exclude-tree and --start), and the
 * suggestions when a name names nothing.  docs/callprof-report.1.md,
 * NAMING FUNCTIONS, is the user's side of it.
 *
 * A report names functions as c++filt prints them, which is long for C++:
 * "leveldb::Block::Iter::Seek(leveldb::Slice const&)", "int
 * shapes::twice<int>(int)", "helper (a.c)" for one of two helpers.  A
 * pattern names a function when it is, by rank:
 *
 *   exact     the name, or the name without its " (FILE)";
 *   no params the name without parameters, qualifiers, return type and
 *             clone suffix ("shapes::twice<int>"), also without the
 *             function's template arguments ("shapes::twice") or any
 *             template arguments ("ns::Registry::add");
 *   suffix    the last "::" parts of one of those ("Iter::Seek", "Seek"),
 *             or of the name with parameters ("Seek(leveldb::Slice const&)");
 *   glob      a glob (*, ?, [...]) matching one of those or a suffix
 *             ('*Seek*', 'Iter::*'); with --regex, a regex found in the
 *             name, the name without " (FILE)", or without parameters.
 *
 * Of a set of functions (a profile's) a pattern names those of the best
 * rank any of them reaches: "f" is f alone when there is an f, and every
 * ns::f, X::f(int) and X::f(double) when there is none.  Spaces that
 * separate no two identifier characters are ignored ("f(int,char*)").
 */
#include <ctype.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/util.h"

struct cp_name_pattern {
	char *text;  /* as given */
	char *norm;  /* spaces dropped (norm()) */
	int regex;   /* text is an extended regex */
	regex_t re;  /* compiled, with regex */
	int glob;    /* text has glob characters (*, ?, [) */
};

static int ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* s without the spaces that do not separate two identifier characters. */
static char *norm(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	while (*s == ' ')
		s++;
	for (const char *p = s; *p; p++) {
		if (*p == ' ') {
			const char *q = p;

			while (*q == ' ')
				q++;
			if (*q && sb.len && ident(sb.buf[sb.len - 1]) && ident(*q))
				strbuf_addch(&sb, ' ');
			p = q - 1;
			continue;
		}
		strbuf_addch(&sb, *p);
	}
	return sb.len ? strbuf_detach(&sb, NULL) : xstrdup("");
}

/* Whether a glob character is in s, not escaped with a backslash. */
static int has_glob(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		else if (*s == '*' || *s == '?' || *s == '[')
			return 1;
	}
	return 0;
}

struct cp_name_pattern *cp_name_pattern__new(const char *text, int regex, char *err, size_t size)
{
	struct cp_name_pattern *p = xcalloc(1, sizeof(*p));

	if (regex) {
		int code = regcomp(&p->re, text, REG_EXTENDED | REG_NOSUB);

		if (code) {
			if (err)
				regerror(code, &p->re, err, size);
			regfree(&p->re);
			free(p);
			return NULL;
		}
	}
	p->text = xstrdup(text);
	if (regex) {
		p->norm = norm(text);
	} else {
		/* Compared as a name, a glob's escapes are what they escape. */
		struct strbuf sb = STRBUF_INIT;

		for (const char *c = text; *c; c++)
			strbuf_addch(&sb, *c == '\\' && c[1] ? *++c : *c);
		p->norm = norm(sb.buf ? sb.buf : "");
		strbuf_release(&sb);
	}
	p->regex = regex;
	p->glob = !regex && has_glob(text);
	return p;
}

void cp_name_pattern__free(struct cp_name_pattern *p)
{
	if (!p)
		return;
	if (p->regex)
		regfree(&p->re);
	free(p->text);
	free(p->norm);
	free(p);
}

const char *cp_name_pattern__text(const struct cp_name_pattern *p)
{
	return p->text;
}

/* ---- the forms of a name ---- */

/*
 * The bracket depth change of s[i] ('<' '(' '[' '{' open, their partners
 * close), with the characters of an operator's name ("operator<<",
 * "operator()", "operator->") skipped: *i is moved past them.
 */
static int depth_step(const char *s, size_t *i)
{
	if (!strncmp(s + *i, "operator", 8) && (*i == 0 || !ident(s[*i - 1])) &&
	    !ident(s[*i + 8])) {
		size_t k = *i + 8;

		while (s[k] == ' ')
			k++;
		/* The symbol of the operator, "()" and "[]" included. */
		if (!strncmp(s + k, "()", 2) || !strncmp(s + k, "[]", 2))
			k += 2;
		else
			while (s[k] && strchr("<>=!+-*/%^&|~,", s[k]))
				k++;
		*i = k - 1;
		return 0;
	}
	switch (s[*i]) {
	case '<': case '(': case '[': case '{':
		return 1;
	case '>': case ')': case ']': case '}':
		return -1;
	default:
		return 0;
	}
}

/* Cut s at the '(' that opens its last top-level group, which ends s; 0 if cut. */
static int cut_params(char *s)
{
	size_t n = strlen(s), open = SIZE_MAX;
	int depth = 0;

	if (!n || s[n - 1] != ')')
		return -1;
	for (size_t i = 0; s[i]; i++) {
		size_t at = i;
		int d = depth_step(s, &i);

		if (d > 0 && depth == 0 && s[at] == '(')
			open = at;
		depth += d;
	}
	if (open == SIZE_MAX || open == 0 || depth)
		return -1;
	s[open] = '\0';
	return 0;
}

/* Whether s ends with suffix; then cut it off. */
static int cut_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	if (n <= k || strcmp(s + n - k, suffix))
		return 0;
	s[n - k] = '\0';
	return 1;
}

/* The return type a template instance's name begins with ("int ns::f<int>"). */
static void cut_return_type(char *s)
{
	size_t last = SIZE_MAX;
	int depth = 0;

	for (size_t i = 0; s[i]; i++) {
		size_t at = i;
		int d = depth_step(s, &i);

		/* A space inside an operator's name ("operator new") is none. */
		if (!d && depth == 0 && s[at] == ' ' && at == i)
			last = at;
		depth += d;
	}
	if (last != SIZE_MAX && last > 0)
		memmove(s, s + last + 1, strlen(s + last + 1) + 1);
}

/* gcc's clones of C functions: "f.part.0", "f.cold", "f.constprop.0.isra.0". */
static void cut_c_clone(char *s)
{
	char *dot = strchr(s, '.');

	if (!dot || dot == s || !ident(dot[-1]) || strpbrk(s, "(<:[{ "))
		return;
	for (const char *p = dot; *p; p++)
		if (!ident(*p) && *p != '.')
			return;
	*dot = '\0';
}

/* s with every template argument list taken out ("ns::Vec<int>::at" -> "ns::Vec::at"). */
static char *cut_templates(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	int angle = 0;

	for (size_t i = 0; s[i]; i++) {
		size_t at = i;

		depth_step(s, &i);
		if (at != i) { /* an operator's name: kept as it is */
			if (!angle)
				strbuf_add(&sb, s + at, i - at + 1);
			continue;
		}
		if (s[i] == '<')
			angle++;
		else if (s[i] == '>' && angle)
			angle--;
		else if (!angle)
			strbuf_addch(&sb, s[i]);
	}
	return sb.len ? strbuf_detach(&sb, NULL) : xstrdup("");
}

/* Up to 4 forms of one name (normalised), the suffixes of each found apart. */
struct forms {
	char *f[6];
	int n;
};

static void forms__add(struct forms *fm, char *s)
{
	for (int i = 0; i < fm->n; i++)
		if (!strcmp(fm->f[i], s)) {
			free(s);
			return;
		}
	fm->f[fm->n++] = s;
}

static void forms__release(struct forms *fm)
{
	for (int i = 0; i < fm->n; i++)
		free(fm->f[i]);
}

/*
 * name's forms: [0] the name, [1] without " (FILE)" (both for the exact
 * rank, kept even if equal), then the signature without return type and
 * clone suffix, then without parameters, without the function's template
 * arguments, without any template arguments.  *first_np is the index of
 * the first form without parameters.
 */
static void name_forms(const char *name, struct forms *fm, int *first_np)
{
	size_t bare = cp_fn_name_bare_len(name);
	char *s = xstrfmt("%.*s", (int)bare, name), *p, *sig;
	size_t n;

	fm->n = 0;
	fm->f[fm->n++] = norm(name);
	fm->f[fm->n++] = norm(s);
	/* gcc's clones of C++ functions: "f(int) [clone .isra.0]". */
	while ((p = strstr(s, " [clone ")))
		*p = '\0';
	while (cut_suffix(s, " const") || cut_suffix(s, " volatile") || cut_suffix(s, " &&") ||
	       cut_suffix(s, " &") || cut_suffix(s, " noexcept"))
		;
	sig = xstrdup(s);
	if (!cut_params(sig)) {
		/* with parameters, without return type: for "Seek(Slice const&)" */
		char *t = xstrdup(s);

		cut_return_type(t);
		forms__add(fm, norm(t));
		free(t);
	}
	*first_np = fm->n;
	cut_return_type(sig);
	cut_c_clone(sig);
	forms__add(fm, norm(sig));
	n = strlen(sig);
	if (n && sig[n - 1] == '>') {
		/* the function template's arguments: "ns::twice<int>" -> "ns::twice" */
		char *t = xstrdup(sig);
		size_t open = SIZE_MAX;
		int depth = 0;

		for (size_t i = 0; t[i]; i++) {
			size_t at = i;
			int d = depth_step(t, &i);

			if (d > 0 && depth == 0 && t[at] == '<')
				open = at;
			depth += d;
		}
		if (open != SIZE_MAX && open > 0 && !depth) {
			t[open] = '\0';
			forms__add(fm, norm(t));
		}
		free(t);
	}
	if (fm->n > *first_np)
		forms__add(fm, cut_templates(fm->f[fm->n - 1]));
	free(sig);
	free(s);
}

/* Whether t is s or one of its last "::" parts (split at top level). */
static int is_suffix(const char *s, const char *t)
{
	size_t ns = strlen(s), nt = strlen(t);
	int depth = 0;

	if (nt >= ns)
		return 0;
	if (strcmp(s + ns - nt, t) || ns - nt < 2 || s[ns - nt - 1] != ':' || s[ns - nt - 2] != ':')
		return 0;
	/* The "::" must be at top level, not inside template arguments. */
	for (size_t i = 0; i < ns - nt; i++)
		depth += depth_step(s, &i);
	return depth == 0;
}

/* Whether the glob matches s or one of its top-level "::" suffixes. */
static int glob_any(const char *glob, const char *s)
{
	int depth = 0;

	if (!fnmatch(glob, s, 0))
		return 1;
	for (size_t i = 0; s[i]; i++) {
		size_t at = i;

		depth += depth_step(s, &i);
		if (at == i && depth == 0 && s[i] == ':' && s[i + 1] == ':' && s[i + 2] &&
		    !fnmatch(glob, s + i + 2, 0))
			return 1;
	}
	return 0;
}

enum cp_name_rank cp_name_pattern__rank(const struct cp_name_pattern *p, const char *name)
{
	struct forms fm;
	int np;
	enum cp_name_rank r = CP_NAME_NONE;

	if (!name)
		return CP_NAME_NONE;
	if (p->regex) {
		char *bare = xstrfmt("%.*s", (int)cp_fn_name_bare_len(name), name);
		char *stripped = xstrdup(bare);
		int hit;

		cut_params(stripped);
		hit = !regexec(&p->re, name, 0, NULL, 0) || !regexec(&p->re, bare, 0, NULL, 0) ||
		      !regexec(&p->re, stripped, 0, NULL, 0);
		free(bare);
		free(stripped);
		return hit ? CP_NAME_GLOB : CP_NAME_NONE;
	}
	name_forms(name, &fm, &np);
	if (!strcmp(fm.f[0], p->norm) || !strcmp(fm.f[1], p->norm)) {
		r = CP_NAME_EXACT;
		goto out;
	}
	for (int i = np; i < fm.n; i++)
		if (!strcmp(fm.f[i], p->norm)) {
			r = CP_NAME_NOPARAMS;
			goto out;
		}
	for (int i = 1; i < fm.n; i++)
		if (is_suffix(fm.f[i], p->norm)) {
			r = CP_NAME_SUFFIX;
			goto out;
		}
	if (p->glob) {
		/* Globs see the names as shown, spaces and all. */
		struct forms raw = { 0 };

		raw.f[raw.n++] = xstrdup(name);
		raw.f[raw.n++] = xstrfmt("%.*s", (int)cp_fn_name_bare_len(name), name);
		for (int i = 0; i < raw.n && r == CP_NAME_NONE; i++)
			if (!fnmatch(p->text, raw.f[i], 0))
				r = CP_NAME_GLOB;
		for (int i = 2; i < fm.n && r == CP_NAME_NONE; i++)
			if (glob_any(p->text, fm.f[i]) || glob_any(p->norm, fm.f[i]))
				r = CP_NAME_GLOB;
		forms__release(&raw);
	}
out:
	forms__release(&fm);
	return r;
}

uint32_t cp_name_pattern__select(const struct cp_name_pattern *p, const char *const *names,
				 uint32_t n, uint8_t *hit)
{
	enum cp_name_rank best = CP_NAME_NONE;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		hit[i] = (uint8_t)cp_name_pattern__rank(p, names[i]);
		if (hit[i] > best)
			best = hit[i];
	}
	for (uint32_t i = 0; i < n; i++) {
		hit[i] = best != CP_NAME_NONE && hit[i] == best;
		k += hit[i];
	}
	return k;
}

/* ---- suggestions ---- */

static char *lower(const char *s)
{
	char *l = xstrdup(s);

	for (char *p = l; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return l;
}

/*
 * Edit distance (insertions, deletions, substitutions and transpositions
 * of neighbours, each 1), at most cap (then cap).
 */
static size_t distance(const char *a, const char *b, size_t cap)
{
	size_t na = strlen(a), nb = strlen(b), w = nb + 1, best;
	size_t *d;

	if ((na > nb ? na - nb : nb - na) >= cap)
		return cap;
	d = xmalloc((na + 1) * w * sizeof(*d));
	for (size_t j = 0; j <= nb; j++)
		d[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t low;

		d[i * w] = i;
		low = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t v = d[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]);

			if (d[(i - 1) * w + j] + 1 < v)
				v = d[(i - 1) * w + j] + 1;
			if (d[i * w + j - 1] + 1 < v)
				v = d[i * w + j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[(i - 2) * w + j - 2] + 1 < v)
				v = d[(i - 2) * w + j - 2] + 1;
			d[i * w + j] = v;
			if (v < low)
				low = v;
		}
		if (low >= cap + 1) {
			free(d);
			return cap;
		}
	}
	best = d[na * w + nb] < cap ? d[na * w + nb] : cap;
	free(d);
	return best;
}

/* The pattern's words as a name: glob characters, parameters and " (FILE)" out. */
static char *pattern_core(const struct cp_name_pattern *p)
{
	char *s = xstrfmt("%.*s", (int)cp_fn_name_bare_len(p->text), p->text), *t;
	struct strbuf sb = STRBUF_INIT;

	cut_params(s);
	for (t = s; *t; t++)
		if (!strchr("*?[]\\^$|+{}", *t))
			strbuf_addch(&sb, *t);
	free(s);
	t = norm(sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	return t;
}

struct suggestion {
	const char *name;
	size_t score;
};

static int suggestion_cmp(const void *a, const void *b)
{
	const struct suggestion *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return strcmp(x->name, y->name);
}

char *cp_name_pattern__suggest(const struct cp_name_pattern *p, const char *const *names,
			       uint32_t n, uint32_t max)
{
	char *core = pattern_core(p), *lcore = lower(core);
	size_t len = strlen(core), cap = len / 3 + 1;
	struct suggestion *s = xcalloc(n ? n : 1, sizeof(*s));
	struct strbuf sb = STRBUF_INIT;
	uint32_t ns = 0, shown = 0;

	/*
	 * Score: 0 the same but for case, 1 a part of the other (3 letters
	 * or more), else 1 + the letters to change (at most len / 3).
	 */
	for (uint32_t i = 0; len && i < n; i++) {
		struct forms fm;
		int np;
		size_t best = SIZE_MAX;

		if (!names[i])
			continue;
		name_forms(names[i], &fm, &np);
		for (int k = 1; k < fm.n; k++) {
			char *l = lower(fm.f[k]), *last = l;
			size_t d;

			for (char *c = l; (c = strstr(c, "::")); c += 2)
				last = c + 2;
			if (!strcmp(l, lcore) || !strcmp(last, lcore))
				d = 0;
			else if ((len >= 3 && strstr(l, lcore)) || (strlen(last) >= 3 && strstr(lcore, last)))
				d = 1;
			else
				d = 1 + (distance(lcore, last, cap + 1) < distance(lcore, l, cap + 1) ?
						 distance(lcore, last, cap + 1) : distance(lcore, l, cap + 1));
			if (d < best)
				best = d;
			free(l);
		}
		forms__release(&fm);
		if (best <= cap) {
			s[ns].name = names[i];
			s[ns++].score = best;
		}
	}
	if (ns)
		qsort(s, ns, sizeof(*s), suggestion_cmp);
	for (uint32_t i = 0; i < ns && shown < max; i++) {
		if (i && !strcmp(s[i].name, s[i - 1].name))
			continue;
		strbuf_addf(&sb, "%s%s", shown ? ", " : "", s[i].name);
		shown++;
	}
	if (shown && ns > shown)
		strbuf_addstr(&sb, ", ...");
	free(s);
	free(core);
	free(lcore);
	return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* ---- the functions of a profile ---- */

uint32_t *cp_report_profile__name_fns(struct cp_report_profile *rp, const char *text, int regex,
				      uint32_t *n)
{
	const char **names = xcalloc(rp->nfns ? rp->nfns : 1, sizeof(*names));
	uint8_t *present = xcalloc(rp->nfns ? rp->nfns : 1, 1), *hit;
	uint32_t *fns = NULL, k = 0;
	struct cp_name_pattern *p;
	char err[256];

	*n = 0;
	p = cp_name_pattern__new(text, regex, err, sizeof(err));
	if (!p) {
		cp_error("'%s' is not a valid regular expression: %s", text, err);
		free(names);
		free(present);
		return NULL;
	}
	/* Only the functions that are in a tree (filters may have taken some out). */
	for (uint32_t t = 0; t < rp->ntrees; t++)
		for (uint32_t i = 1; i < rp->trees[t].nn; i++)
			if (rp->trees[t].n[i].fn != CP_NONE)
				present[rp->trees[t].n[i].fn] = 1;
	for (uint32_t f = 0; f < rp->nfns; f++)
		names[f] = present[f] ? rp->fns[f].name : NULL;
	hit = xcalloc(rp->nfns ? rp->nfns : 1, 1);
	*n = cp_name_pattern__select(p, names, rp->nfns, hit);
	if (*n) {
		fns = xmalloc(*n * sizeof(*fns));
		for (uint32_t f = 0; f < rp->nfns; f++)
			if (hit[f])
				fns[k++] = f;
	} else {
		cp_report_no_function(p, names, rp->nfns, rp->pf->path);
	}
	free(hit);
	free(present);
	free(names);
	cp_name_pattern__free(p);
	return fns;
}

int cp_report_no_function(const struct cp_name_pattern *p, const char *const *names, uint32_t n,
			  const char *path)
{
	char *close = cp_name_pattern__suggest(p, names, n, 5);
	int ret;

	if (close)
		ret = cp_error("no function named '%s' in profile '%s'; the closest: %s",
			       p->text, path, close);
	else
		ret = cp_error("no function named '%s' in profile '%s'", p->text, path);
	free(close);
	return ret;
}
