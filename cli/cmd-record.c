/*
 * cmd-record.c - `callprof record`: run a program with the runtime
 * preloaded, pass its standard streams and exit status through untouched,
 * and say in one line where the profile went.
 *
 * The profile is written by the runtime inside the program, to the path in
 * CALLPROF_OUT: -o expanded (%r rank, %h host, %p pid, ...; format/job.c),
 * with the rank put in when a launcher (mpirun, srun) started record as
 * one rank of a job.  A name another process took meanwhile is never
 * replaced (format/writer.c): record then says where the profile went.
 * Under a launcher rank 0 prints the summary for the job, other ranks only
 * their warnings.  CALLPROF_ROOT_PID names the process that owns that path;
 * its fork children and exec'd descendants write PATH.PID instead of
 * overwriting it.  With --sample, a program that was not built with
 * -finstrument-functions is sampled instead (sample/), and the tool writes
 * the same files under the same names; an instrumented one keeps the
 * runtime, which also samples (CALLPROF_SAMPLE).
 *
 * The time source (--time, or the --mode it implies): cpu by default, the
 * exact call tree with CPU time sampled per context by perf events in each
 * thread; where the kernel refuses those events, record says so once and
 * times each call with the clock instead (timing mode), which it can
 * always do.
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "cli/select.h"
#include "format/format.h"
#include "report/report.h"
#include "sample/sample.h"
#include "symbolize/elffile.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

static const char *const record_usage[] = {
	"callprof record [-o FILE] [--time=cpu|clock|none] [--mode=cpu|timing|counting|coverage]"
	" [--sample=HZ] [--clock=CLOCK] [--no-offcpu] [--libcalls] [--dump-on=SIG] [--] PROG [ARGS...]",
	"callprof record [--include|--exclude|--exclude-tree PATTERN]... [--regex] [--exclude-file GLOB]..."
	" [--exclude-module GLOB]... [--start FN]... [--max-depth N] [--budget PCT] [--] PROG [ARGS...]",
	"callprof record --sample[=HZ] [--call-graph=dwarf|fp] [-o FILE] [--] PROG [ARGS...]",
	NULL,
};

/* Each mode is its own runtime library: the hooks never test the mode. */
enum record_mode { REC_CPU, REC_TIMING, REC_COUNTING, REC_COVERAGE };
static const char *const mode_choices[] = { "cpu", "timing", "counting", "coverage", NULL };
static const char *const mode_libs[] = { "libcallprof-cpu.so", "libcallprof.so",
					 "libcallprof-counting.so", "libcallprof-coverage.so" };
/* --time: where the times come from; each mode's, in enum record_mode's order. */
enum record_time { TIME_CPU, TIME_CLOCK, TIME_NONE };
static const char *const time_choices[] = { "cpu", "clock", "none", NULL };
static const int mode_time[] = { TIME_CPU, TIME_CLOCK, TIME_NONE, TIME_NONE };
static const char *const clock_choices[] = { "auto", "tsc", "tsc-fast", "monotonic", NULL };
static const char *const call_graph_choices[] = { "dwarf", "fp", NULL };

/* cpu mode's rate when --sample does not say (runtime/internal.h, CP_CPU_DEFAULT_HZ). */
#define CPU_DEFAULT_HZ 3989
/* Fewer samples of the program than this, and its CPU times are mostly noise. */
#define CPU_FEW_SAMPLES 100

/*
 * The runtime for a mode: CALLPROF_LIB (the path of the timing runtime,
 * libcallprof.so, whose directory holds the others), else next to the tool
 * (build tree) or in PREFIX/lib/callprof.
 */
char *cp_find_runtime(const char *lib)
{
	const char *env = getenv("CALLPROF_LIB");
	static const char *const rel[] = { "", "../lib/callprof/", "../lib/" };
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		char *dir = xstrdup(env), *sep = strrchr(dir, '/');
		char *p;

		if (!strcmp(lib, "libcallprof.so"))
			p = xstrdup(env);
		else if (sep)
			*sep = '\0', p = xstrfmt("%s/%s", dir, lib);
		else
			p = xstrdup(lib);
		free(dir);
		if (access(p, R_OK))
			FREE_AND_NULL(p);
		return p;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		char *p = xstrfmt("%s/%s%s", exe, rel[i], lib);
		char *real = realpath(p, NULL);

		free(p);
		if (real && !access(real, R_OK))
			return real;
		free(real);
	}
	return NULL;
}

static char *absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	return xstrfmt("%s/%s", cwd, path);
}

static pid_t child_pid;

/* Wall time since start (CLOCK_REALTIME, as record stamps its run), 0 if it went back. */
static uint64_t elapsed_ns(const struct timespec *start)
{
	struct timespec now;
	int64_t ns;

	clock_gettime(CLOCK_REALTIME, &now);
	ns = (int64_t)(now.tv_sec - start->tv_sec) * 1000000000 + (now.tv_nsec - start->tv_nsec);
	return ns > 0 ? (uint64_t)ns : 0;
}

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* "PID", "execN" or "PID.execN": the suffixes the runtime gives other profiles. */
static int profile_suffix(const char *sfx)
{
	size_t n = strspn(sfx, "0123456789");

	if (n && !sfx[n])
		return 1;
	if (n && sfx[n] == '.')
		sfx += n + 1;
	else if (n)
		return 0;
	return !strncmp(sfx, "exec", 4) && sfx[4] && strspn(sfx + 4, "0123456789") == strlen(sfx + 4);
}

/*
 * Profiles of the other processes and images of the run: PATH.PID (fork
 * children, programs they ran), PATH.execN and PATH.PID.execN (an image
 * replaced by exec), written since start, but own (the profile itself
 * under another name, see find_other_name).  *listed gets how many, and text
 * the first three, each with the process that wrote it:
 * " FILE.456 (pid 456 ./child), ...".
 */
static size_t other_profiles(const char *shown, const char *path, const struct timespec *start,
			     const char *own, struct strbuf *text)
{
	char *pattern = xstrfmt("%s.*", path);
	glob_t g;
	size_t n = 0;

	if (!glob(pattern, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *suffix = g.gl_pathv[i] + strlen(path) + 1;
			struct cp_profile_file *pf;
			struct stat st;
			char err[1024];

			if (!profile_suffix(suffix) || !strcmp(g.gl_pathv[i], own) ||
			    stat(g.gl_pathv[i], &st) ||
			    st.st_mtim.tv_sec < start->tv_sec ||
			    (st.st_mtim.tv_sec == start->tv_sec && st.st_mtim.tv_nsec < start->tv_nsec))
				continue;
			if (n++ >= 3)
				continue;
			strbuf_addf(text, "%s %s.%s", n > 1 ? "," : "", cp_visible(shown),
				    cp_visible(suffix));
			pf = cp_profile_file__open(g.gl_pathv[i], err, sizeof(err), NULL);
			if (pf)
				strbuf_addf(text, " (pid %" PRIu32 " %s)", pf->meta.pid,
					    cp_visible(pf->argc && pf->argv[0][0] ? pf->argv[0] : "?"));
			else
				strbuf_addstr(text, " (unreadable)");
			cp_profile_file__free(pf);
		}
		globfree(&g);
	}
	free(pattern);
	return n;
}

