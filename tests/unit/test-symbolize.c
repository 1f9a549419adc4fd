/*
 * test-symbolize.c - unit tests for symbolize/: the test process describes
 * itself as a profile would (modules from dl_iterate_phdr, build-ids from
 * PT_NOTE) and symbolises its own functions, libc's exported ones, aliases
 * chosen by the naming rules, call sites, and the fallback names for
 * missing, mismatched and garbage modules; then the plain-C ELF facts
 * (elffile.h) and the demangler (demangle.h) on the test's own file, and
 * the unwinder's account of a function with another inlined into it
 * (unwind.h).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asm/perf_regs.h>

#include "format/format.h"
#include "symbolize/demangle.h"
#include "symbolize/elffile.h"
#include "symbolize/symbolize.h"
#include "symbolize/unwind.h"
#include "tests/unit/unittest.h"
#include "util/strbuf.h"
#include "util/util.h"

#define noinline __attribute__((noinline))

/* ---- a profile describing this process ---- */

struct self_pf {
	struct cp_profile_file pf; /* what the symbolizer sees */
	struct strbuf strings;	   /* backs pf.strings */
	size_t mod_alloc, map_alloc;
};

static uint32_t self_pf__str(struct self_pf *s, const char *str)
{
	uint32_t off = s->strings.len;

	strbuf_add(&s->strings, str, strlen(str) + 1);
	return off;
}

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) & ~(a - 1);
}

/* NT_GNU_BUILD_ID from a mapped PT_NOTE segment, as the runtime records it. */
static void read_build_id(const char *p, size_t len, size_t align, struct cp_module *m)
{
	align = align == 8 ? 8 : 4;
	while (len >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *nh = (const void *)p;
		size_t desc = align_up(sizeof(*nh) + nh->n_namesz, align);
		size_t next = align_up(desc + nh->n_descsz, align);

		if (next > len || next == 0)
			return;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(p + sizeof(*nh), "GNU", 4) && nh->n_descsz <= sizeof(m->build_id)) {
			memcpy(m->build_id, p + desc, nh->n_descsz);
			m->build_id_size = nh->n_descsz;
			return;
		}
		p += next;
		len -= next;
	}
}

static int self_pf__add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_pf *s = data;
	const char *path = info->dlpi_name;
	char exe[PATH_MAX];
	struct cp_module *m;

	if (!path || !*path) {
		ssize_t n;

		/* Only the main program has no name; the vdso is not a file. */
		if (s->pf.nmodules)
			return 0;
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	} else if (!strncmp(path, "linux-vdso", 10) || !strncmp(path, "linux-gate", 10)) {
		return 0;
	}

	ALLOC_GROW(s->pf.modules, s->pf.nmodules + 1, s->mod_alloc);
	m = &s->pf.modules[s->pf.nmodules];
	memset(m, 0, sizeof(*m));
	m->path = self_pf__str(s, path);
	m->load_bias = info->dlpi_addr;
	m->first_map = s->pf.nmaps;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_NOTE)
			read_build_id((const char *)start, ph->p_memsz, ph->p_align, m);
		if (ph->p_type != PT_LOAD)
			continue;
		ALLOC_GROW(s->pf.maps, s->pf.nmaps + 1, s->map_alloc);
		s->pf.maps[s->pf.nmaps++] = (struct cp_map){
			.start = start,
			.end = start + ph->p_memsz,
			.offset = ph->p_offset,
			.prot = ph->p_flags,
			.module = s->pf.nmodules,
		};
		m->nmaps++;
	}
	s->pf.nmodules++;
	return 0;
}

static void self_pf__init(struct self_pf *s)
{
	memset(s, 0, sizeof(*s));
	strbuf_init(&s->strings, 0);
	/* Unit tests must not go to the network for libc's debug info. */
	unsetenv("DEBUGINFOD_URLS");
	dl_iterate_phdr(self_pf__add_module, s);
	s->pf.strings = s->strings.buf;
	s->pf.strings_size = s->strings.len;
}

