/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's package rows (schemas 8 and 9): which packages a transaction stows or unstows, from
 * which stow dir, with which layout options; and what the log last recorded for a package. */
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "journal_int.h"
#include "util.h"

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

/* Binds package row v as the row starting at parameter base + 1. */
static void
pkg_bind(sqlite3_stmt *s, int base, int64_t txn, const struct grove_journal_pkg *v)
{
	sqlite3_bind_int64(s, base + 1, txn);
	bind_text(s, base + 2, v->stow_dir);
	bind_text(s, base + 3, v->package);
	sqlite3_bind_int(s, base + 4, v->layout.stowed);
	sqlite3_bind_int(s, base + 5, v->layout.dotfiles);
	sqlite3_bind_int(s, base + 6, v->layout.no_folding);
}

/* Runs s (rows bound) and resets it; its bindings are cleared on failure. */
static int
pkg_step(struct grove_journal *j, sqlite3_stmt *s, struct grove_error *err)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		sqlite3_clear_bindings(s);
		return grove_journal_fail(j, rc, err, "log transaction in");
	}
	return 0;
}

/* Every run of a statement has a fixed cost: PKGS_BATCH rows per run for a long list (see
 * journal_int.h), a row per run for the rest. Rows are written in the list's order, so the
 * last of a package listed twice wins, as row by row. */
int
grove_journal_pkgs_put(struct grove_journal *j, int64_t txn, const struct grove_journal_pkg *v,
		       size_t n, struct grove_error *err)
{
	sqlite3_stmt *s = NULL;
	size_t i = 0;
	int r;

	for (size_t k = 0; k < n; k++)
		if (!v[k].stow_dir || !v[k].package || !grove_path_is_name(v[k].package))
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "log transaction in '%s': package row %zu has no "
					       "stow dir or no single-name package",
					       j->name, k);
	if (n >= PKGS_BATCH_MIN) {
		r = grove_journal_stmt(j, ST_PKG_PUT_BATCH, &s, err);
		if (r < 0)
			return r;
		for (; i + PKGS_BATCH <= n; i += PKGS_BATCH) {
			for (int k = 0; k < PKGS_BATCH; k++)
				pkg_bind(s, k * PKGS_COLUMNS, txn, &v[i + k]);
			r = pkg_step(j, s, err);
			if (r < 0)
				return r;
		}
		sqlite3_clear_bindings(s);
	}
	if (i == n)
		return 0;
	r = grove_journal_stmt(j, ST_PKG_PUT, &s, err);
	if (r < 0)
		return r;
	for (; i < n; i++) {
		pkg_bind(s, 0, txn, &v[i]);
		r = pkg_step(j, s, err);
		if (r < 0)
			return r;
	}
	sqlite3_clear_bindings(s);
	return 0;
}

/* Column col as a text without NUL bytes, shorter than PATH_MAX; NULL otherwise. */
static const char *
column_text(sqlite3_stmt *s, int col)
{
	const char *t = (const char *)sqlite3_column_text(s, col);
	int n = sqlite3_column_bytes(s, col);

	if (!t || n < 0 || (size_t)n != strlen(t) || n >= PATH_MAX)
		return NULL;
	return t;
}

static struct grove_pkg_layout
layout_of(sqlite3_stmt *s, int first)
{
	struct grove_pkg_layout l = {
		.stowed = sqlite3_column_int64(s, first) != 0,
		.dotfiles = sqlite3_column_int64(s, first + 1) != 0,
		.no_folding = sqlite3_column_int64(s, first + 2) != 0,
	};

	return l;
}

int
grove_journal_txn_pkgs(struct grove_journal *j, int64_t txn, struct grove_journal_pkg **ret,
		       size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_journal_pkg *v = NULL;
	size_t n = 0;
	int rc, r = grove_journal_stmt(j, ST_PKG_TXN_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *dir = column_text(s, 0), *pkg = column_text(s, 1);
		struct grove_journal_pkg *nv;

		/* Rows read back are input (DESIGN.md invariant 8). */
		if (!dir || dir[0] != '/' || !pkg || !grove_path_is_name(pkg)) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %" PRId64
					    " records a package that is not a single name, or a "
					    "stow dir that is not an absolute path",
					    j->name, txn);
			goto fail;
		}
		nv = realloc(v, (n + 1) * sizeof(*nv));
		if (!nv)
			goto nomem;
		v = nv;
		v[n].stow_dir = strdup(dir);
		v[n].package = strdup(pkg);
		v[n].layout = layout_of(s, 2);
		n++; /* counted even when a copy failed: the free below takes what is there */
		if (!v[n - 1].stow_dir || !v[n - 1].package)
			goto nomem;
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

int
grove_journal_pkg_recorded(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			   const char *package, int64_t before, struct grove_pkg_layout *ret,
			   bool *ret_found, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r;

	memset(ret, 0, sizeof(*ret));
	*ret_found = false;
	if (!target_id)
		return 0; /* a target the log does not know yet */
	r = grove_journal_stmt(j, before ? ST_PKG_RECORDED : ST_PKG_LATEST_GET, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	bind_text(s, 3, package);
	if (before)
		sqlite3_bind_int64(s, 4, before);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return grove_journal_fail(j, rc, err, "read");
	*ret = layout_of(s, 0);
	*ret_found = true;
	return 0;
}

int
grove_journal_pkgs_recorded(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			    struct grove_journal_pkg **ret, size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_journal_pkg *v = NULL;
	size_t n = 0, cap = 0;
	int rc, r;

	*ret = NULL;
	*ret_n = 0;
	if (!target_id)
		return 0; /* a target the log does not know yet */
	r = grove_journal_stmt(j, ST_PKG_LATEST_ALL, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *pkg = column_text(s, 0);

		/* Rows read back are input (DESIGN.md invariant 8); SQLite's BINARY order is
		 * strcmp's for texts without NUL bytes, which callers search by. */
		if (!pkg || !grove_path_is_name(pkg) || (n && strcmp(v[n - 1].package, pkg) >= 0)) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': a package recorded for target %" PRId64
					    " is not a single name",
					    j->name, target_id);
			goto fail;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct grove_journal_pkg *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv)
				goto nomem;
			v = nv;
			cap = ncap;
		}
		v[n].stow_dir = NULL;
		v[n].package = strdup(pkg);
		v[n].layout = layout_of(s, 1);
		n++; /* counted even when the copy failed: the free below takes what is there */
		if (!v[n - 1].package)
			goto nomem;
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

int
grove_journal_pkgs_commit_txn(struct grove_journal *j, int64_t txn, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, ST_PKG_LATEST_PUT, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		return grove_journal_fail(j, rc, err, "finish transaction in");
	return 0;
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
