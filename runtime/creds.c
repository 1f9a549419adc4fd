/*
 * creds.c - the watcher acts with no more rights than the program has now.
 *
 * The watcher (watch.c) is cloned from the program, so it starts with the
 * program's credentials of that moment.  A program may drop rights later
 * (a root daemon becoming nobody) and then write anything into the memory
 * it shares with the watcher.  The rule: nothing the program can write may
 * steer a process with more rights than the program has now.  So before it
 * acts (a snapshot, the profile of a killed program), the watcher reads the
 * program's credentials in /proc/PID/status (through a directory
 * descriptor opened at spawn: once the program is reaped, reads fail rather
 * than show a process that reused the pid) and takes them itself: groups,
 * gids, uids (real, effective, saved, file system) and capability sets.
 * It can only lose rights this way, never gain them, as the kernel checks
 * every step; then it reads its own credentials back and acts only if they
 * are the program's.  A leader that ended by pthread_exit keeps the
 * credentials it had: a live thread's are read then (once none is left,
 * the leader's are all there is, which a program that changed its
 * credentials after its leader ended and then died by a signal can make
 * stale: its profile is then written with the leader's).
 *
 * When the program's credentials cannot be read any more (it was reaped
 * before the watcher looked), the last ones seen stand only if the program
 * could not have changed them itself: all uids equal, all gids equal, no
 * permitted or ambient capability.  Otherwise the watcher cannot tell, and
 * writes nothing.  (`callprof record` keeps the program it started
 * unreaped until the watchers are done, so this concerns fork children
 * that their parent reaps at once.)
 *
 * Raw system calls throughout: glibc's set*id() signal every thread listed
 * in the process's memory, and the watcher's copy of that list names the
 * program's threads, not its own single one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/internal.h"

static const char *field(const char *buf, const char *name)
{
	const char *p = buf;
	size_t len = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, len))
			return p + len;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* Decimal or hexadecimal numbers after p, at most max; the count, or -1. */
static int numbers(const char *p, int hex, uint64_t *out, int max)
{
	int n = 0;

	while (p) {
		uint64_t v = 0;
		int digits = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		for (;; p++, digits++) {
			int d;

			if (*p >= '0' && *p <= '9')
				d = *p - '0';
			else if (hex && *p >= 'a' && *p <= 'f')
				d = *p - 'a' + 10;
			else
				break;
			v = v * (hex ? 16 : 10) + (uint64_t)d;
		}
		if (!digits)
			return *p == '\n' || !*p ? n : -1;
		if (n == max)
			return -1;
		out[n++] = v;
	}
	return -1;
}

/* NAME (a status file, relative to DIRFD) read into BUF, '\0'-ended: its length, or -errno. */
static ssize_t read_status(int dirfd, const char *name, char *buf, size_t size)
{
	ssize_t len = 0, r;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	while (len < (ssize_t)size - 1 && (r = read(fd, buf + len, size - 1 - (size_t)len)) > 0)
		len += r;
	err = len > 0 || errno != ESRCH ? -EIO : -ESRCH;
	close(fd);
	if (len <= 0)
		return err;
	buf[len] = '\0';
	return len;
}

/* Does the status text BUF say its task has ended (a zombie, or dead)? */
static int ended(const char *buf)
{
	const char *s = field(buf, "State:");

	while (s && (*s == ' ' || *s == '\t'))
		s++;
	return s && (*s == 'Z' || *s == 'X');
}

/*
 * A leader that ended by pthread_exit while the other threads run on keeps
 * the credentials it had then: a later setuid of the program's changes
 * the live threads' only.  So their status is read instead: the first live
 * task's, into BUF; its length, or -errno when none is live (the program
 * has ended, and the leader's are the last there are).
 */
static ssize_t live_task_status(int dirfd, char *buf, size_t size)
{
	char dents[4096] __attribute__((aligned(8))), name[48];
	int tfd = openat(dirfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ssize_t len = -ESRCH;
	long n;

	if (tfd < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, tfd, dents, sizeof(dents))) > 0) {
		for (long off = 0; off < n;) {
			const struct dirent64 *d = (const void *)(dents + off);

			off += d->d_reclen;
			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			snprintf(name, sizeof(name), "%.20s/status", d->d_name);
			len = read_status(tfd, name, buf, size);
			if (len > 0 && !ended(buf))
				goto out;
			len = -ESRCH;
		}
	}
