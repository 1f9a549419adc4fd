/*
 * internal.h - private types of the callprof runtime (libcallprof.so/.a).
 *
 * The runtime lives inside the profiled program.  Each thread owns a
 * calling-context tree (cct.h: nodes, child lookup, site records, shadow
 * stack, fold, recycle) in memory nobody else writes; struct cp_thread
 * wraps it with what the core does not know: the session, signals,
 * muting, perf events, the dump.
 *
 * Everything here is built without -finstrument-functions and with hidden
 * visibility; only the hooks and the public API are exported.
 *
 * Abandoned hooks.  A signal can interrupt a hook at any instruction, and
 * its handler can leave by siglongjmp (or end the process): the hook never
 * finishes.  So every update of a thread's state is published in an order
 * after which stopping at any instruction leaves a state that the dump can
 * read and that the unwinding (interpose.c, abandon_below) and later hooks
 * can go on from.  For the tree and the shadow stack cct.h gives the order
 * step by step; the same rule holds for the rest (lines table, saved
 * coroutine frames): whatever is replaced by a bigger copy is filled first
 * and published by one pointer store, the old copy released after (leaked
 * if abandoned), never before.  After a hook was abandoned,
 * cp_thread__repair() (cp_cct__repair) derives again what follows the
 * publishing stores before anything else uses the thread.
 */
#ifndef CP_RUNTIME_INTERNAL_H
#define CP_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "format/format.h"
#include "runtime/cct.h"

#define CP_HIDDEN __attribute__((visibility("hidden")))
#define CP_NOINSTR __attribute__((no_instrument_function))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * The next definition of an interposed symbol, resolved here if start-up
 * has not done it (a call before the constructor, or a symbol only some
 * programs use).  Threads may resolve it at the same time: all store the
 * same value, through atomic accesses, so the race is a defined one.
 */
#define CP_NEXT(slot, name)                                                           \
	({                                                                            \
		__typeof__(slot) next_ = __atomic_load_n(&(slot), __ATOMIC_RELAXED);  \
		if (!next_) {                                                         \
			next_ = (__typeof__(slot))dlsym(RTLD_NEXT, name);             \
			if (!next_)                                                   \
				next_ = (__typeof__(slot))cp_next_loaded(name);       \
			__atomic_store_n(&(slot), next_, __ATOMIC_RELAXED);           \
		}                                                                     \
		next_;                                                                \
	})
/*
 * name where RTLD_NEXT does not look (interpose.c): in a module loaded
 * later with its own scope (a C program's dlopen'ed C++ plugin brings
 * libstdc++ and libgcc_s), or, for a runtime copy that callprof attach
 * dlopen'ed, in the program's global scope.  Never this library's own.
 * NULL if no module defines it.
 */
CP_HIDDEN void *cp_next_loaded(const char *name);

/* Which hooks this runtime library was built with (enum cp_mode). */
extern const uint32_t cp_hook_mode CP_HIDDEN;
/*
 * cpu mode's sampling rate when CALLPROF_SAMPLE does not say: about
 * perf record's 4 kHz, and a prime, so it does not beat with periodic work.
 */
#define CP_CPU_DEFAULT_HZ 3989

/* Coverage mode: a direct-mapped cache of functions already seen. */
#define CP_SEEN_SLOTS 4096
static inline uint32_t cp_seen_slot(uintptr_t fn)
{
	return (uint32_t)((fn >> 4) ^ (fn >> 16)) & (CP_SEEN_SLOTS - 1);
}

/* offcpu.c: a sampled instruction address of a context, and its samples. */
struct cp_line_slot {
	struct cp_node *node; /* the context (never a site record); NULL: free slot */
	uint64_t ip;
	uint64_t count;
};

/*
 * A thread's lines table: open addressing on (node, ip).  Grown by
 * doubling into a new mapping; the old one stays mapped (retired), so the
 * dumping thread, which may be reading it, never touches unmapped memory.
 */
struct cp_lines {
	uint64_t mask;	       /* slots - 1 */
	uint64_t bytes;	       /* size of this mapping */
	struct cp_lines *older; /* retired table */
	uint64_t pad;
	struct cp_line_slot s[];
};

/* A thread's perf events (offcpu.c): their ring and what was learnt from it. */
struct cp_perf {
	struct perf_event_mmap_page *page; /* the ring's control page, NULL if none */
	const uint8_t *data;		   /* the ring's data pages */
	uint64_t mask;			   /* data bytes - 1 */
	uint64_t map_bytes;		   /* size of the mapping */
	uint64_t out_ns;		   /* switched out at (ns), 0 while on the CPU */
	int out_preempt;		   /* that switch-out was a preemption */
	int sampled;			   /* samples are recorded */
	uint64_t switch_lost;		   /* switch records the kernel dropped */
	uint64_t samples, samples_lost;	   /* samples placed / dropped */
	uint64_t period_ns;		   /* sum of the samples' periods */
	uint64_t period;		   /* cpu mode: the fixed sample period (ns) */
	uint64_t last_read;		   /* cpu mode: the task clock at the last sample */
	uint64_t pending_lost;		   /* cpu mode: samples lost since the last one */
	uint64_t last_ip;		   /* cpu mode: the address of the last sample */
	struct cp_node *full_node;	   /* cpu mode: where the ring last filled, until the
					    * next sample (offcpu.c unseen_since_full) */
	struct cp_lines *lines;		   /* (node, ip) -> samples, or NULL */
	uint64_t nlines;		   /* slots used */
	uint64_t cpu0_ns;		   /* the thread's CPU clock at set-up */
	uint64_t delay0_ns;		   /* its run-queue wait at set-up (schedstat), 0 if
					    * unknown: where the dump's split of time it did not
					    * see starts (flush.c late_offcpu) */
	uint64_t mono0_ns;		   /* CLOCK_MONOTONIC at set-up, 0 if unknown */
	uint64_t wait_ns, inactive_ns;	   /* off-CPU time charged since set-up, all nodes
					    * (offcpu.c unseen_offcpu) */
	uint64_t cpu_ns;		   /* its CPU time, once it has ended */
};

/*
 * Muted threads (hooks.c): busy holds CP_MUTED while a thread records
 * nothing, so the fast paths' one test of busy sends every hook to the
 * slow path, which only counts.  Why it is muted:
 */
#define CP_MUTED 2
enum cp_mute_kind {
	CP_MUTE_OUTSIDE_START = 0, /* --start: no start function open */
	CP_MUTE_DEPTH = 1,	   /* below --max-depth */
	CP_MUTE_TREE = 2,	   /* inside an --exclude-tree function */
	CP_MUTE_PAUSED = 3,	   /* began while callprof_pause() held */
	CP_MUTE_KINDS
};

