/*
 * s-sleds-core.cc - C++ through sledded frames (t0541): exceptions thrown,
 * caught and rethrown through them, and through a library function
 * without sleds (qsort calling a comparator that throws); backtrace() from
 * three sledded frames down.  Each function counts its calls; main prints
 * the counts and the backtrace's function names.
 */
#include <execinfo.h>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static volatile long n_thrower, n_middle, n_rethrower, n_catcher, n_after, n_compare, n_sorter,
	n_show, n_show1, n_show2;

extern "C" {
__attribute__((noinline)) void thrower(int i)
{
	n_thrower++;
	if (i % 3 == 0)
		throw std::runtime_error("thrown");
}

__attribute__((noinline)) void middle(int i)
{
	n_middle++;
	thrower(i);
}

__attribute__((noinline)) int rethrower(int i)
{
	n_rethrower++;
	try {
		middle(i);
	} catch (...) {
		throw;
	}
	return 0;
}

__attribute__((noinline)) int catcher(int i)
{
	n_catcher++;
	try {
		return rethrower(i);
	} catch (const std::exception &) {
		return 1;
	}
}

__attribute__((noinline)) void after(void)
{
	n_after++;
}

/* Called by qsort (no sleds): the throw goes through the C library's frames. */
__attribute__((noinline)) int compare(const void *a, const void *b)
{
	n_compare++;
	if (*(const int *)a == 7 || *(const int *)b == 7)
		throw 7;
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) int sorter(void)
{
	int v[] = { 3, 7, 1, 2 };

	n_sorter++;
	try {
		qsort(v, 4, sizeof(v[0]), compare);
	} catch (int e) {
		return e;
	}
	return 0;
}

__attribute__((noinline)) void show(void)
{
	void *b[4];
	int n;
	char **s;

	n_show++;
	n = backtrace(b, 4);
	s = backtrace_symbols(b, n);
	for (int i = 0; i < n && i < 3; i++) {
		const char *p = s ? strchr(s[i], '(') : NULL;

		printf("backtrace %.*s\n", p ? (int)strcspn(p + 1, "+)") : 1, p ? p + 1 : "?");
	}
	free(s);
}

__attribute__((noinline)) void show1(void)
{
	n_show1++;
	show();
}

__attribute__((noinline)) void show2(void)
{
	n_show2++;
	show1();
}
}

int main()
{
	int caught = 0;

	for (int i = 0; i < 30; i++) {
		caught += catcher(i);
		after();
	}
	for (int i = 0; i < 5; i++)
		caught += sorter();
	show2();
	printf("caught %d\n", caught);
#define SAY(name) printf(#name " %ld\n", (long)n_##name)
	SAY(thrower);
	SAY(middle);
	SAY(rethrower);
	SAY(catcher);
	SAY(after);
	SAY(compare);
	SAY(sorter);
	SAY(show);
	SAY(show1);
	SAY(show2);
	return 0;
}
