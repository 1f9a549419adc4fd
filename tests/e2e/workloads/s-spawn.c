/*
 * s-spawn.c - children started with an environment of their own.
 *
 *   t-spawn HOW [PRELOAD]  starts "t-spawn child" with envp = { "MARK=1",
 *                          NULL } (and "LD_PRELOAD=PRELOAD" if given) by
 *                          HOW: posix_spawn, posix_spawnp, execve, execvpe,
 *                          execle, fexecve or execveat (the exec forms from
 *                          a fork child), waits for it, checks that its own
 *                          array was left as it was, and exits 3
 *   t-spawn child          child_work() once, prints MARK and whether
 *                          CALLPROF_OUT is set, exits 0
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

volatile long sink;

NOINLINE static void child_work(void)
{
	sink++;
}

NOINLINE static int start(const char *how, const char *self, char **argv, char **envp)
{
	pid_t pid;
	int status;

	if (!strcmp(how, "posix_spawn") || !strcmp(how, "posix_spawnp")) {
		int (*fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			  const posix_spawnattr_t *, char *const[], char *const[]) =
			how[11] == 'p' ? posix_spawnp : posix_spawn;

		if (fn(&pid, self, NULL, NULL, argv, envp))
			return -1;
	} else {
		pid = fork();
		if (pid == 0) {
			if (!strcmp(how, "execve"))
				execve(self, argv, envp);
			else if (!strcmp(how, "execvpe"))
				execvpe(self, argv, envp);
			else if (!strcmp(how, "execle"))
				execle(self, argv[0], argv[1], (char *)NULL, envp);
			else if (!strcmp(how, "fexecve"))
				fexecve(open(self, O_RDONLY | O_CLOEXEC), argv, envp);
			else if (!strcmp(how, "execveat"))
				execveat(AT_FDCWD, self, argv, envp, 0);
			_exit(127);
		}
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(int argc, char **argv)
{
	char *child_argv[] = { argv[0], "child", NULL };
	char preload[256];
	char *envp[] = { "MARK=1", NULL, NULL };
	const char *mark;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		child_work();
		mark = getenv("MARK");
		printf("child: MARK=%s\n", mark ? mark : "(unset)");
		return 0;
	}
	if (argc < 2)
		return 2;
	if (argc > 2) {
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", argv[2]);
		envp[1] = preload;
	}
	fflush(stdout);
	if (start(argv[1], argv[0], child_argv, envp) != 0)
		return 1;
	if (strcmp(envp[0], "MARK=1") || (argc > 2 ? envp[1] != preload : envp[1] != NULL) ||
	    envp[2] != NULL)
		puts("parent: the envp array was changed");
	else
		puts("parent: envp intact");
	return 3;
}
