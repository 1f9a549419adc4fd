/*
 * interpose.c - calls of the C library that callprof must see: the
 * longjmp family, which abandons frames whose exit hooks never run.
 *
 * Only in libcallprof*.so (preloaded ahead of libc); a static link cannot
 * interpose libc and keeps the older behaviour (docs/limitations.md).
 *
 * At longjmp(env) the target stack pointer is read from the jmp_buf.
 * glibc stores it mangled with the per-process pointer guard (at %fs:0x30
 * on x86-64: rotate left 17 after xor); undoing that is a rotate and an
 * xor.  Every shadow frame whose caller's stack pointer lies below the
 * target belongs to a function being abandoned: it is closed now, with the
 * time up to now, and counted.  The frame that called setjmp has its
 * caller-side stack pointer at (or above) the saved one, so it stays, and
 * calls made after the jump nest under it, their true caller.
 *
 * The exec family replaces the image: its profile is written first (as
 * PATH.execN, see cp_session__before_exec), and the new image inherits
 * CALLPROF_EXEC_COUNT so that its own execs are numbered on.  Under
 * `callprof attach` these, and _exit, _Exit and abort, are reached through
 * the GOT slots the tool points at this copy during the window: the image
 * writes PATH itself (its window ends with the exec) and the new image
 * gets the environment the program passed.
 *
 * _exit, _Exit and abort end the process without running destructors:
 * the profile is written first (cp_session__finish; never in a vfork
 * child).  dlclose refreshes the module log before the module goes (so it
 * is in the log even if it was loaded since the last refresh) and after (so
 * its addresses are retired, see modules.c).  dlopen is not interposed: the
 * loader finds the caller's RUNPATH from the return address, which an
 * interposer would change; a module loaded and never closed is found at
 * the dump.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/internal.h"

#if defined(__x86_64__) && defined(__GLIBC__)

#define JB_RSP 6 /* glibc's index of the saved stack pointer in __jmpbuf */

typedef void (*longjmp_fn)(struct __jmp_buf_tag *, int);

static longjmp_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static execve_fn real_execve, real_execvpe;
static fexecve_fn real_fexecve;

typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

static execveat_fn real_execveat;
static spawn_fn real_spawn, real_spawnp;

typedef void (*exit_fn)(int);
typedef int (*dlclose_fn)(void *);

static exit_fn real__exit, real__Exit;
static void (*real_abort)(void);
static dlclose_fn real_dlclose;

/*
 * Resolved at start-up: dlsym is not safe to call from a signal handler.
 * Stored atomically: start-up may run late, with other threads in CP_NEXT.
 */
#define RESOLVE(slot, name) \
	__atomic_store_n(&(slot), (__typeof__(slot))dlsym(RTLD_NEXT, name), __ATOMIC_RELAXED)

void cp_interpose__init(void)
{
	RESOLVE(real_execve, "execve");
	RESOLVE(real_execvpe, "execvpe");
	RESOLVE(real_fexecve, "fexecve");
	RESOLVE(real_execveat, "execveat");
	RESOLVE(real_spawn, "posix_spawn");
	RESOLVE(real_spawnp, "posix_spawnp");
	RESOLVE(real_longjmp, "longjmp");
	RESOLVE(real__longjmp, "_longjmp");
	RESOLVE(real_siglongjmp, "siglongjmp");
	RESOLVE(real_longjmp_chk, "__longjmp_chk");
	RESOLVE(real__exit, "_exit");
	RESOLVE(real__Exit, "_Exit");
	RESOLVE(real_abort, "abort");
	RESOLVE(real_dlclose, "dlclose");
}

/* Modules' names, gathered under dl_iterate_phdr's lock and looked in after it. */
#define NEXT_MODULES 256

struct loaded {
	const char *name[NEXT_MODULES];
	unsigned n;
};

static int gather_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;

	/* The program's handle is the global scope, which holds a preloaded runtime. */
	if (info->dlpi_name && info->dlpi_name[0] && l->n < NEXT_MODULES)
		l->name[l->n++] = info->dlpi_name;
	return 0;
}

