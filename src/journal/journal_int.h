/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to the journal's files: the connection, its prepared statements and the helpers
 * every part of the journal (schema, transactions, alternatives rows) runs them with. */
#ifndef GROVE_JOURNAL_INT_H
#define GROVE_JOURNAL_INT_H

#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "grove/error.h"
#include "grove/journal.h"

/*
 * A transaction's ops are logged as chunks (schema 10, docs/journal.md "Ops"): one op_chunks row
 * holds up to OPS_CHUNK_OPS consecutive ops, packed in its body, and a chunk is closed once its
 * body reaches OPS_CHUNK_BYTES. A row costs a statement run and a b-tree insert whatever its size:
 * a 1,200-op plan is 2 rows (it was 1,200, or 38 statements of 32 rows each, in schema 9).
 */
#define OPS_CHUNK_OPS   1024
#define OPS_CHUNK_BYTES ((size_t)16 * 1024)

/* A target's latest committed package state (schema 11, docs/journal.md "Packages") is kept in
 * chunks of names: one whose body grows past PKGS_STATE_BYTES is cut in even pieces when it is
 * written, so a commit that changes one package rewrites one small row (a b-tree leaf's cell stays
 * under SQLite's ~1,000-byte local payload limit for 4 KiB pages: no overflow pages) whatever the
 * count of packages. */
#define PKGS_STATE_BYTES 768

/* An op read from a chunk: its strings point into the chunk's body. */
struct grove_chunk_op {
	enum grove_op_kind kind;
	bool recorded;
	const char *path, *old_text, *text, *stow_path, *package;
};

/* A chunk being read: the row's first op number, count and body. */
struct grove_chunk_in {
	int64_t first, n;
	const unsigned char *body;
	size_t len, pos;
};

/* journal_ops.c: reads the chunk row's columns of s from col (first_seq, n, body) into ret;
 * returns why it is refused, or NULL. The body stays s's (valid until its next step). */
const char *grove_journal_chunk_open(sqlite3_stmt *s, int col, struct grove_chunk_in *ret);
/* The next op of the chunk; returns why it is refused, or NULL. */
const char *grove_journal_chunk_next(struct grove_chunk_in *c, struct grove_chunk_op *op);
/* After the chunk's n ops: the body must end there (NULL), else why not. */
const char *grove_journal_chunk_end(const struct grove_chunk_in *c);
/*
 * Checks an op read back before anything uses it; returns why it is refused, or NULL. Paths are
 * relative to the target (or stow dir) and stay beneath it lexically, so no op can name anything
 * outside its root, whatever the filesystem would do with a ".." (DESIGN.md invariant 8). (Its
 * fields hold no NUL byte and are shorter than PATH_MAX: grove_journal_chunk_next read them so.)
 */
const char *grove_journal_op_check(const struct grove_chunk_op *op);
/* The lighter check of an op the ownership replays read (journal_owned*.c): a clean relative path
 * and a package that is one name (or ".", the stow dir itself); returns why not, or NULL. */
const char *grove_journal_owned_op_check(const struct grove_chunk_op *op);

/* The statements grove runs, prepared once per connection and reused. */
enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_TARGET_GET,
	ST_TARGET_PUT,
	ST_TARGET_BORN,
	ST_TXN_INSERT,
	ST_TXN_EXISTS,
	ST_STOW_USED,
	ST_OP_CHUNK_PUT,
	ST_TXN_FINISH,
	ST_TXN_STATE,
	ST_TXN_GET,
	ST_OPS_GET,
	ST_UNFINISHED,
	ST_LIST,
	ST_LAST_UNDOABLE,
	ST_OWNED_OPS,
	ST_ALT_DIR_GET,
	ST_ALT_DIR_PUT,
	ST_ALT_DIR_ADMIN,
	ST_ALT_STATES,
	ST_ALT_STATE_GET,
	ST_ALT_STATE_DEL,
	ST_ALT_STATE_PUT,
	ST_ALT_TXN_PUT,
	ST_ALT_TXN_GET,
	ST_PKG_PUT,
	ST_PKG_TXN_GET,
	ST_PKG_TXN_TARGET,
	ST_PKG_RECORDED,
	ST_PKG_STATE_GET,
	ST_PKG_STATE_PUT,
	ST_ROOTS_PUT,
	ST_ROOTS_GET,
	ST_ROOT_TXNS,
	ST_TARGETS,
	ST_TARGET_STOWS,
	ST_COUNT,
};

