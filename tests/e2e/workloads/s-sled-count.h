/*
 * s-sled-count.h - the sleds scenarios count their own calls, so that the
 * tests can hold callprof's counts against the program's.
 *
 * A counted function starts with COUNT("name"), name as callprof shows it
 * (C++: with the argument types, "thrower(int)").  At the end the program
 * calls sled_count_print(), which prints one line per name, sorted:
 *
 *	count<TAB>name<TAB>calls
 *
 * The table lives in the main program (the one translation unit that
 * defines SLED_COUNT_MAIN before including this file) and is exported
 * (-rdynamic), so that a shared library's functions count into it too.  A
 * forked child calls sled_count_reset() to count only its own calls.
 *
 * The counting code itself must not be counted by callprof: it has no
 * hooks and no sled (SLED_UNCOUNTED), and COUNT() is a macro.  Counters
 * are atomic: the threads scenario counts from 8 threads.
 */
#ifndef CP_TESTS_E2E_SLED_COUNT_H
#define CP_TESTS_E2E_SLED_COUNT_H

#include "workload.h"

#define SLED_UNCOUNTED __attribute__((no_instrument_function, patchable_function_entry(0, 0)))

#ifdef __cplusplus
extern "C" {
#endif
SLED_UNCOUNTED long *sled_count_slot(const char *name);
SLED_UNCOUNTED void sled_count_print(void);
SLED_UNCOUNTED void sled_count_reset(void);
#ifdef __cplusplus
}
#endif

/* The slot is looked up once per call site, then one atomic add a call. */
#define COUNT(name)                                                               \
	do {                                                                      \
		static long *slot_;                                               \
		long *s_ = __atomic_load_n(&slot_, __ATOMIC_ACQUIRE);             \
		if (!s_) {                                                        \
			s_ = sled_count_slot(name);                               \
			__atomic_store_n(&slot_, s_, __ATOMIC_RELEASE);           \
		}                                                                 \
		__atomic_add_fetch(s_, 1, __ATOMIC_RELAXED);                      \
	} while (0)

#ifdef SLED_COUNT_MAIN
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLED_COUNT_MAX 128

struct sled_count {
	char name[96]; /* copied: a dlclose'd library's strings go away */
	long n;        /* calls counted */
};

static struct sled_count sled_counts[SLED_COUNT_MAX];
static int sled_count_used;
static pthread_mutex_t sled_count_lock = PTHREAD_MUTEX_INITIALIZER;

SLED_UNCOUNTED long *sled_count_slot(const char *name)
{
	long *slot = NULL;

	pthread_mutex_lock(&sled_count_lock);
	for (int i = 0; i < sled_count_used && !slot; i++)
		if (!strcmp(sled_counts[i].name, name))
			slot = &sled_counts[i].n;
	if (!slot && sled_count_used < SLED_COUNT_MAX) {
		struct sled_count *c = &sled_counts[sled_count_used++];

		snprintf(c->name, sizeof(c->name), "%s", name);
		slot = &c->n;
	}
	pthread_mutex_unlock(&sled_count_lock);
	if (!slot)
		abort();
	return slot;
}

SLED_UNCOUNTED static int sled_count_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sled_count *)a)->name, ((const struct sled_count *)b)->name);
}

SLED_UNCOUNTED void sled_count_print(void)
{
	struct sled_count sorted[SLED_COUNT_MAX];
	int n;

	pthread_mutex_lock(&sled_count_lock);
	n = sled_count_used;
	memcpy(sorted, sled_counts, sizeof(sorted));
	pthread_mutex_unlock(&sled_count_lock);
	qsort(sorted, n, sizeof(sorted[0]), sled_count_cmp);
	for (int i = 0; i < n; i++)
		if (sorted[i].n)
			printf("count\t%s\t%ld\n", sorted[i].name, sorted[i].n);
	fflush(stdout);
}

SLED_UNCOUNTED void sled_count_reset(void)
{
	for (int i = 0; i < sled_count_used; i++)
		sled_counts[i].n = 0;
}
#endif

#endif
