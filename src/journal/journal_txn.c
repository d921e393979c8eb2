/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's targets and transactions (intent, finish, history); their ops: journal_ops.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grove/journal.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

static const char *const state_names[] = {
	[GROVE_TXN_INTENT] = "intent",
	[GROVE_TXN_COMMITTED] = "committed",
	[GROVE_TXN_ROLLED_BACK] = "rolled_back",
	[GROVE_TXN_STUCK] = "stuck",
};

/* ---- targets ---- */

/* Steps s (ST_TARGET_GET: the rows of a device and inode) to the target's row: the one of birth
 * time born, else one of birth time 0 (written before grove read birth times, or on a filesystem
 * without them: it stands for its dev and ino until a writer records the birth time in it).
 * *ret_id 0 when none. *ret_same is true when the row already says everything we know (the same
 * path, and the birth time where the row predates birth times); a writer updates the row
 * otherwise. Chosen here rather than by the query: ordering the rows by the choice cost the
 * statement's prepare a third more. */
static int
target_pick(struct grove_journal *j, sqlite3_stmt *s, int64_t born, const char *path,
	    int64_t *ret_id, bool *ret_same, struct grove_error *err, const char *what)
{
	int rc;

	*ret_id = 0;
	*ret_same = false;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t b = sqlite3_column_int64(s, 2);
		const unsigned char *p;

		if ((b != born && b != 0) || (*ret_id && b != born))
			continue;
		*ret_id = sqlite3_column_int64(s, 0);
		p = sqlite3_column_text(s, 1);
		*ret_same = path && p && strcmp((const char *)p, path) == 0 && b == born;
		if (b == born)
			return 0;
	}
	if (rc != SQLITE_DONE)
		return grove_journal_fail(j, rc, err, what);
	return 0;
}

/* The target's row (see target_pick). */
static int
target_lookup(struct grove_journal *j, const struct grove_root *root, const char *path,
	      int64_t *ret_id, bool *ret_same, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int r = grove_journal_stmt(j, ST_TARGET_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, (int64_t)root->dev);
	sqlite3_bind_int64(s, 2, (int64_t)root->ino);
	return target_pick(j, s, root->born, path, ret_id, ret_same, err, "read");
}

/* Inserts the target (or updates its path), inside the caller's write
 * transaction; with id, updates that row (one of born 0) to path and born. */
static int
target_put(struct grove_journal *j, int64_t id, const char *path, int64_t dev, int64_t ino,
	   int64_t born, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, id ? ST_TARGET_BORN : ST_TARGET_PUT, &s, err);

	if (r < 0)
		return r;
	if (id) {
		sqlite3_bind_int64(s, 1, id);
		bind_text(s, 2, path);
		sqlite3_bind_int64(s, 3, born);
	} else {
		bind_text(s, 1, path);
		sqlite3_bind_int64(s, 2, dev);
		sqlite3_bind_int64(s, 3, ino);
		sqlite3_bind_int64(s, 4, born);
	}
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		return grove_journal_fail(j, rc, err, "register target in");
	return 0;
}

int
grove_journal_target_deferred(struct grove_journal *j, const struct grove_root *root,
			      int64_t *ret_id, struct grove_error *err)
{
	const char *path = root->real ? root->real : root->path;
	bool same = false;
	int64_t id = 0;
	int r;

	r = target_lookup(j, root, path, &id, &same, err);
	if (r < 0)
		return r;
	if (!id || !same) {
		char *copy = strdup(path);

		if (!copy)
			return grove_error_errno(err, -ENOMEM,
						 "register target '%s' in journal '%s'", path,
						 j->name);
		free(j->target.path);
		j->target.path = copy;
		j->target.dev = (int64_t)root->dev;
		j->target.ino = (int64_t)root->ino;
		j->target.born = root->born;
		j->target.pending = !id;
		j->target.stale = id != 0;
		j->target.id = id;
	}
	*ret_id = id;
	return 0;
}

int64_t
grove_journal_target_registered(const struct grove_journal *j)
{
	return j->target.id;
}

