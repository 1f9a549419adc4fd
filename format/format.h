/*
 * format.h - the callprof profile file: on-disk layout, writer and reader.
 *
 * Shared by the runtime (which writes, without malloc and without dying) and
 * the tool (which reads and validates).  Everything is little-endian; records
 * are fixed-size C structs with explicit padding, so the writer can emit them
 * with memcpy and the reader can check every length against the file size
 * before it looks inside.  docs/profile-format.md is the long form of this.
 *
 * OFFSET  SIZE  MEANING (file header, struct cp_file_header)
 *      0     8  magic "CALLPROF"
 *      8     4  header_size: bytes up to the end of the section table
 *     12     2  version: format version the writer wrote
 *     14     2  min_reader: oldest reader version that can read this file
 *     16     1  endian: 1 = little-endian (the only value written)
 *     17     1  ptr_size: 8
 *     18     2  reserved (0)
 *     20     4  nsections: entries in the section table
 *     24     8  features: CP_FEAT_* bits; readers ignore bits they do not know
 *     32     8  file_size: total bytes, to detect truncation
 *     40     4  header_crc: CRC-32 (IEEE) of bytes 0..header_size, this field zero
 *     44     4  body_crc: CRC-32 of bytes header_size..file_size
 *     48  24*k  section table: k = (header_size - 48) / 24 slots of struct
 *               cp_section_entry; the first nsections are used, the rest zero
 *               (the writer reserves CP_MAX_SECTIONS so it can stream sections
 *               and patch the header last)
 *
 * A section is {kind, entsize, offset, size}.  Records of a section may grow
 * in later versions (entsize > sizeof the struct a reader knows): readers use
 * the prefix they know and skip the rest.  Unknown section kinds are skipped.
 */
#ifndef CP_FORMAT_FORMAT_H
#define CP_FORMAT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the profile format is little-endian; a big-endian writer/reader needs byte swapping"
#endif

#define CP_MAGIC "CALLPROF"
#define CP_MAGIC_LEN 8
/*
 * Version 2: call-site records (CP_NODE_SITE).  A version 1 reader would
 * take them for nodes of their own, so they need a version 2 reader.
 */
#define CP_VERSION 10	   /* what this code writes */
#define CP_MIN_READER 2	   /* oldest reader that understands what we write */
#define CP_READER_VERSION 10 /* what this reader understands */
/*
 * Version 5: record-time selection (excluded-call markers, count-only
 * contexts, named regions).  A version 4 reader would show markers as call
 * paths, so a file that has any sets min_reader to this.
 */
#define CP_MIN_READER_SELECTION 5
/*
 * Version 6: CP_MODE_CPU, whose times are in LINES (sampled CPU time per
 * context).  An older reader would show such a profile without any time.
 */
#define CP_MIN_READER_CPU 6
/*
 * Version 7: callprof attach (node open_at_start, CP_META_ATTACHED).  A
 * context entered before the attach has time but fewer calls (maybe none)
 * than frames; an older reader would show its calls as all there were, so a
 * file with a record whose open_at_start is not 0 sets min_reader to this.
 */
#define CP_MIN_READER_ATTACH 7
/*
 * Version 8: IMAGES and IMAGE_DATA, the vDSO's image (it has no file), so
 * that its functions are named.  An older reader skips both sections and
 * shows those addresses unnamed, as before: min_reader stays.
 */
/*
 * Version 9: JOB, the rank of a job (MPI, Slurm) the process was; merged
 * profiles keep each context's distribution across the inputs (longer
 * SPREAD records: which input holds each minimum and maximum, exact sums
 * of squares) and each input's rank (longer INPUTS records).  An older
 * reader skips JOB and reads the prefix of the records it knows, which
 * means what it meant: min_reader stays.
 */
/*
 * Version 10: the thread record's unclocked periods (cpu mode's "[kernel]"
 * time that the thread's CPU clock does not have, left out).  The field was
 * reserved and zero before; an older reader ignores it: min_reader stays.
 */

/*
 * The smallest records a reader accepts: the sizes of version 3, the
 * first version whose reader checked them.  Later versions append fields
 * (zero-extended when reading older files).
 */
#define CP_META_MIN_SIZE 120
#define CP_THREAD_MIN_SIZE 56
#define CP_NODE_MIN_SIZE 72
/* Merged profiles' records as version 3 wrote them (up to version 8). */
#define CP_INPUT_MIN_SIZE 64
#define CP_SPREAD_MIN_SIZE 56

#define CP_NO_PARENT UINT32_MAX /* parent index of a thread's root node */
#define CP_NO_STRING UINT32_MAX /* string reference meaning "none" */

/* Error codes beyond errno, returned negated like errno values. */
enum cp_error {
	CP_ERR_CORRUPT = 4000, /* the file is damaged or not a profile */
	CP_ERR_VERSION,	       /* the file needs a newer reader */
	CP_ERR_TRUNCATED,      /* the file is shorter than it says */
};

/* Feature bits in the header: what the file contains beyond the basics. */
enum cp_features {
	CP_FEAT_TIMING = 1 << 0, /* nodes carry ticks (not a counting-only profile) */
};