void *cp_next_loaded(const char *name)
{
	dlclose_fn close = real_dlclose ? real_dlclose : (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
	struct loaded l = { .n = 0 };
	Dl_info self, at;
	int saved_errno = errno;
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!dladdr((void *)cp_next_loaded, &self)) {
		errno = saved_errno;
		return NULL;
	}
	if (p && (!dladdr(p, &at) || at.dli_fbase == self.dli_fbase))
		p = NULL;
	if (p || !close) {
		errno = saved_errno;
		return p;
	}
	dl_iterate_phdr(gather_module, &l);
	for (unsigned i = 0; i < l.n && !p; i++) {
		void *h = dlopen(l.name[i], RTLD_LAZY | RTLD_NOLOAD);

		if (!h)
			continue;
		p = dlsym(h, name); /* the module and its dependencies */
		if (p && (!dladdr(p, &at) || at.dli_fbase == self.dli_fbase))
			p = NULL;
		close(h);
	}
	errno = saved_errno;
	return p;
}

static uintptr_t demangle(uintptr_t v)
{
	uintptr_t guard;

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	v = (v >> 17) | (v << (64 - 17));
	return v ^ guard;
}

/*
 * Control goes to the frame whose stack pointer is target (a longjmp, a
 * catch): close every frame called below it.  Also out of a signal handler
 * that interrupted a hook: that hook is abandoned too, so busy is not
 * checked; its half-done work is published in a safe order and what it
 * left underived is derived again first (internal.h, cp_thread__repair).
 * A handler that was recording into the side tree gives the thread back
 * first.
 */
static CP_NOINSTR void abandon_below(uintptr_t target)
{
	struct cp_thread *t = cp_self;
	int saved_errno = errno;

	/*
	 * Under callprof attach a thread's first event in the window may be
	 * this jump or catch (it was in the middle of a throw at the switch):
	 * its seeds go on first, as a hook would push them, so that the frames
	 * the jump leaves are closed now, not left open for the calls after it
	 * to nest under (t0522: three of them, before the next throw's catch).
	 */
	if (!t && cp_attach.area && cp_session.state == CP_STATE_ON && cp_gate__live())
		t = cp_thread__setup();

	if (t && cp_session.state == CP_STATE_ON && cp_gate__live()) {
		uint64_t now = cp_hook_mode == CP_MODE_TIMING ? cp_ticks() : 0;

		if (t->owner) {
			int side_was = t->busy;
			struct cp_frame *sig = t->cct.stack->f + 1; /* the outermost handler's */

			t->busy = 1;
			if (side_was == 1)
				cp_thread__repair(t); /* a handler's hook was abandoned */
			if (t->cct.top >= sig && target <= sig->sp + 16) {
				/*
				 * A jump inside the handler (below its trampoline's
				 * frame): the hook it interrupted is not abandoned,
				 * the thread stays the side tree's.
				 */
				cp_thread__unwind_to(t, target, now);
				t->busy = cp_hooks__after_unwind(t, side_was, target);
				goto out;
			}
			cp_thread__unwind_to(t, UINTPTR_MAX, now);
			t->busy = 0;
			t = t->owner;
			cp_self = t;
		}
		int was = t->busy;

		t->busy = 1;
		if (was == 1)
			cp_thread__repair(t); /* the interrupted hook is abandoned (internal.h) */
		cp_thread__unwind_to(t, target, now);
		t->busy = cp_hooks__after_unwind(t, was, target);
	}
out:
	cp_libcalls__abandon_below(target);
	errno = saved_errno;
}

static __attribute__((noreturn)) CP_NOINSTR void jump(longjmp_fn *real, const char *name,
						       struct __jmp_buf_tag *env, int val)
{
	longjmp_fn next = CP_NEXT(*real, name);

	abandon_below(demangle((uintptr_t)env->__jmpbuf[JB_RSP]));
	next(env, val);
	__builtin_unreachable();
}

#define CP_INTERPOSE __attribute__((visibility("default"), noreturn, no_instrument_function))

/* What _FORTIFY_SOURCE builds call instead of longjmp (no public prototype). */
void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));

CP_INTERPOSE void longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(&real_longjmp, "longjmp", env, val);
}

CP_INTERPOSE void _longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(&real__longjmp, "_longjmp", env, val);
}

CP_INTERPOSE void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(&real_siglongjmp, "siglongjmp", env, val);
}

CP_INTERPOSE void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
	jump(&real_longjmp_chk, "__longjmp_chk", env, val);
}

/* ---- C++ exceptions ---- */

/*
 * gcc runs the exit hooks of the frames an exception unwinds (as cleanups);
 * clang does not.  Every catch handler starts by calling __cxa_begin_catch
 * from the frame of the function that caught, so at that moment every
 * shadow frame called below that function's stack pointer has been
 * unwound: close them, exactly as for a longjmp to that frame.  Under gcc
 * those frames are already gone and nothing happens.
 */
