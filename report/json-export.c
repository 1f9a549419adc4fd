/*
 * json-export.c - `export -f json`: the whole report model as JSON, every
 * metric of every context, for scripts.  The layout is documented in
 * docs/callprof-export.1.md (JSON OUTPUT); changes that are not additions
 * raise "callprof_json".
 */
#include <string.h>

#include "format/format.h"
#include "report/internal.h"
#include "report/json.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

#define JSON_VERSION 1

static const char *mode_name(uint32_t mode)
{
	return mode == CP_MODE_COUNTING ? "counting" : mode == CP_MODE_COVERAGE ? "coverage" :
	       mode == CP_MODE_SAMPLED ? "sampled" : mode == CP_MODE_CPU ? "cpu" : "timing";
}

static const char *switches_name(uint32_t switches)
{
	return switches == CP_SWITCHES_ON ? "measured" : switches == CP_SWITCHES_PARTIAL ? "partial" :
	       switches == CP_SWITCHES_UNAVAILABLE ? "unavailable" : "off";
}

/* How off-CPU time was measured (META switches...). */
static void switches(struct cp_json *j, const struct cp_meta *m)
{
	cp_json__key(j, "off_cpu");
	cp_json__obj(j);
	cp_json__key_str(j, "state", switches_name(m->switches));
	if (m->switches == CP_SWITCHES_UNAVAILABLE) {
		cp_json__key_u64(j, "errno", m->switch_errno);
		cp_json__key_str(j, "error", strerror((int)m->switch_errno));
	}
	cp_json__key_u64(j, "threads_without", m->switch_threads_failed);
	cp_json__key_u64(j, "records_lost", m->switch_lost);
	cp_json__end_obj(j);
}

static const char *clock_name(uint32_t clock)
{
	return clock == CP_CLOCK_TSC ? "tsc" : clock == CP_CLOCK_TSC_FAST ? "tsc-fast" :
	       clock == CP_CLOCK_MONOTONIC ? "monotonic" : "none";
}

/* "job": the rank a process was (JOB), or null. */
static void job(struct cp_json *j, const struct cp_job_rec *r, const char *id)
{
	static const char *const launchers[] = { "none", "openmpi", "mpich", "pmix", "slurm" };

	cp_json__key(j, "job");
	if (!r || r->rank == CP_NO_RANK) {
		cp_json__null(j);
		return;
	}
	cp_json__obj(j);
	cp_json__key_u64(j, "rank", r->rank);
	cp_json__key(j, "size");
	if (r->size)
		cp_json__u64(j, r->size);
	else
		cp_json__null(j);
	cp_json__key(j, "local_rank");
	if (r->local_rank != CP_NO_RANK)
		cp_json__u64(j, r->local_rank);
	else
		cp_json__null(j);
	cp_json__key_str(j, "id", id);
	cp_json__key(j, "launcher");
	if (r->launcher < ARRAY_SIZE(launchers))
		cp_json__str(j, launchers[r->launcher]);
	else
		cp_json__u64(j, r->launcher);
	cp_json__end_obj(j);
}

