/*
 * cct.h - the per-thread calling-context tree: node arena, child lookup
 * (two caches and a hash table), site records, shadow stack, fold and
 * recycle.
 *
 * The core knows nothing of processes, signals, perf events, files or
 * the session: struct cp_thread (internal.h) embeds a struct cp_cct and
 * adds all that.  What the core needs from its user it asks through the
 * cp_cct_env__*() functions below, which the user defines (thread.c for the
 * runtime, tests/unit/test-cct.c for the unit test).  tests/unit/test-cct.c
 * compiles cct.c directly.
 *
 * Ownership.  One thread updates a tree (its own); any thread or a watcher
 * process may read it at any time, without locks: nodes are carved from
 * chunks that never move and are never unmapped while the tree lives, and
 * a reader reads only nodes below a chunk's used count (release-stored).
 * Values read while the owner runs are a snapshot, never a crash.
 *
 * Invariants (what cp_cct__check() in the unit test verifies):
 *  I1 node ids are 0 (root) .. nnodes - 1, in allocation order: chunk by
 *     chunk, n[0 .. used - 1]; nnodes = 1 + the sum of the chunks' used
 *     counts; free = chunk->n + chunk->used, free_end = chunk->n + cap.
 *  I2 a node's parent is a node (never a site record) with a smaller id;
 *     canon is the node itself, or for a site record a node with the same
 *     parent and fn, filed earlier.
 *  I3 every published node but possibly the newest is filed in htab, a
 *     node under hash(parent, fn), a site record under hash_site(parent,
 *     fn, site); no (parent, fn) has two nodes and no (parent, fn, site)
 *     two records; htab->count is the number filed, at most half the
 *     slots.
 *  I4 cache and cache2 of a node are NULL or published children of it (or
 *     of its canon: a lookup from a site record starts at its node).
 *  I5 stack->f[0] is the root's frame; f[1 .. top] are open calls, each
 *     frame's node a published node, its start set; top <= limit <
 *     stack->f + stack->cap.
 *
 * Publication order.  A signal can interrupt an update at any instruction
 * and its handler may never return (siglongjmp, or the process ends and
 * the dump reads the tree).  So every update writes its fields in an order
 * after which stopping at any point leaves a tree the dump can read and a
 * later update can go on from, after cp_cct__repair().  Between the steps
 * below sits CP_CCT_POINT(c, CP_PT_...), a compiler barrier (the CPU keeps
 * a thread's own stores in order for its own signal handlers), through
 * which the unit test's build leaves (longjmp) to check the tree at every
 * point.
 *
 *  New node (cp_cct__child):
 *   1. the node's fields are filled (fn, site, parent, canon, caches,
 *      counts, flags, id); nothing refers to it yet.      NODE_FILLED
 *   2. chunk->used, then nnodes, are release-stored: the node is
 *      published (used is the store that counts; nnodes is derived from
 *      it).                                                 NODE_COUNTED
 *   3. free moves past it (derived from used).             NODE_TAKEN
 *   4. it is filed in htab, count follows, the caches of the context it
 *      was looked up from take it; abandoned before this, repair files the
 *      newest node (I3).                                    NODE_FILED
 *   5. htab more than half full: a table twice the size is filled
 *                                                          HTAB_FILLED
 *      and replaces the old one by one pointer store; the old one is
 *      unmapped after (leaked if abandoned).               HTAB_SWAPPED
 *  New chunk (in 1, when the current one is full): filled, then linked by
 *   one release-store of the newest chunk's next (or of chunks); chunk,
 *   free and free_end follow.                              CHUNK_LINKED
 *   A chunk with used 0 is harmless to readers; repair takes chunk, free
 *   and free_end from the chunk in use.
 *  Push (cp_cct__open_frame, then the caller sets start, then
 *   cp_cct__publish_frame):
 *   6. the frame above top is filled (node, fn, sp, start) and the node's
 *      calls counted.                                       FRAME_FILLED
 *   7. top moves up to it: the frame exists.
 *  Pop (cp_cct__pop_frame, cp_cct__close_open, cp_cct__unwind_to):
 *   8. top moves down first.                                FRAME_POPPED
 *   9. the closed call's time is added after: abandoned in between, a
 *      call's time is lost rather than added twice.
 *  Stack growth (cp_cct__grow_stack):
 *   10. the new stack is filled (frames copied) and release-stored as
 *       stack; the old one stays mapped (older), readers may be in it.
 *                                                          STACK_SWAPPED
 *   11. top and limit move into it (derived: repair moves them).
 *
 * What follows a publishing store is derived from it: after an update was
 * abandoned, cp_cct__repair() derives it again before anything else uses
 * the tree.  Updates run with the owner's re-entry guard held (busy in
 * struct cp_thread), so no update ever starts inside another one.
 *
 * Memory: nodes, chunks and stacks come from cp_cct_env__alloc() (the
 * runtime's arena, which a watcher can read); the hash table is private
 * (mmap).  Nothing here calls malloc, stdio or takes a lock.
 */
