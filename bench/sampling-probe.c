/*
 * sampling-probe.c - which per-thread CPU-time sampler this machine offers,
 * and what each one sees (issue 20: a time source for sampled CPU time on
 * the exact call tree).
 *
 *   cc -O1 -o sampling-probe bench/sampling-probe.c
 *   ./sampling-probe perf|timer|none [HZ]
 *
 * perf:  a perf_event_open cpu-clock event of the calling thread with
 *        sigtrap=1 and exclude_kernel=1: a synchronous SIGTRAP on each
 *        overflow, raised only in user mode (Linux 5.13; allowed at
 *        perf_event_paranoid=2 without privileges).
 * timer: timer_create(CLOCK_THREAD_CPUTIME_ID) with SIGEV_THREAD_ID and
 *        SIGPROF: counts user and system CPU time, but expires on the
 *        scheduler tick only.
 *
 * It runs three phases on one thread, a user-mode loop, a loop of cheap
 * system calls, and a mix of read, epoll_wait and nanosleep, and prints per
 * phase the CPU time, the samples taken (per CPU second) and how many calls
 * failed with EINTR.  No threads, no allocation in the handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long samples, sink;

static void on_sample(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	samples++;
}

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int start_perf(long period_ns)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = (unsigned long long)period_ns;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.sigtrap = 1;
	a.remove_on_exec = 1; /* required with sigtrap */
	return syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) < 0 ? -1 : 0;
}

static int start_timer(long period_ns)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
	struct itimerspec its = { { 0, period_ns }, { 0, period_ns } };
	timer_t t;

	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t))
		return -1;
	return timer_settime(t, 0, &its, NULL);
}

static void phase(const char *how, const char *name, double c0, long s0, int eintr, int calls)
{
	double c = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;

	printf("%-5s %-15s %7.3f cpu s %7ld samples %7.0f/cpu s %5d EINTR in %d calls\n", how, name,
	       c, samples - s0, (samples - s0) / c, eintr, calls);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "perf";
	long hz = argc > 2 ? atol(argv[2]) : 1000, s0;
	struct sigaction sa = { .sa_sigaction = on_sample, .sa_flags = SA_SIGINFO | SA_RESTART };
	int ep = epoll_create1(0), z = open("/dev/zero", O_RDONLY), eintr = 0, calls = 0;
	static char buf[1 << 16];
	struct epoll_event ev;
	double c0;

	if (hz < 1 || hz > 100000 || ep < 0 || z < 0)
		return 2;
	sigemptyset(&sa.sa_mask);
	if (!strcmp(how, "perf")) {
		sigaction(SIGTRAP, &sa, NULL);
		if (start_perf(1000000000L / hz)) {
			printf("perf: cannot open a sigtrap cpu-clock event: %s\n", strerror(errno));
			return 1;
		}
	} else if (!strcmp(how, "timer")) {
		sigaction(SIGPROF, &sa, NULL);
		if (start_timer(1000000000L / hz)) {
			printf("timer: cannot create a thread CPU-time timer: %s\n", strerror(errno));
			return 1;
		}
	} else if (strcmp(how, "none")) {
		return 2;
	}
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), s0 = samples;
	for (long i = 0; i < 400000000L; i++)
		sink += i;
	phase(how, "user loop", c0, s0, 0, 0);
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), s0 = samples;
	for (long i = 0; i < 3000000L; i++)
		syscall(SYS_getppid);
	phase(how, "system calls", c0, s0, 0, 3000000);
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), s0 = samples;
	for (int i = 0; i < 20000; i++) {
		struct timespec ts = { 0, 1000 };

		if (read(z, buf, sizeof(buf)) < 0 && errno == EINTR)
			eintr++;
		if (epoll_wait(ep, &ev, 1, 0) < 0 && errno == EINTR)
			eintr++;
		if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
			eintr++;
		calls += 3;
	}
	phase(how, "mixed calls", c0, s0, eintr, calls);
	return 0;
}