/* Section kinds. */
enum cp_section_kind {
	CP_SEC_STRINGS = 1, /* NUL-terminated strings, referenced by byte offset */
	CP_SEC_META = 2,    /* one struct cp_meta */
	CP_SEC_MODULES = 3, /* struct cp_module[] */
	CP_SEC_MAPS = 4,    /* struct cp_map[], grouped by module */
	CP_SEC_THREADS = 5, /* struct cp_thread_rec[] */
	CP_SEC_NODES = 6,   /* struct cp_node_rec[], grouped by thread */
	CP_SEC_CMDLINE = 7, /* argv strings, each NUL-terminated, in order */
	/* Written by `callprof merge` (version 3; older readers skip them): */
	CP_SEC_SYMBOLS = 8, /* struct cp_symbol[]: names and lines, resolved already */
	CP_SEC_INPUTS = 9,  /* struct cp_input_rec[]: the profiles merged */
	CP_SEC_SPREAD = 10, /* struct cp_spread_rec[], one per NODES record */
	/* Version 4: */
	CP_SEC_LINES = 11,  /* struct cp_line_rec[]: sampled instruction addresses per node */
	/* Version 5: */
	CP_SEC_REGIONS = 12, /* struct cp_region_rec[]: names of CP_NODE_REGION nodes */
	CP_SEC_FILTERS = 13, /* struct cp_filter_rec[]: what `record` was told to leave out */
	/* Version 8: */
	CP_SEC_IMAGES = 14,     /* struct cp_image_rec[]: modules that are no file (the vDSO) */
	CP_SEC_IMAGE_DATA = 15, /* their bytes, which IMAGES records point into */
	/* Version 9: */
	CP_SEC_JOB = 16, /* one struct cp_job_rec: the job the process was a rank of */
};

/* Clock the ticks come from. */
enum cp_clock {
	CP_CLOCK_NONE = 0,	/* no timing (counting modes) */
	CP_CLOCK_TSC = 1,	/* x86 invariant TSC, ordered reads (lfence; rdtsc) */
	CP_CLOCK_MONOTONIC = 2, /* clock_gettime(CLOCK_MONOTONIC), ticks are ns */
	CP_CLOCK_TSC_FAST = 3,	/* x86 invariant TSC, unordered rdtsc: cheaper, but a
				 * read may run ahead of unfinished work, which then
				 * lands in the wrong call (docs/internals/overhead.md) */
};

/* Recording mode: which runtime variant wrote the file. */
enum cp_mode {
	CP_MODE_TIMING = 0,   /* exact counts and times per call path */
	CP_MODE_COUNTING = 1, /* exact counts per call path, no clock reads */
	CP_MODE_COVERAGE = 2, /* which functions ran: one node per function
			       * under each thread's root, calls = 1 */
	CP_MODE_SAMPLED = 3,  /* sampled call stacks of a program (not instrumented):
			       * calls = samples with the path on the stack,
			       * ticks = ns, min/max 0 (callprof record --sample) */
	CP_MODE_CPU = 4,      /* version 6: exact counts per call path, as counting;
			       * CPU time sampled (LINES: each sample charged to the
			       * innermost context, sample_period_ns each); node
			       * ticks, min and max 0; wait and inactive in ticks
			       * of clock, as timing's */
};

/* How wait and inactive time were measured (struct cp_meta.switches). */
enum cp_switch_state {
	CP_SWITCHES_OFF = 0,	     /* not measured (not asked, or not a timing profile) */
	CP_SWITCHES_ON = 1,	     /* every recorded thread was tracked */
	CP_SWITCHES_PARTIAL = 2,     /* some threads could not be (switch_threads_failed) */
	CP_SWITCHES_UNAVAILABLE = 3, /* perf_event_open refused (switch_errno says why) */
};

/* How the call stacks of a sampled profile were unwound (cp_meta.sample_flags). */
enum cp_sample_flags {
	CP_SAMPLE_FP = 1 << 0,	  /* frame-pointer chains from the kernel */
	CP_SAMPLE_DWARF = 1 << 1, /* user stack snapshots unwound with DWARF CFI */
	CP_SAMPLE_HYBRID = 1 << 2, /* samples of an instrumented program's running
				    * instruction, placed in its exact call tree (LINES) */
};

struct cp_file_header {
	char magic[8];	     /* CP_MAGIC, not NUL-terminated */
	uint32_t header_size; /* bytes from 0 to the end of the section table */
	uint16_t version;     /* writer's format version */
	uint16_t min_reader;  /* oldest reader version able to read this */
	uint8_t endian;	      /* 1 = little-endian */
	uint8_t ptr_size;     /* size of an address in the profiled process */
	uint16_t reserved0;   /* zero */
	uint32_t nsections;   /* entries in the section table */
	uint64_t features;    /* enum cp_features bits */
	uint64_t file_size;   /* total file size in bytes */
	uint32_t header_crc;  /* CRC-32 of the header and section table, this field 0 */
	uint32_t body_crc;    /* CRC-32 of everything after the section table */
};

struct cp_section_entry {
	uint32_t kind;	 /* enum cp_section_kind */
	uint32_t entsize; /* record size, 1 for byte blobs */
	uint64_t offset; /* from the start of the file */
	uint64_t size;	 /* bytes; a multiple of entsize */
};

