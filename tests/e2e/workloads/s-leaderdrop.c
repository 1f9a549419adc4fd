/*
 * s-leaderdrop.c - a root program whose main thread ends (pthread_exit)
 * before another thread drops the process's rights (run as root only):
 *
 *   t-leaderdrop READY STOP   calls work(), so that its watcher starts; the
 *                             main thread starts a thread and ends; that
 *                             thread waits until the leader is a zombie,
 *                             drops to nobody (groups, gid, uid: glibc
 *                             changes every live thread, the ended leader
 *                             keeps root's), writes the pid to READY and
 *                             calls work() until STOP exists.
 *
 * The leader's /proc/PID/status goes on saying root: the watcher must take
 * the rights of the thread that runs, nobody's (creds.c).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(void)
{
	sink++;
}

static char **args;

/* Whether the leader has ended: /proc/self/status is the leader's. */
static int leader_ended(void)
{
	char line[256];
	int z = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "State:", 6)) {
			z = strchr(line, 'Z') != NULL;
			break;
		}
	fclose(f);
	return z;
}

static void *drop(void *arg)
{
	/*
	 * A leader still inside pthread_exit is still on glibc's list of
	 * threads, and the set*id calls below would change its rights too.
	 */
	while (!leader_ended())
		usleep(1000);
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		perror("s-leaderdrop: dropping to nobody");
		_exit(3);
	}
	if (ready_file(args[1]))
		_exit(4);
	while (access(args[2], F_OK)) {
		work();
		usleep(10000);
	}
	_exit(0);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3)
		return 2;
	args = argv;
	work();
	if (pthread_create(&t, NULL, drop, NULL))
		return 5;
	pthread_exit(NULL);
}
