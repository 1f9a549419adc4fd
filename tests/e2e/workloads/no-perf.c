/*
 * no-perf: run a command where perf_event_open is refused, as it is under
 * kernel.perf_event_paranoid 3, in many containers, or under a seccomp
 * policy: a seccomp filter makes the syscall fail with EPERM, for the
 * command and everything it starts.
 *
 *   no-perf PROG [ARGS...]
 *
 * Not instrumented: it is a tool of the tests, not a workload.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (argc < 2) {
		fprintf(stderr, "usage: no-perf PROG [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("no-perf: seccomp");
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no-perf: cannot run '%s': %s\n", argv[1], strerror(errno));
	return 127;
}
