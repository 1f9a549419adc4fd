/*
 * json.c - the exporters' JSON writer: yajl's generator, printing straight
 * to a FILE.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "report/json.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/util.h"

struct cp_json {
	yajl_gen g;
	FILE *fp;
	int err;
	int html;	   /* CP_JSON_HTML: '<' written as \u003c */
	struct strbuf fix; /* a string with its bad bytes replaced */
};

static void print(void *ctx, const char *s, size_t len)
{
	struct cp_json *j = ctx;
	const char *lt;

	/* Outside strings JSON has no '<', so replacing every one is safe. */
	while (j->html && (lt = memchr(s, '<', len))) {
		size_t n = (size_t)(lt - s);

		if (fwrite(s, 1, n, j->fp) != n || fputs("\\u003c", j->fp) == EOF)
			j->err = 1;
		s = lt + 1;
		len -= n + 1;
	}
	if (fwrite(s, 1, len, j->fp) != len)
		j->err = 1;
}

struct cp_json *cp_json__new(FILE *fp, unsigned flags)
{
	struct cp_json *j = xcalloc(1, sizeof(*j));

	j->fp = fp;
	j->html = !!(flags & CP_JSON_HTML);
	strbuf_init(&j->fix, 0);
	j->g = yajl_gen_alloc(NULL);
	if (!j->g)
		cp_die("out of memory");
	yajl_gen_config(j->g, yajl_gen_print_callback, print, j);
	yajl_gen_config(j->g, yajl_gen_beautify, !!(flags & CP_JSON_PRETTY));
	yajl_gen_config(j->g, yajl_gen_indent_string, " ");
	return j;
}

int cp_json__finish(struct cp_json *j)
{
	int err = j->err;

	if (!err)
		print(j, "\n", 1);
	err |= j->err;
	if (err)
		cp_error("cannot write the JSON output");
	yajl_gen_free(j->g);
	strbuf_release(&j->fix);
	free(j);
	return err ? -1 : 0;
}

static void check(struct cp_json *j, yajl_gen_status st)
{
	if (st != yajl_gen_status_ok && !j->err) {
		j->err = 1;
		cp_error("JSON output: generator state %d", (int)st);
	}
}

void cp_json__obj(struct cp_json *j)
{
	if (!j->err)
		check(j, yajl_gen_map_open(j->g));
}

void cp_json__end_obj(struct cp_json *j)
{
	if (!j->err)
		check(j, yajl_gen_map_close(j->g));
}

void cp_json__arr(struct cp_json *j)
{
	if (!j->err)
		check(j, yajl_gen_array_open(j->g));
}

void cp_json__end_arr(struct cp_json *j)
{
	if (!j->err)
		check(j, yajl_gen_array_close(j->g));
}

/*
 * A string.  JSON holds any character, escaped by yajl where it must be
 * (controls, '"', '\\'), so a name that is UTF-8 is written exactly; a
 * byte that is not (a name from a hostile or odd binary) has no JSON form
 * and is written as the text \xNN, as every text output of callprof shows
 * it (util/text.h), rather than U+FFFD, which would make two names one.
 * For the HTML report (CP_JSON_HTML) every string is in its visible form:
 * the page shows names as report does, with nothing that acts (a
 * bidirectional override would reorder what the browser draws after it).
 */
void cp_json__str(struct cp_json *j, const char *s)
{
	size_t n, i, len;
	uint32_t cp;

	if (j->err)
		return;
	if (!s) {
		check(j, yajl_gen_null(j->g));
		return;
	}
	n = strlen(s);
	if (j->html) {
		/* The HTML report is a view: its strings show as report shows them. */
		strbuf_reset(&j->fix);
		strbuf_add_visible(&j->fix, s, n);
		check(j, yajl_gen_string(j->g, (const unsigned char *)j->fix.buf, j->fix.len));
		return;
	}
	for (i = 0; i < n && (len = cp_utf8_char(s + i, n - i, &cp)); i += len)
		;
	if (i < n) {
		strbuf_reset(&j->fix);
		for (i = 0; i < n; i += len ? len : 1) {
			len = cp_utf8_char(s + i, n - i, &cp);
			if (len)
				strbuf_add(&j->fix, s + i, len);
			else
				strbuf_addf(&j->fix, "\\x%02x", (unsigned char)s[i]);
		}
		s = j->fix.buf;
		n = j->fix.len;
	}
	check(j, yajl_gen_string(j->g, (const unsigned char *)s, n));
}

void cp_json__key(struct cp_json *j, const char *key)
{
	cp_json__str(j, key);
}

void cp_json__u64(struct cp_json *j, uint64_t v)
{
	char buf[32];

	if (j->err)
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	check(j, yajl_gen_number(j->g, buf, strlen(buf)));
}

void cp_json__i64(struct cp_json *j, int64_t v)
{
	char buf[32];

	if (j->err)
		return;
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	check(j, yajl_gen_number(j->g, buf, strlen(buf)));
}

void cp_json__dbl(struct cp_json *j, double v)
{
	char buf[64];

	if (j->err)
		return;
	/* Shortest that reads back the same; JSON has no NaN or infinity. */
	if (v != v || v > 1e308 || v < -1e308) {
		check(j, yajl_gen_null(j->g));
		return;
	}
	snprintf(buf, sizeof(buf), "%.17g", v);
	for (int prec = 1; prec < 17; prec++) {
		char shorter[64];

		snprintf(shorter, sizeof(shorter), "%.*g", prec, v);
		if (strtod(shorter, NULL) == v) {
			memcpy(buf, shorter, sizeof(shorter));
			break;
		}
	}
	check(j, yajl_gen_number(j->g, buf, strlen(buf)));
}

void cp_json__bool(struct cp_json *j, int v)
{
	if (!j->err)
		check(j, yajl_gen_bool(j->g, v));
}

void cp_json__null(struct cp_json *j)
{
	if (!j->err)
		check(j, yajl_gen_null(j->g));
}

void cp_json__hex(struct cp_json *j, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	cp_json__str(j, buf);
}

void cp_json__key_str(struct cp_json *j, const char *key, const char *s)
{
	cp_json__key(j, key);
	cp_json__str(j, s);
}

void cp_json__key_u64(struct cp_json *j, const char *key, uint64_t v)
{
	cp_json__key(j, key);
	cp_json__u64(j, v);
}
