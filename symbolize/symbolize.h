/*
 * symbolize.h - runtime addresses of a profiled process -> function names
 * and source lines, from the module map recorded in its profile.
 *
 * The reports' door to elfutils.  symbolize/ is the tool's one home for
 * elfutils (docs/internals/design.md, Layering): record's name patterns and
 * the sampler use its other plain-C headers, elffile.h and unwind.h, and
 * every C++ name goes through demangle.h.  Everything returned here is
 * plain C strings owned by the symbolizer and valid until
 * cp_symbolizer__free().
 * Lookups are cached, so asking for the same address twice is cheap.
 *
 * Naming rules (docs/callprof-report.1.md repeats them for users):
 *  - the name of the function symbol that starts at (or contains) addr,
 *    demangled as c++filt prints it (parameter lists included);
 *  - where several symbols share an address, the global one wins, then the
 *    shortest name, then the alphabetically first (so output is stable);
 *  - stripped modules fall back to their dynamic symbol table (.dynsym);
 *  - x86-64 PLT stubs (.plt, .plt.sec, .plt.got): "TARGET@plt", as perf;
 *  - in the main program (the first module) with no symbol: "main" for the
 *    address glibc's x86-64 _start passes to __libc_start_main (stripped
 *    programs; their other functions fall to the next rule);
 *  - with no symbol at all: "MODULE+0xOFFSET", MODULE the basename of the
 *    module and OFFSET the address relative to the module's ELF image
 *    (address minus load bias), stable across runs despite ASLR;
 *  - an address in no recorded module: "[unknown]+0xADDR".
 *
 * Files are searched as docs/callprof-report.1.md, DEBUG FILES, lists: the
 * module at its recorded path (under --symfs when given), then its debug
 * file by build-id and by .gnu_debuglink; a debug file whose build-id
 * differs from the module's is never used, and is warned about.
 */
#ifndef CP_SYMBOLIZE_SYMBOLIZE_H
#define CP_SYMBOLIZE_SYMBOLIZE_H

#include <stdint.h>

struct cp_profile_file;
struct cp_symbolizer;

struct cp_symbolizer_opts {
	const char *const *debug_dirs; /* extra debug-file roots, NULL-terminated, or NULL */
	const char *symfs;	       /* look for recorded module paths under this root */
	int quiet;		       /* do not warn about missing modules */
	int mangled;		       /* raw symbol names, no demangling */
	int no_files;		       /* open no file (not even debuginfod's): only the
					* profile's own names, the rest MODULE+0xOFFSET */
};

/*
 * Set up symbolisation for the modules recorded in pf (pf must outlive the
 * symbolizer).  Modules whose file is missing are warned about once
 * (unless quiet) and get MODULE+0xOFFSET names.  Returns NULL only on
 * out-of-memory.
 */
struct cp_symbolizer *cp_symbolizer__new(const struct cp_profile_file *pf,
					 const struct cp_symbolizer_opts *opts);
void cp_symbolizer__free(struct cp_symbolizer *sym);

/* Name of the function at addr (see the naming rules above).  Never NULL. */
const char *cp_symbolizer__fn_name(struct cp_symbolizer *sym, uint64_t addr);

/*
 * Entry address of the function symbol holding the instruction at ip (a
 * sampled address), in the process's address space; 0 when no symbol
 * covers it.
 */
uint64_t cp_symbolizer__fn_entry(struct cp_symbolizer *sym, uint64_t ip);

/* The name followed by " [MODULE+0xOFFSET]" (report --addresses). */
const char *cp_symbolizer__fn_name_at(struct cp_symbolizer *sym, uint64_t addr);

/* Name of a signal handler's pseudo-node: "<signal N>". */
const char *cp_symbolizer__signal_name(struct cp_symbolizer *sym, uint64_t sig);

/* Name of a named region's pseudo-node (callprof_region_begin): "[NAME]". */
const char *cp_symbolizer__region_name(struct cp_symbolizer *sym, const char *name);