static void list_other_profiles(size_t n, const struct strbuf *text)
{
	if (n)
		fprintf(stderr, "callprof: other processes of the run wrote %zu profile%s:%s%s\n", n,
			n == 1 ? "" : "s", text->buf, n > 3 ? ", ..." : "");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct function addresses over all threads (coverage: what ran). */
static uint64_t distinct_functions(const struct cp_profile_file *pf)
{
	uint64_t *fns = xcalloc(pf->nnodes + 1, sizeof(*fns)), n = 0, distinct = 0;

	/* Functions: not the pseudo-frames of signal handlers and regions. */
	for (uint32_t i = 0; i < pf->nnodes; i++)
		if (pf->nodes[i].parent != CP_NO_PARENT &&
		    !(pf->nodes[i].flags & (CP_NODE_SIGNAL | CP_NODE_REGION)))
			fns[n++] = pf->nodes[i].fn;
	qsort(fns, n, sizeof(*fns), cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		distinct += !i || fns[i] != fns[i - 1];
	free(fns);
	return distinct;
}

/*
 * The status file (CALLPROF_STATUS, see runtime/session.c): the program
 * and its watcher say there why its profile was not written.  Read once,
 * then removed; lines are "write ERRNO", "watch ERRNO" or "rights 0".
 */
struct run_status {
	int wrote_error; /* the runtime said why on the program's stderr */
	int watch_errno; /* the watcher could not write (it has no stderr) */
	int rights;	 /* the watcher could not tell the program's rights */
	int empty;	 /* the program ran no instrumented code: it wrote nothing */
	int seccomp;	 /* it exec'd under a seccomp filter that kept the new image from recording */
};

/* What summarize() needs to know of the run besides the profile. */
struct run_info {
	const char *shown;	  /* FILE as the user wrote it */
	const char *path;	  /* FILE made absolute */
	const char *prog;	  /* the program as given */
	pid_t pid;		  /* its process */
	const struct stat *before; /* what was at FILE before the run (stat), or NULL */
	const struct stat *before_link; /* the same by lstat (a symlink itself), or NULL */
	size_t others;		  /* profiles the run's other processes wrote */
	uint64_t wall_ns;	  /* how long the run took (0: unknown) */
	const char *job_note;	  /* said after the summary (rank 0 of a job), or NULL */
	int quiet;		  /* a rank other than 0: warnings only, no summary */
};

/*
 * Was what stood at FILE before the run moved to FILE.old (by the
 * runtime's rename, which keeps one .old and replaces an older one)?
 */
static int moved_to_old(const struct run_info *ri)
{
	char *old = xstrfmt("%s.old", ri->path);
	struct stat st;
	int moved = ri->before_link && !lstat(old, &st) && st.st_dev == ri->before_link->st_dev &&
		    st.st_ino == ri->before_link->st_ino;

	free(old);
	return moved;
}

/* Threads of the profile whose CPU time could not be sampled (cpu mode). */
static uint32_t unsampled_threads(const struct cp_profile_file *pf)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < pf->nthreads; i++)
		if (pf->threads[i].flags & CP_THREAD_UNSAMPLED)
			n += pf->threads[i].nthreads;
	return n;
}

/* A profile without calls: nothing instrumented ran, or the selection left every call out. */
static void warn_no_calls(const struct cp_profile_file *pf)
{
	const struct cp_meta *m = &pf->meta;

	if (m->calls_outside_start || m->calls_below_depth || m->calls_in_excluded_trees ||
	    m->calls_paused)
		cp_warning("no call was recorded: the selection (--start, --exclude-tree, "
			   "--max-depth) or callprof_pause() left every call out");
	else
		cp_warning("no instrumented function ran: compile the program with "
			   "-finstrument-functions -g");
}

/*
 * The CPU time of a cpu-mode profile: how many samples, and how much of it
 * callprof's own hooks took (report's figures: cp_report_profile__sample_tally
 * of rp, the profile loaded); warnings when the times cannot be trusted.
 */
static int summarize_cpu(const struct cp_report_profile *rp, const char *shown, uint32_t nthreads,
			 uint64_t calls, uint64_t paths, const char *note, int quiet)
{
	const struct cp_profile_file *pf = rp->pf;
	struct cp_sample_tally sh;
	uint32_t unsampled = unsampled_threads(pf);

	cp_report_profile__sample_tally(rp, &sh);
	if (!quiet) {
		fprintf(stderr, "callprof: wrote %s: %u thread%s, %" PRIu64 " calls, %" PRIu64
				" call paths, CPU time from %" PRIu64 " samples at %u Hz",
			cp_visible(shown), nthreads, nthreads == 1 ? "" : "s", calls, paths,
			sh.program, pf->meta.sample_hz);
		if (sh.program || sh.profiler)
			fprintf(stderr, " (profiler's own share %.1f%%)", 100.0 * sh.share);
		fprintf(stderr, "%s\n", note);
	}
	if (!calls)
		warn_no_calls(pf);
	if (unsampled && (pf->meta.flags & CP_META_FILTERED))
		cp_warning("no CPU time for %u thread%s: the program's seccomp filter forbids "
			   "perf_event_open", unsampled, unsampled == 1 ? "" : "s");
	else if (unsampled)
		cp_warning("no CPU time for %u thread%s: perf_event_open: %s (--time=clock times "
			   "each call with the clock instead)", unsampled, unsampled == 1 ? "" : "s",
			   strerror((int)pf->meta.switch_errno));
	if (calls && unsampled < nthreads && sh.program < CPU_FEW_SAMPLES)
		cp_warning("CPU times rest on only %" PRIu64 " sample%s: run longer or raise --sample",
			   sh.program, sh.program == 1 ? "" : "s");
	return cp_report_profile__overhead_share(rp) >= CP_OVERHEAD_HIGH;
}

/*
 * Could the hooks of a clock-timed run (timing mode) have cost
 * CP_OVERHEAD_HIGH of its raw time?  Compensation subtracts at most the
 * calibrated cost of every call, and the raw time (the threads' lifetimes)
 * is at least about the run's wall time.
 */
static int clock_overhead_possible(const struct cp_profile_file *pf, uint64_t calls,
				   uint64_t wall_ns)
{
	const struct cp_meta *m = &pf->meta;
	double cost;

	if (!calls || !m->ticks_per_sec || !(m->overhead_ticks + m->self_overhead_ticks))
		return 0;
	cost = (double)calls * (double)(m->overhead_ticks + m->self_overhead_ticks) * 1e9 /
	       (double)m->ticks_per_sec;
	return !wall_ns || cost >= CP_OVERHEAD_HIGH / 2 * (double)wall_ns;
}

/* Does a DW_AT_producer name gcc ("GNU C17 12.2.0 ...") or clang? */
enum producer { PRODUCER_UNKNOWN, PRODUCER_GCC, PRODUCER_CLANG };

static enum producer producer_of(const char *p, int *after_inlining, int *flags_known)
{
	*after_inlining = p && strstr(p, "-finstrument-functions-after-inlining") != NULL;
	*flags_known = p && strstr(p, " -f") != NULL;
	if (p && !strncmp(p, "GNU ", 4))
		return PRODUCER_GCC;
	if (p && strstr(p, "clang"))
		return PRODUCER_CLANG;
	return PRODUCER_UNKNOWN;
}

