/*
 * watch.c - a profile even when the program is killed.
 *
 * SIGKILL (a user's kill -9, the OOM killer, a supervisor's timeout) ends a
 * process without running any of its code, so the profile in its memory
 * would be lost.  The runtime therefore keeps everything a dump reads in
 * memory that a second process can read live:
 *
 *  - its own writable data pages (cp_session, the arena's bounds, the module
 *    log's address, ...) are remapped MAP_SHARED at start-up, at the same
 *    addresses, so that a process cloned later shares them;
 *  - thread states, shadow stacks, node chunks and the module log come from
 *    shared anonymous mappings, the arena's pieces (arena.c); a watcher
 *    sees the pieces there were when it was cloned, so a new piece gets a
 *    new watcher; a watcher that sees fewer pieces than the program has
 *    writes nothing and ends itself (it looks every STALE_CHECK_MS).
 *
 * When the process looks up its first call path, a watcher is cloned from
 * it through a helper clone that exits at once, so the watcher is no
 * child of the program (its wait(), even with __WALL, never sees it).  The
 * watcher takes what steers it (output path, pid, descriptors) into
 * private memory before it is cloned, and the program's credentials
 * before it writes (creds.c).  The watcher
 * holds none of the program's files, leaves its session and blocks every
 * signal, so the program's terminal, pipes and process group behave as
 * without it.  It waits on a pidfd for the program's end; if the program
 * did not write its profile (and did not exec), the watcher writes it from
 * the shared memory with the ordinary dump code, at the same addresses,
 * with the calls still open closed at that moment (CP_META_KILLED).
 *
 * A fork child must not share its parent's memory: before fork() returns
 * to the program, the child copies what it keeps (its own thread's tree,
 * the module log, the data pages) into fresh shared memory at the same
 * addresses while the forking parent thread waits for it, then gets a
 * watcher of its own on its first call.
 *
 * Snapshots of a program that runs on (`callprof dump PID`, record
 * --dump-on=SIG): the watcher also waits on a signalfd for SIGUSR2.  On a
 * request it writes OUT.dumpN from the shared memory with the ordinary dump
 * code (CP_FLUSH_WATCH: reads only, takes none of the program's locks), and
 * answers a request sent with sigqueue(CP_DUMP_REQUEST) by sigqueue to the
 * requester: the number of a descriptor it holds open on the snapshot (the
 * requester reads its name in /proc/WATCHER/fd, and copies it through
 * that descriptor), or -errno; a stale watcher answers a request it has
 * before it ends (-EAGAIN: ask the newer one), and a watcher that ends
 * waits for the reader of its last snapshot first (end_watch).  The
 * program itself forwards --dump-on's signal with kill() (signals.c).
 *
 * `callprof record` is a child subreaper: the watchers are its children,
 * and record waits for those (named "callprof-watch") whose program ended
 * before it reports.
 *
 * Needs pidfd_open (Linux 5.3).  CALLPROF_WATCH=0 turns all of this off.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/internal.h"

#define PAGE 4096ul
#define STALE_CHECK_MS 250 /* how often a watcher checks for a newer piece of the arena */
#define LINGER_MS 10000	   /* the longest a watcher that ends waits for a snapshot's reader (cmd-dump.c's TIMEOUT_S) */

static struct {
	char *data;	  /* the runtime's writable data pages (shared) */
	size_t data_len;
	int ready;	  /* data pages and arena are shared: a watcher can work */
	int fork_pipe[2]; /* a fork child tells its parent it has copied its memory */
	/* what a fork child keeps, while it is being copied */
	struct keep {
		const char *p;
		size_t len;
	} *keep;
	size_t nkeep, keep_cap, keep_bytes;
} w = { .fork_pipe = { -1, -1 } };

struct find_data {
	uintptr_t addr;		 /* an address in our writable data */
	uintptr_t start, end;	 /* the pages to share */
};

static uintptr_t page_up(uintptr_t a)
{
	return (a + PAGE - 1) & ~(PAGE - 1);
}

static int find_data(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_data *fd = arg;
	uintptr_t lo = 0, hi = 0, relro = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && fd->addr >= a &&
		    fd->addr < a + ph->p_memsz) {
			lo = a & ~(PAGE - 1);
			hi = page_up(a + ph->p_memsz);
		}
		if (ph->p_type == PT_GNU_RELRO)
			relro = a + ph->p_memsz;
	}
	if (!hi)
		return 0;
	/* The part after RELRO (which the loader made read-only) is ours to remap. */
	if (relro > lo && relro <= hi)
		lo = page_up(relro);
	fd->start = lo;
	fd->end = hi;
	return 1;
}

