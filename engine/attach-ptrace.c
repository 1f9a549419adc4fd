/*
 * attach-ptrace.c - attaching to a running program (docs/internals/attach.md).
 *
 * A program built with -finstrument-functions calls the C library's empty
 * __cyg_profile_func_enter/exit through GOT slots.  Recording it means
 * pointing those slots at the runtime's hooks; ending means pointing them
 * back.  The steps, each with the process's threads in ptrace stops only
 * for as long as needed:
 *
 *  A. load: one thread, stopped alone (the others run, so that any lock it
 *     needs is released), calls the process's dlopen on a fresh copy of the
 *     mode's runtime, then callprof_attach_start() with record's settings.
 *     The copy is fresh so that a second attach gets a runtime of its own:
 *     the first stays loaded, inert, and lends the later ones its TLS.
 *  B. switch: every thread stopped.  A thread stopped on its way into or
 *     out of the hook is moved past the C library's empty function (or left
 *     before the GOT jump, which will then reach our hook); one stopped in
 *     an instrumented function's own code is stepped to its next call or
 *     return, so that whether that call is open is known.  Each thread's
 *     stack is unwound, and the calls of the hooks' world open on it (those
 *     of functions inlined with their hooks too, found through DWARF) are
 *     written to the runtime's seed area.  Then every module's slots and the C
 *     library's own .dynsym entries of the two hooks (so that a module
 *     loaded or a slot bound lazily later binds to our hooks too) are
 *     rewritten, all through /proc/PID/mem (which writes RELRO pages as
 *     well), and the threads go on.
 *  C. the window: the process runs untraced.  It may end: its runtime
 *     writes the profile at exit, or its watcher if it was killed.
 *  D. unload: every thread stopped, the slots and .dynsym entries restored
 *     (also those of modules loaded during the window), the threads go on
 *     but one, which calls callprof_attach_stop() to write the profile.
 *     Then, every thread stopped outside our code, callprof_attach_release()
 *     gives back the session's memory, and a copy that is not the first is
 *     unloaded (dlclose).
 *
 * A thread interrupted in a system call has it restarted as the kernel
 * would after a signal without a handler: the few calls that the kernel
 * ends with EINTR even then (epoll_wait, for one) are restarted here, when
 * no signal is pending that could have caused the EINTR.  Signals that
 * arrive while a thread is in our hands are delivered when it is let go.
 */
#include <asm/perf_regs.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "engine/attach.h"
#include "format/format.h"
#include "runtime/cbpf.h"
#include "symbolize/elffile.h"
#include "symbolize/unwind.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"
#include "util/x86.h"

/* The seed area, as runtime/internal.h lays it out (struct cp_attach_area). */
#define ATTACH_MAGIC 0x3248434154545043ull
#define AREA_T0 24	 /* t0_tsc, then t0_mono_ns */
#define AREA_NTHREADS 40 /* uint32_t */
#define AREA_THREADS 48	 /* struct {u32 tid, nframes, first, taken; u64 run0, delay0}[max_threads] */
#define SEED_THREAD 32	 /* its size */
#define SEED_STILL 2	 /* taken: the stop made the thread's tree (enum cp_seed_taken) */
/*
 * The sleds' tail of the area (struct cp_attach_sleds, runtime/internal.h),
 * after frames[]: uint64_t values read by index.  Its numbers (the stub
 * geometry, the shadow stacks' layout, our code's ranges) are the
 * runtime's, never copied here: only their places are (attach.c asserts).
 */
enum sleds_info {
	SL_PLAN, SL_COUNT, SL_MODULES, SL_FOREIGN, SL_SKIPPED, SL_STUBS_RX, SL_STUBS_BYTES,
	SL_STUBS_USED, SL_STUB_SIZE, SL_STUB_FIRST, SL_STUB_SLOT, SL_STUB_TARGET, SL_PAGE, SL_NNEAR,
	SL_NEAR, SL_THREADS = SL_NEAR + 64, SL_TH_NEXT, SL_TH_SIDE, SL_TH_TID, SL_TH_TOP, SL_TH_STACK,
	SL_TH_BUSY, SL_TH_MUTE_SP, SL_STACK_F, SL_FRAME_SIZE, SL_FRAME_SP, SL_SP_SLED, SL_SP_HOOKED,
	SL_SP_FLAGS, SL_SLOT_AT, SL_MUTED, SL_N
};
#define PLAN_SLED 24 /* struct cp_attach_sled: addr, call[5], nop[5], pad */
#define CALL_TIMEOUT_MS 10000
#define STOP_MS 3000 /* for every thread to stop */
#define LOAD_WAIT_MS 3000 /* for another thread to release the dynamic loader's lock */
#define STEP_LIMIT 4096	     /* single steps to the next call or return */
#define STACK_COPY (512 << 10) /* bytes of a thread's stack copied for unwinding */
#define MAX_FRAMES 512
#define MAX_SLOTS 64

struct mapping {
	uint64_t start, end, pgoff;
	char perms[5];
	unsigned long dev, inode; /* the mapped file (makedev), its inode */
	char *path; /* NULL for anonymous memory; as the process sees it */
	char *file; /* what callprof opens to read it (see read_maps) */
};

struct module {
	char *path;   /* as the process sees it */
	char *file;   /* what callprof opens to read it */
	unsigned long dev, inode;
	uint64_t bias, lo, hi;	    /* load bias; the range its mappings cover */
	uint64_t slots[2][MAX_SLOTS]; /* GOT slots of enter [0] and exit [1], process addresses */
	int nslots[2];
	struct fnsym {
		uint64_t lo, hi;
		int part; /* a part split off a function (name.cold, name.part.N) */
	} *fns; /* function symbols, sorted, process addresses */
	size_t nfns;
	int runtime; /* our copy of the runtime: never redirected */
	uint64_t islots[16][4];	/* GOT slots of the interposed functions (see interposed[]) */
	int nislots[16];
};

/*
 * Functions the runtime must see called (runtime/interpose.c), whose GOT
 * slots point at our copy's during the window: the ends without
 * destructors (a fork child that ends with _exit writes its profile), the
 * exec family (the image writes its profile before it is replaced), the
 * longjmp family and the C++ runtime's __cxa_begin_catch (the frames a
 * jump or a clang catch abandons are closed there, not at the next exit
 * that matches one below them).  Only functions whose interposer never
 * returns, or returns at once: a return address into a copy that is
 * unloaded at its end must not be left on a stack (swapcontext's would
 * be, on every suspended context's).  The copy finds the real ones where
 * its dlsym(RTLD_NEXT) does not look (cp_next_loaded: libstdc++ is in the
 * program's scope, not the copy's).
 */
static const char *const interposed[] = { "_exit",    "_Exit",	 "abort",      "execve",
					  "execv",    "execvp",	 "execvpe",    "execl",
					  "execlp",   "execle",	 "fexecve",    "longjmp",
					  "_longjmp", "siglongjmp", "__longjmp_chk",
					  "__cxa_begin_catch" };
#define NIPOSE 16
_Static_assert(ARRAY_SIZE(interposed) == NIPOSE &&
		       sizeof(((struct module *)0)->nislots) == NIPOSE * sizeof(int),
	       "interposed[], NIPOSE and struct module's slots");

struct thread {
	pid_t tid;
	int gone;
	int last_stop;	     /* the signal of its last stop, 0 for an event stop */
	int sigs[8];	     /* signals that came while ours: delivered when let go */
	siginfo_t info[8];   /* ... each with what its sender said (info_ok) */
	unsigned char info_ok[8];
	int nsigs;
	int dirty;	     /* regs must be written back */
	int running;	     /* seized but not in a stop (asked to stop, or in our call) */
	int stepping;	     /* single-stepped, its stop not yet seen: a SIGTRAP on its way */
	struct user_regs_struct regs;
};

struct attach {
	pid_t pid;
	const char *comm;     /* its name, for messages */
	char proc[64];	      /* its /proc directory to read it through (cp_attach__proc) */
	int mem;	      /* /proc/PID/mem, read-write */
	struct mapping *maps;
	size_t nmaps;
	struct module *mods;
	size_t nmods;
	uint64_t mods_sig;	 /* the file mappings the modules were read from (maps_sig) */
	struct thread *th;
	size_t nth, th_alloc;
	uint64_t libc_hook;	 /* the C library's __cyg_profile_func_enter (= exit) */
	uint64_t libc_sym[2];	 /* process addresses of its .dynsym entries' st_value */
	uint64_t libc_sym_old[2];
	uint64_t libc_bias;
	uint64_t dlopen_fn, dlerror_fn, dlclose_fn;
	uint64_t handle;	 /* dlopen's for our copy */
	uint64_t restorer;	 /* the C library's __restore_rt */
	uint64_t stub;		 /* our stub's page (see call) */
	uint64_t rt_hook[2];	 /* our copy's enter and exit */
	uint64_t rt_start, rt_stop, rt_release;
	uint64_t rt_ipose[NIPOSE];	 /* our copy's interposers */
	struct ipose_slot { uint64_t at, old; int k; } *isaved; /* slots we pointed at them */
	size_t nisaved, isaved_alloc;
	uint64_t rt_text_lo, rt_text_hi; /* our copy's code */
	int on;			 /* the hooks' slots point at our copy */
	int execd;		 /* it ran another program: none of our addresses holds */
	int loading;		 /* call() runs dlopen: it may give up a wait for the loader's lock */
	int released;		 /* its rings and trees were given back */
	int unloaded;		 /* and the copy unloaded (dlclose) */
	struct cp_unwinder *u;	 /* at the end: whose frames are in our code */
	int stopped;		 /* the runtime wrote the profile and stopped */
	/* TLS borrowed from an earlier copy (see find_donor) */
	int64_t tls_base;	 /* its block's offset from the thread pointer; 0: none */
	uint64_t tls_size;
	struct cp_elf_tls_reloc tls[16];
	int ntls;
	uint64_t area;		 /* the seed area in the process */
	char *copy;		 /* the runtime copy, as the process names it (/proc/OURPID/fd/N) */
	int copy_fd;		 /* the copy (a memfd of ours) */
	unsigned long copy_dev, copy_ino; /* its inode: how its mappings are told */
	char *log;		 /* the runtime's warnings: its name for the process */
	int log_fd;
	char *status;		 /* why no profile was written ("write ERRNO", ...) */
	int status_fd;
	int write_errno;	 /* the stop could not write the profile: why */
	const char *out;	 /* the profile's path */
	unsigned open_seeded;
	uint32_t nseeded;	 /* entries of the seed area's thread table */
	struct fnmodel **models; /* at the switch: the functions on the stacks, and their hooks */
	size_t nmodels, models_alloc;
	unsigned still;		 /* seeded threads that ran no hook in the window */
	/* sleds: the runtime's plan (read after the start), written by us every thread held */
	uint64_t sl[SL_N];	 /* the area's sleds tail (enum sleds_info) */
	struct sled {
		uint64_t addr;
		unsigned char call[5], nop[5];
		int on;		 /* we wrote call[] there */
		int keep;	 /* left alone: a signal frame returns into its middle */
	} *plan;
	size_t nplan;
	unsigned sleds_on;	 /* sleds holding our call now */
	unsigned sleds_written;	 /* patched at the switch */
	unsigned sleds_crossing; /* left alone: their five bytes cross a page */
	unsigned sleds_changed;	 /* left alone: not the bytes planned (changed, unloaded) */
	unsigned sleds_moved;	 /* threads moved from inside a sled to its end */
	unsigned slots_given;	 /* return addresses given back at the end */
	int no_sleds;		 /* enum cp_no_sleds: sleds left alone */
	int sleds_wanted;	 /* it has sleds to patch: the start plans them */
	int stubs_left;		 /* stub return addresses may remain: the runtime's memory stays */
};

/* ---- waiting ---- */

/*
 * Every wait of the engine is bounded and ends early when callprof is
 * asked to stop (SIGINT, SIGTERM, SIGHUP, SIGQUIT).  Those four and
 * SIGCHLD, which each stop of a thread we trace sends us, are blocked but
 * inside ppoll (wait_mask), so that none comes between a check and the
 * wait that follows it.  A wait that ends without what it waited for sets
 * gave_up, which every phase checks: it then lets every thread go (each
 * with its registers) and says what it waited for.
 */
static volatile sig_atomic_t stop_signal; /* the signal that asked callprof to stop, or 0 */
static sigset_t wait_mask;		  /* our mask inside ppoll */
static struct timespec deadline;	  /* of the phase in progress (CLOCK_MONOTONIC) */
static int deadline_ms;			  /* its length, for the give-up line */
static enum { GAVE_NOT, GAVE_TIME, GAVE_SIGNAL } gave_up;
static int ending; /* the attach is ending: a request to stop is being honoured */
static int quiet;  /* a retry that may fail: grab_all says nothing */
static pid_t traced_pid; /* the process attached to (keep_signal, reap_ended) */

/*
 * A thread we trace that ends stays a zombie until we reap it, and an
 * exec in the process waits for every thread it kills to be reaped, with
 * the lock our PTRACE_SEIZE takes held (cred_guard_mutex): a seize then
 * waits for the exec, the exec for us.  So the process's threads that
 * have ended are reaped as their end is told (SIGCHLD), whatever we are
 * waiting for; our seizes let SIGCHLD in too.  A thread we were waiting
 * for then reads as gone (ECHILD), as it is.  Only ends are taken (a
 * tracee's stops are reported to any wait, WEXITED or not): each thread
 * is looked at without taking what it reports (WNOWAIT), and reaped only
 * if that is its end.  System calls only: this runs in a signal handler.
 */
static void reap_ended(void)
{
	char path[32] = "/proc/", buf[1024];
	size_t len = 6;
	int saved_errno = errno, fd;
	long n;

	cp_put_dec(path, sizeof(path) - 6, &len, (unsigned long)traced_pid);
	memcpy(path + len, "/task", 6);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			long tid = 0;
			siginfo_t si;

			off += d->reclen;
			for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid <= 0)
				continue;
			si.si_pid = 0;
			if (!waitid(P_PID, (id_t)tid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) &&
			    si.si_pid && (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
					  si.si_code == CLD_DUMPED))
				waitid(P_PID, (id_t)tid, &si, WEXITED | WNOHANG | __WALL);
		}
	}
	if (fd >= 0)
		close(fd);
	errno = saved_errno;
}

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		reap_ended();
	else
		stop_signal = sig;
}

/* The phase that starts now may wait ms milliseconds in all. */
static void phase(int ms)
{
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long)(ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	deadline_ms = ms;
}

/*
 * Sleep until a signal comes (a thread's stop, a request to stop), at most
 * until the deadline and at most max_ns: 0, or -1 once the deadline has
 * passed or a stop was asked for (gave_up says which).
 */
static int nap(long max_ns)
{
	struct timespec now, left;

	if (stop_signal && !ending) {
		gave_up = GAVE_SIGNAL;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	left.tv_sec = deadline.tv_sec - now.tv_sec;
	left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += 1000000000;
	}
	if (left.tv_sec < 0 || (left.tv_sec == 0 && left.tv_nsec == 0)) {
		gave_up = GAVE_TIME;
		return -1;
	}
	if (max_ns && (left.tv_sec > 0 || left.tv_nsec > max_ns)) {
		left.tv_sec = 0;
		left.tv_nsec = max_ns;
	}
	ppoll(NULL, 0, &left, &wait_mask);
	return 0;
}

/* Is thread tid gone, or a zombie (whose end a wait may not report while others live)? */
static int task_gone(pid_t tid)
{
	char buf[512];
	const char *p = cp_proc_stat(tid, buf, sizeof(buf));

	return !p || p[1] == 'Z' || p[1] == 'X';
}

/*
 * CALLPROF_TEST_KILL_AT=POINT (a test hook, t0550): callprof kills itself
 * (SIGKILL) at that point of the attach, to show that the process lives
 * on whatever it was doing then.
 */
static void test_kill(const char *point)
{
	const char *at = getenv("CALLPROF_TEST_KILL_AT");

	if (at && !strcmp(at, point)) {
		fprintf(stderr, "callprof: test: killed at %s\n", point);
		raise(SIGKILL);
	}
}

/*
 * CALLPROF_TEST_SEIZE_HOLD=PREFIX (a test hook, t0514): before its first
 * seize callprof creates PREFIX.seizing and waits for PREFIX.traced; after
 * its first refused seize it creates PREFIX.refused and waits for PREFIX.go
 * before looking at why (10 s at most each), so that a test can have
 * another tracer take a thread after attach's checks and let it go after
 * the refusal.
 */
static void test_seize_hold(const char *made, const char *awaited)
{
	const char *prefix = getenv("CALLPROF_TEST_SEIZE_HOLD");
	char path[PATH_MAX];
	int fd;

	if (!prefix)
		return;
	snprintf(path, sizeof(path), "%s.%s", prefix, made);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s.%s", prefix, awaited);
	for (int i = 0; i < 1000 && access(path, F_OK); i++) {
		struct timespec pause = { 0, 10 * 1000 * 1000 };

		nanosleep(&pause, NULL);
	}
}

/*
 * CALLPROF_ATTACH_TIMES=1: how long each phase held the process's threads
 * (docs/internals/attach.md, "Holding the threads"), one line each.
 */
static void held_for(const char *what, const struct timespec *since)
{
	struct timespec now;

	if (!getenv("CALLPROF_ATTACH_TIMES"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(stderr, "callprof: attach time: %s %.3f ms\n", what,
		(double)(now.tv_sec - since->tv_sec) * 1e3 +
			(double)(now.tv_nsec - since->tv_nsec) / 1e6);
}

/* ---- the process's memory ---- */

static int mem_read(struct attach *a, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(a->mem, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : -1;
}

static int mem_write(struct attach *a, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(a->mem, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : -1;
}

static uint64_t mem_u64(struct attach *a, uint64_t addr)
{
	uint64_t v = 0;

	mem_read(a, addr, &v, sizeof(v));
	return v;
}

/* ---- maps and modules ---- */

static void free_maps(struct attach *a)
{
	for (size_t i = 0; i < a->nmaps; i++) {
		free(a->maps[i].path);
		free(a->maps[i].file);
	}
	FREE_AND_NULL(a->maps);
	a->nmaps = 0;
}

/*
 * The process's mappings.  Its files are read as it sees them: through
 * its root (/proc/PID/root: another mount namespace, a chroot), a file
 * replaced or deleted since it was mapped through map_files (the mapped
 * inode itself; root only), and our runtime copy through our own
 * descriptor.
 */
static int read_maps(struct attach *a)
{
	char path[96], line[PATH_MAX + 128];
	size_t alloc = 0;
	FILE *f;

	free_maps(a);
	cp_attach__proc(a->pid, a->proc, sizeof(a->proc));
	snprintf(path, sizeof(path), "%s/maps", a->proc);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct mapping m = { 0 };
		unsigned maj = 0, min = 0;
		int off = 0;
		size_t len;
		char *p;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %lu %n", &m.start,
			   &m.end, m.perms, &m.pgoff, &maj, &min, &m.inode, &off) < 7)
			continue;
		m.dev = makedev(maj, min);
		p = line + off;
		p[strcspn(p, "\n")] = '\0';
		if (*p == '/') {
			m.path = xstrdup(p);
			len = strlen(p);
			if (a->copy_ino && m.inode == a->copy_ino && m.dev == a->copy_dev)
				m.file = xstrfmt("/proc/self/fd/%d", a->copy_fd);
			else if (len > 10 && !strcmp(p + len - 10, " (deleted)"))
				m.file = xstrfmt("%s/map_files/%" PRIx64 "-%" PRIx64, a->proc,
						 m.start, m.end);
			else
				m.file = xstrfmt("%s/root%s", a->proc, p);
		}
		ALLOC_GROW(a->maps, a->nmaps + 1, alloc);
		a->maps[a->nmaps++] = m;
	}
	fclose(f);
	return 0;
}

static const struct mapping *mapping_of(struct attach *a, uint64_t addr)
{
	for (size_t i = 0; i < a->nmaps; i++)
		if (addr >= a->maps[i].start && addr < a->maps[i].end)
			return &a->maps[i];
	return NULL;
}

/* A digest of the process's file mappings (as read_maps last read them): what modules are. */
static uint64_t maps_sig(const struct attach *a)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < a->nmaps; i++) {
		const struct mapping *m = &a->maps[i];
		uint64_t v[4] = { m->start, m->end, m->pgoff, m->inode ^ ((uint64_t)m->dev << 32) };

		if (!m->path)
			continue;
		for (int k = 0; k < 4; k++)
			h = (h ^ v[k]) * 1099511628211ull;
	}
	return h;
}

static void free_modules(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++) {
		free(a->mods[i].path);
		free(a->mods[i].file);
		free(a->mods[i].fns);
	}
	FREE_AND_NULL(a->mods);
	a->nmods = 0;
}

/* What a refusal before any thread is held gives back (the modules, the maps, /proc/PID/mem). */
static void refused_early(struct attach *a)
{
	close(a->mem);
	free_modules(a);
	free_maps(a);
}

static void add_fn(const char *name, uint64_t value, uint64_t size, void *arg)
{
	struct module *m = arg;
	static size_t alloc;

	if (!m->nfns)
		alloc = 0;
	ALLOC_GROW(m->fns, m->nfns + 1, alloc);
	m->fns[m->nfns].lo = value + m->bias;
	m->fns[m->nfns].hi = value + m->bias + (size ? size : 1);
	m->fns[m->nfns].part = name && (strstr(name, ".cold") || strstr(name, ".part."));
	m->nfns++;
}