/* Add a module that is not in this process; call before pf is used. */
static void self_pf__add_fake(struct self_pf *s, const char *path, uint64_t bias, uint64_t start,
			      uint64_t end, uint32_t nmaps)
{
	struct cp_module *m;

	ALLOC_GROW(s->pf.modules, s->pf.nmodules + 1, s->mod_alloc);
	m = &s->pf.modules[s->pf.nmodules];
	memset(m, 0, sizeof(*m));
	m->path = self_pf__str(s, path);
	m->load_bias = bias;
	m->first_map = s->pf.nmaps;
	m->nmaps = nmaps;
	if (nmaps) {
		ALLOC_GROW(s->pf.maps, s->pf.nmaps + 1, s->map_alloc);
		s->pf.maps[s->pf.nmaps++] = (struct cp_map){
			.start = start, .end = end, .prot = PF_R | PF_X, .module = s->pf.nmodules
		};
	}
	s->pf.nmodules++;
	s->pf.strings = s->strings.buf;
	s->pf.strings_size = s->strings.len;
}

static void self_pf__release(struct self_pf *s)
{
	free(s->pf.modules);
	free(s->pf.maps);
	strbuf_release(&s->strings);
}

static struct cp_symbolizer *self_symbolizer(struct self_pf *s, int quiet)
{
	struct cp_symbolizer_opts opts = { .quiet = quiet };

	self_pf__init(s);
	return cp_symbolizer__new(&s->pf, &opts);
}

/* Redirect stderr into a temporary file until capture_end(). */
static FILE *capture_begin(int *saved)
{
	FILE *tmp = tmpfile();

	fflush(stderr);
	*saved = dup(2);
	dup2(fileno(tmp), 2);
	return tmp;
}

static char *capture_end(FILE *tmp, int saved)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(tmp);
	return strbuf_detach(&sb, NULL);
}

static int count_substr(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static uint64_t addr_of(void (*volatile fn)(void))
{
	return (uintptr_t)fn;
}

#define ADDR(f) addr_of((void (*)(void))(f))

/*
 * Address of name as defined in an already loaded library.  Not &fopen: a
 * non-PIE test binary would give its own canonical PLT entry, which is
 * (rightly) named "test-symbolize+0x...".
 */
static uint64_t lib_sym(const char *lib, const char *name)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	void *p = h ? dlsym(h, name) : NULL;

	if (h)
		dlclose(h);
	return (uintptr_t)p;
}

/* ---- functions to find ---- */

unsigned cp_test_symbolize_global(unsigned n);
unsigned cp_test_symbolize_global(unsigned n)
{
	unsigned h = 2166136261u;

	for (unsigned i = 0; i < n; i++) {
		h ^= i;
		h *= 16777619u;
		__asm__ volatile("" : "+r"(h));
	}
	return h;
}

static noinline unsigned static_target(unsigned n)
{
	unsigned h = 5381;

	for (unsigned i = 0; i < n; i++) {
		h = h * 33 + i;
		__asm__ volatile("" : "+r"(h));
	}
	return h;
}

/*
 * Aliases: five names on one address.  The globals beat the shorter weak
 * and local ones; of the globals the shortest wins, ties alphabetically.
 */
void cp_test_alias_target(void);
void cp_test_alias_target(void)
{
	__asm__ volatile("");
}
void cp_tb(void) __attribute__((alias("cp_test_alias_target")));
void cp_ta(void) __attribute__((alias("cp_test_alias_target")));
void w(void) __attribute__((weak, alias("cp_test_alias_target")));
static void l(void) __attribute__((alias("cp_test_alias_target"), used));

/* Weak beats local even when longer. */
static void local_target(void)
{
	__asm__ volatile("");
}
void cp_test_weak_alias_name(void) __attribute__((weak, alias("local_target")));

/* Symbol names set through asm labels, to test demangling from C. */
void cp_mangled(int x) __asm__("_Z10cp_mangledi");
void cp_mangled(int x)
{
	__asm__ volatile("" : : "r"(x));
}
void cp_mangled_clone(int x) __asm__("_Z10cp_mangledi.constprop.0");
void cp_mangled_clone(int x)
{
	__asm__ volatile("" : : "r"(x));
}
/* A C function whose name is also a mangled type ("float") stays as is. */
void cp_named_f(void) __asm__("f");
void cp_named_f(void)
{
	__asm__ volatile("");
}
void cp_gcc_clone(void) __asm__("cp_fib.constprop.0");
void cp_gcc_clone(void)
{
	__asm__ volatile("");
}

