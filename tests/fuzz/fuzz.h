/*
 * fuzz.h - what the fuzz targets share (tests/fuzz/fuzz-*.c).
 *
 * Each target is a libFuzzer entry point, LLVMFuzzerTestOneInput(); the
 * same source is linked with libFuzzer (make fuzz, clang) and with
 * replay.c's main() (make tests, any compiler), which replays files.
 * docs/internals/fuzzing.md says how to run them.
 */
#ifndef CP_TESTS_FUZZ_FUZZ_H
#define CP_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cp_profile_file;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The input as a profile: a copy of data[0..size) opened with
 * cp_profile_file__open_mem(), or NULL when the reader refused it (after
 * checking that it said why in one line).  When the input starts like a
 * profile header, the copy gets the header's file size and both checksums
 * set to what they should be, so that mutations reach the checks behind
 * them instead of all failing the checksum.
 */
struct cp_profile_file *cp_fuzz__open(const uint8_t *data, size_t size);

/* A stream that swallows what the views and exporters write (/dev/null). */
FILE *cp_fuzz__sink(void);

/* Abort with a message when cond is false: a finding, for the fuzzer. */
#define CP_FUZZ_CHECK(cond) \
	do { \
		if (!(cond)) \
			cp_fuzz__fail(__FILE__, __LINE__, #cond); \
	} while (0)
void cp_fuzz__fail(const char *file, int line, const char *what) __attribute__((noreturn));

#endif /* CP_TESTS_FUZZ_FUZZ_H */
