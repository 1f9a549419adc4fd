/*
 * select.c - record-time selection: turn --include/--exclude/--start and
 * friends into the address ranges the runtime checks (runtime/filter.c).
 *
 * Names are matched here, not in the profiled process, because matching
 * wants demangled C++ names and debug data, which the runtime (libc only)
 * does not have.  The modules searched are the program and the
 * instrumented libraries it links (as the dynamic loader lists them); a
 * range is named by its file's device and inode, so the runtime can place
 * it whatever address the module is loaded at.  Libraries opened later
 * with dlopen are not searched by name (--exclude-module still applies).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "cli/select.h"
#include "format/format.h"
#include "util/strbuf.h"
#include "util/util.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* One pattern of one kind, compiled. */
struct rule {
	uint32_t kind;	 /* enum cp_filter_kind */
	const char *text;
	regex_t re;
	int is_regex;
	uint32_t matched;
};

struct rules {
	struct rule *r;
	size_t n;
};

static void add_rules(struct rules *rs, const char **pats, uint32_t kind, int regex)
{
	for (; pats && *pats; pats++) {
		struct rule *r;

		rs->r = xrealloc(rs->r, (rs->n + 1) * sizeof(*rs->r));
		r = &rs->r[rs->n++];
		memset(r, 0, sizeof(*r));
		r->kind = kind;
		r->text = *pats;
		/* Modules and files are always globs: they are paths. */
		r->is_regex = regex && kind != CP_FILTER_EXCLUDE_MODULE && kind != CP_FILTER_EXCLUDE_FILE;
		/* cp_select__check compiled it already: a failure here is out of memory. */
		if (r->is_regex && regcomp(&r->re, *pats, REG_EXTENDED | REG_NOSUB))
			cp_die("cannot compile the regular expression '%s'", *pats);
	}
}

static void check_patterns(const char **pats, const char *const *usage)
{
	for (; pats && *pats; pats++) {
		regex_t re;
		int err = regcomp(&re, *pats, REG_EXTENDED | REG_NOSUB);

		if (err) {
			char msg[256];

			regerror(err, &re, msg, sizeof(msg));
			cp_usage_error(usage, "bad regular expression '%s': %s", *pats, msg);
		}
		regfree(&re);
	}
}

void cp_select__check(const struct cp_select *sel, const char *const *usage)
{
	if (!sel->regex)
		return;
	check_patterns(sel->include, usage);
	check_patterns(sel->exclude, usage);
	check_patterns(sel->exclude_tree, usage);
	check_patterns(sel->start, usage);
}

/*
 * The name without its parameter list: "ns::f(int) const" -> "ns::f".
 * The parameter list is the last top-level "(...)" group; a name without
 * one (or too long for out) is copied as it is, cut to fit.
 */
static void strip_params(const char *name, char *out, size_t cap)
{
	size_t len = strlen(name), depth = 0, i;

	for (i = len; i > 0; i--) {
		char c = name[i - 1];

		if (c == ')')
			depth++;
		else if (c == '(' && depth && !--depth)
			break;
	}
	if (i > 0 && i - 1 < cap)
		len = i - 1;
	else if (len >= cap)
		len = cap - 1;
	memcpy(out, name, len);
	out[len] = '\0';
}

static int name_matches(struct rule *r, const char *name)
{
	char bare[1024];

	strip_params(name, bare, sizeof(bare));
	if (r->is_regex)
		return !regexec(&r->re, name, 0, NULL, 0) || !regexec(&r->re, bare, 0, NULL, 0);
	return !fnmatch(r->text, name, 0) || !fnmatch(r->text, bare, 0);
}

/* A path pattern with no '/' is matched against the file name alone. */
static int path_matches(const char *pat, const char *path)
{
	const char *base = strrchr(path, '/');

	if (!fnmatch(pat, path, 0))
		return 1;
	return !strchr(pat, '/') && !fnmatch(pat, base ? base + 1 : path, 0);
}

static const char *letters(uint32_t kind)
{
	switch (kind) {
	case CP_FILTER_INCLUDE:
		return "I";
	case CP_FILTER_EXCLUDE_TREE:
		return "T";
	case CP_FILTER_START:
		return "S";
	default:
		return "E";
	}
}

