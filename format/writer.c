/*
 * writer.c - stream a profile file to disk (runtime side).
 *
 * Runs inside the profiled process at exit, so it uses only raw system
 * calls on a caller-owned struct: no malloc, no stdio, never exits.  The
 * layout reserves a full section table, streams the sections through a
 * buffer while computing the body CRC, then writes the header and renames
 * the temporary file over the final name, so a reader never sees half a
 * profile and a failed write leaves nothing behind.  The temporary file is
 * created exclusively (no symlink is followed) in the final name's directory,
 * with mode 0666 less the umask, like any file a program creates.
 *
 * The previous file at the final name is kept as NAME.old when its run had
 * ended before this one began; a profile of a run that overlapped this one
 * (two ranks or two runs writing one name) is never replaced: this profile
 * takes another name instead (see replace()).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#include "format/format.h"

#define HEADER_BYTES (sizeof(struct cp_file_header) + CP_MAX_SECTIONS * sizeof(struct cp_section_entry))

void (*cp_writer_tmp_hook)(const char *tmp, int live);

static void tmp_live(struct cp_writer *w, int live)
{
	if (cp_writer_tmp_hook)
		cp_writer_tmp_hook(w->tmp, live);
}

/*
 * The kernel's struct sigaction, passed to rt_sigaction as it is: the old
 * action is put back byte for byte.  (Where the kernel has no sa_restorer,
 * the mask lands in that field and comes back from it the same.)  The raw
 * call, not sigaction(): the runtime interposes that one, and the
 * program's recorded handlers must not change.
 */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

/* Signals a write may raise, ignored around it: SIGXFSZ and SIGPIPE. */
struct write_guard {
	int sig[2];		    /* the signals ignored, 0 for none */
	struct ksigaction old[2];   /* their dispositions before */
	unsigned long mask;	    /* the thread's signal mask before */
};

static int ignore(struct write_guard *g, int i, int sig)
{
	struct ksigaction ign = { .handler = (void *)SIG_IGN };

	if (syscall(SYS_rt_sigaction, sig, &ign, &g->old[i], sizeof(unsigned long)))
		return 0;
	g->sig[i] = sig;
	return 1;
}

/*
 * With a finite RLIMIT_FSIZE, a write past it raises SIGXFSZ; a write to a
 * pipe or socket whose reader is gone raises SIGPIPE.  Both kill by
 * default and would reach the program's handlers: ignored and unblocked in
 * this thread here (a blocked signal would stay pending), the write gets
 * EFBIG or EPIPE alone.  Only when it can happen: no signal is touched
 * otherwise.
 */
static void guard_begin(struct write_guard *g, int fd)
{
	unsigned long unblock = 0;
	struct rlimit rl;
	struct stat st;
	int n = 0;

	g->sig[0] = g->sig[1] = 0;
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && ignore(g, n, SIGXFSZ))
		unblock |= 1ul << (SIGXFSZ - 1), n++;
	if (!fstat(fd, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
	    ignore(g, n, SIGPIPE))
		unblock |= 1ul << (SIGPIPE - 1), n++;
	if (n && syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &unblock, &g->mask, sizeof(unsigned long)))
		g->mask = ~0ul; /* not unblocked: nothing to put back */
}

static void guard_end(const struct write_guard *g)
{
	int saved_errno = errno;

	if (g->sig[0] && g->mask != ~0ul)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &g->mask, NULL, sizeof(unsigned long));
	for (int i = 1; i >= 0; i--)
		if (g->sig[i])
			syscall(SYS_rt_sigaction, g->sig[i], &g->old[i], NULL, sizeof(unsigned long));
	errno = saved_errno;
}

static int fail(struct cp_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static int write_all(int fd, const void *buf, size_t len, off_t at)
{
	const char *p = buf;
	struct write_guard g;
	int ret = 0;

	guard_begin(&g, fd);
	while (len) {
		ssize_t n = at >= 0 ? pwrite(fd, p, len, at) : write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = -EIO;
			break;
		}
		p += n;
		len -= n;
		if (at >= 0)
			at += n;
	}
	guard_end(&g);
	return ret;
}

