/*
 * cmd-cc.c - `callprof cc ARGS`, `callprof c++ ARGS` and `callprof
 * COMPILER ARGS` (a compiler launcher, as CMake runs it): run the compiler
 * with -g and the instrumentation flags that suit it added, everything
 * else passed through in its order.  --sleds or --hooks (ours, taken
 * out of the arguments) chooses the kind of build: patchable entries that
 * the runtime turns into calls when the program is profiled (zero cost
 * otherwise), or calls of the profiling hooks compiled in.
 *
 * Which compiler it is we ask the compiler each time (nothing is cached):
 * `COMPILER -E -dM -v -x c /dev/null` prints its predefined macros
 * (__clang__, __GNUC__) and, with -v, its system include directories,
 * which gcc is told to leave without hooks (clang's after-inlining flag
 * needs no list).  Then we exec the compiler: its exit status, its output
 * and its signals are the build's.  This runs before main() sets up the
 * tool's signal handling, which the compiler would otherwise inherit.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/builtin.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

extern char **environ;

static const char *const cc_usage[] = {
	"callprof cc [--sleds | --hooks] [COMPILER-ARGS...]",
	"callprof c++ [--sleds | --hooks] [COMPILER-ARGS...]",
	"callprof [--sleds | --hooks] COMPILER [COMPILER-ARGS...]",
	NULL,
};

enum compiler_kind { KIND_UNKNOWN, KIND_GCC, KIND_CLANG };

/* The kind of build: hooks compiled in, or sleds patched at run time. */
enum cc_build { BUILD_DEFAULT, BUILD_HOOKS, BUILD_SLEDS };

#define SLEDS_GCC_MAJOR 8
#define SLEDS_CLANG_MAJOR 10

/*
 * What `callprof cc` builds when told neither --sleds nor --hooks: sleds
 * with gcc (8 and later), whose hooks go in before inlining and so make
 * another program than the plain build (bench/truth: bzip2's top function
 * wrong, 53% from perf of the plain build, against 2.5% for its sleds);
 * hooks with clang, whose after-inlining hooks are as true as its sleds
 * and cheaper per recorded call (docs/callprof-cc.1.md has the figures).
 */
static enum cc_build default_build(enum compiler_kind kind, int major)
{
	return kind == KIND_GCC && major >= SLEDS_GCC_MAJOR ? BUILD_SLEDS : BUILD_HOOKS;
}

/*
 * The sled layout the runtime patches (docs/internals/sleds.md): gcc puts
 * five 1-byte NOPs at the entry of each function left out of line, clang
 * one 5-byte NOP, and both list the entries in __patchable_function_entries.
 * gcc has the flag from 8, clang from 10.
 */
#define SLEDS_FLAG "-fpatchable-function-entry=5,0"

/* What the user's arguments already say (response files read). */
struct cc_args {
	int verbose;	   /* -v: the compiler's, and we say what we added */
	int has_g;	   /* a -g option that selects debug info (or -g0) */
	int has_instr;	   /* -finstrument-functions[-after-inlining], -fno-instrument-functions,
			      -fpatchable-function-entry=: the user's choice */
	int has_exclude;   /* -finstrument-functions-exclude-*-list=: added to ours */
	const char *no_code; /* why nothing is compiled (-E, -M, --version...), or NULL */
	int lang;	   /* the last -x: 1 a C++ language, 0 another, -1 none */
};

