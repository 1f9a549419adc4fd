/*
 * signals.c - signal handlers seen by the preloaded runtime.
 *
 * sigaction() and the signal() family are interposed.  A handler the
 * program installs is recorded in a table and the kernel is given one
 * trampoline instead; the trampoline pushes a "<signal N>" pseudo-frame
 * (hooks.c), calls the program's handler, and pops the frame, so the
 * handler's calls nest under a node of their own below the call that was
 * interrupted (a signal that interrupted a hook: see hooks.c, the side
 * tree).  Queries see what the program installed, never the
 * trampoline.  The trampoline is always installed with SA_SIGINFO and
 * calls the handler with three arguments, which a one-argument handler
 * ignores (x86-64 SysV calling convention), so a handler and its flags never
 * have to be read together.
 *
 * Signals whose default action ends the process (SIGSEGV, SIGABRT, SIGTERM,
 * SIGINT, ...) and which the program leaves at SIG_DFL are caught the same
 * way: the trampoline writes the profile, restores SIG_DFL and sends the
 * signal again, so the process still dies of it, with its core dump, after
 * the handler returns.  Signals the program ignores are left alone.
 *
 * record --dump-on=SIG (CALLPROF_DUMP_ON): SIG asks for a snapshot.  The
 * trampoline stays installed for it whatever the program does: it forwards
 * the request to the watcher (kill(), async-signal-safe, errno kept), then
 * treats the signal as the program asked - its handler runs, SIG_IGN
 * ignores it - except that SIG_DFL no longer ends the process.  The
 * program's handler is not replaced, so both happen; queries still see
 * what the program installed.
 *
 * No locks: sigaction may be called from signal handlers.  Concurrent
 * sigaction calls for the same signal race as they do without callprof
 * (the last one wins).
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/internal.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static sigaction_fn real_sigaction;

/* What the program asked for, per signal. */
struct user_action {
	void *handler; /* a function, SIG_DFL or SIG_IGN */
	int flags;     /* its sa_flags */
	int valid;     /* set once the program (or the catcher set-up) wrote it */
};

static struct user_action actions[_NSIG];

/* Default action: end the process.  Caught only while left at SIG_DFL. */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2,
	SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS,
};

static int is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (fatal_signals[i] == sig)
			return 1;
	return 0;
}

static int call_real(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn next = CP_NEXT(real_sigaction, "sigaction");

	if (!next)
		return errno = ENOSYS, -1;
	return next(sig, act, old);
}

/*
 * The process is dying of sig: write the profile, then let the signal do
 * its work.  The catchers are installed with SA_RESETHAND, so the kernel
 * has already put SIG_DFL back: a fault the handler returns to happens
 * again and kills.  A seccomp filter installed since may forbid sending
 * the signal again (seccomp.c gives the catchers back first when it can).
 */
static void die_of(int sig)
{
	struct sigaction dfl;

	cp_session__finish(1);
	if (!cp_sys__may(CP_SYS_RERAISE))
		return;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	call_real(sig, &dfl, NULL);
	/* Pending until the handler returns and the mask is restored. */
	syscall(SYS_tgkill, getpid(), gettid(), sig);
}

/* A --dump-on request: to the watcher, which writes the snapshot. */
static void forward_dump_request(void)
{
	pid_t w = __atomic_load_n(&cp_session.watcher, __ATOMIC_ACQUIRE);
	int saved_errno = errno;

	if (w > 0 && cp_sys__may(CP_SYS_FORWARD) && getpid() == cp_session.pid)
		kill(w, SIGUSR2);
	errno = saved_errno;
}

