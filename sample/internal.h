/*
 * sample/internal.h - the parts of the sampler: the perf ring reader
 * (ring.c), the per-thread trees and the writer (tree.c), and the session
 * that ties them together (session.c).  ELF facts (symbolize/elffile.h)
 * and the unwinder (symbolize/unwind.h) come from symbolize/, the tool's
 * one home for elfutils: nothing here includes its headers.
 */
#ifndef CP_SAMPLE_INTERNAL_H
#define CP_SAMPLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/elffile.h" /* struct cp_elf_info */
#include "util/util.h"	     /* cp_u64map */

struct perf_event_mmap_page;
struct cp_unwinder;

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
	struct cp_elf_info elf;	/* its segments and build-id */
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
	uint64_t vdso_at;	  /* where its vDSO is mapped (0: not seen): its image,
				   * the tool's own, goes into the profile */
	struct cp_unwinder *uw;	  /* symbolize/unwind.h */
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
