/*
 * report.h - the profile model the views and exporters work on.
 *
 * A loaded profile is a set of call trees (one per thread, or one for all
 * threads merged), with ticks already converted to nanoseconds and
 * exclusive (self) time derived as inclusive minus the children's
 * inclusive.  Within one profile functions are identified by address (one
 * profile = one process, so equal addresses are equal functions across
 * threads) and named once through the symbolizer; across profiles
 * (merge.c) by name.
 */
#ifndef CP_REPORT_REPORT_H
#define CP_REPORT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "format/format.h"

struct cp_profile_file;
struct cp_symbolizer;
struct cp_sym_images;

#define CP_NONE UINT32_MAX

/*
 * The call site of a function inlined into its caller: its hooks get the
 * caller's own return address (-finstrument-functions evaluates
 * __builtin_return_address(0) in the function it was inlined into), so the
 * line it was called from is not known.  Not an address: those are above
 * 4096.
 */
#define CP_SITE_INLINED 1

struct cp_rnode {
	uint32_t fn;	      /* index into profile->fns; CP_NONE for a tree's root */
	uint32_t parent;      /* CP_NONE for the root */
	uint32_t first_child; /* CP_NONE if a leaf */
	uint32_t next;	      /* next sibling, CP_NONE if last */
	uint32_t depth;	      /* root 0, top-level functions 1 */
	uint64_t site;	      /* a call site (return address) of this context; of
			       * several files, its address in their common space */
	uint64_t calls;	      /* times entered */
	uint64_t open_at_start; /* calls open when callprof attach began: entered
				 * before the window, not in calls (their time
				 * in the window is in total_ns) */
	uint64_t total_ns;    /* inclusive time */
	uint64_t self_ns;     /* exclusive time: total minus the children's totals */
	uint64_t min_ns;      /* shortest call (0 if unknown) */
	uint64_t max_ns;      /* longest call */
	/*
	 * Off-CPU time (0 where not measured, cp_report_profile.split): the
	 * file gives it per context as the innermost open call (self_*); the
	 * inclusive figures are the sums over the subtree.
	 */
	uint64_t wait_ns;	   /* blocked, in the subtree */
	uint64_t inactive_ns;	   /* preempted while runnable, in the subtree */
	uint64_t self_wait_ns;	   /* blocked while this context was the innermost call */
	uint64_t self_inactive_ns; /* preempted while it was */
	uint64_t switches_vol;	   /* voluntary switches (blocks) in the subtree */
	uint64_t switches_invol;   /* involuntary switches (preemptions) in the subtree */
	uint64_t self_switches_vol;   /* those while it was the innermost call */
	uint64_t self_switches_invol;
	/*
	 * Sampled CPU time (cp_report_profile.cpu_sampled): the samples its
	 * CPU time rests on, in the subtree and while it was the innermost
	 * call (self cpu = self_samples x the period).
	 */
	uint64_t samples;
	uint64_t self_samples;
	uint64_t overhead_ns; /* hook overhead subtracted from total_ns (compensation) */
	uint64_t self_overhead_ns; /* the part of it subtracted from self_ns */
	uint32_t sites;	      /* first of its call sites in the tree's sites[] when it
			       * was called from more than one (else CP_NONE: site is
			       * the one) */
	uint32_t untimed;     /* count-only (record --budget): its total is its
			       * children's, its own time is its caller's self */
	uint32_t uninstrumented; /* CP_MODE_CPU: made from samples in code without
				  * hooks (a library function, [kernel]) under a
				  * context: no calls counted there, no call path */
};

/*
 * One call site of a context called from several: the calls that returned
 * to site, and their inclusive time.  Self time is not known per site (the
 * children are the context's, whichever site it was called from).  The
 * sites of a context add up to its calls and total.
 */
struct cp_rsite {
	uint64_t site;	      /* return address into the caller */
	uint64_t calls;	      /* calls from there */
	uint64_t total_ns;    /* their inclusive time */
	uint64_t overhead_ns; /* compensation taken off total_ns */
	uint32_t next;	      /* the context's next site, CP_NONE after the last */
};

/*
 * How a context of a merged profile (callprof merge) varied across its
 * inputs: minima over the inputs it appears in (inputs of them), maxima.
 * Where inputs is below the profile's ninputs the context was absent
 * from some, so its real minimum is 0 (cp_rspread_min).  The node's own
 * figures are the sums; the mean is the sum over ninputs.
 *
 * With dist (files merged by a version 9 callprof, not folded by a
 * filter), also the distribution a per-rank view needs: the input (index
 * into the profile's INPUTS) holding each extreme, of equal values the
 * lowest; the lowest input that never entered the context; and self CPU
 * time (cp_rnode__self_cpu, the exclusive part of the default weight) per
 * input, with its sum and the sums of squares, exact (struct
 * cp_spread_rec).
 */