static noinline uint64_t return_address(void)
{
	uint64_t ra = (uintptr_t)__builtin_return_address(0);

	__asm__ volatile("" : : : "memory");
	return ra;
}

/* ---- tests ---- */

TEST(global_function)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);

	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_test_symbolize_global)),
		  "cp_test_symbolize_global");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(static_function)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);

	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(static_target)), "static_target");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(return_address)), "return_address");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(middle_of_function)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);

	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(static_target) + 8), "static_target");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_test_symbolize_global) + 8),
		  "cp_test_symbolize_global");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(alias_preference)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);

	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_test_alias_target)), "cp_ta");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(l)), "cp_ta");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(local_target)), "cp_test_weak_alias_name");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(demangle)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);

	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_mangled)), "cp_mangled(int)");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_mangled_clone)),
		  "cp_mangled(int) [clone .constprop.0]");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_named_f)), "f");
	CHECK_STR(cp_symbolizer__fn_name(sym, ADDR(cp_gcc_clone)), "cp_fib.constprop.0");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

/*
 * libc's exported names: from .dynsym when libc is stripped, from its debug
 * file's .symtab (with "@@GLIBC_2.2.5" suffixes) when libc6-dbg is
 * installed; the answer must be the same either way.
 */
TEST(libc_exports)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);
	uint64_t fopen_a = lib_sym("libc.so.6", "fopen"), malloc_a = lib_sym("libc.so.6", "malloc");
	uint64_t qsort_a = lib_sym("libc.so.6", "qsort"), free_a = lib_sym("libc.so.6", "free");
	const char *path;

	CHECK(fopen_a && malloc_a && qsort_a && free_a);
	path = cp_symbolizer__module(sym, fopen_a, NULL);
	CHECK(path && strstr(path, "libc.so"));
	/* Not IFUNCs; _IO_fopen and __libc_malloc are longer global aliases. */
	CHECK_STR(cp_symbolizer__fn_name(sym, fopen_a), "fopen");
	CHECK_STR(cp_symbolizer__fn_name(sym, malloc_a), "malloc");
	CHECK_STR(cp_symbolizer__fn_name(sym, malloc_a + 4), "malloc");
	CHECK_STR(cp_symbolizer__fn_name(sym, qsort_a), "qsort");
	/* cfree (an old version) and __libc_free share free's address. */
	CHECK_STR(cp_symbolizer__fn_name(sym, free_a), "free");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

/*
 * libstdc++ ships stripped and without a debug package installed here, so
 * its names come from .dynsym: C1/C2 constructor aliases share an address
 * and demangle alike; version suffixes are dropped.
 */
