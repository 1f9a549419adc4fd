/*
 * output.c - columns, number formatting and the report banner.
 *
 * Columns are right-aligned numbers separated by two spaces, the name last
 * and left-aligned, so the output reads well and cuts well with awk.
 * --fields selects columns; tests use deterministic ones (calls, name).
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

static const struct {
	const char *key;   /* --fields name */
	const char *title; /* column title */
	int width;	   /* column width */
} fields[CP_F_NR] = {
	[CP_F_CALLS] = { "calls", "calls", 12 },
	[CP_F_TOTAL] = { "total", "total", 10 },
	[CP_F_SELF] = { "self", "self", 10 },
	[CP_F_PERCENT] = { "percent", "total%", 7 },
	[CP_F_SELF_PERCENT] = { "self-percent", "self%", 7 },
	[CP_F_AVG] = { "avg", "avg", 10 },
	[CP_F_MIN] = { "min", "min", 10 },
	[CP_F_MAX] = { "max", "max", 10 },
	[CP_F_SITE] = { "site", "call site", 24 },
	[CP_F_CALLS_MIN] = { "calls-min", "calls-min", 10 },
	[CP_F_CALLS_MAX] = { "calls-max", "calls-max", 10 },
	[CP_F_CALLS_MEAN] = { "calls-mean", "calls-mean", 10 },
	[CP_F_TOTAL_MIN] = { "total-min", "total-min", 10 },
	[CP_F_TOTAL_MAX] = { "total-max", "total-max", 10 },
	[CP_F_TOTAL_MEAN] = { "total-mean", "total-mean", 10 },
	[CP_F_CPU] = { "cpu", "cpu", 10 },
	[CP_F_WAIT] = { "wait", "wait", 10 },
	[CP_F_INACTIVE] = { "inactive", "inactive", 10 },
	[CP_F_SELF_CPU] = { "self-cpu", "self-cpu", 10 },
	[CP_F_SELF_WAIT] = { "self-wait", "self-wait", 10 },
	[CP_F_SELF_INACTIVE] = { "self-inactive", "self-inact", 10 },
	[CP_F_CPU_PERCENT] = { "cpu-percent", "cpu%", 7 },
	[CP_F_SWITCHES_VOL] = { "switches-vol", "blocks", 9 },
	[CP_F_SWITCHES_INVOL] = { "switches-invol", "preempts", 9 },
	[CP_F_SELF_SWITCHES_VOL] = { "self-switches-vol", "self-blks", 9 },
	[CP_F_SELF_SWITCHES_INVOL] = { "self-switches-invol", "self-prmt", 9 },
	[CP_F_SAMPLES] = { "samples", "samples", 8 },
	[CP_F_SELF_SAMPLES] = { "self-samples", "self-smp", 8 },
	[CP_F_OPEN] = { "open", "open", 6 },
	[CP_F_NAME] = { "name", "name", 0 },
};

/* A --fields name into the column id *col: 0, 1 for the name column (always last), or -1. */
static int field_lookup(const char *name, void *col, void *arg)
{
	for (int id = 0; id < CP_F_NR; id++) {
		if (!strcmp(name, fields[id].key)) {
			*(int *)col = id;
			return id == CP_F_NAME;
		}
	}
	return -1;
}

static void field_known(struct strbuf *sb, void *arg)
{
	for (int k = 0; k < CP_F_NR; k++)
		strbuf_addf(sb, "%s%s", k ? ", " : "", fields[k].key);
}

int cp_fields__parse(struct cp_fields *f, const char *spec, const char *dflt)
{
	struct cp_columns c = { .cols = f->id, .size = sizeof(f->id[0]), .max = CP_F_NR - 1,
				.lookup = field_lookup, .known = field_known };

	f->n = 0;
	f->explicit = spec != NULL;
	f->weight = CP_METRIC_TOTAL;
	if (cp_columns__parse(&c, spec ? spec : dflt))
		return -1;
	f->n = c.n;
	f->id[f->n++] = CP_F_NAME; /* the name column is always shown, last */
	return 0;
}

void cp_fields__apply_view(struct cp_fields *f, const struct cp_view_opts *o)
{
	int k;

	f->name_width = o->name_width;
	if (!o->srcline)
		return;
	for (k = 0; k < f->n; k++)
		if (f->id[k] == CP_F_SITE)
			return;
	/* Just before the name, which is always last. */
	f->id[f->n] = CP_F_NAME;
	f->id[f->n - 1] = CP_F_SITE;
	f->n++;
}

/* Characters (UTF-8 code points) in s; a byte that starts none counts as one. */
size_t cp_text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The byte offset of s's character number chars (or its end). */
static size_t char_offset(const char *s, size_t chars)
{
	size_t o = 0;

	for (; s[o]; o++)
		if (((unsigned char)s[o] & 0xc0) != 0x80 && !chars--)
			break;
	return o;
}

