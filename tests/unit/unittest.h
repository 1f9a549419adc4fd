/*
 * unittest.h - a small unit-test harness.
 *
 * A test file defines tests with TEST(name) { ... } and nothing else: the
 * harness (unittest.c) provides main(), runs each test in its own fork so a
 * crash fails one test instead of the run, prints one line per test and
 * ends with "N passed, N failed".  CHECK*() print both expressions and
 * their values on failure and end the test.
 */
#ifndef CP_TESTS_UNITTEST_H
#define CP_TESTS_UNITTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cp_test {
	const char *name;
	void (*fn)(void);
	struct cp_test *next;
};

void cp_test__register(struct cp_test *t);
/* "A OP B: a, b", the two values in decimal. */
void cp_test__fail_int(const char *file, int line, const char *a, const char *op, const char *b,
		       __int128 va, __int128 vb);
void cp_test__fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#define TEST(name) \
	static void test_##name(void); \
	static struct cp_test cp_test_##name = { #name, test_##name, NULL }; \
	__attribute__((constructor)) static void cp_test_reg_##name(void) \
	{ \
		cp_test__register(&cp_test_##name); \
	} \
	static void test_##name(void)

#define CHECK(cond) \
	do { \
		if (!(cond)) \
			cp_test__fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond); \
	} while (0)

/*
 * Integers compare as 128-bit values: a uint64_t of 2^63 or more and a
 * negative int64_t are both shown as what they are.
 */
#define CHECK_EQ(a, b) \
	do { \
		__int128 cp__a = (__int128)(a), cp__b = (__int128)(b); \
		if (cp__a != cp__b) \
			cp_test__fail_int(__FILE__, __LINE__, #a, "==", #b, cp__a, cp__b); \
	} while (0)

#define CHECK_LE(a, b) \
	do { \
		__int128 cp__a = (__int128)(a), cp__b = (__int128)(b); \
		if (!(cp__a <= cp__b)) \
			cp_test__fail_int(__FILE__, __LINE__, #a, "<=", #b, cp__a, cp__b); \
	} while (0)

#define CHECK_STR(a, b) \
	do { \
		const char *cp__a = (a), *cp__b = (b); \
		if (!cp__a || !cp__b || strcmp(cp__a, cp__b)) \
			cp_test__fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, \
				      cp__a ? cp__a : "(null)", cp__b ? cp__b : "(null)"); \
	} while (0)

#endif /* CP_TESTS_UNITTEST_H */
