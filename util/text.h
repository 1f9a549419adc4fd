/*
 * text.h - text the tool did not write: a symbol name from the profiled
 * binary, a path, an argument, a thread or module name, a source line.
 * All of it is hostile input that may hold any bytes, and each way out of
 * the tool has its rule for it (docs/internals/output.md):
 *
 * - a terminal or a line-oriented text (report, diff, merge, record and
 *   attach summaries, every message): the visible form below, one place
 *   for all of them;
 * - the exports: their formats' own escaping, on the decoder below.
 */
#ifndef CP_UTIL_TEXT_H
#define CP_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct strbuf;

/*
 * The UTF-8 character at s (len > 0 bytes): its length (1 to 4) with its
 * code point in *cp, or 0 when s starts no valid character (a stray
 * continuation byte, a truncated sequence, an overlong form, a surrogate,
 * beyond U+10FFFF; a lone C1 byte 0x80-0x9f is one of these).  A NUL byte
 * is the character U+0000.
 */
size_t cp_utf8_char(const char *s, size_t len, uint32_t *cp);

/*
 * Whether code point cp acts on a terminal instead of showing: the C0
 * controls, DEL, the C1 controls (U+0080-U+009F: U+009B is a CSI to a
 * UTF-8 terminal), the line and paragraph separators and the
 * bidirectional formatting characters (which reorder what follows them).
 */
int cp_char_acts(uint32_t cp);

/*
 * The visible form of s (len bytes): valid UTF-8 kept but for the
 * characters that act (cp_char_acts), which become \n, \r, \t, \xNN
 * (the other C0 controls and DEL) or \uXXXX (C1 and the others); a byte
 * that starts no valid character becomes \xNN; a backslash \\, so that
 * no escape can be forged either.  One line, whatever s holds, and nothing in it that a
 * terminal acts on.
 */
void strbuf_add_visible(struct strbuf *sb, const char *s, size_t len);

/* The same written to fp; allocates nothing (the messages of cp_die use it). */
void cp_fput_visible(FILE *fp, const char *s, size_t len);

/* Whether the visible form of s (len bytes) differs from s. */
int cp_visible_differs(const char *s, size_t len);

#define CP_VISIBLE_SLOTS 8
/*
 * The visible form of the string s ("(null)" for NULL): s itself when it
 * needs nothing, else a copy in one of CP_VISIBLE_SLOTS buffers used in
 * turn (per thread), valid until as many more calls: one printf may take
 * up to that many.  For the text views, the summaries and the messages'
 * callers that print without cp_error (which escapes the whole message).
 */
const char *cp_visible(const char *s);

/*
 * A command's argument as a command line shows it: its visible form,
 * single-quoted as sh would need it when it is empty or holds a blank
 * or a character sh treats apart (so that "a b" reads as one argument).
 * The same slots' rule as cp_visible.
 */
const char *cp_visible_arg(const char *s);

#endif /* CP_UTIL_TEXT_H */
