/*
 * arena.c - memory for what a profile is written from: thread states,
 * their shadow stacks, node chunks, the module log.
 *
 * In a preloaded runtime with a watcher (watch.c) these come from one
 * shared anonymous mapping reserved at start-up, so that the watcher, a
 * process cloned from the program, sees them live at the same addresses
 * and can write the profile after the program is killed.  Allocation is a
 * page-granular bump of an atomic offset: no locks, safe in signal
 * handlers.  Freed arena memory is returned to the system (MADV_REMOVE)
 * but its addresses are not reused.
 *
 * When there is no arena (static runtime, watcher disabled) or it is full,
 * memory comes from private mmaps as before, and cp_arena.overflowed tells
 * the watcher that the profile is no longer in memory it can read.
 */
#include <sys/mman.h>

#include "runtime/internal.h"

struct cp_arena cp_arena;

#define PAGE_ROUND(n) (((n) + 4095) & ~(size_t)4095)

static void *map_private(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *cp_arena__alloc(size_t bytes)
{
	bytes = PAGE_ROUND(bytes);
	if (cp_arena.base) {
		uint64_t off = __atomic_fetch_add(&cp_arena.used, bytes, __ATOMIC_RELAXED);

		if (off + bytes <= cp_arena.size)
			return cp_arena.base + off;
		__atomic_store_n(&cp_arena.overflowed, 1, __ATOMIC_RELEASE);
	}
	return map_private(bytes);
}

int cp_arena__contains(const void *p)
{
	const char *c = p;

	return cp_arena.base && c >= cp_arena.base && c < cp_arena.base + cp_arena.size;
}

void cp_arena__free(void *p, size_t bytes)
{
	bytes = PAGE_ROUND(bytes);
	if (cp_arena__contains(p))
		madvise(p, bytes, MADV_REMOVE);
	else
		munmap(p, bytes);
}

/*
 * The program is about to lock all its memory (mlockall): give back the
 * arena's unused address space first, or locking would fill all of it.
 * Some room is kept; beyond it, memory is private (and the watcher off).
 */
void cp_arena__trim(void)
{
	uint64_t used = __atomic_load_n(&cp_arena.used, __ATOMIC_RELAXED);
	uint64_t keep = PAGE_ROUND(used) + (16u << 20);

	if (!cp_arena.base || keep >= cp_arena.size)
		return;
	if (!munmap(cp_arena.base + keep, cp_arena.size - keep))
		cp_arena.size = keep;
}
