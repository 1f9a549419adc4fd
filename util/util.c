/*
 * util.c - messages, dying allocators, number parsing and atomic output
 * files for the tool.  See util.h for the contracts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

/*
 * One line, whatever the names and paths the message quotes hold: the
 * whole message in its visible form (text.h), so callers pass them as
 * they are.
 */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];
	int len = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (len < 0)
		len = 0;
	fflush(stdout);
	fprintf(stderr, "callprof: %s", prefix);
	cp_fput_visible(stderr, msg, (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1);
	fputc('\n', stderr);
}

int cp_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void cp_warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void cp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(128);
}

void cp_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "callprof: BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		cp_die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		cp_die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		cp_die("out of memory allocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		cp_die("out of memory duplicating a string");
	return p;
}

char *xstrfmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

int cp_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cp_columns__parse(struct cp_columns *c, const char *spec)
{
	char *copy = xstrdup(spec), *p = copy, *tok;
	unsigned char *col = xmalloc(c->size);
	int ret = 0;

	c->n = 0;
	while ((tok = strsep(&p, ",")) != NULL) {
		int r, k;

		memset(col, 0, c->size);
		r = c->lookup(tok, col, c->arg);
		if (r < 0) {
			struct strbuf sb = STRBUF_INIT;

			c->known(&sb, c->arg);
			ret = cp_error("unknown field '%s' (known: %s)", tok, sb.buf);
			strbuf_release(&sb);
			break;
		}
		if (r > 0)
			continue;
		for (k = 0; k < c->n; k++)
			if (!memcmp((unsigned char *)c->cols + (size_t)k * c->size, col, c->size))
				break;
		if (k == c->n && c->n < c->max)
			memcpy((unsigned char *)c->cols + (size_t)c->n++ * c->size, col, c->size);
	}
	free(col);
	free(copy);
	return ret;
}

int cp_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v != v)
		return -1;
	*out = v;
	return 0;
}

/*
 * Temporary files to remove if a signal ends the tool (cp_signals__init):
 * a list changed only with those signals blocked, so the handler, which
 * only walks it, never sees it half changed.  The tool is single-threaded.
 */
struct cp_tempfile {
	struct cp_tempfile *next;  /* what the handler walks */
	struct cp_tempfile **pprev; /* the link to this one: removed in O(1) */
	const char *name;
};
static struct cp_tempfile *volatile tempfiles;

/* The signals whose default action ends the tool: temporaries go first. */
static const int cleanup_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
/* Ignored by the tool, which gets EPIPE and EFBIG instead: restored for a program it runs. */
static const int ignored_signals[] = { SIGPIPE, SIGXFSZ };
static struct sigaction saved_ignored[ARRAY_SIZE(ignored_signals)];
static int signals_ready;

static void block_cleanup_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

struct cp_tempfile *cp_tempfile__add(const char *name)
{
	struct cp_tempfile *t = xmalloc(sizeof(*t));
	sigset_t old;

	t->name = name;
	block_cleanup_signals(&old);
	t->next = tempfiles;
	t->pprev = (struct cp_tempfile **)&tempfiles;
	if (t->next)
		t->next->pprev = &t->next;
	tempfiles = t;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return t;
}

void cp_tempfile__remove(struct cp_tempfile *t)
{
	sigset_t old;

	if (!t)
		return;
	block_cleanup_signals(&old);
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(t);
}

/* A signal ends the tool: remove the temporaries, then die of it as without us. */
static void cleanup_and_die(int sig)
{
	int saved_errno = errno;
	struct sigaction dfl;
	sigset_t set;

	for (struct cp_tempfile *t = tempfiles; t; t = t->next)
		unlink(t->name);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	errno = saved_errno; /* not reached unless the signal was blocked elsewhere */
}