typedef void *(*begin_catch_fn)(void *);

static begin_catch_fn real_begin_catch;

void *__cxa_begin_catch(void *exc);

__attribute__((visibility("default"), no_instrument_function, noinline)) void *
__cxa_begin_catch(void *exc)
{
	begin_catch_fn next = CP_NEXT(real_begin_catch, "__cxa_begin_catch");

	/* The catcher's stack pointer: above our return address and saved frame pointer. */
	uintptr_t catcher = (uintptr_t)__builtin_frame_address(0) + 16;

	abandon_below(catcher);
	/*
	 * The throw gave every sled's return address back (libcalls.c): the
	 * calls still open, the catcher's and its callers', are hooked again,
	 * so their returns are seen (sleds.c).
	 */
	if (cp_session.state == CP_STATE_ON && cp_gate__live()) {
		int saved_errno = errno;

		cp_sleds__rehook(cp_self, catcher);
		errno = saved_errno;
	}
	return next(exc);
}

/* ---- unwinders that only look: the real return addresses while they run ---- */

typedef int (*trace_fn)(void *ctx, void *arg);
typedef int (*unwind_backtrace_fn)(trace_fn trace, void *arg);
typedef int (*backtrace_fn)(void **buf, int size);
typedef void (*pthread_exit_fn)(void *);

typedef uintptr_t (*region_start_fn)(void *ctx);

static unwind_backtrace_fn real_unwind_backtrace;
static backtrace_fn real_backtrace;
static pthread_exit_fn real_pthread_exit;
static region_start_fn real_region_start;

struct skip_first {
	trace_fn trace;		/* the caller's */
	void *arg;
	region_start_fn start;	/* the unwinder's _Unwind_GetRegionStart, or NULL */
	uintptr_t own;		/* where our _Unwind_Backtrace starts */
	int skip;		/* our own frame is yet to come */
};

/*
 * Our own frame, the one the program never called, is not shown.  It is
 * the first only when the next _Unwind_Backtrace is the unwinder's: an
 * interposer in between (as ASan's is for backtrace) comes first, and
 * the program's run alone shows its frame.  So ours is the frame in the
 * function that starts where ours does; without _Unwind_GetRegionStart,
 * the first.
 */
static CP_NOINSTR int skip_first(void *ctx, void *arg)
{
	struct skip_first *s = arg;

	if (s->skip && (!s->start || s->start(ctx) == s->own)) {
		s->skip = 0;
		return 0; /* _URC_NO_REASON */
	}
	return s->trace(ctx, s->arg);
}

int _Unwind_Backtrace(trace_fn trace, void *arg);
int backtrace(void **buf, int size);
/* Our _Unwind_Backtrace itself, not the first in the lookup scope (the program may have one). */
extern __typeof__(_Unwind_Backtrace) unwind_backtrace_self
	__attribute__((alias("_Unwind_Backtrace"), visibility("hidden")));

/* The walk starts at its caller: this frame, which the program never called, is skipped. */
__attribute__((visibility("default"), no_instrument_function, noinline)) int
_Unwind_Backtrace(trace_fn trace, void *arg)
{
	unwind_backtrace_fn next = CP_NEXT(real_unwind_backtrace, "_Unwind_Backtrace");
	struct cp_thread *t = cp_self;
	struct skip_first s = { trace, arg, CP_NEXT(real_region_start, "_Unwind_GetRegionStart"),
				(uintptr_t)unwind_backtrace_self, 1 };
	int ret;

	if (!next)
		return 5; /* _URC_END_OF_STACK */
	cp_sleds__give_back(t, 1);
	ret = next(skip_first, &s);
	cp_sleds__rehook(t, 0);
	return ret;
}

/*
 * The return into this function, in a walk TMP[0..N) that the next
 * backtrace made: the entry right before CALLER (this frame's own return
 * address).  Not always TMP[0]: another interposer may sit between this
 * one and the C library's (ASan's backtrace interceptor does), and its
 * frame comes first; the plain run shows it, so it stays.  -1 when the
 * walk has no frame of ours (CALLER first, or nothing); 0, the old guess,
 * when CALLER is not in it (truncated, or the unwinder stopped there).
 */
static CP_NOINSTR int own_return(void *const *tmp, int n, const void *caller)
{
	for (int i = 0; i < n; i++)
		if (tmp[i] == caller)
			return i - 1;
	return n > 0 ? 0 : -1;
}

