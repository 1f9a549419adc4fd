/*
 * symbolize.c - runtime addresses -> function names and call-site lines,
 * through elfutils libdwfl in offline mode.
 *
 * The profile holds raw addresses plus the module map of the profiled
 * process (path, build-id, load bias, PT_LOAD ranges), so we never need the
 * process itself.  Each module gets its own Dwfl session, opened the first
 * time one of its addresses is asked for: profiles list every library the
 * process mapped, and opening (or warning about) the ones no recorded
 * function lives in would only cost time and noise.  A per-module Dwfl also
 * keeps modules recorded at overlapping addresses (a garbage or merged map)
 * from refusing to load.
 *
 * Function names come from our own sorted index of the module's function
 * symbols instead of dwfl_module_addrname(): elfutils picks among aliases by
 * table order, while the report needs a stable, documented choice (global
 * before weak before local, then shortest, then alphabetical).
 *
 * Addresses are translated from the profiled process to the Dwfl's address
 * space through the ELF virtual address (addr - load_bias + dwfl bias), so
 * ET_EXEC files, whose base elfutils ignores, come out right as well.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "format/format.h"
#include "symbolize/demangle.h"
#include "symbolize/symbolize.h"
#include "util/strbuf.h"
#include "util/util.h"

/* One function symbol, or several that share a start address (aliases). */
struct sym_entry {
	uint64_t start;	   /* address in the module's Dwfl address space */
	uint64_t size;	   /* st_size; 0 = unknown, extends to the next symbol */
	uint64_t max_end;  /* highest end among this and all earlier sized entries */
	const char *name;  /* raw symbol name, owned by elfutils */
	const char *shown; /* name as reported, see sym_entry__shown(); NULL until asked */
	uint32_t len;	   /* length of name without a symbol-version suffix */
	uint8_t rank;	   /* 0 global, 1 weak, 2 local, 3 other bindings */
};

/*
 * The address range of a DIE: a compile unit's (for modules without
 * .debug_aranges) or a subprogram's (a function's code, or one of its
 * parts).  An index of them is sorted by start (die_ranges__sort), ranges
 * may nest or overlap, and max_end lets a lookup stop looking back.
 */
struct sym_die_range {
	uint64_t start;	  /* first DWARF address */
	uint64_t end;	  /* one past the last */
	uint64_t max_end; /* highest end among this and all earlier ranges */
	Dwarf_Die die;	  /* valid while the module's Dwarf is */
};

enum sym_module_state {
	SYM_MODULE_NEW,	    /* not looked at yet */
	SYM_MODULE_OK,	    /* reported to its Dwfl, build-id matches */
	SYM_MODULE_UNNAMED, /* missing, unreadable or a different build: MODULE+0xOFF */
};

struct sym_module {
	struct cp_symbolizer *sym;   /* the owner, for the debug-file callback */
	const struct cp_module *rec; /* as recorded in the profile */
	const char *path;	     /* recorded path, "" when none */
	char *file;		     /* where it is looked for: path, or under --symfs */
	const char *base;	     /* basename of path for fallback names */
	enum sym_module_state state; /* how far loading got */
	Dwfl *dwfl;		     /* this module's session, NULL unless OK */
	Dwfl_Module *mod;	     /* the module inside it */
	uint64_t dwfl_bias;	     /* Dwfl address = ELF vaddr + dwfl_bias */
	int indexed;		     /* syms has been built */
	struct sym_entry *syms;	     /* function symbols by start, one per address */
	size_t nsyms;		     /* entries in syms */
	int cus_indexed;	     /* cus has been built */
	uint64_t dw_bias;	     /* Dwfl address = DWARF address + dw_bias (set by
				      * sym_module__dwarf, before either index) */
	struct sym_die_range *cus;   /* CU address ranges by start */
	size_t ncus;		     /* entries in cus */
	int fns_indexed;	     /* fns has been built */
	struct sym_die_range *fns;   /* subprogram address ranges by start */
	size_t nfns;		     /* entries in fns */
	int main_found;		     /* main_vaddr looked for: 1 found, -1 not */
	uint64_t main_vaddr;	     /* main's ELF address, decoded from _start */
};

/* A PT_LOAD range of a module, for address -> module lookups. */
struct sym_range {
	uint64_t start;	 /* first runtime address */
	uint64_t end;	 /* one past the last */
	uint32_t module; /* index into sym->modules */
};

/*
 * Open-addressing hash map from an address to a result.  str is never NULL
 * in a used slot, which is how empty slots are told apart without a
 * reserved key (0 is a legal, if odd, address to ask about).
 */
struct sym_cache_slot {
	uint64_t key;	 /* address asked about */
	const char *str; /* name or file; NULL = empty slot */
	int line;	 /* sites: line number, 0 when there is none */
};

struct sym_cache {
	struct sym_cache_slot *slots; /* mask + 1 slots, or NULL while empty */
	size_t mask;		      /* capacity - 1, capacity a power of two */
	size_t used;		      /* occupied slots */
};

struct cp_symbolizer {
	const struct cp_profile_file *pf; /* borrowed, outlives us */
	int quiet;			  /* opts->quiet */
	int mangled;			  /* opts->mangled */
	int no_files;			  /* opts->no_files */
	char *symfs;			  /* opts->symfs made absolute, or NULL */
	char *debuginfo_path;		  /* see symbolizer__debug_path() */
	Dwfl_Callbacks callbacks;	  /* shared by all sessions, uses debuginfo_path */
	struct sym_module *modules;	  /* one per pf->modules[] */
	uint32_t nmodules;		  /* entries in modules */
	struct sym_range *ranges;	  /* all modules' maps, sorted by start */
	size_t nranges;			  /* entries in ranges */
	struct sym_cache names;		  /* fn_name results */
	struct sym_cache sites;		  /* site results */
	struct sym_cache fn_srcs;	  /* functions' source positions */
	struct sym_cache ips;		  /* sampled instructions' source positions */
	struct sym_cache inlines;	  /* inline chains: str a NULL-ended name array */
	struct sym_cache decls;		  /* functions' declarations */
	char **owned;			  /* strings we allocated for results */
	size_t nowned, owned_alloc;	  /* used and allocated entries of owned */
};

/* Marks a cached site without line information (str must be non-NULL). */
static const char no_site[] = "";

/* ---- result cache ---- */

static size_t sym_cache__hash(uint64_t key)
{
	key *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(key ^ (key >> 29));
}

/* The slot holding key, or the empty slot where it would go. */
static struct sym_cache_slot *sym_cache__slot(struct sym_cache *c, uint64_t key)
{
	size_t i = sym_cache__hash(key) & c->mask;

