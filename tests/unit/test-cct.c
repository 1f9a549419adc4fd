/*
 * test-cct.c - the per-thread calling-context tree (runtime/cct.c) as a
 * unit: child lookup under collisions and table growth, site records, the
 * caches, deep stacks and their growth, unwinding, fold, recycle, running
 * out of memory, and an update abandoned at every publication point
 * (cct.h), after which the tree must read as consistent, repair, and go
 * on without duplicates or a call's time counted twice.
 *
 * Built with runtime/cct.c compiled in and CP_CCT_TEST defined (Makefile):
 * every CP_CCT_POINT calls cp_cct_test__point() below, which can longjmp
 * out of the update as a signal handler would.  The cp_cct_env__*
 * functions the core asks its user for are defined here: plain mmap, with
 * a switch to make allocation fail.
 */
#include <setjmp.h>
#include <sys/mman.h>

#include "runtime/cct.h"
#include "tests/unit/unittest.h"

/* ---- what the core asks of its user ---- */

static int allocs_left = -1; /* allocations that may still succeed; -1: any */
static int oom_calls;
static uintptr_t excluded_fn; /* new nodes of this function get CP_NF_EXCLUDED */

void *cp_cct_env__alloc(size_t bytes)
{
	void *p;

	if (allocs_left == 0)
		return NULL;
	if (allocs_left > 0)
		allocs_left--;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void cp_cct_env__free(void *p, size_t bytes)
{
	munmap(p, bytes);
}

uint64_t cp_cct_env__limit(const struct cp_cct *c, uint64_t cap)
{
	return cap - 1;
}

uint32_t cp_cct_env__new_flags(struct cp_cct *c, const struct cp_node *parent, uintptr_t fn)
{
	return fn == excluded_fn && fn ? CP_NF_EXCLUDED : 0;
}

void cp_cct_env__out_of_memory(struct cp_cct *c)
{
	oom_calls++;
}

/* ---- publication points ---- */

static long points_seen, abandon_at = -1;
static long point_hits[CP_PT_COUNT];
static jmp_buf abandon_jb;

void cp_cct_test__point(struct cp_cct *c, int point)
{
	CHECK(point > 0 && point < CP_PT_COUNT);
	point_hits[point]++;
	if (points_seen++ == abandon_at)
		longjmp(abandon_jb, point);
}

/* ---- helpers ---- */

static struct cp_cct *new_tree(uint64_t frames0, uint64_t slots0, int nosites)
{
	struct cp_cct *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(c != MAP_FAILED);
	CHECK_EQ(cp_cct__init(c, frames0, slots0, nosites), 0);
	return c;
}

static void free_tree(struct cp_cct *c)
{
	cp_cct__release(c);
	munmap(c, sizeof(*c));
}

static int is_published(const struct cp_cct *c, const struct cp_node *n)
{
	if (n == &c->root)
		return 1;
	for (const struct cp_chunk *k = c->chunks; k; k = k->next)
		if (n >= k->n && n < k->n + k->used)
			return 1;
	return 0;
}

/* Every call the test makes takes one tick: a node's ticks never exceed its calls. */
static int one_tick_calls;

/*
 * What a reader (the dump, a watcher) may rely on at any instant: the
 * nodes below each chunk's used count are whole, with ids in allocation
 * order, parents and canons published before them.
 */
static uint32_t check_published(const struct cp_cct *c)
{
	uint32_t id = 1;

	CHECK(c->root.canon == &c->root && c->root.id == 0);
	for (const struct cp_chunk *k = c->chunks; k; k = k->next) {
		CHECK_LE(k->used, k->cap);
		for (uint32_t i = 0; i < k->used; i++, id++) {
			const struct cp_node *n = &k->n[i];

			CHECK_EQ(n->id, id);
			CHECK(n->fn != 0);
			CHECK(n->parent && is_published(c, n->parent));
			CHECK(!cp_node__is_site(n->parent));
			CHECK_LE(n->parent->id + 1, n->id);
			CHECK(n->canon && is_published(c, n->canon));
			if (cp_node__is_site(n)) {
				CHECK(!cp_node__is_site(n->canon));
				CHECK_EQ(n->canon->fn, n->fn);
				CHECK(n->canon->parent == n->parent);
				CHECK(n->canon->site != n->site);
				CHECK_LE(n->canon->id + 1, n->id);
			}
			if (one_tick_calls)
				CHECK_LE(n->ticks, n->calls);
		}
	}
	return id; /* 1 + nodes published */
}

/* Where n is filed in c's table, or -1. */
static long slot_of(const struct cp_cct *c, const struct cp_node *n)
{
	for (uint64_t j = 0; j <= c->htab->mask; j++)
		if (c->htab->s[j] == n)
			return (long)j;
	return -1;
}

/* Invariants I1 - I5 of cct.h, for a tree no update is under way in (after repair). */
static void check_tree(const struct cp_cct *c)
{
	uint32_t published = check_published(c), filed = 0;
	const struct cp_chunk *k;

	/* I1 */
	CHECK_EQ(c->nnodes, published);
	for (k = c->chunks; k && k != c->chunk; k = k->next)
		CHECK_EQ(k->used, k->cap); /* chunks before the current one are full */
	CHECK(k == c->chunk);
	CHECK(c->free == c->chunk->n + c->chunk->used);
	CHECK(c->free_end == c->chunk->n + c->chunk->cap);
	/* I3 */
	for (uint64_t j = 0; j <= c->htab->mask; j++) {
		const struct cp_node *n = c->htab->s[j];

		if (!n)
			continue;
		filed++;
		CHECK(is_published(c, n));
	}
	CHECK_EQ(c->htab->count, filed);
	CHECK_EQ(filed, c->nnodes - 1);
	/* half full at most, but for the one a growth that was abandoned left */
	CHECK_LE(c->htab->count * 2, c->htab->mask + 3);
	if (c->nnodes < 3000) {
		for (const struct cp_chunk *a = c->chunks; a; a = a->next)
			for (uint32_t i = 0; i < a->used; i++) {
				const struct cp_node *n = &a->n[i];

				CHECK(slot_of(c, n) >= 0);
				for (const struct cp_chunk *b = a; b; b = b->next)
					for (uint32_t j = b == a ? i + 1 : 0; j < b->used; j++) {
						const struct cp_node *m = &b->n[j];

						CHECK(!(m->fn == n->fn && m->parent == n->parent &&
							cp_node__is_site(m) == cp_node__is_site(n) &&
							(!cp_node__is_site(m) || m->site == n->site)));
					}
			}
	}
	/* I4 */
	for (const struct cp_chunk *a = c->chunks; a; a = a->next)
		for (uint32_t i = 0; i < a->used; i++) {
			const struct cp_node *n = &a->n[i];
			const struct cp_node *ch[2] = { n->cache, n->cache2 };

			for (int x = 0; x < 2; x++)
				if (ch[x]) {
					CHECK(is_published(c, ch[x]));
					CHECK(ch[x]->parent == n->canon);
				}
		}
	/* I5 */
	CHECK(c->stack->f[0].node == &c->root);
	CHECK(c->top >= c->stack->f && c->top <= c->limit);
	CHECK(c->limit < c->stack->f + c->stack->cap);
	for (const struct cp_frame *f = c->stack->f + 1; f <= c->top; f++)
		CHECK(is_published(c, f->node) || f->node == &c->lost);
}

/* A call of fn from site in the context of the top frame: find the node, push a frame. */
static struct cp_node *enter(struct cp_cct *c, uintptr_t fn, uintptr_t site, uintptr_t sp,
			     uint64_t now)
{
	struct cp_node *n;
	struct cp_frame *f;

	if (c->top == c->limit)
		CHECK_EQ(cp_cct__grow_stack(c), 0);
	n = cp_cct__child(c, c->top->node, fn, site);
	f = cp_cct__open_frame(c, n, fn, sp);
	f->start = now;
	cp_cct__publish_frame(c, f);
	return n;
}

/* The top call returns at now. */
static void leave(struct cp_cct *c, uint64_t now)
{
	struct cp_frame *f = c->top;
	uint64_t start = f->start;
	struct cp_node *n = f->node;

	CHECK(f > c->stack->f);
	cp_cct__pop_frame(c, f);
	cp_node__add_call(n, now - start);
}

#define FN(i) ((uintptr_t)0x400000 + 16 * (uintptr_t)(i))
#define SITE(i) ((uintptr_t)0x500000 + 4 * (uintptr_t)(i))

/* ---- tests ---- */

TEST(cct_child_finds_the_same_node)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *a = cp_cct__child(c, &c->root, FN(1), SITE(1));
	struct cp_node *b = cp_cct__child(c, &c->root, FN(2), SITE(1));

	CHECK(a != b);
	CHECK(a != &c->lost && b != &c->lost);
	CHECK_EQ(a->id, 1);
	CHECK_EQ(b->id, 2);
	CHECK(a->parent == &c->root && a->canon == a);
	CHECK_EQ(a->calls, 0);
	CHECK_EQ(a->min_ticks, UINT64_MAX);
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(1)) == a);
	CHECK(cp_cct__child(c, &c->root, FN(2), SITE(1)) == b);
	/* the same function below another parent is another context */
	CHECK(cp_cct__child(c, a, FN(2), SITE(1)) != b);
	CHECK_EQ(c->nnodes, 4);
	check_tree(c);
	free_tree(c);
}