/* glibc's backtrace calls libgcc_s's _Unwind_Backtrace through a pointer: it is interposed itself. */
__attribute__((visibility("default"), no_instrument_function, noinline)) int
backtrace(void **buf, int size)
{
	backtrace_fn next = CP_NEXT(real_backtrace, "backtrace");
	struct cp_thread *t = cp_self;
	/* Our own return slot (frame pointers: right above the saved one). */
	void *volatile *ret_slot = (void *volatile *)__builtin_frame_address(0) + 1;
	void *small[66], **tmp = small;
	size_t bytes = ((size_t)(size > 0 ? size : 0) + 2) * sizeof(void *);
	int n, own;

	if (!next)
		return 0;
	if (size <= 0 || !cp_stubs.rx)
		return next(buf, size);
	if ((size_t)size + 2 > sizeof(small) / sizeof(small[0])) {
		tmp = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tmp == MAP_FAILED)
			return next(buf, size);
	}
	cp_sleds__give_back(t, 1);
	/*
	 * Two more than asked: the return into this function, and room to
	 * find the caller after it.  Read after the give-back: a sledded
	 * caller that tail-called here left its own caller's slot, a stub.
	 */
	n = next(tmp, size < INT_MAX - 2 ? size + 2 : INT_MAX);
	own = own_return(tmp, n, *ret_slot);
	cp_sleds__rehook(t, 0);
	if (own >= 0) {
		memmove(tmp + own, tmp + own + 1, (size_t)(n - own - 1) * sizeof(void *));
		n--;
	}
	if (n > size)
		n = size;
	memcpy(buf, tmp, (size_t)(n > 0 ? n : 0) * sizeof(void *));
	if (tmp != small)
		munmap(tmp, bytes);
	return n;
}

/* pthread_exit unwinds the thread (forced unwind, reached through a pointer). */
__attribute__((visibility("default"), no_instrument_function, noreturn)) void
pthread_exit(void *retval)
{
	pthread_exit_fn next = CP_NEXT(real_pthread_exit, "pthread_exit");

	cp_sleds__give_back(cp_self, 0);
	next(retval);
	__builtin_unreachable();
}

/*
 * dlopen: the new modules' sleds are patched when it returns.  The loader
 * finds the caller by the return address, for its RUNPATH, RPATH and
 * $ORIGIN: a call from here would be the runtime's.  So the entry (asm
 * below) asks cp_sleds__dlopen_how first: a name whose lookup cannot
 * depend on the caller (a path without '$', or a bare name from a module
 * with neither RPATH nor RUNPATH) goes through cp_sleds__dlopen_wrapped,
 * which patches after; any other goes straight to the C library's, its
 * return address untouched, and its modules are patched at the next
 * dlopen or dlclose (docs/limitations.md).
 */
struct dlopen_how {
	void *fn;  /* the C library's dlopen */
	long wrap; /* 1: through cp_sleds__dlopen_wrapped */
};
typedef void *(*dlopen_fn)(const char *, int);
static dlopen_fn real_dlopen;

CP_HIDDEN struct dlopen_how cp_sleds__dlopen_how(const char *name, uintptr_t caller);
CP_HIDDEN void *cp_sleds__dlopen_wrapped(const char *name, int flags);

static int caller_has_paths(uintptr_t caller)
{
	Dl_info info;
	struct link_map *lm = NULL;

	if (!dladdr1((void *)caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_ld)
		return 1;
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return 1;
	return 0;
}

CP_NOINSTR struct dlopen_how cp_sleds__dlopen_how(const char *name, uintptr_t caller)
{
	struct dlopen_how how = { NULL, 0 };
	int saved_errno = errno;

	how.fn = (void *)CP_NEXT(real_dlopen, "dlopen");
	if (name && cp_sleds__on() && cp_session.state == CP_STATE_ON && !strchr(name, '$') &&
	    (strchr(name, '/') || !caller_has_paths(caller)))
		how.wrap = 1;
	errno = saved_errno;
	return how;
}

CP_NOINSTR void *cp_sleds__dlopen_wrapped(const char *name, int flags)
{
	void *h = real_dlopen(name, flags);

	if (h)
		cp_sleds__patch_new();
	return h;
}

__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	".p2align 4\n"
	"dlopen:\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	movq 24(%rsp), %rsi\n" /* the caller's return address */
	"	call cp_sleds__dlopen_how\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rdx, %rdx\n"
	"	jnz cp_sleds__dlopen_wrapped\n"
	"	jmp *%rax\n"
	".size dlopen, . - dlopen\n");

/* ---- ends without destructors, and unloading ---- */

