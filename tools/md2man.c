/*
 * md2man.c - docs/callprof-*.1.md to man(7) pages, at build time, with
 * nothing but a C compiler: `make` runs it, `make install` installs what it
 * made, so `man callprof-report` works on every machine that built callprof
 * (pandoc, which would do this too, is no build dependency).
 *
 *   md2man PAGE.1.md OUT.1
 *
 * It reads the part of pandoc's markdown the man pages use, and nothing
 * more; anything else stays text:
 *
 *   % NAME(SECTION) FOOTER | HEADER     the title line (.TH)
 *   # SECTION, ## Subsection            .SH, .SS
 *   paragraphs                          filled text (.PP)
 *   ```  fenced  ```, 4-space indented   verbatim (.nf)
 *   - item, N. item (nested by indent)  .IP lists, nested with .RS/.RE
 *   TERM then ":   definition"          .TP definition lists, whose body is
 *                                        indented 4 and may hold paragraphs,
 *                                        lists and verbatim blocks
 *   **bold**, *italic*, `code`, \X      fonts, and X taken literally
 *
 * A list (or a verbatim block) begins after a blank line or below a list
 * item, as in pandoc: "20. See" wrapped at the start of a line stays text.
 * Exit status 0, or 1 with one line naming the file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s) {
			fprintf(stderr, "md2man: out of memory\n");
			exit(1);
		}
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_ch(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/* The input, one entry a line (no newline). */
static char **lines;
static size_t nlines;

static int indent_of(const char *l)
{
	int n = 0;

	while (l[n] == ' ')
		n++;
	return n;
}

static int blank(const char *l)
{
	return !l[indent_of(l)];
}

/* A list marker at l (after its indent): its width ("- " 2, "12. " 4), or 0. */
static int list_marker(const char *l, int *ordered)
{
	int i = 0;

	if ((l[0] == '-' || l[0] == '*' || l[0] == '+') && l[1] == ' ') {
		*ordered = 0;
		return 2;
	}
	while (isdigit((unsigned char)l[i]))
		i++;
	if (i && i < 10 && l[i] == '.' && l[i + 1] == ' ') {
		*ordered = 1;
		return i + 2;
	}
	return 0;
}

/* ---- inline text ---- */

static struct buf out;

/*
 * Text made safe for roff: backslashes, minus signs, a leading dot or
 * quote.  In filled text (fill), a comma inside a word may break the line
 * after it: lists of columns are longer than a line.
 */
static void put_escaped(struct buf *b, const char *s, size_t n, int *bol, int fill)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (fill && c == ',' && i + 1 < n && s[i + 1] != ' ' && s[i + 1] != '\n') {
			buf_str(b, ",\\:");
			*bol = 0;
			continue;
		}
		if (*bol && (c == '.' || c == '\''))
			buf_str(b, "\\&");
		*bol = c == '\n';
		if (c == '\\')
			buf_str(b, "\\e");
		else if (c == '-')
			buf_str(b, "\\-");
		else
			buf_ch(b, c);
	}
}

/* Fonts: a stack, so that `code` inside **bold** comes back to bold. */
static char fonts[16] = "R";
static int nfonts = 1;

static void font_push(struct buf *b, char f)
{
	if (nfonts < (int)sizeof(fonts))
		fonts[nfonts++] = f;
	buf_str(b, "\\f");
	buf_ch(b, f);
}

static void font_pop(struct buf *b)
{
	if (nfonts > 1)
		nfonts--;
	buf_str(b, "\\f");
	buf_ch(b, fonts[nfonts - 1]);
}

/* Whether s[i] (a '*') closes an emphasis opened before: no blank before it. */
static int closes(const char *s, size_t i)
{
	return i > 0 && s[i - 1] != ' ' && s[i - 1] != '\n';
}