struct cp_rspread {
	uint32_t inputs;
	uint32_t dist; /* the fields below min_calls_in are known */
	uint64_t min_calls, max_calls;
	uint64_t min_total_ns, max_total_ns;
	uint64_t min_self_ns, max_self_ns;
	uint32_t min_calls_in, max_calls_in; /* the inputs holding them */
	uint32_t min_total_in, max_total_in;
	uint32_t min_self_in, max_self_in;
	uint32_t min_cpu_in, max_cpu_in;
	uint32_t absent; /* lowest input that never entered it, CP_NONE if all did */
	uint64_t min_cpu_ns, max_cpu_ns, sum_cpu_ns;
	unsigned __int128 sumsq_calls, sumsq_cpu;
};

static inline uint64_t cp_rspread_min(const struct cp_rspread *s, uint32_t ninputs, uint64_t min)
{
	return s->inputs < ninputs ? 0 : min;
}

/*
 * The input holding the minimum over all ninputs inputs (cp_rspread_min),
 * given the minimum over those that entered (min) and its holder (in): of
 * the inputs with 0 (the absent ones too), the lowest.
 */
static inline uint32_t cp_rspread_min_input(const struct cp_rspread *s, uint32_t ninputs,
					    uint64_t min, uint32_t in)
{
	if (s->inputs == ninputs || s->absent == CP_NONE)
		return in;
	return min == 0 && in < s->absent ? in : s->absent;
}

struct cp_rtree {
	char *label;	       /* "all threads", or the thread's label */
	uint32_t tid;	       /* 0 for merged */
	uint32_t nthreads;     /* threads in this tree */
	struct cp_rnode *n;    /* n[0] is the root */
	uint32_t nn;	       /* nodes */
	uint32_t alloc;	       /* allocated */
	struct cp_rsite *sites; /* call sites of contexts with several (cp_rnode.sites) */
	uint32_t nsites, sites_alloc;
	struct cp_rspread *spread; /* merged profiles: per node, else NULL */
	uint32_t nspread;	   /* entries in spread */
	uint64_t cpu_ns;	   /* CPU time the kernel counted for its threads */
	uint32_t cpu_unknown;	   /* its threads without that count (cpu_ns is
				    * then not the whole) */
};

/*
 * CPU time: total less the off-CPU time, computed after compensation and
 * clamped at 0 (compensation takes hook overhead off the total only, so a
 * context that mostly waited can come out with more wait than total).
 */
static inline uint64_t cp_cpu_ns(uint64_t total_ns, uint64_t wait_ns, uint64_t inactive_ns)
{
	uint64_t off = wait_ns + inactive_ns;

	return total_ns > off ? total_ns - off : 0;
}

static inline uint64_t cp_rnode__cpu(const struct cp_rnode *n)
{
	return cp_cpu_ns(n->total_ns, n->wait_ns, n->inactive_ns);
}

static inline uint64_t cp_rnode__self_cpu(const struct cp_rnode *n)
{
	return cp_cpu_ns(n->self_ns, n->self_wait_ns, n->self_inactive_ns);
}

struct cp_rfn {
	uint64_t addr;	    /* entry address in the profiled process (of several
			     * files: in their common space, cp_symbolizer__common_addr) */
	const char *name;   /* symbolizer-owned (of several files: the profile's) */
	uint32_t flags;	    /* CP_RFN_*: not a function, but ... */
};

#define CP_RFN_SIGNAL 1u /* a signal handler's run (addr: the signal) */
#define CP_RFN_REGION 2u /* a named region, "[name]" (addr: its id in the file) */
/* CP_MODE_CPU: "[kernel]", the CPU time a context spent in the kernel (addr 0) */
#define CP_RFN_KERNEL 4u
/* Not code: no address, module or source line; its entries are not calls. */
#define CP_RFN_PSEUDO (CP_RFN_SIGNAL | CP_RFN_REGION | CP_RFN_KERNEL)

enum cp_thread_mode {
	CP_THREADS_MERGED = 0, /* equal call paths of all threads add up */
	CP_THREADS_EACH,       /* one tree per thread */
};

struct cp_report_opts {
	enum cp_thread_mode threads;
	const char *const *debug_dirs; /* passed to the symbolizer */
	int no_compensate;	       /* keep raw times (hook overhead included) */
	uint32_t pid;		       /* load_many: only the profiles of this pid (0: all) */
	const char *symfs;	       /* passed to the symbolizer */
	int mangled;		       /* raw symbol names */
	int addresses;		       /* names get " [MODULE+0xOFFSET]" */
	int unnamed;		       /* leave cp_rfn.name NULL and trees unsorted
					* (callprof merge names functions itself) */
	/*
	 * --threads selectors, NULL-terminated (NULL: every thread): a thread
	 * id, or a glob on a thread's name or label.  Only the threads one of
	 * them picks are loaded; load_many fails if one picks no thread.
	 */
	const char *const *select_threads;
	int no_files;		       /* read no file but the profile: no ELF, DWARF or
					* source (names MODULE+0xOFFSET; the fuzzers) */
	int quiet;		       /* no warnings about symbols (record's summary:
					* report gives them) */
	struct cp_sym_images *images;  /* load modules into this set (load_many), or NULL */
};

