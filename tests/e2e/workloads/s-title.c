/*
 * s-title.c - a program that writes its process title over its argv, as
 * servers do (ps then shows "t-title 127.0.0.1:16379" and spaces): the
 * environment strings, which follow argv in memory, are copied away first
 * and the whole area is reused.  The profile must name the command line
 * the program was started with.
 *
 *   main -> work, main -> retitle, main -> work; exit status 3.
 * With "fork" as the last argument, a fork child made after the retitle
 * calls work once more and exits: its profile (FILE.PID) names the same
 * command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

volatile long sink;
extern char **environ;

NOINLINE static void work(void)
{
	for (int i = 0; i < 1000; i++)
		sink += i;
}

NOINLINE static void retitle(int argc, char **argv)
{
	char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	size_t n = 0;
	char **env;

	for (int i = 0; environ[i]; i++)
		n++;
	env = malloc((n + 1) * sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		if (environ[i] == end)
			end += strlen(environ[i]) + 1;
		env[i] = strdup(environ[i]);
	}
	env[n] = NULL;
	environ = env;
	memset(start, ' ', (size_t)(end - start));
	end[-1] = '\0';
	memcpy(start, "t-title 127.0.0.1:16379", 23);
}

int main(int argc, char **argv)
{
	int fork_child = argc > 1 && !strcmp(argv[argc - 1], "fork");

	work();
	retitle(argc, argv);
	work();
	if (fork_child) {
		pid_t pid = fork();

		if (pid == 0) {
			work();
			exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	printf("%.23s\n", argv[0]); /* the padding depends on the environment's size */
	return 3;
}