	while (c->slots[i].str && c->slots[i].key != key)
		i = (i + 1) & c->mask;
	return &c->slots[i];
}

static const struct sym_cache_slot *sym_cache__get(struct sym_cache *c, uint64_t key)
{
	struct sym_cache_slot *s;

	if (!c->slots)
		return NULL;
	s = sym_cache__slot(c, key);
	return s->str ? s : NULL;
}

static void sym_cache__put(struct sym_cache *c, uint64_t key, const char *str, int line)
{
	struct sym_cache_slot *s;

	/* Keep the load under 3/4 so probe sequences stay short. */
	if (!c->slots || (c->used + 1) * 4 > (c->mask + 1) * 3) {
		struct sym_cache_slot *old = c->slots;
		size_t oldcap = old ? c->mask + 1 : 0;
		size_t cap = oldcap ? oldcap * 2 : 256;

		c->slots = xcalloc(cap, sizeof(*c->slots));
		c->mask = cap - 1;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].str)
				*sym_cache__slot(c, old[i].key) = old[i];
		free(old);
	}
	s = sym_cache__slot(c, key);
	if (!s->str)
		c->used++;
	*s = (struct sym_cache_slot){ .key = key, .str = str, .line = line };
}

static void sym_cache__release(struct sym_cache *c)
{
	FREE_AND_NULL(c->slots);
	c->mask = c->used = 0;
}

/* ---- helpers ---- */

/* Keep s until cp_symbolizer__free() and return it. */
static const char *symbolizer__own(struct cp_symbolizer *sym, char *s)
{
	ALLOC_GROW(sym->owned, sym->nowned + 1, sym->owned_alloc);
	sym->owned[sym->nowned++] = s;
	return s;
}

static void add_hex(struct strbuf *sb, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%02x", p[i]);
}

/* A build-id in hex, or "none" (len <= 0), for warnings. */
static void add_build_id(struct strbuf *sb, const unsigned char *id, int len)
{
	if (len > 0)
		add_hex(sb, id, (size_t)len);
	else
		strbuf_addstr(sb, "none");
}

/*
 * elfutils' search path: the user's directories first, then the default
 * ":.debug:/usr/lib/debug" (the module's own directory, its .debug/
 * subdirectory, then /usr/lib/debug).  Build-id links are looked up under
 * every absolute element, so --debug-dir roots get .build-id/ searched too.
 * Relative user directories are made absolute: elfutils would take them
 * relative to each module's directory, which is not what a command-line
 * user means.
 */
static char *symbolizer__debug_path(const char *const *dirs, const char *symfs)
{
	struct strbuf sb = STRBUF_INIT;
	char *cwd = NULL;

	/* The analysed machine's debug files, under --symfs, come first. */
	if (symfs && !strchr(symfs, ':'))
		strbuf_addf(&sb, "%s/usr/lib/debug:", symfs);
	for (; dirs && *dirs; dirs++) {
		const char *d = *dirs;

		if (!*d)
			continue;
		if (strchr(d, ':')) {
			/* The path is colon-separated with no way to quote. */
			cp_warning("debug directory '%s' contains ':' and is ignored", d);
			continue;
		}
		if (*d != '/') {
			if (!cwd)
				cwd = getcwd(NULL, 0);
			if (!cwd) {
				cp_warning("cannot resolve debug directory '%s': %s", d,
					strerror(errno));
				continue;
			}
			strbuf_addf(&sb, "%s/", cwd);
		}
		strbuf_addf(&sb, "%s:", d);
	}
	strbuf_addstr(&sb, ":.debug:/usr/lib/debug");
	free(cwd);
	return strbuf_detach(&sb, NULL);
}

static int sym_range__cmp(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->module < y->module ? -1 : x->module > y->module;
}

static void symbolizer__add_ranges(struct cp_symbolizer *sym)
{
	const struct cp_profile_file *pf = sym->pf;
	size_t alloc = 0;

	for (uint32_t i = 0; i < sym->nmodules; i++) {
		const struct cp_module *rec = &pf->modules[i];
		uint32_t first = rec->first_map, n = rec->nmaps;

		/* The reader validates these; a hand-built profile may not. */
		if (first >= pf->nmaps)
			continue;
		if (n > pf->nmaps - first)
			n = pf->nmaps - first;
		for (uint32_t j = first; j < first + n; j++) {
			const struct cp_map *map = &pf->maps[j];

			if (map->start >= map->end)
				continue;
			ALLOC_GROW(sym->ranges, sym->nranges + 1, alloc);
			sym->ranges[sym->nranges++] = (struct sym_range){ .start = map->start,
									  .end = map->end,
									  .module = i };
		}
	}
	if (sym->nranges)
		qsort(sym->ranges, sym->nranges, sizeof(*sym->ranges), sym_range__cmp);
}

static struct sym_module *symbolizer__find_module(struct cp_symbolizer *sym, uint64_t addr)
{
	size_t lo = 0, hi = sym->nranges;

	/* Last range starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sym->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < sym->ranges[lo - 1].end)
		return &sym->modules[sym->ranges[lo - 1].module];
	/* Overlapping ranges can hide the right one from the binary search. */
	for (size_t i = 0; i < lo; i++)
		if (addr >= sym->ranges[i].start && addr < sym->ranges[i].end)
			return &sym->modules[sym->ranges[i].module];
	return NULL;
}

static void sym_module__warn(struct cp_symbolizer *sym, struct sym_module *m, const char *fmt, ...)
	CP_PRINTF(3, 4);

static void sym_module__warn(struct cp_symbolizer *sym, struct sym_module *m, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (sym->quiet)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	cp_warning("%s; its functions are shown as %s+0xOFFSET", sb.buf, m->base);
	strbuf_release(&sb);
}

/*
 * A module whose file on disk is not the one that was profiled would give
 * confidently wrong names, so a build-id mismatch makes it unnamed.  A
 * profile without a build-id for the module has nothing to compare.
 */
static int sym_module__check_build_id(struct cp_symbolizer *sym, struct sym_module *m)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	size_t want = m->rec->build_id_size;
	int len;

	if (want > sizeof(m->rec->build_id))
		want = sizeof(m->rec->build_id);
	if (!want)
		return 0;
	len = dwfl_module_build_id(m->mod, &bits, &vaddr);
	if (len > 0 && (size_t)len == want && !memcmp(bits, m->rec->build_id, want))
		return 0;

	if (!sym->quiet) {
		struct strbuf have = STRBUF_INIT, rec = STRBUF_INIT;

		add_build_id(&have, bits, len);
		add_hex(&rec, m->rec->build_id, want);
		sym_module__warn(sym, m,
				 "'%s' changed since recording (build-id %s, profile has %s)",
				 m->file, have.buf, rec.buf);
		strbuf_release(&have);
		strbuf_release(&rec);
	}
	return -1;
}