/*
 * One file of several (load_many): what the banner and json's "processes"
 * say of it, copied, since the file itself is not kept.
 */
struct cp_rprocess {
	char *file;	     /* its path */
	struct cp_meta meta; /* its META */
	char **argv;	     /* its command line, argc entries */
	uint32_t argc;
	char *exe;	     /* the executable, or NULL */
	char *hostname;	     /* the machine, or NULL */
	struct cp_job_rec job; /* its JOB record: rank CP_NO_RANK when it had none */
	char *jobid;	     /* the job's id, or NULL */
};

/*
 * Several files' sampled addresses (LINES), per context of the merged
 * trees, for report --lines: samples at ip (in the files' common address
 * space, or a CP_IP_* pseudo address) in node of tree.
 */
struct cp_rline {
	uint32_t tree, node;
	uint64_t ip;
	uint64_t samples;
	uint64_t ns;	     /* their time: each file's samples times its period */
};

struct cp_report_profile {
	struct cp_profile_file *pf;  /* the validated file */
	struct cp_symbolizer *sym;   /* names for pf's addresses */
	struct cp_rfn *fns;	     /* distinct functions */
	uint32_t nfns;
	struct cp_rtree *trees;	     /* per thread or a single merged tree */
	uint32_t ntrees;
	uint64_t calls;		     /* all calls recorded (cp_report_count_thread) */
	uint64_t paths;		     /* call paths of every thread (cp_report_count_thread) */
	uint64_t open_at_start;	     /* calls open when callprof attach began (not in calls) */
	char **thread_labels;	     /* per pf thread: name, or name/tid if ambiguous */
	enum cp_thread_mode threads; /* how trees were built */
	int timed;		     /* the profile has times (timing mode) */
	int sampled;		     /* CP_MODE_SAMPLED: calls are samples, times estimates */
	/*
	 * CP_MODE_CPU: exact calls, CPU time sampled (self cpu = self_samples x
	 * period_ns; total = self + wait + inactive + the children's totals).
	 * shares splits the file's samples (the runtime's are not in the tree).
	 */
	int cpu_sampled;
	uint64_t period_ns;
	struct cp_sample_shares shares;
	int split;		     /* off-CPU time was measured (switches on or partial):
				      * wait, inactive and cpu mean something */
	uint32_t *node_map;	     /* per NODES record of pf, its node in its tree
				      * (the thread's tree with CP_THREADS_EACH);
				      * CP_NONE where a thread was not selected or
				      * a filter dropped the context */
	uint32_t *thread_tree;	     /* per pf thread, its tree (CP_NONE: not selected) */
	char *filters;		     /* the banner's "# ..." lines for the filters in
				      * effect (--threads selectors, filter.c), or NULL */
	int addresses;		     /* names carry " [MODULE+0xOFFSET]" */
	int unnamed;		     /* loaded with opts->unnamed */
	int no_files;		     /* loaded with opts->no_files */
	uint32_t ninputs;	     /* merged by callprof merge from this many (else 0) */
	int compensated;	     /* times had hook overhead subtracted */
	double outside_ns;	     /* calibrated overhead per call, caller side */
	double inside_ns;	     /* calibrated overhead per call, callee side */
	double untimed_ns;	     /* calibrated cost of a count-only call (record --budget) */
	uint64_t excluded_calls;     /* calls of excluded functions (record --exclude) */
	uint64_t raw_ns;	     /* all roots' raw totals */
	uint64_t subtracted_ns;	     /* how much compensation took off them */
	uint32_t unsampled;	     /* threads without CPU time (perf_event_open refused) */
	uint64_t unclocked;	     /* cpu mode: kernel periods left out, beyond the threads'
				      * CPU clocks (the thread records' unclocked, summed) */
	/*
	 * Several files (load_many), folded in one at a time: memory grows with
	 * the distinct call paths, functions and modules, not with the files.
	 * pf is a summary of them that points into the first file's arrays;
	 * sym answers for their common address space, where the functions'
	 * addresses, the call sites and lines[] lie.
	 */
	uint32_t nfiles;		/* how many (0: one file) */
	struct cp_report_profile *first; /* the first, kept for pf */
	struct cp_rprocess *procs;	/* each file's facts, nfiles of them */
	struct cp_rline *lines;		/* sampled addresses, merged */
	uint32_t nlines;
	size_t lines_alloc;
	struct cp_sym_images *images;	/* the module files sym and the files' symbolizers
					 * share, owned (also of one file from load_many) */
	uint32_t fns_alloc, trees_alloc;
	char **names;		     /* "NAME (FILE)" names made to tell same-named
				      * functions apart, owned */
	uint32_t nnames;
	size_t names_alloc;
};

