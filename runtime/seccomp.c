/*
 * seccomp.c - the runtime never makes a system call that the program's
 * seccomp filter forbids.
 *
 * A program may install a filter mid-run (prctl(PR_SET_SECCOMP), or
 * syscall(SYS_seccomp), which is how libseccomp does it).  The runtime
 * makes system calls of its own after that: perf_event_open for each new
 * thread, memory for its trees, the profile's file at the end, a watcher.
 * One the filter kills on killed the program (SECCOMP_RET_KILL_PROCESS:
 * SIGSYS) or the thread that made it (KILL_THREAD: the program printed a
 * wrong result and exited as if nothing happened); one it traps, traces or
 * reports would show the program (or its supervisor) a call it never made.
 *
 * So the filters are interposed: each one installed is copied (from the
 * program's memory, through process_vm_readv where the filters so far
 * allow it, so that a bad pointer is the kernel's EFAULT as it would be),
 * and a small interpreter of classic BPF runs it, over the struct
 * seccomp_data the kernel would give it, for every system call each of
 * the runtime's activities makes (enum cp_sys_activity; the templates
 * below, with the arguments the runtime passes where they are fixed).  An
 * activity is allowed only if every filter returns SECCOMP_RET_ALLOW (or
 * LOG) for every one of its calls, without looking at an argument the
 * runtime cannot tell in advance (a pointer, a descriptor, a length) or at
 * the instruction pointer; anything else, an instruction we do not know
 * or a filter we could not copy included, forbids it.  The activities the
 * filters forbid are published before the filter goes live (cp_sys_denied,
 * which every other thread reads before such a call) and what must be
 * undone while it is still allowed is undone then (the fatal-signal
 * catchers, signals.c).  Then the runtime does without (internal.h):
 *
 *  - perf events: threads started after the filter have no CPU time and no
 *    wait/inactive split (counted, as for any refusal of perf_event_open);
 *  - memory: recording stops (threads started later are counted as not set
 *    up); so it does when the filter forbids what a thread's set-up needs;
 *  - writing the profile: the watcher, a process started before the filter
 *    (not under it), writes it once the program has ended (CP_META_LEFT);
 *  - a watcher is never started under a filter (it would inherit it), so
 *    the arena does not grow past what the watcher sees unless the program
 *    may write the profile itself;
 *  - warnings are not printed if write(2, ...) is forbidden.
 *
 * Filters apply to the thread that installs them and the threads it
 * creates later, to all threads with SECCOMP_FILTER_FLAG_TSYNC: the
 * runtime takes every filter to apply to every thread (it may do without
 * more than it needs to; it never makes a forbidden call).  Strict mode is
 * a filter that allows read, write, exit and rt_sigreturn.  A filter
 * survives exec: the exec wrappers tell the new image what the filters
 * forbid (CALLPROF_SECCOMP, the mask: the same runtime makes the same
 * calls), which starts without it, or not at all if starting is among it.
 *
 * Not seen: a filter installed with an inline system call instruction
 * (not through the C library), one inherited from the process that
 * started the program (a container's), and any filter under `callprof
 * attach` (the runtime is loaded with dlopen, so it interposes nothing;
 * attach judges the filters a target has when it attaches, with the same
 * interpreter, cbpf.c, and refuses one that forbids what it needs).
 * docs/limitations.md.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <unistd.h>

#include "runtime/cbpf.h"
#include "runtime/internal.h"

#if defined(__x86_64__)
#define CP_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CP_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define MAX_FILTERS 64

/* The filters the program installed, as far as we saw them; never freed. */
struct filter {
	const struct sock_filter *insns; /* our copy, NULL: opaque (forbids everything) */
	uint32_t len;
	int live; /* installed (or being installed); 0: the install failed */
};

static uint32_t inherited; /* what filters of an earlier image forbid (cp_seccomp__inherit) */

static struct {
	int lock;
	uint32_t n;
	int strict;   /* strict mode: read, write, exit, rt_sigreturn only */
	int overflow; /* more filters than we keep: everything forbidden */
	struct filter f[MAX_FILTERS];
} filters;

