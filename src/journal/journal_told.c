/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which packages' recorded-options notice a user was shown (schema 15, docs/journal.md "Notices
 * shown"): the notice is printed once per package and options, not on every command. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* Prepared here, not cached: asked only by a command that uses recorded options. */
static int
prepare(struct grove_journal *j, const char *sql, sqlite3_stmt **ret, struct grove_error *err,
	const char *what)
{
	int rc = sqlite3_prepare_v2(j->db, sql, -1, ret, NULL);

	if (rc != SQLITE_OK) {
		sqlite3_finalize(*ret);
		*ret = NULL;
		return grove_journal_fail(j, rc, err, what);
	}
	return 0;
}

int
grove_journal_pkg_told(struct grove_journal *j, int64_t target_id, const char *stow_dir,
		       const char *package, const struct grove_pkg_layout *l, bool *ret,
		       struct grove_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc, r;

	*ret = false;
	if (!target_id)
		return 0;
	r = prepare(j,
		    "SELECT 1 FROM pkg_told WHERE target_id = ?1 AND stow_dir = ?2 AND"
		    " package = ?3 AND dotfiles = ?4 AND no_folding = ?5",
		    &s, err, "read");
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	bind_text(s, 3, package);
	sqlite3_bind_int(s, 4, l->dotfiles);
	sqlite3_bind_int(s, 5, l->no_folding);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*ret = true;
	else if (rc != SQLITE_DONE)
		r = grove_journal_fail(j, rc, err, "read");
	sqlite3_finalize(s);
	return r;
}

int
grove_journal_pkg_told_set(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			   const char *package, const struct grove_pkg_layout *l,
			   struct grove_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc, r;

	if (!target_id || j->readonly)
		return 0;
	/* One statement, its own SQLite transaction: what a user was told is no part of a
	 * grove transaction (undo does not take it back). */
	r = prepare(j,
		    "INSERT OR REPLACE INTO pkg_told (target_id, stow_dir, package, dotfiles,"
		    " no_folding) VALUES (?1, ?2, ?3, ?4, ?5)",
		    &s, err, "write");
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	bind_text(s, 3, package);
	sqlite3_bind_int(s, 4, l->dotfiles);
	sqlite3_bind_int(s, 5, l->no_folding);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		r = grove_journal_fail(j, rc, err, "write");
	sqlite3_finalize(s);
	return r;
}
