/*
 * fuzz-reader.c - the profile reader: cp_profile_file__open_mem().
 *
 * A profile the reader accepts must keep its promise (format.h): every
 * reference checked, so users may index freely.  This walks what the
 * report relies on and aborts where the promise is broken; the sanitizers
 * catch the reads that go out of bounds on the way.
 */
#include <string.h>

#include "format/format.h"
#include "tests/fuzz/fuzz.h"

/* A string reference: none, or a NUL-terminated string inside STRINGS. */
static void check_str(const struct cp_profile_file *pf, uint32_t off)
{
	const char *s = cp_profile_file__str(pf, off);

	CP_FUZZ_CHECK(off == CP_NO_STRING || s != NULL);
	if (s)
		CP_FUZZ_CHECK(strlen(s) < pf->strings_size - off);
}

static void check_threads(const struct cp_profile_file *pf)
{
	uint64_t next = 0;

	for (uint32_t i = 0; i < pf->nthreads; i++) {
		const struct cp_thread_rec *t = &pf->threads[i];

		check_str(pf, t->name);
		CP_FUZZ_CHECK(t->first_node == next && t->nnodes > 0);
		CP_FUZZ_CHECK((uint64_t)t->first_node + t->nnodes <= pf->nnodes);
		CP_FUZZ_CHECK(t->nthreads > 0);
		for (uint32_t k = 0; k < t->nnodes; k++) {
			const struct cp_node_rec *n = &pf->nodes[t->first_node + k];

			CP_FUZZ_CHECK(k == 0 ? n->parent == CP_NO_PARENT : n->parent < k);
			if (n->flags & CP_NODE_REGION)
				CP_FUZZ_CHECK(cp_profile_file__region_name(pf, n->fn) != NULL);
			if (k)
				CP_FUZZ_CHECK(!(pf->nodes[t->first_node + n->parent].flags &
						CP_NODE_SITE));
		}
		next += t->nnodes;
	}
	CP_FUZZ_CHECK(next == pf->nnodes);
}

static void check_profile(const struct cp_profile_file *pf)
{
	CP_FUZZ_CHECK(pf->strings && pf->strings_size > 0);
	CP_FUZZ_CHECK(pf->strings[pf->strings_size - 1] == '\0');
	check_str(pf, pf->meta.exe);
	check_str(pf, pf->meta.hostname);
	for (uint32_t i = 0; i < pf->nmodules; i++) {
		const struct cp_module *m = &pf->modules[i];

		check_str(pf, m->path);
		CP_FUZZ_CHECK(m->build_id_size <= sizeof(m->build_id));
		CP_FUZZ_CHECK((uint64_t)m->first_map + m->nmaps <= pf->nmaps);
	}
	for (uint32_t i = 0; i < pf->nmaps; i++)
		CP_FUZZ_CHECK(pf->maps[i].module < pf->nmodules &&
			      pf->maps[i].start <= pf->maps[i].end);
	check_threads(pf);
	for (uint32_t i = 0; i < pf->nlines; i++)
		CP_FUZZ_CHECK(pf->lines[i].node < pf->nnodes && pf->lines[i].samples);
	for (uint32_t i = 0; i < pf->nsymbols; i++) {
		check_str(pf, pf->symbols[i].file);
		if (pf->symbols[i].kind == CP_SYM_FUNCTION)
			CP_FUZZ_CHECK(cp_profile_file__str(pf, pf->symbols[i].name) != NULL);
	}
	for (uint32_t i = 0; i < pf->ninputs; i++) {
		check_str(pf, pf->inputs[i].path);
		check_str(pf, pf->inputs[i].exe);
		check_str(pf, pf->inputs[i].hostname);
	}
	if (pf->spread)
		CP_FUZZ_CHECK(pf->ninputs > 0);
	for (uint32_t i = 0; i < pf->nfilters; i++)
		CP_FUZZ_CHECK(cp_profile_file__str(pf, pf->filters[i].pattern) != NULL &&
			      *cp_filter_option(pf->filters[i].kind));
	for (uint32_t i = 0; i < pf->nregions; i++)
		CP_FUZZ_CHECK(cp_profile_file__str(pf, pf->regions[i].name) != NULL);
	CP_FUZZ_CHECK(pf->argv != NULL);
	for (uint32_t i = 0; i < pf->argc; i++)
		CP_FUZZ_CHECK(pf->argv[i] != NULL && strlen(pf->argv[i]) < pf->size);
	CP_FUZZ_CHECK(pf->argv[pf->argc] == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cp_profile_file *pf = cp_fuzz__open(data, size);

	if (pf)
		check_profile(pf);
	cp_profile_file__free(pf);
	return 0;
}
