/*
 * guard.c - the runtime's memory is its own: a program that takes away
 * memory it did not create does not take the runtime's.
 *
 * A program may walk /proc/self/maps and unmap, write-protect or discard
 * the shared mappings it finds there (memory it believes it inherited), or
 * move them.  Without callprof it finds none; with it, it finds the
 * runtime's: its own data pages (shared with the watcher), the arena's
 * pieces and the threads' perf rings, which the hooks write on every call,
 * and in a sleds build the return stubs, which every recorded call runs.
 * Taking them away made the next hook crash the program.
 *
 * So munmap, mprotect, pkey_mprotect, madvise, mremap and MAP_FIXED mmaps
 * (and the same through syscall(2), see interpose.c) are interposed: the
 * part of the range that is the runtime's is left as it is and the rest
 * gets what the program asked for.  To the program the runtime's memory is
 * a place where nothing of its own is mapped:
 *
 *  - munmap succeeds, as it does where nothing is mapped;
 *  - mprotect, pkey_mprotect and madvise succeed: the program made what it
 *    found there as it wanted, as far as it can tell (advice that changes
 *    nothing of the contents, MADV_WILLNEED or MADV_COLD, is given as asked);
 *  - mremap of the runtime's memory fails with EFAULT (nothing of the
 *    program's is there to move), and an mremap or a MAP_FIXED mmap whose
 *    new place would replace the runtime's fails with ENOMEM, as when the
 *    kernel finds no room: the program would otherwise write its data into
 *    the runtime's (and the runtime its into the program's).
 *
 * The runtime's own calls (its return address in our code) go straight to
 * the C library.  Memory the runtime keeps privately (hash tables, a
 * dump's scratch space) is anonymous private memory like the program's
 * heap: a program that frees what it did not allocate there breaks its C
 * library as well.  A static runtime (libcallprof.a) cannot interpose, nor
 * can anyone see a system call made without the C library (inline
 * assembly): docs/limitations.md.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/internal.h"

#define PAGE_MASK 4095ul

/*
 * The runtime's own image, its PT_LOAD segments, read from our own ELF
 * header (the linker's __ehdr_start): no call, no lock, as the interposers
 * may run anywhere (inside a malloc that holds its lock while the loader
 * holds its own, where dl_iterate_phdr would wait for ever).
 */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

#define IMAGE_SEGMENTS 8
static struct {
	int n;
	uintptr_t start[IMAGE_SEGMENTS], end[IMAGE_SEGMENTS];
} image;

static void image__find(void)
{
	uintptr_t base = (uintptr_t)&__ehdr_start;
	/* Through an integer: the headers lie beyond the one object the linker names. */
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	int n = 0;

	if (__atomic_load_n(&image.n, __ATOMIC_ACQUIRE))
		return;
	for (int i = 0; i < eh->e_phnum && n < IMAGE_SEGMENTS; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		image.start[n] = (base + ph[i].p_vaddr) & ~PAGE_MASK;
		image.end[n] = (base + ph[i].p_vaddr + ph[i].p_memsz + PAGE_MASK) & ~PAGE_MASK;
		n++;
	}
	__atomic_store_n(&image.n, n, __ATOMIC_RELEASE);
}

