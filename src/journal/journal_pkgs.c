/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's package rows (schema 11, docs/journal.md "Packages"): which packages a transaction
 * stows or unstows, from which stow dir, with which layout options, packed one row per transaction
 * and stow dir; each target's latest committed state, packed in chunks of names merged at commit;
 * the reads of both, every body checked whole; and schema 10's rows packed. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/*
 * A body is its packages one after the other, in strictly increasing strcmp order of their names:
 *
 *   flags (1 byte: PKG_*), in a state body the id of the transaction that set them (unsigned
 *   LEB128, 1 to 9 bytes, 1 to INT64_MAX), then the name (a single name, 1 to NAME_MAX bytes)
 *   and a NUL.
 */
#define PKG_STOWED     0x01u
#define PKG_DOTFILES   0x02u
#define PKG_NO_FOLDING 0x04u
#define PKG_FLAGS      0x07u
/* The flags the migration from schema 10 writes for a row no reader accepted: refused again. */
#define PKG_FLAG_BAD 0x80u

void
grove_journal_pkgs_free(struct grove_journal_pkg *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].stow_dir);
		free(v[i].package);
	}
	free(v);
}

static unsigned
flags_of(const struct grove_pkg_layout *l)
{
	return (l->stowed ? PKG_STOWED : 0) | (l->dotfiles ? PKG_DOTFILES : 0) |
	       (l->no_folding ? PKG_NO_FOLDING : 0);
}

static struct grove_pkg_layout
layout_of(unsigned flags)
{
	struct grove_pkg_layout l = {
		.stowed = flags & PKG_STOWED,
		.dotfiles = flags & PKG_DOTFILES,
		.no_folding = flags & PKG_NO_FOLDING,
	};

	return l;
}

/* ---- packing ---- */

/* A body being packed, and where each of its entries and their names start (to cut it). */
struct pack {
	unsigned char *buf;
	size_t len, cap;
	size_t *off, *name_off;
	size_t n, ncap;
};

static void
pack_release(struct pack *p)
{
	free(p->buf);
	free(p->off);
	free(p->name_off);
	memset(p, 0, sizeof(*p));
}