/* One recorded process: its file, META facts, command line and rank. */
static void process(struct cp_json *j, const char *file, const struct cp_meta *m, uint32_t argc,
		    const char *const *argv, const char *exe, const char *hostname,
		    const struct cp_job_rec *jr, const char *jobid)
{
	cp_json__obj(j);
	cp_json__key_str(j, "file", file);
	cp_json__key_u64(j, "pid", m->pid);
	cp_json__key_u64(j, "ppid", m->ppid);
	cp_json__key(j, "command");
	cp_json__arr(j);
	for (uint32_t i = 0; i < argc; i++)
		cp_json__str(j, argv[i]);
	cp_json__end_arr(j);
	cp_json__key_str(j, "executable", exe);
	cp_json__key_str(j, "hostname", hostname);
	job(j, jr, jobid);
	cp_json__key_str(j, "mode", mode_name(m->mode));
	cp_json__key_str(j, "clock", clock_name(m->clock));
	cp_json__key_u64(j, "ticks_per_second", m->ticks_per_sec);
	cp_json__key_u64(j, "start_unix_ns", m->start_realtime_ns);
	cp_json__key_u64(j, "duration_ns", m->duration_ns);
	cp_json__key_str(j, "ended", (m->flags & CP_META_KILLED) ? "killed" :
			    (m->flags & CP_META_ABNORMAL_END) ? "abnormally" : "normally");
	cp_json__key(j, "forked");
	cp_json__bool(j, !!(m->flags & CP_META_FORKED));
	cp_json__key(j, "attached");
	cp_json__bool(j, !!(m->flags & CP_META_ATTACHED));
	cp_json__key(j, "lost");
	cp_json__obj(j);
	cp_json__key_u64(j, "calls", m->lost_calls);
	cp_json__key_u64(j, "events", m->lost_events);
	cp_json__key_u64(j, "unpaired_exits", m->unpaired_exits);
	cp_json__key_u64(j, "threads", m->nthreads_lost);
	cp_json__key_u64(j, "signals", m->lost_signals);
	cp_json__end_obj(j);
	cp_json__key_u64(j, "reconciled_frames", m->reconciled_frames);
	switches(j, m);
	if (m->sample_hz) {
		cp_json__key(j, "sampling");
		cp_json__obj(j);
		cp_json__key_u64(j, "hz", m->sample_hz);
		cp_json__key_u64(j, "period_ns", m->sample_period_ns);
		cp_json__key_u64(j, "samples", m->samples);
		cp_json__key_u64(j, "lost", m->samples_lost);
		cp_json__key_str(j, "unwinding", (m->sample_flags & CP_SAMPLE_HYBRID) ||
						   m->mode == CP_MODE_CPU ? "none" :
				    (m->sample_flags & CP_SAMPLE_DWARF) ? "dwarf" :
				    (m->sample_flags & CP_SAMPLE_FP) ? "frame-pointers" : "unknown");
		cp_json__end_obj(j);
	}
	cp_json__end_obj(j);
}

/* "file" and "line" of a source position, both null when not known. */
static void file_line(struct cp_json *j, const char *file, int line)
{
	cp_json__key_str(j, "file", file);
	cp_json__key(j, "line");
	if (file)
		cp_json__u64(j, (uint64_t)line);
	else
		cp_json__null(j);
}

/* A call site as an object left open, for the caller to add to and close. */
static void site_open(struct cp_json *j, struct cp_report_profile *rp, uint64_t addr)
{
	const char *file;
	int line;

	cp_json__obj(j);
	if (addr == CP_SITE_INLINED) {
		cp_json__key(j, "inlined");
		cp_json__bool(j, 1);
	} else {
		cp_json__key(j, "address");
		cp_json__hex(j, addr);
		cp_report_profile__site_where(rp, addr, &file, &line);
		file_line(j, file, line);
	}
}

/* A merged profile's inputs (callprof merge). */
void cp_export_json_processes(struct cp_json *j, const struct cp_report_profile *rp)
{
	cp_json__key(j, "processes");
	cp_json__arr(j);
	for (uint32_t i = 0; i < rp->nfiles; i++) {
		const struct cp_rprocess *pr = &rp->procs[i];

		process(j, pr->file, &pr->meta, pr->argc, (const char *const *)pr->argv, pr->exe,
			pr->hostname, &pr->job, pr->jobid);
	}
	if (!rp->nfiles)
		process(j, rp->pf->path, &rp->pf->meta, rp->pf->argc, rp->pf->argv,
			cp_profile_file__str(rp->pf, rp->pf->meta.exe),
			cp_profile_file__str(rp->pf, rp->pf->meta.hostname), rp->pf->job,
			rp->pf->job ? cp_profile_file__str(rp->pf, rp->pf->job->jobid) : NULL);
	cp_json__end_arr(j);
}