static int cmp_fn(const void *x, const void *y)
{
	const struct fnsym *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The process's ELF modules, their load biases, hook slots and functions. */
static int read_modules(struct attach *a)
{
	free_modules(a);
	if (read_maps(a))
		return -1;
	for (size_t i = 0; i < a->nmaps; i++) {
		const struct mapping *mp = &a->maps[i];
		struct cp_elf_info info = { 0 };
		struct module m = { 0 };
		struct cp_elf *e;
		size_t j;

		if (!mp->path)
			continue;
		/* One module a file: the same inode (copies of one name are not one module). */
		for (j = 0; j < a->nmods; j++)
			if (a->mods[j].inode == mp->inode && a->mods[j].dev == mp->dev)
				break;
		if (j < a->nmods) {
			if (mp->end > a->mods[j].hi)
				a->mods[j].hi = mp->end;
			continue;
		}
		if (cp_elf_info__read(mp->file, &info) ||
		    cp_load_bias(info.segs, info.nsegs, mp->start, mp->pgoff, &m.bias)) {
			cp_elf_info__release(&info);
			continue;
		}
		cp_elf_info__release(&info);
		e = cp_elf__open(mp->file, NULL);
		if (!e)
			continue;
		m.path = xstrdup(mp->path);
		m.file = xstrdup(mp->file);
		m.dev = mp->dev;
		m.inode = mp->inode;
		m.lo = mp->start;
		m.hi = mp->end;
		for (int k = 0; k < 2; k++) {
			uint64_t offs[MAX_SLOTS];
			int n = cp_elf__symbol_slots(e, k ? "__cyg_profile_func_exit"
							  : "__cyg_profile_func_enter", offs, MAX_SLOTS);

			for (int s = 0; s < n; s++)
				m.slots[k][m.nslots[k]++] = offs[s] + m.bias;
		}
		for (int k = 0; k < NIPOSE; k++) {
			uint64_t offs[4];

			m.nislots[k] = cp_elf__symbol_slots(e, interposed[k], offs, 4);
			for (int s = 0; s < m.nislots[k]; s++)
				m.islots[k][s] = offs[s] + m.bias;
		}
		cp_elf__for_each_function(e, add_fn, &m);
		if (m.nfns) /* a stripped program has none (and no array) */
			qsort(m.fns, m.nfns, sizeof(*m.fns), cmp_fn);
		cp_elf__close(e);
		m.runtime = a->copy_ino && m.inode == a->copy_ino && m.dev == a->copy_dev;
		{
			static size_t alloc;

			if (!a->nmods)
				alloc = 0;
			ALLOC_GROW(a->mods, a->nmods + 1, alloc);
		}
		a->mods[a->nmods++] = m;
	}
	a->mods_sig = maps_sig(a);
	return 0;
}

/*
 * The modules, read again only if the process's file mappings changed
 * since they were read (a library loaded or unloaded): with every thread
 * held, reading /proc/PID/maps is quick, reading every module's ELF file
 * is not (tens of milliseconds on a loaded machine).
 */
static int modules_again(struct attach *a)
{
	if (read_maps(a))
		return -1;
	return maps_sig(a) == a->mods_sig ? 0 : read_modules(a);
}

static struct module *module_of(struct attach *a, uint64_t addr)
{
	for (size_t i = 0; i < a->nmods; i++)
		if (addr >= a->mods[i].lo && addr < a->mods[i].hi)
			return &a->mods[i];
	return NULL;
}

/* The function symbol holding addr, or NULL. */
static const struct fnsym *fnsym_of(struct attach *a, uint64_t addr)
{
	struct module *m = module_of(a, addr);
	size_t l = 0, h;

	if (!m || !m->nfns)
		return NULL;
	h = m->nfns;
	while (h - l > 1) {
		size_t mid = (l + h) / 2;

		if (m->fns[mid].lo <= addr)
			l = mid;
		else
			h = mid;
	}
	if (m->fns[l].lo > addr || addr >= m->fns[l].hi)
		return NULL;
	return &m->fns[l];
}

/* A symbol of module m, in the process; 0 if none. */
static uint64_t module_symbol(struct module *m, const char *name, uint64_t *entry)
{
	struct cp_elf *e = m ? cp_elf__open(m->file, NULL) : NULL;
	uint64_t v = 0, ent = 0;

	if (!e)
		return 0;
	if (cp_elf__dynsym(e, name, &v, &ent)) {
		cp_elf__close(e);
		return 0;
	}
	cp_elf__close(e);
	if (entry)
		*entry = ent + m->bias;
	return v + m->bias;
}

/* Our runtime copy, as loaded; NULL if it is not. */
static struct module *runtime_module(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++)
		if (a->mods[i].runtime)
			return &a->mods[i];
	return NULL;
}

/* The C library (libc.so.N), or NULL. */
static struct module *libc_module(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++) {
		const char *b = strrchr(a->mods[i].path, '/');

		if (b && !strncmp(b + 1, "libc.so.", 8))
			return &a->mods[i];
	}
	return NULL;
}

/* ---- what a call instruction calls ---- */

/* Which hook slot (0 enter, 1 exit) is the GOT slot at addr; -1 if neither. */
static int slot_kind(struct attach *a, uint64_t slot)
{
	for (size_t i = 0; i < a->nmods; i++)
		for (int k = 0; k < 2; k++)
			for (int s = 0; s < a->mods[i].nslots[k]; s++)
				if (a->mods[i].slots[k][s] == slot)
					return k;
	return -1;
}

/*
 * Is the code at t a PLT stub that jumps through a hook slot?  A stub is
 * [endbr64] [bnd] jmp *disp32(%rip).  Returns 0 enter, 1 exit, -1 no.
 */
static int stub_kind_uncached(struct attach *a, uint64_t t)
{
	unsigned char b[16];
	size_t i = 0;
	int32_t disp;

	if (mem_read(a, t, b, sizeof(b)))
		return -1;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	if (b[i] == 0xf2)
		i++;
	if (b[i] != 0xff || b[i + 1] != 0x25)
		return -1;
	memcpy(&disp, b + i + 2, 4);
	return slot_kind(a, t + i + 6 + (int64_t)disp);
}

/* stub_kind, remembered: a function's scan meets the same callees again and again. */
static int stub_kind(struct attach *a, uint64_t t)
{
	static struct { uint64_t at; int kind; } cache[4096];
	unsigned slot = (unsigned)((t ^ (t >> 12)) % 4096);

	if (cache[slot].at != t + 1) {
		cache[slot].at = t + 1;
		cache[slot].kind = stub_kind_uncached(a, t);
	}
	return cache[slot].kind;
}

/*
 * The hook a call returning to ra called: 0 enter, 1 exit, -1 another
 * function.  call rel32 (e8) to a stub, or call *disp32(%rip) (ff 15)
 * through a slot.
 */
static int call_kind(struct attach *a, uint64_t ra)
{
	unsigned char b[6];
	int32_t disp;

	if (mem_read(a, ra - 6, b, sizeof(b)))
		return -1;
	if (b[1] == 0xe8) {
		memcpy(&disp, b + 2, 4);
		return stub_kind(a, ra + (int64_t)disp);
	}
	if (b[0] == 0xff && b[1] == 0x15) {
		memcpy(&disp, b + 2, 4);
		return slot_kind(a, ra + (int64_t)disp);
	}
	return -1;
}

/* ---- threads ---- */

static int thread_index(struct attach *a, pid_t tid)
{
	for (size_t i = 0; i < a->nth; i++)
		if (a->th[i].tid == tid)
			return (int)i;
	return -1;
}

static int get_regs(struct thread *t)
{
	return ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) ? -1 : 0;
}

/*
 * A status of t's from waitpid: 1 one came (*st), 0 t is gone, -1 none
 * came by the deadline or a stop was asked for (gave_up set; t runs on).
 * A zombie is gone: a leader's end is not reported while its threads live.
 */
static int wait_thread(struct thread *t, int *st)
{
	for (;;) {
		pid_t r = waitpid(t->tid, st, __WALL | WNOHANG);

		if (r > 0)
			return 1;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || task_gone(t->tid)) {
			t->gone = 1;
			return 0;
		}
		if (nap(0))
			return -1;
	}
}

/*
 * t stopped for the trap of our single step: a signal-delivery stop of
 * SIGTRAP, which the kernel would deliver, and kill the process with, if
 * callprof died before resuming it.  It becomes an interrupt stop, which
 * delivers nothing: asked to stop, continued without the signal, it stops
 * again before running any instruction (the kernel takes the pending stop
 * before any signal).  0 (last_stop still SIGTRAP), -1 as wait_stop.
 */
static int defuse_trap(struct thread *t)
{
	siginfo_t si;
	int st, w;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) || si.si_code != TRAP_TRACE)
		return 0; /* not a step's: the program's own, kept by the caller */
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) || ptrace(PTRACE_CONT, t->tid, NULL, NULL))
		return 0;
	for (;;) {
		w = wait_thread(t, &st);
		if (w < 0)
			t->running = 1;
		if (w <= 0)
			return -1;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = 1;
			return -1;
		}
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
			return 0;
		if (WIFSTOPPED(st)) {
			/* not expected: a signal before the stop; its own stop keeps it safe */
			t->last_stop = WSTOPSIG(st);
			return 0;
		}
	}
}

/*
 * Wait for t's stop.  A signal that stops it first is kept for later.
 * 0 stopped, -1 gone or not stopped in time (t->running, gave_up).
 */
static int wait_stop(struct thread *t)
{
	for (;;) {
		int st, w = wait_thread(t, &st);

		if (w < 0)
			t->running = 1; /* asked to stop, or stepped: it stops when it can */
		if (w <= 0)
			return -1;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = 1;
			return -1;
		}
		if (!WIFSTOPPED(st))
			continue;
		t->running = 0;
		t->stepping = 0;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			t->last_stop = 0;
			return 0;
		}
		/* A signal-delivery stop: the caller says whose signal it is. */
		t->last_stop = WSTOPSIG(st);
		if (t->last_stop == SIGTRAP)
			return defuse_trap(t);
		return 0;
	}
}

/* A signal of the program's that came while the thread was ours: delivered when let go. */

/*
 * Does the process ignore sig now (SigIgn)?  The kernel discards such a
 * signal, but not for a thread we trace: we see it, and must drop it too.
 * The runtime ignores SIGXFSZ and SIGPIPE around its writes, for one.
 */
static int ignored(int sig)
{
	uint64_t mask = cp_attach__status_field(traced_pid, 0, "SigIgn:", 16, 0);

	return sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1);
}

/* t is in the signal-delivery stop of sig: kept, with its siginfo. */
static void keep_signal(struct thread *t, int sig)
{
	int i = t->nsigs;

	if (sig <= 0 || ignored(sig))
		return;
	for (int k = 0; k < t->nsigs; k++)
		if (t->sigs[k] == sig)
			return; /* as the kernel does: one of each standard signal pends */
	if (i >= (int)ARRAY_SIZE(t->sigs))
		return;
	t->sigs[i] = sig;
	t->info_ok[i] = !ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &t->info[i]) &&
			t->info[i].si_signo == sig;
	t->nsigs++;
}

static int stops(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * A status of t's within 500 ms, on no deadline but its own: 1 (*st), 0
 * gone, -1 none came (t runs on).  For the signals sent again as t is let
 * go, which may come after the phase's deadline, or after a stop was asked.
 */
static int wait_briefly(struct thread *t, int *st)
{
	struct timespec pause = { 0, 1000000 };

	for (int i = 0; i < 500; i++) {
		pid_t r = waitpid(t->tid, st, __WALL | WNOHANG);

		if (r > 0)
			return 1;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || task_gone(t->tid))
			return 0;
		nanosleep(&pause, NULL);
	}
	return -1;
}

/*
 * t (stopped, its registers its own) is let go: the signals that came
 * while it was ours are delivered.  first, the one of its stop, goes with
 * the detach, with its siginfo.  Each other is sent again, with tgkill:
 * its siginfo would then name callprof as sender (si_pid), and a handler
 * that checks its sender ignores it.  glibc's do: set*id() in a threaded
 * program signals each thread (SIGSETXID) and waits until every one has
 * changed its ids; a thread that ignored it would leave the caller waiting
 * for ever (t0514: a process that drops to another user as attach let its
 * threads go).  So t is let run to the delivery of each signal sent again,
 * which stops it (it is still traced), and its siginfo is put back there
 * (PTRACE_SETSIGINFO: the kernel delivers the siginfo of the stop when it
 * is continued with the same signal).  A signal t blocks now pends, as it
 * would have, and is sent alone; so is one that stops the process (its
 * stop would be ours to keep, not to continue).  The signal to detach
 * with, or -1: t runs (no stop came in time, or it is gone; running says
 * which).
 */
static int resend_kept(struct attach *a, struct thread *t, int first)
{
	uint64_t blocked = cp_attach__status_field(a->pid, t->tid, "SigBlk:", 16, ~0ULL); /* all, if unknown */
	unsigned char todo[ARRAY_SIZE(t->sigs)] = { 0 };
	int cur = first, left = 0;

	for (int i = first ? 1 : 0; i < t->nsigs; i++) {
		int sig = t->sigs[i];

		syscall(SYS_tgkill, a->pid, t->tid, sig);
		if (t->info_ok[i] && !(blocked >> (sig - 1) & 1) && !stops(sig)) {
			todo[i] = 1;
			left++;
		}
	}
	while (left > 0) {
		int st, w, sig;

		if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)cur)) {
			t->gone = 1;
			return -1;
		}
		t->running = 1;
		cur = 0;
		w = wait_briefly(t, &st);
		if (w == 0 || (w > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
			t->gone = 1;
			return -1;
		}
		if (w < 0)
			return -1; /* release_all keeps it: let go when it stops */
		if (!WIFSTOPPED(st))
			continue;
		t->running = 0;
		if (st >> 16)
			return 0; /* stopped (a SIGSTOP of the program's, say): let go as it is */
		cur = sig = WSTOPSIG(st);
		for (int i = 0; i < t->nsigs; i++)
			if (todo[i] && t->sigs[i] == sig) {
				ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &t->info[i]);
				todo[i] = 0;
				left--;
				break;
			}
	}
	return cur;
}

/* Single-step t (stopped) by one instruction; its stop is wait_stop's. */
static unsigned steps; /* single steps made in this attach (CALLPROF_ATTACH_TIMES) */

static int step(struct thread *t)
{
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL))
		return -1;
	t->stepping = 1;
	steps++;
	test_kill("step");
	return 0;
}

/*
 * t was stepped and its stop did not come in time (the phase's deadline
 * passed meanwhile, or a stop was asked for): the step's SIGTRAP is on its
 * way.  Were t let go before that stop, or callprof to end with t still
 * traced, the kernel would deliver the trap and kill the process.  A step
 * ends within the thread's next time slice: wait for it, on no deadline
 * but its own (2 s; a stop request does not shorten it).
 */
static void step_done(struct thread *t)
{
	struct timespec pause = { 0, 1000000 };

	for (int i = 0; i < 2000; i++) {
		siginfo_t si;

		/* Seen, not taken: release() takes it as any late stop. */
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)t->tid, &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT | __WALL)) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (si.si_pid)
			break;
		nanosleep(&pause, NULL);
	}
	t->stepping = 0;
}

/* Is any signal pending for tid or its process (that could have caused an EINTR)? */
static int signals_pending(pid_t pid, pid_t tid)
{
	/* Unreadable: as good as pending (the EINTR is then the program's to see). */
	return cp_attach__status_field(pid, tid, "SigPnd:", 16, ~0ULL) ||
	       cp_attach__status_field(pid, tid, "ShdPnd:", 16, ~0ULL);
}

/*
 * t stopped in a system call: make sure it resumes it.  The kernel
 * restarts calls that return -ERESTART*, once it is let go with its
 * registers as they are; a call that the stop ended with EINTR (epoll_wait
 * and a few others, see signal(7)) is set to run again here, as the kernel
 * does for ERESTARTNOHAND, unless a signal is pending that may be its true
 * cause.
 */
static void keep_syscall(struct attach *a, struct thread *t)
{
	unsigned char insn[2];

	if ((long)t->regs.orig_rax < 0 || (long)t->regs.rax != -EINTR || t->nsigs)
		return;
	if (mem_read(a, t->regs.rip - 2, insn, 2) || insn[0] != 0x0f || insn[1] != 0x05)
		return;
	if (signals_pending(a->pid, t->tid))
		return;
	t->regs.rax = t->regs.orig_rax;
	t->regs.rip -= 2;
	t->dirty = 1;
	/* Now, not when let go: a callprof killed meanwhile leaves it right too. */
	ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs);
}

/*
 * Where a thread that does not stop is held, for the give-up line: in a
 * vfork (the kernel holds the parent until its child runs a program or
 * ends), or some other wait of the kernel's; "" if unknown.
 */
static const char *blocked_where(struct attach *a, pid_t tid)
{
	char path[64], buf[256];
	unsigned long long nr = ~0ull, arg0 = 0, flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)a->pid, (int)tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu %llx", &nr, &arg0) < 1)
			nr = ~0ull;
		fclose(f);
	}
	if (nr == SYS_clone3)
		mem_read(a, arg0, &flags, sizeof(flags)); /* struct clone_args: flags first */
	else if (nr == SYS_clone)
		flags = arg0;
	if (nr == SYS_vfork || ((nr == SYS_clone || nr == SYS_clone3) && (flags & CLONE_VFORK)))
		return " (it is in vfork: the kernel holds it until its child runs a program or ends)";
	if (nr != ~0ull)
		return " (it is held in the kernel, in a system call)";
	return "";
}

/*
 * The phase in progress ran out of time, or callprof was asked to stop:
 * one line saying what it waited for (what: "thread N to stop", ...);
 * -1.  The caller lets every thread go.
 */
static int give_up(struct attach *a, const char *what)
{
	if (quiet)
		return -1;
	if (gave_up == GAVE_SIGNAL)
		return cp_error("attach: process %d (%s): callprof was asked to stop (SIG%s) while "
				"waiting for %s: every thread let go", (int)a->pid, a->comm,
				sigabbrev_np(stop_signal), what);
	return cp_error("attach: process %d (%s): waited %.1f s for %s: every thread let go, "
			"attach again later", (int)a->pid, a->comm, deadline_ms / 1000.0, what);
}

/*
 * Why the kernel refused to let us trace thread tid (PTRACE_SEIZE: EPERM):
 * 0 when it has ended (an ending thread is refused too); 1, "try again",
 * when nothing in its status refuses us, unless last: another tracer had
 * it and has let it go since (another callprof attach ending, between our
 * seize and this look: t0514 saw it, CALLPROF_TEST_SEIZE_HOLD forces it);
 * else -1 having said why in one line (a tracer, other ids, or, on the
 * last try, the kernel's own reasons).
 */
static int seize_refused(struct attach *a, pid_t tid, int last)
{
	char path[64], line[256], tcomm[32] = "?", state[32] = "?";
	unsigned uid[3] = { 0 }, gid[3] = { 0 };
	int nuid = 0, ngid = 0;
	long tracer = 0;
	FILE *f;

	if (task_gone(tid))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)a->pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			continue;
		if (!strncmp(line, "State:", 6) && sscanf(line + 6, " %31[^\n]", state) == 1)
			continue;
		if (!strncmp(line, "Uid:", 4))
			nuid = sscanf(line + 4, "%u %u %u", &uid[0], &uid[1], &uid[2]);
		else if (!strncmp(line, "Gid:", 4))
			ngid = sscanf(line + 4, "%u %u %u", &gid[0], &gid[1], &gid[2]);
	}
	fclose(f);
	if (tracer > 0 && quiet)
		return -1;
	if (tracer > 0) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(tcomm, sizeof(tcomm), f))
				tcomm[strcspn(tcomm, "\n")] = '\0';
			fclose(f);
		}
		return cp_error("attach: thread %d of process %d (%s) is traced by process %ld (%s): "
				"a thread has one tracer at a time; attach again once that one is done",
				(int)tid, (int)a->pid, a->comm, tracer, tcomm);
	}
	for (int i = 0; i < 3; i++)
		if ((nuid == 3 && uid[i] != getuid()) || (ngid == 3 && gid[i] != getgid()))
			return quiet ? -1
				     : cp_error("attach: process %d (%s) no longer runs with your "
						"user and group ids (it ran a setuid or setgid "
						"program, or changed its ids): callprof may not "
						"trace it",
						(int)a->pid, a->comm);
	if (!last)
		return 1;
	if (quiet)
		return -1;
	return cp_error("attach: the kernel refused to let callprof trace thread %d of process %d "
			"(%s): %s (it made itself undumpable, or a security module forbids it; "
			"the thread is %s)",
			(int)tid, (int)a->pid, a->comm, strerror(EPERM), state);
}

/*
 * PTRACE_SEIZE, with SIGCHLD let in: the seize waits for an exec in
 * progress, which waits for us to reap the threads it killed (on_signal).
 */
static int seize(pid_t tid)
{
	sigset_t old;
	int r, err;

	sigprocmask(SIG_SETMASK, &wait_mask, &old);
	/* Never PTRACE_O_EXITKILL: a callprof killed lets the process go on (attach.md, Killed). */
	r = (int)ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD);
	err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return r;
}

/*
 * Seize tid (new to us) and ask it to stop; its stop is waited for by
 * grab_all.  0, or -1 having said why (another tracer has it).  A thread
 * that has ended is listed as gone, so that it is not tried again.
 */
