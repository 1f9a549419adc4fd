/*
 * cct.c - the per-thread calling-context tree (see cct.h): node arena,
 * child lookup, site records, shadow stack growth, repair after an
 * abandoned update, fold and recycle.
 *
 * All memory comes from mmap (the hash table) or the user's
 * cp_cct_env__alloc, never malloc: the hooks may run inside malloc itself
 * (an instrumented allocator), in signal handlers and in early start-up.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/cct.h"

#define CHUNK_BYTES0 (64 << 10) /* first node chunk; later ones double up to: */
#define CHUNK_BYTES_MAX (16 << 20)

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Where a node (parent, fn) is filed; a site record (parent, fn, site): cct.h. */
#define hash cp_cct__hash
#define hash_site cp_cct__hash_site

static inline uint64_t hash_of(const struct cp_node *n)
{
	return cp_node__is_site(n) ? hash_site(n->parent, n->fn, n->site) : hash(n->parent, n->fn);
}

static int add_chunk(struct cp_cct *c)
{
	uint64_t bytes = c->chunk ? c->chunk->bytes * 2 : CHUNK_BYTES0;
	struct cp_chunk *k = c->chunk ? c->chunk->next : NULL;

	if (k) {
		/* A recycled tree: the chunks after the current one are empty. */
		c->chunk = k;
		c->free = k->n;
		c->free_end = k->n + k->cap;
		return 0;
	}
	if (bytes > CHUNK_BYTES_MAX)
		bytes = CHUNK_BYTES_MAX;
	k = cp_cct_env__alloc(bytes);
	if (!k)
		return -ENOMEM;
	k->bytes = bytes;
	k->cap = (uint32_t)((bytes - sizeof(*k)) / sizeof(struct cp_node));
	k->used = 0;
	k->next = NULL;
	if (c->chunk)
		__atomic_store_n(&c->chunk->next, k, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&c->chunks, k, __ATOMIC_RELEASE);
	CP_CCT_POINT(c, CP_PT_CHUNK_LINKED);
	c->chunk = k;
	c->free = k->n;
	c->free_end = k->n + k->cap;
	return 0;
}

static struct cp_htab *new_htab(uint64_t slots)
{
	uint64_t bytes = sizeof(struct cp_htab) + slots * sizeof(struct cp_node *);
	struct cp_htab *h = map(bytes);

	if (h) {
		h->mask = slots - 1;
		h->bytes = bytes;
	}
	return h;
}

/* File n in h, where it is not yet. */
static void htab_put(struct cp_htab *h, struct cp_node *n)
{
	uint64_t j;

	for (j = hash_of(n) & h->mask; h->s[j]; j = (j + 1) & h->mask)
		if (h->s[j] == n)
			return;
	h->s[j] = n;
	h->count++;
}

/* A table twice the size replaces c's in one store (step 5). */
static int grow_htab(struct cp_cct *c)
{
	struct cp_htab *old = c->htab, *h = new_htab((old->mask + 1) * 2);

	if (!h)
		return -ENOMEM;
	for (uint64_t i = 0; i <= old->mask; i++)
		if (old->s[i])
			htab_put(h, old->s[i]);
	memcpy(h->memo, old->memo, sizeof(h->memo));
	CP_CCT_POINT(c, CP_PT_HTAB_FILLED);
	c->htab = h;
	CP_CCT_POINT(c, CP_PT_HTAB_SWAPPED);
	munmap(old, old->bytes);
	return 0;
}

static void stop(struct cp_cct *c)
{
	c->stopped = 1;
	cp_cct_env__out_of_memory(c);
}

struct cp_node *cp_cct__child(struct cp_cct *c, struct cp_node *from, uintptr_t fn, uintptr_t site)
{
	struct cp_node *parent, *node = NULL, *n, **memo;
	struct cp_htab *h;
	uint64_t i;