#ifndef CP_RUNTIME_CCT_H
#define CP_RUNTIME_CCT_H

#include <stddef.h>
#include <stdint.h>

#ifndef CP_HIDDEN
#define CP_HIDDEN __attribute__((visibility("hidden")))
#endif
#ifndef CP_NOINSTR
#define CP_NOINSTR __attribute__((no_instrument_function))
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/*
 * A publication point (see above): a compiler barrier.  The unit test
 * builds cct.c with CP_CCT_TEST, where each point also calls the test's
 * cp_cct_test__point(), which may longjmp out of the update.
 */
#ifdef CP_CCT_TEST
struct cp_cct;
void cp_cct_test__point(struct cp_cct *c, int point);
#define CP_CCT_POINT(c, n) \
	(__atomic_signal_fence(__ATOMIC_SEQ_CST), cp_cct_test__point((c), (n)), \
	 __atomic_signal_fence(__ATOMIC_SEQ_CST))
#else
#define CP_CCT_POINT(c, n) __atomic_signal_fence(__ATOMIC_SEQ_CST)
#endif
/* The publication points, in the order above. */
enum cp_cct_point {
	CP_PT_NODE_FILLED = 1,
	CP_PT_NODE_COUNTED,
	CP_PT_NODE_TAKEN,
	CP_PT_NODE_FILED,
	CP_PT_HTAB_FILLED,
	CP_PT_HTAB_SWAPPED,
	CP_PT_CHUNK_LINKED,
	CP_PT_FRAME_FILLED,
	CP_PT_FRAME_POPPED,
	CP_PT_STACK_SWAPPED,
	CP_PT_COUNT
};

/*
 * A calling context: one per distinct (parent, function) pair, found by
 * the parent's two most recently added children (cache, cache2) or the
 * tree's hash table.
 *
 * Calls from more than one call site: the node records the calls from its
 * first site; each further site (return address) gets a record of its own
 * with the same parent and function, a site record, whose canon points to
 * the node.  The hooks treat both alike: a frame's node may be a site
 * record, which then gets the call's count and time; children always hang
 * below the node itself (canon), so the tree does not multiply by call
 * sites (recursion from two sites would otherwise give every path its own
 * subtree).  The dump writes site records as CP_NODE_SITE records.
 */
struct cp_node {
	/*
	 * First line: what finding the node and counting a call touch (the
	 * enter hook, the lookup's probes); all an enter+exit touches in the
	 * default mode (cpu) and in counting.
	 */
	uintptr_t fn;		/* function entry address */
	uintptr_t site;		/* return address into the caller */
	struct cp_node *cache;	/* child found last: the common case of lookup */
	struct cp_node *cache2; /* the child found before cache (a caller alternating
				 * between two callees, or two call sites) */
	struct cp_node *parent; /* NULL for the thread's root; a node, never a site record */
	struct cp_node *canon;	/* the node: itself, or for a site record its node */
	uint64_t calls;		/* times entered */
	uint32_t flags;		/* enum cp_nflags: how the hooks treat the context */
	uint32_t id;		/* index in the thread, in allocation order */
	/* Second line: the times (the timing exit), the dump, off-CPU accounting. */
	uint64_t ticks;		/* inclusive ticks of completed calls */
	uint64_t min_ticks;	/* shortest completed call, UINT64_MAX if none */
	uint64_t max_ticks;	/* longest completed call */
	uint64_t wait_ticks;	/* ns blocked while innermost (offcpu.c; ticks at the dump) */
	uint64_t inactive_ticks; /* ns preempted while innermost */
	uint32_t switches_vol;	/* times blocked while innermost (saturating) */
	uint32_t switches_invol; /* times preempted while innermost (saturating) */
	uint64_t open_at_start; /* frames of this context open when callprof attach began (not in calls) */
	uintptr_t stub;		/* sleds: the stub for (site, fn's body) (sleds.c), 0 until made */
};

