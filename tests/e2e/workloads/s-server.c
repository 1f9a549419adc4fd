/*
 * s-server: a long-running multi-threaded server that `callprof attach`
 * attaches to (t0510-attach.sh, bench/attach).  Started without callprof;
 * it counts every call of every instrumented function it defines itself, so
 * that a profile of any window can be held against its own counters.
 *
 *   t-server CMD_FIFO REPLY_FILE
 *
 * Threads: main (starts the others, joins them), a reader blocked in read()
 * on CMD_FIFO, four workers waiting on a condition variable, and three
 * robustness threads, each blocked in a system call a ptrace attach must
 * not disturb: one in epoll_wait (no timeout) on an eventfd, one in read()
 * on a pipe, one sleeping 200 ms at a time with nanosleep, measuring each
 * sleep with CLOCK_MONOTONIC.  SIGUSR1 is blocked in the reader and the
 * robustness threads (a signal there would be an EINTR the attach did not
 * cause); its handler (SA_RESTART) runs in main or a worker.
 *
 * Protocol: the test writes one command a line to CMD_FIFO (opened
 * read-write here, so a writer may come and go) and waits for its reply:
 * every command gets exactly one line, appended to REPLY_FILE with one
 * write(), and only once the command's work is done.  The first line,
 * "ready PID", comes when every thread has started.  So a test that counts
 * the lines of REPLY_FILE knows which reply is its command's.
 *
 *   work N     N requests for the workers, each worker_loop -> handle_request
 *              -> parse, compute, reply; "done N ns=NS cpu_ns=CPU" when all
 *              N are done (NS: nanoseconds from queueing to the last one,
 *              CPU: the workers' CPU time in the requests, without their
 *              waiting and waking)
 *   spin MS    the reader calls spin_leaf in a loop for MS ms: "spun
 *              calls=N ns=NS cpu_ns=CPU" (CPU: the reader's CPU time; a
 *              one-thread measure of the hooks' cost)
 *   slow MS    one request whose handler, handle_slow, sleeps (10 ms
 *              nanosleeps) until MS ms have passed or a release; the reply
 *              "slow started" comes once handle_slow is entered, so it is
 *              open when the test goes on (worker_main -> worker_loop ->
 *              handle_slow); slow_done counts those that returned
 *   jump N     the reader, N times: jump_holder sets a jmp_buf and calls
 *              jump_dive 6 deep, whose deepest call longjmps back to it,
 *              then calls jump_after; "jumped N" (t0521: the frames the
 *              longjmp abandons close at the jump under attach too)
 *   release    ends the running slow request: "released" once handle_slow
 *              has returned (so a test decides when it returns)
 *   ping       wakes the epoll and pipe threads (on_epoll_event,
 *              on_pipe_data); "pong N" once both handled it
 *   stats      "stats k=v ...": what the threads saw (eintr_*: a blocking
 *              call that failed with EINTR, eintr the sum; short_sleeps:
 *              a 200 ms nanosleep that took less; sleeps, max_sleep_us,
 *              usr1 (handlers run), pings, slow_done, anomalies: anything
 *              else unexpected, such as epoll_wait returning 0 or an
 *              error), hooks=glibc|callprof|mixed: where this program's
 *              __cyg_profile_func_enter/exit slots (slots=N of them, GOT
 *              and PLT) point, by the file dladdr names, then one
 *              fn:NAME=CALLS per instrumented function, in a fixed order
 *   quit       "bye"; the threads end, main joins them, prints "final "
 *              and the stats to stdout and exits 0
 *
 * Anything else gets "error: ...".  stdout holds "server ready" and the
 * final line, nothing else; stderr stays empty unless setting up fails or
 * the program ends by an exit() other than main's return after quit.
 *
 * Counting: COUNT(F) is the first statement of every instrumented function
 * (NOINLINE: gcc neither inlines nor clones them, so the names stay); the
 * helpers are no_instrument_function.  A stats reply reads the counters
 * after cmd_stats counted itself, so between two stats replies the calls a
 * profile may show beyond the counters' differences are the reader's own
 * (read_command, dispatch, cmd_*) and the sleeper's on_tick; the requests,
 * spin_leaf, the ping handlers and the SIGUSR1 handler happen only when a
 * command (or the test's kill) asks, and are done before its reply.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

/* NOINSTR (workload.h): no hooks and no sled */