TEST(stripped_library_dynsym)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);
	uint64_t dm = lib_sym("libstdc++.so.6", "__cxa_demangle");
	uint64_t ctor = lib_sym("libstdc++.so.6", "_ZNSt13runtime_errorC1EPKc");
	const char *path;

	CHECK(dm && ctor);
	path = cp_symbolizer__module(sym, dm, NULL);
	CHECK(path && strstr(path, "libstdc++.so"));
	CHECK_STR(cp_symbolizer__fn_name(sym, dm), "__cxa_demangle");
	CHECK_STR(cp_symbolizer__fn_name(sym, dm + 16), "__cxa_demangle");
	CHECK_STR(cp_symbolizer__fn_name(sym, ctor),
		  "std::runtime_error::runtime_error(char const*)");
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(unknown_address)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);
	uint64_t off = 42;

	CHECK_STR(cp_symbolizer__fn_name(sym, 0), "[unknown]+0x0");
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x10), "[unknown]+0x10");
	CHECK_STR(cp_symbolizer__fn_name(sym, UINT64_MAX), "[unknown]+0xffffffffffffffff");
	CHECK(!cp_symbolizer__module(sym, 0x10, &off));
	CHECK_EQ(off, 42);
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(missing_module)
{
	const uint64_t bias = 0x7e0000000000ULL;
	struct cp_symbolizer_opts opts = { 0 };
	struct cp_symbolizer *sym;
	struct self_pf s;
	const char *file = NULL;
	int line = 0, saved;
	uint64_t off = 0;
	FILE *tmp;
	char *err;

	self_pf__init(&s);
	self_pf__add_fake(&s, "/nonexistent/dir/libfake.so.1", bias, bias + 0x1000, bias + 0x9000,
			  1);
	sym = cp_symbolizer__new(&s.pf, &opts);

	tmp = capture_begin(&saved);
	CHECK_STR(cp_symbolizer__fn_name(sym, bias + 0x1234), "libfake.so.1+0x1234");
	CHECK_STR(cp_symbolizer__fn_name(sym, bias + 0x8fff), "libfake.so.1+0x8fff");
	CHECK_EQ(cp_symbolizer__site(sym, bias + 0x1235, &file, &line), -ENOENT);
	err = capture_end(tmp, saved);

	CHECK_EQ(count_substr(err, "callprof: warning: cannot open "
				   "'/nonexistent/dir/libfake.so.1': No such file or directory; "
				   "its functions are shown as libfake.so.1+0xOFFSET\n"),
		 1);
	CHECK_EQ(count_substr(err, "warning"), 1);
	CHECK_STR(cp_symbolizer__fn_name(sym, bias + 0x9000), "[unknown]+0x7e0000009000");
	CHECK_STR(cp_symbolizer__module(sym, bias + 0x1234, &off), "/nonexistent/dir/libfake.so.1");
	CHECK_EQ(off, 0x1234);
	free(err);
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(quiet_suppresses_warnings)
{
	const uint64_t bias = 0x7e0000000000ULL;
	struct cp_symbolizer_opts opts = { .quiet = 1 };
	struct cp_symbolizer *sym;
	struct self_pf s;
	int saved;
	FILE *tmp;
	char *err;

	self_pf__init(&s);
	self_pf__add_fake(&s, "/nonexistent/libq.so", bias, bias, bias + 0x1000, 1);
	s.pf.modules[0].build_id[0] ^= 0xff;
	sym = cp_symbolizer__new(&s.pf, &opts);
	tmp = capture_begin(&saved);
	CHECK_STR(cp_symbolizer__fn_name(sym, bias + 0x10), "libq.so+0x10");
	cp_symbolizer__fn_name(sym, ADDR(static_target));
	err = capture_end(tmp, saved);
	CHECK_STR(err, "");
	free(err);
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(build_id_mismatch)
{
	struct cp_symbolizer_opts opts = { 0 };
	struct cp_symbolizer *sym;
	struct self_pf s;
	const char *exe, *base;
	char *want, *err;
	uint64_t addr = ADDR(static_target);
	int saved;
	FILE *tmp;

	self_pf__init(&s);
	CHECK(s.pf.nmodules > 0 && s.pf.modules[0].build_id_size > 0);
	s.pf.modules[0].build_id[0] ^= 0xff;
	sym = cp_symbolizer__new(&s.pf, &opts);
	exe = cp_profile_file__str(&s.pf, s.pf.modules[0].path);
	base = strrchr(exe, '/') + 1;
	want = xstrfmt("%s+0x%" PRIx64, base, addr - s.pf.modules[0].load_bias);

	tmp = capture_begin(&saved);
	CHECK_STR(cp_symbolizer__fn_name(sym, addr), want);
	cp_symbolizer__fn_name(sym, ADDR(cp_test_symbolize_global));
	err = capture_end(tmp, saved);
	CHECK_EQ(count_substr(err, "changed since recording (build-id "), 1);
	/* Other modules are unaffected. */
	CHECK_STR(cp_symbolizer__fn_name(sym, lib_sym("libc.so.6", "qsort")), "qsort");
	free(want);
	free(err);
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(call_site)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);
	const char *file = NULL, *file2 = NULL;
	int line = 0, line2 = 0;
	const int want = __LINE__ + 1;
	uint64_t ra = return_address();
	size_t len;

	CHECK_EQ(cp_symbolizer__site(sym, ra, &file, &line), 0);
	CHECK_EQ(line, want);
	len = strlen(file);
	CHECK(len >= strlen("test-symbolize.c"));
	CHECK_STR(file + len - strlen("test-symbolize.c"), "test-symbolize.c");
	/* Cached: the same answer and the same string. */
	CHECK_EQ(cp_symbolizer__site(sym, ra, &file2, &line2), 0);
	CHECK(file2 == file);
	CHECK_EQ(line2, want);
	/* No module, or no line info: -ENOENT, nothing else. */
	CHECK_EQ(cp_symbolizer__site(sym, 0, &file, &line), -ENOENT);
	CHECK_EQ(cp_symbolizer__site(sym, 1, &file, &line), -ENOENT);
	CHECK_EQ(cp_symbolizer__site(sym, UINT64_MAX, &file, &line), -ENOENT);
	cp_symbolizer__free(sym);
	self_pf__release(&s);
}

TEST(cached_lookups)
{
	struct self_pf s;
	struct cp_symbolizer *sym = self_symbolizer(&s, 0);
	const char *a = cp_symbolizer__fn_name(sym, ADDR(static_target));
	const char *u = cp_symbolizer__fn_name(sym, 0x20);

	/* Enough distinct addresses to make the cache grow a few times. */
	for (uint64_t i = 0; i < 2000; i++)
		CHECK(cp_symbolizer__fn_name(sym, 0x1000 + i));
	CHECK(cp_symbolizer__fn_name(sym, ADDR(static_target)) == a);
	CHECK(cp_symbolizer__fn_name(sym, 0x20) == u);
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x1000 + 1999), "[unknown]+0x17cf");
	cp_symbolizer__free(sym);
	cp_symbolizer__free(NULL);
	self_pf__release(&s);
}