TEST(cct_caches_hold_the_last_two_children)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *a = cp_cct__child(c, &c->root, FN(1), SITE(1));
	struct cp_node *b = cp_cct__child(c, &c->root, FN(2), SITE(2));

	CHECK(c->root.cache == b && c->root.cache2 == a);
	/* a hit on cache2 swaps them; a hit on cache changes nothing */
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(1)) == a);
	CHECK(c->root.cache == a && c->root.cache2 == b);
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(1)) == a);
	CHECK(c->root.cache == a && c->root.cache2 == b);
	check_tree(c);
	free_tree(c);
}

TEST(cct_site_records)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *n = cp_cct__child(c, &c->root, FN(1), SITE(1));
	struct cp_node *s2 = cp_cct__child(c, &c->root, FN(1), SITE(2));
	struct cp_node *s3 = cp_cct__child(c, &c->root, FN(1), SITE(3));
	struct cp_node *kid, *kid2;

	CHECK(!cp_node__is_site(n));
	CHECK(cp_node__is_site(s2) && cp_node__is_site(s3));
	CHECK(s2->canon == n && s3->canon == n);
	CHECK(s2 != s3);
	CHECK(s2->parent == &c->root && s2->fn == FN(1) && s2->site == SITE(2));
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(2)) == s2);
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(1)) == n);
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(3)) == s3);
	/* children of a site record hang below its node */
	kid = cp_cct__child(c, s2, FN(7), SITE(9));
	CHECK(kid->parent == n);
	CHECK(cp_cct__child(c, n, FN(7), SITE(9)) == kid);
	CHECK(cp_cct__child(c, s3, FN(7), SITE(9)) == kid);
	CHECK(s2->cache == kid && s3->cache == kid);
	/* the same function called from two sites below the site record: a record of the kid */
	kid2 = cp_cct__child(c, s3, FN(7), SITE(10));
	CHECK(kid2->canon == kid && kid2->parent == n);
	CHECK_EQ(c->nnodes, 6);
	check_tree(c);
	free_tree(c);
}