const char *cp_short_name(const char *name, int width, char *buf, size_t size)
{
	size_t o = 0, seps[64];
	int depth = 0, nsep = 0, k;

	if (width <= 0 || cp_text_width(name) <= (size_t)width || size < 16)
		return name;
	/* Template arguments, outermost first: "<...>". */
	for (const char *p = name; *p && o + 5 < size; p++) {
		int op = p - name >= 8 && !strncmp(p - 8, "operator", 8); /* operator<, operator<< */

		if (*p == '<' && p != name && p[-1] != '<' && p[-1] != ' ' && !op) {
			if (depth++ == 0) {
				memcpy(buf + o, "<...", 4);
				o += 4;
			}
			continue;
		}
		if (*p == '>' && depth > 0) {
			if (--depth == 0)
				buf[o++] = '>';
			continue;
		}
		if (!depth)
			buf[o++] = *p;
	}
	buf[o] = '\0';
	if (cp_text_width(buf) > (size_t)width) {
		/* The parameter list: the parentheses closing last, and their match. */
		char *close = strrchr(buf, ')'), *open = NULL;
		int level = 0;

		for (char *q = close; q && q >= buf; q--) {
			level += *q == ')' ? 1 : *q == '(' ? -1 : 0;
			if (!level) {
				open = q;
				break;
			}
		}
		if (open && close - open > 4) {
			memmove(open + 4, close, strlen(close) + 1);
			memcpy(open + 1, "...", 3);
		}
	}
	/*
	 * The qualifiers, from the left (a return type goes with the first):
	 * "...::Class::method(...)", then "...::method(...)".  The method tells
	 * a row from its neighbours; their namespaces are often the same.
	 * Templates are "<...>" by now: no "::" inside them.
	 */
	depth = 0;
	for (size_t i = 0; buf[i] && nsep < (int)ARRAY_SIZE(seps); i++) {
		if (strchr("({[", buf[i]))
			depth++;
		else if (strchr(")}]", buf[i]) && depth > 0)
			depth--;
		else if (!depth && buf[i] == ':' && buf[i + 1] == ':' && buf[i + 2])
			seps[nsep++] = i++;
	}
	for (k = 0; k < nsep && 3 + cp_text_width(buf + seps[k]) > (size_t)width; k++)
		;
	if (nsep && cp_text_width(buf) > (size_t)width) {
		size_t cut = seps[k < nsep ? k : nsep - 1];

		memmove(buf + 3, buf + cut, strlen(buf + cut) + 1);
		memcpy(buf, "...", 3);
	}
	/* Still too long: the method alone, then without its parameters. */
	if (cp_text_width(buf) > (size_t)width && !strncmp(buf, "...::", 5))
		memmove(buf, buf + 5, strlen(buf + 5) + 1);
	o = strlen(buf);
	if (cp_text_width(buf) > (size_t)width && o > 5 && !strcmp(buf + o - 5, "(...)"))
		buf[o - 5] = '\0';
	/* And only then does the end go. */
	if (cp_text_width(buf) > (size_t)width && width > 3)
		memcpy(buf + char_offset(buf, (size_t)width - 3), "...", 4);
	return buf;
}

int cp_view_check_fields(const char *spec)
{
	struct cp_fields f;

	return spec ? cp_fields__parse(&f, spec, "name") : 0;
}

void cp_fmt_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.2fus", ns / 1e3);
	else if (ns < UINT64_C(1000000000))
		snprintf(buf, size, "%.2fms", ns / 1e6);
	else
		snprintf(buf, size, "%.3fs", ns / 1e9);
}

static void fmt_pct(char *buf, size_t size, uint64_t part, uint64_t base)
{
	snprintf(buf, size, "%.2f", base ? 100.0 * (double)part / (double)base : 0.0);
}

/* Column id's title: the percent columns name their weight ("cpu%", "self-cpu%"). */
static const char *title(const struct cp_fields *f, int id, char *buf, size_t size)
{
	enum cp_metric w = f->weight;

	if (id == CP_F_CALLS && f->sampled)
		return "samples";
	if ((id != CP_F_PERCENT && id != CP_F_SELF_PERCENT) || w == CP_METRIC_TOTAL ||
	    w == CP_METRIC_CALLS)
		return fields[id].title;
	snprintf(buf, size, "%s%%",
		 cp_metric__name(id == CP_F_PERCENT ? w : cp_metric__exclusive(w)));
	return buf;
}

/* Column id's width: its own, or its title's where that is longer. */
static int width(const struct cp_fields *f, int id)
{
	char buf[32];
	int len = (int)strlen(title(f, id, buf, sizeof(buf)));

	return len > fields[id].width ? len : fields[id].width;
}

void cp_fields__title(const struct cp_fields *f, FILE *fp)
{
	char buf[32];

	for (int k = 0; k < f->n; k++) {
		int id = f->id[k];
		const char *t = title(f, id, buf, sizeof(buf));

		if (id == CP_F_NAME)
			fprintf(fp, "%s\n", t);
		else if (id == CP_F_SITE)
			fprintf(fp, "%-*s  ", width(f, id), t);
		else
			fprintf(fp, "%*s  ", width(f, id), t);
	}
}

uint64_t cp_row__metric(const struct cp_row *r, enum cp_metric m)
{
	const struct cp_figures f = {
		.calls = r->calls, .total_ns = r->total_ns, .self_ns = r->self_ns,
		.wait_ns = r->wait_ns, .inactive_ns = r->inactive_ns,
		.self_wait_ns = r->self_wait_ns, .self_inactive_ns = r->self_inactive_ns,
		.samples = r->samples, .self_samples = r->self_samples,
	};

	return cp_figures__metric(&f, m);
}

enum cp_metric cp_view_weight(const struct cp_report_profile *rp, const struct cp_view_opts *o)
{
	return o->weight_given ? o->weight : cp_report_profile__weight(rp, NULL, 0);
}