struct grove_journal {
	sqlite3 *db;
	char *name;      /* "<state dir>/grove.db", for messages */
	int dirfd;       /* our own dup of the held state dir's fd */
	char fdpath[96]; /* "/proc/self/fd/<dirfd>/grove.db", what sqlite opens */
	int busy_ms;
	bool readonly;  /* GROVE_JOURNAL_READONLY: nothing is made or written */
	bool in_memory; /* GROVE_JOURNAL_ABSENT_EMPTY found no journal: an empty one in memory */
	bool fk_off;    /* foreign_keys off since grove_journal_write_begin_unchecked */
	sqlite3_stmt *stmts[ST_COUNT];
	/* What this connection's intent logged besides ops: `writing` while its write transaction
	 * is open, `logged` once it committed. The commit of that transaction then skips reading
	 * back alternatives groups or moving package pointers it knows it has none of (each a
	 * statement to prepare and run on every command). txn 0: none known. */
	struct grove_journal_logged {
		int64_t txn;
		bool alt, pkgs;
	} writing, logged;
	/* A target grove_journal_target_deferred found unknown: registered by the
	 * next grove_journal_begin with target_id 0, inside that transaction. One
	 * it found under another path, or in a row from before birth times
	 * (stale): that row is brought up to date by the next grove_journal_begin
	 * for it, inside that transaction; a reader writes nothing. */
	struct {
		bool pending, stale;
		char *path;
		int64_t dev, ino, born;
		int64_t id; /* once registered */
	} target;
};

static inline void
grove_journal_stmt_resetp(sqlite3_stmt **s)
{
	if (*s) {
		sqlite3_reset(*s);
		sqlite3_clear_bindings(*s);
	}
}

/* A cached statement, reset when the variable leaves scope. */
#define cleanup_stmt __attribute__((cleanup(grove_journal_stmt_resetp)))

/* Binds a string or NULL; SQLITE_STATIC: every caller steps before the string goes away. */
static inline void
bind_text(sqlite3_stmt *s, int i, const char *text)
{
	sqlite3_bind_text(s, i, text, -1, SQLITE_STATIC);
}

/* Copies column i (NULL stays NULL). */
static inline int
column_dup(sqlite3_stmt *s, int i, char **ret)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	*ret = NULL;
	if (!t)
		return sqlite3_column_type(s, i) == SQLITE_NULL ? 0 : -ENOMEM;
	*ret = strdup((const char *)t);
	return *ret ? 0 : -ENOMEM;
}

/* Fills err for a failed sqlite call on j's connection and returns the code. */
int grove_journal_fail(struct grove_journal *j, int rc, struct grove_error *err, const char *what);

/* The statement id, prepared on first use and cached; reset it with cleanup_stmt. */
int grove_journal_stmt(struct grove_journal *j, enum stmt_id id, sqlite3_stmt **ret,
		       struct grove_error *err);

/* Runs a statement that returns nothing. */
int grove_journal_stmt_run(struct grove_journal *j, enum stmt_id id, struct grove_error *err,
			   const char *what);

/* Runs a query that yields one integer (or none: *ret = 0), binding ?1 to arg. */
int grove_journal_query_id(struct grove_journal *j, enum stmt_id id, int64_t arg, int64_t *ret,
			   struct grove_error *err);

/* Runs constant SQL (pragmas, schema steps: nothing from outside). */
int grove_journal_exec_sql(struct grove_journal *j, const char *sql, struct grove_error *err,
			   const char *what);

/* Write transactions: BEGIN IMMEDIATE; ROLLBACK if one is open; COMMIT, which on an unknown
 * outcome sets *ret_unknown and reopens the connection for the caller to read back. */
