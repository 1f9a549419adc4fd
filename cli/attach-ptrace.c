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
 *     the first stays loaded, inert.
 *  B. switch: every thread stopped.  A thread stopped on its way into or
 *     out of the hook is moved past the C library's empty function (or left
 *     before the GOT jump, which will then reach our hook); one stopped in
 *     an instrumented function's own code is stepped to its next call or
 *     return, so that whether that call is open is known.  Each thread's
 *     stack is unwound, and the instrumented calls open on it are written
 *     to the runtime's seed area.  Then every module's slots and the C
 *     library's own .dynsym entries of the two hooks (so that a module
 *     loaded or a slot bound lazily later binds to our hooks too) are
 *     rewritten, all through /proc/PID/mem (which writes RELRO pages as
 *     well), and the threads go on.
 *  C. the window: the process runs untraced.  It may end: its runtime
 *     writes the profile at exit, or its watcher if it was killed.
 *  D. unload: every thread stopped, the slots and .dynsym entries restored
 *     (also those of modules loaded during the window), the threads go on
 *     but one, which calls callprof_attach_stop() to write the profile.
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
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "cli/attach.h"
#include "symbolize/elffile.h"
#include "symbolize/unwind.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

/* The seed area, as runtime/internal.h lays it out (struct cp_attach_area). */
#define ATTACH_MAGIC 0x3248434154545043ull
#define AREA_T0 24	 /* t0_tsc, then t0_mono_ns */
#define AREA_NTHREADS 40 /* uint32_t */
#define AREA_THREADS 48	 /* struct {u32 tid, nframes, first, taken; u64 run0, delay0}[max_threads] */
#define SEED_THREAD 32	 /* its size */
#define SEED_STILL 2	 /* taken: the stop made the thread's tree (enum cp_seed_taken) */
#define CALL_TIMEOUT_MS 10000
#define STEP_LIMIT 4096	     /* single steps to the next call or return */
#define STACK_COPY (512 << 10) /* bytes of a thread's stack copied for unwinding */
#define MAX_FRAMES 512
#define MAX_SLOTS 64

struct mapping {
	uint64_t start, end, pgoff;
	char perms[5];
	unsigned long inode;
	char *path; /* NULL for anonymous memory */
};

struct module {
	char *path;
	uint64_t bias, lo, hi;	    /* load bias; the range its mappings cover */
	uint64_t slots[2][MAX_SLOTS]; /* GOT slots of enter [0] and exit [1], process addresses */
	int nslots[2];
	struct fnsym { uint64_t lo, hi; } *fns; /* function symbols, sorted, process addresses */
	size_t nfns;
	int runtime; /* our copy of the runtime: never redirected */
};

struct thread {
	pid_t tid;
	int gone;
	int last_stop;	     /* the signal of its last stop, 0 for an event stop */
	int sigs[8];	     /* signals that came while ours: delivered when let go */
	int nsigs;
	int dirty;	     /* regs must be written back */
	struct user_regs_struct regs;
};

struct attach {
	pid_t pid;
	int mem;	      /* /proc/PID/mem, read-write */
	struct mapping *maps;
	size_t nmaps;
	struct module *mods;
	size_t nmods;
	struct thread *th;
	size_t nth, th_alloc;
	uint64_t libc_hook;	 /* the C library's __cyg_profile_func_enter (= exit) */
	uint64_t libc_sym[2];	 /* process addresses of its .dynsym entries' st_value */
	uint64_t libc_sym_old[2];
	uint64_t libc_bias;
	uint64_t dlopen_fn, dlerror_fn;
	uint64_t rt_hook[2];	 /* our copy's enter and exit */
	uint64_t rt_start, rt_stop, rt_release;
	uint64_t rt_text_lo, rt_text_hi; /* our copy's code */
	int released;		 /* its rings and trees were given back */
	struct cp_unwinder *u;	 /* at the end: whose frames are in our code */
	int stopped;		 /* the runtime wrote the profile and stopped */
	/* TLS borrowed from an earlier copy (see find_donor) */
	int64_t tls_base;	 /* its block's offset from the thread pointer; 0: none */
	uint64_t tls_size;
	struct cp_elf_tls_reloc tls[16];
	int ntls;
	uint64_t area;		 /* the seed area in the process */
	char *dir;		 /* our temporary directory */
	char *copy;		 /* the runtime copy in it */
	char *log;		 /* the runtime's warnings */
	unsigned open_seeded;
	uint32_t nseeded;	 /* entries of the seed area's thread table */
	unsigned still;		 /* seeded threads that ran no hook in the window */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
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
	for (size_t i = 0; i < a->nmaps; i++)
		free(a->maps[i].path);
	FREE_AND_NULL(a->maps);
	a->nmaps = 0;
}

static int read_maps(struct attach *a)
{
	char path[64], line[PATH_MAX + 128];
	size_t alloc = 0;
	FILE *f;

	free_maps(a);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)a->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct mapping m = { 0 };
		int off = 0;
		char *p;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %lu %n", &m.start, &m.end,
			   m.perms, &m.pgoff, &m.inode, &off) < 5)
			continue;
		p = line + off;
		p[strcspn(p, "\n")] = '\0';
		if (*p == '/')
			m.path = xstrdup(p);
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

static void free_modules(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++) {
		free(a->mods[i].path);
		free(a->mods[i].fns);
	}
	FREE_AND_NULL(a->mods);
	a->nmods = 0;
}