/* Appends an entry: flags, the txn id when txn > 0, the name of len bytes and a NUL. */
static int
pack_add(struct pack *p, unsigned flags, int64_t txn, const char *name, size_t len)
{
	size_t need = len + 12;
	unsigned char *q;

	if (grove_bytes_reserve(&p->buf, &p->cap, p->len, need, 1024) < 0)
		return -ENOMEM;
	if (p->n == p->ncap) {
		size_t ncap = p->ncap ? p->ncap * 2 : 64;
		size_t *no = realloc(p->off, ncap * sizeof(*no)), *nn;

		if (!no)
			return -ENOMEM;
		p->off = no;
		nn = realloc(p->name_off, ncap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		p->name_off = nn;
		p->ncap = ncap;
	}
	p->off[p->n] = p->len;
	q = p->buf + p->len;
	*q++ = (unsigned char)flags;
	if (txn > 0) {
		uint64_t v = (uint64_t)txn;

		do {
			*q++ = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
	}
	p->name_off[p->n] = (size_t)(q - p->buf);
	memcpy(q, name, len);
	q += len;
	*q++ = 0;
	p->len = (size_t)(q - p->buf);
	p->n++;
	return 0;
}

/* ---- reading ---- */

/* An entry read from a body: its name points into the body, NUL-terminated there. */
struct pkg_ent {
	const char *name;
	unsigned flags;
	int64_t txn; /* a state body's; 0 in a transaction's */
};

/* A body read back: n as its row says, checked against what it holds. */
struct body_in {
	const unsigned char *body;
	size_t len;
	int64_t n;
};

/* Reads a row's count and body columns (col, col + 1); returns why they are refused, or NULL. */
static const char *
body_open(sqlite3_stmt *s, int col, struct body_in *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (sqlite3_column_type(s, col) != SQLITE_INTEGER)
		return "its count is not a number";
	if (sqlite3_column_type(s, col + 1) != SQLITE_BLOB)
		return "its body is not a blob";
	ret->n = sqlite3_column_int64(s, col);
	ret->body = sqlite3_column_blob(s, col + 1);
	ret->len = (size_t)sqlite3_column_bytes(s, col + 1);
	/* Each entry is at least 3 bytes: a count beyond that is a lie told to make us allocate. */
	if (!ret->body || ret->n < 1 || (uint64_t)ret->n > ret->len / 3)
		return "its count is out of range";
	return NULL;
}

/*
 * Decodes and checks a body whole (DESIGN.md invariant 8) into v (room for b->n): exactly n
 * entries and nothing after, known flags, a txn id in range when state, single names in strictly
 * increasing order, the first at or after lo and the last before hi (when given). Returns why it
 * is refused, or NULL.
 */
static const char *
body_decode(const struct body_in *b, bool state, const char *lo, const char *hi, struct pkg_ent *v)
{
	size_t pos = 0;

	for (int64_t i = 0; i < b->n; i++) {
		const unsigned char *z;
		size_t room, len;

		if (b->len - pos < 3)
			return "its body ends inside a package";
		v[i].flags = b->body[pos++];
		if (v[i].flags & ~PKG_FLAGS)
			return "a package with unknown flags";
		v[i].txn = 0;
		if (state) {
			uint64_t id = 0;
			int k = 0;
			unsigned c;

			do {
				if (pos == b->len || k == 9)
					return "a package's transaction is out of range";
				c = b->body[pos++];
				id |= (uint64_t)(c & 0x7f) << (7 * k++);
			} while (c & 0x80);
			if (id < 1 || id > INT64_MAX)
				return "a package's transaction is out of range";
			v[i].txn = (int64_t)id;
		}
		room = b->len - pos;
		z = memchr(b->body + pos, 0, room < NAME_MAX + 1 ? room : NAME_MAX + 1);
		if (!z)
			return room <= NAME_MAX ? "its body ends inside a package"
						: "a package name is too long";
		v[i].name = (const char *)b->body + pos;
		len = (size_t)(z - (b->body + pos));
		pos += len + 1;
		if (len == 0 || memchr(v[i].name, '/', len) ||
		    (v[i].name[0] == '.' && len == 2 && v[i].name[1] == '.'))
			return "a package that is not a single name";
		if (i ? strcmp(v[i - 1].name, v[i].name) >= 0 : lo && strcmp(lo, v[i].name) > 0)
			return "its packages are out of order";
	}
	if (pos != b->len)
		return "its body holds more than its count of packages";
	if (hi && strcmp(v[b->n - 1].name, hi) >= 0)
		return "its packages are out of order";
	return NULL;
}

/* Column col as a text without NUL bytes, shorter than max; NULL otherwise. */
static const char *
column_text(sqlite3_stmt *s, int col, size_t max)
{
	const char *t = (const char *)sqlite3_column_text(s, col);
	int n = sqlite3_column_bytes(s, col);

	if (!t || n < 0 || (size_t)n != strlen(t) || (size_t)n >= max)
		return NULL;
	return t;
}

/* ---- a transaction's packages ---- */

/* Orders the rows to log by stow dir, then package, then place in the list (the last wins). */
static const struct grove_journal_pkg *sort_rows;

static int
by_row(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_rows[x].stow_dir, sort_rows[y].stow_dir);

	if (!c)
		c = strcmp(sort_rows[x].package, sort_rows[y].package);
	return c ? c : (x > y) - (x < y);
}

/* One statement run per stow dir whatever the count of its packages, the list packed sorted. */
int
grove_journal_pkgs_put(struct grove_journal *j, int64_t txn, const struct grove_journal_pkg *v,
		       size_t n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	cleanup_free size_t *ix = NULL;
	struct pack p = { 0 };
	bool sorted = true;
	int r;

	if (!n)
		return 0;
	for (size_t k = 0; k < n; k++) {
		if (!v[k].stow_dir || !v[k].package || !grove_path_is_package(v[k].package))
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "log transaction in '%s': package row %zu has no "
					       "stow dir or no single-name package",
					       j->name, k);
		if (k && sorted) {
			int c = strcmp(v[k - 1].stow_dir, v[k].stow_dir);

			sorted = c < 0 || (!c && strcmp(v[k - 1].package, v[k].package) <= 0);
		}
	}
	ix = malloc(n * sizeof(*ix));
	if (!ix)
		return grove_error_errno(err, -ENOMEM, "log transaction in '%s'", j->name);
	for (size_t k = 0; k < n; k++)
		ix[k] = k;
	if (!sorted) {
		sort_rows = v;
		qsort(ix, n, sizeof(*ix), by_row);
		sort_rows = NULL;
	}
	r = grove_journal_stmt(j, ST_PKG_PUT, &s, err);
	for (size_t i = 0; r >= 0 && i < n;) {
		const char *dir = v[ix[i]].stow_dir;
		size_t k = i;

		p.len = p.n = 0;
		for (; k < n && !strcmp(v[ix[k]].stow_dir, dir); k++) {
			const struct grove_journal_pkg *e = &v[ix[k]];

			if (k + 1 < n && !strcmp(v[ix[k + 1]].stow_dir, dir) &&
			    !strcmp(v[ix[k + 1]].package, e->package))
				continue; /* listed again later: the last stands */
			if (pack_add(&p, flags_of(&e->layout), 0, e->package, strlen(e->package)) <
			    0) {
				r = grove_error_errno(err, -ENOMEM, "log transaction in '%s'",
						      j->name);
				break;
			}
		}
		if (r < 0)
			break;
		sqlite3_bind_int64(s, 1, txn);
		bind_text(s, 2, dir);
		sqlite3_bind_int64(s, 3, (int64_t)p.n);
		sqlite3_bind_blob(s, 4, p.buf, (int)p.len, SQLITE_STATIC);
		r = sqlite3_step(s);
		sqlite3_reset(s);
		r = r == SQLITE_DONE ? 0 : grove_journal_fail(j, r, err, "log transaction in");
		i = k;
	}
	pack_release(&p);
	return r;
}