/* Whether the emphasis of n stars opening at s[i] is closed later in s. */
static int has_closer(const char *s, size_t i, int n)
{
	for (size_t k = i + (size_t)n; s[k]; k++) {
		if (s[k] == '\\' && s[k + 1]) {
			k++;
			continue;
		}
		if (s[k] == '`') {
			const char *e = strchr(s + k + 1, '`');

			if (!e)
				return 0;
			k = (size_t)(e - s);
			continue;
		}
		if (s[k] == '*' && closes(s, k) &&
		    (n == 2 ? s[k + 1] == '*' : s[k + 1] != '*'))
			return 1;
	}
	return 0;
}

/* One paragraph's text (lines joined by '\n') with its markdown made roff. */
static void put_inline(struct buf *b, const char *s)
{
	int bol = 1, bold = 0, italic = 0;

	nfonts = 1;
	for (size_t i = 0; s[i];) {
		if (s[i] == '\\' && s[i + 1] && ispunct((unsigned char)s[i + 1])) {
			put_escaped(b, s + i + 1, 1, &bol, 1);
			i += 2;
		} else if (s[i] == '`') {
			const char *e = strchr(s + i + 1, '`');

			if (!e) {
				put_escaped(b, s + i, 1, &bol, 1);
				i++;
				continue;
			}
			font_push(b, 'B');
			put_escaped(b, s + i + 1, (size_t)(e - s - (long)i - 1), &bol, 1);
			font_pop(b);
			i = (size_t)(e - s) + 1;
		} else if (s[i] == '*' && s[i + 1] == '*' && (bold ? closes(s, i) :
				s[i + 2] && s[i + 2] != ' ' && has_closer(s, i, 2))) {
			if (bold)
				font_pop(b);
			else
				font_push(b, 'B');
			bold = !bold;
			i += 2;
		} else if (s[i] == '*' && (italic ? closes(s, i) :
				s[i + 1] && s[i + 1] != ' ' && has_closer(s, i, 1))) {
			if (italic)
				font_pop(b);
			else
				font_push(b, 'I');
			italic = !italic;
			i++;
		} else {
			put_escaped(b, s + i, 1, &bol, 1);
			i++;
		}
	}
	if (nfonts > 1)
		buf_str(b, "\\fR");
	if (b->len && b->s[b->len - 1] != '\n')
		buf_ch(b, '\n');
}

/* Verbatim lines: no fill, nothing of markdown, roff's own characters escaped. */
static void put_verbatim_line(struct buf *b, const char *l)
{
	int bol = 1;

	put_escaped(b, l, strlen(l), &bol, 0);
	buf_ch(b, '\n');
}

/* ---- blocks ---- */

enum kind { LIST, DEF };

/* The containers the current line is inside, outermost first. */
struct container {
	enum kind kind;
	int marker; /* indent of the list marker or of ':' */
	int body;   /* indent of the item's text */
};

static struct container stack[32];
static int depth;

static void pop_to(int n)
{
	while (depth > n) {
		depth--;
		if (depth > 0)
			buf_str(&out, ".RE\n");
	}
}

static void push(enum kind kind, int marker, int body)
{
	if (depth > 0)
		buf_str(&out, ".RS\n");
	if (depth < (int)(sizeof(stack) / sizeof(stack[0])))
		stack[depth++] = (struct container){ kind, marker, body };
}

/* The body indent of the innermost container (0 at top level). */
static int body_indent(void)
{
	return depth ? stack[depth - 1].body : 0;
}

/* Close the containers a line indented ind is no longer inside. */
static void leave_for(int ind)
{
	int n = depth;

	while (n > 0 && ind < stack[n - 1].body)
		n--;
	pop_to(n);
}

