/*
 * callprof.c - main: dispatch to a subcommand from the command table, then
 * flush stdout and fail on write errors (a report piped into a full disk
 * must not exit 0).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/builtin.h"
#include "format/format.h"
#include "util/util.h"

#define CALLPROF_VERSION "0.1.0"

static const struct {
	const char *name;
	int (*fn)(int, const char **);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "run a program and record its call trees" },
	{ "report", cmd_report, "show call tree, flat profile, callers/callees" },
	{ "export", cmd_export, "write a profile in another format" },
	{ "merge", cmd_merge, "merge many profiles into one, keeping the spread across them" },
	{ "diff", cmd_diff, "compare two profiles call path by call path" },
	{ "attach", cmd_attach, "profile a running instrumented program for a while" },
	{ "dump", cmd_dump, "snapshot the profile of a recorded program that runs on" },
	{ "tui", cmd_tui, "browse a profile interactively in the terminal" },
	{ "cc", cmd_cc, "compile with -g and instrumentation (also c++; or callprof COMPILER)" },
	{ "c++", cmd_cc, "the same with the C++ compiler" },
};

/*
 * The temporaries of the profiles the tool writes (merge, record --sample):
 * one at a time, each told once created and once gone.
 */
static void writer_tmp_hook(const char *tmp, int live)
{
	static struct cp_tempfile *listed;

	cp_tempfile__remove(listed);
	listed = live ? cp_tempfile__add(tmp) : NULL;
}

static void usage(FILE *fp)
{
	fprintf(fp, "usage: callprof [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(fp, "   %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(fp, "\n'callprof COMMAND -h' lists a command's options; "
		    "'man callprof-COMMAND' explains them.\n");
}

/*
 * callprof cc, c++ or COMPILER (a launcher's form), maybe after cc's own
 * options: CMake runs `callprof --sleds /usr/bin/cc ...` for the launcher
 * "callprof;--sleds".  Those options are then moved after the compiler,
 * where cmd_cc() reads them.
 */
static int is_cc(int argc, const char **argv)
{
	int n = 0;
	const char *c;

	while (1 + n < argc && cp_cc_is_option(argv[1 + n]))
		n++;
	if (1 + n >= argc)
		return 0;
	c = argv[1 + n];
	if (strcmp(c, "cc") && strcmp(c, "c++") && !cp_cc_names_compiler(c))
		return 0;
	memmove(argv + 2, argv + 1, (size_t)n * sizeof(*argv));
	argv[1] = c;
	return 1;
}

int main(int argc, const char **argv)
{
	/*
	 * A closed pipe (report | head) is a normal end, not a crash; a file
	 * size limit is an error with its message; a signal that ends us
	 * removes the temporary files first.
	 */
	/*
	 * The compiler wrapper (also as a launcher: callprof /usr/bin/cc ...)
	 * execs the compiler, which must inherit the signals as we got them.
	 */
	if (is_cc(argc, argv))
		return cmd_cc(argc - 1, argv + 1);
	if (argc >= 2 && cp_cc_is_option(argv[1])) {
		cp_error("%s is callprof cc's: callprof %s COMPILER ARGS..., or callprof cc %s "
			 "ARGS...", argv[1], argv[1], argv[1]);
		return 129;
	}
	cp_signals__init();
	cp_writer_tmp_hook = writer_tmp_hook;
	if (argc < 2) {
		usage(stderr);
		return 129;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return cp_finish_stdout() ? 1 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("callprof %s\n", CALLPROF_VERSION);
		return cp_finish_stdout() ? 1 : 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			int ret = commands[i].fn(argc - 1, argv + 1);

			if (cp_finish_stdout() && !ret)
				ret = 1;
			return ret;
		}
	}
	cp_error("'%s' is not a callprof command; see 'callprof --help'", argv[1]);
	return 129;
}