/*
 * A sampled figure resting on fewer samples than this is marked as
 * uncertain: its relative standard error (1/sqrt(n), Poisson) is above 1/3.
 */
#define CP_FEW_SAMPLES 10

/* A node counts as mostly overhead when compensation took over half its time. */
static inline int cp_mostly_overhead(uint64_t total_ns, uint64_t overhead_ns)
{
	return overhead_ns > total_ns;
}

/*
 * The profiler's own cost (verdict.c, docs/internals/overhead.md): a share
 * of the run at or above CP_OVERHEAD_HIGH gets record's verdict and a line
 * in diff's header.  cpu mode: the samples in callprof's hooks (and the
 * PLT stubs to them) among all the CPU time sampled, given at least
 * CP_OVERHEAD_MIN_SAMPLES samples; the clock: the compensation subtracted
 * from the raw time, less the time off the CPU where that was measured.
 */
#define CP_OVERHEAD_HIGH 0.20
#define CP_OVERHEAD_MIN_SAMPLES 100
#define CP_OVERHEAD_TOP 5	       /* functions named at most */
#define CP_OVERHEAD_MIN_FN_SHARE 0.05 /* ... each at least this share of the cost */
#define CP_OVERHEAD_COVERED 0.80      /* ... until they cover this much of it */
#define CP_OVERHEAD_TINY 10	       /* own time below this many times its hooks' cost */

/*
 * A cpu-mode profile's samples as every figure of them is printed (record's
 * summary and verdict, report's banner, diff's header, the exports' time
 * source): computed once, from rp->shares as loaded (the PLT stubs that
 * jump to the hooks already counted as the profiler's).
 */
struct cp_sample_tally {
	uint64_t program;  /* the program's CPU time: its code, the kernel's, lost */
	uint64_t kernel;   /* of program: in the kernel on its behalf */
	uint64_t lost;	   /* of program: at unknown addresses (a full ring) */
	uint64_t profiler; /* callprof's own: its runtime and the stubs to the hooks */
	double share;	   /* profiler / (program + profiler); 0 without samples */
};
void cp_report_profile__sample_tally(const struct cp_report_profile *rp,
				     struct cp_sample_tally *t);

/*
 * The profiler's share of rp's run, 0 to 1; -1 where it is not known.  In
 * cpu mode the tally's share (given CP_OVERHEAD_MIN_SAMPLES samples); with
 * the clock, the compensation subtracted from the time on the CPU.
 */
double cp_report_profile__overhead_share(const struct cp_report_profile *rp);
/* What that share is of, for its sentence: "CPU time", "clocked time on the CPU", ... */
const char *cp_report_profile__overhead_base(const struct cp_report_profile *rp);

struct cp_overhead_fn {
	uint32_t fn;	  /* index into rp->fns; CP_NONE for an excluded function */
	uint64_t addr;	  /* its entry address */
	const char *name; /* its name (symbolizer-owned) */
	int excluded;	  /* excluded at record time: no context, own time unknown */
	uint64_t calls;	  /* its calls, all contexts and threads */
	uint64_t own_ns;  /* its own time on the CPU (self cpu: off the CPU is no work) */
	double share;	  /* estimated part of the profiler's cost due to its calls */
};

struct cp_overhead {
	double share; /* cp_report_profile__overhead_share() */
	struct cp_overhead_fn top[CP_OVERHEAD_TOP]; /* the costliest tiny functions first */
	uint32_t ntop;
	/* DW_AT_producer of top[0]'s compile unit (cp_symbolizer__producer), or NULL */
	const char *producer;
	/* some of top[] were inlined by their compiler (cp_symbolizer__was_inlined) */
	int inlined;
};

/*
 * How much of rp's run was the profiler's and which tiny functions' calls
 * cost most of it: functions whose own time is under CP_OVERHEAD_TINY times
 * their hooks' estimated cost, the costliest first, each at least
 * CP_OVERHEAD_MIN_FN_SHARE, until they cover CP_OVERHEAD_COVERED.  The
 * cost is shared among functions by their calls and, in cpu mode, by where
 * the hooks' samples landed (a hook runs in its function's context or its
 * caller's).  rp must be loaded with CP_THREADS_MERGED.  0, or -1 (*ov
 * zeroed) when the profile does not say (counting mode, raw times, too few
 * samples).
 */
int cp_report_overhead(struct cp_report_profile *rp, struct cp_overhead *ov);

/*
 * The name gcc's -finstrument-functions-exclude-function-list matches for
 * a function named as the report names it (demangled as c++filt prints).
 * gcc matches substrings of its own printable name: qualified, without
 * return type or parameters, template arguments in gcc's spelling ("ns::
 * twice<long int>"); mangled names never match.  So this drops the return
 * type, parameters, template arguments and clone suffixes ("long
 * ns::twice<long>(long, int)" gives "ns::twice"); a name the list cannot
 * hold (commas, brackets) falls back to its last "::" part.  malloc'd, or
 * NULL (operators, lambdas).
 */