int cp_write_all(int fd, const void *buf, size_t len)
{
	int saved_errno = errno, ret = write_all(fd, buf, len, -1);

	errno = saved_errno;
	return ret;
}

static int flush_buf(struct cp_writer *w)
{
	int ret;

	if (!w->buf_len)
		return 0;
	ret = write_all(w->fd, w->buf, w->buf_len, -1);
	w->buf_len = 0;
	return ret ? fail(w, ret) : 0;
}

void cp_put_dec(char *buf, size_t size, size_t *pos, unsigned long v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && *pos + 1 < size)
		buf[(*pos)++] = tmp[--n];
	buf[*pos] = '\0';
}

void cp_writer__tmp_name(char *tmp, size_t cap, const char *path, unsigned long pid)
{
	size_t len = strlen(path), pos;

	if (len + 6 > cap)
		len = cap - 6;
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmp.", 6);
	pos = len + 5;
	cp_put_dec(tmp, cap, &pos, pid);
}

int cp_path_is_profile(const char *path)
{
	char magic[CP_MAGIC_LEN];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), ret;

	if (fd < 0)
		return 0;
	ret = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	      !memcmp(magic, CP_MAGIC, CP_MAGIC_LEN);
	close(fd);
	return ret;
}

int cp_writer__begin(struct cp_writer *w, const char *path)
{
	static const char zeros[HEADER_BYTES];
	size_t len = strlen(path);
	struct stat st;
	char link[8];
	ssize_t n;
	int ret;

	w->fd = -1;
	w->err = 0;
	w->off = 0;
	w->body_crc = 0;
	w->nsec = 0;
	w->in_section = 0;
	w->pool = NULL;
	w->pool_len = w->pool_cap = 0;
	w->buf_len = 0;
	w->min_reader = CP_MIN_READER;
	w->since_ns = 0;
	w->pid = (uint32_t)getpid();
	w->taken = 0;
	w->taken_pid = 0;
	w->taken_rank = CP_NO_RANK;
	memset(w->sec, 0, sizeof(w->sec));
	if (len == 0)
		return fail(w, -ENOENT);
	if (len >= sizeof(w->path))
		return fail(w, -ENAMETOOLONG);
	/*
	 * The final renames would move a directory aside as NAME.old, or put a
	 * regular file in the place of a device node (/dev/null, /dev/stdout
	 * through its link): only a regular file, or nothing, may be there.
	 */
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return fail(w, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL);
	/* Nor a link standing for a descriptor (/dev/stdout -> /proc/self/fd/1). */
	n = readlink(path, link, sizeof(link));
	if (n >= 6 && !memcmp(link, "/proc/", 6))
		return fail(w, -EINVAL);
	/*
	 * Nor a file that is not a profile (the program, someone's notes):
	 * only a profile or an empty file is moved aside as NAME.old.  A
	 * symlink is moved itself, its target untouched.
	 */
	if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_size && !cp_path_is_profile(path))
		return fail(w, -EEXIST);
	memcpy(w->path, path, len + 1);
	cp_writer__tmp_name(w->tmp, sizeof(w->tmp), path, (unsigned long)getpid());

	/*
	 * Never through a symlink, never into an existing file: O_EXCL fails on
	 * anything already at the name (a symlink included), which is then
	 * removed - the link itself, not its target - once, and tried again.
	 * Mode 0666 less the umask, as for any file the program creates.
	 */
	tmp_live(w, 1); /* before: the name is ours (it has our pid), removing it is right */
	w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (w->fd < 0 && errno == EEXIST && unlink(w->tmp) == 0)
		w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (w->fd < 0) {
		ret = -errno;
		tmp_live(w, 0);
		return fail(w, ret);
	}
	ret = write_all(w->fd, zeros, HEADER_BYTES, -1);
	if (ret) {
		fail(w, ret);
		cp_writer__abort(w);
		return w->err;
	}
	w->off = HEADER_BYTES;
	/* The empty string sits at offset 0, so a zeroed reference is valid. */
	cp_writer__string(w, "");
	return w->err;
}

static void end_section(struct cp_writer *w)
{
	if (w->in_section) {
		struct cp_section_entry *e = &w->sec[w->nsec - 1];

		e->size = w->off - e->offset;
		w->in_section = 0;
	}
}

