/* SPDX-License-Identifier: GPL-3.0-or-later */
/* JSON output, the one place documents are built (jansson) and printed (schema: docs/json.md).
 * Every string goes in through put_str/put_strv, which keep a name that is not UTF-8 lossless
 * (docs/json.md, "Names that are not UTF-8"): the document stays valid UTF-8. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "front.h"
#include "grove/error.h"

#include "../banned.h" /* last */

/* The length of the valid UTF-8 sequence at s (1 for ASCII), or 0 when the byte at s is not part
 * of one: a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned int cp;

	if (*s < 0x80)
		return 1;
	if (*s < 0xc2 || *s > 0xf4)
		return 0;
	n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : 2;
	cp = *s & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool
is_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

static const char hexdig[] = "0123456789abcdef";

/* The shown form of s, which is not UTF-8: each byte outside valid UTF-8 as \xHH, each backslash
 * as \\, the rest as it is (malloc'd; NULL when out of memory). */
static char *
shown(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1);
	size_t w = 0;

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);

		if (*p == '\\') {
			out[w++] = '\\';
			out[w++] = '\\';
			p++;
		} else if (n) {
			memcpy(out + w, p, n);
			w += n;
			p += n;
		} else {
			out[w++] = '\\';
			out[w++] = 'x';
			out[w++] = hexdig[*p >> 4];
			out[w++] = hexdig[*p & 15];
			p++;
		}
	}
	out[w] = '\0';
	return out;
}

/* Every byte of s in hex, two lowercase digits each (malloc'd). */
static char *
hex_of(const char *s)
{
	size_t len = strlen(s);
	char *out = malloc(len * 2 + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hexdig[(unsigned char)s[i] >> 4];
		out[2 * i + 1] = hexdig[(unsigned char)s[i] & 15];
	}
	out[2 * len] = '\0';
	return out;
}

/* A JSON string of s, which is UTF-8 (a shown form, hex), taken. */
static json_t *
take_string(char *s)
{
	json_t *v = s ? json_string_nocheck(s) : NULL;

	free(s);
	return v;
}

/* A name as a JSON string: itself when it is UTF-8 (utf8 says whether: jansson need not check
 * again), else its shown form. */
static json_t *
name_value(const char *s, bool utf8)
{
	if (!s)
		return json_null();
	if (utf8)
		return json_string_nocheck(s);
	return take_string(shown(s));
}

/* KEY with "_hex" after it, for the sibling field of a name that is not UTF-8. */
static void
put_hex_sibling(json_t *o, const char *key, json_t *value)
{
	char *k = NULL;

	if (asprintf(&k, "%s_hex", key) < 0)
		k = NULL;
	if (k)
		json_object_set_new(o, k, value);
	else
		json_decref(value);
	free(k);
}

/* ---- building ---- */

/* Whether this run printed a document: main prints the error document only when none was. */
static bool doc_printed;

struct json_t *
grove_json_doc(const char *command)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "grove", json_integer(GROVE_JSON_VERSION));
	grove_json_put_str(doc, "command", command);
	return doc;
}

struct json_t *
grove_json_obj(void)
{
	return json_object();
}

struct json_t *
grove_json_list(void)
{
	return json_array();
}

void
grove_json_put(struct json_t *o, const char *key, struct json_t *value)
{
	json_object_set_new(o, key, value);
}

void
grove_json_append(struct json_t *list, struct json_t *value)
{
	json_array_append_new(list, value);
}

void
grove_json_append_int(struct json_t *list, long long v)
{
	json_array_append_new(list, json_integer(v));
}

void
grove_json_put_str(struct json_t *o, const char *key, const char *s)
{
	bool utf8 = !s || is_utf8(s);

	json_object_set_new(o, key, name_value(s, utf8));
	if (!utf8)
		put_hex_sibling(o, key, take_string(hex_of(s)));
}

void
grove_json_put_int(struct json_t *o, const char *key, long long v)
{
	json_object_set_new(o, key, json_integer(v));
}

void
grove_json_put_bool(struct json_t *o, const char *key, bool v)
{
	json_object_set_new(o, key, json_boolean(v));
}

void
grove_json_put_null(struct json_t *o, const char *key)
{
	json_object_set_new(o, key, json_null());
}