void cp_signals__init(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < ARRAY_SIZE(ignored_signals); i++)
		sigaction(ignored_signals[i], &sa, &saved_ignored[i]);
	sa.sa_handler = cleanup_and_die;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (size_t i = 0; i < ARRAY_SIZE(cleanup_signals); i++) {
		/* A signal the tool was started ignoring (nohup, a background job) stays so. */
		if (!sigaction(cleanup_signals[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(cleanup_signals[i], &sa, NULL);
	}
	signals_ready = 1;
}

void cp_signals__restore_for_exec(void)
{
	if (!signals_ready)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(ignored_signals); i++)
		sigaction(ignored_signals[i], &saved_ignored[i], NULL);
}

struct cp_outfile {
	FILE *fp;   /* the stream written to */
	char *path; /* final name, NULL for stdout */
	char *tmp;  /* temporary name renamed to path on commit */
	struct cp_tempfile *listed; /* tmp, removed if a signal ends the tool */
	int stream; /* fp writes to a device or pipe at path itself (no tmp) */
	int closed; /* cp_outfile__close() ran: fp is gone, tmp is complete */
};

/*
 * The temporary file, next to path so that the rename stays within one
 * file system: O_EXCL so it is never a file that was there already, and
 * O_NOFOLLOW so it is never written through a symlink planted under its
 * name; mode 0666 less the umask, as any file a tool creates.  The name
 * has the pid and a counter mixed with the clock, tried again if taken.
 */
static int outfile_create(struct cp_outfile *of)
{
	static uint32_t seq;
	struct timespec ts;
	sigset_t old;
	int fd = -1, err;

	/* Created and listed for removal in one step, as far as the signals can tell. */
	block_cleanup_signals(&old);
	for (int tries = 0; tries < 64; tries++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		free(of->tmp);
		of->tmp = xstrfmt("%s.tmp.%d.%06x", of->path, (int)getpid(),
				  (unsigned)(cp_u64_hash((uint64_t)ts.tv_nsec + seq++) & 0xffffff));
		fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	err = errno;
	if (fd >= 0)
		of->listed = cp_tempfile__add(of->tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return fd;
}

/* The directory path is in: "." for a bare name, "/" for "/name". */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrfmt("%.*s", (int)(slash - path), path);
}

/*
 * Whether path names something of the system's device or process trees
 * (/dev/null, /dev/stdout -> /proc/self/fd/1, /proc/self/fd/N), however it
 * is spelt: its directory resolves into /dev or /proc.  Those are never
 * renamed over: the rename would put a file in the place of a device node
 * or of the link that stands for a descriptor, for every program.
 */
static int in_system_tree(const char *path)
{
	char *dir = dir_of(path), *real = realpath(dir, NULL);
	int ret = real && (!strcmp(real, "/dev") || !strncmp(real, "/dev/", 5) ||
			   !strcmp(real, "/proc") || !strncmp(real, "/proc/", 6));

	free(real);
	free(dir);
	return ret;
}

/*
 * Whether cp_outfile writes to path in place: a character device or a FIFO
 * (/dev/null, a named pipe), or anything under /dev or /proc (/dev/stdout,
 * whatever it leads to).  A symlink planted elsewhere that leads to a
 * device is not followed: it is replaced as any other link.
 */
static int is_stream(const char *path)
{
	struct stat st, lst;

	if (in_system_tree(path))
		return 1;
	if (stat(path, &st) || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return 0;
	return !lstat(path, &lst) && !S_ISLNK(lst.st_mode);
}

/* The files the command reads (cp_outfile__add_input): no output replaces one. */
static struct {
	dev_t dev;
	ino_t ino;
} *inputs;
static size_t ninputs, inputs_alloc;

void cp_outfile__add_input(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	ALLOC_GROW(inputs, ninputs + 1, inputs_alloc);
	inputs[ninputs].dev = st.st_dev;
	inputs[ninputs].ino = st.st_ino;
	ninputs++;
}

static int is_input(const struct stat *st)
{
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
			return 1;
	return 0;
}

/* Whether the regular file path starts with the profile magic; 1, 0, or -1 if empty. */
static int is_profile(const char *path, const struct stat *st)
{
	return st->st_size ? cp_path_is_profile(path) : -1;
}

/*
 * Characters the temporaries and companions of an output add to its name:
 * the tool's "NAME.tmp.PID.XXXXXX"; for a profile also the runtime's
 * "NAME.PID.tmp.PID" (a fork child's).  A pid has at most 7 digits
 * (PID_MAX_LIMIT, 4194304).
 */
#define OUT_SUFFIX_MAX (sizeof(".tmp.4194304.ffffff") - 1)
#define PROFILE_SUFFIX_MAX (sizeof(".4194304.tmp.4194304") - 1)

/* Whether path's last component leaves room for the temporaries next to it. */
static int name_fits(const char *path, const char *dir, size_t reserve, long *max)
{
	const char *slash = strrchr(path, '/');
	size_t len = strlen(slash ? slash + 1 : path);

	*max = pathconf(dir, _PC_NAME_MAX);
	if (*max <= 0)
		*max = NAME_MAX;
	return len + reserve <= (size_t)*max;
}

/*
 * What may not be replaced by the output at path (already lstat'ed into
 * lst): one of the inputs, an executable, and for a profile anything but a
 * profile or an empty file, for another output a profile.  A symlink is
 * replaced itself, never its target: it is always fine.
 */
static int check_replace(const char *path, const struct stat *lst, enum cp_outfile_flags flags)
{
	int prof, exe;

	if (!S_ISREG(lst->st_mode))
		return 0;
	if (is_input(lst))
		return cp_error("cannot write '%s': it is one of the inputs (choose another output "
				"name)", path);
	prof = is_profile(path, lst);
	exe = (lst->st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) && prof >= 0;
	if (flags & CP_OUTFILE_RENAME) {
		if (!prof)
			return cp_error("cannot write '%s': it is %s (only a profile is replaced; "
					"remove it or choose another name)", path,
					exe ? "an executable file" : "not a callprof profile");
	} else if (prof > 0 || exe) {
		return cp_error("cannot write '%s': it is %s (remove it or choose another name)",
				path, prof > 0 ? "a callprof profile" : "an executable file");
	}
	return 0;
}

int cp_outfile__check(const char *path, enum cp_outfile_flags flags)
{
	char *dir;
	struct stat st, lst;
	size_t reserve = flags & CP_OUTFILE_RENAME ? PROFILE_SUFFIX_MAX : OUT_SUFFIX_MAX;
	long max;
	int err = 0;

	if (!*path)
		err = ENOENT;
	else if (!stat(path, &st) && S_ISDIR(st.st_mode))
		err = EISDIR;
	if (err)
		return cp_error("cannot create '%s': %s", path, strerror(err));
	if (flags & CP_OUTFILE_RENAME) {
		if (in_system_tree(path) || (!stat(path, &st) && !S_ISREG(st.st_mode)))
			return cp_error("cannot create '%s': not a regular file (a profile is "
				     "renamed into place)", path);
	} else if (is_stream(path)) {
		return 0;
	} else if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		return cp_error("cannot create '%s': not a regular file (only a character device "
			     "or a pipe is written to in place)", path);
	}
	if (!lstat(path, &lst) && check_replace(path, &lst, flags))
		return -1;
	dir = dir_of(path);
	if (stat(dir, &st))
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (access(dir, W_OK | X_OK))
		err = errno;
	else if (!name_fits(path, dir, reserve, &max)) {
		free(dir);
		return cp_error("cannot create '%s': file name too long (at most %ld characters "
				"here, with room for its temporary names)", path, max - (long)reserve);
	}
	free(dir);
	if (err)
		return cp_error("cannot create '%s': %s", path, strerror(err));
	return 0;
}

struct cp_outfile *cp_outfile__open(const char *path, enum cp_outfile_flags flags)
{
	struct cp_outfile *of;
	int fd;

	if (path && strcmp(path, "-") && cp_outfile__check(path, flags))
		return NULL;
	of = xcalloc(1, sizeof(*of));
	if (!path || !strcmp(path, "-")) {
		of->fp = stdout;
		return of;
	}
	if (!(flags & CP_OUTFILE_RENAME) && is_stream(path)) {
		of->fp = fopen(path, "we");
		if (!of->fp) {
			cp_error("cannot open '%s': %s", path, strerror(errno));
			free(of);
			return NULL;
		}
		of->path = xstrdup(path);
		of->stream = 1;
		return of;
	}
	of->path = xstrdup(path);
	fd = outfile_create(of);
	if (fd < 0 || !(of->fp = fdopen(fd, "w"))) {
		cp_error("cannot create '%s': %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(of->tmp);
			cp_tempfile__remove(of->listed);
		}
		free(of->tmp);
		free(of->path);
		free(of);
		return NULL;
	}
	return of;
}

FILE *cp_outfile__fp(struct cp_outfile *of)
{
	return of->fp;
}

int cp_outfile__close(struct cp_outfile *of)
{
	int ret = 0;

	if (!of->path || of->stream || of->closed)
		return 0;
	if (fflush(of->fp) || ferror(of->fp))
		ret = cp_error("cannot write '%s': %s", of->path, strerror(errno));
	if (fclose(of->fp) && !ret)
		ret = cp_error("cannot write '%s': %s", of->path, strerror(errno));
	of->fp = NULL;
	of->closed = 1;
	return ret;
}

int cp_outfile__commit(struct cp_outfile *of)
{
	int ret = 0;

	if (!of->path) {
		free(of);
		return 0;
	}
	if (of->stream) {
		int bad = fflush(of->fp) || ferror(of->fp);

		if ((fclose(of->fp) || bad) && errno != EPIPE)
			ret = cp_error("cannot write '%s': %s", of->path, strerror(errno));
		free(of->path);
		free(of);
		return ret;
	}
	if (!of->closed)
		ret = cp_outfile__close(of);
	if (!ret && rename(of->tmp, of->path))
		ret = cp_error("cannot write '%s': %s", of->path, strerror(errno));
	if (ret)
		unlink(of->tmp);
	cp_tempfile__remove(of->listed);
	free(of->tmp);
	free(of->path);
	free(of);
	return ret;
}

void cp_outfile__abort(struct cp_outfile *of)
{
	if (!of)
		return;
	if (of->stream) {
		fclose(of->fp);
	} else if (of->path) {
		if (!of->closed)
			fclose(of->fp);
		unlink(of->tmp);
		cp_tempfile__remove(of->listed);
	}
	free(of->tmp);
	free(of->path);
	free(of);
}

int cp_finish_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno == EPIPE)
			return 0;
		return cp_error("write failure on standard output: %s", strerror(errno));
	}
	if (fclose(stdout) && errno != EPIPE)
		return cp_error("close failed on standard output: %s", strerror(errno));
	return 0;
}

