/*
 * filter.c - record-time selection: which functions get nodes, where
 * recording starts, how deep it goes, and the overhead budget.
 *
 * `callprof record` resolves the user's patterns (globs or regular
 * expressions on demangled names, source files, modules) with the debug
 * data of the program and its linked libraries, and hands the runtime a
 * small text file (CALLPROF_FILTER) of address ranges per module file,
 * named by device and inode.  At start-up the ranges are moved to this
 * process's addresses and sorted; from then on a function is classified by
 * one binary search, and only when a thread first sees a call path
 * (cp_thread__child) or when an excluded function's exit arrives.  The
 * result is kept in the node (struct cp_node.flags), which the enter hook
 * loads anyway.
 *
 * The file (one item per line, fields separated by one space):
 *   callprof-filter 1
 *   depth N                  --max-depth
 *   budget N                 --budget, in hundredths of a percent
 *   start TEXT               --start as given (metadata only)
 *   include                  functions outside every I range are excluded
 *   range FLAGS DEV INO VADDR SIZE
 *                            FLAGS: letters E (exclude), T (exclude-tree),
 *                            S (start), I (include); VADDR as in the ELF file
 *   module FLAGS NAME        every function of the loaded module whose file
 *                            name (without directories) is NAME
 *   rule KIND FLAGS MATCHED TEXT
 *                            a rule as given, for the FILTERS section
 * Modules loaded later by dlopen are not matched by name (documented).
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/internal.h"

struct cp_filter cp_filter;

/* A range as read, before it is placed in the process. */
struct raw_range {
	uint64_t dev, ino, vaddr, size;
	uint32_t flags;
};