volatile long sink;

/* Every instrumented function, in the order stats prints them. */
#define FUNCTIONS(X)                                                                     \
	X(main) X(reader_main) X(read_command) X(dispatch) X(cmd_work) X(cmd_spin)       \
	X(cmd_slow) X(cmd_release) X(cmd_ping) X(cmd_stats) X(cmd_quit) X(spin_leaf)    \
	X(worker_main) X(worker_loop) X(handle_request) X(parse) X(compute) X(reply)    \
	X(handle_slow) X(epoll_main) X(on_epoll_event) X(piper_main) X(on_pipe_data)    \
	X(sleeper_main) X(on_tick) X(on_usr1) X(usr1_work) X(cmd_jump) X(jump_holder)      \
	X(jump_dive) X(jump_after)

#define AS_ENUM(f) F_##f,
#define AS_NAME(f) #f,
enum { FUNCTIONS(AS_ENUM) NFUNCTIONS };
static const char *const fn_names[] = { FUNCTIONS(AS_NAME) };
static unsigned long fn_calls[NFUNCTIONS];

#define COUNT(f) __atomic_fetch_add(&fn_calls[F_##f], 1, __ATOMIC_RELAXED)

/* What the threads saw (stats). */
static unsigned long eintr_epoll, eintr_read, eintr_fifo, eintr_sleep, eintr_slow;
static unsigned long short_sleeps, sleeps, max_sleep_us, usr1, slow_done, anomalies;

#define BUMP(v) __atomic_fetch_add(&(v), 1, __ATOMIC_RELAXED)
#define LOAD(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)

#define NWORKERS 4
#define SLEEP_NS 200000000L

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;  /* workers wait here */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;  /* the reader waits here */
static unsigned long pending, done;			  /* requests queued, finished */
static long long request_cpu_ns;			  /* the workers' CPU time in requests */
static long slow_ms = -1;				  /* a slow request queued */
static int slow_entered, slow_running, slow_release, quitting;
static unsigned long pings, epoll_pings, pipe_pings;

static int fifo_fd, reply_fd, event_fd, epoll_fd, pipe_fds[2];
static pthread_barrier_t started;

NOINSTR static long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

NOINSTR static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

NOINSTR static void die(const char *what)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "s-server: %s: %s\n", what, strerror(errno));

	if (write(2, buf, (size_t)n) < 0)
		_exit(2);
	_exit(2);
}

NOINSTR static void block_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* One reply line, one write (the test counts lines). */
NOINSTR static void send_reply(const char *line)
{
	char buf[4096];
	size_t n = strlen(line);

	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	memcpy(buf, line, n);
	buf[n++] = '\n';
	if (write(reply_fd, buf, n) != (ssize_t)n)
		die("write reply");
}

/*
 * Where the hooks' slots point: the relocations of the main program that
 * name __cyg_profile_func_enter or _exit (JUMP_SLOT in .got.plt, GLOB_DAT
 * in .got), each slot's current value named by dladdr.
 */
struct slot_scan {
	int slots, glibc, callprof;
	void *value[16]; /* the slots' values, named after dl_iterate_phdr (no dladdr inside it) */
};

NOINSTR static uintptr_t dyn_ptr(uintptr_t base, uintptr_t p)
{
	/* glibc relocates .dynamic's pointers in place on most targets */
	return p < base ? base + p : p;
}

NOINSTR static void scan_relocs(uintptr_t base, const ElfW(Rela) *r, size_t size,
				const ElfW(Sym) *symtab, const char *strtab, struct slot_scan *s)
{
	for (size_t i = 0; i < size / sizeof(*r); i++) {
		size_t sym = ELF64_R_SYM(r[i].r_info);
		const char *name;
		void *value;

		if (!sym)
			continue;
		name = strtab + symtab[sym].st_name;
		if (strcmp(name, "__cyg_profile_func_enter") && strcmp(name, "__cyg_profile_func_exit"))
			continue;
		s->slots++;
		value = *(void **)(base + r[i].r_offset);
		if (s->slots <= 16)
			s->value[s->slots - 1] = value;
	}
}

