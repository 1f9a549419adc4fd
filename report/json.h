/*
 * json.h - a streaming JSON writer for the exporters, over yajl's generator
 * (Debian's libyajl): nothing is built in memory, so a million-node tree
 * costs no more than its output.  Every call after an error does nothing;
 * cp_json__finish() says whether all went well.
 */
#ifndef CP_REPORT_JSON_H
#define CP_REPORT_JSON_H

#include <stdint.h>
#include <stdio.h>

struct cp_json;

enum cp_json_flags {
	CP_JSON_PRETTY = 1 << 0, /* indented, one value per line */
	/*
	 * For a <script> element of an HTML page: every '<' (only strings can
	 * hold one) is written \u003c, so no string, say a function named
	 * operator</, can end the element or open a comment ("</", "<!--");
	 * and every string is in its visible form (util/text.h), as the text
	 * views show names.
	 */
	CP_JSON_HTML = 1 << 1,
};

/* A writer to fp; flags: enum cp_json_flags. */
struct cp_json *cp_json__new(FILE *fp, unsigned flags);
/* Free the writer: 0 if every value was written, -1 otherwise (reported). */
int cp_json__finish(struct cp_json *j);

void cp_json__obj(struct cp_json *j);
void cp_json__end_obj(struct cp_json *j);
void cp_json__arr(struct cp_json *j);
void cp_json__end_arr(struct cp_json *j);
/* An object key; the value follows. */
void cp_json__key(struct cp_json *j, const char *key);
/* A string (a byte that is not UTF-8 becomes the text \xNN); NULL writes null. */
void cp_json__str(struct cp_json *j, const char *s);
void cp_json__u64(struct cp_json *j, uint64_t v);
void cp_json__i64(struct cp_json *j, int64_t v);
void cp_json__dbl(struct cp_json *j, double v);
void cp_json__bool(struct cp_json *j, int v);
void cp_json__null(struct cp_json *j);
/* A key and its value. */
void cp_json__key_str(struct cp_json *j, const char *key, const char *s);
void cp_json__key_u64(struct cp_json *j, const char *key, uint64_t v);
/* An address as a string "0x..." (JSON numbers lose 64-bit precision in JavaScript). */
void cp_json__hex(struct cp_json *j, uint64_t v);

#endif /* CP_REPORT_JSON_H */
