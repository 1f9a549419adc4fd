/*
 * modules.c - the module map: every ELF object loaded in the process, with
 * its path, build-id, load bias and PT_LOAD ranges, so the tool can turn
 * raw addresses into names later without the process.
 *
 * A log, not a snapshot: every module ever loaded stays in it, so code of
 * a plugin unloaded before the dump is still named.  The log is refreshed
 * with dl_iterate_phdr at start-up, around every dlclose (the preloaded
 * runtime interposes it) and at the dump; a module loaded and unloaded in
 * between is caught by the refresh before its dlclose.
 *
 * When a module is unloaded, the call paths recorded for its code would be
 * confused with those of whatever is loaded at the same addresses next.  So
 * the addresses it occupied are retired: every recorded node whose function
 * (or call site) lay in it is moved, in place, to a private address range
 * that no user-space code can have (CP_UNLOADED_BASE + index << 36 + ELF
 * virtual address), and the module is written at that range with
 * CP_MODULE_UNLOADED set.  Readers need nothing special: addresses stay
 * unique.  A thread whose cached child was moved simply misses the cache
 * and finds (or creates) a node for the new code.
 *
 * The vDSO has no file and is left out of the log; the dump writes its
 * image instead (cp_writer__vdso), which the reader makes a module of.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/internal.h"

#define MAX_MODULES 4096 /* fits the 36-bit spacing below CP_UNLOADED_BASE's top */
#define MAX_MAPS (MAX_MODULES * 8)

/*
 * The log.  Mapped once at its maximum size (untouched pages cost nothing);
 * entries are appended and published by count, so a dump that cannot take
 * the lock still reads a consistent prefix.
 */
struct module_log {
	struct cp_module mods[MAX_MODULES]; /* path holds an index into names */
	struct cp_map maps[MAX_MAPS];
	char names[MAX_MODULES][PATH_MAX];
	uint32_t nmods, nmaps;		    /* published with release stores */
	int full;			    /* a module did not fit: warned once */
};

static struct module_log *mlog;
static pthread_mutex_t mlog_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uint32_t *seen; /* scratch for refresh: generation each module was last seen */
static uint32_t generation;

static void read_build_id(const struct dl_phdr_info *info, struct cp_module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
			const char *d = p + sizeof(*nh) + name;

			if (d + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4)) {
				uint32_t n = nh->n_descsz < 32 ? nh->n_descsz : 32;

				memcpy(m->build_id, d, n);
				m->build_id_size = n;
				return;
			}
			p = d + desc;
		}
	}
}

static int same_module(const struct cp_module *m, const char *name, const struct dl_phdr_info *info)
{
	return !(m->flags & CP_MODULE_UNLOADED) && m->loaded_at == info->dlpi_addr &&
	       !strcmp(mlog->names[m->path], name);
}

static void append(const char *name, const struct dl_phdr_info *info)
{
	struct module_log *l = mlog;
	uint32_t i = l->nmods, first = l->nmaps, nmaps = 0;
	struct cp_module *m = &l->mods[i];
	size_t len = strlen(name);

	for (int k = 0; k < info->dlpi_phnum; k++)
		nmaps += info->dlpi_phdr[k].p_type == PT_LOAD;
	if (i == MAX_MODULES || first + nmaps > MAX_MAPS) {
		if (!l->full)
			cp_warn("too many modules loaded: code of later ones is not named");
		l->full = 1;
		return;
	}
	if (len >= PATH_MAX)
		len = PATH_MAX - 1;
	memcpy(l->names[i], name, len);
	l->names[i][len] = '\0';
	memset(m, 0, sizeof(*m));
	m->path = i;
	m->load_bias = m->loaded_at = info->dlpi_addr;
	m->first_map = first;
	m->nmaps = nmaps;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		struct cp_map *mp;

		if (ph->p_type != PT_LOAD)
			continue;
		mp = &l->maps[first++];
		mp->start = info->dlpi_addr + ph->p_vaddr;
		mp->end = mp->start + ph->p_memsz;
		mp->offset = ph->p_offset;
		mp->prot = ph->p_flags;
		mp->module = i;
		/* Our own library (not when linked into the program): its samples are ours. */
		if (i && (uintptr_t)&cp_hook_mode >= mp->start && (uintptr_t)&cp_hook_mode < mp->end)
			m->flags |= CP_MODULE_RUNTIME;
	}
	read_build_id(info, m);
	seen[i] = generation;
	__atomic_store_n(&l->nmaps, first, __ATOMIC_RELEASE);
	__atomic_store_n(&l->nmods, i + 1, __ATOMIC_RELEASE);
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name;
	int first = (*(int *)arg)++ == 0;
	char exe[PATH_MAX];
	uint32_t n = mlog->nmods;

	if (first && (!name || !*name)) {
		/* The main program comes first, with an empty name. */
		cp_self_exe(exe, sizeof(exe));
		name = exe;
	} else if (!name || !*name || !strncmp(name, "linux-vdso", 10) ||
		   !strncmp(name, "linux-gate", 10)) {
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (same_module(&mlog->mods[i], name, info)) {
			seen[i] = generation;
			return 0;
		}
	}
	append(name, info);
	return 0;
}

static int in_module(const struct cp_module *m, uintptr_t a)
{
	for (uint32_t k = 0; k < m->nmaps; k++) {
		const struct cp_map *mp = &mlog->maps[m->first_map + k];

		if (a >= mp->start && a < mp->end)
			return 1;
	}
	return 0;
}

