/*
 * elffile.c - facts about one ELF file on disk through libelf and libdw
 * (elffile.h): symbols, segments, build-id, interpreter, and the ranges
 * of the functions its DWARF declares.  Names for a profile's addresses
 * are symbolize.c's business; call stacks are unwind.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "symbolize/elffile.h"
#include "util/util.h"

struct cp_elf {
	int fd;	  /* the file, open for reading */
	Elf *elf; /* libelf's view of it (ELF_C_READ_MMAP) */
};

struct cp_elf *cp_elf__open(const char *path, struct stat *st)
{
	struct cp_elf *e;
	int fd = cp_open_regular(path, NULL); /* a FIFO in a module's place would block */
	Elf *elf;

	if (fd < 0)
		return NULL;
	if (st && fstat(fd, st)) {
		int err = errno;

		close(fd);
		errno = err;
		return NULL;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	e = xmalloc(sizeof(*e));
	e->fd = fd;
	e->elf = elf;
	return e;
}

void cp_elf__close(struct cp_elf *e)
{
	if (!e)
		return;
	elf_end(e->elf);
	close(e->fd);
	free(e);
}

int cp_elf__has_symbol(struct cp_elf *e, const char *name)
{
	return (cp_elf__symbol_kind(e, name) & CP_ELF_SYM_PRESENT) != 0;
}

int cp_elf__symbol_kind(struct cp_elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	int kind = 0;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			n = elf_strptr(e->elf, sh.sh_link, s.st_name);
			if (!n || strcmp(n, name))
				continue;
			kind |= CP_ELF_SYM_PRESENT;
			if (s.st_shndx != SHN_UNDEF)
				kind |= CP_ELF_SYM_DEFINED;
			else if (sh.sh_type == SHT_DYNSYM)
				kind |= CP_ELF_SYM_IMPORTED;
		}
	}
	return kind;
}

int cp_elf_is_instrumented(const char *path)
{
	int ret;
	struct cp_elf *e = cp_elf__open(path, NULL);

	if (!e)
		return -errno;
	ret = cp_elf__has_symbol(e, "__cyg_profile_func_enter");
	if (!ret) {
		uint64_t size = 0;

		ret = !cp_elf__section(e, "__patchable_function_entries", NULL, &size) && size >= 8;
	}
	cp_elf__close(e);
	return ret;
}

int cp_elf__interp(struct cp_elf *e, char *buf, size_t cap)
{
	size_t n = 0;

	if (elf_getphdrnum(e->elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		size_t len;
		const char *img;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		img = elf_rawfile(e->elf, &len);
		if (!img || ph.p_offset > len || ph.p_filesz > len - ph.p_offset ||
		    ph.p_filesz >= cap)
			return -1;
		memcpy(buf, img + ph.p_offset, ph.p_filesz);
		buf[ph.p_filesz] = '\0';
		return 0;
	}
	return -1;
}

int cp_elf__section(struct cp_elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		if (addr)
			*addr = sh.sh_addr;
		if (size)
			*size = sh.sh_size;
		return 0;
	}
	return -1;
}

/* The function symbols of the first section of type want; whether there was one. */
static int for_each_function_in(struct cp_elf *e, unsigned want, cp_elf_function_fn *fn,
				void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
			if (name && *name)
				fn(name, sym.st_value, sym.st_size, arg);
		}
		return 1;
	}
	return 0;
}

void cp_elf__for_each_function(struct cp_elf *e, cp_elf_function_fn *fn, void *arg)
{
	/* stripped: the dynamic symbols are what is left */
	if (!for_each_function_in(e, SHT_SYMTAB, fn, arg))
		for_each_function_in(e, SHT_DYNSYM, fn, arg);
}

int cp_elf__for_each_subprogram(struct cp_elf *e, cp_elf_subprogram_fn *fn, void *arg)
{
	Dwarf *dw = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, die;
	struct cp_elf_range *r = NULL;
	size_t alloc = 0;

	if (!dw)
		return -1;
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0) {
		if (dwarf_child(&cudie, &die))
			continue;
		do {
			const char *file;
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			size_t n = 0;

			if (dwarf_tag(&die) != DW_TAG_subprogram || !(file = dwarf_decl_file(&die)))
				continue;
			/*
			 * low_pc..high_pc, or DW_AT_ranges for a function split
			 * into hot and cold parts (gcc -O2, -fsanitize=address).
			 */
			while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				ALLOC_GROW(r, n + 1, alloc);
				r[n++] = (struct cp_elf_range){ .lo = lo, .hi = hi };
			}
			fn(file, r, n, arg);
		} while (dwarf_siblingof(&die, &die) == 0);
	}
	free(r);
	dwarf_end(dw);
	return 0;
}