#define CP_INTERPOSE_CALL __attribute__((visibility("default"), no_instrument_function))

CP_INTERPOSE void _exit(int status)
{
	exit_fn next = CP_NEXT(real__exit, "_exit");

	cp_session__finish(1);
	next(status);
	__builtin_unreachable();
}

CP_INTERPOSE void _Exit(int status)
{
	exit_fn next = CP_NEXT(real__Exit, "_Exit");

	cp_session__finish(1);
	next(status);
	__builtin_unreachable();
}

CP_INTERPOSE void abort(void)
{
	void (*next)(void) = CP_NEXT(real_abort, "abort");

	cp_session__finish(1);
	next();
	__builtin_unreachable();
}

CP_INTERPOSE_CALL int dlclose(void *handle)
{
	int ret;

	dlclose_fn next = CP_NEXT(real_dlclose, "dlclose");

	if (cp_session.state != CP_STATE_ON)
		return next(handle);
	cp_modules__lock();
	cp_modules__refresh(0);
	ret = next(handle);
	cp_modules__refresh(0);
	cp_modules__unlock();
	cp_sleds__forget_gone();
	cp_sleds__patch_new(); /* modules a dlopen from here did not patch */
	return ret;
}

/*
 * syscall(2): the calls the runtime must see whichever way the program
 * makes them (guard.c: memory; seccomp.c: filters).  The rest, and the
 * runtime's own, go to the C library's as they are.  Six arguments are
 * passed on whatever the call takes, as the C library's syscall does.
 */
typedef long (*syscall_fn)(long, ...);

static syscall_fn real_syscall;

long cp_interpose__real_syscall(long nr, const long *a)
{
	syscall_fn next = CP_NEXT(real_syscall, "syscall");

	return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

CP_INTERPOSE_CALL long syscall(long nr, ...)
{
	long a[6], ret;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!cp_guard__from_runtime(__builtin_return_address(0)) &&
	    (cp_guard__syscall(nr, a, &ret) || cp_seccomp__syscall(nr, a, &ret)))
		return ret;
	return cp_interpose__real_syscall(nr, a);
}

/* Locking all memory would fault in the whole arena: trim it first (arena.c). */
typedef int (*mlockall_fn)(int);

CP_INTERPOSE_CALL int mlockall(int flags)
{
	static mlockall_fn real_mlockall;

	mlockall_fn next = CP_NEXT(real_mlockall, "mlockall");

	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if ((flags & MCL_CURRENT) && cp_sys__may(CP_SYS_MEMORY))
		cp_arena__trim();
	return next(flags);
}

/*
 * A thread's name is read from /proc when the profile is written, but a
 * watcher writing for a killed program cannot ask /proc: keep names given
 * with pthread_setname_np (the thread's name at its first call is taken
 * at set-up, see cp_thread__setup).
 */
typedef int (*setname_fn)(pthread_t, const char *);

CP_INTERPOSE_CALL int pthread_setname_np(pthread_t thread, const char *name)
{
	static setname_fn real_setname;
	int ret;

	setname_fn next = CP_NEXT(real_setname, "pthread_setname_np");

	if (!next)
		return ENOSYS;
	ret = next(thread, name);
	if (ret || cp_session.state != CP_STATE_ON)
		return ret;
	for (struct cp_thread *t = __atomic_load_n(&cp_session.threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		/* A recycled state may be taken by a new thread meanwhile: atomic self. */
		if (__atomic_load_n(&t->self, __ATOMIC_RELAXED) == thread &&
		    !(t->flags & (CP_THREAD_EXITED | CP_THREAD_AGGREGATE)) &&
		    __atomic_load_n(&t->nthreads, __ATOMIC_ACQUIRE)) {
			size_t len = strnlen(name, sizeof(t->name) - 1);

			memcpy(t->name, name, len);
			t->name[len] = '\0';
			break;
		}
	}
	return ret;
}

/* ---- exec and spawn ---- */

#define EXEC_COUNT "CALLPROF_EXEC_COUNT="
#define SECCOMP_VAR "CALLPROF_SECCOMP="

/*
 * The environment a new program gets.  A program may give its child an
 * environment of its own (execve, execle, posix_spawn with an envp, a
 * clean environment built from scratch): the runtime's variables, as this
 * process was started with them (env.c: LD_PRELOAD, CALLPROF_*), are put
 * back where envp lacks them, so that the child is profiled as a child
 * started with environ would be.  A variable the program set to a value of
 * its own stays as it is (a nested `callprof record` sets its own); if that
 * is an LD_PRELOAD without our runtime, the child cannot be profiled and
 * one warning says so, naming it.  The program's array is never changed:
 * a new one is built, on the stack when it is small, else in a mapping of
 * its own (never malloc: exec may be called in a vfork child, whose heap
 * is its parent's).  A setuid or setgid child gets the variables too, and
 * the loader drops LD_PRELOAD for it (secure execution), so it is not
 * profiled (callprof-record(1), SECURITY).
 */
#define ENV_ON_STACK 256

struct child_env {
	char **env;	     /* the array to pass, NULL-terminated */
	size_t n, cap;	     /* entries in it, room for */
	size_t map_bytes;    /* env is a mapping of this size (0: the caller's stack) */
	char *const *envp;   /* what the program passed */
	const char *count;   /* CALLPROF_EXEC_COUNT=N to set, or NULL */
	const char *seccomp; /* CALLPROF_SECCOMP=MASK to set, or NULL (seccomp.c) */
	char seccomp_var[32];
	int foreign_preload; /* the program's LD_PRELOAD does not load this runtime */
};

/* Does envp hold a variable named as var ("NAME=...")? Its entry, or NULL. */
static const char *env_lookup(char *const envp[], const char *var)
{
	size_t len = strcspn(var, "=") + 1;

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], var, len))
			return envp[i];
	return NULL;
}