int grove_journal_write_begin(struct grove_journal *j, struct grove_error *err, const char *what);
/* BEGIN IMMEDIATE with SQLite's foreign-key checks off, for rows whose references the caller
 * writes in the same transaction or checks itself (SQLite can only switch them outside a
 * transaction); the next grove_journal_write_begin switches them on again. */
int grove_journal_write_begin_unchecked(struct grove_journal *j, struct grove_error *err,
					const char *what);
void grove_journal_rollback(struct grove_journal *j);
int grove_journal_write_commit(struct grove_journal *j, bool *ret_unknown, struct grove_error *err,
			       const char *what);

/* journal.c: fills the empty file name in the state dir dirfd with a new log (the schema, its
 * application_id and user_version, synced) and closes it again; db names the log in messages. */
int grove_journal_fill(int dirfd, const char *name, const char *db, struct grove_error *err);

/* journal_create.c: makes the state dir dirfd's log (docs/journal.md, "How the log is made"):
 * filled under a temporary name GROVE_JOURNAL_NEW_PREFIX..., made with mode less the umask, then
 * named grove.db unless another grove named its own so first (then that one is the log). The
 * temporaries creators killed on the way left are removed. db names the log in messages. */
#define GROVE_JOURNAL_NEW_PREFIX ".grove.db.NEW-"
int grove_journal_create(int dirfd, const char *db, mode_t mode, struct grove_error *err);

/* journal_schema.c: 0 current, 1 needs migrating, or an error for a file grove must not
 * touch; and the migration to GROVE_JOURNAL_VERSION in one write transaction. */
int grove_journal_schema_check(struct grove_journal *j, int64_t *ret_version,
			       struct grove_error *err);
int grove_journal_schema_migrate(struct grove_journal *j, struct grove_error *err);

/* journal_ops.c: logs the plan's ops as chunks numbered from base (a streamed plan's batches follow
 * on), inside the caller's write transaction. */
int grove_journal_ops_insert(struct grove_journal *j, int64_t txn, size_t base,
			     const struct grove_plan *plan, struct grove_error *err);

/* journal_ops.c: schema 9's ops rows as schema 10's chunks (the step after migrations[9]'s SQL,
 * inside the migration's transaction); drops the ops table. */
int grove_journal_ops_to_chunks(struct grove_journal *j, struct grove_error *err);

/* journal_vfs.c: the name of the held-dir VFS, registered on first use; NULL if sqlite
 * refused it. */
const char *grove_journal_vfs(void);

/* journal_alt.c: logs the groups a transaction changes (inside the caller's write
 * transaction), and saves the after states of a committing transaction's groups. */
int grove_journal_alt_changes_put(struct grove_journal *j, int64_t txn,
				  const struct grove_journal_alt_change *alt, size_t n_alt,
				  struct grove_error *err);
int grove_journal_alt_commit_txn(struct grove_journal *j, int64_t txn, struct grove_error *err);

/* journal_pkgs.c: logs the packages a transaction stows or unstows (inside the caller's write
 * transaction). */
/* Logs txn's roots (journal_roots.c; inside the caller's write transaction). */
int grove_journal_roots_put(struct grove_journal *j, int64_t txn,
			    const struct grove_journal_root *v, size_t n, struct grove_error *err);

int grove_journal_pkgs_put(struct grove_journal *j, int64_t txn, const struct grove_journal_pkg *v,
			   size_t n, struct grove_error *err);

/* journal_pkgs.c: merges a committing transaction's packages into its target's latest state
 * (inside the caller's write transaction, the one that marks it committed). */
int grove_journal_pkgs_commit_txn(struct grove_journal *j, int64_t txn, struct grove_error *err);

/* journal_pkgs.c: schema 10's txn_packages and pkg_latest rows packed as schema 11's (the step
 * after migrations[10]'s SQL, inside the migration's transaction); drops both tables. */
int grove_journal_pkgs_to_packed(struct grove_journal *j, struct grove_error *err);

#endif
