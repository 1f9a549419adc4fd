/*
 * elffile.h - facts about one ELF file on disk, for the parts of the tool
 * that are not the symbolizer: whether a program is instrumented, its
 * PT_LOAD segments and build-id (the sampler's module map), its program
 * interpreter, its function symbols and the address ranges of the
 * functions its DWARF declares (record's name and file patterns,
 * cli/select.c).
 *
 * symbolize/ is the tool's one home for elfutils (docs/internals/design.md,
 * tools/check-layering): this header is plain C, and what it returns are
 * plain values or strings valid for the duration of a callback.
 */
#ifndef CP_SYMBOLIZE_ELFFILE_H
#define CP_SYMBOLIZE_ELFFILE_H

#include <stddef.h>
#include <stdint.h>

struct stat;

/* An ELF file opened for reading (opaque). */
struct cp_elf;

/*
 * Open the ELF file at path, only if it is a regular file (cp_open_regular:
 * a FIFO in its place must not block).  When st is non-NULL it receives the
 * file's fstat.  NULL with errno set on failure (ENOEXEC: not ELF).
 */
struct cp_elf *cp_elf__open(const char *path, struct stat *st);
/* Close e; accepts NULL. */
void cp_elf__close(struct cp_elf *e);

/* Whether a SHT_SYMTAB or SHT_DYNSYM entry, defined or not, is named name. */
int cp_elf__has_symbol(struct cp_elf *e, const char *name);

/* How a file has a symbol (cp_elf__symbol_kind); 0: not at all. */
enum cp_elf_symbol_kind {
	CP_ELF_SYM_IMPORTED = 1 << 0, /* undefined in .dynsym: bound at run time, through the GOT */
	CP_ELF_SYM_DEFINED = 1 << 1,  /* defined (st_shndx not SHN_UNDEF) in .symtab or .dynsym */
	CP_ELF_SYM_PRESENT = 1 << 2,  /* any entry of that name, defined or not, in either table */
};

/* The cp_elf_symbol_kind flags of name in e's .dynsym and .symtab. */
int cp_elf__symbol_kind(struct cp_elf *e, const char *name);

/*
 * Whether the ELF file at path was built for callprof: with
 * -finstrument-functions (it defines or imports __cyg_profile_func_enter,
 * .dynsym or .symtab), or with patchable entries (sleds: a non-empty
 * __patchable_function_entries section, which the runtime patches).
 * 1 yes, 0 no, negative errno when it cannot be read as ELF.
 */
int cp_elf_is_instrumented(const char *path);

/*
 * The program interpreter (PT_INTERP) into buf, NUL-terminated; 0, or -1
 * when there is none or it does not fit in cap bytes.
 */
int cp_elf__interp(struct cp_elf *e, char *buf, size_t cap);

/*
 * The first allocated (SHF_ALLOC) section called name: its address and
 * size into *addr and *size (either may be NULL); 0, or -1 when there is
 * none.  __patchable_function_entries tells a sleds build.
 */
int cp_elf__section(struct cp_elf *e, const char *name, uint64_t *addr, uint64_t *size);

/* A function symbol: the name as in the file (mangled), its st_value and st_size. */
typedef void cp_elf_function_fn(const char *name, uint64_t value, uint64_t size, void *arg);

/*
 * Call fn for every defined function symbol (STT_FUNC or STT_GNU_IFUNC,
 * non-zero value, non-empty name) of .symtab, or of .dynsym when the file
 * has no .symtab (stripped).
 */
void cp_elf__for_each_function(struct cp_elf *e, cp_elf_function_fn *fn, void *arg);

/* An address range [lo, hi) of the file, ELF virtual addresses. */
struct cp_elf_range {
	uint64_t lo, hi;
};

/*
 * A function (DW_TAG_subprogram at the top of a compile unit) declared in
 * decl_file (DW_AT_decl_file as the DWARF names it), with its code's
 * ranges: low_pc..high_pc, or DW_AT_ranges for a function split into hot
 * and cold parts; n may be 0.
 */