int cp_memory_fd(const void *data, uint64_t size, const char **why)
{
	const char *p = data;
	int fd = memfd_create("callprof-image", MFD_CLOEXEC);

	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	for (uint64_t done = 0; done < size;) {
		ssize_t n = write(fd, p + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*why = n < 0 ? strerror(errno) : "short write";
			close(fd);
			return -1;
		}
		done += (uint64_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	return fd;
}

/* A descriptor of m's image from the profile; -1 with *why set when there is none. */
static int image_fd(struct cp_symbolizer *sym, struct sym_module *m, const char **why)
{
	uint64_t size;
	const void *img = cp_profile_file__image(sym->pf, (uint32_t)(m - sym->modules), &size);

	if (!img) {
		*why = "no image in the profile";
		return -1;
	}
	return cp_memory_fd(img, size, why);
}

/* Report m to a Dwfl of its own on first use.  Returns 0 when usable. */
static int sym_module__load(struct cp_symbolizer *sym, struct sym_module *m)
{
	Dwarf_Addr bias = 0;
	const char *why;
	int fd;

	if (m->state != SYM_MODULE_NEW)
		return m->state == SYM_MODULE_OK ? 0 : -1;
	m->state = SYM_MODULE_UNNAMED;
	if (sym->no_files)
		return -1;

	/*
	 * Opened here rather than by elfutils so the warning gets errno's
	 * words, and only if regular: the path comes from the profile, and a
	 * FIFO there would block forever.  An image the profile holds (the
	 * vDSO, which has no file) is given to elfutils as a memory file.
	 */
	if (m->rec->flags & CP_MODULE_IMAGE)
		fd = image_fd(sym, m, &why);
	else
		fd = cp_open_regular(m->file, &why);
	if (fd < 0 && errno == ENOENT && sym->symfs && strcmp(m->file, m->path)) {
		/* Not copied under --symfs: this machine's file, if it is the same build. */
		const char *saved = why;

		fd = cp_open_regular(m->path, NULL);
		if (fd >= 0) {
			free(m->file);
			m->file = xstrdup(m->path);
		}
		why = saved;
	}
	if (fd < 0) {
		sym_module__warn(sym, m, "cannot open '%s': %s", m->file, why);
		return -1;
	}
	m->dwfl = dwfl_begin(&sym->callbacks);
	if (!m->dwfl) {
		close(fd);
		sym_module__warn(sym, m, "cannot read '%s': %s", m->path, dwfl_errmsg(-1));
		return -1;
	}
	/*
	 * add_p_vaddr = true: the module's bias becomes base, i.e. runtime
	 * address minus ELF vaddr, which is exactly the recorded load bias.
	 * (false would place the first segment at base instead.)  elfutils
	 * ignores base for ET_EXEC; dwfl_bias below absorbs that.
	 */
	m->mod = dwfl_report_elf(m->dwfl, m->base, m->file, fd, m->rec->load_bias, true);
	if (!m->mod) {
		close(fd); /* consumed only on success */
		sym_module__warn(sym, m, "cannot read '%s': %s", m->file, dwfl_errmsg(-1));
		goto fail;
	}
	if (dwfl_report_end(m->dwfl, NULL, NULL)) {
		sym_module__warn(sym, m, "cannot read '%s': %s", m->file, dwfl_errmsg(-1));
		goto fail;
	}
	{
		void **ud;

		/* find_debuginfo() gets this back, to warn in the module's name. */
		if (dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
			*ud = m;
	}
	if (sym_module__check_build_id(sym, m))
		goto fail;
	if (!dwfl_module_getelf(m->mod, &bias)) {
		sym_module__warn(sym, m, "cannot read '%s': %s", m->file, dwfl_errmsg(-1));
		goto fail;
	}
	m->dwfl_bias = bias;
	m->state = SYM_MODULE_OK;
	return 0;

fail:
	dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	return -1;
}

static uint64_t sym_module__dwfl_addr(const struct sym_module *m, uint64_t addr)
{
	return addr - m->rec->load_bias + m->dwfl_bias;
}

static int sym_entry__cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	int cmp;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	cmp = memcmp(x->name, y->name, x->len);
	/* Equal but for the version: any fixed order will do. */
	return cmp ? cmp : strcmp(x->name, y->name);
}

/*
 * Length of a symbol name without its version suffix.  The .symtab of a
 * linked library (or of its debug file) names versioned symbols
 * "fopen@@GLIBC_2.2.5" while .dynsym says "fopen"; dropping the suffix makes
 * names independent of whether debug info is installed.
 */
static uint32_t sym_name_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at != name ? (size_t)(at - name) : strlen(name);
}

static uint8_t sym_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/* A GOT slot a PLT stub may jump through, and the symbol it is relocated to. */
struct plt_slot {
	uint64_t got;	    /* the slot's ELF address (r_offset) */
	const char *target; /* the symbol's name, owned by libelf */
};

static int plt_slot__cmp(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;

	return (x->got > y->got) - (x->got < y->got);
}

/* The JUMP_SLOT and GLOB_DAT relocations of rela section scn, into *slots. */
static void add_plt_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct plt_slot **slots,
			  size_t *n, size_t *alloc)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *rdata = elf_getdata(scn, NULL), *sdata = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr symsh;

	if (!rdata || !sdata || !sh->sh_entsize || !gelf_getshdr(symscn, &symsh))
		return;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym ds;
		const char *target;

		if (!gelf_getrela(rdata, (int)i, &r) ||
		    (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT &&
		     GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT) ||
		    !gelf_getsym(sdata, (int)GELF_R_SYM(r.r_info), &ds) ||
		    !(target = elf_strptr(elf, symsh.sh_link, ds.st_name)) || !*target)
			continue;
		ALLOC_GROW(*slots, *n + 1, *alloc);
		(*slots)[(*n)++] = (struct plt_slot){ .got = r.r_offset, .target = target };
	}
}

