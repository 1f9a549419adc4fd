/*
 * s-attach-busy.c - a target for callprof attach's safety tests: threads
 * that compute, sleep, read a pipe and wait in epoll, each checking that
 * nothing strange happened to it, until told to stop.
 *
 *   t-attach-busy READY STOP [OPTION...]
 *
 * It starts its threads, writes its pid to READY (by rename, so that the
 * file appears whole), and runs until the file STOP exists (or for two
 * minutes).  Then it prints "done threads=N anomalies=A" and exits 0 when
 * no anomaly was seen, 1 otherwise; each anomaly is named on stderr.  An
 * anomaly: a computed result that is wrong, a blocking call that failed
 * (EINTR, say), a sleep that was cut short, a pipe byte lost or repeated.
 * The output and status are the same whether or not callprof attached.
 *
 * Options (before the threads start):
 *   dlopen-slow LIB   a thread dlopens LIB, whose constructor holds the
 *                     loader's lock for as long as LIB says (s-lib-slowctor.c)
 *   seccomp-perf      a seccomp filter kills the process on perf_event_open
 *   seccomp-clone     a seccomp filter kills the process on clone and clone3
 *   seccomp-memfd     a seccomp filter kills the process on memfd_create (what
 *                     the runtime maps its sleds' return stubs with)
 *   asleep            no other thread: the main thread naps 20 ms a round,
 *                     so that an attach nearly always finds it in nanosleep
 *   setuid UID        the process drops to user UID when the file STOP.uid exists
 *   siginfo FILE      SIGUSR1 and SIGUSR2 are handled: each must come with what
 *                     its sender said (sigqueue to one thread: SI_QUEUE, the
 *                     thread's tid as value); at the end, FILE says how many
 *                     were sent
 *   vfork-wait FILE   the main thread vforks a child that waits for FILE,
 *                     then runs true(1)
 *   lib LIB           dlopen LIB (s-lib.c) first; the computing thread calls
 *                     its slib_compute(10) each round, which must give 29524
 *   fork-exit FILE    when FILE exists, the main thread forks a child that
 *                     computes and ends with _exit(0); its pid goes to
 *                     FILE.child
 *   leader-exit       (last) the main thread ends with pthread_exit at once;
 *                     another thread does all the above
 *   exec FILE         when FILE exists, the main thread computes once more
 *                     and runs sh(1) by execlp, which prints the "done" line
 *                     4 s later (the output is the same)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;
static volatile int stopping;
static long (*slib_compute)(int);
static volatile long anomalies;
static volatile int ids_changing; /* setresuid signals every thread (glibc's SIGSETXID) */
static const char *siginfo_file;   /* SIGUSR1s and 2s come: their handler cuts waits short */
static volatile long usr1_seen, usr1_wrong;
static int pipefd[2];

static void anomaly(const char *what, long v)
{
	if (v == EINTR && (ids_changing || siginfo_file))
		return; /* the program's own signal, as without callprof */
	__atomic_fetch_add(&anomalies, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "anomaly: %s (%ld)\n", what, v);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Not in a thread's anomalies: a signal handler may not use stdio. */
static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;

	(void)sig;
	(void)ctx;
	__atomic_fetch_add(&usr1_seen, 1, __ATOMIC_RELAXED);
	if (si->si_code != SI_QUEUE || si->si_value.sival_int != (int)syscall(SYS_gettid))
		__atomic_fetch_add(&usr1_wrong, 1, __ATOMIC_RELAXED);
	errno = saved;
}

NOINLINE static long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE static void compute(void)
{
	long v = fib(18);

	if (v != 2584)
		anomaly("fib(18) is wrong", v);
	sink += v;
}

NOINLINE static void nap(long ns)
{
	struct timespec ts = { 0, ns };
	double t0 = now();

	if (nanosleep(&ts, NULL))
		anomaly("nanosleep failed", errno);
	else if (now() - t0 < (double)ns / 1e9 * 0.99)
		anomaly("nanosleep was cut short", (long)((now() - t0) * 1e9));
}

static void *computer(void *arg)
{
	while (!stopping) {
		compute();
		if (slib_compute && slib_compute(10) != 29524)
			anomaly("slib_compute(10) is wrong", 0);
	}
	return arg;
}

static void *sleeper(void *arg)
{
	while (!stopping)
		nap(3 * 1000 * 1000);
	return arg;
}