void cp_weight_banner(const struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp)
{
	char why[256];

	if (o->weight_given)
		return;
	cp_report_profile__weight(rp, why, sizeof(why));
	if (why[0])
		fprintf(fp, "# weight: %s\n", why);
}

const char *cp_default_fields(const struct cp_report_profile *rp, const char *timed_default,
			      const char *split_default)
{
	static char buf[256];

	switch (rp->pf->meta.mode) {
	case CP_MODE_COUNTING:
		return "calls,name";
	case CP_MODE_COVERAGE:
		return "name";
	case CP_MODE_CPU: {
		/* The sample counts the times rest on, before the name. */
		const char *d = rp->split && split_default ? split_default : timed_default;
		const char *name = strstr(d, ",name");
		int self = !!strstr(d, "self-percent");

		if (!name || name[5])
			return d;
		snprintf(buf, sizeof(buf), "%.*s,%s,name", (int)(name - d), d,
			 self ? "self-samples" : "samples");
		return buf;
	}
	default:
		return rp->split && split_default ? split_default : timed_default;
	}
}

void cp_row__set_node(struct cp_row *r, const struct cp_report_profile *rp,
		      const struct cp_rnode *n)
{
	r->wait_ns = n->wait_ns;
	r->inactive_ns = n->inactive_ns;
	r->self_wait_ns = n->self_wait_ns;
	r->self_inactive_ns = n->self_inactive_ns;
	r->switches_vol = n->switches_vol;
	r->switches_invol = n->switches_invol;
	r->self_switches_vol = n->self_switches_vol;
	r->self_switches_invol = n->self_switches_invol;
	r->untimed = !rp->timed;
	r->no_split = !rp->split;
	r->sampled = rp->sampled;
	r->cpu_sampled = rp->cpu_sampled;
	r->samples = n->samples;
	r->self_samples = n->self_samples;
}

static int is_split_field(int id)
{
	return id >= CP_F_CPU && id <= CP_F_SELF_SWITCHES_INVOL;
}

/* The split's columns that are exclusive (unknown per call site). */
static int is_self_field(int id)
{
	return id == CP_F_SELF || id == CP_F_SELF_PERCENT || id == CP_F_MIN || id == CP_F_MAX ||
	       id == CP_F_SELF_CPU || id == CP_F_SELF_WAIT || id == CP_F_SELF_INACTIVE ||
	       id == CP_F_SELF_SWITCHES_VOL || id == CP_F_SELF_SWITCHES_INVOL;
}

static int is_time_field(int id)
{
	return id == CP_F_TOTAL || id == CP_F_SELF || id == CP_F_PERCENT ||
	       id == CP_F_SELF_PERCENT || id == CP_F_AVG || id == CP_F_MIN || id == CP_F_MAX ||
	       id == CP_F_TOTAL_MIN || id == CP_F_TOTAL_MAX || id == CP_F_TOTAL_MEAN ||
	       (is_split_field(id) && id < CP_F_SWITCHES_VOL);
}

static int is_spread_field(int id)
{
	return id >= CP_F_CALLS_MIN && id <= CP_F_TOTAL_MEAN;
}

/*
 * Whether column id of a sampled row rests on too few samples to trust
 * (CP_FEW_SAMPLES; none at all is a time below a period, not a guess).
 */
static int few_samples(const struct cp_row *r, int id)
{
	uint64_t n = id == CP_F_SELF || id == CP_F_SELF_CPU || id == CP_F_SELF_PERCENT ?
			     r->self_samples :
		     id == CP_F_TOTAL || id == CP_F_CPU || id == CP_F_PERCENT || id == CP_F_AVG ||
				     id == CP_F_CPU_PERCENT ?
			     r->samples :
			     CP_FEW_SAMPLES;

	return n && n < CP_FEW_SAMPLES;
}

const char *cp_open_mark(char *buf, size_t size, uint64_t n)
{
	if (!n)
		return "";
	if (n == 1)
		snprintf(buf, size, " (open at attach)");
	else
		snprintf(buf, size, " (%" PRIu64 " open at attach)", n);
	return buf;
}