/* The path this runtime was loaded from, as the loader has it (LD_PRELOAD's entry). */
static const char *runtime_path(void)
{
	Dl_info info;

	if (!dladdr((void *)runtime_path, &info) || !info.dli_fname || !*info.dli_fname)
		return NULL;
	return info.dli_fname;
}

/* Is path one of the entries of the LD_PRELOAD value v (colon or blank separated)? */
static int preload_has(const char *v, const char *path)
{
	size_t len = strlen(path);

	while (*v) {
		size_t n = strcspn(v, ": ");

		if (n == len && !memcmp(v, path, len))
			return 1;
		v += n;
		v += strspn(v, ": ");
	}
	return 0;
}

static void add_missing(const char *var, void *arg)
{
	struct child_env *c = arg;
	const char *have;

	if ((!strncmp(var, EXEC_COUNT, sizeof(EXEC_COUNT) - 1) && c->count) ||
	    (!strncmp(var, SECCOMP_VAR, sizeof(SECCOMP_VAR) - 1) && c->seccomp))
		return; /* set below */
	have = env_lookup(c->envp, var);
	if (!have) {
		if (c->n < c->cap)
			c->env[c->n++] = (char *)var;
		return;
	}
	if (!strncmp(var, "LD_PRELOAD=", 11) && strcmp(have, var)) {
		const char *self = runtime_path();

		c->foreign_preload = self && preload_has(var + 11, self) && !preload_has(have + 11, self);
	}
}

/* How many runtime variables there are (room for them in the new array). */
static void count_var(const char *var, void *arg)
{
	(*(size_t *)arg)++;
}

/*
 * Fill c: envp with the runtime's variables it lacks, and CALLPROF_EXEC_COUNT
 * set to count (NULL: as it is).  stack[ENV_ON_STACK] is the caller's.  On
 * failure (no memory) c->env is NULL and the program's envp goes as it is.
 */
static void child_env__init(struct child_env *c, char *const envp[], const char *count,
			    char **stack)
{
	size_t nenv = 0, nvars = 0;

	memset(c, 0, sizeof(*c));
	c->envp = envp;
	c->count = count;
	if (cp_seccomp__known()) {
		static const char hex[] = "0123456789abcdef";
		uint32_t m = __atomic_load_n(&cp_sys_denied, __ATOMIC_RELAXED);
		size_t pos = sizeof(SECCOMP_VAR) - 1;

		memcpy(c->seccomp_var, SECCOMP_VAR, pos);
		for (int shift = 28; shift >= 0; shift -= 4)
			c->seccomp_var[pos++] = hex[(m >> shift) & 15];
		c->seccomp_var[pos] = '\0';
		c->seccomp = c->seccomp_var;
	}
	while (envp && envp[nenv])
		nenv++;
	cp_env__each(count_var, &nvars);
	c->cap = nenv + nvars + 2;
	if (c->cap + 1 <= ENV_ON_STACK) {
		c->env = stack;
	} else if (!cp_sys__may(CP_SYS_MEMORY)) {
		return; /* a filter forbids the mapping: envp goes as it is */
	} else {
		c->map_bytes = (c->cap + 1) * sizeof(char *);
		c->env = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c->env == MAP_FAILED) {
			c->env = NULL;
			return;
		}
	}
	for (size_t i = 0; i < nenv; i++)
		if ((!count || strncmp(envp[i], EXEC_COUNT, sizeof(EXEC_COUNT) - 1)) &&
		    (!c->seccomp || strncmp(envp[i], SECCOMP_VAR, sizeof(SECCOMP_VAR) - 1)))
			c->env[c->n++] = envp[i];
	cp_env__each(add_missing, c);
	if (count)
		c->env[c->n++] = (char *)count;
	/* A seccomp filter survives exec: the new image does without what it forbids. */
	if (c->seccomp)
		c->env[c->n++] = (char *)c->seccomp;
	c->env[c->n] = NULL;
}

