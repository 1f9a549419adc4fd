/*
 * s-hostile: functions whose names the test replaces after linking
 * (objcopy --redefine-sym hostile_NN=NAME, t0431 and t0432) with names a
 * hostile binary could carry: terminal escapes, newlines that would forge
 * lines of a report or an export, separators of the export formats, bytes
 * that are not UTF-8.  Each function has its own call count, so that a
 * name read back from an output can be checked against its calls:
 *
 *   main -> hostile_01 (1) -> hostile_02 (2)
 *   main -> hostile_NN (NN calls), NN = 03 .. 11
 *   thread (its name set by argv[1]) -> hostile_12 (12)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include "workload.h"

volatile long sink;

#define H(nn) \
	NOINLINE void hostile_##nn(void) \
	{ \
		for (int i = 0; i < 20000; i++) \
			sink += i; \
	}

H(02) H(03) H(04) H(05) H(06) H(07) H(08) H(09) H(10) H(11) H(12)

NOINLINE void hostile_01(void)
{
	hostile_02();
	hostile_02();
}

static const char *thread_name;

static void *thread_main(void *arg)
{
	if (thread_name)
		pthread_setname_np(pthread_self(), thread_name);
	for (int i = 0; i < 12; i++)
		hostile_12();
	return arg;
}

int main(int argc, char **argv)
{
	void (*const fns[])(void) = { hostile_03, hostile_04, hostile_05, hostile_06, hostile_07,
				      hostile_08, hostile_09, hostile_10, hostile_11 };
	pthread_t t;

	thread_name = argc > 1 ? argv[1] : NULL;
	hostile_01();
	for (int k = 0; k < 9; k++)
		for (int i = 0; i < k + 3; i++)
			fns[k]();
	if (pthread_create(&t, NULL, thread_main, NULL) == 0)
		pthread_join(t, NULL);
	return 0;
}