static void add_fn(const char *name, uint64_t value, uint64_t size, void *arg)
{
	struct module *m = arg;
	static size_t alloc;

	(void)name;
	if (!m->nfns)
		alloc = 0;
	ALLOC_GROW(m->fns, m->nfns + 1, alloc);
	m->fns[m->nfns].lo = value + m->bias;
	m->fns[m->nfns].hi = value + m->bias + (size ? size : 1);
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
		for (j = 0; j < a->nmods; j++)
			if (!strcmp(a->mods[j].path, mp->path))
				break;
		if (j < a->nmods) {
			if (mp->end > a->mods[j].hi)
				a->mods[j].hi = mp->end;
			continue;
		}
		if (cp_elf_info__read(mp->path, &info) ||
		    cp_load_bias(info.segs, info.nsegs, mp->start, mp->pgoff, &m.bias)) {
			cp_elf_info__release(&info);
			continue;
		}
		cp_elf_info__release(&info);
		e = cp_elf__open(mp->path, NULL);
		if (!e)
			continue;
		m.path = xstrdup(mp->path);
		m.lo = mp->start;
		m.hi = mp->end;
		for (int k = 0; k < 2; k++) {
			uint64_t offs[MAX_SLOTS];
			int n = cp_elf__symbol_slots(e, k ? "__cyg_profile_func_exit"
							  : "__cyg_profile_func_enter", offs, MAX_SLOTS);

			for (int s = 0; s < n; s++)
				m.slots[k][m.nslots[k]++] = offs[s] + m.bias;
		}
		cp_elf__for_each_function(e, add_fn, &m);
		qsort(m.fns, m.nfns, sizeof(*m.fns), cmp_fn);
		cp_elf__close(e);
		m.runtime = a->copy && !strcmp(m.path, a->copy);
		{
			static size_t alloc;

			if (!a->nmods)
				alloc = 0;
			ALLOC_GROW(a->mods, a->nmods + 1, alloc);
		}
		a->mods[a->nmods++] = m;
	}
	return 0;
}

static struct module *module_of(struct attach *a, uint64_t addr)
{
	for (size_t i = 0; i < a->nmods; i++)
		if (addr >= a->mods[i].lo && addr < a->mods[i].hi)
			return &a->mods[i];
	return NULL;
}

/* The function symbol holding addr: 0 and its range, or -1. */
static int fn_of(struct attach *a, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	struct module *m = module_of(a, addr);
	size_t l = 0, h;

	if (!m || !m->nfns)
		return -1;
	h = m->nfns;
	while (h - l > 1) {
		size_t mid = (l + h) / 2;

		if (m->fns[mid].lo <= addr)
			l = mid;
		else
			h = mid;
	}
	if (m->fns[l].lo > addr || addr >= m->fns[l].hi)
		return -1;
	*lo = m->fns[l].lo;
	*hi = m->fns[l].hi;
	return 0;
}

/* A symbol of the module at path (as mapped), in the process; 0 if none. */
static uint64_t module_symbol(struct attach *a, const char *path, const char *name, uint64_t *entry)
{
	struct cp_elf *e;
	uint64_t v = 0, ent = 0;

	for (size_t i = 0; i < a->nmods; i++) {
		if (strcmp(a->mods[i].path, path))
			continue;
		e = cp_elf__open(path, NULL);
		if (!e)
			return 0;
		if (cp_elf__dynsym(e, name, &v, &ent)) {
			cp_elf__close(e);
			return 0;
		}
		cp_elf__close(e);
		if (entry)
			*entry = ent + a->mods[i].bias;
		return v + a->mods[i].bias;
	}
	return 0;
}

static const char *libc_path(struct attach *a)
{
	for (size_t i = 0; i < a->nmods; i++) {
		const char *b = strrchr(a->mods[i].path, '/');

		if (b && !strncmp(b + 1, "libc.so.", 8))
			return a->mods[i].path;
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

/* Does the function [lo, hi) call the enter hook (is it instrumented)?  Cached. */
static int instrumented(struct attach *a, uint64_t lo, uint64_t hi)
{
	static struct { uint64_t lo; int yes; } cache[4096];
	unsigned slot = (unsigned)((lo >> 4) % 4096);
	unsigned char *code;
	size_t len = hi - lo;
	int yes = 0;

	if (cache[slot].lo == lo)
		return cache[slot].yes;
	if (len > (1 << 20))
		len = 1 << 20;
	code = xmalloc(len);
	if (!mem_read(a, lo, code, len)) {
		for (size_t i = 0; i + 5 <= len && !yes; i++) {
			int32_t disp;

			if (code[i] == 0xe8) {
				memcpy(&disp, code + i + 1, 4);
				yes = stub_kind(a, lo + i + 5 + (int64_t)disp) == 0;
			} else if (code[i] == 0xff && i + 6 <= len && code[i + 1] == 0x15) {
				memcpy(&disp, code + i + 2, 4);
				yes = slot_kind(a, lo + i + 6 + (int64_t)disp) == 0;
			}
		}
	}
	free(code);
	cache[slot].lo = lo;
	cache[slot].yes = yes;
	return yes;
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
 * Wait for t's stop.  A signal that stops it first is kept for later.
 * 0 stopped, -1 gone.
 */
static int wait_stop(struct thread *t)
{
	for (;;) {
		int st;
		pid_t r = waitpid(t->tid, &st, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = 1;
			return -1;
		}
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			t->last_stop = 0;
			return 0;
		}
		/* A signal-delivery stop: the caller says whose signal it is. */
		t->last_stop = WSTOPSIG(st);
		return 0;
	}
}

/* A signal of the program's that came while the thread was ours: delivered when let go. */
static void keep_signal(struct thread *t, int sig)
{
	for (int i = 0; i < t->nsigs; i++)
		if (t->sigs[i] == sig)
			return; /* as the kernel does: one of each standard signal pends */
	if (sig > 0 && t->nsigs < (int)ARRAY_SIZE(t->sigs))
		t->sigs[t->nsigs++] = sig;
}

/* Is any signal pending for tid or its process (that could have caused an EINTR)? */
static int signals_pending(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	int pending = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long mask;

		if ((sscanf(line, "SigPnd: %llx", &mask) == 1 || sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
		    mask)
			pending = 1;
	}
	fclose(f);
	return pending;
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
}

/* Seize and stop tid (new to us); 0, or -1 if it is gone. */
static int grab(struct attach *a, pid_t tid)
{
	struct thread *t;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return errno == ESRCH ? -1 : -errno;
	ALLOC_GROW(a->th, a->nth + 1, a->th_alloc);
	t = &a->th[a->nth++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || wait_stop(t) || get_regs(t)) {
		t->gone = 1;
		return -1;
	}
	keep_signal(t, t->last_stop);
	keep_syscall(a, t);
	return 0;
}

/* Stop every thread of the process, including those created meanwhile. */
static int grab_all(struct attach *a)
{
	char path[64];
	int added;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)a->pid);
	do {
		DIR *d = opendir(path);
		struct dirent *e;

		if (!d)
			return -ESRCH;
		added = 0;
		while ((e = readdir(d))) {
			char *end;
			long v = strtol(e->d_name, &end, 10);
			pid_t tid = *end ? 0 : (pid_t)v;
			int err;

			if (tid <= 0 || thread_index(a, tid) >= 0)
				continue;
			err = grab(a, tid);
			if (err < -1) {
				closedir(d);
				return err;
			}
			added = 1;
		}
		closedir(d);
	} while (added);
	return 0;
}

