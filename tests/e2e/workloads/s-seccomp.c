/*
 * s-seccomp.c - a program that installs a seccomp filter mid-run, then
 * goes on: the runtime must never make a system call the filter forbids.
 *
 *   t-seccomp FILTER [THEN]
 *
 * FILTER (installed after main -> work):
 *   kill-process  perf_event_open kills the process (prctl)
 *   kill-thread   perf_event_open kills the thread that makes it (prctl)
 *   errno         perf_event_open fails with EPERM (a container's profile)
 *   tsync         perf_event_open kills the process, for every thread
 *                 (syscall(SYS_seccomp), SECCOMP_FILTER_FLAG_TSYNC, as
 *                 libseccomp does it)
 *   no-getcwd     getcwd kills the process (one of the calls the runtime
 *                 makes when it starts in a new image)
 *   no-memfd      memfd_create kills the process (what a sleds runtime maps
 *                 its return stubs with)
 *   allowlist     only what this program itself does from then on (its
 *                 threads: memory, clone, futex, ...), write and fstat only
 *                 on stdout, sigaction only of the C library's SIGCANCEL;
 *                 anything else kills the process
 * THEN:
 *   threads       (the default) four threads call work(); main joins
 *                 them, prints the sum and exits 3
 *   exec          execs itself as "t-seccomp - child": it calls work(),
 *                 prints and exits 3 (the filter holds across exec)
 *   segv          dies of SIGSEGV (a null pointer written)
 *   dlopen LIB    dlopens LIB (s-lib.c: a sleds build, say), prints
 *                 slib_compute(10) (29524) and exits 3
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "workload.h"

volatile long sink;

NOINLINE static long work(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += i % 7;
	return s;
}

static void *thread_main(void *arg)
{
	*(long *)arg = work(100000);
	return NULL;
}

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
/* nr == n: allow, else go on */
#define PASS(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 1), ALLOW

NOINLINE static int install(const char *which)
{
	unsigned action = !strcmp(which, "kill-thread") ? SECCOMP_RET_KILL_THREAD :
			  !strcmp(which, "errno")	? SECCOMP_RET_ERRNO | 1 /* EPERM */ :
							  SECCOMP_RET_KILL_PROCESS;
	struct sock_filter one[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		KILL,
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 !strcmp(which, "no-getcwd") ? __NR_getcwd :
			 !strcmp(which, "no-memfd")  ? __NR_memfd_create :
						       __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		ALLOW,
	};
	struct sock_filter allowlist[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		KILL,
		LOAD(nr),
		/* write and fstat: standard output only; sigaction: the C library's SIGCANCEL */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_newfstatat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigaction, 5, 0),
		BPF_STMT(BPF_JMP | BPF_JA, 8),
		ARG0,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		ALLOW,
		KILL,
		ARG0,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 33, 0, 1),
		ALLOW,
		KILL,
		PASS(__NR_read), PASS(__NR_exit), PASS(__NR_exit_group), PASS(__NR_futex),
		PASS(__NR_mmap), PASS(__NR_munmap), PASS(__NR_mprotect), PASS(__NR_madvise),
		PASS(__NR_brk), PASS(__NR_clone), PASS(__NR_clone3), PASS(__NR_set_robust_list),
		PASS(__NR_rseq), PASS(__NR_rt_sigprocmask), PASS(__NR_sched_yield),
		PASS(__NR_getrandom), PASS(__NR_rt_sigreturn),
		KILL,
	};
	int use_allowlist = !strcmp(which, "allowlist");
	struct sock_fprog prog = {
		.len = use_allowlist ? sizeof(allowlist) / sizeof(allowlist[0]) : sizeof(one) / sizeof(one[0]),
		.filter = use_allowlist ? allowlist : one,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (!strcmp(which, "tsync"))
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	const char *then = argc > 2 ? argv[2] : "threads";
	pthread_t t[4];
	long r[4], sum;

	if (argc > 2 && !strcmp(argv[2], "child")) {
		printf("child %ld\n", work(1000));
		return 3;
	}
	if (argc < 2)
		return 2;
	sum = work(1000);
	fflush(stdout);
	if (install(argv[1])) {
		perror("seccomp");
		return 1;
	}
	if (!strcmp(then, "exec")) {
		execl(argv[0], argv[0], "-", "child", (char *)NULL);
		return 1;
	}
	if (!strcmp(then, "segv"))
		*(volatile int *)(uintptr_t)sink = 1; /* sink is 0 */
	if (!strcmp(then, "dlopen") && argc > 3) {
		void *h = dlopen(argv[3], RTLD_NOW);
		long (*compute)(int) = h ? (long (*)(int))dlsym(h, "slib_compute") : NULL;

		if (!compute) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		printf("compute %ld\n", compute(10));
		return 3;
	}
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, &r[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		sum += r[i];
	}
	printf("sum %ld\n", sum);
	return 3;
}
