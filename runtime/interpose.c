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
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>

#include "runtime/internal.h"

#if defined(__x86_64__) && defined(__GLIBC__)

#define JB_RSP 6 /* glibc's index of the saved stack pointer in __jmpbuf */

typedef void (*longjmp_fn)(struct __jmp_buf_tag *, int);

static longjmp_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;

/* Resolved at start-up: dlsym is not safe to call from a signal handler. */
void cp_interpose__init(void)
{
	real_longjmp = (longjmp_fn)dlsym(RTLD_NEXT, "longjmp");
	real__longjmp = (longjmp_fn)dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (longjmp_fn)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (longjmp_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

static uintptr_t demangle(uintptr_t v)
{
	uintptr_t guard;

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	v = (v >> 17) | (v << (64 - 17));
	return v ^ guard;
}

static CP_NOINSTR void before_jump(struct __jmp_buf_tag *env)
{
	struct cp_thread *t = cp_self;
	int saved_errno = errno;

	if (t && cp_session.state == CP_STATE_ON) {
		uintptr_t target = demangle((uintptr_t)env->__jmpbuf[JB_RSP]);

		/*
		 * A jump out of a signal handler that interrupted a hook abandons
		 * that hook too: its half-done work is harmless (see thread.c),
		 * and the thread must not stay marked busy forever.
		 */
		t->busy = 1;
		cp_thread__unwind_to(t, target, cp_hook_mode == CP_MODE_TIMING ? cp_ticks() : 0);
		t->busy = 0;
	}
	errno = saved_errno;
}

static __attribute__((noreturn)) CP_NOINSTR void jump(longjmp_fn *real, const char *name,
						       struct __jmp_buf_tag *env, int val)
{
	if (!*real)
		*real = (longjmp_fn)dlsym(RTLD_NEXT, name);
	before_jump(env);
	(*real)(env, val);
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

#else

void cp_interpose__init(void)
{
}

#endif
