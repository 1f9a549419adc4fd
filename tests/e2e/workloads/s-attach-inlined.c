/*
 * s-attach-inlined.c - hot calls of functions inlined with their hooks, for
 * `callprof attach` (t0517).  gcc keeps the -finstrument-functions hooks of
 * a function it inlines (and so does clang without
 * -finstrument-functions-after-inlining): one physical frame of outer()
 * holds the calls outer > mid > inner of the hooks' world.  inner() is
 * always inlined, mid() where the compiler likes (a static inline
 * function, inlined at -O2).
 *
 *   t-attach-inlined CMD REPLY
 *
 * Two workers call outer() as fast as they can; the gate thread calls it
 * too, but its inner() blocks in read() of a pipe until the test lets it
 * through, one iteration per byte: a thread stopped inside two inlined
 * calls, whose counts are exact.  The recursive gate thread calls rec()'s
 * out-of-line copy, which recurses through step() into copies of itself
 * inlined there (rec > step > rec > step > rec, three calls of rec in two
 * physical frames of step and one of rec) and blocks at the bottom the same
 * way; on the way up each rec calls leaf once.  SIGUSR1 runs on_usr1 >
 * usr1_work (inlined) on whichever thread it lands on.  The main thread
 * reads commands, one a line, from the FIFO CMD and appends one reply line
 * each to REPLY:
 *   stats      "stats waiting=0|1 hooks=glibc|callprof|mixed gate:outer=N
 *              gate:mid=N gate:inner=N gate:leaf=N work:outer=N ...
 *              rec:rec=N rec:step=N rec:leaf=N" (waiting: both gates are
 *              blocked in their reads)
 *   release N  lets each gate thread through N times: "released N"
 *   quit       "bye", then exit 0
 * The first reply line is "ready PID".  Started without callprof.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

/* NOINSTR (workload.h): no hooks and no sled */
#define ALWAYS_INLINE inline __attribute__((always_inline))

enum { OUTER, MID, INNER, LEAF, NFN, REC = OUTER, STEP = MID };
enum { GATE, WORK, RGATE, NWHO };

volatile long sink;
static unsigned long counts[NWHO][NFN];
static int gate_pipe[2], rec_pipe[2];
static volatile int waiting, rec_waiting;

static ALWAYS_INLINE NOINSTR void count(int who, int fn)
{
	__atomic_fetch_add(&counts[who][fn], 1, __ATOMIC_RELAXED);
}

NOINLINE void leaf(int who)
{
	count(who, LEAF);
	sink++;
}

static ALWAYS_INLINE void inner(int who)
{
	count(who, INNER);
	if (who == GATE) {
		char c;

		waiting = 1;
		while (read(gate_pipe[0], &c, 1) != 1)
			;
		waiting = 0;
	}
	for (int i = 0; i < 3; i++)
		leaf(who);
}

static inline void mid(int who)
{
	count(who, MID);
	inner(who);
}

NOINLINE void outer(int who)
{
	count(who, OUTER);
	mid(who);
}

NOINLINE void step(int depth);

static ALWAYS_INLINE void rec(int depth)
{
	count(RGATE, REC);
	if (depth) {
		step(depth - 1);
		leaf(RGATE);
	} else {
		char c;

		rec_waiting = 1;
		while (read(rec_pipe[0], &c, 1) != 1)
			;
		rec_waiting = 0;
	}
}

NOINLINE void step(int depth)
{
	count(RGATE, STEP);
	rec(depth);
}

/* Called through a pointer: rec's out-of-line copy. */
static void (*volatile rec_copy)(int) = rec;

static ALWAYS_INLINE void usr1_work(void)
{
	sink += 2;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_work();
}

static void *worker(void *arg)
{
	for (;;)
		outer(WORK);
	return arg;
}

static void *gate(void *arg)
{
	for (;;)
		outer(GATE);
	return arg;
}

static void *recgate(void *arg)
{
	for (;;)
		rec_copy(2);
	return arg;
}

/* Where the hooks' slots of this program point, as the C library's dladdr names them. */
struct hooks_scan {
	int slots, glibc, callprof;
};