TEST(cct_no_sites_mode_keeps_one_node)
{
	struct cp_cct *c = new_tree(16, 16, 1);
	struct cp_node *n = cp_cct__child(c, &c->root, FN(1), SITE(1));

	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(2)) == n);
	CHECK_EQ(c->nnodes, 2);
	check_tree(c);
	free_tree(c);
}

TEST(cct_new_node_flags_come_from_the_user)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *n;

	excluded_fn = FN(5);
	n = cp_cct__child(c, &c->root, FN(5), SITE(1));
	CHECK_EQ(n->flags, CP_NF_EXCLUDED);
	CHECK_EQ(cp_cct__child(c, &c->root, FN(6), SITE(1))->flags, 0);
	excluded_fn = 0;
	free_tree(c);
}

/* Every memo entry of c's table set to n (NULL: emptied). */
static void memo_fill(struct cp_cct *c, struct cp_node *n)
{
	for (size_t i = 0; i < sizeof(c->htab->memo) / sizeof(c->htab->memo[0]); i++)
		c->htab->memo[i] = n;
}

/*
 * The memo is a hint: whatever its entries hold (another call's record,
 * another function's from the same site as an indirect call makes, a site
 * record where the node is meant, a node of a tree cleared since), a
 * lookup returns the record the table gives, through cp_cct__child and
 * cp_cct__find (the sleds' fast path) alike; a lookup that found its
 * record leaves it in the memo.
 */