void cp_export_json_compensation(struct cp_json *j, const struct cp_report_profile *rp)
{
	const struct cp_meta *m = &rp->pf->meta;

	cp_json__key(j, "compensation");
	cp_json__obj(j);
	cp_json__key(j, "applied");
	cp_json__bool(j, rp->compensated);
	/* The banner's "raw times: hook overhead was not calibrated". */
	cp_json__key(j, "calibrated");
	cp_json__bool(j, rp->compensated || m->overhead_ticks || m->self_overhead_ticks);
	cp_json__key(j, "caller_ns_per_call");
	cp_json__dbl(j, rp->outside_ns);
	cp_json__key(j, "callee_ns_per_call");
	cp_json__dbl(j, rp->inside_ns);
	cp_json__key_u64(j, "raw_ns", rp->raw_ns);
	cp_json__key_u64(j, "subtracted_ns", rp->subtracted_ns);
	cp_json__end_obj(j);
}

void cp_export_json_time_source(struct cp_json *j, const struct cp_report_profile *rp)
{
	const struct cp_meta *m = &rp->pf->meta;
	struct cp_sample_tally s;

	cp_json__key(j, "time_source");
	cp_json__obj(j);
	if (!rp->cpu_sampled) {
		cp_json__key_str(j, "source", !rp->timed ? "none" : rp->sampled ? "stack-samples" :
					      "clock");
		cp_json__end_obj(j);
		return;
	}
	cp_report_profile__sample_tally(rp, &s);
	cp_json__key_str(j, "source", "cpu-samples");
	cp_json__key_u64(j, "sample_hz", m->sample_hz);
	cp_json__key_u64(j, "period_ns", rp->period_ns);
	cp_json__key_u64(j, "samples", s.program);
	cp_json__key_u64(j, "kernel_samples", s.kernel);
	cp_json__key_u64(j, "lost_samples", s.lost);
	cp_json__key_u64(j, "profiler_samples", s.profiler);
	cp_json__key(j, "profiler_share");
	cp_json__dbl(j, s.share);
	cp_json__key_u64(j, "few_samples", CP_FEW_SAMPLES);
	cp_json__key_u64(j, "unclocked_samples", rp->unclocked);
	cp_json__end_obj(j);
}

/* A 128-bit sum of squares, exact, as a decimal string (a JSON number would be rounded). */
static void key_u128(struct cp_json *j, const char *key, unsigned __int128 v)
{
	char buf[48], *p = buf + sizeof(buf);

	*--p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	cp_json__key_str(j, key, p);
}

/*
 * A context's distribution across the inputs (version 9 merged files):
 * the inputs holding each extreme (indexes into "inputs"), the lowest that
 * never entered it, self CPU time's figures and the imbalance as
 * `report --imbalance` shows them.
 */