static int grab(struct attach *a, pid_t tid)
{
	struct thread *t;
	int refused = 0;

	if (!a->nth)
		test_seize_hold("seizing", "traced");
	if (seize(tid)) {
		/*
		 * EPERM from a thread another tracer is letting go just now
		 * (another callprof attach ending): it shows no tracer a moment
		 * later, and the seize is tried again, for 500 ms at most (50
		 * were too few once, for a sanitized callprof beside two busy
		 * loops; the cause was not seen: the message says the state).
		 * A tracer seen in its status is said at once.
		 */
		int err = errno;

		for (int i = 0; err == EPERM; i++) {
			struct timespec pause = { 0, 10 * 1000 * 1000 };
			int why;

			if (i == 0)
				test_seize_hold("refused", "go");
			why = seize_refused(a, tid, i == 50);
			if (why < 0)
				return -1;
			if (why == 0)
				break; /* ended: listed as gone below */
			nanosleep(&pause, NULL);
			if (!seize(tid))
				err = 0;
			else
				err = errno;
		}
		refused = err != 0;
	}
	ALLOC_GROW(a->th, a->nth + 1, a->th_alloc);
	t = &a->th[a->nth++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (refused || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) {
		t->gone = 1;
		return 0;
	}
	t->running = 1;
	return 0;
}

/*
 * Stop every thread of the process, including those created meanwhile,
 * within the phase's deadline.  0; 1 when the process has ended; -1
 * having said why (another tracer, the deadline, a stop asked for: then
 * the threads stay listed, the caller lets them go).
 */
static int grab_all(struct attach *a)
{
	char path[64];
	int added, refused = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)a->pid);
	do {
		DIR *d = opendir(path);
		struct dirent *e;

		if (!d)
			return 1;
		added = 0;
		while (!refused && (e = readdir(d))) {
			char *end;
			long v = strtol(e->d_name, &end, 10);
			pid_t tid = *end ? 0 : (pid_t)v;

			if (tid <= 0 || thread_index(a, tid) >= 0)
				continue;
			refused = grab(a, tid);
			added = !refused;
		}
		closedir(d);
		/*
		 * Then their stops (also after a refusal: a thread must be
		 * stopped to be let go); a thread created meanwhile is in the
		 * next round.
		 */
		for (size_t i = 0; i < a->nth; i++) {
			struct thread *t = &a->th[i];

			if (!t->running || t->gone)
				continue;
			if (wait_stop(t)) {
				char what[160];

				if (t->gone)
					continue;
				if (refused)
					return -1;
				snprintf(what, sizeof(what), "thread %d to stop%s", (int)t->tid,
					 blocked_where(a, t->tid));
				return give_up(a, what);
			}
			if (get_regs(t)) {
				t->gone = 1;
				continue;
			}
			keep_signal(t, t->last_stop);
			keep_syscall(a, t);
		}
	} while (added);
	if (refused)
		return -1;
	return kill(a->pid, 0) && errno == ESRCH ? 1 : 0;
}

/*
 * Let t go on: its registers back if changed, the signals that came while
 * it was ours delivered.  The one it is stopped for goes with the detach,
 * with its siginfo; any other is sent again (its sender then reads as the
 * process itself, SI_TKILL).
 */
static void release(struct attach *a, struct thread *t)
{
	int first = 0, st;

	if (t->gone)
		return;
	if (t->stepping)
		step_done(t);
	if (t->running) {
		/*
		 * Not stopped (a stop that did not come in time): it cannot be
		 * detached until it stops; callprof's exit detaches it.
		 */
		if (waitpid(t->tid, &st, __WALL | WNOHANG) <= 0 || !WIFSTOPPED(st))
			return;
		t->running = 0;
		t->last_stop = 0;
		/* A signal of the program's (not a step's trap, not a system call stop) */
		if (!(st >> 16) && WSTOPSIG(st) != SIGTRAP && !(WSTOPSIG(st) & 0x80)) {
			t->last_stop = WSTOPSIG(st);
			keep_signal(t, t->last_stop);
		}
		/* A system call its stop ended with EINTR is run again, as at any stop of ours. */
		if (!get_regs(t))
			keep_syscall(a, t);
	}
	if (t->dirty)
		ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs);
	t->dirty = 0; /* resend_kept may run it: its registers are its own from here */
	if (t->nsigs && t->last_stop == t->sigs[0])
		first = t->sigs[0];
	first = resend_kept(a, t, first);
	t->nsigs = 0;
	if (first < 0)
		return;
	ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)first);
	t->gone = 1;
}

/*
 * Let every thread go.  One that has not stopped yet cannot be: it stays
 * listed, to be let go once it stops (the next grab_all waits for it, and
 * callprof's exit lets it go in any case).
 */
static void release_all(struct attach *a)
{
	size_t kept = 0;

	for (size_t i = 0; i < a->nth; i++) {
		release(a, &a->th[i]);
		if (a->th[i].running && !a->th[i].gone)
			a->th[kept++] = a->th[i];
	}
	a->nth = kept;
}

/*
 * The kernel's code for "interrupted, to be restarted through the thread's
 * restart block" (nanosleep, clock_nanosleep, poll, futex waits with a
 * timeout), which user space never sees.
 */
#define ERESTART_RESTARTBLOCK 516

/* ---- our calls, safe whenever callprof dies ---- */

/*
 * A call of ours runs on a thread of the process, which must be right at
 * every instant even if callprof is killed (SIGKILL) meanwhile: the
 * kernel then lets the thread go on from whatever registers and memory it
 * has.  So the call is made as the kernel runs a signal handler: below
 * the thread's stack pointer goes a signal frame (the kernel's
 * rt_sigframe) holding the registers the thread resumes with, its floating
 * point state and its signal mask, and the call returns into code that
 * does rt_sigreturn on it.  The thread, traced or not, ends our call
 * where it was, exactly: what rt_sigreturn restores is all that the call
 * changes of it.  Traced, its system calls stop it (PTRACE_SYSCALL), so
 * that callprof sees the rt_sigreturn that ends the call, and holds the
 * thread at its end.
 *
 * The code returned into: first the C library's own __restore_rt (the
 * sa_restorer glibc installs: mov $15, %eax; syscall), for one call that
 * maps a page of ours; then that page's stub, which also keeps the call's
 * result (rax) in the frame, where callprof reads it at the rt_sigreturn.
 */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514

/* The kernel's struct sigcontext (x86-64), as rt_sigreturn reads it. */
struct ksigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
	uint64_t eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate; /* its floating point state: 64-byte aligned */
	uint64_t reserved[8];
};

/* The kernel's struct rt_sigframe (x86-64): its ucontext, then its siginfo. */
struct ksigframe {
	uint64_t pretcode; /* the return address of the call */
	uint64_t uc_flags, uc_link;
	uint64_t ss_sp;	   /* uc_stack: ss_flags 3 is invalid, so that the */
	int32_t ss_flags;  /* thread's sigaltstack stays as it is */
	int32_t ss_pad;
	uint64_t ss_size;
	struct ksigcontext mc;
	uint64_t sigmask;
	unsigned char info[128]; /* not read by rt_sigreturn: the stub puts the result here */
};
_Static_assert(sizeof(struct ksigcontext) == 256 &&
		       __builtin_offsetof(struct ksigframe, mc) == 48 &&
		       __builtin_offsetof(struct ksigframe, sigmask) == 304 &&
		       __builtin_offsetof(struct ksigframe, info) == 312,
	       "struct ksigframe: the kernel's rt_sigframe layout");

#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#endif
#define FP_MAX (64 << 10) /* bytes of floating point state (AMX's tiles included) */

/*
 * The stub, at STUB_CODE of its page (after its magic):
 *	call *%r11		the function
 *	mov %rax, 304(%rsp)	its result into the frame's siginfo
 *	mov $15, %eax		rt_sigreturn
 *	syscall
 *	ud2
 */
static const unsigned char stub_magic[16] = "callprof-return1";
static const unsigned char stub_code[] = { 0x41, 0xff, 0xd3, 0x48, 0x89, 0x84, 0x24, 0x30, 0x01,
					   0x00, 0x00, 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
					   0x0f, 0x0b };
#define STUB_CODE 16
#define STUB_RETURN (STUB_CODE + 18) /* after its syscall */
static const unsigned char restore_rt[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

/*
 * The registers a thread stopped with r resumes with, untraced: a system
 * call its stop interrupted is set to run again, as the kernel does at the
 * end of a stop without a handler (an -ERESTART* code: rip back to the
 * syscall instruction, rax the call).  A wait restarted through its
 * restart block (nanosleep, poll, a timed futex wait), whose record of
 * what is left our call can overwrite, is started over instead (it then
 * waits longer than asked, which every such wait allows); a call being
 * restarted already (restart_syscall) is found by its number, loaded just
 * before the syscall instruction as the C library does (mov $NR, %eax),
 * or else left to restart_syscall.
 */
static void resume_regs(struct attach *a, struct user_regs_struct *r)
{
	long rax = (long)r->rax, nr = (long)r->orig_rax;
	unsigned char insn[7];

	if (nr < 0)
		return;
	if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND) {
		r->rax = r->orig_rax;
		r->rip -= 2;
	} else if (rax == -ERESTART_RESTARTBLOCK) {
		if (mem_read(a, r->rip - 7, insn, 7) || insn[5] != 0x0f || insn[6] != 0x05)
			nr = SYS_restart_syscall;
		else if (nr == SYS_restart_syscall && insn[0] == 0xb8)
			nr = (long)((uint32_t)insn[1] | (uint32_t)insn[2] << 8 |
				    (uint32_t)insn[3] << 16 | (uint32_t)insn[4] << 24);
		if (nr < 0 || nr >= 1024)
			nr = SYS_restart_syscall;
		r->rax = (unsigned long long)nr;
		r->rip -= 2;
	}
}

/* t's floating point state: the XSAVE area (*xsave 1) or the legacy FXSAVE one. */
static int get_fp(pid_t tid, unsigned char *buf, size_t *len, int *xsave)
{
	struct iovec iov = { buf, FP_MAX };

	if (!ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) && iov.iov_len >= 576) {
		*len = iov.iov_len;
		*xsave = 1;
		return 0;
	}
	*xsave = 0;
	*len = 512;
	return ptrace(PTRACE_GETFPREGS, tid, NULL, buf) ? -1 : 0;
}

struct home {
	struct user_regs_struct regs; /* what the thread resumes with */
	uint64_t mask;		      /* its signal mask */
	unsigned char *fp;	      /* its floating point state */
	size_t fplen;
	int xsave;
};

/*
 * Give t its own state back by hand (the call is given up, or faulted):
 * mask, floating point state, registers, in that order, so that a
 * callprof killed between two of them leaves a thread that either ends
 * the call by itself or is home.
 */
static void go_home(struct thread *t, const struct home *h)
{
	struct iovec iov = { h->fp, h->fplen };

	ptrace(PTRACE_SETSIGMASK, t->tid, (void *)8, &h->mask);
	if (h->xsave)
		ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov);
	else
		ptrace(PTRACE_SETFPREGS, t->tid, NULL, h->fp);
	ptrace(PTRACE_SETREGS, t->tid, NULL, &h->regs);
	t->regs = h->regs;
	t->dirty = 0;
}

/* Block sig in stopped t's mask (it pends until rt_sigreturn gives the mask back). */
static void block_signal(struct thread *t, int sig)
{
	uint64_t mask;

	if (sig == SIGKILL || sig == SIGSTOP ||
	    ptrace(PTRACE_GETSIGMASK, t->tid, (void *)8, &mask))
		return;
	mask |= 1ull << (sig - 1);
	ptrace(PTRACE_SETSIGMASK, t->tid, (void *)8, &mask);
}

/*
 * Is t waiting, in our dlopen, for a lock of the dynamic loader that
 * another thread holds (a library being loaded: a slow constructor), and
 * holding none of them itself?  Then giving the call up changes nothing
 * the process relies on: dlopen takes the loader's lock before it does
 * anything else.  It has only cleared the thread's last dlerror and left
 * its catch frame in the loader's per-thread variable, which is read when
 * the loader signals an error: in a later dlopen of the thread, whose own
 * frame replaces it; outside one (a lazy binding that fails, fatal anyway)
 * the loader would jump to that stale frame instead of printing "symbol
 * lookup error" (docs/limitations.md).  t is stopped.  Held: a recursive mutex in the loader's data
 * whose owner is t (glibc's pthread_mutex_t: lock, count, owner, nusers,
 * kind); found, or anything unclear, and t is not given up.
 */
static int waiting_for_loader(struct attach *a, struct thread *t)
{
	struct user_regs_struct r;
	int in_loader = 0;

	long rax;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) || (long)r.orig_rax != SYS_futex)
		return 0;
	/* Interrupted in its wait: a futex that returned may have just taken the lock. */
	rax = (long)r.rax;
	if (rax != -ERESTARTSYS && rax != -ERESTARTNOINTR && rax != -ERESTARTNOHAND &&
	    rax != -ERESTART_RESTARTBLOCK)
		return 0;
	for (size_t i = 0; i < a->nmaps; i++) {
		const struct mapping *m = &a->maps[i];
		const char *base = m->path ? strrchr(m->path, '/') : NULL;
		uint32_t *w;
		size_t len = m->end - m->start;

		if (!base || strncmp(base + 1, "ld-linux", 8) || m->perms[1] != 'w')
			continue;
		if (r.rdi >= m->start && r.rdi < m->end)
			in_loader = 1;
		if (len > (1u << 20))
			return 0;
		w = xmalloc(len);
		if (mem_read(a, m->start, w, len)) {
			free(w);
			return 0;
		}
		for (size_t k = 0; k + 5 <= len / 4; k++)
			if (w[k + 2] == (uint32_t)t->tid && w[k + 1] >= 1 && (w[k + 4] & 0x7f) == 1) {
				free(w);
				return 0; /* it holds one */
			}
		free(w);
	}
	return in_loader;
}

/*
 * Make stopped thread t call fn(args) and return its result in *ret
 * (name: the call's, for the test hook and the times).  It runs on its
 * own stack, below the red zone, under the signal frame (see above);
 * data[len] (a string, the settings) is copied there first and its
 * address is passed where an argument is ~0.  A signal of the program's
 * that comes meanwhile is blocked and left pending (the kernel requeues a
 * blocked signal with its siginfo), to be delivered when rt_sigreturn
 * gives the mask back.  0 with t stopped at the end of rt_sigreturn, its
 * registers its own; else t has its registers back too (-ETIMEDOUT or
 * -EINTR: dlopen given up; -EFAULT: the call faulted) or is gone
 * (-ESRCH).  Without the stub (a->stub 0), the result is rax at the end
 * of system call result_nr, the only one fn makes.
 */
static int call(struct attach *a, struct thread *t, const char *name, uint64_t fn,
		const uint64_t *args, int nargs, const void *data, size_t len, uint64_t *ret,
		long result_nr)
{
	struct user_regs_struct r = t->regs;
	unsigned long long *argregs[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	struct home h = { .regs = t->regs };
	struct ksigframe f;
	uint64_t top = (t->regs.rsp - 1024) & ~(uint64_t)63, daddr = 0, fpaddr, frame, back;
	struct timespec start = { 0, 0 }, now;
	long looked = -100; /* when the loader's lock was last looked at (ms into the call) */
	int err = -1, slow = 0, in_sys = 0, returning = 0, interrupting = 0, first = 1, pending = 0;
	char point[64];

	resume_regs(a, &h.regs);
	h.fp = xmalloc(FP_MAX + 64);
	if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)8, &h.mask) ||
	    get_fp(t->tid, h.fp, &h.fplen, &h.xsave))
		goto out;
	if (data) {
		daddr = (top - len) & ~(uint64_t)63;
		top = daddr;
	}
	fpaddr = (top - h.fplen - 64) & ~(uint64_t)63;
	frame = ((fpaddr - sizeof(f)) & ~(uint64_t)15) - 8; /* frame + 8 16-byte aligned */
	memset(&f, 0, sizeof(f));
	f.pretcode = a->stub ? 0 : a->restorer;
	f.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	f.ss_flags = 3;
	f.mc = (struct ksigcontext){ .r8 = h.regs.r8, .r9 = h.regs.r9, .r10 = h.regs.r10,
				     .r11 = h.regs.r11, .r12 = h.regs.r12, .r13 = h.regs.r13,
				     .r14 = h.regs.r14, .r15 = h.regs.r15, .rdi = h.regs.rdi,
				     .rsi = h.regs.rsi, .rbp = h.regs.rbp, .rbx = h.regs.rbx,
				     .rdx = h.regs.rdx, .rax = h.regs.rax, .rcx = h.regs.rcx,
				     .rsp = h.regs.rsp, .rip = h.regs.rip, .eflags = h.regs.eflags,
				     .cs = (uint16_t)h.regs.cs, .ss = (uint16_t)h.regs.ss,
				     .fpstate = fpaddr };
	f.sigmask = h.mask;
	if (h.xsave) {
		/* The sigframe's software bytes: ptrace's hold XCR0 in their first word. */
		uint64_t xcr0;
		uint32_t sw[12] = { FP_XSTATE_MAGIC1, (uint32_t)h.fplen + 4, 0, 0,
				    (uint32_t)h.fplen }, m2 = FP_XSTATE_MAGIC2;

		memcpy(&xcr0, h.fp + 464, 8);
		memcpy(&sw[2], &xcr0, 8);
		if (mem_write(a, fpaddr, h.fp, 464) || mem_write(a, fpaddr + 464, sw, 48) ||
		    mem_write(a, fpaddr + 512, h.fp + 512, h.fplen - 512) ||
		    mem_write(a, fpaddr + h.fplen, &m2, 4))
			goto out;
	} else if (mem_write(a, fpaddr, h.fp, h.fplen)) {
		goto out;
	}
	if ((data && mem_write(a, daddr, data, len)) || mem_write(a, frame, &f, sizeof(f)))
		goto out;
	for (int i = 0; i < nargs && i < 6; i++)
		*argregs[i] = data && args[i] == ~0ull ? daddr : args[i];
	r.rax = 0;
	r.orig_rax = ~0ull; /* no system call to restart: the frame has the thread's */
	if (a->stub) {
		r.rip = a->stub + STUB_CODE;
		r.rsp = frame + 8;
		r.r11 = fn;
		back = a->stub + STUB_RETURN;
	} else {
		r.rip = fn;
		r.rsp = frame;
		back = a->restorer + sizeof(restore_rt);
	}
	/* A signal t is stopped for is the program's: pending until the call ends. */
	if (t->nsigs && t->last_stop == t->sigs[0] && t->last_stop != SIGSTOP) {
		pending = t->sigs[0];
		block_signal(t, pending);
		memmove(t->sigs, t->sigs + 1, sizeof(t->sigs[0]) * (size_t)(t->nsigs - 1));
		memmove(t->info, t->info + 1, sizeof(t->info[0]) * (size_t)(t->nsigs - 1));
		memmove(t->info_ok, t->info_ok + 1, (size_t)(t->nsigs - 1));
		t->nsigs--;
	}
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r))
		goto out;
	t->dirty = 0;
	t->last_stop = 0;
	snprintf(point, sizeof(point), "%s-set", name);
	test_kill(point);
	if (ptrace(PTRACE_SYSCALL, t->tid, NULL, (void *)(long)pending)) {
		go_home(t, &h);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int st, sig;
		pid_t w = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || (w > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
			t->gone = 1;
			err = -ESRCH;
			break;
		}
		if (w == 0) {
			struct timespec ms = { 0, 200000 };
			long ms_in;

			clock_gettime(CLOCK_MONOTONIC, &now);
			ms_in = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
			/* Another thread loads a library: give up in bounded time, or when asked. */
			if (a->loading && !interrupting && !returning &&
			    (stop_signal || ms_in > LOAD_WAIT_MS) && ms_in - looked >= 100) {
				looked = ms_in; /* a look every 100 ms at most */
				interrupting = !ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
			}
			if (!slow && ms_in > CALL_TIMEOUT_MS) {
				cp_warning("attach: thread %d of process %d has not returned from our call "
					   "for %d s; waiting on (it may wait for a lock)", (int)t->tid,
					   (int)a->pid, CALL_TIMEOUT_MS / 1000);
				slow = 1;
			}
			ppoll(NULL, 0, &ms, &wait_mask); /* a request to stop is seen here */
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		if (sig == (SIGTRAP | 0x80)) {
			struct user_regs_struct sr;

			in_sys = !in_sys; /* entries and exits alternate */
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &sr))
				continue; /* gone: the next wait tells */
			if (first) {
				test_kill(name); /* in the middle of the call */
				first = 0;
			}
			if (returning) {
				/* The end of rt_sigreturn: t is as it was, and stopped. */
				t->regs = sr;
				err = 0;
				break;
			}
			/* Our interrupt stops a thread in a system call at its exit. */
			if (interrupting && !in_sys) {
				interrupting = 0;
				if (read_maps(a) == 0 && waiting_for_loader(a, t)) {
					go_home(t, &h);
					err = stop_signal ? -EINTR : -ETIMEDOUT;
					break;
				}
			}
			if (in_sys && (long)sr.orig_rax == SYS_rt_sigreturn && sr.rip == back &&
			    sr.rsp == frame + 8) {
				if (a->stub)
					mem_read(a, frame + 312, ret, 8);
				returning = 1;
				snprintf(point, sizeof(point), "%s-return", name);
				test_kill(point);
			} else if (!in_sys && !a->stub && (long)sr.orig_rax == result_nr) {
				*ret = sr.rax;
			}
			ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL);
			continue;
		}
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			if (interrupting) {
				interrupting = 0;
				if (read_maps(a) == 0 && waiting_for_loader(a, t)) {
					go_home(t, &h);
					err = stop_signal ? -EINTR : -ETIMEDOUT;
					break;
				}
			}
			ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL);
			continue;
		}
		if (st >> 16) {
			ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL);
			continue;
		}
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
		    sig == SIGTRAP) {
			siginfo_t si;

			/*
			 * A fault in the call itself (a bug of ours): resuming would
			 * fault again for ever.  The thread gets its own state back
			 * and goes on, which may leave a lock the call held.
			 */
			if (!ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) && si.si_code > 0) {
				go_home(t, &h);
				err = -EFAULT;
				break;
			}
		}
		/*
		 * The program's: blocked, and so requeued by the kernel, with its
		 * siginfo.  One the process ignores now (the runtime ignores
		 * SIGXFSZ and SIGPIPE around its writes) is dropped, as the
		 * kernel drops it for a thread nobody traces.
		 */
		if (ignored(sig)) {
			ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL);
			continue;
		}
		block_signal(t, sig);
		ptrace(PTRACE_SYSCALL, t->tid, NULL, (void *)(long)sig);
	}
