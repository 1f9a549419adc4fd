/*
 * fuzz.c - input preparation and sinks shared by the fuzz targets.
 */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "tests/fuzz/fuzz.h"

/* Set the header's file size and checksums to match buf (see fuzz.h). */
static void fix_header(uint8_t *buf, size_t size)
{
	struct cp_file_header h;

	if (size < sizeof(h) || memcmp(buf, CP_MAGIC, CP_MAGIC_LEN))
		return;
	memcpy(&h, buf, sizeof(h));
	h.file_size = size;
	h.header_crc = 0;
	if (h.header_size >= sizeof(h) && h.header_size <= size)
		h.body_crc = cp_crc32(0, buf + h.header_size, size - h.header_size);
	memcpy(buf, &h, sizeof(h));
	if (h.header_size >= sizeof(h) && h.header_size <= size) {
		h.header_crc = cp_crc32(0, buf, h.header_size);
		memcpy(buf, &h, sizeof(h));
	}
}

struct cp_profile_file *cp_fuzz__open(const uint8_t *data, size_t size)
{
	struct cp_profile_file *pf;
	uint8_t *buf = malloc(size ? size : 1);
	char err[1024] = "";
	int code = 0;

	CP_FUZZ_CHECK(buf != NULL);
	memcpy(buf, data, size);
	fix_header(buf, size);
	pf = cp_profile_file__open_mem("fuzz", buf, size, err, sizeof(err), &code);
	free(buf);
	if (pf) {
		CP_FUZZ_CHECK(code == 0);
		return pf;
	}
	/* A refusal names the input, says why in one line, and has a code. */
	CP_FUZZ_CHECK(code < 0);
	CP_FUZZ_CHECK(!strncmp(err, "profile 'fuzz': ", 16) && err[16]);
	CP_FUZZ_CHECK(!strchr(err, '\n'));
	CP_FUZZ_CHECK(cp_strerror(code) != NULL);
	return NULL;
}

FILE *cp_fuzz__sink(void)
{
	static FILE *fp;

	if (!fp)
		fp = fopen("/dev/null", "w");
	CP_FUZZ_CHECK(fp != NULL);
	return fp;
}

void cp_fuzz__fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}
