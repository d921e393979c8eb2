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
	uint64_t seq : 63; /* the op that set it, in replay order */
	uint64_t live : 1;
};

/* A path a FOLD replaced with a link, and the last such op: everything the replay set at or
 * beneath it before that op is gone (checked when the entries are handed out). */
struct fold_ent {
	char *path;
	uint64_t seq;
};

/* Open addressing keyed by path; keys are never removed (an ended entry is
 * just not live), so no tombstones are needed. The folds likewise. */
struct grove_owned_replay {
	struct own_ent *e;
	size_t cap, used;
	struct fold_ent *f;
	size_t f_cap, f_used;
	uint64_t seq; /* ops replayed */
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
	for (size_t i = 0; i < m->f_cap; i++)
		free(m->f[i].path);
	free(m->f);
	m->f = NULL;
	m->f_cap = m->f_used = 0;
}

/* The fold slot of path's first len bytes: the one holding it, or the empty one it would go to
 * (NULL when there are none). */
static struct fold_ent *
fold_slot(const struct grove_owned_replay *m, const char *path, size_t len)
{
	if (!m->f_cap)
		return NULL;
	for (size_t i = grove_hash_bytes(path, len) & (m->f_cap - 1);;
	     i = (i + 1) & (m->f_cap - 1)) {
		struct fold_ent *f = &m->f[i];

		if (!f->path || (strncmp(f->path, path, len) == 0 && f->path[len] == '\0'))
			return f;
	}
}

/* Notes a FOLD of path at the current op. */
static int
fold_note(struct grove_owned_replay *m, const char *path)
{
	size_t len = strlen(path);
	struct fold_ent *f = fold_slot(m, path, len);

	if (!f || (!f->path && (m->f_used + 1) * 10 > m->f_cap * 7)) {
		size_t ncap = m->f_cap ? m->f_cap * 2 : 16;
		struct fold_ent *nf = calloc(ncap, sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		for (size_t i = 0; i < m->f_cap; i++) {
			size_t k;

			if (!m->f[i].path)
				continue;
			for (k = grove_hash_str(m->f[i].path) & (ncap - 1); nf[k].path;
			     k = (k + 1) & (ncap - 1))
				;
			nf[k] = m->f[i];
		}
		free(m->f);
		m->f = nf;
		m->f_cap = ncap;
		f = fold_slot(m, path, len);
	}
	if (!f->path) {
		f->path = strdup(path);
		if (!f->path)
			return -ENOMEM;
		m->f_used++;
	}
	f->seq = m->seq;
	return 0;
}

/* Whether a FOLD at or above e's path came after the op that set e. */
static bool
folded_since(const struct grove_owned_replay *m, const struct own_ent *e)
{
	size_t len = strlen(e->path);

	for (;;) {
		const struct fold_ent *f = fold_slot(m, e->path, len);

		if (f && f->path && f->seq > e->seq)
			return true;
		if (!len)
			return false;
		while (len && e->path[len - 1] != '/')
			len--;
		if (len)
			len--; /* the folder above, without its '/' */
	}
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
	e->live = 0;
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
	e->seq = m->seq;
	e->live = 1;
	return 0;
}

int
grove_owned_replay_op(struct grove_owned_replay *m, enum grove_op_kind kind, const char *path,
		      const char *text, const char *package)
{
	int r;

	m->seq++;
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
		/* Nothing set at or beneath a folded path before it is left, whatever
		 * order the block's ops come in: noted here, applied when the entries are
		 * handed out (a scan of every entry per FOLD made a long history of folds
		 * quadratic). */
		r = fold_note(m, path);
		return r < 0 ? r : own_set(m, path, text, package);
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

		if (!e->path || !e->live || (m->f_used && folded_since(m, e)))
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
