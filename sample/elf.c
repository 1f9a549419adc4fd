/*
 * elf.c - the few facts the sampler needs from ELF files: whether a
 * program is instrumented, its PT_LOAD segments (for load biases and the
 * profile's MAPS) and its build-id.  libelf only; names are libdwfl's
 * business (unwind.c, symbolize/).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample/internal.h"
#include "sample/sample.h"
#include "util/util.h"

static Elf *elf_open(const char *path, int *fd)
{
	Elf *elf;

	*fd = cp_open_regular(path, NULL); /* a FIFO in a module's place would block */
	if (*fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return elf;
}

/* A symbol named name in a SHT_SYMTAB or SHT_DYNSYM section, defined or not. */
static int elf_has_symbol(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
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
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name))
				return 1;
		}
	}
	return 0;
}

int cp_elf_is_instrumented(const char *path)
{
	int fd, ret;
	Elf *elf = elf_open(path, &fd);

	if (!elf)
		return -errno;
	ret = elf_has_symbol(elf, "__cyg_profile_func_enter");
	elf_end(elf);
	close(fd);
	return ret;
}

int cp_load_bias(const struct sp_seg *seg, size_t n, uint64_t start, uint64_t pgoff,
		 uint64_t *bias)
{
	const struct sp_seg *hit = NULL;

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

static void elf_build_id(Elf *elf, struct sp_elf *e)
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
				e->build_id_size = nh.n_descsz < 32 ? nh.n_descsz : 32;
				memcpy(e->build_id, (char *)d->d_buf + desc_off, e->build_id_size);
				return;
			}
		}
	}
}

int sp_elf__read(const char *path, struct sp_elf *e)
{
	size_t nph = 0, alloc = 0;
	int fd;
	Elf *elf = elf_open(path, &fd);

	memset(e, 0, sizeof(*e));
	if (!elf)
		return -1;
	if (!elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			ALLOC_GROW(e->segs, e->nsegs + 1, alloc);
			e->segs[e->nsegs++] = (struct sp_seg){ .vaddr = ph.p_vaddr,
							       .memsz = ph.p_memsz,
							       .offset = ph.p_offset,
							       .filesz = ph.p_filesz,
							       .flags = ph.p_flags };
		}
	}
	elf_build_id(elf, e);
	elf_end(elf);
	close(fd);
	return e->nsegs ? 0 : -1;
}

void sp_elf__release(struct sp_elf *e)
{
	FREE_AND_NULL(e->segs);
	e->nsegs = 0;
}