TEST(garbage_modules)
{
	struct cp_symbolizer_opts opts = { .quiet = 1 };
	const char *dirs[] = { "relative/debug", "/nonexistent", "", "with:colon", NULL };
	struct cp_symbolizer *sym;
	struct self_pf s;
	const char *file;
	int line, saved;
	FILE *tmp;
	char *err;

	memset(&s, 0, sizeof(s));
	strbuf_init(&s.strings, 0);
	self_pf__add_fake(&s, "", 0x1000, 0x1000, 0x2000, 1);	       /* empty path */
	self_pf__add_fake(&s, "/bin/sh", 0, 0, 0, 0);		       /* no maps */
	self_pf__add_fake(&s, "/proc", 0x5000, 0x5000, 0x6000, 1);     /* not a file */
	self_pf__add_fake(&s, "/dev/null", 0x7000, 0x7000, 0x8000, 1); /* not an ELF */
	self_pf__add_fake(&s, "/etc/", 0x9000, 0x9000, 0xa000, 1);     /* no basename */
	self_pf__add_fake(&s, "/x/y", 0, 0xc000, 0xb000, 1);	       /* reversed map */
	s.pf.modules[1].first_map = 1000;			       /* out of range */
	s.pf.modules[1].nmaps = UINT32_MAX;

	opts.debug_dirs = dirs;
	tmp = capture_begin(&saved);
	sym = cp_symbolizer__new(&s.pf, &opts);
	err = capture_end(tmp, saved);
	/* Not a missing module: quiet does not hide it. */
	CHECK_STR(err, "callprof: warning: debug directory 'with:colon' contains ':' and is "
		       "ignored\n");
	free(err);
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x1010), "[anon]+0x10");
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x5010), "proc+0x10");
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x7010), "null+0x10");
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x9010), "[anon]+0x10");
	CHECK_STR(cp_symbolizer__fn_name(sym, 0xb800), "[unknown]+0xb800");
	CHECK_STR(cp_symbolizer__fn_name(sym, 0), "[unknown]+0x0");
	CHECK_EQ(cp_symbolizer__site(sym, 0x1010, &file, &line), -ENOENT);
	CHECK_EQ(cp_symbolizer__site(sym, 0x7010, &file, &line), -ENOENT);
	CHECK_STR(cp_symbolizer__module(sym, 0x1010, NULL), "");
	cp_symbolizer__free(sym);

	/* No modules at all. */
	self_pf__release(&s);
	memset(&s, 0, sizeof(s));
	sym = cp_symbolizer__new(&s.pf, NULL);
	CHECK_STR(cp_symbolizer__fn_name(sym, 0x1234), "[unknown]+0x1234");
	CHECK_EQ(cp_symbolizer__site(sym, 0x1234, &file, &line), -ENOENT);
	cp_symbolizer__free(sym);
}