/* What to pass to the real call. */
static char *const *child_env__get(const struct child_env *c)
{
	return c->env ? c->env : c->envp;
}

static void child_env__release(struct child_env *c)
{
	if (c->map_bytes && c->env)
		munmap(c->env, c->map_bytes);
	c->env = NULL;
}

/*
 * The child will not load the runtime: say so once, naming it (what the
 * program ran: a path, a file name searched in PATH, or a descriptor).
 */
static void warn_unprofiled(const struct child_env *c, const char *what, int fd)
{
	static int warned;
	char line[400] = "not profiling ";
	size_t pos = strlen(line), len;

	if (!c->foreign_preload || __atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	if (what) {
		len = strnlen(what, 200);
		memcpy(line + pos, what, len);
		pos += len;
	} else {
		memcpy(line + pos, "descriptor ", 11);
		pos += 11;
		cp_put_dec(line, sizeof(line), &pos, (unsigned long)(fd < 0 ? 0 : fd));
	}
	len = strlen(": the program runs it with an LD_PRELOAD of its own");
	memcpy(line + pos, ": the program runs it with an LD_PRELOAD of its own", len + 1);
	cp_warn(line);
}

/*
 * Before an exec: write the old image's profile (not in a vfork child: its
 * memory is its parent's), then build the new image's environment, whose
 * CALLPROF_EXEC_COUNT is this exec's number.  count_var[32] is the caller's.
 */
static void before_exec(struct child_env *c, char *const envp[], char *count_var, char **stack,
			const char *what, int fd)
{
	const char *prev = cp_getenv("CALLPROF_EXEC_COUNT");
	unsigned n = (prev ? (unsigned)strtoul(prev, NULL, 10) : 0) + 1;
	size_t pos = sizeof(EXEC_COUNT) - 1;
	int saved_errno = errno;

	/* getpid() is a system call the program's seccomp filter may forbid, writing too. */
	if (cp_sys__may(CP_SYS_WRITE) && getpid() == cp_session.pid) {
		cp_session.exec_pending = 1; /* the watcher has nothing to write from here on */
		cp_session__before_exec(n);
		/* The new image will not start (seccomp.c): record says why there is no profile. */
		if (!cp_sys__may(CP_SYS_START))
			cp_status__failed(-2, "seccomp", 0);
	}
	/* Attached: the new image runs without callprof, in the environment it was given. */
	if (cp_attach.on) {
		memset(c, 0, sizeof(*c));
		c->envp = envp;
		errno = saved_errno;
		return;
	}
	memcpy(count_var, EXEC_COUNT, pos);
	cp_put_dec(count_var, 32, &pos, n);
	count_var[pos] = '\0';
	child_env__init(c, envp, count_var, stack);
	warn_unprofiled(c, what, fd);
	errno = saved_errno;
}

static int after_failed_exec(struct child_env *c)
{
	int saved_errno = errno;

	child_env__release(c);
	if (cp_sys__may(CP_SYS_WRITE) && getpid() == cp_session.pid)
		cp_session.exec_pending = 0; /* still this image: the watcher is back on duty */
	errno = saved_errno;
	return -1;
}

#define CP_INTERPOSE_EXEC __attribute__((visibility("default"), no_instrument_function))

/* The locals of an exec wrapper: the new environment and its storage. */
#define EXEC_LOCALS                                                                        \
	struct child_env c_;                                                               \
	char count_[32];                                                                   \
	char *stack_[ENV_ON_STACK]

/*
 * The wrappers call these, not execve and execvpe by name: under callprof
 * attach the runtime is no global symbol, and a call through our PLT would
 * reach the C library's, skipping before_exec.
 */
static CP_NOINSTR int exec_ve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_LOCALS;
	execve_fn next = CP_NEXT(real_execve, "execve");

	before_exec(&c_, envp, count_, stack_, path, -1);
	next(path, argv, child_env__get(&c_));
	return after_failed_exec(&c_);
}

