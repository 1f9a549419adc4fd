/*
 * attach.c - the runtime's side of `callprof attach PID`
 * (docs/internals/attach.md).
 *
 * The tool loads a fresh copy of this library into a process that runs
 * already, with the process's own dlopen, and then calls
 * callprof_attach_start() on one of its threads.  The copy's constructor
 * must not start a session (the hooks are not ours until the tool points
 * the process's GOT slots at them): the tool marks the copy by patching
 * the last byte of cp_attach_marker in the file it loads.
 *
 * Start takes the settings record would pass in the environment as a block
 * of "NAME=VALUE\0" strings (cp_getenv reads them; the process's own
 * environment is neither read nor changed), starts the session without
 * what only a program's start may do (no signal handler installed, no
 * libcalls), and returns the seed area: there the tool writes, for each
 * thread it stopped, the instrumented calls that were open then (found by
 * unwinding), outermost first.  A thread's first hook after the attach
 * pushes them (cp_attach__seed_thread) as frames whose entry was not seen:
 * not counted as calls but as open_at_start, timed from the attach.
 *
 * A thread that ran no hook in the whole window still has its seeds at the
 * stop, which gives it a tree of them (still_threads), so that a thread
 * blocked in a call throughout is in the profile.
 *
 * Stop writes the profile and ends the session; the watcher ends itself
 * when it sees that.  The library stays loaded, inert (the GOT slots are
 * the C library's again): a thread may still be inside a hook when the
 * tool restores them.  Once none is, the release gives back the session's
 * memory, and the tool unloads the copy (but the first, whose TLS block
 * the later ones borrow).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/internal.h"

#define CP_EXPORT __attribute__((visibility("default"), no_instrument_function))

/* The tool sets the last byte to '1' in the copy it loads (engine/attach-ptrace.c). */
__attribute__((visibility("default"))) const volatile char cp_attach_marker[16] = "CALLPROF-ATTACH0";

struct cp_attach cp_attach;

/* The layout engine/attach-ptrace.c writes and reads (AREA_THREADS, SEED_THREAD). */
_Static_assert(__builtin_offsetof(struct cp_attach_area, t0_tsc) == 24 &&
		       __builtin_offsetof(struct cp_attach_area, nthreads) == 40 &&
		       __builtin_offsetof(struct cp_attach_area, threads) == 48 &&
		       sizeof(struct cp_attach_seed_thread) == 32 &&
		       __builtin_offsetof(struct cp_attach_seed_thread, taken) == 12 &&
		       sizeof(struct cp_attach_seed_frame) == 24 &&
		       __builtin_offsetof(struct cp_attach_area, sleds) ==
			       48 + CP_ATTACH_MAX_THREADS * 32 + CP_ATTACH_MAX_FRAMES * 24,
	       "struct cp_attach_area: the tool's offsets (engine/attach-ptrace.c) must change with it");
/* The sleds' tail, read by index (engine/attach-ptrace.c, enum sleds_info). */
_Static_assert(sizeof(struct cp_attach_sled) == 24 &&
		       __builtin_offsetof(struct cp_attach_sled, call) == 8 &&
		       __builtin_offsetof(struct cp_attach_sled, nop) == 13 &&
		       __builtin_offsetof(struct cp_attach_sleds, near) == 14 * 8 &&
		       __builtin_offsetof(struct cp_attach_sleds, threads) ==
			       (14 + CP_ATTACH_NEAR_MAX) * 8 &&
		       sizeof(struct cp_attach_sleds) == (14 + CP_ATTACH_NEAR_MAX + 16) * 8,
	       "struct cp_attach_sleds: the tool's indices (engine/attach-ptrace.c) must change with it");

/* What the tool calls, by name (not in include/callprof.h: no program calls them). */
CP_EXPORT long callprof_attach_start(const char *block, unsigned long len);
CP_EXPORT long callprof_attach_stop(void);
CP_EXPORT long callprof_attach_release(void);

static char env_block[8192];
static size_t env_len;

int cp_attach__loaded_by_tool(void)
{
	return cp_attach_marker[15] == '1';
}

const char *cp_getenv(const char *name)
{
	size_t len = strlen(name);

	if (!cp_attach.on)
		return cp_env__get(name); /* the environment the process started with (env.c) */
	for (size_t i = 0; i < env_len;) {
		const char *s = env_block + i;
		size_t n = strnlen(s, env_len - i);

		if (n > len && s[len] == '=' && !memcmp(s, name, len))
			return s + len + 1;
		i += n + 1;
	}
	return NULL;
}

