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
#include <setjmp.h>
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
	RESOLVE(real_longjmp, "longjmp");
	RESOLVE(real__longjmp, "_longjmp");
	RESOLVE(real_siglongjmp, "siglongjmp");
	RESOLVE(real_longjmp_chk, "__longjmp_chk");
	RESOLVE(real__exit, "_exit");
	RESOLVE(real__Exit, "_Exit");
	RESOLVE(real_abort, "abort");
	RESOLVE(real_dlclose, "dlclose");
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
	abandon_below((uintptr_t)__builtin_frame_address(0) + 16);
	return next(exc);
}

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
	return ret;
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
	if (flags & MCL_CURRENT)
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

/* ---- exec ---- */

#define EXEC_COUNT "CALLPROF_EXEC_COUNT="

/*
 * Write the old image's profile, then return a copy of envp whose
 * CALLPROF_EXEC_COUNT is this exec's number (NULL: use envp as it is).
 */
static char **before_exec(char *const envp[])
{
	static char count_var[sizeof(EXEC_COUNT) + 12];
	const char *prev = cp_getenv("CALLPROF_EXEC_COUNT");
	unsigned n = (prev ? (unsigned)strtoul(prev, NULL, 10) : 0) + 1;
	size_t nenv = 0, k = 0;
	char **env;
	int saved_errno = errno;

	if (getpid() == cp_session.pid) { /* not in a vfork child: its memory is the parent's */
		cp_session.exec_pending = 1; /* the watcher has nothing to write from here on */
		cp_session__before_exec(n);
	}
	/* Attached: the new image runs without callprof, in the environment it was given. */
	if (cp_attach.on) {
		errno = saved_errno;
		return NULL;
	}
	snprintf(count_var, sizeof(count_var), EXEC_COUNT "%u", n);
	while (envp && envp[nenv])
		nenv++;
	env = malloc((nenv + 2) * sizeof(*env));
	if (env) {
		for (size_t i = 0; i < nenv; i++)
			if (strncmp(envp[i], EXEC_COUNT, sizeof(EXEC_COUNT) - 1))
				env[k++] = envp[i];
		env[k++] = count_var;
		env[k] = NULL;
	}
	errno = saved_errno;
	return env;
}

static int after_failed_exec(char **env)
{
	int saved_errno = errno;

	free(env);
	if (getpid() == cp_session.pid)
		cp_session.exec_pending = 0; /* still this image: the watcher is back on duty */
	errno = saved_errno;
	return -1;
}

#define CP_INTERPOSE_EXEC __attribute__((visibility("default"), no_instrument_function))

/*
 * The wrappers call these, not execve and execvpe by name: under callprof
 * attach the runtime is no global symbol, and a call through our PLT would
 * reach the C library's, skipping before_exec.
 */
static CP_NOINSTR int exec_ve(const char *path, char *const argv[], char *const envp[])
{
	char **env = before_exec(envp);
	execve_fn next = CP_NEXT(real_execve, "execve");

	next(path, argv, env ? env : envp);
	return after_failed_exec(env);
}

static CP_NOINSTR int exec_vpe(const char *file, char *const argv[], char *const envp[])
{
	char **env = before_exec(envp);
	execve_fn next = CP_NEXT(real_execvpe, "execvpe");

	next(file, argv, env ? env : envp);
	return after_failed_exec(env);
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
	char **env = before_exec(envp);
	fexecve_fn next = CP_NEXT(real_fexecve, "fexecve");

	next(fd, argv, env ? env : envp);
	return after_failed_exec(env);
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
static char **gather(const char *arg0, va_list ap, char ***envp)
{
	va_list count;
	size_t n = 1;
	char **argv;

	va_copy(count, ap);
	while (va_arg(count, char *))
		n++;
	va_end(count);
	argv = malloc((n + 1) * sizeof(*argv));
	if (!argv)
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
	char **envp = environ, **argv = gather(arg0, ap, with_env ? &envp : NULL);

	if (!argv)
		return errno = ENOMEM, -1;
	if (search)
		exec_vpe(target, argv, envp);
	else
		exec_ve(target, argv, envp);
	return after_failed_exec(argv);
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

#else

void cp_interpose__init(void)
{
}

#endif