	if (unlikely(from == &c->lost))
		return &c->lost;
	n = cp_cct__find(c, from, fn, site);
	if (likely(n != NULL))
		return n;
	/*
	 * None yet (rare: once per call path).  Probe again for where to file
	 * it: the node's chain, or, when the node (parent, fn) is there from
	 * another site, the site record's chain (its canon is that node).
	 */
	parent = from->canon;
	h = c->htab;
	for (i = hash(parent, fn) & h->mask; (n = h->s[i]); i = (i + 1) & h->mask) {
		if (n->fn == fn && n->parent == parent && !cp_node__is_site(n)) {
			node = n;
			break;
		}
	}
	if (node)
		for (i = hash_site(parent, fn, site) & h->mask; h->s[i]; i = (i + 1) & h->mask)
			;
	memo = cp_cct__memo(h, parent, fn, site);
	if (unlikely(c->stopped))
		return &c->lost;
	if (unlikely(c->free == c->free_end)) {
		if (add_chunk(c)) {
			stop(c);
			return &c->lost;
		}
	}
	/* Step 1: filled before it is counted. */
	n = c->free;
	n->fn = fn;
	n->site = site;
	n->parent = parent;
	n->cache = n->cache2 = NULL;
	n->canon = node ? node : n;
	/* Fresh mappings are zero, recycled ones are not. */
	n->calls = n->ticks = n->max_ticks = n->wait_ticks = n->inactive_ticks = 0;
	n->open_at_start = 0;
	n->stub = 0;
	n->switches_vol = n->switches_invol = 0;
	n->min_ticks = UINT64_MAX;
	n->flags = cp_cct_env__new_flags(c, parent, fn);
	n->id = c->nnodes;
	CP_CCT_POINT(c, CP_PT_NODE_FILLED);
	/* Step 2, publish: readers read only nodes below a chunk's used. */
	__atomic_store_n(&c->chunk->used, c->chunk->used + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&c->nnodes, c->nnodes + 1, __ATOMIC_RELEASE);
	CP_CCT_POINT(c, CP_PT_NODE_COUNTED);
	c->free = n + 1;
	CP_CCT_POINT(c, CP_PT_NODE_TAKEN);
	h->s[i] = n;
	h->count++;
	cp_cct__remember(from, n);
	CP_CCT_POINT(c, CP_PT_NODE_FILED);
	*memo = n;
	if (h->count * 2 > h->mask + 1 && grow_htab(c)) {
		/* The table stays valid at this load; just stop adding nodes. */
		stop(c);
	}
	return n;
}

int cp_cct__grow_stack(struct cp_cct *c)
{
	struct cp_stack *old = c->stack;
	uint64_t cap = old->cap * 2;
	uint64_t bytes = sizeof(*old) + cap * sizeof(struct cp_frame);
	struct cp_stack *s = cp_cct_env__alloc(bytes);
	uint64_t depth = c->top - old->f;

	if (!s)
		return -ENOMEM;
	s->cap = cap;
	s->bytes = bytes;
	s->older = old;
	memcpy(s->f, old->f, (depth + 1) * sizeof(struct cp_frame));
	/* The stack first, then top and limit into it (step 10, 11). */
	__atomic_store_n(&c->stack, s, __ATOMIC_RELEASE);
	CP_CCT_POINT(c, CP_PT_STACK_SWAPPED);
	c->top = s->f + depth;
	c->limit = s->f + cp_cct_env__limit(c, cap);
	return 0;
}

void cp_cct__repair(struct cp_cct *c)
{
	struct cp_stack *s = c->stack;
	struct cp_chunk *cur = c->chunk, *k, *prev = NULL;
	struct cp_node *last = NULL;
	uint32_t nodes = 1; /* the root */

	/* Stack growth: top and limit may still be in the older mapping. */
	if ((c->top < s->f || c->top >= s->f + s->cap) && s->older && c->top >= s->older->f &&
	    c->top < s->older->f + s->older->cap)
		c->top = s->f + (c->top - s->older->f);
	c->limit = s->f + cp_cct_env__limit(c, s->cap);
	/*
	 * Node allocation: the chunk's used count is the truth; free and
	 * nnodes follow it.  A chunk linked after the current one but not yet
	 * moved to is empty: the next allocation moves to it (add_chunk).
	 */
	for (k = c->chunks; k; prev = k, k = k->next) {
		nodes += k->used;
		if (k == cur)
			break;
	}
	if (cur->used)
		last = &cur->n[cur->used - 1];
	else if (prev && prev != cur && prev->used)
		last = &prev->n[prev->used - 1];
	c->free = cur->n + cur->used;
	c->free_end = cur->n + cur->cap;
	__atomic_store_n(&c->nnodes, nodes, __ATOMIC_RELEASE);
	/*
	 * The newest node may be counted but not filed.  The table is at most
	 * half full then (the insert before would have grown it), so it has
	 * room; the next insert grows it if this one makes it more than half.
	 */
	if (last && c->htab->count < c->htab->mask)
		htab_put(c->htab, last);
}

/* c holds just its root; the shadow stack just the root's frame (start 0). */
static void clear_roots(struct cp_cct *c)
{
	memset(&c->root, 0, sizeof(c->root));
	c->root.min_ticks = UINT64_MAX;
	c->root.calls = 1;
	c->root.canon = &c->root;
	memset(&c->lost, 0, sizeof(c->lost));
	c->lost.min_ticks = UINT64_MAX;
	c->lost.canon = &c->lost;
	c->lost.id = UINT32_MAX;
	c->top = c->stack->f;
	c->top->node = &c->root;
	__atomic_store_n(&c->nnodes, 1, __ATOMIC_RELEASE);
}

