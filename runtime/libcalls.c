/*
 * libcalls.c - calls from instrumented code into libraries that are not
 * instrumented (libc, libm, libz, ...), recorded as nodes with exact counts
 * and times (`callprof record --libcalls`, CALLPROF_LIBCALLS=1).  Only in
 * libcallprof*.so; the archives get a no-op (interpose-none.c).  The
 * design and its limits are in docs/internals/libcalls.md.
 *
 * At start-up every GOT slot of the PLT (R_X86_64_JUMP_SLOT) of every
 * instrumented module (one whose relocations name __cyg_profile_func_enter,
 * or whose sleds are patched)
 * is read; record sets LD_BIND_NOW, so all of them hold their final
 * targets by then.  A slot whose target lies in a module that is not
 * instrumented, and whose symbol is not in the exclusion table below, is
 * pointed at a stub of its own in an executable mapping made here:
 *
 *	mov $index, %r11d ; jmp *entry(%rip)
 *
 * The common entry (assembly below) saves the argument registers, and
 * cp_libcalls__enter() pushes (return address, its stack slot, index) on a
 * per-thread return stack, replaces the return address on the machine stack
 * with cp_libcalls__return, calls the ordinary enter hook for the function
 * and jumps to the real target with the registers as they were.  When the
 * function returns, it returns into cp_libcalls__return, which saves the
 * return registers, calls the exit hook (cp_libcalls__leave), and jumps to
 * the caller.  So the library function is timed and counted by the same
 * code as an instrumented one (busy guard, off-CPU charging, errno kept).
 *
 * The return stack is per thread (an initial-exec TLS pointer to an mmap'd
 * array), and signal-safe without a lock: a push claims its entry by
 * raising the depth before it writes the entry, so a handler running in
 * between pushes above it; a pop reads its entry before lowering the
 * depth.  A return finds its entry by the address of the stack slot it
 * returned through, searching down from the top, and removes just that
 * one (entries above it are normally none; they may be another
 * coroutine's).  Calls left by longjmp or a catch are dropped then
 * (cp_libcalls__abandon_below, from interpose.c); one left some other way
 * stays until the stack is full, after which calls go unrecorded and are
 * counted as lost - never a wrong return.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/internal.h"

#if defined(__x86_64__) && defined(__GLIBC__)

#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * Functions never redirected, by name.  Each would break if its return
 * address were replaced or a return were expected of it:
 *   - they do not return (the return stack would keep the entry, which is
 *     harmless, but the time would never be closed either): exit family,
 *     abort, the longjmp family, pthread_exit, assertion and fortify
 *     failures, err/error (they may exit);
 *   - they return twice or on another stack: setjmp family, vfork, fork,
 *     clone, the ucontext functions;
 *   - they replace the image: the exec family;
 *   - they look at their caller: dlopen/dlsym find the calling module from
 *     the return address (RTLD_NEXT), which would be the runtime's;
 *   - C++ exception machinery (also excluded by module, see below);
 *   - the runtime's own hooks and whatever it interposes itself (those slots
 *     point into the runtime and are skipped anyway; listed for clarity).
 */
static const char *const never_patch[] = {
	/* do not return */
	"exit", "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "thrd_exit",
	"__libc_start_main", "__stack_chk_fail", "__assert_fail", "__assert_perror_fail",
	"__assert", "__fortify_fail", "__chk_fail", "err", "errx", "verr", "verrx", "error",
	"error_at_line",
	"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
	/* return twice or switch stacks */
	"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "vfork", "fork", "_Fork", "clone",
	"__clone", "clone3", "getcontext", "setcontext", "swapcontext", "makecontext",
	/* replace the image */
	"execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve",
	"execveat",
	/* use the return address */
	"dlopen", "dlmopen", "dlsym", "dlvsym", "__libc_dlopen_mode", "__libc_dlsym",
	/* exceptions and unwinding */
	"__cxa_throw", "__cxa_rethrow", "__cxa_begin_catch", "__cxa_end_catch",
	"_Unwind_Resume", "_Unwind_RaiseException", "_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind", "_Unwind_Backtrace", "backtrace",
	/* the runtime's own */
	"__cyg_profile_func_enter", "__cyg_profile_func_exit", "__tls_get_addr",
	"dlclose", "mlockall", "pthread_setname_np", "__cxa_begin_catch", "sigaction",
	"signal", "bsd_signal", "sysv_signal", "__sysv_signal",
};