/*
 * Replace the pages [p, p + len) by shared memory with the same contents,
 * in one step (mremap over them), so no other thread ever reads zeros.
 */
static int share_pages(void *p, size_t len)
{
	void *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (fresh == MAP_FAILED)
		return -1;
	memcpy(fresh, p, len);
	if (mremap(fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, p) != p) {
		munmap(fresh, len);
		return -1;
	}
	return 0;
}

static int overcommit_never(void)
{
	char c = 0;
	int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = 0;
		close(fd);
	}
	return c == '2';
}

/* At start-up, before anything else of the session is set. */
void cp_watch__init(void)
{
	const char *env = cp_getenv("CALLPROF_WATCH");
	struct find_data fd = { (uintptr_t)&cp_session, 0, 0 };

	if ((env && !strcmp(env, "0")) || overcommit_never())
		return;
	if (!dl_iterate_phdr(find_data, &fd) || (uintptr_t)&cp_session < fd.start ||
	    (uintptr_t)(&w + 1) > fd.end || (uintptr_t)(&cp_arena + 1) > fd.end)
		return;
	/* The arena first: data pages shared without one would leak into fork children. */
	if (cp_arena__init())
		return;
	w.data = (char *)fd.start;
	w.data_len = fd.end - fd.start;
	if (share_pages(w.data, w.data_len)) {
		cp_arena__release();
		return;
	}
	w.ready = 1;
	cp_session.watch_pending = 1;
}

/*
 * What the watcher knows of its own: filled in before it is cloned, in a
 * private mapping that the clone copies, so nothing the program writes
 * later reaches it.  Nothing else of the program's memory steers what the
 * watcher opens or with which rights (see creds.c).
 */
struct watch_ctx {
	int pidfd;		/* the program, to wait for its end */
	int procfd;		/* its /proc directory, to read its credentials */
	pid_t pid;
	int have_creds;		/* creds holds the program's, as last read */
	struct cp_creds creds;
	int statusfd;		/* record's status file (cp_status__open), or -1 */
	unsigned delay_ms;	/* CALLPROF_WATCH_DELAY_MS: tests make the race with a reaper sure */
	uint32_t npieces;	/* the arena's pieces it sees (cloned after they were made) */
	char out[sizeof(cp_session.out)];
};

/* Close every descriptor but those of keep[n] (ascending, -1s first); 0, 1, 2 become /dev/null. */
static void close_all_but(const int *keep, int n)
{
	unsigned next = 0;
	int fd;

	for (int i = 0; i < n; i++) {
		if (keep[i] < 0)
			continue;
		if ((unsigned)keep[i] > next)
			syscall(SYS_close_range, next, (unsigned)keep[i] - 1, 0u);
		next = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, next, ~0u, 0u);
	fd = open("/dev/null", O_RDWR);
	while (fd >= 0 && fd < 2)
		fd = dup(fd);
}

/* Of the descriptors, keep the watcher's only (close_all_but wants them ascending). */
static void keep_only_ours(const struct watch_ctx *x)
{
	int keep[3] = { x->pidfd, x->procfd, x->statusfd };

	for (int i = 0; i < 3; i++)
		for (int k = i + 1; k < 3; k++)
			if (keep[k] < keep[i]) {
				int t = keep[i];

				keep[i] = keep[k];
				keep[k] = t;
			}
	close_all_but(keep, 3);
}

/*
 * Take the program's credentials of now (see creds.c) before acting for
 * it: 0, or -errno when they cannot be read and might have changed, or
 * cannot be taken.
 */
static int act_as_program(struct watch_ctx *x)
{
	struct cp_creds now;

	if (!cp_creds__read(x->procfd, &now)) {
		x->creds = now;
		x->have_creds = 1;
	} else if (!x->have_creds || !cp_creds__fixed(&x->creds)) {
		return -EPERM;
	}
	return cp_creds__become(&x->creds);
}

/* The program has pieces of the arena this watcher cannot see (a newer watcher can). */
static int stale(const struct watch_ctx *x)
{
	return __atomic_load_n(&cp_arena.npieces, __ATOMIC_ACQUIRE) != x->npieces;
}

/*
 * A snapshot for a program that runs on, as asked by si: written to
 * OUT.dumpN; a request of `callprof dump` is answered (see above).  *held
 * is the descriptor on the last snapshot, kept for the requester to find,
 * and *reader a pidfd on that requester (-1 if none could be had).
 */
