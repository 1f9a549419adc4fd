/*
 * s-tui: a small profile to browse in callprof tui (t0520): one hot path
 * much hotter than its siblings, a function with two callers, names that a
 * search finds twice, a non-ASCII (UTF-8) identifier, and a second named
 * thread on its own path.
 *
 *   main:   main -> parse_expr -> lex_token -> scan_digits   (the hot path)
 *                                lex_token -> checksum (x1000)
 *           main -> render_frame -> blit_rows -> checksum (x1000)
 *                   render_frame -> fill_rows
 *           main -> grüße
 *   helper: helper_main -> compress_block
 *
 * Work is counted in loop iterations: scan_digits does 66 of every 100,
 * blit_rows 10, fill_rows 3, grüße 5, compress_block 8, so the hot path
 * stays the hottest whatever the sampling noise.  checksum is cheap: the
 * most calls, 4 of every 100 under each caller.
 *
 * The helper thread runs to its end before main starts its work: two
 * threads that run at once on the two hyperthreads of one core each get
 * about half of it, so a function's CPU time would depend on whether the
 * other thread was running meanwhile (on a loaded CI machine render_frame
 * once came out over parse_expr, and the profile was right).  Each
 * function's CPU time should follow its iterations, not the scheduler.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "workload.h"

#define UNIT 4000000L

volatile long sink;

/*
 * Work in the calling function itself (no context of its own): a chain of
 * register adds, one cycle an iteration whatever else runs.  Not adds into
 * the shared sink: a cache line that two threads write in a loop costs
 * each several times more per iteration.  The empty asm keeps the compiler from
 * folding the loop.
 */
#define spin(n)                                                 \
	do {                                                    \
		long acc_ = 0;                                  \
		for (long i_ = 0; i_ < (n); i_++) {             \
			acc_ += i_;                             \
			__asm__ __volatile__("" : "+r"(acc_));  \
		}                                               \
		sink ^= acc_;                                   \
	} while (0)

NOINLINE void checksum(long x)
{
	spin(UNIT / 250);
	sink ^= x;
}

NOINLINE void scan_digits(void)
{
	spin(66 * UNIT);
}

NOINLINE void lex_token(void)
{
	scan_digits();
	for (long i = 0; i < 1000; i++)
		checksum(i);
}

NOINLINE void parse_expr(void)
{
	lex_token();
}

NOINLINE void blit_rows(void)
{
	spin(10 * UNIT);
	for (long i = 0; i < 1000; i++)
		checksum(i);
}

NOINLINE void fill_rows(void)
{
	spin(3 * UNIT);
}

NOINLINE void render_frame(void)
{
	blit_rows();
	fill_rows();
}

NOINLINE void grüße(void)
{
	spin(5 * UNIT);
}

NOINLINE void compress_block(void)
{
	spin(8 * UNIT);
}

NOINLINE static void *helper_main(void *arg)
{
	pthread_setname_np(pthread_self(), "helper");
	compress_block();
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_setname_np(pthread_self(), "main");
	if (pthread_create(&t, NULL, helper_main, NULL))
		return 1;
	if (pthread_join(t, NULL))
		return 1;
	parse_expr();
	render_frame();
	grüße();
	return 0;
}
