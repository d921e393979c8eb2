/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What grove owns in a target, replayed from the committed ops of its transactions in order. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal_owned.h"
#include "base/util.h"

#include "banned.h" /* last */

/*
 * Memory per path the log names (a 1M-link farm: 1M of them): the entry (32 bytes, in one dense
 * array), its slot in the index (4 bytes, at most 70 % full), its path and text (one allocation
 * each); the package names are interned, once per name, and handed out with the result.
 */
struct own_ent {
	char *path;
	char *text;          /* NULL: a folder grove made */
	const char *package; /* interned (struct names), or NULL */
	uint64_t seq : 63;   /* the op that set it, in replay order */
	uint64_t live : 1;
};

/* A path a FOLD replaced with a link, and the last such op: everything the replay set at or
 * beneath it before that op is gone (checked when the entries are handed out). */
struct fold_ent {
	char *path;
	uint64_t seq;
};

/* Interned package names: open addressing of strings, never removed. */
struct names {
	char **v;
	size_t cap, used;
};

/* The entries in the order first seen; the index maps a path to its entry (slot: entry + 1, 0
 * empty). Keys are never removed (an ended entry is just not live), so no tombstones are
 * needed. The folds likewise. */
struct grove_owned_replay {
	struct own_ent *e;
	size_t n_e, cap_e;
	uint32_t *slot;
	size_t cap;
	struct fold_ent *f;
	size_t f_cap, f_used;
	struct names pk;
	uint64_t seq; /* ops replayed */
};

/* What grove_owned_replay_take hands out: the entries, and the package names they point to. */
struct owned_block {
	struct names pk;
	struct grove_owned v[];
};

static void
names_release(struct names *pk)
{
	for (size_t i = 0; i < pk->cap; i++)
		free(pk->v[i]);
	free(pk->v);
	memset(pk, 0, sizeof(*pk));
}

/* The interned copy of name (NULL for NULL), or NULL with *oom set. */
static const char *
names_get(struct names *pk, const char *name, bool *oom)
{
	size_t i;

	if (!name)
		return NULL;
	if ((pk->used + 1) * 10 > pk->cap * 7) {
		size_t ncap = pk->cap ? pk->cap * 2 : 16;
		char **nv = calloc(ncap, sizeof(*nv));

		if (!nv) {
			*oom = true;
			return NULL;
		}
		for (size_t k = 0; k < pk->cap; k++) {
			if (!pk->v[k])
				continue;
			for (i = grove_hash_str(pk->v[k]) & (ncap - 1); nv[i];
			     i = (i + 1) & (ncap - 1))
				;
			nv[i] = pk->v[k];
		}
		free(pk->v);
		pk->v = nv;
		pk->cap = ncap;
	}
	for (i = grove_hash_str(name) & (pk->cap - 1); pk->v[i]; i = (i + 1) & (pk->cap - 1))
		if (strcmp(pk->v[i], name) == 0)
			return pk->v[i];
	pk->v[i] = strdup(name);
	if (!pk->v[i]) {
		*oom = true;
		return NULL;
	}
	pk->used++;
	return pk->v[i];
}

static void
own_map_release(struct grove_owned_replay *m)
{
	for (size_t i = 0; i < m->n_e; i++) {
		free(m->e[i].path);
		free(m->e[i].text);
	}
	free(m->e);
	free(m->slot);
	m->e = NULL;
	m->slot = NULL;
	m->n_e = m->cap_e = m->cap = 0;
	for (size_t i = 0; i < m->f_cap; i++)
		free(m->f[i].path);
	free(m->f);
	m->f = NULL;
	m->f_cap = m->f_used = 0;
	names_release(&m->pk);
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

/* The index slot of path: the one holding its entry, or the empty one it would go to. */
static uint32_t *
own_slot(const struct grove_owned_replay *m, const char *path)
{
	for (size_t i = grove_hash_str(path) & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->slot[i] || strcmp(m->e[m->slot[i] - 1].path, path) == 0)
			return &m->slot[i];
}

static struct own_ent *
own_find(struct grove_owned_replay *m, const char *path)
{
	uint32_t *s = m->cap ? own_slot(m, path) : NULL;

	return s && *s ? &m->e[*s - 1] : NULL;
}

/* Room for one more entry: the dense array and the index grown as needed. */
static int
own_grow(struct grove_owned_replay *m)
{
	if (m->n_e == m->cap_e) {
		size_t ncap = m->cap_e ? m->cap_e * 2 : 256;
		struct own_ent *ne;

		if (ncap >= UINT32_MAX)
			return -ENOMEM;
		ne = realloc(m->e, ncap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		m->e = ne;
		m->cap_e = ncap;
	}
	if ((m->n_e + 1) * 10 > m->cap * 7) {
		size_t ncap = m->cap ? m->cap * 2 : 512;
		uint32_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		free(m->slot);
		m->slot = ns;
		m->cap = ncap;
		for (size_t k = 0; k < m->n_e; k++)
			*own_slot(m, m->e[k].path) = (uint32_t)(k + 1);
	}
	return 0;
}

static void
own_end(struct grove_owned_replay *m, const char *path)
{
	struct own_ent *e = own_find(m, path);

	if (!e)
		return;
	free(e->text);
	e->text = NULL;
	e->package = NULL;
	e->live = 0;
}

static int
own_set(struct grove_owned_replay *m, const char *path, const char *text, const char *package)
{
	struct own_ent *e = own_find(m, path);
	bool oom = false;
	const char *p = names_get(&m->pk, package, &oom);
	char *t = NULL;

	if (oom || (text && !(t = strdup(text)))) {
		free(t);
		return -ENOMEM;
	}
	if (!e) {
		char *copy = strdup(path);

		if (!copy || own_grow(m) < 0) {
			free(copy);
			free(t);
			return -ENOMEM;
		}
		e = &m->e[m->n_e];
		memset(e, 0, sizeof(*e));
		e->path = copy;
		*own_slot(m, copy) = (uint32_t)(++m->n_e);
	}
	free(e->text);
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
	struct owned_block *b;

	if (!o)
		return;
	b = (struct owned_block *)(void *)((char *)o - offsetof(struct owned_block, v));
	for (size_t i = 0; i < n; i++) {
		free(o[i].path);
		free(o[i].text);
	}
	names_release(&b->pk);
	free(b);
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
	size_t live = 0, n = 0;
	struct owned_block *b;

	for (size_t i = 0; i < m->n_e; i++)
		live += m->e[i].live;
	b = calloc(1, sizeof(*b) + (live ? live : 1) * sizeof(b->v[0]));
	if (!b)
		return -ENOMEM;
	/* The index goes first: the sort below needs room of its own. */
	free(m->slot);
	m->slot = NULL;
	m->cap = 0;
	for (size_t i = 0; i < m->n_e; i++) {
		struct own_ent *e = &m->e[i];

		if (!e->live || (m->f_used && folded_since(m, e)))
			continue;
		b->v[n].path = steal_ptr(e->path);
		b->v[n].text = steal_ptr(e->text);
		b->v[n].package = e->package;
		n++;
	}
	b->pk = m->pk;
	memset(&m->pk, 0, sizeof(m->pk));
	own_map_release(m);
	qsort(b->v, n, sizeof(b->v[0]), cmp_owned);
	*ret = b->v;
	*ret_n = n;
	return 0;
}