static void spread_dist(struct cp_json *j, const struct cp_report_profile *rp,
			const struct cp_rnode *n, const struct cp_rspread *sp)
{
	struct cp_imbalance im;

	cp_json__key_u64(j, "calls_min_input",
			 cp_rspread_min_input(sp, rp->ninputs, sp->min_calls, sp->min_calls_in));
	cp_json__key_u64(j, "calls_max_input", sp->max_calls_in);
	key_u128(j, "calls_sum_squares", sp->sumsq_calls);
	if (rp->timed) {
		cp_json__key_u64(j, "total_min_input",
				 cp_rspread_min_input(sp, rp->ninputs, sp->min_total_ns,
						      sp->min_total_in));
		cp_json__key_u64(j, "total_max_input", sp->max_total_in);
		cp_json__key_u64(j, "self_min_input",
				 cp_rspread_min_input(sp, rp->ninputs, sp->min_self_ns,
						      sp->min_self_in));
		cp_json__key_u64(j, "self_max_input", sp->max_self_in);
		cp_json__key_u64(j, "self_cpu_min_ns",
				 cp_rspread_min(sp, rp->ninputs, sp->min_cpu_ns));
		cp_json__key_u64(j, "self_cpu_min_input",
				 cp_rspread_min_input(sp, rp->ninputs, sp->min_cpu_ns,
						      sp->min_cpu_in));
		cp_json__key_u64(j, "self_cpu_max_ns", sp->max_cpu_ns);
		cp_json__key_u64(j, "self_cpu_max_input", sp->max_cpu_in);
		cp_json__key_u64(j, "self_cpu_sum_ns", sp->sum_cpu_ns);
		key_u128(j, "self_cpu_sum_squares", sp->sumsq_cpu);
	}
	cp_json__key(j, "absent_input");
	if (sp->absent == CP_NONE || sp->inputs == rp->ninputs)
		cp_json__null(j);
	else
		cp_json__u64(j, sp->absent);
	if (cp_rspread__imbalance(rp, n, sp, &im)) {
		cp_json__key(j, "imbalance");
		cp_json__obj(j);
		cp_json__key_str(j, "of", rp->timed ? "self_cpu_ns" : "calls");
		cp_json__key_u64(j, "value", im.imbalance);
		cp_json__key(j, "mean");
		cp_json__dbl(j, im.mean);
		cp_json__key(j, "stddev");
		cp_json__dbl(j, im.stddev);
		cp_json__key_u64(j, "min", im.min);
		cp_json__key_u64(j, "min_input", im.min_in);
		cp_json__key_u64(j, "max", im.max);
		cp_json__key_u64(j, "max_input", im.max_in);
		cp_json__end_obj(j);
	}
}

static void inputs(struct cp_json *j, const struct cp_profile_file *pf)
{
	cp_json__key(j, "inputs");
	cp_json__arr(j);
	for (uint32_t i = 0; i < pf->ninputs; i++) {
		const struct cp_input_rec *in = &pf->inputs[i];
		const char *s;

		cp_json__obj(j);
		if ((s = cp_profile_file__str(pf, in->path)))
			cp_json__key_str(j, "path", s);
		if ((s = cp_profile_file__str(pf, in->exe)))
			cp_json__key_str(j, "exe", s);
		if ((s = cp_profile_file__str(pf, in->hostname)))
			cp_json__key_str(j, "hostname", s);
		cp_json__key_u64(j, "pid", in->pid);
		cp_json__key_u64(j, "start_unix_ns", in->start_realtime_ns);
		cp_json__key_u64(j, "duration_ns", in->duration_ns);
		cp_json__key_u64(j, "calls", in->calls);
		cp_json__key_u64(j, "threads", in->nthreads);
		cp_json__key_u64(j, "raw_ns", in->raw_ns);
		cp_json__key_u64(j, "subtracted_ns", in->subtracted_ns);
		cp_json__key(j, "rank");
		if (in->rank == CP_NO_RANK)
			cp_json__null(j);
		else
			cp_json__u64(j, in->rank);
		cp_json__end_obj(j);
	}
	cp_json__end_arr(j);
}

/*
 * The sampled addresses of a profile's contexts, per tree and node: the
 * LINES records of node i of tree t are rec[first[t][i]..first[t][i + 1]).
 * Only for a profile of one file (several files have as many LINES).
 */
struct node_lines {
	uint32_t **first; /* per tree, nn + 1 entries */
	uint32_t *rec;	  /* LINES record numbers, grouped by node */
};