/* Is the call from the runtime's own code (caller's return address)? */
int cp_guard__from_runtime(const void *ret)
{
	uintptr_t a = (uintptr_t)ret;
	int n;

	image__find();
	n = __atomic_load_n(&image.n, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (a >= image.start[i] && a < image.end[i])
			return 1;
	return 0;
}

/* Keep [s, e) as the lowest range of ours that meets [lo, hi) so far. */
static void consider(uintptr_t s, uintptr_t e, uintptr_t lo, uintptr_t hi, uintptr_t *bs,
		     uintptr_t *be)
{
	if (s >= e || e <= lo || s >= hi)
		return;
	if (s < lo)
		s = lo;
	if (e > hi)
		e = hi;
	if (!*be || s < *bs) {
		*bs = s;
		*be = e;
	}
}

/*
 * The lowest part of the runtime's memory within [lo, hi): 1 and *s, *e,
 * or 0 if none.  The image, the arena's pieces, the threads' perf rings,
 * the sleds' stubs.
 */
static int next_ours(uintptr_t lo, uintptr_t hi, uintptr_t *s, uintptr_t *e)
{
	uint32_t np = __atomic_load_n(&cp_arena.npieces, __ATOMIC_ACQUIRE);
	uintptr_t rx = __atomic_load_n(&cp_stubs.rx, __ATOMIC_ACQUIRE);

	*s = *e = 0;
	image__find();
	for (int i = 0; i < __atomic_load_n(&image.n, __ATOMIC_ACQUIRE); i++)
		consider(image.start[i], image.end[i], lo, hi, s, e);
	for (uint32_t i = 0; cp_arena.on && i < np && i < CP_ARENA_PIECES; i++) {
		const struct cp_arena_piece *pc = __atomic_load_n(&cp_arena.p[i], __ATOMIC_ACQUIRE);

		if (pc)
			consider((uintptr_t)pc, (uintptr_t)pc + pc->size, lo, hi, s, e);
	}
	for (struct cp_thread *t = __atomic_load_n(&cp_session.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		const void *ring = __atomic_load_n(&t->perf.page, __ATOMIC_ACQUIRE);

		if (ring)
			consider((uintptr_t)ring, (uintptr_t)ring + t->perf.map_bytes, lo, hi, s, e);
	}
	/* The sleds' return stubs: both aliases of their memfd (sleds.c). */
	if (rx) {
		consider(rx, rx + cp_stubs.bytes, lo, hi, s, e);
		consider(cp_stubs.rw, cp_stubs.rw + cp_stubs.bytes, lo, hi, s, e);
	}
	return *e != 0;
}

/* Does [p, p + len) meet the runtime's memory? */
static int meets_ours(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + ((len + PAGE_MASK) & ~PAGE_MASK), s, e;

	return len && hi > lo && next_ours(lo, hi, &s, &e);
}

/*
 * Apply op to the parts of [p, p + len) that are not the runtime's: the
 * first failure's result, else 0.  A range the kernel would refuse as it
 * is (unaligned, wrapping) goes to op whole, for the kernel to refuse.
 */
static long apart(const void *p, size_t len, long (*op)(uintptr_t, size_t, const long *),
		  const long *args)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + ((len + PAGE_MASK) & ~PAGE_MASK), s, e;
	long ret = 0, r;

	if ((lo & PAGE_MASK) || hi < lo || !len)
		return op(lo, len, args);
	while (lo < hi) {
		if (!next_ours(lo, hi, &s, &e)) {
			r = op(lo, hi - lo, args);
			return ret ? ret : r;
		}
		if (s > lo && (r = op(lo, s - lo, args)) && !ret)
			ret = r;
		lo = e;
	}
	return ret;
}

/* ---- the real calls ---- */

typedef int (*munmap_fn)(void *, size_t);
typedef int (*mprotect_fn)(void *, size_t, int);
typedef int (*pkey_mprotect_fn)(void *, size_t, int, int);
typedef int (*madvise_fn)(void *, size_t, int);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static munmap_fn real_munmap;
static mprotect_fn real_mprotect;
static pkey_mprotect_fn real_pkey_mprotect;
static madvise_fn real_madvise;
static mremap_fn real_mremap;
static mmap_fn real_mmap, real_mmap64;

static long op_munmap(uintptr_t p, size_t len, const long *a)
{
	return CP_NEXT(real_munmap, "munmap")((void *)p, len);
}

static long op_mprotect(uintptr_t p, size_t len, const long *a)
{
	return CP_NEXT(real_mprotect, "mprotect")((void *)p, len, (int)a[0]);
}

static long op_pkey_mprotect(uintptr_t p, size_t len, const long *a)
{
	pkey_mprotect_fn next = CP_NEXT(real_pkey_mprotect, "pkey_mprotect");

	if (!next)
		return errno = ENOSYS, -1;
	return next((void *)p, len, (int)a[0], (int)a[1]);
}

static long op_madvise(uintptr_t p, size_t len, const long *a)
{
	return CP_NEXT(real_madvise, "madvise")((void *)p, len, (int)a[0]);
}

/* Advice that changes neither contents nor what a fork child gets: given as asked. */
static int harmless(int advice)
{
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
	case MADV_MERGEABLE:
	case MADV_UNMERGEABLE:
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
	case MADV_DONTDUMP:
	case MADV_COLD:
	case MADV_PAGEOUT:
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
		return 1;
	default:
		return 0;
	}
}