/* ---- elffile.h and demangle.h: the plain-C doors for cli/ and sample/ ---- */

int main(int argc, char **argv); /* unittest.c's */

static int first_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uint64_t *)arg = info->dlpi_addr;
	return 1; /* the program itself comes first */
}

struct fn_seen {
	uint64_t main_value;	/* st_value of "main" */
	int mangled;		/* "_Z10cp_mangledi" was listed */
	uint64_t target;	/* ELF address of static_target */
	int target_in_file;	/* a subprogram of this file covers target */
	int subprograms;
};

static void fn_seen__function(const char *name, uint64_t value, uint64_t size, void *arg)
{
	struct fn_seen *s = arg;

	if (!strcmp(name, "main"))
		s->main_value = value;
	s->mangled |= !strcmp(name, "_Z10cp_mangledi");
}

static void fn_seen__subprogram(const char *file, const struct cp_elf_range *r, size_t n,
				void *arg)
{
	struct fn_seen *s = arg;
	size_t len = strlen(file), want = strlen("tests/unit/test-symbolize.c");

	s->subprograms++;
	for (size_t i = 0; i < n; i++)
		if (len >= want && !strcmp(file + len - want, "tests/unit/test-symbolize.c") &&
		    r[i].lo <= s->target && s->target < r[i].hi)
			s->target_in_file = 1;
}

TEST(elffile_of_the_test_itself)
{
	struct stat st;
	struct cp_elf *e = cp_elf__open("/proc/self/exe", &st);
	struct fn_seen seen = { 0 };
	struct cp_elf_info info;
	uint64_t bias = 0;
	char interp[256];
	int exec_seg = 0;

	CHECK(e != NULL);
	CHECK(st.st_ino != 0);
	CHECK_EQ(cp_elf__has_symbol(e, "main"), 1);
	CHECK_EQ(cp_elf__has_symbol(e, "cp_no_such_symbol_anywhere"), 0);
	CHECK_EQ(cp_elf_is_instrumented("/proc/self/exe"), 0);

	CHECK_EQ(cp_elf__interp(e, interp, sizeof(interp)), 0);
	CHECK(interp[0] == '/' && strstr(interp, "ld-linux"));
	CHECK_EQ(cp_elf__interp(e, interp, 4), -1); /* does not fit */
	{
		uint64_t a = 0, sz = 0;

		/* allocated: .text, with its address and size; not allocated: .symtab */
		CHECK_EQ(cp_elf__section(e, ".text", &a, &sz), 0);
		CHECK(a != 0 && sz != 0);
		CHECK_EQ(cp_elf__section(e, ".symtab", NULL, NULL), -1);
		CHECK_EQ(cp_elf__section(e, "__patchable_function_entries", &a, &sz), -1);
	}

	dl_iterate_phdr(first_bias, &bias);
	seen.target = ADDR(static_target) - bias;
	cp_elf__for_each_function(e, fn_seen__function, &seen);
	CHECK(seen.main_value != 0);
	CHECK_EQ(seen.main_value, ADDR(main) - bias);
	CHECK(seen.mangled); /* as in the file, not demangled */
	CHECK_EQ(cp_elf__for_each_subprogram(e, fn_seen__subprogram, &seen), 0);
	CHECK(seen.subprograms > 0);
	CHECK(seen.target_in_file);
	cp_elf__close(e);
	cp_elf__close(NULL);

	CHECK_EQ(cp_elf_info__read("/proc/self/exe", &info), 0);
	for (size_t i = 0; i < info.nsegs; i++)
		exec_seg |= (info.segs[i].flags & PF_X) && info.segs[i].vaddr <= seen.target &&
			    seen.target < info.segs[i].vaddr + info.segs[i].memsz;
	CHECK(exec_seg);
	CHECK_EQ(info.build_id_size, 20); /* Debian's gcc and clang link --build-id (SHA-1) */
	cp_elf_info__release(&info);
	CHECK_EQ(info.nsegs, 0);
}