static void node_lines__init(struct node_lines *nl, const struct cp_report_profile *rp)
{
	const struct cp_profile_file *pf = rp->pf;
	uint32_t *tree = xcalloc(pf->nlines + 1, sizeof(*tree));

	nl->first = xcalloc(rp->ntrees, sizeof(*nl->first));
	nl->rec = xcalloc(pf->nlines + 1, sizeof(*nl->rec));
	for (uint32_t ti = 0; ti < rp->ntrees; ti++)
		nl->first[ti] = xcalloc(rp->trees[ti].nn + 2, sizeof(**nl->first));
	/*
	 * A counting sort: node i's count goes to first[i + 2]; the running
	 * sums make first[i + 1] its start, which placing advances to its end,
	 * so that first[i] is its start at the end.
	 */
	for (uint32_t k = 0; k < pf->nlines; k++) {
		uint32_t node = pf->lines[k].node, th = 0;

		while (th + 1 < pf->nthreads && node >= pf->threads[th + 1].first_node)
			th++;
		/* Not placed: of a thread not selected, or of a context a filter dropped. */
		tree[k] = rp->node_map[node] == CP_NONE ? CP_NONE : rp->thread_tree[th];
		if (tree[k] != CP_NONE)
			nl->first[tree[k]][rp->node_map[node] + 2]++;
	}
	for (uint32_t ti = 0, base = 0; ti < rp->ntrees; ti++) {
		nl->first[ti][0] = nl->first[ti][1] = base;
		for (uint32_t i = 2; i < rp->trees[ti].nn + 2; i++)
			nl->first[ti][i] += nl->first[ti][i - 1];
		base = nl->first[ti][rp->trees[ti].nn + 1];
	}
	for (uint32_t k = 0; k < pf->nlines; k++)
		if (tree[k] != CP_NONE)
			nl->rec[nl->first[tree[k]][rp->node_map[pf->lines[k].node] + 1]++] = k;
	free(tree);
}

static void node_lines__release(struct node_lines *nl, const struct cp_report_profile *rp)
{
	for (uint32_t ti = 0; nl->first && ti < rp->ntrees; ti++)
		free(nl->first[ti]);
	free(nl->first);
	free(nl->rec);
}

static void node_lines(struct cp_json *j, struct cp_report_profile *rp, const struct node_lines *nl,
		       uint32_t ti, uint32_t i)
{
	uint32_t from = nl->first[ti][i], to = nl->first[ti][i + 1];

	if (from == to)
		return;
	cp_json__key(j, "lines");
	cp_json__arr(j);
	for (uint32_t k = from; k < to; k++) {
		const struct cp_line_rec *l = &rp->pf->lines[nl->rec[k]];
		const char *file, *const *inl;
		int line, ninl;

		if (cp_report_profile__profilers_ip(rp, l->ip))
			continue; /* the profiler's share, in no context */
		cp_json__obj(j);
		if (rp->pf->meta.mode == CP_MODE_CPU && l->ip < CP_IP_PSEUDO_LIMIT) {
			/* Kernel time or samples a full ring lost: no address to show. */
			cp_json__key(j, "address");
			cp_json__null(j);
			cp_json__key_u64(j, "samples", l->samples);
			cp_json__key_str(j, "function",
					 l->ip == CP_IP_KERNEL ? "[kernel]" : "[address unknown]");
			file_line(j, NULL, 0);
			cp_json__end_obj(j);
			continue;
		}
		cp_json__key(j, "address");
		cp_json__hex(j, l->ip);
		cp_json__key_u64(j, "samples", l->samples);
		if (cp_symbolizer__line(rp->sym, l->ip, &file, &line)) {
			file = NULL;
			line = 0;
		}
		cp_json__key_str(j, "function", cp_symbolizer__fn_name(rp->sym, l->ip));
		file_line(j, file, line);
		ninl = cp_symbolizer__inlined(rp->sym, l->ip, &inl);
		if (ninl > 0) {
			cp_json__key(j, "inlined");
			cp_json__arr(j);
			for (int x = 0; x < ninl; x++)
				cp_json__str(j, inl[x]);
			cp_json__end_arr(j);
		}
		cp_json__end_obj(j);
	}
	cp_json__end_arr(j);
}