/* Whether the comma-separated list holds name as one of its entries. */
static int list_has(const struct strbuf *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list->buf; (p = strstr(p, name)); p++)
		if ((p == list->buf || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

/*
 * The overhead verdict: when the profiler's share of the run reaches
 * CP_OVERHEAD_HIGH, one short paragraph after the summary line: how much,
 * the tiny functions whose calls cost most of it, and what to do about
 * them (docs/callprof-record.1.md, OVERHEAD VERDICT).  Says nothing when
 * the share is low or not known; never fails the run.
 */
static void overhead_verdict(struct cp_report_profile *rp, int perf_refused)
{
	struct cp_overhead ov;
	struct strbuf fns = STRBUF_INIT, list = STRBUF_INIT;
	enum producer prod = PRODUCER_UNKNOWN;
	int after = 0, flags_known = 0, sleds = 0;

	if (cp_report_overhead(rp, &ov) || ov.share < CP_OVERHEAD_HIGH)
		goto out;
	for (uint32_t k = 0; k < ov.ntop; k++) {
		const struct cp_overhead_fn *f = &ov.top[k];
		char *ex = cp_exclude_name(f->name);
		double own = f->calls ? (double)f->own_ns / (double)f->calls : 0;

		if (f->excluded) /* its own time is its callers': not known */
			strbuf_addf(&fns, "%s%s (%" PRIu64 " calls, excluded: its hooks still run, "
					  "%.0f%% of the cost)", k ? ", " : "", cp_visible(f->name),
				    f->calls, 100.0 * f->share);
		else
			strbuf_addf(&fns, "%s%s (%" PRIu64 " calls, %.*f%s own time each, %.0f%% of "
					  "the cost)", k ? ", " : "", cp_visible(f->name), f->calls,
				    own < 1000 ? 1 : 2, own < 1000 ? own : own / 1000,
				    own < 1000 ? "ns" : "us", 100.0 * f->share);
		if (ex && !list_has(&list, ex))
			strbuf_addf(&list, "%s%s", list.len ? "," : "", ex);
		free(ex);
	}
	prod = producer_of(ov.producer, &after, &flags_known);
	sleds = ov.producer && strstr(ov.producer, "-fpatchable-function-entry") != NULL;
	if (rp->cpu_sampled)
		fprintf(stderr, "callprof: the hooks took %.1f%% of the %s (the profiler's own "
				"share); the times shown leave it out, but the run took at least %.1fx as "
				"long\n", 100.0 * ov.share, cp_report_profile__overhead_base(rp),
			1 / (1 - ov.share));
	else
		fprintf(stderr, "callprof: the hooks took %.1f%% of the %s; the times shown subtract "
				"an estimate of it ('~': mostly overhead)\n", 100.0 * ov.share,
			cp_report_profile__overhead_base(rp));
	if (ov.ntop)
		fprintf(stderr, "  most of it in the calls of tiny functions: %s\n", fns.buf);
	else
		fprintf(stderr, "  no few functions stand out: the calls of many small ones add up\n");
	/*
	 * What to do: leave those functions' hooks out, each compiler its way.
	 * Every line is a command to follow as it stands, and says only what
	 * following it does (t0450 follows each): after-inlining helps only
	 * where the compiler inlined them.
	 */
	if (ov.ntop && sleds)
		fprintf(stderr, "  remedy: mark them __attribute__((patchable_function_entry(0, 0))) and "
				"rebuild (a sleds build: without its entry NOPs a function is not recorded "
				"and costs nothing; its callees show under its caller)\n");
	else if (list.len && prod == PRODUCER_GCC)
		fprintf(stderr, "  remedy: rebuild with -finstrument-functions-exclude-function-list=%s\n",
			cp_visible(list.buf));
	else if (list.len && prod == PRODUCER_UNKNOWN)
		fprintf(stderr, "  remedy: rebuild with -finstrument-functions-exclude-function-list=%s "
				"(gcc; clang has no such list: mark them "
				"__attribute__((no_instrument_function)))\n", cp_visible(list.buf));
	else if (ov.ntop)
		fprintf(stderr, "  remedy: mark them __attribute__((no_instrument_function)) and rebuild%s%s%s\n",
			prod == PRODUCER_CLANG ? " (clang has no exclude list)" : "",
			prod == PRODUCER_CLANG && flags_known && !after && ov.inlined ?
				", or rebuild with -finstrument-functions-after-inlining instead of "
				"-finstrument-functions (they were inlined)" : "",
			flags_known ? "" : "; in a sleds build (callprof cc --sleds) mark them "
				"__attribute__((patchable_function_entry(0, 0))) instead");
	if (prod == PRODUCER_GCC && ov.inlined && !sleds)
		fprintf(stderr, "  or build with clang -finstrument-functions-after-inlining, which "
				"keeps the hooks of inlined calls out (`callprof cc` does)\n");
	/* Not what was used already: the same advice again would lead nowhere. */
	if (!rp->cpu_sampled && !perf_refused && rp->pf->meta.budget)
		fprintf(stderr, "  or record with --time=cpu (the hooks left out of the times)\n");
	else if (!rp->cpu_sampled && !rp->pf->meta.budget)
		fprintf(stderr, "  or record with %s--budget=5 (count-only calls that cost less than "
				"their timing)\n", perf_refused ? "" : "--time=cpu (the hooks left out of "
				"the times) or ");
out:
	strbuf_release(&fns);
	strbuf_release(&list);
}

/*
 * FILE was not written because the program ran no instrumented code (the
 * runtime said so in the status file): FILE must not go on holding an
 * earlier run's profile as if it were this one's, so what is there moves
 * to FILE.old, as a written profile would have moved it.  Then say which
 * processes wrote profiles, if any did.
 */
static void summarize_empty(const struct run_info *ri)
{
	char *old = xstrfmt("%s.old", ri->path);
	int moved = ri->before_link && !rename(ri->path, old);

	free(old);
	if (ri->others)
		fprintf(stderr, "callprof: no profile written to '%s': %s (pid %ld) ran no "
				"instrumented code\n", cp_visible(ri->shown), cp_visible(ri->prog),
			(long)ri->pid);
	else
		cp_warning("no process of the run ran instrumented code, so no profile was "
			   "written: compile the program with -finstrument-functions -g, or "
			   "sample it (--sample)");
	if (moved)
		fprintf(stderr, "callprof: moved the previous %s to %s.old\n", cp_visible(ri->shown),
			cp_visible(ri->shown));
}

/*
 * The one line that says what the profile at path holds, and warnings.
 * perf_refused: record fell back from cpu mode to timing, having said why;
 * the same refusal leaves the profile without its wait/inactive split.
 */
static void summarize(const struct run_info *ri, const struct run_status *rs, int perf_refused)
{
	const char *shown = ri->shown, *path = ri->path;
	const struct stat *before = ri->before;
	int verdict = 0;
	struct stat st;
	struct cp_profile_file *pf;
	char err[1024], *note;
	uint64_t calls = 0, paths = 0;
	uint32_t nthreads = 0;
	/* Loaded where record prints report's figures (cpu mode, the verdict). */
	struct cp_report_opts ro = { .threads = CP_THREADS_MERGED, .quiet = 1 };
	struct cp_report_profile *rp = NULL;

	if (stat(path, &st) || (before && st.st_ino == before->st_ino &&
				st.st_mtim.tv_sec == before->st_mtim.tv_sec &&
				st.st_mtim.tv_nsec == before->st_mtim.tv_nsec)) {
		/* Only the true cause: the runtime already named a failed write. */
		if (rs && rs->wrote_error)
			return;
		if (rs && rs->empty)
			summarize_empty(ri);
		else if (rs && rs->seccomp)
			cp_warning("no profile written to '%s': the program exec'd under a seccomp filter "
				   "that forbids what callprof needs to start, so the new image recorded "
				   "nothing", shown);
		else if (rs && rs->watch_errno)
			cp_error("no profile written to '%s': the program was killed and its watcher "
				 "could not write it: %s", shown, strerror(rs->watch_errno));
		else if (rs && rs->rights)
			cp_warning("no profile written to '%s': the program was killed after changing "
				   "its credentials, and its watcher could not check them, so it wrote "
				   "nothing on the program's behalf", shown);
		else
			cp_warning("no profile written to '%s': the program did not load the runtime "
				   "(statically linked without libcallprof.a?), did not exit normally, or "
				   "the runtime could not write it", shown);
		return;
	}
	note = moved_to_old(ri) ? xstrfmt("; moved the previous %s to %s.old%s", cp_visible(shown),
					  cp_visible(shown), ri->job_note ? ri->job_note : "")
				: xstrdup(ri->job_note ? ri->job_note : "");
	pf = cp_profile_file__open(path, err, sizeof(err), NULL);
	if (!pf) {
		cp_error("%s", err);
		free(note);
		return;
	}
	/* Only the process record started writes FILE (the others FILE.PID): another's is not this run's. */
	if (ri->pid > 0 && pf->meta.pid != (uint32_t)ri->pid) {
		cp_error("'%s' is not this run's profile: process %" PRIu32 " wrote it, not %s (pid %ld)",
			 shown, pf->meta.pid, ri->prog, (long)ri->pid);
		goto out;
	}
	for (uint32_t i = 0; i < pf->nthreads; i++) {
		cp_report_count_thread(pf, i, &calls, &paths);
		nthreads += pf->threads[i].nthreads;
	}
	if (pf->meta.mode == CP_MODE_SAMPLED) {
		if (!ri->quiet)
			fprintf(stderr, "callprof: wrote %s: %u thread%s, %" PRIu64 " samples at %u Hz "
					"(sampled, unwound with %s), %" PRIu64 " lost%s\n",
				cp_visible(shown), nthreads, nthreads == 1 ? "" : "s",
				pf->meta.samples, pf->meta.sample_hz,
				pf->meta.sample_flags & CP_SAMPLE_FP ? "frame pointers" : "DWARF CFI",
				pf->meta.samples_lost, note);
		if (!pf->meta.samples)
			cp_warning("no samples: the program used less CPU time than one sampling "
				"period, or slept");
		goto out;
	}
	if (pf->meta.mode == CP_MODE_CPU) {
		rp = cp_report_profile__from_file(pf, &ro); /* takes pf over */
		verdict = summarize_cpu(rp, shown, nthreads, calls, paths, note, ri->quiet);
		goto incomplete;
	}
	if (ri->quiet)
		;
	else if (pf->meta.mode == CP_MODE_COVERAGE)
		fprintf(stderr, "callprof: wrote %s: %u thread%s, %" PRIu64 " functions ran (coverage)%s\n",
			cp_visible(shown), nthreads, nthreads == 1 ? "" : "s", distinct_functions(pf),
			note);
	else
		fprintf(stderr, "callprof: wrote %s: %u thread%s, %" PRIu64 " calls, %" PRIu64
				" call paths%s%s\n",
			cp_visible(shown), nthreads, nthreads == 1 ? "" : "s", calls, paths,
			pf->meta.mode == CP_MODE_COUNTING ? " (counting)" : "", note);
	if (!calls)
		warn_no_calls(pf);
	if (pf->meta.switches == CP_SWITCHES_UNAVAILABLE && !perf_refused)
		cp_warning("no wait/inactive split: perf_event_open refused: %s "
			"(see callprof-record(1), OFF-CPU TIME)", strerror((int)pf->meta.switch_errno));
	else if (pf->meta.switches == CP_SWITCHES_PARTIAL)
		cp_warning("no wait/inactive split for %u thread%s: %s%s", pf->meta.switch_threads_failed,
			pf->meta.switch_threads_failed == 1 ? "" : "s",
			pf->meta.flags & CP_META_FILTERED ? "the program's seccomp filter forbids "
							      "perf_event_open" :
							      "perf_event_open or its ring failed: ",
			pf->meta.flags & CP_META_FILTERED ? "" : strerror((int)pf->meta.switch_errno));
	verdict = pf->meta.mode == CP_MODE_TIMING && clock_overhead_possible(pf, calls, ri->wall_ns);
incomplete:
	if (pf->meta.lost_calls || pf->meta.lost_events || pf->meta.nthreads_lost ||
	    pf->meta.lost_signals)
		cp_warning("the profile is incomplete; 'callprof report' says what was lost");
out:
	verdict = verdict && !ri->quiet; /* advice: the job's one summary has it */
	if (verdict && !rp)
		rp = cp_report_profile__from_file(pf, &ro);
	if (verdict)
		overhead_verdict(rp, perf_refused);
	if (rp)
		cp_report_profile__free(rp); /* and pf */
	else
		cp_profile_file__free(pf);
	free(note);
}

/*
 * The program is gone.  record is a child subreaper, so the watchers of the
 * run's processes (see runtime/watch.c) are its children: wait for those
 * whose program ended, at most WATCH_WAIT_MS in all, as one may still be
 * writing the profile of a killed program.  The watcher of a process that
 * runs on (a daemon) and other orphans are left alone.
 */
#define WATCH_WAIT_MS 120000

/*
 * The line /proc/PID/stat, "pid (comm) state ppid ...", into buf; a pointer
 * to the ')' that ends comm (a name may hold one itself), or NULL.
 */
static char *read_stat(long pid, char *buf, size_t cap)
{
	char path[64];
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	p = fgets(buf, (int)cap, f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' && p[2] ? p : NULL;
}

/*
 * Is watcher w still waiting for a program that runs (a daemon the run left
 * behind)?  Then there is nothing to wait for: it writes when that program
 * ends.  Its program is the one its pidfd names.
 */
static int watches_live_program(long w)
{
	char buf[512], *p;
	long target;

	if (cp_pidfd_targets(w, &target, 1) != 1 || target <= 0)
		return 0;
	p = read_stat(target, buf, sizeof(buf));
	return p && p[2] != 'Z';
}

/* One child of ours that is a watcher whose program ended, or 0. */
static pid_t find_watcher(void)
{
	pid_t self = getpid(), found = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && !found && (e = readdir(d))) {
		char buf[512], *p;
		pid_t pid = (pid_t)strtol(e->d_name, &p, 10);

		if (pid <= 0 || *p)
			continue;
		p = read_stat(pid, buf, sizeof(buf));
		/* the name and the parent in one read */
		if (p && strtol(p + 4, NULL, 10) == self && p - buf >= 15 &&
		    !strncmp(p - 15, "(callprof-watch", 15) &&
		    (p[2] == 'Z' || !watches_live_program(pid)))
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

static void wait_for_watchers(void)
{
	struct timespec t0, now, nap = { 0, 5000000 };
	pid_t pid;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((pid = find_watcher())) {
		while (waitpid(pid, &status, WNOHANG | __WALL) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >
			    WATCH_WAIT_MS)
				return;
			nanosleep(&nap, NULL);
		}
	}
}

/* Other orphans that ended meanwhile. */
static void reap_orphans(void)
{
	int status;

	while (waitpid(-1, &status, WNOHANG | __WALL) > 0)
		;
}

/*
 * Processes of the run that run on after the program ended (a daemon that
 * forked and left its parent to exit): record returns, and they write
 * their profiles (FILE.PID) when they end.  They are ours now (we are a
 * child subreaper): our children and theirs that have the runtime mapped,
 * and the programs our watchers wait for (those ran instrumented code).
 */
#define RUNNING_MAX 64

struct running {
	pid_t pid[RUNNING_MAX];
	size_t n;	/* found, may exceed RUNNING_MAX (the rest are counted only) */
};

/* Does pid have the runtime mapped? */
static int has_runtime(long pid)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libcallprof") != NULL;
	if (f)
		fclose(f);
	return found;
}

static void add_running(struct running *r, long pid)
{
	for (size_t i = 0; i < r->n && i < RUNNING_MAX; i++)
		if (r->pid[i] == pid)
			return;
	if (r->n < RUNNING_MAX)
		r->pid[r->n] = (pid_t)pid;
	r->n++;
}

/*
 * pid, if it runs on with the runtime and an instrumented executable (an
 * uninstrumented one, a shell or a sleep, writes nothing), and its
 * descendants (depth levels more).
 */
static void add_tree(struct running *r, long pid, int depth)
{
	char path[64], buf[512], *p;
	struct dirent *e;
	DIR *d;

	p = read_stat(pid, buf, sizeof(buf));
	if (!p || p[2] == 'Z' || p[2] == 'X')
		return;
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	if (has_runtime(pid) && cp_elf_is_instrumented(path) == 1)
		add_running(r, pid);
	if (!depth)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char children[4096], *s, *end;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(children, sizeof(children), "/proc/%ld/task/%s/children", pid, e->d_name);
		f = fopen(children, "r");
		s = f && fgets(children, sizeof(children), f) ? children : NULL;
		if (f)
			fclose(f);
		for (long c; s && (c = strtol(s, &end, 10)) > 0; s = end)
			add_tree(r, c, depth - 1);
	}
	if (d)
		closedir(d);
}

static void find_running(struct running *r, pid_t ended)
{
	pid_t self = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;

	r->n = 0;
	while (d && (e = readdir(d))) {
		char buf[512], *p;
		long pid = strtol(e->d_name, &p, 10), target;

		if (pid <= 0 || *p || pid == ended)
			continue;
		p = read_stat(pid, buf, sizeof(buf));
		if (!p || strtol(p + 4, NULL, 10) != self || p[2] == 'Z')
			continue;
		/* A watcher's program has run instrumented code: it writes. */
		if (p - buf >= 15 && !strncmp(p - 15, "(callprof-watch", 15)) {
			p = cp_pidfd_targets(pid, &target, 1) == 1 && target != ended ?
				    read_stat(target, buf, sizeof(buf)) : NULL;
			if (p && p[2] != 'Z' && p[2] != 'X')
				add_running(r, target);
			continue;
		}
		add_tree(r, pid, 3);
	}
	if (d)
		closedir(d);
}

/* The name of process pid (its comm), control characters as '?', into name[cap]. */
static void process_name(pid_t pid, char *name, size_t cap)
{
	char buf[512], *end = read_stat(pid, buf, sizeof(buf)), *start = strchr(buf, '(');
	size_t n = 0;

	if (end && start && start < end)
		for (start++; start < end && n + 1 < cap; start++)
			name[n++] = (unsigned char)*start < 0x20 || *start == 0x7f ? '?' : *start;
	name[n] = '\0';
}

/*
 * Say which processes of the run run on, what each will write and how to
 * get a profile now: record does not wait for them.
 */
static void list_running(const char *shown, pid_t ended)
{
	struct running r;
	struct strbuf text = STRBUF_INIT;

	find_running(&r, ended);
	if (!r.n)
		return;
	for (size_t i = 0; i < r.n && i < 3; i++) {
		char name[64];

		process_name(r.pid[i], name, sizeof(name));
		strbuf_addf(&text, "%s %s (pid %d) will write %s.%d", i ? "," : "", name,
			    (int)r.pid[i], shown, (int)r.pid[i]);
	}
	fprintf(stderr, "callprof: %zu process%s of the run %s on:%s%s; 'callprof dump PID' "
			"writes a snapshot now\n", r.n, r.n == 1 ? "" : "es", r.n == 1 ? "runs" : "run",
		text.buf, r.n > 3 ? ", ..." : "");
	strbuf_release(&text);
}

static char *make_status_file(void)
{
	const char *dir = getenv("TMPDIR");
	char *path = xstrfmt("%s/callprof-status.XXXXXX", dir && *dir == '/' ? dir : "/tmp");
	int fd = mkstemp(path);

	if (fd < 0 || strlen(path) >= 256) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		free(path);
		return NULL; /* then record guesses, as without it */
	}
	close(fd);
	return path;
}

