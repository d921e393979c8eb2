/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What grove owns in a target, replayed from the committed ops of its transactions in order. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal_owned.h"
#include "util.h"

struct own_ent {
	char *path;
	char *text; /* NULL: a folder grove made */
	char *package;
	bool live;
};

/* Open addressing keyed by path; keys are never removed (an ended entry is
 * just not live), so no tombstones are needed. */
struct grove_owned_replay {
	struct own_ent *e;
	size_t cap, used;
};

static void
own_map_release(struct grove_owned_replay *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->e[i].path);
		free(m->e[i].text);
		free(m->e[i].package);
	}
	free(m->e);
	m->e = NULL;
	m->cap = m->used = 0;
}

static struct own_ent *
own_find(struct grove_owned_replay *m, const char *path)
{
	if (!m->cap)
		return NULL;
	for (size_t i = grove_hash_str(path) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].path)
			return NULL;
		if (strcmp(m->e[i].path, path) == 0)
			return &m->e[i];
	}
}

static int
own_grow(struct grove_owned_replay *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 256;
	struct own_ent *ne = calloc(ncap, sizeof(*ne));

	if (!ne)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t k;

		if (!m->e[i].path)
			continue;
		for (k = grove_hash_str(m->e[i].path) & (ncap - 1); ne[k].path;
		     k = (k + 1) & (ncap - 1))
			;
		ne[k] = m->e[i];
	}
	free(m->e);
	m->e = ne;
	m->cap = ncap;
	return 0;
}

static void
own_end(struct grove_owned_replay *m, const char *path)
{
	struct own_ent *e = own_find(m, path);

	if (!e)
		return;
	free(e->text);
	free(e->package);
	e->text = e->package = NULL;
	e->live = false;
}

static int
own_set(struct grove_owned_replay *m, const char *path, const char *text, const char *package)
{
	struct own_ent *e = own_find(m, path);
	char *t = NULL, *p = NULL;

	if (!e) {
		size_t i;

		if ((m->used + 1) * 10 > m->cap * 7 && own_grow(m) < 0)
			return -ENOMEM;
		for (i = grove_hash_str(path) & (m->cap - 1); m->e[i].path;
		     i = (i + 1) & (m->cap - 1))
			;
		e = &m->e[i];
		e->path = strdup(path);
		if (!e->path)
			return -ENOMEM;
		m->used++;
	}
	if ((text && !(t = strdup(text))) || (package && !(p = strdup(package)))) {
		free(t);
		return -ENOMEM;
	}
	free(e->text);
	free(e->package);
	e->text = t;
	e->package = p;
	e->live = true;
	return 0;
}

int
grove_owned_replay_op(struct grove_owned_replay *m, enum grove_op_kind kind, const char *path,
		      const char *text, const char *package)
{
	switch (kind) {
	case GROVE_OP_MKDIR:
	case GROVE_OP_UNFOLD: /* the link ends; the folder grove made replaces it */
		return own_set(m, path, NULL, package);
	case GROVE_OP_LINK:
	case GROVE_OP_RELINK:
	case GROVE_OP_ADOPT:
		return own_set(m, path, text, package);
	case GROVE_OP_UNLINK:
	case GROVE_OP_RMDIR:
		own_end(m, path);
		return 0;
	case GROVE_OP_FOLD:
		/* Nothing is left beneath a folded path, whatever order the block's
		 * ops come in. */
		for (size_t i = 0; i < m->cap; i++)
			if (m->e[i].path && m->e[i].live && grove_path_under(m->e[i].path, path))
				own_end(m, m->e[i].path);
		return own_set(m, path, text, package);
	case GROVE_OP_WRITE:
	case GROVE_OP_ERASE:
	case GROVE_OP_MOVE:
		break; /* never logged (plan.h) */
	}
	return 0;
}

static int
cmp_owned(const void *a, const void *b)
{
	return strcmp(((const struct grove_owned *)a)->path, ((const struct grove_owned *)b)->path);
}

void
grove_owned_free(struct grove_owned *o, size_t n)
{
	if (!o)
		return;
	for (size_t i = 0; i < n; i++) {
		free(o[i].path);
		free(o[i].text);
		free(o[i].package);
	}
	free(o);
}

struct grove_owned_replay *
grove_owned_replay_new(void)
{
	return calloc(1, sizeof(struct grove_owned_replay));
}

struct grove_owned_replay *
grove_owned_replay_free(struct grove_owned_replay *m)
{
	if (m) {
		own_map_release(m);
		free(m);
	}
	return NULL;
}

int
grove_owned_replay_take(struct grove_owned_replay *m, struct grove_owned **ret, size_t *ret_n)
{
	struct grove_owned *out = calloc(m->used ? m->used : 1, sizeof(*out));
	size_t n = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct own_ent *e = &m->e[i];

		if (!e->path || !e->live)
			continue;
		out[n].path = steal_ptr(e->path);
		out[n].text = steal_ptr(e->text);
		out[n].package = steal_ptr(e->package);
		n++;
	}
	qsort(out, n, sizeof(*out), cmp_owned);
	own_map_release(m);
	*ret = out;
	*ret_n = n;
	return 0;
}