/*
 * Modules whose functions are never redirected: the dynamic loader
 * (__tls_get_addr and friends), and the C++ runtime and unwinder, through
 * whose frames exceptions are thrown: the unwinder cannot step through a
 * replaced return address (docs/internals/libcalls.md).
 */
static const char *const never_module[] = { "ld-linux", "libstdc++.so", "libgcc_s.so" };

/* One redirected GOT slot. */
struct lc_slot {
	uintptr_t target; /* the function (the slot's value before) */
	uintptr_t fn;	  /* its node: the symbol's address (an ifunc's resolver) */
};

/* One call in progress through a stub. */
struct lc_entry {
	uintptr_t ret;	/* the caller's return address */
	uintptr_t slot; /* where it was on the stack (now cp_libcalls__return) */
	uint64_t idx;	/* the stub's slot */
};

#define LC_DEPTH 1024 /* calls into libraries open at once, per thread */

struct lc_stack {
	uint32_t depth; /* entries in use */
	uint32_t pad;
	uint64_t lost;	/* calls not recorded: the stack was full */
	struct lc_entry e[LC_DEPTH];
};

#define LC_DEAD ((struct lc_stack *)1) /* the thread is ending: no more recording */

static __thread struct lc_stack *lc_self __attribute__((tls_model("initial-exec")));

static struct lc_slot *slots;
static uint32_t nslots;
static pthread_key_t lc_key;

/* Stacks of ended threads, for new threads to take (lock-free, signal-safe). */
#define LC_SPARES 64
static struct lc_stack *spares[LC_SPARES];

/* The entry and return trampolines (assembly below). */
void cp_libcalls__entry(void) CP_HIDDEN;
void cp_libcalls__return(void) CP_HIDDEN;
uintptr_t cp_libcalls__enter(uint64_t idx, uintptr_t *slotp) CP_HIDDEN;
uintptr_t cp_libcalls__leave(uintptr_t sp) CP_HIDDEN;

/*
 * On entry %r11 holds the stub's index and the stack is as the caller left
 * it (return address on top, so %rsp = 8 mod 16).  184 bytes keep the
 * call aligned.  Every argument register is saved: %rax too, it carries
 * the number of vector registers a variadic function gets.  Only the low
 * 128 bits of the vector registers are kept; functions that take wider
 * vectors (libmvec's _ZGV*) are not redirected.
 *
 * The return trampoline starts one byte in, so that an unwinder looking up
 * (return address - 1) finds this FDE, which says the return address is
 * undefined: a backtrace ends here rather than wandering.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl cp_libcalls__entry\n"
	".hidden cp_libcalls__entry\n"
	".type cp_libcalls__entry, @function\n"
	"cp_libcalls__entry:\n"
	".cfi_startproc\n"
	"	sub $184, %rsp\n"
	".cfi_adjust_cfa_offset 184\n"
	"	mov %rdi, 0(%rsp)\n"
	"	mov %rsi, 8(%rsp)\n"
	"	mov %rdx, 16(%rsp)\n"
	"	mov %rcx, 24(%rsp)\n"
	"	mov %r8, 32(%rsp)\n"
	"	mov %r9, 40(%rsp)\n"
	"	mov %rax, 48(%rsp)\n"
	"	movups %xmm0, 56(%rsp)\n"
	"	movups %xmm1, 72(%rsp)\n"
	"	movups %xmm2, 88(%rsp)\n"
	"	movups %xmm3, 104(%rsp)\n"
	"	movups %xmm4, 120(%rsp)\n"
	"	movups %xmm5, 136(%rsp)\n"
	"	movups %xmm6, 152(%rsp)\n"
	"	movups %xmm7, 168(%rsp)\n"
	"	mov %r11d, %edi\n"
	"	lea 184(%rsp), %rsi\n"
	"	call cp_libcalls__enter\n"
	"	mov %rax, %r11\n"
	"	mov 0(%rsp), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	mov 16(%rsp), %rdx\n"
	"	mov 24(%rsp), %rcx\n"
	"	mov 32(%rsp), %r8\n"
	"	mov 40(%rsp), %r9\n"
	"	mov 48(%rsp), %rax\n"
	"	movups 56(%rsp), %xmm0\n"
	"	movups 72(%rsp), %xmm1\n"
	"	movups 88(%rsp), %xmm2\n"
	"	movups 104(%rsp), %xmm3\n"
	"	movups 120(%rsp), %xmm4\n"
	"	movups 136(%rsp), %xmm5\n"
	"	movups 152(%rsp), %xmm6\n"
	"	movups 168(%rsp), %xmm7\n"
	"	add $184, %rsp\n"
	".cfi_adjust_cfa_offset -184\n"
	"	jmp *%r11\n"
	".cfi_endproc\n"
	".size cp_libcalls__entry, .-cp_libcalls__entry\n"
	"\n"
	".p2align 4\n"
	".globl cp_libcalls__return\n"
	".hidden cp_libcalls__return\n"
	".type cp_libcalls__return, @function\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"	nop\n"
	"cp_libcalls__return:\n"
	"	sub $48, %rsp\n"
	"	mov %rax, 0(%rsp)\n"
	"	mov %rdx, 8(%rsp)\n"
	"	movups %xmm0, 16(%rsp)\n"
	"	movups %xmm1, 32(%rsp)\n"
	"	lea 48(%rsp), %rdi\n"
	"	call cp_libcalls__leave\n"
	"	mov %rax, %r11\n"
	"	mov 0(%rsp), %rax\n"
	"	mov 8(%rsp), %rdx\n"
	"	movups 16(%rsp), %xmm0\n"
	"	movups 32(%rsp), %xmm1\n"
	"	add $48, %rsp\n"
	"	jmp *%r11\n"
	".cfi_endproc\n"
	".size cp_libcalls__return, .-cp_libcalls__return\n");

/* ---- the per-thread return stack ---- */

