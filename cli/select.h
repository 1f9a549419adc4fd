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
 * the runtime's filter file and set *path to its path (the caller unlinks
 * and frees it), or to NULL when nothing was asked for; 0.  A --start that
 * matches nothing is an error: one line, -1.  Patterns must have passed
 * cp_select__check.
 */
int cp_select__write(const struct cp_select *sel, const char *prog, char **path);

/* Bad regular expressions in sel are usage errors (exit 129), found before anything is allocated. */
void cp_select__check(const struct cp_select *sel, const char *const *usage);

/*
 * The options record and attach share: --max-depth and --budget's values
 * (NULL when not given) into sel, checked against the mode (coverage has
 * no frames to limit; only timing has a clock cost to budget), then
 * cp_select__check.  Every problem is a usage error (exit 129).
 */
void cp_select__parse(struct cp_select *sel, const char *max_depth, const char *budget,
		      int coverage, int timing, const char *const *usage);

/* Free the pattern lists the option parser made (not the patterns: they are argv's). */
void cp_select__release(struct cp_select *sel);

#endif /* CP_CLI_SELECT_H */