char *cp_exclude_name(const char *name);

/*
 * Add thread ti's calls and call paths to *calls and *paths: the one
 * definition of the figures record's summary, report's banner and diff's
 * header print.  Every node of the thread's tree but its root is a call
 * path (a path two threads took counts in each), except the records of a
 * path's other call sites and those of excluded functions; calls are those
 * of real functions (not of signal or region pseudo-frames, nor of
 * excluded functions, which the banner counts apart).
 */
void cp_report_count_thread(const struct cp_profile_file *pf, uint32_t ti, uint64_t *calls,
			    uint64_t *paths);

/*
 * Load and symbolise path.  On error prints one line (naming the file) and
 * returns NULL.
 */
struct cp_report_profile *cp_report_profile__load(const char *path,
						  const struct cp_report_opts *opts);
/* The same for a file opened already (cp_profile_file__open_mem): takes pf over.  Never NULL. */
struct cp_report_profile *cp_report_profile__from_file(struct cp_profile_file *pf,
						       const struct cp_report_opts *opts);
/*
 * Load several profiles (of one run's processes, or of several runs) as one:
 * functions are matched by name, equal call paths add up; with
 * CP_THREADS_EACH every thread of every file keeps its own tree, labelled
 * with its pid.  opts->pid keeps only that process's files.  A single file
 * loads exactly as cp_report_profile__load.  NULL after one error line.
 */
struct cp_report_profile *cp_report_profile__load_many(const char *const *paths, uint32_t n,
						       const struct cp_report_opts *opts);
void cp_report_profile__free(struct cp_report_profile *rp);

/*
 * Report-time filters, applied to a loaded profile once, before any view
 * or export, so that all of them show the same tree (filter.c):
 *
 * - focus: keep only the call paths through a function a pattern matches,
 *   with the ancestors of those functions (whose figures become those of
 *   the paths kept; the root keeps the whole thread's, the 100%);
 * - hide: merge the contexts of functions a pattern matches into their
 *   callers (self time and off-CPU time go to the caller, the children are
 *   re-parented and added to equal siblings);
 * - min_percent: fold contexts below that share of their tree's root
 *   (its weight, cp_view_filter__set_weight),
 *   with their subtree, into their parent's self time.
 *
 * Patterns match a function's name as the report prints it: globs
 * (fnmatch), or POSIX extended regular expressions with regex.
 */
struct cp_view_filter;
struct cp_view_filter *cp_view_filter__new(int regex, double min_percent);
void cp_view_filter__free(struct cp_view_filter *f);
/* Add a --focus (focus) or --hide pattern: 0, or -1 with a bad regex explained in err. */
int cp_view_filter__add(struct cp_view_filter *f, int focus, const char *pattern, char *err,
			size_t size);
/*
 * Transform rp's trees (and, for --lines, its parts') and note the
 * filters in rp->filters.  0, or -1 after one error line: a focus pattern
 * matched no function.
 */
int cp_view_filter__apply(const struct cp_view_filter *f, struct cp_report_profile *rp);

/* Name of node n of tree t ("[root]" for the root). */
const char *cp_rnode__name(const struct cp_report_profile *rp, const struct cp_rnode *n);

/*
 * The figures a view can weigh, order or compare contexts by (metric.c).
 * Inclusive metrics (a context with its subtree) and their exclusive
 * counterparts (while it was the innermost call); calls are per context.
 * Times are ns; cpu, wait and inactive need off-CPU time or sampled CPU
 * time, samples a cpu-mode profile (cp_metric__available).
 */
enum cp_metric {
	CP_METRIC_CALLS = 0,
	CP_METRIC_SELF,
	CP_METRIC_TOTAL,
	CP_METRIC_CPU,
	CP_METRIC_WAIT,
	CP_METRIC_INACTIVE,
	CP_METRIC_SAMPLES,
	CP_METRIC_SELF_CPU,
	CP_METRIC_SELF_WAIT,
	CP_METRIC_SELF_INACTIVE,
	CP_METRIC_SELF_SAMPLES,
	CP_METRIC_NR
};

/*
 * The figures every metric is made of: a context's, a table row's, a
 * function's summed over contexts, one side of a diff.  cp_figures__metric
 * is the one definition of each metric in terms of them (cpu is what is
 * left of a time once wait and inactive are taken off, cp_cpu_ns).
 */
struct cp_figures {
	uint64_t calls, total_ns, self_ns;
	uint64_t wait_ns, inactive_ns, self_wait_ns, self_inactive_ns;
	uint64_t samples, self_samples;
};