/*
 * x86-64: a symbol "TARGET@plt" for each PLT stub of m (appended to
 * m->syms, which holds n), as perf names them: otherwise a sample in a
 * stub takes the name of whatever symbol precedes the PLT (_init), and the
 * stubs that call callprof's hooks could not be told from the program's.
 * Every stub of .plt, .plt.sec (IBT, -fcf-protection) and .plt.got (no
 * lazy binding) jumps through a GOT slot, "jmp *disp(%rip)" (ff 25, after
 * endbr64 or a bnd prefix): the relocation of that slot (JUMP_SLOT, or
 * GLOB_DAT for .plt.got) names the target.  Decoding the jump rather than
 * counting entries holds for every section and linker layout; .plt's
 * entries that only push and jump to the lazy resolver (with .plt.sec)
 * name nothing and are left alone.  Returns the new count.
 */
static size_t add_plt(struct cp_symbolizer *sym, struct sym_module *m, size_t n, size_t *alloc)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	Elf_Scn *scn = NULL, *plts[8];
	GElf_Shdr sh;
	GElf_Ehdr eh;
	size_t shstrndx, nplts = 0, nslots = 0, slots_alloc = 0;
	struct plt_slot *slots = NULL;

	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return n;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC))
			add_plt_slots(elf, scn, &sh, &slots, &nslots, &slots_alloc);
		else if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) &&
			 (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			  !strcmp(name, ".plt.got")) && nplts < sizeof(plts) / sizeof(*plts))
			plts[nplts++] = scn;
	}
	if (nslots)
		qsort(slots, nslots, sizeof(*slots), plt_slot__cmp);
	for (size_t p = 0; p < nplts && nslots; p++) {
		Elf_Data *d = elf_getdata(plts[p], NULL);
		uint64_t es;

		if (!gelf_getshdr(plts[p], &sh) || !d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		es = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16;
		for (uint64_t off = 0; off + es <= sh.sh_size; off += es) {
			const unsigned char *e = (const unsigned char *)d->d_buf + off;

			for (uint64_t k = 0; k + 6 <= es; k++) {
				struct plt_slot key, *hit;
				int32_t disp;

				if (e[k] != 0xff || e[k + 1] != 0x25)
					continue;
				memcpy(&disp, e + k + 2, sizeof(disp));
				key.got = sh.sh_addr + off + k + 6 + (int64_t)disp;
				hit = bsearch(&key, slots, nslots, sizeof(*slots), plt_slot__cmp);
				if (!hit)
					break;
				ALLOC_GROW(m->syms, n + 1, *alloc);
				m->syms[n] = (struct sym_entry){
					.start = sh.sh_addr + off + bias,
					.size = es,
					.name = symbolizer__own(sym, xstrfmt("%s@plt", hit->target)),
					.rank = 3,
				};
				m->syms[n].len = (uint32_t)strlen(m->syms[n].name);
				n++;
				break;
			}
		}
	}
	free(slots);
	return n;
}

/*
 * Build m->syms: every defined function symbol, sorted, then collapsed to
 * the preferred name per start address.  elfutils chooses the table for
 * us: .symtab of the file or its separate debug file, else .dynsym (plus
 * .gnu_debugdata's mini symtab when present), which is what names
 * stripped libraries' exported functions.
 */
static void sym_module__index(struct cp_symbolizer *sym, struct sym_module *m)
{
	size_t alloc = 0, n = 0, out = 0;
	uint64_t max_end = 0;
	int nsyms;

	m->indexed = 1;
	nsyms = dwfl_module_getsymtab(m->mod);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(m->mod, i, &s, &addr, &shndx, &elf, &bias);
		if (!name || !*name)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		/* Imports (UNDEF) and unrelocated ABS values are not code here. */
		if (shndx == SHN_UNDEF || shndx == SHN_ABS)
			continue;
		ALLOC_GROW(m->syms, n + 1, alloc);
		m->syms[n++] = (struct sym_entry){
			.start = addr,
			.size = s.st_size,
			.name = name,
			.len = sym_name_len(name),
			.rank = sym_rank(s.st_info),
		};
	}
	n = add_plt(sym, m, n, &alloc);
	if (!n)
		return;
	qsort(m->syms, n, sizeof(*m->syms), sym_entry__cmp);

	/* Keep the first (preferred) of each address; an alias may be larger. */
	for (size_t i = 0; i < n; i++) {
		struct sym_entry *e = &m->syms[i];
		uint64_t end;

		if (out && m->syms[out - 1].start == e->start) {
			if (e->size > m->syms[out - 1].size)
				m->syms[out - 1].size = e->size;
		} else {
			m->syms[out++] = *e;
		}
		e = &m->syms[out - 1];
		end = e->start + e->size < e->start ? UINT64_MAX : e->start + e->size;
		if (e->size && end > max_end)
			max_end = end;
		e->max_end = max_end;
	}
	m->nsyms = out;
}

/*
 * The symbol containing d.  The nearest symbol at or below d wins if it
 * covers d (an unsized one covers everything up to the next symbol);
 * otherwise an earlier sized symbol may still enclose d (nested symbols in
 * hand-written assembly), and max_end bounds how far back to look.
 */
static struct sym_entry *sym_module__lookup(struct sym_module *m, uint64_t d)
{
	size_t lo = 0, hi = m->nsyms;
	struct sym_entry *e;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= d)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &m->syms[lo - 1];
	if (!e->size || d - e->start < e->size)
		return e;
	for (size_t i = lo - 1; i-- > 0 && m->syms[i].max_end > d;) {
		e = &m->syms[i];
		if (e->size && d - e->start < e->size)
			return e;
	}
	return NULL;
}

/*
 * The name an entry is reported as: without a version suffix, and C++ names
 * demangled as c++filt prints them (cp_demangle: "_Z" names only), the
 * target of a PLT stub too ("std::string::_M_append(char const*, unsigned
 * long)@plt", as perf prints it).
 */
static const char *sym_entry__shown(struct cp_symbolizer *sym, struct sym_entry *e)
{
	char *base = NULL, *dm;
	size_t len = strlen(e->name);

	if (e->shown)
		return e->shown;
	if (!sym->mangled && len > 4 && !strcmp(e->name + len - 4, "@plt")) {
		char *target = xstrfmt("%.*s", (int)(len - 4), e->name);

		dm = cp_demangle(target);
		free(target);
		if (dm) {
			e->shown = symbolizer__own(sym, xstrfmt("%s@plt", dm));
			free(dm);
			return e->shown;
		}
	}
	e->shown = e->name;
	if (e->name[e->len]) {
		base = xmalloc(e->len + 1);
		memcpy(base, e->name, e->len);
		base[e->len] = '\0';
		e->shown = base;
	}
	if (!sym->mangled && (dm = cp_demangle(e->shown))) {
		free(base);
		return e->shown = symbolizer__own(sym, dm);
	}
	if (base)
		symbolizer__own(sym, base);
	return e->shown;
}