/* Room for n entries in *v (of *cap). */
static int
ents_reserve(struct pkg_ent **v, size_t *cap, size_t n)
{
	if (*cap < n) {
		struct pkg_ent *nv = realloc(*v, n * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = n;
	}
	return 0;
}

static int
txn_refused(struct grove_journal *j, int64_t txn, const char *why, struct grove_error *err)
{
	return grove_error_set(err, -GROVE_E_CONFIG,
			       "journal '%s': transaction %" PRId64 ", its packages: %s", j->name,
			       txn, why);
}

/* The row of ST_PKG_TXN_GET at hand, checked whole: its stow dir and its entries in *e. */
static const char *
txn_row(sqlite3_stmt *s, const char **ret_dir, struct body_in *b, struct pkg_ent **e, size_t *ecap)
{
	const char *why;

	*ret_dir = column_text(s, 0, PATH_MAX);
	if (!*ret_dir || (*ret_dir)[0] != '/')
		return "a stow dir that is not an absolute path";
	why = body_open(s, 1, b);
	if (why)
		return why;
	if (ents_reserve(e, ecap, (size_t)b->n) < 0)
		return NULL; /* the caller sees *ecap short */
	return body_decode(b, false, NULL, NULL, *e);
}

int
grove_journal_txn_pkgs(struct grove_journal *j, int64_t txn, struct grove_journal_pkg **ret,
		       size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	cleanup_free struct pkg_ent *e = NULL;
	struct grove_journal_pkg *v = NULL;
	size_t n = 0, ecap = 0;
	int rc, r = grove_journal_stmt(j, ST_PKG_TXN_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct body_in b;
		const char *dir, *why = txn_row(s, &dir, &b, &e, &ecap);
		struct grove_journal_pkg *nv;

		if (why) {
			r = txn_refused(j, txn, why, err);
			goto fail;
		}
		if (ecap < (size_t)b.n)
			goto nomem;
		nv = realloc(v, (n + (size_t)b.n) * sizeof(*nv));
		if (!nv)
			goto nomem;
		v = nv;
		for (int64_t i = 0; i < b.n; i++) {
			v[n].stow_dir = strdup(dir);
			v[n].package = strdup(e[i].name);
			v[n].layout = layout_of(e[i].flags);
			n++; /* counted even when a copy failed: the free below takes what is there
			      */
			if (!v[n - 1].stow_dir || !v[n - 1].package)
				goto nomem;
		}
	}
	if (rc != SQLITE_DONE) {
		r = grove_journal_fail(j, rc, err, "read");
		goto fail;
	}
	*ret = v;
	*ret_n = n;
	return 0;
nomem:
	r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
fail:
	grove_journal_pkgs_free(v, n);
	return r;
}

/* ---- the latest committed state ---- */

/* A chunk of a target's state read back: its key (the first name it may hold; "" for the first
 * chunk), and a copy of its count and body. */
struct chunk {
	char key[NAME_MAX + 1];
	struct body_in b;
	unsigned char *copy;
};

struct chunks {
	struct chunk *v;
	size_t n, cap;
	bool has_next; /* next: the key of the chunk after the last read, if any */
	char next[NAME_MAX + 1];
};

static void
chunks_release(struct chunks *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].copy);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int
state_refused(struct grove_journal *j, int64_t target_id, const char *why, struct grove_error *err)
{
	return grove_error_set(err, -GROVE_E_CONFIG,
			       "journal '%s': the packages recorded for target %" PRId64 ": %s",
			       j->name, target_id, why);
}