int cp_load_bias(const struct cp_elf_seg *seg, size_t n, uint64_t start, uint64_t pgoff,
		 uint64_t *bias)
{
	const struct cp_elf_seg *hit = NULL;

	/*
	 * The loader maps each segment from its offset rounded down to a page;
	 * a segment whose file range merely contains pgoff (text that shares
	 * a page with the data after it) is the second choice, as its
	 * vaddr - offset may differ from the mapped segment's.
	 */
	for (size_t i = 0; i < n && !hit; i++)
		if ((seg[i].offset & ~(uint64_t)0xfff) == pgoff)
			hit = &seg[i];
	for (size_t i = 0; i < n && !hit; i++)
		if (pgoff >= seg[i].offset && pgoff < seg[i].offset + seg[i].filesz)
			hit = &seg[i];
	if (!hit)
		return -1;
	*bias = start - (hit->vaddr + pgoff - hit->offset);
	return 0;
}

static void elf_build_id(Elf *elf, struct cp_elf_info *info)
{
	size_t nph = 0;

	if (elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4)) {
				info->build_id_size = nh.n_descsz < 32 ? nh.n_descsz : 32;
				memcpy(info->build_id, (char *)d->d_buf + desc_off,
				       info->build_id_size);
				return;
			}
		}
	}
}

int cp_elf_info__read(const char *path, struct cp_elf_info *info)
{
	size_t nph = 0, alloc = 0;
	struct cp_elf *e = cp_elf__open(path, NULL);

	memset(info, 0, sizeof(*info));
	if (!e)
		return -1;
	if (!elf_getphdrnum(e->elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			ALLOC_GROW(info->segs, info->nsegs + 1, alloc);
			info->segs[info->nsegs++] = (struct cp_elf_seg){ .vaddr = ph.p_vaddr,
									 .memsz = ph.p_memsz,
									 .offset = ph.p_offset,
									 .filesz = ph.p_filesz,
									 .flags = ph.p_flags };
		}
	}
	elf_build_id(e->elf, info);
	cp_elf__close(e);
	return info->nsegs ? 0 : -1;
}

void cp_elf_info__release(struct cp_elf_info *info)
{
	FREE_AND_NULL(info->segs);
	info->nsegs = 0;
}

/* ---- what `callprof attach` redirects (engine/attach-ptrace.c) ---- */

int cp_elf__symbol_slots(struct cp_elf *e, const char *name, uint64_t *offs, int max)
{
	Elf_Scn *scn = NULL;
	int n = 0;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *syms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(e->elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		syms = elf_getdata(symscn, NULL);
		for (size_t i = 0; d && syms && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym s;
			const char *sn;
			unsigned type;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			type = (unsigned)GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			sn = elf_strptr(e->elf, symsh.sh_link, s.st_name);
			if (sn && !strcmp(sn, name) && n < max)
				offs[n++] = r.r_offset;
		}
	}
	return n;
}

int cp_elf__dynsym(struct cp_elf *e, const char *name, uint64_t *value, uint64_t *entry)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			if (s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			n = elf_strptr(e->elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name)) {
				*value = s.st_value;
				if (entry)
					*entry = sh.sh_addr + i * sh.sh_entsize;
				return 0;
			}
		}
	}
	return -1;
}

int cp_elf__class(struct cp_elf *e)
{
	return gelf_getclass(e->elf);
}

int cp_elf__tls_relocs(struct cp_elf *e, struct cp_elf_tls_reloc *out, int max)
{
	Elf_Scn *scn = NULL;
	int n = 0;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			unsigned type;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			type = (unsigned)GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_TPOFF64 && type != R_X86_64_DTPMOD64 &&
			    type != R_X86_64_DTPOFF64 && type != R_X86_64_TPOFF32)
				continue;
			/* Only local initial-exec references can be pointed elsewhere. */
			if (type != R_X86_64_TPOFF64 || GELF_R_SYM(r.r_info) || n >= max)
				return -1;
			out[n].file_off = sh.sh_offset + i * sh.sh_entsize;
			out[n].r_offset = r.r_offset;
			out[n].addend = r.r_addend;
			n++;
		}
	}
	return n;
}

int cp_elf__dynamic(struct cp_elf *e, int64_t tag, uint64_t *value_off, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != tag)
				continue;
			*value_off = sh.sh_offset + i * sh.sh_entsize + 8;
			*value = dyn.d_un.d_val;
			return 0;
		}
	}
	return -1;
}

int cp_elf__tls_segment(struct cp_elf *e, uint64_t *phdr_off, uint64_t *memsz, uint64_t *align)
{
	GElf_Ehdr eh;
	size_t n = 0;

	if (!gelf_getehdr(e->elf, &eh) || elf_getphdrnum(e->elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		*phdr_off = eh.e_phoff + i * eh.e_phentsize;
		*memsz = ph.p_memsz;
		*align = ph.p_align;
		return 0;
	}
	return -1;
}