static inline uint64_t cp_figures__metric(const struct cp_figures *f, enum cp_metric m)
{
	switch (m) {
	case CP_METRIC_CALLS:
		return f->calls;
	case CP_METRIC_SELF:
		return f->self_ns;
	case CP_METRIC_CPU:
		return cp_cpu_ns(f->total_ns, f->wait_ns, f->inactive_ns);
	case CP_METRIC_WAIT:
		return f->wait_ns;
	case CP_METRIC_INACTIVE:
		return f->inactive_ns;
	case CP_METRIC_SAMPLES:
		return f->samples;
	case CP_METRIC_SELF_CPU:
		return cp_cpu_ns(f->self_ns, f->self_wait_ns, f->self_inactive_ns);
	case CP_METRIC_SELF_WAIT:
		return f->self_wait_ns;
	case CP_METRIC_SELF_INACTIVE:
		return f->self_inactive_ns;
	case CP_METRIC_SELF_SAMPLES:
		return f->self_samples;
	case CP_METRIC_TOTAL:
		return f->total_ns;
	default:
		return 0;
	}
}

/* Its name on the command line and in captions: "cpu", "self-cpu", ... */
const char *cp_metric__name(enum cp_metric m);
/* The metric named s, or -1. */
int cp_metric__lookup(const char *s);
/* m's inclusive counterpart (self-cpu: cpu; calls: calls), and exclusive one. */
enum cp_metric cp_metric__inclusive(enum cp_metric m);
enum cp_metric cp_metric__exclusive(enum cp_metric m);
/* Whether m is a time in ns (not calls or samples). */
int cp_metric__is_time(enum cp_metric m);
/* Whether rp has m (cpu-mode, off-CPU split, times at all). */
int cp_metric__available(const struct cp_report_profile *rp, enum cp_metric m);
/*
 * The metric named s if rp has it: else -1 after one error line naming
 * rp's file and listing the metrics it has (what: the option, "--sort").
 */
int cp_metric__parse(const struct cp_report_profile *rp, const char *s, const char *what);
/* The metrics rp has, comma-separated (for messages and usage). */
void cp_metric__list(const struct cp_report_profile *rp, char *buf, size_t size);
/* Node n's value of m. */
uint64_t cp_rnode__metric(const struct cp_rnode *n, enum cp_metric m);

/*
 * The weight every view and export uses unless told otherwise (the one
 * place that decides it): the inclusive metric their percentages, order,
 * pruning, flame widths, pprof's default sample type, callgrind's first
 * event and folded's default value follow.  CPU time wherever the profile
 * has it (sampled CPU time, or the off-CPU split), whatever the number of
 * threads and the machine's load: blocked time is shown beside it,
 * preempted time is never part of it.  Total (elapsed) time where off-CPU
 * time was not measured; calls without times.  If why is not NULL it gets
 * the banner's explanation (how much blocked and preempted time there was
 * and how to weigh by it), or "" where there is nothing to say.
 */
enum cp_metric cp_report_profile__weight(const struct cp_report_profile *rp, char *why,
					 size_t size);
/*
 * The weight of a comparison of a with b (diff, the tui's diff mode): the
 * two profiles' weight where they agree (CPU time where both have it),
 * else total time; calls where either has no times.
 */
enum cp_metric cp_report_profile__pair_weight(const struct cp_report_profile *a,
					      const struct cp_report_profile *b);

/*
 * min_percent's contexts are those below that share of their root's
 * weight: the profile's (cp_report_profile__weight) unless set here (its
 * inclusive form; calls and samples fold by total time).
 */
void cp_view_filter__set_weight(struct cp_view_filter *f, enum cp_metric weight);

/*
 * Sort every node's children in place (larger first by a metric, ties by
 * name; or by name), so views and exporters walk trees in a stable order.
 * The keys are the metrics' values, and CP_SORT_NAME.
 */
enum cp_sort_key {
	CP_SORT_CALLS = CP_METRIC_CALLS,
	CP_SORT_SELF = CP_METRIC_SELF,
	CP_SORT_TOTAL = CP_METRIC_TOTAL,
	CP_SORT_NAME = CP_METRIC_NR,
};
void cp_report_profile__sort(struct cp_report_profile *rp, enum cp_sort_key key);

/* Views: write to fp; return 0 or -1 after printing an error. */
/*
 * Naming functions (names.c; docs/callprof-report.1.md, NAMING FUNCTIONS):
 * the one matcher of every option that names a function.  A pattern names
 * a function by its name as shown, exactly or without " (FILE)"
 * (CP_NAME_EXACT); without parameters, return type, clone suffix and
 * template arguments (CP_NAME_NOPARAMS); by the last "::" parts of those
 * (CP_NAME_SUFFIX: "Iter::Seek", "Seek"); or as a glob (or, with regex, an
 * extended regex found in it) on any of those (CP_NAME_GLOB).  Of a set of
 * names, a pattern names those of the best rank any reaches.
 */