/*
 * Let t go on: its registers back if changed, the signals that came while
 * it was ours delivered.  The one it is stopped for goes with the detach,
 * with its siginfo; any other is sent again (its sender then reads as the
 * process itself, SI_TKILL).
 */
static void release(struct attach *a, struct thread *t)
{
	int first = 0;

	if (t->gone)
		return;
	if (t->dirty)
		ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs);
	if (t->nsigs && t->last_stop == t->sigs[0])
		first = t->sigs[0];
	for (int i = first ? 1 : 0; i < t->nsigs; i++)
		syscall(SYS_tgkill, a->pid, t->tid, t->sigs[i]);
	ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)first);
	t->gone = 1;
}

static void release_all(struct attach *a)
{
	for (size_t i = 0; i < a->nth; i++)
		release(a, &a->th[i]);
	a->nth = 0;
}

/*
 * Make stopped thread t call fn(args) and return its result in *ret.  It
 * runs on its own stack, below the red zone; data[len] (a string, the
 * settings) is copied there first and its address is passed where an
 * argument is ~0.  The call returns to address 0: the fault is ours, not
 * delivered.  Its registers are restored whatever happens.
 */
static int call(struct attach *a, struct thread *t, uint64_t fn, const uint64_t *args, int nargs,
		const void *data, size_t len, uint64_t *ret)
{
	struct user_regs_struct saved = t->regs, r = t->regs;
	uint64_t sp = (saved.rsp - 1024) & ~(uint64_t)15, zero = 0, daddr = 0;
	unsigned long long *argregs[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	struct timespec start, now;
	int err = -1, slow = 0;

	if (data) {
		sp = (sp - len) & ~(uint64_t)15;
		daddr = sp;
		if (mem_write(a, daddr, data, len))
			return -1;
	}
	sp -= 8;
	if (mem_write(a, sp, &zero, 8))
		return -1;
	for (int i = 0; i < nargs && i < 6; i++)
		*argregs[i] = args[i] == ~0ull ? daddr : args[i];
	r.rip = fn;
	r.rsp = sp;
	r.rax = 0;
	r.orig_rax = ~0ull; /* no system call to restart */
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) || ptrace(PTRACE_CONT, t->tid, NULL, NULL))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int st;
		pid_t w = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || (w > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
			t->gone = 1;
			return -ESRCH;
		}
		if (w == 0) {
			struct timespec ms = { 0, 200000 };

			/*
			 * No giving up: the call returns to address 0, which only
			 * we may catch.  Say why we wait, once.
			 */
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!slow && (now.tv_sec - start.tv_sec) * 1000 +
						 (now.tv_nsec - start.tv_nsec) / 1000000 > CALL_TIMEOUT_MS) {
				cp_warning("attach: thread %d of process %d has not returned from our call "
					   "for %d s; waiting on (it may wait for a lock)", (int)t->tid,
					   (int)a->pid, CALL_TIMEOUT_MS / 1000);
				slow = 1;
			}
			nanosleep(&ms, NULL);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, t->tid, NULL, NULL);
			continue;
		}
		if (WSTOPSIG(st) == SIGSEGV || WSTOPSIG(st) == SIGBUS || WSTOPSIG(st) == SIGILL ||
		    WSTOPSIG(st) == SIGFPE) {
			struct user_regs_struct now_r;
			siginfo_t si;

			if (!ptrace(PTRACE_GETREGS, t->tid, NULL, &now_r) && now_r.rip == 0 &&
			    WSTOPSIG(st) == SIGSEGV) {
				*ret = now_r.rax;
				t->last_stop = SIGSEGV; /* ours: not delivered */
				err = 0;
				break;
			}
			/*
			 * A fault in the call itself (a bug of ours): resuming would
			 * fault again for ever.  The thread gets its registers back
			 * and goes on, which may leave a lock the call held.
			 */
			if (!ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) && si.si_code > 0) {
				t->last_stop = WSTOPSIG(st);
				err = -EFAULT;
				break;
			}
		}
		/* A signal of the program's own: kept for when we let the thread go. */
		keep_signal(t, WSTOPSIG(st));
		ptrace(PTRACE_CONT, t->tid, NULL, NULL);
	}
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &saved))
		return -1;
	t->regs = saved;
	return err;
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
	uint64_t phdr_off, memsz, align, zero = 0;
	int n = e ? cp_elf__tls_relocs(e, a->tls, (int)ARRAY_SIZE(a->tls)) : -1;
	int ok = e && n > 0 && !cp_elf__tls_segment(e, &phdr_off, &memsz, &align) &&
		 memsz <= a->tls_size;

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
	return 0;
}