struct cp_meta {
	uint32_t pid;		   /* process id of the profiled process */
	uint32_t ppid;		   /* its parent's pid */
	uint32_t mode;		   /* enum cp_mode */
	uint32_t clock;		   /* enum cp_clock */
	uint64_t ticks_per_sec;	   /* calibrated tick rate (1e9 for MONOTONIC) */
	uint64_t start_realtime_ns; /* wall-clock start, ns since the epoch */
	uint64_t duration_ns;	   /* from runtime start to the dump */
	uint64_t overhead_ticks;   /* calibrated hook cost per call that lands in the
				    * caller's self time (outside the callee's
				    * interval); 0 = not calibrated */
	uint64_t lost_calls;	   /* calls on paths not recorded (memory exhausted) */
	uint64_t lost_events;	   /* enter/exit events dropped (re-entry, no memory) */
	uint64_t unpaired_exits;   /* exits that matched no open frame */
	uint32_t exe;		   /* string: path of the main executable */
	uint32_t hostname;	   /* string: machine name */
	uint32_t nthreads_lost;	   /* threads whose state could not be set up */
	uint32_t flags;		   /* enum cp_meta_flags */
	uint64_t self_overhead_ticks; /* calibrated hook cost per call that lands
				       * inside the callee's own interval */
	uint64_t calibration_spread;  /* max - min of overhead_ticks over the
				       * calibration rounds (noise indicator) */
	uint64_t reconciled_frames;   /* frames whose exit never ran (longjmp,
				       * exceptions), closed when abandoned */
	uint64_t lost_signals;	      /* signal handler runs not recorded: the
				       * signal arrived inside a hook */
	/* version 4: off-CPU time (wait, inactive) */
	uint32_t switches;	      /* enum cp_switch_state */
	uint32_t switch_errno;	      /* CP_SWITCHES_UNAVAILABLE: perf_event_open's errno */
	uint64_t switch_lost;	      /* context-switch records lost (a thread's ring
				       * overflowed): their off-CPU time is CPU time */
	uint32_t switch_threads_failed; /* threads whose tracking could not be set up */
	uint32_t sample_hz;	      /* sampling rate asked for, 0 = no sampling */
	/* version 4: sampling */
	uint64_t sample_period_ns;    /* time one sample stands for (mean) */
	uint64_t samples;	      /* samples taken and placed */
	uint64_t samples_lost;	      /* samples lost by the kernel or not placed */
	uint32_t sample_flags;	      /* enum cp_sample_flags */
	uint32_t untimed_overhead_ticks; /* version 5: calibrated cost of one count-only
				       * call (CP_NODE_UNTIMED), all of it in the caller */
	/* version 5: record-time selection (zero when none was asked for) */
	uint32_t max_depth;	      /* --max-depth N: calls deeper than N were folded
				       * into their depth-N context; 0 = no limit */
	uint32_t start;		      /* string: --start function(s) as given, or CP_NO_STRING */
	uint32_t budget;	      /* --budget in hundredths of a percent, 0 = none */
	uint32_t demotions;	      /* contexts made count-only (CP_NODE_UNTIMED) */
	uint64_t budget_ticks;	      /* a context whose calls averaged fewer inclusive
				       * ticks than this was made count-only */
	uint64_t calls_outside_start; /* calls made while no --start function was open */
	uint64_t calls_below_depth;   /* calls deeper than max_depth (not recorded) */
	uint64_t calls_excluded;      /* calls of excluded functions (markers' sum) */
	uint64_t calls_in_excluded_trees; /* calls made inside an --exclude-tree function */
	uint64_t calls_paused;	      /* calls that began while callprof_pause() held */
};

enum cp_meta_flags {
	CP_META_FORKED = 1 << 0, /* written by a forked child */
	CP_META_ABNORMAL_END = 1 << 1, /* written as the process died: fatal
					* signal, abort() or _exit() */
	CP_META_KILLED = 1 << 2, /* written by the watcher after the process was
				  * killed (SIGKILL): also sets ABNORMAL_END */
	CP_META_MERGED = 1 << 3, /* written by `callprof merge`: INPUTS lists the
				  * profiles, times were compensated in each */
	CP_META_SNAPSHOT = 1 << 4, /* version 5: a snapshot of a program that ran on
				    * (callprof_dump(), `callprof dump`, record
				    * --dump-on): calls still open were counted as
				    * if they ended then, and went on */
	CP_META_ATTACHED = 1 << 5, /* version 7: written by a runtime that `callprof
				    * attach` loaded into a running process: calls
				    * are those made in the window, frames open at
				    * the attach are in nodes' open_at_start */
	CP_META_FILTERED = 1 << 6, /* the program installed a seccomp filter that
				    * forbade some of the runtime's system calls: what
				    * went unrecorded is counted (threads not set up,
				    * without CPU time or switches) */
	CP_META_LEFT = 1 << 7,	   /* written by the watcher after the program ended
				    * normally: its seccomp filter forbade writing it */
};

struct cp_module {
	uint32_t path;	      /* string: file name as the loader saw it */
	uint32_t build_id_size; /* bytes used in build_id, 0 if none */
	uint8_t build_id[32]; /* NT_GNU_BUILD_ID descriptor */
	uint64_t load_bias;   /* runtime address minus ELF virtual address */
	uint32_t first_map;   /* index of its first struct cp_map */
	uint32_t nmaps;	      /* number of consecutive maps */
	uint32_t flags;	      /* enum cp_module_flags */
	uint32_t reserved;    /* zero */
	uint64_t loaded_at;   /* load bias it really had in the process (differs
			       * from load_bias only for unloaded modules) */
};

enum cp_module_flags {
	/*
	 * Unloaded (dlclose) before the dump.  Its maps, load_bias and the
	 * addresses of every node in its code were moved to a private range
	 * at or above CP_UNLOADED_BASE, so they cannot be confused with code
	 * loaded later at the same place.
	 */
	CP_MODULE_UNLOADED = 1 << 0,
	/*
	 * Version 6: callprof's runtime library itself.  Samples whose address
	 * lies in it are the profiler's own cost, not the program's.
	 */
	CP_MODULE_RUNTIME = 1 << 1,
	/*
	 * Reader only (never written; cleared when read): a module the reader
	 * made from an IMAGES record, whose ELF image is in the profile
	 * (cp_profile_file__image), not in a file at its path.
	 */
	CP_MODULE_IMAGE = 1 << 2,
};

/* Start of the private address range of unloaded modules (module i at + i << 36). */
#define CP_UNLOADED_BASE 0x8000000000000000ull

