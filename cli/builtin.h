/*
 * builtin.h - the subcommands of callprof.  Each takes the arguments after
 * the command name (argv[0] is the command) and returns the exit status.
 */
#ifndef CP_CLI_BUILTIN_H
#define CP_CLI_BUILTIN_H

int cmd_record(int argc, const char **argv);
int cmd_report(int argc, const char **argv);
int cmd_export(int argc, const char **argv);
int cmd_merge(int argc, const char **argv);
int cmd_diff(int argc, const char **argv);
int cmd_dump(int argc, const char **argv);
int cmd_tui(int argc, const char **argv);
int cmd_attach(int argc, const char **argv);
/* argv[0]: "cc", "c++", or a compiler (cp_cc_names_compiler()); execs it. */
int cmd_cc(int argc, const char **argv);

/* Does ARG name gcc, g++, cc, c++, clang or clang++ (a path, a version suffix)? */
int cp_cc_names_compiler(const char *arg);

/* Is ARG one of callprof cc's own options (--sleds, --hooks)? */
int cp_cc_is_option(const char *arg);

/*
 * Shared by record and attach (cmd-record.c): the path of a mode's runtime
 * library (malloc'd, NULL if not found), and whether the kernel grants the
 * CPU-time sampling of cpu mode (0, or the errno of its refusal).
 */
char *cp_find_runtime(const char *lib);
int cp_probe_cpu_sampling(unsigned hz, int switches);

#endif /* CP_CLI_BUILTIN_H */