NOINLINE static void take(long *expect)
{
	unsigned char c;
	ssize_t n = read(pipefd[0], &c, 1);

	if (n != 1)
		anomaly("read of the pipe failed", n < 0 ? errno : 0);
	else if (c != (unsigned char)*expect)
		anomaly("a pipe byte was lost or repeated", c);
	++*expect;
}

/* Reads the bytes main writes, each one more than the last (mod 256). */
static void *reader(void *arg)
{
	long expect = 0;

	while (!stopping)
		take(&expect);
	return arg;
}

NOINLINE static void poll_once(int ep)
{
	struct epoll_event ev;
	int n = epoll_wait(ep, &ev, 1, 7);

	if (n < 0)
		anomaly("epoll_wait failed", errno);
	else if (n > 0)
		anomaly("epoll_wait saw an event of no descriptor", n);
}

static void *poller(void *arg)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		anomaly("epoll_create1 failed", errno);
	while (!stopping && ep >= 0)
		poll_once(ep);
	return arg;
}

static void *slow_loader(void *arg)
{
	if (!dlopen((const char *)arg, RTLD_NOW))
		anomaly("dlopen of the slow library failed", 0);
	return NULL;
}

static int no_clone; /* a filter forbids clone */

/*
 * LeakSanitizer's check at exit (a sanitized test build) runs in a thread
 * it clones: not under a filter that forbids clone.
 */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return no_clone;
}

/* A seccomp filter: KILL_PROCESS on the system calls nrs[0..n), all else allowed. */
static void forbid(const int *nrs, int n)
{
	struct sock_filter f[16];
	struct sock_fprog prog;
	int k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (int i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		exit(2);
	}
}