/* Frees the chunks held in c. */
static void
chunks_drop(struct chunks *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].copy);
	c->n = 0;
}

/*
 * The chunks of target_id's state for dir that hold the names from `from` to `to` (NULL: to the
 * end), in order, and the key of the chunk after them. A chunk holds the names from its key up to
 * the next chunk's; the first chunk's key is "". Keys are checked here, bodies by body_decode. The
 * chunks before the one holding `from` are stepped over.
 */
static int
state_read(struct grove_journal *j, int64_t target_id, const char *dir, const char *from,
	   const char *to, struct chunks *ret, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	bool first = true;
	int rc, r = grove_journal_stmt(j, ST_PKG_STATE_GET, &s, err);

	memset(ret, 0, sizeof(*ret));
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, dir);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *key = column_text(s, 0, NAME_MAX + 1), *why = NULL;
		struct chunk *c;

		if (!key || (*key && !grove_path_is_package(key)))
			why = "a chunk's first name is not a single name";
		else if (first && *key)
			why = "no chunk holds its first names";
		/* Keys come in increasing strcmp order: the primary key's (BINARY) order, for
		 * texts without NUL bytes. */
		if (why) {
			r = state_refused(j, target_id, why, err);
			goto fail;
		}
		first = false;
		if (strcmp(key, from) <= 0) {
			chunks_drop(ret); /* a chunk before the one holding `from` */
		} else if (to && strcmp(key, to) > 0) {
			memcpy(ret->next, key, strlen(key) + 1);
			ret->has_next = true;
			break;
		}
		if (ret->n == ret->cap) {
			size_t ncap = ret->cap ? ret->cap * 2 : 4;
			struct chunk *nv = realloc(ret->v, ncap * sizeof(*nv));

			if (!nv)
				goto nomem;
			ret->v = nv;
			ret->cap = ncap;
		}
		c = &ret->v[ret->n];
		memcpy(c->key, key, strlen(key) + 1);
		c->copy = NULL;
		why = body_open(s, 1, &c->b);
		if (why) {
			r = state_refused(j, target_id, why, err);
			goto fail;
		}
		c->copy = malloc(c->b.len);
		if (!c->copy)
			goto nomem;
		memcpy(c->copy, c->b.body, c->b.len);
		c->b.body = c->copy;
		ret->n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		r = grove_journal_fail(j, rc, err, "read");
		goto fail;
	}
	return 0;
nomem:
	r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
fail:
	chunks_release(ret);
	return r;
}

/* Where chunk i of c ends: the next chunk's key, or NULL at the end. */
static const char *
chunk_hi(const struct chunks *c, size_t i)
{
	if (i + 1 < c->n)
		return c->v[i + 1].key;
	return c->has_next ? c->next : NULL;
}

/* Decodes chunk i of c whole into *e (grown as needed). */
static int
chunk_decode(struct grove_journal *j, int64_t target_id, const struct chunks *c, size_t i,
	     struct pkg_ent **e, size_t *ecap, struct grove_error *err)
{
	const struct chunk *k = &c->v[i];
	const char *why;