static void title(const char *l)
{
	/* "% NAME(1) FOOTER | HEADER" */
	const char *p = l + 1, *open, *close, *bar;
	struct buf name = { 0 }, footer = { 0 }, header = { 0 };
	char sec[16] = "1";

	while (*p == ' ')
		p++;
	open = strchr(p, '(');
	close = open ? strchr(open, ')') : NULL;
	if (!open || !close || close - open > 10) {
		buf_str(&out, ".TH \"");
		buf_str(&out, p);
		buf_str(&out, "\" \"1\"\n");
		return;
	}
	buf_add(&name, p, (size_t)(open - p));
	memcpy(sec, open + 1, (size_t)(close - open - 1));
	sec[close - open - 1] = '\0';
	p = close + 1;
	while (*p == ' ')
		p++;
	bar = strchr(p, '|');
	buf_add(&footer, p, bar ? (size_t)(bar - p) : strlen(p));
	while (footer.len && footer.s[footer.len - 1] == ' ')
		footer.s[--footer.len] = '\0';
	if (bar) {
		bar++;
		while (*bar == ' ')
			bar++;
		buf_str(&header, bar);
	}
	buf_str(&out, ".TH \"");
	buf_str(&out, name.s ? name.s : "");
	buf_str(&out, "\" \"");
	buf_str(&out, sec);
	buf_str(&out, "\" \"\" \"");
	buf_str(&out, footer.s ? footer.s : "");
	buf_str(&out, "\" \"");
	buf_str(&out, header.s ? header.s : "");
	buf_str(&out, "\"\n");
	/* Options and paths read better whole: no hyphenation, ragged right. */
	buf_str(&out, ".nh\n.ad l\n");
	free(name.s);
	free(footer.s);
	free(header.s);
}

/*
 * The paragraph starting at line i, with lines indented at least ind
 * (the first may be indented less: its marker was cut off by the caller,
 * who passes it as first): joined into text, up to a blank line, a
 * heading, a fence, a list item or a definition.  Returns the next line.
 */
static size_t gather(size_t i, const char *first, int ind, struct buf *text)
{
	/* Only inside a list item does an item begin without a blank line. */
	int items = depth && stack[depth - 1].kind == LIST;

	buf_str(text, first);
	for (i++; i < nlines; i++) {
		const char *l = lines[i];
		int in = indent_of(l), ord;

		if (blank(l) || l[0] == '#' || !strncmp(l + in, "```", 3) ||
		    !strncmp(l + in, ":   ", 4) || in < ind || (items && list_marker(l + in, &ord)))
			break;
		buf_ch(text, '\n');
		buf_str(text, l + in);
	}
	return i;
}