/*
 * Source position of a call site, given the return address recorded by the
 * hooks (the instruction after the call).  Returns 0 and sets *file (full
 * path as in the debug info) and *line, or -ENOENT when no line info exists.
 */
int cp_symbolizer__site(struct cp_symbolizer *sym, uint64_t ret_addr, const char **file,
			int *line);

/*
 * Source position of the instruction at ip itself (a sampled address, not
 * a return address: no step back into the call).  As cp_symbolizer__site.
 */
int cp_symbolizer__line(struct cp_symbolizer *sym, uint64_t ip, const char **file, int *line);

/*
 * Source position of the function entry at addr (the line of its first
 * instruction: where the function's definition begins).  As
 * cp_symbolizer__site.
 */
int cp_symbolizer__fn_src(struct cp_symbolizer *sym, uint64_t addr, const char **file, int *line);

/*
 * The functions inlined at the instruction at ip, from the outermost (the
 * one inlined into the function holding ip) to the innermost (whose body
 * holds ip's source line), as DWARF's DW_TAG_inlined_subroutine records
 * say; named as the naming rules above (demangled unless mangled).
 * Returns their number, 0 when ip is in no inlined body or there is no
 * debug information (a merged profile's SYMBOLS carry none), and sets *names to a NULL-terminated array owned by
 * the symbolizer.
 */
int cp_symbolizer__inlined(struct cp_symbolizer *sym, uint64_t ip, const char *const **names);

/*
 * Where the function whose code holds addr is declared: DWARF's
 * DW_AT_decl_file and DW_AT_decl_line of its subprogram, else the line of
 * its first instruction (cp_symbolizer__fn_src).  Copies of one source
 * function (a static inline function of a header, one per translation
 * unit) have the same.  As cp_symbolizer__site.
 */
int cp_symbolizer__fn_decl(struct cp_symbolizer *sym, uint64_t addr, const char **file,
			   int *line);

/*
 * Module containing addr: its path as recorded, and *offset = address minus
 * load bias.  Returns NULL when addr lies in no recorded module.
 */
const char *cp_symbolizer__module(struct cp_symbolizer *sym, uint64_t addr, uint64_t *offset);

/*
 * The DW_AT_producer of the compile unit holding the code at addr: the
 * compiler and, where it records them, its flags ("GNU C17 12.2.0 -O2
 * -finstrument-functions", "Debian clang version 14.0.6").  NULL without
 * debug information there.  Owned by the symbolizer's libdw session.
 */
const char *cp_symbolizer__producer(struct cp_symbolizer *sym, uint64_t addr);

/*
 * Whether the compiler inlined the function whose entry is addr into some
 * caller (DW_AT_inline of its abstract instance says "inlined"): 1, 0 when
 * the debug information says it did not, -1 when there is none to say.
 */
int cp_symbolizer__was_inlined(struct cp_symbolizer *sym, uint64_t addr);

/*
 * A descriptor of a memory file holding data[0..size), read from its start
 * (how an ELF image the profile holds, such as the vDSO's, is given to
 * libdwfl); -1 with *why set (a static string) on failure.
 */
int cp_memory_fd(const void *data, uint64_t size, const char **why);

/*
 * The first place libdwfl's standard debug-file search
 * (dwfl_standard_find_debuginfo, with this debuginfo_path) may open for
 * file_name's debug data that exists but is not a regular file, malloc'd;
 * NULL if none.  libdwfl opens them without O_NONBLOCK, so a FIFO there
 * (a path named by an untrusted profile) would hang it: callers skip the
 * search then.  debuglink may be NULL; id is the module's build-id.
 */
char *cp_debug_search_special(const char *debuginfo_path, const char *file_name,
			      const char *debuglink, const unsigned char *id, int id_len);

#endif /* CP_SYMBOLIZE_SYMBOLIZE_H */
