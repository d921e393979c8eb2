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

int
grove_yaml_load(const char *buf, size_t len, const char *file, struct grove_ynode **ret,
		struct grove_error *err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct grove_ynode *stack[GROVE_MANIFEST_MAX_DEPTH + 1];
	struct grove_ynode *root = NULL;
	size_t depth = 0, nodes = 0;
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
	while (!done) {
		struct grove_ynode *n = NULL;
		size_t line, col;

		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR) {
				r = grove_error_set(err, -ENOMEM, "out of memory");
			} else {
				char what[512];

				snprintf(what, sizeof(what), "syntax error: %s%s%s",
					 parser.problem ? parser.problem : "invalid YAML",
					 parser.context ? " " : "",
					 parser.context ? parser.context : "");
				size_t eline = parser.problem_mark.line;
				size_t ecol = parser.problem_mark.column;

				/* libyaml's reader (bad encoding) leaves problem_mark at
				 * zero and gives a byte offset instead. */
				if (parser.error == YAML_READER_ERROR)
					offset_position(buf, len, parser.problem_offset, &eline,
							&ecol);
				r = yerr(err, file, eline, ecol, "%s", what);
			}
			goto fail;
		}
		line = ev.start_mark.line;
		col = ev.start_mark.column;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				r = yerr(err, file, line, col,
					 "more than one YAML document in the file%s", NULL);
				goto fail_ev;
			}
			break;
		case YAML_ALIAS_EVENT:
			r = yerr(err, file, line, col,
				 "aliases are not supported (*%s): write the value out",
				 (const char *)ev.data.alias.anchor);
			goto fail_ev;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: {
			const unsigned char *tag = ev.type == YAML_SCALAR_EVENT ? ev.data.scalar.tag
						   : ev.type == YAML_SEQUENCE_START_EVENT
							   ? ev.data.sequence_start.tag
							   : ev.data.mapping_start.tag;
			struct grove_ynode *parent = depth ? stack[depth - 1] : NULL;

			/* libyaml reports "!" for a non-specific quoted tag on some
			 * inputs; anything explicit is refused. */
			if (tag) {
				r = yerr(err, file, line, col, "tags are not supported ('%s')",
					 (const char *)tag);
				goto fail_ev;
			}
			if (++nodes > GROVE_MANIFEST_MAX_NODES) {
				r = yerr(err, file, line, col, "more than %s values in the file",
					 "100000");
				goto fail_ev;
			}
			if (parent && parent->kind == GROVE_Y_MAP && parent->n % 2 == 0 &&
			    ev.type != YAML_SCALAR_EVENT) {
				r = yerr(err, file, line, col, "a key must be a string, not a %s",
					 ev.type == YAML_SEQUENCE_START_EVENT ? "list" : "mapping");
				goto fail_ev;
			}
			n = calloc(1, sizeof(*n));
			if (!n) {
				r = grove_error_set(err, -ENOMEM, "out of memory");
				goto fail_ev;
			}
			n->line = (unsigned)line + 1;
			n->col = (unsigned)col + 1;
			if (ev.type == YAML_SCALAR_EVENT) {
				n->kind = GROVE_Y_SCALAR;
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				n->str = malloc(ev.data.scalar.length + 1);
				if (!n->str) {
					free(n);
					r = grove_error_set(err, -ENOMEM, "out of memory");
					goto fail_ev;
				}
				memcpy(n->str, ev.data.scalar.value, ev.data.scalar.length);
				n->str[ev.data.scalar.length] = '\0';
				/* "\0" escapes in double quotes make a NUL inside. */
				if (strlen(n->str) != ev.data.scalar.length) {
					grove_ynode_free(n);
					r = yerr(err, file, line, col, "NUL byte in a string%s",
						 NULL);
					goto fail_ev;
				}
			} else {
				n->kind = ev.type == YAML_SEQUENCE_START_EVENT ? GROVE_Y_SEQ
									       : GROVE_Y_MAP;
			}
			if (parent) {
				if (add_kid(parent, n) < 0) {
					grove_ynode_free(n);
					r = grove_error_set(err, -ENOMEM, "out of memory");
					goto fail_ev;
				}
			} else {
				root = n;
			}
			if (n->kind != GROVE_Y_SCALAR) {
				if (depth >= GROVE_MANIFEST_MAX_DEPTH) {
					r = yerr(err, file, line, col,
						 "nested deeper than %s levels", "32");
					goto fail_ev;
				}
				stack[depth++] = n;
			}
			break;
		}
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT: {
			struct grove_ynode *top = stack[--depth];

			if (top->kind == GROVE_Y_MAP) {
				const struct grove_ynode *dup = duplicate_key(top, &r);

				if (r < 0) {
					grove_error_set(err, r, "out of memory");
					goto fail_ev;
				}
				if (dup) {
					r = yerr(err, file, dup->line - 1, dup->col - 1,
						 "duplicate key '%s'", dup->str);
					goto fail_ev;
				}
			}
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	*ret = root;
	return 0;
fail_ev:
	yaml_event_delete(&ev);
fail:
	yaml_parser_delete(&parser);
	grove_ynode_free(root);
	return r;
}