/*
 * Where a stripped program's main is: glibc's x86-64 _start (the ELF entry
 * point) passes main to __libc_start_main in %rdi, loaded with a
 * RIP-relative "lea disp32(%rip),%rdi" (48 8d 3d) within its first bytes.
 * Sampled profiles of stripped programs (record --sample) then say main
 * where they would say PROG+0xOFFSET.
 */
#define START_SCAN_BYTES 64

static void sym_module__find_main(struct sym_module *m)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	GElf_Ehdr eh;
	size_t nph = 0;

	m->main_found = -1;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const unsigned char *p;
		size_t len;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || eh.e_entry < ph.p_vaddr ||
		    eh.e_entry - ph.p_vaddr >= ph.p_filesz)
			continue;
		len = ph.p_filesz - (eh.e_entry - ph.p_vaddr);
		if (len > START_SCAN_BYTES)
			len = START_SCAN_BYTES;
		d = elf_getdata_rawchunk(elf, ph.p_offset + (eh.e_entry - ph.p_vaddr), len,
					 ELF_T_BYTE);
		if (!d)
			return;
		p = d->d_buf;
		for (size_t k = 0; k + 7 <= d->d_size; k++) {
			int32_t disp;

			if (p[k] != 0x48 || p[k + 1] != 0x8d || p[k + 2] != 0x3d)
				continue;
			memcpy(&disp, p + k + 3, sizeof(disp));
			m->main_vaddr = eh.e_entry + k + 7 + (int64_t)disp;
			m->main_found = 1;
			return;
		}
		return;
	}
}

/* Whether addr is main of the main program (module 0), found from _start. */
static int sym_module__is_main(struct cp_symbolizer *sym, struct sym_module *m, uint64_t addr)
{
	if (m != &sym->modules[0])
		return 0;
	if (!m->main_found)
		sym_module__find_main(m);
	return m->main_found > 0 && addr - m->rec->load_bias == m->main_vaddr;
}

static const char *symbolizer__resolve(struct cp_symbolizer *sym, uint64_t addr)
{
	struct sym_module *m = symbolizer__find_module(sym, addr);

	if (!m)
		return symbolizer__own(sym, xstrfmt("[unknown]+0x%" PRIx64, addr));
	if (!sym_module__load(sym, m)) {
		struct sym_entry *e;

		if (!m->indexed)
			sym_module__index(sym, m);
		e = sym_module__lookup(m, sym_module__dwfl_addr(m, addr));
		if (e)
			return sym_entry__shown(sym, e);
		if (sym_module__is_main(sym, m, addr))
			return "main";
	}
	return symbolizer__own(sym, xstrfmt("%s+0x%" PRIx64, m->base, addr - m->rec->load_bias));
}

uint64_t cp_symbolizer__fn_entry(struct cp_symbolizer *sym, uint64_t ip)
{
	struct sym_module *m = symbolizer__find_module(sym, ip);
	struct sym_entry *e;

	if (!m || sym_module__load(sym, m))
		return 0;
	if (!m->indexed)
		sym_module__index(sym, m);
	e = sym_module__lookup(m, sym_module__dwfl_addr(m, ip));
	return e ? e->start - m->dwfl_bias + m->rec->load_bias : 0;
}

static int sym_die_range__cmp(const void *a, const void *b)
{
	const struct sym_die_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sort r[0..n) by start and set each max_end. */
static void die_ranges__sort(struct sym_die_range *r, size_t n)
{
	uint64_t max_end = 0;

	if (!n)
		return;
	qsort(r, n, sizeof(*r), sym_die_range__cmp);
	for (size_t i = 0; i < n; i++) {
		if (r[i].end > max_end)
			max_end = r[i].end;
		r[i].max_end = max_end;
	}
}

/* The DIE of the innermost-starting range of r[0..n) holding a, or NULL. */
static Dwarf_Die *die_ranges__find(struct sym_die_range *r, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges may nest or overlap; max_end says when to stop looking back. */
	for (size_t i = lo; i-- > 0 && r[i].max_end > a;)
		if (a < r[i].end)
			return &r[i].die;
	return NULL;
}

/*
 * libdwfl finds the CU of an address through .debug_aranges only
 * (elfutils 0.188), and clang does not emit that section by default, so
 * line lookups in clang-built code fail.  This index of every CU's
 * DW_AT_ranges / low_pc..high_pc is the fallback, built on the first miss.
 */
/* m's DWARF (NULL if it has none), with m->dw_bias set: what both indexes read. */
static Dwarf *sym_module__dwarf(struct sym_module *m)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);

	if (dw)
		m->dw_bias = bias;
	return dw;
}

static void sym_module__index_cus(struct sym_module *m)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Addr base, start, end;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	size_t alloc = 0;
	Dwarf *dw;

	m->cus_indexed = 1;
	dw = sym_module__dwarf(m);
	if (!dw)
		return;
	for (; dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0; cu = next) {
		ptrdiff_t off = 0;

		/* Type units hold no code; split units are reached via skeletons. */
		if (type != DW_UT_compile && type != DW_UT_skeleton && type != DW_UT_partial)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (start >= end)
				continue;
			ALLOC_GROW(m->cus, m->ncus + 1, alloc);
			m->cus[m->ncus++] =
				(struct sym_die_range){ .start = start, .end = end, .die = cudie };
		}
	}
	die_ranges__sort(m->cus, m->ncus);
}

static Dwarf_Die *sym_module__find_cu(struct sym_module *m, uint64_t a)
{
	return die_ranges__find(m->cus, m->ncus, a);
}

/* Source file and line of Dwfl address d, or NULL. */
static const char *sym_module__line(struct sym_module *m, uint64_t d, int *line)
{
	Dwfl_Line *l = dwfl_module_getsrc(m->mod, d);
	Dwarf_Line *dl;
	Dwarf_Die *cu;
	const char *src;

	if (l)
		return dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
	if (!m->cus_indexed)
		sym_module__index_cus(m);
	cu = sym_module__find_cu(m, d - m->dw_bias);
	if (!cu)
		return NULL;
	dl = dwarf_getsrc_die(cu, d - m->dw_bias);
	if (!dl || dwarf_lineno(dl, line))
		return NULL;
	src = dwarf_linesrc(dl, NULL, NULL);
	return src;
}