static int convert(void)
{
	int after_blank = 1;

	for (size_t i = 0; i < nlines;) {
		const char *l = lines[i];
		int in = indent_of(l), width, ord;
		struct buf text = { 0 };

		if (blank(l)) {
			after_blank = 1;
			i++;
			continue;
		}
		if (l[0] == '%' && i == 0) {
			title(l);
			i++;
			continue;
		}
		if (l[0] == '#') {
			int level = 0;

			while (l[level] == '#')
				level++;
			pop_to(0);
			buf_str(&out, level == 1 ? ".SH " : ".SS ");
			put_inline(&out, l + level + (l[level] == ' '));
			after_blank = 0;
			i++;
			continue;
		}
		/* A definition's or a list item's first line belongs to its body. */
		width = list_marker(l + in, &ord);
		leave_for(!strncmp(l + in, ":   ", 4) ? in + 4 : width ? in + width : in);
		if (!strncmp(l + in, "```", 3)) {
			int base = in;

			buf_str(&out, depth ? ".IP\n.nf\n" : ".PP\n.nf\n");
			buf_str(&out, ".RS 4\n");
			for (i++; i < nlines && strncmp(lines[i] + indent_of(lines[i]), "```", 3); i++) {
				const char *v = lines[i];
				int vi = indent_of(v);

				put_verbatim_line(&out, v + (vi < base ? vi : base));
			}
			buf_str(&out, ".RE\n.fi\n");
			i++;
			after_blank = 0;
			continue;
		}
		if (after_blank && in >= body_indent() + 4) {
			/* An indented verbatim block, to the next line indented less. */
			int base = body_indent() + 4;

			buf_str(&out, depth ? ".IP\n.nf\n" : ".PP\n.nf\n");
			buf_str(&out, ".RS 4\n");
			while (i < nlines) {
				size_t k = i;

				/* Blank lines inside it belong to it when more of it follows. */
				while (k < nlines && blank(lines[k]))
					k++;
				if (k == nlines || indent_of(lines[k]) < base)
					break;
				for (; i < k; i++)
					buf_ch(&out, '\n');
				put_verbatim_line(&out, lines[i] + base);
				i++;
			}
			buf_str(&out, ".RE\n.fi\n");
			after_blank = 0;
			continue;
		}
		if (!strncmp(l + in, ":   ", 4)) {
			/* A definition of the term given before it (already out as .TP's tag). */
			i = gather(i, l + in + 4, in + 4, &text);
			put_inline(&out, text.s);
			free(text.s);
			after_blank = 0;
			continue;
		}
		if (width && (after_blank || (depth && stack[depth - 1].kind == LIST))) {
			char mark[16];

			list_marker(l + in, &ord);
			/* A sibling of the innermost list item, or a list nested below it. */
			if (!(depth && stack[depth - 1].kind == LIST && stack[depth - 1].marker == in))
				push(LIST, in, in + width);
			else
				stack[depth - 1].body = in + width;
			if (ord)
				snprintf(mark, sizeof(mark), "%.*s", width - 1, l + in);
			buf_str(&out, ".IP ");
			buf_str(&out, ord ? mark : "\\(bu");
			buf_str(&out, ord ? " 4\n" : " 2\n");
			i = gather(i, l + in + width, in + width, &text);
			put_inline(&out, text.s);
			free(text.s);
			after_blank = 0;
			continue;
		}
		if (i + 1 < nlines && !strncmp(lines[i + 1] + indent_of(lines[i + 1]), ":   ", 4)) {
			/* A term: the definition's body is indented 4 past its ':'. */
			int mi = indent_of(lines[i + 1]);

			if (!(depth && stack[depth - 1].kind == DEF && stack[depth - 1].marker == mi))
				push(DEF, mi, mi + 4);
			buf_str(&out, ".TP\n");
			put_inline(&out, l + in);
			after_blank = 0;
			i++;
			continue;
		}
		/* A paragraph, or the next paragraph of an item's body. */
		buf_str(&out, depth ? ".IP\n" : ".PP\n");
		i = gather(i, l + in, in, &text);
		put_inline(&out, text.s);
		free(text.s);
		after_blank = 0;
	}
	pop_to(0);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *in, *o;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;

	if (argc != 3) {
		fprintf(stderr, "usage: md2man PAGE.md OUT\n");
		return 129;
	}
	in = fopen(argv[1], "r");
	if (!in) {
		fprintf(stderr, "md2man: cannot open '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	while ((got = getline(&line, &cap, in)) >= 0) {
		while (got && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		for (char *t = line; (t = strchr(t, '\t'));)
			*t = ' '; /* the pages use spaces; a tab counts as one */
		lines = realloc(lines, (nlines + 1) * sizeof(*lines));
		if (!lines || !(lines[nlines] = strdup(line))) {
			fprintf(stderr, "md2man: out of memory\n");
			return 1;
		}
		nlines++;
	}
	if (ferror(in)) {
		fprintf(stderr, "md2man: cannot read '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	fclose(in);
	free(line);
	buf_str(&out, ".\\\" Made by tools/md2man from ");
	buf_str(&out, strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1]);
	buf_str(&out, "; edit that file instead.\n");
	convert();
	o = fopen(argv[2], "w");
	if (!o || fwrite(out.s, 1, out.len, o) != out.len || fclose(o)) {
		fprintf(stderr, "md2man: cannot write '%s': %s\n", argv[2], strerror(errno));
		remove(argv[2]);
		return 1;
	}
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	free(out.s);
	return 0;
}