TEST(cct_memo_is_only_a_hint)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *k[6], *n1, *n2, *s2, *kid;
	struct cp_node **m;

	/* an indirect call: two functions from one site, and one more from a second site */
	n1 = cp_cct__child(c, &c->root, FN(1), SITE(1));
	n2 = cp_cct__child(c, &c->root, FN(2), SITE(1));
	s2 = cp_cct__child(c, &c->root, FN(1), SITE(2));
	CHECK(cp_node__is_site(s2) && s2->canon == n1);
	for (int i = 0; i < 6; i++) /* more callees than the two the root remembers */
		k[i] = cp_cct__child(c, &c->root, FN(10 + i), SITE(10 + i));
	m = cp_cct__memo(c->htab, &c->root, FN(1), SITE(2));
	CHECK(*m == s2);
	for (int round = 0; round < 5; round++) {
		/* round 0: as left; then every entry another record, or none */
		struct cp_node *forged[] = { NULL, n1, n2, s2, k[3] };

		if (round)
			memo_fill(c, forged[round]);
		for (int i = 0; i < 6; i++) {
			CHECK(cp_cct__child(c, &c->root, FN(10 + i), SITE(10 + i)) == k[i]);
			CHECK(cp_cct__find(c, &c->root, FN(10 + (i + 3) % 6), SITE(10 + (i + 3) % 6)) ==
			      k[(i + 3) % 6]);
		}
		if (round)
			memo_fill(c, forged[round]);
		CHECK(cp_cct__child(c, &c->root, FN(2), SITE(1)) == n2);
		CHECK(cp_cct__child(c, &c->root, FN(1), SITE(1)) == n1);
		CHECK(cp_cct__find(c, &c->root, FN(2), SITE(1)) == n2);
		CHECK(cp_cct__child(c, &c->root, FN(1), SITE(2)) == s2);
		CHECK(cp_cct__find(c, &c->root, FN(1), SITE(1)) == n1);
		CHECK(cp_cct__find(c, &c->root, FN(1), SITE(2)) == s2);
		/* below a site record: the lookup is its node's */
		CHECK(cp_cct__find(c, s2, FN(3), SITE(3)) == NULL);
	}
	/* the same function and site below another parent: another record */
	kid = cp_cct__child(c, n1, FN(10), SITE(10));
	CHECK(kid != k[0] && kid->parent == n1);
	memo_fill(c, k[0]);
	CHECK(cp_cct__child(c, n1, FN(10), SITE(10)) == kid);
	CHECK(cp_cct__find(c, s2, FN(10), SITE(10)) == kid);
	memo_fill(c, kid);
	CHECK(cp_cct__find(c, &c->root, FN(10), SITE(10)) == k[0]);
	CHECK_EQ(c->nnodes, 11); /* nothing made twice */
	check_tree(c);
	/* cleared, the memo is empty: no hint into a node handed out again */
	cp_cct__clear(c);
	for (size_t i = 0; i < sizeof(c->htab->memo) / sizeof(c->htab->memo[0]); i++)
		CHECK(c->htab->memo[i] == NULL);
	n2 = cp_cct__child(c, &c->root, FN(2), SITE(1));
	CHECK(n2->id == 1 && n2->fn == FN(2));
	CHECK(cp_cct__find(c, &c->root, FN(1), SITE(1)) == NULL);
	check_tree(c);
	free_tree(c);
	/* without sites: the node whatever the site, from the memo too */
	c = new_tree(16, 16, 1);
	n1 = cp_cct__child(c, &c->root, FN(1), SITE(1));
	memo_fill(c, n1);
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(7)) == n1);
	CHECK(cp_cct__find(c, &c->root, FN(1), SITE(8)) == n1);
	CHECK(cp_cct__child(c, &c->root, FN(2), SITE(7)) != n1);
	CHECK_EQ(c->nnodes, 3);
	check_tree(c);
	free_tree(c);
}