void cp_fields__row(const struct cp_fields *f, const struct cp_row *r, FILE *fp)
{
	char buf[64];

	for (int k = 0; k < f->n; k++) {
		int id = f->id[k];

		if (r->label && id != CP_F_NAME) {
			fprintf(fp, "%*s  ", id == CP_F_SITE ? -width(f, id) : width(f, id), "");
			continue;
		}
		/*
		 * Per call site only calls and inclusive time are known; a
		 * sample count has no average, minimum or maximum call.
		 */
		if ((r->untimed && is_time_field(id)) || (is_spread_field(id) && !r->spread) ||
		    (r->no_split && is_split_field(id)) ||
		    (r->only_total && (is_self_field(id) || is_split_field(id))) ||
		    /* A call site's share of a weight other than total is not known. */
		    (r->only_total && id == CP_F_PERCENT && f->weight != CP_METRIC_TOTAL) ||
		    (r->sampled && (id == CP_F_AVG || id == CP_F_MIN || id == CP_F_MAX)) ||
		    (r->cpu_sampled && (id == CP_F_MIN || id == CP_F_MAX)) ||
		    /*
		     * Sampled in code without hooks: its calls were not counted
		     * (one with calls open at attach has hooks: 0 calls began).
		     */
		    (r->cpu_sampled && !r->calls && !r->open_at_start && !r->label &&
		     (id == CP_F_CALLS || id == CP_F_AVG)) ||
		    /* No call began in the window (open at attach): nothing per call. */
		    (!r->calls && (id == CP_F_AVG || id == CP_F_MIN || id == CP_F_MAX)) ||
		    /* Known per context, not per call site. */
		    (r->only_total && id == CP_F_OPEN) ||
		    (!r->cpu_sampled && (id == CP_F_SAMPLES || id == CP_F_SELF_SAMPLES))) {
			fprintf(fp, "%*s  ", width(f, id), "-");
			continue;
		}
		switch (id) {
		case CP_F_CALLS:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->calls);
			break;
		case CP_F_TOTAL:
			cp_fmt_ns(buf, sizeof(buf), r->total_ns);
			break;
		case CP_F_SELF:
			cp_fmt_ns(buf, sizeof(buf), r->self_ns);
			break;
		case CP_F_PERCENT:
			fmt_pct(buf, sizeof(buf), cp_row__metric(r, f->weight), r->base_ns);
			break;
		case CP_F_SELF_PERCENT:
			fmt_pct(buf, sizeof(buf), cp_row__metric(r, cp_metric__exclusive(f->weight)),
				r->base_ns);
			break;
		case CP_F_AVG:
			cp_fmt_ns(buf, sizeof(buf), r->total_ns / r->calls); /* calls > 0: above */
			break;
		case CP_F_MIN:
			cp_fmt_ns(buf, sizeof(buf), r->min_ns);
			break;
		case CP_F_MAX:
			cp_fmt_ns(buf, sizeof(buf), r->max_ns);
			break;
		case CP_F_SITE:
			fprintf(fp, "%-*s  ", width(f, id), r->site ? cp_visible(r->site) : "-");
			continue;
		case CP_F_CALLS_MIN:
			snprintf(buf, sizeof(buf), "%" PRIu64,
				 cp_rspread_min(r->spread, r->ninputs, r->spread->min_calls));
			break;
		case CP_F_CALLS_MAX:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->spread->max_calls);
			break;
		case CP_F_CALLS_MEAN:
			snprintf(buf, sizeof(buf), "%.1f", (double)r->calls / r->ninputs);
			break;
		case CP_F_TOTAL_MIN:
			cp_fmt_ns(buf, sizeof(buf),
				  cp_rspread_min(r->spread, r->ninputs, r->spread->min_total_ns));
			break;
		case CP_F_TOTAL_MAX:
			cp_fmt_ns(buf, sizeof(buf), r->spread->max_total_ns);
			break;
		case CP_F_TOTAL_MEAN:
			cp_fmt_ns(buf, sizeof(buf), r->total_ns / r->ninputs);
			break;
		case CP_F_CPU:
			cp_fmt_ns(buf, sizeof(buf), cp_cpu_ns(r->total_ns, r->wait_ns, r->inactive_ns));
			break;
		case CP_F_WAIT:
			cp_fmt_ns(buf, sizeof(buf), r->wait_ns);
			break;
		case CP_F_INACTIVE:
			cp_fmt_ns(buf, sizeof(buf), r->inactive_ns);
			break;
		case CP_F_SELF_CPU:
			cp_fmt_ns(buf, sizeof(buf),
				  cp_cpu_ns(r->self_ns, r->self_wait_ns, r->self_inactive_ns));
			break;
		case CP_F_SELF_WAIT:
			cp_fmt_ns(buf, sizeof(buf), r->self_wait_ns);
			break;
		case CP_F_SELF_INACTIVE:
			cp_fmt_ns(buf, sizeof(buf), r->self_inactive_ns);
			break;
		case CP_F_CPU_PERCENT:
			fmt_pct(buf, sizeof(buf), cp_cpu_ns(r->total_ns, r->wait_ns, r->inactive_ns),
				r->base_ns);
			break;
		case CP_F_SWITCHES_VOL:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->switches_vol);
			break;
		case CP_F_SWITCHES_INVOL:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->switches_invol);
			break;
		case CP_F_SELF_SWITCHES_VOL:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->self_switches_vol);
			break;
		case CP_F_SELF_SWITCHES_INVOL:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->self_switches_invol);
			break;
		case CP_F_SAMPLES:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->samples);
			break;
		case CP_F_SELF_SAMPLES:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->self_samples);
			break;
		case CP_F_OPEN:
			snprintf(buf, sizeof(buf), "%" PRIu64, r->open_at_start);
			break;
		case CP_F_NAME: {
			char shortened[1024], open[48];

			fprintf(fp, "%*s%s%s%s\n", r->indent, "", r->prefix ? r->prefix : "",
				cp_short_name(cp_visible(r->name), f->name_width, shortened,
					sizeof(shortened)),
				cp_open_mark(open, sizeof(open),
					     r->open_mark ? r->open_at_start : 0));
			continue;
		}
		}
		if (id == CP_F_SELF || id == CP_F_SELF_CPU ? r->self_overhead :
		    r->overhead && (id == CP_F_TOTAL || id == CP_F_AVG || id == CP_F_MIN ||
				    id == CP_F_MAX || id == CP_F_CPU || id == CP_F_TOTAL_MIN ||
				    id == CP_F_TOTAL_MAX || id == CP_F_TOTAL_MEAN)) {
			char marked[66];

			snprintf(marked, sizeof(marked), "~%s", buf);
			fprintf(fp, "%*s  ", width(f, id), marked);
			continue;
		}
		if (r->cpu_sampled && few_samples(r, id)) {
			char marked[66];

			snprintf(marked, sizeof(marked), "?%s", buf);
			fprintf(fp, "%*s  ", width(f, id), marked);
			continue;
		}
		fprintf(fp, "%*s  ", width(f, id), buf);
	}
}

