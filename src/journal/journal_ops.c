/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A transaction's ops in the log (schema 10, docs/journal.md "Ops"): packed in chunks as they are
 * logged, read back and checked chunk by chunk (a transaction's ops, a range of them, and every
 * committed op of a target for its ownership), and schema 9's rows turned into chunks. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "grove/plan.h"
#include "plan/tree.h"
#include "journal_int.h"
#include "journal_owned.h"
#include "base/util.h"

#include "banned.h" /* last */

/* ---- writing ---- */

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
	return grove_bytes_reserve(&c->body, &c->cap, c->len, more, OPS_CHUNK_BYTES + 4096);
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

int
grove_journal_ops_insert(struct grove_journal *j, int64_t txn, size_t base,
			 const struct grove_plan *plan, struct grove_error *err)
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

/* Schema 9's ops rows, in order, become chunks (what grove_journal_ops_insert would have written
 * for them); rows of no transaction (an orphan SQLite's foreign keys would have refused) are
 * dropped. A row no reader accepted (see CHUNK_KIND_BAD) is written as one no reader accepts. Seqs
 * are renumbered from 0: they only ever ordered a transaction's ops. */
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

/* ---- reading ---- */

const char *
grove_journal_chunk_open(sqlite3_stmt *s, int col, struct grove_chunk_in *ret)
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
chunk_str(struct grove_chunk_in *c, const char **ret)
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

const char *
grove_journal_chunk_next(struct grove_chunk_in *c, struct grove_chunk_op *op)
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

const char *
grove_journal_chunk_end(const struct grove_chunk_in *c)
{
	return c->pos == c->len ? NULL : "a chunk's body holds more than its count of ops";
}

const char *
grove_journal_owned_op_check(const struct grove_chunk_op *op)
{
	if (!grove_path_is_clean_relative(op->path) ||
	    (op->package && !grove_path_is_package(op->package)))
		return "its path is not clean and relative, or its package not a single name";
	return NULL;
}

const char *
grove_journal_op_check(const struct grove_chunk_op *op)
{
	if (!grove_path_is_clean_relative(op->path))
		return "its path is not a clean relative path beneath the target";
	if (grove_path_slashes(op->path) >= GROVE_TREE_MAX_DEPTH)
		return "its path is deeper than grove supports";
	if (op->stow_path && !grove_path_is_clean_relative(op->stow_path))
		return "its stow path is not a clean relative path beneath the stow dir";
	if (op->package && !grove_path_is_package(op->package))
		return "its package is not a single name";
	return NULL;
}

int
grove_journal_ops(struct grove_journal *j, int64_t txn, struct grove_plan *plan,
		  struct grove_error *err)
{
	return grove_journal_ops_range(j, txn, 0, 0, plan, err);
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
		struct grove_chunk_in c;

		why = grove_journal_chunk_open(s, 0, &c);
		at = c.first > 0 ? (size_t)c.first : 0;
		if (!why && (next < 0 ? c.first > (int64_t)first : c.first != next))
			why = "its chunks leave a gap or overlap";
		for (int64_t i = 0; !why && i < c.n; i++, at++) {
			struct grove_chunk_op op;

			why = grove_journal_chunk_next(&c, &op);
			if (why || at < first || plan->n_ops - n0 >= want)
				continue;
			why = grove_journal_op_check(&op);
			if (why)
				break;
			r = grove_plan_add_op_packed(plan, op.kind, op.path, op.old_text, op.text,
						     op.stow_path, op.package);
			if (r < 0) {
				r = grove_error_errno(err, r, "read journal '%s'", j->name);
				goto fail;
			}
			plan->ops[plan->n_ops - 1].recorded = op.recorded;
		}
		if (!why)
			why = grove_journal_chunk_end(&c);
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
	grove_plan_truncate(plan, n0);
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
		struct grove_chunk_in c;

		why = grove_journal_chunk_open(s, 1, &c);
		if (id != txn) {
			txn = id;
			next = 0;
		}
		if (!why && c.first != next)
			why = "its chunks leave a gap or overlap";
		for (int64_t i = 0; !why && i < c.n; i++) {
			struct grove_chunk_op op;

			why = grove_journal_chunk_next(&c, &op);
			if (!why)
				why = grove_journal_owned_op_check(&op);
			if (why)
				break;
			r = grove_owned_replay_op(m, op.kind, op.path, op.text, op.package);
			if (r < 0) {
				r = grove_error_errno(err, r, "read journal '%s'", j->name);
				goto out;
			}
		}
		if (!why)
			why = grove_journal_chunk_end(&c);
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
