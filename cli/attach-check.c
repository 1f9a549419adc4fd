/*
 * attach-check.c - can `callprof attach` attach to PID?  Reads /proc and the
 * program's files; changes nothing in the process.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/attach.h"
#include "util/util.h"

int cp_attach__check(pid_t pid, struct cp_attach_target *t)
{
	char path[64];
	ssize_t n;
	FILE *f;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	if (n < 0)
		return cp_error("attach: no process %d", (int)pid);
	t->exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = '\0';
		fclose(f);
	}
	t->uid = getuid();
	return 0;
}
