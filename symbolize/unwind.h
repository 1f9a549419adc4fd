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
	const unsigned char *stack; /* copy of user memory from regs[SP] - below */
	uint64_t stack_size;	    /* bytes of it that are valid, from regs[SP] on */
	uint64_t below;		    /* bytes of it below regs[SP] (the red zone), or 0 */
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
/* One frame of a stack (cp_unwinder__frames). */
struct cp_unwind_frame {
	uint64_t pc;	/* where it stands: the instruction (activation) or a return address */
	uint64_t sp;	/* its stack pointer there; 0 if the CFI did not say */
	uint64_t di;	/* rdi and rsi there, when have_args (an activation: every register */
	uint64_t si;	/*   is known, as a signal frame saved them) */
	int activation; /* pc is the instruction it was stopped at (the innermost frame, or
			 * one a signal interrupted), not a return address */
	int have_args;	/* di and si are known */
};

/*
 * As cp_unwinder__unwind, with more of each frame: its stack pointer,
 * whether its pc is an activation (a signal frame's interrupted context
 * is one too), and an activation's first two argument registers.
 */
int cp_unwinder__frames(struct cp_unwinder *u, uint32_t tid, const struct cp_unwind_regs *r,
			struct cp_unwind_frame *frames, int max, int *complete);

/*
 * Entry of the function holding addr (for a caller frame, pass the return
 * address minus 1): its ELF symbol's start, else the start of the CFI
 * frame description covering it, else addr itself.
 */
uint64_t cp_unwinder__fn_entry(struct cp_unwinder *u, uint64_t addr);

/* A range of code, [lo, hi), in the process. */
struct cp_unwind_range {
	uint64_t lo, hi;
};

/*
 * One instance of a function in a function's code: the function itself,
 * or a function inlined into it (DW_TAG_inlined_subroutine), whose code
 * is part of the other's.
 */
struct cp_unwind_inst {
	uint64_t entry;	   /* the function's own entry point (its out-of-line copy's: the
			    * address its -finstrument-functions hooks pass), 0 if not found */
	int parent;	   /* index of the instance it is inlined into; -1 for the function */
	uint32_t nranges;
	const struct cp_unwind_range *ranges; /* its code */
};

/* A function's code, as DWARF describes it (cp_unwinder__fn_dwarf). */
struct cp_unwind_fn {
	uint32_t n;			  /* instances */
	const struct cp_unwind_inst *inst; /* [0] the function, then those inlined, parents first */
};

/*
 * DWARF's account of the function whose code holds addr (a hot part or a
 * cold one): its instances, and each one's entry.  NULL when there is no
 * debug information for addr.  Owned by u, cached.
 */
const struct cp_unwind_fn *cp_unwinder__fn_dwarf(struct cp_unwinder *u, uint64_t addr);

#endif /* CP_SYMBOLIZE_UNWIND_H */