void
grove_json_put_time(struct json_t *o, const char *key, double unix_time)
{
	time_t secs = (time_t)unix_time;
	struct tm tm;
	char buf[32];

	if (!gmtime_r(&secs, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		grove_json_put_null(o, key);
	else
		grove_json_put_str(o, key, buf);
}

void
grove_json_put_strv(struct json_t *o, const char *key, char *const *v, size_t n)
{
	json_t *list = json_array();
	json_t *hex = NULL;

	for (size_t i = 0; i < n; i++) {
		bool utf8 = !v[i] || is_utf8(v[i]);

		json_array_append_new(list, name_value(v[i], utf8));
		if (!utf8 && !hex) {
			hex = json_array();
			for (size_t k = 0; k < i; k++)
				json_array_append_new(hex, json_null());
		}
		if (hex)
			json_array_append_new(hex, utf8 ? json_null() : take_string(hex_of(v[i])));
	}
	json_object_set_new(o, key, list);
	if (hex)
		put_hex_sibling(o, key, hex);
}

struct json_t *
grove_json_op(const struct grove_op *op)
{
	json_t *o = json_object();

	grove_json_put_str(o, "op", grove_op_kind_name(op->kind));
	grove_json_put_str(o, "path", op->path);
	grove_json_put_str(o, "text", op->text);
	grove_json_put_str(o, "old_text", op->old_text);
	grove_json_put_str(o, "package", op->package);
	/* Only on a recorded op (docs/json.md): readers comparing op objects whole keep working. */
	if (op->recorded)
		grove_json_put_bool(o, "recorded", true);
	return o;
}

void
grove_json_put_ops(struct json_t *o, const char *key, const struct grove_plan *plan)
{
	json_t *list = json_array();

	grove_plan_foreach_op (plan, op)
		json_array_append_new(list, grove_json_op(op));
	json_object_set_new(o, key, list);
}

struct json_t *
grove_json_conflict(const struct grove_conflict *c, const char *hint, unsigned line)
{
	json_t *o = json_object();

	grove_json_put_str(o, "action", c->action);
	grove_json_put_str(o, "package", c->package);
	grove_json_put_str(o, "path", c->path);
	grove_json_put_str(o, "message", c->message);
	grove_json_put_str(o, "hint", hint);
	if (line)
		grove_json_put_int(o, "line", line);
	return o;
}

/* ---- printing ---- */

char *
grove_json_text(const struct json_t *doc)
{
	/* jansson keeps the order fields were added in; its default separators are ", " and ": ",
	 * and it writes UTF-8 as it is (every string put here is UTF-8: put_str). */
	return doc ? json_dumps(doc, 0) : NULL;
}

void
grove_json_print(struct json_t *doc)
{
	char *text = grove_json_text(doc);

	doc_printed = true;
	if (text)
		puts(text);
	else
		fputs("grove: out of memory printing the JSON document\n", stderr);
	free(text);
	json_decref(doc);
}

void
grove_json_free(struct json_t *doc)
{
	json_decref(doc);
}

/* ---- streaming ---- */

/* The open objects and lists of the document being streamed, innermost last: each one's kind
 * and how many members it has printed (for the ", " before the next). No document nests deeper
 * than 4 (log -v: the document, "transactions", one transaction, its "changes"). */
#define STREAM_DEPTH 8
struct frame {
	char close; /* '}' or ']' */
	size_t n;
};
static struct frame frames[STREAM_DEPTH];
static size_t depth;

/* Prints v. Into a buffer kept for the next value, then written at once: jansson's json_dumpf
 * makes an fwrite of every token, a fifth of a 200,000-op plan's printing. */
static void
dump(const json_t *v, size_t flags)
{
	static char *buf;
	static size_t cap;
	size_t n = v ? json_dumpb(v, buf, cap, flags | JSON_ENCODE_ANY) : 0;

	if (n > cap) {
		char *bigger = realloc(buf, n * 2);

		if (bigger) {
			buf = bigger;
			cap = n * 2;
			n = json_dumpb(v, buf, cap, flags | JSON_ENCODE_ANY);
		}
	}
	if (!n || n > cap)
		fputs("null", stdout);
	else
		(void)fwrite(buf, 1, n, stdout);
}

/* The ", " before a member of the innermost frame, and the key when it is an object's. */
static void
member(const char *key)
{
	json_t *k;

	if (!depth)
		return;
	if (frames[depth - 1].n++)
		fputs(", ", stdout);
	if (frames[depth - 1].close == ']')
		return;
	k = json_string(key);
	dump(k, 0);
	json_decref(k);
	fputs(": ", stdout);
}

static void
push(char open, char close, size_t n)
{
	fputc(open, stdout);
	if (depth < STREAM_DEPTH)
		frames[depth++] = (struct frame){ .close = close, .n = n };
}

/* Opens an object with head's fields (taken) in it, as the innermost frame. */
static void
push_object(json_t *head)
{
	push('{', '}', head ? json_object_size(head) : 0);
	if (head && json_object_size(head))
		dump(head, JSON_EMBED);
	json_decref(head);
}

void
grove_json_stream_begin(struct json_t *head)
{
	doc_printed = true;
	depth = 0;
	push_object(head);
}

void
grove_json_stream_object(const char *key, struct json_t *head)
{
	member(key);
	push_object(head);
}

void
grove_json_stream_list(const char *key)
{
	member(key);
	push('[', ']', 0);
}

void
grove_json_stream_put(const char *key, struct json_t *value)
{
	member(key);
	dump(value, 0);
	json_decref(value);
}

void
grove_json_stream_end(void)
{
	if (!depth)
		return;
	fputc(frames[--depth].close, stdout);
	if (!depth)
		fputc('\n', stdout);
}

void
grove_json_stream_fields(struct json_t *fields)
{
	for (void *it = json_object_iter(fields); it; it = json_object_iter_next(fields, it))
		grove_json_stream_put(json_object_iter_key(it),
				      json_incref(json_object_iter_value(it)));
	json_decref(fields);
}

void
grove_json_stream_ops(const char *key, const struct grove_plan *plan)
{
	/* One at a time: a plan of a million ops is not also a million JSON objects. */
	grove_json_stream_list(key);
	grove_plan_foreach_op (plan, op)
		grove_json_stream_put(NULL, grove_json_op(op));
	grove_json_stream_end();
}

void
grove_json_print_plan(struct json_t *head, const struct grove_plan *plan, const char *stow_path)
{
	json_t *tail = json_object();
	json_t *conflicts = json_array();

	grove_json_stream_begin(head);
	grove_json_stream_ops("ops", plan);
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		const struct grove_conflict *c = &plan->conflicts[i];
		char buf[512];

		json_array_append_new(
			conflicts,
			grove_json_conflict(c, grove_conflict_hint(c, stow_path, buf, sizeof(buf)),
					    0));
	}
	json_object_set_new(tail, "conflicts", conflicts);
	grove_json_put_strv(tail, "warnings", plan->warnings, plan->n_warnings);
	grove_json_stream_fields(tail);
	grove_json_stream_end();
}

bool
grove_json_printed(void)
{
	return doc_printed;
}

/* The name of an error code: grove's own, or the errno's symbolic name. */
static const char *
code_name(int code)
{
	static const char *const names[] = {
		[GROVE_E_CONFLICT - GROVE_E_BASE] = "conflict",
		[GROVE_E_USAGE - GROVE_E_BASE] = "usage",
		[GROVE_E_PRECONDITION - GROVE_E_BASE] = "precondition",
		[GROVE_E_ESCAPE - GROVE_E_BASE] = "escape",
		[GROVE_E_BADINPUT - GROVE_E_BASE] = "bad-input",
		[GROVE_E_PARTIAL - GROVE_E_BASE] = "partial",
		[GROVE_E_STUCK - GROVE_E_BASE] = "stuck",
		[GROVE_E_CONFIG - GROVE_E_BASE] = "config",
		[GROVE_E_UNSUPPORTED - GROVE_E_BASE] = "unsupported",
		[GROVE_E_INTERNAL - GROVE_E_BASE] = "internal",
		[GROVE_E_NOT_DURABLE - GROVE_E_BASE] = "not-durable",
		[GROVE_E_NOPACKAGE - GROVE_E_BASE] = "no-package",
	};
	int c = -code;

	if (c > GROVE_E_BASE && c - GROVE_E_BASE < (int)(sizeof(names) / sizeof(names[0])))
		return names[c - GROVE_E_BASE];
	if (c > 0 && c < GROVE_E_BASE)
		return strerrorname_np(c);
	return NULL;
}

void
grove_json_error_doc(const char *command, int status, int code, const char *message,
		     const char *path)
{
	json_t *doc = grove_json_doc(command);
	json_t *error = json_object();

	grove_json_put_int(doc, "exit", status);
	grove_json_put_str(error, "code", code_name(code));
	grove_json_put_str(error, "message", message && *message ? message : NULL);
	grove_json_put_str(error, "path", path && *path ? path : NULL);
	grove_json_put(doc, "error", error);
	grove_json_print(doc);
}