/*
 * The layout the hooks rely on.  Nine hot 8-byte fields do not fit in one
 * 64-byte line, so the line goes to what every mode touches: the enter's
 * fields (fn, site, cache, cache2, flags, calls) and the lookup's probe
 * (fn, parent, canon).  The timing exit's ticks, min_ticks and max_ticks
 * are the second line: a timed enter+exit touches two lines of its node,
 * a counted or sampled one (cpu, the default) one.  Measured against the
 * other choice (ticks, min and max in the first line, cache2, parent and
 * canon in the second): no difference on fib and mixed, faster on a tree
 * of 70,000 contexts whose lookups miss the caches (docs/internals/design.md).
 * Nodes in chunks start on a line (chunks are page-aligned mappings and
 * n[] starts at 64); the thread's root and lost nodes need not.
 */
_Static_assert(sizeof(struct cp_node) == 128, "struct cp_node: two cache lines");
_Static_assert(offsetof(struct cp_node, fn) == 0 && offsetof(struct cp_node, site) == 8 &&
		       offsetof(struct cp_node, cache) == 16 &&
		       offsetof(struct cp_node, cache2) == 24 &&
		       offsetof(struct cp_node, parent) == 32 &&
		       offsetof(struct cp_node, canon) == 40 &&
		       offsetof(struct cp_node, calls) == 48 && offsetof(struct cp_node, flags) == 56,
	       "struct cp_node: the enter's and the lookup's fields left the first cache line");
_Static_assert(offsetof(struct cp_node, ticks) == 64,
	       "struct cp_node: the times start the second line");

/*
 * A context's flags (struct cp_node.flags), set when it is created (by
 * cp_cct_env__new_flags) or, for UNTIMED, by the budget; the enter hook
 * tests them once it has found the node, in the same line as fn and calls.
 */
enum cp_nflags {
	CP_NF_EXCLUDED = 1 << 0, /* a marker: calls of an excluded function, no frame */
	CP_NF_UNTIMED = 1 << 1,	 /* count-only: frames without clock reads */
	CP_NF_TREE = 1 << 2,	 /* a marker of an --exclude-tree function: mutes the thread */
};

/* A record of a further call site (see struct cp_node). */
static inline int cp_node__is_site(const struct cp_node *n)
{
	return n->canon != n;
}

/* Hash of a (pointer, value) pair: the node table's and the lines table's key. */
static inline uint64_t cp_ptr_hash(const void *p, uint64_t v)
{
	uint64_t h = (uint64_t)(uintptr_t)p ^ (v * 0x9E3779B97F4A7C15ull);

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 32);
}

/* a + b, stopping at UINT32_MAX (the nodes' switch counts). */
static inline uint32_t cp_add_sat32(uint32_t a, uint32_t b)
{
	return a + b < a ? UINT32_MAX : a + b;
}

/* Account one finished call of d ticks to n. */
static inline void cp_node__add_call(struct cp_node *n, uint64_t d)
{
	n->ticks += d;
	if (d < n->min_ticks)
		n->min_ticks = d;
	if (d > n->max_ticks)
		n->max_ticks = d;
}

/* n's counts into m (fold): sums, min of mins, max of maxes. */
static inline void cp_node__add_counts(struct cp_node *m, const struct cp_node *n)
{
	m->calls += n->calls;
	m->open_at_start += n->open_at_start;
	m->ticks += n->ticks;
	m->wait_ticks += n->wait_ticks;
	m->inactive_ticks += n->inactive_ticks;
	m->switches_vol = cp_add_sat32(m->switches_vol, n->switches_vol);
	m->switches_invol = cp_add_sat32(m->switches_invol, n->switches_invol);
	if (n->min_ticks < m->min_ticks)
		m->min_ticks = n->min_ticks;
	if (n->max_ticks > m->max_ticks)
		m->max_ticks = n->max_ticks;
}