/*
 * What callprof_reset() saw (api.c): per node id below n, the counts of the
 * node then (calls, and ticks with the open calls' time so far), and the
 * thread's calls left unrecorded so far, which the dump and the fold
 * subtract, so a profile counts only what happened after the reset.
 * Written once before it is published; lives in the arena, so a watcher
 * reads it too.
 */
struct cp_base_node {
	uint64_t calls, ticks, wait_ticks, inactive_ticks;
	uint32_t switches_vol, switches_invol;
};
struct cp_base {
	uint64_t bytes;	    /* size of this mapping */
	uint64_t at;	    /* ticks when the reset was made: the root's time starts there */
	uint32_t n;	    /* nodes covered (ids 0 .. n - 1) */
	uint32_t pad;
	uint64_t unrecorded[CP_MUTE_KINDS]; /* the thread's, as in cp_thread */
	struct cp_lines *lines;	/* a copy of the samples' table then (arena), or NULL */
	struct cp_base_node node[];
};

/* n's count minus the baseline's, never below zero. */
static inline uint64_t cp_sub_sat(uint64_t v, uint64_t base)
{
	return v > base ? v - base : 0;
}

struct cp_thread {
	/* hot: touched on every call (the first cache line, asserted below) */
	volatile int busy;	/* inside a hook: re-entry (signals) is ignored */
	uint32_t seq;		/* start order, main thread 0 */
	const volatile uint64_t *sw_head; /* the perf ring's head (offcpu.c), or a constant 0 */
	uint64_t sw_seen;	/* head when the ring was last drained */
	/* The calling-context tree (cct.h); its first fields, top to free_end, are hot. */
	struct cp_cct cct;

	/* cold */
	uint64_t start_ticks;	 /* first event */
	uint64_t end_ticks;	 /* thread exit, 0 while running */
	uint64_t lost_events;	 /* enters/exits dropped (re-entry) */
	uint64_t unpaired_exits; /* exits with no matching frame */
	uint64_t open_frames;	 /* frames closed at exit or dump */
	uint64_t reconciled;	 /* frames closed because control skipped their exit */
	uint64_t lost_signals;	 /* handler runs not recorded (arrived inside a hook) */
	uint32_t tid;		 /* kernel thread id */
	uint32_t flags;		 /* enum cp_thread_flags */
	pthread_t self;		 /* for pthread_getname_np at the dump */
	char name[16];		 /* at set-up, pthread_setname_np and exit */
	char label[64];		 /* callprof_set_thread_name(), "" if none: wins over name */
	struct cp_base *base;	 /* callprof_reset(): the counts to subtract, or NULL */
	uint32_t nthreads;	 /* threads whose calls this tree holds (aggregates: many) */
	struct cp_thread *next_free; /* free list of recycled states */
	struct cp_ctx_slot *ctx;     /* coroutines: saved stacks of suspended contexts */
	/*
	 * Signals that interrupt a hook record into the side tree (hooks.c):
	 * its root's children are contexts of this thread (fn = the node's
	 * address), their children what the handlers called.
	 */
	struct cp_thread *side;	     /* this thread's side tree, or NULL */
	struct cp_thread *owner;     /* for a side tree: its thread */
	const void *ctx_current;     /* the ucontext whose frames are on the stack */
	/* muted (busy == CP_MUTED, see hooks.c) */
	uintptr_t mute_fn;	     /* the call that muted the thread */
	uintptr_t mute_sp;	     /* its frame address (a longjmp above it unmutes) */
	uint64_t mute_depth;	     /* its activations open */
	uint32_t mute_kind;	     /* enum cp_mute_kind */
	uint64_t unrecorded[CP_MUTE_KINDS]; /* calls not recorded, per enum cp_mute_kind */
	int unfiltered;		     /* calibration's private state: no selection applies */
	/*
	 * attach: a thread that ran no hook in the window, its tree made by
	 * the stop from its seeds.  No perf events: its time off CPU comes
	 * from the scheduler's counts since the attach (perf.cpu0_ns and
	 * perf.delay0_ns are the tool's, read then), at the dump (flush.c
	 * late_offcpu).
	 */
	int still;
	struct cp_perf perf;	 /* perf events of the thread: off-CPU time, samples */
	struct cp_thread *next;	 /* registry link, newest first */
	uintptr_t seen[CP_SEEN_SLOTS]; /* coverage mode only: functions recorded */
};
/* What the fast paths read of the thread (busy, sw_*, top, limit) is in one line. */
_Static_assert(__builtin_offsetof(struct cp_thread, sw_seen) + 8 <= 64 &&
		       __builtin_offsetof(struct cp_thread, cct.limit) + 8 <= 64 &&
		       __builtin_offsetof(struct cp_thread, cct.free_end) + 8 <= 64,
	       "struct cp_thread: the hooks' fields left the first cache line");
/* The thread whose tree c is (c is always a thread's: thread.c, the env functions). */
static inline struct cp_thread *cp_thread__of(struct cp_cct *c)
{
	return (struct cp_thread *)((char *)c - __builtin_offsetof(struct cp_thread, cct));
}

/* t's calls of kind k left unrecorded since callprof_reset() (all, without one). */
static inline uint64_t cp_thread__unrecorded(const struct cp_thread *t, int k)
{
	const struct cp_base *b = __atomic_load_n(&t->base, __ATOMIC_ACQUIRE);

	return cp_sub_sat(t->unrecorded[k], b ? b->unrecorded[k] : 0);
}

/*
 * Threads at scale.  The first CP_KEEP_EXITED threads to end keep trees of
 * their own.  After that, an ending thread's tree is added into an
 * aggregate tree for its name (at most CP_MAX_AGGREGATES names; the last
 * takes the rest) and its state is recycled for a new thread, so memory
 * stays bounded by the distinct call paths and the threads alive at once.
 */
#define CP_KEEP_EXITED 256
#define CP_MAX_AGGREGATES 64

/*
 * A suspended coroutine's part of the shadow stack (contexts.c): its open
 * frames, saved when it switched away and put back when it is resumed.
 */
struct cp_ctx_slot {
	const void *uc;		/* its ucontext_t, NULL if the slot is free */
	uint64_t n;		/* frames saved */
	uint64_t cap;		/* frames that fit in f */
	uint64_t suspended;	/* ticks when it switched away */
	struct cp_frame *f;	/* mmap'd */
};
#define CP_CTX_SLOTS 256

/* Global state of the runtime in this process. */
#define CP_STATUS_PATH_MAX 256