struct cp_map {
	uint64_t start;	 /* first runtime address of a PT_LOAD segment */
	uint64_t end;	 /* one past the last */
	uint64_t offset; /* file offset of start */
	uint32_t prot;	 /* PF_R/PF_W/PF_X bits of the segment */
	uint32_t module; /* index of the owning module */
};

enum cp_thread_flags {
	CP_THREAD_EXITED = 1 << 0,    /* ended before the dump */
	CP_THREAD_TRUNCATED = 1 << 1, /* stopped recording (memory exhausted) */
	CP_THREAD_UNSAMPLED = 1 << 3, /* version 6, CP_MODE_CPU: its CPU time could not
				       * be sampled (perf_event_open refused) */
	CP_THREAD_AGGREGATE = 1 << 2, /* the added trees of nthreads exited threads
				       * of one name, not one thread (tid 0) */
};

struct cp_thread_rec {
	uint32_t tid;	     /* kernel thread id */
	uint32_t name;	     /* string: thread name at exit or dump */
	uint32_t first_node; /* index of its root node in the NODES section */
	uint32_t nnodes;     /* number of nodes, root included */
	uint64_t start_ns;   /* first event, ns after runtime start */
	uint64_t end_ns;     /* exit or dump, ns after runtime start */
	uint32_t flags;	     /* enum cp_thread_flags */
	uint32_t seq;	     /* order in which threads started, main = 0 */
	uint64_t open_frames; /* calls still open at the dump, closed then */
	uint32_t nthreads;   /* threads in this record: 1, or more for an aggregate */
	/*
	 * Version 10, CP_MODE_CPU: sample periods of "[kernel]" time left
	 * out because the thread's CPU clock (cpu_ns) does not have them: perf's
	 * task clock, whose growth between samples the kernel time is, also
	 * runs while the hypervisor has taken the CPU (steal time).  0 before.
	 */
	uint32_t unclocked;
	uint64_t cpu_ns;     /* version 4: CPU time the kernel counted for the thread
			      * (CLOCK_THREAD_CPUTIME_ID) from its set-up to its
			      * exit or the dump; 0 if unknown */
};

/*
 * One calling context.  Node 0 of a thread is its root (fn 0, no parent);
 * every other node's parent has a smaller index in the same thread, so a
 * single forward pass can build the tree.  Exclusive time is not stored:
 * it is ticks minus the children's ticks.
 */
struct cp_node_rec {
	uint64_t fn;	   /* function entry address in the profiled process */
	uint64_t site;	   /* return address of the first call seen on this path */
	uint32_t parent;   /* index within the thread, CP_NO_PARENT for the root */
	uint32_t flags;	   /* enum cp_node_flags */
	uint64_t calls;	   /* times this path was entered */
	uint64_t ticks;	   /* inclusive ticks over all calls */
	uint64_t min_ticks; /* shortest single call */
	uint64_t max_ticks; /* longest single call */
	/*
	 * Off-CPU time (version 4; 0 if not measured, see cp_meta.switches):
	 * ticks the thread spent switched out while this record's context was
	 * the innermost open call, so exclusive like self time; a context's
	 * inclusive wait is the sum over its subtree.  Wait: the thread
	 * blocked (slept, waited for I/O or a lock); inactive: the scheduler
	 * preempted it while it could run.
	 */
	uint64_t wait_ticks;
	uint64_t inactive_ticks;
	uint64_t switches_vol;	 /* version 4: times it blocked (voluntary switches) */
	uint64_t switches_invol; /* version 4: times it was preempted */
	/*
	 * Version 7: calls of this record's context that were open when
	 * `callprof attach` began.  Entered before the window, so not in calls;
	 * their time in the window is in ticks.  0 in older files.
	 */
	uint64_t open_at_start;
};

/*
 * Sampled instruction addresses per context (version 4): samples taken
 * while node's context was the innermost call and the thread ran at ip.
 * With an instrumented program (CP_SAMPLE_HYBRID) ip may lie in code that
 * is not instrumented (a library the context called); in a sampled
 * profile node is the leaf of the sample's stack.  `callprof report
 * --lines FN` turns them into hot source lines.
 */
/*
 * Pseudo addresses of LINES records in CP_MODE_CPU profiles (real code is
 * never below 4096).  Samples are taken in user mode only; the sampled
 * clock counts kernel time too, so the CPU time between two consecutive
 * samples beyond one period was spent where no sample could be taken.
 */
enum cp_line_pseudo_ip {
	/* CPU time in the kernel (system calls, page faults) while the
	 * context was innermost, in sample periods */
	CP_IP_KERNEL = 0,
	/* samples the kernel could not store (the thread's ring was full),
	 * all taken while the context was innermost: address unknown */
	CP_IP_LOST = 1,
	CP_IP_PSEUDO_LIMIT = 4096,
};

struct cp_line_rec {
	uint32_t node;	  /* index in NODES (a context's record, never a site record) */
	uint32_t reserved; /* zero */
	uint64_t ip;	  /* instruction address in the profiled process */
	uint64_t samples; /* samples there (at least 1) */
};

/*
 * A name or line resolved when the file was written (`callprof merge`):
 * the reader uses it instead of looking addr up in the module's ELF and
 * DWARF, so a merged profile reads the same on any machine.
 */
struct cp_symbol {
	uint64_t addr;	/* a function's entry, or a call site's return address */
	uint32_t kind;	/* enum cp_symbol_kind */
	uint32_t name;	/* string: the function's name (CP_SYM_FUNCTION) */
	uint32_t file;	/* string: source file, CP_NO_STRING if unknown */
	uint32_t line;	/* its line, 0 if unknown */
};