/* One open call on the shadow stack. */
struct cp_frame {
	struct cp_node *node; /* its calling context */
	uintptr_t fn;	      /* function, to pair the exit without a node load */
	uint64_t start;	      /* ticks at entry */
	uintptr_t sp;	      /* stack pointer at entry (for unwinding checks) */
};
/* cp_frame.start of a count-only frame (CP_NF_UNTIMED). */
#define CP_UNTIMED UINT64_MAX

/*
 * Shadow stack storage.  Grows by doubling into a new mapping; the old one
 * stays mapped (retired) so the dumping thread, which may be reading it,
 * never touches unmapped memory.  Total waste is bounded by the live size.
 */
struct cp_stack {
	uint64_t cap;		/* frames in f[] */
	struct cp_stack *older; /* previous (retired) mapping */
	uint64_t bytes;		/* size of this mapping */
	struct cp_frame f[];	/* frames, f[0] is the root's */
};

/*
 * A tree's node table: open addressing on (parent, fn), private memory.
 * Its size travels with it, so that growth replaces it by one store.
 */
/*
 * The table's memo: the record a lookup found last, in a small
 * direct-mapped array indexed by (parent, fn, site), tried before the
 * table.  The two children a node remembers (cache, cache2) serve a caller
 * that alternates between two callees; a caller that cycles through more
 * (an interpreter's loop: Lua's called 57% of its calls past them) went to
 * the table, a chain of dependent loads (the table's header, a slot, the
 * node, and for a second call site a slot and a site record) that missed
 * the caches while the program's own data ran between calls: 17.6% of a
 * recorded Lua run.  A memo entry is a hint, checked on the record itself
 * (its fn, parent and site, one line of it), so an entry a signal or a
 * fork left half-written, or one for another call, is only a miss.
 */
#define CP_MEMO_BITS 9
/* The memo's hash multiplier (cp_cct__memo; the sleds' entry fast path has it too). */
#define CP_MEMO_MUL 0x9E3779B97F4A7C15
struct cp_htab {
	uint64_t mask;	       /* slots - 1 */
	uint64_t count;	       /* nodes filed */
	uint64_t bytes;	       /* size of the mapping */
	uint64_t pad;
	struct cp_node *memo[1u << CP_MEMO_BITS]; /* hints: the record found last */
	struct cp_node *s[];
};

/* Nodes are carved from chunks; chunks are linked in allocation order. */
struct cp_chunk {
	struct cp_chunk *next; /* next chunk, NULL for the newest (release-stored) */
	uint32_t used;	       /* nodes handed out (release-stored): publishes them */
	uint32_t cap;	       /* nodes that fit */
	uint64_t bytes;	       /* size of the mapping */
	uint64_t pad[5];       /* n[] starts on a cache line */
	struct cp_node n[];
};
_Static_assert(offsetof(struct cp_chunk, n) == 64, "struct cp_chunk: nodes start on a line");

/*
 * The tree.  struct cp_thread embeds it right after its own hot words
 * (internal.h): top and limit are read on every call, htab, free and
 * free_end on a lookup miss, and all five stay in the thread's first cache
 * line.
 */
struct cp_cct {
	struct cp_frame *top;	  /* the innermost open frame */
	struct cp_frame *limit;	  /* last usable frame of the stack */
	struct cp_htab *htab;	  /* nodes by (parent, fn), private */
	struct cp_node *free;	  /* next node to hand out in the current chunk */
	struct cp_node *free_end; /* end of the current chunk */
	struct cp_stack *stack;	  /* current shadow-stack mapping (release-stored) */
	struct cp_chunk *chunks;  /* first chunk */
	struct cp_chunk *chunk;	  /* current chunk */
	uint32_t nnodes;	  /* nodes published, root included (release-stored) */
	int stopped;		  /* out of memory: no new nodes, calls go to lost */
	int nosites;		  /* no site records (coverage mode) */
	uint32_t pad;
	struct cp_node root;	  /* the thread itself; node 0 */
	struct cp_node lost;	  /* stands in for contexts not recorded */
};