struct cp_session {
	int state;		   /* enum cp_state */
	int clock;		   /* enum cp_clock: TSC, TSC_FAST or MONOTONIC */
	uint64_t tsc0;		   /* ticks at start */
	uint64_t mono0_ns;	   /* CLOCK_MONOTONIC at start */
	uint64_t real0_ns;	   /* CLOCK_REALTIME at start */
	pthread_key_t key;	   /* destructor notices thread exit */
	int have_key;		   /* key was created */
	struct cp_thread *threads; /* registry, lock-free push */
	uint32_t nthreads;	   /* threads set up (also next seq) */
	uint32_t threads_lost;	   /* threads we could not set up */
	uint32_t threads_exited;   /* exited threads kept with trees of their own */
	pthread_mutex_t fold_lock; /* folding exited threads, recycling, the dump */
	struct cp_thread *free;	   /* recycled thread states, ready for new threads */
	pthread_mutex_t free_lock; /* the free list's pops and pushes: held for a few
				    * instructions, with every signal blocked */
	struct cp_thread *agg[CP_MAX_AGGREGATES]; /* folded exited threads, per name */
	int forked;		   /* this process is a fork child */
	int owns_out;		   /* writes CALLPROF_OUT itself (not OUT.PID) */
	int api_used;		   /* this process called the API (api.c) */
	struct cp_thread *fork_thread; /* a fork child: the thread that forked, */
	uint64_t fork_depth;	   /* and its frames open then (cp_session__ran_code) */
	int finished;		   /* the profile has been written (or given up) */
	int writing;		   /* cp_session__finish is writing it (finished when done) */
	pid_t pid;		   /* this process (set at start-up and fork; a vfork
				    * child sees its parent's) */
	pid_t ppid;		   /* its parent then */
	int watch_pending;	   /* a watcher is wanted but not started (watch.c) */
	int exec_pending;	   /* an exec is under way: this image's profile is written */
	int switches_wanted;	   /* track wait/inactive time (CALLPROF_OFFCPU) */
	unsigned sample_hz;	   /* CALLPROF_SAMPLE, 0 = no sampling */
	uint32_t offcpu_threads;   /* threads whose switches are tracked */
	uint32_t offcpu_failed;	   /* threads whose tracking could not be set up */
	int offcpu_errno;	   /* why, the first time */
	char out_base[4096];	   /* CALLPROF_OUT made absolute at start-up */
	char out[4096];		   /* where this process writes: base or base.PID */
	uint32_t dumps;		   /* snapshots taken (api.c, watch.c): the N of OUT.dumpN */
	int dump_signal;	   /* CALLPROF_DUMP_ON: a signal asking for a snapshot, 0 if none */
	pid_t watcher;		   /* this process's watcher (watch.c), 0 if none yet */
	char status[CP_STATUS_PATH_MAX]; /* CALLPROF_STATUS, "" if none (session.c) */
	int attached;		   /* started by callprof attach (runtime/attach.c) */
	/*
	 * The command line and executable as they were at start-up, not at the
	 * dump: a program may write its process title over argv (session.c).
	 */
	char *cmdline;		   /* /proc/self/cmdline then (arena memory), or NULL */
	uint64_t cmdline_len;	   /* its bytes */
	char exe[4096];		   /* /proc/self/exe then, "" if unknown */
	int filtered;		   /* a seccomp filter forbade some of our calls (seccomp.c) */
	int handed;		   /* the filter forbids writing the profile: the watcher
				    * writes it once the program has ended (CP_FLUSH_LEFT) */
	int ended;		   /* handed, then how the program ended: 1 normally, 2
				    * abnormally (fatal signal, abort, _exit); 0: killed */
};

/*
 * session.c: the status file of `callprof record` (CALLPROF_STATUS):
 * cp_status__open() is a descriptor on it for the process that owns the
 * output, else -1; cp_status__failed() appends "WHAT ERRNO" to fd (-2: opens
 * and closes it), keeping errno.
 */
CP_HIDDEN int cp_status__open(void);
CP_HIDDEN void cp_status__failed(int fd, const char *what, int err);

enum cp_state {
	CP_STATE_NONE = 0, /* not initialised */
	CP_STATE_INIT,	   /* being initialised */
	CP_STATE_ON,	   /* recording */
	CP_STATE_DONE,	   /* dumped; hooks do nothing */
};

extern struct cp_session cp_session CP_HIDDEN;
extern __thread struct cp_thread *cp_self CP_HIDDEN __attribute__((tls_model("initial-exec")));

/*
 * Pseudo-functions: node "functions" that are not code.  The first page is
 * never mapped, so values below 4096 cannot be function addresses; the dump
 * turns them into flagged node records (format.h, CP_NODE_SIGNAL).
 */
#define CP_FN_PSEUDO_LIMIT 4096u
#define CP_FN_SIGNAL(sig) ((uintptr_t)(sig)) /* a handler of signal sig ran */
/* A named region (callprof_region_begin): ids 0 .. CP_MAX_REGIONS - 1. */
#define CP_FN_REGION_BASE 1024u
#define CP_MAX_REGIONS (CP_FN_PSEUDO_LIMIT - CP_FN_REGION_BASE)
#define CP_FN_REGION(id) ((uintptr_t)CP_FN_REGION_BASE + (id))

/*
 * filter.c: record-time selection (CALLPROF_FILTER, written by `record`).
 * Function ranges are sorted by start; module ranges are few and scanned.
 */
enum cp_filter_flags_rt {
	CP_FF_EXCLUDE = 1 << 0, /* no node: time to the caller, callees under it */
	CP_FF_TREE = 1 << 1,	/* it and everything it calls: not recorded */
	CP_FF_START = 1 << 2,	/* recording happens while one of these is open */
	CP_FF_INCLUDE = 1 << 3, /* named by --include */
};
struct cp_filter_range {
	uint64_t start, end;
	uint32_t flags, pad;
};
#define CP_MAX_MODULE_RANGES 64
#define CP_MAX_FILTER_RULES 64
struct cp_filter {
	int active;		 /* some function may be excluded: classify new contexts */
	int include;		 /* only included (or start) functions get nodes */
	int start;		 /* --start: threads record only inside a start function */
	uint32_t max_depth;	 /* --max-depth, 0 = none */
	uint32_t budget;	 /* --budget in hundredths of a percent, 0 = none */
	uint64_t budget_ticks;	 /* demote a context whose calls average fewer ticks */
	uint64_t budget_at;	 /* the call count at which a context is judged, 0 = never */
	uint32_t demotions;	 /* contexts demoted (atomic) */
	struct cp_filter_range *r; /* function ranges */
	uint64_t nranges, cap;
	struct cp_filter_range mr[CP_MAX_MODULE_RANGES];
	uint32_t nmodule_ranges;
	uint32_t nrules;
	const char *start_text;	 /* --start as given */
	const char *rules[CP_MAX_FILTER_RULES]; /* "KIND FLAGS MATCHED TEXT" */
};
extern struct cp_filter cp_filter CP_HIDDEN;
CP_HIDDEN void cp_filter__init(void);
CP_HIDDEN uint32_t cp_filter__classify(uintptr_t fn);

/* The exit of a start function's outermost frame is recognised by this bit in cp_frame.fn. */
#define CP_FN_START_BIT (1ull << 63)
/*
 * A frame seeded by callprof attach (a call open at the attach, found by
 * unwinding) has this bit in cp_frame.fn: its exit takes the slow path,
 * which checks that it comes from the seeded frame's activation.
 */