/*
 * What the kernel's count of the threads' CPU time holds that the tree's
 * cpu does not, so the two read as the comparison they are: the
 * profiler's own CPU time (sampled, its samples are left out of the tree)
 * or the hooks' cost (compensated clock times).  Raw clock times include
 * the hooks' cost as the kernel's count does.
 */
static const char *kernel_includes(const struct cp_report_profile *rp)
{
	if (rp->cpu_sampled)
		return ", the profiler's own CPU time included";
	if (rp->timed && rp->compensated && !rp->sampled)
		return ", the hooks' cost included";
	return "";
}

void cp_tree_header(const struct cp_report_profile *rp, const struct cp_rtree *t, int gap,
		    FILE *fp)
{
	char dur[32], cpu[32], kernel[32];
	int kernel_known = t->cpu_ns && !t->cpu_unknown;

	fprintf(fp, "%s== %s (%u thread%s", gap ? "\n" : "", cp_visible(t->label), t->nthreads,
		t->nthreads == 1 ? "" : "s");
	/* Counts only (counting, coverage): no time at all, not a total of 0ns. */
	if (!rp->timed) {
		fprintf(fp, "%s) ==\n", rp->pf->meta.mode == CP_MODE_COUNTING ? ", counts only" : "");
		return;
	}
	cp_fmt_ns(dur, sizeof(dur), t->n[0].total_ns);
	fprintf(fp, ", %s", dur);
	/* The kernel's count checks the tree's: both are the threads' CPU time. */
	cp_fmt_ns(cpu, sizeof(cpu), cp_rnode__cpu(&t->n[0]));
	cp_fmt_ns(kernel, sizeof(kernel), t->cpu_ns);
	if (rp->split && kernel_known)
		fprintf(fp, ", cpu %s%s; the kernel counted %s%s", cpu,
			rp->timed && rp->compensated && !rp->cpu_sampled ? " compensated" : "", kernel,
			kernel_includes(rp));
	else if (rp->split)
		fprintf(fp, ", cpu %s", cpu);
	else if (kernel_known)
		fprintf(fp, "; the kernel counted %s of cpu%s", kernel, kernel_includes(rp));
	fprintf(fp, ") ==\n");
}

const char *cp_site_str(struct cp_report_profile *rp, const struct cp_rnode *n)
{
	return cp_site_str_at(rp, n->site);
}

const char *cp_site_str_at(struct cp_report_profile *rp, uint64_t site)
{
	static char buf[4096];
	const char *file, *base;
	int line;

	if (site == CP_SITE_INLINED)
		return "(inlined)";
	cp_report_profile__site_where(rp, site, &file, &line);
	if (!file)
		return NULL;
	base = strrchr(file, '/');
	snprintf(buf, sizeof(buf), "%s:%d", base ? base + 1 : file, line);
	return buf;
}

/* Distinct machines among a merged profile's inputs. */
static uint32_t count_hosts(const struct cp_profile_file *pf)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < pf->ninputs; i++) {
		const char *h = cp_profile_file__str(pf, pf->inputs[i].hostname);
		uint32_t j;

		for (j = 0; j < i; j++) {
			const char *o = cp_profile_file__str(pf, pf->inputs[j].hostname);

			if ((!h && !o) || (h && o && !strcmp(h, o)))
				break;
		}
		n += j == i;
	}
	return n;
}

/*
 * A sampled profile's counts are samples and its times their number times
 * the period; an instrumented one's samples are only where its lines are.
 */
static void sampling_banner(const struct cp_meta *m, FILE *fp)
{
	char period[32];

	cp_fmt_ns(period, sizeof(period), m->sample_period_ns);
	if (m->mode == CP_MODE_SAMPLED)
		fprintf(fp, "# sampled: %" PRIu64 " samples at %u Hz (one per %s), call stacks "
			    "unwound with %s; times are estimates, counts are samples\n", m->samples,
			m->sample_hz, period, (m->sample_flags & CP_SAMPLE_DWARF) ? "DWARF CFI" :
			(m->sample_flags & CP_SAMPLE_FP) ? "frame pointers" : "an unknown method");
	else
		fprintf(fp, "# sampled lines: %" PRIu64 " samples at %u Hz (one per %s) of the "
			    "running instruction, for --lines\n", m->samples, m->sample_hz, period);
	if (m->samples_lost)
		fprintf(fp, "# warning: %" PRIu64 " samples lost (dropped by the kernel, or not "
			    "unwound or placed)\n", m->samples_lost);
}

/*
 * CP_MODE_CPU: where the times come from, what they rest on, and what the
 * profiler's own share was (left out of them).
 */