/* Keep a stack for a later thread, or unmap it. */
static void give_back(struct lc_stack *st)
{
	st->depth = 0;
	for (unsigned i = 0; i < LC_SPARES; i++) {
		struct lc_stack *none = NULL;

		if (__atomic_compare_exchange_n(&spares[i], &none, st, 0, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return;
	}
	munmap(st, sizeof(*st));
}

/* The key's destructor: the thread ends, later calls of it go unrecorded. */
static void stack_release(void *p)
{
	lc_self = LC_DEAD;
	if (p && p != LC_DEAD)
		give_back(p);
}

/* The thread's first call through a stub: find it a return stack. */
static __attribute__((noinline, cold)) struct lc_stack *stack_new(void)
{
	int saved_errno = errno;
	struct lc_stack *st = NULL;
	void *p;

	for (unsigned i = 0; i < LC_SPARES && !st; i++)
		if (__atomic_load_n(&spares[i], __ATOMIC_RELAXED))
			st = __atomic_exchange_n(&spares[i], NULL, __ATOMIC_ACQUIRE);
	if (!st) {
		p = cp_sys__may(CP_SYS_MEMORY) ? /* a seccomp filter may forbid it (seccomp.c) */
			    mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0) :
			    MAP_FAILED;
		if (p == MAP_FAILED) {
			cp_warn_once("no memory for a library-call return stack: "
				     "a thread's library calls are not recorded");
			errno = saved_errno;
			return NULL;
		}
		st = p;
	}
	if (lc_self) {
		/* A signal handler set one up meanwhile: keep that one. */
		give_back(st);
		st = lc_self;
	} else {
		lc_self = st;
		/* The key's destructor gives it back when the thread ends. */
		pthread_setspecific(lc_key, st);
	}
	errno = saved_errno;
	return st;
}

/*
 * Called by the entry trampoline: returns where to jump (the function).
 * slotp is the caller's return address on the stack.
 */
uintptr_t cp_libcalls__enter(uint64_t idx, uintptr_t *slotp)
{
	const struct lc_slot *s = &slots[idx];
	struct lc_stack *st = lc_self;
	struct cp_thread *t;
	struct lc_entry *e;
	uint32_t i;

	if (unlikely(cp_session.state != CP_STATE_ON || !cp_gate__live()))
		return s->target;
	if (unlikely(!st)) {
		st = stack_new();
		if (!st)
			return s->target;
	}
	if (unlikely(st == LC_DEAD))
		return s->target;
	i = st->depth;
	if (unlikely(i == LC_DEPTH)) {
		st->lost++;
		t = cp_self;
		if (t && !t->busy)
			t->lost_events++;
		return s->target;
	}
	st->depth = i + 1; /* claim the entry first: a signal handler pushes above it */
	barrier();
	e = &st->e[i];
	e->ret = *slotp;
	e->slot = (uintptr_t)slotp;
	e->idx = idx;
	barrier();
	*slotp = (uintptr_t)cp_libcalls__return;
	__cyg_profile_func_enter((void *)s->fn, (void *)e->ret);
	/*
	 * The hook took its own frame address as the call's stack pointer,
	 * a few hundred bytes below the return slot.  A longjmp or catch
	 * inside the library function's callbacks compares against it (see
	 * cp_thread__unwind_to), so it must be the caller's side of the call,
	 * as for an instrumented function: just below the return slot.
	 */
	t = cp_self;
	if (t && !t->busy && t->cct.top->fn == s->fn && t->cct.top->sp < (uintptr_t)slotp)
		t->cct.top->sp = (uintptr_t)slotp - 16;
	return s->target;
}

/* Called by the return trampoline with the stack pointer after the return. */
uintptr_t cp_libcalls__leave(uintptr_t sp)
{
	struct lc_stack *st = lc_self;
	uintptr_t slot = sp - 8, ret;
	uint64_t idx;
	uint32_t i, depth;

	if (likely(st && st != LC_DEAD)) {
		depth = st->depth;
		for (i = depth; i > 0; i--) {
			if (st->e[i - 1].slot == slot) {
				ret = st->e[i - 1].ret;
				idx = st->e[i - 1].idx;
				/*
				 * Entries above are calls of another stack (a
				 * coroutine switched inside a callback) or left
				 * without a longjmp callprof saw: keep them, the
				 * first may still return.
				 */
				for (; i < depth; i++)
					st->e[i - 1] = st->e[i];
				barrier();
				st->depth = depth - 1;
				__cyg_profile_func_exit((void *)slots[idx].fn, (void *)ret);
				return ret;
			}
		}
	}
	/* Nowhere to return to: cannot happen unless memory was overwritten. */
	cp_warn("library call returned through a stack slot it was not called from: "
		"cannot continue");
	__builtin_trap();
}

/*
 * Control goes to the frame whose stack pointer is target (longjmp, catch):
 * calls whose return slot lies below it are over.  Like
 * cp_thread__unwind_to, a target above every entry belongs to another
 * stack (a coroutine's) and is left alone.
 */
void cp_libcalls__abandon_below(uintptr_t target)
{
	struct lc_stack *st = lc_self;
	uint32_t i;

	if (!st || st == LC_DEAD || !st->depth || st->e[0].slot + 8 < target)
		return;
	for (i = st->depth; i > 0 && st->e[i - 1].slot < target; i--)
		;
	st->depth = i;
}

/* ---- exceptions ---- */

/*
 * An unwinder cannot step through a replaced return address: it finds the
 * return trampoline, whose FDE says "end of stack", and a C++ exception
 * thrown through a library function's frame (a qsort comparator that
 * throws) would end in std::terminate.  So before any unwinding starts,
 * every call in progress gets its own return address back on the machine
 * stack and the return stack is emptied: those calls return (or are
 * unwound) as if never redirected.  Their open frames in the tree are
 * closed by the catch (interpose.c) or reconciled by the next exit.
 * Newest first: a slot reused by a later call holds the trampoline only
 * for that call, and an older entry for it then finds something else.
 */
static void give_back_returns(void)
{
	struct lc_stack *st = lc_self;

	if (!st || st == LC_DEAD)
		return;
	for (uint32_t i = st->depth; i > 0; i--) {
		uintptr_t *slot = (uintptr_t *)st->e[i - 1].slot;

		if (*slot == (uintptr_t)cp_libcalls__return)
			*slot = st->e[i - 1].ret;
	}
	barrier();
	st->depth = 0;
}

struct _Unwind_Exception;
typedef int (*raise_fn)(struct _Unwind_Exception *);
typedef int (*forced_fn)(struct _Unwind_Exception *, void *, void *);

static raise_fn real_raise, real_rethrow;
static forced_fn real_forced;

#define URC_FATAL_PHASE1_ERROR 3 /* no unwinder: the thrower terminates, as it would */
#define CP_UNWIND __attribute__((visibility("default"), no_instrument_function, noinline))

int _Unwind_RaiseException(struct _Unwind_Exception *e);
int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e);
int _Unwind_ForcedUnwind(struct _Unwind_Exception *e, void *stop, void *arg);