/*
 * Many keys in a table that starts at 4 slots: probing runs through
 * collisions (keys chosen to share the first slot) and the table doubles
 * many times; every key still finds its one node.
 */
TEST(cct_lookup_under_collisions_and_growth)
{
	struct cp_cct *c = new_tree(16, 4, 0);
	enum { N = 5000 };
	static struct cp_node *got[N];
	uintptr_t fns[N];
	uint64_t mask0 = c->htab->mask;
	int nf = 0;

	/* first, keys whose hash lands in the same slot of the first table */
	for (uintptr_t i = 1; nf < 40; i++) {
		uintptr_t fn = FN(i);

		if ((cp_ptr_hash(&c->root, fn) & 1023) == (cp_ptr_hash(&c->root, FN(1)) & 1023))
			fns[nf++] = fn;
	}
	for (int i = nf; i < N; i++)
		fns[i] = FN(1000000 + i);
	for (int i = 0; i < N; i++) {
		got[i] = cp_cct__child(c, &c->root, fns[i], SITE(1));
		CHECK(got[i] != &c->lost);
		CHECK_EQ(got[i]->id, (uint64_t)i + 1);
	}
	CHECK(c->htab->mask > mask0);
	CHECK_LE((uint64_t)N * 2, c->htab->mask + 1);
	CHECK(c->chunks->next != NULL); /* more than one chunk */
	for (int i = N - 1; i >= 0; i--)
		CHECK(cp_cct__child(c, &c->root, fns[i], SITE(1)) == got[i]);
	/* and below a child, under its own key space */
	for (int i = 0; i < 100; i++)
		CHECK(cp_cct__child(c, got[7], fns[i], SITE(1))->parent == got[7]);
	CHECK_EQ(c->nnodes, N + 101);
	check_tree(c);
	free_tree(c);
}

TEST(cct_deep_stack_grows_and_keeps_its_frames)
{
	struct cp_cct *c = new_tree(4, 16, 0);
	enum { DEPTH = 20000 };
	struct cp_stack *first = c->stack;
	struct cp_node *n = NULL;
	int grown = 0;

	for (int d = 0; d < DEPTH; d++) {
		struct cp_stack *s = c->stack;

		n = enter(c, FN(d % 3), SITE(d % 2), (uintptr_t)(1u << 30) - 64 * (uintptr_t)d,
			  (uint64_t)d);
		grown += c->stack != s;
		CHECK(c->top->node == n);
	}
	CHECK_EQ(c->top - c->stack->f, DEPTH);
	CHECK_LE(DEPTH + 1, c->stack->cap);
	CHECK_LE(10, grown);
	/* the older mappings stay, linked, the first one last */
	{
		struct cp_stack *s = c->stack;

		while (s->older)
			s = s->older;
		CHECK(s == first);
	}
	for (int d = 1; d <= DEPTH; d++) {
		const struct cp_frame *f = &c->stack->f[d];

		CHECK_EQ(f->fn, FN((d - 1) % 3));
		CHECK_EQ(f->start, (uint64_t)(d - 1));
		CHECK_EQ(f->sp, (uintptr_t)(1u << 30) - 64 * (uintptr_t)(d - 1));
		CHECK(f->node->fn == f->fn);
	}
	check_tree(c);
	/* one tick per call: close them all at DEPTH */
	CHECK_EQ(cp_cct__close_open(c, DEPTH), DEPTH);
	CHECK(c->top == c->stack->f);
	CHECK_EQ(n->calls, 1);
	CHECK_EQ(n->ticks, 1);
	CHECK_EQ(n->min_ticks, 1);
	CHECK_EQ(n->max_ticks, 1);
	free_tree(c);
}

