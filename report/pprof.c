/*
 * pprof.c - `export -f pprof`: a gzip-compressed profile.proto (package
 * perftools.profiles, proto/profile.proto) for pprof and the tools that
 * read it, encoded with protobuf-c and compressed with zlib.
 *
 * One sample per calling context: its stack is the path (leaf first), its
 * values the context's calls and, when the profile has times, its self
 * time in nanoseconds (pprof derives inclusive time by adding up the
 * samples below a frame, so self time is what must be stored; the calls'
 * "cum" in pprof is a sum of counts, not a count).  A location per
 * function (its entry address and line), a mapping per module with its
 * build-id, a sample label per thread with --threads=each.  Where off-CPU
 * time was measured, self time's parts follow as sample types cpu, wait
 * and inactive (exclusive too).  A sampled profile's counts are samples.
 * A cpu-mode profile (exact calls, sampled CPU time) adds a sample type
 * "samples" (count): the samples a context's self time rests on; its
 * period is the sampling period in CPU nanoseconds, and a comment names
 * the time source.  The type of the weight (the report's, or export -m's:
 * cpu where the profile has CPU time) comes first and is the default
 * sample type, so pprof -top, speedscope and the rest open the report's
 * picture; the others follow in the order above.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "util/text.h"
#include "util/util.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/*
 * The index of s in pprof's string table, where 0 is "" (and NULL).  The
 * proto's strings are bytes, but pprof's readers want UTF-8 and pprof
 * prints them to a terminal as they are: s goes in its visible form
 * (util/text.h), as every text output shows it - the same string where s
 * is plain UTF-8 that acts on nothing.
 */
static int64_t intern(struct cp_strtab *t, const char *s)
{
	return s && *s ? cp_strtab__add(t, cp_visible(s)) : 0;
}