static void read_status_file(const char *path, struct run_status *rs)
{
	char line[64], what[16];
	FILE *f = path ? fopen(path, "r") : NULL;
	int e;

	memset(rs, 0, sizeof(*rs));
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %d", what, &e) != 2)
			continue;
		if (!strcmp(what, "write"))
			rs->wrote_error = 1;
		else if (!strcmp(what, "watch") && e > 0)
			rs->watch_errno = e;
		else if (!strcmp(what, "rights"))
			rs->rights = 1;
		else if (!strcmp(what, "empty"))
			rs->empty = 1;
		else if (!strcmp(what, "seccomp"))
			rs->seccomp = 1;
	}
	if (f)
		fclose(f);
}

/*
 * --sample: sample the program unless it was built with
 * -finstrument-functions (its runtime samples then, see runtime/).  A
 * program that cannot be found goes the instrumented way, which says so
 * in the usual words; a file that is not ELF (a script) is sampled, as
 * what it runs cannot be instrumented either.
 */
static int want_sampler(const char *prog)
{
	char *path = cp_find_program(prog);
	int ret = path ? cp_elf_is_instrumented(path) : -ENOENT;

	free(path);
	return ret == 0 || (ret < 0 && ret != -ENOENT);
}

/* --sample's rate, 0 for a bare --sample (each sampler's default). */
static unsigned parse_hz(const char *arg)
{
	uint64_t hz;

	if (!*arg)
		return 0;
	if (cp_parse_u64(arg, &hz) || hz < 1 || hz > CP_SAMPLE_MAX_HZ)
		cp_usage_error(record_usage, "--sample wants a rate from 1 to %d Hz, not '%s'",
			       CP_SAMPLE_MAX_HZ, arg);
	return (unsigned)hz;
}

