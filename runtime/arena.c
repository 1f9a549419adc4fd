/*
 * arena.c - memory for what a profile is written from: thread states,
 * their shadow stacks, node chunks, the module log.
 *
 * In a preloaded runtime with a watcher (watch.c) these come from shared
 * anonymous mappings, so that the watcher, a process cloned from the
 * program, sees them live at the same addresses and can write the profile
 * after the program is killed.  The arena is a short list of pieces, taken
 * as the trees grow: the first is small (a trivial program's address space
 * stays small), each next one twice the last, at most a sixteenth of the
 * program's current RLIMIT_AS and, in all, what cp_arena__init allows.  A
 * watcher sees only the pieces there were when it was cloned, so a new
 * piece gets a new watcher (cp_watch__spawn), and an older watcher never
 * writes (watch.c).
 *
 * Allocation is a page-granular bump of an atomic offset in the newest
 * piece: no locks, safe in signal handlers.  A piece starts with its own
 * header (size, used), so one pointer store publishes it; threads that
 * race to add one agree by compare-and-swap on the slot.  Freed arena
 * memory is returned to the system (MADV_REMOVE) but its addresses are not
 * reused.
 *
 * When there is no arena (static runtime, watcher disabled) or no piece can
 * be had, memory comes from private mmaps as before, and cp_arena.overflowed
 * tells the watcher that the profile is no longer in memory it can read.
 * When not even that can be had, the caller degrades (thread.c).
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runtime/internal.h"

struct cp_arena cp_arena;

#define PAGE_ROUND(n) (((n) + 4095) & ~(size_t)4095)
#define PIECE0 (32ull << 20) /* the module log alone takes half (modules.c) */
#define PIECE_MAX (512ull << 20)
#define ARENA_MAX (4ull << 30)