out:
	free(h.fp);
	if (getenv("CALLPROF_ATTACH_TIMES") && err != -1) {
		snprintf(point, sizeof(point), "call %s", name);
		held_for(point, &start);
	}
	return err;
}

/*
 * The C library's __restore_rt (mov $15, %eax; syscall), found by its
 * code in the C library's executable mappings (its symbol is local, and
 * Debian's libc has no .symtab); 0 if none.
 */
static uint64_t find_restorer(struct attach *a)
{
	const struct module *libc = libc_module(a);

	for (size_t i = 0; libc && i < a->nmaps; i++) {
		const struct mapping *m = &a->maps[i];
		size_t len = m->end - m->start;
		unsigned char *code;
		uint64_t at = 0;

		if (m->perms[2] != 'x' || m->inode != libc->inode || m->dev != libc->dev ||
		    len > (64u << 20))
			continue;
		code = xmalloc(len);
		if (!mem_read(a, m->start, code, len)) {
			void *p = memmem(code, len, restore_rt, sizeof(restore_rt));

			if (p)
				at = m->start + (uint64_t)((unsigned char *)p - code);
		}
		free(code);
		if (at)
			return at;
	}
	return 0;
}

/*
 * The page of our stub in the process: one an earlier attach mapped
 * (found by its magic), or a new one, mapped by thread t with the C
 * library's mmap (anonymous, read and execute: /proc/PID/mem writes it
 * all the same).  Its magic is written last, so that a page whose writing
 * callprof did not finish is never taken.  0, or -1 having said why.
 */
static int map_stub(struct attach *a, struct thread *t, const char *comm)
{
	struct module *libc = libc_module(a);
	uint64_t mmap_fn = libc ? module_symbol(libc, "mmap", NULL) : 0, page = 0, args[6];
	int err;

	for (size_t i = 0; i < a->nmaps; i++) {
		const struct mapping *m = &a->maps[i];
		unsigned char b[STUB_CODE + sizeof(stub_code)];

		if (!m->path && !strcmp(m->perms, "r-xp") && m->end - m->start == 4096 &&
		    !mem_read(a, m->start, b, sizeof(b)) && !memcmp(b, stub_magic, 16) &&
		    !memcmp(b + STUB_CODE, stub_code, sizeof(stub_code))) {
			a->stub = m->start;
			return 0;
		}
	}
	a->restorer = find_restorer(a);
	if (!a->restorer || !mmap_fn)
		return cp_error("attach: process %d (%s): its C library has no %s", (int)a->pid, comm,
				mmap_fn ? "__restore_rt (mov $15, %eax; syscall)" : "mmap");
	args[0] = 0;
	args[1] = 4096;
	args[2] = PROT_READ | PROT_EXEC;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	args[4] = ~0ull; /* fd -1 */
	args[5] = 0;
	err = call(a, t, "map", mmap_fn, args, 6, NULL, 0, &page, SYS_mmap);
	if (err == -ESRCH)
		return cp_error("attach: process %d (%s) ended", (int)a->pid, comm);
	if (err || (int64_t)page < 0)
		return cp_error("attach: process %d (%s) could not map a page for callprof's calls: "
				"%s", (int)a->pid, comm,
				err ? "the call did not return" : strerror((int)-(int64_t)page));
	if (mem_write(a, page + STUB_CODE, stub_code, sizeof(stub_code)) ||
	    mem_write(a, page, stub_magic, sizeof(stub_magic)))
		return cp_error("attach: cannot write into process %d (%s)", (int)a->pid, comm);
	a->stub = page;
	return 0;
}

/*
 * The thread to run our calls on: one blocked in a system call that holds
 * no lock of the C library (waiting for input, a timer, a futex), the
 * main thread if it is such, else any in a system call, else the main one.
 */
static int is_waiting_call(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_nanosleep:
	case SYS_clock_nanosleep: case SYS_futex: case SYS_poll: case SYS_ppoll:
	case SYS_select: case SYS_pselect6: case SYS_accept: case SYS_accept4:
	case SYS_recvfrom: case SYS_recvmsg: case SYS_wait4: case SYS_pause:
	case SYS_rt_sigtimedwait: case SYS_rt_sigsuspend: case SYS_waitid:
		return 1;
	}
	return 0;
}

/*
 * How well t fits to run a call of ours: best a thread waiting in a system
 * call (it was doing nothing), then one in any system call, then the main
 * thread.  (A wait that restarts through its restart block is started over
 * after the call: see call().)
 */
static int caller_score(const struct attach *a, const struct thread *t)
{
	long nr = (long)t->regs.orig_rax;

	return (nr >= 0) + 2 * is_waiting_call(nr) + (t->tid == a->pid);
}

/* ---- A. load ---- */

/*
 * The copy takes no static TLS of its own: its TLS segment is dropped and
 * its TLS references (the GOT entries of local initial-exec accesses) are
 * left for us to fill after the load, with the donor's block (find_donor).
 * On failure the copy keeps its own TLS (a->tls_base 0 again).
 */
static int borrow_tls(struct attach *a, const char *runtime, int fd)
{
	struct cp_elf *e = cp_elf__open(runtime, NULL);
	uint64_t phdr_off, memsz, align, zero = 0, flags_off = 0, flags = 0;
	int n = e ? cp_elf__tls_relocs(e, a->tls, (int)ARRAY_SIZE(a->tls)) : -1;
	int ok = e && n > 0 && !cp_elf__tls_segment(e, &phdr_off, &memsz, &align) &&
		 memsz <= a->tls_size;

	/* Such a copy is unloaded at the end (unload): not -z nodelete, as the runtime is. */
	if (ok && !cp_elf__dynamic(e, DT_FLAGS_1, &flags_off, &flags))
		flags &= ~(uint64_t)DF_1_NODELETE;
	cp_elf__close(e);
	if (!ok) {
		a->tls_base = 0;
		return 0;
	}
	a->ntls = n;
	/* p_type PT_NULL; each Elf64_Rela's r_info R_X86_64_NONE */
	if (pwrite(fd, &zero, 4, (off_t)phdr_off) != 4)
		return -1;
	for (int i = 0; i < n; i++)
		if (pwrite(fd, &zero, 8, (off_t)(a->tls[i].file_off + 8)) != 8)
			return -1;
	if (flags_off && pwrite(fd, &flags, 8, (off_t)flags_off) != 8)
		return -1;
	return 0;
}

/*
 * A file of ours the process opens by name: a memfd, which the process
 * reaches as /proc/OURPID/fd/N (*path).  Nothing of it is on disk, so
 * nothing is left behind whenever callprof ends, SIGKILL included; what
 * the process mapped stays mapped.  -1 if none can be made.
 */
static int tool_file(const char *name, unsigned flags, char **path)
{
	int fd = memfd_create(name, MFD_CLOEXEC | flags);

	if (fd < 0 && errno == EINVAL && flags)
		fd = memfd_create(name, MFD_CLOEXEC); /* MFD_EXEC: Linux 6.3 */
	if (fd >= 0)
		*path = xstrfmt("/proc/%d/fd/%d", (int)getpid(), fd);
	return fd;
}

#ifndef MFD_EXEC
#define MFD_EXEC 0x10U
#endif

/*
 * The loader returns a library it has loaded under the name asked for:
 * a copy named /proc/PID/fd/N as an earlier attach's copy was (callprof's
 * pid used again, the same descriptor) would be that copy, inert, and
 * the attach would end "its symbols cannot be found" (3 attaches in 460
 * of a loop of attaches to one process, when every copy stayed).  The
 * copies that stay (the first, and one whose unload did not happen) stay
 * in the order they were loaded, one attach at a time, so the copy of an
 * attach that finds k of them takes descriptor COPY_FD_BASE + k: no copy
 * loaded is ever named alike.
 * Where callprof may not have that many descriptors, the name stays.
 */
#define COPY_FD_BASE 100

/* Is m the first mapping (offset 0) of a runtime copy an attach loaded? */
static int copy_head(const struct mapping *m)
{
	return m->path && !m->pgoff && strstr(m->path, "callprof-attach");
}

static void name_copy(struct attach *a)
{
	struct rlimit rl;
	size_t k = 0;
	int fd;

	for (size_t i = 0; i < a->nmaps; i++)
		k += copy_head(&a->maps[i]);
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur <= COPY_FD_BASE + k &&
	    rl.rlim_max > COPY_FD_BASE + k + 1) {
		rl.rlim_cur = COPY_FD_BASE + k + 2;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fd = fcntl(a->copy_fd, F_DUPFD_CLOEXEC, (int)(COPY_FD_BASE + k));
	if (fd < 0)
		return;
	close(a->copy_fd);
	a->copy_fd = fd;
	free(a->copy);
	a->copy = xstrfmt("/proc/%d/fd/%d", (int)getpid(), fd);
}

/*
 * The runtime copy the process loads (a->copy: its name for it), the
 * log its runtime writes its warnings to (a->log) and the status file
 * where it says why a profile was not written (a->status).
 */
static int make_copy(struct attach *a, const char *runtime)
{
	const char *base = strrchr(runtime, '/');
	struct cp_elf_info info = { 0 };
	struct cp_elf *e;
	struct stat st;
	uint64_t v = 0, off = 0;
	int in, outfd, found = 0;
	char buf[65536], *name;
	ssize_t n;

	/* "libcallprof-cpu.so" -> "callprof-attach-cpu.so": never taken for record's runtime */
	base = base ? base + 1 : runtime;
	if (!strncmp(base, "libcallprof", 11))
		base += 11;
	name = xstrfmt("callprof-attach%s%s", *base == '-' ? "" : "-", base);
	a->copy_fd = outfd = tool_file(name, MFD_EXEC, &a->copy);
	free(name);
	a->log_fd = tool_file("callprof-attach-log", 0, &a->log);
	a->status_fd = tool_file("callprof-attach-status", 0, &a->status);
	if (outfd < 0 || a->log_fd < 0 || a->status_fd < 0 || fstat(outfd, &st))
		return cp_error("attach: cannot make a memory file (memfd_create): %s", strerror(errno));
	a->copy_dev = st.st_dev;
	a->copy_ino = st.st_ino;
	name_copy(a);
	outfd = a->copy_fd;
	in = open(runtime, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return cp_error("attach: cannot read %s: %s", runtime, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(outfd, buf, (size_t)n) != n)
			n = -1;
	close(in);
	/* Mark the copy: its constructor leaves the start to us (runtime/attach.c). */
	e = cp_elf__open(runtime, NULL);
	if (e && !cp_elf__dynsym(e, "cp_attach_marker", &v, NULL) && !cp_elf_info__read(runtime, &info)) {
		for (size_t i = 0; i < info.nsegs; i++)
			if (v >= info.segs[i].vaddr && v + 16 <= info.segs[i].vaddr + info.segs[i].filesz) {
				off = v - info.segs[i].vaddr + info.segs[i].offset;
				found = 1;
			}
	}
	cp_elf__close(e);
	cp_elf_info__release(&info);
	if (n < 0 || !found || pwrite(outfd, "1", 1, (off_t)(off + 15)) != 1 ||
	    (a->tls_base && borrow_tls(a, runtime, outfd)))
		return cp_error("attach: cannot prepare a copy of %s", runtime);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void remove_copy(struct attach *a)
{
	close_fd(&a->copy_fd);
	close_fd(&a->log_fd);
	close_fd(&a->status_fd);
}

static char *read_string(struct attach *a, uint64_t addr)
{
	char buf[512];

	if (!addr || mem_read(a, addr, buf, 1))
		return xstrdup("?");
	for (size_t i = 0; i < sizeof(buf); i++)
		if (mem_read(a, addr + i, buf + i, 1) || !buf[i] || i == sizeof(buf) - 1) {
			buf[i] = '\0';
			break;
		}
	return xstrdup(buf);
}

/* The settings block: "NAME=VALUE\0"... */
static char *env_block(const struct cp_attach_opts *o, const struct attach *a, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *const *e = o->env; e && *e; e++) {
		strbuf_addstr(&sb, *e);
		strbuf_addch(&sb, '\0');
	}
	strbuf_addf(&sb, "CALLPROF_ATTACH_LOG=%s", a->log);
	strbuf_addch(&sb, '\0');
	strbuf_addf(&sb, "CALLPROF_STATUS=%s", a->status);
	strbuf_addch(&sb, '\0');
	*len = sb.len;
	return strbuf_detach(&sb, NULL);
}

/*
 * An earlier attach's copy that has a TLS segment of its own (the first
 * copy loaded into this process): its block's offset from the thread
 * pointer, read from one of its TLS GOT entries (the loader wrote
 * offset + addend there), and its size in *size; 0 if none.  It is
 * recognised by its first page, which is that of one of our runtime
 * libraries (a copy that borrowed has its TLS header patched).
 */
static int64_t find_donor(struct attach *a, const char *runtime, uint64_t *size)
{
	static const char *const libs[] = { "libcallprof-cpu.so", "libcallprof.so",
					    "libcallprof-counting.so", "libcallprof-coverage.so" };
	char *dir = xstrdup(runtime), *slash = strrchr(dir, '/');
	unsigned char mem[4096], file[4096];
	int64_t fn = 0;

	if (slash)
		slash[1] = '\0';
	for (size_t i = 0; i < a->nmaps && !fn; i++) {
		const struct mapping *m = &a->maps[i];

		if (!copy_head(m) || mem_read(a, m->start, mem, sizeof(mem)))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(libs) && !fn; k++) {
			char *lib = xstrfmt("%s%s", slash ? dir : "", libs[k]);
			int fd = open(lib, O_RDONLY | O_CLOEXEC);
			struct cp_elf *e;
			uint64_t v, off, align;

			if (fd >= 0 && pread(fd, file, sizeof(file), 0) == (ssize_t)sizeof(file) &&
			    !memcmp(mem, file, sizeof(mem)) && (e = cp_elf__open(lib, NULL))) {
				struct cp_elf_tls_reloc r[16];

				if (cp_elf__tls_relocs(e, r, 16) > 0 &&
				    !cp_elf__tls_segment(e, &off, size, &align)) {
					v = mem_u64(a, m->start + r[0].r_offset);
					fn = (int64_t)(v - (uint64_t)r[0].addend);
				}
				cp_elf__close(e);
			}
			if (fd >= 0)
				close(fd);
			free(lib);
		}
	}
	free(dir);
	return fn;
}

/* ---- seccomp filters ---- */

/*
 * The system calls an attach makes the process make: the loader's (the
 * runtime's copy opened, read, mapped, relocated), the runtime's (its
 * memory, threads' set-up, signals, the profile written at the stop) and
 * its watcher's (a child that inherits the filters).  perf marks those
 * only CPU sampling and the wait/inactive split make.
 */
static const struct attach_call {
	long nr;
	const char *name;
	int perf; /* 1: made for perf events (--time, off-CPU); 2: to plan sleds */
} attach_calls[] = {
#define C(n) { SYS_##n, #n, 0 }
	C(read), C(pread64), C(write), C(pwrite64), C(openat), C(close), C(newfstatat), C(fstat),
	C(lseek), C(mmap), C(mprotect), C(munmap), C(mremap), C(madvise), C(brk), C(futex),
	C(rt_sigaction), C(rt_sigprocmask), C(rt_sigreturn), C(rt_sigqueueinfo), C(sigaltstack),
	C(gettid), C(getpid), C(getppid), C(tgkill), C(kill), C(prctl), C(clock_gettime),
	C(clock_nanosleep), C(nanosleep), C(sched_yield), C(clone), C(clone3), C(set_robust_list),
	C(rseq), C(exit), C(exit_group), C(wait4), C(waitid), C(pipe2), C(poll), C(ppoll),
	C(signalfd4), C(setsid), C(chdir), C(getcwd), C(dup), C(dup3), C(fcntl), C(readlink),
	C(rename), C(unlink), C(uname), C(prlimit64), C(faccessat), C(access), C(sysinfo),
#undef C
	{ SYS_perf_event_open, "perf_event_open", 1 },
	{ SYS_ioctl, "ioctl", 1 },
	/* the sleds' plan: the stub area (a memfd, sized), the CET check (sleds.c) */
	{ SYS_memfd_create, "memfd_create", 2 },
	{ SYS_ftruncate, "ftruncate", 2 },
	{ SYS_arch_prctl, "arch_prctl", 2 },
};

/*
 * The first call of attach_calls that the filter insns[len] does not
 * allow whatever its arguments and the calling address are (the runtime's
 * arguments are not known here: a filter that looks at them is taken to
 * forbid the call), or NULL.  perf: the perf calls are made.
 */
static const char *forbidden_call(const struct sock_filter *insns, uint32_t len, int perf,
				  int sleds)
{
	for (size_t i = 0; i < sizeof(attach_calls) / sizeof(attach_calls[0]); i++) {
		const struct attach_call *c = &attach_calls[i];
		struct seccomp_data d = { .nr = (int)c->nr, .arch = AUDIT_ARCH_X86_64 };
		int depends = 0;
		uint32_t action;

		if ((c->perf == 1 && !perf) || (c->perf == 2 && !sleds))
			continue;
		/* words 2 and up: the instruction pointer and the six arguments */
		action = cp_cbpf__run(insns, len, &d, ~3u, &depends) & SECCOMP_RET_ACTION_FULL;
		if (depends || (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG))
			return c->name;
	}
	return NULL;
}

static int attach_perf_call(const char *name)
{
	for (size_t i = 0; i < sizeof(attach_calls) / sizeof(attach_calls[0]); i++)
		if (attach_calls[i].name == name)
			return attach_calls[i].perf;
	return 0;
}

/*
 * Would a seccomp filter of the process kill it (or trap, trace or fail
 * one of its calls) for a system call the attach makes it make?  Its
 * threads are held; every thread's filters are read (the kernel's copy:
 * PTRACE_SECCOMP_GET_FILTER, which needs CAP_SYS_ADMIN, checked by
 * attach-check.c) and judged.  0, or cp_error()'s -1 having said what the
 * filter forbids and what to do.
 */
static int judge_filters(struct attach *a, const struct cp_attach_opts *o, const char *comm)
{
	for (size_t i = 0; i < a->nth; i++) {
		const struct thread *t = &a->th[i];

		if (t->gone || cp_attach__seccomp_mode(a->pid, t->tid) != 2)
			continue; /* no filter (the kernel checks our rights before the mode) */
		for (unsigned long k = 0;; k++) {
			long n = ptrace(PTRACE_SECCOMP_GET_FILTER, t->tid, (void *)k, NULL);
			struct sock_filter *insns;
			const char *bad;

			if (n < 0 && (errno == ENOENT || (errno == EINVAL && !k)))
				break; /* no more filters; none at all */
			if (n <= 0 || n > BPF_MAXINSNS)
				return cp_error("attach: process %d (%s) runs under a seccomp filter "
						"callprof cannot read (%s): it cannot tell whether the "
						"filter would kill the process; run the program under "
						"callprof record", (int)a->pid, comm,
						n < 0 ? strerror(errno) : "no instructions");
			insns = xcalloc((size_t)n, sizeof(*insns));
			if (ptrace(PTRACE_SECCOMP_GET_FILTER, t->tid, (void *)k, insns) != n) {
				free(insns);
				return cp_error("attach: process %d (%s): cannot read its seccomp "
						"filter: %s", (int)a->pid, comm, strerror(errno));
			}
			bad = forbidden_call(insns, (uint32_t)n, o->perf, a->sleds_wanted);
			free(insns);
			if (bad)
				return cp_error("attach: process %d (%s) runs under a seccomp filter that "
						"forbids %s, which callprof's runtime needs%s", (int)a->pid,
						comm, bad,
						attach_perf_call(bad) == 1 ?
						": attach with --time=none, or --no-offcpu with "
						"--time=clock" :
						attach_perf_call(bad) == 2 ?
						" to patch its sleds; rebuild it with callprof cc "
						"--hooks, or run it under callprof record" :
						"; run the program under callprof record");
		}
	}
	return 0;
}

/* Zero t's instance of the borrowed TLS block: the state a fresh copy's threads start from. */
static void zero_tls(struct attach *a, struct thread *t)
{
	static const unsigned char zeros[256];

	if (a->tls_base && a->tls_size <= sizeof(zeros))
		mem_write(a, t->regs.fs_base + (uint64_t)a->tls_base, zeros, a->tls_size);
}