enum cp_name_rank {
	CP_NAME_NONE = 0,
	CP_NAME_GLOB,
	CP_NAME_SUFFIX,
	CP_NAME_NOPARAMS,
	CP_NAME_EXACT,
};

struct cp_name_pattern;

/* text compiled; NULL (and regerror's words in err[size]) for a bad regex. */
struct cp_name_pattern *cp_name_pattern__new(const char *text, int regex, char *err, size_t size);
void cp_name_pattern__free(struct cp_name_pattern *p);
const char *cp_name_pattern__text(const struct cp_name_pattern *p);
/* How p names the function called name (NULL: none). */
enum cp_name_rank cp_name_pattern__rank(const struct cp_name_pattern *p, const char *name);
/*
 * Of names[0..n) (NULL entries are none), those p names: hit[i] 1 for the
 * names of the best rank any reaches, else 0.  Returns how many.
 */
uint32_t cp_name_pattern__select(const struct cp_name_pattern *p, const char *const *names,
				 uint32_t n, uint8_t *hit);
/*
 * Up to max of names[0..n) closest to what p says (its words as a part of
 * a name, or a few letters off), "a, b, c" (", ..." when there are more),
 * malloc'd; NULL when none is close.
 */
char *cp_name_pattern__suggest(const struct cp_name_pattern *p, const char *const *names,
			       uint32_t n, uint32_t max);
/*
 * The error line for a p that names none of names[0..n) in the profile at
 * path: "no function named 'X' in profile 'P'; the closest: a, b".  -1.
 */
int cp_report_no_function(const struct cp_name_pattern *p, const char *const *names, uint32_t n,
			  const char *path);
/*
 * The functions of rp's trees that text (a regex with regex) names, as
 * indexes into rp->fns, malloc'd, *n of them; NULL after an error line
 * (cp_report_no_function, or a bad regex) when it names none.
 */
uint32_t *cp_report_profile__name_fns(struct cp_report_profile *rp, const char *text, int regex,
				      uint32_t *n);

struct cp_view_opts {
	double min_percent;	/* tree: hide nodes below this share of the root */
	const char *fields;	/* comma list, NULL for the view's default */
	enum cp_sort_key sort;	/* order of rows/children */
	const char *function;	/* callers/callees: function name */
	int srcline;		/* add the call-site column */
	int name_width;		/* shorten names longer than this (0: never) */
	/*
	 * With weight_given, the inclusive metric percentages, pruning and
	 * the percent columns follow; else the profile's
	 * (cp_report_profile__weight), which the banner explains.
	 */
	enum cp_metric weight;
	int weight_given;
};

int cp_view_tree(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);
int cp_view_flat(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);
int cp_view_callers(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);
int cp_view_callees(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);
/*
 * Sampled source lines of function o->function (profiles with LINES):
 * inside it by line, outside it by the function called.
 */
int cp_view_lines(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);
/* PLIST's readable listing by function. */
int cp_view_plist(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);
/*
 * A merged profile's call paths by imbalance (imbalance.c): -1 after one
 * error line for a profile that is not a merge of several inputs.
 */
int cp_view_imbalance(struct cp_report_profile *rp, const struct cp_view_opts *o, FILE *fp);

/*
 * How unevenly the inputs of a merged profile shared context n (spread s):
 * over all ninputs inputs (one that never entered it counts 0), of self
 * CPU time (cp_rnode__self_cpu) in a profile with times, else of calls.
 */
struct cp_imbalance {
	uint64_t imbalance;	/* sum over the inputs of (max - value): n * max - sum */
	uint64_t sum;		/* over the inputs */
	uint64_t min, max;	/* per input */
	uint32_t min_in, max_in; /* the inputs holding them (index into INPUTS; the lowest) */
	double mean, stddev;	/* per input (population standard deviation) */
};
/* Fill im: 1, or 0 where s does not hold the distribution (cp_rspread.dist). */
int cp_rspread__imbalance(const struct cp_report_profile *rp, const struct cp_rnode *n,
			  const struct cp_rspread *s, struct cp_imbalance *im);
/*
 * Input i of a merged profile as the views name it: "rank N" where its
 * rank is known, else "input I (PATH)".
 */
void cp_input_name(const struct cp_profile_file *pf, uint32_t i, char *buf, size_t size);

/* One call path of the imbalance ranking. */
struct cp_imbalance_row {
	uint32_t node;		/* in rp->trees[0] */
	struct cp_imbalance im;
};

/*
 * The ranking every imbalance view shows (report --imbalance, the html
 * page, the tui): rp's contexts with the distribution, largest imbalance
 * first (equal ones by node).  Needs a merged profile of several inputs
 * read as one tree (cp_imbalance_available).  *rows (caller frees) gets
 * *nrows entries; *unknown counts the contexts without the distribution
 * (folded by a filter, merged by an older callprof), *whole the inputs'
 * self CPU time (calls) in all of them, what imb% is a share of.
 */
