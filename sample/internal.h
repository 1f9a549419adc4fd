/*
 * sample/internal.h - the parts of the sampler: the perf ring reader
 * (ring.c), ELF facts (elf.c), the unwinder (unwind.c, the one file here
 * that sees libdwfl), the per-thread trees and the writer (tree.c), and
 * the session that ties them together (session.c).
 */
#ifndef CP_SAMPLE_INTERNAL_H
#define CP_SAMPLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h" /* cp_u64map */

struct perf_event_mmap_page;

/* ---- ring.c: the kernel's perf mmap ring buffer ---- */

/*
 * One event's ring: a metadata page followed by 2^n data pages.  The
 * kernel advances data_head; we read records up to it and then publish
 * data_tail, after which the kernel may overwrite what we read.
 */
struct cp_ring {
	struct perf_event_mmap_page *meta; /* first page of the mapping */
	unsigned char *data;		   /* data area */
	uint64_t mask;			   /* data area size - 1 (a power of two) */
};

/* A record copied out of the ring, 8-byte aligned, whole (never split). */
typedef void (*cp_ring_fn)(const void *rec, size_t len, void *arg);

/*
 * Hand every complete record between data_tail and data_head to fn, each
 * in one piece even when it wraps the end of the data area, then release
 * the space.  Returns the number of records, or -1 if the ring is corrupt
 * (a record size of 0 or beyond what is there); the ring is then skipped
 * to the head.
 */
int cp_ring__drain(struct cp_ring *r, cp_ring_fn fn, void *arg);

/* ---- elf.c ---- */

/* A PT_LOAD segment. */
struct sp_seg {
	uint64_t vaddr, memsz; /* p_vaddr, p_memsz */
	uint64_t offset, filesz; /* p_offset, p_filesz */
	uint32_t flags;	       /* PF_* */
};

/*
 * The load bias of a mapping: it starts at start and maps the file from
 * pgoff; seg[0..n) are the file's PT_LOAD segments.  0 and *bias, or -1
 * when no segment holds pgoff.
 */
int cp_load_bias(const struct sp_seg *seg, size_t n, uint64_t start, uint64_t pgoff,
		 uint64_t *bias);

/* What a module file says about itself. */
struct sp_elf {
	struct sp_seg *segs;	 /* PT_LOAD segments */
	size_t nsegs;
	uint8_t build_id[32];	 /* NT_GNU_BUILD_ID, truncated to 32 */
	uint32_t build_id_size;	 /* 0 if none */
};
int sp_elf__read(const char *path, struct sp_elf *e);
void sp_elf__release(struct sp_elf *e);

/* ---- unwind.c: call stacks and function entries, per process image ---- */

struct sp_unwinder;

/* One sample's user state, for the DWARF unwinder. */
struct sp_regs {
	uint64_t regs[24]; /* perf's x86-64 user registers, PERF_REG_X86_* order */
	uint64_t mask;	   /* which are present (sample_regs_user) */
	const unsigned char *stack; /* copy of user memory from regs[SP] */
	uint64_t stack_size;	    /* bytes of it that are valid */
};

struct sp_unwinder *sp_unwinder__new(void);
void sp_unwinder__free(struct sp_unwinder *u);
/* A module mapped at load bias (ELF file at path); 0 or -1. */
int sp_unwinder__add_module(struct sp_unwinder *u, const char *path, uint64_t bias);
/*
 * Unwind one sample: pcs[0] the interrupted instruction, then the return
 * addresses of the callers, at most max.  Returns the number of frames
 * (0: not even the first frame could be had); *complete is 1 when the
 * walk reached the outermost frame, 0 when it stopped early (stack
 * snapshot too small, no CFI).
 */
int sp_unwinder__unwind(struct sp_unwinder *u, uint32_t tid, const struct sp_regs *r,
			uint64_t *pcs, int max, int *complete);
/*
 * Entry of the function holding addr (for a caller frame, pass the return
 * address minus 1): its ELF symbol's start, else the start of the CFI
 * frame description covering it, else addr itself.
 */