#define CP_FN_SEED_BIT (1ull << 62)
extern volatile int cp_paused CP_HIDDEN;
/*
 * control.c: the process gate, one word on a page of its own that a child
 * made without the fork handlers (clone) finds empty.  The hooks record
 * only while CP_GATE_LIVE is set; the entry hook takes the fast path only
 * when the word is exactly CP_GATE_LIVE (not paused).
 */
#define CP_GATE_LIVE 1
#define CP_GATE_PAUSED 2
union cp_gate_page {
	volatile int word;
	char page[4096];
};
extern union cp_gate_page cp_gate_page CP_HIDDEN __attribute__((aligned(4096)));
#define cp_gate (cp_gate_page.word)
/* This process set the runtime up, or is its fork child: its thread states are its own. */
static inline int cp_gate__live(void)
{
	return cp_gate & CP_GATE_LIVE;
}
CP_HIDDEN void cp_gate__open(void);

/*
 * What the runtime does, by the system calls each activity makes
 * (seccomp.c lists them).  A seccomp filter the program installs may forbid
 * some: cp_sys_denied has a bit set for each, published before the filter
 * goes live, and the runtime tests cp_sys__may() before such calls and
 * does without (never in the hooks' fast paths: they make no calls).  The
 * watcher is not under the program's filters (it was started before any,
 * and never after one): cp_watcher_self, its own, lets it do everything.
 * Always 0 in a static runtime (libcallprof.a), which sees no filter.
 */
enum cp_sys_activity {
	CP_SYS_MEMORY,	  /* anonymous memory: states, trees, scratch space */
	CP_SYS_PERF,	  /* a thread's perf event and its ring */
	CP_SYS_THREAD,	  /* a thread's id, name, CPU clock, /proc/self/task files */
	CP_SYS_SIGMASK,	  /* signals blocked around an exited thread's fold */
	CP_SYS_WRITE,	  /* writing a profile, record's status file */
	CP_SYS_WARN,	  /* a line on stderr */
	CP_SYS_RERAISE,	  /* a caught fatal signal: SIG_DFL again and the signal sent again */
	CP_SYS_FORWARD,	  /* --dump-on: the request sent to the watcher */
	CP_SYS_FORK,	  /* the fork handlers (watch.c) */
	CP_SYS_WATCH,	  /* starting a watcher */
	CP_SYS_START,	  /* starting the session */
	CP_SYS_READ_SELF, /* seccomp.c's own copies of the program's filters */
	CP_SYS_PATCH,	  /* sleds: reading a module's sled list, writing its code, the stubs */
	CP_SYS_KINDS
};
extern uint32_t cp_sys_denied CP_HIDDEN;
extern __thread int cp_watcher_self CP_HIDDEN __attribute__((tls_model("initial-exec")));
static inline int cp_sys__may(enum cp_sys_activity a)
{
	return !(__atomic_load_n(&cp_sys_denied, __ATOMIC_RELAXED) & (1u << a)) || cp_watcher_self;
}
/*
 * The same for calls made between cp_sys__begin() (when it returns 1) and
 * cp_sys__end(): a filter being installed waits until no thread is between
 * them (seccomp.c), so a call allowed just before cannot meet it live.
 */
extern uint32_t cp_sys_inflight CP_HIDDEN;
static inline int cp_sys__begin(enum cp_sys_activity a)
{
	if (cp_watcher_self)
		return 1;
	__atomic_fetch_add(&cp_sys_inflight, 1, __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&cp_sys_denied, __ATOMIC_SEQ_CST) & (1u << a)))
		return 1;
	__atomic_fetch_sub(&cp_sys_inflight, 1, __ATOMIC_RELEASE);
	return 0;
}
static inline void cp_sys__end(void)
{
	if (!cp_watcher_self)
		__atomic_fetch_sub(&cp_sys_inflight, 1, __ATOMIC_RELEASE);
}
/*
 * seccomp.c (shared library only): syscall(2) of the program that
 * installs a filter (1 and *ret), and whether an exec must tell the new
 * image that a filter is in force (CALLPROF_SECCOMP).
 */
CP_HIDDEN int cp_seccomp__syscall(long nr, const long *a, long *ret);
CP_HIDDEN int cp_seccomp__known(void);
CP_HIDDEN void cp_seccomp__inherit(const char *mask);
/* interpose.c: the C library's syscall(2) with these six arguments. */
CP_HIDDEN long cp_interpose__real_syscall(long nr, const long *a);
CP_HIDDEN void cp_hooks__mute_start(struct cp_thread *t);
CP_HIDDEN int cp_hooks__after_unwind(struct cp_thread *t, int was, uintptr_t target);
/* The last usable frame index of a stack of cap frames: --max-depth stops short of it. */
static inline uint64_t cp_thread__limit(uint64_t cap)
{
	return cp_filter.max_depth && cp_filter.max_depth < cap - 1 ? cp_filter.max_depth : cap - 1;
}

/*
 * control.c: callprof_pause()/callprof_resume().  While paused, a call
 * that begins is not recorded, nor is anything it calls (the thread is
 * muted until it returns); calls already open go on being timed.
 */
CP_HIDDEN void cp_control__pause(void);
CP_HIDDEN void cp_control__resume(void);

/*
 * api.c: the public API (include/callprof.h) and what the dump needs of it:
 * the names of the named regions (ids below *n), and the snapshot path
 * OUT.dumpN for the next N into path[cap].
 */
CP_HIDDEN const char *cp_api__region_name(uint32_t id);
CP_HIDDEN uint32_t cp_api__nregions(void);
CP_HIDDEN void cp_api__dump_path(const char *base, char *path, size_t cap);
CP_HIDDEN void cp_api__fork_child(void);

/*
 * arena.c: memory a watcher process can read (see arena.c), in pieces
 * taken as needed.  The list lives in the runtime's own data pages, which
 * watch.c shares with the watcher too; each piece starts with its header.
 */
#define CP_ARENA_PIECES 24
struct cp_arena_piece {
	uint64_t size; /* bytes mapped, this header's page included */
	uint64_t used; /* bytes handed out (may run past size: then full) */
};
struct cp_arena {
	int on;		   /* 0: no arena, everything is private */
	int closed;	   /* no more pieces (cp_arena__trim) */
	int overflowed;	   /* something was allocated outside: the watcher cannot write */
	uint32_t npieces;  /* pieces published (release), p[npieces - 1] the newest */
	uint64_t limit;	   /* bytes all pieces may take */
	uint64_t total;	   /* bytes they take */
	struct cp_arena_piece *p[CP_ARENA_PIECES];
};
extern struct cp_arena cp_arena CP_HIDDEN;
CP_HIDDEN int cp_arena__init(void);
CP_HIDDEN void cp_arena__release(void);
CP_HIDDEN void *cp_arena__alloc(size_t bytes);
CP_HIDDEN void cp_arena__free(void *p, size_t bytes);
CP_HIDDEN int cp_arena__contains(const void *p);
CP_HIDDEN void cp_arena__trim(void);
CP_HIDDEN void cp_arena__keep(void (*keep)(const void *p, size_t bytes));
CP_HIDDEN int cp_arena__remap_fresh(void);