/* gzip data[len] to fp. */
static int gzip_to(FILE *fp, const uint8_t *data, size_t len)
{
	z_stream z;
	uint8_t out[65536];
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return cp_error("cannot set up zlib");
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len; /* len < 4 GB: checked by the caller */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR ||
		    fwrite(out, 1, sizeof(out) - z.avail_out, fp) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return cp_error("cannot write the pprof output");
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

static void hex(char *buf, const uint8_t *b, uint32_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (uint32_t i = 0; i < n; i++) {
		buf[2 * i] = digits[b[i] >> 4];
		buf[2 * i + 1] = digits[b[i] & 15];
	}
	buf[2 * n] = '\0';
}

/*
 * Mappings: one per module of the recorded process, or of several files
 * one per module file, at its range of their common address space.
 */
static void add_mappings(struct cp_report_profile *rp, Profile *p, struct cp_strtab *st)
{
	const struct cp_profile_file *pf = rp->pf;
	uint32_t total = rp->nfiles ? cp_sym_images__count(rp->images) : pf->nmodules;
	char id[2 * 32 + 1];

	p->mapping = xcalloc(total ? total : 1, sizeof(*p->mapping));
	for (uint32_t i = 0; i < total; i++) {
		Mapping *mp = xmalloc(sizeof(*mp));

		perftools__profiles__mapping__init(mp);
		mp->id = p->n_mapping + 1;
		if (rp->nfiles) {
			const uint8_t *bid;
			uint32_t bid_size;
			const char *path = cp_sym_images__module(rp->images, i, &bid, &bid_size,
								 &mp->memory_start, &mp->memory_limit);

			mp->filename = intern(st, path);
			hex(id, bid, bid_size);
		} else {
			const struct cp_module *m = &pf->modules[i];

			for (uint32_t j = 0; j < m->nmaps; j++) {
				const struct cp_map *mm = &pf->maps[m->first_map + j];

				if (!j || mm->start < mp->memory_start) {
					mp->memory_start = mm->start;
					mp->file_offset = mm->offset;
				}
				if (mm->end > mp->memory_limit)
					mp->memory_limit = mm->end;
			}
			mp->filename = intern(st, cp_profile_file__str(pf, m->path));
			hex(id, m->build_id, m->build_id_size);
		}
		mp->build_id = intern(st, id);
		mp->has_functions = 1;
		p->mapping[p->n_mapping++] = mp;
	}
}

/* The mapping holding fn's address: 0 if none. */
static uint64_t mapping_of(struct cp_report_profile *rp, Profile *p, uint32_t fn)
{
	const struct cp_rfn *f = &rp->fns[fn];
	const struct cp_profile_file *pf = rp->pf;

	if (f->flags & CP_RFN_PSEUDO)
		return 0;
	if (rp->nfiles) {
		for (size_t i = 0; i < p->n_mapping; i++)
			if (f->addr >= p->mapping[i]->memory_start &&
			    f->addr < p->mapping[i]->memory_limit)
				return i + 1;
		return 0;
	}
	for (uint32_t i = 0; i < pf->nmodules; i++) {
		const struct cp_module *m = &pf->modules[i];

		for (uint32_t j = 0; j < m->nmaps; j++) {
			const struct cp_map *mm = &pf->maps[m->first_map + j];

			if (f->addr >= mm->start && f->addr < mm->end)
				return i + 1;
		}
	}
	return 0;
}

/* The sample types, in their order when the weight does not move one first. */
enum type { T_CALLS, T_SELF, T_CPU, T_WAIT, T_INACTIVE, T_SAMPLES, T_NR };

/* The type that carries weight m (its exclusive part: pprof adds up self values). */
static enum type weight_type(const struct cp_report_profile *rp, enum cp_metric m)
{
	switch (cp_metric__inclusive(m)) {
	case CP_METRIC_CALLS:
		return T_CALLS;
	case CP_METRIC_CPU:
		/* Without the split, a cpu-mode profile's self time is its CPU time. */
		return rp->split ? T_CPU : T_SELF;
	case CP_METRIC_WAIT:
		return T_WAIT;
	case CP_METRIC_INACTIVE:
		return T_INACTIVE;
	case CP_METRIC_SAMPLES:
		return T_SAMPLES;
	default:
		return rp->timed ? T_SELF : T_CALLS;
	}
}

/* Node n's value of sample type k. */
static int64_t type_value(const struct cp_rnode *n, enum type k)
{
	switch (k) {
	case T_CALLS:
		return (int64_t)n->calls;
	case T_SELF:
		return (int64_t)n->self_ns;
	case T_CPU:
		return (int64_t)cp_rnode__self_cpu(n);
	case T_WAIT:
		return (int64_t)n->self_wait_ns;
	case T_INACTIVE:
		return (int64_t)n->self_inactive_ns;
	default:
		return (int64_t)n->self_samples;
	}
}

int cp_export_pprof(struct cp_report_profile *rp, enum cp_metric weight, FILE *fp)
{
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct cp_strtab st = { 0 };
	ValueType vt[T_NR], period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	int64_t comment[2];
	char *source = NULL;
	static const char *const type_names[T_NR] = { "calls", "self", "cpu", "wait", "inactive",
						      "samples" };
	enum type order[T_NR], first = weight_type(rp, weight);
	Function *fns = xcalloc(rp->nfns + 1, sizeof(*fns));
	Location *locs = xcalloc(rp->nfns + 1, sizeof(*locs));
	Line *lines = xcalloc(rp->nfns + 1, sizeof(*lines));
	Line **line_ptrs = xcalloc(rp->nfns + 1, sizeof(*line_ptrs));
	Label **tree_labels;
	int64_t thread_key, tid_key;
	size_t nsamples = 0, len;
	uint8_t *buf;
	int ret;

	cp_strtab__add(&st, ""); /* string 0, as the format wants */

	/*
	 * The weight's type first, and the default (pprof and speedscope open
	 * default_sample_type, other readers the first): the report's picture.
	 */
	order[p.n_sample_type++] = first;
	for (enum type k = T_CALLS; k < T_NR; k++) {
		int has = k == T_CALLS || (k == T_SELF && rp->timed) ||
			  (k >= T_CPU && k <= T_INACTIVE && rp->split) ||
			  (k == T_SAMPLES && rp->cpu_sampled);

		if (has && k != first)
			order[p.n_sample_type++] = k;
	}
	p.sample_type = xcalloc(T_NR, sizeof(*p.sample_type));
	for (size_t k = 0; k < p.n_sample_type; k++) {
		perftools__profiles__value_type__init(&vt[k]);
		p.sample_type[k] = &vt[k];
		vt[k].type = intern(&st, order[k] == T_CALLS && rp->sampled ? "samples" :
					 type_names[order[k]]);
		vt[k].unit = intern(&st, order[k] == T_CALLS || order[k] == T_SAMPLES ? "count" :
					 "nanoseconds");
	}
	p.default_sample_type = vt[0].type;
	if (rp->timed) {
		period.type = intern(&st, "time");
		period.unit = intern(&st, "nanoseconds");
		p.period_type = &period;
		p.period = 1;
	}
	if (rp->cpu_sampled) {
		struct cp_sample_tally sh;

		cp_report_profile__sample_tally(rp, &sh);
		period.type = intern(&st, "cpu");
		p.period = (int64_t)rp->period_ns;
		source = xstrfmt("callprof time source: cpu-samples: CPU time sampled at %u Hz, "
				 "period %" PRIu64 " ns, %" PRIu64 " samples (%" PRIu64 " in the "
				 "kernel, %" PRIu64 " lost); profiler's own share %.1f%% left out; "
				 "calls exact; self times resting on fewer than %d samples are rough",
				 rp->pf->meta.sample_hz, rp->period_ns, sh.program, sh.kernel,
				 sh.lost, 100.0 * sh.share, CP_FEW_SAMPLES);
		comment[0] = intern(&st, source);
		p.comment = comment;
		p.n_comment = 1;
	}
	p.time_nanos = (int64_t)rp->pf->meta.start_realtime_ns;
	p.duration_nanos = (int64_t)rp->pf->meta.duration_ns;
	thread_key = intern(&st, "thread");
	tid_key = intern(&st, "tid");
	add_mappings(rp, &p, &st);

	p.function = xcalloc(rp->nfns + 1, sizeof(*p.function));
	p.location = xcalloc(rp->nfns + 1, sizeof(*p.location));
	for (uint32_t f = 0; f < rp->nfns; f++) {
		struct cp_fn_where w;

		cp_report_profile__fn_where(rp, f, &w);
		perftools__profiles__function__init(&fns[f]);
		fns[f].id = f + 1;
		fns[f].name = intern(&st, rp->fns[f].name);
		fns[f].system_name = fns[f].name;
		fns[f].filename = intern(&st, w.file);
		fns[f].start_line = w.line;
		p.function[p.n_function++] = &fns[f];
		perftools__profiles__line__init(&lines[f]);
		lines[f].function_id = f + 1;
		lines[f].line = w.line;
		line_ptrs[f] = &lines[f];
		perftools__profiles__location__init(&locs[f]);
		locs[f].id = f + 1;
		locs[f].mapping_id = mapping_of(rp, &p, f);
		locs[f].address = (rp->fns[f].flags & CP_RFN_PSEUDO) ? 0 : rp->fns[f].addr;
		locs[f].n_line = 1;
		locs[f].line = &line_ptrs[f];
		p.location[p.n_location++] = &locs[f];
		if (w.file) {
			for (size_t m = 0; m < p.n_mapping; m++)
				if (p.mapping[m]->id == locs[f].mapping_id)
					p.mapping[m]->has_filenames = p.mapping[m]->has_line_numbers = 1;
		}
	}

	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		nsamples += rp->trees[ti].nn - 1;
	p.sample = xcalloc(nsamples + 1, sizeof(*p.sample));
	tree_labels = xcalloc(rp->ntrees, sizeof(*tree_labels));
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];
		Label *labels = NULL;

		if (rp->threads == CP_THREADS_EACH) {
			labels = tree_labels[ti] = xcalloc(2, sizeof(*labels));
			perftools__profiles__label__init(&labels[0]);
			perftools__profiles__label__init(&labels[1]);
			labels[0].key = thread_key;
			labels[0].str = intern(&st, t->label);
			labels[1].key = tid_key;
			labels[1].num = t->tid;
		}
		for (uint32_t i = 1; i < t->nn; i++) {
			Sample *s = xmalloc(sizeof(*s));
			uint32_t depth = t->n[i].depth;

			perftools__profiles__sample__init(s);
			s->location_id = xmalloc(depth * sizeof(*s->location_id));
			for (uint32_t k = i; k != 0 && k != CP_NONE; k = t->n[k].parent)
				s->location_id[s->n_location_id++] = t->n[k].fn + 1;
			s->value = xcalloc(T_NR, sizeof(*s->value));
			s->n_value = p.n_sample_type;
			for (size_t k = 0; k < p.n_sample_type; k++)
				s->value[k] = type_value(&t->n[i], order[k]);
			if (labels) {
				s->label = xcalloc(2, sizeof(*s->label));
				s->label[0] = &labels[0];
				s->label[1] = &labels[1];
				s->n_label = 2;
			}
			p.sample[p.n_sample++] = s;
		}
	}
	p.string_table = st.s;
	p.n_string_table = st.n;

	len = perftools__profiles__profile__get_packed_size(&p);
	if (len >= (size_t)UINT32_MAX) {
		ret = cp_error("the pprof profile would be %zu bytes, over the 4 GB zlib takes at once",
			    len);
	} else {
		buf = xmalloc(len ? len : 1);
		perftools__profiles__profile__pack(&p, buf);
		ret = gzip_to(fp, buf, len);
		free(buf);
	}

	for (size_t i = 0; i < p.n_sample; i++) {
		free(p.sample[i]->location_id);
		free(p.sample[i]->value);
		free(p.sample[i]->label);
		free(p.sample[i]);
	}
	/* Labels are shared by a tree's samples: each tree's pair once. */
	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		free(tree_labels[ti]);
	free(tree_labels);
	free(p.sample);
	for (size_t i = 0; i < p.n_mapping; i++)
		free(p.mapping[i]);
	free(p.mapping);
	free(p.sample_type);
	free(p.function);
	free(p.location);
	free(fns);
	free(locs);
	free(lines);
	free(line_ptrs);
	cp_strtab__release(&st);
	free(source);
	return ret;
}