TEST(cct_unwind_closes_the_frames_below_the_target)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *n[6];

	/* frames at sp 1000, 900, ..., 500 (stacks grow down) */
	for (int d = 0; d < 6; d++)
		n[d] = enter(c, FN(d), SITE(0), 1000 - 100 * (uintptr_t)d, 10);
	/* a jump to the frame of depth 2 (sp 800): the callees' frames close */
	CHECK_EQ(cp_cct__unwind_to(c, 800 + 16, 15, 1), 3);
	CHECK_EQ(c->top - c->stack->f, 3);
	CHECK(c->top->node == n[2]);
	CHECK_EQ(n[5]->ticks, 5);
	CHECK_EQ(n[3]->ticks, 5);
	CHECK_EQ(n[2]->ticks, 0);
	/* untimed: closed, nothing added */
	CHECK_EQ(cp_cct__unwind_to(c, 900 + 16, 20, 0), 1);
	CHECK_EQ(n[2]->ticks, 0);
	/* a target above every frame (another stack) is left alone */
	CHECK_EQ(cp_cct__unwind_to(c, 5000, 20, 1), 0);
	/* UINTPTR_MAX closes all */
	CHECK_EQ(cp_cct__unwind_to(c, UINTPTR_MAX, 20, 1), 2);
	CHECK(c->top == c->stack->f);
	check_tree(c);
	free_tree(c);
}

/* view() for the fold: counts minus 1 call and 1 tick, as a reset baseline would. */
static const struct cp_node *minus_one(const struct cp_node *n, void *arg, struct cp_node *tmp)
{
	*tmp = *n;
	tmp->calls = n->calls ? n->calls - 1 : 0;
	tmp->ticks = n->ticks ? n->ticks - 1 : 0;
	(*(int *)arg)++;
	return tmp;
}

TEST(cct_fold_of_exited_threads)
{
	struct cp_cct *dst = new_tree(16, 16, 0), *t1 = new_tree(16, 16, 0), *t2 = new_tree(16, 16, 0);
	static struct cp_node *to[4096];
	struct cp_node *a, *b, *s, *x;
	int viewed = 0;

	/* t1: A (3 calls of 2 ticks) > B (1 call of 5); A from a second site (1 call of 7) */
	for (int i = 0; i < 3; i++) {
		enter(t1, FN(1), SITE(1), 1000, 0);
		leave(t1, 2);
	}
	enter(t1, FN(1), SITE(1), 1000, 0);
	enter(t1, FN(2), SITE(1), 900, 0);
	leave(t1, 5);
	leave(t1, 5);
	enter(t1, FN(1), SITE(2), 1000, 0);
	leave(t1, 7);
	cp_cct__child(t1, &t1->root, FN(1), SITE(1))->flags |= CP_NF_UNTIMED;
	/* open at attach (seeded frames, not calls): 2 of A, 1 of A's second site */
	cp_cct__child(t1, &t1->root, FN(1), SITE(1))->open_at_start = 2;
	cp_cct__child(t1, &t1->root, FN(1), SITE(2))->open_at_start = 1;
	/* t2: B below the root, and A (1 call of 9) > C */
	enter(t2, FN(2), SITE(1), 1000, 0);
	leave(t2, 4);
	enter(t2, FN(1), SITE(1), 1000, 0);
	enter(t2, FN(3), SITE(1), 900, 0);
	leave(t2, 1);
	leave(t2, 9);
	cp_cct__child(t2, &t2->root, FN(1), SITE(1))->open_at_start = 5;

	cp_cct__fold(dst, t1, to, NULL, NULL);
	CHECK(to[0] == &dst->root);
	a = cp_cct__child(dst, &dst->root, FN(1), SITE(1));
	CHECK_EQ(a->calls, 4);
	CHECK_EQ(a->ticks, 11);
	CHECK_EQ(a->min_ticks, 2);
	CHECK_EQ(a->max_ticks, 5);
	CHECK_EQ(a->open_at_start, 2);
	b = cp_cct__child(dst, a, FN(2), SITE(1));
	CHECK_EQ(b->calls, 1);
	CHECK_EQ(b->ticks, 5);
	s = cp_cct__child(dst, &dst->root, FN(1), SITE(2));
	CHECK(s->canon == a);
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(s->ticks, 7);
	CHECK_EQ(s->open_at_start, 1);
	CHECK_EQ(b->open_at_start, 0);
	CHECK(to[1] == a);
	/* flags travel: a fold keeps a context count-only */
	CHECK_EQ(a->flags & CP_NF_UNTIMED, CP_NF_UNTIMED);
	cp_cct__fold(dst, t2, to, minus_one, &viewed);
	CHECK_EQ(viewed, (int)t2->nnodes - 1);
	CHECK_EQ(a->calls, 4); /* + 1 - 1 */
	CHECK_EQ(a->ticks, 19); /* + 9 - 1 */
	CHECK_EQ(a->max_ticks, 9);
	CHECK_EQ(a->open_at_start, 7); /* 2 + 5: the view keeps it */
	x = cp_cct__child(dst, a, FN(3), SITE(1));
	CHECK_EQ(x->calls, 0);
	CHECK_EQ(x->min_ticks, 1);
	CHECK(cp_cct__child(dst, &dst->root, FN(2), SITE(1)) != b);
	/* the sources are unchanged */
	CHECK_EQ(t1->nnodes, 4);
	CHECK_EQ(t1->root.cache2->calls + t1->root.cache->calls, 5);
	check_tree(dst);
	check_tree(t1);
	check_tree(t2);
	free_tree(dst);
	free_tree(t1);
	free_tree(t2);
}