static void node(struct cp_json *j, struct cp_report_profile *rp, const struct cp_rtree *t,
		 uint32_t i, const struct node_lines *nl, uint32_t ti)
{
	const struct cp_rnode *n = &t->n[i];

	cp_json__obj(j);
	cp_json__key(j, "parent");
	if (n->parent == CP_NONE)
		cp_json__null(j);
	else
		cp_json__u64(j, n->parent);
	cp_json__key(j, "function");
	if (n->fn == CP_NONE)
		cp_json__null(j);
	else
		cp_json__u64(j, n->fn);
	cp_json__key_u64(j, "depth", n->depth);
	cp_json__key_u64(j, "calls", n->calls);
	/* Calls open when callprof attach began: not in calls. */
	if (n->open_at_start)
		cp_json__key_u64(j, "open_at_attach", n->open_at_start);
	if (rp->timed) {
		cp_json__key_u64(j, "total_ns", n->total_ns);
		cp_json__key_u64(j, "self_ns", n->self_ns);
		if (rp->cpu_sampled) {
			/* Not measured: null, never a 0 that looks measured. */
			cp_json__key(j, "min_ns");
			cp_json__null(j);
			cp_json__key(j, "max_ns");
			cp_json__null(j);
		} else {
			cp_json__key_u64(j, "min_ns", n->min_ns);
			cp_json__key_u64(j, "max_ns", n->max_ns);
		}
		cp_json__key_u64(j, "wait_ns", n->wait_ns);
		cp_json__key_u64(j, "inactive_ns", n->inactive_ns);
		cp_json__key_u64(j, "overhead_ns", n->overhead_ns);
		cp_json__key_u64(j, "self_overhead_ns", n->self_overhead_ns);
	}
	if (rp->cpu_sampled) {
		cp_json__key_u64(j, "samples", n->samples);
		cp_json__key_u64(j, "self_samples", n->self_samples);
		/* Sampled code without hooks under a context: no call path. */
		cp_json__key(j, "uninstrumented");
		cp_json__bool(j, (int)n->uninstrumented);
	}
	if (rp->split) {
		cp_json__key_u64(j, "cpu_ns", cp_rnode__cpu(n));
		cp_json__key_u64(j, "self_cpu_ns", cp_rnode__self_cpu(n));
		cp_json__key_u64(j, "self_wait_ns", n->self_wait_ns);
		cp_json__key_u64(j, "self_inactive_ns", n->self_inactive_ns);
		cp_json__key_u64(j, "switches_vol", n->switches_vol);
		cp_json__key_u64(j, "switches_invol", n->switches_invol);
		cp_json__key_u64(j, "self_switches_vol", n->self_switches_vol);
		cp_json__key_u64(j, "self_switches_invol", n->self_switches_invol);
	}
	if (i && t->spread && i < t->nspread && rp->ninputs) {
		const struct cp_rspread *sp = &t->spread[i];

		cp_json__key(j, "spread");
		cp_json__obj(j);
		cp_json__key_u64(j, "inputs", sp->inputs);
		cp_json__key_u64(j, "calls_min", cp_rspread_min(sp, rp->ninputs, sp->min_calls));
		cp_json__key_u64(j, "calls_max", sp->max_calls);
		if (rp->timed) {
			cp_json__key_u64(j, "total_min_ns",
					 cp_rspread_min(sp, rp->ninputs, sp->min_total_ns));
			cp_json__key_u64(j, "total_max_ns", sp->max_total_ns);
			cp_json__key_u64(j, "self_min_ns",
					 cp_rspread_min(sp, rp->ninputs, sp->min_self_ns));
			cp_json__key_u64(j, "self_max_ns", sp->max_self_ns);
		}
		if (sp->dist)
			spread_dist(j, rp, n, sp);
		cp_json__end_obj(j);
	}
	if (i && n->sites == CP_NONE && n->site) {
		cp_json__key(j, "site");
		site_open(j, rp, n->site);
		cp_json__end_obj(j);
	}
	if (n->sites != CP_NONE) {
		cp_json__key(j, "sites");
		cp_json__arr(j);
		for (uint32_t k = n->sites; k != CP_NONE; k = t->sites[k].next) {
			const struct cp_rsite *s = &t->sites[k];

			site_open(j, rp, s->site);
			cp_json__key_u64(j, "calls", s->calls);
			if (rp->timed && !rp->cpu_sampled) {
				cp_json__key_u64(j, "total_ns", s->total_ns);
				cp_json__key_u64(j, "overhead_ns", s->overhead_ns);
			} else if (rp->cpu_sampled) {
				/* Samples are charged to contexts, not to call sites. */
				cp_json__key(j, "total_ns");
				cp_json__null(j);
			}
			cp_json__end_obj(j);
		}
		cp_json__end_arr(j);
	}
	if (nl)
		node_lines(j, rp, nl, ti, i);
	cp_json__end_obj(j);
}

