/*
 * sled-shapes.c - what the shape of a sled's path costs per call, apart
 * from everything else the runtime does (bench/sled-shapes runs it).
 *
 *   sled-shapes SHAPE N REPS
 *
 * Computes fib(N) REPS times, fib built with a 5-byte patchable entry
 * that this program patches (as the runtime does) into a jump to the
 * SHAPE's thunk (sled-shapes.S):
 *
 *   plain         the NOPs left alone
 *   stub          today's shape: the thunk calls a C leaf
 *                 (no_caller_saved_registers) that pushes the frame and
 *                 returns the call's stub; the thunk jumps to it (an
 *                 indirect jump whose target depends on the return
 *                 address); the stub calls the body, calls a C leaf that
 *                 pops the frame, pushes the return address and returns
 *   stub-asm      the same shape, both halves in assembly in the thunk and
 *                 the stub, keeping only the registers they use
 *   thunkret      the thunk calls the body itself: the return address is
 *                 kept in the shadow stack only, and the thunk returns to
 *                 it after a C leaf popped the frame; C leaves as in stub
 *   thunkret-asm  thunkret, both halves in assembly
 *   hooks         fib built with clang -finstrument-functions-after-
 *                 inlining (sled-shapes-hooks.c) calling C hooks that do
 *                 the same work (normal calling convention)
 *
 * Every shape does the same bookkeeping: find the call's node among its
 * parent's last two children (else a short list), count the call, push a
 * frame (node, slot, return address) on a thread-local stack, pop it at
 * the return.  The tree is flat (every call's parent is the root: three
 * nodes), so that the cost measured is the path's, not the tree's memory.
 * Prints the shape, fib's sum, and the seconds the REPS runs took.  Built
 * -mgeneral-regs-only (as the runtime's hooks.c: the C leaves must not
 * touch a vector register).
 * A benchmark of shapes, not the runtime: it says which shape is worth
 * building (docs/internals/sleds.md, "What the path costs").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline, patchable_function_entry(5, 0))) long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

long fib_hooked(long n);

struct node {
	uintptr_t fn, site, stub; /* offsets 0, 8, 16: sled-shapes.S */
	struct node *c1, *c2;	  /* 24, 32: the last two children found */
	uint64_t calls;		  /* 40 */
	struct node *kids[4];
	int nkids;
};

struct frame {
	struct node *node;
	uintptr_t slot, ret; /* 0, 8, 16; 24 bytes a frame */
};

struct node shape_root;
__thread struct frame *shape_top;
static __thread struct frame stack[256];
static struct node nodes[16];
static int nnodes;
/* The stubs of the three return addresses fib's calls have (its two
 * calls of itself and main's), for the stub shapes; sled-shapes.S. */
uintptr_t shape_site[3];
uintptr_t *shape_stubs;
extern uintptr_t stub_c[3], stub_asm[3];
extern char thunk_stub[], thunk_stub_asm[], thunk_ret[], thunk_ret_asm[];

#define LEAF __attribute__((no_caller_saved_registers, noinline, used))

static struct node *find(uintptr_t fn, uintptr_t site)
{
	struct node *p = &shape_root, *n = p->c1;
	int i;

	/* As the runtime's fast path: the last two, unchanged on a hit. */
	if (n && n->fn == fn && n->site == site)
		return n;
	n = p->c2;
	if (n && n->fn == fn && n->site == site)
		return n;
	for (i = 0; i < p->nkids; i++)
		if (p->kids[i]->site == site && p->kids[i]->fn == fn)
			break;
	if (i < p->nkids) {
		n = p->kids[i];
	} else {
		if (nnodes == 16 || p->nkids == 4)
			abort();
		n = &nodes[nnodes++];
		n->fn = fn;
		n->site = site;
		for (i = 0; i < 3; i++)
			if (shape_site[i] == site || !shape_site[i])
				break;
		if (i == 3)
			abort();
		shape_site[i] = site;
		n->stub = shape_stubs ? shape_stubs[i] : 0;
		p->kids[p->nkids++] = n;
	}
	p->c2 = p->c1;
	p->c1 = n;
	return n;
}

static void push(struct node *n, uintptr_t slot, uintptr_t ret)
{
	struct frame *f = shape_top + 1;

	n->calls++;
	f->node = n;
	f->slot = slot;
	f->ret = ret;
	shape_top = f;
}

/* The C leaves (no_caller_saved_registers: they keep every register but
 * rax, as the runtime's fast paths do), and the slow path of the
 * assembly shapes' entry. */
LEAF uintptr_t shape_enter(uintptr_t *slot)
{
	struct node *n = find((uintptr_t)fib, *slot);

	push(n, (uintptr_t)slot, *slot);
	return n->stub;
}

LEAF uintptr_t shape_exit(uintptr_t *slot)
{
	struct frame *f = shape_top;

	if (f->slot != (uintptr_t)slot)
		abort();
	shape_top = f - 1;
	return f->ret;
}

void __cyg_profile_func_enter(void *fn, void *site)
{
	push(find((uintptr_t)fn, (uintptr_t)site), 0, (uintptr_t)site);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
	shape_top--;
}

static void patch(const char *thunk)
{
	unsigned char *p = (unsigned char *)fib;
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
	int32_t rel = (int32_t)(thunk - (const char *)(p + 5));

	if (mprotect((void *)start, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		perror("sled-shapes: mprotect");
		exit(1);
	}
	p[0] = 0xe9;
	memcpy(p + 1, &rel, 4);
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n, reps, sum = 0, ns;
	const char *shape;

	if (argc != 4) {
		fprintf(stderr, "usage: sled-shapes SHAPE N REPS\n");
		return 129;
	}
	shape = argv[1];
	n = atol(argv[2]);
	reps = atol(argv[3]);
	shape_top = stack;
	if (!strcmp(shape, "stub")) {
		shape_stubs = stub_c;
		patch(thunk_stub);
	} else if (!strcmp(shape, "stub-asm")) {
		shape_stubs = stub_asm;
		patch(thunk_stub_asm);
	} else if (!strcmp(shape, "thunkret")) {
		patch(thunk_ret);
	} else if (!strcmp(shape, "thunkret-asm")) {
		patch(thunk_ret_asm);
	} else if (strcmp(shape, "plain") && strcmp(shape, "hooks")) {
		fprintf(stderr, "sled-shapes: no shape '%s'\n", shape);
		return 129;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < reps; i++)
		sum += strcmp(shape, "hooks") ? fib(n) : fib_hooked(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (shape_top != stack) {
		fprintf(stderr, "sled-shapes: %s: the frames do not pair\n", shape);
		return 1;
	}
	ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
	printf("%s %ld %ld.%09ld\n", shape, sum, ns / 1000000000L, ns % 1000000000L);
	return 0;
}