/* Inside the intent's write transaction: the deferred target's row, and its id. */
static int
target_put_pending(struct grove_journal *j, int64_t *ret_id, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	bool same;
	int r;

	if (!j->target.pending && j->target.id) {
		*ret_id = j->target.id;
		return 0;
	}
	if (!j->target.pending)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "log transaction in journal '%s': no target", j->name);
	r = target_put(j, 0, j->target.path, j->target.dev, j->target.ino, j->target.born, err);
	if (r < 0)
		return r;
	r = grove_journal_stmt(j, ST_TARGET_GET, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, j->target.dev);
	sqlite3_bind_int64(s, 2, j->target.ino);
	r = target_pick(j, s, j->target.born, NULL, ret_id, &same, err, "register target in");
	if (r < 0)
		return r;
	if (!*ret_id)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "register target '%s' in journal '%s': not found after "
				       "writing it",
				       j->target.path, j->name);
	return 0;
}

int
grove_journal_target(struct grove_journal *j, const struct grove_root *root, int64_t *ret_id,
		     struct grove_error *err)
{
	const char *path = root->real ? root->real : root->path;
	struct grove_error saved, local;
	bool same = false, unknown;
	int64_t id = 0;
	int r;

	if (!err)
		err = &local;
	/* Known under the same path: no write transaction at all. */
	r = target_lookup(j, root, path, &id, &same, err);
	if (r < 0)
		return r;
	if (id && same) {
		*ret_id = id;
		return 0;
	}
	r = grove_journal_write_begin(j, err, "register target in");
	if (r < 0)
		return r;
	/* Read again inside the write transaction: the row to update, if any. */
	r = target_lookup(j, root, path, &id, &same, err);
	if (r >= 0)
		r = target_put(j, id, path, (int64_t)root->dev, (int64_t)root->ino, root->born,
			       err);
	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	r = grove_journal_write_commit(j, &unknown, err, "register target in");
	if (r < 0 && !unknown)
		return r;
	saved = *err;
	r = target_lookup(j, root, path, &id, &same, err);
	if (r < 0)
		return r;
	if (!id || !same) {
		if (unknown)
			*err = saved;
		return unknown ? saved.code
			       : grove_error_set(err, -GROVE_E_INTERNAL,
						 "register target '%s' in journal '%s': not found "
						 "after writing it",
						 path, j->name);
	}
	if (unknown)
		grove_error_clear(err);
	*ret_id = id;
	return 0;
}

/* ---- transactions ---- */

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads back a transaction's state (and what identifies the row we wrote). */
struct txn_state {
	bool found;
	enum grove_txn_state state;
	bool note_null;
	char note_prefix[64];
	int64_t target_id;
	double started;
	int64_t n_ops;
	bool command_null;
	char command_prefix[64];
};

static int
parse_state(const char *s, enum grove_txn_state *ret)
{
	for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (s && strcmp(s, state_names[i]) == 0) {
			*ret = (enum grove_txn_state)i;
			return 0;
		}
	return -1;
}

static void
copy_prefix(char *buf, size_t size, const unsigned char *text, bool *ret_null)
{
	*ret_null = !text;
	snprintf(buf, size, "%s", text ? (const char *)text : "");
}

static int
txn_state_read(struct grove_journal *j, int64_t txn, struct txn_state *ret, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, ST_TXN_STATE, &s, err);

	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	sqlite3_bind_int64(s, 1, txn);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return grove_journal_fail(j, rc, err, "read");
	ret->found = true;
	if (parse_state((const char *)sqlite3_column_text(s, 0), &ret->state) < 0)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s': transaction %" PRId64 " has an unknown state",
				       j->name, txn);
	copy_prefix(ret->note_prefix, sizeof(ret->note_prefix), sqlite3_column_text(s, 1),
		    &ret->note_null);
	copy_prefix(ret->command_prefix, sizeof(ret->command_prefix), sqlite3_column_text(s, 2),
		    &ret->command_null);
	ret->started = sqlite3_column_double(s, 3);
	ret->target_id = sqlite3_column_int64(s, 4);
	ret->n_ops = sqlite3_column_int64(s, 5);
	return 0;
}