enum cp_symbol_kind {
	CP_SYM_FUNCTION = 1, /* addr is a function: name, and the line of its entry */
	CP_SYM_SITE = 2,     /* addr is a call site: the line of the call */
};

/* One profile that went into a merged one. */
struct cp_input_rec {
	uint32_t path;		    /* string: the file as given to merge */
	uint32_t exe;		    /* string: its executable */
	uint32_t hostname;	    /* string: its machine */
	uint32_t pid;		    /* its process */
	uint64_t start_realtime_ns; /* its start, ns since the epoch */
	uint64_t duration_ns;	    /* how long it ran */
	uint64_t calls;		    /* calls it recorded */
	uint64_t raw_ns;	    /* its threads' time before compensation */
	uint64_t subtracted_ns;	    /* what compensation took off raw_ns */
	uint32_t nthreads;	    /* its threads */
	uint32_t flags;		    /* its enum cp_meta_flags */
	/* Version 9 (records of 64 bytes before: the reader gives them CP_NO_RANK): */
	uint32_t rank;		    /* its rank in a parallel job, or CP_NO_RANK */
	uint32_t reserved;	    /* zero */
};

#define CP_NO_RANK UINT32_MAX  /* a rank (cp_input_rec, cp_job_rec): none, or not known */
#define CP_NO_INPUT UINT32_MAX /* cp_spread_rec.absent_input: every input entered it */

/*
 * How one calling context varied across the inputs of a merged profile,
 * for the NODES record of the same index (zero for call-site records and
 * roots).  Minima are over the inputs the context appears in: with
 * `inputs` below the file's number of INPUTS records it was absent from
 * some, where it counted 0.  The node's own fields hold the sums, so the
 * mean is the sum over the number of inputs.
 *
 * Version 9 appends the distribution a per-rank view needs, valid where
 * flags has CP_SPREAD_DIST (a record of 56 bytes, or one merged from such
 * a record, has not): for each minimum and maximum the input holding it
 * (an index into INPUTS; of equal values the lowest index), the lowest
 * input that never entered the context, and self CPU time's minimum,
 * maximum, sum and sum of squares, with the sum of squares of the calls.
 * Every field is an exact integer, so merging merged profiles again gives
 * the same records as one merge of all the inputs.  Self CPU time is the
 * self time less its off-CPU time where that was measured (the exclusive
 * part of the default weight, cp_report_profile__weight), in ns; the
 * sampled CPU time in a cpu-mode profile.
 */
struct cp_spread_rec {
	uint32_t inputs;	/* inputs in which the context was entered */
	uint32_t flags;		/* enum cp_spread_flags (version 9; 0 before) */
	uint64_t min_calls, max_calls; /* calls per input */
	uint64_t min_ticks, max_ticks; /* inclusive ticks per input */
	uint64_t min_self, max_self;   /* self (exclusive) ticks per input */
	/* Version 9, with CP_SPREAD_DIST: */
	uint32_t min_calls_input, max_calls_input; /* the inputs holding min_calls, max_calls */
	uint32_t min_ticks_input, max_ticks_input; /* ... min_ticks, max_ticks */
	uint32_t min_self_input, max_self_input;   /* ... min_self, max_self */
	uint32_t min_cpu_input, max_cpu_input;	   /* ... min_cpu_ns, max_cpu_ns */
	uint32_t absent_input;	/* lowest input that never entered it, or CP_NO_INPUT */
	uint32_t reserved;	/* zero */
	uint64_t min_cpu_ns, max_cpu_ns; /* self CPU time per input, over those entering it */
	uint64_t sum_cpu_ns;		 /* its sum over the inputs (saturating) */
	uint64_t sumsq_calls[2];	 /* sum of calls^2 over the inputs: low, high 64 bits */
	uint64_t sumsq_cpu[2];		 /* sum of (self CPU ns)^2: low, high 64 bits */
};

enum cp_spread_flags {
	CP_SPREAD_DIST = 1 << 0, /* the version 9 fields hold the distribution */
};

enum cp_node_flags {
	/* Not a function: a handler of signal number fn ran here (fn < 4096). */
	CP_NODE_SIGNAL = 1 << 0,
	/*
	 * Another call site of a context: the calls of fn from parent that
	 * returned to `site`, where an earlier record of the thread (the
	 * context's own, without this flag) has the same parent and fn and
	 * counts the calls from its site.  The context's calls and times are
	 * the sum over its records; no record has a site record as parent.
	 */
	CP_NODE_SITE = 1 << 1,
	/*
	 * Version 5.  A named region (callprof_region_begin/end): fn is the
	 * region's id, its name is in the REGIONS section.  It nests like a
	 * function call.
	 */
	CP_NODE_REGION = 1 << 2,
	/*
	 * Version 5.  Not a call path: the calls of an excluded function fn
	 * (record --exclude/--include) made in the parent's context, counted
	 * only.  No time (it stayed in the parent's self time), no children
	 * (what fn called hangs under the parent).  Views leave these out.
	 */
	CP_NODE_EXCLUDED = 1 << 3,
	/*
	 * Version 5.  Count-only (record --budget): calls is exact, but the
	 * calls were not timed once the context was demoted, so ticks, min,
	 * max, wait and inactive mean nothing.  Readers take the context's
	 * inclusive time as the sum of its children's, which leaves its own
	 * time in the nearest timed ancestor's self time.
	 */
	CP_NODE_UNTIMED = 1 << 4,
};

/*
 * Version 8: a module that is no file, whose whole ELF image the profile
 * holds: the vDSO, which the kernel maps into every process (its
 * functions, such as __vdso_clock_gettime, would otherwise be unnamed).
 * The reader makes a MODULES record and MAPS records of it (from its
 * program headers, its build-id from its notes) after the written ones.
 */
