/*
 * s-droppriv.c - a root program that drops its rights and then attacks
 * its watcher (run as root only):
 *
 *   s-droppriv OUT EVIL   calls work(), so that its watcher starts; drops
 *                         to nobody (groups, gid, uid); then writes EVIL
 *                         over every copy of OUT in its writable memory
 *                         (the runtime's shared data among it) and kills
 *                         itself with SIGKILL.  Its watcher must neither
 *                         follow EVIL nor write with root's rights.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

volatile long sink;

NOINLINE void work(void)
{
	sink++;
}

/* Overwrite every copy of from (with its NUL) in writable mappings by to. */
static int rewrite(const char *from, const char *to)
{
	char line[512];
	size_t flen = strlen(from) + 1;
	int n = 0;
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[8];

		/* Not the stack, nor the runtime's big arena (reading it would fault it in). */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[1] != 'w' ||
		    strstr(line, "[stack]") || strstr(line, "[vvar]") || hi - lo > (16ul << 20))
			continue;
		for (char *p = (char *)lo; (p = memmem(p, (char *)hi - p, from, flen)) != NULL;
		     p += flen) {
			snprintf(p, flen > strlen(to) ? flen : strlen(to) + 1, "%s", to);
			n++;
		}
	}
	if (maps)
		fclose(maps);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	work();
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		perror("s-droppriv: dropping to nobody");
		return 3;
	}
	if (!rewrite(argv[1], argv[2])) {
		fprintf(stderr, "s-droppriv: '%s' not found in memory\n", argv[1]);
		return 4;
	}
	work();
	kill(getpid(), SIGKILL);
	return 5;
}
