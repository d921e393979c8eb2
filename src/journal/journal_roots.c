/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's record of the roots a transaction uses besides its target (schema v13): which
 * folder each was, so that a replay reopens that folder or nothing (DESIGN.md invariant 11). */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

static const char *const kinds[] = {
	[GROVE_JOURNAL_ROOT_ADMINDIR] = "admindir", [GROVE_JOURNAL_ROOT_ALTDIR] = "altdir"
};
static const char *const resolves[] = {
	[GROVE_RESOLVE_BENEATH] = "beneath", [GROVE_RESOLVE_IN_ROOT] = "in_root"
};

int
grove_journal_roots_put(struct grove_journal *j, int64_t txn, const struct grove_journal_root *v,
			size_t n, struct grove_error *err)
{
	for (size_t i = 0; i < n; i++) {
		cleanup_stmt sqlite3_stmt *s = NULL;
		int rc, r = grove_journal_stmt(j, ST_ROOTS_PUT, &s, err);

		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, txn);
		bind_text(s, 2, kinds[v[i].kind]);
		sqlite3_bind_int64(s, 3, v[i].dir_id);
		bind_text(s, 4, v[i].under_target ? "target" : "/");
		bind_text(s, 5, v[i].rel);
		bind_text(s, 6, resolves[v[i].resolve]);
		sqlite3_bind_int64(s, 7, (int64_t)v[i].id.dev);
		sqlite3_bind_int64(s, 8, (int64_t)v[i].id.ino);
		sqlite3_bind_int64(s, 9, v[i].id.born);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "log transaction in");
	}
	return 0;
}

/* The index of text in names[0..n), or -1. */
static int
lookup(const char *const *names, int n, const unsigned char *text)
{
	for (int i = 0; text && i < n; i++)
		if (!strcmp(names[i], (const char *)text))
			return i;
	return -1;
}

/* Row s as a root, checked: nothing read back is trusted (DESIGN.md invariant 8). */
static int
row(sqlite3_stmt *s, struct grove_journal_root *ret)
{
	const unsigned char *parent = sqlite3_column_text(s, 2);
	const char *rel = (const char *)sqlite3_column_text(s, 3);
	int kind = lookup(kinds, 2, sqlite3_column_text(s, 0));
	int resolve = lookup(resolves, 2, sqlite3_column_text(s, 4));

	if (kind < 0 || resolve < 0 || !parent || !rel ||
	    (strcmp((const char *)parent, "target") != 0 &&
	     strcmp((const char *)parent, "/") != 0) ||
	    (*rel && !grove_path_is_clean_relative(rel)))
		return -GROVE_E_CONFIG;
	memset(ret, 0, sizeof(*ret));
	ret->rel = strdup(rel);
	if (!ret->rel)
		return -ENOMEM;
	ret->kind = (enum grove_journal_root_kind)kind;
	ret->dir_id = sqlite3_column_int64(s, 1);
	ret->under_target = !strcmp((const char *)parent, "target");
	ret->resolve = (enum grove_resolve)resolve;
	ret->id.dev = (dev_t)sqlite3_column_int64(s, 5);
	ret->id.ino = (ino_t)sqlite3_column_int64(s, 6);
	ret->id.born = sqlite3_column_int64(s, 7);
	return 0;
}

int
grove_journal_txn_roots(struct grove_journal *j, int64_t txn, struct grove_journal_root **ret,
			size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_journal_root *v = NULL;
	size_t n = 0;
	int rc, r = grove_journal_stmt(j, ST_ROOTS_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct grove_journal_root *nv = realloc(v, (n + 1) * sizeof(*nv));

		if (!nv) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		v = nv;
		r = row(s, &v[n]);
		if (r == -ENOMEM) {
			r = grove_error_set(err, r, "out of memory");
			break;
		}
		if (r < 0) {
			r = grove_error_set(err, r,
					    "journal '%s': transaction %lld records a root grove "
					    "would not write",
					    j->name, (long long)txn);
			break;
		}
		n++;
	}
	if (r >= 0 && rc != SQLITE_DONE)
		r = grove_journal_fail(j, rc, err, "read");
	if (r < 0) {
		grove_journal_roots_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
grove_journal_root_txns(struct grove_journal *j, uint64_t dev, uint64_t ino, size_t limit,
			int64_t **ret, size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int64_t *v = NULL;
	size_t n = 0;
	int rc = SQLITE_DONE, r = grove_journal_stmt(j, ST_ROOT_TXNS, &s, err);

	*ret = NULL;
	*ret_n = 0;
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)dev);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)ino);
	while ((!limit || n < limit) && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t *nv = realloc(v, (n + 1) * sizeof(*nv));

		if (!nv) {
			free(v);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
		v = nv;
		v[n++] = sqlite3_column_int64(s, 0);
	}
	if ((!limit || n < limit) && rc != SQLITE_DONE) {
		free(v);
		return grove_journal_fail(j, rc, err, "read");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
grove_journal_roots_free(struct grove_journal_root *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].rel);
	free(v);
}