struct cp_image_rec {
	uint64_t load_bias; /* runtime address minus ELF virtual address */
	uint64_t offset;    /* of its first byte in IMAGE_DATA */
	uint64_t size;	    /* its bytes, from its ELF header on */
	uint32_t name;	    /* string: the module's name, "[vdso]" */
	uint32_t flags;	    /* zero */
};

/* Who started the ranks of a job: where the rank came from (format/job.c). */
enum cp_launcher {
	CP_LAUNCHER_NONE = 0,
	CP_LAUNCHER_OPENMPI = 1, /* OMPI_COMM_WORLD_RANK (Open MPI's mpirun) */
	CP_LAUNCHER_MPICH = 2,	 /* PMI_RANK (MPICH's Hydra, Intel MPI) */
	CP_LAUNCHER_PMIX = 3,	 /* PMIX_RANK (any PMIx launcher: prterun, srun --mpi=pmix) */
	CP_LAUNCHER_SLURM = 4,	 /* SLURM_PROCID (srun) */
};


/* Version 9: the job a process was one rank of (JOB, one record; only in rank profiles). */
struct cp_job_rec {
	uint32_t rank;	     /* its rank in the job, 0 to size - 1 */
	uint32_t size;	     /* ranks in the job, 0 = not known */
	uint32_t launcher;   /* enum cp_launcher; readers show a value they do not know as such */
	uint32_t jobid;	     /* string: the launcher's job id, or CP_NO_STRING */
	uint32_t local_rank; /* its rank among the job's processes on its host, or CP_NO_RANK */
	uint32_t reserved[3]; /* zero */
};

/* A named region's name (version 5). */
struct cp_region_rec {
	uint32_t id;   /* the fn of its CP_NODE_REGION nodes */
	uint32_t name; /* string */
};

/* One record-time selection rule (version 5), as `record` was given it. */
struct cp_filter_rec {
	uint32_t kind;	  /* enum cp_filter_kind */
	uint32_t flags;	  /* enum cp_filter_flags */
	uint32_t pattern; /* string: as given */
	uint32_t matched; /* functions (or modules) it matched */
};

enum cp_filter_kind {
	CP_FILTER_INCLUDE = 1,	      /* --include: only matching functions get nodes */
	CP_FILTER_EXCLUDE = 2,	      /* --exclude: no node, time to the caller */
	CP_FILTER_EXCLUDE_TREE = 3,   /* --exclude-tree: it and all it calls */
	CP_FILTER_EXCLUDE_FILE = 4,   /* --exclude-file: functions of matching source files */
	CP_FILTER_EXCLUDE_MODULE = 5, /* --exclude-module: functions of matching modules */
	CP_FILTER_START = 6,	      /* --start: record only while it is open */
};

/* record --budget judges a call path at this call (format: meta.budget_ticks). */
#define CP_BUDGET_CALLS 1024

enum cp_filter_flags {
	CP_FILTER_REGEX = 1 << 0, /* pattern is a POSIX extended regular expression, not a glob */
};

/* The `record` option that gives a rule of kind (enum cp_filter_kind), "" if unknown. */
static inline const char *cp_filter_option(uint32_t kind)
{
	static const char *const opt[] = { "", "--include", "--exclude", "--exclude-tree",
					   "--exclude-file", "--exclude-module", "--start" };

	return kind < sizeof(opt) / sizeof(opt[0]) ? opt[kind] : "";
}

_Static_assert(sizeof(struct cp_meta) == 240 && sizeof(struct cp_thread_rec) == 64 &&
		       sizeof(struct cp_node_rec) == 96 && sizeof(struct cp_line_rec) == 24 &&
		       sizeof(struct cp_image_rec) == 32 && sizeof(struct cp_job_rec) == 32 &&
		       sizeof(struct cp_input_rec) == 72 && sizeof(struct cp_spread_rec) == 152,
	       "on-disk records changed size: update docs/profile-format.md");

/*
 * Append the decimal digits of v to buf at *pos (advanced), NUL-terminated,
 * never past size.  For the runtime, which avoids snprintf at the dump.
 */
void cp_put_dec(char *buf, size_t size, size_t *pos, unsigned long v);

/* CRC-32 (IEEE 802.3), continuing from crc (start with 0). */
uint32_t cp_crc32(uint32_t crc, const void *buf, size_t len);

/* ---- writer (runtime side: no malloc, never exits) ---- */

#define CP_MAX_SECTIONS 16

/*
 * Streaming writer.  The caller owns the struct (the runtime keeps one in
 * static storage); it writes sections one after another and the header is
 * patched in last, so nothing is built in memory except the string pool
 * (mmap'd).  The file appears under its final name only after a successful
 * cp_writer__finish(); every error leaves no file behind.  All functions
 * return 0 or -errno and remember the first error, so callers may check
 * once at the end.
 *
 * A file size limit (RLIMIT_FSIZE) that the write reaches is an -EFBIG
 * error, never a SIGXFSZ (see cp_write_all), so that a program writing its
 * profile at exit is not killed by it.
 */
