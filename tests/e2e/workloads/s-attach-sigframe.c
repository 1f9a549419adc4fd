/*
 * s-attach-sigframe.c - a thread that a signal stopped just before a
 * function's enter hook, or just after its exit hook, for `callprof
 * attach` (t0519): the frame under the signal frame is then not an open
 * call, though its pc is inside the function.
 *
 *   t-attach-sigframe CMD REPLY
 *
 * before_enter and after_exit are written in assembly, so that where the
 * signal lands does not depend on the compiler: each calls the hooks as
 * -finstrument-functions code does and leaf() between them, and executes
 * an int3 (SIGTRAP) before its enter hook (before_enter) or after its exit
 * hook (after_exit).  The SIGTRAP handler, on_trap, blocks in trap_wait()
 * until the test lets it go; then the function goes on.  The worker thread
 * calls them on command.  The main thread reads commands, one a line, from
 * the FIFO CMD and appends one reply line each to REPLY:
 *   call before|after   the worker calls that function: "calling"
 *   release             the handler returns: "released"
 *   stats               "stats trapped=0|1 done=N hooks=glibc|callprof|mixed"
 *                       (trapped: the handler is blocked; done: calls of the
 *                       two functions that returned)
 *   quit                "bye", then exit 0
 * The first reply line is "ready PID".  Started without callprof.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

/* NOINSTR (workload.h): no hooks and no sled */

volatile long sink;
static int call_pipe[2], release_pipe[2];
static volatile int trapped;
static volatile unsigned long done;

void before_enter(void);
void after_exit(void);

NOINLINE void leaf(void)
{
	sink++;
}

/* Frames as gcc and clang make them: CFI for the unwinder, the hooks through the PLT. */
__asm__(".text\n"
	".globl before_enter\n"
	".type before_enter, @function\n"
	"before_enter:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	int3\n"
	"	lea before_enter(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_enter@PLT\n"
	"	call leaf\n"
	"	lea before_enter(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_exit@PLT\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size before_enter, .-before_enter\n"
	".globl after_exit\n"
	".type after_exit, @function\n"
	"after_exit:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	lea after_exit(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_enter@PLT\n"
	"	call leaf\n"
	"	lea after_exit(%rip), %rdi\n"
	"	mov 8(%rsp), %rsi\n"
	"	call __cyg_profile_func_exit@PLT\n"
	"	int3\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size after_exit, .-after_exit\n");

NOINLINE void trap_wait(void)
{
	char c;

	trapped = 1;
	while (read(release_pipe[0], &c, 1) != 1)
		;
	trapped = 0;
}

static void on_trap(int sig)
{
	(void)sig;
	trap_wait();
}

static void *worker(void *arg)
{
	char c;

	for (;;) {
		if (read(call_pipe[0], &c, 1) != 1)
			continue;
		if (c == 'b')
			before_enter();
		else
			after_exit();
		done++;
	}
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
	struct sigaction sa;
	char line[256], out[256];
	pthread_t t;
	FILE *cmd;

	if (argc != 3 || pipe(call_pipe) || pipe(release_pipe))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTRAP, &sa, NULL);
	/* The worker's int3s are synchronous: their SIGTRAPs are its own. */
	pthread_create(&t, NULL, worker, NULL);
	snprintf(out, sizeof(out), "ready %d", (int)getpid());
	reply(argv[2], out);
	cmd = fopen(argv[1], "r+");
	if (!cmd)
		return 2;
	while (fgets(line, sizeof(line), cmd)) {
		if (!strcmp(line, "call before\n") || !strcmp(line, "call after\n")) {
			if (write(call_pipe[1], line[5] == 'b' ? "b" : "a", 1) != 1)
				return 2;
			reply(argv[2], "calling");
		} else if (!strcmp(line, "release\n")) {
			if (write(release_pipe[1], "x", 1) != 1)
				return 2;
			reply(argv[2], "released");
		} else if (!strcmp(line, "stats\n")) {
			snprintf(out, sizeof(out), "stats trapped=%d done=%lu hooks=%s", trapped, done,
				 hooks_state());
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
