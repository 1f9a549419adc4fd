/*
 * s-cat: copies stdin to stdout line by line, one echo_line call per line,
 * to show that `callprof record` passes stdin through.
 */
#include <stdio.h>
#include "workload.h"

volatile long sink;

NOINLINE static void echo_line(const char *line)
{
	fputs(line, stdout);
	sink++;
}

int main(void)
{
	char buf[4096];

	while (fgets(buf, sizeof(buf), stdin))
		echo_line(buf);
	return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