typedef void cp_elf_subprogram_fn(const char *decl_file, const struct cp_elf_range *r,
				  size_t n, void *arg);

/*
 * Call fn for every such function of e's DWARF (the file's own; separate
 * debug files are not searched).  0, or -1 when the file has no DWARF.
 */
int cp_elf__for_each_subprogram(struct cp_elf *e, cp_elf_subprogram_fn *fn, void *arg);

/* ---- segments and build-id: the sampler's module map ---- */

/* A PT_LOAD segment. */
struct cp_elf_seg {
	uint64_t vaddr, memsz;	 /* p_vaddr, p_memsz */
	uint64_t offset, filesz; /* p_offset, p_filesz */
	uint32_t flags;		 /* PF_* */
};

/* What a module file says about itself. */
struct cp_elf_info {
	struct cp_elf_seg *segs; /* PT_LOAD segments, malloc'd */
	size_t nsegs;
	uint8_t build_id[32];	 /* NT_GNU_BUILD_ID, truncated to 32 */
	uint32_t build_id_size;	 /* 0 if none */
};

/*
 * Read the PT_LOAD segments and build-id of the ELF file at path into *info
 * (released with cp_elf_info__release, even on failure).  0, or -1 when the
 * file cannot be opened, is not ELF or has no PT_LOAD segment.
 */
int cp_elf_info__read(const char *path, struct cp_elf_info *info);
void cp_elf_info__release(struct cp_elf_info *info);

/*
 * The load bias of a mapping: it starts at start and maps the file from
 * pgoff; seg[0..n) are the file's PT_LOAD segments.  0 and *bias, or -1
 * when no segment holds pgoff.
 */
int cp_load_bias(const struct cp_elf_seg *seg, size_t n, uint64_t start, uint64_t pgoff,
		 uint64_t *bias);

/* ---- what `callprof attach` redirects (engine/attach-ptrace.c) ---- */

/*
 * The GOT slots through which e calls the function name: the r_offset
 * (ELF virtual address) of each R_X86_64_JUMP_SLOT or R_X86_64_GLOB_DAT
 * relocation against the dynamic symbol name, at most max into offs.
 * Returns how many there are (at most max).
 */
int cp_elf__symbol_slots(struct cp_elf *e, const char *name, uint64_t *offs, int max);
/*
 * A symbol e defines in .dynsym: its st_value and, when entry is not NULL,
 * the ELF virtual address of its .dynsym entry.  0, or -1 if none.
 */
int cp_elf__dynsym(struct cp_elf *e, const char *name, uint64_t *value, uint64_t *entry);
/* A relocation of e's own thread-local storage (R_X86_64_TPOFF64, no symbol). */
struct cp_elf_tls_reloc {
	uint64_t file_off; /* where the Elf64_Rela is in the file */
	uint64_t r_offset; /* the GOT entry it fills (ELF virtual address) */
	int64_t addend;	   /* the variable's offset in the TLS segment */
};
/*
 * The relocations of e's TLS references, at most max into out: how many,
 * or -1 when e has others than local initial-exec ones (TPOFF64 without a
 * symbol), which could not be pointed at another module's block.
 */
int cp_elf__tls_relocs(struct cp_elf *e, struct cp_elf_tls_reloc *out, int max);
/* e's PT_TLS: the file offset of its program header, its size and alignment.  0 or -1. */
int cp_elf__tls_segment(struct cp_elf *e, uint64_t *phdr_off, uint64_t *memsz, uint64_t *align);

/*
 * e's dynamic entry tag (ELFCLASS64): its value, and the file offset of
 * that value (for a copy of e to be patched).  0, or -1 if none.
 */
int cp_elf__dynamic(struct cp_elf *e, int64_t tag, uint64_t *value_off, uint64_t *value);

/* ELFCLASS32 or ELFCLASS64 (ELFCLASSNONE if unknown). */
int cp_elf__class(struct cp_elf *e);

#endif /* CP_SYMBOLIZE_ELFFILE_H */