TEST(cct_recycle_reuses_memory_with_fresh_nodes)
{
	struct cp_cct *c = new_tree(4, 16, 0);
	struct cp_chunk *first = c->chunks, *second;
	struct cp_node *n0, *n;
	enum { N = 2000 };

	/* three chunks' worth, with every count set */
	for (int i = 0; i < N; i++) {
		n = enter(c, FN(i), SITE(i % 2), 1000, 0);
		n->wait_ticks = n->inactive_ticks = 3;
		n->switches_vol = n->switches_invol = 2;
		n->open_at_start = 4;
		leave(c, 1);
	}
	second = first->next;
	CHECK(second && second->next);
	n0 = &first->n[0];
	cp_cct__clear(c);
	CHECK_EQ(c->nnodes, 1);
	CHECK(c->chunks == first && c->chunk == first);
	for (struct cp_chunk *k = c->chunks; k; k = k->next)
		CHECK_EQ(k->used, 0);
	CHECK_EQ(c->htab->count, 0);
	CHECK(c->top == c->stack->f && c->top->node == &c->root);
	CHECK_EQ(c->root.calls, 1);
	CHECK(!c->root.cache && !c->root.cache2);
	check_tree(c);
	/* new nodes take the old memory, zeroed, and move on into the next chunks */
	n = cp_cct__child(c, &c->root, FN(77777), SITE(1));
	CHECK(n == n0);
	CHECK_EQ(n->id, 1);
	CHECK_EQ(n->calls, 0);
	CHECK_EQ(n->ticks, 0);
	CHECK_EQ(n->wait_ticks, 0);
	CHECK_EQ(n->inactive_ticks, 0);
	CHECK_EQ(n->switches_vol, 0);
	CHECK_EQ(n->switches_invol, 0);
	CHECK_EQ(n->open_at_start, 0);
	CHECK_EQ(n->min_ticks, UINT64_MAX);
	CHECK_EQ(n->max_ticks, 0);
	CHECK(!n->cache && !n->cache2);
	for (int i = 1; i < N; i++)
		cp_cct__child(c, &c->root, FN(100000 + i), SITE(1));
	CHECK(c->chunk != first);
	CHECK(c->chunks->next == second); /* no new chunk mapped */
	check_tree(c);
	free_tree(c);
}

TEST(cct_zero_counts_keeps_the_tree)
{
	struct cp_cct *c = new_tree(16, 16, 0);
	struct cp_node *n = enter(c, FN(1), SITE(1), 1000, 0);

	leave(c, 3);
	c->lost.calls = 5;
	n->open_at_start = c->lost.open_at_start = 2;
	cp_cct__zero(c);
	CHECK_EQ(n->calls, 0);
	CHECK_EQ(n->open_at_start, 0);
	CHECK_EQ(c->lost.open_at_start, 0);
	CHECK_EQ(n->ticks, 0);
	CHECK_EQ(n->min_ticks, UINT64_MAX);
	CHECK_EQ(c->lost.calls, 0);
	CHECK(!c->root.cache);
	CHECK(cp_cct__child(c, &c->root, FN(1), SITE(1)) == n);
	CHECK_EQ(c->nnodes, 2);
	free_tree(c);
}