static void cpu_banner(const struct cp_report_profile *rp, FILE *fp)
{
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_meta *m = &pf->meta;
	struct cp_sample_tally s;
	uint64_t program, all;
	uint32_t unsampled = rp->unsampled;
	char period[32];

	cp_report_profile__sample_tally(rp, &s);
	program = s.program;
	all = program + s.profiler;
	cp_fmt_ns(period, sizeof(period), rp->period_ns);
	fprintf(fp, "# time: CPU time sampled at %u Hz (one sample per %s of CPU time) on the exact "
		    "call tree: %" PRIu64 " samples, %.1f%% of them in the kernel (charged to the "
		    "calling context); counts are exact; min and max per call are not measured "
		    "(--time=clock)\n",
		m->sample_hz, period, program,
		program ? 100.0 * (double)s.kernel / (double)program : 0.0);
	fprintf(fp, "# profiler's own share: %.1f%% of the CPU time (samples in callprof's hooks), "
		    "left out of every figure; '?' marks times resting on fewer than %d samples\n",
		100.0 * s.share, CP_FEW_SAMPLES);
	if (s.lost)
		fprintf(fp, "# %" PRIu64 " %s for CPU time at unknown addresses (a full "
			    "ring, or a thread's latest samples at the dump): counted in their context's "
			    "self time\n", s.lost, s.lost == 1 ? "sample stands" : "samples stand");
	/* A share of a handful of samples is noise (record says the same from 100 on). */
	if (m->samples_lost)
		fprintf(fp, "# %" PRIu64 " %s estimated from a thread's CPU clock after its "
			    "ring filled in a long call without hooks (placed at the address sampled "
			    "just before), or could not be placed\n", m->samples_lost,
			m->samples_lost == 1 ? "sample was" : "samples were");
	if (all >= 10 * CP_FEW_SAMPLES && s.profiler * 2 > all)
		/*
		 * No remedy of its own: --exclude keeps the hooks (only the node
		 * goes), after-inlining helps only inlined calls.  Record's verdict
		 * names the functions and what works for them.
		 */
		fprintf(fp, "# note: most of the run's CPU time was callprof's own: the program makes "
			    "very many short calls; the times shown leave it out, but the run was slowed "
			    "%.1fx (record's overhead verdict names the functions whose calls cost it and "
			    "how to leave their hooks out: callprof-record(1), OVERHEAD VERDICT)\n",
			(double)all / (double)(program ? program : 1));
	if (program < 100 * CP_FEW_SAMPLES)
		fprintf(fp, "# note: only %" PRIu64 " samples: the times are rough (a time resting "
			    "on k samples is known to about +-100/sqrt(k) %%); run longer or raise "
			    "--sample\n", program);
	if (rp->unclocked) {
		char left[32];

		cp_fmt_ns(left, sizeof(left), cp_mul_sat(rp->unclocked, rp->period_ns));
		fprintf(fp, "# %s of kernel time left out: the task clock the samples run on counted "
			    "it, the threads' CPU clocks did not (time a hypervisor took the CPU from "
			    "this virtual machine, or interrupts)\n", left);
	}
	if (unsampled)
		fprintf(fp, "# warning: %u thread%s without CPU time: perf_event_open refused: %s\n",
			unsampled, unsampled == 1 ? "" : "s", strerror((int)m->switch_errno));
}

/* A function made count-only by --budget: its count-only contexts and their calls. */
struct demoted {
	uint32_t fn, ctxs;
	uint64_t calls;
};

static int by_calls_desc(const void *a, const void *b)
{
	const struct demoted *x = a, *y = b;

	return x->calls != y->calls ? (x->calls < y->calls ? 1 : -1) : (x->fn > y->fn) - (x->fn < y->fn);
}

/* The functions made count-only by --budget, most calls first (20 of them). */
static void demotions(const struct cp_report_profile *rp, FILE *fp)
{
	struct demoted *d = xcalloc(rp->nfns + 1, sizeof(*d));
	uint32_t nd = 0;

	for (uint32_t f = 0; f < rp->nfns; f++)
		d[f].fn = f;
	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		for (uint32_t i = 1; i < rp->trees[ti].nn; i++) {
			const struct cp_rnode *n = &rp->trees[ti].n[i];

			if (n->untimed && n->fn != CP_NONE) {
				CP_ADD_SAT(d[n->fn].calls, n->calls);
				nd += !d[n->fn].ctxs++;
			}
		}
	qsort(d, rp->nfns, sizeof(*d), by_calls_desc);
	for (uint32_t k = 0, shown = 0; k < rp->nfns && shown < 20; k++)
		if (d[k].ctxs) {
			fprintf(fp, "#   count-only: %s (%u contexts, %" PRIu64 " calls)\n",
				cp_visible(rp->fns[d[k].fn].name ? rp->fns[d[k].fn].name : "?"), d[k].ctxs,
				d[k].calls);
			shown++;
		}
	if (nd > 20)
		fprintf(fp, "#   count-only: %u more functions\n", nd - 20);
	free(d);
}

