/*
 * s-sleds-vfork.c - t0543: a sledded function vforks and the child execs;
 * the child shares the parent's memory and must leave no stub state the
 * parent would misread.  Prints its own counts.
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
static long n_leaf, n_spawn;
__attribute__((noinline)) long leaf(long x) { n_leaf++; return x + 1; }
__attribute__((noinline)) int spawn(void) { n_spawn++; pid_t p = vfork(); if (p == 0) { execl("/bin/true", "true", (char *)0); _exit(1); } int st; waitpid(p, &st, 0); return WEXITSTATUS(st); }
int main(void) { int r = 0; for (int i = 0; i < 5; i++) { r += spawn(); leaf(i); } printf("r=%d leaf=%ld spawn=%ld\n", r, n_leaf, n_spawn); return 0; }
