/*
 * runstat.c - run a command, report its wall time and peak RSS.
 *
 *	runstat OUTFILE PROG [ARGS...]
 *
 * Forks and execs PROG, waits for it with wait4() and writes one line
 * "WALL_NS MAXRSS_KB" to OUTFILE; PROG's own stdout and stderr pass through
 * untouched.  The RSS is the largest of PROG and the descendants it waited
 * for (for `callprof record` that is the tool or the profiled program,
 * whichever peaked higher).  Exits with PROG's status (128 + signal if it
 * was killed), 127 if it could not be started.  bench/run uses this rather
 * than GNU time(1), which not every machine has.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	uint64_t start, wall;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: runstat OUTFILE PROG [ARGS...]\n");
		return 129;
	}
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "runstat: cannot open '%s': %s\n", argv[1], strerror(errno));
		return 127;
	}
	start = now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runstat: cannot fork: %s\n", strerror(errno));
		return 127;
	}
	if (!pid) {
		fclose(out);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "runstat: cannot run '%s': %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runstat: wait4: %s\n", strerror(errno));
			return 127;
		}
	}
	wall = now_ns() - start;
	fprintf(out, "%llu %ld\n", (unsigned long long)wall, ru.ru_maxrss);
	if (fclose(out)) {
		fprintf(stderr, "runstat: cannot write '%s': %s\n", argv[1], strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