static bool
prefix_matches(const char *prefix, bool is_null, const char *want)
{
	char buf[64];

	if (!want)
		return is_null;
	snprintf(buf, sizeof(buf), "%s", want);
	return !is_null && strcmp(buf, prefix) == 0;
}

static int
txn_insert(struct grove_journal *j, int64_t target_id, const char *command,
	   const struct grove_root *stow, int64_t undoes, double started, int64_t *ret_id,
	   struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int64_t found = 0;
	int rc, r;

	if (undoes) {
		r = grove_journal_query_id(j, ST_TXN_EXISTS, undoes, &found, err);
		if (r < 0)
			return r;
		if (found != undoes)
			goto missing;
	}
	r = grove_journal_stmt(j, ST_TXN_INSERT, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, command);
	bind_text(s, 3, stow ? stow->real : NULL);
	if (undoes)
		sqlite3_bind_int64(s, 4, undoes);
	sqlite3_bind_double(s, 5, started);
	if (stow) {
		sqlite3_bind_int64(s, 6, (int64_t)stow->dev);
		sqlite3_bind_int64(s, 7, (int64_t)stow->ino);
		sqlite3_bind_int64(s, 8, stow->born);
	}
	/* Who runs it: the effective uid, and through sudo the user who ran sudo (informative
	 * only: grove log shows it; nothing decides by it). */
	sqlite3_bind_int64(s, 9, (int64_t)geteuid());
	{
		const char *sudo = geteuid() == 0 ? getenv("SUDO_USER") : NULL;

		if (sudo && *sudo && strlen(sudo) <= 64)
			bind_text(s, 10, sudo);
	}
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		return grove_journal_fail(j, rc, err, "log transaction in");
	if (sqlite3_changes(j->db) != 1)
		goto missing;
	*ret_id = sqlite3_last_insert_rowid(j->db);
	return 0;
missing:
	return grove_error_set(err, -GROVE_E_INTERNAL,
			       "log transaction in journal '%s': no target %" PRId64
			       " or no transaction %" PRId64 " to undo in it",
			       j->name, target_id, undoes);
}

int
grove_journal_begin(struct grove_journal *j, int64_t target_id, const char *command,
		    const struct grove_root *stow, int64_t undoes, const struct grove_plan *plan,
		    int64_t *ret_txn, struct grove_error *err)
{
	struct grove_journal_intent in = { .target_id = target_id,
					   .command = command,
					   .stow = stow,
					   .undoes = undoes,
					   .plan = plan };

	return grove_journal_begin_intent(j, &in, ret_txn, err);
}

int
grove_journal_begin_alt(struct grove_journal *j, int64_t target_id, const char *command,
			const struct grove_root *stow, int64_t undoes,
			const struct grove_plan *plan, const struct grove_journal_alt_change *alt,
			size_t n_alt, int64_t *ret_txn, struct grove_error *err)
{
	struct grove_journal_intent in = { .target_id = target_id,
					   .command = command,
					   .stow = stow,
					   .undoes = undoes,
					   .plan = plan,
					   .alt = alt,
					   .n_alt = n_alt };

	return grove_journal_begin_intent(j, &in, ret_txn, err);
}

/* The deferred target is in the log now (committed with the transaction). */
static void
target_registered(struct grove_journal *j, int64_t id)
{
	if (j->target.pending) {
		j->target.pending = false;
		j->target.id = id;
	}
	if (j->target.stale && j->target.id == id)
		j->target.stale = false;
}

/*
 * Writes the intent's rows but its ops (the transaction, its target, groups and packages) inside
 * a write transaction it opens; on failure it is rolled back. Without SQLite's foreign-key checks
 * when it logs no alternatives groups (whose dir ids are the caller's): every other row it and
 * the ops write refers to the transaction row it writes, whose target and transaction undone
 * txn_insert checks.
 */