/* Add the address ranges of the subprograms below die (namespaces and types searched). */
static void index_fns_below(struct sym_module *m, Dwarf_Die *die, size_t *alloc, int depth)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(die, &child))
		return;
	do {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0) {
				if (start >= end)
					continue;
				ALLOC_GROW(m->fns, m->nfns + 1, *alloc);
				m->fns[m->nfns++] = (struct sym_die_range){ .start = start, .end = end,
									  .die = child };
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			index_fns_below(m, &child, alloc, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * Build m->fns: the address ranges of every subprogram (one pass over the
 * module's DIEs), so that finding the function DIE of an address is a
 * binary search rather than a walk of its compile unit.
 */
static void sym_module__index_fns(struct sym_module *m)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	size_t alloc = 0;
	Dwarf *dw;

	m->fns_indexed = 1;
	dw = sym_module__dwarf(m);
	if (!dw)
		return;
	for (; dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0; cu = next) {
		if (type == DW_UT_compile || type == DW_UT_partial)
			index_fns_below(m, &cudie, &alloc, 0);
		else if (type == DW_UT_skeleton)
			index_fns_below(m, &subdie, &alloc, 0);
	}
	die_ranges__sort(m->fns, m->nfns);
}

/* The subprogram DIE whose code holds DWARF address a, or NULL. */
static Dwarf_Die *sym_module__fn_die(struct sym_module *m, uint64_t a)
{
	return die_ranges__find(m->fns, m->nfns, a);
}

/*
 * The DIEs of code holding DWARF address a below die (a subprogram), from
 * the outermost inwards: each child whose ranges hold a is descended into
 * (lexical blocks, inlined subroutines, nested functions).  Appends to
 * *path (n entries, *alloc allocated); returns the new count.
 */
static size_t scopes_at(Dwarf_Die *die, uint64_t a, Dwarf_Die **path, size_t n, size_t *alloc,
			int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child))
		return n;
	do {
		int tag = dwarf_tag(&child);

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&child, a) <= 0)
				break;
			ALLOC_GROW(*path, n + 1, *alloc);
			(*path)[n++] = child;
			return scopes_at(&child, a, path, n, alloc, depth + 1);
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* The name of a subprogram or inlined instance, as the naming rules say. */
static const char *die_fn_name(struct cp_symbolizer *sym, Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *name = NULL;
	char *dm;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		name = dwarf_formstring(&at);
	if (name && !sym->mangled && (dm = cp_demangle(name)))
		return symbolizer__own(sym, dm);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &at))
		name = dwarf_formstring(&at);
	return name ? name : "?";
}

/* ---- debug files ---- */

/* The GNU build-id of the ELF file at path into *id (malloc'd); its length, or -1. */
static int file_build_id(const char *path, unsigned char **id)
{
	int fd = cp_open_regular(path, NULL), len = -1;
	const void *bits;
	Elf *elf;

	*id = NULL;
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		len = (int)dwelf_elf_gnu_build_id(elf, &bits);
		if (len > 0) {
			*id = xmalloc(len);
			memcpy(*id, bits, len);
		}
		elf_end(elf);
	}
	close(fd);
	return len;
}

/*
 * A debug file for m at path exists: if its build-id differs from the
 * module's, say so (elfutils skips it silently, and the user would only
 * wonder where the names went).
 */
static void sym_module__check_debug_candidate(struct sym_module *m, const char *path,
					      const unsigned char *want, int want_len)
{
	unsigned char *have;
	int len;

	if (access(path, R_OK) || !strcmp(path, m->file))
		return;
	len = file_build_id(path, &have);
	if (len != want_len || memcmp(have, want, want_len)) {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		add_build_id(&a, have, len);
		add_hex(&b, want, want_len);
		cp_warning("debug file '%s' is from another build than '%s' (build-id %s, module has "
			"%s): not used",
			path, m->file, a.buf, b.buf);
		strbuf_release(&a);
		strbuf_release(&b);
	}
	free(have);
}

/*
 * Call fn(path, arg) for each place libdwfl's standard search may open for
 * file_name's debug data, until fn returns nonzero (returned): per element
 * of the path, the build-id link under an absolute one, then the debuglink
 * name (file_name's own name + ".debug" without one) under it, next to
 * file_name, and under each tail of file_name's directory.
 */
static int for_each_debug_candidate(const char *debuginfo_path, const char *file_name,
				    const char *debuglink, const unsigned char *id, int id_len,
				    int (*fn)(const char *path, void *arg), void *arg)
{
	const char *slash = strrchr(file_name, '/');
	char *dir = slash ? xstrfmt("%.*s", (int)(slash - file_name), file_name) : xstrdup("."),
	     *own = NULL, *path;
	const char *p = debuginfo_path;
	struct strbuf hex = STRBUF_INIT;
	int ret = 0;

	if (!debuglink)
		debuglink = own = xstrfmt("%s.debug", slash ? slash + 1 : file_name);
	if (id_len > 0)
		add_hex(&hex, id, id_len);
	while (p && !ret) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *el = xstrfmt("%.*s", (int)len, p);

		if (*el == '/' && hex.len > 2) {
			path = xstrfmt("%s/.build-id/%.2s/%s.debug", el, hex.buf, hex.buf + 2);
			ret = fn(path, arg);
			free(path);
		}
		if (*el == '/') {
			/* el + dir, then el + each shorter tail of dir, then el alone. */
			const char *d = dir;

			while (!ret && d) {
				path = xstrfmt("%s%s%s/%s", el, *d == '/' ? "" : "/", d, debuglink);
				ret = fn(path, arg);
				free(path);
				d = strchr(d + 1, '/');
			}
			if (!ret) {
				path = xstrfmt("%s/%s", el, debuglink);
				ret = fn(path, arg);
				free(path);
			}
		} else if (!ret) {
			path = *el ? xstrfmt("%s/%s/%s", dir, el, debuglink)
				   : xstrfmt("%s/%s", dir, debuglink);
			ret = fn(path, arg);
			free(path);
		}
		free(el);
		p = end ? end + 1 : NULL;
	}
	strbuf_release(&hex);
	free(own);
	free(dir);
	return ret;
}

static int special_candidate(const char *path, void *arg)
{
	if (!cp_path_is_special(path))
		return 0;
	*(char **)arg = xstrdup(path);
	return 1;
}

char *cp_debug_search_special(const char *debuginfo_path, const char *file_name,
			      const char *debuglink, const unsigned char *id, int id_len)
{
	char *bad = NULL;

	if (file_name)
		for_each_debug_candidate(debuginfo_path, file_name, debuglink, id, id_len,
					 special_candidate, &bad);
	return bad;
}

struct candidate_check {
	struct sym_module *m;
	const unsigned char *want;
	int want_len;
};