/* ---- judging a call (the interpreter: cbpf.c) ---- */

#define U (~0ull) /* in a template: an argument the runtime cannot tell in advance */

/* System calls that strict mode allows. */
static int strict_allows(long nr)
{
	return nr == SYS_read || nr == SYS_write || nr == SYS_exit || nr == SYS_rt_sigreturn;
}

/*
 * Would the filters (the first n, plus strict) let this call through, with
 * args (U: unknown) whatever the unknown ones are?
 */
static int allows(uint32_t n, int strict, long nr, const uint64_t args[6])
{
	struct seccomp_data d;
	uint32_t unknown = 1u << 2 | 1u << 3; /* the instruction pointer */

	if (strict && !strict_allows(nr))
		return 0;
#ifdef CP_AUDIT_ARCH
	memset(&d, 0, sizeof(d));
	d.nr = (int)nr;
	d.arch = CP_AUDIT_ARCH;
	for (int i = 0; i < 6; i++) {
		if (args[i] == U)
			unknown |= 3u << (4 + 2 * i);
		else
			d.args[i] = args[i];
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct filter *f = &filters.f[i];
		int depends = 0;
		uint32_t ret, action;

		if (!__atomic_load_n(&f->live, __ATOMIC_ACQUIRE))
			continue;
		if (!f->insns)
			return 0;
		ret = cp_cbpf__run(f->insns, f->len, &d, unknown, &depends);
		action = ret & SECCOMP_RET_ACTION_FULL;
		if (depends || (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG))
			return 0;
	}
	return 1;
#else
	return n == 0;
#endif
}

/* ---- the runtime's activities, by the calls each makes ---- */

struct call {
	uint8_t activity; /* enum cp_sys_activity */
	int16_t nr;
	uint64_t args[6];
};

#define RW (PROT_READ | PROT_WRITE)
#define ANON_PRIVATE (MAP_PRIVATE | MAP_ANONYMOUS)
#define ANON_SHARED (MAP_SHARED | MAP_ANONYMOUS)
#define NO_FD ((uint64_t)(int64_t)-1)
#define CWD ((uint64_t)(int64_t)AT_FDCWD)
#define SIGSETSIZE 8

/*
 * What the C library makes of the runtime's calls (glibc on x86-64: open
 * is openat, stat newfstatat, getrlimit prlimit64, nanosleep
 * clock_nanosleep).  Checked against the runtime by t0420-seccomp, whose
 * filters allow the program's own calls only.
 */