static int
intent_rows(struct grove_journal *j, const struct grove_journal_intent *in, double started,
	    int64_t *ret_target, int64_t *ret_txn, struct grove_error *err)
{
	int64_t id = 0, target_id = in->target_id;
	int r;

	j->writing.txn = 0;
	if (in->n_alt)
		r = grove_journal_write_begin(j, err, "log transaction in");
	else
		r = grove_journal_write_begin_unchecked(j, err, "log transaction in");
	if (r < 0)
		return r;
	if (!target_id)
		r = target_put_pending(j, &target_id, err);
	else if (j->target.stale && target_id == j->target.id)
		r = target_put(j, target_id, j->target.path, j->target.dev, j->target.ino,
			       j->target.born, err);
	if (r >= 0)
		r = txn_insert(j, target_id, in->command, in->stow, in->undoes, started, &id, err);
	if (r >= 0)
		r = grove_journal_alt_changes_put(j, id, in->alt, in->n_alt, err);
	if (r >= 0)
		r = grove_journal_pkgs_put(j, id, in->pkgs, in->n_pkgs, err);
	if (r >= 0)
		r = grove_journal_roots_put(j, id, in->roots, in->n_roots, err);
	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	j->writing.txn = id;
	j->writing.alt = in->n_alt != 0;
	j->writing.pkgs = in->n_pkgs != 0;
	*ret_target = target_id;
	*ret_txn = id;
	return 0;
}

/* The intent's write transaction committed: its rows are the log's now. */
static void
intent_logged(struct grove_journal *j, const struct grove_journal_stream *st)
{
	target_registered(j, st->target_id);
	j->logged = j->writing;
	if (j->logged.txn != st->txn)
		j->logged.txn = 0;
}

/* COMMITs the intent's write transaction. An unknown outcome is read back: the row is ours only if
 * it is the one we wrote (the caller holds the target's lock, so no other grove wrote a
 * transaction for this target meanwhile). */
static int
intent_commit(struct grove_journal *j, const struct grove_journal_stream *st,
	      struct grove_error *err)
{
	struct grove_error saved;
	struct txn_state row;
	bool unknown;
	int r;

	r = grove_journal_write_commit(j, &unknown, err, "log transaction in");
	if (r >= 0) {
		intent_logged(j, st);
		return 0;
	}
	if (!unknown)
		return r;
	saved = *err;
	r = txn_state_read(j, st->txn, &row, err);
	if (r < 0)
		return grove_error_prefix(err, "%s; reading it back", saved.msg);
	if (row.found && row.state == GROVE_TXN_INTENT && row.target_id == st->target_id &&
	    row.started == st->started && row.n_ops == (int64_t)st->n_ops &&
	    prefix_matches(row.command_prefix, row.command_null, st->command)) {
		grove_error_clear(err);
		intent_logged(j, st);
		return 0;
	}
	*err = saved;
	return grove_error_prefix(err, "the transaction was not logged");
}

int
grove_journal_begin_intent(struct grove_journal *j, const struct grove_journal_intent *in,
			   int64_t *ret_txn, struct grove_error *err)
{
	struct grove_journal_stream st = { .started = now_seconds(),
					   .command = in->command,
					   .n_ops = in->plan->n_ops };
	struct grove_error local;
	int r;

	if (!err)
		err = &local;
	r = intent_rows(j, in, st.started, &st.target_id, &st.txn, err);
	if (r >= 0)
		r = grove_journal_ops_insert(j, st.txn, 0, in->plan, err);
	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	r = intent_commit(j, &st, err);
	if (r >= 0)
		*ret_txn = st.txn;
	return r;
}

int
grove_journal_stream_open(struct grove_journal *j, const struct grove_journal_intent *in,
			  struct grove_journal_stream *ret, struct grove_error *err)
{
	memset(ret, 0, sizeof(*ret));
	ret->started = now_seconds();
	ret->command = in->command;
	return intent_rows(j, in, ret->started, &ret->target_id, &ret->txn, err);
}

int
grove_journal_stream_ops(struct grove_journal *j, struct grove_journal_stream *st,
			 const struct grove_plan *plan, struct grove_error *err)
{
	int r = grove_journal_ops_insert(j, st->txn, st->n_ops, plan, err);

	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	st->n_ops += plan->n_ops;
	return 0;
}