static void snapshot(struct watch_ctx *x, const struct signalfd_siginfo *si, int *held, int *reader)
{
	char path[sizeof(cp_session.out) + 32];
	union sigval v;
	int ret;

	if (__atomic_load_n(&cp_session.finished, __ATOMIC_ACQUIRE) || cp_session.exec_pending ||
	    cp_session.state != CP_STATE_ON)
		ret = -ESRCH; /* ending: its own profile is being written */
	else if (__atomic_load_n(&cp_arena.overflowed, __ATOMIC_ACQUIRE))
		ret = -ENOMEM; /* part of the tree is out of our sight */
	else if (stale(x))
		ret = -EAGAIN; /* out of our sight, in a newer watcher's: ask it */
	else if ((ret = act_as_program(x)) == 0) {
		cp_api__dump_path(x->out, path, sizeof(path));
		ret = cp_flush(path, CP_FLUSH_WATCH);
	}
	if (si->ssi_code != SI_QUEUE || si->ssi_int != CP_DUMP_REQUEST)
		return;
	if (!ret) {
		if (*held >= 0)
			close(*held);
		*held = open(path, O_RDONLY | O_CLOEXEC);
		ret = *held >= 0 ? *held : -errno;
		if (*reader >= 0)
			close(*reader);
		*reader = *held >= 0 ? (int)syscall(SYS_pidfd_open, (long)si->ssi_pid, 0L) : -1;
	}
	v.sival_int = ret;
	sigqueue((pid_t)si->ssi_pid, SIGUSR2, v);
}

/*
 * End the watcher.  The requester of the last snapshot copies it through
 * our descriptor (/proc/WATCHER/fd/N) after the answer: a watcher that
 * ended just after answering (made stale by the program's next piece of
 * memory, or its attach window closed) left it "cannot find the snapshot"
 * (t0513, 1 run in 10).  So it first waits for that reader to end, at most
 * as long as the reader waits for an answer.
 */
static __attribute__((noreturn)) void end_watch(int held, int reader)
{
	struct pollfd p = { .fd = reader, .events = POLLIN };

	if (held >= 0 && reader >= 0)
		poll(&p, 1, LINGER_MS); /* every signal is blocked: no EINTR */
	syscall(SYS_exit_group, 0);
	__builtin_unreachable();
}

/*
 * The watcher: cloned from the program, it only waits, then maybe writes.
 * Our globals are the program's too, and change under it: nothing of them
 * is read before the program is gone, except flags that say whether to
 * write, never where or as whom.
 */
