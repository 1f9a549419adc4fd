/*
 * s-sleds-core.c - the core cases of a sledded program under callprof
 * record (t0540): each noinline function counts its own calls, and main
 * prints "name count" for every one, for the test to compare with the
 * profile's totals.  argv[1] names the case: longjmp, signal (a handler on
 * sigaltstack calling sledded functions), deep (1,000,000 frames on a
 * thread with a big stack), threads, fork, tail (tail calls from one
 * sledded function to another), retaddr (__builtin_return_address(0)).
 * Every case ends with ordinary calls, whose counts must be exact too.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Counted atomically: four threads call leaf at once. */
#define COUNTED(name) static long n_##name
COUNTED(leaf);
COUNTED(deep);
COUNTED(jumper);
COUNTED(on_signal);
COUNTED(worker);
COUNTED(tail_a);
COUNTED(tail_b);
COUNTED(in_child);
COUNTED(peek);

static sigjmp_buf jb;
/* The signal case's alternate stack: static, so that no leak checker reports it at exit. */
static char alt_stack[1 << 16];

__attribute__((noinline)) long leaf(long x)
{
	__atomic_fetch_add(&n_leaf, 1, __ATOMIC_RELAXED);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* Not a loop at -O2: the asm keeps the sum out of tail position (bench/fib.c). */
__attribute__((noinline)) long deep(long d)
{
	long r;

	__atomic_fetch_add(&n_deep, 1, __ATOMIC_RELAXED);
	if (d == 0)
		return leaf(0);
	r = deep(d - 1);
	__asm__("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) void jumper(int d)
{
	__atomic_fetch_add(&n_jumper, 1, __ATOMIC_RELAXED);
	if (d == 0)
		siglongjmp(jb, 1);
	jumper(d - 1);
	leaf(d);
}

__attribute__((noinline)) long tail_b(long x)
{
	__atomic_fetch_add(&n_tail_b, 1, __ATOMIC_RELAXED);
	return leaf(x) * 3;
}

/* At -O2 a jmp to tail_b: tail_b's frame shares tail_a's return address slot. */
__attribute__((noinline)) long tail_a(long x)
{
	__atomic_fetch_add(&n_tail_a, 1, __ATOMIC_RELAXED);
	return tail_b(x + 1);
}

__attribute__((noinline)) void on_signal(int sig)
{
	__atomic_fetch_add(&n_on_signal, 1, __ATOMIC_RELAXED);
	leaf(sig);
}

static void handler(int sig)
{
	on_signal(sig);
}

__attribute__((noinline)) void *worker(void *arg)
{
	__atomic_fetch_add(&n_worker, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 10000; i++)
		leaf(i);
	return arg;
}

__attribute__((noinline)) int in_child(void)
{
	__atomic_fetch_add(&n_in_child, 1, __ATOMIC_RELAXED);
	return (int)leaf(6);
}

/* What a program reading its return address sees (docs/limitations.md). */
__attribute__((noinline)) void *peek(void)
{
	__atomic_fetch_add(&n_peek, 1, __ATOMIC_RELAXED);
	return __builtin_return_address(0);
}

static void *deep_thread(void *arg)
{
	return (void *)deep((long)arg);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	long s = 0;

	if (!strcmp(c, "longjmp")) {
		for (int i = 0; i < 100; i++) {
			if (!sigsetjmp(jb, 1))
				jumper(i % 5);
			leaf(i);
		}
	} else if (!strcmp(c, "signal")) {
		stack_t ss = { .ss_sp = alt_stack, .ss_size = sizeof(alt_stack) };
		struct sigaction sa;

		sigaltstack(&ss, NULL);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = handler;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGUSR1, &sa, NULL);
		for (int i = 0; i < 50; i++) {
			leaf(i);
			raise(SIGUSR1);
		}
	} else if (!strcmp(c, "deep")) {
		pthread_attr_t a;
		pthread_t t;
		void *r;

		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, (size_t)512 << 20);
		if (pthread_create(&t, &a, deep_thread, (void *)1000000L))
			return 2;
		pthread_join(t, &r);
		s += (long)r;
	} else if (!strcmp(c, "threads")) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(c, "fork")) {
		int st;
		pid_t p;

		fflush(stdout);
		p = fork();
		if (p == 0)
			_exit(in_child());
		waitpid(p, &st, 0);
		s += WEXITSTATUS(st);
	} else if (!strcmp(c, "tail")) {
		for (int i = 0; i < 100; i++)
			s += tail_a(i);
	} else if (!strcmp(c, "retaddr")) {
		char *a = peek();

		printf("retaddr %s\n", a > (char *)main && a < (char *)main + 4096 ? "in main" : "elsewhere");
	}
	for (int i = 0; i < 10; i++)
		s += leaf(i);
	printf("result %ld\n", s);
#define SAY(name) if (n_##name) printf(#name " %ld\n", (long)n_##name)
	SAY(leaf);
	SAY(deep);
	SAY(jumper);
	SAY(on_signal);
	SAY(worker);
	SAY(tail_a);
	SAY(tail_b);
	SAY(in_child);
	SAY(peek);
	return 3;
}