/* A throw (libstdc++'s __cxa_throw calls it through its PLT, so here). */
CP_UNWIND int _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	raise_fn next = CP_NEXT(real_raise, "_Unwind_RaiseException");

	if (!next)
		return URC_FATAL_PHASE1_ERROR;
	if (slots)
		give_back_returns();
	cp_sleds__give_back(cp_self, 0); /* the sleds' stubs too (sleds.c) */
	return next(e);
}

/* A rethrow (throw; in a catch block). */
CP_UNWIND int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	raise_fn next = CP_NEXT(real_rethrow, "_Unwind_Resume_or_Rethrow");

	if (!next)
		return URC_FATAL_PHASE1_ERROR;
	if (slots)
		give_back_returns();
	cp_sleds__give_back(cp_self, 0);
	return next(e);
}

/* pthread_exit and cancellation unwind the thread's stack. */
CP_UNWIND int _Unwind_ForcedUnwind(struct _Unwind_Exception *e, void *stop, void *arg)
{
	forced_fn next = CP_NEXT(real_forced, "_Unwind_ForcedUnwind");

	if (!next)
		return URC_FATAL_PHASE1_ERROR;
	if (slots)
		give_back_returns();
	cp_sleds__give_back(cp_self, 0);
	return next(e, stop, arg);
}