/*
 * watch.c (shared library only; stubs in interpose-none.c): a watcher
 * process that writes the profile if the program is killed (SIGKILL).
 */
CP_HIDDEN void cp_watch__init(void);
CP_HIDDEN void cp_watch__spawn(void);
CP_HIDDEN void cp_watch__spawn_again(void);
CP_HIDDEN void cp_watch__fork_prepare(void);
CP_HIDDEN void cp_watch__fork_parent(void);
CP_HIDDEN void cp_watch__fork_child(void);

/*
 * creds.c (shared library only): a process's credentials as
 * /proc/PID/status shows them, and taking them (see creds.c).
 */
#define CP_CREDS_MAX_GROUPS 256
struct cp_creds {
	uint32_t uid[4], gid[4]; /* real, effective, saved, file system */
	uint32_t ngroups;
	uint32_t groups[CP_CREDS_MAX_GROUPS];
	uint64_t cap_inh, cap_prm, cap_eff, cap_amb;
};
/* The credentials of the process whose /proc directory is dirfd: 0 or -errno. */
CP_HIDDEN int cp_creds__read(int dirfd, struct cp_creds *c);
/* Could a process with c not change them itself (all ids equal, no capability)? */
CP_HIDDEN int cp_creds__fixed(const struct cp_creds *c);
/* Take c (this process must be single-threaded); 0 once they are ours, else -errno. */
CP_HIDDEN int cp_creds__become(const struct cp_creds *c);

/* sigqueue value of a snapshot request from `callprof dump` ("CPRD"); cli/cmd-dump.c has it too. */
#define CP_DUMP_REQUEST 0x43505244

/* clock.c */
/*
 * The timestamp.  Ordered TSC reads by default: lfence makes the read wait
 * until every earlier instruction has completed, so work still in flight
 * when a hook runs is charged to the call that issued it, and the hooks'
 * own cost becomes additive, hence compensable.  An unordered rdtsc costs
 * about half as much on call-dense code but lets a read run ahead of
 * in-flight work (measured: up to 30% of a latency-bound function's time
 * moved into its callees); it is available as CALLPROF_CLOCK=tsc-fast.
 * The clock never changes after start-up, so the branches are predicted.
 */