	if (ents_reserve(e, ecap, (size_t)k->b.n) < 0)
		return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
	why = body_decode(&k->b, true, k->key[0] ? k->key : NULL, chunk_hi(c, i), *e);
	return why ? state_refused(j, target_id, why, err) : 0;
}

int
grove_journal_pkgs_recorded(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			    struct grove_journal_pkg **ret, size_t *ret_n, struct grove_error *err)
{
	struct chunks c;
	cleanup_free struct pkg_ent *e = NULL;
	struct grove_journal_pkg *v = NULL;
	size_t n = 0, total = 0, ecap = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!target_id)
		return 0; /* a target the log does not know yet */
	r = state_read(j, target_id, stow_dir, "", NULL, &c, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c.n; i++)
		total += (size_t)c.v[i].b.n;
	if (!total)
		goto out; /* nothing recorded */
	v = calloc(total, sizeof(*v));
	if (!v) {
		r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
		goto out;
	}
	for (size_t i = 0; i < c.n && r >= 0; i++) {
		r = chunk_decode(j, target_id, &c, i, &e, &ecap, err);
		for (int64_t k = 0; r >= 0 && k < c.v[i].b.n && n < total; k++) {
			v[n].package = strdup(e[k].name);
			v[n].layout = layout_of(e[k].flags);
			if (!v[n++].package)
				r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
		}
	}
	if (r >= 0) {
		*ret = v;
		*ret_n = n;
		v = NULL;
	}
out:
	grove_journal_pkgs_free(v, n);
	chunks_release(&c);
	return r;
}

/* The entry named name among v[0..n) (sorted), or NULL. */
static const struct pkg_ent *
ents_find(const struct pkg_ent *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].name, name);

		if (!c)
			return &v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Before a transaction: the history, the target's committed transactions newest first. */
static int
recorded_before(struct grove_journal *j, int64_t target_id, const char *stow_dir,
		const char *package, int64_t before, struct grove_pkg_layout *ret, bool *ret_found,
		struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	cleanup_free struct pkg_ent *e = NULL;
	size_t ecap = 0;
	int rc, r = grove_journal_stmt(j, ST_PKG_RECORDED, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	sqlite3_bind_int64(s, 3, before);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t txn = sqlite3_column_int64(s, 0);
		struct body_in b;
		const char *why = body_open(s, 1, &b);
		const struct pkg_ent *hit;

		if (!why && ents_reserve(&e, &ecap, (size_t)b.n) < 0)
			return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
		if (!why)
			why = body_decode(&b, false, NULL, NULL, e);
		if (why)
			return txn_refused(j, txn, why, err);
		hit = ents_find(e, (size_t)b.n, package);
		if (hit) {
			*ret = layout_of(hit->flags);
			*ret_found = true;
			return 0;
		}
	}
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "read");
}

int
grove_journal_pkgs_recorded_before(struct grove_journal *j, int64_t target_id, int64_t before,
				   struct grove_journal_pkg *v, size_t n, struct grove_error *err)
{
	cleanup_free struct pkg_ent *e = NULL;
	cleanup_free bool *done = calloc(n + 1, sizeof(*done));
	size_t ecap = 0;
	int r = 0;

	if (!done)
		return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
	for (size_t i = 0; i < n; i++)
		memset(&v[i].layout, 0, sizeof(v[i].layout));
	if (!target_id)
		return 0; /* a target the log does not know yet */
	/* One walk of the history per stow dir, newest first, until each package has its record. */
	for (size_t d = 0; d < n && r >= 0; d++) {
		cleanup_stmt sqlite3_stmt *s = NULL;
		const char *dir = v[d].stow_dir;
		size_t want = 0;
		int rc = SQLITE_DONE;

		if (done[d])
			continue;
		for (size_t i = d; i < n; i++)
			want += !done[i] && !strcmp(v[i].stow_dir, dir);
		r = grove_journal_stmt(j, ST_PKG_RECORDED, &s, err);
		if (r < 0)
			break;
		sqlite3_bind_int64(s, 1, target_id);
		bind_text(s, 2, dir);
		sqlite3_bind_int64(s, 3, before);
		while (want && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			struct body_in b;
			const char *why = body_open(s, 1, &b);

			if (!why && ents_reserve(&e, &ecap, (size_t)b.n) < 0)
				return grove_error_errno(err, -ENOMEM, "read journal '%s'",
							 j->name);
			if (!why)
				why = body_decode(&b, false, NULL, NULL, e);
			if (why)
				return txn_refused(j, sqlite3_column_int64(s, 0), why, err);
			for (size_t i = d; i < n; i++) {
				const struct pkg_ent *hit;

				if (done[i] || strcmp(v[i].stow_dir, dir) != 0)
					continue;
				hit = ents_find(e, (size_t)b.n, v[i].package);
				if (hit) {
					v[i].layout = layout_of(hit->flags);
					done[i] = true;
					want--;
				}
			}
		}
		if (want && rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "read");
		/* The rest of this dir's packages have no record: done with them. */
		for (size_t i = d; i < n; i++)
			if (!done[i] && !strcmp(v[i].stow_dir, dir))
				done[i] = true;
	}
	return r;
}