static CP_NOINSTR int exec_vpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_LOCALS;
	execve_fn next = CP_NEXT(real_execvpe, "execvpe");

	before_exec(&c_, envp, count_, stack_, file, -1);
	next(file, argv, child_env__get(&c_));
	return after_failed_exec(&c_);
}

CP_INTERPOSE_EXEC int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_ve(path, argv, envp);
}

CP_INTERPOSE_EXEC int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_vpe(file, argv, envp);
}

CP_INTERPOSE_EXEC int fexecve(int fd, char *const argv[], char *const envp[])
{
	EXEC_LOCALS;
	fexecve_fn next = CP_NEXT(real_fexecve, "fexecve");

	before_exec(&c_, envp, count_, stack_, NULL, fd);
	next(fd, argv, child_env__get(&c_));
	return after_failed_exec(&c_);
}

int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);

CP_INTERPOSE_EXEC int execveat(int dirfd, const char *path, char *const argv[],
			       char *const envp[], int flags)
{
	EXEC_LOCALS;
	execveat_fn next = CP_NEXT(real_execveat, "execveat");

	if (!next)
		return errno = ENOSYS, -1;
	before_exec(&c_, envp, count_, stack_, *path ? path : NULL, dirfd);
	next(dirfd, path, argv, child_env__get(&c_), flags);
	return after_failed_exec(&c_);
}

CP_INTERPOSE_EXEC int execv(const char *path, char *const argv[])
{
	return exec_ve(path, argv, environ);
}

CP_INTERPOSE_EXEC int execvp(const char *file, char *const argv[])
{
	return exec_vpe(file, argv, environ);
}

/* The list forms: gather the arguments, then as above. */
static char **gather(const char *arg0, va_list ap, char ***envp, size_t *bytes)
{
	va_list count;
	size_t n = 1;
	char **argv;

	va_copy(count, ap);
	while (va_arg(count, char *))
		n++;
	va_end(count);
	/* A mapping, not malloc: see child_env. */
	*bytes = (n + 1) * sizeof(*argv);
	argv = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (argv == MAP_FAILED)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *); /* the last one read is the NULL */
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

/* execl, execlp, execle: search PATH or not, an envp after the NULL or not. */
static int exec_list(const char *target, int search, int with_env, const char *arg0, va_list ap)
{
	size_t bytes;
	char **envp = environ, **argv = gather(arg0, ap, with_env ? &envp : NULL, &bytes);
	int saved_errno;

	if (!argv)
		return errno = ENOMEM, -1;
	if (search)
		exec_vpe(target, argv, envp);
	else
		exec_ve(target, argv, envp);
	saved_errno = errno;
	munmap(argv, bytes);
	errno = saved_errno;
	return -1;
}

CP_INTERPOSE_EXEC int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(path, 0, 0, arg0, ap);
	va_end(ap);
	return ret;
}

CP_INTERPOSE_EXEC int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(file, 1, 0, arg0, ap);
	va_end(ap);
	return ret;
}

CP_INTERPOSE_EXEC int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(path, 0, 1, arg0, ap);
	va_end(ap);
	return ret;
}

/*
 * posix_spawn and posix_spawnp start a child without our exec wrappers
 * (the C library execs from its own clone): its environment is made here.
 * The caller's image goes on, so nothing is written and the child keeps
 * the exec count it is given.
 */
static int spawn(spawn_fn *real, const char *name, pid_t *pid, const char *path,
		 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	struct child_env c;
	char *stack[ENV_ON_STACK];
	spawn_fn next = CP_NEXT(*real, name);
	int ret, saved_errno = errno;

	if (!next)
		return ENOSYS;
	child_env__init(&c, envp, NULL, stack);
	warn_unprofiled(&c, path, -1);
	errno = saved_errno;
	ret = next(pid, path, fa, attr, argv, child_env__get(&c));
	saved_errno = errno;
	child_env__release(&c);
	errno = saved_errno;
	return ret;
}

CP_INTERPOSE_EXEC int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
				  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn(&real_spawn, "posix_spawn", pid, path, fa, attr, argv, envp);
}

CP_INTERPOSE_EXEC int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
				   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn(&real_spawnp, "posix_spawnp", pid, file, fa, attr, argv, envp);
}

#else

void cp_interpose__init(void)
{
}

#endif
