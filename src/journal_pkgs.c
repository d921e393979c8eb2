/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's package rows (schema v8): which packages a transaction stows or unstows, from
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

int
grove_journal_pkgs_put(struct grove_journal *j, int64_t txn, const struct grove_journal_pkg *v,
		       size_t n, struct grove_error *err)
{
	for (size_t i = 0; i < n; i++) {
		cleanup_stmt sqlite3_stmt *s = NULL;
		int rc, r;

		if (!v[i].stow_dir || !v[i].package || !grove_path_is_name(v[i].package))
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "log transaction in '%s': package row %zu has no "
					       "stow dir or no single-name package",
					       j->name, i);
		r = grove_journal_stmt(j, ST_PKG_PUT, &s, err);
		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, txn);
		bind_text(s, 2, v[i].stow_dir);
		bind_text(s, 3, v[i].package);
		sqlite3_bind_int(s, 4, v[i].layout.stowed);
		sqlite3_bind_int(s, 5, v[i].layout.dotfiles);
		sqlite3_bind_int(s, 6, v[i].layout.no_folding);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "log transaction in");
	}
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
	r = grove_journal_stmt(j, ST_PKG_RECORDED, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	bind_text(s, 3, package);
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
