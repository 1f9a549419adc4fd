/*
 * text.c - UTF-8 decoding and the visible form of text the tool did not
 * write; see text.h.
 */
#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/text.h"

size_t cp_utf8_char(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c, min;
	size_t n;

	if (!len)
		return 0;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		n = 2, c = u[0] & 0x1f, min = 0x80;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		n = 3, c = u[0] & 0x0f, min = 0x800;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		n = 4, c = u[0] & 0x07, min = 0x10000;
	} else {
		return 0; /* a continuation byte, or a lead byte no character has */
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

int cp_char_acts(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c /* arabic letter mark */ ||
	       cp == 0x200e || cp == 0x200f ||	     /* left-to-right, right-to-left marks */
	       (cp >= 0x2028 && cp <= 0x202e) ||    /* line, paragraph separators; embeddings */
	       (cp >= 0x2066 && cp <= 0x2069);	     /* isolates */
}

int cp_visible_differs(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		const unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		size_t n;

		/* Most names are plain ASCII. */
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			i++;
			continue;
		}
		n = cp_utf8_char(s + i, len - i, &cp);
		if (!n || cp == '\\' || cp_char_acts(cp))
			return 1;
		i += n;
	}
	return 0;
}

/* The visible form of s (len bytes), in pieces to put(arg, piece, its length). */
static void visible(const char *s, size_t len, void (*put)(void *, const char *, size_t), void *arg)
{
	char esc[16];

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = cp_utf8_char(s + i, len - i, &cp), k = 0;

		if (!n) {
			snprintf(esc, sizeof(esc), "\\x%02x", (unsigned char)s[i]);
			put(arg, esc, 4);
			i++;
			continue;
		}
		/* The longest run that shows as it is, in one piece. */
		while (i + k < len && n && cp != '\\' && !cp_char_acts(cp)) {
			k += n;
			n = cp_utf8_char(s + i + k, len - i - k, &cp);
		}
		if (k) {
			put(arg, s + i, k);
			i += k;
			continue;
		}
		if (cp == '\\' || cp == '\n' || cp == '\r' || cp == '\t')
			snprintf(esc, sizeof(esc), "\\%c",
				 cp == '\\' ? '\\' : cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
		else if (cp < 0x80)
			snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
		put(arg, esc, strlen(esc));
		i += n;
	}
}

static void put_strbuf(void *sb, const char *s, size_t len)
{
	strbuf_add(sb, s, len);
}

static void put_file(void *fp, const char *s, size_t len)
{
	fwrite(s, 1, len, fp);
}

void strbuf_add_visible(struct strbuf *sb, const char *s, size_t len)
{
	visible(s, len, put_strbuf, sb);
}

void cp_fput_visible(FILE *fp, const char *s, size_t len)
{
	visible(s, len, put_file, fp);
}

const char *cp_visible(const char *s)
{
	static __thread struct strbuf slot[CP_VISIBLE_SLOTS];
	static __thread unsigned next;
	struct strbuf *sb;
	size_t len;

	if (!s)
		return "(null)";
	len = strlen(s);
	if (!cp_visible_differs(s, len))
		return s;
	sb = &slot[next++ % CP_VISIBLE_SLOTS];
	if (!sb->buf)
		strbuf_init(sb, 0);
	strbuf_reset(sb);
	strbuf_add_visible(sb, s, len);
	return sb->buf;
}

const char *cp_visible_arg(const char *s)
{
	static __thread struct strbuf slot[CP_VISIBLE_SLOTS];
	static __thread unsigned next;
	const char *v = cp_visible(s);
	struct strbuf *sb;

	if (*v && !strpbrk(v, " '\"$`;&|<>(){}*?[]#~"))
		return v;
	sb = &slot[next++ % CP_VISIBLE_SLOTS];
	if (!sb->buf)
		strbuf_init(sb, 0);
	strbuf_reset(sb);
	strbuf_addch(sb, '\'');
	for (; *v; v++)
		if (*v == '\'')
			strbuf_add(sb, "'\\''", 4);
		else
			strbuf_addch(sb, *v);
	strbuf_addch(sb, '\'');
	return sb->buf;
}