NOINSTR static int scan_main(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct slot_scan *s = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	uintptr_t base = info->dlpi_addr, rela = 0, jmprel = 0;
	size_t relasz = 0, pltrelsz = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const void *)dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_RELA: rela = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
		}
	}
	if (symtab && strtab) {
		if (rela)
			scan_relocs(base, (const void *)rela, relasz, symtab, strtab, s);
		if (jmprel)
			scan_relocs(base, (const void *)jmprel, pltrelsz, symtab, strtab, s);
	}
	return 1; /* the main program comes first: only it */
}

NOINSTR static const char *hooks_state(int *slots)
{
	struct slot_scan s = { 0 };

	dl_iterate_phdr(scan_main, &s);
	*slots = s.slots;
	for (int i = 0; i < s.slots && i < 16; i++) {
		Dl_info info;

		if (!dladdr(s.value[i], &info) || !info.dli_fname)
			continue;
		/* callprof attach loads its runtime copy as /proc/CALLPROFPID/fd/N */
		if (strstr(info.dli_fname, "callprof") || !strncmp(info.dli_fname, "/proc/", 6))
			s.callprof++;
		else if (strstr(info.dli_fname, "/libc.so") || !strncmp(info.dli_fname, "libc.so", 7))
			s.glibc++;
	}
	if (!s.slots)
		return "none";
	if (s.glibc == s.slots)
		return "glibc";
	if (s.callprof == s.slots)
		return "callprof";
	return "mixed";
}

/*
 * Where this program's sleds (a sleds build: -fpatchable-function-entry)
 * stand: none (a hooks build), nop (each as the compiler left it), call
 * (each patched: a jump to its thunk, which calls callprof; or a call, as
 * an older callprof patched them) or mixed, by the first byte
 * of each sled the linker's __start/__stop symbols of the section list.
 */
extern const uintptr_t __start___patchable_function_entries[] __attribute__((weak));
extern const uintptr_t __stop___patchable_function_entries[] __attribute__((weak));

NOINSTR static const char *sleds_state(void)
{
	const uintptr_t *p = __start___patchable_function_entries;
	int calls = 0, others = 0;

	for (; p && p < __stop___patchable_function_entries; p++) {
		unsigned char op = *(const volatile unsigned char *)*p;

		if (op == 0xe9 || op == 0xe8)
			calls++;
		else
			others++;
	}
	return !calls && !others ? "none" : !calls ? "nop" : !others ? "call" : "mixed";
}

NOINSTR static void format_stats(char *buf, size_t size, const char *prefix)
{
	size_t n;
	int slots;
	const char *hooks = hooks_state(&slots);
	unsigned long ep = LOAD(eintr_epoll), rd = LOAD(eintr_read), ff = LOAD(eintr_fifo),
		      sl = LOAD(eintr_sleep), sw = LOAD(eintr_slow);

	n = (size_t)snprintf(buf, size,
			     "%s hooks=%s sleds=%s slots=%d eintr=%lu eintr_epoll=%lu eintr_read=%lu "
			     "eintr_fifo=%lu eintr_sleep=%lu eintr_slow=%lu short_sleeps=%lu "
			     "sleeps=%lu max_sleep_us=%lu usr1=%lu pings=%lu slow_done=%lu "
			     "anomalies=%lu",
			     prefix, hooks, sleds_state(), slots, ep + rd + ff + sl + sw, ep, rd, ff, sl, sw,
			     LOAD(short_sleeps), LOAD(sleeps), LOAD(max_sleep_us), LOAD(usr1),
			     LOAD(pings), LOAD(slow_done), LOAD(anomalies));
	for (int i = 0; i < NFUNCTIONS && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, " fn:%s=%lu", fn_names[i],
				      __atomic_load_n(&fn_calls[i], __ATOMIC_RELAXED));
}

/* The workers. */

NOINLINE static long parse(unsigned long seq)
{
	COUNT(parse);
	return (long)(seq * 2654435761UL % 1000003UL);
}