int cp_cct__init(struct cp_cct *c, uint64_t frames0, uint64_t slots0, int nosites)
{
	uint64_t sbytes = sizeof(struct cp_stack) + frames0 * sizeof(struct cp_frame);

	c->nosites = nosites;
	c->stack = cp_cct_env__alloc(sbytes);
	c->htab = new_htab(slots0);
	if (!c->stack || !c->htab || add_chunk(c)) {
		if (c->stack)
			cp_cct_env__free(c->stack, sbytes);
		if (c->htab)
			munmap(c->htab, c->htab->bytes);
		if (c->chunk)
			cp_cct_env__free(c->chunk, c->chunk->bytes);
		c->stack = NULL;
		c->htab = NULL;
		c->chunks = c->chunk = NULL;
		return -ENOMEM;
	}
	c->stack->cap = frames0;
	c->stack->bytes = sbytes;
	clear_roots(c);
	c->limit = c->stack->f + cp_cct_env__limit(c, frames0);
	return 0;
}

void cp_cct__release(struct cp_cct *c)
{
	struct cp_stack *s, *older;
	struct cp_chunk *k, *next;

	for (s = c->stack; s; s = older) {
		older = s->older;
		cp_cct_env__free(s, s->bytes);
	}
	for (k = c->chunks; k; k = next) {
		next = k->next;
		cp_cct_env__free(k, k->bytes);
	}
	if (c->htab)
		munmap(c->htab, c->htab->bytes);
	c->stack = NULL;
	c->chunks = c->chunk = NULL;
	c->htab = NULL;
}

void cp_cct__clear(struct cp_cct *c)
{
	for (struct cp_chunk *k = c->chunks; k; k = k->next)
		__atomic_store_n(&k->used, 0, __ATOMIC_RELEASE);
	c->chunk = c->chunks;
	c->free = c->chunks->n;
	c->free_end = c->chunks->n + c->chunks->cap;
	memset(c->htab->s, 0, (c->htab->mask + 1) * sizeof(c->htab->s[0]));
	memset(c->htab->memo, 0, sizeof(c->htab->memo)); /* hints into nodes handed out again */
	c->htab->count = 0;
	clear_roots(c);
	c->stopped = 0;
}

void cp_cct__zero(struct cp_cct *c)
{
	for (struct cp_chunk *k = c->chunks; k; k = k->next) {
		for (uint32_t i = 0; i < k->used; i++) {
			struct cp_node *n = &k->n[i];

			n->calls = n->ticks = n->max_ticks = n->open_at_start = 0;
			n->wait_ticks = n->inactive_ticks = 0;
			n->switches_vol = n->switches_invol = 0;
			n->min_ticks = UINT64_MAX;
			n->cache = n->cache2 = NULL;
		}
	}
	c->root.cache = c->root.cache2 = NULL;
	c->root.ticks = 0;
	c->lost.calls = c->lost.ticks = c->lost.open_at_start = 0;
	c->stopped = 0;
}

uint64_t cp_cct__unwind_to(struct cp_cct *c, uintptr_t target, uint64_t now, int timed)
{
	struct cp_frame *base = c->stack->f, *f = c->top;
	uint64_t closed = 0;

	if (f == base || f->sp + 16 >= target)
		return 0; /* nothing below the target */
	if (base[1].sp + 16 < target && target != UINTPTR_MAX)
		return 0; /* above every frame: another stack, not ours to judge */
	while (c->top > base && c->top->sp + 16 < target) {
		f = c->top;
		cp_cct__pop_frame(c, f);
		if (timed && f->start != CP_UNTIMED)
			cp_node__add_call(f->node, now - f->start);
		closed++;
	}
	return closed;
}

uint64_t cp_cct__close_open(struct cp_cct *c, uint64_t now)
{
	struct cp_frame *base = c->stack->f;
	uint64_t closed = 0;

	while (c->top > base) {
		struct cp_frame *f = c->top;

		cp_cct__pop_frame(c, f);
		if (f->start != CP_UNTIMED)
			cp_node__add_call(f->node, now - f->start);
		closed++;
	}
	return closed;
}

void cp_cct__fold(struct cp_cct *dst, const struct cp_cct *src, struct cp_node **to,
		  const struct cp_node *(*view)(const struct cp_node *n, void *arg,
						struct cp_node *tmp),
		  void *arg)
{
	struct cp_node tmp;

	to[0] = &dst->root;
	for (const struct cp_chunk *k = src->chunks; k; k = k->next) {
		for (uint32_t i = 0; i < k->used; i++) {
			const struct cp_node *n = &k->n[i];
			struct cp_node *m = cp_cct__child(dst, to[n->parent->id], n->fn, n->site);

			to[n->id] = m;
			m->flags |= n->flags;
			cp_node__add_counts(m, view ? view(n, arg, &tmp) : n);
		}
	}
}