/* --dump-on: a signal by name (USR2, SIGUSR2, RTMIN+1 not) or number. */
static int parse_signal(const char *arg)
{
	const char *name = strncasecmp(arg, "SIG", 3) ? arg : arg + 3;
	uint64_t num;

	if (!cp_parse_u64(arg, &num) && num > 0 && num < (uint64_t)NSIG && num != SIGKILL &&
	    num != SIGSTOP)
		return (int)num;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);

		if (abbrev && !strcasecmp(abbrev, name) && sig != SIGKILL && sig != SIGSTOP)
			return sig;
	}
	cp_usage_error(record_usage, "--dump-on wants a signal that can be caught (USR2, "
		       "SIGUSR2 or 12), not '%s'", arg);
}

/*
 * Would the cpu runtime get its events?  It opens one in each thread
 * (runtime/offcpu.c, cp_offcpu__thread_start); we open the same on
 * ourselves and close it.  The program inherits our seccomp filter,
 * capabilities and the machine's perf_event_paranoid, so its answer is
 * ours.  0, or the errno of the refusal.
 */
int cp_probe_cpu_sampling(unsigned hz, int switches)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.sample_period = 1000000000u / hz;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.sample_id_all = 1;
	a.context_switch = switches != 0;
	fd = syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno ? errno : EINVAL;
	close((int)fd);
	return 0;
}