int
grove_journal_stream_pkgs(struct grove_journal *j, struct grove_journal_stream *st,
			  const struct grove_journal_pkg *pkgs, size_t n, struct grove_error *err)
{
	int r = grove_journal_pkgs_put(j, st->txn, pkgs, n, err);

	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	j->writing.pkgs = j->writing.pkgs || n != 0;
	return 0;
}

int
grove_journal_stream_close(struct grove_journal *j, struct grove_journal_stream *st,
			   struct grove_error *err)
{
	return intent_commit(j, st, err);
}

void
grove_journal_stream_cancel(struct grove_journal *j)
{
	grove_journal_rollback(j);
}

int
grove_journal_finish(struct grove_journal *j, int64_t txn, enum grove_txn_state state,
		     const char *note, struct grove_error *err)
{
	struct grove_error saved, local;
	struct txn_state st;
	bool unknown;
	int rc, r;

	if (!err)
		err = &local;
	if (state != GROVE_TXN_COMMITTED && state != GROVE_TXN_ROLLED_BACK &&
	    state != GROVE_TXN_STUCK)
		return grove_error_set(err, -EINVAL,
				       "finish transaction %" PRId64 ": invalid final state %d",
				       txn, (int)state);
	r = grove_journal_write_begin(j, err, "finish transaction in");
	if (r < 0)
		return r;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = grove_journal_stmt(j, ST_TXN_FINISH, &s, err);
		if (r < 0) {
			grove_journal_rollback(j);
			return r;
		}
		sqlite3_bind_int64(s, 1, txn);
		bind_text(s, 2, state_names[state]);
		bind_text(s, 3, note);
		sqlite3_bind_double(s, 4, now_seconds());
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE) {
			r = grove_journal_fail(j, rc, err, "finish transaction in");
			grove_journal_rollback(j);
			return r;
		}
	}
	if (sqlite3_changes(j->db) != 1) {
		grove_journal_rollback(j);
		r = txn_state_read(j, txn, &st, err);
		if (r < 0)
			return r;
		if (!st.found)
			return grove_error_set(err, -ENOENT,
					       "finish transaction %" PRId64
					       ": no such transaction in journal '%s'",
					       txn, j->name);
		return grove_error_set(
			err, -EINVAL, "finish transaction %" PRId64 ": it is already %s", txn,
			st.state == GROVE_TXN_COMMITTED ? "committed" : "rolled back");
	}
	/* The groups the transaction changes are saved, and its packages' newest rows pointed at
	 * (pkg_latest), by the same SQLite transaction that marks it committed: links, groups and
	 * recorded options commit together. */
	if (state == GROVE_TXN_COMMITTED) {
		bool known = j->logged.txn == txn;

		r = 0;
		if (!known || j->logged.alt)
			r = grove_journal_alt_commit_txn(j, txn, err);
		if (r >= 0 && (!known || j->logged.pkgs))
			r = grove_journal_pkgs_commit_txn(j, txn, err);
		if (r < 0) {
			grove_journal_rollback(j);
			return r;
		}
	}
	r = grove_journal_write_commit(j, &unknown, err, "finish transaction in");
	if (r >= 0 || !unknown)
		return r;
	saved = *err;
	r = txn_state_read(j, txn, &st, err);
	if (r < 0)
		return grove_error_prefix(err, "%s; reading it back", saved.msg);
	if (st.found && st.state == state && prefix_matches(st.note_prefix, st.note_null, note)) {
		grove_error_clear(err);
		return 0;
	}
	*err = saved;
	return grove_error_prefix(err, "transaction %" PRId64 " was not marked %s", txn,
				  state_names[state]);
}

int
grove_journal_unfinished(struct grove_journal *j, int64_t target_id, int64_t *ret_txn,
			 struct grove_error *err)
{
	return grove_journal_query_id(j, ST_UNFINISHED, target_id, ret_txn, err);
}

int
grove_journal_last_undoable(struct grove_journal *j, int64_t target_id, int64_t *ret_txn,
			    struct grove_error *err)
{
	return grove_journal_query_id(j, ST_LAST_UNDOABLE, target_id, ret_txn, err);
}

void
grove_txn_release(struct grove_txn *txn)
{
	if (!txn)
		return;
	free(txn->command);
	free(txn->stow_dir);
	free(txn->note);
	free(txn->sudo_user);
	txn->command = txn->stow_dir = txn->note = txn->sudo_user = NULL;
}