static int check_candidate(const char *path, void *arg)
{
	struct candidate_check *c = arg;

	sym_module__check_debug_candidate(c->m, path, c->want, c->want_len);
	return 0;
}

/*
 * elfutils' standard search, in the order the man page documents, unless
 * one of the places it would open is not a regular file (it opens them
 * without O_NONBLOCK: a FIFO there would hang); when it finds nothing,
 * look at the places it looked in for files it refused.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_module *m = userdata ? *userdata : NULL;
	const unsigned char *want = NULL;
	GElf_Addr vaddr;
	int want_len = dwfl_module_build_id(mod, &want, &vaddr), fd;
	/* Without m (not yet reported), elfutils' default path. */
	char *bad = cp_debug_search_special(m ? m->sym->debuginfo_path : ":.debug:/usr/lib/debug",
					    file_name, debuglink_file, want, want_len);
	if (bad) {
		if (!m || !m->sym->quiet)
			cp_warning("debug file '%s' is not a regular file: no debug data searched for "
				   "'%s'",
				   bad, file_name);
		free(bad);
		return -1;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !m || m->sym->quiet || !file_name || want_len <= 0)
		return fd;
	{
		struct candidate_check c = { m, want, want_len };

		for_each_debug_candidate(m->sym->debuginfo_path, file_name, debuglink_file, want,
					 want_len, check_candidate, &c);
	}
	return fd;
}

/*
 * A merged profile carries its names and lines (SYMBOLS): they go into the
 * result caches, so nothing is looked up in ELF or DWARF for them and the
 * file reads the same where its binaries are missing.
 */
static void symbolizer__add_resolved(struct cp_symbolizer *sym)
{
	const struct cp_profile_file *pf = sym->pf;

	for (uint32_t i = 0; i < pf->nsymbols; i++) {
		const struct cp_symbol *y = &pf->symbols[i];
		const char *file = cp_profile_file__str(pf, y->file);
		int line = file && *file && y->line <= INT_MAX ? (int)y->line : 0;

		if (!line)
			file = no_site;
		if (y->kind == CP_SYM_FUNCTION) {
			sym_cache__put(&sym->names, y->addr, cp_profile_file__str(pf, y->name), 0);
			sym_cache__put(&sym->fn_srcs, y->addr, file, line);
		} else {
			sym_cache__put(&sym->sites, y->addr, file, line);
		}
	}
}

/* ---- API ---- */

struct cp_symbolizer *cp_symbolizer__new(const struct cp_profile_file *pf,
					 const struct cp_symbolizer_opts *opts)
{
	struct cp_symbolizer *sym = xcalloc(1, sizeof(*sym));

	sym->pf = pf;
	sym->quiet = opts ? opts->quiet : 0;
	sym->mangled = opts ? opts->mangled : 0;
	sym->no_files = opts ? opts->no_files : 0;
	if (opts && opts->symfs && *opts->symfs) {
		sym->symfs = realpath(opts->symfs, NULL);
		if (!sym->symfs)
			sym->symfs = xstrdup(opts->symfs); /* warned about per module */
	}
	sym->debuginfo_path = symbolizer__debug_path(opts ? opts->debug_dirs : NULL, sym->symfs);
	sym->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		/* Build-id, debuglink, the path above; debuginfod when configured. */
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &sym->debuginfo_path,
	};

	sym->nmodules = pf->modules ? pf->nmodules : 0;
	sym->modules = xcalloc(sym->nmodules, sizeof(*sym->modules));
	for (uint32_t i = 0; i < sym->nmodules; i++) {
		struct sym_module *m = &sym->modules[i];
		const char *path = cp_profile_file__str(pf, pf->modules[i].path);
		const char *slash;

		m->sym = sym;
		m->rec = &pf->modules[i];
		m->path = path ? path : "";
		/* An image the profile holds (the vDSO) is looked for nowhere. */
		m->file = sym->symfs && !(m->rec->flags & CP_MODULE_IMAGE) ?
				  xstrfmt("%s%s%s", sym->symfs, *m->path == '/' ? "" : "/", m->path) :
				  xstrdup(m->path);
		slash = strrchr(m->path, '/');
		m->base = slash ? slash + 1 : m->path;
		/* A fallback name needs something before the "+0x". */
		if (!*m->base)
			m->base = "[anon]";
	}
	if (pf->maps)
		symbolizer__add_ranges(sym);
	symbolizer__add_resolved(sym);
	return sym;
}

const char *cp_symbolizer__fn_name_at(struct cp_symbolizer *sym, uint64_t addr)
{
	struct sym_module *m = symbolizer__find_module(sym, addr);
	const char *name = cp_symbolizer__fn_name(sym, addr);

	if (!m)
		return name; /* already "[unknown]+0xADDR" */
	return symbolizer__own(sym, xstrfmt("%s [%s+0x%" PRIx64 "]", name, m->base,
					    addr - m->rec->load_bias));
}

const char *cp_symbolizer__signal_name(struct cp_symbolizer *sym, uint64_t sig)
{
	return symbolizer__own(sym, xstrfmt("<signal %" PRIu64 ">", sig));
}

const char *cp_symbolizer__region_name(struct cp_symbolizer *sym, const char *name)
{
	return symbolizer__own(sym, xstrfmt("[%s]", name ? name : "?"));
}

void cp_symbolizer__free(struct cp_symbolizer *sym)
{
	if (!sym)
		return;
	for (uint32_t i = 0; i < sym->nmodules; i++) {
		if (sym->modules[i].dwfl)
			dwfl_end(sym->modules[i].dwfl);
		free(sym->modules[i].syms);
		free(sym->modules[i].cus);
		free(sym->modules[i].fns);
		free(sym->modules[i].file);
	}
	free(sym->modules);
	free(sym->ranges);
	free(sym->symfs);
	sym_cache__release(&sym->names);
	sym_cache__release(&sym->sites);
	sym_cache__release(&sym->fn_srcs);
	sym_cache__release(&sym->ips);
	sym_cache__release(&sym->inlines);
	sym_cache__release(&sym->decls);
	for (size_t i = 0; i < sym->nowned; i++)
		free(sym->owned[i]);
	free(sym->owned);
	free(sym->debuginfo_path);
	free(sym);
}

const char *cp_symbolizer__fn_name(struct cp_symbolizer *sym, uint64_t addr)
{
	const struct sym_cache_slot *s = sym_cache__get(&sym->names, addr);
	const char *name;

	if (s)
		return s->str;
	name = symbolizer__resolve(sym, addr);
	sym_cache__put(&sym->names, addr, name, 0);
	return name;
}