/*
 * Start recording in a process the tool attached to: block holds len bytes
 * of "NAME=VALUE\0" settings.  Returns the seed area's address, or -errno.
 */
CP_EXPORT long callprof_attach_start(const char *block, unsigned long len)
{
	struct cp_attach_area *a;
	int err;

	if (!cp_attach__loaded_by_tool() || cp_session.state != CP_STATE_NONE)
		return -EALREADY;
	if (len >= sizeof(env_block))
		return -E2BIG;
	memcpy(env_block, block, len);
	env_block[len] = '\0';
	env_len = len;
	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return -errno;
	a->magic = CP_ATTACH_MAGIC;
	a->max_threads = CP_ATTACH_MAX_THREADS;
	a->max_frames = CP_ATTACH_MAX_FRAMES;
	cp_attach.area = a;
	cp_attach.log = cp_getenv("CALLPROF_ATTACH_LOG");
	cp_attach.on = 1;
	cp_session.attached = 1;
	err = cp_session__init();
	if (err) {
		cp_attach.on = 0;
		return err;
	}
	cp_sleds__publish(&a->sleds);
	return (long)a;
}

static void still_threads(void);

/*
 * End the window: write the profile (unless no instrumented code ran) and
 * end the session.  1 if a profile was written, 0 if there was nothing to
 * write, -errno if it could not be written (the tool says why) or
 * -ESRCH if the session was not on.
 */
CP_EXPORT long callprof_attach_stop(void)
{
	int ran, err;

	if (!cp_attach.on || cp_session.state != CP_STATE_ON)
		return -ESRCH;
	still_threads();
	ran = cp_session__ran_code();
	err = cp_session__finish(0);
	/* Threads that end from now on must not fold into a finished session. */
	if (cp_session.have_key) {
		pthread_key_delete(cp_session.key);
		cp_session.have_key = 0;
	}
	return ran && err < 0 ? err : ran;
}

/*
 * After the stop, with every thread stopped outside this library: give
 * back what keeps costing the process.  The kernel would go on sampling
 * each thread into its ring (perf events live while mapped), so the rings
 * go; so do the threads' trees and saved contexts, the sleds' stub area,
 * plan and near pages, and the arena last (a process attached to a
 * thousand times must not keep a thousand sessions' memory).  What stays
 * is this copy itself, for the tool to unload (engine/attach-ptrace.c).
 * Nothing here takes a lock: the other threads are stopped wherever they
 * were.
 */
long callprof_attach_release(void)
{
	if (!cp_attach.on || cp_session.state != CP_STATE_DONE)
		return -EBUSY;
	for (struct cp_thread *t = cp_session.threads; t; t = t->next) {
		if (t->perf.page) {
			munmap(t->perf.page, t->perf.map_bytes);
			t->perf.page = NULL;
		}
		cp_thread__give_back(t->side);
		cp_thread__give_back(t);
	}
	cp_sleds__release();
	if (cp_attach.area) {
		munmap(cp_attach.area, sizeof(*cp_attach.area));
		cp_attach.area = NULL;
	}
	cp_arena__release();
	return 0;
}

/* Binary search of the tool's table (sorted by tid). */
static struct cp_attach_seed_thread *seeds_of(uint32_t tid)
{
	struct cp_attach_area *a = cp_attach.area;
	uint32_t lo = 0, hi = __atomic_load_n(&a->nthreads, __ATOMIC_ACQUIRE);