int cp_writer__section(struct cp_writer *w, uint32_t kind, uint32_t entsize)
{
	if (w->err)
		return w->err;
	end_section(w);
	if (w->nsec == CP_MAX_SECTIONS)
		return fail(w, -E2BIG);
	w->sec[w->nsec].kind = kind;
	w->sec[w->nsec].entsize = entsize ? entsize : 1;
	w->sec[w->nsec].offset = w->off;
	w->nsec++;
	w->in_section = 1;
	return 0;
}

int cp_writer__put(struct cp_writer *w, const void *buf, size_t len)
{
	const char *p = buf;

	if (w->err)
		return w->err;
	w->body_crc = cp_crc32(w->body_crc, buf, len);
	w->off += len;
	while (len) {
		size_t room = sizeof(w->buf) - w->buf_len;
		size_t n = len < room ? len : room;

		memcpy(w->buf + w->buf_len, p, n);
		w->buf_len += n;
		p += n;
		len -= n;
		if (w->buf_len == sizeof(w->buf) && flush_buf(w))
			return w->err;
	}
	return 0;
}

uint32_t cp_writer__string(struct cp_writer *w, const char *s)
{
	size_t len;
	uint32_t off;

	if (!s || w->err)
		return CP_NO_STRING;
	len = strlen(s) + 1;
	if (w->pool_len + len > w->pool_cap) {
		size_t cap = w->pool_cap ? w->pool_cap : 65536;
		char *p;

		while (cap < w->pool_len + len)
			cap *= 2;
		if (cap >= CP_NO_STRING) {
			fail(w, -E2BIG);
			return CP_NO_STRING;
		}
		p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			fail(w, -ENOMEM);
			return CP_NO_STRING;
		}
		if (w->pool) {
			memcpy(p, w->pool, w->pool_len);
			munmap(w->pool, w->pool_cap);
		}
		w->pool = p;
		w->pool_cap = cap;
	}
	off = (uint32_t)w->pool_len;
	memcpy(w->pool + w->pool_len, s, len);
	w->pool_len += len;
	return off;
}

static void release_pool(struct cp_writer *w)
{
	if (w->pool)
		munmap(w->pool, w->pool_cap);
	w->pool = NULL;
	w->pool_len = w->pool_cap = 0;
}

/*
 * Put the finished temporary file in place, keeping what was there as
 * PATH.old (a profile, or whatever else: renames never follow symlinks).
 * Between the two renames PATH is briefly absent, never half-written.
 */
static int replace_old(struct cp_writer *w)
{
	char old[sizeof(w->path) + 4];
	size_t len = strlen(w->path);
	int kept;

	memcpy(old, w->path, len);
	memcpy(old + len, ".old", 5);
	kept = rename(w->path, old) == 0;
	if (rename(w->tmp, w->path) == 0)
		return 0;
	if (kept)
		rename(old, w->path);
	return -errno;
}

int cp_writer__other_name(char *out, size_t cap, const char *path, unsigned long pid, int n)
{
	size_t len = strlen(path), keep = len, pos;
	const char *tail = "";

	if (len > 6 && !strcmp(path + len - 6, ".cprof") && path[len - 7] != '/')
		keep = len - 6, tail = ".cprof";
	if (keep + 48 > cap)
		return -ENAMETOOLONG;
	memcpy(out, path, keep);
	pos = keep;
	out[pos++] = '.';
	cp_put_dec(out, cap, &pos, pid);
	if (n > 1) {
		out[pos++] = '-';
		cp_put_dec(out, cap, &pos, (unsigned long)n);
	}
	memcpy(out + pos, tail, strlen(tail) + 1);
	return 0;
}

/*
 * from to the name to, which must be free: -EEXIST if anything is there.
 * rename(RENAME_NOREPLACE); where the file system cannot (NFS, some
 * FUSE), link then unlink, which is as exclusive; where neither works,
 * a plain rename after a look, whose window two writers could meet in.
 */
static int place(const char *from, const char *to)
{
	struct stat st;

	if (!syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != EPERM && errno != EOPNOTSUPP)
		return -errno;
	if (!link(from, to)) {
		unlink(from);
		return 0;
	}
	if (errno == EEXIST)
		return -EEXIST;
	if (!lstat(to, &st))
		return -EEXIST;
	return rename(from, to) ? -errno : 0;
}