static int load_runtime(struct attach *a, const struct cp_attach_opts *o, const char *comm)
{
	struct thread *t = NULL;
	struct module *rt;
	uint64_t ret = 0, args[2];
	char *block;
	size_t len;
	int err, best = -1;
	struct timespec held;

	/* One thread: the best candidate among those in a waiting system call. */
	clock_gettime(CLOCK_MONOTONIC, &held);
	phase(STOP_MS);
	err = grab_all(a);
	if (err) {
		release_all(a);
		return err < 0 ? -1 : cp_error("attach: process %d (%s) ended", (int)a->pid, comm);
	}
	held_for("seize (every thread)", &held);
	test_kill("seized");
	if (judge_filters(a, o, comm)) {
		release_all(a);
		return -1;
	}
	for (size_t i = 0; i < a->nth; i++) {
		struct thread *c = &a->th[i];
		int score;

		if (c->gone)
			continue;
		score = caller_score(a, c) - 4 * (c->nsigs > 0);
		if (!t || score > best) {
			best = score;
			t = c;
		}
	}
	/* The others go on while it loads: a lock it needs may be theirs. */
	for (size_t i = 0; i < a->nth; i++)
		if (&a->th[i] != t)
			release(a, &a->th[i]);
	held_for("choose (every thread)", &held);
	if (!t) {
		release_all(a);
		return cp_error("attach: process %d (%s) has no thread to load the runtime with",
				(int)a->pid, comm);
	}
	test_kill("chosen");
	if (map_stub(a, t, comm)) {
		release_all(a);
		return -1;
	}
	/* A copy loaded before lends us its TLS: static TLS is scarce (see borrow_tls). */
	{
		int64_t base = find_donor(a, o->runtime, &a->tls_size);

		if (base < 0)
			a->tls_base = base;
	}
	if (make_copy(a, o->runtime)) {
		release_all(a);
		return -1;
	}
	args[0] = ~0ull;
	args[1] = 2 /* RTLD_NOW */;
	a->loading = 1;
	err = call(a, t, "dlopen", a->dlopen_fn, args, 2, a->copy, strlen(a->copy) + 1, &ret, -1);
	a->loading = 0;
	if (!err && !ret) {
		char *why = NULL;

		if (a->dlerror_fn && !call(a, t, "dlerror", a->dlerror_fn, NULL, 0, NULL, 0, &ret, -1))
			why = read_string(a, ret);
		release_all(a);
		cp_error("attach: process %d (%s) could not load %s: %s", (int)a->pid, comm, a->copy,
			 why ? why : "dlopen failed");
		free(why);
		return -1;
	}
	if (err == -ETIMEDOUT || err == -EINTR) {
		release_all(a);
		if (err == -EINTR)
			return cp_error("attach: process %d (%s): callprof was asked to stop (SIG%s) while "
					"another thread of it held the dynamic loader's lock: nothing "
					"loaded, every thread let go", (int)a->pid, comm,
					sigabbrev_np(stop_signal));
		return cp_error("attach: process %d (%s): another thread of it held the dynamic "
				"loader's lock (a library being loaded) for %d s: nothing loaded, every "
				"thread let go; try again later", (int)a->pid, comm, LOAD_WAIT_MS / 1000);
	}
	if (err) {
		release_all(a);
		return cp_error("attach: process %d (%s) %s while loading the runtime", (int)a->pid, comm,
				err == -ESRCH ? "ended" : err == -EFAULT ? "faulted in callprof's call "
				"(its state may be inconsistent)" : "could not be made to call dlopen");
	}
	a->handle = ret;
	if (read_modules(a) || !(rt = runtime_module(a)) ||
	    !(a->rt_start = module_symbol(rt, "callprof_attach_start", NULL)) ||
	    !(a->rt_stop = module_symbol(rt, "callprof_attach_stop", NULL)) ||
	    !(a->rt_release = module_symbol(rt, "callprof_attach_release", NULL)) ||
	    !(a->rt_hook[0] = module_symbol(rt, "__cyg_profile_func_enter", NULL)) ||
	    !(a->rt_hook[1] = module_symbol(rt, "__cyg_profile_func_exit", NULL))) {
		release_all(a);
		return cp_error("attach: process %d (%s) loaded %s, but its symbols cannot be found",
				(int)a->pid, comm, a->copy);
	}
	for (int k = 0; k < NIPOSE; k++)
		a->rt_ipose[k] = module_symbol(rt, interposed[k], NULL);
	if (a->tls_base) {
		/* Point the copy's TLS references at the borrowed block; fresh for this thread. */
		for (size_t i = 0; i < a->nmods; i++)
			for (int k = 0; a->mods[i].runtime && k < a->ntls; k++) {
				uint64_t v = (uint64_t)(a->tls_base + a->tls[k].addend);

				mem_write(a, a->mods[i].bias + a->tls[k].r_offset, &v, 8);
			}
		zero_tls(a, t);
	}
	for (size_t i = 0; i < a->nmaps; i++) {
		const struct mapping *m = &a->maps[i];

		if (m->inode == a->copy_ino && m->dev == a->copy_dev && m->perms[2] == 'x') {
			if (!a->rt_text_lo || m->start < a->rt_text_lo)
				a->rt_text_lo = m->start;
			if (m->end > a->rt_text_hi)
				a->rt_text_hi = m->end;
		}
	}
	block = env_block(o, a, &len);
	args[0] = ~0ull;
	args[1] = len;
	err = call(a, t, "start", a->rt_start, args, 2, block, len, &ret, -1);
	free(block);
	release_all(a);
	test_kill("started");
	if (err)
		return cp_error("attach: process %d (%s) %s while starting the runtime", (int)a->pid, comm,
				err == -ESRCH ? "ended" : "did not return");
	if ((int64_t)ret < 0 && (int64_t)ret > -4096)
		return cp_error("attach: the runtime in process %d (%s) did not start: %s", (int)a->pid,
				comm, strerror((int)-(int64_t)ret));
	a->area = ret;
	if (mem_u64(a, a->area) != ATTACH_MAGIC)
		return cp_error("attach: the runtime in process %d (%s) gave no seed area", (int)a->pid,
				comm);
	return 0;
}

/* ---- B. switch ---- */

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}


static void perf_regs(const struct user_regs_struct *r, struct cp_unwind_regs *u)
{
	memset(u, 0, sizeof(*u));
	u->regs[PERF_REG_X86_AX] = r->rax;
	u->regs[PERF_REG_X86_BX] = r->rbx;
	u->regs[PERF_REG_X86_CX] = r->rcx;
	u->regs[PERF_REG_X86_DX] = r->rdx;
	u->regs[PERF_REG_X86_SI] = r->rsi;
	u->regs[PERF_REG_X86_DI] = r->rdi;
	u->regs[PERF_REG_X86_BP] = r->rbp;
	u->regs[PERF_REG_X86_SP] = r->rsp;
	u->regs[PERF_REG_X86_IP] = r->rip;
	u->regs[PERF_REG_X86_R8] = r->r8;
	u->regs[PERF_REG_X86_R9] = r->r9;
	u->regs[PERF_REG_X86_R10] = r->r10;
	u->regs[PERF_REG_X86_R11] = r->r11;
	u->regs[PERF_REG_X86_R12] = r->r12;
	u->regs[PERF_REG_X86_R13] = r->r13;
	u->regs[PERF_REG_X86_R14] = r->r14;
	u->regs[PERF_REG_X86_R15] = r->r15;
	u->mask = ~0ull;
}

/* The red zone: the 128 bytes below sp that signal delivery leaves alone. */
#define RED_ZONE 128

/*
 * Copy the stack of a thread stopped at sp into *copy for the unwinder,
 * r's stack fields set (r's registers are the caller's): from the red
 * zone below sp, where the mapping has one (symbolize/unwind.c says why),
 * to the mapping's end, at most STACK_COPY above sp.  0, or -1.
 */
static int stack_copy(struct attach *a, uint64_t sp, struct cp_unwind_regs *r, unsigned char **copy)
{
	const struct mapping *stk = mapping_of(a, sp);
	uint64_t below, len;

	if (!stk)
		return -1;
	below = sp - stk->start >= RED_ZONE ? RED_ZONE : 0;
	len = stk->end - sp;
	if (len > STACK_COPY)
		len = STACK_COPY;
	*copy = xmalloc(below + len);
	if (mem_read(a, sp - below, *copy, below + len)) {
		free(*copy);
		*copy = NULL;
		return -1;
	}
	r->stack = *copy;
	r->stack_size = len;
	r->below = below;
	return 0;
}

static void emulate_ret(struct attach *a, struct thread *t)
{
	t->regs.rip = mem_u64(a, t->regs.rsp);
	t->regs.rsp += 8;
	t->dirty = 1;
}

/*
 * Is t in a system call (blocked, or being restarted): stepping would run
 * it.  orig_rax alone is not enough: a thread at a signal handler's first
 * instruction still shows the call the signal interrupted.
 */
static int in_syscall(struct attach *a, struct thread *t)
{
	unsigned char insn[2];

	if ((long)t->regs.orig_rax < 0)
		return 0;
	if (t->dirty) /* set to run the call again: at the syscall instruction */
		return !mem_read(a, t->regs.rip, insn, 2) && insn[0] == 0x0f && insn[1] == 0x05;
	return !mem_read(a, t->regs.rip - 2, insn, 2) && insn[0] == 0x0f && insn[1] == 0x05;
}

static void pop_virtual(struct attach *a, const struct user_regs_struct *r, struct user_regs_struct *ur)
{
	*ur = *r;
	ur->rip = mem_u64(a, r->rsp);
	ur->rsp = r->rsp + 8;
}

/* Is pc the C library's empty hook (its ret, after an endbr64 if it has one)? */
static int at_libc_hook(struct attach *a, uint64_t pc)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char b[4];

	if (pc == a->libc_hook)
		return 1;
	return pc == a->libc_hook + 4 && !mem_read(a, a->libc_hook, b, 4) && !memcmp(b, endbr64, 4);
}

/* ---- which calls are open: functions, the functions inlined into them, their hooks ---- */

/*
 * A function's code and its hooks.  Its instances are the function and
 * the functions inlined into it (DWARF's DW_TAG_inlined_subroutine): gcc
 * keeps the -finstrument-functions hooks of a function it inlines, so one
 * physical frame may hold several calls of the hooks' world, each
 * bracketed by its enter and exit hook calls in the instance's own code;
 * clang's -finstrument-functions-after-inlining gives only the function
 * hooks.  An instance has hooks when a hook call lies in its code and not
 * in an instance inlined into it (a part split off a function, name.cold,
 * may hold only its exit); the function itself may have none (excluded
 * from instrumentation) while an instance inlined into it has.  The
 * hooks name each by its entry: the function's own out-of-line copy's
 * (DWARF's origin), not a clone's (name.constprop.0) nor a part's.
 * Without debug information the function is its symbol, named by its
 * start, with hooks when it calls one.
 */
struct fnmodel {
	const struct cp_unwind_fn *dw;	/* its instances: the unwinder's, or own_* */
	struct cp_unwind_fn own_fn;
	struct cp_unwind_inst own_inst;
	struct cp_unwind_range own_range;
	unsigned char *hooked;		/* per instance: has hooks */
	int hook_calls;			/* its code calls a hook (a thread in it is stepped) */
};

static int inst_has(const struct cp_unwind_inst *in, uint64_t addr)
{
	for (uint32_t r = 0; r < in->nranges; r++)
		if (addr >= in->ranges[r].lo && addr < in->ranges[r].hi)
			return 1;
	return 0;
}

/* The innermost instance of dw whose code holds addr; 0 (the function) if none inlined does. */
static uint32_t innermost(const struct cp_unwind_fn *dw, uint64_t addr)
{
	uint32_t k = 0;

	for (uint32_t i = 1; i < dw->n; i++) /* parents come first: the last that holds it */
		if (inst_has(&dw->inst[i], addr))
			k = i;
	return k;
}

/* Find the hook calls in m's code: which instances have hooks. */
static void scan_hooks(struct attach *a, struct fnmodel *m)
{
	const struct cp_unwind_inst *f = &m->dw->inst[0];

	for (uint32_t r = 0; r < f->nranges; r++) {
		uint64_t lo = f->ranges[r].lo, len = f->ranges[r].hi - lo;
		unsigned char *code;

		if (len > (1 << 20))
			len = 1 << 20;
		code = xmalloc(len);
		if (mem_read(a, lo, code, len)) {
			free(code);
			continue;
		}
		for (size_t i = 0; i + 5 <= len; i++) {
			int32_t disp;
			int k = -1, call = 1;

			/* call or jmp rel32 to a hook's stub, call or jmp *disp32(%rip) through a slot */
			if (code[i] == 0xe8 || code[i] == 0xe9) {
				memcpy(&disp, code + i + 1, 4);
				k = stub_kind(a, lo + i + 5 + (int64_t)disp);
				call = code[i] == 0xe8;
			} else if (code[i] == 0xff && i + 6 <= len &&
				   (code[i + 1] == 0x15 || code[i + 1] == 0x25)) {
				memcpy(&disp, code + i + 2, 4);
				k = slot_kind(a, lo + i + 6 + (int64_t)disp);
				call = code[i + 1] == 0x15;
			}
			if (k < 0 || (k == 0 && !call))
				continue; /* an enter is never jumped to */
			m->hook_calls = 1;
			m->hooked[innermost(m->dw, lo + i)] = 1;
		}
		free(code);
	}
}

/*
 * The model of the function whose code holds addr; NULL if none is known.
 * DWARF is read only where hooks may be: in a module that calls them, for
 * a function whose symbol's code calls one, or a part split off another
 * (name.cold) which may hold a call of the hooks' world without one.
 * Every thread is held meanwhile: the C library's debug information is
 * large, and has no hook calls.
 */
static struct fnmodel *model_of(struct attach *a, struct cp_unwinder *u, uint64_t addr)
{
	const struct module *mod = module_of(a, addr);
	const struct fnsym *sym = fnsym_of(a, addr);
	const struct cp_unwind_fn *dw = NULL;
	struct fnmodel *m;

	for (size_t i = 0; i < a->nmodels; i++)
		if (inst_has(&a->models[i]->dw->inst[0], addr))
			return a->models[i];
	m = xcalloc(1, sizeof(*m));
	if (sym) {
		m->own_range = (struct cp_unwind_range){ sym->lo, sym->hi };
		m->own_inst = (struct cp_unwind_inst){ .entry = sym->lo, .parent = -1, .nranges = 1,
						       .ranges = &m->own_range };
		m->own_fn = (struct cp_unwind_fn){ .n = 1, .inst = &m->own_inst };
		m->dw = &m->own_fn;
		m->hooked = xcalloc(1, 1);
		scan_hooks(a, m);
	}
	if (mod && (mod->nslots[0] || mod->nslots[1]) && (!sym || sym->part || m->hook_calls))
		dw = cp_unwinder__fn_dwarf(u, addr);
	if (dw) {
		free(m->hooked);
		m->dw = dw;
		m->hook_calls = 0;
		m->hooked = xcalloc(dw->n, 1);
		scan_hooks(a, m);
	} else if (!sym) {
		free(m);
		return NULL;
	}
	ALLOC_GROW(a->models, a->nmodels + 1, a->models_alloc);
	a->models[a->nmodels++] = m;
	return m;
}

static void free_models(struct attach *a)
{
	for (size_t i = 0; i < a->nmodels; i++) {
		free(a->models[i]->hooked);
		free(a->models[i]);
	}
	FREE_AND_NULL(a->models);
	a->nmodels = a->models_alloc = 0;
}

/*
 * Where a thread, or a frame a signal interrupted, stands in its code: the
 * calls of the hooks' world open there are the instances with hooks whose
 * code holds the instruction at `code` (the instruction itself, or the
 * call before a return address), adjusted by a hook call in progress.
 */
enum stand_hook {
	HOOK_NONE,
	HOOK_DONE, /* the C library's empty hook ran (or is returning): it counts as run */
	HOOK_NEXT, /* the hook is the next thing to run, and will be ours */
};

struct stand {
	struct user_regs_struct ur; /* registers to unwind from */
	uint64_t code;		    /* the instruction whose instances are open; 0: none (it returned) */
	enum stand_hook hook;
	int kind;		    /* the hook's: 0 enter, 1 exit */
	int tail;		    /* it was jumped to: the exiting function has no frame left */
	int for_caller;		    /* a frame in a hook: the hook call is its caller frame's */
	int innermost;		    /* fn not known: the hook is the innermost open call's */
	int ret;		    /* ur is after the frame's return (settle_static) */
	uint64_t fn, site;	    /* the hook's arguments (this_fn, call_site; 0 if not known) */
};

/*
 * s is at a hook call in progress, whose arguments are in r (the
 * registers at the hook's first instruction); s->ur is its caller's
 * already, at the return address.
 */
static void stand_hook(struct stand *s, const struct user_regs_struct *r, enum stand_hook hook,
		       int kind, int tail)
{
	s->hook = hook;
	s->kind = kind;
	s->tail = tail;
	s->fn = r->rdi;
	s->site = r->rsi;
	s->code = s->ur.rip - 1;
}

struct seed_frame {
	uint64_t fn, site, sp;
};

static void open_at(const struct fnmodel *m, uint64_t code, uint64_t site, uint64_t sp,
		    struct seed_frame *f, int *n, int max);
static void apply_hook(const struct stand *s, uint64_t site, uint64_t sp, int first,
		       struct seed_frame *f, int *n, int max);

/* The calls s leaves open in its frame (as open_calls counts them), by entry: n of them in fn. */
static int stand_opens(struct attach *a, struct cp_unwinder *u, const struct stand *s, uint64_t *fn,
		       int max)
{
	struct seed_frame f[32];
	struct fnmodel *m = s->code ? model_of(a, u, s->code) : NULL;
	int n = 0;

	if (m)
		open_at(m, s->code, 0, 0, f, &n, (int)ARRAY_SIZE(f));
	apply_hook(s, 0, 0, 0, f, &n, (int)ARRAY_SIZE(f));
	for (int i = 0; i < n && i < max; i++)
		fn[i] = f[i].fn;
	return n < max ? n : max;
}

/*
 * r after the instruction at code (len bytes, in[0] its decoding), if it
 * is one of an epilogue's: a pop, leave or a nop.  0, or -1 for another.
 */
static int epilogue_insn(struct attach *a, const unsigned char *code, const struct cp_x86_insn *in,
			 struct user_regs_struct *r)
{
	unsigned long long *regs[16] = { &r->rax, &r->rcx, &r->rdx, &r->rbx, &r->rsp, &r->rbp,
					 &r->rsi, &r->rdi, &r->r8,  &r->r9,  &r->r10, &r->r11,
					 &r->r12, &r->r13, &r->r14, &r->r15 };
	int rex = in->len == 2 && code[0] == 0x41;
	unsigned char op = code[rex];

	if (op >= 0x58 && op <= 0x5f && in->len == 1u + rex) {
		*regs[(op - 0x58) + 8 * rex] = mem_u64(a, r->rsp);
		if (op - 0x58 + 8 * rex != 4)
			r->rsp += 8;
		return 0;
	}
	if (op == 0xc9 && in->len == 1) { /* leave */
		r->rsp = r->rbp;
		r->rbp = mem_u64(a, r->rsp);
		r->rsp += 8;
		return 0;
	}
	if (op == 0x90 || (op == 0x0f && code[1] == 0x1f) ||
	    (op == 0x66 && (code[1] == 0x90 || (code[1] == 0x0f && code[2] == 0x1f)) && !rex))
		return 0;
	return -1;
}

/*
 * Where t's innermost call stands, told from its code without running it
 * (single steps are what a callprof killed meanwhile makes fatal: the
 * step's SIGTRAP is delivered once no tracer takes it): every path from
 * its pc, conditional jumps followed both ways, reaches a call or a
 * return within a few instructions, and all of them leave the same calls
 * open in its frame.  1 with *s set, else 0 (and t is stepped).  m is the
 * model of its function.
 */
static int settle_static(struct attach *a, struct cp_unwinder *u, struct thread *t,
			 const struct fnmodel *m, struct stand *s)
{
	unsigned char code[768];
	uint64_t pc = t->regs.rip, base = pc - 256, todo[8], seen[96], first[32], fns[32];
	size_t len = sizeof(code);
	int ntodo = 0, nseen = 0, nfirst = -1, err;

	/* From a little before pc (a loop jumps back), unless that is not mapped. */
	if (mem_read(a, base, code, 256))
		base = pc, len -= 256;
	while ((err = mem_read(a, pc, code + (pc - base), len - (pc - base))) && len - (pc - base) > 16)
		len = (pc - base) + (len - (pc - base)) / 2; /* near the end of a mapping */
	if (err)
		return 0;
	todo[ntodo++] = pc;
	while (ntodo) {
		uint64_t ip = todo[--ntodo];
		struct stand o;
		/* The first path, from pc: its registers, while it is an epilogue's. */
		struct user_regs_struct er = t->regs;
		int n, k, merged = 0, epilogue = nfirst < 0;

		memset(&o, 0, sizeof(o));
		o.ur = t->regs;
		for (;;) {
			struct cp_x86_insn in;

			if (ip < base || ip >= base + len || nseen == (int)ARRAY_SIZE(seen))
				return 0;
			for (int i = 0; i < nseen && !merged; i++)
				merged = seen[i] == ip; /* joins a path already followed */
			if (merged)
				break;
			seen[nseen++] = ip;
			if (!cp_x86__decode(code + (ip - base), len - (ip - base), ip, &in))
				return 0;
			if (in.flow == CP_X86_NEXT) {
				if (epilogue && epilogue_insn(a, code + (ip - base), &in, &er))
					epilogue = 0;
				ip += in.len;
			} else if (in.flow == CP_X86_JCC && in.has_target && ntodo < (int)ARRAY_SIZE(todo)) {
				epilogue = 0;
				todo[ntodo++] = in.target;
				ip += in.len;
			} else if (in.flow == CP_X86_JMP && in.has_target && stub_kind(a, in.target) < 0) {
				ip = in.target;
			} else if (in.flow == CP_X86_RET) {
				o.code = 0; /* it returns: its exit hooks ran */
				if (epilogue && code[ip - base + in.len - 1] == 0xc3) { /* ret, not ret $N */
					/*
					 * Only an epilogue's pops before it: taken here, and
					 * the return, so that the stack is unwound from the
					 * caller, as after steps.  From pc the unwinder would
					 * read the registers just popped below the stack
					 * pointer, which it does not copy.
					 */
					o.ur = er;
					o.ur.rip = mem_u64(a, er.rsp);
					o.ur.rsp = er.rsp + 8;
					o.ret = 1;
				}
				break;
			} else if (in.flow == CP_X86_CALL || in.flow == CP_X86_JMP) {
				k = in.has_target ? stub_kind(a, in.target) :
				    in.has_slot	  ? slot_kind(a, in.slot) :
						    -1;
				/*
				 * A jump to the exit hook at a function's end: its exit
				 * is next, from this frame (the jump leaves it as the
				 * hook's caller would see it).  Any other jump: stepped.
				 */
				if (in.flow == CP_X86_JMP && k != 1)
					return 0;
				o.code = ip;
				if (k >= 0) {
					const struct cp_unwind_fn *dw = m->dw;
					uint32_t i = innermost(dw, ip);

					while (i && !m->hooked[i])
						i = (uint32_t)dw->inst[i].parent;
					if (!m->hooked[i] || !dw->inst[i].entry)
						return 0;
					o.hook = HOOK_NEXT;
					o.kind = k;
					o.fn = dw->inst[i].entry;
				}
				break;
			} else {
				return 0; /* a system call, a trap, an indirect or hook jump: stepped */
			}
		}
		if (merged)
			continue;
		n = stand_opens(a, u, &o, fns, (int)ARRAY_SIZE(fns));
		if (o.ret)
			o.code = o.ur.rip - 1; /* its caller, in its body at the call */
		if (nfirst < 0) {
			nfirst = n;
			memcpy(first, fns, sizeof(fns[0]) * (size_t)n);
			*s = o;
		} else if (n != nfirst || memcmp(first, fns, sizeof(fns[0]) * (size_t)n)) {
			return 0; /* the paths differ: only running tells */
		}
	}
	return nfirst >= 0;
}

