/*
 * s-sled-backtrace.c - stack walks from sledded frames (t0531): main() ->
 * level_a() -> level_b() -> level_c() -> walk(), which prints the names of
 * the frames it finds, innermost first, up to main():
 *
 *	backtrace: walk level_c level_b level_a main
 *	unwind: ...
 *
 * "backtrace" from backtrace() + backtrace_symbols() (the names come from
 * the dynamic symbols: link with -rdynamic), "unwind" from
 * _Unwind_Backtrace() + dladdr().  Then the same from a signal handler
 * (SIGUSR1 raised in level_c()), whose walk crosses the signal frame.
 * A frame without a name shows as "?(object)", the base name of its
 * object file, if any.  Each walk is done ROUNDS times (default 3); then
 * prints its counts.
 * The names must be the same alone and under callprof record: the runtime
 * must not leave its return stubs where an unwinder can see them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#define SLED_COUNT_MAIN
#include "s-sled-count.h"

volatile long sink;

#define MAX_FRAMES 64

/* The name in "path(name+0x1f) [0xaddr]", or "?" */
SLED_UNCOUNTED static void put_name(const char *sym, char *line, size_t size)
{
	const char *open = strchr(sym, '(');
	size_t len = 0;

	if (open && open[1] != '+' && open[1] != ')') {
		open++;
		len = strcspn(open, "+)");
	}
	if (!len) {
		/* No name: "?(object)", the object's base name or nothing. */
		const char *base = sym, *slash;
		size_t blen = strcspn(sym, "([ ");

		for (slash = sym; slash < sym + blen; slash++)
			if (*slash == '/')
				base = slash + 1;
		blen -= base - sym;
		snprintf(line + strlen(line), size - strlen(line), " ?(%.*s)", (int)blen, base);
		return;
	}
	snprintf(line + strlen(line), size - strlen(line), " %.*s", (int)len, open);
}

NOINLINE void walk_backtrace(void)
{
	void *ips[MAX_FRAMES];
	char line[1024] = "backtrace:";
	char **syms;
	int n;

	COUNT("walk_backtrace");
	n = backtrace(ips, MAX_FRAMES);
	syms = backtrace_symbols(ips, n);
	if (!syms)
		abort();
	for (int i = 0; i < n; i++) {
		put_name(syms[i], line, sizeof(line));
		if (strstr(syms[i], "(main+"))
			break;
	}
	free(syms);
	printf("%s\n", line);
}

struct unwind_walk {
	char line[1024];
	int done;
};

SLED_UNCOUNTED static _Unwind_Reason_Code unwind_one(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_walk *w = arg;
	int before;
	Dl_info info;
	void *ip;

	if (w->done)
		return _URC_END_OF_STACK;
	before = 0;
	ip = (void *)_Unwind_GetIPInfo(ctx, &before);
	if (!ip)
		return _URC_END_OF_STACK;
	/* A return address points after the call: look up the call's byte. */
	if (!before)
		ip = (char *)ip - 1;
	if (dladdr(ip, &info) && info.dli_sname) {
		snprintf(w->line + strlen(w->line), sizeof(w->line) - strlen(w->line), " %s",
			 info.dli_sname);
		if (!strcmp(info.dli_sname, "main"))
			w->done = 1;
	} else {
		const char *base = NULL;

		if (dladdr(ip, &info) && info.dli_fname) {
			base = strrchr(info.dli_fname, '/');
			base = base ? base + 1 : info.dli_fname;
		}
		snprintf(w->line + strlen(w->line), sizeof(w->line) - strlen(w->line), " ?(%s)",
			 base ? base : "");
	}
	return _URC_NO_REASON;
}

NOINLINE void walk_unwind(void)
{
	struct unwind_walk w = { "unwind:", 0 };

	COUNT("walk_unwind");
	_Unwind_Backtrace(unwind_one, &w);
	printf("%s\n", w.line);
}

NOINLINE void walk(void)
{
	COUNT("walk");
	walk_backtrace();
	walk_unwind();
	sink++;
}

NOINLINE void on_usr1(int sig)
{
	COUNT("on_usr1");
	printf("from the handler:\n");
	walk();
	sink++;
}

NOINLINE void level_c(int in_handler)
{
	COUNT("level_c");
	if (in_handler)
		raise(SIGUSR1);
	else
		walk();
	sink++;
}

NOINLINE void level_b(int in_handler)
{
	COUNT("level_b");
	level_c(in_handler);
	sink++;
}

NOINLINE void level_a(int in_handler)
{
	COUNT("level_a");
	level_b(in_handler);
	sink++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 3;

	COUNT("main");
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < rounds; i++) {
		level_a(0);
		level_a(1);
	}
	sled_count_print();
	return 0;
}