TEST(elffile_refuses_non_elf_and_fifos)
{
	char dir[] = "/tmp/cp-test-elffile.XXXXXX", path[64];
	struct cp_elf_info info;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/text", dir);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs("#!/bin/sh\necho not ELF\n", f);
	fclose(f);
	errno = 0;
	CHECK(cp_elf__open(path, NULL) == NULL);
	CHECK_EQ(errno, ENOEXEC);
	CHECK_EQ(cp_elf_is_instrumented(path), -ENOEXEC);
	CHECK_EQ(cp_elf_info__read(path, &info), -1);
	cp_elf_info__release(&info);
	unlink(path);

	/* A FIFO without writer: refused at once, not waited on. */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	CHECK(cp_elf__open(path, NULL) == NULL);
	CHECK(cp_elf_is_instrumented(path) < 0);
	unlink(path);
	CHECK(cp_elf__open(path, NULL) == NULL);
	CHECK_EQ(errno, ENOENT);
	rmdir(dir);
}

TEST(demangle_wrapper)
{
	char *dm = cp_demangle("_ZN6shapes6Circle4growEi");

	CHECK_STR(dm, "shapes::Circle::grow(int)");
	free(dm);
	dm = cp_demangle("_Z10cp_mangledi.constprop.0");
	CHECK_STR(dm, "cp_mangled(int) [clone .constprop.0]");
	free(dm);
	/* Bare type codes are C names, not types. */
	CHECK(cp_demangle("f") == NULL);
	CHECK(cp_demangle("i") == NULL);
	CHECK(cp_demangle("main") == NULL);
	CHECK(cp_demangle("_Z") == NULL);
	CHECK(cp_demangle("_Zgarbage!") == NULL);
	CHECK(cp_demangle(NULL) == NULL);
}

/* ---- a function inlined into another (cp_unwinder__fn_dwarf) ---- */

volatile int cp_inl_sink;

static inline __attribute__((always_inline)) void cp_inl_inner(int x)
{
	cp_inl_sink += x;
	cp_inl_sink *= x;
}

static noinline void cp_inl_outer(int x)
{
	cp_inl_sink = x;
	cp_inl_inner(x + 1);
	cp_inl_sink -= 3;
}

/* The address taken: an out-of-line copy exists, as the hooks' &fn makes one. */
void (*volatile cp_inl_copy)(int) = cp_inl_inner;

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr;
	return 1; /* the first: the program */
}

TEST(unwinder_fn_dwarf_inlined_instance_and_its_own_copy)
{
	struct cp_unwinder *u = cp_unwinder__new();
	uint64_t bias = 0, outer = (uintptr_t)cp_inl_outer, copy = (uintptr_t)cp_inl_copy;
	const struct cp_unwind_fn *f, *again;
	int found = 0;

	dl_iterate_phdr(main_bias, &bias);
	CHECK_EQ(cp_unwinder__add_module(u, "/proc/self/exe", bias), 0);
	f = cp_unwinder__fn_dwarf(u, outer + 1);
	CHECK(f != NULL);
	CHECK_EQ(f->inst[0].entry, outer);
	CHECK_EQ(f->inst[0].parent, -1);
	CHECK(f->inst[0].nranges >= 1);
	for (uint32_t i = 1; i < f->n; i++) {
		const struct cp_unwind_inst *in = &f->inst[i];

		if (in->entry != copy)
			continue;
		found++;
		CHECK_EQ(in->parent, 0);
		CHECK(in->nranges >= 1);
		/* its code is part of the function's */
		for (uint32_t r = 0; r < in->nranges; r++)
			CHECK(in->ranges[r].lo >= outer && in->ranges[r].hi <= f->inst[0].ranges[0].hi);
	}
	CHECK_EQ(found, 1);
	/* Cached: any address of the function gives the same account. */
	again = cp_unwinder__fn_dwarf(u, f->inst[0].ranges[0].hi - 1);
	CHECK(again == f);
	/* The copy is a function of its own, with no instance inlined into it. */
	f = cp_unwinder__fn_dwarf(u, copy);
	CHECK(f != NULL);
	CHECK_EQ(f->inst[0].entry, copy);
	CHECK_EQ(f->n, 1);
	cp_unwinder__free(u);
}