NOINLINE static unsigned long compute(long x)
{
	unsigned long acc = (unsigned long)x;

	COUNT(compute);
	for (unsigned i = 0; i < 64; i++)
		acc = acc * 31 + (acc >> 7) + i;
	return acc;
}

/* sink += v without signed overflow (UBSan runs these) */
NOINSTR static void sink_add(unsigned long v)
{
	sink = (long)(((unsigned long)sink + v) & 0xffffffffUL);
}

NOINLINE static void reply(unsigned long v)
{
	COUNT(reply);
	sink_add(v);
}

NOINLINE static void handle_request(unsigned long seq)
{
	COUNT(handle_request);
	reply(compute(parse(seq)));
}

NOINSTR static void sleep_ms_counted(long ms, unsigned long *eintr)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L }, rem;

	while (nanosleep(&ts, &rem)) {
		if (errno != EINTR) {
			BUMP(anomalies);
			return;
		}
		BUMP(*eintr);
		ts = rem;
	}
}

/* Sleeps in 10 ms nanosleeps until MS ms have passed, or release or quit. */
NOINLINE static void handle_slow(long ms)
{
	long long end;

	COUNT(handle_slow);
	end = now_ns() + ms * 1000000LL;
	pthread_mutex_lock(&lock);
	slow_entered = slow_running = 1;
	slow_release = 0;
	pthread_cond_broadcast(&done_cv);
	pthread_mutex_unlock(&lock);
	while (now_ns() < end && !__atomic_load_n(&slow_release, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&quitting, __ATOMIC_ACQUIRE))
		sleep_ms_counted(10, &eintr_slow);
	pthread_mutex_lock(&lock);
	slow_running = 0;
	BUMP(slow_done);
	pthread_cond_broadcast(&done_cv);
	pthread_mutex_unlock(&lock);
}

NOINLINE static void worker_loop(void)
{
	COUNT(worker_loop);
	pthread_barrier_wait(&started); /* counted before "ready" */
	pthread_mutex_lock(&lock);
	for (;;) {
		unsigned long take;

		while (!quitting && !pending && slow_ms < 0)
			pthread_cond_wait(&work_cv, &lock);
		if (quitting)
			break;
		if (slow_ms >= 0) {
			long ms = slow_ms;

			slow_ms = -1;
			pthread_mutex_unlock(&lock);
			handle_slow(ms);
			pthread_mutex_lock(&lock);
			continue;
		}
		take = pending < 256 ? pending : 256;
		pending -= take;
		unsigned long first = done + pending; /* any numbering will do */
		pthread_mutex_unlock(&lock);
		long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (unsigned long i = 0; i < take; i++)
			handle_request(first + i);
		__atomic_fetch_add(&request_cpu_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0,
				   __ATOMIC_RELAXED);
		pthread_mutex_lock(&lock);
		done += take;
		pthread_cond_broadcast(&done_cv);
	}
	pthread_mutex_unlock(&lock);
}

NOINLINE static void *worker_main(void *arg)
{
	COUNT(worker_main);
	(void)arg;
	worker_loop();
	return NULL;
}

/* The robustness threads. */

NOINLINE static void on_epoll_event(void)
{
	COUNT(on_epoll_event);
	pthread_mutex_lock(&lock);
	epoll_pings++;
	pthread_cond_broadcast(&done_cv);
	pthread_mutex_unlock(&lock);
}

NOINLINE static void *epoll_main(void *arg)
{
	struct epoll_event ev;
	uint64_t v;

	COUNT(epoll_main);
	(void)arg;
	block_usr1();
	pthread_barrier_wait(&started);
	for (;;) {
		int n = epoll_wait(epoll_fd, &ev, 1, -1);

		if (n < 0) {
			if (errno == EINTR)
				BUMP(eintr_epoll);
			else
				BUMP(anomalies);
			continue;
		}
		if (n == 0) {
			BUMP(anomalies); /* no timeout was asked for */
			continue;
		}
		if (read(event_fd, &v, sizeof(v)) != sizeof(v)) {
			BUMP(anomalies);
			continue;
		}
		if (__atomic_load_n(&quitting, __ATOMIC_ACQUIRE))
			break;
		on_epoll_event();
	}
	return NULL;
}

