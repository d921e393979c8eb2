/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal: a YAML document read with libyaml's event parser into a small tree, within limits. */
#ifndef GROVE_MANIFEST_YAML_H
#define GROVE_MANIFEST_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"

enum grove_ynode_kind {
	GROVE_Y_SCALAR,
	GROVE_Y_SEQ,
	GROVE_Y_MAP,
};

/*
 * A node. A mapping's kids alternate key, value (keys are scalars, each key
 * once). A scalar keeps its text and whether it was plain (unquoted): only a
 * plain scalar can be a boolean, a number or null.
 */
struct grove_ynode {
	enum grove_ynode_kind kind;
	unsigned line, col; /* 1-based */
	char *str;          /* GROVE_Y_SCALAR */
	bool plain;
	struct grove_ynode **kids;
	size_t n, cap;
};

/*
 * Parses exactly one document (an empty stream gives *ret = NULL). Refused,
 * with "FILE:LINE:COL: reason" and GROVE_E_CONFIG: syntax errors, aliases
 * (no expansion at all, so no billion laughs), tags, non-scalar keys,
 * duplicate keys, nesting deeper than GROVE_MANIFEST_MAX_DEPTH, more than
 * GROVE_MANIFEST_MAX_NODES nodes, more than one document, NUL bytes.
 */
int grove_yaml_load(const char *buf, size_t len, const char *file, struct grove_ynode **ret,
		    struct grove_error *err);

/* Frees the tree; accepts NULL; returns NULL. */
struct grove_ynode *grove_ynode_free(struct grove_ynode *n);

#endif