static int make_copy(struct attach *a, const char *runtime)
{
	char tmpl[] = "/tmp/callprof-attach.XXXXXX";
	const char *base = strrchr(runtime, '/');
	struct cp_elf_info info = { 0 };
	struct cp_elf *e;
	uint64_t v = 0, off = 0;
	int in, outfd, found = 0;
	char buf[65536];
	ssize_t n;

	if (!mkdtemp(tmpl))
		return cp_error("attach: cannot make a directory in /tmp: %s", strerror(errno));
	a->dir = xstrdup(tmpl);
	/* "libcallprof-cpu.so" -> "callprof-attach-cpu.so": never taken for record's runtime */
	base = base ? base + 1 : runtime;
	if (!strncmp(base, "libcallprof", 11))
		base += 11;
	a->copy = xstrfmt("%s/callprof-attach%s%s", a->dir, *base == '-' ? "" : "-", base);
	a->log = xstrfmt("%s/log", a->dir);
	in = open(runtime, O_RDONLY | O_CLOEXEC);
	outfd = open(a->copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0500);
	if (in < 0 || outfd < 0) {
		if (in >= 0)
			close(in);
		if (outfd >= 0)
			close(outfd);
		return cp_error("attach: cannot copy %s: %s", runtime, strerror(errno));
	}
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
	    (a->tls_base && borrow_tls(a, runtime, outfd))) {
		close(outfd);
		return cp_error("attach: cannot prepare a copy of %s", runtime);
	}
	close(outfd);
	close(open(a->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	return 0;
}

static void remove_copy(struct attach *a)
{
	if (a->copy)
		unlink(a->copy);
	if (a->log)
		unlink(a->log);
	if (a->dir)
		rmdir(a->dir);
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
static char *env_block(const struct cp_attach_opts *o, const char *log, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *const *e = o->env; e && *e; e++) {
		strbuf_addstr(&sb, *e);
		strbuf_addch(&sb, '\0');
	}
	strbuf_addf(&sb, "CALLPROF_ATTACH_LOG=%s", log);
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

		if (!m->path || m->pgoff || !strstr(m->path, "/callprof-attach") ||
		    mem_read(a, m->start, mem, sizeof(mem)))
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
	uint64_t ret = 0, args[2];
	char *block;
	size_t len;
	int err, best = -1;

	/* One thread: the best candidate among those in a waiting system call. */
	if (grab_all(a))
		return cp_error("attach: cannot stop the threads of process %d (%s): %s", (int)a->pid,
				comm, strerror(errno));
	for (size_t i = 0; i < a->nth; i++) {
		struct thread *c = &a->th[i];
		int score;

		if (c->gone)
			continue;
		score = -4 * (c->nsigs > 0) + ((long)c->regs.orig_rax >= 0) + 2 * is_waiting_call((long)c->regs.orig_rax) +
			(c->tid == a->pid);
		if (best < 0 || score > best) {
			best = score;
			t = c;
		}
	}
	/* The others go on while it loads: a lock it needs may be theirs. */
	for (size_t i = 0; i < a->nth; i++)
		if (&a->th[i] != t)
			release(a, &a->th[i]);
	if (!t) {
		release_all(a);
		return cp_error("attach: process %d (%s) has no thread to load the runtime with",
				(int)a->pid, comm);
	}
	/* A copy loaded before lends us its TLS: static TLS is scarce (see borrow_tls). */
	{
		int64_t base = find_donor(a, o->runtime, &a->tls_size);

		if (base < 0)
			a->tls_base = base;
	}
	if (make_copy(a, o->runtime)) {
		release(a, t);
		a->nth = 0;
		return -1;
	}
	args[0] = ~0ull;
	args[1] = 2 /* RTLD_NOW */;
	err = call(a, t, a->dlopen_fn, args, 2, a->copy, strlen(a->copy) + 1, &ret);
	if (!err && !ret) {
		char *why = NULL;

		if (a->dlerror_fn && !call(a, t, a->dlerror_fn, NULL, 0, NULL, 0, &ret))
			why = read_string(a, ret);
		release(a, t);
		a->nth = 0;
		cp_error("attach: process %d (%s) could not load %s: %s", (int)a->pid, comm, a->copy,
			 why ? why : "dlopen failed");
		free(why);
		return -1;
	}
	if (err) {
		release(a, t);
		a->nth = 0;
		return cp_error("attach: process %d (%s) %s while loading the runtime", (int)a->pid, comm,
				err == -ESRCH ? "ended" : err == -EFAULT ? "faulted in callprof's call "
				"(its state may be inconsistent)" : "could not be made to call dlopen");
	}
	if (read_modules(a) ||
	    !(a->rt_start = module_symbol(a, a->copy, "callprof_attach_start", NULL)) ||
	    !(a->rt_stop = module_symbol(a, a->copy, "callprof_attach_stop", NULL)) ||
	    !(a->rt_release = module_symbol(a, a->copy, "callprof_attach_release", NULL)) ||
	    !(a->rt_hook[0] = module_symbol(a, a->copy, "__cyg_profile_func_enter", NULL)) ||
	    !(a->rt_hook[1] = module_symbol(a, a->copy, "__cyg_profile_func_exit", NULL))) {
		release(a, t);
		a->nth = 0;
		return cp_error("attach: process %d (%s) loaded %s, but its symbols cannot be found",
				(int)a->pid, comm, a->copy);
	}
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

		if (m->path && !strcmp(m->path, a->copy) && m->perms[2] == 'x') {
			if (!a->rt_text_lo || m->start < a->rt_text_lo)
				a->rt_text_lo = m->start;
			if (m->end > a->rt_text_hi)
				a->rt_text_hi = m->end;
		}
	}
	block = env_block(o, a->log, &len);
	args[0] = ~0ull;
	args[1] = len;
	err = call(a, t, a->rt_start, args, 2, block, len, &ret);
	free(block);
	release(a, t);
	a->nth = 0;
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


static void emulate_ret(struct attach *a, struct thread *t)
{
	t->regs.rip = mem_u64(a, t->regs.rsp);
	t->regs.rsp += 8;
	t->dirty = 1;
}

/*
 * Where t's innermost instrumented call stands.  *ur gets the registers to
 * unwind from (t's own, or its caller's when t is at a function's first
 * instruction: a hook's PLT stub, or a function it was just stepped into,
 * which is not open), and the result says whether the function at ur's pc
 * is an open call: 1 yes, 0 no (its enter hook is still to come, or its
 * exit hook has run), -1 for "as any frame" (open when instrumented).  t
 * may be moved: past the C library's empty hook, or stepped to its next
 * call or return.
 */
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

static int settle(struct attach *a, struct thread *t, struct user_regs_struct *ur)
{
	uint64_t lo, hi;
	int k;

	*ur = t->regs;
	if (t->regs.rip == a->libc_hook) {
		/* In the C library's empty hook: finish it here. */
		k = call_kind(a, mem_u64(a, t->regs.rsp));
		emulate_ret(a, t);
		*ur = t->regs;
		return k == 0 ? 1 : k == 1 ? 0 : -1;
	}
	k = stub_kind(a, t->regs.rip);
	if (k >= 0) {
		/* Before the GOT jump, which will reach our hook: an exit's caller is open. */
		pop_virtual(a, &t->regs, ur);
		return k == 1;
	}
	if (fn_of(a, t->regs.rip, &lo, &hi) || !instrumented(a, lo, hi))
		return -1;
	if (in_syscall(a, t))
		return 1; /* a system call of its own: in its body (not to be stepped) */
	/*
	 * In an instrumented function's own code: before its enter hook, after
	 * its exit hook, or between.  Code before the enter and after the exit
	 * is straight: step to the next call or return, which tells.
	 */
	for (int i = 0; i < STEP_LIMIT; i++) {
		uint64_t pc0 = t->regs.rip, sp0 = t->regs.rsp, top0 = mem_u64(a, sp0);
		unsigned char insn[2];

		if (!mem_read(a, pc0, insn, 2) && insn[0] == 0x0f && insn[1] == 0x05)
			break; /* a system call of its own: in its body */
		if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) || wait_stop(t) || get_regs(t))
			return -1;
		t->dirty = 0; /* its registers are its own again */
		*ur = t->regs;
		if (t->last_stop != SIGTRAP)
			keep_signal(t, t->last_stop); /* not our step's trap: the program's */
		if (t->regs.rsp == sp0 - 8) {
			uint64_t ra = mem_u64(a, t->regs.rsp);

			if (ra > pc0 && ra <= pc0 + 16) {
				/* It called something: its caller is at the return address. */
				k = stub_kind(a, t->regs.rip);
				if (t->regs.rip == a->libc_hook) {
					k = call_kind(a, ra);
					emulate_ret(a, t);
					*ur = t->regs;
					return k == 0; /* after the enter: open; the exit: closed */
				}
				pop_virtual(a, &t->regs, ur);
				if (k >= 0)
					return k == 1; /* its hook, through the stub: ours next */
				return 1; /* another function: it is in its body */
			}
		}
		if (t->regs.rsp == sp0 + 8 && t->regs.rip == top0)
			return 1; /* it returned (closed): its caller is in its body */
	}
	return 1;
}