uint64_t cp_str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* MurmurHash3's 64-bit finaliser: every input bit reaches every output bit. */
uint64_t cp_u64_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

uint32_t cp_strtab__add(struct cp_strtab *t, const char *s)
{
	uint64_t i;

	/* Keep the load at most one half so that probe runs stay short. */
	if (!t->slot || (uint64_t)(t->n + 1) * 2 > t->mask + 1) {
		uint64_t slots = t->slot ? (t->mask + 1) * 2 : 64;

		free(t->slot);
		t->slot = xcalloc(slots, sizeof(*t->slot));
		t->mask = slots - 1;
		for (uint32_t k = 0; k < t->n; k++) {
			for (i = cp_str_hash(t->s[k]) & t->mask; t->slot[i]; i = (i + 1) & t->mask)
				;
			t->slot[i] = k + 1;
		}
	}
	for (i = cp_str_hash(s) & t->mask; t->slot[i]; i = (i + 1) & t->mask)
		if (!strcmp(t->s[t->slot[i] - 1], s))
			return t->slot[i] - 1;
	ALLOC_GROW(t->s, t->n + 1, t->alloc);
	t->s[t->n] = xstrdup(s);
	t->slot[i] = ++t->n;
	return t->n - 1;
}

void cp_strtab__release(struct cp_strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

void cp_u64map__init(struct cp_u64map *m, uint64_t hint)
{
	uint64_t slots = 16;

	while (slots < hint * 2)
		slots *= 2;
	m->keys = xcalloc(slots, sizeof(*m->keys));
	m->vals = xmalloc(slots * sizeof(*m->vals));
	memset(m->vals, 0xff, slots * sizeof(*m->vals));
	m->mask = slots - 1;
	m->count = 0;
}

void cp_u64map__release(struct cp_u64map *m)
{
	FREE_AND_NULL(m->keys);
	FREE_AND_NULL(m->vals);
}

/* Slot for key: its value is CP_U64MAP_NONE if absent (then the caller may fill it). */
static uint32_t *u64map_slot(struct cp_u64map *m, uint64_t key)
{
	uint64_t i;

	if ((m->count + 1) * 2 > m->mask + 1) {
		struct cp_u64map big;

		cp_u64map__init(&big, m->mask + 1);
		for (i = 0; i <= m->mask; i++)
			if (m->vals[i] != CP_U64MAP_NONE)
				*u64map_slot(&big, m->keys[i]) = m->vals[i], big.count++;
		cp_u64map__release(m);
		*m = big;
	}
	for (i = cp_u64_hash(key) & m->mask; m->vals[i] != CP_U64MAP_NONE; i = (i + 1) & m->mask)
		if (m->keys[i] == key)
			return &m->vals[i];
	m->keys[i] = key;
	return &m->vals[i];
}

uint32_t cp_u64map__get_or_add(struct cp_u64map *m, uint64_t key, uint32_t val)
{
	uint32_t *slot = u64map_slot(m, key);

	if (*slot == CP_U64MAP_NONE) {
		*slot = val;
		m->count++;
	}
	return *slot;
}

uint32_t cp_u64map__get(const struct cp_u64map *m, uint64_t key)
{
	for (uint64_t i = cp_u64_hash(key) & m->mask; m->vals[i] != CP_U64MAP_NONE; i = (i + 1) & m->mask)
		if (m->keys[i] == key)
			return m->vals[i];
	return CP_U64MAP_NONE;
}

char *cp_find_program(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char dflt[256];
	struct stat st;

	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) ? NULL : xstrdup(name);
	if (!path) {
		size_t n = confstr(_CS_PATH, dflt, sizeof(dflt));

		path = n && n <= sizeof(dflt) ? dflt : "/bin:/usr/bin";
	}
	for (p = path; p; p = *end ? end + 1 : NULL) {
		char *cand;

		end = strchrnul(p, ':');
		cand = end > p ? xstrfmt("%.*s/%s", (int)(end - p), p, name) : xstrfmt("./%s", name);
		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK))
			return cand;
		free(cand);
	}
	return NULL;
}

