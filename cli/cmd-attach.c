/*
 * cmd-attach.c - `callprof attach [options] PID`: exact call profiles of a
 * program built with -finstrument-functions that was started without
 * callprof, for a window of its run (docs/callprof-attach.1.md).
 *
 * The checks (attach-check.c) come first and change nothing; the attaching
 * itself is attach-ptrace.c's.  Record's options that make sense for a
 * process that already runs are accepted with record's meaning: the mode
 * and time source, the clock, the off-CPU split, the sampling rate and the
 * record-time selection.  What only a program's start can give is refused
 * with a line saying so (--libcalls needs every GOT slot bound at start;
 * --dump-on would install a signal handler in the program: `callprof dump
 * PID` does the same without one).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/attach.h"
#include "cli/builtin.h"
#include "cli/options.h"
#include "cli/select.h"
#include "format/format.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

static const char *const attach_usage[] = {
	"callprof attach [-o FILE] [--duration SECS] [--time=cpu|clock|none] "
	"[--mode=cpu|timing|counting|coverage] [--clock=CLOCK] [--no-offcpu] [--sample=HZ] PID",
	"callprof attach [--include|--exclude|--exclude-tree PATTERN]... [--regex] "
	"[--exclude-file GLOB]... [--exclude-module GLOB]... [--start FN]... [--max-depth N] "
	"[--budget PCT] PID",
	NULL,
};

enum attach_mode { AT_CPU, AT_TIMING, AT_COUNTING, AT_COVERAGE };
static const char *const mode_choices[] = { "cpu", "timing", "counting", "coverage", NULL };
static const char *const mode_libs[] = { "libcallprof-cpu.so", "libcallprof.so",
					 "libcallprof-counting.so", "libcallprof-coverage.so" };
enum attach_time { TIME_CPU, TIME_CLOCK, TIME_NONE };
static const char *const time_choices[] = { "cpu", "clock", "none", NULL };
static const int mode_time[] = { TIME_CPU, TIME_CLOCK, TIME_NONE, TIME_NONE };
static const char *const clock_choices[] = { "auto", "tsc", "tsc-fast", "monotonic", NULL };

#define CPU_DEFAULT_HZ 3989 /* as record: runtime/internal.h, CP_CPU_DEFAULT_HZ */

static int resolve_mode(int mode, int time)
{
	static const int time_mode[] = { AT_CPU, AT_TIMING, AT_COUNTING };

	if (mode >= 0 && time >= 0 && mode_time[mode] != time)
		cp_usage_error(attach_usage, "--mode=%s and --time=%s disagree", mode_choices[mode],
			       time_choices[time]);
	if (mode >= 0)
		return mode;
	return time >= 0 ? time_mode[time] : AT_CPU;
}

static char *absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	return xstrfmt("%s/%s", cwd, path);
}

static void push_env(const char ***env, size_t *n, char *setting)
{
	*env = xrealloc(*env, (*n + 2) * sizeof(**env));
	(*env)[(*n)++] = setting;
	(*env)[*n] = NULL;
}

/* Was what stood at path (before) moved to path.old, by the writer's rename? */
static int moved_to_old(const char *path, const struct stat *before)
{
	char *old = xstrfmt("%s.old", path);
	struct stat st;
	int moved = !lstat(old, &st) && st.st_dev == before->st_dev && st.st_ino == before->st_ino;

	free(old);
	return moved;
}

/*
 * The profile is said written only once it is seen to be: the file at
 * path is complete (the reader takes it), and it is this attach's, written
 * by a runtime callprof attached to process t->pid, which started
 * recording since since_ns.  0, or -1 having said why in one line.
 */
