/*
 * session.c - process-wide set-up and tear-down of the runtime.
 *
 * Initialisation happens in a constructor or, when instrumented code runs
 * earlier (other libraries' constructors, a static link), lazily from the
 * first hook.  The profile is written by a destructor, which runs after
 * main returns or exit() is called, and after the program's own
 * destructors when the runtime is preloaded.  Nothing here may exit,
 * abort, change errno, or print more than one line per kind of problem.
 *
 * Environment (set by `callprof record`, or by hand with libcallprof.a):
 *   CALLPROF_OUT       profile path (default ./callprof.out)
 *   CALLPROF_ROOT_PID  pid that writes CALLPROF_OUT itself; any other
 *                      process (fork child, exec'd program) appends ".PID"
 *   CALLPROF_CLOCK     "tsc": ordered TSC reads (the default with an invariant
 *                      TSC; forced otherwise), "tsc-fast": unordered reads
 *                      (cheaper, less exact per call), "monotonic"
 *   CALLPROF_OFFCPU    "0": do not track context switches (wait/inactive time)
 *   CALLPROF_SAMPLE    HZ: sample the running instruction per context (offcpu.c)
 *   CALLPROF_FILTER    record-time selection, written by `record` (filter.c)
 *   CALLPROF_LIBCALLS  "1": record calls into uninstrumented libraries (libcalls.c)
 *   CALLPROF_SECCOMP   set by an earlier image of this process that saw seccomp
 *                      filters: what they forbid the runtime (seccomp.c)
 * All are read as the process started with them (env.c).  None of them is
 * read in secure-execution mode (see cp_session__init).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "runtime/internal.h"

struct cp_session cp_session = { .fold_lock = PTHREAD_MUTEX_INITIALIZER,
				 .free_lock = PTHREAD_MUTEX_INITIALIZER };
uint32_t cp_sys_denied;
uint32_t cp_sys_inflight;
__thread int cp_watcher_self __attribute__((tls_model("initial-exec")));

/*
 * The base path, CALLPROF_OUT or ./callprof.out, resolved once at start-up:
 * a relative path is fixed against the directory then, so a program that
 * chdirs (a daemon going to /) still writes where the user expects.
 */
static void resolve_out_base(void)
{
	const char *out = cp_getenv("CALLPROF_OUT");
	char *base = cp_session.out_base;
	size_t cap = sizeof(cp_session.out_base) - 32, pos = 0, len;

	if (!out || !*out)
		out = "callprof.out";
	if (out[0] != '/' && getcwd(base, cap)) {
		pos = strlen(base);
		if (pos > 1)
			base[pos++] = '/';
	}
	len = strlen(out);
	if (pos + len >= cap)
		len = cap - pos;
	memcpy(base + pos, out, len);
	base[pos + len] = '\0';
}

/*
 * CALLPROF_STATUS: a file `callprof record` created for the process it
 * started, where that process (or its watcher) says that its profile could
 * not be written, so that record names the true cause instead of guessing.
 * One line per failure, "WHAT ERRNO": "write" (the runtime said why on
 * stderr), "watch" (the watcher, which has no stderr, could not write it),
 * "rights" (the watcher could not tell the program's credentials: it wrote
 * nothing).  Opened without O_CREAT: it is record's file or nothing.
 * `callprof attach` passes one too: a descriptor of its own, named
 * /proc/PID/fd/N, so that nothing of it stays on disk.
 */
static void read_status_path(void)
{
	const char *s = cp_getenv("CALLPROF_STATUS");
	size_t len = s ? strlen(s) : 0;

	if (len && len < sizeof(cp_session.status) && s[0] == '/')
		memcpy(cp_session.status, s, len + 1);
}

int cp_status__open(void)
{
	if (!cp_session.status[0] || !cp_session.owns_out || !cp_sys__may(CP_SYS_WRITE))
		return -1;
	/* callprof attach names a descriptor of its own (/proc/PID/fd/N): a link to follow */
	return open(cp_session.status, O_WRONLY | O_APPEND | (cp_attach.on ? 0 : O_NOFOLLOW) |
					       O_CLOEXEC | O_NOCTTY);
}