/* The -g options that say how much debug info (not -gz, -gsplit-dwarf, -gno-...). */
static int is_debug_level(const char *a)
{
	static const char *const prefixes[] = {
		"-ggdb", "-gdwarf", "-gline-tables-only", "-gline-directives-only", "-gstabs",
		"-gxcoff", "-gvms", "-gcodeview", "-gbtf", "-gctf", "-gfull", "-gused",
	};

	if (!strcmp(a, "-g") || (a[0] == '-' && a[1] == 'g' && a[2] >= '0' && a[2] <= '9'))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(a, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Options whose value is the next argument, which is then no option of its own. */
static int takes_next(const char *a)
{
	static const char *const opts[] = {
		"-o", "-x", "-MF", "-MT", "-MQ", "-Xlinker", "-Xassembler", "-Xpreprocessor",
		"-Xclang", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix",
		"-iwithprefix", "-iwithprefixbefore", "-isysroot", "-imultilib", "-I", "-D", "-U",
		"-L", "-l", "-T", "-u", "-z", "-A", "-B", "-e", "--param", "-aux-info", "-target",
		"--sysroot", "-specs", "--specs", "-dumpbase", "-dumpdir", "-arch",
	};

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (!strcmp(a, opts[i]))
			return 1;
	return 0;
}

/*
 * Options after which the compiler makes no code: preprocessing or
 * dependencies only, and the queries that compile nothing.  A flag added
 * to them would change nothing but what -### or -v prints; asking the
 * compiler first would only cost time.
 */
static const char *no_code_option(const char *a)
{
	static const char *const exact[] = {
		"-E", "--preprocess", "-M", "--dependencies", "-MM", "--user-dependencies",
		"--version", "-dumpversion", "-dumpfullversion", "-dumpmachine", "-dumpspecs",
		"--help", "--target-help", "-print-search-dirs", "-print-libgcc-file-name",
		"-print-multi-directory", "-print-multi-lib", "-print-multi-os-directory",
		"-print-multiarch", "-print-sysroot", "-print-sysroot-headers-suffix",
		"--print-search-dirs", "-print-targets", "-print-resource-dir",
		"--print-resource-dir", "-print-effective-triple", "-print-target-triple",
	};
	static const char *const prefixes[] = {
		"--help=", "-print-file-name=", "-print-prog-name=", "--print-file-name=",
		"--print-prog-name=",
	};

	for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
		if (!strcmp(a, exact[i]))
			return exact[i];
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(a, prefixes[i], strlen(prefixes[i])))
			return a;
	return NULL;
}

/* Whether -x's language is C++ ("c++", "c++-header", "c++-cpp-output"...). */
static int lang_is_cxx(const char *lang)
{
	return !strncmp(lang, "c++", 3) || !strncmp(lang, "objective-c++", 13);
}

/* The words of a response file's text, as gcc and clang split them. */
static void split_response(const char *text, struct strbuf *word, void (*add)(void *, char *),
			   void *arg)
{
	const char *p = text;

	for (;;) {
		char quote = 0;
		int any = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' ||
		       *p == '\v')
			p++;
		if (!*p)
			return;
		strbuf_reset(word);
		for (; *p; p++) {
			if (!quote && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
				       *p == '\f' || *p == '\v'))
				break;
			if (*p == '\\' && p[1]) {
				strbuf_addch(word, *++p);
			} else if (quote && *p == quote) {
				quote = 0;
			} else if (!quote && (*p == '\'' || *p == '"')) {
				quote = *p;
			} else {
				strbuf_addch(word, *p);
			}
			any = 1;
		}
		if (any)
			add(arg, xstrdup(word->buf));
	}
}

/* The arguments with every readable @FILE replaced by its words. */
struct arg_list {
	char **v;
	size_t n, alloc;
	int depth; /* of @FILE expansion */
};

static void arg_list__add(void *arg, char *s)
{
	struct arg_list *l = arg;

	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	l->v[l->n++] = s;
}

static void expand(struct arg_list *l, const char *a);

/*
 * @FILE: its words, as the compiler will read them.  Only a regular file
 * is read (a pipe read here would be empty for the compiler), and one
 * that cannot be read stays an argument, as the compiler keeps it.
 */
