/*
 * select.h - record-time selection (cli/select.c, runtime/filter.c).
 */
#ifndef CP_CLI_SELECT_H
#define CP_CLI_SELECT_H

struct cp_select {
	const char **include, **exclude, **exclude_tree, **exclude_file, **exclude_module, **start;
	int regex;	    /* --regex: name patterns are POSIX extended regular expressions */
	unsigned max_depth; /* --max-depth, 0 = none */
	unsigned budget;    /* --budget in hundredths of a percent, 0 = none */
};

/*
 * Resolve sel against prog and the instrumented libraries it links; write
 * the runtime's filter file and return its path (the caller unlinks it),
 * or NULL when nothing was asked for.  Bad patterns are usage errors; a
 * --start that matches nothing is an error (exit 1).
 */
char *cp_select__write(const struct cp_select *sel, const char *prog, const char *const *usage);

#endif /* CP_CLI_SELECT_H */
