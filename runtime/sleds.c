/*
 * sleds.c - patchable-entry sleds: finding them, patching them into jumps
 * to per-function thunks, and the return stubs (docs/internals/sleds.md).
 *
 * A program built with -fpatchable-function-entry=5,0 has five bytes of
 * NOPs at the entry of every out-of-line function (gcc: five 0x90, clang:
 * one 0f 1f 44 00 00; after an endbr64 under -fcf-protection), and each
 * module lists their addresses in its allocated, relocated section
 * __patchable_function_entries.  Patching writes `jmp rel32` there, to the
 * sled's thunk in pages mapped within reach of the module (make_thunks):
 * the thunk jumps to the fast path (cp_sled__enter_fast, hooks.c) with the
 * body in r11, which jumps to the full one (cp_sled_entry, sleds-tramp.S)
 * when it cannot do the call itself; either jumps on: to the body, or, for
 * a call the runtime records, to the stub for (R, F), its return address
 * and body, which calls the body.  The body's return comes back into the
 * stub by a predicted ret, the stub jumps to its exit (the fast
 * cp_sled__exit_fast, else cp_sled_ret_common), which pushes R from the
 * stub's data and returns to it.  No return goes astray for want of a
 * balanced call: the sleds and the paths jump, the only call is the
 * stub's of the body.
 *
 * Stubs are written through a second, writable mapping of the same memfd
 * (no syscall per stub, the executable alias is never writable); a fork
 * child takes a private copy.
 *
 * Everything here but cp_stubs__get runs rarely (start, dlopen, dlclose,
 * fork, unwinders); cp_stubs__get runs once per new call-site node of a
 * thread, under a spin lock taken with the thread's busy flag held.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/internal.h"

/*
 * 512K distinct return addresses.  Address space only until used (t0230
 * holds a trivial program under 128 MB), and none at all in a process
 * with no sled: the area is mapped when the first module with sleds is.
 */
#define STUB_BYTES (32ull << 20)
#define STUB_SIZE CP_STUB_SIZE
/* sleds-tramp.S and the fast exit (hooks.c) push R from stub + 56. */
_Static_assert(CP_STUB_R == 56 && CP_STUB_RET + 13 <= CP_STUB_F, "sleds: the stub's layout moved");
#define TABLE_SLOTS (1u << 20) /* (R, F) -> stub, at most half full */
/* Under an address-space limit the area and its table are halved, down to this. */
#define STUB_BYTES_MIN (1ull << 20)
static uint64_t table_slots; /* TABLE_SLOTS, or as halved with the area */
#define MAX_SLED_MODULES 1024
#define NEAR_REACH ((int64_t)0x7fff0000)

/* The trampolines (sleds-tramp.S). */
extern char cp_sled_entry[] CP_HIDDEN;
extern char cp_sled_ret_common[] CP_HIDDEN;

struct cp_stub_area cp_stubs;
struct cp_sled_stats cp_sled_stats;

struct stub_entry {
	uintptr_t r;	/* real return address, 0 for a free entry */
	uintptr_t f;	/* the body the stub calls, 0 for a return-only stub */
	uintptr_t stub; /* its start */
};
static struct stub_entry *table;
static int stub_lock;
static int stubs_shared; /* the area is two aliases of a memfd (whose descriptor is closed) */
static int stubs_frozen; /* a fork child that could not get pages of its own: no new stubs */

static const uint8_t nop_gcc[5] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
/* clang's: nopl disp8(%rax,%rax,1), disp8 0 or (as for XRay) 8: any disp8 is taken. */
static const uint8_t nop_clang[4] = { 0x0f, 0x1f, 0x44, 0x00 };
static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* A patched module. */
struct sled_module {
	uintptr_t bias;		/* load bias (dlpi_addr) */
	uintptr_t lo, hi;	/* its executable PT_LOADs' extent */
	const uintptr_t *sleds; /* the relocated section, in the module's memory */
	uint64_t nsleds;
	uint16_t *kind;		/* per sled: 0 not patched, 1 gcc NOPs, 0x100 | disp8 clang's (mmap) */
	uint64_t patched, skipped;
	uintptr_t thunks;	/* its thunks (make_thunks) */
	uint64_t thunk_bytes;
	int gone;		/* unloaded (dlclose): nothing of it is touched again */
	char name[256];		/* dlpi_name, cut */
};
static struct sled_module *mods;
static uint32_t nmods;
static pthread_mutex_t mods_lock = PTHREAD_MUTEX_INITIALIZER;
static int refused;	 /* patching refused (CET) or impossible: never patch */
static int plan_only;	 /* callprof attach: plan what to write, write nothing (the tool does) */
static struct cp_attach_sled *plan; /* attach's plan (mmap), nplan of plan_cap used */
static uint64_t nplan, plan_cap, plan_foreign;
static int mem_fd = -1;	 /* /proc/self/mem, when mprotect is refused */