uint64_t sp_unwinder__fn_entry(struct sp_unwinder *u, uint64_t addr);

/* ---- tree.c: one calling-context tree per thread ---- */

struct sp_node {
	uint64_t fn, site;	/* function entry; return address in the caller */
	uint32_t parent, flags; /* index, CP_NO_PARENT for the root; CP_NODE_SITE */
	uint64_t calls, ticks;	/* samples with the path on the stack; their ns */
};

struct sp_line {
	uint32_t node;	  /* leaf context */
	uint64_t ip;	  /* sampled instruction */
	uint64_t samples; /* how many there */
};

struct sp_tree {
	struct sp_node *nodes;
	uint32_t nnodes;
	size_t nodes_alloc;
	struct sp_line *lines;
	uint32_t nlines;
	size_t lines_alloc;
	struct cp_u64map ctx;	/* parent << 32 | address number of fn -> node */
	struct cp_u64map sites; /* context << 32 | address number of site -> site record */
	struct cp_u64map at;	/* leaf << 32 | address number of ip -> line */
};

/* A frame of a sample, outermost first for sp_tree__add. */
struct sp_frame {
	uint64_t fn;   /* function entry */
	uint64_t site; /* return address in the caller's frame, 0 for the outermost */
};

/*
 * Numbers for addresses, shared by all trees so that the maps above can
 * use 64-bit keys made of two 32-bit halves.
 */
uint32_t sp_addr_number(uint64_t addr);

void sp_tree__init(struct sp_tree *t);
void sp_tree__release(struct sp_tree *t);
/* Count one sample of period ns whose stack is f[0..n) (outermost first), at ip. */
void sp_tree__add(struct sp_tree *t, const struct sp_frame *f, int n, uint64_t ip,
		  uint64_t period);

/* ---- session.c and tree.c: processes and their profiles ---- */

struct sp_module {
	char *path;		/* file as mapped */
	uint64_t bias;		/* load bias */
	struct sp_elf elf;	/* its segments and build-id */
};

struct sp_thread {
	uint32_t tid;
	char *name;		/* comm */
	uint32_t seq;		/* start order within the image, main = 0 */
	int exited;		/* an EXIT record was seen */
	uint64_t start_ns, end_ns; /* perf clock (CLOCK_MONOTONIC) */
	uint64_t samples, cpu_ns;  /* samples and the sum of their periods */
	struct sp_tree tree;
};

/* A process image: what one exec of one process ran. */
struct sp_proc {
	uint32_t pid, ppid;
	unsigned execs;		  /* images replaced so far (PATH.execN) */
	int exited, forked;	  /* leader exited; a fork child of a recorded process */
	char *exe;		  /* path of the main executable */
	char *cmdline;		  /* argv, NUL-separated */
	size_t cmdline_len;
	uint64_t start_ns, end_ns; /* image start; last event */
	struct sp_module *mods;
	size_t nmods, mods_alloc;
	struct sp_unwinder *uw;
	struct sp_thread *threads;
	size_t nthreads, threads_alloc;
	struct cp_u64map fn_cache; /* lookup address -> index in fns */
	uint64_t *fns;
	size_t nfns, fns_alloc;
	uint64_t samples, lost, unwound_none; /* placed; lost by the kernel; not unwound */
	uint64_t partial;	  /* placed with a stack that ended early */
};

/* What the profile's META needs from the session. */
struct sp_run {
	unsigned hz;
	int unwind;		 /* enum cp_sample_unwind */
	uint64_t mono_to_real;	 /* CLOCK_REALTIME - CLOCK_MONOTONIC at the start */
	const char *out;	 /* absolute base path */
	uint32_t root_pid;	 /* writes PATH itself */
};

/* Write p's profile (path chosen from run and suffix, "" or ".execN"); 0 or -1. */
int sp_proc__write(const struct sp_proc *p, const struct sp_run *run, const char *suffix);

#endif /* CP_SAMPLE_INTERNAL_H */
