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
 * Work is counted in loop iterations: scan_digits does 60 of every 100,
 * blit_rows 24, fill_rows 3, grüße 5, compress_block 15, so the hot path
 * stays the hottest whatever the sampling noise.  checksum is cheap: the
 * most calls, 4 of every 100 under each caller.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include "workload.h"

#define UNIT 2000000L

volatile long sink;

/* Work in the calling function itself (no context of its own). */
#define spin(n) do { for (long i_ = 0; i_ < (n); i_++) sink += i_; } while (0)

NOINLINE void checksum(long x)
{
	spin(UNIT / 250);
	sink ^= x;
}

NOINLINE void scan_digits(void)
{
	spin(60 * UNIT);
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
	spin(24 * UNIT);
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
	spin(15 * UNIT);
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
	parse_expr();
	render_frame();
	grüße();
	return pthread_join(t, NULL) != 0;
}
