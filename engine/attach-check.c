/*
 * attach-check.c - can `callprof attach` attach to PID?  Reads /proc and the
 * program's files; changes nothing in the process (docs/callprof-attach.1.md,
 * REFUSALS).
 *
 * Each refusal is one line naming the process, what stands in the way and
 * what to do.  The order gives the most useful line first: what the
 * process is (none, a thread, ended, a kernel thread), whose it is, what
 * keeps tracers out (undumpable, a tracer already there, Yama, any other
 * refusal of the kernel), then what its program is (32-bit, already
 * recorded, static, not instrumented).  The first group reads only what
 * /proc shows everyone (status, stat, the owner of /proc/PID), so that a
 * process we may not read still gets its true reason; the program's files
 * and maps are read only once the kernel lets us.
 *
 * Another user's process is refused even as root: the profile is written
 * by the process and read back by the tool, and root lends the process no
 * rights, so callprof runs as the process's user.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "engine/attach.h"
#include "symbolize/elffile.h"
#include "util/util.h"

/* The process's /proc directory to read its memory, maps and files through (cp_attach__proc). */
static char procbuf[64];
#define PROC(pid) cp_attach__proc(pid, procbuf, sizeof(procbuf))

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */
#define CAP_SYS_PTRACE_BIT 19

/*
 * The Yama sysctl.  CALLPROF_TEST_YAMA names another file to read instead:
 * a test hook (tests/e2e/t0512-attach-refusals.sh), for machines without
 * Yama; it is not a setting, and it cannot grant anything.
 */
#define YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"
#define YAMA_TEST_ENV "CALLPROF_TEST_YAMA"

/* What /proc/PID/status and /proc/PID/stat say about the process. */
struct proc_facts {
	pid_t tgid;	/* Tgid: the thread group (process) PID belongs to */
	pid_t tracer;	/* TracerPid, 0 if none */
	unsigned uid[4]; /* Uid: real, effective, saved, file system */
	unsigned gid[4]; /* Gid: the same */
	int nuid, ngid;	/* how many of them were read */
	char state;	/* stat's state letter (R S D T t Z X ...) */
	pid_t ppid;	/* stat's parent */
	unsigned long flags; /* stat's PF_* flags */
};

/* A file the process has mapped (/proc/PID/maps), once per path. */
struct mapped {
	char *path;	      /* as maps shows it, " (deleted)" cut off */
	unsigned long start, end; /* its first executable mapping (map_files' name) */
	dev_t dev;
	unsigned long ino;
	int deleted;	      /* the file was removed or replaced since it was mapped */
	int exec;	      /* it has an executable mapping: a module */
};

/* /proc/WHICH/status: WHICH is "PID" or "PID/task/TID". */
static int read_status_of(const char *which, struct proc_facts *pf)
{
	char path[96], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", which);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		long v;

		if (sscanf(line, "Tgid: %ld", &v) == 1)
			pf->tgid = (pid_t)v;
		else if (sscanf(line, "TracerPid: %ld", &v) == 1)
			pf->tracer = (pid_t)v;
		else if (!strncmp(line, "Uid:", 4))
			pf->nuid = sscanf(line + 4, "%u %u %u %u", &pf->uid[0], &pf->uid[1],
					  &pf->uid[2], &pf->uid[3]);
		else if (!strncmp(line, "Gid:", 4))
			pf->ngid = sscanf(line + 4, "%u %u %u %u", &pf->gid[0], &pf->gid[1],
					  &pf->gid[2], &pf->gid[3]);
	}
	free(line);
	fclose(f);
	return pf->tgid > 0 && pf->nuid == 4 && pf->ngid == 4 ? 0 : -1;
}

static int read_status(pid_t pid, struct proc_facts *pf)
{
	char which[32];

	snprintf(which, sizeof(which), "%d", (int)pid);
	return read_status_of(which, pf);
}

/* State, parent and flags from /proc/PID/stat (the comm may hold ')' and spaces). */
static int read_stat(pid_t pid, char *state, pid_t *ppid, unsigned long *flags)
{
	char buf[1024];
	const char *p = cp_proc_stat(pid, buf, sizeof(buf));
	long pp;

	if (!p || sscanf(p, " %c %ld %*d %*d %*d %*d %lu", state, &pp, flags) != 3)
		return -1;
	*ppid = (pid_t)pp;
	return 0;
}