TEST(cct_out_of_memory_gives_the_lost_node)
{
	struct cp_cct *c = new_tree(4, 16, 0);
	uint32_t cap = c->chunks->cap;
	struct cp_node *n;

	oom_calls = 0;
	for (uint32_t i = 0; i < cap; i++)
		CHECK(cp_cct__child(c, &c->root, FN(i), SITE(1)) != &c->lost);
	allocs_left = 0;
	n = cp_cct__child(c, &c->root, FN(cap), SITE(1));
	CHECK(n == &c->lost);
	CHECK(c->stopped);
	CHECK_EQ(oom_calls, 1);
	/* known contexts are still found; new ones, and anything below lost, go to lost */
	CHECK(cp_cct__child(c, &c->root, FN(3), SITE(1)) != &c->lost);
	CHECK(cp_cct__child(c, &c->root, FN(cap + 1), SITE(1)) == &c->lost);
	CHECK(cp_cct__child(c, &c->lost, FN(3), SITE(1)) == &c->lost);
	CHECK_EQ(oom_calls, 1);
	/* a stack that cannot grow says so and stays as it was */
	while (c->top < c->limit)
		enter(c, FN(1), SITE(1), 1000, 0);
	CHECK(cp_cct__grow_stack(c) != 0);
	CHECK(c->top == c->limit);
	allocs_left = -1;
	check_tree(c);
	free_tree(c);
}

/*
 * The scripted update the abandon test stops at every point: enough new
 * nodes to cross into a second chunk and double the table several times,
 * site records, and a deep call chain that grows the stack from 4 frames,
 * each call taking one tick.
 */
static void script(struct cp_cct *c, uint32_t cap)
{
	for (uint32_t i = 0; i < cap + 8; i++)
		cp_cct__child(c, &c->root, FN(i), SITE(1));
	cp_cct__child(c, &c->root, FN(0), SITE(2));
	cp_cct__child(c, &c->root, FN(1), SITE(3));
	for (int d = 0; d < 12; d++)
		enter(c, FN(9000 + d), SITE(d % 2), 100000 - 64 * (uintptr_t)d, (uint64_t)d);
	for (int d = 12; d > 6; d--)
		leave(c, (uint64_t)d);
}

TEST(cct_abandoned_at_every_point)
{
	struct cp_cct *c = new_tree(4, 16, 0);
	uint32_t cap = c->chunks->cap, want;
	long total;

	/* one run to the end: how many points, and the tree it makes */
	one_tick_calls = 1;
	points_seen = 0;
	memset(point_hits, 0, sizeof(point_hits));
	script(c, cap);
	total = points_seen;
	want = c->nnodes;
	check_tree(c);
	for (int p = 1; p < CP_PT_COUNT; p++)
		if (!point_hits[p])
			cp_test__fail(__FILE__, __LINE__, "publication point %d never reached", p);
	free_tree(c);

	for (long k = 0; k < total; k++) {
		volatile int where = 0;

		c = new_tree(4, 16, 0);
		points_seen = 0;
		abandon_at = k;
		where = setjmp(abandon_jb);
		if (!where) {
			script(c, cap);
			cp_test__fail(__FILE__, __LINE__, "point %ld was not reached", k);
		}
		abandon_at = -1;
		/* a reader at this instant: whole nodes, ids in order */
		check_published(c);
		/* the handler's longjmp is followed by the repair, then the tree is whole */
		cp_cct__repair(c);
		check_tree(c);
		/* the unwinding closes what the jump left open: never a time twice */
		while (c->top > c->stack->f)
			leave(c, c->top->start + 1);
		check_published(c);
		/* and it goes on: the same script again makes no duplicate */
		script(c, cap);
		check_tree(c);
		if (c->nnodes != want)
			cp_test__fail(__FILE__, __LINE__, "abandoned at point %ld (kind %d): %u nodes, not %u",
				      k, where, c->nnodes, want);
		free_tree(c);
	}
	CHECK_LE(1000, total);
}