/* The source line of the instruction at pc, cached in c under key. */
static int line_at(struct cp_symbolizer *sym, struct sym_cache *c, uint64_t key, uint64_t pc,
		   const char **file, int *line)
{
	const struct sym_cache_slot *s = sym_cache__get(c, key);
	const char *src = NULL;
	int ln = 0;

	if (!s) {
		struct sym_module *m = symbolizer__find_module(sym, pc);

		if (m && !sym_module__load(sym, m))
			src = sym_module__line(m, sym_module__dwfl_addr(m, pc), &ln);
		/* Line 0 marks code with no source line (DWARF's "compiler-made"). */
		if (!src || ln <= 0) {
			src = no_site;
			ln = 0;
		}
		sym_cache__put(c, key, src, ln);
	} else {
		src = s->str;
		ln = s->line;
	}
	if (!ln)
		return -ENOENT;
	*file = src;
	*line = ln;
	return 0;
}

int cp_symbolizer__site(struct cp_symbolizer *sym, uint64_t ret_addr, const char **file, int *line)
{
	/* The call instruction ends just before the return address. */
	return line_at(sym, &sym->sites, ret_addr, ret_addr - 1, file, line);
}

int cp_symbolizer__line(struct cp_symbolizer *sym, uint64_t ip, const char **file, int *line)
{
	return line_at(sym, &sym->ips, ip, ip, file, line);
}

int cp_symbolizer__fn_src(struct cp_symbolizer *sym, uint64_t addr, const char **file, int *line)
{
	return line_at(sym, &sym->fn_srcs, addr, addr, file, line);
}

const char *cp_symbolizer__producer(struct cp_symbolizer *sym, uint64_t addr)
{
	struct sym_module *m = symbolizer__find_module(sym, addr);
	Dwarf_Attribute attr;
	Dwarf_Die *cu;
	Dwarf_Addr bias;
	uint64_t d;

	if (!m || sym_module__load(sym, m))
		return NULL;
	d = sym_module__dwfl_addr(m, addr);
	cu = dwfl_module_addrdie(m->mod, d, &bias);
	if (!cu) {
		/* No .debug_aranges (clang): the module's own index of its CUs. */
		if (!m->cus_indexed)
			sym_module__index_cus(m);
		cu = sym_module__find_cu(m, d - m->dw_bias);
	}
	if (!cu || !dwarf_attr(cu, DW_AT_producer, &attr))
		return NULL;
	return dwarf_formstring(&attr);
}

int cp_symbolizer__was_inlined(struct cp_symbolizer *sym, uint64_t addr)
{
	struct sym_module *m = symbolizer__find_module(sym, addr);
	Dwarf_Attribute at;
	Dwarf_Word inl;
	Dwarf_Die *fn;

	if (sym->pf->nsymbols || !m || sym_module__load(sym, m))
		return -1;
	if (!m->fns_indexed)
		sym_module__index_fns(m);
	fn = sym_module__fn_die(m, sym_module__dwfl_addr(m, addr) - m->dw_bias);
	if (!fn)
		return -1;
	/* The out-of-line copy points to its abstract instance, which says. */
	if (!dwarf_attr_integrate(fn, DW_AT_inline, &at) || dwarf_formudata(&at, &inl))
		return 0;
	return inl == DW_INL_inlined || inl == DW_INL_declared_inlined;
}

/*
 * The code DIEs holding ip, malloc'd into *path: its function's
 * subprogram, then the blocks and inlined subroutines inside it that hold
 * it (see scopes_at); their number.
 */
static size_t symbolizer__scopes(struct cp_symbolizer *sym, uint64_t ip, Dwarf_Die **path)
{
	struct sym_module *m = symbolizer__find_module(sym, ip);
	Dwarf_Die *fn;
	uint64_t a;
	size_t alloc = 0;

	*path = NULL;
	/* A merged profile carries its names and lines (SYMBOLS), not its DWARF. */
	if (sym->pf->nsymbols || !m || sym_module__load(sym, m))
		return 0;
	if (!m->fns_indexed)
		sym_module__index_fns(m);
	a = sym_module__dwfl_addr(m, ip) - m->dw_bias;
	fn = sym_module__fn_die(m, a);
	if (!fn)
		return 0;
	ALLOC_GROW(*path, 1, alloc);
	(*path)[0] = *fn;
	return scopes_at(fn, a, path, 1, &alloc, 0);
}

int cp_symbolizer__inlined(struct cp_symbolizer *sym, uint64_t ip, const char *const **names)
{
	const struct sym_cache_slot *s = sym_cache__get(&sym->inlines, ip);
	Dwarf_Die *path;
	size_t n;
	const char **out;
	int k = 0;

	if (s) {
		*names = (const char *const *)s->str;
		return s->line;
	}
	n = symbolizer__scopes(sym, ip, &path);
	out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (dwarf_tag(&path[i]) == DW_TAG_inlined_subroutine)
			out[k++] = die_fn_name(sym, &path[i]);
	free(path);
	symbolizer__own(sym, (char *)out);
	sym_cache__put(&sym->inlines, ip, (const char *)out, k);
	*names = out;
	return k;
}

int cp_symbolizer__fn_decl(struct cp_symbolizer *sym, uint64_t addr, const char **file, int *line)
{
	const struct sym_cache_slot *s = sym_cache__get(&sym->decls, addr);
	Dwarf_Die *path;
	const char *src = NULL;
	int ln = 0;

	if (!s) {
		size_t n = symbolizer__scopes(sym, addr, &path);

		/* The outermost: the function whose code this is, not one inlined into it. */
		if (n && dwarf_tag(&path[0]) == DW_TAG_subprogram &&
		    (src = dwarf_decl_file(&path[0])) && dwarf_decl_line(&path[0], &ln))
			src = NULL;
		free(path);
		if (!src || ln <= 0) {
			const char *f;

			/* No declaration: where its code begins. */
			if (cp_symbolizer__fn_src(sym, addr, &f, &ln))
				src = no_site, ln = 0;
			else
				src = f;
		}
		sym_cache__put(&sym->decls, addr, src, ln);
	} else {
		src = s->str;
		ln = s->line;
	}
	if (!ln)
		return -ENOENT;
	*file = src;
	*line = ln;
	return 0;
}

const char *cp_symbolizer__module(struct cp_symbolizer *sym, uint64_t addr, uint64_t *offset)
{
	struct sym_module *m = symbolizer__find_module(sym, addr);

	if (!m)
		return NULL;
	if (offset)
		*offset = addr - m->rec->load_bias;
	return m->path;
}
