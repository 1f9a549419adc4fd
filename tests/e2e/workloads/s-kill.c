/*
 * s-kill.c - programs that are killed (SIGKILL), for the watcher:
 *
 *   s-kill wait READY   main calls work() 100 times, a thread named
 *                       "kworker" calls it 50 times; both then park() for
 *                       good and READY is written (with the pid) for the
 *                       test to kill -9 the process.  Before that, main
 *                       checks that it has no child it could wait() for,
 *                       even with __WALL, nor one /proc lists:
 *                       the watcher must be invisible (exit 9 otherwise).
 *   s-kill child        a fork child calls work() 7 times and kills itself
 *                       inside doomed(); the parent leaves it unreaped
 *                       until its profile is written, checks that the child
 *                       died of SIGKILL, calls work() 3 times and exits 0.
 *   s-kill child-reaped the same, but the parent reaps the child at once.
 *   s-kill exec         main calls work() 4 times, then execs
 *                       "s-kill self" (argv[0]).
 *   s-kill self         main calls work() 5 times, then kills itself
 *                       inside doomed().
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

/* Does any thread of ours list a child in /proc/self/task/TID/children? */
NOINSTR static int has_children(void)
{
	char path[64];
	int c = EOF;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	f = fopen(path, "r");
	if (f) {
		c = fgetc(f);
		fclose(f);
	}
	return c != EOF;
}
static sem_t ready;

NOINLINE void leaf(void)
{
	sink++;
}

NOINLINE void work(void)
{
	leaf();
}

NOINLINE void park(void)
{
	for (;;)
		pause();
}

NOINLINE void doomed(void)
{
	raise(SIGKILL);
	sink++;
}

NOINLINE static void *thread_main(void *arg)
{
	pthread_setname_np(pthread_self(), "kworker");
	for (int i = 0; i < 50; i++)
		work();
	sem_post(&ready);
	park();
	return arg;
}

NOINLINE static int wait_mode(const char *ready_file)
{
	pthread_t th;
	char tmp[4096];
	FILE *f;

	sem_init(&ready, 0, 0);
	pthread_create(&th, NULL, thread_main, NULL);
	for (int i = 0; i < 100; i++)
		work();
	while (sem_wait(&ready) && errno == EINTR)
		;
	/* Not even __WALL (clone children), nor the kernel's list of children. */
	if (waitpid(-1, NULL, __WALL | WNOHANG) != -1 || errno != ECHILD || has_children()) {
		fprintf(stderr, "s-kill: the program has a child it can wait for\n");
		return 9;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready_file);
	f = fopen(tmp, "w"); /* kept open: the watcher must not hold it */
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fflush(f) || rename(tmp, ready_file))
		return 8;
	park();
	return 0;
}

/*
 * Leave the ended child unreaped until its watcher wrote $CALLPROF_OUT.PID
 * (at most 10 s): a watcher reads a privileged child's credentials in /proc
 * before it writes for it (runtime/creds.c), which a reaped child has not.
 */
NOINSTR static void await_profile(pid_t pid)
{
	const char *out = getenv("CALLPROF_OUT");
	char path[4200];
	siginfo_t si;

	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	if (!out)
		return;
	snprintf(path, sizeof(path), "%s.%d", out, (int)pid);
	for (int i = 0; i < 1000 && access(path, F_OK); i++)
		usleep(10000);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "self";
	int status;
	pid_t pid;

	if (!strcmp(mode, "wait") && argc > 2)
		return wait_mode(argv[2]);
	if (!strcmp(mode, "child") || !strcmp(mode, "child-reaped")) {
		pid = fork();
		if (pid == 0) {
			for (int i = 0; i < 7; i++)
				work();
			doomed();
			_exit(1);
		}
		if (!strcmp(mode, "child") && pid > 0)
			await_profile(pid);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) ||
		    WTERMSIG(status) != SIGKILL)
			return 7;
		for (int i = 0; i < 3; i++)
			work();
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		for (int i = 0; i < 4; i++)
			work();
		execl(argv[0], argv[0], "self", (char *)NULL);
		return 6;
	}
	for (int i = 0; i < 5; i++)
		work();
	doomed();
	return 1;
}