struct seed_frame {
	uint64_t fn, site, sp;
};

/*
 * The instrumented calls open on t, outermost first, into f[] (at most
 * max); returns how many.
 */
static int open_calls(struct attach *a, struct cp_unwinder *u, struct thread *t, struct seed_frame *f,
		      int max)
{
	uint64_t pcs[MAX_FRAMES], lo, hi, sps[MAX_FRAMES];
	struct user_regs_struct ur;
	int inner = settle(a, t, &ur), n, complete = 0, out = 0;
	const struct mapping *stk = mapping_of(a, ur.rsp);
	struct cp_unwind_regs r;
	unsigned char *copy;
	size_t len;

	if (!stk)
		return 0;
	len = stk->end - ur.rsp;
	if (len > STACK_COPY)
		len = STACK_COPY;
	copy = xmalloc(len);
	if (mem_read(a, ur.rsp, copy, len)) {
		free(copy);
		return 0;
	}
	perf_regs(&ur, &r);
	r.stack = copy;
	r.stack_size = len;
	n = cp_unwinder__unwind(u, (uint32_t)t->tid, &r, pcs, MAX_FRAMES, &complete);
	/*
	 * Where each return address lies on the stack, searched upwards: the
	 * hooks' frame of the call it returns from is below it (cp_frame.sp).
	 */
	{
		size_t at = 0;

		for (int i = 0; i < n; i++) {
			sps[i] = 0;
			if (i == 0)
				continue;
			for (; at + 8 <= len; at += 8) {
				uint64_t v;

				memcpy(&v, copy + at, 8);
				if (v == pcs[i]) {
					sps[i] = ur.rsp + at;
					at += 8;
					break;
				}
			}
		}
	}
	free(copy);
	for (int i = n - 1; i >= 0 && out < max; i--) {
		uint64_t pc = i ? pcs[i] - 1 : pcs[0];
		int open;

		if (fn_of(a, pc, &lo, &hi) || !instrumented(a, lo, hi))
			continue;
		open = i == 0 && inner >= 0 ? inner : 1;
		if (!open)
			continue;
		f[out].fn = lo;
		f[out].site = i + 1 < n ? pcs[i + 1] : 0;
		f[out].sp = i + 1 < n && sps[i + 1] ? sps[i + 1] - 24 : ur.rsp - 64;
		out++;
	}
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

	for (size_t i = 0; i < a->nmods; i++) {
		struct module *m = &a->mods[i];

		if (m->runtime)
			continue;
		for (int k = 0; k < 2; k++)
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
				struct module *owner;

				if (m->runtime || v == a->libc_hook || (v >= m->lo && v < m->hi))
					continue;
				owner = module_of(a, v);
				return owner ? owner->path : "an unknown module";
			}
	}
	return NULL;
}