static inline uint64_t cp_ticks(void)
{
	uint32_t lo, hi;

	if (likely(cp_session.clock == CP_CLOCK_TSC)) {
		__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
		return ((uint64_t)hi << 32) | lo;
	} else if (cp_session.clock == CP_CLOCK_TSC_FAST) {
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
}

/* Ticks of a TSC clock (not ns). */
static inline int cp_clock_is_tsc(void)
{
	return cp_session.clock != CP_CLOCK_MONOTONIC;
}

CP_HIDDEN int cp_clock_has_invariant_tsc(void);
CP_HIDDEN uint64_t cp_clock_ns(clockid_t id);
CP_HIDDEN uint64_t cp_clock_ticks_per_sec(uint64_t *elapsed_ns);

/* thread.c */
/*
 * The calling thread's state, set up on its first hook (and, under
 * callprof attach, with the calls it had open pushed): cp_self.  NULL when
 * it cannot be had, or for a hook of a signal handler that interrupted the
 * set-up (its event is counted as lost once the state is there).
 */
CP_HIDDEN struct cp_thread *cp_thread__setup(void);
CP_HIDDEN struct cp_thread *cp_thread__new(void);
/* Publish state from cp_thread__new() in the registry (the dump writes it). */
CP_HIDDEN void cp_thread__register(struct cp_thread *t);
CP_HIDDEN void cp_thread__free(struct cp_thread *t);
/* Give back what t holds, but not t (callprof attach's release). */
CP_HIDDEN void cp_thread__give_back(struct cp_thread *t);
/*
 * cp_cct__child() for t (cct.h); the process's first lookup starts the
 * watcher (thread.c).  A function of its own, not inline: the hooks' fast
 * paths keep their registers (it ends in a jump to cp_cct__child).
 */
CP_HIDDEN struct cp_node *cp_thread__child(struct cp_thread *t, struct cp_node *from, uintptr_t fn,
					   uintptr_t site);
static inline int cp_thread__grow_stack(struct cp_thread *t)
{
	return cp_cct__grow_stack(&t->cct);
}
/* A hook of t was abandoned part-way (interpose.c); runs with busy held. */
static inline void cp_thread__repair(struct cp_thread *t)
{
	cp_cct__repair(&t->cct);
}
/* Close every open frame at now, as if the calls returned then. */
static inline void cp_thread__close_open(struct cp_thread *t, uint64_t now)
{
	t->open_frames += cp_cct__close_open(&t->cct, now);
}
/* Close the frames a jump to stack pointer target abandoned (cp_cct__unwind_to). */
static inline void cp_thread__unwind_to(struct cp_thread *t, uintptr_t target, uint64_t now)
{
	t->reconciled += cp_cct__unwind_to(&t->cct, target, now, cp_hook_mode == CP_MODE_TIMING);
}
CP_HIDDEN void cp_thread__exited(void *arg);
CP_HIDDEN void cp_thread__reset_after_fork(struct cp_thread *t);
CP_HIDDEN void cp_thread__fold_lock(void);
CP_HIDDEN int cp_thread__fold_trylock(void);
CP_HIDDEN void cp_thread__fold_unlock(void);
CP_HIDDEN void cp_thread__keep(struct cp_thread *t, void (*keep)(const void *p, size_t bytes));

/* hooks.c: a "<signal N>" pseudo-frame around a signal handler. */
CP_HIDDEN uint64_t cp_hooks__signal_enter(int sig, uintptr_t sp, struct cp_thread **owner);
CP_HIDDEN void cp_hooks__signal_leave(int sig, uint64_t depth, struct cp_thread *owner);

/* signals.c (shared library only; a no-op in static links) */
CP_HIDDEN void cp_signals__init(void);
/* A filter forbids sending a caught fatal signal again: the catchers go (seccomp.c). */
CP_HIDDEN void cp_signals__give_back(void);

/* session.c */
CP_HIDDEN int cp_session__init(void);
CP_HIDDEN int cp_session__ran_code(void);
CP_HIDDEN void cp_session__before_exec(unsigned n);
/* Write the profile once (see session.c): 0, or the write's -errno. */
CP_HIDDEN int cp_session__finish(int dying);
/*
 * A filter forbids the memory calls recording needs: stop for good, the
 * profile left as it stands for whoever may write it (seccomp.c).
 */
CP_HIDDEN void cp_session__stop(void);
/* What a fork child keeps of the session's memory in the arena (watch.c). */
CP_HIDDEN void cp_session__keep(void (*keep)(const void *p, size_t bytes));
CP_HIDDEN void cp_warn_once(const char *msg);
CP_HIDDEN void cp_warn(const char *msg);
/*
 * The process's own /proc files, asked through the calling thread
 * (/proc/thread-self/FILE): /proc/self is the thread group's leader, whose
 * exe, cmdline and mem are gone once it ended by pthread_exit while the
 * other threads run on.  open(2)'s result, or the link's length (-1, and
 * BUF "", when unreadable).
 */
CP_HIDDEN int cp_self_open(const char *file, int flags);
CP_HIDDEN ssize_t cp_self_exe(char *buf, size_t size);

/* calibrate.c: hook cost per call in the caller's / the callee's interval. */
struct cp_calibration {
	uint64_t outside; /* ticks per call outside the callee's interval */
	uint64_t inside;  /* ticks per call inside it */
	uint64_t spread;  /* max - min of outside over the rounds */
	uint64_t untimed; /* ticks per count-only call (--budget), all in the caller */
};
CP_HIDDEN int cp_calibrate(struct cp_calibration *cal);

/* offcpu.c: context switches and samples of each thread, from perf events. */
extern const volatile uint64_t cp_offcpu_still CP_HIDDEN;
CP_HIDDEN void cp_offcpu__init(void);
CP_HIDDEN void cp_offcpu__thread_start(struct cp_thread *t);
CP_HIDDEN void cp_offcpu__thread_end(struct cp_thread *t);
CP_HIDDEN void cp_offcpu__after_fork(struct cp_thread *t);
CP_HIDDEN void cp_offcpu__drain(struct cp_thread *t);
CP_HIDDEN void cp_offcpu__add_line(struct cp_perf *p, struct cp_node *n, uint64_t ip,
				   uint64_t count);
CP_HIDDEN void cp_offcpu__clear_lines(struct cp_perf *p);
/* A copy of table l from the arena (for a reset's baseline), NULL without memory. */
CP_HIDDEN struct cp_lines *cp_offcpu__copy_lines(const struct cp_lines *l);
/* Samples of (n, ip) in table l (a baseline), 0 if none or no table. */
CP_HIDDEN uint64_t cp_offcpu__line_count(const struct cp_lines *l, const struct cp_node *n,
					 uint64_t ip);
CP_HIDDEN void cp_offcpu__free_lines(struct cp_perf *p);
/* Off-CPU records waiting: charge them to the innermost call (busy held). */
static inline void cp_offcpu__check(struct cp_thread *t)
{
	if (unlikely(*t->sw_head != t->sw_seen))
		cp_offcpu__drain(t);
}
/* The same, at the exit of the innermost call, whose time ended at end_ticks. */
CP_HIDDEN void cp_offcpu__drain_at(struct cp_thread *t, uint64_t end_ticks);
static inline void cp_offcpu__check_at(struct cp_thread *t, uint64_t end_ticks)
{
	if (unlikely(*t->sw_head != t->sw_seen))
		cp_offcpu__drain_at(t, end_ticks);
}
CP_HIDDEN uint64_t cp_offcpu__thread_cpu_ns(uint32_t tid);
/*
 * What the scheduler says of a live thread (of process pid, 0: ours), in
 * ns since it began: *run on a CPU, *delay runnable but waiting for one
 * (/proc/.../schedstat, "RUN DELAY SLICES").  -1 where the kernel does not
 * say (no CONFIG_SCHED_INFO, the thread is gone).  flush.c.
 */
CP_HIDDEN int cp_schedstat(pid_t pid, uint32_t tid, uint64_t *run, uint64_t *delay);
/* t's CPU clock and run-queue wait now, where its off-CPU accounting starts. */
CP_HIDDEN void cp_offcpu__baseline(struct cp_thread *t);
/* CPU time t used since its set-up, given its CPU clock now_ns. */
static inline uint64_t cp_offcpu__cpu_since_start(const struct cp_thread *t, uint64_t now_ns)
{
	return now_ns > t->perf.cpu0_ns ? now_ns - t->perf.cpu0_ns : 0;
}

/* interpose.c (shared library only; a weak no-op stands in for static links) */
CP_HIDDEN void cp_interpose__init(void);

/*
 * guard.c (shared library only): the runtime's memory is its own.  Is the
 * caller (a return address) the runtime's own code?  syscall(2) of the
 * program: 1 and *ret if nr was a call on memory that guard.c handled.
 */
CP_HIDDEN int cp_guard__from_runtime(const void *ret);
CP_HIDDEN int cp_guard__syscall(long nr, const long *a, long *ret);

/*
 * libcalls.c (shared library only; no-ops in interpose-none.c): calls from
 * instrumented code into uninstrumented libraries, through per-slot
 * trampolines (CALLPROF_LIBCALLS=1).  abandon_below: control went to the
 * frame whose stack pointer is target (longjmp, catch); the library calls
 * below it are over.
 */
CP_HIDDEN void cp_libcalls__init(void);
CP_HIDDEN void cp_libcalls__abandon_below(uintptr_t target);

/* flush.c */
/*
 * How the profile is written: CP_FLUSH_NORMAL; CP_FLUSH_DYING, the process
 * is ending abnormally (fatal signal, abort, _exit): skip what may not be
 * safe then (the loader's module list, waiting for locks); CP_FLUSH_KILLED,
 * by the watcher after the program was killed: the memory is the dead
 * program's, nothing of the process may be asked (/proc/self is the
 * watcher's).
 */
/*
 * CP_FLUSH_SNAPSHOT: callprof_dump() from a program thread, mid-run: like
 * NORMAL, but not the end (a private writer, no warning on failure: the
 * caller gets the error).  CP_FLUSH_WATCH: the watcher, for a program that
 * runs on (callprof dump, record --dump-on): reads the shared memory and
 * writes nothing into it, takes none of the program's locks, asks /proc
 * about the program's pid.
 */
enum {
	CP_FLUSH_NORMAL = 0,
	CP_FLUSH_DYING = 1,
	CP_FLUSH_KILLED = 2,
	CP_FLUSH_SNAPSHOT = 3,
	CP_FLUSH_WATCH = 4,
	CP_FLUSH_LEFT = 5, /* by the watcher, as KILLED, for a program that ended
			    * without writing it: its seccomp filter forbade that */
};
CP_HIDDEN int cp_flush(const char *path, int how);

/* modules.c: snapshot of loaded ELF objects, written as MODULES + MAPS. */
CP_HIDDEN int cp_modules__write(struct cp_writer *w);
CP_HIDDEN void cp_modules__refresh(int dying);
CP_HIDDEN void cp_modules__refresh_for_dump(int dying);
CP_HIDDEN void cp_modules__lock(void);
CP_HIDDEN void cp_modules__unlock(void);
CP_HIDDEN void cp_modules__keep(void (*keep)(const void *p, size_t bytes));
CP_HIDDEN void cp_modules__reset_lock(void);

/*
 * attach.c: the runtime in a process `callprof attach` loaded it into.
 * The tool writes the seed area (struct cp_attach_area) through
 * /proc/PID/mem while the threads are stopped: its layout is shared with
 * engine/attach-ptrace.c, which checks magic.
 */
#define CP_ATTACH_MAGIC 0x3248434154545043ull /* "CPTTACH2" */
#define CP_ATTACH_MAX_THREADS 8192
#define CP_ATTACH_MAX_FRAMES 131072
struct cp_attach_seed_frame {
	uint64_t fn;   /* function entry, as the enter hook gets it */
	uint64_t site; /* return address into its caller */
	uint64_t sp;   /* its hook frame's address, near enough (cp_frame.sp) */
};
struct cp_attach_seed_thread {
	uint32_t tid;
	uint32_t nframes; /* open instrumented calls, outermost first */
	uint32_t first;	  /* index of the outermost in frames[] */
	uint32_t taken;	  /* enum cp_seed_taken, claimed by the runtime */
	uint64_t run0_ns, delay0_ns; /* its schedstat at attach: CPU time, run-queue wait */
};
/*
 * Who took a thread's seeds: the thread itself, at its first hook in the
 * window, or the stop, for a thread that ran no hook in the whole window
 * (blocked, or busy in code that is not instrumented): the stop gives it a
 * tree of its open calls, timed from the attach (attach.c).  The tool reads
 * this back to say how many there were.
 */
enum cp_seed_taken {
	CP_SEED_FREE = 0,
	CP_SEED_RAN = 1,
	CP_SEED_STILL = 2,
};
/*
 * A sled the tool is to patch (callprof attach): the runtime plans, the
 * tool writes, with every thread held (docs/internals/attach.md, "Sleds").
 */
struct cp_attach_sled {
	uint64_t addr;	  /* the sled's first byte */
	uint8_t call[5];  /* what to write: the call of the entry (or its near page) */
	uint8_t nop[5];	  /* what is there: written back at the end */
	uint8_t pad[6];
};
#define CP_ATTACH_NEAR_MAX 64
/*
 * What the tool needs to patch sleds and to give their return addresses
 * back, filled by the start (sleds.c, cp_sleds__publish): the plan, the
 * ranges that are our code, the stub geometry and the shadow stacks'
 * layout, every number from the runtime's own definitions (the tool never
 * copies one).  All uint64_t: the tool reads it by index (attach.c asserts).
 */
struct cp_attach_sleds {
	uint64_t plan;	       /* struct cp_attach_sled[count], sorted by addr; 0: none */
	uint64_t count;
	uint64_t modules;      /* modules with sleds planned */
	uint64_t foreign;      /* sleds holding a call already (another copy's, another tool's) */
	uint64_t skipped;      /* neither a known NOP form nor a call, or outside the code */
	uint64_t stubs_rx;     /* the stub area (executable alias); 0: not mapped */
	uint64_t stubs_bytes;  /* its size */
	uint64_t stubs_used;   /* address of cp_stubs.used (bytes handed out, the pad first) */
	uint64_t stub_size;    /* a stub's size */
	uint64_t stub_first;   /* the first stub's offset in the area */
	uint64_t stub_slot;    /* a slot holding a stub holds stub + this */
	uint64_t stub_target;  /* the real return address is at stub + this */
	uint64_t page;	       /* the page size (writes of sleds go page by page) */
	uint64_t nnear;	       /* thunk areas: near[2 i] their start, near[2 i + 1] their bytes */
	uint64_t near[CP_ATTACH_NEAR_MAX];
	uint64_t threads;      /* &cp_session.threads: the registry's head */
	uint64_t th_next, th_side, th_tid, th_top, th_stack, th_busy, th_mute_sp; /* offsetof */
	uint64_t stack_f;      /* offsetof(struct cp_stack, f) */
	uint64_t frame_size;   /* sizeof(struct cp_frame) */
	uint64_t frame_sp;     /* offsetof(struct cp_frame, sp) */
	uint64_t sp_sled, sp_hooked, sp_flags; /* CP_SP_SLED, CP_SP_HOOKED, CP_SP_FLAGS */
	uint64_t slot_at;      /* a sled frame's slot: (sp & ~sp_flags) + this */
	uint64_t muted;	       /* busy of a muted thread (CP_MUTED) */
};
struct cp_attach_area {
	uint64_t magic;
	uint64_t max_threads, max_frames;
	uint64_t t0_tsc, t0_mono_ns; /* when the threads went on */
	uint32_t nthreads;	     /* entries of threads[], sorted by tid; stored last */
	uint32_t pad;
	struct cp_attach_seed_thread threads[CP_ATTACH_MAX_THREADS];
	struct cp_attach_seed_frame frames[CP_ATTACH_MAX_FRAMES];
	struct cp_attach_sleds sleds; /* after frames[]: where max_threads, max_frames say */
};
struct cp_attach {
	int on;			    /* started by callprof_attach_start */
	struct cp_attach_area *area; /* seeds, or NULL */
	const char *log;	    /* where warnings go (CALLPROF_ATTACH_LOG), or NULL */
	uint64_t seeded;	    /* frames pushed from seeds */
};
extern struct cp_attach cp_attach CP_HIDDEN;
CP_HIDDEN int cp_attach__loaded_by_tool(void);
/*
 * The runtime's setting name: as the process was started with it (env.c),
 * or in attach mode the tool's (the process's environment is not ours).
 */
CP_HIDDEN const char *cp_getenv(const char *name);
/*
 * env.c: the runtime's variables (CALLPROF_*, LD_PRELOAD, LD_BIND_NOW) of
 * the initial environment, copied once: cp_env__snapshot() takes the copy
 * (the constructor, or the first reader), cp_env__get() reads one,
 * cp_env__each() calls fn with each "NAME=VALUE".
 */
CP_HIDDEN void cp_env__snapshot(void);
CP_HIDDEN const char *cp_env__get(const char *name);
CP_HIDDEN void cp_env__each(void (*fn)(const char *var, void *arg), void *arg);
CP_HIDDEN void cp_attach__seed_thread(struct cp_thread *t);
/* In attach mode: a warning line goes to the tool's log (0), never to stderr; -1 otherwise. */
CP_HIDDEN int cp_attach__log(const char *line, size_t len);
/* hooks.c: enter fn as a call open at the attach (not counted; open_at_start). */
CP_HIDDEN void cp_hooks__seed(struct cp_thread *t, uintptr_t fn, uintptr_t site, uintptr_t sp,
			      uint64_t start);

/*
 * sleds.c: patchable-entry sleds (-fpatchable-function-entry=5,0), patched
 * into jumps to per-function thunks at start and after every dlopen; the
 * stubs that call a recorded function's body and return for it
 * (docs/internals/sleds.md).
 *
 * A sled frame on the shadow stack has sp = its return-address slot - 16
 * (the relation a hook's frame address has to its caller's stack pointer,
 * so longjmp's unwind_to judges both alike) and CP_SP_SLED, with
 * CP_SP_HOOKED set while the slot holds a stub.
 */
#define CP_SP_HOOKED ((uintptr_t)1)
#define CP_SP_UNHOOKED_NOW ((uintptr_t)2) /* given back for an unwinder, to hook again after */
#define CP_SP_SLED ((uintptr_t)4)	  /* a sled's frame (sp: its slot - 16, 8-aligned) */
#define CP_SP_FLAGS ((uintptr_t)7)
/*
 * The stub area: one 64-byte stub per (return address R, body F) pair
 * (sleds.c has the layout).  The thunk jumps to stub + CP_STUB_GO, which
 * calls F; while the call runs its slot holds stub + CP_STUB_RET; R is at
 * stub + CP_STUB_R.  The engine of callprof attach reads these from the
 * attach area, never hand-copied.
 */
#define CP_STUB_SIZE 64
#define CP_STUB_GO 1
#define CP_STUB_RET 7
#define CP_STUB_F 48
#define CP_STUB_R 56
struct cp_stub_area {
	uintptr_t rx;	/* executable alias, 0 before any stub */
	uintptr_t rw;	/* writable alias (the same pages) */
	uint64_t used;	/* bytes handed out (release-stored), the first stub's worth a jump pad */
	uint64_t bytes; /* size of both mappings */
};
extern struct cp_stub_area cp_stubs CP_HIDDEN;
/* Is a return address a stub's return point (a slot value of ours)? */
static inline int cp_stubs__is(uintptr_t a)
{
	uintptr_t d = a - cp_stubs.rx;

	return d < __atomic_load_n(&cp_stubs.used, __ATOMIC_ACQUIRE) && d >= CP_STUB_SIZE &&
	       (d & (CP_STUB_SIZE - 1)) == CP_STUB_RET;
}
/* The real return address a stub's slot value stands for. */
static inline uintptr_t cp_stubs__target(uintptr_t a)
{
	uintptr_t r;

	__builtin_memcpy(&r, (const void *)(a - CP_STUB_RET + CP_STUB_R), sizeof(r));
	return r;
}
/*
 * The stub for a call of body f returning to r, made on first sight; 0 if
 * none can be.  f 0: a stub only returned through (a live frame hooked
 * again), never jumped to.  Returns the stub's start (+ CP_STUB_GO: go,
 * + CP_STUB_RET: the slot value).
 */
CP_HIDDEN uintptr_t cp_stubs__get(uintptr_t r, uintptr_t f);
/* Patch every module's sleds not patched yet (start, after dlopen); warns once on trouble. */
CP_HIDDEN void cp_sleds__patch_new(void);
/*
 * A CPU sample's ip, with one in a thunk or a stub moved into the runtime's
 * own code (the entry or exit trampoline): those samples are the
 * profiler's share, as the report counts samples in libcallprof, not the
 * program's function on top of the shadow stack.
 */
CP_HIDDEN uintptr_t cp_sleds__sample_ip(uintptr_t ip);
/* Does [lo, hi) hold code of a module whose sleds are patched (libcalls: instrumented)? */
CP_HIDDEN int cp_sleds__covers(uintptr_t lo, uintptr_t hi);
/* Sleds are patched in this process (the stub area may not be mapped yet). */
CP_HIDDEN int cp_sleds__on(void);
/* At start: patch what is loaded, unless refused (CET shadow stack). */
CP_HIDDEN void cp_sleds__init(void);
/* A module is gone (dlclose): forget it was patched, keep its thunk pages. */
CP_HIDDEN void cp_sleds__forget_gone(void);
/* Fork child: private stub pages (a new memfd), the lock free. */
CP_HIDDEN void cp_sleds__fork_child(void);
/*
 * callprof attach's start: find every loaded module's sleds and plan what
 * to write in each (nothing is written: the tool writes, every thread
 * held); maps the stub area and near pages.  Then the plan, our code's
 * ranges and the layouts into *out.  Quiet no-op under CET or with
 * CALLPROF_NO_SLEDS.
 */
CP_HIDDEN void cp_sleds__plan_attach(void);
CP_HIDDEN void cp_sleds__publish(struct cp_attach_sleds *out);
/* Every patched sled back to its NOPs (attach's end).  Returns the sleds restored. */
CP_HIDDEN uint64_t cp_sleds__unpatch_all(void);
/*
 * attach's release: unmap the stub area, its table, the near pages, the
 * plan and the module table, and close what was opened to write code.
 * Only when no thread is in our code and no return address on any stack
 * points at a stub (the tool checked): nothing reads them again.
 */
CP_HIDDEN void cp_sleds__release(void);
/*
 * Put the real return address back into every slot of t's stack that holds
 * a stub (t stopped, or t the caller), and mark those frames not hooked; with
 * again, mark them to be hooked again by cp_sleds__rehook.  Returns slots restored.
 */
CP_HIDDEN uint64_t cp_sleds__give_back(struct cp_thread *t, int again);
/* Every known thread's slots (attach's end: the threads stopped). */
CP_HIDDEN uint64_t cp_sleds__give_back_all(void);
/* Hook again the frames give_back(t, 1) marked; and, live, those at or above sp (a catch). */
CP_HIDDEN void cp_sleds__rehook(struct cp_thread *t, uintptr_t live_from);
/* Counts for the log and the profile. */
struct cp_sled_stats {
	uint64_t modules, patched, skipped, lost_returns, no_stub;
};
extern struct cp_sled_stats cp_sled_stats CP_HIDDEN;
/* hooks.c: the trampolines' C halves. */
struct cp_sled_go {
	uintptr_t target; /* where the thunk jumps: the body, or a stub's go */
	uintptr_t pop;	  /* 1: R comes off the stack first (the stub calls the body) */
};
CP_HIDDEN struct cp_sled_go cp_sled__enter(uintptr_t body, uintptr_t *slot, uintptr_t back);
CP_HIDDEN void cp_sled__exit(uintptr_t *slot);
/*
 * Their fast paths (hooks.c: assembly; in the timing and coverage modes
 * a jump to the full path).  Jumped to by the thunks and stubs only, never
 * called: not functions, their addresses go into the thunks' head and the
 * stubs' pad.
 */
extern char cp_sled__enter_fast[] CP_HIDDEN;
extern char cp_sled__enter_fast_endbr[] CP_HIDDEN;
extern char cp_sled__exit_fast[] CP_HIDDEN;

#endif /* CP_RUNTIME_INTERNAL_H */
