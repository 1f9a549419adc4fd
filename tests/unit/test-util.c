/*
 * test-util.c - util/: cp_find_program finds what execvp runs; the
 * visible form of text the tool did not write (text.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/unittest.h"
#include "util/strbuf.h"
#include "util/text.h"
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

/* Each byte string and the visible form it must have. */
TEST(visible_form_escapes_what_acts_and_keeps_utf8)
{
	static const char *const cases[][2] = {
		{ "plain_name(int)", "plain_name(int)" },
		{ "", "" },
		{ "grüße", "grüße" },			/* valid UTF-8 kept */
		{ "日本::関数", "日本::関数" },
		{ "\xf0\x9f\x94\xa5" "fire", "\xf0\x9f\x94\xa5" "fire" },	/* 4-byte character kept */
		{ "t\x1b]0;pwned\x07", "t\\x1b]0;pwned\\x07" },	/* OSC 0: window title */
		{ "\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07" }, /* OSC 52: clipboard */
		{ "\x1b[2J", "\\x1b[2J" },
		{ "a\nb\rc\td", "a\\nb\\rc\\td" },
		{ "del\x7f", "del\\x7f" },
		{ "\x01\x1f", "\\x01\\x1f" },
		{ "back\\slash", "back\\\\slash" },	/* an escape cannot be forged */
		{ "\xc2\x9b" "2J", "\\u009b2J" },		/* C1 CSI as UTF-8 */
		{ "\x9b" "2J", "\\x9b2J" },			/* a lone C1 byte */
		{ "\xc2\x85", "\\u0085" },			/* NEL */
		{ "\xe2\x80\xa8", "\\u2028" },		/* line separator */
		{ "\xe2\x80\xae" "abc", "\\u202eabc" },	/* right-to-left override */
		{ "\xe2\x81\xa6", "\\u2066" },		/* isolate */
		{ "\xff\xfe", "\\xff\\xfe" },		/* not UTF-8 */
		{ "\xc3", "\\xc3" },				/* truncated */
		{ "\xc3(", "\\xc3(" },
		{ "\xc0\xaf", "\\xc0\\xaf" },		/* overlong */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* beyond U+10FFFF */
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *in = cases[i][0], *want = cases[i][1];

		CHECK_STR(cp_visible(in), want);
		CHECK_EQ(cp_visible_differs(in, strlen(in)), strcmp(in, want) != 0);
		strbuf_reset(&sb);
		strbuf_add_visible(&sb, in, strlen(in));
		CHECK_STR(sb.buf, want);
	}
	/* a name holding NUL bytes (a length, not a string) */
	strbuf_reset(&sb);
	strbuf_add_visible(&sb, "a\0b", 3);
	CHECK_STR(sb.buf, "a\\x00b");
	strbuf_release(&sb);
	CHECK_STR(cp_visible(NULL), "(null)");
}

/* Every byte string of up to 3 bytes: the visible form is printable ASCII or valid UTF-8 that acts on nothing. */
TEST(visible_form_of_any_bytes_is_one_inert_line)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char in[3];

	for (uint32_t v = 0; v < 1u << 24; v += 7) {
		size_t len = 1 + v % 3;

		in[0] = (unsigned char)(v >> 16), in[1] = (unsigned char)(v >> 8), in[2] = (unsigned char)v;
		strbuf_reset(&sb);
		strbuf_add_visible(&sb, (const char *)in, len);
		for (size_t i = 0; i < sb.len;) {
			uint32_t cp;
			size_t n = cp_utf8_char(sb.buf + i, sb.len - i, &cp);

			CHECK(n > 0);
			CHECK(!cp_char_acts(cp));
			i += n;
		}
	}
	strbuf_release(&sb);
}

/* The slots of cp_visible: one printf may hold that many escaped names. */
TEST(visible_slots_last_as_many_calls)
{
	const char *v[CP_VISIBLE_SLOTS];
	char name[32];

	for (int i = 0; i < CP_VISIBLE_SLOTS; i++) {
		snprintf(name, sizeof(name), "n%d\x1b", i);
		v[i] = cp_visible(name);
	}
	for (int i = 0; i < CP_VISIBLE_SLOTS; i++) {
		snprintf(name, sizeof(name), "n%d\\x1b", i);
		CHECK_STR(v[i], name);
	}
}