/* ---- what the program calls, and the same through syscall(2) ---- */

static int guard_munmap(void *p, size_t len)
{
	return (int)apart(p, len, op_munmap, NULL);
}

static int guard_mprotect(void *p, size_t len, int prot)
{
	long a[1] = { prot };

	return (int)apart(p, len, op_mprotect, a);
}

static int guard_pkey_mprotect(void *p, size_t len, int prot, int pkey)
{
	long a[2] = { prot, pkey };

	return (int)apart(p, len, op_pkey_mprotect, a);
}

static int guard_madvise(void *p, size_t len, int advice)
{
	long a[1] = { advice };

	if (harmless(advice))
		return (int)op_madvise((uintptr_t)p, len, a);
	return (int)apart(p, len, op_madvise, a);
}

/* Would a mapping at [p, p + len) replace the runtime's? */
static int fixed_over_ours(const void *p, size_t len, int flags)
{
	return (flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE) && meets_ours(p, len);
}

/* Is [p, p + len) all the runtime's? */
static int all_ours(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + ((len + PAGE_MASK) & ~PAGE_MASK), s, e;

	while (lo < hi) {
		if (!next_ours(lo, hi, &s, &e) || s > lo)
			return 0;
		lo = e;
	}
	return 1;
}

/*
 * mremap of memory that meets the runtime's: *ret is what the program
 * gets, and 1; 0 if the call is none of ours (the real one does it).
 * Moving the runtime's memory gives the program a private copy of it at
 * the new place, the runtime keeping its own: the program has what it
 * asked for.  In place, shrinking is done (as far as the program can
 * tell) and growing finds no room.  A range that is only partly ours is
 * two mappings, which the kernel refuses (EFAULT).
 */
static int remap(void *old, size_t old_len, size_t new_len, int flags, void *new, void **ret)
{
	int fixed = (flags & MREMAP_FIXED) != 0;
	void *p;

	if (fixed && meets_ours(new, new_len))
		goto refuse_nomem; /* it would replace the runtime's memory there */
	if (!meets_ours(old, old_len ? old_len : 1))
		return 0;
	/* A length 0 would make a second mapping of the runtime's shared memory. */
	if (!old_len || !new_len || !all_ours(old, old_len)) {
		errno = old_len && new_len ? EFAULT : EINVAL;
		*ret = MAP_FAILED;
		return 1;
	}
	if (!(flags & MREMAP_MAYMOVE)) {
		if (new_len > old_len)
			goto refuse_nomem;
		*ret = old;
		return 1;
	}
	p = CP_NEXT(real_mmap, "mmap")(fixed ? new : NULL, new_len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED : 0), -1, 0);
	if (p != MAP_FAILED)
		memcpy(p, old, old_len < new_len ? old_len : new_len);
	*ret = p;
	return 1;
refuse_nomem:
	errno = ENOMEM;
	*ret = MAP_FAILED;
	return 1;
}

#define CP_INTERPOSE_MEM __attribute__((visibility("default"), no_instrument_function))
#define CALLER __builtin_return_address(0)

CP_INTERPOSE_MEM int munmap(void *p, size_t len)
{
	if (cp_guard__from_runtime(CALLER))
		return (int)op_munmap((uintptr_t)p, len, NULL);
	return guard_munmap(p, len);
}

CP_INTERPOSE_MEM int mprotect(void *p, size_t len, int prot)
{
	if (cp_guard__from_runtime(CALLER)) {
		long a[1] = { prot };

		return (int)op_mprotect((uintptr_t)p, len, a);
	}
	return guard_mprotect(p, len, prot);
}