int
grove_journal_pkg_recorded(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			   const char *package, int64_t before, struct grove_pkg_layout *ret,
			   bool *ret_found, struct grove_error *err)
{
	cleanup_free struct pkg_ent *e = NULL;
	struct chunks c;
	size_t ecap = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	*ret_found = false;
	if (!target_id || !package)
		return 0; /* a target the log does not know yet */
	if (before)
		return recorded_before(j, target_id, stow_dir, package, before, ret, ret_found,
				       err);
	r = state_read(j, target_id, stow_dir, package, package, &c, err);
	if (r >= 0 && c.n) {
		r = chunk_decode(j, target_id, &c, 0, &e, &ecap, err);
		if (r >= 0) {
			const struct pkg_ent *hit = ents_find(e, (size_t)c.v[0].b.n, package);

			if (hit) {
				*ret = layout_of(hit->flags);
				*ret_found = true;
			}
		}
	}
	chunks_release(&c);
	return r;
}

/*
 * Writes the state entries packed in p as chunks starting at key: one chunk when they fit in
 * PKGS_STATE_BYTES, else cut in even pieces at entries, each after the first keyed by its first
 * name (a name between key and the next chunk's, so no other chunk's key).
 */
static int
state_write(struct grove_journal *j, int64_t target_id, const char *dir, const char *key,
	    const struct pack *p, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	size_t pieces = (p->len + PKGS_STATE_BYTES - 1) / PKGS_STATE_BYTES, start = 0;
	int r = grove_journal_stmt(j, ST_PKG_STATE_PUT, &s, err);

	for (size_t k = 1; r >= 0 && k <= pieces && start < p->n; k++) {
		size_t end = p->n, lim = p->len / pieces * k;
		int rc;

		if (k < pieces)
			for (end = start + 1; end < p->n && p->off[end] < lim; end++)
				;
		sqlite3_bind_int64(s, 1, target_id);
		bind_text(s, 2, dir);
		bind_text(s, 3, start ? (const char *)p->buf + p->name_off[start] : key);
		sqlite3_bind_int64(s, 4, (int64_t)(end - start));
		sqlite3_bind_blob(s, 5, p->buf + p->off[start],
				  (int)((end < p->n ? p->off[end] : p->len) - p->off[start]),
				  SQLITE_STATIC);
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			r = grove_journal_fail(j, rc, err, "finish transaction in");
		start = end;
	}
	return r;
}

/*
 * Merges a committing transaction's entries t[0..nt) (sorted) into target_id's state for dir: each
 * package takes txn's flags unless the state holds a newer transaction's (so the newest committed
 * row wins whatever order transactions commit in). Only the chunks that change are written.
 */