/* The hooks are path's: say whose they are and what to do. */
static int refuse_foreign(pid_t pid, const char *comm, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "callprof-attach", 15))
		return cp_error("attach: process %d (%s) is being recorded by another callprof attach "
				"(or by one that was killed: it then records until it ends)", (int)pid, comm);
	if (!strncmp(base, "libcallprof", 11))
		return cp_error("attach: process %d (%s) is already recorded by callprof record "
				"(callprof dump %d takes a snapshot)", (int)pid, comm, (int)pid);
	return cp_error("attach: process %d (%s) calls another profiler's hooks, in %s", (int)pid, comm,
			path);
}

static int write_dynsym(struct attach *a, const uint64_t *value)
{
	for (int k = 0; k < 2; k++) {
		uint64_t st = value[k] - a->libc_bias;

		if (a->libc_sym[k] && mem_write(a, a->libc_sym[k], &st, 8))
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

	clock_gettime(CLOCK_MONOTONIC, &held);
	err = grab_all(a);
	if (err) {
		release_all(a);
		free(frames);
		return cp_error("attach: cannot stop the threads of process %d (%s): %s", (int)a->pid,
				comm, strerror(-err));
	}
	if (read_modules(a)) {
		release_all(a);
		free(frames);
		return cp_error("attach: cannot read the modules of process %d (%s)", (int)a->pid, comm);
	}
	other = foreign_hooks(a);
	if (other) {
		release_all(a);
		free(frames);
		return refuse_foreign(a->pid, comm, other);
	}
	u = cp_unwinder__new();
	for (size_t i = 0; i < a->nmods; i++)
		cp_unwinder__add_module(u, a->mods[i].path, a->mods[i].bias);
	qsort(a->th, a->nth, sizeof(*a->th), cmp_tid);
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
	cp_unwinder__free(u);
	free(frames);
	res->threads = 0;
	for (size_t i = 0; i < a->nth; i++) {
		res->threads += !a->th[i].gone;
		if (!a->th[i].gone)
			zero_tls(a, &a->th[i]);
	}
	if (write_dynsym(a, a->rt_hook) || redirect(a, (uint64_t[]){ a->libc_hook, a->libc_hook },
						     a->rt_hook, 0) < 0) {
		write_dynsym(a, a->libc_sym_old);
		redirect(a, a->rt_hook, (uint64_t[]){ a->libc_hook, a->libc_hook }, 1);
		release_all(a);
		return cp_error("attach: cannot write the GOT of process %d (%s)", (int)a->pid, comm);
	}
	clock_gettime(CLOCK_MONOTONIC, &mono);
	t0[0] = __rdtsc();
	t0[1] = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	mem_write(a, a->area + AREA_T0, t0, sizeof(t0));
	mem_write(a, a->area + AREA_NTHREADS, &nseeded, sizeof(nseeded));
	a->nseeded = nseeded;
	release_all(a);
	res->held_on = seconds_since(&held);
	return 0;
}

/* ---- D. unload ---- */

/*
 * Might t be inside our runtime: at an instruction of its code, or with a
 * return address into it on the top of its stack (a hook waiting for a
 * lock, a thread's exit folding its tree)?  Then it is stepped out when it
 * is at an instruction of ours and not in a system call; else 1.
 */
static int in_runtime(struct attach *a, struct thread *t)
{
	const struct mapping *stk;
	struct cp_unwind_regs r;
	uint64_t pcs[MAX_FRAMES];
	unsigned char *copy;
	size_t len;
	int n, complete = 0, inside = 0;

	for (int i = 0; i < (1 << 20) && t->regs.rip >= a->rt_text_lo && t->regs.rip < a->rt_text_hi;
	     i++) {
		if (in_syscall(a, t) || ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) || wait_stop(t) ||
		    get_regs(t))
			return 1;
		if (t->last_stop != SIGTRAP)
			keep_signal(t, t->last_stop);
		t->dirty = 0; /* the registers are the thread's own again */
	}
	if (t->regs.rip >= a->rt_text_lo && t->regs.rip < a->rt_text_hi)
		return 1;
	/* Its callers: a frame of ours further up (waiting for a lock, say). */
	stk = mapping_of(a, t->regs.rsp);
	if (!stk || !a->u)
		return 1;
	len = stk->end - t->regs.rsp;
	if (len > STACK_COPY)
		len = STACK_COPY;
	copy = xmalloc(len);
	if (mem_read(a, t->regs.rsp, copy, len)) {
		free(copy);
		return 1;
	}
	perf_regs(&t->regs, &r);
	r.stack = copy;
	r.stack_size = len;
	n = cp_unwinder__unwind(a->u, (uint32_t)t->tid, &r, pcs, MAX_FRAMES, &complete);
	free(copy);
	for (int i = 1; i < n; i++)
		if (pcs[i] - 1 >= a->rt_text_lo && pcs[i] - 1 < a->rt_text_hi)
			inside = 1;
	return inside || n <= 0;
}