static uintptr_t retired(uint32_t idx, const struct cp_module *m, uintptr_t a)
{
	return CP_UNLOADED_BASE + ((uint64_t)idx << 36) + (a - m->loaded_at);
}

/*
 * Module idx is gone: move its nodes' addresses out of the way, then its
 * maps.  Under the fold lock, so that no node is recycled meanwhile (lock
 * order: the module log's, then the fold lock).
 */
static void retire(uint32_t idx)
{
	struct cp_module *m = &mlog->mods[idx];
	struct cp_thread *t;

	cp_thread__fold_lock();
	for (t = __atomic_load_n(&cp_session.threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		for (struct cp_chunk *c = t->cct.chunks; c; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
			uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

			for (uint32_t i = 0; i < used; i++) {
				struct cp_node *n = &c->n[i];
				uintptr_t fn = __atomic_load_n(&n->fn, __ATOMIC_RELAXED);

				if (in_module(m, fn))
					__atomic_store_n(&n->fn, retired(idx, m, fn), __ATOMIC_RELAXED);
				if (in_module(m, n->site))
					n->site = retired(idx, m, n->site);
			}
		}
	}
	for (uint32_t k = 0; k < m->nmaps; k++) {
		struct cp_map *mp = &mlog->maps[m->first_map + k];

		mp->start = retired(idx, m, mp->start);
		mp->end = retired(idx, m, mp->end);
	}
	m->load_bias = retired(idx, m, m->load_bias);
	m->flags |= CP_MODULE_UNLOADED;
	cp_thread__fold_unlock();
}

/*
 * Bring the log up to date with the loader: append modules not seen yet,
 * retire those that are gone (not when dying: that takes the fold lock,
 * which the dying thread may hold).  Not from a signal handler otherwise.
 */
void cp_modules__refresh(int dying)
{
	int saved_errno = errno, count = 0;

	pthread_mutex_lock(&mlog_lock);
	if (!mlog) {
		/* In the arena: a watcher writes it for a killed program. */
		void *p = cp_arena__alloc(sizeof(*mlog) + MAX_MODULES * sizeof(uint32_t));

		if (!p)
			goto out;
		mlog = p;
		seen = (uint32_t *)(mlog + 1);
	}
	generation++;
	dl_iterate_phdr(visit, &count);
	for (uint32_t i = 0; i < mlog->nmods; i++)
		if (!dying && seen[i] != generation && !(mlog->mods[i].flags & CP_MODULE_UNLOADED))
			retire(i);
out:
	pthread_mutex_unlock(&mlog_lock);
	errno = saved_errno;
}

/*
 * Before a dump.  Dying, the loader is still safe to ask unless this thread
 * died inside it with its list lock held (a loader bug); our own lock may
 * be held by a thread that will never let go, so it is only tried.
 */
void cp_modules__refresh_for_dump(int dying)
{
	if (dying == CP_FLUSH_KILLED)
		return; /* the watcher: the loader it could ask is its own */
	if (!dying) {
		cp_modules__refresh(0);
	} else if (!pthread_mutex_trylock(&mlog_lock)) {
		cp_modules__refresh(1);
		pthread_mutex_unlock(&mlog_lock);
	}
}

/* Hold the log still across a dlopen or dlclose and the refresh after it. */
void cp_modules__lock(void)
{
	pthread_mutex_lock(&mlog_lock);
}

void cp_modules__unlock(void)
{
	pthread_mutex_unlock(&mlog_lock);
}

/* What of the log a fork child takes into memory of its own (watch.c). */
void cp_modules__keep(void (*keep)(const void *p, size_t bytes))
{
	if (!mlog)
		return;
	keep(mlog->mods, mlog->nmods * sizeof(mlog->mods[0]));
	keep(mlog->maps, mlog->nmaps * sizeof(mlog->maps[0]));
	for (uint32_t i = 0; i < mlog->nmods; i++)
		keep(mlog->names[i], strlen(mlog->names[i]) + 1);
	keep(&mlog->nmods, sizeof(*mlog) - offsetof(struct module_log, nmods));
	keep(seen, mlog->nmods * sizeof(*seen));
}

/* A fork child: the lock was held by the forking thread (cp_watch__fork_prepare). */
void cp_modules__reset_lock(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

	mlog_lock = fresh;
}

/* Write the log as it stands (the caller refreshes it first). */
int cp_modules__write(struct cp_writer *w)
{
	uint32_t nmods, nmaps;
	int ret;

	nmods = mlog ? __atomic_load_n(&mlog->nmods, __ATOMIC_ACQUIRE) : 0;
	nmaps = mlog ? __atomic_load_n(&mlog->nmaps, __ATOMIC_ACQUIRE) : 0;
	cp_writer__section(w, CP_SEC_MODULES, sizeof(struct cp_module));
	for (uint32_t i = 0; i < nmods; i++) {
		struct cp_module m = mlog->mods[i];

		m.path = cp_writer__string(w, mlog->names[i]);
		cp_writer__put(w, &m, sizeof(m));
	}
	cp_writer__section(w, CP_SEC_MAPS, sizeof(struct cp_map));
	ret = nmaps ? cp_writer__put(w, mlog->maps, nmaps * sizeof(struct cp_map)) : w->err;
	return ret;
}
