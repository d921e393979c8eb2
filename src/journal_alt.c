/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's alternatives rows: the (admindir, altdir) pairs, each group's state and
 * the groups a transaction changes. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"
#include "grove/journal.h"
#include "journal_int.h"
#include "util.h"

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

/* Reads the followers (group slaves or a choice's files) of one row set. */
static int
alt_read_slaves(struct grove_journal *j, enum stmt_id id, int64_t gid, int64_t seq,
		struct grove_alt_slave **v, size_t *n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, id, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, gid);
	if (id == ST_ALT_CHOICE_SLAVES)
		sqlite3_bind_int64(s, 2, seq);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct grove_alt_slave *nv = realloc(*v, (*n + 1) * sizeof(**v));

		if (!nv)
			return grove_error_set(err, -ENOMEM, "out of memory");
		*v = nv;
		nv[*n].name = nv[*n].path = NULL;
		(*n)++;
		if (column_dup(s, 0, &nv[*n - 1].name) < 0 ||
		    column_dup(s, 1, &nv[*n - 1].path) < 0 || !nv[*n - 1].name || !nv[*n - 1].path)
			return grove_error_set(err, -ENOMEM, "read journal '%s': out of memory",
					       j->name);
	}
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "read");
}

static int
alt_read_group(struct grove_journal *j, int64_t gid, struct grove_alt_group *g,
	       struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r;

	r = alt_read_slaves(j, ST_ALT_SLAVES, gid, 0, &g->slaves, &g->n_slaves, err);
	if (r < 0)
		return r;
	r = grove_journal_stmt(j, ST_ALT_CHOICES, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, gid);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct grove_alt_choice *nv = realloc(g->choices, (g->n_choices + 1) * sizeof(*nv));
		struct grove_alt_choice *c;

		if (!nv)
			return grove_error_set(err, -ENOMEM, "out of memory");
		g->choices = nv;
		c = &nv[g->n_choices++];
		memset(c, 0, sizeof(*c));
		c->priority = sqlite3_column_int(s, 2);
		if (column_dup(s, 1, &c->path) < 0 || !c->path)
			return grove_error_set(err, -ENOMEM, "out of memory");
		r = alt_read_slaves(j, ST_ALT_CHOICE_SLAVES, gid, sqlite3_column_int64(s, 0),
				    &c->slaves, &c->n_slaves, err);
		if (r < 0)
			return r;
	}
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "read");
}

int
grove_journal_alt_load(struct grove_journal *j, int64_t dir_id, struct grove_alt_group **ret,
		       size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_alt_group *v = NULL;
	size_t n = 0;
	int rc, r = grove_journal_stmt(j, ST_ALT_GROUPS, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, dir_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct grove_alt_group *nv = realloc(v, (n + 1) * sizeof(*nv));
		const unsigned char *mode = sqlite3_column_text(s, 3);

		if (!nv) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		n++;
		v[n - 1].manual = mode && strcmp((const char *)mode, "manual") == 0;
		if (column_dup(s, 1, &v[n - 1].name) < 0 || column_dup(s, 2, &v[n - 1].link) < 0 ||
		    !v[n - 1].name || !v[n - 1].link) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		r = alt_read_group(j, sqlite3_column_int64(s, 0), &v[n - 1], err);
		if (r < 0)
			goto fail;
	}
	if (rc != SQLITE_DONE) {
		r = grove_journal_fail(j, rc, err, "read");
		goto fail;
	}
	*ret = v;
	*ret_n = n;
	return 0;
fail:
	grove_alt_groups_free(v, n);
	return r;
}

/* Runs an insert of four bound values (?1 integer, ?2 integer or text, ?3, ?4 text or
 * integer) as the alternatives statements need. */
static int
alt_put(struct grove_journal *j, enum stmt_id id, int64_t a, int64_t b, const char *c,
	const char *d, int64_t d_int, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, id, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	bind_text(s, 3, c);
	if (d)
		bind_text(s, 4, d);
	else
		sqlite3_bind_int64(s, 4, d_int);
	rc = sqlite3_step(s);
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "save alternatives in");
}

static int
alt_write_group(struct grove_journal *j, int64_t dir_id, const struct grove_alt_group *g,
		struct grove_error *err)
{
	int64_t gid;
	int rc, r;

	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = grove_journal_stmt(j, ST_ALT_GROUP_DEL, &s, err);
		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, dir_id);
		bind_text(s, 2, g->name);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "save alternatives in");
	}
	if (g->n_choices == 0)
		return 0;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = grove_journal_stmt(j, ST_ALT_GROUP_PUT, &s, err);
		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, dir_id);
		bind_text(s, 2, g->name);
		bind_text(s, 3, g->link);
		bind_text(s, 4, g->manual ? "manual" : "auto");
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return grove_journal_fail(j, rc, err, "save alternatives in");
		gid = sqlite3_last_insert_rowid(j->db);
	}
	for (size_t i = 0; i < g->n_slaves && r >= 0; i++)
		r = alt_put(j, ST_ALT_SLAVE_PUT, gid, (int64_t)i, g->slaves[i].name,
			    g->slaves[i].path, 0, err);
	for (size_t i = 0; i < g->n_choices && r >= 0; i++) {
		const struct grove_alt_choice *c = &g->choices[i];

		r = alt_put(j, ST_ALT_CHOICE_PUT, gid, (int64_t)i, c->path, NULL, c->priority, err);
		for (size_t k = 0; k < c->n_slaves && r >= 0; k++)
			if (c->slaves[k].path && *c->slaves[k].path)
				r = alt_put(j, ST_ALT_CHOICE_SLAVE_PUT, gid, (int64_t)i,
					    c->slaves[k].name, c->slaves[k].path, 0, err);
	}
	return r;
}

int
grove_journal_alt_save(struct grove_journal *j, int64_t dir_id, const struct grove_alt_group *g,
		       struct grove_error *err)
{
	bool unknown;
	int r = grove_journal_write_begin(j, err, "save alternatives in");

	if (r < 0)
		return r;
	r = alt_write_group(j, dir_id, g, err);
	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	r = grove_journal_write_commit(j, &unknown, err, "save alternatives in");
	/* An unknown outcome is reported as a failure: the next run reads what the
	 * log says (the save is idempotent). */
	return r;
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

	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_alt_group g = { 0 };

		if (v[i].after) {
			r = grove_alt_group_parse(v[i].name, v[i].after, strlen(v[i].after),
						  j->name, &g, err);
			if (r < 0)
				break;
		} else if (!(g.name = strdup(v[i].name))) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		r = alt_write_group(j, v[i].dir_id, &g, err);
		grove_alt_group_release(&g);
	}
	grove_journal_alt_changes_free(v, n);
	return r;
}

int
grove_journal_alt_text(struct grove_journal *j, int64_t dir_id, const char *name, char **ret,
		       struct grove_error *err)
{
	struct grove_alt_group *all = NULL;
	size_t n = 0;
	int r = grove_journal_alt_load(j, dir_id, &all, &n, err);

	if (r < 0)
		return r;
	*ret = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].name, name) == 0 && grove_alt_group_format(&all[i], ret) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	grove_alt_groups_free(all, n);
	return r;
}