static int
state_merge(struct grove_journal *j, int64_t target_id, const char *dir, int64_t txn,
	    const struct pkg_ent *t, size_t nt, struct grove_error *err)
{
	static const struct chunk empty = { .key = "" };
	cleanup_free struct pkg_ent *e = NULL;
	struct chunks c;
	struct pack p = { 0 };
	size_t ecap = 0, ti = 0;
	int r;

	r = state_read(j, target_id, dir, t[0].name, t[nt - 1].name, &c, err);
	if (r < 0)
		return r;
	if (!c.n) {
		c.v = malloc(sizeof(*c.v));
		if (!c.v) {
			r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
			goto out;
		}
		c.v[0] = empty;
		c.n = 1;
	}
	for (size_t i = 0; i < c.n && r >= 0 && ti < nt; i++) {
		const char *hi = chunk_hi(&c, i);
		size_t tk = ti, si = 0, ns = (size_t)c.v[i].b.n;
		bool changed = false;

		while (tk < nt && (!hi || strcmp(t[tk].name, hi) < 0))
			tk++;
		if (tk == ti)
			continue;
		if (ns)
			r = chunk_decode(j, target_id, &c, i, &e, &ecap, err);
		p.len = p.n = 0;
		while (r >= 0 && (si < ns || ti < tk)) {
			int cmp = si == ns ? 1 : ti == tk ? -1 : strcmp(e[si].name, t[ti].name);
			const struct pkg_ent *x;

			if (cmp < 0 || (cmp == 0 && e[si].txn > txn)) {
				x = &e[si];
			} else {
				changed = changed || cmp || e[si].flags != t[ti].flags ||
					  e[si].txn != txn;
				x = &t[ti];
			}
			if (pack_add(&p, x->flags, x == &t[ti] ? txn : x->txn, x->name,
				     strlen(x->name)) < 0)
				r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
			if (cmp <= 0)
				si++;
			if (cmp >= 0)
				ti++;
		}
		if (r >= 0 && changed)
			r = state_write(j, target_id, dir, c.v[i].key, &p, err);
	}
out:
	pack_release(&p);
	chunks_release(&c);
	return r;
}

int
grove_journal_pkgs_commit_txn(struct grove_journal *j, int64_t txn, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	cleanup_free struct pkg_ent *e = NULL;
	size_t ecap = 0;
	int64_t target_id = 0;
	int rc, r = grove_journal_query_id(j, ST_PKG_TXN_TARGET, txn, &target_id, err);

	if (r >= 0)
		r = grove_journal_stmt(j, ST_PKG_TXN_GET, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct body_in b;
		const char *dir, *why = txn_row(s, &dir, &b, &e, &ecap);

		if (why)
			return txn_refused(j, txn, why, err);
		if (ecap < (size_t)b.n)
			return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
		/* The entries point into this row's body, valid until the next step. */
		r = state_merge(j, target_id, dir, txn, e, (size_t)b.n, err);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "finish transaction in");
}

/* ---- schema 10's rows ---- */

/* A schema-10 column as a name to pack: one no reader accepts for what no reader accepted
 * ("..": "." is the package that is the stow dir itself, `stow .`). */
static const char *
migrated_name(sqlite3_stmt *s, int col, size_t *ret_len)
{
	const char *t = (const char *)sqlite3_column_text(s, col);
	int n = sqlite3_column_bytes(s, col);

	if (!t || n < 1 || (size_t)n != strlen(t) || n > NAME_MAX) {
		*ret_len = 2;
		return "..";
	}
	*ret_len = (size_t)n;
	return t;
}

/* Schema 10's stowed, dotfiles and no_folding columns from col as flags. */
static unsigned
migrated_flags(sqlite3_stmt *s, int col)
{
	unsigned f = 0;

	for (int i = 0; i < 3; i++) {
		int64_t v = sqlite3_column_int64(s, col + i);

		if (sqlite3_column_type(s, col + i) != SQLITE_INTEGER || (v != 0 && v != 1))
			f |= PKG_FLAG_BAD;
		else if (v)
			f |= 1u << i;
	}
	return f;
}

/* Whether column col of s holds the text dir (of len bytes). */
static bool
same_text(sqlite3_stmt *s, int col, const char *dir, size_t len)
{
	const char *t = (const char *)sqlite3_column_text(s, col);

	return t && (size_t)sqlite3_column_bytes(s, col) == len && !memcmp(t, dir, len);
}

/*
 * Schema 10's txn_packages rows become one packed row per transaction and stow dir, and pkg_latest
 * (through the rows it points at) the packed state; both tables go. Rows of no transaction, and
 * pointers at no row, are dropped, as the readers ignored them.
 */
