/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's alternatives rows: the (admindir, altdir) pairs, each group's state and
 * the groups a transaction changes. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* ---- alternatives state ---- */

int
grove_journal_alt_dir(struct grove_journal *j, const char *admindir, const char *altdir,
		      int64_t *ret_id, struct grove_error *err)
{
	bool unknown;
	int rc, r;

	for (int pass = 0; pass < 2; pass++) {
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = grove_journal_stmt(j, ST_ALT_DIR_GET, &s, err);
		if (r < 0)
			return r;
		bind_text(s, 1, admindir);
		bind_text(s, 2, altdir);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*ret_id = sqlite3_column_int64(s, 0);
			return 0;
		}
		if (rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "read");
		if (pass == 1)
			break;
		/* A read-only journal registers nothing: the pair has no groups (id 0). */
		if (j->readonly) {
			*ret_id = 0;
			return 0;
		}
		sqlite3_reset(s);
		r = grove_journal_write_begin(j, err, "register alternatives dir in");
		if (r < 0)
			return r;
		{
			cleanup_stmt sqlite3_stmt *p = NULL;

			r = grove_journal_stmt(j, ST_ALT_DIR_PUT, &p, err);
			if (r >= 0) {
				bind_text(p, 1, admindir);
				bind_text(p, 2, altdir);
				rc = sqlite3_step(p);
				if (rc != SQLITE_DONE)
					r = grove_journal_fail(j, rc, err,
							       "register alternatives dir in");
			}
		}
		if (r < 0) {
			grove_journal_rollback(j);
			return r;
		}
		r = grove_journal_write_commit(j, &unknown, err, "register alternatives dir in");
		if (r < 0 && !unknown)
			return r;
	}
	return grove_error_set(err, -GROVE_E_INTERNAL,
			       "register alternatives dir '%s' in journal '%s': not found after "
			       "writing it",
			       admindir, j->name);
}

/* Steps s (bound, one text column): *ret the row's text, or NULL when there is no row. */
static int
step_text(struct grove_journal *j, sqlite3_stmt *s, char **ret, struct grove_error *err)
{
	int rc = sqlite3_step(s);

	*ret = NULL;
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return grove_journal_fail(j, rc, err, "read");
	if (column_dup(s, 0, ret) < 0 || !*ret)
		return grove_error_set(err, -ENOMEM, "read journal '%s': out of memory", j->name);
	return 0;
}

int
grove_journal_alt_admindir(struct grove_journal *j, int64_t dir_id, char **ret,
			   struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int r = grove_journal_stmt(j, ST_ALT_DIR_ADMIN, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, dir_id);
	return step_text(j, s, ret, err);
}

void
grove_journal_alt_states_free(struct grove_journal_alt_state *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].text);
	}
	free(v);
}

int
grove_journal_alt_states(struct grove_journal *j, int64_t dir_id,
			 struct grove_journal_alt_state **ret, size_t *ret_n,
			 struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_journal_alt_state *v = NULL;
	size_t n = 0;
	int rc, r = grove_journal_stmt(j, ST_ALT_STATES, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, dir_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct grove_journal_alt_state *nv = realloc(v, (n + 1) * sizeof(*nv));

		if (!nv) {
			grove_journal_alt_states_free(v, n);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		n++;
		v[n - 1].unwritten = sqlite3_column_int(s, 2) != 0;
		if (column_dup(s, 0, &v[n - 1].name) < 0 || !v[n - 1].name ||
		    column_dup(s, 1, &v[n - 1].text) < 0 || !v[n - 1].text) {
			grove_journal_alt_states_free(v, n);
			return grove_error_set(err, -ENOMEM, "read journal '%s': out of memory",
					       j->name);
		}
	}
	if (rc != SQLITE_DONE) {
		grove_journal_alt_states_free(v, n);
		return grove_journal_fail(j, rc, err, "read");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Deletes the group, then saves text (NULL: none) in its place, inside the caller's write
 * transaction. */
static int
alt_state_write(struct grove_journal *j, int64_t dir_id, const char *name, const char *text,
		struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, text ? ST_ALT_STATE_PUT : ST_ALT_STATE_DEL, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, dir_id);
	bind_text(s, 2, name);
	if (text)
		bind_text(s, 3, text);
	rc = sqlite3_step(s);
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "save alternatives in");
}

int
grove_journal_alt_put(struct grove_journal *j, int64_t dir_id, const char *name, const char *text,
		      struct grove_error *err)
{
	bool unknown;
	int r = grove_journal_write_begin(j, err, "save alternatives in");

	if (r < 0)
		return r;
	r = alt_state_write(j, dir_id, name, text, err);
	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	/* An unknown outcome is reported as a failure: the next run reads what the
	 * log says (the save is idempotent). */
	return grove_journal_write_commit(j, &unknown, err, "save alternatives in");
}

/* ---- the groups a transaction changes ---- */

void
grove_journal_alt_changes_free(struct grove_journal_alt_change *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].before);
		free(v[i].after);
	}
	free(v);
}

int
grove_journal_alt_changes(struct grove_journal *j, int64_t txn,
			  struct grove_journal_alt_change **ret, size_t *ret_n,
			  struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_journal_alt_change *v = NULL;
	size_t n = 0;
	int rc, r = grove_journal_stmt(j, ST_ALT_TXN_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct grove_journal_alt_change *nv = realloc(v, (n + 1) * sizeof(*nv));

		if (!nv) {
			grove_journal_alt_changes_free(v, n);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		v[n].dir_id = sqlite3_column_int64(s, 0);
		n++;
		if (column_dup(s, 1, &v[n - 1].name) < 0 || !v[n - 1].name ||
		    column_dup(s, 2, &v[n - 1].before) < 0 ||
		    column_dup(s, 3, &v[n - 1].after) < 0) {
			grove_journal_alt_changes_free(v, n);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
	}
	if (rc != SQLITE_DONE) {
		grove_journal_alt_changes_free(v, n);
		return grove_journal_fail(j, rc, err, "read");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
grove_journal_alt_changes_put(struct grove_journal *j, int64_t txn,
			      const struct grove_journal_alt_change *alt, size_t n_alt,
			      struct grove_error *err)
{
	for (size_t i = 0; i < n_alt; i++) {
		cleanup_stmt sqlite3_stmt *s = NULL;
		int rc, r = grove_journal_stmt(j, ST_ALT_TXN_PUT, &s, err);

		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, txn);
		sqlite3_bind_int64(s, 2, alt[i].dir_id);
		bind_text(s, 3, alt[i].name);
		bind_text(s, 4, alt[i].before);
		bind_text(s, 5, alt[i].after);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "log transaction in");
	}
	return 0;
}

/* Saves the after state of every group txn changes (inside the caller's write transaction). */
int
grove_journal_alt_commit_txn(struct grove_journal *j, int64_t txn, struct grove_error *err)
{
	struct grove_journal_alt_change *v = NULL;
	size_t n = 0;
	int r = grove_journal_alt_changes(j, txn, &v, &n, err);

	for (size_t i = 0; i < n && r >= 0; i++)
		r = alt_state_write(j, v[i].dir_id, v[i].name, v[i].after, err);
	grove_journal_alt_changes_free(v, n);
	return r;
}

int
grove_journal_alt_text(struct grove_journal *j, int64_t dir_id, const char *name, char **ret,
		       struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int r = grove_journal_stmt(j, ST_ALT_STATE_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, dir_id);
	bind_text(s, 2, name);
	return step_text(j, s, ret, err);
}
