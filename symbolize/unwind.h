/*
 * unwind.h - call stacks of samples, and the functions that hold
 * addresses, for the sampler (record --sample, sample/session.c).
 *
 * One unwinder per process image: its modules are added at the load
 * biases the kernel's MMAP2 records gave, so the sampled process need not
 * be alive any more.  Each sample brings its own user registers and a copy
 * of the top of its user stack (perf's PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER); the unwind reads nothing else.  Plain C over
 * elfutils' libdwfl (symbolize/ is the tool's one home for elfutils).
 */
#ifndef CP_SYMBOLIZE_UNWIND_H
#define CP_SYMBOLIZE_UNWIND_H

#include <stdint.h>

struct cp_unwinder;

/* One sample's user state, for the DWARF unwinder. */
struct cp_unwind_regs {
	uint64_t regs[24]; /* perf's x86-64 user registers, PERF_REG_X86_* order */
	uint64_t mask;	   /* which are present (sample_regs_user) */
	const unsigned char *stack; /* copy of user memory from regs[SP] */
	uint64_t stack_size;	    /* bytes of it that are valid */
};

/* A new unwinder with no module; dies only if libdwfl cannot start. */
struct cp_unwinder *cp_unwinder__new(void);
/* Accepts NULL. */
void cp_unwinder__free(struct cp_unwinder *u);
/* A module mapped at load bias (ELF file at path, opened only if regular); 0 or -1. */
int cp_unwinder__add_module(struct cp_unwinder *u, const char *path, uint64_t bias);
/* A module that is no file (the vDSO), its ELF image image[0..size), at load bias; 0 or -1. */
int cp_unwinder__add_image(struct cp_unwinder *u, const char *name, const void *image,
			   uint64_t size, uint64_t bias);
/*
 * Unwind one sample: pcs[0] the interrupted instruction, then the return
 * addresses of the callers, at most max.  Returns the number of frames
 * (0: not even the first frame could be had); *complete is 1 when the
 * walk reached the outermost frame, 0 when it stopped early (stack
 * snapshot too small, no CFI).
 */
int cp_unwinder__unwind(struct cp_unwinder *u, uint32_t tid, const struct cp_unwind_regs *r,
			uint64_t *pcs, int max, int *complete);
/*
 * Entry of the function holding addr (for a caller frame, pass the return
 * address minus 1): its ELF symbol's start, else the start of the CFI
 * frame description covering it, else addr itself.
 */
uint64_t cp_unwinder__fn_entry(struct cp_unwinder *u, uint64_t addr);

#endif /* CP_SYMBOLIZE_UNWIND_H */