/* ---- finding and patching the slots ---- */

struct lc_module {
	uintptr_t base;	      /* load bias */
	uintptr_t lo, hi;     /* extent of the PT_LOAD segments */
	uintptr_t relro_lo;   /* PT_GNU_RELRO, page-rounded as the loader protects it */
	uintptr_t relro_hi;
	const ElfW(Dyn) *dyn; /* PT_DYNAMIC */
	const char *name;
	int instrumented;     /* its relocations name __cyg_profile_func_enter */
	int excluded;	      /* never a target: never_module, the runtime */
};

#define LC_MODULES 512

struct lc_scan {
	struct lc_module m[LC_MODULES];
	uint32_t n;
	uintptr_t self; /* an address in the runtime */
};

/* Values in the dynamic section of a module: glibc relocates most of them. */
static uintptr_t dyn_ptr(const struct lc_module *m, uintptr_t v)
{
	return v < m->base ? v + m->base : v;
}

struct dyninfo {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *jmprel, *rela;
	size_t jmprel_n, rela_n;
	const uint32_t *gnu_hash;
};

static void read_dyn(const struct lc_module *m, struct dyninfo *d)
{
	memset(d, 0, sizeof(*d));
	if (!m->dyn)
		return;
	for (const ElfW(Dyn) *p = m->dyn; p->d_tag != DT_NULL; p++) {
		switch (p->d_tag) {
		case DT_SYMTAB:
			d->symtab = (const ElfW(Sym) *)dyn_ptr(m, p->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = (const char *)dyn_ptr(m, p->d_un.d_ptr);
			break;
		case DT_JMPREL:
			d->jmprel = (const ElfW(Rela) *)dyn_ptr(m, p->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->jmprel_n = p->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_RELA:
			d->rela = (const ElfW(Rela) *)dyn_ptr(m, p->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->rela_n = p->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_GNU_HASH:
			d->gnu_hash = (const uint32_t *)dyn_ptr(m, p->d_un.d_ptr);
			break;
		}
	}
	if (!d->symtab || !d->strtab)
		d->jmprel_n = d->rela_n = 0;
	if (!d->jmprel)
		d->jmprel_n = 0;
	if (!d->rela)
		d->rela_n = 0;
}

static const char *rel_name(const struct dyninfo *d, const ElfW(Rela) *r)
{
	uint32_t sym = ELF64_R_SYM(r->r_info);

	return sym ? d->strtab + d->symtab[sym].st_name : NULL;
}

static int names_the_hook(const struct dyninfo *d, const ElfW(Rela) *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t type = ELF64_R_TYPE(r[i].r_info);
		const char *name;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		name = rel_name(d, &r[i]);
		if (name && !strcmp(name, "__cyg_profile_func_enter"))
			return 1;
	}
	return 0;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lc_scan *sc = arg;
	struct lc_module *m;
	struct dyninfo d;

	if (sc->n == LC_MODULES)
		return 1;
	m = &sc->m[sc->n];
	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->name = info->dlpi_name ? info->dlpi_name : "";
	m->lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (a < m->lo)
				m->lo = a;
			if (a + ph->p_memsz > m->hi)
				m->hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_DYNAMIC) {
			m->dyn = (const ElfW(Dyn) *)a;
		} else if (ph->p_type == PT_GNU_RELRO) {
			uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

			m->relro_lo = a & ~(pg - 1);
			m->relro_hi = (a + ph->p_memsz) & ~(pg - 1);
		}
	}
	if (m->lo >= m->hi)
		return 0; /* nothing loaded */
	for (size_t i = 0; i < sizeof(never_module) / sizeof(never_module[0]); i++)
		if (strstr(m->name, never_module[i]))
			m->excluded = 1;
	if (sc->self >= m->lo && sc->self < m->hi)
		m->excluded = 1;
	/* The vDSO's dynamic section is not relocated; it calls nothing anyway. */
	if (!strncmp(m->name, "linux-vdso", 10))
		m->dyn = NULL;
	read_dyn(m, &d);
	/* Hooks, or sleds patched (a sleds build names no hook). */
	m->instrumented = names_the_hook(&d, d.jmprel, d.jmprel_n) ||
			  names_the_hook(&d, d.rela, d.rela_n) || cp_sleds__covers(m->lo, m->hi);
	sc->n++;
	return 0;
}

