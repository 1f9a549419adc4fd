/*
 * s-leaderdrop.c - a root program whose main thread ends (pthread_exit)
 * before another thread drops the process's rights (run as root only):
 *
 *   t-leaderdrop READY STOP   calls work(), so that its watcher starts; the
 *                             main thread starts a thread and ends; that
 *                             thread drops to nobody (groups, gid, uid:
 *                             glibc changes every live thread, the ended
 *                             leader keeps root's), writes the pid to READY
 *                             and calls work() until STOP exists.
 *
 * The leader's /proc/PID/status goes on saying root: the watcher must take
 * the rights of the thread that runs, nobody's (creds.c).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(void)
{
	sink++;
}

static char **args;

static void *drop(void *arg)
{
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
