/*
 * accuracy.h - what accuracy-main.c (the driver, never instrumented) sees
 * of accuracy-work.c, which is compiled twice: the functions callprof
 * records (work_a ...), and the same code uninstrumented (plain_work_a ...).
 */
#ifndef CP_BENCH_ACCURACY_H
#define CP_BENCH_ACCURACY_H

#include <stdint.h>

/* The sizes at DIV = 1: about 2.5 ms of work per work function call. */
#define A_CHUNKS 48000L
#define B_CHUNKS 48000L
#define B_ITERS 64
#define C_CHUNKS 96000L
#define C_ITERS 32
#define D_CHUNKS 30000L
#define D_ITERS 40
#define SMALL_CALLS 50000L

/* One run's sizes: the above divided by DIV. */
struct accuracy_sizes {
	long a_chunks;		/* chunks of B_ITERS alu steps in work_a */
	long b_chunks;		/* chunks (and tiny() calls) in work_b */
	long c_chunks;		/* chunks (and tiny() calls) in work_c */
	long d_chunks;		/* chunks (and tiny() calls) in work_d */
	long small_calls;	/* small() calls in one mixed() */
};

/* Set the sizes (before any call), switch the chunk loops' tiny() calls,
 * read how often tiny() and small() ran. */
void accuracy_setup(const struct accuracy_sizes *s);
void accuracy_with_calls(int on);
unsigned long accuracy_tiny_calls(void);
unsigned long accuracy_small_calls(void);
void plain_accuracy_setup(const struct accuracy_sizes *s);
void plain_accuracy_with_calls(int on);
unsigned long plain_accuracy_tiny_calls(void);
unsigned long plain_accuracy_small_calls(void);

/* The work; each takes and returns a value that carries the result.
 * mixed() calls small() small_calls times and work_a (which = 0), work_b
 * (1), work_c (2) or work_d (3) half way. */
void tiny(void);
void small(void);
uint64_t work_a(uint64_t x);
uint64_t work_b(uint64_t x);
uint64_t work_c(uint64_t x);
uint64_t work_d(uint64_t x);
uint64_t mixed(uint64_t x, int which);
void plain_tiny(void);
void plain_small(void);
uint64_t plain_work_a(uint64_t x);
uint64_t plain_work_b(uint64_t x);
uint64_t plain_work_c(uint64_t x);
uint64_t plain_work_d(uint64_t x);
uint64_t plain_mixed(uint64_t x, int which);

#endif
