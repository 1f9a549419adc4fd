/*
 * s-exit3: output on stdout and stderr and a non-zero exit status, for the
 * transparency tests (a profiled run must look the same from outside).
 *
 * Without arguments main returns 3:
 *   main -> say (x3), main -> complain
 * With the argument "exit", exit(3) is called two frames down, so that
 * main, nested and finish are still on the stack when the process ends:
 *   main -> say (x2), main -> complain, main -> nested -> say,
 *   main -> nested -> finish -> say, then exit(3) inside finish
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload.h"

volatile long sink;

NOINLINE static void say(const char *s)
{
	printf("%s\n", s);
}

NOINLINE static void complain(const char *s)
{
	fprintf(stderr, "%s\n", s);
}

NOINLINE static void finish(int code)
{
	say("leaving with exit()");
	exit(code);
}

NOINLINE static void nested(int code)
{
	say("nested");
	finish(code);
}

int main(int argc, char **argv)
{
	say("first line");
	say("second line");
	complain("a line on stderr");
	if (argc > 1 && !strcmp(argv[1], "exit"))
		nested(3);
	say("returning 3 from main");
	return 3;
}