int cp_open_regular(const char *path, const char **why)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), fl;

	if (fd < 0) {
		if (why)
			*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st)) {
		int e = errno;

		if (why)
			*why = strerror(e);
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		if (why)
			*why = "not a regular file";
		close(fd);
		errno = EINVAL;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;

		if (why)
			*why = strerror(e);
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int cp_path_is_special(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISREG(st.st_mode);
}

static uint64_t saturations;

void cp_saturated(void)
{
	if (!saturations++)
		cp_warning("a sum of counts or times is too large: shown as the largest value "
			   "(18446744073709551615, saturated), not wrapped");
}

uint64_t cp_saturations(void)
{
	return saturations;
}

int cp_pidfd_targets(long pid, long *out, int max)
{
	char path[64], link[32], line[128];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	d = opendir(path);
	while (d && n < max && (e = readdir(d))) {
		char fdpath[300];
		ssize_t len;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "/proc/%ld/fd/%s", pid, e->d_name);
		len = readlink(fdpath, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strcmp(link, "anon_inode:[pidfd]"))
			continue;
		snprintf(fdpath, sizeof(fdpath), "/proc/%ld/fdinfo/%s", pid, e->d_name);
		f = fopen(fdpath, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "Pid:", 4)) {
				out[n++] = strtol(line + 4, NULL, 10);
				break;
			}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

const char *cp_proc_stat(long pid, char *buf, size_t size)
{
	char path[64];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p ? p + 1 : NULL;
}
