/*
 * mixed.c - the benchmark workload that looks like a program: a few hot
 * leaf functions doing real work (an Adler-32 checksum over a 4 KB block,
 * an insertion sort of 16 ints, FNV-1a string hashing) between many small
 * calls (a random number, a pick, a clamp, a mix).  fib shows what a
 * profiler costs per call; this shows what that comes to when calls are
 * a few per microsecond of work rather than all there is.
 *
 *	mixed [ITERATIONS [THREADS]]
 *
 * ITERATIONS (default 350000) steps of about twenty calls each, split over
 * THREADS threads (default 1), each with its own records and seed, so the
 * work and the calls are the same whatever the thread count.  Prints one
 * checksum, the sum over the threads, so every configuration can be checked
 * to compute the same thing.
 *
 * Every function is noipa: the plain build makes the same calls as the
 * instrumented one (no inlining, no clones), as real calls between
 * translation units would.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN __attribute__((noipa))

#define NRECS 1024
#define NVALS 16
#define BLOCK 4096
#define BUFSIZE (256 * 1024)

struct rec {
	char name[24];
	uint32_t key;
	int vals[NVALS];
};

struct worker {
	pthread_t tid;
	long iters;
	uint32_t seed;
	struct rec *recs;
	uint8_t *buf;
	uint64_t sum;
};

FN static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

FN static int clamp(int x, int lo, int hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

FN static uint32_t mix(uint32_t a, uint32_t b)
{
	a ^= b + 0x9e3779b9u + (a << 6) + (a >> 2);
	return a;
}

/* Hot leaf: FNV-1a over a short string. */
FN static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* Hot leaf: Adler-32 over one block (n <= 5552: one reduction at the end). */
FN static uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a += p[i];
		b += a;
	}
	return (b % 65521) << 16 | a % 65521;
}

/* Hot leaf: insertion sort of a record's values. */
FN static void sort_small(int *v, int n)
{
	for (int i = 1; i < n; i++) {
		int x = v[i], j = i - 1;

		while (j >= 0 && v[j] > x) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
}

FN static struct rec *pick(struct worker *w)
{
	return &w->recs[next_rand(&w->seed) % NRECS];
}

/* Small: change one value and the name, so sorting and hashing have work. */
FN static void perturb(struct worker *w, struct rec *r)
{
	uint32_t x = next_rand(&w->seed);

	r->vals[x % NVALS] = clamp((int)(x >> 8) % 2000 - 1000, -999, 999);
	r->name[x % 20] = (char)('a' + (x >> 24) % 26);
}

FN static uint32_t visit(struct worker *w, struct rec *r)
{
	uint32_t h = hash_str(r->name);

	if ((h & 3) == 0) {
		sort_small(r->vals, NVALS);
		h = mix(h, (uint32_t)r->vals[0]);
	}
	perturb(w, r);
	r->key = mix(r->key, h);
	return r->key;
}

FN static uint32_t step(struct worker *w, long i)
{
	uint32_t h = visit(w, pick(w));

	h = mix(h, visit(w, pick(w)));
	if ((i & 1) == 0) {
		size_t off = (next_rand(&w->seed) % (BUFSIZE / BLOCK)) * BLOCK;

		h = mix(h, checksum(w->buf + off, BLOCK));
		w->buf[off + (h % BLOCK)] ^= (uint8_t)h;
	}
	return h;
}

FN static void setup(struct worker *w)
{
	w->recs = calloc(NRECS, sizeof(*w->recs));
	w->buf = malloc(BUFSIZE);
	if (!w->recs || !w->buf) {
		fprintf(stderr, "mixed: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < BUFSIZE; i += 4) {
		uint32_t x = next_rand(&w->seed);

		memcpy(w->buf + i, &x, 4);
	}
	for (int i = 0; i < NRECS; i++) {
		struct rec *r = &w->recs[i];

		for (int k = 0; k < 20; k++)
			r->name[k] = (char)('a' + next_rand(&w->seed) % 26);
		for (int k = 0; k < NVALS; k++)
			r->vals[k] = (int)(next_rand(&w->seed) % 2000) - 1000;
	}
}

FN static void *work(void *arg)
{
	struct worker *w = arg;

	setup(w);
	for (long i = 0; i < w->iters; i++)
		w->sum += step(w, i);
	free(w->recs);
	free(w->buf);
	return NULL;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 350000;
	int nthreads = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1;
	struct worker *w;
	uint64_t sum = 0;

	if (iters < 0 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "usage: mixed [ITERATIONS [THREADS (1-64)]]\n");
		return 129;
	}
	w = calloc((size_t)nthreads, sizeof(*w));
	if (!w)
		return 1;
	for (int t = 0; t < nthreads; t++) {
		w[t].iters = iters / nthreads + (t < iters % nthreads);
		w[t].seed = 2463534242u + 7919u * (uint32_t)t;
	}
	if (nthreads == 1) {
		work(&w[0]);
	} else {
		for (int t = 0; t < nthreads; t++) {
			if (pthread_create(&w[t].tid, NULL, work, &w[t])) {
				fprintf(stderr, "mixed: cannot create thread %d\n", t);
				return 1;
			}
		}
		for (int t = 0; t < nthreads; t++)
			pthread_join(w[t].tid, NULL);
	}
	for (int t = 0; t < nthreads; t++)
		sum += w[t].sum;
	printf("%llu\n", (unsigned long long)sum);
	free(w);
	return 0;
}
