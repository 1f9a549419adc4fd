/*
 * options.c - see options.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/options.h"
#include "util/util.h"

/*
 * The lists the parser allocated (CP_OPT_LIST values), so that a usage
 * error frees them before it exits: a usage error leaves nothing behind,
 * and the commands find their own usage errors before they allocate
 * anything else.
 */
static const char ***parsed_lists[32];
static size_t nparsed_lists;

static void free_parsed_lists(void)
{
	for (size_t i = 0; i < nparsed_lists; i++) {
		free(*parsed_lists[i]);
		*parsed_lists[i] = NULL;
	}
	nparsed_lists = 0;
}

static void print_usage(FILE *fp, const char *const *usage, const struct cp_option *opts)
{
	fprintf(fp, "usage: %s\n", usage[0]);
	for (int i = 1; usage[i]; i++)
		fprintf(fp, "   or: %s\n", usage[i]);
	fputc('\n', fp);
	for (const struct cp_option *o = opts; o->type != CP_OPT_END; o++) {
		char left[64];
		int n = 0;

		if (o->short_name && o->long_name)
			n = snprintf(left, sizeof(left), "-%c, --%s", o->short_name, o->long_name);
		else if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c", o->short_name);
		else
			n = snprintf(left, sizeof(left), "    --%s", o->long_name);
		if (o->type == CP_OPT_OPTARG && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - n, "[=%s]", o->argh ? o->argh : "VALUE");
		else if (o->type != CP_OPT_FLAG && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - n, " %s", o->argh ? o->argh : "VALUE");
		fprintf(fp, "    %-28s %s\n", left, o->help);
	}
}

void cp_usage_with_options(const char *const *usage, const struct cp_option *opts, int err)
{
	print_usage(err ? stderr : stdout, usage, opts);
	free_parsed_lists();
	exit(err ? 129 : 0);
}

/*
 * --help: the command's man page when it is installed (like git), else
 * fall through to the usage from the option table.
 */
static void show_man_page(const char *const *usage)
{
	char page[64], cmd[160];
	const char *sp = strchr(usage[0] + sizeof("callprof"), ' ');
	int len = sp ? (int)(sp - usage[0]) : 40;

	snprintf(page, sizeof(page), "%.*s", len, usage[0]);
	page[sizeof("callprof") - 1] = '-'; /* "callprof record" -> "callprof-record" */
	snprintf(cmd, sizeof(cmd), "man -w %s >/dev/null 2>&1", page);
	if (system(cmd) != 0)
		return;
	fflush(NULL);
	execlp("man", "man", page, (char *)NULL);
}

void cp_usage_error(const char *const *usage, const char *fmt, ...)
{
	char msg[512], cmd[64];
	const char *sp;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* usage[0] starts "callprof CMD ..."; name the command for -h. */
	sp = strchr(usage[0] + sizeof("callprof"), ' ');
	snprintf(cmd, sizeof(cmd), "%.*s", sp ? (int)(sp - usage[0]) : 40, usage[0]);
	cp_error("%s (see '%s -h')", msg, cmd);
	free_parsed_lists();
	exit(129);
}

static void set_value(const struct cp_option *o, const char *val, const char *shown,
		      const char *const *usage, const struct cp_option *opts)
{
	switch (o->type) {
	case CP_OPT_FLAG:
		*(int *)o->value = 1;
		break;
	case CP_OPT_STRING:
	case CP_OPT_OPTARG:
		*(const char **)o->value = val;
		break;
	case CP_OPT_DOUBLE:
		if (cp_parse_double(val, (double *)o->value))
			cp_usage_error(usage, "option '%s' wants a number, not '%s'", shown, val);
		break;
	case CP_OPT_CHOICE:
		for (int i = 0; o->choices[i]; i++) {
			if (!strcmp(o->choices[i], val)) {
				*(int *)o->value = i;
				return;
			}
		}
		cp_usage_error(usage, "option '%s' does not take '%s'", shown, val);
		break;
	case CP_OPT_LIST: {
		const char ***list = o->value;
		size_t n = 0;

		while (*list && (*list)[n])
			n++;
		if (!*list && nparsed_lists < ARRAY_SIZE(parsed_lists))
			parsed_lists[nparsed_lists++] = list;
		*list = xrealloc(*list, (n + 2) * sizeof(**list));
		(*list)[n] = val;
		(*list)[n + 1] = NULL;
		break;
	}
	case CP_OPT_END:
		break;
	}
}

int cp_parse_options(int argc, const char **argv, const struct cp_option *opts,
		     const char *const *usage, int flags)
{
	int i, npos = 0;
	char shown[64];

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct cp_option *o;
		const char *val = NULL;

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (flags & CP_OPT_STOP_AT_NONOPTION)
				break;
			argv[npos++] = arg; /* positional, options may follow */
			continue;
		}
		if (!strcmp(arg, "--help"))
			show_man_page(usage);
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			cp_usage_with_options(usage, opts, 0);
		if (arg[1] == '-') {
			const char *name = arg + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			for (o = opts; o->type != CP_OPT_END; o++)
				if (o->long_name && strlen(o->long_name) == len &&
				    !strncmp(o->long_name, name, len))
					break;
			if (o->type == CP_OPT_END)
				cp_usage_error(usage, "unknown option '%s'", arg);
			if (o->type == CP_OPT_FLAG) {
				if (eq)
					cp_usage_error(usage, "option '--%s' takes no value",
						       o->long_name);
			} else if (eq) {
				val = eq + 1;
			} else if (o->type == CP_OPT_OPTARG) {
				val = "";
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				cp_usage_error(usage, "option '%s' needs a value", arg);
			}
		} else {
			for (o = opts; o->type != CP_OPT_END; o++)
				if (o->short_name == arg[1])
					break;
			if (o->type == CP_OPT_END)
				cp_usage_error(usage, "unknown option '%s'", arg);
			if (o->type == CP_OPT_FLAG) {
				if (arg[2])
					cp_usage_error(usage, "unknown option '%s'", arg);
			} else if (arg[2]) {
				val = arg + 2;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				cp_usage_error(usage, "option '%s' needs a value", arg);
			}
		}
		/* Name the option, not what came with it ("--sort=x" is --sort). */
		if (arg[1] == '-')
			snprintf(shown, sizeof(shown), "--%s", o->long_name);
		else
			snprintf(shown, sizeof(shown), "-%c", o->short_name);
		set_value(o, val, shown, usage, opts);
	}
	while (i < argc)
		argv[npos++] = argv[i++];
	argv[npos] = NULL;
	return npos;
}

long cp_parse_number(const char *arg, long min, long max, const char *opt,
		     const char *const *usage)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (*end || end == arg || errno || v < min || v > max)
		cp_usage_error(usage, "%s wants a number from %ld to %ld, not '%s'", opt, min, max, arg);
	return v;
}

unsigned cp_parse_pid(const char *arg, const char *what, const char *const *usage)
{
	char *end;
	unsigned long v;

	if (!arg)
		return 0;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v == 0 || v > 0x7fffffff || *arg == '-')
		cp_usage_error(usage, "%s wants a process id, not '%s'", what, arg);
	return (unsigned)v;
}
