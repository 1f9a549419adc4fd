/*
 * demo.c - the program `make demo` profiles: a small word-frequency counter
 * with a parser, a hash table, a sort and two worker threads, so the call
 * tree shows nesting, recursion (quicksort), hot leaves and threads.  It
 * runs about half a second of CPU time, so that the sampled times rest on
 * some two thousand samples.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The functions stay functions: in one file of static functions an
 * optimizing compiler would inline most of them into main and worker, as
 * it does not across the files of a real program, and a build with
 * patchable entries (callprof cc with gcc) records only what stays out of
 * line (an inlined function is part of its caller).  The one-line hash is
 * left to the compiler, which inlines it, as it would in a real program.
 */
#define NOINLINE __attribute__((noinline))

#define NBUCKETS 1024

struct word {
	char text[24];
	unsigned count;
	struct word *next;
};

static struct word *table[NBUCKETS];
static struct word pool[4096];
static unsigned npool;

static unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

NOINLINE static void add_word(const char *s)
{
	unsigned h = hash(s);
	struct word *w;

	for (w = table[h]; w; w = w->next) {
		if (!strcmp(w->text, s)) {
			w->count++;
			return;
		}
	}
	if (npool == sizeof(pool) / sizeof(pool[0]))
		return;
	w = &pool[npool++];
	snprintf(w->text, sizeof(w->text), "%s", s);
	w->count = 1;
	w->next = table[h];
	table[h] = w;
}

NOINLINE static const char *next_word(unsigned *seed, char *buf)
{
	static const char *const syll[] = { "ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi" };
	int n = 1 + (int)(*seed % 3);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		*seed = *seed * 1103515245 + 12345;
		strncat(buf, syll[(*seed >> 16) % 8], 3);
	}
	return buf;
}

NOINLINE static void parse_text(unsigned words, unsigned seed)
{
	char buf[16];

	for (unsigned i = 0; i < words; i++)
		add_word(next_word(&seed, buf));
}

NOINLINE static int by_count(const struct word *a, const struct word *b)
{
	return a->count != b->count ? (a->count > b->count ? -1 : 1) : strcmp(a->text, b->text);
}

NOINLINE static void quicksort(struct word **v, int lo, int hi)
{
	struct word *pivot, *tmp;
	int i = lo, j = hi;

	if (lo >= hi)
		return;
	pivot = v[(lo + hi) / 2];
	while (i <= j) {
		while (by_count(v[i], pivot) < 0)
			i++;
		while (by_count(v[j], pivot) > 0)
			j--;
		if (i <= j) {
			tmp = v[i], v[i] = v[j], v[j] = tmp;
			i++, j--;
		}
	}
	quicksort(v, lo, j);
	quicksort(v, i, hi);
}

NOINLINE static void print_top(int n)
{
	struct word **v = malloc(npool * sizeof(*v));

	for (unsigned i = 0; i < npool; i++)
		v[i] = &pool[i];
	quicksort(v, 0, (int)npool - 1);
	for (int i = 0; i < n && i < (int)npool; i++)
		printf("%-12s %u\n", v[i]->text, v[i]->count);
	free(v);
}

NOINLINE static double checksum(unsigned rounds)
{
	double x = 0;

	for (unsigned i = 1; i <= rounds; i++)
		x += 1.0 / ((double)i * i);
	return x;
}

NOINLINE static void *worker(void *arg)
{
	double *out = arg;

	*out = checksum(50000000);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	double sums[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &sums[i]);
	parse_text(1000000, 42);
	print_top(5);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("checksum %.6f\n", sums[0] + sums[1]);
	return 0;
}