static const struct call calls[] = {
	/* memory: the arena, private tables, scratch space, its release */
	{ CP_SYS_MEMORY, SYS_mmap, { 0, U, RW, ANON_PRIVATE, NO_FD, 0 } },
	{ CP_SYS_MEMORY, SYS_mmap, { 0, U, RW, ANON_SHARED | MAP_NORESERVE, NO_FD, 0 } },
	{ CP_SYS_MEMORY, SYS_munmap, { U, U } },
	{ CP_SYS_MEMORY, SYS_madvise, { U, U, MADV_DONTDUMP } },
	{ CP_SYS_MEMORY, SYS_madvise, { U, U, MADV_REMOVE } },
	/* a thread's perf event */
	{ CP_SYS_PERF, SYS_perf_event_open, { U, 0, NO_FD, NO_FD, PERF_FLAG_FD_CLOEXEC } },
	{ CP_SYS_PERF, SYS_mmap, { 0, U, RW, MAP_SHARED, U, 0 } },
	{ CP_SYS_PERF, SYS_close, { U } },
	{ CP_SYS_PERF, SYS_munmap, { U, U } },
	/* a thread's facts: its id, name, CPU clock, /proc/self/task/TID files */
	{ CP_SYS_THREAD, SYS_gettid, { 0 } },
	{ CP_SYS_THREAD, SYS_prctl, { PR_GET_NAME, U } },
	{ CP_SYS_THREAD, SYS_clock_gettime, { U, U } },
	{ CP_SYS_THREAD, SYS_openat, { CWD, U, O_RDONLY | O_CLOEXEC } },
	{ CP_SYS_THREAD, SYS_read, { U, U, U } },
	{ CP_SYS_THREAD, SYS_close, { U } },
	{ CP_SYS_THREAD, SYS_sched_yield, { 0 } },
	/* signals blocked around a thread's fold */
	{ CP_SYS_SIGMASK, SYS_rt_sigprocmask, { U, U, U, SIGSETSIZE } },
	/* writing a profile (format/writer.c, flush.c) and record's status file */
	{ CP_SYS_WRITE, SYS_openat, { CWD, U, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC } },
	{ CP_SYS_WRITE, SYS_openat, { CWD, U, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666 } },
	{ CP_SYS_WRITE, SYS_openat, { CWD, U, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY } },
	{ CP_SYS_WRITE, SYS_read, { U, U, U } },
	{ CP_SYS_WRITE, SYS_write, { U, U, U } },
	{ CP_SYS_WRITE, SYS_pwrite64, { U, U, U, U } },
	{ CP_SYS_WRITE, SYS_close, { U } },
	{ CP_SYS_WRITE, SYS_newfstatat, { CWD, U, U, 0 } },
	{ CP_SYS_WRITE, SYS_newfstatat, { CWD, U, U, AT_SYMLINK_NOFOLLOW } },
	{ CP_SYS_WRITE, SYS_newfstatat, { U, U, U, AT_EMPTY_PATH } },
	{ CP_SYS_WRITE, SYS_readlink, { U, U, U } },
	{ CP_SYS_WRITE, SYS_rename, { U, U } },
	{ CP_SYS_WRITE, SYS_renameat2, { CWD, U, CWD, U, RENAME_NOREPLACE } },
	{ CP_SYS_WRITE, SYS_link, { U, U } },
	{ CP_SYS_WRITE, SYS_pread64, { U, U, U, U } },
	{ CP_SYS_WRITE, SYS_unlink, { U } },
	{ CP_SYS_WRITE, SYS_getpid, { 0 } },
	{ CP_SYS_WRITE, SYS_uname, { U } },
	{ CP_SYS_WRITE, SYS_prlimit64, { 0, RLIMIT_FSIZE, 0, U } },
	{ CP_SYS_WRITE, SYS_rt_sigaction, { U, U, U, SIGSETSIZE } },
	{ CP_SYS_WRITE, SYS_rt_sigprocmask, { U, U, U, SIGSETSIZE } },
	{ CP_SYS_WRITE, SYS_clock_nanosleep, { CLOCK_REALTIME, 0, U, U } },
	/* a line on stderr */
	{ CP_SYS_WARN, SYS_write, { 2, U, U } },
	/* a fatal signal caught at its default: SIG_DFL again, then the signal */
	{ CP_SYS_RERAISE, SYS_rt_sigaction, { U, U, U, SIGSETSIZE } },
	{ CP_SYS_RERAISE, SYS_getpid, { 0 } },
	{ CP_SYS_RERAISE, SYS_gettid, { 0 } },
	{ CP_SYS_RERAISE, SYS_tgkill, { U, U, U } },
	/* --dump-on: the request to the watcher */
	{ CP_SYS_FORWARD, SYS_getpid, { 0 } },
	{ CP_SYS_FORWARD, SYS_kill, { U, SIGUSR2 } },
	/* the fork handlers (watch.c): the child takes its memory, tells the parent */
	{ CP_SYS_FORK, SYS_pipe2, { U, O_CLOEXEC } },
	{ CP_SYS_FORK, SYS_read, { U, U, 1 } },
	{ CP_SYS_FORK, SYS_write, { U, U, 1 } },
	{ CP_SYS_FORK, SYS_close, { U } },
	{ CP_SYS_FORK, SYS_mmap, { 0, U, RW, ANON_SHARED, NO_FD, 0 } },
	{ CP_SYS_FORK, SYS_mremap, { U, U, U, MREMAP_MAYMOVE | MREMAP_FIXED, U } },
	{ CP_SYS_FORK, SYS_mmap, { U, U, RW, ANON_SHARED | MAP_NORESERVE | MAP_FIXED, NO_FD, 0 } },
	{ CP_SYS_FORK, SYS_mmap, { U, U, RW, ANON_PRIVATE | MAP_FIXED, NO_FD, 0 } },
	{ CP_SYS_FORK, SYS_madvise, { U, U, MADV_WIPEONFORK } },
	{ CP_SYS_FORK, SYS_getpid, { 0 } },
	{ CP_SYS_FORK, SYS_getppid, { 0 } },
	{ CP_SYS_FORK, SYS_gettid, { 0 } },
	/*
	 * the start of a new image under a filter inherited through exec
	 * (session.c): no watcher, no libcalls, catchers only with RERAISE
	 */
	{ CP_SYS_START, SYS_openat, { CWD, U, O_RDONLY | O_CLOEXEC } },
	{ CP_SYS_START, SYS_read, { U, U, U } },
	{ CP_SYS_START, SYS_close, { U } },
	{ CP_SYS_START, SYS_newfstatat, { CWD, U, U, 0 } },
	{ CP_SYS_START, SYS_newfstatat, { U, U, U, AT_EMPTY_PATH } },
	{ CP_SYS_START, SYS_mmap, { 0, U, RW, ANON_PRIVATE, NO_FD, 0 } },
	{ CP_SYS_START, SYS_mmap, { U, U, RW, ANON_PRIVATE | MAP_FIXED, NO_FD, 0 } },
	{ CP_SYS_START, SYS_madvise, { U, U, MADV_WIPEONFORK } },
	{ CP_SYS_START, SYS_getpid, { 0 } },
	{ CP_SYS_START, SYS_getppid, { 0 } },
	{ CP_SYS_START, SYS_readlink, { U, U, U } },
	{ CP_SYS_START, SYS_getcwd, { U, U } },
	{ CP_SYS_START, SYS_munmap, { U, U } },
	/*
	 * sleds (sleds.c): a module's sled list read from its file, its code
	 * made writable and back (or written through /proc/thread-self/mem),
	 * the return stubs' memfd and its two aliases (else one private
	 * mapping), the table of modules, signals blocked around the stubs' lock
	 */
	{ CP_SYS_PATCH, SYS_arch_prctl, { 0x5005 /* ARCH_SHSTK_STATUS */, U } },
	{ CP_SYS_PATCH, SYS_openat, { CWD, U, O_RDONLY | O_CLOEXEC } },
	{ CP_SYS_PATCH, SYS_pread64, { U, U, U, U } },
	{ CP_SYS_PATCH, SYS_close, { U } },
	{ CP_SYS_PATCH, SYS_readlink, { U, U, U } },
	{ CP_SYS_PATCH, SYS_mprotect, { U, U, U } },
	{ CP_SYS_PATCH, SYS_openat, { CWD, U, O_RDWR | O_CLOEXEC } },
	{ CP_SYS_PATCH, SYS_pwrite64, { U, U, U, U } },
	{ CP_SYS_PATCH, SYS_prlimit64, { 0, RLIMIT_FSIZE, 0, U } },
	{ CP_SYS_PATCH, SYS_memfd_create, { U, 1 /* MFD_CLOEXEC */ } },
	{ CP_SYS_PATCH, SYS_ftruncate, { U, U } },
	{ CP_SYS_PATCH, SYS_mmap, { 0, U, PROT_READ | PROT_EXEC, MAP_SHARED, U, 0 } },
	{ CP_SYS_PATCH, SYS_mmap, { 0, U, RW, MAP_SHARED, U, 0 } },
	{ CP_SYS_PATCH, SYS_mmap, { U, U, RW, MAP_SHARED | MAP_FIXED, U, 0 } },
	{ CP_SYS_PATCH, SYS_mmap, { U, U, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, U, 0 } },
	{ CP_SYS_PATCH, SYS_mmap, { 0, U, RW | PROT_EXEC, ANON_PRIVATE | MAP_NORESERVE, NO_FD, 0 } },
	{ CP_SYS_PATCH, SYS_mmap, { 0, U, RW, ANON_PRIVATE | MAP_NORESERVE, NO_FD, 0 } },
	{ CP_SYS_PATCH, SYS_mmap, { 0, U, RW, ANON_PRIVATE, NO_FD, 0 } },
	{ CP_SYS_PATCH, SYS_munmap, { U, U } },
	{ CP_SYS_PATCH, SYS_rt_sigprocmask, { U, U, U, SIGSETSIZE } },
	/* our own bookkeeping here: copies of filters */
	{ CP_SYS_READ_SELF, SYS_getpid, { 0 } },
	{ CP_SYS_READ_SELF, SYS_process_vm_readv, { U, U, 1, U, 1, 0 } },
};

