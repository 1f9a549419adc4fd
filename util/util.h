/*
 * util.h - tool-side helpers: messages, dying allocators, small parsers.
 *
 * Only the tool (cli/, report/, symbolize/, util/) may use these; the
 * runtime never exits and never allocates with malloc on its hot path.
 * Conventions follow git: cp_error() prints "callprof: error: ..." and returns
 * -1, cp_die() exits 128, usage errors exit 129, BUG() marks impossible states.
 */
#ifndef CP_UTIL_UTIL_H
#define CP_UTIL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FREE_AND_NULL(p) \
	do { \
		free(p); \
		(p) = NULL; \
	} while (0)

/* Grow array *p (of *alloc elements) so that it holds at least n. */
#define ALLOC_GROW(p, n, alloc) \
	do { \
		if ((n) > (alloc)) { \
			size_t cp__na = (alloc) ? (alloc)*2 : 16; \
			if (cp__na < (n)) \
				cp__na = (n); \
			(p) = xrealloc((p), cp__na * sizeof(*(p))); \
			(alloc) = cp__na; \
		} \
	} while (0)

#define CP_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Prints "callprof: error: MSG" on stderr, returns -1. */
int cp_error(const char *fmt, ...) CP_PRINTF(1, 2);
/* Prints "callprof: warning: MSG" on stderr. */
void cp_warning(const char *fmt, ...) CP_PRINTF(1, 2);
/* Prints "callprof: fatal: MSG" and exits 128. */
void cp_die(const char *fmt, ...) CP_PRINTF(1, 2) __attribute__((noreturn));
/* Internal inconsistency: prints file:line and aborts. */
#define BUG(...) cp_bug(__FILE__, __LINE__, __VA_ARGS__)
void cp_bug(const char *file, int line, const char *fmt, ...) CP_PRINTF(3, 4)
	__attribute__((noreturn));

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrfmt(const char *fmt, ...) CP_PRINTF(1, 2);

/*
 * NAME as execvp would run it: itself when it holds a '/' (if it can be
 * executed), else the first executable regular file NAME in $PATH (an
 * empty element is the current directory, "./NAME"; no PATH is the
 * system's default, confstr(_CS_PATH)).  Allocated; NULL if none.
 */
char *cp_find_program(const char *name);

/* FNV-1a hash of a string, for the tool's hash tables. */
uint64_t cp_str_hash(const char *s);
/* A 64-bit key mixed so that its low bits index a hash table well. */
uint64_t cp_u64_hash(uint64_t k);

/*
 * Distinct strings, each copied once and numbered in the order they came:
 * s[i] is string i.  Zero-initialised it is empty.
 */
struct cp_strtab {
	char **s;
	uint32_t n;
	size_t alloc;
	uint32_t *slot;	/* open addressing: index + 1, 0 for empty */
	uint64_t mask;	/* slots - 1 */
};
/* The number of s, added if new (s is copied). */
uint32_t cp_strtab__add(struct cp_strtab *t, const char *s);
void cp_strtab__release(struct cp_strtab *t);

/*
 * A map from 64-bit keys to 32-bit values; CP_U64MAP_NONE (the report's
 * CP_NONE) means absent and cannot be stored.
 */
#define CP_U64MAP_NONE UINT32_MAX
struct cp_u64map {
	uint64_t *keys;
	uint32_t *vals;
	uint64_t mask, count;
};
void cp_u64map__init(struct cp_u64map *m, uint64_t hint);
void cp_u64map__release(struct cp_u64map *m);
/* The value of key, or val stored for it if it had none. */
uint32_t cp_u64map__get_or_add(struct cp_u64map *m, uint64_t key, uint32_t val);
/* The value of key, CP_U64MAP_NONE if it has none. */
uint32_t cp_u64map__get(const struct cp_u64map *m, uint64_t key);

/*
 * *dst += v, saturating at UINT64_MAX: counts and times summed from
 * profiles (merge, report totals, flat and diff sums) must not wrap, or
 * "merge A A" would show fewer calls than A.  The first saturation in the
 * process prints one warning (cp_saturated); cp_saturations() counts them.
 */
void cp_saturated(void);
uint64_t cp_saturations(void);
static inline void cp_add_sat(uint64_t *dst, uint64_t v)
{
	if (__builtin_add_overflow(*dst, v, dst)) {
		*dst = UINT64_MAX;
		cp_saturated();
	}
}
#define CP_ADD_SAT(dst, v) cp_add_sat(&(dst), (v))
/* a * b, saturating at UINT64_MAX like cp_add_sat (samples times their period). */
static inline uint64_t cp_mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r)) {
		cp_saturated();
		return UINT64_MAX;
	}
	return r;
}
static inline void cp_add_sat32(uint32_t *dst, uint64_t v)
{
	if (v > UINT32_MAX - *dst) {
		*dst = UINT32_MAX;
		cp_saturated();
	} else {
		*dst += (uint32_t)v;
	}
}
#define CP_ADD_SAT32(dst, v) cp_add_sat32(&(dst), (v))

/* Parse a whole decimal number into *out; returns 0 or -1. */
int cp_parse_double(const char *s, double *out);
int cp_parse_u64(const char *s, uint64_t *out);

struct strbuf;

/*
 * A comma-separated column list, as --fields takes it ("calls,self,name"),
 * parsed into an array of columns of the caller's type.  Each name goes
 * through lookup, with *col zeroed: it returns 0 to add *col, 1 to accept
 * a column the caller places itself (a name or path column, always last),
 * or -1 for a name it does not know.  A column equal byte for byte to an
 * earlier one is dropped, and so are those past max.
 */
