/*
 * replay.c - run a fuzz target on files, without libFuzzer.
 *
 *   fuzz-TARGET-replay FILE...
 *
 * Calls the target's LLVMFuzzerTestOneInput() once per file, as libFuzzer
 * would with a file argument, so that the inputs under tests/fuzz/regress/
 * stay tested by any compiler (make check).  Exit status 0 when every file
 * was run; a finding aborts (or a sanitizer stops the process).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf) {
				fprintf(stderr, "replay: out of memory reading '%s'\n", path);
				exit(1);
			}
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	if (ferror(f)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 129;
	}
	for (int i = 1; i < argc; i++)
		if (replay(argv[i]))
			ret = 1;
	return ret;
}