static int verify_profile(const struct cp_attach_target *t, const struct cp_attach_result *r,
			  const char *path, const char *shown, uint64_t since_ns)
{
	struct cp_profile_file *pf;
	struct stat st;
	char err[1024];
	int ret = -1;

	if (lstat(path, &st)) {
		const char *why = r->watch_errno ? strerror(r->watch_errno) : NULL;

		if (r->rights)
			return cp_error("process %d (%s) wrote no profile to %s: it was killed after "
					"changing its credentials, and its watcher could not check them, "
					"so it wrote nothing on its behalf", (int)t->pid, t->comm, shown);
		if (why)
			return cp_error("process %d (%s) wrote no profile to %s: it was killed and its "
					"watcher could not write it: %s", (int)t->pid, t->comm, shown, why);
		return cp_error("process %d (%s) wrote no profile to %s (%s)", (int)t->pid, t->comm,
				shown, r->ended ? "it ended, and neither it nor its watcher wrote it"
						: "the file is not there");
	}
	pf = cp_profile_file__open(path, err, sizeof(err), NULL);
	if (!pf)
		return cp_error("process %d (%s) wrote no usable profile: %s", (int)t->pid, t->comm, err);
	if (pf->meta.pid != (uint32_t)t->pid || !(pf->meta.flags & CP_META_ATTACHED) ||
	    pf->meta.start_realtime_ns < since_ns)
		cp_error("%s is not the profile of this attach: process %" PRIu32 " wrote it%s", shown,
			 pf->meta.pid, pf->meta.start_realtime_ns < since_ns ? ", before this attach"
				       : !(pf->meta.flags & CP_META_ATTACHED) ? ", not attached" : "");
	else
		ret = 0;
	cp_profile_file__free(pf);
	return ret;
}