/*
 * The process's name (its main thread's).  A recorded program's thread
 * lends its name to a watcher it starts, "callprof-watch", for as long as
 * the start takes (runtime/watch.c): a name read then is read again, for
 * up to 100 ms, so that messages name the program.
 */
static void read_comm(pid_t pid, char *buf, size_t cap)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	for (int tries = 0; tries < 50; tries++) {
		buf[0] = '\0';
		f = fopen(path, "re");
		if (f) {
			if (fgets(buf, (int)cap, f))
				buf[strcspn(buf, "\n")] = '\0';
			fclose(f);
		}
		if (strcmp(buf, "callprof-watch"))
			break;
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	if (!buf[0])
		snprintf(buf, cap, "?");
}

static const char *user_name(unsigned uid, char *buf, size_t cap)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw && pw->pw_name[0])
		snprintf(buf, cap, "%s", pw->pw_name);
	else
		snprintf(buf, cap, "%u", uid);
	return buf;
}

static const char *group_name(unsigned gid, char *buf, size_t cap)
{
	struct group *gr = getgrgid((gid_t)gid);

	if (gr && gr->gr_name[0])
		snprintf(buf, cap, "%s", gr->gr_name);
	else
		snprintf(buf, cap, "%u", gid);
	return buf;
}

/* Is capability bit in our effective set? */
static int has_capability(int bit)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long long eff = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && !found && getline(&line, &cap, f) > 0)
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	free(line);
	if (f)
		fclose(f);
	return found && (eff >> bit & 1);
}

/* Is CAP_SYS_PTRACE in our effective set (Yama's exception)? */
static int may_ptrace_any(void)
{
	return has_capability(CAP_SYS_PTRACE_BIT);
}

/* Is pid our descendant (Yama scope 1's rule)? */
static int is_descendant(pid_t pid)
{
	pid_t self = getpid();

	for (int i = 0; i < 65536 && pid > 1; i++) {
		char state;
		unsigned long flags;
		pid_t parent;

		if (read_stat(pid, &state, &parent, &flags))
			return 0;
		if (parent == self)
			return 1;
		pid = parent;
	}
	return 0;
}

/* kernel.yama.ptrace_scope (or the test hook's file): 0 to 3; 0 without Yama. */
static int yama_scope(int *hooked)
{
	const char *path = getenv(YAMA_TEST_ENV);
	int v = 0;
	FILE *f;

	*hooked = path && *path;
	f = fopen(*hooked ? path : YAMA_SCOPE, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1 || v < 0)
		v = 0;
	fclose(f);
	return v > 3 ? 3 : v;
}

/* The user-id refusals; 0 when every id of the process is ours. */
static int check_owner(const struct cp_attach_target *t, const struct proc_facts *pf)
{
	unsigned me = (unsigned)getuid(), mygid = (unsigned)getgid();
	char a[64], b[64], c[64], d[64];

	for (int i = 0; i < 3; i++) {
		if (pf->uid[i] == me)
			continue;
		if (pf->uid[0] == pf->uid[1] && pf->uid[1] == pf->uid[2]) {
			user_name(pf->uid[0], a, sizeof(a));
			return cp_error("attach: process %d (%s) belongs to user %s, not to you (%s): "
					"run callprof as that user, e.g. sudo -u %s callprof attach %d",
					(int)t->pid, t->comm, a, user_name(me, b, sizeof(b)), a,
					(int)t->pid);
		}
		return cp_error("attach: process %d (%s) has mixed user ids (real %s, effective %s, "
				"saved %s): a setuid program or one switching users; callprof attaches "
				"only to processes whose ids are all one user's, run as that user",
				(int)t->pid, t->comm, user_name(pf->uid[0], a, sizeof(a)),
				user_name(pf->uid[1], b, sizeof(b)), user_name(pf->uid[2], c, sizeof(c)));
	}
	for (int i = 0; i < 3; i++) {
		/* the effective group first: the one it works with */
		unsigned g = pf->gid[i == 0 ? 1 : i == 1 ? 0 : 2];

		if (g == mygid)
			continue;
		return cp_error("attach: process %d (%s) runs as group %s, not your group %s (a setgid "
				"program, or one that changed its group): callprof attaches only to "
				"processes whose user and group ids are all yours", (int)t->pid, t->comm,
				group_name(g, c, sizeof(c)), group_name(mygid, d, sizeof(d)));
	}
	return 0;
}

