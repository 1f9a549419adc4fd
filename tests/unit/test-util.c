/*
 * test-util.c - util/: cp_find_program finds what execvp runs.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/unittest.h"
#include "util/strbuf.h"
#include "util/util.h"

/* A fresh directory holding an executable "prog" and a plain file "data". */
static void make_dir(char *dir)
{
	char *f;
	FILE *fp;

	snprintf(dir, 64, "%s", "/tmp/cp-test-util.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	f = xstrfmt("%s/prog", dir);
	fp = fopen(f, "w");
	CHECK(fp != NULL);
	fputs("#!/bin/sh\n", fp);
	fclose(fp);
	CHECK_EQ(chmod(f, 0755), 0);
	free(f);
	f = xstrfmt("%s/data", dir);
	fp = fopen(f, "w");
	CHECK(fp != NULL);
	fclose(fp);
	free(f);
}

static void remove_dir(const char *dir)
{
	char *f = xstrfmt("%s/prog", dir);

	unlink(f);
	free(f);
	f = xstrfmt("%s/data", dir);
	unlink(f);
	free(f);
	rmdir(dir);
}

TEST(find_program_empty_path_element_is_cwd)
{
	char dir[64], *got;

	make_dir(dir);
	CHECK_EQ(chdir(dir), 0);
	setenv("PATH", "/nonexistent::/also-not", 1);
	got = cp_find_program("prog");
	CHECK_STR(got, "./prog");
	free(got);
	setenv("PATH", ":/nonexistent", 1);
	got = cp_find_program("prog");
	CHECK_STR(got, "./prog");
	free(got);
	setenv("PATH", "/nonexistent:", 1);
	got = cp_find_program("prog");
	CHECK_STR(got, "./prog");
	free(got);
	remove_dir(dir);
}

TEST(find_program_skips_non_executables_and_directories)
{
	char dir[64], *path, *got, *want;

	make_dir(dir);
	path = xstrfmt("/:%s", dir); /* "/data" and "/prog" do not exist; a dir is not a program */
	setenv("PATH", path, 1);
	CHECK(cp_find_program("data") == NULL);
	got = cp_find_program("prog");
	want = xstrfmt("%s/prog", dir);
	CHECK_STR(got, want);
	free(got);
	free(want);
	setenv("PATH", "/", 1);
	CHECK(cp_find_program("tmp") == NULL);
	CHECK(cp_find_program("") == NULL);
	free(path);
	remove_dir(dir);
}

TEST(find_program_with_a_slash_is_itself)
{
	char dir[64], *p, *got;

	make_dir(dir);
	p = xstrfmt("%s/prog", dir);
	got = cp_find_program(p);
	CHECK_STR(got, p);
	free(got);
	free(p);
	p = xstrfmt("%s/nothing", dir);
	CHECK(cp_find_program(p) == NULL);
	free(p);
	remove_dir(dir);
}

TEST(find_program_without_path_uses_the_system_default)
{
	char *got;

	unsetenv("PATH");
	got = cp_find_program("sh");
	CHECK(got != NULL);
	CHECK(got && got[0] == '/');
	free(got);
}

TEST(check_eq_shows_large_unsigned_values)
{
	/* 2^63 and above must compare as themselves, not as negative numbers. */
	uint64_t big = (uint64_t)1 << 63;

	CHECK_EQ(big, (uint64_t)1 << 63);
	CHECK_LE((uint64_t)1 << 62, big);
	CHECK_LE(-1, big); /* would be false if big wrapped to INT64_MIN */
}

/* Columns for cp_columns__parse: "a".."e" are 1..5; "last" is placed by the caller. */
static int letter_lookup(const char *name, void *col, void *arg)
{
	if (!strcmp(name, "last"))
		return 1;
	if (strlen(name) != 1 || name[0] < 'a' || name[0] > 'e')
		return -1;
	*(int *)col = name[0] - 'a' + 1;
	return 0;
}

static void letter_known(struct strbuf *sb, void *arg)
{
	strbuf_addf(sb, "a to e, %s", (const char *)arg);
}

TEST(columns_parse_keeps_order_drops_repeats_and_extras)
{
	int cols[3] = { 0 };
	struct cp_columns c = { .cols = cols, .size = sizeof(cols[0]), .max = 3,
				.lookup = letter_lookup, .known = letter_known, .arg = "last" };

	CHECK_EQ(cp_columns__parse(&c, "c,a,last,c,b,a,e"), 0);
	CHECK_EQ(c.n, 3); /* e is past max */
	CHECK_EQ(cols[0], 3);
	CHECK_EQ(cols[1], 1);
	CHECK_EQ(cols[2], 2);
	CHECK_EQ(cp_columns__parse(&c, "last"), 0);
	CHECK_EQ(c.n, 0);
}

TEST(columns_parse_names_the_unknown_column_and_the_known_ones)
{
	char path[] = "/tmp/cp-columns-XXXXXX", buf[256] = "";
	int cols[3], fd = mkstemp(path);
	struct cp_columns c = { .cols = cols, .size = sizeof(cols[0]), .max = 3,
				.lookup = letter_lookup, .known = letter_known, .arg = "last" };
	FILE *fp;

	CHECK(fd >= 0);
	fflush(stderr);
	CHECK(dup2(fd, 2) == 2);
	CHECK_EQ(cp_columns__parse(&c, "a,,b"), -1);
	CHECK_EQ(cp_columns__parse(&c, "a,zz"), -1);
	fp = fopen(path, "r");
	CHECK(fp != NULL);
	CHECK(fp && fread(buf, 1, sizeof(buf) - 1, fp) > 0);
	CHECK_STR(buf, "callprof: error: unknown field '' (known: a to e, last)\n"
		       "callprof: error: unknown field 'zz' (known: a to e, last)\n");
	if (fp)
		fclose(fp);
	unlink(path);
}