/* Whether elf imports the entry hook: it was compiled with -finstrument-functions. */
static int instrumented(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "__cyg_profile_func_enter"))
				return 1;
		}
	}
	return 0;
}

/* Function symbols of one module against the name rules. */
static void match_symbols(struct rules *rs, Elf *elf, struct stat *st, struct strbuf *out)
{
	Elf_Scn *scn = NULL;
	int want = SHT_SYMTAB;

again:
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned)want)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
			GElf_Sym sym;
			const char *name;
			char *dm = NULL;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (name[0] == '_' && name[1] == 'Z') {
				int status;

				dm = __cxa_demangle(name, NULL, NULL, &status);
			}
			for (size_t k = 0; k < rs->n; k++) {
				struct rule *r = &rs->r[k];

				if (r->kind == CP_FILTER_EXCLUDE_FILE || r->kind == CP_FILTER_EXCLUDE_MODULE)
					continue;
				if (name_matches(r, dm ? dm : name) || (dm && name_matches(r, name))) {
					r->matched++;
					strbuf_addf(out, "range %s %llu %llu 0x%llx %llu\n", letters(r->kind),
						  (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
						  (unsigned long long)sym.st_value,
						  (unsigned long long)(sym.st_size ? sym.st_size : 1));
				}
			}
			free(dm);
		}
		return;
	}
	if (want == SHT_SYMTAB) { /* stripped: the dynamic symbols are what is left */
		want = SHT_DYNSYM;
		scn = NULL;
		goto again;
	}
}

/* Functions whose declaration lies in a matching source file (DWARF). */
static void match_files(struct rules *rs, Elf *elf, struct stat *st, struct strbuf *out)
{
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, die;
	int any = 0;

	for (size_t k = 0; k < rs->n; k++)
		any |= rs->r[k].kind == CP_FILTER_EXCLUDE_FILE;
	if (!any || !(dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)))
		return;
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0) {
		if (dwarf_child(&cudie, &die))
			continue;
		do {
			const char *file;

			if (dwarf_tag(&die) != DW_TAG_subprogram || !(file = dwarf_decl_file(&die)))
				continue;
			for (size_t k = 0; k < rs->n; k++) {
				struct rule *r = &rs->r[k];
				Dwarf_Addr base, lo, hi;
				ptrdiff_t off = 0;
				int found = 0;

				if (r->kind != CP_FILTER_EXCLUDE_FILE || !path_matches(r->text, file))
					continue;
				/*
				 * low_pc..high_pc, or DW_AT_ranges for a function split
				 * into hot and cold parts (gcc -O2, -fsanitize=address).
				 */
				while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
					if (hi <= lo)
						continue;
					found = 1;
					strbuf_addf(out, "range E %llu %llu 0x%llx %llu\n",
						  (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
						  (unsigned long long)lo, (unsigned long long)(hi - lo));
				}
				r->matched += found;
			}
		} while (dwarf_siblingof(&die, &die) == 0);
	}
	dwarf_end(dw);
}