int cmd_attach(int argc, const char **argv)
{
	const char *out = "callprof.out", *sample = NULL, *max_depth = NULL, *budget = NULL,
		   *duration = NULL, *dump_on = NULL;
	const char **env = NULL;
	size_t nenv = 0;
	char *filter = NULL, *lib = NULL, *outabs = NULL, still[160] = "", sleds[128] = "";
	struct cp_select sel = { 0 };
	struct cp_attach_target t;
	struct cp_attach_opts o = { 0 };
	struct cp_attach_result r = { 0 };
	struct stat before;
	struct timespec since;
	int had_before, filter_fd = -1;
	int n, mode = -1, time_src = -1, clock = 0, no_offcpu = 0, libcalls = 0, ret = 1;
	unsigned hz = 0;
	pid_t pid;
	const struct cp_option opts[] = {
		{ CP_OPT_STRING, 'o', "output", &out, "FILE", "write the profile to FILE (default callprof.out)" },
		{ CP_OPT_STRING, 0, "duration", &duration, "SECS",
		  "record for SECS seconds (default: until Ctrl-C or the program ends)" },
		{ CP_OPT_CHOICE, 0, "time", &time_src, "SOURCE",
		  "cpu (default): CPU time sampled per call path; clock: every call timed; "
		  "none: counts only", time_choices },
		{ CP_OPT_CHOICE, 0, "mode", &mode, "MODE",
		  "cpu (default), timing, counting or coverage, as record", mode_choices },
		{ CP_OPT_CHOICE, 0, "clock", &clock, "CLOCK",
		  "auto (default), tsc, tsc-fast, monotonic, as record", clock_choices },
		{ CP_OPT_FLAG, 0, "no-offcpu", &no_offcpu, NULL,
		  "do not track context switches (no wait/inactive split)" },
		{ CP_OPT_OPTARG, 0, "sample", &sample, "HZ",
		  "sample CPU time HZ times a second (--time=cpu) or the running line (--time=clock)" },
		{ CP_OPT_FLAG, 0, "libcalls", &libcalls, NULL, "refused: needs record" },
		{ CP_OPT_STRING, 0, "dump-on", &dump_on, "SIG", "refused: use callprof dump PID" },
		{ CP_OPT_LIST, 0, "include", &sel.include, "PATTERN",
		  "record only functions whose name matches (as record)" },
		{ CP_OPT_LIST, 0, "exclude", &sel.exclude, "PATTERN",
		  "no node for matching functions (as record)" },
		{ CP_OPT_LIST, 0, "exclude-tree", &sel.exclude_tree, "PATTERN",
		  "leave out matching functions and everything they call" },
		{ CP_OPT_FLAG, 0, "regex", &sel.regex, NULL, "name patterns are POSIX extended regular expressions" },
		{ CP_OPT_LIST, 0, "exclude-file", &sel.exclude_file, "GLOB",
		  "exclude the functions declared in matching source files" },
		{ CP_OPT_LIST, 0, "exclude-module", &sel.exclude_module, "GLOB",
		  "exclude the functions of matching modules" },
		{ CP_OPT_LIST, 0, "start", &sel.start, "FN", "record only while a matching function is open" },
		{ CP_OPT_STRING, 0, "max-depth", &max_depth, "N", "fold calls deeper than N" },
		{ CP_OPT_STRING, 0, "budget", &budget, "PCT", "with --time=clock: as record" },
		{ CP_OPT_END },
	};

	n = cp_parse_options(argc, argv, opts, attach_usage, 0);
	if (n != 1)
		cp_usage_error(attach_usage, n ? "attach takes one process id" : "attach needs a process id");
	pid = (pid_t)cp_parse_pid(argv[0], "attach", attach_usage);
	if (!*out)
		cp_usage_error(attach_usage, "-o needs a file name");
	if (libcalls)
		cp_usage_error(attach_usage, "--libcalls needs every GOT slot bound when the program "
			       "starts: use callprof record --libcalls");
	if (dump_on)
		cp_usage_error(attach_usage, "--dump-on would install a signal handler in the program: "
			       "use callprof dump PID while attached");
	if (duration) {
		char *end;

		o.duration = strtod(duration, &end);
		if (*end || end == duration || !(o.duration > 0 && o.duration <= 1e7))
			cp_usage_error(attach_usage, "--duration wants seconds (e.g. 2 or 0.5), not '%s'",
				       duration);
	}
	if (sample && *sample) {
		char *end;
		unsigned long v = strtoul(sample, &end, 10);

		if (*end || !v || v > 100000)
			cp_usage_error(attach_usage, "--sample wants a rate from 1 to 100000 Hz, not '%s'",
				       sample);
		hz = (unsigned)v;
	}
	mode = resolve_mode(mode, time_src);
	cp_select__parse(&sel, max_depth, budget, mode == AT_COVERAGE, mode == AT_TIMING,
			 attach_usage);

	if (cp_attach__check(pid, &t))
		goto out;
	if (t.no_sleds)
		cp_warning("attach: process %d (%s) %s: its sleds are left alone, only the modules "
			   "with hooks are recorded", (int)pid, cp_visible(t.comm),
			   t.no_sleds == CP_NO_SLEDS_CET ? "runs with CET shadow stacks"
							 : "is C++ that catches exceptions");
	cp_outfile__add_input(t.exe);
	if (cp_outfile__check(out, CP_OUTFILE_RENAME))
		goto out;
	outabs = absolute(out);
	if (cp_attach__check_output(&t, outabs))
		goto out;
	if (mode == AT_CPU && cp_probe_cpu_sampling(hz ? hz : CPU_DEFAULT_HZ, !no_offcpu)) {
		cp_warning("CPU-time sampling unavailable: timing each call with the clock instead "
			   "(--time=clock: times include the hooks' cost)");
		mode = AT_TIMING;
		hz = 0;
	}
	lib = cp_find_runtime(mode_libs[mode]);
	if (!lib) {
		cp_error("cannot find %s next to callprof or in ../lib/callprof "
			 "(set CALLPROF_LIB to the path of libcallprof.so)", mode_libs[mode]);
		goto out;
	}
	{
		/* A program replaced on disk since it started: its names are in the one that runs. */
		size_t len = strlen(t.exe);
		char *prog = len > 10 && !strcmp(t.exe + len - 10, " (deleted)")
				     ? xstrfmt("/proc/%d/exe", (int)pid) : xstrdup(t.exe);
		int err = cp_select__write(&sel, prog, &filter);

		free(prog);
		if (err)
			goto out;
	}
	push_env(&env, &nenv, xstrfmt("CALLPROF_OUT=%s", outabs));
	push_env(&env, &nenv, xstrfmt("CALLPROF_ROOT_PID=%d", (int)pid));
	if (t.no_sleds)
		push_env(&env, &nenv, xstrdup("CALLPROF_NO_SLEDS=1")); /* no plan, no stubs */
	if (clock)
		push_env(&env, &nenv, xstrfmt("CALLPROF_CLOCK=%s", clock_choices[clock]));
	if (no_offcpu)
		push_env(&env, &nenv, xstrdup("CALLPROF_OFFCPU=0"));
	if (filter) {
		/*
		 * The process reads the filters through our descriptor: the file
		 * goes at once, so that nothing of it is left, even if callprof
		 * is killed.
		 */
		filter_fd = open(filter, O_RDONLY | O_CLOEXEC);
		unlink(filter);
		if (filter_fd < 0) {
			cp_error("cannot read back %s: %s", filter, strerror(errno));
			goto out;
		}
		push_env(&env, &nenv, xstrfmt("CALLPROF_FILTER=/proc/%d/fd/%d", (int)getpid(),
					      filter_fd));
	}
	if (hz)
		push_env(&env, &nenv, xstrfmt("CALLPROF_SAMPLE=%u", hz));
	o.runtime = lib;
	o.perf = mode == AT_CPU || (mode == AT_TIMING && !no_offcpu);
	o.out = outabs;
	o.env = env;
	/* What is at FILE now: the process's writer moves it to FILE.old when it writes FILE. */
	had_before = !lstat(outabs, &before);
	clock_gettime(CLOCK_REALTIME, &since);
	if (cp_attach__run(&t, &o, &r))
		goto out;
	if (r.ended)
		fprintf(stderr, "callprof: process %d (%s) ended during the window\n", (int)pid,
			cp_visible(t.comm));
	if (r.execd[0]) {
		struct stat st;

		fprintf(stderr, "callprof: process %d (%s) ran %s (exec) in the window, which ended "
			"the recording: the profile is that of the calls until then\n", (int)pid,
			cp_visible(t.comm), cp_visible(r.execd));
		if (!r.write_errno && lstat(outabs, &st)) {
			cp_error("process %d (%s) wrote no profile before the exec (it did not go through "
				 "the C library's exec functions); callprof's watcher writes it to %s "
				 "when process %d ends", (int)pid, t.comm, out, (int)pid);
			goto out;
		}
	}
	if (r.write_errno) {
		cp_error("process %d (%s) could not write its profile to %s: %s", (int)pid, t.comm,
			 out, strerror(r.write_errno));
		goto out;
	}
	if (r.empty || (!r.ran && !r.ended)) {
		cp_error("process %d (%s) ran no instrumented code in the %.2f s window: no profile "
			 "written", (int)pid, t.comm, r.window);
		goto out;
	}
	if (verify_profile(&t, &r, outabs, out, (uint64_t)since.tv_sec * 1000000000u +
				(uint64_t)since.tv_nsec))
		goto out;
	if (had_before && moved_to_old(outabs, &before))
		fprintf(stderr, "callprof: moved the previous %s to %s.old\n", out, out);
	if (r.still)
		snprintf(still, sizeof(still), "; %u thread%s ran no instrumented code in the window "
			 "(blocked?): %s open calls are in the profile, timed from the attach", r.still,
			 r.still == 1 ? "" : "s", r.still == 1 ? "its" : "their");
	if (r.sleds)
		snprintf(sleds, sizeof(sleds), "; %u sled%s patched%s, unpatched at the end", r.sleds,
			 r.sleds == 1 ? "" : "s", r.sleds_left ? " (some left alone: see "
			 "callprof-attach(1), LIMITS)" : "");
	fprintf(stderr, "callprof: attached to %d (%s) for %.2f s: %u thread%s (all held %.1f ms to "
		"switch), %u call%s open at attach%s%s; wrote %s\n", (int)pid, cp_visible(t.comm),
		r.window, r.threads, r.threads == 1 ? "" : "s", r.held_on * 1e3, r.open,
		r.open == 1 ? "" : "s", still, sleds, cp_visible(out));
	ret = 0;
out:
	if (filter_fd >= 0)
		close(filter_fd);
	else if (filter)
		unlink(filter);
	for (size_t i = 0; i < nenv; i++)
		free((char *)env[i]);
	free(env);
	free(filter);
	free(lib);
	free(outabs);
	cp_select__release(&sel);
	return ret;
}
