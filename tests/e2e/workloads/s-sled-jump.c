/*
 * s-sled-jump.c - longjmp and siglongjmp out of nested sledded frames
 * (t0532), then more calls, which must land under the right parents.
 *
 *   ./t-sled-jump [N]      (default 1000 rounds)
 *
 * Each round: jumper() takes a setjmp and calls descend(6), whose deepest
 * call longjmps back; jumper() then calls after_jump().  sigjumper() does
 * the same with sigsetjmp/siglongjmp (mask saved, SIGUSR1 blocked on the
 * way down and restored by the jump).  nested() takes a setjmp, and
 * inner() (called by mid()) takes another; the deepest of descend(5)
 * jumps to inner()'s, inner() calls after_jump() then jumps to nested()'s
 * from two levels further down, and nested() calls after_jump().  Then
 * main() calls finish().  Prints the result and its counts.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;
static jmp_buf env, outer_env;
static sigjmp_buf senv;
static int use_sig;

NOINLINE void after_jump(void)
{
	COUNT("after_jump");
	sink++;
}

NOINLINE void descend(int depth, jmp_buf *to)
{
	COUNT("descend");
	if (depth == 0) {
		if (use_sig)
			siglongjmp(senv, 1);
		longjmp(*to, 1);
	}
	descend(depth - 1, to);
	sink++;
}

NOINLINE void jumper(void)
{
	COUNT("jumper");
	if (!setjmp(env))
		descend(6, &env);
	after_jump();
}

NOINLINE void sigjumper(void)
{
	sigset_t block;

	COUNT("sigjumper");
	use_sig = 1;
	if (!sigsetjmp(senv, 1)) {
		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigprocmask(SIG_BLOCK, &block, NULL);
		descend(6, NULL);
	}
	use_sig = 0;
	after_jump();
}

NOINLINE void inner(void)
{
	jmp_buf here;

	COUNT("inner");
	if (!setjmp(here))
		descend(5, &here);
	after_jump();
	descend(2, &outer_env);
}

NOINLINE void mid(void)
{
	COUNT("mid");
	inner();
	sink++;
}

NOINLINE void nested(void)
{
	COUNT("nested");
	if (!setjmp(outer_env))
		mid();
	after_jump();
}

NOINLINE void finish(void)
{
	COUNT("finish");
	sink++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	sigset_t now;

	COUNT("main");
	for (long i = 0; i < n; i++) {
		jumper();
		sigjumper();
		nested();
	}
	finish();
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("sink %ld, SIGUSR1 blocked after the jumps: %d\n", (long)sink,
	       sigismember(&now, SIGUSR1));
	sled_count_print();
	return 0;
}
