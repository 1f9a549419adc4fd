/*
 * s-attach-kill.c - the target of t0550 (callprof attach killed at each of
 * its phases): threads that compute, sleep and pass bytes through a pipe,
 * each checking that nothing strange happened to it, and a main thread
 * that waits in read(2) holding state that a call of callprof's made on it
 * (the thread attach prefers) must give back whole.
 *
 *   t-attach-kill READY STOP
 *
 * It starts its threads, writes its pid to READY (by rename, so that the
 * file appears whole) and runs until the file STOP exists (two minutes at
 * most).  Then it prints "done threads=4 anomalies=A" and exits 0 when no
 * anomaly was seen, 1 otherwise; each anomaly is named on stderr.
 *
 * The main thread waits with a raw read system call, with every vector
 * register (xmm0-15) holding a known pattern, its SSE and x87 rounding
 * set to truncate, SIGUSR2 and SIGWINCH blocked, an alternate signal stack
 * and errno set: each must be as it was after every byte.  Anomalies of
 * the others: a wrong result, a blocking call that failed (EINTR, say), a
 * sleep cut short, a pipe byte lost or repeated.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;
static volatile int stopping;
static volatile long anomalies;
static int pipefd[2];

static void anomaly(const char *what, long v)
{
	__atomic_fetch_add(&anomalies, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "anomaly: %s (%ld)\n", what, v);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE static void compute(void)
{
	long v = fib(16);

	if (v != 987)
		anomaly("fib(16) is wrong", v);
	sink += v;
}

static void *computer(void *arg)
{
	while (!stopping)
		compute();
	return arg;
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

/* Writes a byte every 2 ms, each one more than the last (mod 256). */
static void *writer(void *arg)
{
	for (long n = 0; !stopping; n++) {
		unsigned char c = (unsigned char)n;

		if (write(pipefd[1], &c, 1) != 1)
			anomaly("write to the pipe failed", errno);
		nap(2 * 1000 * 1000);
	}
	return arg;
}

/*
 * One byte by a raw read(2), xmm0-15 loaded with pattern[] around it;
 * what they held after it goes to got[].  -1, or the byte.
 */
static long raw_read(const unsigned char pattern[16][16], unsigned char got[16][16])
{
	unsigned char c = 0;
	long ret;

	__asm__ volatile(
		"movdqu 0(%[p]), %%xmm0\n\tmovdqu 16(%[p]), %%xmm1\n\t"
		"movdqu 32(%[p]), %%xmm2\n\tmovdqu 48(%[p]), %%xmm3\n\t"
		"movdqu 64(%[p]), %%xmm4\n\tmovdqu 80(%[p]), %%xmm5\n\t"
		"movdqu 96(%[p]), %%xmm6\n\tmovdqu 112(%[p]), %%xmm7\n\t"
		"movdqu 128(%[p]), %%xmm8\n\tmovdqu 144(%[p]), %%xmm9\n\t"
		"movdqu 160(%[p]), %%xmm10\n\tmovdqu 176(%[p]), %%xmm11\n\t"
		"movdqu 192(%[p]), %%xmm12\n\tmovdqu 208(%[p]), %%xmm13\n\t"
		"movdqu 224(%[p]), %%xmm14\n\tmovdqu 240(%[p]), %%xmm15\n\t"
		"syscall\n\t"
		"movdqu %%xmm0, 0(%[g])\n\tmovdqu %%xmm1, 16(%[g])\n\t"
		"movdqu %%xmm2, 32(%[g])\n\tmovdqu %%xmm3, 48(%[g])\n\t"
		"movdqu %%xmm4, 64(%[g])\n\tmovdqu %%xmm5, 80(%[g])\n\t"
		"movdqu %%xmm6, 96(%[g])\n\tmovdqu %%xmm7, 112(%[g])\n\t"
		"movdqu %%xmm8, 128(%[g])\n\tmovdqu %%xmm9, 144(%[g])\n\t"
		"movdqu %%xmm10, 160(%[g])\n\tmovdqu %%xmm11, 176(%[g])\n\t"
		"movdqu %%xmm12, 192(%[g])\n\tmovdqu %%xmm13, 208(%[g])\n\t"
		"movdqu %%xmm14, 224(%[g])\n\tmovdqu %%xmm15, 240(%[g])\n\t"
		: "=a"(ret)
		: "a"((long)SYS_read), "D"((long)pipefd[0]), "S"(&c), "d"(1L), [p] "r"(pattern),
		  [g] "r"(got)
		: "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
		  "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return ret == 1 ? c : -1;
}

/* The main thread's wait: every byte, then its state checked. */
NOINLINE static void take(long *expect)
{
	static unsigned char pattern[16][16], got[16][16];
	static char altstack[64 << 10];
	static int ready;
	unsigned int mxcsr = 0;
	unsigned short cw = 0;
	sigset_t want, cur;
	stack_t ss;
	long c;

	sigemptyset(&want);
	sigaddset(&want, SIGUSR2);
	sigaddset(&want, SIGWINCH);
	if (!ready) {
		unsigned int m = 0x7f80 | 0x6000; /* exceptions masked, round toward zero */
		unsigned short x = 0x0f7f;	   /* the same for x87 */

		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 16; j++)
				pattern[i][j] = (unsigned char)(i * 16 + j + 1);
		__asm__ volatile("ldmxcsr %0" : : "m"(m));
		__asm__ volatile("fldcw %0" : : "m"(x));
		pthread_sigmask(SIG_BLOCK, &want, NULL);
		ss.ss_sp = altstack;
		ss.ss_size = sizeof(altstack);
		ss.ss_flags = 0;
		if (sigaltstack(&ss, NULL))
			anomaly("sigaltstack failed", errno);
		ready = 1;
	}
	errno = 4242;
	c = raw_read((const unsigned char(*)[16])pattern, got);
	if (errno != 4242)
		anomaly("errno changed across a read", errno);
	if (c < 0)
		anomaly("read of the pipe failed", c);
	else if (c != (*expect & 255))
		anomaly("a pipe byte was lost or repeated", c);
	++*expect;
	if (memcmp(pattern, got, sizeof(got)))
		anomaly("a vector register changed across a read", 0);
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	if ((mxcsr & 0xffc0) != (0x7f80 | 0x6000))
		anomaly("MXCSR changed across a read", mxcsr);
	if (cw != 0x0f7f)
		anomaly("the x87 control word changed across a read", cw);
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) || !sigismember(&cur, SIGUSR2) ||
	    !sigismember(&cur, SIGWINCH) || sigismember(&cur, SIGUSR1))
		anomaly("the signal mask changed across a read", 0);
	if (sigaltstack(NULL, &ss) || ss.ss_sp != altstack || ss.ss_size != sizeof(altstack) ||
	    ss.ss_flags)
		anomaly("the alternate signal stack changed across a read", ss.ss_flags);
}

int main(int argc, char **argv)
{
	void *(*kinds[])(void *) = { computer, computer, writer };
	pthread_t th[3];
	long expect = 0;
	double t0;

	if (argc < 3)
		return 2;
	if (pipe(pipefd))
		return perror("pipe"), 2;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, kinds[i], NULL))
			return perror("pthread_create"), 2;
	if (ready_file(argv[1]))
		return perror(argv[1]), 2;
	t0 = now();
	while (access(argv[2], F_OK) && now() - t0 < 120)
		take(&expect);
	stopping = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("done threads=4 anomalies=%ld\n", anomalies);
	return anomalies ? 1 : 0;
}
