/*
 * s-sled-coro.c - swapcontext coroutines calling sledded functions (t0534).
 *
 *   ./t-sled-coro [N]      (default 200)
 *
 * Two generators, gen_a() and gen_b(), each on its own stack, yield from
 * three sledded frames deep: gen_X() -> produce() -> nest(2) -> nest(1) ->
 * nest(0), which calls swapcontext() back to driver().  driver() resumes
 * them in turn, N times each, and calls consume() after every resume.
 * gen_a() then returns (uc_link resumes driver()); gen_b() is resumed only
 * N times and left suspended inside its nest() frames for good.  Then
 * driver() calls done().  Prints the result and its counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;
static ucontext_t main_ctx, a_ctx, b_ctx;
static char a_stack[256 << 10], b_stack[256 << 10];
static long n = 200;

NOINLINE void nest(int depth, ucontext_t *self)
{
	COUNT("nest");
	if (depth == 0)
		swapcontext(self, &main_ctx);
	else
		nest(depth - 1, self);
	sink++;
}

NOINLINE void produce(long i, ucontext_t *self)
{
	COUNT("produce");
	sink += i;
	nest(2, self);
	sink++;
}

NOINLINE void gen_a(void)
{
	COUNT("gen_a");
	for (long i = 0; i < n; i++)
		produce(i, &a_ctx);
}

NOINLINE void gen_b(void)
{
	COUNT("gen_b");
	for (long i = 0;; i++)
		produce(i, &b_ctx);
}

NOINLINE void consume(long i)
{
	COUNT("consume");
	sink += i;
}

NOINLINE void done(void)
{
	COUNT("done");
	sink++;
}

SLED_UNCOUNTED static void make(ucontext_t *ctx, char *stack, size_t size, void (*fn)(void))
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = stack;
	ctx->uc_stack.ss_size = size;
	ctx->uc_link = &main_ctx;
	makecontext(ctx, fn, 0);
}

NOINLINE void driver(void)
{
	COUNT("driver");
	make(&a_ctx, a_stack, sizeof(a_stack), gen_a);
	make(&b_ctx, b_stack, sizeof(b_stack), gen_b);
	for (long i = 0; i <= n; i++) {
		swapcontext(&main_ctx, &a_ctx);
		consume(i);
		if (i < n) {
			swapcontext(&main_ctx, &b_ctx);
			consume(i);
		}
	}
	done();
}

int main(int argc, char **argv)
{
	COUNT("main");
	if (argc > 1)
		n = strtol(argv[1], NULL, 10);
	driver();
	printf("sink %ld\n", (long)sink);
	sled_count_print();
	return 0;
}