/* The activities the first n filters (and strict) forbid. */
static uint32_t denied_by(uint32_t n, int strict)
{
	uint32_t denied = 0;

	if (filters.overflow)
		return ~0u;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint32_t bit = 1u << calls[i].activity;

		if (!(denied & bit) && !allows(n, strict, calls[i].nr, calls[i].args))
			denied |= bit;
	}
	/* A watcher under a filter: it would inherit it (see above). */
	if (n || strict)
		denied |= 1u << CP_SYS_WATCH;
	/* The profile needs memory and the threads' facts; so does a fork child. */
	if (denied & (1u << CP_SYS_MEMORY | 1u << CP_SYS_THREAD))
		denied |= 1u << CP_SYS_WRITE | 1u << CP_SYS_FORK;
	return denied;
}

/* ---- installing ---- */

static void lock(void)
{
	while (__atomic_exchange_n(&filters.lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void unlock(void)
{
	__atomic_store_n(&filters.lock, 0, __ATOMIC_RELEASE);
}

/* Copy len bytes of the program's memory at src: 0, or -1 if it cannot be read. */
static int read_program(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)src, len };

	if (cp_sys__may(CP_SYS_READ_SELF))
		return syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L) ==
				       (long)len ? 0 : -1;
	memcpy(dst, src, len); /* what the filters allow: a bad pointer is the program's bug */
	return 0;
}