static const struct lc_module *module_of(const struct lc_scan *sc, uintptr_t a)
{
	for (uint32_t i = 0; i < sc->n; i++)
		if (a >= sc->m[i].lo && a < sc->m[i].hi)
			return &sc->m[i];
	return NULL;
}

/* The address of name in m, by its GNU hash table (an ifunc: its resolver). */
static uintptr_t lookup(const struct lc_module *m, const char *name)
{
	struct dyninfo d;
	const uint32_t *h, *buckets, *chain;
	uint32_t nbuckets, symoffset, bloom_size, hash = 5381;

	read_dyn(m, &d);
	if (!d.gnu_hash || !d.symtab || !d.strtab)
		return 0;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		hash = hash * 33 + *c;
	h = d.gnu_hash;
	nbuckets = h[0];
	symoffset = h[1];
	bloom_size = h[2];
	if (!nbuckets)
		return 0;
	buckets = h + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nbuckets;
	for (uint32_t i = buckets[hash % nbuckets]; i >= symoffset; i++) {
		uint32_t ch = chain[i - symoffset];
		const ElfW(Sym) *s = &d.symtab[i];

		if ((ch | 1) == (hash | 1) && s->st_shndx != SHN_UNDEF && s->st_value &&
		    !strcmp(d.strtab + s->st_name, name))
			return m->base + s->st_value;
		if (ch & 1)
			break;
	}
	return 0;
}

static int never(const char *name)
{
	if (!name || !*name || !strncmp(name, "_ZGV", 4)) /* libmvec: wide vector arguments */
		return 1;
	for (size_t i = 0; i < sizeof(never_patch) / sizeof(never_patch[0]); i++)
		if (!strcmp(name, never_patch[i]))
			return 1;
	return 0;
}

/*
 * The target of a module's JUMP_SLOT relocation r, if it is to be
 * redirected: in a loaded module that is neither instrumented nor
 * excluded, and not a name of the table.
 */
static const struct lc_module *target_of(const struct lc_scan *sc, const struct lc_module *m,
					 const struct dyninfo *d, const ElfW(Rela) *r)
{
	const struct lc_module *tm;
	uintptr_t v;

	if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT || never(rel_name(d, r)))
		return NULL;
	v = *(const uintptr_t *)(m->base + r->r_offset);
	tm = module_of(sc, v);
	if (!tm || tm->instrumented || tm->excluded)
		return NULL; /* still lazy (points into m's PLT), hooked, or excluded */
	return tm;
}