struct cp_writer {
	int fd;			 /* temporary file */
	int err;		 /* first error, sticky */
	uint64_t off;		 /* bytes written so far (incl. buffer) */
	uint32_t body_crc;	 /* running CRC of the body */
	uint32_t nsec;		 /* sections finished */
	int in_section;		 /* a section is open */
	struct cp_section_entry sec[CP_MAX_SECTIONS];
	char *pool;		 /* string pool, mmap'd */
	size_t pool_len, pool_cap; /* used / mapped bytes of pool */
	size_t buf_len;		 /* bytes pending in buf */
	uint16_t min_reader;	 /* the header's: CP_MIN_READER unless raised after begin */
	/* The no-replace rule (cp_writer__finish); begin zeroes them, set them after: */
	uint64_t since_ns;	 /* the profiled run began then (CLOCK_REALTIME); 0: a
				  * file at the name always moves to NAME.old */
	uint32_t pid;		 /* the profiled process, for the other name */
	/* What finish did when the name was taken by a profile of a run that overlapped: */
	int taken;		 /* 1: path now holds the other name it wrote */
	uint32_t taken_pid;	 /* the pid in that profile (0: not a profile) */
	uint32_t taken_rank;	 /* its rank (CP_NO_RANK: none) */
	char path[4096];	 /* final name */
	char tmp[4096 + 32];	 /* temporary name */
	char buf[32768];	 /* write buffer */
};

/*
 * Write all of buf to fd (EINTR retried): 0 or -errno, errno kept.  A file
 * size limit or a pipe without reader is -EFBIG or -EPIPE, never SIGXFSZ or
 * SIGPIPE: only when one can happen (a finite RLIMIT_FSIZE; fd a pipe or
 * socket), those are ignored and unblocked in the calling thread around
 * the write with the raw system calls (the runtime interposes sigaction),
 * then their dispositions and the thread's mask are put back as they were.
 * A signal another thread raises meanwhile is lost the same way.
 */
int cp_write_all(int fd, const void *buf, size_t len);
/* The temporary name of path written by process pid ("path.tmp.PID"), into tmp[cap]. */
void cp_writer__tmp_name(char *tmp, size_t cap, const char *path, unsigned long pid);
/*
 * Create path's temporary file ("path.tmp.PID").  -EEXIST if a regular
 * file at path is neither empty nor a profile: it is never replaced.
 */
int cp_writer__begin(struct cp_writer *w, const char *path);
/* Whether the file at path (not followed if a symlink) starts with the profile magic. */
int cp_path_is_profile(const char *path);
/* Start a section of records of entsize bytes each. */
int cp_writer__section(struct cp_writer *w, uint32_t kind, uint32_t entsize);
/* Append len bytes to the open section. */
int cp_writer__put(struct cp_writer *w, const void *buf, size_t len);
/* Add a string to the pool; returns its offset, or CP_NO_STRING on error or s NULL. */
uint32_t cp_writer__string(struct cp_writer *w, const char *s);
/*
 * Write the string pool as the STRINGS section and the header, then put
 * the file at path without ever replacing what another writer put there
 * meanwhile (rename with RENAME_NOREPLACE, else link): with since_ns set,
 * a file already at path whose run ended before since_ns (a profile's
 * start + duration, another file's mtime) is kept as "path.old"; one whose
 * run overlapped ours, or that cannot be read as a profile, stays, and the
 * profile goes to cp_writer__other_name()s instead (taken says so, path
 * names it).  With since_ns 0, what is at path always becomes "path.old".
 */
int cp_writer__finish(struct cp_writer *w, uint64_t features);
/*
 * The n-th other name (n from 1) of path for process pid: ".PID" inserted
 * before a final ".cprof", else appended; from n = 2, ".PID-N".  Into
 * out[cap]; -ENAMETOOLONG if it does not fit.
 */
int cp_writer__other_name(char *out, size_t cap, const char *path, unsigned long pid, int n);
/* Give up: close and remove the temporary file, release the pool. */
void cp_writer__abort(struct cp_writer *w);
/*
 * The calling process's vDSO (getauxval(AT_SYSINFO_EHDR)): its ELF image,
 * *size bytes, and the ELF virtual address of its first byte
 * (*link_base), or NULL when there is none or its headers do not tell its
 * extent.  The kernel maps the same image into every process of the same
 * kind (64-bit), so the tool may stand its own in for another process's.
 */
const void *cp_vdso_image(size_t *size, uint64_t *link_base);
/*
 * IMAGES and IMAGE_DATA: the calling process's vDSO, as loaded at address
 * at (of its first byte) in the profiled process; nothing without one (or
 * with at 0).  0 or -errno, as cp_writer__put.
 */
int cp_writer__vdso(struct cp_writer *w, uint64_t at);
/*
 * Tool only (NULL in the runtime): told of the temporary file before it is
 * created (live 1) and once it is renamed or removed (live 0), so that a
 * signal ending the tool can remove it (util.h, cp_tempfile__add).
 */
extern void (*cp_writer_tmp_hook)(const char *tmp, int live);

/* ---- the job a process is a rank of (format/job.c: runtime and tool, no malloc) ---- */

#define CP_RANK_LIMIT (1u << 24) /* a rank or size at or above this is taken for garbage */
#define CP_JOBID_MAX 64		 /* longest job id kept (bytes) */

/*
 * The job a process was started in, as its launcher's environment says:
 * rank from OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID (the
 * first set, which also names the launcher); size from
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS, SLURM_NPROCS; local rank
 * from OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID; job id
 * from OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE, SLURM_JOB_ID[.SLURM_STEP_ID].
 * Values are hostile input: numbers must be plain decimal below
 * CP_RANK_LIMIT (and rank < size when size is known), a job id at most
 * CP_JOBID_MAX printable ASCII bytes; anything else is ignored and named
 * in bad (a garbage rank means no rank at all).
 */
struct cp_job {
	uint32_t rank;		      /* CP_NO_RANK: no launcher (or its rank was garbage) */
	uint32_t size;		      /* 0: not known */
	uint32_t local_rank;	      /* CP_NO_RANK: not known */
	uint32_t launcher;	      /* enum cp_launcher, NONE without a rank */
	char jobid[CP_JOBID_MAX + 1]; /* "" when not known */
	const char *bad;	      /* first variable whose value was ignored, or NULL */
};