/*
 * What the user of the core provides (thread.c; the unit test).
 * alloc/free: zeroed memory the dump can read, page-aligned, NULL if none.
 * limit: the last usable frame index of a stack of cap frames (--max-depth
 * stops short of it).  new_flags: the flags of a new node for fn below
 * parent (record-time selection), filled before it is published.
 * out_of_memory: c stopped adding nodes (warn, mark the thread).
 */
CP_HIDDEN void *cp_cct_env__alloc(size_t bytes);
CP_HIDDEN void cp_cct_env__free(void *p, size_t bytes);
CP_HIDDEN uint64_t cp_cct_env__limit(const struct cp_cct *c, uint64_t cap);
CP_HIDDEN uint32_t cp_cct_env__new_flags(struct cp_cct *c, const struct cp_node *parent,
					 uintptr_t fn);
CP_HIDDEN void cp_cct_env__out_of_memory(struct cp_cct *c);

/*
 * Set up c (zeroed memory): a shadow stack of frames0 frames, a table of
 * slots0 slots (a power of two), a first chunk, the root's frame on the
 * stack (its start is the caller's).  nosites: no site records.  0 or -ENOMEM (nothing
 * left allocated).
 */
CP_HIDDEN int cp_cct__init(struct cp_cct *c, uint64_t frames0, uint64_t slots0, int nosites);
/* Unmap everything c took (never published, or no reader left). */
CP_HIDDEN void cp_cct__release(struct cp_cct *c);
/* Recycle: c holds just its root again, its memory kept for reuse. */
CP_HIDDEN void cp_cct__clear(struct cp_cct *c);
/* Every node's counts to zero and caches emptied (a fork child starts counting anew). */
CP_HIDDEN void cp_cct__zero(struct cp_cct *c);

/*
 * Find or create the record for a call of fn from site, made in the
 * context "from" (a node or a site record): the child node of from's node
 * for fn if the call comes from the node's first site, else the site
 * record for site.  Never fails: when memory runs out (or c stopped) it
 * returns &c->lost, which absorbs the calls so that enters and exits stay
 * paired.  The hooks try from's cache and cache2 inline first (a hit needs
 * fn and site equal) and call this on a miss, which tries the table's memo
 * and then the table; it makes the result from's cache (the one before
 * becomes cache2) and the memo's entry.
 */
CP_HIDDEN struct cp_node *cp_cct__child(struct cp_cct *c, struct cp_node *from, uintptr_t fn,
					uintptr_t site);

/* Where a node (parent, fn) is filed in the table; a site record (parent, fn, site). */
static inline uint64_t cp_cct__hash(const struct cp_node *parent, uintptr_t fn)
{
	return cp_ptr_hash(parent, fn);
}

static inline uint64_t cp_cct__hash_site(const struct cp_node *parent, uintptr_t fn, uintptr_t site)
{
	return cp_cct__hash(parent, fn ^ ((uint64_t)site * 0xC2B2AE3D27D4EB4Full));
}

/* The memo entry for a call of fn from site below parent (one multiply). */
static inline struct cp_node **cp_cct__memo(struct cp_htab *h, const struct cp_node *parent,
					    uintptr_t fn, uintptr_t site)
{
	uint64_t k = ((uint64_t)(uintptr_t)parent ^ (fn << 7) ^ site) * CP_MEMO_MUL;

	return &h->memo[k >> (64 - CP_MEMO_BITS)];
}

/*
 * n is the record the table gives for a call of fn from site below parent:
 * the node (parent, fn) when it was first called from site (or sites are
 * not kept), else the site record (parent, fn, site).  Both are unique.
 */
static inline int cp_cct__is_record(const struct cp_cct *c, const struct cp_node *n,
				    const struct cp_node *parent, uintptr_t fn, uintptr_t site)
{
	return n && n->fn == fn && n->parent == parent && (n->site == site || c->nosites);
}

/* Make n the child "from" found last (the one before becomes cache2). */
static inline void cp_cct__remember(struct cp_node *from, struct cp_node *n)
{
	if (from->cache != n) {
		from->cache2 = from->cache;
		from->cache = n;
	}
}

/*
 * The lookup of cp_cct__child, which calls it, alone: for the sleds' leaf
 * fast path (no call).  The record already in the table for a call of fn
 * from site in context from, made from's cache; NULL when there is none
 * yet (or from is the lost node): the caller then takes the path that
 * makes it.
 */
