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
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "cli/select.h"
#include "format/format.h"
#include "report/report.h"
#include "symbolize/demangle.h"
#include "symbolize/elffile.h"
#include "util/strbuf.h"
#include "util/util.h"

/* One pattern of one kind, compiled. */
struct rule {
	uint32_t kind;	 /* enum cp_filter_kind */
	const char *text;
	struct cp_name_pattern *pat; /* name rules (names.c), else NULL */
	int is_regex;
	uint32_t matched;
	/*
	 * Name rules: the ranges of the functions named, with how (enum
	 * cp_name_rank); only those of the best rank found in all modules
	 * are written, as in every other place that names a function.
	 */
	struct strbuf *ranges; /* per rank: "range ..." lines */
	uint32_t counts[CP_NAME_EXACT + 1];
};

struct rules {
	struct rule *r;
	size_t n;
	struct cp_strtab names; /* every function name met, for suggestions */
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
		if (kind == CP_FILTER_EXCLUDE_MODULE || kind == CP_FILTER_EXCLUDE_FILE)
			continue;
		/* cp_select__check compiled it already: a failure here is out of memory. */
		r->pat = cp_name_pattern__new(*pats, r->is_regex, NULL, 0);
		if (!r->pat)
			cp_die("cannot compile the regular expression '%s'", *pats);
		r->ranges = xcalloc(CP_NAME_EXACT + 1, sizeof(*r->ranges));
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

/* One module being searched: the rules, the file's identity, the output. */
struct search {
	struct rules *rs;
	const struct stat *st;
	struct strbuf *out;
};

/* A function symbol of the module against the name rules: demangled, or as it is. */
static void match_symbol(const char *name, uint64_t value, uint64_t size, void *arg)
{
	struct search *s = arg;
	char *dm = cp_demangle(name);

	cp_strtab__add(&s->rs->names, dm ? dm : name);
	for (size_t k = 0; k < s->rs->n; k++) {
		struct rule *r = &s->rs->r[k];
		enum cp_name_rank rank, raw;

		if (!r->pat)
			continue;
		rank = cp_name_pattern__rank(r->pat, dm ? dm : name);
		raw = dm ? cp_name_pattern__rank(r->pat, name) : CP_NAME_NONE;
		if (raw > rank)
			rank = raw;
		if (rank == CP_NAME_NONE)
			continue;
		r->counts[rank]++;
		strbuf_addf(&r->ranges[rank], "range %s %llu %llu 0x%llx %llu\n", letters(r->kind),
			    (unsigned long long)s->st->st_dev, (unsigned long long)s->st->st_ino,
			    (unsigned long long)value, (unsigned long long)(size ? size : 1));
	}
	free(dm);
}

/* A function whose declaration lies in a matching source file (DWARF). */
static void match_file(const char *file, const struct cp_elf_range *rg, size_t n, void *arg)
{
	struct search *s = arg;

	for (size_t k = 0; k < s->rs->n; k++) {
		struct rule *r = &s->rs->r[k];

		if (r->kind != CP_FILTER_EXCLUDE_FILE || !path_matches(r->text, file))
			continue;
		for (size_t i = 0; i < n; i++)
			strbuf_addf(s->out, "range E %llu %llu 0x%llx %llu\n",
				    (unsigned long long)s->st->st_dev,
				    (unsigned long long)s->st->st_ino, (unsigned long long)rg[i].lo,
				    (unsigned long long)(rg[i].hi - rg[i].lo));
		r->matched += n > 0;
	}
}

static void search_module(struct rules *rs, const char *path, int is_exe, struct strbuf *out)
{
	struct stat st;
	struct search s = { .rs = rs, .st = &st, .out = out };
	struct cp_elf *elf = cp_elf__open(path, &st);
	int files = 0;

	/* Only an instrumented library has functions the runtime can place. */
	if (!elf || (!is_exe && !cp_elf__has_symbol(elf, "__cyg_profile_func_enter"))) {
		cp_elf__close(elf);
		return;
	}
	cp_elf__for_each_function(elf, match_symbol, &s);
	for (size_t k = 0; k < rs->n; k++)
		files |= rs->r[k].kind == CP_FILTER_EXCLUDE_FILE;
	if (files)
		cp_elf__for_each_subprogram(elf, match_file, &s);
	cp_elf__close(elf);
}

/* The libraries prog links, as its dynamic loader lists them ("ld.so --list"). */
static void search_libraries(struct rules *rs, const char *prog, struct strbuf *out)
{
	char interp[4096] = "", line[8192];
	struct strbuf cmd = STRBUF_INIT;
	FILE *p;
	struct cp_elf *elf = cp_elf__open(prog, NULL);

	if (!elf)
		return;
	if (cp_elf__interp(elf, interp, sizeof(interp)))
		interp[0] = '\0';
	cp_elf__close(elf);
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
	if (exe && rs.n) {
		search_module(&rs, exe, 1, &out);
		search_libraries(&rs, exe, &out);
	}
	/* Each name rule: the functions of the best rank it reached anywhere. */
	for (size_t k = 0; k < rs.n; k++) {
		struct rule *r = &rs.r[k];

		for (int rank = CP_NAME_EXACT; r->pat && rank > CP_NAME_NONE; rank--) {
			if (!r->counts[rank])
				continue;
			strbuf_addstr(&out, r->ranges[rank].buf);
			r->matched = r->counts[rank];
			break;
		}
	}
	for (size_t k = 0; k < rs.n; k++) {
		struct rule *r = &rs.r[k];

		if (r->kind == CP_FILTER_START)
			strbuf_addf(&start, "%s%s", start.len ? ", " : "", r->text);
		if (r->kind == CP_FILTER_EXCLUDE_MODULE) {
			r->matched = 1; /* decided in the process, when it is loaded */
		} else if (!r->matched) {
			/* The closest names, as every option that names a function says them. */
			char *close = r->pat ? cp_name_pattern__suggest(r->pat,
					(const char *const *)rs.names.s, rs.names.n, 5) : NULL;

			if (r->kind == CP_FILTER_START && !failed)
				failed = cp_error("--start '%s' matches no function of %s or the "
						  "instrumented libraries it links%s%s", r->text, prog,
						  close ? "; the closest: " : "", close ? close : "");
			else if (r->kind != CP_FILTER_START)
				cp_warning("%s '%s' matches no function of %s or the instrumented "
					   "libraries it links%s%s", cp_filter_option(r->kind), r->text,
					   prog, close ? "; the closest: " : "", close ? close : "");
			free(close);
		}
		strbuf_addf(&out, "rule %u %u %u %s\n", r->kind, r->is_regex ? CP_FILTER_REGEX : 0,
			  r->matched, r->text);
		cp_name_pattern__free(r->pat);
		for (int rank = 0; r->ranges && rank <= CP_NAME_EXACT; rank++)
			strbuf_release(&r->ranges[rank]);
		free(r->ranges);
	}
	cp_strtab__release(&rs.names);
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

void cp_select__parse(struct cp_select *sel, const char *max_depth, const char *budget,
		      int coverage, int timing, const char *const *usage)
{
	if (max_depth)
		sel->max_depth = (unsigned)cp_parse_number(max_depth, 1, 1000000, "--max-depth", usage);
	if (budget) {
		char *end;
		double v = strtod(budget, &end);

		if (*end == '%')
			end++;
		if (*end || end == budget || !(v >= 0.01 && v <= 100))
			cp_usage_error(usage, "--budget wants a percentage from 0.01 to 100, not '%s'",
				       budget);
		sel->budget = (unsigned)(v * 100 + 0.5);
	}
	if ((sel->start || sel->max_depth) && coverage)
		cp_usage_error(usage, "--start and --max-depth need --mode=cpu, timing or counting");
	if (sel->budget && !timing)
		cp_usage_error(usage, "--budget needs --time=clock (--mode=timing): it limits "
			       "the cost of timing each call, which the other modes do not");
	cp_select__check(sel, usage);
}

void cp_select__release(struct cp_select *sel)
{
	FREE_AND_NULL(sel->include);
	FREE_AND_NULL(sel->exclude);
	FREE_AND_NULL(sel->exclude_tree);
	FREE_AND_NULL(sel->exclude_file);
	FREE_AND_NULL(sel->exclude_module);
	FREE_AND_NULL(sel->start);
}