static void search_module(struct rules *rs, const char *path, int is_exe, struct strbuf *out)
{
	struct stat st;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && (is_exe || instrumented(elf))) {
		match_symbols(rs, elf, &st, out);
		match_files(rs, elf, &st, out);
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* The libraries prog links, as its dynamic loader lists them ("ld.so --list"). */
static void search_libraries(struct rules *rs, const char *prog, struct strbuf *out)
{
	char interp[4096] = "", line[8192];
	struct strbuf cmd = STRBUF_INIT;
	FILE *p;
	int fd = open(prog, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (size_t i = 0, n = 0; elf && !elf_getphdrnum(elf, &n) && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP) {
			size_t len;
			const char *img = elf_rawfile(elf, &len);

			if (img && ph.p_offset + ph.p_filesz <= len && ph.p_filesz < sizeof(interp)) {
				memcpy(interp, img + ph.p_offset, ph.p_filesz);
				interp[ph.p_filesz] = '\0';
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!*interp || strchr(prog, '\'') || strchr(interp, '\''))
		return;
	strbuf_addf(&cmd, "'%s' --list '%s' 2>/dev/null", interp, prog);
	p = popen(cmd.buf, "r");
	strbuf_release(&cmd);
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		char *arrow = strstr(line, "=> "), *end;

		if (!arrow || arrow[3] != '/')
			continue;
		end = strstr(arrow + 3, " (");
		if (end)
			*end = '\0';
		search_module(rs, arrow + 3, 0, out);
	}
	pclose(p);
}

int cp_select__write(const struct cp_select *sel, const char *prog, char **path)
{
	struct rules rs = { 0 };
	struct strbuf out = STRBUF_INIT, start = STRBUF_INIT;
	char *exe, *tmp;
	const char *dir = getenv("TMPDIR");
	int fd, failed = 0;

	add_rules(&rs, sel->include, CP_FILTER_INCLUDE, sel->regex);
	add_rules(&rs, sel->exclude, CP_FILTER_EXCLUDE, sel->regex);
	add_rules(&rs, sel->exclude_tree, CP_FILTER_EXCLUDE_TREE, sel->regex);
	add_rules(&rs, sel->exclude_file, CP_FILTER_EXCLUDE_FILE, 0);
	add_rules(&rs, sel->exclude_module, CP_FILTER_EXCLUDE_MODULE, 0);
	add_rules(&rs, sel->start, CP_FILTER_START, sel->regex);
	*path = NULL;
	if (!rs.n && !sel->max_depth && !sel->budget)
		return 0;

	strbuf_addstr(&out, "callprof-filter 1\n");
	if (sel->max_depth)
		strbuf_addf(&out, "depth %u\n", sel->max_depth);
	if (sel->budget)
		strbuf_addf(&out, "budget %u\n", sel->budget);
	if (sel->include && *sel->include)
		strbuf_addstr(&out, "include\n");
	for (size_t k = 0; k < rs.n; k++)
		if (rs.r[k].kind == CP_FILTER_EXCLUDE_MODULE)
			strbuf_addf(&out, "module E %s\n", rs.r[k].text);

	exe = cp_find_program(prog);
	elf_version(EV_CURRENT);
	if (exe && rs.n) {
		search_module(&rs, exe, 1, &out);
		search_libraries(&rs, exe, &out);
	}
	for (size_t k = 0; k < rs.n; k++) {
		struct rule *r = &rs.r[k];

		if (r->kind == CP_FILTER_START)
			strbuf_addf(&start, "%s%s", start.len ? ", " : "", r->text);
		if (r->kind == CP_FILTER_EXCLUDE_MODULE)
			r->matched = 1; /* decided in the process, when it is loaded */
		else if (!r->matched && r->kind == CP_FILTER_START && !failed)
			failed = cp_error("--start '%s' matches no function of %s or the instrumented "
					  "libraries it links", r->text, prog);
		else if (!r->matched)
			cp_warning("%s '%s' matches no function of %s or the instrumented libraries it links",
				cp_filter_option(r->kind), r->text, prog);
		strbuf_addf(&out, "rule %u %u %u %s\n", r->kind, r->is_regex ? CP_FILTER_REGEX : 0,
			  r->matched, r->text);
		if (r->is_regex)
			regfree(&r->re);
	}
	if (start.len)
		strbuf_addf(&out, "start %s\n", start.buf);
	if (failed) {
		strbuf_release(&out);
		strbuf_release(&start);
		free(rs.r);
		free(exe);
		return -1;
	}

	tmp = xstrfmt("%s/callprof-filter.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(tmp);
	if (fd < 0)
		cp_die("cannot create a file in %s for the filters: %s", dir && *dir ? dir : "/tmp",
		    strerror(errno));
	if (write(fd, out.buf, out.len) != (ssize_t)out.len || close(fd)) {
		unlink(tmp);
		cp_die("cannot write %s: %s", tmp, strerror(errno));
	}
	strbuf_release(&out);
	strbuf_release(&start);
	free(rs.r);
	free(exe);
	*path = tmp;
	return 0;
}