/*
 * Where t's innermost call stands (s): t may be moved past the C
 * library's empty hook, or stepped to its next call or return.  At a
 * function's first instruction (a hook's PLT stub, or a function it was
 * just stepped into, which is not open) s->ur is its caller's.
 */
static void settle(struct attach *a, struct cp_unwinder *u, struct thread *t, struct stand *s)
{
	struct fnmodel *m;
	uint64_t ra;
	int k;

	memset(s, 0, sizeof(*s));
	s->ur = t->regs;
	s->code = t->regs.rip;
	if (at_libc_hook(a, t->regs.rip)) {
		/* In the C library's empty hook: finish it here. */
		struct user_regs_struct r = t->regs;

		ra = mem_u64(a, t->regs.rsp);
		k = call_kind(a, ra);
		emulate_ret(a, t);
		s->ur = t->regs;
		/* Jumped to (an exit at a function's end): that function is gone, its caller in its body. */
		stand_hook(s, &r, k >= 0 ? HOOK_DONE : HOOK_NONE, k, 0);
		return;
	}
	k = stub_kind(a, t->regs.rip);
	if (k >= 0) {
		/* Before the GOT jump, which will reach our hook. */
		ra = mem_u64(a, t->regs.rsp);
		pop_virtual(a, &t->regs, &s->ur);
		stand_hook(s, &t->regs, HOOK_NEXT, k, call_kind(a, ra) != k);
		return;
	}
	m = model_of(a, u, t->regs.rip);
	if (!m || !m->hook_calls)
		return; /* in code without hooks: in its body, whatever it is */
	if (in_syscall(a, t)) {
		/* a system call of its own: in its body (not to be stepped) */
		s->code = t->dirty ? t->regs.rip : t->regs.rip - 2;
		return;
	}
	/*
	 * In code with hooks: before an enter hook, after an exit hook, or
	 * between.  Code before the enter and after the exit is straight:
	 * read on to the next call or return, which tells; where the paths
	 * differ, step to it.  Never a thread stopped for a signal of the
	 * program's: a step would drop it, to be sent again by callprof,
	 * which a kill would lose.
	 */
	if (settle_static(a, u, t, m, s))
		return;
	if (t->nsigs && t->last_stop == t->sigs[0])
		return; /* in its body */
	if (getenv("CALLPROF_ATTACH_DEBUG"))
		fprintf(stderr, "callprof: attach debug: thread %d stepped from %#llx\n", (int)t->tid,
			t->regs.rip);
	for (int i = 0; i < STEP_LIMIT; i++) {
		uint64_t pc0 = t->regs.rip, sp0 = t->regs.rsp, top0 = mem_u64(a, sp0);
		unsigned char insn[2];

		if (!mem_read(a, pc0, insn, 2) && insn[0] == 0x0f && insn[1] == 0x05)
			break; /* a system call of its own: in its body */
		if (step(t) || wait_stop(t) || get_regs(t))
			break;
		t->dirty = 0; /* its registers are its own again */
		s->ur = t->regs;
		s->code = t->regs.rip;
		if (t->last_stop != SIGTRAP)
			keep_signal(t, t->last_stop); /* not our step's trap: the program's */
		if (t->regs.rsp == sp0 - 8) {
			ra = mem_u64(a, t->regs.rsp);
			if (ra > pc0 && ra <= pc0 + 16) {
				/* It called something: its caller is at the return address. */
				struct user_regs_struct r = t->regs;

				if (at_libc_hook(a, t->regs.rip)) {
					k = call_kind(a, ra);
					emulate_ret(a, t);
					s->ur = t->regs;
					stand_hook(s, &r, k >= 0 ? HOOK_DONE : HOOK_NONE, k, 0);
					return;
				}
				k = stub_kind(a, t->regs.rip);
				pop_virtual(a, &t->regs, &s->ur);
				/* its hook, through the stub: ours next; another function: in its body */
				stand_hook(s, &r, k >= 0 ? HOOK_NEXT : HOOK_NONE, k, 0);
				return;
			}
		}
		if (t->regs.rsp == sp0 + 8 && t->regs.rip == top0) {
			/* It returned (closed): its caller is in its body. */
			s->code = t->regs.rip - 1;
			return;
		}
	}
}

/*
 * Where a frame that a signal interrupted stands (a static settle: it
 * cannot be stepped): at the C library's hook or a hook's stub, as for the
 * innermost frame (f is the frame above it, its caller); else read
 * forward from its pc to the first call, jump or return.  A call of a
 * hook there is the hook of the innermost instance with hooks holding the
 * call; a return: the function's exit hooks have run.  Code it cannot
 * read it takes for the body.
 */
static void stand_at(struct attach *a, struct cp_unwinder *u, const struct cp_unwind_frame *f,
		     const struct cp_unwind_frame *caller, struct stand *s)
{
	unsigned char code[256];
	uint64_t pc = f->pc, ra = caller ? caller->pc : 0;
	size_t len = sizeof(code), at = 0;
	int libc = at_libc_hook(a, pc), k = -1, err;
	struct fnmodel *m;

	memset(s, 0, sizeof(*s));
	s->code = pc;
	if (libc || (k = stub_kind(a, pc)) >= 0) {
		/* The frame above (its caller, or the jumper's caller) gets the adjustment. */
		s->code = 0;
		if (!f->have_args || !ra)
			return;
		s->for_caller = 1;
		if (libc) {
			k = call_kind(a, ra);
			s->hook = k >= 0 ? HOOK_DONE : HOOK_NONE;
		} else {
			s->hook = HOOK_NEXT;
			s->tail = call_kind(a, ra) != k;
		}
		s->kind = k;
		s->fn = f->di;
		s->site = f->si;
		return;
	}
	m = model_of(a, u, pc);
	if (!m || !m->hook_calls)
		return;
	while ((err = mem_read(a, pc, code, len)) && len > 16)
		len /= 2; /* near the end of a mapping */
	if (err)
		return;
	for (int n = 0; n < 64 && at < len; n++) {
		struct cp_x86_insn in;
		uint64_t ip = pc + at;

		if (!cp_x86__decode(code + at, len - at, ip, &in))
			return;
		switch (in.flow) {
		case CP_X86_NEXT:
			at += in.len;
			continue;
		case CP_X86_RET:
			s->code = 0; /* it returns: its exit hooks ran */
			return;
		case CP_X86_CALL:
		case CP_X86_JMP:
			k = in.has_target ? stub_kind(a, in.target) :
			    in.has_slot	  ? slot_kind(a, in.slot) :
					    -1;
			if (k >= 0) {
				const struct cp_unwind_fn *dw = m->dw;
				uint32_t i = innermost(dw, ip);

				while (i && !m->hooked[i])
					i = (uint32_t)dw->inst[i].parent;
				s->code = ip;
				s->hook = HOOK_NEXT;
				s->kind = k;
				s->fn = m->hooked[i] ? dw->inst[i].entry : 0; /* 0: not known */
			}
			return;
		default:
			return;
		}
	}
}

/*
 * Append the calls open at code (in m's function) to f (*n so far, at
 * most max): the instances with hooks whose code holds it, outermost
 * first, all with the physical frame's call site and stack address.
 */
static void open_at(const struct fnmodel *m, uint64_t code, uint64_t site, uint64_t sp,
		    struct seed_frame *f, int *n, int max)
{
	for (uint32_t i = 0; i < m->dw->n && *n < max; i++) {
		const struct cp_unwind_inst *in = &m->dw->inst[i];

		if (m->hooked[i] && in->entry && inst_has(in, code))
			f[(*n)++] = (struct seed_frame){ in->entry, site, sp };
	}
}

/*
 * Apply s's hook call in progress to the calls open in its frame,
 * f[first .. *n): this_fn's call is the innermost open one when its enter
 * has run or its exit is to come, else it is not open (nor anything
 * inlined in it).  site and sp are the frame's.
 */
static void apply_hook(const struct stand *s, uint64_t site, uint64_t sp, int first,
		       struct seed_frame *f, int *n, int max)
{
	int at = *n - 1;

	if (s->innermost && s->hook == HOOK_DONE && at >= first) {
		if (s->kind == 1)
			(*n)--; /* its exit ran; an enter that ran leaves it the innermost */
		return;
	}
	if (s->hook == HOOK_NONE || !s->fn)
		return;
	if (s->tail) {
		/* A jumped-to exit: its function has no frame left, its caller is this one. */
		if (s->kind == 1 && *n < max)
			f[(*n)++] = (struct seed_frame){ s->fn, s->site ? s->site : site, sp };
		return;
	}
	while (at >= first && f[at].fn != s->fn)
		at--;
	if (s->kind == 0 ? s->hook == HOOK_NEXT : s->hook == HOOK_DONE) {
		/* Its enter still to come, or its exit run: not open. */
		if (at >= first)
			*n = at;
		return;
	}
	if (at >= first)
		*n = at + 1; /* what was inlined in it has returned */
	else if (*n < max)
		f[(*n)++] = (struct seed_frame){ s->fn, s->site ? s->site : site, sp };
}

/* For a developer: where frame i of t stands (CALLPROF_ATTACH_DEBUG). */
static void debug_frame(const struct thread *t, int i, const struct cp_unwind_frame *f,
			const struct stand *s)
{
	static const char *const hook[] = { "", " done", " next" };

	fprintf(stderr, "callprof: attach debug: thread %d frame %d pc %#" PRIx64 "%s sp %#" PRIx64,
		(int)t->tid, i, f->pc, f->activation ? " (activation)" : "", f->sp);
	if (s->code)
		fprintf(stderr, " open at %#" PRIx64, s->code);
	if (s->hook != HOOK_NONE)
		fprintf(stderr, ": %s%s of %#" PRIx64 "%s%s", s->kind ? "exit" : "enter",
			hook[s->hook], s->fn, s->tail ? " (jumped to)" : "",
			s->for_caller ? " (for its caller)" : "");
	fputc('\n', stderr);
}

/*
 * The instrumented calls open on t, outermost first, into f[] (at most
 * max); returns how many.  Each physical frame holds its function's call
 * and those of the functions inlined into it where it stands; the
 * innermost frame and any a signal interrupted may be inside a hook call.
 */
static struct sled *sled_at_or_below(struct attach *a, uint64_t pc);

/*
 * The sledded function whose call site is return address site, when that
 * is not fn: fn was reached by a tail call (`jmp`) from it, whose frame is
 * gone, so the stack shows fn called from site.  The jumper's call is open
 * too (fn's return ends both), and seeded under fn with the same slot, so
 * that the runtime puts fn's calls, and fn's own entry if it is still to
 * come, under it (runtime/hooks.c, seed_tail_call).  Only a direct call
 * (e8 rel32) of a function with a sled; 0 otherwise.
 */
static uint64_t tail_jumper(struct attach *a, uint64_t site, uint64_t fn)
{
	unsigned char call[5];
	struct sled *sl;
	uint64_t to;
	int32_t rel;

	if (mem_read(a, site - 5, call, sizeof(call)) || call[0] != 0xe8)
		return 0;
	memcpy(&rel, call + 1, 4);
	to = site + (uint64_t)(int64_t)rel;
	sl = to != fn ? sled_at_or_below(a, to + 4) : NULL;
	return sl && (sl->addr == to || sl->addr == to + 4) ? to : 0;
}

/*
 * Frame i of a sleds build: one physical frame of a sledded function is
 * one open call (sleds are placed after inlining), open once its entry
 * ran: a pc at the function's start, its endbr64 or its sled is a call
 * still to come.  Seeded as the entry reports it: the function's start,
 * the frame's return address, and the slot it is in (a sled frame's sp is
 * its slot - 16, flagged as the runtime says), checked to hold it.  Not
 * seeded: the outermost frame, a split-off part, a function without a
 * symbol.  Its return has no stub: the runtime closes it unseen, by the
 * slot rules, when a later call shows it is gone.  Below it, at the same
 * slot, the call of the function that jumped to it, if one did (also when
 * its own entry is still to come: tail_jumper).
 */
static void sled_open(struct attach *a, const struct cp_unwind_frame *fr, int n, int i,
		      struct seed_frame *f, int *out, int max)
{
	int act = i == 0 || fr[i].activation;
	uint64_t code = act ? fr[i].pc : fr[i].pc - 1, slot, site, jumper;
	const struct fnsym *s;
	struct sled *sl;

	/*
	 * A frame a signal interrupted inside gcc's NOPs (sled+1..+4): its
	 * rt_sigreturn would come back into the middle of a call written
	 * there.  That sled is left alone (its calls are not recorded).
	 */
	if (i > 0 && fr[i].activation && (sl = sled_at_or_below(a, fr[i].pc)) &&
	    fr[i].pc > sl->addr && fr[i].pc < sl->addr + 5 && sl->nop[0] == 0x90) {
		sl->keep = 1;
		if (getenv("CALLPROF_ATTACH_DEBUG"))
			fprintf(stderr, "callprof: attach debug: sled %#" PRIx64 " left alone: a "
				"signal interrupted a thread at +%d\n", sl->addr,
				(int)(fr[i].pc - sl->addr));
	}
	if (*out >= max || i + 1 >= n || !fr[i + 1].sp || !(s = fnsym_of(a, code)) || s->part)
		return;
	sl = sled_at_or_below(a, s->lo + 4);
	if (!sl || (sl->addr != s->lo && sl->addr != s->lo + 4))
		return;
	site = fr[i + 1].pc;
	slot = fr[i + 1].sp - 8;
	if (mem_u64(a, slot) != site)
		return;
	jumper = tail_jumper(a, site, s->lo);
	if (jumper)
		f[(*out)++] = (struct seed_frame){ jumper, site, (slot - 16) | a->sl[SL_SP_SLED] };
	if ((act && fr[i].pc <= sl->addr) || *out >= max)
		return; /* its entry is still to come */
	f[(*out)++] = (struct seed_frame){ s->lo, site, (slot - 16) | a->sl[SL_SP_SLED] };
}

static int open_calls(struct attach *a, struct cp_unwinder *u, struct thread *t, struct seed_frame *f,
		      int max)
{
	struct cp_unwind_frame *fr = xcalloc(MAX_FRAMES, sizeof(*fr));
	struct stand *st = xcalloc(MAX_FRAMES, sizeof(*st)), inner;
	uint64_t *sp = xcalloc(MAX_FRAMES, sizeof(*sp));
	struct cp_unwind_regs r;
	unsigned char *copy;
	int n, complete = 0, out = 0;

	settle(a, u, t, &inner);
	perf_regs(&inner.ur, &r);
	if (stack_copy(a, inner.ur.rsp, &r, &copy))
		goto out;
	n = cp_unwinder__frames(u, (uint32_t)t->tid, &r, fr, MAX_FRAMES, &complete);
	free(copy);
	/* Where each frame stands: the innermost as settled, the others at their calls. */
	for (int i = 0; i < n; i++) {
		if (i == 0) {
			st[0] = inner;
		} else if (fr[i].activation) {
			stand_at(a, u, &fr[i], i + 1 < n ? &fr[i + 1] : NULL, &st[i]);
		} else {
			int k = call_kind(a, fr[i].pc);

			memset(&st[i], 0, sizeof(st[i]));
			st[i].code = fr[i].pc - 1;
			/*
			 * A hook calling something: the loader binding a lazy slot
			 * (it may bind ours: taken for run), or a signal's frames.
			 */
			if (k >= 0) {
				st[i].hook = HOOK_DONE;
				st[i].kind = k;
				st[i].innermost = 1;
			}
		}
	}
	if (getenv("CALLPROF_ATTACH_DEBUG"))
		for (int i = 0; i < n; i++)
			debug_frame(t, i, &fr[i], &st[i]);
	/* Where a hook's frame would be in each: 16 below its stack pointer. */
	for (int i = 0; i < n; i++)
		sp[i] = fr[i].sp ? fr[i].sp - 16 : i ? sp[i - 1] + 8 : inner.ur.rsp - 16;
	for (int i = n - 1; i >= 0 && out < max; i--) {
		/* What the hooks pass as call_site: the return address of the physical frame. */
		uint64_t site = i + 1 < n ? fr[i + 1].pc : 0;
		struct fnmodel *m = st[i].code ? model_of(a, u, st[i].code) : NULL;
		int first = out;

		if (a->nplan)
			sled_open(a, fr, n, i, f, &out, max);
		if (m)
			open_at(m, st[i].code, site, sp[i], f, &out, max);
		/* A hook call in progress in this frame, or in the frame above (a signal's, in a hook). */
		if (i > 0 && st[i - 1].for_caller)
			apply_hook(&st[i - 1], site, sp[i], first, f, &out, max);
		else if (!st[i].for_caller)
			apply_hook(&st[i], site, sp[i], first, f, &out, max);
	}
out:
	free(fr);
	free(st);
	free(sp);
	return out;
}

static int cmp_tid(const void *x, const void *y)
{
	const struct thread *a = x, *b = y;

	return a->tid - b->tid;
}

/*
 * Point the hook slots of every module, and the C library's .dynsym
 * entries of the hooks, at to[] (our hooks, or the library's own when
 * restoring: then from[] are ours).  Only slots that hold one of from[],
 * or a lazy slot still pointing into its own module, are changed.
 */
static int redirect(struct attach *a, const uint64_t *from, const uint64_t *to, int restoring)
{
	int changed = 0;

	/*
	 * Exits first when turning on, enters first when turning off: a
	 * callprof killed in between leaves exits without their enters
	 * (counted as unpaired), never enters whose exits are not seen.
	 */
	for (int kk = 0; kk < 2; kk++) {
		int k = restoring ? kk : 1 - kk;

		for (size_t i = 0; i < a->nmods; i++) {
			struct module *m = &a->mods[i];

			if (m->runtime)
				continue;
			for (int s = 0; s < m->nslots[k]; s++) {
				uint64_t v = mem_u64(a, m->slots[k][s]);
				int lazy = !restoring && v >= m->lo && v < m->hi;

				if (v != from[k] && v != from[0] && v != from[1] && !lazy)
					continue;
				if (v == to[k])
					continue;
				if (mem_write(a, m->slots[k][s], &to[k], 8))
					return -1;
				changed++;
				if (kk == 0 && !restoring)
					test_kill("switch-slots"); /* half the slots: the exits */
			}
		}
	}
	return changed;
}

/* Slots bound elsewhere than the C library or us: another profiler, or a runtime of ours. */
static const char *foreign_hooks(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++) {
		struct module *m = &a->mods[i];

		for (int k = 0; k < 2; k++)
			for (int s = 0; s < m->nslots[k]; s++) {
				uint64_t v = mem_u64(a, m->slots[k][s]);
				const struct mapping *mp;
				struct module *owner;

				if (m->runtime || v == a->libc_hook || (v >= m->lo && v < m->hi))
					continue;
				owner = module_of(a, v);
				if (owner)
					return owner->path;
				/*
				 * Mapped since we read the maps (the first check runs
				 * with the process running: another attach's copy,
				 * loaded meanwhile): as the maps say now.
				 */
				if (!read_maps(a) && (mp = mapping_of(a, v)) && mp->path)
					return mp->path;
				return "an unknown module";
			}
	}
	return NULL;
}

/* The hooks are path's: say whose they are and what to do. */
static int refuse_foreign(pid_t pid, const char *comm, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strstr(base, "callprof-attach"))
		return cp_error("attach: process %d (%s) is being recorded by another callprof attach "
				"(or by one that was killed: it then records until it ends)", (int)pid, comm);
	if (!strncmp(base, "libcallprof", 11))
		return cp_error("attach: process %d (%s) is already recorded by callprof record "
				"(callprof dump %d takes a snapshot)", (int)pid, comm, (int)pid);
	return cp_error("attach: process %d (%s) calls another profiler's hooks, in %s", (int)pid, comm,
			path);
}

/*
 * Set the C library's .dynsym entries of the hooks to value[]: when
 * restoring, only those that are ours (another attach's are not).
 */
static int write_dynsym(struct attach *a, const uint64_t *value, int restoring)
{
	for (int k = 0; k < 2; k++) {
		uint64_t st = value[k] - a->libc_bias;

		if (!a->libc_sym[k] ||
		    (restoring && mem_u64(a, a->libc_sym[k]) != a->rt_hook[k] - a->libc_bias))
			continue;
		if (mem_write(a, a->libc_sym[k], &st, 8))
			return -1;
	}
	return 0;
}