/* --mode and --time into one mode; cpu when neither says. */
static int resolve_mode(int mode, int time)
{
	static const int time_mode[] = { REC_CPU, REC_TIMING, REC_COUNTING };

	if (mode >= 0 && time >= 0 && mode_time[mode] != time)
		cp_usage_error(record_usage, "--mode=%s and --time=%s disagree: --mode=%s takes %s",
			       mode_choices[mode], time_choices[time], mode_choices[mode],
			       mode_time[mode] == TIME_NONE  ? "no time (--time=none)" :
			       mode_time[mode] == TIME_CLOCK ? "its times from the clock (--time=clock)" :
							       "sampled CPU time (--time=cpu)");
	if (mode >= 0)
		return mode;
	return time >= 0 ? time_mode[time] : REC_CPU;
}

struct relay {
	struct sigaction intr, quit, term, hup;
};

/* Like time(1): the terminal's ^C/^\ reach the child directly; relay the rest. */
static void relay_signals(struct relay *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old->intr);
	sigaction(SIGQUIT, &sa, &old->quit);
	sa.sa_handler = forward_signal;
	sigaction(SIGTERM, &sa, &old->term);
	sigaction(SIGHUP, &sa, &old->hup);
}

static void restore_signals(const struct relay *old)
{
	sigaction(SIGINT, &old->intr, NULL);
	sigaction(SIGQUIT, &old->quit, NULL);
	sigaction(SIGTERM, &old->term, NULL);
	sigaction(SIGHUP, &old->hup, NULL);
}

/* The program's exit status as ours: the same code, or the same signal. */
static int exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit nocore = { 0, 0 };

		fflush(NULL);
		/* Die the same way, so the caller sees the same status; no second core. */
		setrlimit(RLIMIT_CORE, &nocore);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return WEXITSTATUS(status);
}

/*
 * The job record runs in (a launcher's rank, format/job.c) and the -o
 * pattern: the user's, with ".%r" put before a final ".cprof" (else at the
 * end) when a launcher gave a rank and the pattern has no %r of its own.
 */
struct out_name {
	const char *given;	/* -o as given */
	char *pattern;		/* what is expanded */
	struct cp_job job;	/* the launcher's rank, if any */
	char host[256];		/* this machine's name */
};

static const char *env_get(const char *name)
{
	return getenv(name);
}

static void out_name__init(struct out_name *on, const char *given)
{
	struct utsname un;
	size_t len = strlen(given), bad_at = 0;
	char probe[PATH_MAX];
	int ret;

	on->given = given;
	cp_job__from_env(&on->job, env_get);
	if (on->job.bad)
		cp_warning("ignoring %s='%s': not a rank the launcher would give (the profile is "
			   "named and recorded without it)", on->job.bad,
			   cp_visible(getenv(on->job.bad)));
	snprintf(on->host, sizeof(on->host), "%s", uname(&un) ? "" : un.nodename);
	if (on->job.rank != CP_NO_RANK && !cp_outname__has(given, 'r')) {
		if (len > 6 && !strcmp(given + len - 6, ".cprof"))
			on->pattern = xstrfmt("%.*s.%%r.cprof", (int)(len - 6), given);
		else
			on->pattern = xstrfmt("%s.%%r", given);
	} else {
		on->pattern = xstrdup(given);
	}
	ret = cp_outname__expand(probe, sizeof(probe), on->pattern, &on->job, on->host,
				 (unsigned long)getpid(), &bad_at);
	if (ret == -EINVAL)
		cp_usage_error(record_usage, "-o '%s': '%%%c' is no conversion (%%r rank, %%s size, "
			       "%%h host, %%p pid, %%j job id, %%%% a %%)", given,
			       given[bad_at + 1] ? given[bad_at + 1] : ' ');
	if (ret)
		cp_die("-o '%s': the name is too long", given);
}

/* The profile's name for the program of pid (-o expanded). */
static char *out_name__for(const struct out_name *on, pid_t pid)
{
	char path[PATH_MAX];

	if (cp_outname__expand(path, sizeof(path), on->pattern, &on->job, on->host,
			       (unsigned long)pid, NULL))
		cp_die("-o '%s': the name is too long", on->given);
	return xstrdup(path);
}

/*
 * Rank 0's words for the job: how the other ranks' files are named, and
 * the merge to run: "; rank 0 of 4: the other ranks write run.%r.cprof
 * beside it: callprof merge -o run.cprof run.*.cprof".  %r, %h and %p
 * differ between ranks: the glob has '*' for them, the merged name none.
 */
static char *out_name__job_note(const struct out_name *on)
{
	struct strbuf glob = STRBUF_INIT, merged = STRBUF_INIT;
	char g[PATH_MAX], m[PATH_MAX], *note;
	const char *p;

	for (p = on->pattern; *p; p++) {
		if (*p == '%' && p[1] && strchr("rhp", p[1])) {
			strbuf_addch(&glob, '*');
			/* and its separator from the merged name */
			if (merged.len && strchr(".-_", merged.buf[merged.len - 1]))
				strbuf_setlen(&merged, merged.len - 1);
			p++;
			continue;
		}
		strbuf_addch(&glob, *p);
		strbuf_addch(&merged, *p);
		if (*p == '%' && p[1]) {
			strbuf_addch(&glob, p[1]);
			strbuf_addch(&merged, *++p);
		}
	}
	if (cp_outname__expand(g, sizeof(g), glob.buf, &on->job, on->host, 0, NULL) ||
	    cp_outname__expand(m, sizeof(m), merged.buf, &on->job, on->host, 0, NULL))
		g[0] = m[0] = '\0';
	if (on->job.size)
		note = xstrfmt("; rank 0 of %u: the other ranks write %s beside it: callprof merge "
			       "-o %s %s", on->job.size, cp_visible(on->pattern), cp_visible_arg(m),
			       cp_visible(g));
	else
		note = xstrfmt("; rank 0: the other ranks write %s beside it: callprof merge -o %s %s",
			       cp_visible(on->pattern), cp_visible_arg(m), cp_visible(g));
	strbuf_release(&glob);
	strbuf_release(&merged);
	return note;
}

static void out_name__release(struct out_name *on)
{
	FREE_AND_NULL(on->pattern);
}

/*
 * The profile did not go to *path: a process that ran meanwhile had put
 * its own there (format/writer.c), so the runtime wrote one of the other
 * names.  Say so in one line, and point *path and *shown at it.
 */
static void find_other_name(char **path, char **shown, pid_t pid)
{
	struct cp_profile_file *pf, *mine;
	char err[1024], other[PATH_MAX];
	int n;

	pf = cp_profile_file__open(*path, err, sizeof(err), NULL);
	if (pf && pf->meta.pid == (uint32_t)pid)
		goto out;
	for (n = 1; n < 32; n++) {
		if (cp_writer__other_name(other, sizeof(other), *path, (unsigned long)pid, n))
			goto out;
		mine = cp_profile_file__open(other, err, sizeof(err), NULL);
		if (mine && mine->meta.pid == (uint32_t)pid)
			break;
		cp_profile_file__free(mine);
		if (access(other, F_OK))
			goto out;
	}
	if (n == 32)
		goto out;
	{
		char *shown_other;
		const char *slash = strrchr(*shown, '/');
		const char *base = strrchr(other, '/') + 1;

		shown_other = slash ? xstrfmt("%.*s%s", (int)(slash - *shown + 1), *shown, base)
				    : xstrdup(base);
		if (pf && pf->job)
			fprintf(stderr, "callprof: %s was written meanwhile by process %" PRIu32
					" (rank %" PRIu32 "): wrote %s\n", cp_visible(*shown),
				pf->meta.pid, pf->job->rank, cp_visible(shown_other));
		else if (pf)
			fprintf(stderr, "callprof: %s was written meanwhile by process %" PRIu32
					": wrote %s\n", cp_visible(*shown), pf->meta.pid,
				cp_visible(shown_other));
		else
			fprintf(stderr, "callprof: %s was written meanwhile, not by callprof: wrote "
					"%s\n", cp_visible(*shown), cp_visible(shown_other));
		free(*shown);
		*shown = shown_other;
		free(*path);
		*path = xstrdup(other);
	}
	cp_profile_file__free(mine);
out:
	cp_profile_file__free(pf);
}

