/*
 * sample.h - `callprof record --sample`: profile a program that was not
 * built with -finstrument-functions by sampling its user call stacks with
 * perf_event_open, and write the same profile file the runtime writes
 * (mode CP_MODE_SAMPLED, docs/profile-format.md, *Sampling*).
 *
 * Everything happens in the tool: the program runs unchanged, and its
 * stacks are unwound after the fact from the samples (DWARF CFI over a
 * copy of the top of the user stack, or the kernel's frame-pointer
 * chains).  docs/internals/sampling.md explains the choices.
 *
 * Use: cp_sampler__start() forks the program, stopped before exec, and
 * opens the events on it (or says why it cannot and leaves nothing
 * running); cp_sampler__run() lets it go and drains the samples until it
 * exits; cp_sampler__finish() writes one profile per process and the
 * summary line.  Functions print through cp_error()/cp_warning() and return 0
 * or -1.
 */
#ifndef CP_SAMPLE_SAMPLE_H
#define CP_SAMPLE_SAMPLE_H

#include <sys/types.h>

#define CP_SAMPLE_DEFAULT_HZ 997 /* prime: does not beat with periodic work */
#define CP_SAMPLE_MAX_HZ 20000	 /* the kernel's default perf_event_max_sample_rate is lower */

enum cp_sample_unwind {
	CP_UNWIND_DWARF = 0, /* user stack snapshots + CFI (.eh_frame) */
	CP_UNWIND_FP = 1,    /* the kernel's frame-pointer call chains */
};

struct cp_sample_opts {
	unsigned hz;			/* samples per second of CPU time */
	enum cp_sample_unwind unwind;	/* how to get call stacks */
	const char *out;		/* absolute profile path: PATH, PATH.PID, PATH.execN */
};

struct cp_sampler;

/*
 * Fork argv[0] (looked up in PATH), stopped before exec, and open the
 * sampling events on it.  On failure prints one line saying why and what
 * to do, makes sure the program never runs, and returns NULL.
 */
struct cp_sampler *cp_sampler__start(const struct cp_sample_opts *opts, const char **argv);
/* The program's pid (for relaying signals). */
pid_t cp_sampler__pid(const struct cp_sampler *s);
/* Let the program run; collect samples until it exits.  *status as waitpid's. */
int cp_sampler__run(struct cp_sampler *s, int *status);
/* Write the profiles and say where they went; the number of errors. */
int cp_sampler__finish(struct cp_sampler *s);
void cp_sampler__free(struct cp_sampler *s);

#endif /* CP_SAMPLE_SAMPLE_H */