enum seen { SEEN_GONE, SEEN_EARLIER, SEEN_MEANWHILE };

/*
 * What stands at path: gone, from a run that ended before since_ns, or
 * one to keep (a run that overlapped, or what cannot be read as a profile
 * and is not older).  *st gets its lstat, *pid and *rank the profile's.
 */
static enum seen inspect(const char *path, uint64_t since_ns, struct stat *st, uint32_t *pid,
			 uint32_t *rank)
{
	struct cp_file_header h;
	struct cp_section_entry sec;
	uint64_t start = 0, duration = 0, end;
	int fd, meta = 0;

	*pid = 0;
	*rank = CP_NO_RANK;
	if (lstat(path, st))
		return errno == ENOENT ? SEEN_GONE : SEEN_MEANWHILE;
	end = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
	if (!S_ISREG(st->st_mode))
		return S_ISLNK(st->st_mode) && end < since_ns ? SEEN_EARLIER : SEEN_MEANWHILE;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? SEEN_GONE : SEEN_MEANWHILE;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && !memcmp(h.magic, CP_MAGIC, CP_MAGIC_LEN)) {
		for (uint32_t i = 0; i < h.nsections && i < 64; i++) {
			off_t at = (off_t)(sizeof(h) + i * sizeof(sec));

			if (at + (off_t)sizeof(sec) > (off_t)h.header_size ||
			    pread(fd, &sec, sizeof(sec), at) != (ssize_t)sizeof(sec))
				break;
			if (sec.kind == CP_SEC_META && sec.size >= 40 &&
			    pread(fd, pid, 4, (off_t)sec.offset) == 4 &&
			    pread(fd, &start, 8, (off_t)sec.offset + 24) == 8 &&
			    pread(fd, &duration, 8, (off_t)sec.offset + 32) == 8)
				meta = 1;
			if (sec.kind == CP_SEC_JOB && sec.size >= 4 &&
			    pread(fd, rank, 4, (off_t)sec.offset) != 4)
				*rank = CP_NO_RANK;
		}
	}
	close(fd);
	if (meta)
		end = start + duration;
	else if (st->st_size)
		*pid = 0; /* not a profile: its time is its mtime's */
	return end < since_ns ? SEEN_EARLIER : SEEN_MEANWHILE;
}

/*
 * Move what inspect() found at w->path (*was) to PATH.old.  It goes aside
 * under a name of ours first, and only if it is still what was seen: a
 * writer that put its profile at PATH since then gets it back (or, should
 * a third have come meanwhile, under its own other name; never lost).
 */
static void move_old(struct cp_writer *w, const struct stat *was)
{
	char aside[sizeof(w->path) + 40], old[sizeof(w->path) + 4];
	size_t len = strlen(w->path);
	struct stat now;
	uint32_t pid, rank;

	memcpy(old, w->path, len);
	memcpy(old + len, ".old", 5);
	cp_writer__tmp_name(aside, sizeof(aside), old, (unsigned long)w->pid);
	if (rename(w->path, aside))
		return;
	if (!lstat(aside, &now) && now.st_dev == was->st_dev && now.st_ino == was->st_ino) {
		rename(aside, old);
		return;
	}
	if (place(aside, w->path) != -EEXIST)
		return;
	inspect(aside, 0, &now, &pid, &rank);
	for (int n = 1; pid && n < 8; n++)
		if (!cp_writer__other_name(old, sizeof(old), w->path, pid, n) &&
		    place(aside, old) != -EEXIST)
			return;
}

/*
 * The no-replace rule (see cp_writer__finish).  Every step that puts a
 * file at a name is exclusive (place()), so of two writers that meet, one
 * gets the name and the other sees a whole profile there, never a half.
 */