void
grove_txns_free(struct grove_txn *txns, size_t n)
{
	if (!txns)
		return;
	for (size_t i = 0; i < n; i++)
		grove_txn_release(&txns[i]);
	free(txns);
}

/* Fills t from a row of TXN_COLUMNS. */
static int
txn_from_row(struct grove_journal *j, sqlite3_stmt *s, struct grove_txn *t, struct grove_error *err)
{
	struct grove_txn x = { 0 };

	x.id = sqlite3_column_int64(s, 0);
	x.target_id = sqlite3_column_int64(s, 1);
	if (parse_state((const char *)sqlite3_column_text(s, 2), &x.state) < 0)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s': transaction %" PRId64 " has an unknown state",
				       j->name, x.id);
	/* The sum of its chunks' counts: each is checked against its body when read, and a sum
	 * no count of 1 or more adds up to is refused here. */
	if (sqlite3_column_int64(s, 9) < 0)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s': transaction %" PRId64 " has a bad op count",
				       j->name, x.id);
	if (column_dup(s, 3, &x.command) < 0 || column_dup(s, 4, &x.stow_dir) < 0 ||
	    column_dup(s, 5, &x.note) < 0) {
		grove_txn_release(&x);
		return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
	}
	x.undoes = sqlite3_column_int64(s, 6);
	x.started = sqlite3_column_double(s, 7);
	x.finished = sqlite3_column_double(s, 8);
	x.n_ops = (size_t)sqlite3_column_int64(s, 9);
	x.stow_known = sqlite3_column_type(s, 10) == SQLITE_INTEGER &&
		       sqlite3_column_type(s, 11) == SQLITE_INTEGER &&
		       sqlite3_column_type(s, 12) == SQLITE_INTEGER;
	x.stow_dev = sqlite3_column_int64(s, 10);
	x.stow_ino = sqlite3_column_int64(s, 11);
	x.stow_born = sqlite3_column_int64(s, 12);
	x.uid_known = sqlite3_column_type(s, 13) == SQLITE_INTEGER;
	x.uid = sqlite3_column_int64(s, 13);
	if (column_dup(s, 14, &x.sudo_user) < 0) {
		grove_txn_release(&x);
		return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
	}
	*t = x;
	return 0;
}

int
grove_journal_get(struct grove_journal *j, int64_t txn, struct grove_txn *ret,
		  struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, ST_TXN_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return grove_error_set(err, -ENOENT, "read journal '%s': no transaction %" PRId64,
				       j->name, txn);
	if (rc != SQLITE_ROW)
		return grove_journal_fail(j, rc, err, "read");
	return txn_from_row(j, s, ret, err);
}

int
grove_journal_list(struct grove_journal *j, int64_t target_id, size_t limit,
		   struct grove_txn **ret_txns, size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_txn *txns = NULL;
	size_t n = 0, cap = 0;
	int rc, r = grove_journal_stmt(j, ST_LIST, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	sqlite3_bind_int64(s, 2, limit ? (int64_t)limit : -1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct grove_txn *nt = realloc(txns, ncap * sizeof(*txns));

			if (!nt) {
				r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
				goto fail;
			}
			txns = nt;
			cap = ncap;
		}
		r = txn_from_row(j, s, &txns[n], err);
		if (r < 0)
			goto fail;
		n++;
	}
	if (rc != SQLITE_DONE) {
		r = grove_journal_fail(j, rc, err, "read");
		goto fail;
	}
	*ret_txns = txns;
	*ret_n = n;
	return 0;
fail:
	grove_txns_free(txns, n);
	return r;
}

int
grove_journal_stow_used(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			int64_t dev, int64_t ino, int64_t born, bool *ret, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, ST_STOW_USED, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	sqlite3_bind_int64(s, 3, dev);
	sqlite3_bind_int64(s, 4, ino);
	sqlite3_bind_int64(s, 5, born);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return grove_journal_fail(j, rc, err, "read");
	*ret = rc == SQLITE_ROW;
	return 0;
}