void cp_status__failed(int fd, const char *what, int err)
{
	int saved_errno = errno, close_it = fd == -2;
	char line[64];
	size_t pos = strlen(what);

	if (!cp_sys__begin(CP_SYS_WRITE))
		goto out;
	if (close_it)
		fd = cp_status__open();
	if (fd < 0 || pos > 32)
		goto out_end;
	memcpy(line, what, pos);
	line[pos++] = ' ';
	cp_put_dec(line, sizeof(line) - 2, &pos, (unsigned long)(err < 0 ? -err : err));
	line[pos++] = '\n';
	if (write(fd, line, pos) < 0) {
	}
	if (close_it)
		close(fd);
out_end:
	cp_sys__end();
out:
	errno = saved_errno;
}

/*
 * Where this process writes: the base itself when it is the process
 * `callprof record` started (CALLPROF_ROOT_PID), or when it runs without
 * record and is not a fork child; BASE.PID otherwise.
 */
static void set_out_path(void)
{
	const char *root = cp_getenv("CALLPROF_ROOT_PID");
	unsigned long pid = (unsigned long)getpid();
	size_t pos = strlen(cp_session.out_base);

	memcpy(cp_session.out, cp_session.out_base, pos + 1);
	cp_session.owns_out = 1;
	if (root && !cp_session.forked) {
		char *end;
		unsigned long want = strtoul(root, &end, 10);

		if (*end == '\0' && want == pid)
			return;
	} else if (!root && !cp_session.forked) {
		return;
	}
	cp_session.owns_out = 0;
	cp_session.out[pos++] = '.';
	cp_put_dec(cp_session.out, sizeof(cp_session.out), &pos, pid);
}

int cp_self_open(const char *file, int flags)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/thread-self/%s", file);
	fd = open(path, flags);
	if (fd < 0 && errno == ENOENT) { /* before Linux 3.17 */
		snprintf(path, sizeof(path), "/proc/self/%s", file);
		fd = open(path, flags);
	}
	return fd;
}

ssize_t cp_self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/thread-self/exe", buf, size - 1);

	if (n < 0)
		n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? n : -1;
}

/*
 * The command line and executable, taken at start-up: the profile names
 * what was run, not the process title the program may write over its
 * argv later (a server showing "name host:port" in ps), nor an executable
 * replaced or removed since.  Read from /proc twice: once for the size, once
 * into arena memory, which the watcher sees too.  Under callprof attach the
 * start-up is the attach: a title written before it is what there is.
 */