/* A program that could not be started has said so; no profile to talk about. */
static int not_started(int status, const char *outabs, int have_before)
{
	return WIFEXITED(status) && (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126) &&
	       access(outabs, F_OK) && !have_before;
}

/* How a run under a launcher speaks: rank 0 for the job, the others only of trouble. */
static void job_voice(struct run_info *ri, const struct out_name *on, char **note)
{
	if (on->job.rank == CP_NO_RANK)
		return;
	ri->quiet = on->job.rank != 0;
	if (!ri->quiet)
		ri->job_note = *note = out_name__job_note(on);
}

static int record_sampled(const char **argv, const struct out_name *on, char *out, char *outabs,
			  unsigned hz, int call_graph)
{
	/* The sampler reads the name when it writes: a %p is known after the start. */
	char path[PATH_MAX];
	struct cp_sample_opts so = { .hz = hz, .unwind = call_graph, .out = path };
	struct cp_sampler *s;
	struct stat before, before_link;
	struct timespec start;
	struct relay old;
	struct strbuf others = STRBUF_INIT;
	int have_before, have_link;
	int status, errors;
	char *note = NULL, *given = NULL;
	struct run_info ri = { .prog = argv[0] };

	snprintf(path, sizeof(path), "%s", outabs);
	have_before = !stat(outabs, &before);
	have_link = !lstat(outabs, &before_link);
	clock_gettime(CLOCK_REALTIME, &start);
	s = cp_sampler__start(&so, argv);
	if (!s) {
		free(out);
		free(outabs);
		return 1;
	}
	child_pid = cp_sampler__pid(s);
	if (cp_outname__has(on->pattern, 'p')) {
		free(out);
		free(outabs);
		out = out_name__for(on, child_pid);
		outabs = absolute(out);
		snprintf(path, sizeof(path), "%s", outabs);
		have_before = have_link = 0; /* named after the program: nothing was there */
	}
	relay_signals(&old);
	cp_sampler__run(s, &status);
	restore_signals(&old);
	errors = cp_sampler__finish(s);
	ri.pid = child_pid;
	cp_sampler__free(s);
	given = xstrdup(outabs);
	if (!access(outabs, F_OK))
		find_other_name(&outabs, &out, child_pid);
	ri.shown = out;
	ri.path = outabs;
	ri.before = have_before && !strcmp(given, outabs) ? &before : NULL;
	ri.before_link = have_link && !strcmp(given, outabs) ? &before_link : NULL;
	job_voice(&ri, on, &note);
	ri.others = other_profiles(out, given, &start, outabs, &others);
	if (!errors && !not_started(status, outabs, have_before))
		summarize(&ri, NULL, 0);
	if (!ri.quiet)
		list_other_profiles(ri.others, &others);
	strbuf_release(&others);
	free(note);
	free(given);
	free(out);
	free(outabs);
	return exit_like(status);
}