/*
 * Our copy of the filter at uprog (a struct sock_fprog of the program's),
 * in memory of ours; insns NULL if it cannot be had (then it forbids
 * everything).  -EFAULT if the program's memory cannot be read: the
 * kernel will refuse the filter too.
 */
static int copy_filter(const void *uprog, struct filter *f)
{
	struct sock_fprog prog;
	size_t bytes;
	void *p;

	f->insns = NULL;
	f->len = 0;
	if (read_program(&prog, uprog, sizeof(prog)))
		return -EFAULT;
	if (!prog.len || prog.len > BPF_MAXINSNS)
		return 0;
	bytes = (size_t)prog.len * sizeof(struct sock_filter);
	if (!cp_sys__may(CP_SYS_MEMORY))
		return 0;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	if (read_program(p, prog.filter, bytes)) {
		munmap(p, bytes);
		return -EFAULT;
	}
	f->insns = p;
	f->len = prog.len;
	return 0;
}

/*
 * Say once what the runtime does without, on stderr if it may write
 * there; and mark the profile (CP_META_FILTERED).
 */
static void say_denied(uint32_t denied, uint32_t before)
{
	static const struct {
		uint32_t activity;
		const char *what;
	} said[] = {
		{ CP_SYS_MEMORY, "memory: recording stops here" },
		{ CP_SYS_PERF, "perf_event_open: threads started from here have no CPU time and no "
			       "wait/inactive split" },
		{ CP_SYS_WRITE, "writing the profile: its watcher writes it when the program ends" },
		{ CP_SYS_RERAISE, "sending a fatal signal again: the profile is not written when one "
				  "ends the program" },
		{ CP_SYS_PATCH, "writing code: the functions of libraries loaded from here are not "
				"recorded (their sleds stay NOPs)" },
	};
	uint32_t quiet = 1u << CP_SYS_WATCH | 1u << CP_SYS_START;
	char line[600] = "the program's seccomp filter forbids calls callprof makes: ";
	size_t pos = strlen(line), start = pos;

	if (!cp_sleds__on())
		quiet |= 1u << CP_SYS_PATCH; /* a hooks build writes no code */
	if (denied & ~quiet)
		__atomic_store_n(&cp_session.filtered, 1, __ATOMIC_RELAXED);
	if ((denied & (1u << CP_SYS_START)) && !(before & (1u << CP_SYS_START)) &&
	    !(denied & (1u << CP_SYS_WARN)))
		cp_warn("the program's seccomp filter forbids what callprof needs to start: programs "
			"it runs from here are not profiled");
	for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		uint32_t bit = 1u << said[i].activity;
		size_t len = strlen(said[i].what);

		if (!(denied & bit) || (before & bit) || (quiet & bit) || pos + len + 3 >= sizeof(line))
			continue;
		if (said[i].activity == CP_SYS_PERF && !cp_session.switches_wanted &&
		    !cp_session.sample_hz)
			continue; /* this mode opens no perf events */
		if (pos > start) {
			memcpy(line + pos, "; ", 2);
			pos += 2;
		}
		memcpy(line + pos, said[i].what, len + 1);
		pos += len;
	}
	if (pos > start && !(denied & (1u << CP_SYS_WARN)))
		cp_warn(line);
}