/* ---- the red zone: gcc's stale CFI after an epilogue's leave ---- */

/*
 * cp_rz_callee ends as gcc -O2 -fno-omit-frame-pointer ends a function
 * whose exit hook it calls last: leave, then a tail jump, with no CFI
 * restore of rbp after the leave.  Stopped at cp_rz_after_leave, the CFI
 * says rbp was saved at CFA - 16 = sp - 8: below sp, where the popped
 * value still lies.  cp_rz_caller keeps its frame in rbp.
 */
__asm__(".text\n"
	".type cp_rz_callee, @function\n"
	"cp_rz_callee:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset 6, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register 6\n"
	"nop\n"
	"leave\n"
	".cfi_def_cfa 7, 8\n"
	"cp_rz_after_leave:\n"
	"ret\n"
	".cfi_endproc\n"
	".size cp_rz_callee, .-cp_rz_callee\n"
	".type cp_rz_caller, @function\n"
	"cp_rz_caller:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset 6, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register 6\n"
	"call cp_rz_callee\n"
	"cp_rz_caller_ret:\n"
	"leave\n"
	".cfi_def_cfa 7, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size cp_rz_caller, .-cp_rz_caller\n");
extern const char cp_rz_after_leave[], cp_rz_caller_ret[];

TEST(unwinder_reads_the_red_zone_for_a_register_popped_by_leave)
{
	struct cp_unwinder *u = cp_unwinder__new();
	uint64_t bias = 0, stack[64] = { 0 }, pcs[8];
	/* The copy: 16 words of red zone, then sp. */
	const uint64_t base = 0x7ffd00001000ull, sp = base + 16 * 8, frame = sp + 8 * 8;
	struct cp_unwind_regs r;
	int n, complete;

	dl_iterate_phdr(main_bias, &bias);
	CHECK_EQ(cp_unwinder__add_module(u, "/proc/self/exe", bias), 0);
	memset(&r, 0, sizeof(r));
	r.mask = (1ull << PERF_REG_X86_64_MAX) - 1;
	r.regs[PERF_REG_X86_IP] = (uintptr_t)cp_rz_after_leave;
	r.regs[PERF_REG_X86_SP] = sp;
	r.regs[PERF_REG_X86_BP] = frame; /* the caller's, as leave left it */
	stack[16] = (uintptr_t)cp_rz_caller_ret; /* [sp]: the callee's return address */
	stack[15] = frame;			 /* [sp - 8]: the rbp it pushed and popped */
	stack[(frame - base) / 8] = 0;		 /* the caller's saved rbp */
	stack[(frame - base) / 8 + 1] = (uintptr_t)cp_rz_caller_ret; /* and its return address */
	r.stack = (const unsigned char *)stack;
	r.below = 16 * 8;
	r.stack_size = sizeof(stack) - r.below;
	n = cp_unwinder__unwind(u, 1, &r, pcs, 8, &complete);
	/* callee, caller, and the caller's caller (found through the caller's rbp) */
	CHECK(n >= 3);
	CHECK_EQ(pcs[0], (uintptr_t)cp_rz_after_leave);
	CHECK_EQ(pcs[1], (uintptr_t)cp_rz_caller_ret);
	CHECK_EQ(pcs[2], (uintptr_t)cp_rz_caller_ret);
	/* Without the red zone the caller's rbp is unknown: the walk ends at the caller. */
	r.stack = (const unsigned char *)&stack[16];
	r.below = 0;
	n = cp_unwinder__unwind(u, 1, &r, pcs, 8, &complete);
	CHECK_EQ(n, 2);
	cp_unwinder__free(u);
}