/* What `record` was told to leave out, and what that left out. */
static void selection_banner(const struct cp_report_profile *rp, FILE *fp)
{
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_meta *m = &pf->meta;
	char ticks[32];

	for (uint32_t i = 0; i < pf->nfilters; i++) {
		const struct cp_filter_rec *f = &pf->filters[i];

		fprintf(fp, "# recorded with %s%s '%s'", cp_filter_option(f->kind),
			f->flags & CP_FILTER_REGEX ? " --regex" : "",
			cp_visible(cp_profile_file__str(pf, f->pattern)));
		if (f->kind != CP_FILTER_EXCLUDE_MODULE)
			fprintf(fp, " (%u function%s)", f->matched, f->matched == 1 ? "" : "s");
		fputc('\n', fp);
	}
	if (rp->excluded_calls)
		fprintf(fp, "# %" PRIu64 " calls of excluded functions: their time is their callers' "
			    "self time\n", rp->excluded_calls);
	if (m->calls_outside_start)
		fprintf(fp, "# %" PRIu64 " calls made outside every --start function were not "
			    "recorded\n", m->calls_outside_start);
	if (m->calls_in_excluded_trees)
		fprintf(fp, "# %" PRIu64 " calls inside --exclude-tree functions were not recorded\n",
			m->calls_in_excluded_trees);
	if (m->max_depth)
		fprintf(fp, "# --max-depth %u: %" PRIu64 " deeper calls folded into their context at "
			    "depth %u\n", m->max_depth, m->calls_below_depth, m->max_depth);
	if (m->calls_paused)
		fprintf(fp, "# %" PRIu64 " calls began while recording was paused (callprof_pause) "
			    "and were not recorded\n", m->calls_paused);
	if (m->budget) {
		cp_fmt_ns(ticks, sizeof(ticks), m->ticks_per_sec ?
			  cp_ns_from_double((double)m->budget_ticks * 1e9 / (double)m->ticks_per_sec) : 0);
		fprintf(fp, "# --budget %u.%02u%%: %u call-path records averaging under %s a call were made "
			    "count-only after %d calls (exact calls; their time is in the caller's self)\n",
			m->budget / 100, m->budget % 100, m->demotions, ticks, CP_BUDGET_CALLS);
		demotions(rp, fp);
	}
}

/* Whether wait, inactive and cpu mean anything, and how far to trust them. */
static void switches_banner(const struct cp_meta *m, FILE *fp)
{
	switch (m->switches) {
	case CP_SWITCHES_ON:
		fprintf(fp, "# off-CPU time measured: wait (blocked) and inactive (preempted) per "
			    "context, cpu = total - wait - inactive\n");
		break;
	case CP_SWITCHES_PARTIAL:
		fprintf(fp, "# off-CPU time measured partially: %u thread%s without (their off-CPU "
			    "time counts as cpu)\n", m->switch_threads_failed,
			m->switch_threads_failed == 1 ? "" : "s");
		break;
	case CP_SWITCHES_UNAVAILABLE:
		fprintf(fp, "# off-CPU time unavailable: perf_event_open refused: %s; see "
			    "callprof-record(1)\n", strerror((int)m->switch_errno));
		break;
	default:
		return;
	}
	if (m->switch_lost)
		fprintf(fp, "# warning: %" PRIu64 " context-switch records lost: their off-CPU time "
			    "counts as cpu\n", m->switch_lost);
}