static ssize_t read_cmdline(char *buf, size_t cap)
{
	char scratch[4096];
	int fd = cp_self_open("cmdline", O_RDONLY | O_CLOEXEC);
	size_t total = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	for (;;) {
		size_t want = buf ? cap - total : sizeof(scratch);

		if (buf && !want)
			break;
		n = read(fd, buf ? buf + total : scratch, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	close(fd);
	return (ssize_t)total;
}

static void take_command_line(void)
{
	ssize_t n, got;
	char *buf;

	cp_self_exe(cp_session.exe, sizeof(cp_session.exe));
	n = read_cmdline(NULL, 0);
	if (n <= 0)
		return;
	buf = cp_arena__alloc((size_t)n);
	if (!buf)
		return;
	got = read_cmdline(buf, (size_t)n);
	cp_session.cmdline_len = got > 0 ? (uint64_t)got : 0;
	__atomic_store_n(&cp_session.cmdline, buf, __ATOMIC_RELEASE);
}

void cp_session__keep(void (*keep)(const void *p, size_t bytes))
{
	if (cp_session.cmdline)
		keep(cp_session.cmdline, cp_session.cmdline_len);
}

static void choose_clock(void)
{
	const char *want = cp_getenv("CALLPROF_CLOCK");
	int tsc = cp_clock_has_invariant_tsc();

#if defined(__x86_64__) || defined(__i386__)
	/* "tsc"/"tsc-fast": the user vouches for the TSC (e.g. a VM hiding the flag). */
	if (want && !strcmp(want, "tsc"))
		tsc = 1;
	if (want && !strcmp(want, "tsc-fast")) {
		cp_session.clock = CP_CLOCK_TSC_FAST;
		return;
	}
#endif
	if (want && !strcmp(want, "monotonic"))
		tsc = 0;
	cp_session.clock = tsc ? CP_CLOCK_TSC : CP_CLOCK_MONOTONIC;
}

/*
 * Across fork: no fold and no module-log change in progress (the child
 * would inherit a held lock, and a fork child copies its part of the
 * shared memory while the forking thread waits, see watch.c), and no
 * signal handler running hooks on the forking thread meanwhile.  Forks
 * of several threads are serialised by the C library's handler lock.
 */
static sigset_t fork_mask;

static int fork_skipped; /* a session that was over at the prepare: no handler acts */

static void atfork_prepare(void)
{
	sigset_t all;

	/*
	 * After callprof attach detached, this copy of the runtime is inert.
	 * Under a seccomp filter that forbids the calls the handlers make, the
	 * child records nothing (its gate stays shut, control.c) and touches
	 * none of the memory it shares with us.
	 */
	fork_skipped = (cp_attach.on && cp_session.state != CP_STATE_ON) || !cp_sys__may(CP_SYS_FORK);
	if (fork_skipped)
		return;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &fork_mask);
	cp_modules__lock();
	cp_thread__fold_lock();
	cp_watch__fork_prepare();
}

static void atfork_parent(void)
{
	if (fork_skipped)
		return;
	cp_watch__fork_parent();
	cp_thread__fold_unlock();
	cp_modules__unlock();
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

static void atfork_child(void)
{
	if (fork_skipped)
		return;
	cp_watch__fork_child();
	cp_gate__open(); /* after the data pages were shared afresh */
	pthread_mutex_init(&cp_session.fold_lock, NULL);
	pthread_mutex_init(&cp_session.free_lock, NULL); /* another thread may have held it */
	cp_api__fork_child();
	cp_session.api_used = 0; /* the parent's calls of the API are not the child's */
	cp_modules__reset_lock();
	cp_sleds__fork_child(); /* its stubs in pages of its own */
	cp_session.forked = 1;
	cp_session.pid = getpid();
	cp_session.ppid = getppid();
	cp_session.exec_pending = 0;
	set_out_path();
	cp_thread__reset_after_fork(cp_self);
	/* What the child ran: calls, or a return from a frame open at the fork. */
	cp_session.fork_thread = cp_self;
	cp_session.fork_depth = cp_self ? (uint64_t)(cp_self->cct.top - cp_self->cct.stack->f) : 0;
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

/*
 * Returns 0 once the session is recording, -EAGAIN while another thread
 * initialises it (the caller drops this one event rather than wait: a
 * signal handler on the initialising thread would wait forever).
 */
int cp_session__init(void)
{
	int expected = CP_STATE_NONE;
	int saved_errno = errno;

	if (!__atomic_compare_exchange_n(&cp_session.state, &expected, CP_STATE_INIT, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return expected == CP_STATE_ON ? 0 : -EAGAIN;

	/*
	 * Secure execution (setuid or setgid, file capabilities): the
	 * environment is a less privileged user's, who must neither choose
	 * where this process writes (CALLPROF_OUT, CALLPROF_FILTER's file, the
	 * .PID/.execN/.dumpN names derived from them) nor read what it did
	 * (its addresses, command line and timings).  Then the runtime stays
	 * off for good: no thread state, no watcher, no signal, no file, and
	 * every hook returns at once (callprof-record(1), SECURITY).
	 */
	if (getauxval(AT_SECURE)) {
		__atomic_store_n(&cp_session.finished, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&cp_session.state, CP_STATE_DONE, __ATOMIC_RELEASE);
		cp_warn("secure execution (setuid/setgid): not recording, writing no profile");
		errno = saved_errno;
		return -EPERM;
	}
	/*
	 * A seccomp filter is in force: one the program installed before the
	 * runtime started, or one an earlier image of this process saw before
	 * it exec'd us (CALLPROF_SECCOMP, interpose.c), with what it forbids.
	 * If that is starting, stay off, silently (even a line on stderr may
	 * be forbidden); else start without what it forbids.
	 */
	if (cp_getenv("CALLPROF_SECCOMP"))
		cp_seccomp__inherit(cp_getenv("CALLPROF_SECCOMP"));
	if (!cp_sys__may(CP_SYS_START)) {
		__atomic_store_n(&cp_session.finished, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&cp_session.state, CP_STATE_DONE, __ATOMIC_RELEASE);
		errno = saved_errno;
		return -EPERM;
	}
	if (cp_sys__may(CP_SYS_WATCH))
		cp_watch__init(); /* first: it makes our data pages shared */
	cp_gate__open();  /* then: the gate's page must be private */
	choose_clock();
	cp_session.mono0_ns = cp_clock_ns(CLOCK_MONOTONIC);
	cp_session.real0_ns = cp_clock_ns(CLOCK_REALTIME);
	cp_session.tsc0 = cp_ticks();
	cp_session.pid = getpid();
	cp_session.ppid = getppid();
	resolve_out_base();
	set_out_path();
	read_status_path();
	take_command_line();
	cp_offcpu__init();
	cp_filter__init();
	cp_session.have_key = pthread_key_create(&cp_session.key, cp_thread__exited) == 0;
	cp_interpose__init();
	/*
	 * A process callprof attached to keeps its signal dispositions (a
	 * crash or kill is the watcher's to write), and its GOT slots were
	 * bound long ago (libcalls needs them bound at start).
	 */
	if (!cp_attach.on && cp_sys__may(CP_SYS_RERAISE))
		cp_signals__init();
	cp_modules__refresh(0);
	if (!cp_attach.on)
		cp_sleds__init(); /* before main and the program's constructors */
	else
		cp_sleds__plan_attach(); /* the tool writes them, every thread held */
	if (!cp_attach.on && !cp_seccomp__known())
		cp_libcalls__init(); /* after the module map: nothing it does must be in it */
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	__atomic_store_n(&cp_session.state, CP_STATE_ON, __ATOMIC_RELEASE);
	errno = saved_errno;
	return 0;
}

/*
 * Never a SIGPIPE or SIGXFSZ for the program: a line that cannot be written
 * is lost; so is one the program's seccomp filter forbids.
 */
static void write_stderr(const char *s)
{
	if (!cp_attach__log(s, strlen(s)))
		return; /* attached: the program's stderr is not ours */
	if (cp_sys__begin(CP_SYS_WARN)) {
		cp_write_all(2, s, strlen(s));
		cp_sys__end();
	}
}

/* One line on stderr, prefixed "callprof: ". */
void cp_warn(const char *msg)
{
	int saved_errno = errno;
	char line[512];
	size_t len = strlen(msg), pos = 10;

	memcpy(line, "callprof: ", 10);
	if (len > sizeof(line) - pos - 2)
		len = sizeof(line) - pos - 2;
	memcpy(line + pos, msg, len);
	pos += len;
	line[pos++] = '\n';
	line[pos] = '\0';
	write_stderr(line);
	errno = saved_errno;
}

/* Warn once per distinct message pointer (a handful of fixed messages). */
void cp_warn_once(const char *msg)
{
	static const char *said[8];

	for (unsigned i = 0; i < 8; i++) {
		const char *prev = NULL;

		if (__atomic_compare_exchange_n(&said[i], &prev, msg, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			cp_warn(msg);
			return;
		}
		if (prev == msg)
			return;
	}
}

__attribute__((constructor(101))) CP_NOINSTR static void cp_ctor(void)
{
	if (cp_attach__loaded_by_tool())
		return; /* callprof attach starts it (attach.c) */
	cp_env__snapshot(); /* before main can change the environment (env.c) */
	if (cp_session.state == CP_STATE_NONE)
		cp_session__init();
	/* The main thread's tree starts now, before any instrumented code. */
	if (!cp_self)
		cp_thread__setup();
}

/*
 * Some evidence in t's tree (or an aggregate's) that the hooks ran for
 * instrumented code: a call of a function or region (signal handlers'
 * pseudo-frames do not count: the trampoline pushes them for any handler),
 * time of a completed call, or calls the hooks saw but did not record.
 * Nodes a fork child took over from its parent have no calls and no time.
 */
static int thread_ran_code(const struct cp_thread *t)
{
	uint32_t nn = __atomic_load_n(&t->cct.nnodes, __ATOMIC_ACQUIRE), id = 1;

	/* attach: a thread whose calls were open throughout the window (attach.c) */
	if (t->cct.lost.calls || t->lost_events || t->unpaired_exits || t->still)
		return 1;
	for (int k = 0; k < CP_MUTE_KINDS; k++)
		if (t->unrecorded[k])
			return 1;
	for (const struct cp_chunk *c = t->cct.chunks; c && id < nn;
	     c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
		uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < used && id < nn; i++, id++) {
			const struct cp_node *n = &c->n[i];

			/* A side tree's first level names contexts of its thread, not calls. */
			if (t->owner && n->parent == &t->cct.root)
				continue;
			if (n->fn >= CP_FN_REGION_BASE && (n->calls || n->ticks))
				return 1;
		}
	}
	return 0;
}

/*
 * Did this process image run instrumented code: did a hook ever run for
 * an instrumented function or a region, or did the program use the API?
 * A process that did not (a shell, a `sed` of a profiled script, the fork
 * child of an instrumented program that only execs) writes no profile.
 * A fork child also ran some when it returned from a frame that was open
 * at the fork (that return is the exit hook's only trace in the cpu,
 * counting and coverage modes).  Runs at the end, in the program or in its
 * watcher: the threads' trees are read, never written.
 */
int cp_session__ran_code(void)
{
	const struct cp_thread *f = cp_session.fork_thread;

	if (cp_session.api_used)
		return 1;
	if (f && ((f->flags & CP_THREAD_EXITED) ||
		  (uint64_t)(f->cct.top - f->cct.stack->f) != cp_session.fork_depth))
		return 1;
	for (struct cp_thread *t = cp_session.threads; t; t = t->next)
		if (thread_ran_code(t) || (t->side && thread_ran_code(t->side)))
			return 1;
	return 0;
}

/* Another thread is writing the profile: wait until it is written, 10 s at most. */
static void wait_finished(void)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 10000 && !__atomic_load_n(&cp_session.finished, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
}

/*
 * The image is about to be replaced by exec: write what it recorded to
 * PATH.execN (N counts the execs of this process, carried to the new image
 * in CALLPROF_EXEC_COUNT by the exec wrappers), and keep recording in case
 * the exec fails.  The new image writes PATH at its exit as usual.  An
 * attached image writes PATH and finishes: the new one records nothing.
 */
void cp_session__before_exec(unsigned n)
{
	char path[sizeof(cp_session.out) + 24];
	size_t len = strlen(cp_session.out);

	/*
	 * Attached, and callprof's stop is writing PATH on another thread:
	 * the exec would kill that thread in the middle of the write.
	 */
	if (cp_attach.on && __atomic_load_n(&cp_session.writing, __ATOMIC_ACQUIRE)) {
		wait_finished();
		return;
	}
	if (cp_session.state != CP_STATE_ON || !cp_session__ran_code())
		return;
	/* Attached: the window ends here, and its profile is PATH (the new image writes none). */
	if (cp_attach.on) {
		cp_session__finish(0);
		return;
	}
	memcpy(path, cp_session.out, len);
	memcpy(path + len, ".exec", 5);
	len += 5;
	cp_put_dec(path, sizeof(path), &len, n);
	cp_flush(path, 0);
}

/*
 * Write the profile unless there is nothing to say: a process that ran no
 * instrumented code writes nothing, or every `ls` a profiled shell script
 * runs would leave a file.  The one `callprof record` started says so in
 * record's status file instead ("empty 0"), so that record can tell the
 * user why there is no FILE.
 *
 * Called once per process by whichever comes first: the destructor, _exit,
 * abort, or a fatal signal (dying = 1).  A second caller while the first
 * is still writing (two threads crashing at once) waits for it, for a
 * bounded time, so the process does not die under a half-written file.
 */
int cp_session__finish(int dying)
{
	int saved_errno = errno;
	int expected = CP_STATE_ON, ret = 0;

	/*
	 * The program's seccomp filter forbids writing (even getpid, below,
	 * may be forbidden): the watcher writes the profile once the program
	 * has ended, seeing it did not (seccomp.c set cp_session.handed).
	 */
	if (!cp_sys__may(CP_SYS_WRITE)) {
		__atomic_store_n(&cp_session.ended, dying ? 2 : 1, __ATOMIC_RELEASE);
		goto out;
	}
	if (getpid() != cp_session.pid)
		goto out; /* a vfork child: the memory is its parent's */
	if (__atomic_compare_exchange_n(&cp_session.state, &expected, CP_STATE_DONE, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		__atomic_store_n(&cp_session.writing, 1, __ATOMIC_RELEASE);
		if (!cp_session__ran_code())
			cp_status__failed(-2, "empty", 0);
		else
			ret = cp_flush(cp_session.out, dying);
		__atomic_store_n(&cp_session.finished, 1, __ATOMIC_RELEASE);
	} else if (dying && expected == CP_STATE_DONE) {
		wait_finished();
	}
out:
	errno = saved_errno;
	return ret;
}

/*
 * Stop recording for good, writing nothing now: the program's seccomp
 * filter forbids the memory recording needs.  The gate shuts (control.c),
 * so no hook records from here on, and no new thread is set up; the
 * profile so far is the watcher's to write at the end (cp_session.handed).
 */
void cp_session__stop(void)
{
	int expected = CP_STATE_ON;

	__atomic_fetch_and(&cp_gate_page.word, ~CP_GATE_LIVE, __ATOMIC_RELEASE);
	__atomic_compare_exchange_n(&cp_session.state, &expected, CP_STATE_DONE, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
}

__attribute__((destructor(101))) CP_NOINSTR static void cp_dtor(void)
{
	cp_session__finish(0);
}
