/*
 * s-sled-retaddr.c - a program that reads __builtin_return_address(0)
 * (t0538), and one that tells whether it runs with a CET user shadow stack.
 *
 *   ./t-sled-retaddr quiet [N]   caller() calls callee() N times (default
 *                                100); callee() returns its return address;
 *                                caller() checks it (below) and counts the
 *                                checks that held, but prints only the
 *                                counts of calls: the output does not
 *                                depend on what it saw
 *   ./t-sled-retaddr print [N]   the same, and prints what it saw: "return
 *                                address: after the call in caller" when the
 *                                address is right after a call (e8 rel32)
 *                                whose target is callee, else where it
 *                                points: "in OBJECT" (dladdr's base name) or
 *                                "in no object"
 *   ./t-sled-retaddr shstk       "shadow stack: on" if /proc/self/status
 *                                says x86_Thread_features has shstk, else off
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;

NOINLINE void *callee(void)
{
	COUNT("callee");
	sink++;
	return __builtin_return_address(0);
}

/* Is RA right after a "call rel32" to callee()? */
SLED_UNCOUNTED static int after_call_to_callee(const unsigned char *ra)
{
	int32_t rel;
	Dl_info info;

	if (!dladdr(ra - 1, &info) || !info.dli_sname || strcmp(info.dli_sname, "caller"))
		return 0;
	if (ra[-5] != 0xe8)
		return 0;
	memcpy(&rel, ra - 4, sizeof(rel));
	return ra + rel == (const unsigned char *)callee;
}

SLED_UNCOUNTED static void say_where(const void *ra)
{
	Dl_info info;

	if (after_call_to_callee(ra)) {
		printf("return address: after the call in caller\n");
	} else if (dladdr(ra, &info) && info.dli_fname) {
		const char *base = strrchr(info.dli_fname, '/');

		printf("return address: in %s\n", base ? base + 1 : info.dli_fname);
	} else {
		printf("return address: in no object\n");
	}
}

NOINLINE long caller(int print)
{
	void *ra;

	COUNT("caller");
	ra = callee();
	if (print)
		say_where(ra);
	return after_call_to_callee(ra);
}

SLED_UNCOUNTED static int shadow_stack_on(void)
{
	char line[256];
	int on = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "x86_Thread_features:", 20) && strstr(line, "shstk"))
			on = 1;
	fclose(f);
	return on;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "quiet";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
	int print = !strcmp(mode, "print");
	long held = 0;

	COUNT("main");
	if (!strcmp(mode, "shstk")) {
		printf("shadow stack: %s\n", shadow_stack_on() ? "on" : "off");
		return 0;
	}
	for (long i = 0; i < n; i++)
		held += caller(print && i == 0);
	if (print)
		printf("after the call: %ld of %ld\n", held, n);
	sled_count_print();
	return 0;
}
