/*
 * unittest.c - main() for unit tests: runs each registered test in a fork.
 * With arguments, runs only the tests named.
 */
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/unittest.h"

static struct cp_test *tests, **tail = &tests;

void cp_test__register(struct cp_test *t)
{
	*tail = t;
	tail = &t->next;
}

static const char *i128_str(__int128 v, char buf[48])
{
	unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
	char *p = buf + 47;

	*p = '\0';
	do {
		*--p = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return p;
}

void cp_test__fail_int(const char *file, int line, const char *a, const char *op, const char *b,
		       __int128 va, __int128 vb)
{
	char ba[48], bb[48];

	cp_test__fail(file, line, "%s %s %s: %s, %s", a, op, b, i128_str(va, ba), i128_str(vb, bb));
}

void cp_test__fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

static int wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

/* Each run works in a fresh scratch directory, removed at the end. */
static char scratch[] = "/tmp/callprof-unit.XXXXXX";

static void remove_scratch(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd))
		fprintf(stderr, "warning: could not remove %s\n", scratch);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	if (!mkdtemp(scratch) || chdir(scratch)) {
		perror("scratch directory");
		return 2;
	}

	for (struct cp_test *t = tests; t; t = t->next) {
		int status;
		pid_t pid;

		if (!wanted(t->name, argc, argv))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			t->fn();
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			perror("fork");
			return 2;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok   %s\n", t->name);
			passed++;
		} else {
			if (WIFSIGNALED(status))
				printf("SG   %s (signal %d)\n", t->name, WTERMSIG(status));
			else
				printf("NG   %s\n", t->name);
			failed++;
		}
	}
	remove_scratch();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