NOINLINE static void on_pipe_data(void)
{
	COUNT(on_pipe_data);
	pthread_mutex_lock(&lock);
	pipe_pings++;
	pthread_cond_broadcast(&done_cv);
	pthread_mutex_unlock(&lock);
}

NOINLINE static void *piper_main(void *arg)
{
	char c;

	COUNT(piper_main);
	(void)arg;
	block_usr1();
	pthread_barrier_wait(&started);
	for (;;) {
		ssize_t n = read(pipe_fds[0], &c, 1);

		if (n < 0) {
			if (errno == EINTR)
				BUMP(eintr_read);
			else
				BUMP(anomalies);
			continue;
		}
		if (n == 0 || c == 'q')
			break;
		on_pipe_data();
	}
	return NULL;
}

NOINLINE static void on_tick(void)
{
	COUNT(on_tick);
	BUMP(sleeps);
}

NOINLINE static void *sleeper_main(void *arg)
{
	COUNT(sleeper_main);
	(void)arg;
	block_usr1();
	pthread_barrier_wait(&started);
	while (!__atomic_load_n(&quitting, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, SLEEP_NS };
		long long t0 = now_ns(), took;

		if (nanosleep(&ts, NULL)) {
			if (errno == EINTR)
				BUMP(eintr_sleep);
			else
				BUMP(anomalies);
		}
		took = now_ns() - t0;
		if (took < SLEEP_NS)
			BUMP(short_sleeps);
		if ((unsigned long)(took / 1000) > LOAD(max_sleep_us))
			__atomic_store_n(&max_sleep_us, (unsigned long)(took / 1000), __ATOMIC_RELAXED);
		on_tick();
	}
	return NULL;
}

NOINLINE static void usr1_work(void)
{
	COUNT(usr1_work);
	sink_add(1);
}

NOINLINE static void on_usr1(int sig)
{
	int saved = errno;

	COUNT(on_usr1);
	(void)sig;
	usr1_work();
	BUMP(usr1);
	errno = saved;
}

/* The reader and its commands. */

NOINSTR static void wait_done(int (*ready)(void), int secs)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += secs;
	while (!ready())
		if (pthread_cond_timedwait(&done_cv, &lock, &until) == ETIMEDOUT)
			break;
}

static unsigned long work_target;

NOINSTR static int work_finished(void)
{
	return done >= work_target;
}

NOINLINE static void cmd_work(unsigned long n)
{
	char buf[128];
	long long t0 = now_ns(), c0;
	int ok;

	COUNT(cmd_work);
	pthread_mutex_lock(&lock);
	c0 = __atomic_load_n(&request_cpu_ns, __ATOMIC_RELAXED);
	work_target = done + pending + n;
	pending += n;
	pthread_cond_broadcast(&work_cv);
	wait_done(work_finished, 600);
	ok = work_finished();
	c0 = __atomic_load_n(&request_cpu_ns, __ATOMIC_RELAXED) - c0;
	pthread_mutex_unlock(&lock);
	if (ok)
		snprintf(buf, sizeof(buf), "done %lu ns=%lld cpu_ns=%lld", n, now_ns() - t0, c0);
	else
		snprintf(buf, sizeof(buf), "error: work %lu not done in 600 s", n);
	send_reply(buf);
}

NOINLINE static void spin_leaf(unsigned long i)
{
	COUNT(spin_leaf);
	sink_add(i);
}