static uint8_t *make_stubs(uint32_t n, size_t *bytes)
{
	size_t len = 16 + (size_t)n * 16;
	uint8_t *code = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED)
		return NULL;
	*(uintptr_t *)code = (uintptr_t)cp_libcalls__entry;
	memset(code + 8, 0xcc, len - 8); /* int3 */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = code + 16 + (size_t)i * 16;
		int32_t disp = (int32_t)(code - (p + 12)); /* to the entry's address, from the next insn */

		p[0] = 0x41, p[1] = 0xbb; /* mov $i, %r11d */
		memcpy(p + 2, &i, 4);
		p[6] = 0xff, p[7] = 0x25; /* jmp *disp(%rip) */
		memcpy(p + 8, &disp, 4);
	}
	if (mprotect(code, len, PROT_READ | PROT_EXEC)) {
		munmap(code, len);
		return NULL;
	}
	*bytes = len;
	return code;
}

void cp_libcalls__init(void)
{
	const char *want = cp_getenv("CALLPROF_LIBCALLS");
	int saved_errno = errno;
	struct lc_scan *sc;
	uint8_t *code = NULL;
	size_t code_bytes = 0;
	uint32_t n = 0, k = 0;

	if (!want || strcmp(want, "1") || cp_hook_mode == CP_MODE_COVERAGE)
		goto out; /* coverage: the exit hook does nothing, nothing to time */
	sc = mmap(NULL, sizeof(*sc), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sc == MAP_FAILED)
		goto fail;
	sc->self = (uintptr_t)cp_libcalls__entry;
	dl_iterate_phdr(add_module, sc);

	/* Count, then patch: the stubs and the slot table are sized once. */
	for (uint32_t i = 0; i < sc->n; i++) {
		const struct lc_module *m = &sc->m[i];
		struct dyninfo d;

		if (!m->instrumented || m->excluded)
			continue;
		read_dyn(m, &d);
		for (size_t r = 0; r < d.jmprel_n; r++)
			n += target_of(sc, m, &d, &d.jmprel[r]) != NULL;
	}
	if (!n)
		goto done;
	if (pthread_key_create(&lc_key, stack_release))
		goto fail_sc;
	slots = mmap(NULL, n * sizeof(*slots), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (slots == MAP_FAILED) {
		slots = NULL;
		goto fail_sc;
	}
	code = make_stubs(n, &code_bytes);
	if (!code)
		goto fail_sc;
	for (uint32_t i = 0; i < sc->n; i++) {
		const struct lc_module *m = &sc->m[i];
		int unprotected = 0;
		struct dyninfo d;

		if (!m->instrumented || m->excluded)
			continue;
		read_dyn(m, &d);
		for (size_t r = 0; r < d.jmprel_n && k < n; r++) {
			const ElfW(Rela) *rel = &d.jmprel[r];
			const struct lc_module *tm = target_of(sc, m, &d, rel);
			uintptr_t *got = (uintptr_t *)(m->base + rel->r_offset);

			if (!tm)
				continue;
			/* Full RELRO (-z now): the GOT is read-only by now. */
			if (!unprotected && m->relro_hi > m->relro_lo && (uintptr_t)got >= m->relro_lo &&
			    (uintptr_t)got < m->relro_hi) {
				if (mprotect((void *)m->relro_lo, m->relro_hi - m->relro_lo,
					     PROT_READ | PROT_WRITE))
					break;
				unprotected = 1;
			}
			slots[k].target = *got;
			slots[k].fn = lookup(tm, rel_name(&d, rel));
			if (!slots[k].fn)
				slots[k].fn = *got;
			__atomic_store_n(got, (uintptr_t)(code + 16 + (size_t)k * 16), __ATOMIC_RELEASE);
			k++;
		}
		if (unprotected)
			mprotect((void *)m->relro_lo, m->relro_hi - m->relro_lo, PROT_READ);
	}
	nslots = k;
done:
	munmap(sc, sizeof(*sc));
	goto out;
fail_sc:
	munmap(sc, sizeof(*sc));
fail:
	cp_warn_once("--libcalls: cannot set up the library-call trampolines; "
		     "library calls are not recorded");
out:
	errno = saved_errno;
}

#else

void cp_libcalls__init(void)
{
}

void cp_libcalls__abandon_below(uintptr_t target)
{
}

#endif
