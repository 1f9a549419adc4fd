/*
 * s-coro.c - a generator coroutine on its own stack (makecontext +
 * swapcontext): driver() resumes gen() 100 times; gen() calls produce()
 * and yields back each time, and after the last value returns, which
 * resumes driver() through uc_link.  driver() calls consume() after every
 * resume and done() at the end.  Each side's calls must stay under its own
 * caller: gen's under gen (a top-level path, like a thread), driver's under
 * driver.
 */
#include <stdio.h>
#include <ucontext.h>

#include "workload.h"

#define N 100

volatile long sink;
static ucontext_t main_ctx, gen_ctx;
static char gen_stack[256 << 10];

NOINLINE void leaf(int v)
{
	sink += v;
}

NOINLINE void produce(int i)
{
	leaf(i);
}

NOINLINE void gen(void)
{
	for (int i = 0; i < N; i++) {
		produce(i);
		swapcontext(&gen_ctx, &main_ctx);
	}
}

NOINLINE void consume(int i)
{
	leaf(i);
}

NOINLINE void done(void)
{
	sink++;
}

NOINLINE void driver(void)
{
	getcontext(&gen_ctx);
	gen_ctx.uc_stack.ss_sp = gen_stack;
	gen_ctx.uc_stack.ss_size = sizeof(gen_stack);
	gen_ctx.uc_link = &main_ctx;
	makecontext(&gen_ctx, gen, 0);
	for (int i = 0; i <= N; i++) {
		swapcontext(&main_ctx, &gen_ctx);
		if (i < N)
			consume(i);
	}
	done();
}

int main(void)
{
	driver();
	printf("%ld\n", (long)sink);
	return 0;
}