/* The thread to run a call of ours on, when every thread is stopped; NULL if none fits. */
static struct thread *pick_caller(struct attach *a)
{
	struct thread *t = NULL;
	int best = -1;

	for (size_t i = 0; i < a->nth; i++) {
		struct thread *c = &a->th[i];
		int score;

		if (c->gone || in_runtime(a, c))
			continue;
		score = ((long)c->regs.orig_rax >= 0) + 2 * is_waiting_call((long)c->regs.orig_rax) +
			(c->tid == a->pid);
		if (score > best) {
			best = score;
			t = c;
		}
	}
	return t;
}

/*
 * Restore the slots, write the profile, give back the rings and trees.
 * 0 (*wrote set), 1 when the process ended meanwhile, -1 on error.
 */
static int switch_off(struct attach *a, const char *comm, int *wrote)
{
	uint64_t libc[2] = { a->libc_hook, a->libc_hook }, ret = 0;
	struct thread *t;
	int err;

	err = grab_all(a);
	if (err == -ESRCH) {
		release_all(a);
		return 1; /* ended */
	}
	if (read_modules(a) || write_dynsym(a, a->libc_sym_old) || redirect(a, a->rt_hook, libc, 1) < 0) {
		release_all(a);
		return cp_error("attach: cannot restore the GOT of process %d (%s)", (int)a->pid, comm);
	}
	a->u = cp_unwinder__new();
	for (size_t i = 0; i < a->nmods; i++)
		cp_unwinder__add_module(a->u, a->mods[i].path, a->mods[i].bias);
	/* The profile is written while the others run: what it needs may be theirs. */
	t = pick_caller(a);
	for (size_t i = 0; i < a->nth; i++)
		if (&a->th[i] != t)
			release(a, &a->th[i]);
	if (!t) {
		a->nth = 0;
		return cp_error("attach: no thread of process %d (%s) can write the profile now",
				(int)a->pid, comm);
	}
	err = call(a, t, a->rt_stop, NULL, 0, NULL, 0, &ret);
	release(a, t);
	a->nth = 0;
	if (err == -ESRCH)
		return 1;
	if (err)
		return cp_error("attach: process %d (%s) did not return from writing its profile",
				(int)a->pid, comm);
	*wrote = (int64_t)ret > 0;
	/* The threads the stop gave a tree: their seeds were taken by it, not by a hook. */
	for (uint32_t i = 0; i < a->nseeded; i++) {
		uint32_t taken = 0;

		if (!mem_read(a, a->area + AREA_THREADS + (uint64_t)i * SEED_THREAD + 12, &taken,
			      sizeof(taken)) && taken == SEED_STILL)
			a->still++;
	}
	a->stopped = 1;
	/*
	 * The rings and trees go while no thread can be in our code: the
	 * kernel would go on sampling into the rings.  A thread that still is
	 * (or may be) keeps them there, harmless but for the cost.
	 */
	for (int attempt = 0; attempt < 5 && !a->released; attempt++) {
		struct timespec ms = { 0, 20000000 };
		struct thread *inside = NULL;

		if (attempt)
			nanosleep(&ms, NULL); /* a thread in a hook leaves it soon */
		if (grab_all(a)) {
			release_all(a);
			break;
		}
		for (size_t i = 0; i < a->nth && !inside; i++)
			if (!a->th[i].gone && in_runtime(a, &a->th[i]))
				inside = &a->th[i];
		t = inside ? NULL : pick_caller(a);
		if (t && call(a, t, a->rt_release, NULL, 0, NULL, 0, &ret) == 0 && !ret)
			a->released = 1;
		if (getenv("CALLPROF_ATTACH_DEBUG"))
			fprintf(stderr, "callprof: attach debug: release %s%s%d\n",
				a->released ? "done" : "not done: ",
				a->released ? "" : inside ? "inside the runtime: thread " : "no caller ",
				a->released ? 0 : inside ? (int)inside->tid : 0);
		release_all(a);
	}
	if (!a->released)
		cp_warning("attach: process %d (%s): a thread stayed inside callprof's code, so the "
			   "kernel's sampling rings of its threads stay (a small cost per context switch "
			   "until each thread ends)", (int)a->pid, comm);
	cp_unwinder__free(a->u);
	a->u = NULL;
	return 0;
}

