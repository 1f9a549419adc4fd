/*
 * strbuf.h - growable NUL-terminated string buffer (tool side, dies on OOM).
 *
 * buf is always a valid C string; len excludes the NUL.  A buffer set up
 * with STRBUF_INIT owns nothing until the first append.  strbuf_detach()
 * hands the memory to the caller and leaves the buffer empty.
 */
#ifndef CP_UTIL_STRBUF_H
#define CP_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc; /* bytes allocated, 0 when buf is the shared empty string */
	size_t len;   /* bytes used, without the NUL */
	char *buf;    /* the string */
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_setlen(struct strbuf *sb, size_t len);

#endif /* CP_UTIL_STRBUF_H */