/* The tracer of a thread of pid that has one (its id in *tid), or 0. */
static pid_t traced_thread(pid_t pid, pid_t *tid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	pid_t found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && !found && (e = readdir(d))) {
		struct proc_facts tf = { 0 };
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (*end || v <= 0)
			continue;
		snprintf(path, sizeof(path), "%d/task/%ld", (int)pid, v);
		if (!read_status_of(path, &tf) && tf.tracer) {
			found = tf.tracer;
			*tid = (pid_t)v;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * What keeps a tracer out, in the kernel's order (__ptrace_may_access,
 * then Yama).  The files of /proc/PID (not the directory itself, which
 * keeps showing the effective ids) belong to the process's effective ids
 * while it is dumpable and to root when it is not, so an undumpable
 * process of a user other than root shows there; root's own cannot be
 * told apart (and root may trace it).  Opening /proc/PID/mem asks the kernel the very
 * question PTRACE_ATTACH asks (PTRACE_MODE_ATTACH, Yama and security
 * modules included) without stopping or touching the process.
 */
static int check_tracing(const struct cp_attach_target *t, const struct proc_facts *pf)
{
	char path[64], tcomm[32];
	struct stat st;
	int scope, hooked, fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->pid);
	if (!stat(path, &st) && pf->uid[1] != 0 && (st.st_uid != pf->uid[1] || st.st_gid != pf->gid[1]))
		return cp_error("attach: process %d (%s) made itself undumpable (prctl "
				"PR_SET_DUMPABLE 0, or a change of its user or group ids): it does not "
				"want to be traced; run it under callprof record instead",
				(int)t->pid, t->comm);
	if (pf->tracer) {
		read_comm(pf->tracer, tcomm, sizeof(tcomm));
		return cp_error("attach: process %d (%s) is already traced by process %d (%s): a "
				"process has one tracer at a time; detach or end that one (a debugger, "
				"strace) first", (int)t->pid, t->comm, (int)pf->tracer, tcomm);
	}
	/* A tracer may hold some threads only (strace -p TID, a debugger's thread). */
	{
		pid_t tid, tracer = traced_thread(t->pid, &tid);

		if (tracer) {
			read_comm(tracer, tcomm, sizeof(tcomm));
			return cp_error("attach: thread %d of process %d (%s) is traced by process %d "
					"(%s): a thread has one tracer at a time; detach or end that one "
					"(a debugger, strace) first", (int)tid, (int)t->pid, t->comm,
					(int)tracer, tcomm);
		}
	}

	snprintf(path, sizeof(path), "%s/mem", PROC(t->pid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err = errno;
	else
		close(fd);

	scope = yama_scope(&hooked);
	if (scope >= 3)
		return cp_error("attach: process %d (%s): ptrace is disabled on this machine "
				"(kernel.yama.ptrace_scope = 3, until the next boot), so callprof attach "
				"cannot work here; run the program under callprof record",
				(int)t->pid, t->comm);
	if (scope == 2 && !may_ptrace_any())
		return cp_error("attach: process %d (%s): only root may use ptrace on this machine "
				"(kernel.yama.ptrace_scope = 2): lower it as root with sysctl "
				"kernel.yama.ptrace_scope=0, or run the program under callprof record",
				(int)t->pid, t->comm);
	/*
	 * Scope 1 also lets in a tracer the process named with
	 * prctl(PR_SET_PTRACER), which /proc does not show: the kernel's
	 * answer to the open above does.  Under the test hook that answer is
	 * not Yama's, so the exception counts as absent.
	 */
	if (scope == 1 && !may_ptrace_any() && !is_descendant(t->pid) && (err || hooked))
		return cp_error("attach: process %d (%s) is not a descendant of callprof, and "
				"kernel.yama.ptrace_scope = 1 lets a process trace only its "
				"descendants: lower it as root with sysctl kernel.yama.ptrace_scope=0, "
				"or run the program under callprof record", (int)t->pid, t->comm);
	if (err == ENOENT || err == ESRCH)
		return cp_error("attach: process %d (%s) has ended", (int)t->pid, t->comm);
	if (err)
		return cp_error("attach: process %d (%s): the kernel does not let callprof trace it "
				"(%s: %s): a security module (AppArmor, SELinux) or a container's "
				"policy may forbid ptrace", (int)t->pid, t->comm, path, strerror(err));
	return 0;
}

static void mapped__free(struct mapped *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

/* The files pid has mapped, each once; NULL with *n == 0 if maps cannot be read. */
static struct mapped *read_maps(pid_t pid, size_t *n)
{
	char path[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	struct mapped *m = NULL;
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "%s/maps", PROC(pid));
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		unsigned long start, end, ino;
		unsigned maj, min;
		char perms[8];
		int off = 0, deleted = 0;
		char *file;
		size_t len, i;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*x %x:%x %lu %n", &start, &end, perms, &maj, &min, &ino,
			   &off) != 6 || !off || !ino)
			continue;
		file = line + off;
		if (file[0] != '/')
			continue;
		len = strlen(file);
		if (len > 10 && !strcmp(file + len - 10, " (deleted)")) {
			file[len - 10] = '\0';
			deleted = 1;
		}
		for (i = 0; i < *n; i++)
			if (!strcmp(m[i].path, file))
				break;
		if (i == *n) {
			ALLOC_GROW(m, *n + 1, alloc);
			m[i] = (struct mapped){ .path = xstrdup(file), .start = start, .end = end,
						.dev = makedev(maj, min), .ino = ino };
			(*n)++;
		}
		m[i].deleted |= deleted;
		if (strchr(perms, 'x') && !m[i].exec) {
			m[i].exec = 1;
			m[i].start = start;
			m[i].end = end;
		}
	}
	free(line);
	fclose(f);
	return m;
}