static void *map_bytes(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint32_t parse_flags(const char *s, const char **end)
{
	uint32_t f = 0;

	for (; *s && *s != ' ' && *s != '\n'; s++) {
		if (*s == 'E')
			f |= CP_FF_EXCLUDE;
		else if (*s == 'T')
			f |= CP_FF_TREE;
		else if (*s == 'S')
			f |= CP_FF_START;
		else if (*s == 'I')
			f |= CP_FF_INCLUDE;
	}
	*end = s;
	return f;
}

static uint64_t parse_num(const char *s, const char **end)
{
	uint64_t v = 0;

	while (*s == ' ')
		s++;
	if (s[0] == '0' && s[1] == 'x') {
		for (s += 2;; s++) {
			int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

			if (d < 0)
				break;
			v = v * 16 + (uint64_t)d;
		}
	} else {
		for (; *s >= '0' && *s <= '9'; s++)
			v = v * 10 + (uint64_t)(*s - '0');
	}
	*end = s;
	return v;
}

/* Place the raw ranges of one loaded module. */
struct place_arg {
	struct raw_range *raw;
	uint64_t nraw;
	const char **mods; /* module rules: "FLAGS NAME" */
	uint64_t nmods;
};

static void add_module_range(uint64_t start, uint64_t end, uint32_t flags)
{
	struct cp_filter_range *r;

	if (cp_filter.nmodule_ranges == CP_MAX_MODULE_RANGES)
		return;
	r = &cp_filter.mr[cp_filter.nmodule_ranges++];
	r->start = start;
	r->end = end;
	r->flags = flags;
}

static void add_range(uint64_t start, uint64_t end, uint32_t flags)
{
	struct cp_filter_range *r;

	if (cp_filter.nranges == cp_filter.cap) {
		uint64_t cap = cp_filter.cap ? cp_filter.cap * 2 : 256;
		struct cp_filter_range *p = map_bytes(cap * sizeof(*p));

		if (!p)
			return;
		if (cp_filter.r) {
			memcpy(p, cp_filter.r, cp_filter.nranges * sizeof(*p));
			munmap(cp_filter.r, cp_filter.cap * sizeof(*p));
		}
		cp_filter.r = p;
		cp_filter.cap = cap;
	}
	r = &cp_filter.r[cp_filter.nranges++];
	r->start = start;
	r->end = end;
	r->flags = flags;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int place(struct dl_phdr_info *info, size_t size, void *data)
{
	struct place_arg *a = data;
	const char *path = info->dlpi_name;
	struct stat st;
	char exe[4096];

	if (!path || !*path) { /* the executable */
		cp_self_exe(exe, sizeof(exe));
		path = exe;
	}
	if (stat(path, &st))
		return 0;
	for (uint64_t i = 0; i < a->nraw; i++)
		if (a->raw[i].dev == (uint64_t)st.st_dev && a->raw[i].ino == (uint64_t)st.st_ino)
			add_range(info->dlpi_addr + a->raw[i].vaddr,
				  info->dlpi_addr + a->raw[i].vaddr + a->raw[i].size, a->raw[i].flags);
	for (uint64_t i = 0; i < a->nmods; i++) {
		const char *end, *name;
		uint32_t flags = parse_flags(a->mods[i], &end);

		name = *end ? end + 1 : end;
		if (strcmp(name, base_name(path)))
			continue;
		/* Every executable segment of the module. */
		for (int p = 0; p < info->dlpi_phnum; p++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[p];

			if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
				add_module_range(info->dlpi_addr + ph->p_vaddr,
					  info->dlpi_addr + ph->p_vaddr + ph->p_memsz, flags);
		}
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct cp_filter_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Read CALLPROF_FILTER (start-up, before any thread records).  A file that
 * cannot be read is reported once and recording goes on unfiltered:
 * `record` checked it, so this means someone else's environment.
 */
void cp_filter__init(void)
{
	const char *path = cp_getenv("CALLPROF_FILTER");
	struct place_arg a = { 0 };
	struct stat st;
	char *text;
	const char *s, *end;
	uint64_t nlines = 0;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0 || st.st_size > (64 << 20)) {
		if (fd >= 0)
			close(fd);
		cp_warn_once("cannot read CALLPROF_FILTER: recording every function");
		return;
	}
	text = map_bytes((size_t)st.st_size + 1);
	if (!text || read(fd, text, (size_t)st.st_size) != st.st_size) {
		close(fd);
		cp_warn_once("cannot read CALLPROF_FILTER: recording every function");
		return;
	}
	close(fd);
	text[st.st_size] = '\0';
	for (s = text; *s; s++)
		nlines += *s == '\n';
	a.raw = map_bytes((nlines + 1) * sizeof(*a.raw));
	a.mods = map_bytes((nlines + 1) * sizeof(*a.mods));
	if (!a.raw || !a.mods)
		return;
	for (s = text; *s; s = *end ? end + 1 : end) {
		end = strchr(s, '\n');
		if (!end)
			end = s + strlen(s);
		if (!strncmp(s, "depth ", 6)) {
			cp_filter.max_depth = (uint32_t)parse_num(s + 6, &s);
		} else if (!strncmp(s, "budget ", 7)) {
			cp_filter.budget = (uint32_t)parse_num(s + 7, &s);
		} else if (!strncmp(s, "start ", 6)) {
			cp_filter.start_text = s + 6;
			cp_filter.start = 1;
		} else if (!strncmp(s, "include", 7)) {
			cp_filter.include = 1;
		} else if (!strncmp(s, "range ", 6)) {
			struct raw_range *r = &a.raw[a.nraw++];

			r->flags = parse_flags(s + 6, &s);
			r->dev = parse_num(s, &s);
			r->ino = parse_num(s, &s);
			r->vaddr = parse_num(s, &s);
			r->size = parse_num(s, &s);
		} else if (!strncmp(s, "module ", 7)) {
			a.mods[a.nmods++] = s + 7;
		} else if (!strncmp(s, "rule ", 5)) {
			if (cp_filter.nrules < CP_MAX_FILTER_RULES)
				cp_filter.rules[cp_filter.nrules++] = s + 5;
		}
	}
	/* Lines end at '\n': make them strings (the texts are kept for the dump). */
	for (char *p = text; p < text + st.st_size; p++)
		if (*p == '\n')
			*p = '\0';
	dl_iterate_phdr(place, &a);
	if (cp_filter.nranges) /* no ranges: r is NULL, which qsort must not get */
		qsort(cp_filter.r, cp_filter.nranges, sizeof(*cp_filter.r), by_start);
	munmap(a.raw, (nlines + 1) * sizeof(*a.raw));
	munmap(a.mods, (nlines + 1) * sizeof(*a.mods));
	cp_filter.active = cp_filter.nranges || cp_filter.nmodule_ranges || cp_filter.include;
	if (cp_filter.budget && cp_hook_mode == CP_MODE_TIMING) {
		/*
		 * Timing a call costs two ordered clock reads: a context whose
		 * calls take less than 100/budget% of that is cheaper to count.
		 */
		uint64_t best = UINT64_MAX;

		for (int round = 0; round < 5; round++) {
			uint64_t t0 = cp_ticks(), t1;

			for (int i = 0; i < 100; i++)
				(void)cp_ticks();
			t1 = cp_ticks();
			if ((t1 - t0) / 101 < best)
				best = (t1 - t0) / 101;
		}
		cp_filter.budget_ticks = 2 * best * 10000 / cp_filter.budget;
		cp_filter.budget_at = CP_BUDGET_CALLS;
	}
}

/* The CP_FF_* flags of function fn (pseudo-functions have none). */
uint32_t cp_filter__classify(uintptr_t fn)
{
	uint64_t lo = 0, hi = cp_filter.nranges;
	uint32_t flags = 0;

	if (fn < CP_FN_PSEUDO_LIMIT)
		return 0;
	for (uint32_t i = 0; i < cp_filter.nmodule_ranges; i++)
		if (fn >= cp_filter.mr[i].start && fn < cp_filter.mr[i].end)
			flags |= cp_filter.mr[i].flags;
	/* The last function range starting at or below fn, and its aliases before it. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (cp_filter.r[mid].start <= fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint64_t i = lo; i-- > 0 && lo - i <= 8;)
		if (fn < cp_filter.r[i].end)
			flags |= cp_filter.r[i].flags;
	if (cp_filter.include && !(flags & (CP_FF_INCLUDE | CP_FF_START)))
		flags |= CP_FF_EXCLUDE;
	return flags;
}