	if (hi > a->max_threads)
		return NULL;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a->threads[mid].tid == tid)
			return &a->threads[mid];
		if (a->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Claim s's seeds for taker (enum cp_seed_taken): 1 if they are whole and
 * nobody took them yet.  The thread and the stop may race for a thread
 * that wakes just as the window ends: one of them gets them.
 */
static int claim(const struct cp_attach_area *a, struct cp_attach_seed_thread *s, uint32_t taker)
{
	uint32_t free_ = CP_SEED_FREE;

	if (s->first > a->max_frames || s->nframes > a->max_frames - s->first)
		return 0;
	return __atomic_compare_exchange_n(&s->taken, &free_, taker, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/*
 * Push s's frames on t, timed from the attach.  self: t is the calling
 * thread, at its first call or return since the attach: a sled frame
 * (CP_SP_SLED) whose slot no longer holds its return address has returned
 * unseen meanwhile (no stub saw it), and so have the frames inside it:
 * they are closed at once (open at attach all the same; their return is
 * not a loss), so that the first call goes where it is.
 */
static void push_seeds(struct cp_thread *t, const struct cp_attach_area *a,
		       const struct cp_attach_seed_thread *s, int self)
{
	uint64_t start = cp_session.clock == CP_CLOCK_MONOTONIC ? a->t0_mono_ns : a->t0_tsc;
	uintptr_t gone = 0;

	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct cp_attach_seed_frame *f = &a->frames[s->first + i];
		uintptr_t slot = (f->sp & ~CP_SP_FLAGS) + 16;

		if (self && !gone && (f->sp & CP_SP_SLED) &&
		    *(const volatile uintptr_t *)slot != f->site)
			gone = slot + 8;

		cp_hooks__seed(t, (uintptr_t)f->fn, (uintptr_t)f->site, (uintptr_t)f->sp, start);
		__atomic_fetch_add(&cp_attach.seeded, 1, __ATOMIC_RELAXED);
	}
	if (gone)
		cp_cct__unwind_to(&t->cct, gone, cp_ticks(), cp_hook_mode == CP_MODE_TIMING);
}

/*
 * t's first hook since the attach (cp_thread__setup, before t is published
 * as cp_self: a signal handler's hook meanwhile is dropped, not recorded
 * under no seeds): push the calls it had open then, if the tool found any.
 * Their start is the instant the tool let the threads go on, in this
 * session's ticks.
 */
void cp_attach__seed_thread(struct cp_thread *t)
{
	const struct cp_attach_area *a = cp_attach.area;
	struct cp_attach_seed_thread *s;

	if (a && (s = seeds_of(t->tid)) && claim(a, s, CP_SEED_RAN))
		push_seeds(t, a, s, 1);
}

/*
 * Is thread tid of this process alive?  One that ended in the window
 * without a hook (cancelled in a blocking call) is not a still thread: its
 * time is not known.
 */
static int task_alive(uint32_t tid)
{
	char path[48] = "/proc/self/task/";
	size_t len = strlen(path);

	cp_put_dec(path, sizeof(path), &len, tid);
	return access(path, F_OK) == 0;
}

/*
 * At the stop: the threads that had calls open at attach and ran no hook
 * since (blocked the whole window, in a lock, a read, a sleep; or busy in
 * code that is not instrumented) would be missing from the profile, yet a
 * thread stuck in a call is often what one attaches to find.  Each gets a
 * tree of its own made of its open calls, as its first hook would have
 * made it: open at attach, no calls, timed from the attach to the dump;
 * the dump splits that time into CPU, wait and inactive by the scheduler's
 * counts since the attach (flush.c).  The thread still runs, untouched:
 * only its record is ours.
 */
static void still_threads(void)
{
	const struct cp_attach_area *a = cp_attach.area;
	uint32_t n = a ? __atomic_load_n(&a->nthreads, __ATOMIC_ACQUIRE) : 0;
	uint64_t start;

	if (!a || n > a->max_threads || cp_hook_mode == CP_MODE_COVERAGE)
		return;
	start = cp_session.clock == CP_CLOCK_MONOTONIC ? a->t0_mono_ns : a->t0_tsc;
	for (uint32_t i = 0; i < n; i++) {
		struct cp_attach_seed_thread *s = &cp_attach.area->threads[i];
		struct cp_thread *t;

		if (!s->nframes || !task_alive(s->tid) || !claim(a, s, CP_SEED_STILL))
			continue;
		t = cp_thread__new();
		if (!t) {
			__atomic_fetch_add(&cp_session.threads_lost, 1, __ATOMIC_RELAXED);
			continue;
		}
		t->tid = s->tid;
		t->still = 1;
		t->perf.cpu0_ns = s->run0_ns;
		t->perf.delay0_ns = s->delay0_ns;
		t->start_ticks = start;
		t->cct.top->start = start;
		t->seq = __atomic_fetch_add(&cp_session.nthreads, 1, __ATOMIC_RELAXED);
		if (cp_filter.start)
			cp_hooks__mute_start(t);
		push_seeds(t, a, s, 0);
		cp_thread__register(t);
	}
}

/* A line of the runtime's, in attach mode: to the tool's log, never the program's stderr. */
int cp_attach__log(const char *line, size_t len)
{
	int fd;

	if (!cp_attach.on)
		return -1;
	if (!cp_attach.log)
		return 0;
	/* The tool's own descriptor, /proc/PID/fd/N: a link to follow (nothing on disk). */
	fd = open(cp_attach.log, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		cp_write_all(fd, line, len);
		close(fd);
	}
	return 0;
}