/*
 * Open module m of pid as the process sees it: through its root (another
 * mount namespace, a chroot), and a replaced file through map_files (the
 * mapped inode itself; root only).  NULL if it cannot be read.
 */
static struct cp_elf *open_module(pid_t pid, const struct mapped *m)
{
	char *path;
	struct cp_elf *e;

	if (m->deleted)
		path = xstrfmt("%s/map_files/%lx-%lx", PROC(pid),
			       m->start, m->end);
	else
		path = xstrfmt("%s/root%s", PROC(pid), m->path);
	e = cp_elf__open(path, NULL);
	free(path);
	return e;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The ELF header's class and machine of /proc/PID/exe; -1 if unreadable or not ELF. */
static int exe_class(pid_t pid, int *cls, unsigned *machine)
{
	char path[64];
	Elf64_Ehdr eh; /* e_ident and e_machine sit at the same offsets in Elf32_Ehdr */
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/exe", PROC(pid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, &eh, sizeof(eh), 0);
	close(fd);
	if (n < (ssize_t)(offsetof(Elf64_Ehdr, e_machine) + sizeof(eh.e_machine)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	*cls = eh.e_ident[EI_CLASS];
	*machine = eh.e_machine;
	return 0;
}

/*
 * t's sleds cannot be patched, for the reason why: with hooks too, they
 * are left alone (no_sleds) and the hooks serve; with only sleds, t is
 * refused, remedy after the rebuild.  0, or -1 with the error said.
 */
static int sleds_left_alone(struct cp_attach_target *t, int reason, const char *why,
			    const char *remedy)
{
	if (t->hook_modules) {
		t->no_sleds = reason;
		return 0;
	}
	return cp_error("attach: process %d (%s) %s; rebuild it with callprof cc --hooks, or %s",
			(int)t->pid, t->comm, why, remedy);
}

/* Does e import the enter hook, list patchable entries?  Counted in t. */
static void count_kinds(struct cp_elf *e, struct cp_attach_target *t)
{
	uint64_t size = 0;

	if (cp_elf__symbol_kind(e, "__cyg_profile_func_enter") & CP_ELF_SYM_IMPORTED)
		t->hook_modules++;
	if (!cp_elf__section(e, "__patchable_function_entries", NULL, &size) && size >= 8) {
		t->sled_modules++;
		if (cp_elf__symbol_kind(e, "__cxa_begin_catch") & CP_ELF_SYM_IMPORTED)
			t->sled_catch++;
	}
}

/* A module's later mappings (one per segment): counted once, at its first. */
static int seen_before(const struct mapped *m, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (m[j].exec && m[j].ino == m[i].ino && m[j].dev == m[i].dev)
			return 1;
	return 0;
}

/* Does a thread of pid run with a CET user shadow stack (x86_Thread_features: shstk)? */
static int shadow_stacks(pid_t pid)
{
	char path[64], line[256];
	struct dirent *d;
	DIR *dir;
	int on = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && !on && (d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", (int)pid, d->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "x86_Thread_features:", 20) && strstr(line + 20, "shstk"))
				on = 1;
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return on;
}

/* What the program is: 32-bit, recorded already, static, not instrumented. */
static int check_program(struct cp_attach_target *t)
{
	char path[64], interp[PATH_MAX];
	struct mapped *m;
	struct stat st;
	struct cp_elf *exe;
	size_t n;
	int cls, others = 0, ret = -1;
	unsigned machine;
	const char *replaced = NULL, *records = NULL;

	if (exe_class(t->pid, &cls, &machine))
		return cp_error("attach: process %d (%s): cannot read its program %s as ELF",
				(int)t->pid, t->comm, t->exe);
	if (cls != ELFCLASS64)
		return cp_error("attach: process %d (%s) is a 32-bit program: callprof attaches to "
				"64-bit (x86-64) programs only; rebuild it as a 64-bit program",
				(int)t->pid, t->comm);
#if defined(__x86_64__)
	if (machine != EM_X86_64)
		return cp_error("attach: process %d (%s) is a program for another machine (ELF "
				"machine %u): callprof attaches to 64-bit (x86-64) programs only",
				(int)t->pid, t->comm, machine);
#endif

	snprintf(path, sizeof(path), "%s/exe", PROC(t->pid));
	exe = cp_elf__open(path, &st);
	if (!exe)
		return cp_error("attach: process %d (%s): cannot read its program %s: %s",
				(int)t->pid, t->comm, t->exe, strerror(errno));
	m = read_maps(t->pid, &n);
	if (!m) {
		cp_elf__close(exe);
		return cp_error("attach: process %d (%s): cannot read /proc/%d/maps: %s",
				(int)t->pid, t->comm, (int)t->pid, strerror(errno));
	}

	/* The runtime of callprof record, or linked in (libcallprof.a). */
	for (size_t i = 0; i < n; i++) {
		const char *b = base_name(m[i].path);

		if (!strncmp(b, "libcallprof", 11) && strstr(b, ".so")) {
			ret = cp_error("attach: process %d (%s) is already recorded by callprof (%s "
				       "is loaded): use callprof dump %d for a snapshot",
				       (int)t->pid, t->comm, b, (int)t->pid);
			goto out;
		}
	}
	if (cp_elf__symbol_kind(exe, "callprof__get_api") & CP_ELF_SYM_DEFINED)
		records = t->exe;
	for (size_t i = 0; i < n && !records; i++) {
		struct cp_elf *e;

		/* a copy an earlier attach left mapped is not a recording */
		if (!m[i].exec || strstr(base_name(m[i].path), "callprof-attach-") ||
		    (m[i].ino == st.st_ino && m[i].dev == st.st_dev))
			continue;
		e = open_module(t->pid, &m[i]);
		if (e && (cp_elf__symbol_kind(e, "callprof__get_api") & CP_ELF_SYM_DEFINED))
			records = m[i].path;
		cp_elf__close(e);
	}
	if (records) {
		ret = cp_error("attach: process %d (%s) records itself: %s has the callprof runtime "
			       "linked in (libcallprof.a), and writes its profile when it exits",
			       (int)t->pid, t->comm, base_name(records));
		goto out;
	}

		/* Static: no dynamic loader, hence no dlopen to load the runtime with. */
	for (size_t i = 0; i < n; i++)
		others += m[i].exec && !(m[i].ino == st.st_ino && m[i].dev == st.st_dev);
	if (cp_elf__interp(exe, interp, sizeof(interp)) && !others) {
		ret = cp_error("attach: process %d (%s) is statically linked: it has no dynamic "
			       "loader to load the callprof runtime with; run it under callprof record "
			       "(with libcallprof.a linked in)", (int)t->pid, t->comm);
		goto out;
	}

	/*
	 * Instrumented: a module binds __cyg_profile_func_enter at run time
	 * (hooks), or lists patchable entries (sleds).  Either is enough.
	 */
	count_kinds(exe, t);
	for (size_t i = 0; i < n; i++) {
		struct cp_elf *e;

		if (!m[i].exec || (m[i].ino == st.st_ino && m[i].dev == st.st_dev) ||
		    strstr(base_name(m[i].path), "callprof-attach-") || seen_before(m, i))
			continue;
		e = open_module(t->pid, &m[i]);
		if (!e && m[i].deleted && !replaced)
			replaced = m[i].path;
		if (e)
			count_kinds(e, t);
		cp_elf__close(e);
	}
	if (!t->hook_modules && !t->sled_modules) {
		ret = cp_error("attach: process %d (%s) was built with neither -finstrument-functions "
			       "nor -fpatchable-function-entry: neither %s nor a library it loaded "
			       "calls __cyg_profile_func_enter or has patchable entries%s%s%s; rebuild "
			       "it with callprof cc (sleds, or --hooks), or profile it as it is with "
			       "callprof record --sample", (int)t->pid, t->comm, base_name(t->exe),
			       replaced ? " (" : "", replaced ? replaced : "",
			       replaced ? " was replaced on disk since it was loaded, and not checked)"
					: "");
		goto out;
	}
	/* CET user shadow stacks: a replaced return address faults at its return. */
	if (t->sled_modules && shadow_stacks(t->pid)) {
		ret = sleds_left_alone(t, CP_NO_SLEDS_CET,
				       "runs with CET shadow stacks, which forbid replacing return "
				       "addresses: its sleds cannot be patched",
				       "profile it with callprof record --sample");
		if (ret)
			goto out;
	}
	/*
	 * C++ that catches: an exception thrown in the window through a frame
	 * whose return address is a stub would find no unwind entry for it
	 * and end in std::terminate (the attached runtime has no unwinder
	 * wrappers yet, docs/limitations.md).  Its sleds are left alone.
	 */
	if (t->sled_modules && !t->no_sleds && t->sled_catch) {
		ret = sleds_left_alone(t, CP_NO_SLEDS_CATCH,
				       "is C++ that catches exceptions, which callprof attach cannot "
				       "yet let through patched sleds",
				       "run it under callprof record");
		if (ret)
			goto out;
	}
	ret = 0;
out:
	mapped__free(m, n);
	cp_elf__close(exe);
	return ret;
}

/* How many threads of pid have not ended (not zombies). */
int cp_attach__live_threads(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char state;
		pid_t parent;
		unsigned long flags;
		long v = strtol(e->d_name, NULL, 10);

		if (v > 0 && !read_stat((pid_t)v, &state, &parent, &flags) && state != 'Z' &&
		    state != 'X')
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

const char *cp_attach__proc(pid_t pid, char *buf, size_t size)
{
	char path[64], state;
	struct dirent *e;
	pid_t parent;
	unsigned long flags;
	DIR *d;

	snprintf(buf, size, "/proc/%d", (int)pid);
	if (read_stat(pid, &state, &parent, &flags) || (state != 'Z' && state != 'X'))
		return buf;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		long v = strtol(e->d_name, NULL, 10);

		if (v > 0 && !read_stat((pid_t)v, &state, &parent, &flags) && state != 'Z' &&
		    state != 'X') {
			snprintf(buf, size, "/proc/%d/task/%ld", (int)pid, v);
			break;
		}
	}
	if (d)
		closedir(d);
	return buf;
}

/* Is the namespace of kind ns ("pid", "mnt") of process pid ours?  1 yes, 0 no, -1 unknown. */
static int same_namespace(pid_t pid, const char *ns)
{
	char mine[64], theirs[64], path[64];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	a = readlink(path, mine, sizeof(mine));
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	b = readlink(path, theirs, sizeof(theirs));
	if (a <= 0 || b <= 0)
		return -1;
	return a == b && !memcmp(mine, theirs, (size_t)a);
}

/*
 * The process opens what callprof gives it (the runtime copy, the
 * filters, the log) as /proc/CALLPROFPID/fd/N: it must see callprof's
 * pid, so it must be in callprof's PID namespace.
 */
static int check_namespace(const struct cp_attach_target *t)
{
	if (same_namespace(t->pid, "pid") == 0)
		return cp_error("attach: process %d (%s) runs in another PID namespace (a "
				"container): it cannot open what callprof gives it; run callprof "
				"attach inside that namespace (e.g. in the container)", (int)t->pid,
				t->comm);
	return 0;
}

int cp_attach__check_output(const struct cp_attach_target *t, const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *there;
	struct stat ours, theirs;
	int ret = 0;

	if (same_namespace(t->pid, "mnt") != 0) {
		free(dir);
		return 0;
	}
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	there = xstrfmt("%s/root%s", PROC(t->pid), dir);
	if (stat(dir, &ours) || stat(there, &theirs) || ours.st_dev != theirs.st_dev ||
	    ours.st_ino != theirs.st_ino)
		ret = cp_error("attach: process %d (%s) runs in another mount namespace, where %s is "
			       "not the directory callprof sees: give -o a directory the process "
			       "shares with you (its writes would go elsewhere)", (int)t->pid, t->comm,
			       dir);
	free(there);
	free(dir);
	return ret;
}

/* The bit of CAP_SYS_ADMIN in our effective capabilities (PTRACE_SECCOMP_GET_FILTER). */
#define CAP_SYS_ADMIN_BIT 21

/*
 * Seccomp: a filter may kill the process for a system call of callprof's
 * runtime (perf_event_open, clone for its watcher, ...).  The engine reads
 * the filters and judges them once it holds the threads (attach-ptrace.c,
 * judge_filters); that needs CAP_SYS_ADMIN.  Strict mode allows nothing the runtime does.
 */
int cp_attach__seccomp_mode(pid_t pid, pid_t tid)
{
	return (int)cp_attach__status_field(pid, tid, "Seccomp:", 10, 0);
}

uint64_t cp_attach__status_field(pid_t pid, pid_t tid, const char *key, int base, uint64_t missing)
{
	char path[64], line[256];
	size_t len = strlen(key);
	uint64_t v = missing;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len)) {
			v = strtoull(line + len, NULL, base);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static int check_seccomp(const struct cp_attach_target *t)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int mode = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		long v = strtol(e->d_name, NULL, 10);
		int m = v > 0 ? cp_attach__seccomp_mode(t->pid, (pid_t)v) : 0;

		if (m > mode)
			mode = m;
	}
	if (d)
		closedir(d);
	if (mode == 1)
		return cp_error("attach: process %d (%s) runs in seccomp strict mode: any system call "
				"of callprof's runtime would kill it", (int)t->pid, t->comm);
	if (mode == 2 && !has_capability(CAP_SYS_ADMIN_BIT))
		return cp_error("attach: process %d (%s) runs under a seccomp filter, which callprof "
				"can read only with CAP_SYS_ADMIN (as root): without it, it cannot tell "
				"whether the filter kills the process for a system call of callprof's "
				"runtime; run the program under callprof record", (int)t->pid, t->comm);
	return 0;
}

int cp_attach__check(pid_t pid, struct cp_attach_target *t)
{
	struct proc_facts pf = { 0 };
	char path[64];
	ssize_t n;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (read_status(pid, &pf) || read_stat(pid, &pf.state, &pf.ppid, &pf.flags))
		return cp_error("attach: no process %d (ps -e lists the running processes)", (int)pid);
	read_comm(pid, t->comm, sizeof(t->comm));
	t->uid = (uid_t)pf.uid[0];
	if (pf.tgid != pid) {
		char leader[32];

		read_comm(pf.tgid, leader, sizeof(leader));
		return cp_error("attach: %d is a thread of process %d (%s): attach to %d", (int)pid,
				(int)pf.tgid, leader, (int)pf.tgid);
	}
	/* A leader that ended (pthread_exit) while its threads run is a zombie of a live process. */
	if ((pf.state == 'Z' || pf.state == 'X') && !cp_attach__live_threads(pid))
		return cp_error("attach: process %d (%s) has ended (a zombie its parent has not "
				"reaped): nothing to attach to", (int)pid, t->comm);
	if (pf.flags & PF_KTHREAD)
		return cp_error("attach: process %d (%s) is a kernel thread: it runs no program to "
				"attach to", (int)pid, t->comm);
	if (check_owner(t, &pf) || check_tracing(t, &pf) || check_namespace(t))
		return -1;

	snprintf(path, sizeof(path), "%s/exe", PROC(pid));
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	if (n < 0)
		return cp_error("attach: process %d (%s): cannot read %s: %s", (int)pid, t->comm,
				path, strerror(errno));
	t->exe[n] = '\0';
	return check_program(t) || check_seccomp(t) ? -1 : 0;
}