static void *map_private(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct cp_arena_piece *map_piece(uint64_t size)
{
	struct cp_arena_piece *pc = mmap(NULL, size, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (pc == MAP_FAILED)
		return NULL;
	/*
	 * Never in a core dump: the kernel would fault in every page of a
	 * shared mapping to write it out.
	 */
	madvise(pc, size, MADV_DONTDUMP);
	pc->size = size;
	pc->used = 4096; /* the header's page */
	return pc;
}

/*
 * At start-up (watch.c): the first piece.  The arena may take in all a
 * quarter of the machine's memory, at most ARENA_MAX, and at most a
 * quarter of RLIMIT_AS.  -1 if not even the first piece can be had.
 */
int cp_arena__init(void)
{
	uint64_t limit = (uint64_t)sysconf(_SC_PHYS_PAGES) * 4096 / 4;
	struct rlimit rl;

	if (limit > ARENA_MAX)
		limit = ARENA_MAX;
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY && limit > rl.rlim_cur / 4)
		limit = rl.rlim_cur / 4;
	if (limit < PIECE0)
		return -1;
	cp_arena.p[0] = map_piece(PIECE0);
	if (!cp_arena.p[0])
		return -1;
	cp_arena.limit = limit;
	cp_arena.total = PIECE0;
	cp_arena.npieces = 1;
	cp_arena.on = 1;
	return 0;
}

/* Give the arena up (start-up failed after cp_arena__init). */
void cp_arena__release(void)
{
	cp_arena.on = 0;
	for (uint32_t i = 0; i < cp_arena.npieces; i++)
		munmap(cp_arena.p[i], cp_arena.p[i]->size);
	cp_arena.npieces = 0;
}

/*
 * The newest piece (number n - 1) has no room for bytes: add piece n.
 * 1: there is a newer piece to try (ours or another thread's), 0: none.
 */
static int add_piece(uint32_t n, size_t bytes)
{
	struct cp_arena_piece *pc, *expected = NULL;
	uint64_t size = cp_arena.p[n - 1]->size * 2, need = bytes + 4096;
	struct rlimit rl;

	if (n >= CP_ARENA_PIECES)
		return 0;
	if (__atomic_load_n(&cp_arena.p[n], __ATOMIC_ACQUIRE)) {
		/* Another thread's piece, not counted yet: help. */
		__atomic_compare_exchange_n(&cp_arena.npieces, &n, n + 1, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
		return 1;
	}
	if (__atomic_load_n(&cp_arena.closed, __ATOMIC_ACQUIRE))
		return 0;
	/*
	 * Under a seccomp filter no new watcher would see the new piece, and
	 * the one there is would stop: if the program may not write its
	 * profile itself, the watcher must go on seeing all of it.
	 */
	if (!cp_sys__may(CP_SYS_WATCH) && !cp_sys__may(CP_SYS_WRITE))
		return 0;
	if (size > PIECE_MAX)
		size = PIECE_MAX;
	/* Never more than a sixteenth of what the program may still map (not asked under a filter). */
	if (cp_sys__may(CP_SYS_WATCH) && !getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    size > rl.rlim_cur / 16)
		size = rl.rlim_cur / 16;
	if (size < need)
		size = PAGE_ROUND(need);
	if (__atomic_load_n(&cp_arena.total, __ATOMIC_RELAXED) + size > cp_arena.limit)
		return 0;
	pc = map_piece(size);
	if (!pc)
		return 0;
	if (!__atomic_compare_exchange_n(&cp_arena.p[n], &expected, pc, 0, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE)) {
		munmap(pc, size); /* another thread's won */
		__atomic_compare_exchange_n(&cp_arena.npieces, &n, n + 1, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
		return 1;
	}
	__atomic_fetch_add(&cp_arena.total, size, __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&cp_arena.npieces, &n, n + 1, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
	/* The watcher, if there is one yet, does not see the piece: a new one does. */
	if (__atomic_load_n(&cp_session.watcher, __ATOMIC_ACQUIRE) > 0)
		cp_watch__spawn_again();
	return 1;
}

void *cp_arena__alloc(size_t bytes)
{
	bytes = PAGE_ROUND(bytes);
	if (!cp_sys__may(CP_SYS_MEMORY))
		return NULL; /* the program's seccomp filter forbids mmap (seccomp.c) */
	if (__atomic_load_n(&cp_arena.on, __ATOMIC_ACQUIRE)) {
		for (;;) {
			uint32_t n = __atomic_load_n(&cp_arena.npieces, __ATOMIC_ACQUIRE);
			struct cp_arena_piece *pc = cp_arena.p[n - 1];
			uint64_t off = __atomic_fetch_add(&pc->used, bytes, __ATOMIC_RELAXED);

			if (off + bytes <= pc->size)
				return (char *)pc + off;
			if (!add_piece(n, bytes))
				break;
		}
		/* Private memory is out of the watcher's sight: not if it is to write (above). */
		if (!cp_sys__may(CP_SYS_WRITE))
			return NULL;
		__atomic_store_n(&cp_arena.overflowed, 1, __ATOMIC_RELEASE);
	}
	return map_private(bytes);
}

int cp_arena__contains(const void *p)
{
	const char *c = p;
	uint32_t n = __atomic_load_n(&cp_arena.npieces, __ATOMIC_ACQUIRE);

	if (!cp_arena.on)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *b = (const char *)cp_arena.p[i];

		if (c >= b && c < b + cp_arena.p[i]->size)
			return 1;
	}
	return 0;
}

void cp_arena__free(void *p, size_t bytes)
{
	bytes = PAGE_ROUND(bytes);
	if (!cp_sys__may(CP_SYS_MEMORY))
		return; /* kept: the program's seccomp filter forbids giving it back */
	if (cp_arena__contains(p))
		madvise(p, bytes, MADV_REMOVE);
	else
		munmap(p, bytes);
}

/*
 * The program is about to lock all its memory (mlockall): give back the
 * newest piece's unused address space first, or locking would fill all of
 * it.  Some room is kept; beyond it, memory is private (and the watcher off).
 */
void cp_arena__trim(void)
{
	uint32_t n = __atomic_load_n(&cp_arena.npieces, __ATOMIC_ACQUIRE);
	struct cp_arena_piece *pc;
	uint64_t used, keep;

	if (!cp_arena.on)
		return;
	__atomic_store_n(&cp_arena.closed, 1, __ATOMIC_RELEASE);
	pc = cp_arena.p[n - 1];
	used = __atomic_load_n(&pc->used, __ATOMIC_RELAXED);
	keep = PAGE_ROUND(used) + (16u << 20);
	if (keep >= pc->size)
		return;
	if (!munmap((char *)pc + keep, pc->size - keep))
		pc->size = keep;
}

/* What a fork child keeps of the arena besides its contents: the pieces' headers. */
void cp_arena__keep(void (*keep)(const void *p, size_t bytes))
{
	for (uint32_t i = 0; i < cp_arena.npieces; i++)
		keep(cp_arena.p[i], sizeof(*cp_arena.p[i]));
}

/*
 * A fork child: its parent's pieces are out of reach from here; fresh ones
 * at the same places (the caller copies back what it keeps).  -1 on failure.
 */
int cp_arena__remap_fresh(void)
{
	for (uint32_t i = 0; i < cp_arena.npieces; i++) {
		struct cp_arena_piece *pc = cp_arena.p[i];
		uint64_t size = pc->size;

		if (mmap(pc, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED ||
		    madvise(pc, size, MADV_DONTDUMP))
			return -1;
		pc->size = size;
	}
	return 0;
}
