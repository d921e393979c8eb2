/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's targets, transactions (intent, finish, history) and ownership queries. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "grove/tree.h"
#include "journal_int.h"
#include "journal_owned.h"
#include "util.h"

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

/* ---- op chunks (schema 10, docs/journal.md "Ops") ---- */

/*
 * A chunk's body is its ops one after the other, each:
 *
 *   kind (1 byte: grove_op_kind, MKDIR 0 to ADOPT 7), flags (1 byte: CHUNK_*),
 *   path, then old_text, text, stow_path and package where the flags say they are present,
 *   each string its bytes and a NUL (none holds a NUL; each is shorter than PATH_MAX).
 *
 * The strings read back point into the body, NUL-terminated in it: nothing is copied but what
 * the caller keeps.
 */
#define CHUNK_OLD_TEXT  0x01u
#define CHUNK_TEXT      0x02u
#define CHUNK_STOW_PATH 0x04u
#define CHUNK_PACKAGE   0x08u
#define CHUNK_RECORDED  0x10u
#define CHUNK_FLAGS     0x1fu
/* The kind the migration from schema 9 writes for a row it cannot represent (a field holding a
 * NUL byte or not text, an unknown kind, a bad recorded mark): a reader refuses it, as it refused
 * the row. */
#define CHUNK_KIND_BAD 0xffu

_Static_assert(GROVE_OP_MKDIR == 0 && GROVE_OP_LINK == 1 && GROVE_OP_UNLINK == 2 &&
		       GROVE_OP_RELINK == 3 && GROVE_OP_RMDIR == 4 && GROVE_OP_UNFOLD == 5 &&
		       GROVE_OP_FOLD == 6 && GROVE_OP_ADOPT == 7,
	       "a chunk's kind byte is grove_op_kind's value: the log's format fixes them");

/* A chunk being written: its body so far and how many ops it holds. */
struct chunk_out {
	struct grove_journal *j;
	sqlite3_stmt *s; /* ST_OP_CHUNK_PUT, its reset the caller's */
	int64_t txn;
	size_t first, n; /* the number of its first op, and its ops */
	unsigned char *body;
	size_t len, cap;
};

static int
chunk_reserve(struct chunk_out *c, size_t more)
{
	if (c->cap - c->len < more) {
		size_t ncap = c->cap ? c->cap : OPS_CHUNK_BYTES + 4096;
		unsigned char *nb;

		while (ncap - c->len < more)
			ncap *= 2;
		nb = realloc(c->body, ncap);
		if (!nb)
			return -ENOMEM;
		c->body = nb;
		c->cap = ncap;
	}
	return 0;
}

/* Writes the chunk held (if any) as a row, and starts the next one after it. */
static int
chunk_flush(struct chunk_out *c, struct grove_error *err)
{
	int rc;

	if (!c->n)
		return 0;
	sqlite3_bind_int64(c->s, 1, c->txn);
	sqlite3_bind_int64(c->s, 2, (int64_t)c->first);
	sqlite3_bind_int64(c->s, 3, (int64_t)c->n);
	sqlite3_bind_blob(c->s, 4, c->body, (int)c->len, SQLITE_STATIC);
	rc = sqlite3_step(c->s);
	sqlite3_reset(c->s);
	if (rc != SQLITE_DONE)
		return grove_journal_fail(c->j, rc, err, "log transaction in");
	c->first += c->n;
	c->n = 0;
	c->len = 0;
	return 0;
}

/* Appends an op (kind byte, flags, then the strings of lens[i] bytes present: path, old_text,
 * text, stow_path, package), writing the chunk first when it is full. */