void cp_imbalance_rank(const struct cp_report_profile *rp, struct cp_imbalance_row **rows,
		       uint32_t *nrows, uint32_t *unknown, uint64_t *whole);
/* Whether rp is a merged profile of several inputs read as one tree (with spreads). */
int cp_imbalance_available(const struct cp_report_profile *rp);

/* Exporters: write to fp; 0, or -1 after printing an error. */
/*
 * Folded values are exclusive (but for m total, the inclusive time asked
 * for): cpu, wait, inactive and samples are self's.
 */
int cp_export_folded(struct cp_report_profile *rp, enum cp_metric m, FILE *fp);
/*
 * Roughly how many bytes a per-path export (every context with its whole
 * path: folded, pprof, plist) writes, in time linear in the trees: per
 * context, per_context bytes plus, per frame of its path, per_frame bytes
 * and name_factor times its name's length (and its thread label with
 * --threads=each).  Quadratic in a chain's depth, so callers compare it
 * with a limit before writing terabytes.  Saturates at UINT64_MAX.
 */
uint64_t cp_export_path_bytes(const struct cp_report_profile *rp, uint64_t per_context,
			      uint64_t per_frame, uint64_t name_factor);
int cp_export_json(struct cp_report_profile *rp, FILE *fp);
/*
 * Tree number tree (one per thread with --threads=each, else the only one);
 * weight: the event written first (callgrind_annotate's and KCachegrind's
 * default).
 */
int cp_export_callgrind(struct cp_report_profile *rp, uint32_t tree, enum cp_metric weight,
			FILE *fp);
/* weight: the profile speedscope opens first (its exclusive counterpart). */
int cp_export_speedscope(struct cp_report_profile *rp, enum cp_metric weight, FILE *fp);
/* weight: the sample type written first and made the default (its exclusive part). */
int cp_export_pprof(struct cp_report_profile *rp, enum cp_metric weight, FILE *fp);
/* PLIST's tab-delimited records (docs/plist-format.md). */
int cp_export_plist(struct cp_report_profile *rp, FILE *fp);
/* The colours of the SVG's frames. */
enum cp_svg_colors {
	CP_SVG_HEAT = 0, /* by the share of the frame's width that is its own (self) */
	CP_SVG_MODULE,	 /* the hue by module, the shade by name */
};
/*
 * A flame graph, root at the bottom; icicle: root at the top.  Frames are
 * as wide as weight (its inclusive counterpart; calls: the calls below).
 * An inline script zooms and searches when a browser shows it.  Write
 * errors are left in fp's error flag for the caller, who knows the file's
 * name (as for cp_export_html).
 */
int cp_export_svg(struct cp_report_profile *rp, int icicle, enum cp_metric weight,
		  enum cp_svg_colors colors, FILE *fp);
/*
 * One self-contained interactive HTML page (flame graph, call tree, flat
 * profile, callers/callees); it needs no network.  rp gives the view the
 * page opens with (rp->threads); other, the same files loaded in the other
 * thread mode with the same filters, or NULL when the profile has one
 * thread.  Sorts their children by name.  A write error is left in fp's
 * error flag: the caller reports it with the file's name.
 */
int cp_export_html(struct cp_report_profile *rp, struct cp_report_profile *other,
		   enum cp_metric weight, FILE *fp);

/* What callprof merge made. */
struct cp_merge_result {
	uint32_t inputs;  /* profiles (those inside merged inputs counted) */
	uint32_t hosts;	  /* distinct machines */
	uint64_t calls;	  /* calls over all of them */
	uint64_t paths;	  /* distinct call paths */
};
/*
 * Merge the profiles paths[0..n) into a new profile file out (written
 * under a temporary name, renamed when complete): equal call paths (by
 * name) add up, each context keeps its spread across the inputs.  With
 * show_progress, a bar on stderr.  0, or -1 after one error line.
 */
int cp_merge_files(const char *const *paths, uint32_t n, const char *out,
		   const struct cp_report_opts *opts, int show_progress,
		   struct cp_merge_result *res);

/* Where function fn is: module and offset, source file and line (NULL/0 if unknown). */
struct cp_fn_where {
	const char *module; /* path as recorded, NULL if in no module */
	uint64_t offset;    /* address minus the module's load bias */
	const char *file;   /* source file of its entry, NULL if unknown */
	int line;	    /* its line, 0 if unknown */
};
void cp_report_profile__fn_where(struct cp_report_profile *rp, uint32_t fn,
				 struct cp_fn_where *w);
/* Call site as file and line (*file NULL if unknown); CP_SITE_INLINED gives NULL. */
void cp_report_profile__site_where(struct cp_report_profile *rp, uint64_t site,
				   const char **file, int *line);

/* Check the field list for a view before loading anything: 0 or cp_error(). */
int cp_view_check_fields(const char *fields);

#endif /* CP_REPORT_REPORT_H */