NOINLINE static void cmd_spin(long ms)
{
	char buf[128];
	long long t0 = now_ns(), end = t0 + ms * 1000000LL, t;
	long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	unsigned long calls = 0;

	COUNT(cmd_spin);
	do {
		for (int i = 0; i < 1024; i++)
			spin_leaf(calls++);
		t = now_ns();
	} while (t < end);
	snprintf(buf, sizeof(buf), "spun calls=%lu ns=%lld cpu_ns=%lld", calls, t - t0,
		 clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
	send_reply(buf);
}

NOINSTR static int slow_started(void)
{
	return slow_entered;
}

NOINLINE static void cmd_slow(long ms)
{
	int ok;

	COUNT(cmd_slow);
	pthread_mutex_lock(&lock);
	slow_entered = 0;
	slow_ms = ms;
	pthread_cond_broadcast(&work_cv);
	wait_done(slow_started, 10);
	ok = slow_entered;
	pthread_mutex_unlock(&lock);
	send_reply(ok ? "slow started" : "error: no worker took the slow request in 10 s");
}

NOINSTR static int slow_ended(void)
{
	return !slow_running;
}

NOINLINE static void cmd_release(void)
{
	int ok, running;

	COUNT(cmd_release);
	pthread_mutex_lock(&lock);
	running = slow_running;
	__atomic_store_n(&slow_release, 1, __ATOMIC_RELEASE);
	wait_done(slow_ended, 10);
	ok = !slow_running;
	pthread_mutex_unlock(&lock);
	send_reply(!running ? "error: no slow request running" :
		   ok ? "released" : "error: the slow request did not return in 10 s");
}

NOINSTR static int pinged(void)
{
	return epoll_pings == pings && pipe_pings == pings;
}

static jmp_buf jump_env;
static volatile int jump_armed = 1; /* always: a path that returns, for the compiler */

NOINLINE static void jump_dive(int depth)
{
	COUNT(jump_dive);
	if (depth == 0 && jump_armed)
		longjmp(jump_env, 1);
	if (depth > 0)
		jump_dive(depth - 1);
	sink_add((unsigned long)depth);
}

NOINLINE static void jump_after(void)
{
	COUNT(jump_after);
	sink_add(1);
}

NOINLINE static void jump_holder(void)
{
	COUNT(jump_holder);
	if (!setjmp(jump_env))
		jump_dive(6);
	jump_after();
}

NOINLINE static void cmd_jump(long n)
{
	char buf[64];

	COUNT(cmd_jump);
	for (long i = 0; i < n; i++)
		jump_holder();
	snprintf(buf, sizeof(buf), "jumped %ld", n);
	send_reply(buf);
}

NOINLINE static void cmd_ping(void)
{
	char buf[64];
	uint64_t one = 1;
	int ok;

	COUNT(cmd_ping);
	pthread_mutex_lock(&lock);
	pings++;
	pthread_mutex_unlock(&lock);
	if (write(event_fd, &one, sizeof(one)) != sizeof(one) || write(pipe_fds[1], "p", 1) != 1)
		die("ping");
	pthread_mutex_lock(&lock);
	wait_done(pinged, 10);
	ok = pinged();
	snprintf(buf, sizeof(buf), ok ? "pong %lu" : "error: ping %lu not handled in 10 s",
		 pings);
	pthread_mutex_unlock(&lock);
	send_reply(buf);
}

NOINLINE static void cmd_stats(void)
{
	char buf[4096];

	COUNT(cmd_stats);
	format_stats(buf, sizeof(buf), "stats");
	send_reply(buf);
}

NOINLINE static void cmd_quit(void)
{
	uint64_t one = 1;

	COUNT(cmd_quit);
	pthread_mutex_lock(&lock);
	__atomic_store_n(&quitting, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&work_cv);
	pthread_mutex_unlock(&lock);
	if (write(event_fd, &one, sizeof(one)) != sizeof(one) || write(pipe_fds[1], "q", 1) != 1)
		die("quit");
	send_reply("bye");
}

NOINSTR static int number(const char *s, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !errno && end != s && !*end && *v >= 0 && *v <= max;
}

/* 1 to go on, 0 after quit. */
NOINLINE static int dispatch(const char *line)
{
	char buf[160];
	long v;

	COUNT(dispatch);
	if (!strncmp(line, "work ", 5) && number(line + 5, 100000000L, &v))
		cmd_work((unsigned long)v);
	else if (!strncmp(line, "spin ", 5) && number(line + 5, 60000L, &v))
		cmd_spin(v);
	else if (!strncmp(line, "slow ", 5) && number(line + 5, 600000L, &v))
		cmd_slow(v);
	else if (!strncmp(line, "jump ", 5) && number(line + 5, 1000000L, &v))
		cmd_jump(v);
	else if (!strcmp(line, "release"))
		cmd_release();
	else if (!strcmp(line, "ping"))
		cmd_ping();
	else if (!strcmp(line, "stats"))
		cmd_stats();
	else if (!strcmp(line, "quit")) {
		cmd_quit();
		return 0;
	} else {
		snprintf(buf, sizeof(buf), "error: unknown command '%.100s'", line);
		send_reply(buf);
	}
	return 1;
}

static char inbuf[4096];
static size_t inlen;

/* The next line of CMD_FIFO into line (NUL-terminated, without '\n'). */
NOINLINE static void read_command(char *line, size_t size)
{
	COUNT(read_command);
	for (;;) {
		char *nl = memchr(inbuf, '\n', inlen);

		if (nl) {
			size_t n = (size_t)(nl - inbuf);

			if (n >= size)
				n = size - 1;
			memcpy(line, inbuf, n);
			line[n] = '\0';
			inlen -= (size_t)(nl + 1 - inbuf);
			memmove(inbuf, nl + 1, inlen);
			return;
		}
		if (inlen == sizeof(inbuf))
			inlen = 0; /* a line too long: dropped */
		ssize_t got = read(fifo_fd, inbuf + inlen, sizeof(inbuf) - inlen);

		if (got < 0) {
			if (errno == EINTR)
				BUMP(eintr_fifo);
			else
				BUMP(anomalies);
			continue;
		}
		inlen += (size_t)got; /* never 0: we hold a writer ourselves */
	}
}

NOINLINE static void *reader_main(void *arg)
{
	char line[256];

	COUNT(reader_main);
	(void)arg;
	block_usr1();
	pthread_barrier_wait(&started);
	do
		read_command(line, sizeof(line));
	while (dispatch(line));
	return NULL;
}

static int main_returns;

/*
 * The test takes status 0 to mean main returned after quit.  Any other
 * exit() (a library's, glibc's when the last thread ends) says so on
 * stderr, which the test requires empty; an exit_group() without exit()
 * leaves no "final" line and no "bye" reply.
 */
NOINSTR static void exit_witness(void)
{
	static const char msg[] = "s-server: exit() called, not main's return after quit\n";

	if (!__atomic_load_n(&main_returns, __ATOMIC_ACQUIRE) && write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
}

int main(int argc, char **argv)
{
	static void *(*const starts[])(void *) = { reader_main, epoll_main, piper_main,
						   sleeper_main };
	pthread_t workers[NWORKERS], others[4];
	struct epoll_event ev = { .events = EPOLLIN };
	struct sigaction sa;
	char buf[4096];

	COUNT(main);
	if (argc != 3) {
		fprintf(stderr, "usage: t-server CMD_FIFO REPLY_FILE\n");
		return 2;
	}
	fifo_fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fifo_fd < 0)
		die(argv[1]);
	reply_fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (reply_fd < 0)
		die(argv[2]);
	event_fd = eventfd(0, EFD_CLOEXEC);
	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (event_fd < 0 || epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, event_fd, &ev))
		die("epoll");
	if (pipe2(pipe_fds, O_CLOEXEC))
		die("pipe");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	if (atexit(exit_witness))
		die("atexit");

	pthread_barrier_init(&started, NULL, 1 + NWORKERS + 4);
	for (int i = 0; i < NWORKERS; i++)
		if (pthread_create(&workers[i], NULL, worker_main, NULL))
			die("pthread_create");
	for (int i = 0; i < 4; i++)
		if (pthread_create(&others[i], NULL, starts[i], NULL))
			die("pthread_create");
	pthread_barrier_wait(&started);
	snprintf(buf, sizeof(buf), "ready %d", (int)getpid());
	send_reply(buf);
	if (printf("server ready\n") < 0 || fflush(stdout))
		return 1;

	for (int i = 0; i < 4; i++)
		pthread_join(others[i], NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(workers[i], NULL);
	format_stats(buf, sizeof(buf), "final");
	__atomic_store_n(&main_returns, 1, __ATOMIC_RELEASE);
	if (printf("%s\n", buf) < 0 || fflush(stdout))
		return 1;
	return 0;
}
