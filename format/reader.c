/*
 * reader.c - open and validate a profile file (tool side).
 *
 * Every offset, length and cross-reference is checked against the file
 * before anything uses it, so the rest of the tool can index the arrays
 * freely.  A bad file yields one line naming the file, the byte offset
 * where it goes wrong when there is one, and the problem.  Allocations are
 * bounded by the file size: records may only grow across versions, so a
 * copy in the struct this reader knows is never larger than the record.
 * Records are copied into arrays of the struct this reader knows, which
 * both aligns them and zero-extends records written by older writers and
 * truncates records grown by newer ones.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"

#define MAX_FILE_SIZE (UINT64_C(1) << 36) /* 64 GiB: anything larger is not ours */
/*
 * Sections a reader looks at.  Writers use at most CP_MAX_SECTIONS; the cap
 * leaves room for kinds of later versions while keeping the pairwise checks
 * of the table (duplicates, overlaps) cheap whatever header_size claims.
 */
#define MAX_READ_SECTIONS 1024

struct ctx {
	const char *path;
	char *err;
	size_t errlen;
	int code;
};

__attribute__((format(printf, 3, 4))) static int bad(struct ctx *c, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->err, c->errlen, "profile '%s': ", c->path);
	if (n < 0 || (size_t)n >= c->errlen)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	c->code = -code;
	return -code;
}

const char *cp_strerror(int err)
{
	switch (-err) {
	case CP_ERR_CORRUPT:
		return "corrupt profile";
	case CP_ERR_VERSION:
		return "profile needs a newer callprof";
	case CP_ERR_TRUNCATED:
		return "truncated profile";
	default:
		return strerror(-err);
	}
}