int
grove_journal_pkgs_to_packed(struct grove_journal *j, struct grove_error *err)
{
	static const char *const sql[2] = {
		"SELECT p.txn_id, p.stow_dir, p.package, p.stowed, p.dotfiles, p.no_folding, 0"
		" FROM txn_packages p JOIN txns t ON t.id = p.txn_id"
		" ORDER BY p.txn_id, p.stow_dir, p.package",
		"SELECT l.target_id, l.stow_dir, l.package, p.stowed, p.dotfiles, p.no_folding,"
		" l.txn_id FROM pkg_latest l JOIN txn_packages p ON p.txn_id = l.txn_id"
		" AND p.stow_dir = l.stow_dir AND p.package = l.package"
		" ORDER BY l.target_id, l.stow_dir, l.package",
	};
	struct pack p = { 0 };
	char *dir = NULL;
	int r = 0;

	for (int pass = 0; pass < 2 && r >= 0; pass++) {
		sqlite3_stmt *s = NULL, *ins = NULL;
		int64_t id = 0;
		size_t dlen = 0;
		bool open = false;
		int rc = sqlite3_prepare_v2(j->db, sql[pass], -1, &s, NULL);

		if (rc != SQLITE_OK)
			r = grove_journal_fail(j, rc, err, "migrate");
		if (r >= 0 && !pass)
			r = grove_journal_stmt(j, ST_PKG_PUT, &ins, err);
		for (;;) {
			bool row = r >= 0 && (rc = sqlite3_step(s)) == SQLITE_ROW;
			int64_t rid = row ? sqlite3_column_int64(s, 0) : 0;
			size_t len;
			const char *name;

			if (open && (!row || rid != id || !same_text(s, 1, dir, dlen))) {
				if (pass) {
					r = state_write(j, id, dir, "", &p, err);
				} else {
					sqlite3_bind_int64(ins, 1, id);
					sqlite3_bind_text(ins, 2, dir, (int)dlen, SQLITE_STATIC);
					sqlite3_bind_int64(ins, 3, (int64_t)p.n);
					sqlite3_bind_blob(ins, 4, p.buf, (int)p.len, SQLITE_STATIC);
					rc = sqlite3_step(ins);
					sqlite3_reset(ins);
					if (rc != SQLITE_DONE)
						r = grove_journal_fail(j, rc, err, "migrate");
				}
				open = false;
			}
			if (!row || r < 0)
				break;
			if (!open) {
				const char *t = (const char *)sqlite3_column_text(s, 1);

				free(dir);
				dlen = t ? (size_t)sqlite3_column_bytes(s, 1) : 0;
				dir = malloc(dlen + 1);
				if (!dir) {
					r = grove_error_errno(err, -ENOMEM, "migrate journal '%s'",
							      j->name);
					break;
				}
				if (dlen)
					memcpy(dir, t, dlen);
				dir[dlen] = 0;
				id = rid;
				open = true;
				p.len = p.n = 0;
			}
			name = migrated_name(s, 2, &len);
			{
				unsigned f = migrated_flags(s, 3);
				int64_t txn = pass ? sqlite3_column_int64(s, 6) : 0;

				if (pass &&
				    (sqlite3_column_type(s, 6) != SQLITE_INTEGER || txn < 1)) {
					f |= PKG_FLAG_BAD;
					txn = 1;
				}
				if (pack_add(&p, f, txn, name, len) < 0)
					r = grove_error_errno(err, -ENOMEM, "migrate journal '%s'",
							      j->name);
			}
		}
		if (r >= 0 && rc != SQLITE_DONE)
			r = grove_journal_fail(j, rc, err, "migrate");
		grove_journal_stmt_resetp(&ins);
		sqlite3_finalize(s);
	}
	free(dir);
	pack_release(&p);
	if (r >= 0)
		r = grove_journal_exec_sql(j, "DROP TABLE pkg_latest; DROP TABLE txn_packages", err,
					   "migrate");
	return r;
}

int
grove_journal_read_begin(struct grove_journal *j, struct grove_error *err)
{
	int r;

	if (!sqlite3_get_autocommit(j->db))
		return 0;
	r = grove_journal_exec_sql(j, "BEGIN", err, "read");
	return r < 0 ? r : 1;
}

void
grove_journal_read_end(struct grove_journal *j, int began)
{
	/* Only reads happened: ending it releases the shared lock, nothing else. */
	if (began > 0 && sqlite3_exec(j->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
}