static int is_dump_signal(int sig)
{
	return sig == cp_session.dump_signal && sig > 0;
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	void *h = __atomic_load_n(&actions[sig].handler, __ATOMIC_ACQUIRE);
	struct cp_thread *owner;
	uint64_t depth;
	int saved_errno;

	if (is_dump_signal(sig)) {
		forward_dump_request();
		if (h == (void *)SIG_DFL)
			return;
	}
	if (h == (void *)SIG_DFL) {
		if (is_fatal(sig))
			die_of(sig);
		return;
	}
	if (h == (void *)SIG_IGN)
		return;
	/* errno is the program's: only its handler may change it. */
	saved_errno = errno;
	depth = cp_hooks__signal_enter(sig, (uintptr_t)__builtin_frame_address(0), &owner);
	errno = saved_errno;
	((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
	saved_errno = errno;
	cp_hooks__signal_leave(sig, depth, owner);
	errno = saved_errno;
}

static int ours(const struct sigaction *k)
{
	return (k->sa_flags & SA_SIGINFO) && k->sa_sigaction == trampoline;
}

/* Turn what the kernel holds into what the program installed. */
static void as_user_sees(int sig, struct sigaction *k, const struct user_action *u)
{
	if (!ours(k) || !u->valid)
		return;
	if (u->flags & SA_SIGINFO)
		k->sa_sigaction = (void (*)(int, siginfo_t *, void *))u->handler;
	else
		k->sa_handler = (void (*)(int))u->handler;
	k->sa_flags = u->flags;
}

#define CP_INTERPOSE __attribute__((visibility("default"), no_instrument_function))

CP_INTERPOSE int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct user_action prev;
	struct sigaction k;
	void *h;
	int ret;

	if (sig <= 0 || sig >= _NSIG || sig == SIGKILL || sig == SIGSTOP)
		return call_real(sig, act, old);
	prev = actions[sig];
	if (!act) {
		ret = call_real(sig, NULL, old);
		if (!ret && old)
			as_user_sees(sig, old, &prev);
		return ret;
	}
	h = (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction : (void *)act->sa_handler;
	k = *act;
	if (is_dump_signal(sig) || (h != (void *)SIG_IGN && h != (void *)SIG_DFL)) {
		k.sa_sigaction = trampoline;
		k.sa_flags |= SA_SIGINFO;
	} else if (h == (void *)SIG_DFL && is_fatal(sig) && cp_sys__may(CP_SYS_RERAISE)) {
		/* Caught to write the profile first (die_of): once, as SIG_DFL would act once. */
		k.sa_sigaction = trampoline;
		k.sa_flags |= SA_SIGINFO | SA_RESETHAND;
	}
	/* Handler first: the trampoline may run as soon as the kernel has it. */
	actions[sig].flags = act->sa_flags;
	actions[sig].valid = 1;
	__atomic_store_n(&actions[sig].handler, h, __ATOMIC_RELEASE);
	ret = call_real(sig, &k, old);
	if (ret) {
		actions[sig] = prev;
		return ret;
	}
	if (old)
		as_user_sees(sig, old, &prev);
	return 0;
}

/* signal() with BSD semantics (glibc's default): restart, block sig in its handler. */
static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	struct sigaction act, old;

	if (h == SIG_ERR || sig <= 0 || sig >= _NSIG)
		return errno = EINVAL, SIG_ERR;
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (sigaction(sig, &act, &old))
		return SIG_ERR;
	return old.sa_handler;
}

CP_INTERPOSE sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t h);

CP_INTERPOSE sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

/* System V semantics: one-shot, not blocked while it runs, no restart. */
CP_INTERPOSE sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

sighandler_t __sysv_signal(int sig, sighandler_t h);

CP_INTERPOSE sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* Catch the fatal signals the program leaves at their default, and --dump-on's. */
void cp_signals__init(void)
{
	int saved_errno = errno;
	const char *dump_on = cp_getenv("CALLPROF_DUMP_ON");

	if (dump_on && *dump_on) {
		char *end;
		long sig = strtol(dump_on, &end, 10);

		if (!*end && sig > 0 && sig < _NSIG && sig != SIGKILL && sig != SIGSTOP) {
			struct sigaction k;

			cp_session.dump_signal = (int)sig;
			if (!call_real((int)sig, NULL, &k) && !ours(&k)) {
				actions[sig].handler = (k.sa_flags & SA_SIGINFO) ? (void *)k.sa_sigaction
										  : (void *)k.sa_handler;
				actions[sig].flags = k.sa_flags;
				actions[sig].valid = 1;
				k.sa_sigaction = trampoline;
				k.sa_flags |= SA_SIGINFO | SA_RESTART;
				call_real((int)sig, &k, NULL);
			}
		}
	}

	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];
		struct sigaction k;

		if (call_real(sig, NULL, &k) || ours(&k))
			continue;
		if (!(k.sa_flags & SA_SIGINFO) && k.sa_handler == SIG_DFL) {
			actions[sig].handler = (void *)SIG_DFL;
			actions[sig].flags = k.sa_flags;
			actions[sig].valid = 1;
			k.sa_sigaction = trampoline;
			k.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_RESETHAND;
			sigemptyset(&k.sa_mask);
			call_real(sig, &k, NULL);
		}
	}
	errno = saved_errno;
}

/*
 * A seccomp filter is about to forbid what die_of does (seccomp.c): the
 * catchers of fatal signals the program leaves at SIG_DFL go, while the
 * filters so far still allow it, so that such a signal ends the program
 * as without callprof (its profile is then the watcher's to write).  A
 * --dump-on signal keeps its trampoline, which forwards only if allowed.
 */
void cp_signals__give_back(void)
{
	int saved_errno = errno;

	for (int sig = 1; sig < _NSIG; sig++) {
		struct sigaction k;

		if (!actions[sig].valid || actions[sig].handler != (void *)SIG_DFL ||
		    is_dump_signal(sig) || call_real(sig, NULL, &k) || !ours(&k))
			continue;
		k.sa_handler = SIG_DFL;
		k.sa_flags = actions[sig].flags & ~SA_SIGINFO;
		call_real(sig, &k, NULL);
	}
	errno = saved_errno;
}