static int
chunk_add(struct chunk_out *c, unsigned kind, unsigned flags, const char *const str[5],
	  const size_t lens[5], struct grove_error *err)
{
	size_t need = 2;
	unsigned char *p;
	int r;

	if (c->n >= OPS_CHUNK_OPS || c->len >= OPS_CHUNK_BYTES) {
		r = chunk_flush(c, err);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < 5; i++)
		if (str[i])
			need += lens[i] + 1;
	if (chunk_reserve(c, need) < 0)
		return grove_error_errno(err, -ENOMEM, "log transaction in '%s'", c->j->name);
	p = c->body + c->len;
	*p++ = (unsigned char)kind;
	*p++ = (unsigned char)flags;
	for (int i = 0; i < 5; i++)
		if (str[i]) {
			memcpy(p, str[i], lens[i]);
			p += lens[i];
			*p++ = 0;
		}
	c->len = (size_t)(p - c->body);
	c->n++;
	return 0;
}

static int
chunk_out_open(struct grove_journal *j, int64_t txn, size_t first, struct chunk_out *ret,
	       struct grove_error *err)
{
	memset(ret, 0, sizeof(*ret));
	ret->j = j;
	ret->txn = txn;
	ret->first = first;
	return grove_journal_stmt(j, ST_OP_CHUNK_PUT, &ret->s, err);
}

static void
chunk_out_close(struct chunk_out *c)
{
	grove_journal_stmt_resetp(&c->s);
	free(c->body);
	c->body = NULL;
}

/* Logs the plan's ops as chunks, numbered from base (a streamed plan's batches follow on). */
static int
ops_insert(struct grove_journal *j, int64_t txn, size_t base, const struct grove_plan *plan,
	   struct grove_error *err)
{
	struct chunk_out c;
	int r;

	if (!plan->n_ops)
		return 0;
	r = chunk_out_open(j, txn, base, &c, err);
	for (size_t i = 0; i < plan->n_ops && r >= 0; i++) {
		const struct grove_op *op = &plan->ops[i];
		const char *const str[5] = { op->path, op->old_text, op->text, op->stow_path,
					     op->package };
		size_t lens[5] = { 0 };
		unsigned flags = op->recorded ? CHUNK_RECORDED : 0;

		if ((unsigned)op->kind > GROVE_OP_ADOPT || !op->path) {
			r = grove_error_set(
				err, -GROVE_E_INTERNAL,
				"log transaction in '%s': op %zu has no kind or no path", j->name,
				i);
			break;
		}
		for (int k = 0; k < 5; k++)
			if (str[k]) {
				lens[k] = strlen(str[k]);
				if (k)
					flags |= 1u << (k - 1);
			}
		r = chunk_add(&c, (unsigned)op->kind, flags, str, lens, err);
	}
	if (r >= 0)
		r = chunk_flush(&c, err);
	chunk_out_close(&c);
	return r;
}

/* Schema 9's ops rows, in order, become chunks (what ops_insert would have written for them);
 * rows of no transaction (an orphan SQLite's foreign keys would have refused) are dropped. A row
 * no reader accepted (see CHUNK_KIND_BAD) is written as one no reader accepts. Seqs are
 * renumbered from 0: they only ever ordered a transaction's ops. */
