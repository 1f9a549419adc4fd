/*
 * gendata.c - the input the bzip2 workload compresses: deterministic
 * pseudo-text, so every machine and every run compresses the same bytes.
 *
 *	gendata BYTES
 *
 * Writes BYTES bytes to stdout: lines of words drawn with a skewed
 * distribution from a made-up vocabulary, plus a number per line; text
 * compresses about as well (3.7:1 with bzip2) and sorts about as hard as
 * a log file, which random bytes (incompressible) or one repeated phrase
 * (bzip2's degenerate case) would not.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NWORDS 4096

static uint32_t seed = 2463534242u;

static uint32_t next_rand(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

int main(int argc, char **argv)
{
	static char words[NWORDS][12];
	static const uint32_t ranks[] = { 32, 512, NWORDS };
	long long left = argc > 1 ? strtoll(argv[1], NULL, 10) : 0;
	char line[256];

	if (argc != 2 || left <= 0) {
		fprintf(stderr, "usage: gendata BYTES\n");
		return 129;
	}
	for (int i = 0; i < NWORDS; i++) {
		int len = 2 + next_rand() % 9;

		for (int k = 0; k < len; k++)
			words[i][k] = (char)('a' + next_rand() % 26);
		words[i][len] = '\0';
	}
	while (left > 0) {
		int n = 0, nw = 3 + next_rand() % 12;

		for (int k = 0; k < nw; k++) {
			uint32_t r = ranks[next_rand() % 3];

			n += snprintf(line + n, sizeof(line) - n, "%s ", words[next_rand() % r]);
		}
		n += snprintf(line + n, sizeof(line) - n, "%u\n", next_rand() % 100000);
		if (n > left)
			n = (int)left;
		if (fwrite(line, 1, (size_t)n, stdout) != (size_t)n) {
			perror("gendata: write");
			return 1;
		}
		left -= n;
	}
	if (fflush(stdout)) {
		perror("gendata: write");
		return 1;
	}
	return 0;
}