static int replace(struct cp_writer *w)
{
	char base[sizeof(w->path)];
	int other = 0;

	if (!w->since_ns)
		return replace_old(w);
	memcpy(base, w->path, sizeof(base));
	for (int tries = 0; tries < 32; tries++) {
		struct stat st;
		uint32_t pid, rank;
		int ret = place(w->tmp, w->path);

		if (ret != -EEXIST)
			return ret;
		switch (inspect(w->path, w->since_ns, &st, &pid, &rank)) {
		case SEEN_GONE:
			break;
		case SEEN_EARLIER:
			/* Room is made at the name asked for only, never at another name. */
			if (!other) {
				move_old(w, &st);
				break;
			}
			/* fall through */
		case SEEN_MEANWHILE:
			if (!w->taken) {
				w->taken = 1;
				w->taken_pid = pid;
				w->taken_rank = rank;
			}
			if (cp_writer__other_name(w->path, sizeof(w->path), base, w->pid, ++other))
				return -ENAMETOOLONG;
			break;
		}
	}
	return -EEXIST;
}

int cp_writer__finish(struct cp_writer *w, uint64_t features)
{
	struct {
		struct cp_file_header h;
		struct cp_section_entry sec[CP_MAX_SECTIONS];
	} hdr;
	int ret;

	if (!w->err) {
		cp_writer__section(w, CP_SEC_STRINGS, 1);
		cp_writer__put(w, w->pool, w->pool_len);
		end_section(w);
	}
	release_pool(w);
	if (w->err || flush_buf(w)) {
		cp_writer__abort(w);
		return w->err;
	}

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.h.magic, CP_MAGIC, CP_MAGIC_LEN);
	hdr.h.header_size = sizeof(hdr);
	hdr.h.version = CP_VERSION;
	hdr.h.min_reader = w->min_reader;
	hdr.h.endian = 1;
	hdr.h.ptr_size = sizeof(void *);
	hdr.h.nsections = w->nsec;
	hdr.h.features = features;
	hdr.h.file_size = w->off;
	hdr.h.body_crc = w->body_crc;
	memcpy(hdr.sec, w->sec, sizeof(w->sec));
	hdr.h.header_crc = cp_crc32(0, &hdr, sizeof(hdr));

	ret = write_all(w->fd, &hdr, sizeof(hdr), 0);
	if (close(w->fd) && !ret)
		ret = -errno;
	w->fd = -1;
	if (!ret)
		ret = replace(w);
	if (ret) {
		fail(w, ret);
		unlink(w->tmp);
	}
	tmp_live(w, 0);
	return w->err;
}

void cp_writer__abort(struct cp_writer *w)
{
	release_pool(w);
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
		unlink(w->tmp);
		tmp_live(w, 0);
	}
	if (!w->err)
		w->err = -ECANCELED;
}

/* The largest vDSO image believed: real ones are two to four pages. */
#define VDSO_MAX_BYTES (1u << 20)

const void *cp_vdso_image(size_t *size, uint64_t *link_base)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	uint64_t end, first = UINT64_MAX;

	*size = 0;
	*link_base = 0;
	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum ||
	    eh->e_phoff > VDSO_MAX_BYTES || eh->e_phnum > 64)
		return NULL;
	/* Its extent: the program headers' and the section headers' ends, as the kernel maps it. */
	end = eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum < 1024 &&
	    eh->e_shoff < VDSO_MAX_BYTES &&
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > end)
		end = eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_offset > VDSO_MAX_BYTES || ph->p_filesz > VDSO_MAX_BYTES)
			return NULL;
		if (ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
		if (first == UINT64_MAX)
			first = ph->p_vaddr - ph->p_offset;
	}
	if (first == UINT64_MAX || end > VDSO_MAX_BYTES)
		return NULL;
	*size = (size_t)end;
	*link_base = first;
	return base;
}

int cp_writer__vdso(struct cp_writer *w, uint64_t at)
{
	uint64_t link_base;
	size_t size;
	const void *image = at ? cp_vdso_image(&size, &link_base) : NULL;
	struct cp_image_rec rec;

	if (!image)
		return w->err;
	rec = (struct cp_image_rec){
		.load_bias = at - link_base,
		.offset = 0,
		.size = size,
		.name = cp_writer__string(w, "[vdso]"),
	};
	cp_writer__section(w, CP_SEC_IMAGES, sizeof(rec));
	cp_writer__put(w, &rec, sizeof(rec));
	cp_writer__section(w, CP_SEC_IMAGE_DATA, 1);
	return cp_writer__put(w, image, size);
}
