/*
 * env.c - the runtime's settings, as the process was started with them.
 *
 * The runtime reads its settings (CALLPROF_*, and LD_PRELOAD for the
 * children it must profile too, see interpose.c) from the environment the
 * process was given at exec, never from the program's environ as it is
 * when the runtime happens to look:
 *
 *  - instrumented code may run before the C library has set environ (from
 *    .preinit_array, or another library's constructor that runs before
 *    ours): then environ is NULL, and the runtime would start without
 *    CALLPROF_OUT and write ./callprof.out;
 *  - the program may change its environment (setenv, clearenv, a process
 *    title written over the strings) before its first instrumented call,
 *    which is when a runtime that starts lazily looks.
 *
 * So the first look copies the runtime's variables (and the launcher's
 * rank and job variables, format/job.c) from the initial
 * environment into private memory of ours: in a dynamically linked
 * program, from the vector the kernel put on the initial stack, which the
 * loader's __libc_stack_end points at (its argc, argv, envp and auxv are
 * checked against getauxval, so a layout we do not know is not read);
 * otherwise (a static link, whose C library sets environ before anything
 * else runs) from environ.  The constructor takes the copy before main,
 * and any earlier caller of cp_getenv takes it then.  Only a program that
 * rewrites those strings before the first instrumented call and before our
 * constructor (from .preinit_array) can change what is read.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "runtime/internal.h"

extern char **environ;
#ifdef __GLIBC__
extern void *__libc_stack_end; /* the loader's: where argc is on the initial stack */
#endif

/* "NAME=VALUE\0" of each variable kept, one after the other. */
static char env_block[16384];
static size_t env_len;
static int env_state; /* 0: not taken, 1: being taken, 2: taken */

/* Is this a variable of the runtime (see cp_env__each)? */
static int runtime_variable(const char *s)
{
	return !strncmp(s, "CALLPROF_", 9) || !strncmp(s, "LD_PRELOAD=", 11) ||
	       !strncmp(s, "LD_BIND_NOW=", 12);
}

/* Kept too, but not the runtime's to pass on: the launcher's rank and job (format/job.c). */
static int kept_variable(const char *s)
{
	return runtime_variable(s) || cp_job__is_variable(s);
}

/*
 * The environment the kernel passed at exec, from the initial stack of a
 * dynamically linked program: argc, argv[argc + 1], envp[], auxv[].  NULL
 * unless everything there is as expected (auxv's AT_RANDOM and AT_PAGESZ
 * are getauxval's).
 */
static char **initial_envp(void)
{
#ifdef __GLIBC__
	const long *sp = __libc_stack_end;
	char **argv, **envp;
	const ElfW(auxv_t) *av;
	unsigned long want_random = getauxval(AT_RANDOM), want_page = getauxval(AT_PAGESZ);
	int seen = 0;
	size_t n;

	/* A static program has no loader, and its __libc_stack_end is not argc's. */
	if (!getauxval(AT_BASE) || !sp || !want_random || sp[0] < 0 || sp[0] > (1L << 24))
		return NULL;
	argv = (char **)(sp + 1);
	if (argv[sp[0]])
		return NULL;
	envp = argv + sp[0] + 1;
	for (n = 0; n < (1u << 24) && envp[n]; n++)
		;
	if (envp[n])
		return NULL;
	av = (const ElfW(auxv_t) *)(envp + n + 1);
	for (int i = 0; i < 128 && av[i].a_type != AT_NULL; i++) {
		if (av[i].a_type == AT_RANDOM && av[i].a_un.a_val == want_random)
			seen |= 1;
		if (av[i].a_type == AT_PAGESZ && av[i].a_un.a_val == want_page)
			seen |= 2;
	}
	return seen == 3 ? envp : NULL;
#else
	return NULL;
#endif
}

/*
 * Take the copy (once per process image; a fork child keeps its parent's).
 * A thread that finds another taking it reads environ meanwhile.
 */
void cp_env__snapshot(void)
{
	int expected = 0;
	char **env;

	if (!__atomic_compare_exchange_n(&env_state, &expected, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE))
		return;
	env = initial_envp();
	if (!env)
		env = environ;
	for (size_t i = 0; env && env[i]; i++) {
		size_t len = strlen(env[i]) + 1;

		if (!kept_variable(env[i]) || len > sizeof(env_block) - env_len)
			continue;
		memcpy(env_block + env_len, env[i], len);
		env_len += len;
	}
	__atomic_store_n(&env_state, 2, __ATOMIC_RELEASE);
}

static const char *find(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < env_len;) {
		const char *s = env_block + i;
		size_t n = strlen(s);

		if (n > len && s[len] == '=' && !memcmp(s, name, len))
			return s + len + 1;
		i += n + 1;
	}
	return NULL;
}

const char *cp_env__get(const char *name)
{
	cp_env__snapshot();
	if (__atomic_load_n(&env_state, __ATOMIC_ACQUIRE) != 2)
		return getenv(name); /* NOLINT: another thread is copying it this instant */
	return find(name);
}

/* Call fn with each "NAME=VALUE" the runtime started with (LD_PRELOAD, CALLPROF_*). */
void cp_env__each(void (*fn)(const char *var, void *arg), void *arg)
{
	cp_env__snapshot();
	if (__atomic_load_n(&env_state, __ATOMIC_ACQUIRE) != 2)
		return;
	for (size_t i = 0; i < env_len; i += strlen(env_block + i) + 1)
		if (runtime_variable(env_block + i))
			fn(env_block + i, arg);
}