/* /proc/PID/task/TID/schedstat: CPU time and run-queue wait (ns); 0s if unreadable. */
static void schedstat(pid_t pid, pid_t tid, uint64_t *run, uint64_t *delay)
{
	char path[64], buf[128];
	unsigned long long r = 0, d = 0;
	FILE *f;

	*run = *delay = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%llu %llu", &r, &d) == 2) {
		*run = r;
		*delay = d;
	}
	fclose(f);
}

/*
 * Point the slots of the interposed functions at our copy's (at the
 * switch), each one's value kept; a slot that cannot be written stays
 * as it was (the process then runs without that interposer).
 */
static void interpose(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++) {
		struct module *m = &a->mods[i];

		for (int k = 0; k < NIPOSE && !m->runtime; k++)
			for (int s = 0; s < m->nislots[k] && a->rt_ipose[k]; s++) {
				uint64_t v = mem_u64(a, m->islots[k][s]);

				if (v == a->rt_ipose[k] ||
				    mem_write(a, m->islots[k][s], &a->rt_ipose[k], 8))
					continue;
				ALLOC_GROW(a->isaved, a->nisaved + 1, a->isaved_alloc);
				a->isaved[a->nisaved++] = (struct ipose_slot){ m->islots[k][s], v, k };
			}
	}
}

/* Put back what interpose() changed, where it is still ours. */
static void unpose(struct attach *a)
{
	for (size_t i = 0; i < a->nisaved; i++) {
		const struct ipose_slot *p = &a->isaved[i];

		if (mem_u64(a, p->at) == a->rt_ipose[p->k])
			mem_write(a, p->at, &p->old, 8);
	}
	a->nisaved = 0;
}

/*
 * CALLPROF_TEST_SWITCH_HOLD=FILE, for tests only: at the end of the
 * switch the main thread goes on first, and the others only once FILE
 * exists (10 s at most, or until callprof is asked to stop), so that a
 * test can have the main thread do something (run another program) while
 * the other threads are still ours.
 */
static void hold_others(struct attach *a)
{
	const char *file = getenv("CALLPROF_TEST_SWITCH_HOLD");
	int i = thread_index(a, a->pid);

	if (!file || i < 0)
		return;
	release(a, &a->th[i]);
	phase(10000);
	while (access(file, F_OK) && !nap(10 * 1000 * 1000))
		;
	gave_up = GAVE_NOT;
}

/* ---- sleds (docs/internals/attach.md, "Sleds") ---- */

/*
 * The runtime's plan, read while the threads run (the start wrote it and
 * nothing changes it after): what to write at each sled, sorted by
 * address.  0, or -1 when it cannot be read (then no sled is patched).
 */
static int read_plan(struct attach *a)
{
	uint64_t maxth = mem_u64(a, a->area + 8), maxfr = mem_u64(a, a->area + 16);
	uint64_t at = a->area + AREA_THREADS + maxth * SEED_THREAD + maxfr * 24, n;
	unsigned char *buf;

	if (mem_read(a, at, a->sl, sizeof(a->sl)))
		return -1;
	n = a->sl[SL_COUNT];
	if (!n || !a->sl[SL_PLAN] || a->no_sleds)
		return 0;
	if (n > (64u << 20) / PLAN_SLED)
		return -1;
	buf = xmalloc(n * PLAN_SLED);
	for (uint64_t off = 0; off < n * PLAN_SLED; off += 1u << 20) {
		uint64_t len = n * PLAN_SLED - off < (1u << 20) ? n * PLAN_SLED - off : 1u << 20;

		if (mem_read(a, a->sl[SL_PLAN] + off, buf + off, len)) {
			free(buf);
			return -1;
		}
	}
	a->plan = xcalloc(n, sizeof(*a->plan));
	for (uint64_t i = 0; i < n; i++) {
		memcpy(&a->plan[i].addr, buf + i * PLAN_SLED, 8);
		memcpy(a->plan[i].call, buf + i * PLAN_SLED + 8, 5);
		memcpy(a->plan[i].nop, buf + i * PLAN_SLED + 13, 5);
	}
	a->nplan = n;
	free(buf);
	return 0;
}

/* The planned sled with the greatest address <= pc, or NULL. */
static struct sled *sled_at_or_below(struct attach *a, uint64_t pc)
{
	size_t lo = 0, hi = a->nplan;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->plan[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &a->plan[lo - 1] : NULL;
}

/*
 * A thread stopped inside gcc's five 1-byte NOPs (sled+1..+4) would run the
 * middle of the call written there: it goes to sled+5, the same state (the
 * bytes skipped are NOPs), written at once so that a callprof killed
 * after the sleds are written leaves it right too.  Its entry is not seen:
 * the call is open at attach.
 */
static void off_sleds(struct attach *a)
{
	for (size_t i = 0; i < a->nth; i++) {
		struct thread *t = &a->th[i];
		struct sled *sl;
		uint64_t pc = t->regs.rip;

		if (t->gone || !(sl = sled_at_or_below(a, pc)) || pc <= sl->addr ||
		    pc >= sl->addr + 5 || sl->nop[0] != 0x90)
			continue;
		t->regs.rip = sl->addr + 5;
		t->dirty = 1;
		ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs);
		a->sleds_moved++;
		if (getenv("CALLPROF_ATTACH_DEBUG"))
			fprintf(stderr, "callprof: attach debug: sled: thread %d moved from %#" PRIx64
				"+%d to %#" PRIx64 "+5\n", (int)t->tid, sl->addr, (int)(pc - sl->addr),
				sl->addr);
	}
}

/*
 * Write the planned calls (on) or the NOPs back (off), every thread held,
 * one page at a time: each page's sleds in one read and one write of the
 * span from its first to its last, which the kernel copies under one page
 * reference (a callprof killed meanwhile leaves whole sleds, never a torn
 * one).  A sled whose bytes are not what they should be (its module gone
 * or replaced, or changed by someone else) is left alone; one whose five
 * bytes cross a page, too.  The number written, or -1 when a write failed.
 */
static long patch_sleds(struct attach *a, int on)
{
	uint64_t pg = a->sl[SL_PAGE] ? a->sl[SL_PAGE] : 4096, mask = ~(pg - 1);
	size_t pages = 0, page = 0;
	long n = 0;
	unsigned char *buf = xmalloc(pg + 8);

	for (size_t i = 0; i < a->nplan;) {
		size_t j = i;

		while (j < a->nplan && (a->plan[j].addr & mask) == (a->plan[i].addr & mask))
			j++;
		pages++;
		i = j;
	}
	for (size_t i = 0; i < a->nplan;) {
		uint64_t base = a->plan[i].addr & mask, lo = 0, hi = 0;
		size_t j = i;
		int changed = 0;

		while (j < a->nplan && (a->plan[j].addr & mask) == base)
			j++;
		for (size_t k = i; k < j; k++) {
			struct sled *sl = &a->plan[k];

			if (((sl->addr + 4) & mask) != base) {
				a->sleds_crossing += on;
				continue;
			}
			if (sl->on == on || (on && sl->keep))
				continue;
			if (!lo)
				lo = sl->addr;
			hi = sl->addr + 5;
		}
		if (lo && hi - lo <= pg && !mem_read(a, lo, buf, hi - lo)) {
			for (size_t k = i; k < j; k++) {
				struct sled *sl = &a->plan[k];
				unsigned char *p = buf + (sl->addr - lo);

				if (((sl->addr + 4) & mask) != base || sl->on == on || sl->addr < lo ||
				    (on && sl->keep))
					continue;
				if (memcmp(p, on ? sl->nop : sl->call, 5)) {
					a->sleds_changed += on;
					if (!on) {
						sl->on = 0; /* not ours any more: nothing to undo */
						a->sleds_on--;
					}
					continue;
				}
				memcpy(p, on ? sl->call : sl->nop, 5);
				sl->on = on;
				changed++;
			}
			if (changed && mem_write(a, lo, buf, hi - lo)) {
				for (size_t k = i; k < j; k++)
					if (a->plan[k].addr >= lo && a->plan[k].addr < hi)
						a->plan[k].on = !on;
				free(buf);
				return -1;
			}
			n += changed;
			a->sleds_on = on ? a->sleds_on + (unsigned)changed : a->sleds_on - (unsigned)changed;
		}
		i = j;
		if (++page == (pages + 1) / 2)
			test_kill(on ? "switch-sleds" : "end-sleds"); /* half the pages (one of one) */
	}
	free(buf);
	test_kill(on ? "switch-sleds-all" : "end-sleds-all");
	return n;
}

/* Is addr in the stub area or a module's thunks (sleds' code of ours outside the copy's text)? */
static int in_sled_code(const struct attach *a, uint64_t addr)
{
	if (a->sl[SL_STUBS_RX] && addr - a->sl[SL_STUBS_RX] < a->sl[SL_STUBS_BYTES])
		return 1;
	for (uint64_t i = 0; i < a->sl[SL_NNEAR] && i < 32; i++)
		if (addr - a->sl[SL_NEAR + 2 * i] < a->sl[SL_NEAR + 2 * i + 1])
			return 1;
	return 0;
}

/* Is v a slot value that stands for a stub (cp_stubs__is, with the runtime's geometry)? */
static int is_stub(const struct attach *a, uint64_t v, uint64_t used)
{
	uint64_t d = v - a->sl[SL_STUBS_RX], size = a->sl[SL_STUB_SIZE];

	return a->sl[SL_STUBS_RX] && size && d < used && d >= a->sl[SL_STUB_FIRST] &&
	       d % size == a->sl[SL_STUB_SLOT];
}

/* The return address at slot, if it holds a stub: the real one back.  1 if given back. */
static int give_back_slot(struct attach *a, uint64_t slot, uint64_t used)
{
	uint64_t v, r;

	if (mem_read(a, slot, &v, 8) || !is_stub(a, v, used) ||
	    mem_read(a, v - a->sl[SL_STUB_SLOT] + a->sl[SL_STUB_TARGET], &r, 8) || !r)
		return 0;
	if (mem_write(a, slot, &r, 8))
		return 0;
	a->slots_given++;
	return 1;
}

/* One tree's shadow stack (th, a struct cp_thread in the process): its sled frames' slots. */
static void give_back_tree(struct attach *a, uint64_t th, uint64_t used)
{
	uint64_t top = mem_u64(a, th + a->sl[SL_TH_TOP]), stack = mem_u64(a, th + a->sl[SL_TH_STACK]);
	uint64_t fsz = a->sl[SL_FRAME_SIZE], f0 = stack + a->sl[SL_STACK_F], flags = a->sl[SL_SP_FLAGS];
	uint64_t busy = 0, msp;

	if (!fsz || !stack || top < f0 || (top - f0) % fsz || (top - f0) / fsz > (64u << 20))
		return;
	for (uint64_t f = top; f > f0; f -= fsz) {
		uint64_t sp = mem_u64(a, f + a->sl[SL_FRAME_SP]);

		if (sp & a->sl[SL_SP_SLED])
			give_back_slot(a, (sp & ~flags) + a->sl[SL_SLOT_AT], used);
	}
	/* A muted thread's muting call has a stub and no frame (hooks.c, cp_sled__enter). */
	mem_read(a, th + a->sl[SL_TH_BUSY], &busy, 4);
	msp = mem_u64(a, th + a->sl[SL_TH_MUTE_SP]);
	if ((uint32_t)busy == a->sl[SL_MUTED] && (msp & a->sl[SL_SP_SLED]))
		give_back_slot(a, (msp & ~flags) + a->sl[SL_SLOT_AT], used);
}

/*
 * Every live thread's return addresses that point at stubs get their real
 * ones back, from the runtime's shadow stacks read through /proc/PID/mem
 * (a thread that ended is skipped: its stack may be gone or another's).
 * Every thread held, none in our code (run_out).  The slots given back.
 */
static unsigned give_back(struct attach *a)
{
	uint64_t used = 0, th;
	unsigned before = a->slots_given, trees = 0;

	if (!a->sl[SL_STUBS_RX] || mem_read(a, a->sl[SL_STUBS_USED], &used, 8))
		return 0;
	th = mem_u64(a, a->sl[SL_THREADS]);
	for (unsigned n = 0; th && n < (1u << 20); n++, th = mem_u64(a, th + a->sl[SL_TH_NEXT])) {
		uint32_t tid = 0;
		uint64_t side;
		int live = 0;

		mem_read(a, th + a->sl[SL_TH_TID], &tid, 4);
		for (size_t i = 0; i < a->nth && !live; i++)
			live = !a->th[i].gone && (uint32_t)a->th[i].tid == tid;
		if (!live)
			continue;
		give_back_tree(a, th, used);
		side = mem_u64(a, th + a->sl[SL_TH_SIDE]);
		if (side)
			give_back_tree(a, side, used);
		if (++trees == 1)
			test_kill("end-given"); /* one thread's given back, the others' not */
	}
	test_kill("end-given-all");
	return a->slots_given - before;
}

static int switch_on(struct attach *a, const char *comm, struct cp_attach_result *res)
{
	struct seed_frame *frames = xcalloc(MAX_FRAMES, sizeof(*frames));
	struct cp_unwinder *u;
	uint64_t maxth = mem_u64(a, a->area + 8), maxfr = mem_u64(a, a->area + 16);
	uint64_t frames_at = a->area + AREA_THREADS + maxth * SEED_THREAD, next = 0, t0[2];
	uint32_t nseeded = 0;
	const char *other;
	struct timespec mono, held;
	int err;

	read_modules(a); /* while the threads run; checked again once they are held */
	if (read_plan(a))
		cp_warning("attach: process %d (%s): the runtime's plan of its sleds cannot be read: "
			   "they are not patched", (int)a->pid, comm);
	clock_gettime(CLOCK_MONOTONIC, &held);
	phase(STOP_MS);
	err = grab_all(a);
	if (err) {
		release_all(a);
		free(frames);
		return err < 0 ? -1 : cp_error("attach: process %d (%s) ended", (int)a->pid, comm);
	}
	/* It ended, or ran another program since the load: nothing of what we know holds. */
	err = modules_again(a);
	if (err || !runtime_module(a)) {
		release_all(a);
		free(frames);
		if (!cp_attach__live_threads(a->pid))
			return cp_error("attach: process %d (%s) ended", (int)a->pid, comm);
		if (err)
			return cp_error("attach: cannot read the modules of process %d (%s)",
					(int)a->pid, comm);
		a->execd = 1;
		return cp_error("attach: process %d (%s) ran another program (exec) as callprof "
				"attached: nothing recorded", (int)a->pid, comm);
	}
	other = foreign_hooks(a);
	if (other) {
		release_all(a);
		free(frames);
		return refuse_foreign(a->pid, comm, other);
	}
	if (a->sl[SL_FOREIGN] && !a->no_sleds) {
		release_all(a);
		free(frames);
		return cp_error("attach: process %d (%s) is being recorded by another callprof attach "
				"(or by one that was killed: it then records until it ends): %" PRIu64
				" of its sleds call into code already, nothing patched",
				(int)a->pid, comm, a->sl[SL_FOREIGN]);
	}
	held_for("switch: seize (every thread)", &held);
	test_kill("switch-seized");
	steps = 0;
	u = cp_unwinder__new();
	for (size_t i = 0; i < a->nmods; i++)
		cp_unwinder__add_module(u, a->mods[i].file, a->mods[i].bias);
	qsort(a->th, a->nth, sizeof(*a->th), cmp_tid);
	off_sleds(a); /* before the unwinding: a thread moved is in the function's body */
	for (size_t i = 0; i < a->nth && nseeded < maxth; i++) {
		struct thread *t = &a->th[i];
		struct {
			uint32_t tid, nframes, first, taken;
			uint64_t run0, delay0;
		} rec;
		int n;

		if (t->gone)
			continue;
		n = open_calls(a, u, t, frames, MAX_FRAMES);
		if (getenv("CALLPROF_ATTACH_DEBUG")) {
			/* What was seeded, for a developer: thread, then each frame. */
			fprintf(stderr, "callprof: attach debug: thread %d pc %#llx sig %d: %d open:",
				(int)t->tid, t->regs.rip, t->nsigs ? t->sigs[0] : 0, n);
			for (int j = 0; j < n; j++)
				fprintf(stderr, " %#" PRIx64, frames[j].fn);
			fputc('\n', stderr);
		}
		if (n <= 0 || next + (uint64_t)n > maxfr)
			continue;
		for (int j = 0; j < n; j++)
			mem_write(a, frames_at + (next + (uint64_t)j) * 24, &frames[j], 24);
		memset(&rec, 0, sizeof(rec));
		rec.tid = (uint32_t)t->tid;
		rec.nframes = (uint32_t)n;
		rec.first = (uint32_t)next;
		/* Where the thread's time since now goes if it runs no hook (runtime/attach.c). */
		schedstat(a->pid, t->tid, &rec.run0, &rec.delay0);
		mem_write(a, a->area + AREA_THREADS + (uint64_t)nseeded * SEED_THREAD, &rec,
			  sizeof(rec));
		next += (uint64_t)n;
		nseeded++;
		a->open_seeded += (unsigned)n;
	}
	free_models(a);
	cp_unwinder__free(u);
	free(frames);
	held_for("switch: seeds (every thread)", &held);
	test_kill("switch-seeded");
	res->threads = 0;
	for (size_t i = 0; i < a->nth; i++) {
		res->threads += !a->th[i].gone;
		if (!a->th[i].gone)
			zero_tls(a, &a->th[i]);
	}
	if (write_dynsym(a, a->rt_hook, 0) || redirect(a, (uint64_t[]){ a->libc_hook, a->libc_hook },
						     a->rt_hook, 0) < 0) {
		write_dynsym(a, a->libc_sym_old, 1);
		redirect(a, a->rt_hook, (uint64_t[]){ a->libc_hook, a->libc_hook }, 1);
		release_all(a);
		return cp_error("attach: cannot write the GOT of process %d (%s)", (int)a->pid, comm);
	}
	a->on = 1;
	if (a->nplan) {
		struct timespec w;
		long n;

		clock_gettime(CLOCK_MONOTONIC, &w);
		n = patch_sleds(a, 1);
		if (n < 0) {
			patch_sleds(a, 0);
			write_dynsym(a, a->libc_sym_old, 1);
			redirect(a, a->rt_hook, (uint64_t[]){ a->libc_hook, a->libc_hook }, 1);
			a->on = 0;
			release_all(a);
			return cp_error("attach: cannot write the code of process %d (%s) through "
					"/proc/%d/mem (proc_mem.force_override?): nothing patched",
					(int)a->pid, comm, (int)a->pid);
		}
		a->sleds_written = (unsigned)n;
		held_for("switch: sleds written", &w);
	}
	interpose(a);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	t0[0] = __rdtsc();
	t0[1] = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	mem_write(a, a->area + AREA_T0, t0, sizeof(t0));
	mem_write(a, a->area + AREA_NTHREADS, &nseeded, sizeof(nseeded));
	a->nseeded = nseeded;
	test_kill("switched");
	hold_others(a);
	release_all(a);
	res->held_on = seconds_since(&held);
	held_for("switch (every thread)", &held);
	if (getenv("CALLPROF_ATTACH_TIMES"))
		fprintf(stderr, "callprof: attach time: switch steps %u\n", steps);
	return 0;
}

/* ---- D. unload ---- */

/*
 * Might t be inside our runtime: at an instruction of its code, or with a
 * return address into it on the top of its stack (a hook waiting for a
 * lock, a thread's exit folding its tree)?  1 if so, or if it cannot be
 * told: its caller picks another thread, or lets them all run a moment
 * and looks again.  (It used to be stepped out of our code: a step is what
 * a callprof killed meanwhile makes fatal.)
 */
static int in_runtime(struct attach *a, struct thread *t)
{
	struct cp_unwind_regs r;
	uint64_t pcs[MAX_FRAMES];
	unsigned char *copy;
	int n, complete = 0, inside = 0;

	/* Not stepped out: a step is fatal to the process if callprof is killed meanwhile. */
	if ((t->regs.rip >= a->rt_text_lo && t->regs.rip < a->rt_text_hi) ||
	    in_sled_code(a, t->regs.rip))
		return 1;
	/* Its callers: a frame of ours further up (waiting for a lock, say). */
	perf_regs(&t->regs, &r);
	if (!a->u || stack_copy(a, t->regs.rsp, &r, &copy))
		return 1;
	n = cp_unwinder__unwind(a->u, (uint32_t)t->tid, &r, pcs, MAX_FRAMES, &complete);
	free(copy);
	for (int i = 1; i < n; i++) {
		if (pcs[i] - 1 >= a->rt_text_lo && pcs[i] - 1 < a->rt_text_hi)
			inside = 1;
		/* into a stub's or a near page's code; a slot's stub is a return yet to come */
		if (in_sled_code(a, pcs[i] - 1) && !is_stub(a, pcs[i], a->sl[SL_STUBS_BYTES]))
			inside = 1;
	}
	return inside || n <= 0;
}

/* The first held thread in our code (in_runtime), or NULL. */
static struct thread *thread_inside(struct attach *a)
{
	for (size_t i = 0; i < a->nth; i++)
		if (!a->th[i].gone && in_runtime(a, &a->th[i]))
			return &a->th[i];
	return NULL;
}

/*
 * Let every thread run for ms milliseconds, then hold them all again: what
 * a thread in our code needs to leave it.  0, or grab_all's error with
 * every thread let go.
 */
static int let_run_and_regrab(struct attach *a, long ms)
{
	struct timespec pause = { 0, ms * 1000 * 1000 };
	int err;

	release_all(a);
	nanosleep(&pause, NULL);
	phase(STOP_MS);
	err = grab_all(a);
	if (err)
		release_all(a);
	return err;
}