/*
 * The stubs' spin lock, taken with every signal blocked: a handler that
 * ran inside would either need the lock itself (a call of its needing a
 * stub: spinning for ever) or leave by siglongjmp with the lock held
 * (every later stub waiting for ever: t0170's workload did).  Blocking
 * costs two system calls per new stub, which is once per new (return
 * address, function) pair; a signal waits the few microseconds.
 */
static void lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, sizeof(uint64_t));
	while (__atomic_exchange_n(&stub_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&stub_lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void unlock(const sigset_t *old)
{
	__atomic_store_n(&stub_lock, 0, __ATOMIC_RELEASE);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, sizeof(uint64_t));
}

/* ---- the stub area ---- */

/* The area's first stub-sized bytes: the pointer the stubs jump through. */
#define PAD_EXIT_FAST 0
static void write_pad(uint8_t *p)
{
	uintptr_t fast = (uintptr_t)cp_sled__exit_fast;

	memset(p, 0xcc, STUB_SIZE);
	memcpy(p + PAD_EXIT_FAST, &fast, 8);
}

/*
 * A memfd of bytes, or -1.  Not when the program's RLIMIT_FSIZE is below
 * that: sizing it would raise SIGXFSZ, which kills by default.
 */
static int stub_memfd(uint64_t bytes)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_FSIZE, &rl) || (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < bytes))
		return -1;
	fd = (int)syscall(SYS_memfd_create, "callprof-stubs", 1u /* MFD_CLOEXEC */);
	if (fd >= 0 && ftruncate(fd, (off_t)bytes)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Map an area of bytes and a table of slots: an RX and an RW alias of one
 * memfd, else one RWX private mapping.
 */
static int stubs_map_size(uint64_t bytes, uint64_t slots)
{
	void *rx = MAP_FAILED, *rw = MAP_FAILED;
	int fd = stub_memfd(bytes);

	if (fd >= 0) {
		rx = mmap(NULL, bytes, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		if (rx != MAP_FAILED)
			rw = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	}
	if (rx == MAP_FAILED || rw == MAP_FAILED) {
		if (rx != MAP_FAILED)
			munmap(rx, bytes);
		if (fd >= 0)
			close(fd);
		fd = -1;
		rx = mmap(NULL, bytes, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (rx == MAP_FAILED)
			return -1;
		rw = rx;
	}
	table = mmap(NULL, slots * sizeof(*table), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (table == MAP_FAILED) {
		table = NULL;
		munmap(rx, bytes);
		if (rw != rx)
			munmap(rw, bytes);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* The mappings hold the memfd: no descriptor of ours stays in the program's table. */
	if (fd >= 0)
		close(fd);
	stubs_shared = fd >= 0;
	table_slots = slots;
	write_pad(rw);
	cp_stubs.rw = (uintptr_t)rw;
	cp_stubs.bytes = bytes;
	__atomic_store_n(&cp_stubs.rx, (uintptr_t)rx, __ATOMIC_RELEASE);
	__atomic_store_n(&cp_stubs.used, STUB_SIZE, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The area: 512K stubs and their table, address space only until used;
 * under an address-space limit (RLIMIT_AS) that leaves no room for them,
 * halved until it fits, down to 16K stubs.
 */
static int stubs_map(void)
{
	for (uint64_t bytes = STUB_BYTES, slots = TABLE_SLOTS; bytes >= STUB_BYTES_MIN;
	     bytes /= 2, slots /= 2)
		if (!stubs_map_size(bytes, slots))
			return 0;
	return -1;
}

static uint64_t hash_rf(uintptr_t r, uintptr_t f)
{
	return cp_ptr_hash(NULL, r ^ (f * 0x9e3779b97f4a7c15ull)) & (table_slots - 1);
}

/* Four bytes of a rel32 operand ending at end, reaching to. */
static void put_rel(uint8_t *p, uintptr_t end, uintptr_t to)
{
	int32_t rel = (int32_t)((int64_t)to - (int64_t)end);

	memcpy(p, &rel, 4);
}

/*
 * The 13 bytes a thunk and a stub's return point both are, written at p
 * (to run at x): `lea to(%rip), %r11; jmp *through(%rip)`, r11 telling the
 * path jumped to which thunk's body or which stub it came from.
 */
#define LEA_JMP_SIZE 13
static void put_lea_jmp(uint8_t *p, uintptr_t x, uintptr_t to, uintptr_t through)
{
	static const uint8_t code[LEA_JMP_SIZE] = {
		0x4c, 0x8d, 0x1d, 0, 0, 0, 0, /* lea to(%rip), %r11 */
		0xff, 0x25, 0, 0, 0, 0,	      /* jmp *through(%rip) */
	};

	memcpy(p, code, sizeof(code));
	put_rel(p + 3, x + 7, to);
	put_rel(p + 9, x + 13, through);
}

uintptr_t cp_stubs__get(uintptr_t r, uintptr_t f)
{
	uintptr_t stub = 0;
	uint64_t i;

	sigset_t old;

	if (!table || !r)
		return 0;
	lock(&old);
	for (i = hash_rf(r, f);; i = (i + 1) & (table_slots - 1)) {
		if (table[i].r == r && table[i].f == f) {
			stub = table[i].stub;
			goto out;
		}
		if (!table[i].r)
			break;
	}
	uint64_t used = cp_stubs.used;

	if (stubs_frozen || used + STUB_SIZE > cp_stubs.bytes || used / STUB_SIZE > table_slots / 2) {
		__atomic_fetch_add(&cp_sled_stats.no_stub, 1, __ATOMIC_RELAXED);
		goto out;
	}
	uint8_t *p = (uint8_t *)cp_stubs.rw + used;
	uintptr_t x = cp_stubs.rx + used;
	memset(p, 0xcc, STUB_SIZE);
	if (f) {
		p[CP_STUB_GO] = 0xff; /* call *F(%rip) */
		p[CP_STUB_GO + 1] = 0x15;
		put_rel(p + CP_STUB_GO + 2, x + CP_STUB_RET, x + CP_STUB_F);
	}
	/* The exit (r11 = the stub) pushes R (stub + CP_STUB_R) and returns to it. */
	put_lea_jmp(p + CP_STUB_RET, x + CP_STUB_RET, x, cp_stubs.rx + PAD_EXIT_FAST);
	memcpy(p + CP_STUB_F, &f, 8);
	memcpy(p + CP_STUB_R, &r, 8);
	stub = x;
	table[i].stub = stub;
	table[i].f = f;
	__atomic_store_n(&table[i].r, r, __ATOMIC_RELEASE);
	/* Published after it is written: a stub is one once used covers it. */
	__atomic_store_n(&cp_stubs.used, used + STUB_SIZE, __ATOMIC_RELEASE);
out:
	unlock(&old);
	return stub;
}

/* The child's own memfd over both aliases, with the stubs so far; -1 if not. */
static int stubs_own(void)
{
	int fd = stub_memfd(cp_stubs.bytes);
	uint64_t used = cp_stubs.used;

	if (fd < 0 || pwrite(fd, (void *)cp_stubs.rw, used, 0) != (ssize_t)used ||
	    mmap((void *)cp_stubs.rw, cp_stubs.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0) == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* The RW alias is the child's now; the RX one follows (same contents). */
	if (mmap((void *)cp_stubs.rx, cp_stubs.bytes, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED,
		 fd, 0) == MAP_FAILED) {
		close(fd);
		return -1; /* RX still the parent's: the child must not add to it */
	}
	close(fd);
	return 0;
}

/*
 * Fork child: the stubs it makes must not land in the parent's pages.  A
 * new memfd with the same contents goes over both aliases.  Failing that
 * (or where a seccomp filter forbids it), the child makes no new stubs
 * (its calls through known ones still work).
 */
void cp_sleds__fork_child(void)
{
	stub_lock = 0;
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	mods_lock = fresh;
	if (!stubs_shared)
		return; /* no area, or a private mapping: already the child's own */
	if (!cp_sys__begin(CP_SYS_PATCH)) {
		stubs_frozen = 1;
		return;
	}
	if (stubs_own())
		stubs_frozen = 1;
	cp_sys__end();
}

/* ---- writing code ---- */

static int seg_prot(uint32_t pf)
{
	return (pf & PF_R ? PROT_READ : 0) | (pf & PF_W ? PROT_WRITE : 0) | (pf & PF_X ? PROT_EXEC : 0);
}

/* Five bytes at a, in one aligned 8-byte store where they fit in one. */
static void put5(uintptr_t a, const uint8_t *b)
{
	if (mem_fd >= 0) {
		if (pwrite(mem_fd, b, 5, (off_t)a) != 5)
			cp_warn_once("sleds: a write through /proc/self/mem failed");
		return;
	}
	if ((a & 7) <= 3) {
		uint64_t *w = (uint64_t *)(a & ~(uintptr_t)7), v = __atomic_load_n(w, __ATOMIC_RELAXED);

		memcpy((uint8_t *)&v + (a & 7), b, 5);
		__atomic_store_n(w, v, __ATOMIC_RELAXED);
	} else {
		/* The tail first, the opcode byte last. */
		memcpy((void *)(a + 1), b + 1, 4);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		*(volatile uint8_t *)a = b[0];
	}
}

/* Make every executable PT_LOAD of info writable too (never not executable). */
static int open_segments(const struct dl_phdr_info *info, int writable)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (mem_fd >= 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(pg - 1);
		uintptr_t e = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		int prot = seg_prot(ph->p_flags) | (writable ? PROT_WRITE : 0);

		if (mprotect((void *)a, e - a, prot)) {
			if (!writable)
				continue;
			/* SELinux execmod and the like: write through /proc/self/mem instead. */
			mem_fd = cp_self_open("mem", O_RDWR | O_CLOEXEC);
			if (mem_fd < 0)
				return -1;
			open_segments(info, 0);
			return 0;
		}
	}
	return 0;
}

/* ---- finding the sleds of a module ---- */

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/* The first __patchable_function_entries section's address (unrelocated) and size. */
static int find_section(const char *path, uint64_t *addr, uint64_t *size)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) sh, strsh;
	char name[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return -1;
	if (read_at(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shstrndx >= eh.e_shnum ||
	    read_at(fd, &strsh, sizeof(strsh), eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(sh)))
		goto out;
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		if (read_at(fd, &sh, sizeof(sh), eh.e_shoff + (uint64_t)i * sizeof(sh)))
			goto out;
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_name >= strsh.sh_size)
			continue;
		memset(name, 0, sizeof(name));
		if (pread(fd, name, sizeof(name) - 1, (off_t)(strsh.sh_offset + sh.sh_name)) <= 0)
			continue;
		if (!strcmp(name, "__patchable_function_entries") && sh.sh_size >= 8) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			ret = 0;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

static int in_reach(uintptr_t from, uintptr_t to);

/*
 * The module's thunks: pages within rel32 reach of its code [lo, hi), one
 * 16-byte thunk per sled (sled i's at THUNK_HEAD + 16 i).  A patched sled
 * is `jmp rel32` to its thunk: no return address is pushed for it, so the
 * return stack buffer stays balanced.  A thunk, with rsp = the slot:
 *	+0  lea body(%rip), %r11	the body, sled + 5 (r11 is free at an entry)
 *	+7  jmp *head[fast](%rip)	cp_sled__enter_fast(_endbr), which jumps on
 *					(the stub, the body or cp_sled_entry(_endbr))
 * The head holds the two fast paths' addresses (the runtime may be out of
 * rel32 reach); endbr[i] says which one sled i takes.  Returns the thunks'
 * base, or 0.
 */
#define THUNK_HEAD 16
#define THUNK_SIZE 16
_Static_assert(LEA_JMP_SIZE <= THUNK_SIZE, "sleds: a thunk holds its lea and jmp");
static uintptr_t make_thunks(uintptr_t lo, uintptr_t hi, const uintptr_t *sleds, uint64_t n,
			     const uint8_t *endbr, uint64_t *bytes)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t size = (THUNK_HEAD + n * THUNK_SIZE + (uint64_t)pg - 1) & ~(uint64_t)(pg - 1);
	uintptr_t head[2] = { (uintptr_t)cp_sled__enter_fast, (uintptr_t)cp_sled__enter_fast_endbr };
	uint8_t *p = MAP_FAILED;
	uintptr_t a = 0;

	for (int k = 1; k <= 60; k++) {
		uintptr_t step = (uintptr_t)k << 25, hint = (k & 1) ? hi + step : lo - step - size;

		hint &= ~(uintptr_t)(pg - 1);
		p = mmap((void *)hint, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		a = (uintptr_t)p;
		if (in_reach(lo, a) && in_reach(hi, a) && in_reach(lo, a + size) && in_reach(hi, a + size))
			break;
		munmap(p, size);
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED)
		return 0;
	memset(p, 0xcc, size);
	memcpy(p, head, sizeof(head));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = THUNK_HEAD + i * THUNK_SIZE;

		put_lea_jmp(p + off, a + off, sleds[i] + 5, a + 8 * endbr[i]);
	}
	if (mprotect(p, size, PROT_READ | PROT_EXEC)) {
		munmap(p, size);
		return 0;
	}
	*bytes = size;
	return a;
}

static int in_reach(uintptr_t from, uintptr_t to)
{
	int64_t d = (int64_t)(to - from);

	return d > -NEAR_REACH && d < NEAR_REACH;
}

/* Is this module one we patched already (same load bias and name) and still there? */
static struct sled_module *known(const struct dl_phdr_info *info)
{
	for (uint32_t i = 0; i < nmods; i++)
		if (!mods[i].gone && mods[i].bias == info->dlpi_addr &&
		    !strncmp(mods[i].name, info->dlpi_name, sizeof(mods[i].name) - 1))
			return &mods[i];
	return NULL;
}

/* Is a in an executable segment of info?  *seg_lo gets its start. */
static int executable(const struct dl_phdr_info *info, uintptr_t a, uintptr_t *seg_lo)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= s && a + 5 <= s + ph->p_memsz) {
			*seg_lo = s;
			return 1;
		}
	}
	return 0;
}

static void say_module(const struct sled_module *m)
{
	char line[512];

	snprintf(line, sizeof(line), "sleds: %s: %llu patched, %llu skipped (not a known NOP form)",
		 m->name[0] ? m->name : "(main program)", (unsigned long long)m->patched,
		 (unsigned long long)m->skipped);
	cp_warn(line);
}

/*
 * Sled i of m: its kind (1 gcc's NOPs, 0x100 | disp8 clang's) and in b the
 * call to write there; 0 when it is not to be patched (counted skipped,
 * or foreign when it holds a call already).
 */
/*
 * What sled i of m holds: its NOP form (1: gcc's, 0x100 | disp8: clang's),
 * or 0 when it is not to be patched (counted as skipped, or, holding a
 * jump or call already, as ours or another's); *endbr: it follows an
 * endbr64 (the function starts 4 bytes before it).
 */
static int plan_sled(const struct dl_phdr_info *info, struct sled_module *m, uint64_t i,
		     uint8_t *endbr)
{
	uintptr_t a = m->sleds[i], seg_lo;

	*endbr = 0;
	if (!executable(info, a, &seg_lo)) {
		m->skipped++;
		return 0;
	}
	*endbr = a - 4 >= seg_lo && !memcmp((void *)(a - 4), endbr64, 4);
	if (!memcmp((void *)a, nop_gcc, 5))
		return 1;
	if (!memcmp((void *)a, nop_clang, 4))
		return 0x100 | ((uint8_t *)a)[4];
	/* A sled listed twice (it is already our jump) is not one skipped. */
	if (*(uint8_t *)a != 0xe9 && *(uint8_t *)a != 0xe8)
		m->skipped++;
	else if (plan_only)
		plan_foreign++; /* attach patches nothing itself: someone else did */
	return 0;
}

/* Append sled a (whose call is b) to attach's plan; -1 when it cannot grow. */
static int plan_add(uintptr_t a, const uint8_t *b)
{
	if (nplan == plan_cap) {
		uint64_t cap = plan_cap ? plan_cap * 2 : 4096;
		void *p = plan ? mremap(plan, plan_cap * sizeof(*plan), cap * sizeof(*plan),
					MREMAP_MAYMOVE)
			       : mmap(NULL, cap * sizeof(*plan), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			cp_warn_once("sleds: no memory for attach's plan: some sleds not patched");
			return -1;
		}
		plan = p;
		plan_cap = cap;
	}
	struct cp_attach_sled *e = &plan[nplan++];

	memset(e, 0, sizeof(*e));
	e->addr = a;
	memcpy(e->call, b, 5);
	memcpy(e->nop, (const void *)a, 5);
	return 0;
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *path = info->dlpi_name;
	char exe[4096];
	uint64_t addr, bytes;
	struct sled_module *m;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int verbose = *(int *)arg;

	if (!strncmp(info->dlpi_name, "linux-vdso", 10) || known(info) || nmods == MAX_SLED_MODULES)
		return 0;
	if (info->dlpi_name[0] == 0 && nmods > 0)
		return 0; /* the main program is the first entry: a nameless later one is not a file */
	if (!path[0] && cp_self_exe(exe, sizeof(exe)) > 0)
		path = exe;
	if (!path[0] || find_section(path, &addr, &bytes) || bytes < 8)
		return 0;
	if (!cp_stubs.rx && stubs_map()) {
		refused = 1;
		cp_warn("sleds: no memory for return stubs: sleds not patched, the program runs "
			"unprofiled");
		return 1;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uintptr_t s = info->dlpi_addr + ph->p_vaddr;

			lo = s < lo ? s : lo;
			hi = s + ph->p_memsz > hi ? s + ph->p_memsz : hi;
		}
	}
	if (lo >= hi)
		return 0;
	m = &mods[nmods];
	memset(m, 0, sizeof(*m));
	m->bias = info->dlpi_addr;
	m->lo = lo;
	m->hi = hi;
	strncpy(m->name, info->dlpi_name, sizeof(m->name) - 1);
	m->sleds = (const uintptr_t *)(info->dlpi_addr + addr);
	m->nsleds = bytes / 8;
	m->kind = mmap(NULL, m->nsleds * sizeof(*m->kind), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->kind == MAP_FAILED)
		return 0;
	/* What each sled holds (m->kind) and which entry it takes (endbr, in the thunks' place). */
	uint64_t eb_bytes = (m->nsleds + 4095) & ~(uint64_t)4095;
	uint8_t *endbr = mmap(NULL, eb_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (endbr == MAP_FAILED) {
		munmap(m->kind, m->nsleds * sizeof(*m->kind));
		return 0;
	}
	for (uint64_t i = 0; i < m->nsleds; i++)
		m->kind[i] = (uint16_t)plan_sled(info, m, i, &endbr[i]);
	m->thunks = make_thunks(lo, hi, m->sleds, m->nsleds, endbr, &m->thunk_bytes);
	munmap(endbr, eb_bytes);
	if (!m->thunks) {
		cp_warn_once("sleds: no memory within reach of a module for its thunks: its calls are "
			     "not recorded");
		munmap(m->kind, m->nsleds * sizeof(*m->kind));
		return 0;
	}
	if (!plan_only && open_segments(info, 1)) {
		cp_warn_once("sleds: code cannot be written (mprotect and /proc/self/mem refused): "
			     "calls not recorded");
		munmap(m->kind, m->nsleds * sizeof(*m->kind));
		munmap((void *)m->thunks, m->thunk_bytes);
		refused = 1;
		return 1;
	}
	for (uint64_t i = 0; i < m->nsleds; i++) {
		uint8_t b[5];

		if (!m->kind[i])
			continue;
		b[0] = 0xe9; /* jmp rel32 to the thunk */
		put_rel(b + 1, m->sleds[i] + 5, m->thunks + THUNK_HEAD + i * THUNK_SIZE);
		if (plan_only) {
			if (plan_add(m->sleds[i], b)) {
				m->kind[i] = 0;
				break;
			}
		} else {
			put5(m->sleds[i], b);
		}
		m->patched++;
	}
	if (!plan_only)
		open_segments(info, 0);
	__atomic_fetch_add(&cp_sled_stats.modules, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cp_sled_stats.patched, m->patched, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cp_sled_stats.skipped, m->skipped, __ATOMIC_RELAXED);
	nmods++;
	if (verbose || m->skipped)
		say_module(m);
	return 0;
}

uintptr_t cp_sleds__sample_ip(uintptr_t ip)
{
	uint32_t n;

	if (!cp_stubs.rx)
		return ip;
	if (ip - cp_stubs.rx < cp_stubs.bytes)
		return (uintptr_t)cp_sled_ret_common;
	n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; mods && i < n; i++)
		if (mods[i].thunks && ip - mods[i].thunks < mods[i].thunk_bytes)
			return (uintptr_t)cp_sled_entry;
	return ip;
}

int cp_sleds__covers(uintptr_t lo, uintptr_t hi)
{
	uint32_t n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; mods && i < n; i++)
		if (!mods[i].gone && mods[i].patched && mods[i].lo < hi && lo < mods[i].hi)
			return 1;
	return 0;
}

int cp_sleds__on(void)
{
	return mods && !refused;
}

void cp_sleds__patch_new(void)
{
	int saved_errno = errno, verbose;

	if (refused || !mods || plan_only)
		return;
	/* A seccomp filter forbids it (seccomp.c says so): the new modules' sleds stay NOPs. */
	if (!cp_sys__begin(CP_SYS_PATCH))
		return;
	pthread_mutex_lock(&mods_lock);
	verbose = cp_getenv("CALLPROF_SLEDS_VERBOSE") != NULL;
	dl_iterate_phdr(patch_module, &verbose);
	pthread_mutex_unlock(&mods_lock);
	cp_sys__end();
	errno = saved_errno;
}

/* Gone modules are found by the loader no longer listing them at their bias. */
static int mark_seen(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sled_module *m = known(info);

	if (m)
		m->gone = 2; /* seen; set back below */
	return 0;
}

void cp_sleds__forget_gone(void)
{
	if (!mods)
		return;
	pthread_mutex_lock(&mods_lock);
	dl_iterate_phdr(mark_seen, NULL);
	for (uint32_t i = 0; i < nmods; i++)
		mods[i].gone = mods[i].gone == 2 ? 0 : 1;
	pthread_mutex_unlock(&mods_lock);
}

/* The table of patched modules, mapped once; -1 (and refused) without memory. */
static int map_mods(void)
{
	mods = mmap(NULL, MAX_SLED_MODULES * sizeof(*mods), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mods != MAP_FAILED)
		return 0;
	mods = NULL;
	refused = 1;
	return -1;
}

/*
 * CET user shadow stacks (Linux 6.6+: arch_prctl ARCH_SHSTK_STATUS): a
 * replaced return address would fault at the return.
 */
static int shadow_stack_on(void)
{
	unsigned long features = 0;

	if (syscall(SYS_arch_prctl, 0x5005 /* ARCH_SHSTK_STATUS */, &features))
		return 0;
	return (features & 1) != 0; /* ARCH_SHSTK_SHSTK */
}

void cp_sleds__init(void)
{
	if (mods || refused)
		return;
	if (!cp_sys__may(CP_SYS_PATCH)) {
		refused = 1; /* started under a filter that forbids it (CALLPROF_SECCOMP) */
		return;
	}
	if (shadow_stack_on()) {
		refused = 1;
		cp_warn("sleds: the process runs with a CET shadow stack, which forbids replacing "
			"return addresses: its sleds are not patched, it runs unprofiled");
		return;
	}
	if (cp_getenv("CALLPROF_NO_SLEDS")) {
		refused = 1;
		return;
	}
	if (map_mods())
		return;
	cp_sleds__patch_new();
}

static uintptr_t *slot_of(const struct cp_frame *f);

static int cmp_sled(const void *x, const void *y)
{
	const struct cp_attach_sled *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

void cp_sleds__plan_attach(void)
{
	if (mods || refused)
		return;
	if (shadow_stack_on() || cp_getenv("CALLPROF_NO_SLEDS")) {
		refused = 1; /* the tool checked every thread for CET already, and says so */
		return;
	}
	if (map_mods())
		return;
	plan_only = 1;
	pthread_mutex_lock(&mods_lock);
	int verbose = cp_getenv("CALLPROF_SLEDS_VERBOSE") != NULL;

	dl_iterate_phdr(patch_module, &verbose);
	pthread_mutex_unlock(&mods_lock);
	if (nplan)
		qsort(plan, nplan, sizeof(*plan), cmp_sled);
}

void cp_sleds__publish(struct cp_attach_sleds *out)
{
	memset(out, 0, sizeof(*out));
	out->plan = (uintptr_t)plan;
	out->count = nplan;
	out->modules = nmods;
	out->foreign = plan_foreign;
	for (uint32_t i = 0; i < nmods; i++)
		out->skipped += mods[i].skipped;
	out->stubs_rx = cp_stubs.rx;
	out->stubs_bytes = cp_stubs.bytes;
	out->stubs_used = (uintptr_t)&cp_stubs.used;
	out->stub_size = STUB_SIZE;
	out->stub_first = STUB_SIZE; /* the pad is the first stub's place */
	out->stub_slot = CP_STUB_RET;
	out->stub_target = CP_STUB_R;
	out->page = (uint64_t)sysconf(_SC_PAGESIZE);
	for (uint32_t i = 0; i < nmods && out->nnear < CP_ATTACH_NEAR_MAX / 2; i++) {
		if (!mods[i].thunks)
			continue;
		out->near[2 * out->nnear] = mods[i].thunks;
		out->near[2 * out->nnear + 1] = mods[i].thunk_bytes;
		out->nnear++;
	}
	out->threads = (uintptr_t)&cp_session.threads;
	out->th_next = offsetof(struct cp_thread, next);
	out->th_side = offsetof(struct cp_thread, side);
	out->th_tid = offsetof(struct cp_thread, tid);
	out->th_top = offsetof(struct cp_thread, cct.top);
	out->th_stack = offsetof(struct cp_thread, cct.stack);
	out->th_busy = offsetof(struct cp_thread, busy);
	out->th_mute_sp = offsetof(struct cp_thread, mute_sp);
	out->stack_f = offsetof(struct cp_stack, f);
	out->frame_size = sizeof(struct cp_frame);
	out->frame_sp = offsetof(struct cp_frame, sp);
	out->sp_sled = CP_SP_SLED;
	out->sp_hooked = CP_SP_HOOKED;
	out->sp_flags = CP_SP_FLAGS;
	out->slot_at = (uintptr_t)slot_of(&(struct cp_frame){ .sp = 0 });
	out->muted = CP_MUTED;
}

uint64_t cp_sleds__unpatch_all(void)
{
	uint64_t n = 0;

	if (!mods)
		return 0;
	pthread_mutex_lock(&mods_lock);
	for (uint32_t i = 0; i < nmods; i++) {
		struct sled_module *m = &mods[i];
		struct dl_phdr_info info;
		ElfW(Phdr) ph;

		if (m->gone || !m->patched)
			continue;
		/* One segment spanning the module's code, for open_segments. */
		memset(&info, 0, sizeof(info));
		memset(&ph, 0, sizeof(ph));
		ph.p_type = PT_LOAD;
		ph.p_flags = PF_R | PF_X;
		ph.p_vaddr = m->lo;
		ph.p_memsz = m->hi - m->lo;
		info.dlpi_phdr = &ph;
		info.dlpi_phnum = 1;
		if (open_segments(&info, 1))
			break;
		for (uint64_t k = 0; k < m->nsleds; k++) {
			if (!m->kind[k] || *(uint8_t *)m->sleds[k] != 0xe9)
				continue;
			uint8_t nop[5];

			memcpy(nop, nop_gcc, 5);
			if (m->kind[k] != 1) {
				memcpy(nop, nop_clang, 4);
				nop[4] = (uint8_t)m->kind[k];
			}
			put5(m->sleds[k], nop);
			m->kind[k] = 0;
			n++;
		}
		m->patched = 0;
		open_segments(&info, 0);
	}
	pthread_mutex_unlock(&mods_lock);
	return n;
}

void cp_sleds__release(void)
{
	for (uint32_t i = 0; mods && i < nmods; i++) {
		if (mods[i].thunks)
			munmap((void *)mods[i].thunks, mods[i].thunk_bytes);
		if (mods[i].kind)
			munmap(mods[i].kind, mods[i].nsleds * sizeof(*mods[i].kind));
	}
	if (mods)
		munmap(mods, MAX_SLED_MODULES * sizeof(*mods));
	mods = NULL;
	nmods = 0;
	if (plan)
		munmap(plan, plan_cap * sizeof(*plan));
	plan = NULL;
	nplan = plan_cap = 0;
	if (table)
		munmap(table, table_slots * sizeof(*table));
	table = NULL;
	if (cp_stubs.rx) {
		if (cp_stubs.rw != cp_stubs.rx)
			munmap((void *)cp_stubs.rw, cp_stubs.bytes);
		munmap((void *)cp_stubs.rx, cp_stubs.bytes);
	}
	memset(&cp_stubs, 0, sizeof(cp_stubs));
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = -1;
}

/* ---- giving return addresses back ---- */

static uintptr_t *slot_of(const struct cp_frame *f)
{
	return (uintptr_t *)((f->sp & ~(uintptr_t)CP_SP_FLAGS) + 16);
}

static uint64_t give_back_one(struct cp_thread *t, int again)
{
	uint64_t n = 0;

	if (!t)
		return 0;
	for (struct cp_frame *f = t->cct.top; f > t->cct.stack->f; f--) {
		if (!(f->sp & CP_SP_HOOKED))
			continue;
		uintptr_t *slot = slot_of(f), v = *slot;

		f->sp &= ~CP_SP_HOOKED;
		if (again)
			f->sp |= CP_SP_UNHOOKED_NOW;
		if (cp_stubs__is(v)) {
			*slot = cp_stubs__target(v);
			n++;
		}
	}
	return n;
}

uint64_t cp_sleds__give_back(struct cp_thread *t, int again)
{
	if (!cp_stubs.rx || !t)
		return 0;
	return give_back_one(t, again) + (t->owner ? give_back_one(t->owner, again) : 0);
}

uint64_t cp_sleds__give_back_all(void)
{
	uint64_t n = 0;

	for (struct cp_thread *t = __atomic_load_n(&cp_session.threads, __ATOMIC_ACQUIRE); t; t = t->next)
		n += give_back_one(t, 0) + (t->side ? give_back_one(t->side, 0) : 0);
	return n;
}

static void rehook_one(struct cp_thread *t, uintptr_t live_from)
{
	for (struct cp_frame *f = t->cct.top; f > t->cct.stack->f; f--) {
		uintptr_t *slot = slot_of(f), v, s;

		if (!(f->sp & CP_SP_SLED) || (f->sp & CP_SP_HOOKED))
			continue;
		if (!(f->sp & CP_SP_UNHOOKED_NOW) && !(live_from && (uintptr_t)slot >= live_from))
			continue;
		f->sp &= ~CP_SP_UNHOOKED_NOW;
		v = *slot;
		if (cp_stubs__is(v)) {
			f->sp |= CP_SP_HOOKED; /* a tail call's frame: its caller's was hooked again */
			continue;
		}
		/* Only a slot still holding the call's own return address (its node's site). */
		if (!f->node || f->node->site != v || f->node == &t->cct.lost)
			continue;
		/* Its node's stub (the return half is the same for any body), else a return-only one. */
		s = f->node->stub ? f->node->stub : cp_stubs__get(v, 0);
		if (!s)
			continue;
		f->sp |= CP_SP_HOOKED;
		*slot = s + CP_STUB_RET;
	}
}

void cp_sleds__rehook(struct cp_thread *t, uintptr_t live_from)
{
	if (!cp_stubs.rx || !t)
		return;
	rehook_one(t, live_from);
	if (t->owner)
		rehook_one(t->owner, 0);
}