static int read_file(struct ctx *c, struct cp_profile_file *pf)
{
	struct stat st;
	size_t got = 0;
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return bad(c, errno, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return bad(c, e, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return bad(c, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "not a regular file");
	}
	if ((uint64_t)st.st_size > MAX_FILE_SIZE) {
		close(fd);
		return bad(c, CP_ERR_CORRUPT, "file of %lld bytes is too large to be a profile",
			   (long long)st.st_size);
	}
	pf->data = malloc(st.st_size ? st.st_size : 1);
	if (!pf->data) {
		close(fd);
		return bad(c, ENOMEM, "out of memory reading %lld bytes", (long long)st.st_size);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, pf->data + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return bad(c, e, "read error: %s", strerror(e));
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	pf->size = got;
	return 0;
}

/* Find the section of kind; *entsize and the byte range are returned. */
static const struct cp_section_entry *find_section(const struct cp_profile_file *pf, uint32_t kind)
{
	const struct cp_section_entry *sec = (const void *)(pf->data + sizeof(struct cp_file_header));

	for (uint32_t i = 0; i < pf->hdr->nsections; i++)
		if (sec[i].kind == kind)
			return &sec[i];
	return NULL;
}

/*
 * Copy the records of section kind into a fresh array of n elements of
 * `known` bytes each (zero-filled beyond what the file has).  A missing
 * section gives n = 0 when optional.
 */
static int load_records_min(struct ctx *c, struct cp_profile_file *pf, uint32_t kind,
			    const char *what, size_t min, size_t known, int required, void **out,
			    uint32_t *n)
{
	const struct cp_section_entry *s = find_section(pf, kind);
	uint64_t count;
	uint8_t *arr;

	*out = NULL;
	*n = 0;
	if (!s) {
		if (required)
			return bad(c, CP_ERR_CORRUPT, "no %s section", what);
		return 0;
	}
	/* Records only ever grow, so a smaller one is damage; this also keeps
	 * the copies below no larger than the section itself. */
	if (s->entsize < min)
		return bad(c, CP_ERR_CORRUPT, "%s section at 0x%llx: records of %u bytes, need %zu",
			   what, (unsigned long long)s->offset, s->entsize, min);
	count = s->size / s->entsize;
	if (count > UINT32_MAX - 1)
		return bad(c, CP_ERR_CORRUPT, "%s section at 0x%llx: %llu records is too many", what,
			   (unsigned long long)s->offset, (unsigned long long)count);
	arr = calloc(count ? count : 1, known);
	if (!arr)
		return bad(c, ENOMEM, "out of memory for %llu %s records", (unsigned long long)count,
			   what);
	for (uint64_t i = 0; i < count; i++)
		memcpy(arr + i * known, pf->data + s->offset + i * s->entsize,
		       s->entsize < known ? s->entsize : known);
	*out = arr;
	*n = (uint32_t)count;
	return 0;
}

/* Records no older writer wrote shorter than this reader's struct. */
static int load_records(struct ctx *c, struct cp_profile_file *pf, uint32_t kind, const char *what,
			size_t known, int required, void **out, uint32_t *n)
{
	return load_records_min(c, pf, kind, what, known, known, required, out, n);
}

static int check_header(struct ctx *c, struct cp_profile_file *pf)
{
	const struct cp_file_header *h = (const void *)pf->data;
	const struct cp_section_entry *sec;
	struct cp_file_header copy;
	uint32_t crc;
	size_t table;

	if (pf->size == 0)
		return bad(c, CP_ERR_TRUNCATED, "empty file");
	if (memcmp(h->magic, CP_MAGIC, pf->size < CP_MAGIC_LEN ? pf->size : CP_MAGIC_LEN))
		return bad(c, CP_ERR_CORRUPT, "not a callprof profile (bad magic)");
	if (pf->size < sizeof(*h))
		return bad(c, CP_ERR_TRUNCATED, "truncated: %zu bytes, header needs %zu", pf->size,
			   sizeof(*h));
	pf->hdr = h;
	if (h->min_reader > CP_READER_VERSION)
		return bad(c, CP_ERR_VERSION,
			   "format version %u needs a reader of version %u, this callprof reads %u",
			   h->version, h->min_reader, CP_READER_VERSION);
	if (h->endian != 1)
		return bad(c, CP_ERR_CORRUPT, "header at 0x10: unsupported byte order %u", h->endian);
	if (h->ptr_size != 4 && h->ptr_size != 8)
		return bad(c, CP_ERR_CORRUPT, "header at 0x11: bad address size %u", h->ptr_size);
	if (h->file_size != pf->size) {
		if (h->file_size > pf->size)
			return bad(c, CP_ERR_TRUNCATED, "truncated: %zu bytes, header says %llu",
				   pf->size, (unsigned long long)h->file_size);
		return bad(c, CP_ERR_CORRUPT, "file has %zu bytes, header says %llu", pf->size,
			   (unsigned long long)h->file_size);
	}
	table = (size_t)h->header_size - sizeof(*h);
	if (h->header_size < sizeof(*h) || h->header_size > pf->size ||
	    table % sizeof(struct cp_section_entry) ||
	    h->nsections > table / sizeof(struct cp_section_entry))
		return bad(c, CP_ERR_CORRUPT, "header at 0x8: bad header size %u for %u sections",
			   h->header_size, h->nsections);
	if (h->nsections > MAX_READ_SECTIONS)
		return bad(c, CP_ERR_CORRUPT, "header at 0x14: %u sections, at most %u are read",
			   h->nsections, MAX_READ_SECTIONS);
	memcpy(&copy, h, sizeof(copy));
	copy.header_crc = 0;
	crc = cp_crc32(0, &copy, sizeof(copy));
	crc = cp_crc32(crc, pf->data + sizeof(copy), h->header_size - sizeof(copy));
	if (crc != h->header_crc)
		return bad(c, CP_ERR_CORRUPT, "header checksum mismatch (0x%08x, expected 0x%08x)", crc,
			   h->header_crc);
	crc = cp_crc32(0, pf->data + h->header_size, pf->size - h->header_size);
	if (crc != h->body_crc)
		return bad(c, CP_ERR_CORRUPT, "data checksum mismatch (0x%08x, expected 0x%08x)", crc,
			   h->body_crc);

	sec = (const void *)(pf->data + sizeof(*h));
	for (uint32_t i = 0; i < h->nsections; i++) {
		size_t at = sizeof(*h) + i * sizeof(*sec);

		if (sec[i].entsize == 0)
			return bad(c, CP_ERR_CORRUPT, "section table at 0x%zx: record size 0", at);
		if (sec[i].offset < h->header_size)
			return bad(c, CP_ERR_CORRUPT,
				   "section table at 0x%zx: section %u (0x%llx+%llu) overlaps "
				   "the header", at, sec[i].kind,
				   (unsigned long long)sec[i].offset,
				   (unsigned long long)sec[i].size);
		if (sec[i].offset > pf->size ||
		    sec[i].size > pf->size - sec[i].offset)
			return bad(c, CP_ERR_CORRUPT,
				   "section table at 0x%zx: section %u (0x%llx+%llu) outside the file",
				   at, sec[i].kind, (unsigned long long)sec[i].offset,
				   (unsigned long long)sec[i].size);
		if (sec[i].size % sec[i].entsize)
			return bad(c, CP_ERR_CORRUPT,
				   "section table at 0x%zx: size %llu not a multiple of %u", at,
				   (unsigned long long)sec[i].size, sec[i].entsize);
		for (uint32_t j = 0; j < i; j++) {
			if (sec[j].kind == sec[i].kind)
				return bad(c, CP_ERR_CORRUPT,
					   "section table at 0x%zx: section %u appears twice", at,
					   sec[i].kind);
			/* Two views of the same bytes would be two stories about them. */
			if (sec[i].size && sec[j].size &&
			    sec[i].offset < sec[j].offset + sec[j].size &&
			    sec[j].offset < sec[i].offset + sec[i].size)
				return bad(c, CP_ERR_CORRUPT,
					   "section table at 0x%zx: section %u (0x%llx+%llu) "
					   "overlaps section %u (0x%llx+%llu)", at, sec[i].kind,
					   (unsigned long long)sec[i].offset,
					   (unsigned long long)sec[i].size, sec[j].kind,
					   (unsigned long long)sec[j].offset,
					   (unsigned long long)sec[j].size);
		}
	}
	return 0;
}

/* File offset of record idx of section kind, for error messages. */
static unsigned long long rec_off(const struct cp_profile_file *pf, uint32_t kind, uint64_t idx)
{
	const struct cp_section_entry *s = find_section(pf, kind);

	return s ? (unsigned long long)(s->offset + idx * s->entsize) : 0;
}

static int check_string(struct ctx *c, struct cp_profile_file *pf, uint32_t off, uint32_t kind,
			const char *what, uint64_t idx)
{
	if (off == CP_NO_STRING || off < pf->strings_size)
		return 0;
	return bad(c, CP_ERR_CORRUPT, "%s record at 0x%llx: string reference %u beyond %zu bytes",
		   what, rec_off(pf, kind, idx), off, pf->strings_size);
}

/*
 * JOB (version 9): one record, a rank below the size when the size is
 * known, a job id that is a string.  A launcher this reader does not know
 * is shown as a number, not refused.
 */
static int load_job(struct ctx *c, struct cp_profile_file *pf)
{
	struct cp_job_rec *job;
	uint32_t n;
	int ret;

	if ((ret = load_records(c, pf, CP_SEC_JOB, "job", sizeof(*job), 0, (void **)&job, &n)))
		return ret;
	if (!job)
		return 0;
	pf->job = job;
	if (n != 1)
		return bad(c, CP_ERR_CORRUPT, "job section holds %u records, expected 1", n);
	if ((ret = check_string(c, pf, job->jobid, CP_SEC_JOB, "job", 0)))
		return ret;
	if (job->rank == CP_NO_RANK || (job->size && job->rank >= job->size))
		return bad(c, CP_ERR_CORRUPT, "job record at 0x%llx: rank %u of %u",
			   rec_off(pf, CP_SEC_JOB, 0), job->rank, job->size);
	return 0;
}

/*
 * A version 9 spread record's distribution: the inputs it names exist,
 * the lowest absent input is there exactly when some input did not enter
 * the context, and the self CPU figures are in order (the sum at least
 * the maximum, the sum of squares at least its square).  What a record of
 * 56 bytes zero-extends to has no CP_SPREAD_DIST, and is not looked at.
 */
static int check_spread_dist(struct ctx *c, struct cp_profile_file *pf,
			     const struct cp_spread_rec *r, uint32_t i)
{
	const uint32_t holders[] = {
		r->min_calls_input, r->max_calls_input, r->min_ticks_input, r->max_ticks_input,
		r->min_self_input, r->max_self_input, r->min_cpu_input, r->max_cpu_input,
	};
	unsigned __int128 sq = (unsigned __int128)r->sumsq_cpu[1] << 64 | r->sumsq_cpu[0];
	unsigned __int128 max2 = (unsigned __int128)r->max_cpu_ns * r->max_cpu_ns;
	const char *what = NULL;

	if (!(r->flags & CP_SPREAD_DIST) || !r->inputs)
		return 0;
	for (size_t k = 0; k < sizeof(holders) / sizeof(holders[0]) && !what; k++)
		if (holders[k] >= pf->ninputs)
			what = "an extreme held by an input beyond INPUTS";
	if (!what && (r->absent_input == CP_NO_INPUT) != (r->inputs == pf->ninputs))
		what = "an absent input given or missing against the inputs that entered";
	if (!what && r->absent_input != CP_NO_INPUT && r->absent_input >= pf->ninputs)
		what = "an absent input beyond INPUTS";
	if (!what && (r->min_cpu_ns > r->max_cpu_ns || r->sum_cpu_ns < r->max_cpu_ns ||
		      sq < max2))
		what = "self CPU figures out of order";
	if (!what)
		return 0;
	return bad(c, CP_ERR_CORRUPT, "spread record at 0x%llx: %s", rec_off(pf, CP_SEC_SPREAD, i),
		   what);
}

/* What `callprof merge` adds: resolved names, the inputs, per-node spreads. */
static int load_merged(struct ctx *c, struct cp_profile_file *pf)
{
	int ret;

	if ((ret = load_records(c, pf, CP_SEC_SYMBOLS, "symbol", sizeof(struct cp_symbol), 0,
				(void **)&pf->symbols, &pf->nsymbols)) ||
	    (ret = load_records_min(c, pf, CP_SEC_INPUTS, "input", CP_INPUT_MIN_SIZE,
				    sizeof(struct cp_input_rec), 0, (void **)&pf->inputs,
				    &pf->ninputs)))
		return ret;
	/* Before version 9 no input had a rank: 0 would be one. */
	if (pf->ninputs && find_section(pf, CP_SEC_INPUTS)->entsize <
			   offsetof(struct cp_input_rec, reserved))
		for (uint32_t i = 0; i < pf->ninputs; i++)
			pf->inputs[i].rank = CP_NO_RANK;
	for (uint32_t i = 0; i < pf->nsymbols; i++) {
		const struct cp_symbol *y = &pf->symbols[i];

		if ((ret = check_string(c, pf, y->file, CP_SEC_SYMBOLS, "symbol", i)))
			return ret;
		if ((y->kind != CP_SYM_FUNCTION && y->kind != CP_SYM_SITE) ||
		    (y->kind == CP_SYM_FUNCTION && !cp_profile_file__str(pf, y->name)))
			return bad(c, CP_ERR_CORRUPT, "symbol record at 0x%llx: bad kind %u or name",
				   rec_off(pf, CP_SEC_SYMBOLS, i), y->kind);
	}
	for (uint32_t i = 0; i < pf->ninputs; i++) {
		const struct cp_input_rec *in = &pf->inputs[i];

		if ((ret = check_string(c, pf, in->path, CP_SEC_INPUTS, "input", i)) ||
		    (ret = check_string(c, pf, in->exe, CP_SEC_INPUTS, "input", i)) ||
		    (ret = check_string(c, pf, in->hostname, CP_SEC_INPUTS, "input", i)))
			return ret;
	}
	if (find_section(pf, CP_SEC_SPREAD)) {
		uint32_t n;

		if ((ret = load_records_min(c, pf, CP_SEC_SPREAD, "spread", CP_SPREAD_MIN_SIZE,
					    sizeof(struct cp_spread_rec), 0, (void **)&pf->spread,
					    &n)))
			return ret;
		/* A record too short for the distribution has none, whatever its flags say. */
		if (find_section(pf, CP_SEC_SPREAD)->entsize < sizeof(struct cp_spread_rec))
			for (uint32_t i = 0; i < n; i++)
				pf->spread[i].flags &= ~(uint32_t)CP_SPREAD_DIST;
		if (n != pf->nnodes || !pf->ninputs)
			return bad(c, CP_ERR_CORRUPT,
				   "spread section: %u records for %u nodes and %u inputs", n,
				   pf->nnodes, pf->ninputs);
		for (uint32_t i = 0; i < n; i++) {
			const struct cp_spread_rec *r = &pf->spread[i];

			if (r->inputs > pf->ninputs || r->min_calls > r->max_calls ||
			    r->min_ticks > r->max_ticks || r->min_self > r->max_self)
				return bad(c, CP_ERR_CORRUPT,
					   "spread record at 0x%llx: %u inputs of %u, or a minimum "
					   "above its maximum", rec_off(pf, CP_SEC_SPREAD, i),
					   r->inputs, pf->ninputs);
			if ((ret = check_spread_dist(c, pf, r, i)))
				return ret;
		}
	}
	return 0;
}

/* Sampled addresses: each names a context's own record and has samples. */
static int load_lines(struct ctx *c, struct cp_profile_file *pf)
{
	int ret;

	if ((ret = load_records(c, pf, CP_SEC_LINES, "line", sizeof(struct cp_line_rec), 0,
				(void **)&pf->lines, &pf->nlines)))
		return ret;
	for (uint32_t i = 0; i < pf->nlines; i++) {
		const struct cp_line_rec *l = &pf->lines[i];

		if (l->node >= pf->nnodes || (pf->nodes[l->node].flags & CP_NODE_SITE) ||
		    l->samples == 0)
			return bad(c, CP_ERR_CORRUPT,
				   "line record at 0x%llx: node %u of %u, or no samples",
				   rec_off(pf, CP_SEC_LINES, i), l->node, pf->nnodes);
	}
	return 0;
}

/* Record-time selection rules (version 5): kinds this reader knows, patterns that are strings. */
static int load_filters(struct ctx *c, struct cp_profile_file *pf)
{
	int ret;

	if ((ret = load_records(c, pf, CP_SEC_FILTERS, "filter", sizeof(struct cp_filter_rec), 0,
				(void **)&pf->filters, &pf->nfilters)))
		return ret;
	for (uint32_t i = 0; i < pf->nfilters; i++) {
		const struct cp_filter_rec *f = &pf->filters[i];

		if (f->kind < CP_FILTER_INCLUDE || f->kind > CP_FILTER_START ||
		    !cp_profile_file__str(pf, f->pattern))
			return bad(c, CP_ERR_CORRUPT, "filter record at 0x%llx: kind %u or pattern unknown",
				   rec_off(pf, CP_SEC_FILTERS, i), f->kind);
	}
	return 0;
}

struct region_key {
	uint32_t id;  /* the record's id */
	uint32_t idx; /* its index in the file */
};

static int region_key_cmp(const void *a, const void *b)
{
	const struct region_key *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Region names (version 5): before the nodes, which must name one.  The
 * records are put in id order, so that a lookup is a binary search, not a
 * walk over all of them per node (quadratic for a file whose ids are not
 * 0, 1, ... in order); that sort also finds an id given twice.
 */
static int load_regions(struct ctx *c, struct cp_profile_file *pf)
{
	struct region_key *key;
	struct cp_region_rec *sorted;
	int ret;

	if ((ret = load_records(c, pf, CP_SEC_REGIONS, "region", sizeof(struct cp_region_rec), 0,
				(void **)&pf->regions, &pf->nregions)))
		return ret;
	for (uint32_t i = 0; i < pf->nregions; i++)
		if (!cp_profile_file__str(pf, pf->regions[i].name))
			return bad(c, CP_ERR_CORRUPT, "region record at 0x%llx: no name",
				   rec_off(pf, CP_SEC_REGIONS, i));
	if (pf->nregions < 2)
		return 0;
	key = malloc(pf->nregions * sizeof(*key));
	sorted = malloc(pf->nregions * sizeof(*sorted));
	if (!key || !sorted) {
		free(key);
		free(sorted);
		return bad(c, ENOMEM, "out of memory for %u region records", pf->nregions);
	}
	for (uint32_t i = 0; i < pf->nregions; i++)
		key[i] = (struct region_key){ pf->regions[i].id, i };
	qsort(key, pf->nregions, sizeof(*key), region_key_cmp);
	for (uint32_t i = 0; i < pf->nregions; i++) {
		if (i && key[i].id == key[i - 1].id) {
			ret = bad(c, CP_ERR_CORRUPT, "region record at 0x%llx: id %u given twice",
				  rec_off(pf, CP_SEC_REGIONS, key[i].idx), key[i].id);
			break;
		}
		sorted[i] = pf->regions[key[i].idx];
	}
	free(key);
	if (ret) {
		free(sorted);
		return ret;
	}
	free(pf->regions);
	pf->regions = sorted;
	return 0;
}

const char *cp_profile_file__region_name(const struct cp_profile_file *pf, uint64_t id)
{
	uint32_t lo = 0, hi = pf->nregions;

	/* Writers number regions 0, 1, ...: then record id is region id. */
	if (id < pf->nregions && pf->regions[id].id == id)
		return cp_profile_file__str(pf, pf->regions[id].name);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pf->regions[mid].id == id)
			return cp_profile_file__str(pf, pf->regions[mid].name);
		if (pf->regions[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The GNU build-id among the notes of img[off..off + len) into m. */
static void image_build_id(const uint8_t *img, uint64_t off, uint64_t len, struct cp_module *m)
{
	uint64_t p = off, end = off + len;

	while (p + sizeof(Elf64_Nhdr) <= end) {
		Elf64_Nhdr nh;
		uint64_t name, desc;

		memcpy(&nh, img + p, sizeof(nh));
		name = ((uint64_t)nh.n_namesz + 3) & ~3ull;
		desc = ((uint64_t)nh.n_descsz + 3) & ~3ull;
		if (name > end - p - sizeof(nh) || nh.n_descsz > end - p - sizeof(nh) - name)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(img + p + sizeof(nh), "GNU", 4)) {
			m->build_id_size = nh.n_descsz < sizeof(m->build_id) ? nh.n_descsz :
									       sizeof(m->build_id);
			memcpy(m->build_id, img + p + sizeof(nh) + name, m->build_id_size);
			return;
		}
		if (desc > end - p - sizeof(nh) - name)
			return;
		p += sizeof(nh) + name + desc;
	}
}

/*
 * Version 8: the modules that are no file, whose images the profile holds
 * (the vDSO).  An image whose name and load bias are a written module's
 * is that module's (callprof merge writes both); otherwise the reader
 * makes a MODULES record and MAPS records of it, from its ELF header and
 * program headers, after the written ones.  A module written with
 * CP_MODULE_IMAGE (no writer sets it) loses it.
 */
static int load_images(struct ctx *c, struct cp_profile_file *pf)
{
	const struct cp_section_entry *data = find_section(pf, CP_SEC_IMAGE_DATA);
	int ret;

	for (uint32_t i = 0; i < pf->nmodules; i++)
		pf->modules[i].flags &= ~(uint32_t)CP_MODULE_IMAGE;
	if ((ret = load_records(c, pf, CP_SEC_IMAGES, "image", sizeof(struct cp_image_rec), 0,
				(void **)&pf->images, &pf->nimages)))
		return ret;
	if (!pf->nimages)
		return 0;
	if (!data)
		return bad(c, CP_ERR_CORRUPT, "image section without image data");
	pf->image_data = pf->data + data->offset;
	pf->image_module = calloc(pf->nimages, sizeof(*pf->image_module));
	if (!pf->image_module)
		return bad(c, ENOMEM, "out of memory for %u images", pf->nimages);
	for (uint32_t i = 0; i < pf->nimages; i++) {
		const struct cp_image_rec *r = &pf->images[i];
		unsigned long long at = rec_off(pf, CP_SEC_IMAGES, i);
		const uint8_t *img = pf->image_data + r->offset;
		struct cp_module *mods, *m;
		struct cp_map *maps;
		Elf64_Ehdr eh;
		uint32_t nload = 0;

		if (!cp_profile_file__str(pf, r->name) || r->flags ||
		    r->offset > data->size || r->size > data->size - r->offset ||
		    r->size < sizeof(eh))
			return bad(c, CP_ERR_CORRUPT,
				   "image record at 0x%llx: name, flags or bytes %llu+%llu beyond %llu",
				   at, (unsigned long long)r->offset, (unsigned long long)r->size,
				   (unsigned long long)data->size);
		memcpy(&eh, img, sizeof(eh));
		if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
		    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr) ||
		    eh.e_phnum > 64 || eh.e_phoff > r->size ||
		    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > r->size - eh.e_phoff)
			return bad(c, CP_ERR_CORRUPT,
				   "image record at 0x%llx: not a 64-bit little-endian ELF image with "
				   "its program headers", at);
		for (uint32_t k = 0; k < eh.e_phnum; k++) {
			Elf64_Phdr ph;

			memcpy(&ph, img + eh.e_phoff + k * sizeof(ph), sizeof(ph));
			nload += ph.p_type == PT_LOAD;
		}
		if (!nload)
			return bad(c, CP_ERR_CORRUPT, "image record at 0x%llx: no loadable segment", at);
		/* The image of a written module (callprof merge writes both): given to it. */
		pf->image_module[i] = UINT32_MAX;
		for (uint32_t k = 0; k < pf->nmodules && pf->image_module[i] == UINT32_MAX; k++) {
			const char *a = cp_profile_file__str(pf, pf->modules[k].path);

			if (pf->modules[k].load_bias == r->load_bias && a &&
			    !strcmp(a, cp_profile_file__str(pf, r->name)) &&
			    !(pf->modules[k].flags & CP_MODULE_IMAGE))
				pf->image_module[i] = k;
		}
		if (pf->image_module[i] != UINT32_MAX) {
			pf->modules[pf->image_module[i]].flags |= CP_MODULE_IMAGE;
			continue;
		}
		mods = realloc(pf->modules, (pf->nmodules + 1) * sizeof(*mods));
		if (mods)
			pf->modules = mods;
		maps = mods ? realloc(pf->maps, (pf->nmaps + nload) * sizeof(*maps)) : NULL;
		if (!maps)
			return bad(c, ENOMEM, "out of memory for image %u", i);
		pf->maps = maps;
		m = &pf->modules[pf->nmodules];
		memset(m, 0, sizeof(*m));
		m->path = r->name;
		m->load_bias = m->loaded_at = r->load_bias;
		m->first_map = pf->nmaps;
		m->nmaps = nload;
		m->flags = CP_MODULE_IMAGE;
		for (uint32_t k = 0; k < eh.e_phnum; k++) {
			Elf64_Phdr ph;
			struct cp_map *mp = &pf->maps[pf->nmaps];

			memcpy(&ph, img + eh.e_phoff + k * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_NOTE && ph.p_offset <= r->size &&
			    ph.p_filesz <= r->size - ph.p_offset && !m->build_id_size)
				image_build_id(img, ph.p_offset, ph.p_filesz, m);
			if (ph.p_type != PT_LOAD)
				continue;
			mp->start = r->load_bias + ph.p_vaddr;
			mp->end = mp->start + ph.p_memsz;
			mp->offset = ph.p_offset;
			mp->prot = ph.p_flags;
			mp->module = pf->nmodules;
			if (mp->end < mp->start)
				return bad(c, CP_ERR_CORRUPT,
					   "image record at 0x%llx: a segment wraps around the address "
					   "space", at);
			pf->nmaps++;
		}
		pf->image_module[i] = pf->nmodules++;
	}
	return 0;
}

const void *cp_profile_file__image(const struct cp_profile_file *pf, uint32_t m, uint64_t *size)
{
	for (uint32_t i = 0; i < pf->nimages; i++)
		if (pf->image_module[i] == m) {
			*size = pf->images[i].size;
			return pf->image_data + pf->images[i].offset;
		}
	*size = 0;
	return NULL;
}

/* Validate pf->data[0..pf->size) and build the arrays: what both openers share. */
static int load(struct ctx *c, struct cp_profile_file *pf)
{
	const struct cp_section_entry *s;
	struct cp_meta *meta;
	uint32_t n;
	int ret;

	if ((ret = check_header(c, pf)))
		return ret;

	s = find_section(pf, CP_SEC_STRINGS);
	if (!s || s->size == 0)
		return bad(c, CP_ERR_CORRUPT, "no string section");
	pf->strings = (const char *)pf->data + s->offset;
	pf->strings_size = s->size;
	if (pf->strings[s->size - 1] != '\0')
		return bad(c, CP_ERR_CORRUPT, "string section at 0x%llx: not NUL-terminated",
			   (unsigned long long)s->offset);

	if ((ret = load_records_min(c, pf, CP_SEC_META, "metadata", CP_META_MIN_SIZE, sizeof(*meta), 1,
				    (void **)&meta, &n)))
		return ret;
	if (n != 1) {
		free(meta);
		return bad(c, CP_ERR_CORRUPT, "metadata section holds %u records, expected 1", n);
	}
	pf->meta = *meta;
	free(meta);
	if ((ret = check_string(c, pf, pf->meta.exe, CP_SEC_META, "metadata", 0)) ||
	    (ret = check_string(c, pf, pf->meta.hostname, CP_SEC_META, "metadata", 0)))
		return ret;
	if (pf->meta.clock != CP_CLOCK_NONE && pf->meta.ticks_per_sec == 0)
		return bad(c, CP_ERR_CORRUPT, "metadata: clock %u with zero ticks per second",
			   pf->meta.clock);

	if ((ret = load_records(c, pf, CP_SEC_MODULES, "module", sizeof(struct cp_module), 0,
				(void **)&pf->modules, &pf->nmodules)) ||
	    (ret = load_records(c, pf, CP_SEC_MAPS, "map", sizeof(struct cp_map), 0,
				(void **)&pf->maps, &pf->nmaps)) ||
	    (ret = load_records_min(c, pf, CP_SEC_THREADS, "thread", CP_THREAD_MIN_SIZE,
				    sizeof(struct cp_thread_rec), 1, (void **)&pf->threads,
				    &pf->nthreads)) ||
	    (ret = load_records_min(c, pf, CP_SEC_NODES, "node", CP_NODE_MIN_SIZE,
				    sizeof(struct cp_node_rec), 1, (void **)&pf->nodes, &pf->nnodes)))
		return ret;

	for (uint32_t i = 0; i < pf->nmodules; i++) {
		struct cp_module *m = &pf->modules[i];

		if ((ret = check_string(c, pf, m->path, CP_SEC_MODULES, "module", i)))
			return ret;
		if (m->build_id_size > sizeof(m->build_id))
			return bad(c, CP_ERR_CORRUPT, "module record at 0x%llx: build-id of %u bytes",
				   rec_off(pf, CP_SEC_MODULES, i), m->build_id_size);
		if (m->first_map > pf->nmaps || m->nmaps > pf->nmaps - m->first_map)
			return bad(c, CP_ERR_CORRUPT, "module record at 0x%llx: maps %u+%u beyond %u maps",
				   rec_off(pf, CP_SEC_MODULES, i), m->first_map, m->nmaps, pf->nmaps);
	}
	if ((ret = load_regions(c, pf)))
		return ret;
	for (uint32_t i = 0; i < pf->nmaps; i++)
		if (pf->maps[i].module >= pf->nmodules || pf->maps[i].end < pf->maps[i].start)
			return bad(c, CP_ERR_CORRUPT, "map record at 0x%llx: bad range or module",
				   rec_off(pf, CP_SEC_MAPS, i));
	if ((ret = load_images(c, pf)) || (ret = load_job(c, pf)))
		return ret;

	for (uint32_t i = 0, next = 0; i < pf->nthreads; i++) {
		struct cp_thread_rec *t = &pf->threads[i];

		if ((ret = check_string(c, pf, t->name, CP_SEC_THREADS, "thread", i)))
			return ret;
		if (t->first_node != next || t->nnodes == 0 || t->nnodes > pf->nnodes - next)
			return bad(c, CP_ERR_CORRUPT,
				   "thread record at 0x%llx: nodes %u+%u do not follow on at %u of %u",
				   rec_off(pf, CP_SEC_THREADS, i), t->first_node, t->nnodes, next,
				   pf->nnodes);
		if (t->nthreads == 0 || ((t->flags & CP_THREAD_AGGREGATE) && t->tid != 0))
			return bad(c, CP_ERR_CORRUPT, "thread record at 0x%llx: %u threads, tid %u",
				   rec_off(pf, CP_SEC_THREADS, i), t->nthreads, t->tid);
		next += t->nnodes;
		if (i == pf->nthreads - 1 && next != pf->nnodes)
			return bad(c, CP_ERR_CORRUPT, "%u nodes belong to no thread", pf->nnodes - next);
		for (uint32_t k = 0; k < t->nnodes; k++) {
			const struct cp_node_rec *nd = &pf->nodes[t->first_node + k];

			if (k == 0 ? nd->parent != CP_NO_PARENT : nd->parent >= k)
				return bad(c, CP_ERR_CORRUPT,
					   "node record at 0x%llx: parent %u is not an earlier node "
					   "of its thread", rec_off(pf, CP_SEC_NODES, t->first_node + k),
					   nd->parent);
			if ((nd->flags & ~(uint32_t)(CP_NODE_SIGNAL | CP_NODE_SITE | CP_NODE_REGION |
						      CP_NODE_EXCLUDED | CP_NODE_UNTIMED)) ||
			    ((nd->flags & CP_NODE_SIGNAL) && (k == 0 || nd->fn == 0 || nd->fn >= 4096)) ||
			    ((nd->flags & (CP_NODE_SITE | CP_NODE_EXCLUDED | CP_NODE_UNTIMED)) && k == 0) ||
			    ((nd->flags & CP_NODE_REGION) &&
			     (k == 0 || (nd->flags & CP_NODE_SIGNAL) ||
			      !cp_profile_file__region_name(pf, nd->fn))) ||
			    ((nd->flags & CP_NODE_EXCLUDED) &&
			     (nd->flags & ~(uint32_t)(CP_NODE_EXCLUDED | CP_NODE_SITE))))
				return bad(c, CP_ERR_CORRUPT,
					   "node record at 0x%llx: bad flags 0x%x for function 0x%llx",
					   rec_off(pf, CP_SEC_NODES, t->first_node + k), nd->flags,
					   (unsigned long long)nd->fn);
			if (k && (pf->nodes[t->first_node + nd->parent].flags & CP_NODE_SITE))
				return bad(c, CP_ERR_CORRUPT,
					   "node record at 0x%llx: its parent %u is a call-site record",
					   rec_off(pf, CP_SEC_NODES, t->first_node + k), nd->parent);
		}
	}
	if (pf->nthreads == 0 && pf->nnodes)
		return bad(c, CP_ERR_CORRUPT, "%u nodes belong to no thread", pf->nnodes);

	if ((ret = load_merged(c, pf)) || (ret = load_lines(c, pf)) ||
	    (ret = load_filters(c, pf)))
		return ret;

	s = find_section(pf, CP_SEC_CMDLINE);
	if (s && s->size) {
		const char *p = (const char *)pf->data + s->offset, *end = p + s->size;
		uint32_t argc = 0;

		if (end[-1] != '\0')
			return bad(c, CP_ERR_CORRUPT, "command line at 0x%llx: not NUL-terminated",
				   (unsigned long long)s->offset);
		for (const char *q = p; q < end; q += strlen(q) + 1)
			argc++;
		pf->argv = calloc(argc + 1, sizeof(*pf->argv));
		if (!pf->argv)
			return bad(c, ENOMEM, "out of memory");
		for (const char *q = p; q < end; q += strlen(q) + 1)
			pf->argv[pf->argc++] = q;
	} else {
		pf->argv = calloc(1, sizeof(*pf->argv));
		if (!pf->argv)
			return bad(c, ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * Open path's contents: read from the file (data NULL), or copied from
 * data[0..size) (cp_profile_file__open_mem).
 */
static struct cp_profile_file *open_common(const char *path, const void *data, size_t size,
					   char *err, size_t errlen, int *errp)
{
	struct cp_profile_file *pf = calloc(1, sizeof(*pf));
	struct ctx c = { path, err, errlen, 0 };
	int ret;

	if (!pf || !(pf->path = strdup(path))) {
		free(pf);
		snprintf(err, errlen, "profile '%s': out of memory", path);
		if (errp)
			*errp = -ENOMEM;
		return NULL;
	}
	if (!data) {
		ret = read_file(&c, pf);
	} else if (size > MAX_FILE_SIZE) {
		ret = bad(&c, CP_ERR_CORRUPT, "%zu bytes is too large to be a profile", size);
	} else if (!(pf->data = malloc(size ? size : 1))) {
		ret = bad(&c, ENOMEM, "out of memory copying %zu bytes", size);
	} else {
		memcpy(pf->data, data, size);
		pf->size = size;
		ret = 0;
	}
	if (!ret)
		ret = load(&c, pf);
	if (ret) {
		cp_profile_file__free(pf);
		if (errp)
			*errp = ret;
		return NULL;
	}
	if (errp)
		*errp = 0;
	return pf;
}

struct cp_profile_file *cp_profile_file__open(const char *path, char *err, size_t errlen,
					      int *errp)
{
	return open_common(path, NULL, 0, err, errlen, errp);
}

struct cp_profile_file *cp_profile_file__open_mem(const char *name, const void *data, size_t size,
						  char *err, size_t errlen, int *errp)
{
	return open_common(name, data ? data : "", size, err, errlen, errp);
}

void cp_profile_file__free(struct cp_profile_file *pf)
{
	if (!pf)
		return;
	free(pf->path);
	free(pf->data);
	free(pf->modules);
	free(pf->maps);
	free(pf->threads);
	free(pf->nodes);
	free(pf->argv);
	free(pf->symbols);
	free(pf->inputs);
	free(pf->spread);
	free(pf->lines);
	free(pf->filters);
	free(pf->regions);
	free(pf->images);
	free(pf->job);
	free(pf->image_module);
	free(pf);
}

const char *cp_profile_file__str(const struct cp_profile_file *pf, uint32_t off)
{
	if (off == CP_NO_STRING || off >= pf->strings_size)
		return NULL;
	return pf->strings + off;
}

int cp_profile_file__in_runtime(const struct cp_profile_file *pf, uint64_t ip)
{
	for (uint32_t m = 0; m < pf->nmodules; m++) {
		const struct cp_module *mod = &pf->modules[m];

		if (!(mod->flags & CP_MODULE_RUNTIME))
			continue;
		for (uint32_t k = 0; k < mod->nmaps; k++) {
			const struct cp_map *mp = &pf->maps[mod->first_map + k];

			if (ip >= mp->start && ip < mp->end)
				return 1;
		}
	}
	return 0;
}

void cp_profile_file__sample_shares(const struct cp_profile_file *pf, struct cp_sample_shares *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < pf->nlines; i++) {
		const struct cp_line_rec *l = &pf->lines[i];
		uint64_t *to = l->ip == CP_IP_KERNEL		    ? &s->kernel :
			       l->ip == CP_IP_LOST		    ? &s->lost :
			       cp_profile_file__in_runtime(pf, l->ip) ? &s->runtime :
									&s->program;

		*to = *to + l->samples < *to ? UINT64_MAX : *to + l->samples;
	}
}
