/*
 * options.h - a small table-driven option parser for the subcommands.
 *
 * Accepts -x VALUE, -xVALUE, --long VALUE, --long=VALUE and boolean flags;
 * "--" ends the options.  With CP_OPT_STOP_AT_NONOPTION (record) parsing
 * stops at the first non-option, which belongs to the profiled program.
 * -h prints usage from the table on stdout and exits 0 (--help opens the
 * man page when installed, else does the same); a bad option
 * prints one line saying what is wrong on stderr and exits 129.
 */
#ifndef CP_CLI_OPTIONS_H
#define CP_CLI_OPTIONS_H

enum cp_opt_type {
	CP_OPT_END = 0,
	CP_OPT_FLAG,   /* int *: set to 1 */
	CP_OPT_STRING, /* const char **: the value */
	CP_OPT_DOUBLE, /* double *: a number */
	CP_OPT_CHOICE, /* int *: index of the value in choices (NULL-terminated) */
	CP_OPT_LIST,   /* const char ***: appended to a NULL-terminated array */
	CP_OPT_OPTARG, /* const char **: the value after "=", or "" when given bare
			* ("--sample" never takes the next argument, which may be
			* the program); long options only */
};

struct cp_option {
	enum cp_opt_type type;
	int short_name;		    /* 0 if none */
	const char *long_name;	    /* NULL if none */
	void *value;		    /* where to store */
	const char *argh;	    /* value placeholder for usage, e.g. "FILE" */
	const char *help;	    /* one line */
	const char *const *choices; /* for CP_OPT_CHOICE */
};

#define CP_OPT_STOP_AT_NONOPTION 1

/*
 * Parse argv[1..argc) (argv[0] is the command name; argv[argc] is NULL).
 * Positional arguments, and everything after "--" or (with
 * CP_OPT_STOP_AT_NONOPTION) after the first non-option, are moved to
 * argv[0..n) and argv[n] = NULL; returns n.
 */
int cp_parse_options(int argc, const char **argv, const struct cp_option *opts,
		     const char *const *usage, int flags);
void cp_usage_with_options(const char *const *usage, const struct cp_option *opts, int err)
	__attribute__((noreturn));
/* "callprof: error: MSG (see 'callprof CMD -h')" on stderr, exit 129. */
void cp_usage_error(const char *const *usage, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* OPT's value ARG: a decimal number from min to max, or a usage error (exit 129). */
long cp_parse_number(const char *arg, long min, long max, const char *opt,
		     const char *const *usage);

/*
 * A process id: a positive number, or a usage error (exit 129) saying
 * "WHAT wants a process id" (WHAT: the option, or the command for an operand).
 */
unsigned cp_parse_pid(const char *arg, const char *what, const char *const *usage);

#endif /* CP_CLI_OPTIONS_H */