int
grove_journal_ops_to_chunks(struct grove_journal *j, struct grove_error *err)
{
	static const char *const kinds[] = { "mkdir", "link",   "unlink", "relink",
					     "rmdir", "unfold", "fold",   "adopt" };
	sqlite3_stmt *s = NULL;
	struct chunk_out c = { 0 };
	int rc, r;

	rc = sqlite3_prepare_v2(j->db,
				"SELECT o.txn_id, o.kind, o.path, o.old_text, o.text, o.stow_path,"
				" o.package, o.recorded FROM ops o JOIN txns t ON t.id = o.txn_id"
				" ORDER BY o.txn_id, o.seq",
				-1, &s, NULL);
	if (rc != SQLITE_OK)
		return grove_journal_fail(j, rc, err, "migrate");
	r = chunk_out_open(j, 0, 0, &c, err);
	while (r >= 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t txn = sqlite3_column_int64(s, 0);
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		const char *str[5];
		size_t lens[5] = { 0 };
		unsigned k = CHUNK_KIND_BAD, flags = 0;

		if (txn != c.txn) {
			r = chunk_flush(&c, err);
			if (r < 0)
				break;
			c.txn = txn;
			c.first = 0;
		}
		for (unsigned i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (strcmp(kind, kinds[i]) == 0)
				k = i;
		for (int i = 0; i < 5; i++) {
			str[i] = (const char *)sqlite3_column_text(s, 2 + i);
			if (!str[i]) {
				if (i == 0 || sqlite3_column_type(s, 2 + i) != SQLITE_NULL)
					k = CHUNK_KIND_BAD;
				continue;
			}
			lens[i] = strlen(str[i]);
			if (lens[i] != (size_t)sqlite3_column_bytes(s, 2 + i) ||
			    lens[i] >= PATH_MAX)
				k = CHUNK_KIND_BAD;
			if (i)
				flags |= 1u << (i - 1);
		}
		if (sqlite3_column_type(s, 7) != SQLITE_NULL) {
			if (sqlite3_column_type(s, 7) != SQLITE_INTEGER ||
			    sqlite3_column_int64(s, 7) != 1)
				k = CHUNK_KIND_BAD;
			flags |= CHUNK_RECORDED;
		}
		if (!str[0]) {
			str[0] = "";
			lens[0] = 0;
		}
		r = chunk_add(&c, k, flags, str, lens, err);
	}
	if (r >= 0 && rc != SQLITE_DONE)
		r = grove_journal_fail(j, rc, err, "migrate");
	if (r >= 0)
		r = chunk_flush(&c, err);
	chunk_out_close(&c);
	sqlite3_finalize(s);
	if (r >= 0)
		r = grove_journal_exec_sql(j, "DROP TABLE ops", err, "migrate");
	return r;
}

/* An op read from a chunk: its strings point into the chunk's body. */
struct chunk_op {
	enum grove_op_kind kind;
	bool recorded;
	const char *path, *old_text, *text, *stow_path, *package;
};

/* A chunk being read: the row's first op number, count and body. */
struct chunk_in {
	int64_t first, n;
	const unsigned char *body;
	size_t len, pos;
};

/* Reads the chunk row's columns from col (first_seq, n, body); returns why it is refused, or
 * NULL. */
static const char *
chunk_in_open(sqlite3_stmt *s, int col, struct chunk_in *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (sqlite3_column_type(s, col) != SQLITE_INTEGER ||
	    sqlite3_column_type(s, col + 1) != SQLITE_INTEGER)
		return "a chunk's first op or count is not a number";
	ret->first = sqlite3_column_int64(s, col);
	ret->n = sqlite3_column_int64(s, col + 1);
	if (ret->first < 0 || ret->first > INT32_MAX || ret->n < 1 || ret->n > OPS_CHUNK_OPS)
		return "a chunk's first op or count is out of range";
	if (sqlite3_column_type(s, col + 2) != SQLITE_BLOB)
		return "a chunk's body is not a blob";
	ret->body = sqlite3_column_blob(s, col + 2);
	ret->len = (size_t)sqlite3_column_bytes(s, col + 2);
	if (!ret->body)
		return "a chunk's body is empty";
	return NULL;
}

/* One string of the body at pos: NUL-terminated there, shorter than PATH_MAX. */
static const char *
chunk_str(struct chunk_in *c, const char **ret)
{
	size_t room = c->len - c->pos;
	const unsigned char *z = memchr(c->body + c->pos, 0, room < PATH_MAX ? room : PATH_MAX);

	if (!z)
		return room < PATH_MAX ? "a chunk's body ends inside an op"
				       : "a field of an op is too long";
	*ret = (const char *)c->body + c->pos;
	c->pos = (size_t)(z - c->body) + 1;
	return NULL;
}

/* The next op of the chunk; returns why it is refused, or NULL. */
static const char *
chunk_next(struct chunk_in *c, struct chunk_op *op)
{
	const char **str[5] = { &op->path, &op->old_text, &op->text, &op->stow_path, &op->package };
	unsigned kind, flags;

	if (c->len - c->pos < 2)
		return "a chunk's body ends inside an op";
	kind = c->body[c->pos];
	flags = c->body[c->pos + 1];
	c->pos += 2;
	if (kind > GROVE_OP_ADOPT)
		return "an op of unknown kind";
	if (flags & ~CHUNK_FLAGS)
		return "an op with unknown flags";
	op->kind = (enum grove_op_kind)kind;
	op->recorded = flags & CHUNK_RECORDED;
	for (int i = 0; i < 5; i++) {
		*str[i] = NULL;
		if (i == 0 || flags & (1u << (i - 1))) {
			const char *why = chunk_str(c, str[i]);

			if (why)
				return why;
		}
	}
	/* Only a LINK or an UNLINK describes a link already there. */
	if (op->recorded && kind != GROVE_OP_LINK && kind != GROVE_OP_UNLINK)
		return "a recorded op that is not a link's";
	return NULL;
}

/* After the chunk's n ops: the body must end there. */
static const char *
chunk_end(const struct chunk_in *c)
{
	return c->pos == c->len ? NULL : "a chunk's body holds more than its count of ops";
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
		r = ops_insert(j, st.txn, 0, in->plan, err);
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
	int r = ops_insert(j, st->txn, st->n_ops, plan, err);

	if (r < 0) {
		grove_journal_rollback(j);
		return r;
	}
	st->n_ops += plan->n_ops;
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
	txn->command = txn->stow_dir = txn->note = NULL;
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

/*
 * Checks an op read back before anything uses it; returns why it is refused, or NULL. Paths are
 * relative to the target (or stow dir) and stay beneath it lexically, so no op can name anything
 * outside its root, whatever the filesystem would do with a ".." (DESIGN.md invariant 8). (Its
 * fields hold no NUL byte and are shorter than PATH_MAX: chunk_next read them so.)
 */
static const char *
op_check(const struct chunk_op *op)
{
	if (!grove_path_is_clean_relative(op->path))
		return "its path is not a clean relative path beneath the target";
	if (grove_path_slashes(op->path) >= GROVE_TREE_MAX_DEPTH)
		return "its path is deeper than grove supports";
	if (op->stow_path && !grove_path_is_clean_relative(op->stow_path))
		return "its stow path is not a clean relative path beneath the stow dir";
	if (op->package && !grove_path_is_name(op->package))
		return "its package is not a single name";
	return NULL;
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

int
grove_journal_ops(struct grove_journal *j, int64_t txn, struct grove_plan *plan,
		  struct grove_error *err)
{
	return grove_journal_ops_range(j, txn, 0, 0, plan, err);
}

/* Frees plan's ops from n0 on: the caller's plan as it was. */
static void
plan_cut(struct grove_plan *plan, size_t n0)
{
	for (size_t i = n0; i < plan->n_ops; i++) {
		struct grove_op *op = &plan->ops[i];

		free(op->path);
		free(op->old_text);
		free(op->text);
		free(op->stow_path);
		free(op->package);
	}
	plan->n_ops = n0;
}

/*
 * The chunks from the one holding op first on, each checked whole (its count, its body, and that
 * it starts where the one before ended: no gap, no overlap); the ops from first on, at most max,
 * each checked (op_check) and added to plan.
 */
int
grove_journal_ops_range(struct grove_journal *j, int64_t txn, size_t first, size_t max,
			struct grove_plan *plan, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	size_t n0 = plan->n_ops, want = max ? max : SIZE_MAX;
	int64_t next = -1; /* where the next chunk must start; -1: at or before first */
	const char *why = NULL;
	size_t at = 0;
	int rc = SQLITE_DONE, r = grove_journal_stmt(j, ST_OPS_GET, &s, err);

	if (r < 0)
		return r;
	if (first > INT32_MAX)
		return 0;
	sqlite3_bind_int64(s, 1, txn);
	sqlite3_bind_int64(s, 2, (int64_t)first);
	while (plan->n_ops - n0 < want && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct chunk_in c;

		why = chunk_in_open(s, 0, &c);
		at = c.first > 0 ? (size_t)c.first : 0;
		if (!why && (next < 0 ? c.first > (int64_t)first : c.first != next))
			why = "its chunks leave a gap or overlap";
		for (int64_t i = 0; !why && i < c.n; i++, at++) {
			struct chunk_op op;

			why = chunk_next(&c, &op);
			if (why || at < first || plan->n_ops - n0 >= want)
				continue;
			why = op_check(&op);
			if (why)
				break;
			r = grove_plan_add_op(plan, op.kind, op.path, op.old_text, op.text,
					      op.stow_path, op.package);
			if (r < 0) {
				r = grove_error_errno(err, r, "read journal '%s'", j->name);
				goto fail;
			}
			plan->ops[plan->n_ops - 1].recorded = op.recorded;
		}
		if (!why)
			why = chunk_end(&c);
		if (why) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %" PRId64 " op %zu: %s",
					    j->name, txn, at, why);
			goto fail;
		}
		next = c.first + c.n;
	}
	if (plan->n_ops - n0 < want && rc != SQLITE_DONE) {
		r = grove_journal_fail(j, rc, err, "read");
		goto fail;
	}
	return 0;
fail:
	plan_cut(plan, n0);
	return r;
}

/* ---- ownership ---- */

int
grove_journal_owned(struct grove_journal *j, int64_t target_id, struct grove_owned **ret,
		    size_t *ret_n, struct grove_error *err)
{
	return grove_journal_owned_before(j, target_id, INT64_MAX, ret, ret_n, err);
}

int
grove_journal_owned_before(struct grove_journal *j, int64_t target_id, int64_t before,
			   struct grove_owned **ret, size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_owned_replay *m = NULL;
	int64_t txn = 0, next = 0;
	int rc, r = grove_journal_stmt(j, ST_OWNED_OPS, &s, err);

	if (r < 0)
		return r;
	m = grove_owned_replay_new();
	if (!m)
		return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
	sqlite3_bind_int64(s, 1, target_id);
	sqlite3_bind_int64(s, 2, before);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		const char *why;
		struct chunk_in c;

		why = chunk_in_open(s, 1, &c);
		if (id != txn) {
			txn = id;
			next = 0;
		}
		if (!why && c.first != next)
			why = "its chunks leave a gap or overlap";
		for (int64_t i = 0; !why && i < c.n; i++) {
			struct chunk_op op;

			why = chunk_next(&c, &op);
			if (!why && (!grove_path_is_clean_relative(op.path) ||
				     (op.package && !grove_path_is_name(op.package))))
				why = "its path is not clean and relative, or its package not a "
				      "single name";
			if (why)
				break;
			r = grove_owned_replay_op(m, op.kind, op.path, op.text, op.package);
			if (r < 0) {
				r = grove_error_errno(err, r, "read journal '%s'", j->name);
				goto out;
			}
		}
		if (!why)
			why = chunk_end(&c);
		if (why) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %" PRId64
					    " of target %" PRId64 ", ops from %" PRId64 ": %s",
					    j->name, txn, target_id, c.first, why);
			goto out;
		}
		next = c.first + c.n;
	}
	if (rc != SQLITE_DONE) {
		r = grove_journal_fail(j, rc, err, "read");
		goto out;
	}
	r = grove_owned_replay_take(m, ret, ret_n);
	if (r < 0)
		r = grove_error_errno(err, r, "read journal '%s'", j->name);
out:
	grove_owned_replay_free(m);
	return r;
}
