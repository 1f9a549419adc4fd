/*
 * cmd-dump.c - `callprof dump PID`: a snapshot of the profile of a program
 * that `callprof record` runs, without stopping it.
 *
 * The program's watcher (runtime/watch.c), a process named "callprof-watch"
 * that shares the program's profile memory and holds a pidfd on it, writes
 * the snapshot: we find it by that pidfd, ask it with sigqueue (so it
 * knows whom to answer) and wait, at most TIMEOUT_S seconds, for its
 * answer: a descriptor it holds open on the finished file, whose name we
 * read in /proc (and whose contents -o copies through it), or -errno.  The file is complete when announced (the runtime
 * writes a temporary and renames it), so there is never a partial one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "cli/options.h"
#include "util/text.h"
#include "util/util.h"

#define CP_DUMP_REQUEST 0x43505244 /* as runtime/internal.h: "CPRD" */
#define TIMEOUT_S 10

static const char *const dump_usage[] = {
	"callprof dump [-o FILE] PID",
	NULL,
};

/* Does process w hold a pidfd on pid? */
static int watches(long w, pid_t pid)
{
	long targets[8];
	int n = cp_pidfd_targets(w, targets, 8);

	for (int i = 0; i < n; i++)
		if (targets[i] == pid)
			return 1;
	return 0;
}

/* When process w started (/proc/W/stat field 22, clock ticks since boot); 0 if unknown. */
static unsigned long long start_time(long w)
{
	char buf[1024];
	const char *p = cp_proc_stat(w, buf, sizeof(buf));
	unsigned long long v = 0;

	for (int field = 2; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (p)
		v = strtoull(p, NULL, 10);
	return v;
}

/*
 * PID's watcher, or 0: a process named callprof-watch that holds a pidfd
 * on PID.  The watcher is not PID's child (runtime/watch.c): it is found
 * among all processes, by what it waits for.
 */
static pid_t find_watcher(pid_t pid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	unsigned long long found_start = 0;

	/*
	 * The newest of PID's watchers: an older one may be stale (a newer
	 * piece of the arena is out of its sight) or ending (its session is
	 * over: callprof attach ended a window), and ends itself soon.
	 */
	while (d && (e = readdir(d))) {
		char path[64], comm[32];
		char *end;
		long w = strtol(e->d_name, &end, 10);
		unsigned long long start;
		FILE *f;

		if (w <= 0 || *end || w == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", w);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "callprof-watch\n") && watches(w, pid) &&
		    (start = start_time(w)) >= found_start) {
			found = (pid_t)w;
			found_start = start;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* Has pid the preloaded runtime in its address space? */
static int has_runtime(pid_t pid)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libcallprof") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Wait for the watcher's answer; returns it, or INT_MIN on timeout. */
static int wait_answer(pid_t watcher, const sigset_t *set)
{
	struct timespec end, now, left;
	siginfo_t si;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += TIMEOUT_S;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0)
			left.tv_sec--, left.tv_nsec += 1000000000;
		if (left.tv_sec < 0)
			return INT_MIN;
		if (sigtimedwait(set, &si, &left) < 0) {
			if (errno == EINTR)
				continue;
			return INT_MIN;
		}
		if (si.si_pid == watcher && si.si_code == SI_QUEUE)
			return si.si_value.sival_int;
	}
}

/*
 * Copy the snapshot open at src (/proc/W/fd/N; its name is name) to dst
 * through cp_outfile; then remove name if it is that same file and ours.
 * 0, or cp_error()'s -1 having said why.
 */
static int copy_file(const char *src, const char *name, const char *dst)
{
	char buf[65536];
	struct cp_outfile *of;
	struct stat st, named;
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e;
	ssize_t n;

	if (in < 0)
		return cp_error("cannot open the snapshot '%s': %s", name, strerror(errno));
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		close(in);
		return cp_error("the snapshot '%s' is not a regular file", name);
	}
	of = cp_outfile__open(dst, CP_OUTFILE_RENAME);
	if (!of) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, n, cp_outfile__fp(of)) != (size_t)n)
			break;
	e = errno;
	close(in);
	if (n) {
		cp_outfile__abort(of);
		return cp_error("cannot copy '%s' to '%s': %s", name, dst, strerror(e));
	}
	if (cp_outfile__commit(of))
		return -1;
	if (!lstat(name, &named) && named.st_dev == st.st_dev && named.st_ino == st.st_ino &&
	    st.st_uid == getuid())
		unlink(name);
	return 0;
}

static int dump_process(int argc, const char **argv)
{
	const char *out = NULL;
	const struct cp_option opts[] = {
		{ CP_OPT_STRING, 'o', "output", &out, "FILE",
		  "move the snapshot to FILE (default: it stays at the profile's path + .dumpN)" },
		{ CP_OPT_END },
	};
	char fdlink[64], path[PATH_MAX];
	sigset_t set, old;
	union sigval v;
	pid_t pid, watcher;
	ssize_t n;
	int answer;

	if (cp_parse_options(argc, argv, opts, dump_usage, 0) != 1)
		cp_usage_error(dump_usage, "dump needs one process id");
	if (out && !*out)
		cp_usage_error(dump_usage, "-o needs a file name");
	pid = (pid_t)cp_parse_pid(argv[0], "dump", dump_usage);
	if (out && cp_outfile__check(out, CP_OUTFILE_RENAME))
		return -1;
	if (kill(pid, 0) && errno == ESRCH)
		return cp_error("no process %d", (int)pid);
	watcher = find_watcher(pid);
	if (!watcher) {
		if (has_runtime(pid))
			return cp_error("process %d has no watcher (CALLPROF_WATCH=0, or it has not run "
				     "an instrumented call yet): it can only dump itself "
				     "(callprof_dump)", (int)pid);
		return cp_error("process %d is not recorded by callprof (no callprof-watch for it)",
			     (int)pid);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, &old);
	v.sival_int = CP_DUMP_REQUEST;
	if (sigqueue(watcher, SIGUSR2, v)) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &old, NULL);
		if (e == EPERM)
			return cp_error("process %d: permission denied (run as its user)", (int)pid);
		return cp_error("process %d: cannot ask its watcher %d: %s", (int)pid, (int)watcher,
			     strerror(e));
	}
	answer = wait_answer(watcher, &set);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (answer == INT_MIN)
		return cp_error("process %d: no snapshot after %d s", (int)pid, TIMEOUT_S);
	if (answer < 0)
		return cp_error("process %d: no snapshot: %s", (int)pid,
			     answer == -ESRCH ? "it is ending" : strerror(-answer));
	snprintf(fdlink, sizeof(fdlink), "/proc/%d/fd/%d", (int)watcher, answer);
	n = readlink(fdlink, path, sizeof(path) - 1);
	if (n <= 0)
		return cp_error("process %d: cannot find the snapshot: %s: %s", (int)pid, fdlink,
			     strerror(errno));
	path[n] = '\0';
	if (!out) {
		printf("%s\n", cp_visible(path));
		return 0;
	}
	/*
	 * Copied from the watcher's descriptor, not renamed by the name it
	 * gives: a name is only what a process says, the descriptor is the
	 * file it wrote.  The snapshot is removed when it is ours to remove.
	 */
	if (copy_file(fdlink, path, out))
		return -1;
	printf("%s\n", cp_visible(out));
	return 0;
}

/* Errors are one line naming the process, and exit status 1. */
int cmd_dump(int argc, const char **argv)
{
	return dump_process(argc, argv) ? 1 : 0;
}
