/*
 * cmd-dump.c - `callprof dump PID`: a snapshot of the profile of a program
 * that `callprof record` runs, without stopping it.
 *
 * The program's watcher (runtime/watch.c), a process cloned from it that
 * shares the program's profile memory and holds a pidfd on it, writes the
 * snapshot.  We find it by what only it has: the program's shared memory,
 * mapped at the same address (the same shared anonymous object; a process
 * not cloned from the program cannot map it), besides the pidfd and its
 * name, which any process may take.  We ask it with sigqueue (so it knows
 * whom to answer) and wait, at most TIMEOUT_S seconds, for its answer: a
 * descriptor it holds open on the finished file, whose name we read in
 * /proc (and whose contents -o copies through it), or -errno.  The file is
 * complete when announced (the runtime writes a temporary and renames it),
 * so there is never a partial one.  A watcher made stale by the program's
 * memory growing answers -EAGAIN (or ends without an answer): the newest
 * is asked then, in the same time.
 *
 * The watcher acts for the program and with its rights, so nothing it says
 * may make us act with more: run as root on another user's program, dump
 * copies only a regular file owned by that user, and removes the snapshot
 * only when the program and the file are our own user's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "engine/attach.h"
#include "format/format.h"
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
 * The shared anonymous mappings of process pid ("/dev/zero (deleted)" in
 * its maps, each an object of its own): their start addresses and inodes,
 * at most max; how many.
 */
struct shared_map {
	unsigned long start, inode;
};

static int shared_maps(const char *dir, struct shared_map *out, int max)
{
	char path[96], line[PATH_MAX + 128];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/maps", dir);
	f = fopen(path, "r");
	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off, inode;
		char perms[8], dev[16];
		int name = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &start, &end, perms, &off, dev, &inode,
			   &name) < 6 || !name || perms[3] != 's' || !inode ||
		    strcmp(line + name, "/dev/zero (deleted)\n"))
			continue;
		out[n++] = (struct shared_map){ start, inode };
	}
	if (f)
		fclose(f);
	return n;
}

/* Does process w map one of the program's shared objects, where the program has it? */
static int shares_memory(long w, const struct shared_map *prog, int nprog)
{
	struct shared_map m[64];
	char dir[64];
	int n;

	snprintf(dir, sizeof(dir), "/proc/%ld", w);
	n = shared_maps(dir, m, 64);

	for (int i = 0; i < n; i++)
		for (int k = 0; k < nprog; k++)
			if (m[i].start == prog[k].start && m[i].inode == prog[k].inode)
				return 1;
	return 0;
}

/*
 * PID's watcher, or 0: a process that shares PID's profile memory and
 * holds a pidfd on PID (named callprof-watch, which only narrows the
 * search).  The watcher is not PID's child (runtime/watch.c): it is found
 * among all processes.
 */
