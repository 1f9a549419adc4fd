/*
 * test-util.c - util/: cp_find_program finds what execvp runs; cp_x86__decode
 * measures the instructions of prologues and epilogues; the visible form of
 * text the tool did not write (text.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/unittest.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"
#include "util/x86.h"

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

/* One instruction: its bytes, length and flow, at address 0x1000. */
struct insn_case {
	const char *what;
	unsigned char b[15];
	unsigned len;
	enum cp_x86_flow flow;
	uint64_t where; /* target or slot, when the instruction has one */
};

TEST(x86_decode_measures_prologue_and_epilogue_instructions)
{
	static const struct insn_case c[] = {
		{ "push %r14", { 0x41, 0x56 }, 2, CP_X86_NEXT, 0 },
		{ "push %rbx", { 0x53 }, 1, CP_X86_NEXT, 0 },
		{ "lea -0x8(%rip),%rbx", { 0x48, 0x8d, 0x1d, 0xf8, 0xff, 0xff, 0xff }, 7, CP_X86_NEXT, 0 },
		{ "mov 0x8(%rsp),%rsi", { 0x48, 0x8b, 0x74, 0x24, 0x08 }, 5, CP_X86_NEXT, 0 },
		{ "sub $0x18,%rsp", { 0x48, 0x83, 0xec, 0x18 }, 4, CP_X86_NEXT, 0 },
		{ "sub $0x1000,%rsp", { 0x48, 0x81, 0xec, 0x00, 0x10, 0, 0 }, 7, CP_X86_NEXT, 0 },
		{ "mov %fs:0x28,%rax", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, CP_X86_NEXT, 0 },
		{ "movabs $imm64,%rdi", { 0x48, 0xbf, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, CP_X86_NEXT, 0 },
		{ "mov $imm32,%edi", { 0xbf, 1, 2, 3, 4 }, 5, CP_X86_NEXT, 0 },
		{ "movw $imm16,(%rax)", { 0x66, 0xc7, 0x00, 1, 2 }, 5, CP_X86_NEXT, 0 },
		{ "lock addq $0x1,(%rax,%rbx,1)", { 0xf0, 0x48, 0x83, 0x04, 0x18, 0x01 }, 6, CP_X86_NEXT, 0 },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, CP_X86_NEXT, 0 },
		{ "nopw %cs:0x0(%rax,%rax,1)", { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10,
		  CP_X86_NEXT, 0 },
		{ "movaps %xmm6,0x10(%rsp)", { 0x0f, 0x29, 0x74, 0x24, 0x10 }, 5, CP_X86_NEXT, 0 },
		{ "pshufd $0x0,%xmm0,%xmm1", { 0x66, 0x0f, 0x70, 0xc8, 0x00 }, 5, CP_X86_NEXT, 0 },
		{ "test $0x1,%al (f6 /0 ib)", { 0xf6, 0xc0, 0x01 }, 3, CP_X86_NEXT, 0 },
		{ "not %eax (f7 /2)", { 0xf7, 0xd0 }, 2, CP_X86_NEXT, 0 },
		{ "call rel32", { 0xe8, 0xfb, 0xff, 0xff, 0xff }, 5, CP_X86_CALL, 0x1000 },
		{ "jmp rel32", { 0xe9, 0x10, 0, 0, 0 }, 5, CP_X86_JMP, 0x1015 },
		{ "jmp rel8", { 0xeb, 0xfe }, 2, CP_X86_JMP, 0x1000 },
		{ "bnd jmp *0x2f92(%rip)", { 0xf2, 0xff, 0x25, 0x92, 0x2f, 0, 0 }, 7, CP_X86_JMP, 0x3f99 },
		{ "call *0x10(%rip)", { 0xff, 0x15, 0x10, 0, 0, 0 }, 6, CP_X86_CALL, 0x1016 },
		{ "call *%rax", { 0xff, 0xd0 }, 2, CP_X86_CALL, 0 },
		{ "jne rel32", { 0x0f, 0x85, 0, 1, 0, 0 }, 6, CP_X86_JCC, 0x1106 },
		{ "je rel8", { 0x74, 0x02 }, 2, CP_X86_JCC, 0x1004 },
		{ "ret", { 0xc3 }, 1, CP_X86_RET, 0 },
		{ "leave", { 0xc9 }, 1, CP_X86_NEXT, 0 },
		{ "syscall", { 0x0f, 0x05 }, 2, CP_X86_SYSCALL, 0 },
		{ "ud2", { 0x0f, 0x0b }, 2, CP_X86_STOP, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cp_x86_insn in;
		unsigned len = cp_x86__decode(c[i].b, sizeof(c[i].b), 0x1000, &in);

		if (len != c[i].len || in.flow != c[i].flow)
			cp_test__fail(__FILE__, __LINE__, "%s: length %u flow %d, want %u and %d",
				      c[i].what, len, (int)in.flow, c[i].len, (int)c[i].flow);
		if (c[i].where && (in.has_target ? in.target : in.slot) != c[i].where)
			cp_test__fail(__FILE__, __LINE__, "%s: target %#" PRIx64 ", want %#" PRIx64,
				      c[i].what, in.has_target ? in.target : in.slot, c[i].where);
	}
}

TEST(x86_decode_refuses_what_it_does_not_know_or_cannot_read_whole)
{
	static const unsigned char vex[] = { 0xc5, 0xf8, 0x77 }, evex[] = { 0x62, 0xf1, 0x7c, 0x48,
										 0x10, 0x00 };
	static const unsigned char cut[] = { 0x48, 0x8b, 0x74, 0x24 }, prefixes[15] = {
		0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66
	};
	struct cp_x86_insn in;

	CHECK_EQ(cp_x86__decode(vex, sizeof(vex), 0, &in), 0);	 /* vzeroupper */
	CHECK_EQ(cp_x86__decode(evex, sizeof(evex), 0, &in), 0); /* vmovups (EVEX) */
	CHECK_EQ(cp_x86__decode(cut, sizeof(cut), 0, &in), 0);	 /* mov 0x8(%rsp),%rsi, cut short */
	CHECK_EQ(cp_x86__decode(prefixes, sizeof(prefixes), 0, &in), 0);
	CHECK_EQ(cp_x86__decode(cut, 0, 0, &in), 0);
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
