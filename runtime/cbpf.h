/*
 * cbpf.h - an interpreter of the classic BPF that seccomp filters are
 * written in, over the struct seccomp_data the kernel gives them.
 *
 * Two users judge a program's filters with it: the runtime, for the
 * filters the program installs while it is recorded (seccomp.c), and
 * `callprof attach`, for the filters of a process it is about to load the
 * runtime into (engine/attach-check.c).  No system call, no allocation: the
 * runtime may run it under the very filter it judges.
 */
#ifndef CP_RUNTIME_CBPF_H
#define CP_RUNTIME_CBPF_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>

/*
 * Run the filter insns[len] over d.  Words of d whose bit is set in
 * unknown (32-bit words: 0 nr, 1 arch, 2-3 the instruction pointer, 4 + 2i
 * and 5 + 2i the argument i) are not known: a load of one sets *depends.
 * Returns the filter's value; an instruction seccomp does not accept (the
 * kernel would have refused the filter) returns SECCOMP_RET_KILL_PROCESS.
 */
uint32_t cp_cbpf__run(const struct sock_filter *insns, uint32_t len,
		      const struct seccomp_data *d, uint32_t unknown, int *depends);

#endif