int cp_export_json(struct cp_report_profile *rp, FILE *fp)
{
	struct cp_json *j = cp_json__new(fp, 0);
	struct node_lines nl = { 0 };

	if (rp->pf->nlines && !rp->nfiles)
		node_lines__init(&nl, rp);
	cp_json__obj(j);
	cp_json__key_u64(j, "callprof_json", JSON_VERSION);
	cp_export_json_processes(j, rp);
	if (rp->ninputs)
		inputs(j, rp->pf);
	cp_json__key_str(j, "threads_mode", rp->threads == CP_THREADS_EACH ? "each" : "merged");
	cp_json__key(j, "timed");
	cp_json__bool(j, rp->timed);
	cp_json__key(j, "off_cpu_measured");
	cp_json__bool(j, rp->split);
	cp_json__key_u64(j, "calls", rp->calls);
	cp_json__key_u64(j, "paths", rp->paths);
	/* What the report weighs by (and the other exports first): cpu, total or calls. */
	cp_json__key_str(j, "weight", cp_metric__name(cp_report_profile__weight(rp, NULL, 0)));
	cp_export_json_time_source(j, rp);
	cp_export_json_compensation(j, rp);

	cp_json__key(j, "functions");
	cp_json__arr(j);
	for (uint32_t i = 0; i < rp->nfns; i++) {
		struct cp_fn_where w;

		cp_report_profile__fn_where(rp, i, &w);
		cp_json__obj(j);
		cp_json__key_str(j, "name", rp->fns[i].name);
		if (rp->fns[i].flags & CP_RFN_SIGNAL) {
			cp_json__key_u64(j, "signal", rp->fns[i].addr);
		} else if (rp->fns[i].flags & CP_RFN_REGION) {
			cp_json__key(j, "region");
			cp_json__bool(j, 1);
		} else {
			cp_json__key(j, "address");
			cp_json__hex(j, rp->fns[i].addr);
			cp_json__key_str(j, "module", w.module);
			cp_json__key(j, "offset");
			if (w.module)
				cp_json__hex(j, w.offset);
			else
				cp_json__null(j);
			file_line(j, w.file, w.line);
		}
		cp_json__end_obj(j);
	}
	cp_json__end_arr(j);

	cp_json__key(j, "trees");
	cp_json__arr(j);
	for (uint32_t ti = 0; ti < rp->ntrees; ti++) {
		const struct cp_rtree *t = &rp->trees[ti];

		cp_json__obj(j);
		cp_json__key_str(j, "label", t->label);
		cp_json__key_u64(j, "tid", t->tid);
		cp_json__key_u64(j, "threads", t->nthreads);
		if (t->cpu_ns && !t->cpu_unknown)
			cp_json__key_u64(j, "kernel_cpu_ns", t->cpu_ns);
		cp_json__key(j, "nodes");
		cp_json__arr(j);
		for (uint32_t i = 0; i < t->nn; i++)
			node(j, rp, t, i, rp->pf->nlines && !rp->nfiles ? &nl : NULL, ti);
		cp_json__end_arr(j);
		cp_json__end_obj(j);
	}
	cp_json__end_arr(j);
	cp_json__end_obj(j);
	node_lines__release(&nl, rp);
	return cp_json__finish(j);
}