static pid_t find_watcher(pid_t pid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	unsigned long long found_start = 0;
	struct shared_map prog[256];
	char dir[64];
	int nprog = shared_maps(cp_attach__proc(pid, dir, sizeof(dir)), prog, 256);

	/*
	 * The newest of PID's watchers: an older one may be stale (a newer
	 * piece of the arena is out of its sight) or ending (its session is
	 * over: callprof attach ended a window), and ends itself soon.
	 */
	while (nprog && d && (e = readdir(d))) {
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
		    shares_memory(w, prog, nprog) && (start = start_time(w)) >= found_start) {
			found = (pid_t)w;
			found_start = start;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * The user ids of process pid (real, effective, saved, file system), from
 * its status (a live thread's: a main thread that ended by pthread_exit
 * keeps the ids it had, and the program may have dropped them since);
 * -1 if unknown.
 */
static int process_uids(pid_t pid, uid_t uid[4])
{
	char dir[64], path[96], line[256];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/status", cp_attach__proc(pid, dir, sizeof(dir)));
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long v[4];

		if (strncmp(line, "Uid:", 4))
			continue;
		if (sscanf(line + 4, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4) {
			for (int i = 0; i < 4; i++)
				uid[i] = (uid_t)v[i];
			ret = 0;
		}
		break;
	}
	if (f)
		fclose(f);
	return ret;
}

/* Is uid one of the program's user ids? */
static int program_uid(const uid_t prog[4], uid_t uid)
{
	for (int i = 0; i < 4; i++)
		if (prog[i] == uid)
			return 1;
	return 0;
}

/* Has pid the preloaded runtime in its address space? */
static int has_runtime(pid_t pid)
{
	char dir[64], path[96], line[PATH_MAX + 128];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/maps", cp_attach__proc(pid, dir, sizeof(dir)));
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libcallprof") != NULL;
	if (f)
		fclose(f);
	return found;
}

#define WATCHER_GONE (INT_MIN + 1)

/*
 * Wait for the watcher's answer until end; returns it, INT_MIN on
 * timeout, or WATCHER_GONE when the watcher ended without one.
 */
static int wait_answer(pid_t watcher, const sigset_t *set, const struct timespec *end)
{
	struct timespec now, left;
	siginfo_t si;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end->tv_sec - now.tv_sec;
		left.tv_nsec = end->tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0)
			left.tv_sec--, left.tv_nsec += 1000000000;
		if (left.tv_sec < 0)
			return INT_MIN;
		/* A look every 100 ms whether it is still there. */
		if (left.tv_sec || left.tv_nsec > 100000000)
			left = (struct timespec){ 0, 100000000 };
		if (sigtimedwait(set, &si, &left) < 0) {
			if (errno == EAGAIN && kill(watcher, 0) && errno == ESRCH)
				return WATCHER_GONE;
			if (errno == EINTR || errno == EAGAIN)
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
 * What the watcher holds is the program's say: only a regular file that
 * one of the program's user ids owns is read (we may have more rights than
 * the program: root, reading through the watcher's descriptor, would read
 * anything it holds, even a descriptor opened with O_PATH), and it is
 * removed only when the program and the file are of our user.  0, or
 * cp_error()'s -1 having said why.
 */
static int copy_file(const char *src, const char *name, const char *dst, const uid_t prog[4])
{
	char buf[65536];
	struct cp_outfile *of;
	struct stat st, named;
	int in, e;
	ssize_t n;

	if (stat(src, &st) || !S_ISREG(st.st_mode) || !program_uid(prog, st.st_uid))
		return cp_error("the snapshot '%s' is not a regular file of the program's user", name);
	in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (in < 0)
		return cp_error("cannot open the snapshot '%s': %s", name, strerror(errno));
	if (fstat(in, &st) || !S_ISREG(st.st_mode) || !program_uid(prog, st.st_uid)) {
		close(in);
		return cp_error("the snapshot '%s' is not a regular file of the program's user", name);
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
	    st.st_uid == getuid() && prog[0] == getuid() && prog[1] == getuid() &&
	    prog[3] == getuid())
		unlink(name);
	return 0;
}

/*
 * The snapshot open at fdlink (the watcher's descriptor; named path) is a
 * complete profile of process pid and, with at_name, still at path (not
 * removed or replaced since).  0, or cp_error()'s -1 having said why.
 */
static int check_snapshot(pid_t pid, const char *fdlink, const char *path, int at_name,
			  const uid_t prog[4])
{
	struct cp_profile_file *pf;
	struct stat st, named;
	char err[1024];
	uint32_t wrote;

	/* Read only what the program could have written (see copy_file): never with our rights. */
	if (stat(fdlink, &st) || !S_ISREG(st.st_mode) || !program_uid(prog, st.st_uid))
		return cp_error("the snapshot '%s' is not a regular file of the program's user", path);
	pf = cp_profile_file__open(fdlink, err, sizeof(err), NULL);
	if (!pf)
		return cp_error("process %d: its snapshot %s is not usable: %s", (int)pid, path, err);
	wrote = pf->meta.pid;
	cp_profile_file__free(pf);
	if (wrote != (uint32_t)pid)
		return cp_error("process %d: the snapshot %s is process %" PRIu32 "'s", (int)pid, path,
				wrote);
	if (at_name && (stat(fdlink, &st) || lstat(path, &named) || st.st_dev != named.st_dev ||
			st.st_ino != named.st_ino))
		return cp_error("process %d: its snapshot %s was removed or replaced since it was "
				"written", (int)pid, path);
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
	struct timespec end;
	uid_t prog_uid[4];
	ssize_t n;
	int answer, lent;

	if (cp_parse_options(argc, argv, opts, dump_usage, 0) != 1)
		cp_usage_error(dump_usage, "dump needs one process id");
	if (out && !*out)
		cp_usage_error(dump_usage, "-o needs a file name");
	pid = (pid_t)cp_parse_pid(argv[0], "dump", dump_usage);
	if (out && cp_outfile__check(out, CP_OUTFILE_RENAME))
		return -1;
	if (kill(pid, 0) && errno == ESRCH)
		return cp_error("no process %d", (int)pid);
	if (process_uids(pid, prog_uid))
		return cp_error("process %d: cannot read its user ids", (int)pid);
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
	/*
	 * The watcher has the program's rights, too few to signal root: root
	 * takes the program's real user id while it waits for the answer (its
	 * effective and saved ids stay root, to take it back).
	 */
	lent = !geteuid() && getuid() != prog_uid[0] && !setresuid(prog_uid[0], -1, -1);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += TIMEOUT_S;
	/*
	 * A watcher goes stale when the program's memory grows (a newer one
	 * sees it all): it answers -EAGAIN, or ends; then the newest is asked.
	 * One whose session ended (-ESRCH: a window of callprof attach that
	 * closed, its watcher not yet gone) leaves the answer to a newer
	 * watcher if there is one: the next window's.
	 */
	for (;;) {
		pid_t asked = watcher;

		if (sigqueue(watcher, SIGUSR2, v)) {
			int e = errno;

			if (lent && setresuid(0, -1, -1))
				cp_die("cannot take back the real user id 0: %s", strerror(errno));
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (e == EPERM)
				return cp_error("process %d: permission denied (run as its user)",
						(int)pid);
			return cp_error("process %d: cannot ask its watcher %d: %s", (int)pid,
					(int)watcher, strerror(e));
		}
		answer = wait_answer(watcher, &set, &end);
		if (answer != -EAGAIN && answer != WATCHER_GONE && answer != -ESRCH)
			break;
		watcher = find_watcher(pid);
		if (!watcher || (answer == -ESRCH && watcher == asked)) {
			watcher = asked;
			answer = -ESRCH;
			break;
		}
	}
	if (lent && setresuid(0, -1, -1))
		cp_die("cannot take back the real user id 0: %s", strerror(errno));
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (answer == INT_MIN)
		return cp_error("process %d: no snapshot after %d s", (int)pid, TIMEOUT_S);
	if (answer < 0)
		return cp_error("process %d: no snapshot: %s", (int)pid,
			     answer == -ESRCH ? "it is ending" : strerror(-answer));
	/* Tests (t0518): stopped here, the watcher answered, the snapshot not read yet. */
	if (getenv("CALLPROF_TEST_DUMP_STOP"))
		raise(SIGSTOP);
	snprintf(fdlink, sizeof(fdlink), "/proc/%d/fd/%d", (int)watcher, answer);
	n = readlink(fdlink, path, sizeof(path) - 1);
	if (n <= 0)
		return cp_error("process %d: cannot find the snapshot: %s: %s", (int)pid, fdlink,
			     strerror(errno));
	path[n] = '\0';
	/* Said only once seen: a complete profile, this process's, still at the name given. */
	if (check_snapshot(pid, fdlink, path, !out, prog_uid))
		return -1;
	if (!out) {
		printf("%s\n", cp_visible(path));
		return 0;
	}
	/*
	 * Copied from the watcher's descriptor, not renamed by the name it
	 * gives: a name is only what a process says, the descriptor is the
	 * file it wrote.  The snapshot is removed when it is ours to remove.
	 */
	if (copy_file(fdlink, path, out, prog_uid))
		return -1;
	printf("%s\n", cp_visible(out));
	return 0;
}

/* Errors are one line naming the process, and exit status 1. */
int cmd_dump(int argc, const char **argv)
{
	return dump_process(argc, argv) ? 1 : 0;
}