/* The thread to run a call of ours on, when every thread is stopped; NULL if none fits. */
static struct thread *pick_caller(struct attach *a)
{
	struct thread *t = NULL;
	int best = 0;

	for (size_t i = 0; i < a->nth; i++) {
		struct thread *c = &a->th[i];
		int score;

		if (c->gone || in_runtime(a, c))
			continue;
		score = caller_score(a, c);
		if (!t || score > best) {
			best = score;
			t = c;
		}
	}
	return t;
}

/*
 * The thread our call ran on ended under it: the process ends, or runs
 * another program (the exec kills its other threads, and takes a moment
 * to replace its memory).  1 ended, 2 exec, waiting at most a phase to
 * tell.
 */
static int ended_or_execd(struct attach *a)
{
	phase(STOP_MS);
	do {
		if (!cp_attach__live_threads(a->pid))
			return 1;
		if (!read_modules(a) && !runtime_module(a))
			return 2;
	} while (!nap(10 * 1000 * 1000));
	return 1;
}

/*
 * The end, for sleds, every thread held (after the hooks' slots): the
 * sleds back to NOPs, so that nothing enters our code anew; then every
 * thread let run until none is in our code (a return through a stub on
 * its way); then every return address that points at a stub gets its real
 * one back.  Only then may the runtime's memory go (callprof_attach_release):
 * a stub's return reads it.  0, 1 when the process ended, -1 on error.
 */
static int end_sleds(struct attach *a, const char *comm)
{
	struct timespec w;
	int err, tries;

	clock_gettime(CLOCK_MONOTONIC, &w);
	if (patch_sleds(a, 0) < 0 || a->sleds_on) {
		a->stubs_left = 1;
		cp_warning("attach: process %d (%s): %u of its sleds could not be written back to "
			   "NOPs: they go on calling callprof's runtime, which records nothing more",
			   (int)a->pid, comm, a->sleds_on);
	}
	held_for("end: sleds restored", &w);
	clock_gettime(CLOCK_MONOTONIC, &w);
	for (tries = 0; thread_inside(a); tries++) {
		if (tries * 2 >= STOP_MS) {
			a->stubs_left = 1;
			break;
		}
		err = let_run_and_regrab(a, 2);
		if (err)
			return err > 0 ? 1 : -1;
		test_kill("end-runout"); /* after a round that let threads run */
	}
	/*
	 * And once the threads are out (usually at once: no round), before
	 * any slot is given back: the point is reached on every attach.
	 */
	test_kill("end-runout");
	held_for("end: run out", &w);
	if (getenv("CALLPROF_ATTACH_TIMES"))
		fprintf(stderr, "callprof: attach time: run-out rounds %d\n", tries);
	clock_gettime(CLOCK_MONOTONIC, &w);
	give_back(a);
	held_for("end: slots given back", &w);
	if (getenv("CALLPROF_ATTACH_DEBUG"))
		fprintf(stderr, "callprof: attach debug: sleds: %u written back, %u slots given back%s\n",
			a->sleds_written - a->sleds_on, a->slots_given,
			a->stubs_left ? ", some left" : "");
	return 0;
}

/*
 * Every thread held, quietly (a retry that may fail), and the one to run
 * a call of ours on: *t, NULL when none fits or a thread is in our code
 * (*inside, then).  0, or -1 when they could not all be held (every thread
 * let go).
 */
static int hold_for_call(struct attach *a, struct thread **t, struct thread **inside)
{
	int err;

	phase(STOP_MS);
	quiet = 1;
	err = grab_all(a);
	quiet = 0;
	if (err) {
		release_all(a);
		return -1;
	}
	*inside = thread_inside(a);
	*t = *inside ? NULL : pick_caller(a);
	return 0;
}

/*
 * After the release: unload our copy (dlclose), so that a process attached
 * to again and again does not keep a copy per attach (its code, its data
 * pages, its memfd's pages: some 1 MB).  Only a copy that borrowed its TLS
 * block (find_donor): the copy that lends it stays, as the first of the
 * process's copies, and lends it again.  Its constructor started nothing
 * that runs on: the hooks' slots are the C library's again, the sleds NOPs,
 * no return address points at a stub, its thread key is deleted, and its
 * fork handlers are unregistered by the unload itself.  The caller is
 * chosen with every thread held (none may be in our code), and the others
 * run during the call: the loader's lock may be theirs.  Given up as a
 * load is (another thread loading a library for LOAD_WAIT_MS): then the
 * copy stays, its memory given back, as it did before this existed.
 */
static void unload(struct attach *a)
{
	struct timespec held;
	struct thread *t, *inside;
	uint64_t ret = ~0ull, args[1] = { a->handle };
	int err;

	clock_gettime(CLOCK_MONOTONIC, &held);
	if (hold_for_call(a, &t, &inside))
		return;
	if (t) {
		for (size_t i = 0; i < a->nth; i++)
			if (&a->th[i] != t)
				release(a, &a->th[i]);
		a->loading = 1;
		err = call(a, t, "dlclose", a->dlclose_fn, args, 1, NULL, 0, &ret, -1);
		a->loading = 0;
		a->unloaded = !err && (int)ret == 0;
	}
	release_all(a);
	held_for("end: unload (one thread)", &held);
	if (getenv("CALLPROF_ATTACH_DEBUG"))
		fprintf(stderr, "callprof: attach debug: unload %s\n",
			a->unloaded ? "done" : !t ? "not done: no caller" : "not done: dlclose failed");
}

/*
 * Restore the slots, write the profile, give back the rings and trees.
 * 0 (*wrote set), 1 when the process ended meanwhile, 2 when it ran
 * another program (exec), -1 on error.
 */
static int switch_off(struct attach *a, const char *comm, int *wrote)
{
	uint64_t libc[2] = { a->libc_hook, a->libc_hook }, ret = 0;
	struct thread *t;
	struct timespec held;
	int err;

	read_modules(a); /* while the threads run; checked again once they are held */
	clock_gettime(CLOCK_MONOTONIC, &held);
	phase(STOP_MS);
	err = grab_all(a);
	if (err) {
		release_all(a);
		if (err > 0)
			return 1; /* ended */
		if (!a->on)
			return -1;
		return cp_error("attach: process %d (%s) goes on recording with callprof's hooks: "
				"the window could not be closed; it writes %s when it ends",
				(int)a->pid, comm, a->out);
	}
	/*
	 * Our copy is not mapped: the process ended (killed meanwhile: a
	 * zombie has no maps), or it ran another program (exec), whose memory
	 * holds nothing of ours.  The old image wrote its profile as it was
	 * replaced (our execve), or its watcher writes it.
	 */
	err = modules_again(a);
	if (err || !runtime_module(a)) {
		release_all(a);
		if (!cp_attach__live_threads(a->pid))
			return 1;
		if (err)
			return cp_error("attach: cannot read the modules of process %d (%s)",
					(int)a->pid, comm);
		return 2;
	}
	test_kill("end-seized");
	if (write_dynsym(a, a->libc_sym_old, 1) || redirect(a, a->rt_hook, libc, 1) < 0) {
		release_all(a);
		return cp_error("attach: cannot restore the GOT of process %d (%s)", (int)a->pid, comm);
	}
	unpose(a);
	test_kill("end-slots");
	a->u = cp_unwinder__new();
	for (size_t i = 0; i < a->nmods; i++)
		cp_unwinder__add_module(a->u, a->mods[i].file, a->mods[i].bias);
	if (a->nplan) {
		err = end_sleds(a, comm);
		if (err)
			return err;
	}
	/*
	 * No thread fits when each is in a system call inside our runtime
	 * (a thread's first hook opening its events, say): they leave it
	 * once let go for a moment, the hooks being the C library's again.
	 * Tried again every 10 ms, for as long as a phase may take.
	 */
	for (int tries = 0; !(t = pick_caller(a)); tries++) {
		if (tries * 10 >= STOP_MS) {
			release_all(a);
			return cp_error("attach: no thread of process %d (%s) could write the profile "
					"within %.1f s (each was in a system call of callprof's runtime)",
					(int)a->pid, comm, STOP_MS / 1000.0);
		}
		err = let_run_and_regrab(a, 10);
		if (err)
			return err > 0 ? 1 : -1;
	}
	/* The profile is written while the others run: what it needs may be theirs. */
	for (size_t i = 0; i < a->nth; i++)
		if (&a->th[i] != t)
			release(a, &a->th[i]);
	held_for("end: slots (every thread)", &held);
	err = call(a, t, "stop", a->rt_stop, NULL, 0, NULL, 0, &ret, -1);
	release_all(a);
	if (err == -ESRCH)
		return ended_or_execd(a);
	if (err)
		return cp_error("attach: process %d (%s) did not return from writing its profile",
				(int)a->pid, comm);
	*wrote = (int64_t)ret > 0;
	if ((int64_t)ret < 0 && (int64_t)ret > -4096 && (int64_t)ret != -ESRCH) {
		*wrote = 1; /* it ran code, and could not write it: cmd_attach says why */
		a->write_errno = (int)-(int64_t)ret;
	}
	/* The threads the stop gave a tree: their seeds were taken by it, not by a hook. */
	for (uint32_t i = 0; i < a->nseeded; i++) {
		uint32_t taken = 0;

		if (!mem_read(a, a->area + AREA_THREADS + (uint64_t)i * SEED_THREAD + 12, &taken,
			      sizeof(taken)) && taken == SEED_STILL)
			a->still++;
	}
	a->stopped = 1;
	test_kill("stopped");
	/*
	 * The rings and trees go while no thread can be in our code: the
	 * kernel would go on sampling into the rings.  A thread that still is
	 * (or may be) keeps them there, harmless but for the cost.
	 */
	for (int attempt = 0; attempt < 5 && !a->released && !a->stubs_left; attempt++) {
		struct timespec ms = { 0, 20000000 };
		struct thread *inside;

		if (attempt)
			nanosleep(&ms, NULL); /* a thread in a hook leaves it soon */
		clock_gettime(CLOCK_MONOTONIC, &held);
		if (hold_for_call(a, &t, &inside))
			break;
		if (t && call(a, t, "release", a->rt_release, NULL, 0, NULL, 0, &ret, -1) == 0 && !ret)
			a->released = 1;
		if (getenv("CALLPROF_ATTACH_DEBUG"))
			fprintf(stderr, "callprof: attach debug: release %s%s%d\n",
				a->released ? "done" : "not done: ",
				a->released ? "" : inside ? "inside the runtime: thread " : "no caller ",
				a->released ? 0 : inside ? (int)inside->tid : 0);
		release_all(a);
		held_for("end: release (every thread)", &held);
	}
	if (a->stubs_left)
		cp_warning("attach: process %d (%s): a thread stayed inside callprof's code at the "
			   "end, so return addresses into its stubs may remain: its memory stays "
			   "mapped (they keep working), and so do the kernel's sampling rings",
			   (int)a->pid, comm);
	else if (!a->released)
		cp_warning("attach: process %d (%s): a thread stayed inside callprof's code, so the "
			   "kernel's sampling rings of its threads stay (a small cost per context switch "
			   "until each thread ends), and so does the memory of callprof's runtime",
			   (int)a->pid, comm);
	if (a->released && !a->stubs_left && a->tls_base && a->handle && a->dlclose_fn)
		unload(a);
	cp_unwinder__free(a->u);
	a->u = NULL;
	return 0;
}

/*
 * The window did not open (callprof was asked to stop, or the switch
 * failed): the session the load started ends and writes nothing, so that
 * the copy is inert (its fork handlers, for one, do nothing then).
 */
static void abandon(struct attach *a, const char *comm)
{
	int wrote = 0;

	if (a->execd)
		return;
	ending = 1;
	/* Another tracer that refused the switch-on was named then: not again. */
	quiet = 1;
	switch_off(a, comm, &wrote);
	quiet = 0;
}

/* ---- C. the window ---- */

/* Wait for the end of the window: 0 at its end or on Ctrl-C, 1 when the process ended. */
static int window(struct attach *a, int pidfd, double duration)
{
	struct timespec t0;

	test_kill("window");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop_signal) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		struct timespec ts, *tp = NULL;
		int n;

		if (duration > 0) {
			double left = duration - seconds_since(&t0);

			if (left <= 0)
				break;
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			tp = &ts;
		}
		n = ppoll(pidfd >= 0 ? &p : NULL, pidfd >= 0, tp, &wait_mask);
		if (n > 0 && (p.revents & (POLLIN | POLLHUP)))
			return 1;
		if (n < 0 && errno != EINTR)
			break;
		if (pidfd < 0 && kill(a->pid, 0) && errno == ESRCH)
			return 1;
	}
	return 0;
}

/*
 * What the process (or its watcher) said of its profile in the status
 * file: "write ERRNO" (it could not write it), "empty 0" (no instrumented
 * code ran), "watch ERRNO" and "rights 0" (its watcher could not write
 * it, or would not); into res.  Whether anything was said.
 */
static int read_status(struct attach *a, struct cp_attach_result *res)
{
	char buf[512], what[16];
	ssize_t n = a->status_fd >= 0 ? pread(a->status_fd, buf, sizeof(buf) - 1, 0) : -1;
	int said = 0;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (char *p = buf; *p;) {
		char *nl = strchr(p, '\n');
		int e = 0;

		if (!nl)
			break;
		*nl = '\0';
		if (sscanf(p, "%15s %d", what, &e) == 2) {
			said = 1;
			if (!strcmp(what, "write"))
				res->write_errno = e ? e : EIO;
			else if (!strcmp(what, "watch"))
				res->watch_errno = e ? e : EIO;
			else if (!strcmp(what, "rights"))
				res->rights = 1;
			else if (!strcmp(what, "empty"))
				res->empty = 1;
		}
		p = nl + 1;
	}
	return said;
}

/*
 * The process ended in the window: wait (at most 10 s) for its profile,
 * written at its exit or by its watcher, or for word that there is none.
 */
static void wait_profile(struct attach *a, const char *out, const struct timespec *since,
			 struct cp_attach_result *res)
{
	phase(10000);
	do {
		struct stat st;

		if (read_status(a, res))
			return;
		if (!stat(out, &st) && (st.st_mtim.tv_sec > since->tv_sec ||
					(st.st_mtim.tv_sec == since->tv_sec &&
					 st.st_mtim.tv_nsec >= since->tv_nsec))) {
			res->ran = 1;
			return;
		}
	} while (!nap(50000000));
}

/*
 * The runtime's warnings, each as "callprof: process PID: ...".  A failed
 * write of the profile (write_failed) is said once, by cmd_attach's error.
 */
static void print_log(struct attach *a, int write_failed)
{
	FILE *f = a->log_fd >= 0 ? fdopen(dup(a->log_fd), "r") : NULL;
	char line[1024];

	while (f && fgets(line, sizeof(line), f)) {
		const char *msg = strncmp(line, "callprof: ", 10) ? line : line + 10;

		if (write_failed && !strncmp(msg, "cannot write profile '", 22))
			continue;
		/* The target wrote it: its names and paths may hold anything. */
		fprintf(stderr, "callprof: process %d: ", (int)a->pid);
		cp_fput_visible(stderr, msg, strcspn(msg, "\n"));
		fputc('\n', stderr);
	}
	if (f)
		fclose(f);
}

/*
 * Is the process stopped by a signal (Ctrl-Z, SIGSTOP)?  Our calls would
 * run its threads, and letting them go would end the stop.
 */
static int process_stopped(pid_t pid)
{
	char buf[512];
	const char *p = cp_proc_stat(pid, buf, sizeof(buf));

	return p && p[0] == ' ' && p[1] == 'T';
}

int cp_attach__run(const struct cp_attach_target *tgt, const struct cp_attach_opts *o,
		   struct cp_attach_result *res)
{
	struct attach a = { .pid = tgt->pid, .comm = tgt->comm, .out = o->out, .mem = -1,
			    .copy_fd = -1, .log_fd = -1, .status_fd = -1, .no_sleds = tgt->no_sleds,
			    .sleds_wanted = tgt->sled_modules && !tgt->no_sleds };
	static const int handled[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD };
	struct sigaction sa, old_sa[ARRAY_SIZE(handled)];
	sigset_t block, old_mask;
	struct timespec t_on, t_real;
	struct module *libc;
	char path[96];
	int pidfd = -1, ret = -1, ended;

	memset(res, 0, sizeof(*res));
	if (process_stopped(a.pid))
		return cp_error("attach: process %d (%s) is stopped (job control): continue it "
				"(kill -CONT %d) and attach again", (int)a.pid, tgt->comm, (int)a.pid);
	snprintf(path, sizeof(path), "%s/mem", cp_attach__proc(a.pid, a.proc, sizeof(a.proc)));
	a.mem = open(path, O_RDWR | O_CLOEXEC);
	if (a.mem < 0)
		return cp_error("attach: cannot open %s: %s", path, strerror(errno));
	if (read_modules(&a) || !(libc = libc_module(&a))) {
		refused_early(&a);
		return cp_error("attach: process %d (%s) has no C library mapped", (int)a.pid, tgt->comm);
	}
	a.libc_bias = libc->bias;
	a.libc_hook = module_symbol(libc, "__cyg_profile_func_enter", &a.libc_sym[0]);
	if (module_symbol(libc, "__cyg_profile_func_exit", &a.libc_sym[1]) != a.libc_hook)
		a.libc_sym[1] = 0;
	a.dlopen_fn = module_symbol(libc, "dlopen", NULL);
	a.dlerror_fn = module_symbol(libc, "dlerror", NULL);
	a.dlclose_fn = module_symbol(libc, "dlclose", NULL);
	if (!a.libc_hook || !a.dlopen_fn) {
		int r = cp_error("attach: the C library of process %d (%s), %s, has no %s", (int)a.pid,
				 tgt->comm, libc->path,
				 a.libc_hook ? "dlopen (glibc 2.34 or later is needed)"
					     : "__cyg_profile_func_enter");

		refused_early(&a);
		return r;
	}
	for (int k = 0; k < 2; k++) {
		if (a.libc_sym[k])
			a.libc_sym[k] += 8; /* st_value of the Elf64_Sym */
		a.libc_sym_old[k] = a.libc_hook;
	}
	{
		const char *other = foreign_hooks(&a);

		if (other) {
			int r = refuse_foreign(a.pid, tgt->comm, other);

			refused_early(&a);
			return r;
		}
	}

	/* The process's end ends the window (polled without it: kernels before 5.3). */
	pidfd = (int)syscall(SYS_pidfd_open, a.pid, 0);
	/*
	 * Ctrl-C and the like end the attach at any phase, cleanly (see
	 * nap); SIGCHLD wakes our waits for a thread's stop.  All are blocked
	 * but while we wait.
	 */
	sigemptyset(&block);
	for (size_t i = 0; i < ARRAY_SIZE(handled); i++)
		sigaddset(&block, handled[i]);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	wait_mask = old_mask;
	for (size_t i = 0; i < ARRAY_SIZE(handled); i++)
		sigdelset(&wait_mask, handled[i]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a signal ends ppoll at once */
	for (size_t i = 0; i < ARRAY_SIZE(handled); i++)
		sigaction(handled[i], &sa, &old_sa[i]);
	stop_signal = 0;
	gave_up = GAVE_NOT;
	ending = 0;
	traced_pid = a.pid;

	if (load_runtime(&a, o, tgt->comm))
		goto out;
	if (stop_signal) {
		cp_error("attach: process %d (%s): callprof was asked to stop (SIG%s) before the "
			 "window opened: nothing recorded", (int)a.pid, tgt->comm,
			 sigabbrev_np(stop_signal));
		abandon(&a, tgt->comm);
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &t_real);
	if (switch_on(&a, tgt->comm, res)) {
		abandon(&a, tgt->comm);
		goto out;
	}
	res->open = a.open_seeded;
	res->sleds = a.sleds_written;
	res->sleds_left = a.sleds_crossing + a.sleds_changed;
	for (size_t i = 0; i < a.nplan; i++)
		res->sleds_left += a.plan[i].keep;
	res->moved = a.sleds_moved;
	clock_gettime(CLOCK_MONOTONIC, &t_on);
	ended = window(&a, pidfd, o->duration);
	res->window = seconds_since(&t_on);
	ending = 1;
	if (!ended) {
		int r = switch_off(&a, tgt->comm, &res->ran);

		if (r < 0)
			goto out;
		ended = r == 1;
		if (r == 2) {
			/* Its profile was written before the exec, if at all: nothing to wait for. */
			char exe[96];
			ssize_t n;

			snprintf(exe, sizeof(exe), "%s/exe", cp_attach__proc(a.pid, a.proc, sizeof(a.proc)));
			n = readlink(exe, res->execd, sizeof(res->execd) - 1);
			res->execd[n > 0 ? n : 0] = '\0';
			if (!res->execd[0])
				snprintf(res->execd, sizeof(res->execd), "another program");
			res->ran = 1;
		}
		res->still = a.still;
		res->given = a.slots_given;
	}
	if (ended) {
		res->ended = 1;
		wait_profile(&a, o->out, &t_real, res);
	} else {
		read_status(&a, res);
		if (a.write_errno)
			res->write_errno = a.write_errno;
	}
	ret = 0;
out:
	print_log(&a, res->write_errno);
	release_all(&a);
	cp_unwinder__free(a.u);
	remove_copy(&a);
	/* A Ctrl-C that came after our last wait was for this attach: taken. */
	{
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&block, NULL, &zero) > 0)
			;
	}
	for (size_t i = 0; i < ARRAY_SIZE(handled); i++)
		sigaction(handled[i], &old_sa[i], NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (pidfd >= 0)
		close(pidfd);
	close(a.mem);
	free_modules(&a);
	free_maps(&a);
	free(a.th);
	free(a.isaved);
	free(a.plan);
	free(a.copy);
	free(a.log);
	free(a.status);
	return ret;
}