/* ---- C. the window ---- */

/* Wait for the end of the window: 0 at its end or on Ctrl-C, 1 when the process ended. */
static int window(struct attach *a, int pidfd, double duration, const sigset_t *open_mask)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!interrupted) {
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
		n = ppoll(pidfd >= 0 ? &p : NULL, pidfd >= 0, tp, open_mask);
		if (n > 0 && (p.revents & (POLLIN | POLLHUP)))
			return 1;
		if (n < 0 && errno != EINTR)
			break;
		if (pidfd < 0 && kill(a->pid, 0) && errno == ESRCH)
			return 1;
	}
	return 0;
}

/* The process ended in the window: wait (a while) for its profile, written at exit or by its watcher. */
static int wait_profile(const char *out, const struct timespec *since)
{
	for (int i = 0; i < 200; i++) {
		struct stat st;
		struct timespec ms = { 0, 50000000 };

		if (!stat(out, &st) && (st.st_mtim.tv_sec > since->tv_sec ||
					(st.st_mtim.tv_sec == since->tv_sec &&
					 st.st_mtim.tv_nsec >= since->tv_nsec)))
			return 1;
		nanosleep(&ms, NULL);
	}
	return 0;
}

static void print_log(struct attach *a)
{
	FILE *f = a->log ? fopen(a->log, "re") : NULL;
	char line[1024];

	while (f && fgets(line, sizeof(line), f)) {
		const char *msg = strncmp(line, "callprof: ", 10) ? line : line + 10;

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
	struct attach a = { .pid = tgt->pid, .mem = -1 };
	struct sigaction sa, old_int, old_term, old_hup;
	sigset_t block, old_mask;
	struct timespec t_on, t_real;
	const char *libc;
	char path[64];
	int pidfd = -1, ret = -1, ended;

	memset(res, 0, sizeof(*res));
	if (process_stopped(a.pid))
		return cp_error("attach: process %d (%s) is stopped (job control): continue it "
				"(kill -CONT %d) and attach again", (int)a.pid, tgt->comm, (int)a.pid);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)a.pid);
	a.mem = open(path, O_RDWR | O_CLOEXEC);
	if (a.mem < 0)
		return cp_error("attach: cannot open %s: %s", path, strerror(errno));
	if (read_modules(&a) || !(libc = libc_path(&a))) {
		close(a.mem);
		return cp_error("attach: process %d (%s) has no C library mapped", (int)a.pid, tgt->comm);
	}
	for (size_t i = 0; i < a.nmods; i++)
		if (!strcmp(a.mods[i].path, libc))
			a.libc_bias = a.mods[i].bias;
	a.libc_hook = module_symbol(&a, libc, "__cyg_profile_func_enter", &a.libc_sym[0]);
	if (module_symbol(&a, libc, "__cyg_profile_func_exit", &a.libc_sym[1]) != a.libc_hook)
		a.libc_sym[1] = 0;
	a.dlopen_fn = module_symbol(&a, libc, "dlopen", NULL);
	a.dlerror_fn = module_symbol(&a, libc, "dlerror", NULL);
	if (!a.libc_hook || !a.dlopen_fn) {
		close(a.mem);
		return cp_error("attach: the C library of process %d (%s), %s, has no %s", (int)a.pid,
				tgt->comm, libc, a.libc_hook ? "dlopen (glibc 2.34 or later is needed)"
							     : "__cyg_profile_func_enter");
	}
	for (int k = 0; k < 2; k++) {
		if (a.libc_sym[k])
			a.libc_sym[k] += 8; /* st_value of the Elf64_Sym */
		a.libc_sym_old[k] = a.libc_hook;
	}
	{
		const char *other = foreign_hooks(&a);

		if (other) {
			close(a.mem);
			return refuse_foreign(a.pid, tgt->comm, other);
		}
	}

	/* The process's end ends the window (polled without it: kernels before 5.3). */
	pidfd = (int)syscall(SYS_pidfd_open, a.pid, 0);
	/*
	 * Ctrl-C and the like end the window, and only the window: one that
	 * comes while the threads are ours waits, and ends the window as
	 * soon as it opens.
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	if (load_runtime(&a, o, tgt->comm))
		goto out;
	clock_gettime(CLOCK_REALTIME, &t_real);
	if (switch_on(&a, tgt->comm, res))
		goto out;
	res->open = a.open_seeded;
	clock_gettime(CLOCK_MONOTONIC, &t_on);
	{
		sigset_t open_mask = old_mask;

		sigdelset(&open_mask, SIGINT);
		sigdelset(&open_mask, SIGTERM);
		sigdelset(&open_mask, SIGHUP);
		ended = window(&a, pidfd, o->duration, &open_mask);
	}
	res->window = seconds_since(&t_on);
	if (!ended) {
		int r = switch_off(&a, tgt->comm, &res->wrote);

		if (r < 0)
			goto out;
		ended = r == 1;
		res->still = a.still;
	}
	if (ended) {
		res->ended = 1;
		res->wrote = wait_profile(o->out, &t_real);
	}
	ret = 0;
out:
	print_log(&a);
	release_all(&a);
	cp_unwinder__free(a.u);
	remove_copy(&a);
	/* A Ctrl-C that came while the threads were ours was for the window: taken. */
	{
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&block, NULL, &zero) > 0)
			;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (pidfd >= 0)
		close(pidfd);
	close(a.mem);
	free_modules(&a);
	free_maps(&a);
	free(a.th);
	free(a.dir);
	free(a.copy);
	free(a.log);
	return ret;
}