static __attribute__((noreturn)) void watcher(struct watch_ctx *x)
{
	struct pollfd p[2] = { { .fd = x->pidfd, .events = POLLIN }, { .fd = -1, .events = POLLIN } };
	char tmp[sizeof(cp_session.out) + 32];
	struct signalfd_siginfo si;
	sigset_t req;
	int held = -1, reader = -1, ret, act_failed;

	/* Not under the program's seccomp filters (started before any, internal.h). */
	cp_watcher_self = 1;
	setsid();
	/* The gate's page is this process's own, emptied by the clone: calibration runs hooks. */
	cp_gate = CP_GATE_LIVE;
	keep_only_ours(x);
	/* The output path is absolute: this only keeps a mount from being held busy. */
	if (chdir("/")) {
	}
	x->have_creds = !cp_creds__read(x->procfd, &x->creds);
	/* Every signal is blocked here: SIGUSR2 stays pending for the signalfd. */
	sigemptyset(&req);
	sigaddset(&req, SIGUSR2);
	p[1].fd = signalfd(-1, &req, SFD_CLOEXEC);
	for (;;) {
		/*
		 * A watcher made stale by a new piece of the arena ends itself (a
		 * newer one sees everything): nobody kills it by a pid that may
		 * have been reused.  The timeout only bounds how long it lingers.
		 */
		int n = poll(p, 2, stale(x) ? 0 : STALE_CHECK_MS);

		if (n > 0 && p[0].revents)
			break;
		/*
		 * A request answered first, even when ending (it says so:
		 * -ESRCH) or stale (-EAGAIN: `callprof dump` asks the newer one;
		 * unanswered, it would wait for its whole timeout).
		 */
		if (n > 0 && p[1].revents && read(p[1].fd, &si, sizeof(si)) == sizeof(si))
			snapshot(x, &si, &held, &reader);
		if (stale(x))
			end_watch(held, reader);
		/* callprof attach ended its window: the program runs on without us. */
		if (cp_attach.on && __atomic_load_n(&cp_session.finished, __ATOMIC_ACQUIRE))
			end_watch(held, reader);
	}
	if (x->delay_ms) {
		struct timespec ts = { x->delay_ms / 1000, (long)(x->delay_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	/*
	 * The program is gone.  Unless it wrote its profile (finished), was
	 * replaced by exec (its profile is PATH.execN), or put part of the tree
	 * where we cannot see it, write it now.  A file it was writing when it
	 * was killed is removed first.
	 */
	if (!__atomic_load_n(&cp_session.finished, __ATOMIC_ACQUIRE) && !cp_session.exec_pending &&
	    !cp_arena.overflowed && !stale(x) && cp_session.state >= CP_STATE_ON &&
	    cp_session__ran_code()) {
		ret = act_as_program(x);
		act_failed = ret != 0;
		if (!ret) {
			cp_writer__tmp_name(tmp, sizeof(tmp), x->out, (unsigned long)x->pid);
			unlink(tmp);
			/*
			 * Left to us by a program whose seccomp filter forbade
			 * writing (seccomp.c), if it ended, not killed.
			 */
			ret = cp_flush(x->out, __atomic_load_n(&cp_session.handed, __ATOMIC_ACQUIRE) &&
						       __atomic_load_n(&cp_session.ended, __ATOMIC_ACQUIRE) ?
						       CP_FLUSH_LEFT : CP_FLUSH_KILLED);
		}
		if (ret)
			cp_status__failed(x->statusfd, act_failed ? "rights" : "watch", -ret);
	}
	end_watch(held, reader);
}

/*
 * The helper between the program and its watcher: it clones the watcher
 * and ends at once, so the watcher is not the program's child (the
 * program's waitpid(-1, __WALL) and /proc/PID/task/TID/children never see
 * it): it goes to the nearest child subreaper (`callprof record`) or init,
 * and ends with SIGCHLD for them to reap it.
 */
static __attribute__((noreturn)) void helper(struct watch_ctx *x)
{
	long pid = syscall(SYS_clone, (long)SIGCHLD, NULL, NULL, NULL, 0L);

	if (pid == 0)
		watcher(x);
	if (pid > 0)
		__atomic_store_n(&cp_session.watcher, (pid_t)pid, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	__builtin_unreachable();
}

/* Start this process's watcher (once; from the first call path lookup). */
void cp_watch__spawn(void)
{
	size_t bytes = (sizeof(struct watch_ctx) + PAGE - 1) & ~(PAGE - 1);
	struct watch_ctx *x;
	sigset_t all, old;
	char name[17] = "";
	const char *delay;
	int subreaper = 0, status, saved_errno = errno;
	long pid;

	/* Under a seccomp filter a watcher would be under it too: none (seccomp.c). */
	if (!__atomic_exchange_n(&cp_session.watch_pending, 0, __ATOMIC_ACQ_REL) || !w.ready ||
	    !cp_sys__may(CP_SYS_WATCH) || getpid() != cp_session.pid)
		return;
	/* A child subreaper would get the watcher as its child: it would see it. */
	if (prctl(PR_GET_CHILD_SUBREAPER, &subreaper) || subreaper) {
		errno = saved_errno;
		return;
	}
	x = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x == MAP_FAILED) {
		errno = saved_errno;
		return;
	}
	x->pid = cp_session.pid;
	memcpy(x->out, cp_session.out, sizeof(x->out));
	x->out[sizeof(x->out) - 1] = '\0';
	x->statusfd = cp_status__open();
	delay = cp_getenv("CALLPROF_WATCH_DELAY_MS");
	x->delay_ms = delay ? (unsigned)strtoul(delay, NULL, 10) % 60000 : 0;
	x->npieces = __atomic_load_n(&cp_arena.npieces, __ATOMIC_ACQUIRE);
	x->pidfd = (int)syscall(SYS_pidfd_open, (long)x->pid, 0L);
	x->procfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->pidfd < 0 || x->procfd < 0)
		goto out;
	/* The clones start with every signal blocked: no handler of the program runs in them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/*
	 * The clones inherit this thread's name: the watcher has its own from
	 * its first instant, so record recognises it even if the program dies
	 * at once.  (Other threads may see the borrowed name for that instant.)
	 */
	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "callprof-watch");
	pid = syscall(SYS_clone, 0L /* exit signal 0: no SIGCHLD for the program */, NULL, NULL,
		      NULL, 0L);
	if (pid == 0)
		helper(x);
	/* Reaped by its pid: __WALL, as a clone with exit signal 0 is no ordinary child. */
	while (pid > 0 && syscall(SYS_wait4, pid, &status, __WALL, NULL) < 0 && errno == EINTR)
		;
	prctl(PR_SET_NAME, name);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	if (x->pidfd >= 0)
		close(x->pidfd);
	if (x->procfd >= 0)
		close(x->procfd);
	if (x->statusfd >= 0)
		close(x->statusfd);
	munmap(x, bytes);
	errno = saved_errno;
}

/* The arena has a new piece: a watcher that sees it (from arena.c). */
void cp_watch__spawn_again(void)
{
	if (!w.ready || !cp_sys__may(CP_SYS_WATCH) || getpid() != cp_session.pid)
		return;
	__atomic_store_n(&cp_session.watch_pending, 1, __ATOMIC_RELEASE);
	cp_watch__spawn();
}

/* ---- fork ---- */

/* Before fork, with signals blocked and the module and fold locks held. */
void cp_watch__fork_prepare(void)
{
	if (w.ready && pipe2(w.fork_pipe, O_CLOEXEC))
		w.fork_pipe[0] = w.fork_pipe[1] = -1;
}

/* In the parent: wait until the child has copied what it keeps. */
void cp_watch__fork_parent(void)
{
	char c;

	if (w.fork_pipe[0] < 0)
		return;
	close(w.fork_pipe[1]);
	/* A byte when the child is done; end of file if there is no child. */
	while (read(w.fork_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	close(w.fork_pipe[0]);
	w.fork_pipe[0] = w.fork_pipe[1] = -1;
}

static void count_keep(const void *p, size_t len)
{
	if (cp_arena__contains(p) && len) {
		w.keep_cap++;
		w.keep_bytes += len;
	}
}

static void add_keep(const void *p, size_t len)
{
	if (cp_arena__contains(p) && len && w.nkeep < w.keep_cap)
		w.keep[w.nkeep++] = (struct keep){ p, len };
}

static void keep_all(void (*keep)(const void *, size_t), struct cp_thread *t)
{
	cp_modules__keep(keep);
	cp_session__keep(keep);
	cp_arena__keep(keep);
	if (t)
		cp_thread__keep(t, keep);
	if (t && t->owner)
		cp_thread__keep(t->owner, keep);
}

/*
 * In the child, first thing: take the data pages, then what the child
 * keeps of the arena (see cp_thread__reset_after_fork), into memory of its
 * own; then let the parent go on.  If there is no memory for the copy, the
 * child keeps the data pages of its own but records nothing more.
 */
void cp_watch__fork_child(void)
{
	struct cp_thread *t = cp_self;
	size_t bytes;
	char *save, *p;
	int ok = 0;

	if (!w.ready)
		return;
	share_pages(w.data, w.data_len); /* from here on, our globals are ours */
	w.keep_cap = w.keep_bytes = w.nkeep = 0;
	keep_all(count_keep, t);
	bytes = w.keep_cap * sizeof(*w.keep) + w.keep_bytes;
	save = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (save != MAP_FAILED) {
		w.keep = (struct keep *)save;
		keep_all(add_keep, t);
		p = save + w.keep_cap * sizeof(*w.keep);
		for (size_t i = 0; i < w.nkeep; p += w.keep[i].len, i++)
			memcpy(p, w.keep[i].p, w.keep[i].len);
	}
	if (w.fork_pipe[1] >= 0) {
		ssize_t n = write(w.fork_pipe[1], "", 1);

		(void)n;
		close(w.fork_pipe[0]);
		close(w.fork_pipe[1]);
		w.fork_pipe[0] = w.fork_pipe[1] = -1;
	}
	/* The parent's arena is out of reach from here: a fresh one at the same place. */
	if (!cp_arena__remap_fresh() && save != MAP_FAILED) {
		p = save + w.keep_cap * sizeof(*w.keep);
		for (size_t i = 0; i < w.nkeep; p += w.keep[i].len, i++)
			memcpy((void *)w.keep[i].p, p, w.keep[i].len);
		ok = 1;
	}
	if (save != MAP_FAILED)
		munmap(save, bytes);
	w.keep = NULL;
	if (!ok) {
		/* Nothing of the tree is left: stop recording in this child. */
		w.ready = 0;
		cp_self = NULL;
		cp_session.state = CP_STATE_DONE;
		cp_session.finished = 1;
		return;
	}
	if (t) {
		t->cct.stack->older = NULL;
		if (t->owner) {
			t->owner->cct.stack->older = NULL;
		} else {
			t->side = NULL;
		}
	}
	cp_session.watcher = 0; /* the parent's; ours starts on our first call */
	cp_session.watch_pending = 1;
}