/* Fill job from the variables get returns (getenv, or the runtime's cp_getenv). */
void cp_job__from_env(struct cp_job *job, const char *(*get)(const char *name));
/* Whether env entry "NAME=VALUE" is one of the variables cp_job__from_env reads. */
int cp_job__is_variable(const char *entry);
/* "Open MPI", "MPICH", "PMIx", "Slurm"; "launcher N" (into buf[32]) for one not known. */
const char *cp_launcher_name(uint32_t launcher, char buf[32]);

/*
 * Expand an output name pattern into out[cap]: %r the rank (zero-padded to
 * the digits of size - 1 when the size is known; 0 without a launcher, a
 * process of its own), %s the size (1 without a launcher), %h host, %p pid,
 * %j job id ("nojob" without one), %% a '%'.  Host and job id are made safe
 * for a file name: bytes other than letters, digits and "._-+" become '_',
 * at most CP_JOBID_MAX of them, never "." or "..".  Returns 0; -EINVAL for
 * a '%' followed by anything else (*bad_at gets its offset), -ENAMETOOLONG.
 */
int cp_outname__expand(char *out, size_t cap, const char *pattern, const struct cp_job *job,
		       const char *host, unsigned long pid, size_t *bad_at);
/* Whether pattern holds the conversion %c (c one of r s h p j). */
int cp_outname__has(const char *pattern, char c);

/* ---- reader (tool side) ---- */

/*
 * A validated, read-only view of a profile file.  cp_profile_file__open()
 * reads the whole file and checks the header, section table, checksum and
 * every record's references before returning, so users may index freely.
 */
struct cp_profile_file {
	char *path;			  /* as given to open */
	uint8_t *data;			  /* whole file */
	size_t size;			  /* bytes in data */
	const struct cp_file_header *hdr; /* == data */
	struct cp_meta meta;		  /* copied, zero-extended */
	const char *strings;		  /* STRINGS section */
	size_t strings_size;		  /* its size */
	struct cp_module *modules;	  /* normalised copies */
	uint32_t nmodules;
	struct cp_map *maps;
	uint32_t nmaps;
	struct cp_thread_rec *threads;
	uint32_t nthreads;
	struct cp_node_rec *nodes;
	uint32_t nnodes;
	const char **argv; /* command line, NULL-terminated */
	uint32_t argc;
	struct cp_symbol *symbols;	/* SYMBOLS (merged profiles), or NULL */
	uint32_t nsymbols;
	struct cp_input_rec *inputs;	/* INPUTS (merged profiles), or NULL */
	uint32_t ninputs;
	struct cp_spread_rec *spread;	/* SPREAD: nnodes records, or NULL */
	struct cp_line_rec *lines;	/* LINES: sampled addresses, or NULL */
	uint32_t nlines;
	struct cp_filter_rec *filters;	/* FILTERS: record-time selection, or NULL */
	uint32_t nfilters;
	struct cp_region_rec *regions;	/* REGIONS: region names, sorted by id, or NULL */
	uint32_t nregions;
	struct cp_image_rec *images;	/* IMAGES (version 8), or NULL */
	uint32_t nimages;
	uint32_t *image_module;		/* per image, the MODULES record made of it */
	const uint8_t *image_data;	/* the IMAGE_DATA section, in data */
	struct cp_job_rec *job;		/* JOB (version 9): the rank it was, or NULL */
};

/*
 * Open and validate path.  On failure returns NULL and writes one line
 * naming the file and the problem (e.g. "profile 'p': truncated: ...") into
 * err (size errlen); *errp gets a negative error code.
 */
struct cp_profile_file *cp_profile_file__open(const char *path, char *err, size_t errlen,
					      int *errp);
/*
 * The same for a profile already in memory: data[0..size) is copied (the
 * caller keeps it) and validated like a file's contents; name stands for
 * the path in messages and in pf->path.  Nothing touches the filesystem.
 */
struct cp_profile_file *cp_profile_file__open_mem(const char *name, const void *data, size_t size,
						  char *err, size_t errlen, int *errp);
void cp_profile_file__free(struct cp_profile_file *pf);

/*
 * The name of region id (a CP_NODE_REGION record's fn), or NULL if none.
 * Validated at open; O(log n) (the regions are kept sorted by id).
 */
const char *cp_profile_file__region_name(const struct cp_profile_file *pf, uint64_t id);

/*
 * Where a CP_MODE_CPU profile's samples lie (LINES): in the program's code,
 * in callprof's runtime (the profiler's share, CP_MODULE_RUNTIME), in the
 * kernel (CP_IP_KERNEL) or lost by a full ring (CP_IP_LOST).  The
 * program's CPU time is program + kernel + lost samples.
 */
struct cp_sample_shares {
	uint64_t program, runtime, kernel, lost;
};
void cp_profile_file__sample_shares(const struct cp_profile_file *pf, struct cp_sample_shares *s);
/* Whether ip lies in a CP_MODULE_RUNTIME module's code. */
int cp_profile_file__in_runtime(const struct cp_profile_file *pf, uint64_t ip);

/*
 * The ELF image of module index m when the profile holds it (a
 * CP_MODULE_IMAGE module: the vDSO), *size bytes inside pf->data; NULL for
 * a module that is a file.
 */
const void *cp_profile_file__image(const struct cp_profile_file *pf, uint32_t m, uint64_t *size);

/* String at offset off, or NULL for CP_NO_STRING.  Validated at open. */
const char *cp_profile_file__str(const struct cp_profile_file *pf, uint32_t off);

/* Text for a negative error code returned by format/ or symbolize/. */
const char *cp_strerror(int err);

#endif /* CP_FORMAT_FORMAT_H */