struct cp_columns {
	void *cols;   /* out: room for max columns */
	size_t size;  /* bytes per column */
	int max;      /* columns kept at most */
	int n;	      /* out: columns kept */
	int (*lookup)(const char *name, void *col, void *arg);
	/* Appends the known names for the error ("calls, self, ..."). */
	void (*known)(struct strbuf *sb, void *arg);
	void *arg; /* passed to lookup and known */
};

/*
 * Parse spec into c->cols and c->n: 0, or -1 after the error
 * "unknown field 'NAME' (known: ...)".
 */
int cp_columns__parse(struct cp_columns *c, const char *spec);

/*
 * Write a file atomically: cp_outfile__open() returns a stream on a
 * temporary file next to path (or stdout when path is NULL or "-"),
 * created with O_EXCL|O_NOFOLLOW and mode 0666 & ~umask;
 * cp_outfile__commit() flushes, checks for write errors and renames it into
 * place; cp_outfile__abort() removes it.  A failure never leaves path
 * half-written nor the temporary behind, and neither does a signal that
 * ends the tool (cp_signals__init).  A symlink at path is replaced by
 * the file (rename does not follow it): its target is never written.  A
 * directory at path is refused at open.  A character device or FIFO at path
 * (/dev/null, /dev/stdout) is written in place, never replaced.  Returns 0 or cp_error()'s -1, having
 * printed one line naming path.
 */
struct cp_outfile;
enum cp_outfile_flags {
	/* path will be renamed over (a profile file): nothing but a regular file there */
	CP_OUTFILE_RENAME = 1 << 0,
};
/*
 * Whether path could be created, checked before any work so that a bad
 * output path fails early: not empty, not a directory, in a directory that
 * exists and is writable, a last component short enough for the temporary
 * names made from it (NAME_MAX); an existing non-regular file only if it
 * is a character device or FIFO (written in place, see cp_outfile__open)
 * and not CP_OUTFILE_RENAME.  An existing regular file (not a symlink,
 * which is replaced itself) is never one of the inputs
 * (cp_outfile__add_input); with CP_OUTFILE_RENAME it is a profile or
 * empty, else neither a profile nor an executable.  0, or cp_error()'s -1
 * after one line "cannot create|write 'PATH': REASON".
 */
int cp_outfile__check(const char *path, enum cp_outfile_flags flags);
/* Remember path (if it is a regular file) as an input: no output may replace it. */
void cp_outfile__add_input(const char *path);
/* Checks path (cp_outfile__check with flags) and opens it, see above; NULL after one line. */
struct cp_outfile *cp_outfile__open(const char *path, enum cp_outfile_flags flags);
FILE *cp_outfile__fp(struct cp_outfile *of);
/*
 * Flush and close the temporary file without renaming it yet (many parts
 * renamed together at the end need not hold a descriptor each); commit
 * or abort must still follow, and fp is gone.  0 or cp_error()'s -1.
 */
int cp_outfile__close(struct cp_outfile *of);
int cp_outfile__commit(struct cp_outfile *of);
void cp_outfile__abort(struct cp_outfile *of);

/*
 * Open path for reading only if it is a regular file: a FIFO, device,
 * socket or directory named by an untrusted profile (a module path, a
 * debug file) must not block or be read.  Opens with O_NONBLOCK (a FIFO
 * without writer would wait forever), checks with fstat, then clears
 * O_NONBLOCK.  The descriptor, or -1 with *why (if why is non-NULL) set to
 * a static reason: strerror(errno) or "not a regular file".
 */
int cp_open_regular(const char *path, const char **why);
/* Whether path names (after symlinks) something that is not a regular file. */
int cp_path_is_special(const char *path);

/*
 * Temporary files removed if a signal ends the tool: name (which must stay
 * valid until cp_tempfile__remove) is unlinked by the handlers of
 * cp_signals__init.  cp_outfile and cp_writer (format/, through
 * cp_writer_tmp_hook) list theirs.  Both O(1); remove accepts NULL.
 */
struct cp_tempfile;
struct cp_tempfile *cp_tempfile__add(const char *name);
void cp_tempfile__remove(struct cp_tempfile *t);

/*
 * The tool's signals, first thing in main: SIGPIPE and SIGXFSZ ignored (a
 * closed pipe or a full file size limit is an EPIPE or EFBIG error, with
 * its message and no temporary left), and SIGHUP, SIGINT, SIGQUIT and
 * SIGTERM, unless ignored already, remove the temporaries before the tool
 * dies of them.  cp_signals__restore_for_exec(), in a forked child before
 * it runs a program, gives back the dispositions the tool was started with
 * (the handlers are reset by exec itself).  Async-signal-safe.
 */
void cp_signals__init(void);
void cp_signals__restore_for_exec(void);

/*
 * The processes named by the pidfds that process pid holds (the "Pid:" of
 * their /proc fdinfo: -1 once reaped), at most max of them into out; how
 * many.  0 when pid holds none or its descriptors cannot be read.
 */
int cp_pidfd_targets(long pid, long *out, int max);

/*
 * /proc/PID/stat read into buf (size bytes): a pointer just past the
 * process name's closing ')' (the name may hold spaces and ')'), that is
 * at " STATE PPID ...", or NULL when it cannot be read.
 */
const char *cp_proc_stat(long pid, char *buf, size_t size);

/* Flush and close stdout, failing on a write error (git's run_builtin). */
int cp_finish_stdout(void);

#endif /* CP_UTIL_UTIL_H */