CP_INTERPOSE_MEM int pkey_mprotect(void *p, size_t len, int prot, int pkey)
{
	if (cp_guard__from_runtime(CALLER)) {
		long a[2] = { prot, pkey };

		return (int)op_pkey_mprotect((uintptr_t)p, len, a);
	}
	return guard_pkey_mprotect(p, len, prot, pkey);
}

CP_INTERPOSE_MEM int madvise(void *p, size_t len, int advice)
{
	if (cp_guard__from_runtime(CALLER)) {
		long a[1] = { advice };

		return (int)op_madvise((uintptr_t)p, len, a);
	}
	return guard_madvise(p, len, advice);
}

CP_INTERPOSE_MEM void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	mremap_fn next = CP_NEXT(real_mremap, "mremap");
	void *new = NULL, *ret;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new = va_arg(ap, void *);
		va_end(ap);
	}
	if (!cp_guard__from_runtime(CALLER) && remap(old, old_len, new_len, flags, new, &ret))
		return ret;
	return next(old, old_len, new_len, flags, new);
}

static void *map(mmap_fn *real, const char *name, const void *ret, void *p, size_t len, int prot,
		 int flags, int fd, off_t off)
{
	mmap_fn next = CP_NEXT(*real, name);

	if ((flags & MAP_FIXED) && !cp_guard__from_runtime(ret) && fixed_over_ours(p, len, flags))
		return errno = ENOMEM, MAP_FAILED;
	return next(p, len, prot, flags, fd, off);
}

CP_INTERPOSE_MEM void *mmap(void *p, size_t len, int prot, int flags, int fd, off_t off)
{
	return map(&real_mmap, "mmap", CALLER, p, len, prot, flags, fd, off);
}

void *mmap64(void *p, size_t len, int prot, int flags, int fd, off_t off);

CP_INTERPOSE_MEM void *mmap64(void *p, size_t len, int prot, int flags, int fd, off_t off)
{
	return map(&real_mmap64, "mmap64", CALLER, p, len, prot, flags, fd, off);
}

/*
 * The next definitions, found before the program's code runs (a lazy
 * dlsym in a call from a custom allocator's mmap could call that allocator
 * again); calls before this go through CP_NEXT.
 */
__attribute__((constructor(101))) CP_NOINSTR static void guard_init(void)
{
	image__find();
	CP_NEXT(real_munmap, "munmap");
	CP_NEXT(real_mprotect, "mprotect");
	CP_NEXT(real_pkey_mprotect, "pkey_mprotect");
	CP_NEXT(real_madvise, "madvise");
	CP_NEXT(real_mremap, "mremap");
	CP_NEXT(real_mmap, "mmap");
	CP_NEXT(real_mmap64, "mmap64");
}

/*
 * syscall(nr, ...) of the program (interpose.c): 1 and *ret (the value
 * syscall(2) returns, errno set) if it was one of the calls above, else 0.
 */
int cp_guard__syscall(long nr, const long *a, long *ret)
{
	switch (nr) {
	case SYS_munmap:
		*ret = guard_munmap((void *)a[0], (size_t)a[1]);
		return 1;
	case SYS_mprotect:
		*ret = guard_mprotect((void *)a[0], (size_t)a[1], (int)a[2]);
		return 1;
	case SYS_pkey_mprotect:
		*ret = guard_pkey_mprotect((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3]);
		return 1;
	case SYS_madvise:
		*ret = guard_madvise((void *)a[0], (size_t)a[1], (int)a[2]);
		return 1;
	case SYS_mremap: {
		void *p;

		if (!remap((void *)a[0], (size_t)a[1], (size_t)a[2], (int)a[3], (void *)a[4], &p))
			return 0;
		*ret = p == MAP_FAILED ? -1 : (long)p;
		return 1;
	}
	case SYS_mmap:
		if (fixed_over_ours((void *)a[0], (size_t)a[1], (int)a[3])) {
			errno = ENOMEM;
			*ret = -1;
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}