int cmd_record(int argc, const char **argv)
{
	const char *out = "callprof.out", *sample = NULL, *max_depth = NULL, *budget = NULL,
		   *dump_on = NULL;
	char *filter = NULL;
	struct cp_select sel = { 0 };
	char *lib = NULL, *outabs = NULL, *preload = NULL, *status_path = NULL, *shown = NULL;
	char *given = NULL, *note = NULL;
	struct out_name on = { 0 };
	struct run_status rs;
	siginfo_t si;
	const char *old_preload = getenv("LD_PRELOAD");
	struct stat before, before_link;
	struct run_info ri = { 0 };
	struct strbuf others = STRBUF_INIT;
	struct timespec start;
	struct relay old;
	int have_before, status, n, mode = -1, time_src = -1, clock = 0, call_graph = -1, no_offcpu = 0;
	int libcalls = 0, dump_sig = 0, perf_refused = 0, ret;
	unsigned hz = 0;
	const struct cp_option opts[] = {
		{ CP_OPT_STRING, 'o', "output", &out, "FILE",
		  "write the profile to FILE (default callprof.out): %r rank, %s size, %h host, "
		  "%p pid, %j job id, %% a %; under a launcher, .%r goes before .cprof if not given" },
		{ CP_OPT_CHOICE, 0, "time", &time_src, "SOURCE",
		  "cpu (default): CPU time sampled per call path (perf events; the clock if the "
		  "kernel refuses them); clock: every call timed, with min/max; none: counts only",
		  time_choices },
		{ CP_OPT_CHOICE, 0, "mode", &mode, "MODE",
		  "cpu (default, --time=cpu): exact counts, sampled CPU time; timing "
		  "(--time=clock): counts and clock times per call; counting (--time=none): "
		  "counts only; coverage: which functions ran", mode_choices },
		{ CP_OPT_CHOICE, 0, "clock", &clock, "CLOCK",
		  "auto (default: tsc if invariant, else monotonic), tsc (ordered reads), "
		  "tsc-fast (unordered: cheaper, less exact per call), monotonic", clock_choices },
		{ CP_OPT_FLAG, 0, "no-offcpu", &no_offcpu, NULL,
		  "do not track context switches (no wait/inactive split)" },
		{ CP_OPT_FLAG, 0, "libcalls", &libcalls, NULL,
		  "also record calls into libraries that are not instrumented (libc, libm, ...); "
		  "sets LD_BIND_NOW" },
		{ CP_OPT_OPTARG, 0, "sample", &sample, "HZ",
		  "instrumented program: sample its CPU time HZ times a second (--time=cpu, default "
		  "3989; --time=clock adds samples of the running line, default 997); others: "
		  "sample their call stacks (default 997), as they need" },
		{ CP_OPT_STRING, 0, "dump-on", &dump_on, "SIG",
		  "signal SIG (e.g. USR2, SIGUSR2 or 12) makes the program's watcher write a "
		  "snapshot to FILE.dumpN; the program runs on" },
		{ CP_OPT_CHOICE, 0, "call-graph", &call_graph, "HOW",
		  "with --sample: dwarf (default: unwind stack copies with CFI), "
		  "fp (frame pointers)", call_graph_choices },
		{ CP_OPT_LIST, 0, "include", &sel.include, "PATTERN",
		  "record only the functions PATTERN names (a name, unqualified or without parameters, "
		  "or a glob; repeatable)" },
		{ CP_OPT_LIST, 0, "exclude", &sel.exclude, "PATTERN",
		  "no node for matching functions: their time goes to the caller, their callees "
		  "hang under it" },
		{ CP_OPT_LIST, 0, "exclude-tree", &sel.exclude_tree, "PATTERN",
		  "leave out matching functions and everything they call" },
		{ CP_OPT_FLAG, 0, "regex", &sel.regex, NULL,
		  "name patterns are POSIX extended regular expressions, not globs" },
		{ CP_OPT_LIST, 0, "exclude-file", &sel.exclude_file, "GLOB",
		  "exclude the functions declared in matching source files" },
		{ CP_OPT_LIST, 0, "exclude-module", &sel.exclude_module, "GLOB",
		  "exclude the functions of matching modules (file names, e.g. 'libfoo.so*')" },
		{ CP_OPT_LIST, 0, "start", &sel.start, "FN",
		  "record only while a matching function is open (each thread)" },
		{ CP_OPT_STRING, 0, "max-depth", &max_depth, "N",
		  "fold calls deeper than N into their context at depth N" },
		{ CP_OPT_STRING, 0, "budget", &budget, "PCT",
		  "with --time=clock: make contexts whose calls cost less than their timing would "
		  "(at PCT% overhead) count-only after 1024 calls" },
		{ CP_OPT_END },
	};

	n = cp_parse_options(argc, argv, opts, record_usage, CP_OPT_STOP_AT_NONOPTION);
	if (n == 0)
		cp_usage_error(record_usage, "record needs a program to run");
	if (!*out)
		cp_usage_error(record_usage, "-o needs a file name");
	if (call_graph >= 0 && !sample)
		cp_usage_error(record_usage, "--call-graph needs --sample");
	if (sample)
		hz = parse_hz(sample);
	mode = resolve_mode(mode, time_src);
	if (dump_on)
		dump_sig = parse_signal(dump_on);
	cp_select__parse(&sel, max_depth, budget, mode == REC_COVERAGE, mode == REC_TIMING,
			 record_usage);
	/* The runtime could only say so at the end, after the whole run. */
	{
		char *prog = cp_find_program(argv[0]);

		cp_outfile__add_input(prog);
		free(prog);
	}
	out_name__init(&on, out);
	shown = out_name__for(&on, getpid()); /* the program's pid, for %p, after the fork */
	if (cp_outfile__check(shown, CP_OUTFILE_RENAME)) {
		ret = 1;
		goto out;
	}
	outabs = absolute(shown);
	if (sample && want_sampler(argv[0])) {
		ret = record_sampled(argv, &on, shown, outabs, hz ? hz : CP_SAMPLE_DEFAULT_HZ,
				     call_graph < 0 ? 0 : call_graph);
		shown = outabs = NULL; /* freed there */
		goto out;
	}
	if (mode == REC_CPU) {
		int err = cp_probe_cpu_sampling(hz ? hz : CPU_DEFAULT_HZ, !no_offcpu);

		/*
		 * Clock times are worth more than no times, also when --time=cpu
		 * was asked for: fall back, and say so.
		 */
		if (err) {
			cp_warning("CPU-time sampling unavailable: perf_event_open: %s; timing each "
				   "call with the clock instead (--time=clock: times include the "
				   "hooks' cost)", strerror(err));
			mode = REC_TIMING;
			hz = 0; /* timing's samples would be refused too */
			perf_refused = 1;
		}
	} else if (mode == REC_TIMING && sample && !hz) {
		hz = CP_SAMPLE_DEFAULT_HZ;
	}
	lib = cp_find_runtime(mode_libs[mode]);
	if (!lib)
		cp_die("cannot find %s next to callprof or in ../lib/callprof "
		    "(set CALLPROF_LIB to the path of libcallprof.so)", mode_libs[mode]);
	if (cp_select__write(&sel, argv[0], &filter)) {
		ret = 1;
		goto out;
	}
	/* Before the fork: a short program may have written its profile by the time we look. */
	have_before = !stat(outabs, &before);
	if (!lstat(outabs, &before_link))
		ri.before_link = &before_link;
	status_path = make_status_file();
	preload = old_preload && *old_preload ? xstrfmt("%s:%s", lib, old_preload) : xstrdup(lib);

	/* The watchers of ended processes come to us (see wait_for_watchers). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	clock_gettime(CLOCK_REALTIME, &start);
	fflush(NULL);
	child_pid = fork();
	if (child_pid < 0) {
		int err = errno;

		if (filter)
			unlink(filter);
		if (status_path)
			unlink(status_path);
		cp_die("cannot fork: %s", strerror(err));
	}
	if (child_pid == 0) {
		char pid[32];
		char *mine = absolute(out_name__for(&on, getpid()));

		if (status_path)
			setenv("CALLPROF_STATUS", status_path, 1);
		cp_signals__restore_for_exec();
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("LD_PRELOAD", preload, 1);
		setenv("CALLPROF_OUT", mine, 1);
		setenv("CALLPROF_ROOT_PID", pid, 1);
		if (clock)
			setenv("CALLPROF_CLOCK", clock_choices[clock], 1);
		if (no_offcpu)
			setenv("CALLPROF_OFFCPU", "0", 1);
		if (filter)
			setenv("CALLPROF_FILTER", filter, 1);
		if (libcalls) {
			/*
			 * Every GOT slot must hold its final target when the
			 * runtime starts: the runtime redirects resolved slots only.
			 */
			setenv("CALLPROF_LIBCALLS", "1", 1);
			setenv("LD_BIND_NOW", "1", 1);
		}
		if (dump_sig) {
			char sig[16];

			snprintf(sig, sizeof(sig), "%d", dump_sig);
			setenv("CALLPROF_DUMP_ON", sig, 1);
		}
		if (hz) {
			/* An instrumented program: its runtime samples (hybrid mode). */
			char rate[16];

			snprintf(rate, sizeof(rate), "%u", hz);
			setenv("CALLPROF_SAMPLE", rate, 1);
		}
		execvp(argv[0], (char *const *)argv);
		cp_error("cannot run '%s': %s", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}

	if (cp_outname__has(on.pattern, 'p')) {
		free(shown);
		free(outabs);
		shown = out_name__for(&on, child_pid);
		outabs = absolute(shown);
		/* A name with the program's pid in it: nothing was there before it ran. */
		have_before = 0;
		ri.before_link = NULL;
	}
	relay_signals(&old);
	/*
	 * The program stays unreaped (WNOWAIT) until its watcher is done:
	 * the watcher reads its credentials in /proc (runtime/creds.c).
	 */
	while (waitid(P_PID, (id_t)child_pid, &si, WEXITED | WNOWAIT) < 0) {
		if (errno != EINTR)
			cp_die("waitid: %s", strerror(errno));
	}
	wait_for_watchers();
	while (waitpid(child_pid, &status, 0) < 0) {
		if (errno != EINTR)
			cp_die("waitpid: %s", strerror(errno));
	}
	reap_orphans();
	restore_signals(&old);
	if (filter)
		unlink(filter);

	read_status_file(status_path, &rs);
	if (status_path)
		unlink(status_path);
	given = xstrdup(outabs);
	if (!access(outabs, F_OK))
		find_other_name(&outabs, &shown, child_pid);
	if (strcmp(given, outabs))
		ri.before_link = NULL, have_before = 0; /* nothing was at the other name */
	ri.shown = shown;
	ri.path = outabs;
	ri.prog = argv[0];
	ri.pid = child_pid;
	ri.before = have_before ? &before : NULL;
	ri.wall_ns = elapsed_ns(&start);
	job_voice(&ri, &on, &note);
	ri.others = other_profiles(shown, given, &start, outabs, &others);
	if (!not_started(status, outabs, have_before))
		summarize(&ri, &rs, perf_refused);
	if (!ri.quiet)
		list_other_profiles(ri.others, &others);
	list_running(shown, child_pid);
	ret = exit_like(status);
out:
	strbuf_release(&others);
	if (status_path)
		unlink(status_path);
	free(status_path);
	free(lib);
	free(outabs);
	free(shown);
	free(given);
	free(note);
	out_name__release(&on);
	free(preload);
	free(filter);
	cp_select__release(&sel);
	return ret;
}
