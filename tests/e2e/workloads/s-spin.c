/*
 * s-spin: two siblings under one parent, spin4 doing four times the work of
 * spin1, so that their self times stand in a ratio of about 4:
 *
 *   main -> run -> spin1, spin4
 *
 * Both spend their time in burn(), one uninstrumented (hence invisible:
 * its time is its caller's self time) and not inlined function, so that
 * the two run the very same machine code: two copies of a loop can differ
 * in speed by 2x on one machine from their alignment alone.  The loop is a
 * serial xorshift chain that -O2 can neither vectorise nor fold.
 *
 * The work is measured in the thread's own CPU time, not in iterations:
 * a count tuned on one machine runs 2x shorter on the next, and whatever a
 * test expects of a length of time (enough samples, a full sample ring)
 * would hold on one machine only.  CPU time is also what load cannot
 * stretch: preemption adds to the clock, not to it.
 *
 *   t-spin         spin1 burns 25 ms of CPU time, spin4 100 ms
 *   t-spin Nms     spin1 burns N ms, spin4 4N ms
 *   t-spin N       spin1 burns N iterations, spin4 4N (a fixed amount of
 *                  work, whatever it costs here)
 *   t-spin W P     each burns its work in P pieces, each followed by a call
 *                  of tick(), which does nothing but run the hooks: in cpu
 *                  mode they drain the thread's sample ring, which a stretch
 *                  of over 0.2 s without a hook overflows (at the default
 *                  rate).  Adds the paths main;run;spin1;tick and
 *                  main;run;spin4;tick, P calls each.
 *   t-spin W P no-thread-clock
 *                  first installs a seccomp filter that fails the system
 *                  call reading another clock than the process's or this
 *                  thread's own CPU clock (the form pthread_getcpuclockid
 *                  gives, which callprof's runtime uses): the runtime then
 *                  cannot read the thread's CPU clock at all.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include "workload.h"

/* The default work: spin1's CPU time, in ms. */
#define SPIN_MS 25

/* Iterations between two looks at the CPU clock: well under 1 ms. */
#define CHUNK 20000L

volatile long sink;

NOINSTR __attribute__((noinline)) static void burn(long n)
{
	unsigned long x = (unsigned long)sink | 1;

	for (long i = 0; i < n; i++) {	/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = (long)x;
}

static long pieces = 1;
static int timed; /* the work is nanoseconds of CPU time, not iterations */

NOINSTR static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* n iterations, or (timed) n ns of this thread's CPU time; no hook meanwhile. */
NOINSTR static void work(long n)
{
	long long end;

	if (!timed) {
		burn(n);
		return;
	}
	end = cpu_ns() + n;
	do
		burn(CHUNK);
	while (cpu_ns() < end);
}

NOINLINE void tick(void)
{
	sink++;
}

/* Work n in the pieces asked for (P = 1: one call of burn, no tick). */
NOINSTR static void burn_pieces(long n)
{
	if (pieces == 1) {
		work(n);
		return;
	}
	for (long i = 0; i < pieces; i++) {
		work(n / pieces);
		tick();
	}
}

NOINLINE void spin1(long n)
{
	burn_pieces(n);
}

NOINLINE void spin4(long n)
{
	burn_pieces(4 * n);
}

NOINLINE void run(long n)
{
	spin1(n);
	spin4(n);
}

/* clock_gettime of a negative clock id (a CPU clock named by pid or tid) fails with EPERM. */
NOINSTR static void no_thread_clock(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clock_gettime, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		abort();
}

int main(int argc, char **argv)
{
	long n = SPIN_MS * 1000000L;
	char *end;

	timed = 1;
	/* strtol, not atol: glibc's inline atol would get hooks of its own. */
	if (argc > 1) {
		n = strtol(argv[1], &end, 10);
		timed = !strcmp(end, "ms");
		if (timed)
			n *= 1000000L;
	}
	if (argc > 2 && strtol(argv[2], NULL, 10) > 0)
		pieces = strtol(argv[2], NULL, 10);
	if (argc > 3 && !strcmp(argv[3], "no-thread-clock"))
		no_thread_clock();
	run(n);
	return 0;
}