out:
	close(tfd);
	return len;
}

int cp_creds__read(int dirfd, struct cp_creds *c)
{
	char buf[8192], live[8192];
	uint64_t v[CP_CREDS_MAX_GROUPS];
	ssize_t len = read_status(dirfd, "status", buf, sizeof(buf));
	int n;

	if (len < 0)
		return (int)len;
	if (ended(buf) && live_task_status(dirfd, live, sizeof(live)) > 0)
		memcpy(buf, live, sizeof(buf));
	memset(c, 0, sizeof(*c));
	if (numbers(field(buf, "Uid:"), 0, v, 4) != 4)
		return -EIO;
	for (int i = 0; i < 4; i++)
		c->uid[i] = (uint32_t)v[i];
	if (numbers(field(buf, "Gid:"), 0, v, 4) != 4)
		return -EIO;
	for (int i = 0; i < 4; i++)
		c->gid[i] = (uint32_t)v[i];
	n = numbers(field(buf, "Groups:"), 0, v, CP_CREDS_MAX_GROUPS);
	if (n < 0)
		return -E2BIG;
	c->ngroups = (uint32_t)n;
	for (int i = 0; i < n; i++)
		c->groups[i] = (uint32_t)v[i];
	if (numbers(field(buf, "CapInh:"), 1, &c->cap_inh, 1) != 1 ||
	    numbers(field(buf, "CapPrm:"), 1, &c->cap_prm, 1) != 1 ||
	    numbers(field(buf, "CapEff:"), 1, &c->cap_eff, 1) != 1)
		return -EIO;
	/* Older kernels have no ambient set: none. */
	if (numbers(field(buf, "CapAmb:"), 1, &c->cap_amb, 1) != 1)
		c->cap_amb = 0;
	return 0;
}

int cp_creds__fixed(const struct cp_creds *c)
{
	for (int i = 1; i < 4; i++)
		if (c->uid[i] != c->uid[0] || c->gid[i] != c->gid[0])
			return 0;
	return !c->cap_prm && !c->cap_amb;
}

static int same(const struct cp_creds *a, const struct cp_creds *b)
{
	if (memcmp(a->uid, b->uid, sizeof(a->uid)) || memcmp(a->gid, b->gid, sizeof(a->gid)) ||
	    a->ngroups != b->ngroups || a->cap_prm != b->cap_prm || a->cap_eff != b->cap_eff ||
	    a->cap_inh != b->cap_inh || a->cap_amb != b->cap_amb)
		return 0;
	return !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0]));
}

int cp_creds__become(const struct cp_creds *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	struct cp_creds now;
	gid_t groups[CP_CREDS_MAX_GROUPS];
	int self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	if (self < 0)
		return -errno;
	if (!cp_creds__read(self, &now) && same(&now, c)) {
		close(self);
		return 0; /* the common case: nothing changed */
	}
	for (uint32_t i = 0; i < c->ngroups; i++)
		groups[i] = (gid_t)c->groups[i];
	/* Keep the permitted set across the uid change; capset trims it below. */
	syscall(SYS_prctl, PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L);
	/* Each step may fail when it changes nothing we lack the right to: the check decides. */
	syscall(SYS_setgroups, (long)c->ngroups, groups);
	syscall(SYS_setresgid, (long)c->gid[0], (long)c->gid[1], (long)c->gid[2]);
	syscall(SYS_setfsgid, (long)c->gid[3]);
	syscall(SYS_setresuid, (long)c->uid[0], (long)c->uid[1], (long)c->uid[2]);
	syscall(SYS_setfsuid, (long)c->uid[3]);
	memset(data, 0, sizeof(data));
	data[0].effective = (uint32_t)c->cap_eff;
	data[1].effective = (uint32_t)(c->cap_eff >> 32);
	data[0].permitted = (uint32_t)c->cap_prm;
	data[1].permitted = (uint32_t)(c->cap_prm >> 32);
	data[0].inheritable = (uint32_t)c->cap_inh;
	data[1].inheritable = (uint32_t)(c->cap_inh >> 32);
	syscall(SYS_capset, &hdr, data);
	if (!c->cap_amb)
		syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L);
	syscall(SYS_prctl, PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L);
	ret = cp_creds__read(self, &now);
	close(self);
	if (ret)
		return ret;
	return same(&now, c) ? 0 : -EPERM;
}
