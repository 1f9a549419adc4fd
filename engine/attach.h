/*
 * attach.h - `callprof attach PID`: exact call profiles of a program that is
 * already running (docs/internals/attach.md).
 *
 * cmd-attach.c parses the options and reports; attach-check.c decides
 * whether PID can be attached to at all, before anything in it changes;
 * attach-ptrace.c does the attaching: it loads a fresh copy of the runtime
 * into the process with the process's own dlopen, points the
 * __cyg_profile_func_enter/exit slots of its modules at the copy's hooks,
 * and points them back at the end.
 */
#ifndef CP_ENGINE_ATTACH_H
#define CP_ENGINE_ATTACH_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* What the checks learnt about the process. */
struct cp_attach_target {
	pid_t pid;
	uid_t uid;	     /* its real user */
	char exe[PATH_MAX];  /* /proc/PID/exe's target */
	char comm[32];	     /* /proc/PID/comm */
	unsigned hook_modules; /* modules that import __cyg_profile_func_enter (hooks) */
	unsigned sled_modules; /* modules with __patchable_function_entries (sleds) */
	unsigned sled_catch;   /* ... of which C++ that catches exceptions */
	int no_sleds;	     /* enum cp_no_sleds: the sleds are left alone, the hooks only */
};

/* Why a process's sleds are left alone (its hooks attached only). */
enum cp_no_sleds {
	CP_NO_SLEDS_CET = 1,   /* CET shadow stacks: a replaced return address faults */
	CP_NO_SLEDS_CATCH = 2, /* C++ that catches: a throw through a stub terminates */
};

/*
 * The /proc directory to read process pid's memory, maps and files
 * through: /proc/PID, or /proc/PID/task/TID of a live thread when its main
 * thread has ended (pthread_exit: its own files then show no memory).
 * Into buf; returns buf.
 */
const char *cp_attach__proc(pid_t pid, char *buf, size_t size);

/* How many threads of process pid are alive (not zombies): 0 once it has ended. */
int cp_attach__live_threads(pid_t pid);

/* Thread tid's seccomp mode (Seccomp: in its /proc status: 0, 1 strict, 2 filter); 0 if unread. */
int cp_attach__seccomp_mode(pid_t pid, pid_t tid);

/*
 * A number of /proc/PID/status (tid 0) or of thread tid's status: the line
 * starting with key ("TracerPid:" in base 10, "SigBlk:" in base 16, whose
 * bit sig - 1 is signal sig); missing if the file or the line is not there.
 */
uint64_t cp_attach__status_field(pid_t pid, pid_t tid, const char *key, int base, uint64_t missing);

/*
 * Can PID be attached to?  0 and *t filled in, or -1 after one line on
 * stderr (cp_error) naming the process and what stands in the way: no such
 * process, another user's, ptrace forbidden (Yama, undumpable, traced by
 * another process), a 32-bit or static program, one none of whose modules
 * calls __cyg_profile_func_enter (-finstrument-functions) or has patchable
 * entries (-fpatchable-function-entry: sleds), a sleds-only program under
 * CET shadow stacks or in C++ that catches exceptions, one that `callprof
 * record` already records.  Changes
 * nothing in PID.
 */
int cp_attach__check(pid_t pid, struct cp_attach_target *t);

/*
 * Will the profile the process writes at path (absolute) be where callprof
 * finds it?  In another mount namespace the directory must be the same
 * one.  0, or -1 after one line on stderr.
 */
int cp_attach__check_output(const struct cp_attach_target *t, const char *path);

/* What `callprof attach` asks for. */
struct cp_attach_opts {
	const char *runtime;	   /* path of the mode's runtime library */
	const char *out;	   /* absolute path of the profile */
	const char *const *env;	   /* "NAME=VALUE" settings for the runtime, NULL-terminated */
	double duration;	   /* seconds; 0: until Ctrl-C or the process ends */
	int perf;		   /* the runtime opens perf events (CPU samples, the off-CPU split) */
};

/* How the window ended. */
struct cp_attach_result {
	int ended;	     /* the process ended during the window */
	double window;	     /* seconds the hooks were ours */
	unsigned threads;    /* threads stopped at attach */
	unsigned open;	     /* instrumented calls open at attach, seeded */
	unsigned still;	     /* threads with calls open at attach that ran no hook in the
			      * window: in the profile with those calls, as the stop made them */
	int ran;	     /* instrumented code ran: the process wrote, or tried to write,
			      * a profile (the stop said so, or a file came after its end) */
	int empty;	     /* the process said it ran no instrumented code */
	int write_errno;     /* the process could not write its profile: why */
	int watch_errno;     /* its watcher could not write it: why */
	int rights;	     /* its watcher could not tell its rights, and wrote nothing */
	char execd[PATH_MAX]; /* the program the process ran (exec) in the window, or "" */
	double held_on;	     /* seconds every thread was stopped at the switch-on */
	unsigned sleds;	     /* sleds patched at the switch */
	unsigned sleds_left; /* sleds planned but left alone (crossing a page, changed) */
	unsigned moved;	     /* threads moved from inside a sled to its end */
	unsigned given;	     /* return addresses given back at the end */
};

/* Attach, record for the window, detach.  0, or -1 after one line on stderr. */
int cp_attach__run(const struct cp_attach_target *t, const struct cp_attach_opts *o,
		   struct cp_attach_result *r);

#endif /* CP_ENGINE_ATTACH_H */