/*
 * The new mask is published: wait until no thread is between a check of
 * the old one and its call (cp_sys__begin), at most about two seconds (a
 * thread writing a large snapshot), yielding the CPU if the filters so
 * far allow that (our own thread is never among them: a filter is not
 * installed from a hook).
 */
static void wait_inflight(uint32_t before)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0); /* the vDSO: no system call */
	while (__atomic_load_n(&cp_sys_inflight, __ATOMIC_SEQ_CST)) {
		if (!(before & (1u << CP_SYS_THREAD)))
			sched_yield();
		else
			__asm__ __volatile__("" ::: "memory");
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= 2)
			break;
	}
}

/*
 * Before the filter goes live: publish what the runtime must not do from
 * now on (with the new filter counted), undo what must be undone while
 * the filters so far still allow it.  Returns the slot, or -1 (more
 * filters than we keep: everything is forbidden).
 */
static int before_install(int strict, const void *uprog, uint32_t *before)
{
	struct filter f = { NULL, 0, 1 };
	uint32_t n, denied;
	int slot = -1;

	lock();
	*before = __atomic_load_n(&cp_sys_denied, __ATOMIC_RELAXED);
	if (!strict && copy_filter(uprog, &f)) {
		unlock();
		return -2; /* the kernel will say EFAULT */
	}
	n = filters.n;
	if (strict) {
		filters.strict = 1;
	} else if (n < MAX_FILTERS) {
		filters.f[n] = f;
		__atomic_store_n(&filters.n, n + 1, __ATOMIC_RELEASE);
		slot = (int)n;
	} else {
		filters.overflow = 1;
	}
	denied = denied_by(filters.n, filters.strict) | *before | inherited;
	/* While the filters so far allow it: the catchers of fatal signals go. */
	if ((denied & (1u << CP_SYS_RERAISE)) && !(*before & (1u << CP_SYS_RERAISE)))
		cp_signals__give_back();
	/* Our profile is the watcher's to write, at the end (session.c, watch.c). */
	if (denied & (1u << CP_SYS_WRITE))
		__atomic_store_n(&cp_session.handed, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&cp_sys_denied, denied, __ATOMIC_SEQ_CST);
	wait_inflight(*before);
	if ((denied & (1u << CP_SYS_MEMORY)) && !(*before & (1u << CP_SYS_MEMORY)))
		cp_session__stop();
	unlock();
	return slot;
}

/*
 * The install returned ret: if it failed, the filter is not in force.
 * Recompute from the filters that are (what was undone stays undone).
 */
static void after_install(int slot, int strict, uint32_t before, int failed)
{
	uint32_t denied;

	lock();
	if (failed) {
		if (slot >= 0)
			__atomic_store_n(&filters.f[slot].live, 0, __ATOMIC_RELEASE);
		if (strict)
			filters.strict = 0;
		denied = denied_by(filters.n, filters.strict);
		/* Recording stopped and catchers given back stay so. */
		denied |= cp_sys_denied & (1u << CP_SYS_MEMORY | 1u << CP_SYS_RERAISE);
		if (denied & (1u << CP_SYS_MEMORY))
			denied |= 1u << CP_SYS_WRITE | 1u << CP_SYS_FORK;
		denied |= inherited;
		if (!(denied & (1u << CP_SYS_WRITE)))
			__atomic_store_n(&cp_session.handed, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&cp_sys_denied, denied, __ATOMIC_SEQ_CST);
	} else {
		say_denied(__atomic_load_n(&cp_sys_denied, __ATOMIC_RELAXED), before);
	}
	unlock();
}

typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);

static prctl_fn real_prctl;

#define CP_INTERPOSE_SECCOMP __attribute__((visibility("default"), no_instrument_function))

int prctl(int option, ...);

CP_INTERPOSE_SECCOMP int prctl(int option, ...)
{
	prctl_fn next = CP_NEXT(real_prctl, "prctl");
	unsigned long a[4];
	uint32_t before;
	int slot, strict, ret, saved_errno;
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option != PR_SET_SECCOMP || cp_guard__from_runtime(__builtin_return_address(0)) ||
	    (a[0] != SECCOMP_MODE_STRICT && a[0] != SECCOMP_MODE_FILTER))
		return next(option, a[0], a[1], a[2], a[3]);
	strict = a[0] == SECCOMP_MODE_STRICT;
	saved_errno = errno;
	slot = before_install(strict, (const void *)a[1], &before);
	errno = saved_errno;
	ret = next(option, a[0], a[1], a[2], a[3]);
	saved_errno = errno;
	if (slot != -2)
		after_install(slot, strict, before, ret != 0);
	errno = saved_errno;
	return ret;
}

/*
 * syscall(SYS_seccomp, ...) or syscall(SYS_prctl, PR_SET_SECCOMP, ...) of
 * the program (interpose.c): 1 and *ret if it installed (or tried to) a
 * filter, else 0.
 */
int cp_seccomp__syscall(long nr, const long *a, long *ret)
{
	uint32_t before;
	int slot, strict, saved_errno;
	long r;

	if (nr == SYS_prctl && a[0] == PR_SET_SECCOMP &&
	    (a[1] == SECCOMP_MODE_STRICT || a[1] == SECCOMP_MODE_FILTER))
		strict = a[1] == SECCOMP_MODE_STRICT;
	else if (nr == SYS_seccomp &&
		 (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER))
		strict = a[0] == SECCOMP_SET_MODE_STRICT;
	else
		return 0;
	saved_errno = errno;
	slot = before_install(strict, (const void *)a[2], &before);
	errno = saved_errno;
	r = cp_interpose__real_syscall(nr, a);
	saved_errno = errno;
	/* SECCOMP_FILTER_FLAG_NEW_LISTENER returns a descriptor. */
	if (slot != -2)
		after_install(slot, strict, before, r < 0);
	errno = saved_errno;
	*ret = r;
	return 1;
}

/* Does a filter we saw, or one an earlier image saw, hold (it survives exec: CALLPROF_SECCOMP)? */
int cp_seccomp__known(void)
{
	return __atomic_load_n(&filters.n, __ATOMIC_ACQUIRE) || filters.strict || filters.overflow ||
	       inherited;
}

/*
 * A new image: an earlier one of this process saw filters, which hold
 * here too (they survive exec), and passed what they forbid in
 * CALLPROF_SECCOMP (hex).  What they forbid is what they forbid us: the
 * same runtime makes the same calls.
 */
void cp_seccomp__inherit(const char *mask)
{
	uint32_t m = 0;

	for (; *mask; mask++) {
		int d = *mask >= '0' && *mask <= '9' ? *mask - '0' :
			*mask >= 'a' && *mask <= 'f' ? *mask - 'a' + 10 : -1;

		if (d < 0) {
			m = ~0u; /* not ours to read: everything forbidden */
			break;
		}
		m = m << 4 | (uint32_t)d;
	}
	inherited = m | 1u << CP_SYS_WATCH;
	__atomic_fetch_or(&cp_sys_denied, inherited, __ATOMIC_SEQ_CST);
	if (inherited & ~(1u << CP_SYS_WATCH | 1u << CP_SYS_START))
		cp_session.filtered = 1;
}