static NOINSTR int scan_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hooks_scan *s = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Rela) *rel[2] = { NULL, NULL };
	size_t relsz[2] = { 0, 0 };
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 1; /* the main program only, the first */
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_JMPREL: rel[0] = (const void *)dyn->d_un.d_ptr; break;
		case DT_PLTRELSZ: relsz[0] = dyn->d_un.d_val; break;
		case DT_RELA: rel[1] = (const void *)dyn->d_un.d_ptr; break;
		case DT_RELASZ: relsz[1] = dyn->d_un.d_val; break;
		case DT_SYMTAB: symtab = (const void *)dyn->d_un.d_ptr; break;
		case DT_STRTAB: strtab = (const void *)dyn->d_un.d_ptr; break;
		}
	}
	for (int k = 0; k < 2 && symtab && strtab; k++) {
		for (size_t j = 0; rel[k] && j < relsz[k] / sizeof(ElfW(Rela)); j++) {
			const char *name = strtab + symtab[ELF64_R_SYM(rel[k][j].r_info)].st_name;
			void **slot = (void **)(info->dlpi_addr + rel[k][j].r_offset);
			Dl_info di;

			if (strncmp(name, "__cyg_profile_func_", 19))
				continue;
			s->slots++;
			if (dladdr(*slot, &di) && di.dli_fname) {
				/* an attached runtime copy is /proc/CALLPROFPID/fd/N */
				if (strstr(di.dli_fname, "callprof") ||
				    !strncmp(di.dli_fname, "/proc/", 6))
					s->callprof++;
				else if (strstr(di.dli_fname, "libc.so"))
					s->glibc++;
			}
		}
	}
	return 1;
}

static NOINSTR const char *hooks_state(void)
{
	struct hooks_scan s = { 0 };

	dl_iterate_phdr(scan_module, &s);
	return !s.slots ? "none" : s.glibc == s.slots ? "glibc" : s.callprof == s.slots ? "callprof" :
									     "mixed";
}

static NOINSTR void reply(const char *path, const char *line)
{
	FILE *f = fopen(path, "a");

	if (!f)
		exit(2);
	fputs(line, f);
	fputc('\n', f);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const char *const who[NWHO] = { "gate", "work", "rec" };
	static const char *const fn[NWHO][NFN] = { { "outer", "mid", "inner", "leaf" },
						   { "outer", "mid", "inner", "leaf" },
						   { "rec", "step", NULL, "leaf" } };
	struct sigaction sa;
	char line[256], out[1024];
	pthread_t t;
	FILE *cmd;

	if (argc != 3 || pipe(gate_pipe) || pipe(rec_pipe))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, worker, NULL);
	pthread_create(&t, NULL, worker, NULL);
	pthread_create(&t, NULL, gate, NULL);
	pthread_create(&t, NULL, recgate, NULL);
	while (!waiting || !rec_waiting)
		usleep(1000);
	snprintf(out, sizeof(out), "ready %d", (int)getpid());
	reply(argv[2], out);
	cmd = fopen(argv[1], "r+");
	if (!cmd)
		return 2;
	while (fgets(line, sizeof(line), cmd)) {
		unsigned n;

		if (!strcmp(line, "stats\n")) {
			size_t len = (size_t)snprintf(out, sizeof(out), "stats waiting=%d hooks=%s",
						      waiting && rec_waiting, hooks_state());

			for (int w = 0; w < NWHO; w++)
				for (int f = 0; f < NFN && len < sizeof(out); f++)
					if (fn[w][f])
						len += (size_t)snprintf(
							out + len, sizeof(out) - len, " %s:%s=%lu",
							who[w], fn[w][f],
							__atomic_load_n(&counts[w][f],
									__ATOMIC_RELAXED));
			reply(argv[2], out);
		} else if (sscanf(line, "release %u", &n) == 1 && n <= 1000) {
			for (unsigned i = 0; i < n; i++)
				if (write(gate_pipe[1], "x", 1) != 1 || write(rec_pipe[1], "x", 1) != 1)
					return 2;
			snprintf(out, sizeof(out), "released %u", n);
			reply(argv[2], out);
		} else if (!strcmp(line, "quit\n")) {
			reply(argv[2], "bye");
			return 0;
		} else {
			reply(argv[2], "error: unknown command");
		}
	}
	return 0;
}