void cp_report_banner(const struct cp_report_profile *rp, const char *what, FILE *fp)
{
	const struct cp_profile_file *pf = rp->pf;
	const struct cp_meta *m = &pf->meta;
	char dur[32], date[64] = "?";
	uint32_t nthreads = 0;
	time_t secs = (time_t)(m->start_realtime_ns / 1000000000u);
	struct tm tm;

	if (localtime_r(&secs, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
	cp_fmt_ns(dur, sizeof(dur), m->duration_ns);
	fprintf(fp, "# callprof %s: %s\n", what, cp_visible(pf->path));
	fprintf(fp, "# command: ");
	for (uint32_t i = 0; i < pf->argc; i++)
		fprintf(fp, "%s%s", i ? " " : "", cp_visible_arg(pf->argv[i]));
	for (uint32_t i = 0; i < rp->ntrees; i++)
		nthreads += rp->trees[i].nthreads;
	if (pf->ninputs) {
		fprintf(fp, "\n# %u profiles merged by callprof merge (%u host%s), first started %s, "
			    "%u thread%s, %" PRIu64 " calls, %" PRIu64 " call paths\n", pf->ninputs,
			count_hosts(pf), count_hosts(pf) == 1 ? "" : "s", date, nthreads,
			nthreads == 1 ? "" : "s", rp->calls, rp->paths);
	} else if (rp->nfiles) {
		fprintf(fp, "\n# %u processes merged (pid", rp->nfiles);
		for (uint32_t i = 0; i < rp->nfiles && i < 8; i++)
			fprintf(fp, "%s%u", i ? ", " : " ", rp->procs[i].meta.pid);
		fprintf(fp, "%s), first started %s, %u thread%s, %" PRIu64 " calls, %" PRIu64
			    " call paths\n", rp->nfiles > 8 ? ", ..." : "", date, nthreads,
			nthreads == 1 ? "" : "s", rp->calls, rp->paths);
	} else {
		fprintf(fp, "\n# pid %u, started %s, ran %s, %u thread%s, %" PRIu64 " %s, %" PRIu64
			    " call paths\n", m->pid, date, dur, nthreads, nthreads == 1 ? "" : "s",
			rp->sampled ? m->samples : rp->calls, rp->sampled ? "samples" : "calls",
			rp->paths);
	}
	if (pf->job && !pf->ninputs && !rp->nfiles) {
		const struct cp_job_rec *jr = pf->job;
		const char *id = cp_profile_file__str(pf, jr->jobid);
		char lb[32];

		fprintf(fp, "# rank %u", jr->rank);
		if (jr->size)
			fprintf(fp, " of %u", jr->size);
		fprintf(fp, " (");
		if (id)
			fprintf(fp, "job %s, ", cp_visible(id));
		fprintf(fp, "%s", cp_launcher_name(jr->launcher, lb));
		if (jr->local_rank != CP_NO_RANK)
			fprintf(fp, ", local rank %u", jr->local_rank);
		fprintf(fp, ") on %s\n", cp_visible(cp_profile_file__str(pf, m->hostname) ?
							cp_profile_file__str(pf, m->hostname) : "?"));
	}
	if ((m->flags & CP_META_ATTACHED) || rp->open_at_start) {
		fprintf(fp, "# attached: counts are the calls made in the window");
		if (rp->open_at_start)
			fprintf(fp, "; %" PRIu64 " call%s already open at attach (their contexts "
				    "marked \"open at attach\"; per function: the open column)",
				rp->open_at_start, rp->open_at_start == 1 ? " was" : "s were");
		fputc('\n', fp);
	}
	if (m->mode == CP_MODE_COUNTING)
		fprintf(fp, "# mode: counting: exact call counts per call path, no times\n");
	else if (m->mode == CP_MODE_COVERAGE)
		fprintf(fp, "# mode: coverage: the functions that ran, per thread; no counts, no times\n");
	if (m->mode == CP_MODE_SAMPLED) {
		sampling_banner(m, fp);
	} else if (rp->cpu_sampled) {
		cpu_banner(rp, fp);
	} else if (rp->timed) {
		char sub[32], raw[32], out[32], in[32];

		fprintf(fp, "# clock: %s", pf->ninputs ? "each input's own" :
					   m->clock == CP_CLOCK_TSC ? "tsc (ordered reads)" :
					   m->clock == CP_CLOCK_TSC_FAST ? "tsc-fast (unordered reads)" :
									   "monotonic");
		if (m->clock == CP_CLOCK_TSC || m->clock == CP_CLOCK_TSC_FAST)
			fprintf(fp, " at %.3f GHz", m->ticks_per_sec / 1e9);
		snprintf(out, sizeof(out), "%.1fns", rp->outside_ns);
		snprintf(in, sizeof(in), "%.1fns", rp->inside_ns);
		if (pf->ninputs) {
			cp_fmt_ns(sub, sizeof(sub), rp->subtracted_ns);
			cp_fmt_ns(raw, sizeof(raw), rp->raw_ns);
			if (rp->subtracted_ns)
				fprintf(fp, "; times were compensated in each input before merging: %s "
					    "of %s subtracted (%.1f%%)\n", sub, raw,
					rp->raw_ns ? 100.0 * (double)rp->subtracted_ns /
						     (double)rp->raw_ns : 0.0);
			else
				fprintf(fp, "; raw times: the inputs were not compensated\n");
		} else if (rp->compensated) {
			cp_fmt_ns(sub, sizeof(sub), rp->subtracted_ns);
			cp_fmt_ns(raw, sizeof(raw), rp->raw_ns);
			fprintf(fp, "\n# overhead compensated: %s per call in the caller, %s in the "
				    "callee; %s of %s subtracted: the hooks took %.1f%% of the %s; '~' "
				    "marks times that are mostly overhead; --no-compensate shows raw "
				    "times\n", out, in, sub, raw,
				100.0 * cp_report_profile__overhead_share(rp),
				cp_report_profile__overhead_base(rp));
		} else if (m->overhead_ticks || m->self_overhead_ticks) {
			fprintf(fp, "; raw times: they include hook overhead of %s per call in the "
				    "caller and %s in the callee\n", out, in);
		} else {
			fprintf(fp, "; raw times: hook overhead was not calibrated\n");
		}
	}
	if (m->mode != CP_MODE_SAMPLED && !rp->cpu_sampled && (m->sample_flags & CP_SAMPLE_HYBRID))
		sampling_banner(m, fp);
	switches_banner(m, fp);
	selection_banner(rp, fp);
	if (m->reconciled_frames)
		fprintf(fp, "# %" PRIu64 " frames were abandoned by longjmp or exceptions (their exit "
			    "hooks never ran) and were closed when control left them\n",
			m->reconciled_frames);
	if (m->lost_calls || m->lost_events || m->unpaired_exits || m->nthreads_lost)
		fprintf(fp, "# warning: incomplete: %" PRIu64 " calls in unrecorded paths, %" PRIu64
			    " events dropped, %" PRIu64 " unpaired exits, %u threads not set up\n",
			m->lost_calls, m->lost_events, m->unpaired_exits, m->nthreads_lost);
	if (m->lost_signals)
		fprintf(fp, "# warning: %" PRIu64 " signal handler runs were not recorded: the signal "
			    "arrived while a hook was running\n", m->lost_signals);
	if (m->flags & CP_META_FILTERED)
		fprintf(fp, "# the program's seccomp filter forbade system calls callprof makes: threads "
			    "started after it have no CPU time or off-CPU split (or are not set up), "
			    "as counted above\n");
	if (m->flags & CP_META_LEFT)
		fprintf(fp, "# the program's seccomp filter forbade writing the profile: callprof's "
			    "watcher wrote it when the program had ended%s, calls still open then "
			    "counted with time up to that moment\n",
			m->flags & CP_META_ABNORMAL_END ? " (abnormally: fatal signal, abort or _exit)" : "");
	if (m->flags & CP_META_KILLED)
		fprintf(fp, "# the process was killed (SIGKILL or the like) and the profile written by "
			    "callprof's watcher: calls still open then are counted with time up to that "
			    "moment\n");
	else if ((m->flags & CP_META_ABNORMAL_END) && !(m->flags & CP_META_LEFT))
		fprintf(fp, "# the process ended abnormally (fatal signal, abort or _exit): calls "
			    "still open then are counted with time up to that moment\n");
	/* Last: what the figures above and the tree below leave out. */
	if (rp->filters)
		fputs(rp->filters, fp);
}
