/* SPDX-License-Identifier: GPL-3.0-or-later */
/* YAML into a small tree with libyaml's event parser, refusing what a manifest never needs
 * (aliases, tags) and anything beyond the limits, so hostile input costs little. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "grove/manifest.h"
#include "manifest_yaml.h"

#include "banned.h" /* last */

struct grove_ynode *
grove_ynode_free(struct grove_ynode *n)
{
	if (!n)
		return NULL;
	/* Iterative over the last kid would save stack, but depth is capped at
	 * GROVE_MANIFEST_MAX_DEPTH, so recursion is bounded. */
	for (size_t i = 0; i < n->n; i++)
		grove_ynode_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
	return NULL;
}

static int
add_kid(struct grove_ynode *parent, struct grove_ynode *kid)
{
	if (parent->n == parent->cap) {
		size_t ncap = parent->cap ? parent->cap * 2 : 4;
		struct grove_ynode **nk = realloc(parent->kids, ncap * sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		parent->kids = nk;
		parent->cap = ncap;
	}
	parent->kids[parent->n++] = kid;
	return 0;
}

struct key_ref {
	const char *s;
	size_t i;
};

static int
key_cmp(const void *pa, const void *pb)
{
	const struct key_ref *a = pa, *b = pb;
	int c = strcmp(a->s, b->s);

	if (c)
		return c;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The first key (in document order) that repeats an earlier one, or NULL.
 * Sorting keeps this O(n log n) for a hostile mapping with many keys. */
static const struct grove_ynode *
duplicate_key(const struct grove_ynode *map, int *ret_r)
{
	size_t nk = map->n / 2;
	struct key_ref *refs;
	const struct grove_ynode *dup = NULL;

	*ret_r = 0;
	if (nk < 2)
		return NULL;
	refs = calloc(nk, sizeof(*refs));
	if (!refs) {
		*ret_r = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < nk; i++) {
		refs[i].s = map->kids[2 * i]->str;
		refs[i].i = i;
	}
	qsort(refs, nk, sizeof(*refs), key_cmp);
	for (size_t i = 1; i < nk; i++) {
		if (strcmp(refs[i - 1].s, refs[i].s) == 0) {
			const struct grove_ynode *k = map->kids[2 * refs[i].i];

			if (!dup || k->line < dup->line ||
			    (k->line == dup->line && k->col < dup->col))
				dup = k;
		}
	}
	free(refs);
	return dup;
}

static int
yerr(struct grove_error *err, const char *file, size_t line0, size_t col0, const char *fmt,
     const char *a)
{
	char what[512];

	snprintf(what, sizeof(what), fmt, a ? a : "");
	return grove_error_set(err, -GROVE_E_CONFIG, "%s:%zu:%zu: %s", file, line0 + 1, col0 + 1,
			       what);
}

/* Line and column (0-based, the column in characters as libyaml counts them) of
 * byte OFF of BUF. */
static void
offset_position(const char *buf, size_t len, size_t off, size_t *ret_line, size_t *ret_col)
{
	size_t line = 0, col = 0;

	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n')
			line++, col = 0;
		else if ((c & 0xC0) != 0x80)
			col++;
	}
	*ret_line = line;
	*ret_col = col;
}

/* The loader's state: the open collections, innermost last. */
struct yload {
	const char *file;
	struct grove_error *err;
	struct grove_ynode *stack[GROVE_MANIFEST_MAX_DEPTH + 1];
	struct grove_ynode *root;
	size_t depth, nodes;
};

/* libyaml's parse error, as "FILE:LINE:COL: syntax error: ...". */
static int
parse_error(const yaml_parser_t *parser, const char *buf, size_t len, const char *file,
	    struct grove_error *err)
{
	char what[512];
	size_t eline = parser->problem_mark.line;
	size_t ecol = parser->problem_mark.column;

	if (parser->error == YAML_MEMORY_ERROR)
		return grove_error_set(err, -ENOMEM, "out of memory");
	snprintf(what, sizeof(what), "syntax error: %s%s%s",
		 parser->problem ? parser->problem : "invalid YAML", parser->context ? " " : "",
		 parser->context ? parser->context : "");
	/* libyaml's reader (bad encoding) leaves problem_mark at zero and gives a byte offset
	 * instead. */
	if (parser->error == YAML_READER_ERROR)
		offset_position(buf, len, parser->problem_offset, &eline, &ecol);
	return yerr(err, file, eline, ecol, "%s", what);
}

/* A scalar's node, or a NUL inside it refused ("\0" escapes in double quotes make one). */
static int
new_scalar(const yaml_event_t *ev, struct grove_ynode *n, struct yload *y)
{
	n->kind = GROVE_Y_SCALAR;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->str = malloc(ev->data.scalar.length + 1);
	if (!n->str)
		return grove_error_set(y->err, -ENOMEM, "out of memory");
	memcpy(n->str, ev->data.scalar.value, ev->data.scalar.length);
	n->str[ev->data.scalar.length] = '\0';
	if (strlen(n->str) != ev->data.scalar.length)
		return yerr(y->err, y->file, ev->start_mark.line, ev->start_mark.column,
			    "NUL byte in a string%s", NULL);
	return 0;
}

/* A scalar, or the start of a list or mapping: a new node in its parent (or the root). */
static int
start_node(const yaml_event_t *ev, struct yload *y)
{
	size_t line = ev->start_mark.line, col = ev->start_mark.column;
	const unsigned char *tag = ev->type == YAML_SCALAR_EVENT ? ev->data.scalar.tag
				   : ev->type == YAML_SEQUENCE_START_EVENT
					   ? ev->data.sequence_start.tag
					   : ev->data.mapping_start.tag;
	struct grove_ynode *parent = y->depth ? y->stack[y->depth - 1] : NULL;
	struct grove_ynode *n;
	int r;

	/* libyaml reports "!" for a non-specific quoted tag on some inputs; anything explicit is
	 * refused. */
	if (tag)
		return yerr(y->err, y->file, line, col, "tags are not supported ('%s')",
			    (const char *)tag);
	if (++y->nodes > GROVE_MANIFEST_MAX_NODES)
		return yerr(y->err, y->file, line, col, "more than %s values in the file",
			    "100000");
	if (parent && parent->kind == GROVE_Y_MAP && parent->n % 2 == 0 &&
	    ev->type != YAML_SCALAR_EVENT)
		return yerr(y->err, y->file, line, col, "a key must be a string, not a %s",
			    ev->type == YAML_SEQUENCE_START_EVENT ? "list" : "mapping");
	n = calloc(1, sizeof(*n));
	if (!n)
		return grove_error_set(y->err, -ENOMEM, "out of memory");
	n->line = (unsigned)line + 1;
	n->col = (unsigned)col + 1;
	if (ev->type == YAML_SCALAR_EVENT) {
		r = new_scalar(ev, n, y);
		if (r < 0) {
			grove_ynode_free(n);
			return r;
		}
	} else {
		n->kind = ev->type == YAML_SEQUENCE_START_EVENT ? GROVE_Y_SEQ : GROVE_Y_MAP;
	}
	if (!parent) {
		y->root = n;
	} else if (add_kid(parent, n) < 0) {
		grove_ynode_free(n);
		return grove_error_set(y->err, -ENOMEM, "out of memory");
	}
	if (n->kind != GROVE_Y_SCALAR) {
		if (y->depth >= GROVE_MANIFEST_MAX_DEPTH)
			return yerr(y->err, y->file, line, col, "nested deeper than %s levels",
				    "32");
		y->stack[y->depth++] = n;
	}
	return 0;
}

/* The end of a list or mapping: a mapping's keys must differ. */
static int
end_node(struct yload *y)
{
	struct grove_ynode *top = y->stack[--y->depth];
	const struct grove_ynode *dup;
	int r = 0;

	if (!top || top->kind != GROVE_Y_MAP)
		return 0;
	dup = duplicate_key(top, &r);
	if (r < 0)
		return grove_error_set(y->err, r, "out of memory");
	if (dup)
		return yerr(y->err, y->file, dup->line - 1, dup->col - 1, "duplicate key '%s'",
			    dup->str);
	return 0;
}

/* One event of the stream; *done at its end. */
static int
load_event(const yaml_event_t *ev, struct yload *y, int *docs, bool *done)
{
	size_t line = ev->start_mark.line, col = ev->start_mark.column;

	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		*done = true;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1)
			return yerr(y->err, y->file, line, col,
				    "more than one YAML document in the file%s", NULL);
		return 0;
	case YAML_ALIAS_EVENT:
		return yerr(y->err, y->file, line, col,
			    "aliases are not supported (*%s): write the value out",
			    (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return start_node(ev, y);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return end_node(y);
	default:
		return 0;
	}
}

int
grove_yaml_load(const char *buf, size_t len, const char *file, struct grove_ynode **ret,
		struct grove_error *err)
{
	struct yload y = { .file = file, .err = err };
	yaml_parser_t parser;
	yaml_event_t ev;
	int docs = 0, r = 0;
	bool done = false;

	if (len > GROVE_MANIFEST_MAX_BYTES)
		return grove_error_set(err, -GROVE_E_CONFIG, "%s: larger than %d bytes", file,
				       GROVE_MANIFEST_MAX_BYTES);
	if (memchr(buf, '\0', len)) {
		const char *z = memchr(buf, '\0', len);
		size_t line = 0, col = 0;

		for (const char *p = buf; p < z; p++, col++)
			if (*p == '\n')
				line++, col = (size_t)-1;
		return yerr(err, file, line, col, "NUL byte in the file%s", NULL);
	}
	if (!yaml_parser_initialize(&parser))
		return grove_error_set(err, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && r == 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			r = parse_error(&parser, buf, len, file, err);
			break;
		}
		r = load_event(&ev, &y, &docs, &done);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (r < 0) {
		grove_ynode_free(y.root);
		return r;
	}
	*ret = y.root;
	return 0;
}
