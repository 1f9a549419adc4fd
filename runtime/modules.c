/*
 * modules.c - the module map: every ELF object loaded in the process, with
 * its path, build-id, load bias and PT_LOAD ranges, so the tool can turn
 * raw addresses into names later without the process.
 *
 * Taken at the dump with dl_iterate_phdr into mmap'd scratch arrays (one
 * consistent snapshot even if another thread dlopens meanwhile), then
 * written as the MODULES and MAPS sections.  The vDSO has no file and is
 * left out.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/internal.h"

struct snapshot {
	struct cp_module *mods; /* path holds an index into names, fixed up later */
	struct cp_map *maps;
	char (*names)[PATH_MAX];
	uint32_t nmods, nmaps, cap_mods, cap_maps;
	int overflow;
};

static void read_build_id(const struct dl_phdr_info *info, struct cp_module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
			const char *d = p + sizeof(*nh) + name;

			if (d + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4)) {
				uint32_t n = nh->n_descsz < 32 ? nh->n_descsz : 32;

				memcpy(m->build_id, d, n);
				m->build_id_size = n;
				return;
			}
			p = d + desc;
		}
	}
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct snapshot *s = arg;
	struct cp_module *m;
	const char *name = info->dlpi_name;
	uint32_t first = s->nmaps;

	if (s->nmods == 0 && (!name || !*name)) {
		/* The main program comes first, with an empty name. */
		ssize_t n = readlink("/proc/self/exe", s->names[0], PATH_MAX - 1);

		s->names[0][n > 0 ? n : 0] = '\0';
	} else if (!name || !*name || !strncmp(name, "linux-vdso", 10) ||
		   !strncmp(name, "linux-gate", 10)) {
		return 0;
	} else if (s->nmods < s->cap_mods) {
		size_t len = strlen(name);

		if (len >= PATH_MAX)
			len = PATH_MAX - 1;
		memcpy(s->names[s->nmods], name, len);
		s->names[s->nmods][len] = '\0';
	}
	if (s->nmods == s->cap_mods) {
		s->overflow = 1;
		return 1;
	}
	m = &s->mods[s->nmods];
	memset(m, 0, sizeof(*m));
	m->path = s->nmods;
	m->load_bias = info->dlpi_addr;
	m->first_map = first;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct cp_map *mp;

		if (ph->p_type != PT_LOAD)
			continue;
		if (s->nmaps == s->cap_maps) {
			s->overflow = 1;
			return 1;
		}
		mp = &s->maps[s->nmaps++];
		mp->start = info->dlpi_addr + ph->p_vaddr;
		mp->end = mp->start + ph->p_memsz;
		mp->offset = ph->p_offset;
		mp->prot = ph->p_flags;
		mp->module = s->nmods;
	}
	m->nmaps = s->nmaps - first;
	read_build_id(info, m);
	s->nmods++;
	return 0;
}

static void release(struct snapshot *s, size_t bytes)
{
	if (s->mods)
		munmap(s->mods, bytes);
}

int cp_modules__write(struct cp_writer *w)
{
	struct snapshot s;
	size_t bytes = 0;
	int ret = 0;

	for (uint32_t cap = 64;; cap *= 4) {
		char *p;

		bytes = cap * (sizeof(struct cp_module) + PATH_MAX + 8 * sizeof(struct cp_map));
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -ENOMEM;
		memset(&s, 0, sizeof(s));
		s.mods = (struct cp_module *)p;
		s.names = (char(*)[PATH_MAX])(p + cap * sizeof(struct cp_module));
		s.maps = (struct cp_map *)(p + cap * (sizeof(struct cp_module) + PATH_MAX));
		s.cap_mods = cap;
		s.cap_maps = cap * 8;
		dl_iterate_phdr(collect, &s);
		if (!s.overflow || cap >= 65536)
			break;
		munmap(p, bytes);
	}
	for (uint32_t i = 0; i < s.nmods; i++)
		s.mods[i].path = cp_writer__string(w, s.names[i]);
	cp_writer__section(w, CP_SEC_MODULES, sizeof(struct cp_module));
	cp_writer__put(w, s.mods, s.nmods * sizeof(struct cp_module));
	cp_writer__section(w, CP_SEC_MAPS, sizeof(struct cp_map));
	ret = cp_writer__put(w, s.maps, s.nmaps * sizeof(struct cp_map));
	release(&s, bytes);
	return ret;
}