static inline struct cp_node *cp_cct__find(struct cp_cct *c, struct cp_node *from, uintptr_t fn,
					   uintptr_t site)
{
	struct cp_node *parent = from->canon, *node = NULL, *n;
	struct cp_htab *h = c->htab;
	struct cp_node **memo;
	uint64_t i;

	if (from == &c->lost)
		return NULL;
	memo = cp_cct__memo(h, parent, fn, site);
	if (cp_cct__is_record(c, (node = *memo), parent, fn, site))
		goto found;
	node = NULL;
	for (i = cp_cct__hash(parent, fn) & h->mask; (n = h->s[i]); i = (i + 1) & h->mask)
		if (n->fn == fn && n->parent == parent && !cp_node__is_site(n)) {
			node = n;
			break;
		}
	if (node && node->site != site && !c->nosites) {
		node = NULL;
		for (i = cp_cct__hash_site(parent, fn, site) & h->mask; (n = h->s[i]); i = (i + 1) & h->mask)
			if (n->fn == fn && n->site == site && n->parent == parent && cp_node__is_site(n)) {
				node = n;
				break;
			}
	}
	if (!node)
		return NULL;
	*memo = node;
found:
	cp_cct__remember(from, node);
	return node;
}

/* Double the shadow stack (steps 10, 11).  0 or -ENOMEM (c unchanged). */
CP_HIDDEN int cp_cct__grow_stack(struct cp_cct *c);

/*
 * Count a call of n and fill the frame above top but for its start (step 6):
 * the caller sets start, then publishes the frame with
 * cp_cct__publish_frame (step 7).  There must be room: top < limit.
 */
static inline CP_NOINSTR struct cp_frame *cp_cct__open_frame(struct cp_cct *c, struct cp_node *n,
							     uintptr_t fn, uintptr_t sp)
{
	struct cp_frame *f = c->top + 1;

	n->calls++;
	f->node = n;
	f->fn = fn;
	f->sp = sp;
	return f;
}

static inline CP_NOINSTR void cp_cct__publish_frame(struct cp_cct *c, struct cp_frame *f)
{
	CP_CCT_POINT(c, CP_PT_FRAME_FILLED);
	c->top = f;
}

/* Take f (the top frame) off the stack (step 8); the caller adds its time after. */
static inline CP_NOINSTR void cp_cct__pop_frame(struct cp_cct *c, struct cp_frame *f)
{
	c->top = f - 1;
	CP_CCT_POINT(c, CP_PT_FRAME_POPPED);
}

/*
 * Close every open frame at time now, as if the calls returned then.
 * Returns the frames closed.
 */
CP_HIDDEN uint64_t cp_cct__close_open(struct cp_cct *c, uint64_t now);
/*
 * A longjmp to a frame whose stack pointer is target abandons every frame
 * called below it: close them at now (their time added if timed).  The
 * hooks record their own frame address; the caller's stack pointer at the
 * call is 16 bytes above it (return address and saved frame pointer).  A
 * target outside the range of the open frames (a jump to another stack:
 * coroutines) is left alone; UINTPTR_MAX closes every open frame.  Returns
 * the frames closed.
 */
CP_HIDDEN uint64_t cp_cct__unwind_to(struct cp_cct *c, uintptr_t target, uint64_t now, int timed);

/*
 * An update of c was abandoned part-way: derive again what follows the
 * publishing stores (top and limit from stack, free and nnodes from the
 * chunks, the newest node's slot), in the order above.
 */
CP_HIDDEN void cp_cct__repair(struct cp_cct *c);

/*
 * Add src's tree into dst (fold of an exited thread): each node of src, in
 * allocation order, is looked up (or created) in dst below its parent's
 * counterpart and gets src's counts, as view() shows them (NULL: as they
 * are; view may fill *tmp and return it).  to[] (src->nnodes entries) gets
 * each src node's counterpart by id.  src is not changed.
 */
CP_HIDDEN void cp_cct__fold(struct cp_cct *dst, const struct cp_cct *src, struct cp_node **to,
			    const struct cp_node *(*view)(const struct cp_node *n, void *arg,
							  struct cp_node *tmp),
			    void *arg);

#endif /* CP_RUNTIME_CCT_H */