static int busy_main(int argc, char **argv)
{
	void *(*kinds[])(void *) = { computer, sleeper, reader, poller };
	pthread_t th[8];
	char tmp[4096], uidfile[4096];
	const char *slow = NULL, *vfork_file = NULL, *fork_file = NULL, *exec_file = NULL;
	long setuid_to = -1, written = 0;
	int nth = 0, no_threads = 0, status;
	long nap_ns = 2 * 1000 * 1000;
	double t0;
	FILE *f;

	if (argc < 3)
		return 2;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "dlopen-slow") && i + 1 < argc) {
			slow = argv[++i];
		} else if (!strcmp(argv[i], "seccomp-perf")) {
			forbid((int[]){ SYS_perf_event_open }, 1);
		} else if (!strcmp(argv[i], "seccomp-memfd")) {
			forbid((int[]){ SYS_memfd_create }, 1);
		} else if (!strcmp(argv[i], "seccomp-clone")) {
			no_clone = 1;
			forbid((int[]){ SYS_clone, SYS_clone3 }, 2);
			no_threads = 1;
		} else if (!strcmp(argv[i], "asleep")) {
			/* the main thread alone, nearly always in nanosleep */
			no_threads = 1;
			nap_ns = 20 * 1000 * 1000;
		} else if (!strcmp(argv[i], "siginfo") && i + 1 < argc) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sa.sa_sigaction = on_usr1;
			sa.sa_flags = SA_SIGINFO | SA_RESTART;
			siginfo_file = argv[++i];
			if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGUSR2, &sa, NULL))
				return perror("sigaction"), 2;
		} else if (!strcmp(argv[i], "setuid") && i + 1 < argc) {
			setuid_to = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "vfork-wait") && i + 1 < argc) {
			vfork_file = argv[++i];
		} else if (!strcmp(argv[i], "fork-exit") && i + 1 < argc) {
			fork_file = argv[++i];
		} else if (!strcmp(argv[i], "exec") && i + 1 < argc) {
			exec_file = argv[++i];
		} else if (!strcmp(argv[i], "lib") && i + 1 < argc) {
			void *h = dlopen(argv[++i], RTLD_NOW);

			if (!h || !(slib_compute = (long (*)(int))dlsym(h, "slib_compute"))) {
				fprintf(stderr, "dlopen: %s\n", dlerror());
				return 2;
			}
		} else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (pipe2(pipefd, O_CLOEXEC))
		return perror("pipe2"), 2;
	/* seccomp-clone forbids threads: the main thread alone then */
	for (int i = 0; i < 4 && !no_threads; i++)
		if (!pthread_create(&th[nth], NULL, kinds[i], NULL))
			nth++;
	if (slow && !pthread_create(&th[nth], NULL, slow_loader, (void *)slow))
		nth++;
	if (ready_file(argv[1]))
		return perror(argv[1]), 2;
	snprintf(uidfile, sizeof(uidfile), "%s.uid", argv[2]);
	t0 = now();
	while (access(argv[2], F_OK) && now() - t0 < 120) {
		unsigned char c = (unsigned char)written;

		if (setuid_to >= 0 && !access(uidfile, F_OK)) {
			ids_changing = 1;
			if (setresgid((gid_t)setuid_to, (gid_t)setuid_to, (gid_t)setuid_to) ||
			    setresuid((uid_t)setuid_to, (uid_t)setuid_to, (uid_t)setuid_to))
				anomaly("setresuid failed", errno);
			prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
			setuid_to = -1;
		}
		if (vfork_file) {
			pid_t child = vfork();

			if (!child) {
				struct timespec ms = { 0, 10 * 1000 * 1000 };

				/* a minute at most: never an orphan for ever if the test dies */
				for (int i = 0; i < 6000 && access(vfork_file, F_OK); i++)
					nanosleep(&ms, NULL);
				execlp("true", "true", (char *)NULL);
				_exit(127);
			}
			waitpid(child, NULL, 0);
			vfork_file = NULL;
		}
		if (fork_file && !access(fork_file, F_OK)) {
			pid_t child = fork();

			if (!child) {
				for (int i = 0; i < 100; i++)
					compute();
				_exit(0);
			}
			snprintf(tmp, sizeof(tmp), "%s.child", fork_file);
			f = fopen(tmp, "w");
			if (!f || fprintf(f, "%d\n", (int)child) < 0 || fclose(f))
				anomaly("cannot write the child's pid", errno);
			if (waitpid(child, &status, 0) != child || status)
				anomaly("the child did not end with status 0", status);
			fork_file = NULL;
		}
		if (exec_file && !access(exec_file, F_OK)) {
			char line[64];

			/*
			 * One call of main's own after FILE is seen: the other
			 * threads may be held (t0514's exec at the switch), and
			 * main may have left the window's start in nap().
			 */
			compute();
			snprintf(line, sizeof(line), "done threads=%d anomalies=%ld", nth + 1, anomalies);
			fflush(stdout);
			execlp("sh", "sh", "-c", "sleep 4; echo \"$0\"", line, (char *)NULL);
			anomaly("execlp failed", errno);
			exec_file = NULL;
		}
		if (nth > 2 && write(pipefd[1], &c, 1) == 1)
			written++;
		compute();
		nap(nap_ns);
	}
	stopping = 1;
	for (int i = 0; i < nth; i++) {
		if (i == 2) {
			/* the reader: one byte more ends its read */
			unsigned char c = (unsigned char)written;

			if (write(pipefd[1], &c, 1) != 1)
				anomaly("write to the pipe failed", errno);
		}
		pthread_join(th[i], NULL);
	}
	if (siginfo_file) {
		long sent = -1;

		f = fopen(siginfo_file, "r");
		if (!f || fscanf(f, "%ld", &sent) != 1)
			anomaly("cannot read how many SIGUSR1 were sent", errno);
		if (f)
			fclose(f);
		if (usr1_seen != sent)
			anomaly("SIGUSR1s and 2s came, not as many as were sent", usr1_seen);
		if (usr1_wrong)
			anomaly("SIGUSR1s or 2s came with another siginfo than their sender's", usr1_wrong);
	}
	printf("done threads=%d anomalies=%ld\n", nth + 1, anomalies);
	return anomalies ? 1 : 0;
}

static int boss_argc;
static char **boss_argv;

static void *boss(void *arg)
{
	exit(busy_main(boss_argc, boss_argv));
	return arg;
}

/* The last option "leader-exit": the main thread ends (pthread_exit), another does its work. */
int main(int argc, char **argv)
{
	pthread_t b;

	if (argc > 3 && !strcmp(argv[argc - 1], "leader-exit")) {
		boss_argc = argc - 1;
		boss_argv = argv;
		if (pthread_create(&b, NULL, boss, NULL))
			return 2;
		pthread_exit(NULL);
	}
	return busy_main(argc, argv);
}