static void expand_response(struct arg_list *l, const char *a)
{
	struct strbuf text = STRBUF_INIT, word = STRBUF_INIT;
	struct arg_list words = { 0 };
	char buf[4096];
	ssize_t got;
	struct stat st;
	int fd = -1;

	/* stat first: even a non-blocking open of a pipe would be seen by its writer. */
	if (l->depth < 16 && !stat(a + 1, &st) && S_ISREG(st.st_mode))
		fd = cp_open_regular(a + 1, NULL);
	if (fd < 0) {
		arg_list__add(l, xstrdup(a));
		return;
	}
	while ((got = read(fd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
		if (got > 0)
			strbuf_add(&text, buf, (size_t)got);
	close(fd);
	split_response(text.buf ? text.buf : "", &word, arg_list__add, &words);
	l->depth++;
	for (size_t i = 0; i < words.n; i++) {
		expand(l, words.v[i]);
		free(words.v[i]);
	}
	l->depth--;
	free(words.v);
	strbuf_release(&text);
	strbuf_release(&word);
}

static void expand(struct arg_list *l, const char *a)
{
	if (a[0] == '@' && a[1])
		expand_response(l, a);
	else
		arg_list__add(l, xstrdup(a));
}

static void scan_args(int argc, const char **argv, struct cc_args *a)
{
	struct arg_list l = { 0 };

	memset(a, 0, sizeof(*a));
	a->lang = -1;
	for (int i = 0; i < argc; i++)
		expand(&l, argv[i]);
	for (size_t i = 0; i < l.n; i++) {
		const char *s = l.v[i], *q;

		if (!strcmp(s, "-x") && i + 1 < l.n)
			a->lang = lang_is_cxx(l.v[i + 1]);
		else if (!strncmp(s, "-x", 2) && s[2])
			a->lang = lang_is_cxx(s + 2);
		if (takes_next(s)) {
			i++;
			continue;
		}
		if (!strcmp(s, "-v"))
			a->verbose = 1;
		else if (is_debug_level(s))
			a->has_g = 1;
		else if (!strncmp(s, "-finstrument-functions-exclude-", 30))
			a->has_exclude = 1;
		else if (!strcmp(s, "-finstrument-functions") ||
			 !strcmp(s, "-finstrument-functions-after-inlining") ||
			 !strncmp(s, "-fno-instrument-functions", 25) ||
			 !strncmp(s, "-fpatchable-function-entry=", 27))
			a->has_instr = 1;
		else if (!a->no_code && (q = no_code_option(s)))
			a->no_code = q;
	}
	/* no_code points into l: keep a copy that outlives it. */
	if (a->no_code)
		a->no_code = xstrdup(a->no_code);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
}

/*
 * Does ARG name a compiler (the launcher form)?  Its last path component
 * is gcc, g++, cc, c++, clang or clang++, maybe after a target prefix
 * ("x86_64-linux-gnu-gcc") and before a version ("gcc-12", "clang-14").
 */
int cp_cc_names_compiler(const char *arg)
{
	static const char *const names[] = { "gcc", "g++", "cc", "c++", "clang", "clang++" };
	const char *base = strrchr(arg, '/'), *dash;
	size_t len;

	base = base ? base + 1 : arg;
	len = strlen(base);
	dash = strrchr(base, '-');
	if (dash && dash[1] && strspn(dash + 1, "0123456789.") == strlen(dash + 1))
		len = (size_t)(dash - base);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t n = strlen(names[i]);

		if (len >= n && !strncmp(base + len - n, names[i], n) &&
		    (len == n || base[len - n - 1] == '-'))
			return 1;
	}
	return 0;
}

/* The compiler's command: words split at blanks (CALLPROF_CC="ccache gcc"). */
static char **split_words(const char *s, int *n)
{
	char *copy = xstrdup(s), *save = NULL;
	char **w = xcalloc(strlen(s) / 2 + 2, sizeof(*w));

	*n = 0;
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		w[(*n)++] = xstrdup(t);
	free(copy);
	return w;
}

/* environ with LC_ALL=C: the compiler's -v lines are then the English ones. */
static char **c_locale_environ(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + 2, sizeof(*env));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LC_ALL=", 7) && strncmp(environ[i], "LANGUAGE=", 9))
			env[k++] = environ[i];
	env[k++] = (char *)"LC_ALL=C";
	env[k] = NULL;
	return env;
}

/*
 * Run WORDS -E -dM -v -x LANG /dev/null; its stdout and stderr go to OUT.
 * 0 when it ran and exited 0, else cp_error()'s -1.
 */
static int ask_compiler(char **words, int nwords, const char *lang, struct strbuf *out)
{
	const char *extra[] = { "-E", "-dM", "-v", "-x", lang, "/dev/null" };
	char **argv = xcalloc(nwords + ARRAY_SIZE(extra) + 1, sizeof(*argv));
	char **env = c_locale_environ();
	posix_spawn_file_actions_t fa;
	int fd[2], status = 0, err, ret = -1;
	pid_t pid;
	char buf[4096];
	ssize_t got;

	for (int i = 0; i < nwords; i++)
		argv[i] = words[i];
	for (size_t i = 0; i < ARRAY_SIZE(extra); i++)
		argv[nwords + i] = (char *)extra[i];
	if (pipe(fd)) {
		cp_error("cannot make a pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (err) {
		close(fd[0]);
		cp_error("cannot run compiler '%s': %s", argv[0], strerror(err));
		goto out;
	}
	while ((got = read(fd[0], buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
		if (got > 0)
			strbuf_add(out, buf, (size_t)got);
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		cp_error("'%s -E -dM -v -x %s /dev/null' failed (%s %d): cannot tell which compiler "
			 "it is",
			 argv[0], lang, WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		goto out;
	}
	ret = 0;
out:
	free(argv);
	free(env);
	return ret;
}

/* The decimal number at the start of S (a macro's value), 0 if none or absurd. */
static int atoi_prefix(const char *s)
{
	int n = 0;

	for (; *s >= '0' && *s <= '9' && n < 100000; s++)
		n = n * 10 + (*s - '0');
	return n;
}

/*
 * From the compiler's answer: which compiler, its major version into
 * *MAJOR (__GNUC__ for gcc, __clang_major__ for clang; 0 if not said), and
 * (gcc) the directories of its "#include <...>" search list,
 * comma-separated, into LIST.
 */
static enum compiler_kind read_answer(char *answer, struct strbuf *list, int *major)
{
	enum compiler_kind kind = KIND_UNKNOWN;
	int in_list = 0, gnuc = 0, clang_major = 0;
	char *save = NULL;
	const char **dirs = NULL;
	size_t ndirs = 0, alloc = 0;

	for (char *line = strtok_r(answer, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "#define __GNUC__ ", 17))
			gnuc = atoi_prefix(line + 17);
		else if (!strncmp(line, "#define __clang_major__ ", 24))
			clang_major = atoi_prefix(line + 24);
		if (!strncmp(line, "#define __clang__ ", 18))
			kind = KIND_CLANG;
		else if (!strncmp(line, "#define __GNUC__ ", 17) && kind == KIND_UNKNOWN)
			kind = KIND_GCC;
		else if (!strcmp(line, "#include <...> search starts here:"))
			in_list = 1;
		else if (!strcmp(line, "End of search list."))
			in_list = 0;
		else if (in_list && line[0] == ' ' && line[1]) {
			/* " /usr/include", or " DIR (framework directory)" */
			char *sp = strchr(line + 1, ' ');

			if (sp)
				*sp = '\0';
			ALLOC_GROW(dirs, ndirs + 1, alloc);
			dirs[ndirs++] = line + 1;
		}
	}
	/* Everything the system installed, whatever the compiler listed. */
	ALLOC_GROW(dirs, ndirs + 1, alloc);
	dirs[ndirs++] = "/usr/include";
	/*
	 * gcc takes the entries as substrings of a header's path: a directory
	 * that holds another listed one adds nothing; a comma would split it.
	 */
	for (size_t i = 0; i < ndirs; i++) {
		int needed = !strchr(dirs[i], ',');

		for (size_t j = 0; j < ndirs && needed; j++)
			if (j != i && strstr(dirs[i], dirs[j]) &&
			    (strcmp(dirs[i], dirs[j]) || j < i))
				needed = 0;
		if (needed) {
			if (list->len)
				strbuf_addch(list, ',');
			strbuf_addstr(list, dirs[i]);
		}
	}
	free(dirs);
	*major = kind == KIND_CLANG ? clang_major : gnuc;
	return kind;
}

/* Is A one of callprof cc's own options (before the compiler's arguments)? */
int cp_cc_is_option(const char *a)
{
	return !strcmp(a, "--sleds") || !strcmp(a, "--hooks");
}

static int env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

int cmd_cc(int argc, const char **argv)
{
	const char *label = argv[0], *from = NULL, *cmd;
	int cxx = !strcmp(argv[0], "c++"), nwords, nadded = 0, ret = 1, major = 0, nrest = 0;
	char **words, **args, *found;
	const char **rest;
	const char *added[4];
	struct cc_args a = { 0 };
	struct strbuf answer = STRBUF_INIT, dirs = STRBUF_INIT, said = STRBUF_INIT;
	char *exclude = NULL;
	enum cc_build build = BUILD_DEFAULT;
	enum compiler_kind kind;

	if (argc == 2 && !strcmp(argv[1], "-h")) {
		printf("usage: %s\n", cc_usage[0]);
		for (int i = 1; cc_usage[i]; i++)
			printf("   or: %s\n", cc_usage[i]);
		printf("\n    --sleds   patchable function entries (%s): no cost until\n"
		       "              callprof record or attach patches them (the default with gcc)\n"
		       "    --hooks   -finstrument-functions (gcc) or "
		       "-finstrument-functions-after-inlining (clang)\n"
		       "              (the default with clang)\n",
		       SLEDS_FLAG);
		printf("\nadds -g and the instrumentation flags for the compiler (gcc or clang), "
		       "then runs it;\nthe compiler is $CALLPROF_CC (cc: default cc) or "
		       "$CALLPROF_CXX (c++: default c++);\n-v or CALLPROF_VERBOSE=1 says what was "
		       "added.  'man callprof-cc' explains more.\n");
		return 0;
	}
	/*
	 * Ours may stand anywhere but as another option's value: neither gcc
	 * nor clang has an option of these names.  The rest go on in order.
	 */
	rest = xcalloc(argc, sizeof(*rest));
	for (int i = 1; i < argc; i++) {
		enum cc_build b;

		if (!cp_cc_is_option(argv[i])) {
			rest[nrest++] = argv[i];
			if (takes_next(argv[i]) && i + 1 < argc)
				rest[nrest++] = argv[++i];
			continue;
		}
		b = !strcmp(argv[i], "--sleds") ? BUILD_SLEDS : BUILD_HOOKS;
		if (build != BUILD_DEFAULT && build != b) {
			cp_error("--sleds and --hooks exclude each other: a build is one or the "
				 "other");
			free(rest);
			return 129;
		}
		build = b;
	}
	if (cxx || !strcmp(argv[0], "cc")) {
		from = cxx ? "CALLPROF_CXX" : "CALLPROF_CC";
		cmd = getenv(from);
		if (!cmd || !cmd[strspn(cmd, " \t")]) {
			cmd = cxx ? "c++" : "cc";
			from = NULL;
		}
	} else {
		cmd = argv[0];
		cxx = strstr(argv[0], "++") != NULL;
	}
	words = split_words(cmd, &nwords);
	found = cp_find_program(words[0]);
	if (!found) {
		cp_error("compiler '%s' not found%s%s%s", words[0], from ? " (from $" : "",
			 from ? from : "", from ? ")" : "");
		ret = 127;
		goto out;
	}
	free(found);

	scan_args(nrest, rest, &a);
	/* -g goes first, so that a later -g option of the user's still decides. */
	if (!a.no_code && !a.has_g)
		added[nadded++] = "-g";
	/*
	 * An exclusion list of the user's only narrows the instrumentation:
	 * ours is still added, and gcc adds the lists up.
	 */
	if (!a.no_code && !a.has_instr) {
		int lang_cxx = a.lang >= 0 ? a.lang : cxx;

		if (ask_compiler(words, nwords, lang_cxx ? "c++" : "c", &answer))
			goto out;
		kind = read_answer(answer.buf, &dirs, &major);
		if (kind == KIND_UNKNOWN) {
			cp_error("'%s' is neither gcc nor clang (it predefines neither __GNUC__ nor "
				 "__clang__): callprof cc knows only their flags",
				 words[0]);
			goto out;
		}
		if (build == BUILD_DEFAULT)
			build = default_build(kind, major);
		if (build == BUILD_SLEDS) {
			int need = kind == KIND_CLANG ? SLEDS_CLANG_MAJOR : SLEDS_GCC_MAJOR;

			if (major < need) {
				cp_error("'%s' is %s %d: sleds (%s) need gcc %d or clang %d; "
					 "build with callprof %s --hooks",
					 words[0], kind == KIND_CLANG ? "clang" : "gcc", major, SLEDS_FLAG,
					 SLEDS_GCC_MAJOR, SLEDS_CLANG_MAJOR, cp_visible(label));
				goto out;
			}
			added[nadded++] = SLEDS_FLAG;
			/*
			 * clang's DW_AT_producer holds its flags only when asked
			 * (gcc's always does): record's overhead verdict reads
			 * them to tell a sleds build and say its remedy.
			 */
			if (kind == KIND_CLANG)
				added[nadded++] = "-grecord-command-line";
			/*
			 * gcc must not let a caller keep values in registers the
			 * callee leaves alone (-fipa-ra): a recorded call runs
			 * callprof's entry and exit too.  gcc turns it off for
			 * patchable functions itself, but not in a function with
			 * an optimize attribute (gcc 12: a caller's loop counter
			 * in %ecx came back changed).
			 */
			else
				added[nadded++] = "-fno-ipa-ra";
			/* Nor does no_instrument_function: only the attribute below. */
			if (a.has_exclude)
				fprintf(stderr, "callprof %s: -finstrument-functions-exclude-* lists do "
						"not apply to sleds: mark the functions to leave out "
						"__attribute__((patchable_function_entry(0, 0)))\n",
					cp_visible(label));
		} else if (kind == KIND_CLANG) {
			added[nadded++] = "-finstrument-functions-after-inlining";
			if (a.has_exclude)
				fprintf(stderr, "callprof %s: clang has no -finstrument-functions-exclude-* "
						"lists: mark the functions to leave out "
						"__attribute__((no_instrument_function))\n",
					cp_visible(label));
		} else {
			added[nadded++] = "-finstrument-functions";
			exclude = xstrfmt("-finstrument-functions-exclude-file-list=%s", dirs.buf);
			added[nadded++] = exclude;
		}
	}

	if (a.verbose || env_true("CALLPROF_VERBOSE")) {
		for (int i = 0; i < nadded; i++)
			strbuf_addf(&said, " %s", cp_visible_arg(added[i]));
		if (nadded)
			fprintf(stderr, "callprof %s: added%s\n", cp_visible(label), said.buf);
		else if (a.no_code)
			fprintf(stderr, "callprof %s: added nothing (%s: no code is made)\n",
				cp_visible(label), a.no_code);
		else
			fprintf(stderr, "callprof %s: added nothing (-g and -finstrument-functions* "
					"or -fpatchable-function-entry given)\n", cp_visible(label));
	}

	args = xcalloc(nwords + nadded + nrest + 1, sizeof(*args));
	for (int i = 0; i < nwords; i++)
		args[i] = words[i];
	for (int i = 0; i < nadded; i++)
		args[nwords + i] = (char *)added[i];
	for (int i = 0; i < nrest; i++)
		args[nwords + nadded + i] = (char *)rest[i];
	fflush(NULL);
	execvp(args[0], args);
	ret = errno == ENOENT ? 127 : 126;
	cp_error("cannot run compiler '%s': %s", args[0], strerror(errno));
	free(args);
out:
	for (int i = 0; i < nwords; i++)
		free(words[i]);
	free(words);
	free(rest);
	free(exclude);
	free((char *)a.no_code);
	strbuf_release(&answer);
	strbuf_release(&dirs);
	strbuf_release(&said);
	return ret;
}
