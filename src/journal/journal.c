/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transaction log in SQLite: the connection to the held state dir's database, its
 * prepared statements and write transactions. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

#define DB_NAME   "grove.db"
#define LOCKS_DIR "locks"

/* How long a statement waits for another connection's lock before SQLITE_BUSY. The
 * environment variable GROVE_JOURNAL_BUSY_MS overrides it (tests keep it short). */
#define BUSY_TIMEOUT_MS_DEFAULT 5000
#define BUSY_TIMEOUT_MS_MAX     600000

/* A transaction's op count: the sum of its chunks' counts (each chunk's body is checked against its
 * count when read). */
#define OPS_COUNT "(SELECT coalesce(sum(n), 0) FROM op_chunks WHERE op_chunks.txn_id = txns.id)"

#define TXN_COLUMNS                                                                 \
	"id, target_id, state, command, stow_dir, note, undoes, started, finished," \
	" " OPS_COUNT ", stow_dev, stow_ino, stow_born, uid, sudo_user"

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	/* Every row of the device and inode: of the target's birth time, or of 0 (written before
	 * grove read birth times, or on a filesystem without them; ST_TARGET_BORN records the birth
	 * time in it); journal_txn.c's target_pick chooses. */
	[ST_TARGET_GET] = "SELECT id, path, born FROM targets WHERE dev = ?1 AND ino = ?2",
	[ST_TARGET_PUT] = "INSERT INTO targets (path, dev, ino, born) VALUES (?1, ?2, ?3, ?4)"
			  " ON CONFLICT (dev, ino, born) DO UPDATE SET path = excluded.path",
	[ST_TARGET_BORN] = "UPDATE targets SET path = ?2, born = ?3 WHERE id = ?1",
	/* Written without foreign-key checks (grove_journal_write_begin_unchecked): no row when
	 * the target is not in the log (and none when the transaction undone is not: txn_insert
	 * asks ST_TXN_EXISTS first, a statement only undo and rollback prepare). */
	[ST_TXN_INSERT] =
		"INSERT INTO txns (target_id, state, command, stow_dir, undoes, started,"
		" stow_dev, stow_ino, stow_born, uid, sudo_user)"
		" SELECT id, 'intent', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 FROM targets WHERE id = ?1",
	[ST_TXN_EXISTS] = "SELECT id FROM txns WHERE id = ?1",
	[ST_STOW_USED] = "SELECT 1 FROM txns WHERE target_id = ?1 AND state = 'committed'"
			 " AND stow_dir = ?2 AND stow_dev = ?3 AND stow_ino = ?4"
			 " AND stow_born IN (?5, 0) LIMIT 1",
	[ST_OP_CHUNK_PUT] = "INSERT INTO op_chunks (txn_id, first_seq, n, body)"
			    " VALUES (?1, ?2, ?3, ?4)",
	[ST_TXN_FINISH] = "UPDATE txns SET state = ?2, note = ?3, finished = ?4"
			  " WHERE id = ?1 AND state IN ('intent', 'stuck')",
	[ST_TXN_STATE] = "SELECT state, note, command, started, target_id, " OPS_COUNT
			 " FROM txns WHERE id = ?1",
	[ST_TXN_GET] = "SELECT " TXN_COLUMNS " FROM txns WHERE id = ?1",
	/* From the chunk holding op ?2 (the last one to start at or before it) on. */
	[ST_OPS_GET] = "SELECT first_seq, n, body FROM op_chunks WHERE txn_id = ?1"
		       " AND first_seq >= coalesce((SELECT max(first_seq) FROM op_chunks"
		       " WHERE txn_id = ?1 AND first_seq <= ?2), 0) ORDER BY first_seq",
	/* Through the partial index txns_open (schema 12): its WHERE, word for word. */
	[ST_UNFINISHED] = "SELECT id FROM txns WHERE target_id = ?1"
			  " AND state IN ('intent', 'stuck') ORDER BY id LIMIT 1",
	[ST_LIST] = "SELECT " TXN_COLUMNS " FROM txns WHERE target_id = ?1"
		    " ORDER BY id DESC LIMIT ?2",
	/* grove targets: each target with its number of transactions and its newest one's start,
	 * newest first (the index txns_target serves both subqueries). */
	[ST_TARGETS] = "SELECT t.id, t.path,"
		       " (SELECT count(*) FROM txns x WHERE x.target_id = t.id),"
		       " (SELECT max(x.started) FROM txns x WHERE x.target_id = t.id)"
		       " FROM targets t ORDER BY 4 DESC, t.id DESC",
	[ST_TARGET_STOWS] = "SELECT stow_dir, max(started) FROM txns WHERE target_id = ?1"
			    " AND state = 'committed' AND stow_dir IS NOT NULL"
			    " GROUP BY stow_dir ORDER BY 2 DESC",
	/* An undo transaction is not itself undoable (undo twice walks further back,
	 * it does not redo), and a transaction counts as undone only by a committed
	 * undo. */
	[ST_LAST_UNDOABLE] = "SELECT t.id FROM txns t WHERE t.target_id = ?1"
			     " AND t.state = 'committed' AND t.undoes IS NULL"
			     " AND NOT EXISTS (SELECT 1 FROM txns u WHERE u.undoes = t.id"
			     " AND u.state = 'committed')"
			     " ORDER BY t.id DESC LIMIT 1",
	/* Ordered by t.id, the order txns_target yields the rows in (c.txn_id, the same value,
	 * made SQLite sort every chunk in a temporary b-tree). */
	[ST_OWNED_OPS] = "SELECT c.txn_id, c.first_seq, c.n, c.body FROM txns t"
			 " JOIN op_chunks c ON c.txn_id = t.id"
			 " WHERE t.target_id = ?1 AND t.state = 'committed' AND t.id < ?2"
			 " ORDER BY t.id, c.first_seq",
	[ST_ALT_DIR_GET] = "SELECT id FROM alt_dirs WHERE admindir = ?1 AND altdir = ?2",
	[ST_ALT_DIR_PUT] = "INSERT OR IGNORE INTO alt_dirs (admindir, altdir) VALUES (?1, ?2)",
	[ST_ALT_DIR_ADMIN] = "SELECT admindir FROM alt_dirs WHERE id = ?1",
	[ST_ALT_STATES] = "SELECT name, body, unwritten FROM alt_states WHERE dir_id = ?1"
			  " ORDER BY name",
	[ST_ALT_STATE_GET] = "SELECT body FROM alt_states WHERE dir_id = ?1 AND name = ?2",
	[ST_ALT_STATE_DEL] = "DELETE FROM alt_states WHERE dir_id = ?1 AND name = ?2",
	[ST_ALT_STATE_PUT] = "INSERT INTO alt_states (dir_id, name, body) VALUES (?1, ?2, ?3)"
			     " ON CONFLICT (dir_id, name) DO UPDATE SET body = excluded.body,"
			     " unwritten = 0",
	[ST_ALT_TXN_PUT] = "INSERT INTO alt_txn_groups (txn_id, dir_id, name, before, after)"
			   " VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_ALT_TXN_GET] = "SELECT dir_id, name, before, after FROM alt_txn_groups"
			   " WHERE txn_id = ?1 ORDER BY dir_id, name",
	/* Packages (schema 11): one packed row per transaction and stow dir. */
	[ST_PKG_PUT] = "INSERT INTO txn_pkgs (txn_id, stow_dir, n, body) VALUES (?1, ?2, ?3, ?4)",
	[ST_PKG_TXN_GET] = "SELECT stow_dir, n, body FROM txn_pkgs WHERE txn_id = ?1"
			   " ORDER BY stow_dir",
	/* A committing transaction's target (a join with ST_PKG_TXN_GET costs more to prepare
	 * than the two). */
	[ST_PKG_TXN_TARGET] = "SELECT target_id FROM txns WHERE id = ?1",
	/* Before a transaction (undo and rollback: the state to put back), from the history. */
	[ST_PKG_RECORDED] = "SELECT t.id, p.n, p.body FROM txns t"
			    " JOIN txn_pkgs p ON p.txn_id = t.id AND p.stow_dir = ?2"
			    " WHERE t.target_id = ?1 AND t.state = 'committed' AND t.id < ?3"
			    " ORDER BY t.id DESC",
	/* Now: the state's chunks in order (a subquery seeking the one holding a name cost twice
	 * as much to prepare as the chunks of a stow dir of 2,000 packages take to step over). */
	[ST_PKG_STATE_GET] = "SELECT first, n, body FROM pkg_state WHERE target_id = ?1"
			     " AND stow_dir = ?2 ORDER BY first",
	[ST_PKG_STATE_PUT] = "INSERT OR REPLACE INTO pkg_state (target_id, stow_dir, first, n,"
			     " body) VALUES (?1, ?2, ?3, ?4, ?5)",
	/* The roots a transaction used besides its target (schema 13). */
	[ST_ROOTS_PUT] = "INSERT INTO txn_roots (txn_id, kind, dir_id, parent, rel, resolve, dev,"
			 " ino, born) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_ROOTS_GET] = "SELECT kind, dir_id, parent, rel, resolve, dev, ino, born FROM txn_roots"
			 " WHERE txn_id = ?1 ORDER BY kind, dir_id",
	/* The transactions that used a folder (by device and inode) as an alternatives root,
	 * newest first: grove log of an altdir or admindir. */
	[ST_ROOT_TXNS] = "SELECT DISTINCT txn_id FROM txn_roots WHERE dev = ?1 AND ino = ?2"
			 " ORDER BY txn_id DESC",
};

/* ---- errors ---- */

/* The errno that best describes an sqlite result code. */
static int
code_of(int rc, int sys)
{
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_FORMAT:
		return -GROVE_E_CONFIG;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_IOERR:
		return sys > 0 ? -sys : -EIO;
	case SQLITE_CANTOPEN:
		return sys > 0 ? -sys : -EACCES;
	default:
		return -GROVE_E_INTERNAL;
	}
}

/*
 * Fills err for a failed sqlite call: "<what> journal '<name>': <sqlite's
 * reason>[: <the system's reason>]", and returns the code. db may be NULL.
 */
static int
db_fail(sqlite3 *db, const char *name, int rc, int busy_ms, struct grove_error *err,
	const char *what)
{
	int prim = rc & 0xff;
	int sys = db ? sqlite3_system_errno(db) : 0;
	const char *msg =
		db && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	int code = code_of(rc, prim == SQLITE_IOERR || prim == SQLITE_CANTOPEN ? sys : 0);

	if (prim == SQLITE_BUSY)
		return grove_error_set(err, code,
				       "%s journal '%s': %s (another process held it for more than "
				       "%d ms)",
				       what, name, msg, busy_ms);
	if ((prim == SQLITE_IOERR || prim == SQLITE_CANTOPEN || prim == SQLITE_FULL) && sys > 0) {
		if (prim == SQLITE_CANTOPEN && sys == ENOENT)
			return grove_error_set(err, code,
					       "%s journal '%s': %s: %s (is /proc mounted?)", what,
					       name, msg, strerror(sys));
		return grove_error_set(err, code, "%s journal '%s': %s: %s", what, name, msg,
				       strerror(sys));
	}
	return grove_error_set(err, code, "%s journal '%s': %s", what, name, msg);
}

int
grove_journal_fail(struct grove_journal *j, int rc, struct grove_error *err, const char *what)
{
	return db_fail(j->db, j->name, rc, j->busy_ms, err, what);
}
/* ---- statements ---- */
int
grove_journal_stmt(struct grove_journal *j, enum stmt_id id, sqlite3_stmt **ret,
		   struct grove_error *err)
{
	if (!j->db)
		return grove_error_set(
			err, -EIO,
			"read journal '%s': closed after an earlier failure to reopen it", j->name);
	if (!j->stmts[id]) {
		int rc = sqlite3_prepare_v3(j->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					    &j->stmts[id], NULL);

		if (rc != SQLITE_OK)
			return grove_journal_fail(j, rc, err, "read");
	}
	*ret = j->stmts[id];
	return 0;
}

static void
stmts_finalize(struct grove_journal *j)
{
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(j->stmts[i]);
		j->stmts[i] = NULL;
	}
}

int
grove_journal_stmt_run(struct grove_journal *j, enum stmt_id id, struct grove_error *err,
		       const char *what)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, id, &s, err);

	if (r < 0)
		return r;
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return grove_journal_fail(j, rc, err, what);
	return 0;
}

/* Runs a query that yields one integer (or none: *ret = 0), binding ?1 to arg. */
int
grove_journal_query_id(struct grove_journal *j, enum stmt_id id, int64_t arg, int64_t *ret,
		       struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = grove_journal_stmt(j, id, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, arg);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		*ret = 0;
		return 0;
	}
	if (rc != SQLITE_ROW)
		return grove_journal_fail(j, rc, err, "read");
	*ret = sqlite3_column_int64(s, 0);
	return 0;
}

/* ---- connection ---- */

static int
busy_timeout_ms(void)
{
	const char *v = getenv("GROVE_JOURNAL_BUSY_MS");
	char *end;
	long ms;

	if (!v || !*v)
		return BUSY_TIMEOUT_MS_DEFAULT;
	errno = 0;
	ms = strtol(v, &end, 10);
	if (errno || *end || ms < 0)
		return BUSY_TIMEOUT_MS_DEFAULT;
	return ms > BUSY_TIMEOUT_MS_MAX ? BUSY_TIMEOUT_MS_MAX : (int)ms;
}

/* Runs constant SQL (pragmas, schema steps: nothing from outside). */
int
grove_journal_exec_sql(struct grove_journal *j, const char *sql, struct grove_error *err,
		       const char *what)
{
	int rc = sqlite3_exec(j->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return grove_journal_fail(j, rc, err, what);
	return 0;
}
static void
disconnect(struct grove_journal *j)
{
	stmts_finalize(j);
	sqlite3_close_v2(j->db);
	j->db = NULL;
}

/* Opens the database through the held state dir, checks and migrates it, and sets the
 * connection's pragmas. On failure j->db is closed. */
static int
db_connect(struct grove_journal *j, struct grove_error *err)
{
	/* NOMUTEX: a journal (and its connection) is used by one thread at a
	 * time, so sqlite need not lock the connection around every call. */
	/* Never SQLITE_OPEN_CREATE: a log file grove opens is there, made whole beforehand
	 * (journal_create.c); one that went meanwhile is an error, not a new empty log. */
	const int flags = (j->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
			  (j->in_memory ? SQLITE_OPEN_MEMORY : 0) | SQLITE_OPEN_NOFOLLOW |
			  SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_PRIVATECACHE | SQLITE_OPEN_NOMUTEX;
	sqlite3_stmt *s = NULL;
	const char *vfs = grove_journal_vfs();
	int64_t version;
	int rc, r;

	if (!vfs)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "open journal '%s': cannot register the sqlite VFS",
				       j->name);
	rc = sqlite3_open_v2(j->fdpath, &j->db, flags, vfs);
	if (rc != SQLITE_OK) {
		r = grove_journal_fail(j, rc, err, "open");
		goto fail;
	}
	/* The unix VFS quietly falls back to read-only when O_RDWR is refused
	 * (EACCES, EROFS); a journal grove cannot write is an error now, not at
	 * the first transaction. */
	if (!j->readonly && sqlite3_db_readonly(j->db, "main") == 1) {
		r = grove_error_set(err, -EROFS,
				    "open journal '%s': cannot write it (the file or the file "
				    "system is read-only)",
				    j->name);
		goto fail;
	}
	sqlite3_extended_result_codes(j->db, 1);
	sqlite3_busy_timeout(j->db, j->busy_ms);
	/* Nothing but grove's own SQL runs here: refuse schema tricks and writable_schema. */
	sqlite3_db_config(j->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(j->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);

	/* Look before writing anything: a file of another program, of a newer
	 * grove or not a database at all is left exactly as it is. The three
	 * reads and the schema's parse share one read transaction: each on its
	 * own takes and drops the shared lock and looks for a hot journal and a
	 * -wal file again (8 syscalls a time). */
	r = grove_journal_exec_sql(j, "BEGIN", err, "open");
	if (r >= 0)
		r = grove_journal_schema_check(j, &version, err);
	if (r < 0)
		goto fail;
	r = grove_journal_exec_sql(j, "COMMIT", err, "open");
	if (r < 0)
		goto fail;
	if (j->readonly) {
		if (version < GROVE_JOURNAL_VERSION) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s' is read-only and has an older schema "
					    "(%" PRId64 "); a grove that can write it updates it",
					    j->name, version);
			goto fail;
		}
		return 0;
	}
	/* An empty log in memory: its schema and nothing else (no file, no rollback journal). */
	if (j->in_memory)
		return version < GROVE_JOURNAL_VERSION ? grove_journal_schema_migrate(j, err) : 0;
	rc = sqlite3_prepare_v2(j->db, "PRAGMA journal_mode = DELETE", -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const unsigned char *mode = sqlite3_column_text(s, 0);

		if (!mode || strcmp((const char *)mode, "delete") != 0) {
			sqlite3_finalize(s);
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "open journal '%s': cannot use the rollback journal "
					    "(journal_mode stays '%s')",
					    j->name, mode ? (const char *)mode : "");
			goto fail;
		}
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_OK) {
		r = grove_journal_fail(j, rc, err, "open");
		goto fail;
	}
	/* A page cache of at most 1 MiB (SQLite's default is 2): a streamed plan's write
	 * transaction fills it whole, and goal 2's memory bound counts it (docs/performance.md);
	 * pages beyond it are spilled to the file or read again from the OS's cache. */
	r = grove_journal_exec_sql(
		j,
		"PRAGMA synchronous = EXTRA; PRAGMA foreign_keys = ON; PRAGMA cache_size = -1024",
		err, "open");
	if (r < 0)
		goto fail;
	j->fk_off = false;
	if (version < GROVE_JOURNAL_VERSION) {
		r = grove_journal_schema_migrate(j, err);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	disconnect(j);
	return r;
}

int
grove_journal_fill(int dirfd, const char *name, const char *db, struct grove_error *err)
{
	struct grove_journal j = { .dirfd = -1, .busy_ms = busy_timeout_ms(), .name = (char *)db };
	int n = snprintf(j.fdpath, sizeof(j.fdpath), "/proc/self/fd/%d/%s", dirfd, name);
	int r;

	if (n < 0 || (size_t)n >= sizeof(j.fdpath))
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "make journal '%s': the name '%s' is too long", db, name);
	/* An empty file: version 0, migrated to the current schema in one transaction. */
	r = db_connect(&j, err);
	if (r >= 0)
		disconnect(&j);
	return r;
}

/* After a COMMIT failed the outcome is unknown: drop the connection (and with it
 * anything sqlite believes about the file) and open it again, so the caller
 * reads back what is really on disk. */
static int
reconnect(struct grove_journal *j, struct grove_error *err)
{
	disconnect(j);
	return db_connect(j, err);
}

/*
 * The state dir and its database are trusted only when the user running grove
 * controls them (DESIGN.md invariant 8), as ssh trusts a key file: owned by
 * the caller and writable by no one else. A state dir the user named with
 * --state may also be root's, and then its mode is the user's choice.
 */
static int
check_trusted(const char *what, const char *name, const struct grove_stat *st, bool named,
	      bool system, struct grove_error *err)
{
	uid_t me = geteuid();

	if (named && (st->uid == me || st->uid == 0))
		return 0;
	/* Root's log, read by a user: root's, and only root's to change. */
	if (system && st->uid != 0)
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"%s '%s' is owned by uid %u, not by root: refusing it as the "
			"system log",
			what, name, (unsigned)st->uid);
	if (system)
		me = 0;
	if (st->uid != me)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "%s '%s' is owned by uid %u, not by the user running grove "
				       "(uid %u): refusing a log another user controls",
				       what, name, (unsigned)st->uid, (unsigned)me);
	if (st->mode & (S_IWGRP | S_IWOTH))
		return grove_error_set(
			err, -GROVE_E_CONFIG,
			"%s '%s' is writable by %s: refusing a log others can change "
			"(chmod go-w it)",
			what, name, (st->mode & S_IWOTH) ? "everyone" : "its group");
	return 0;
}

int
grove_journal_open(const char *path, struct grove_root *ret_root, struct grove_journal **ret,
		   struct grove_error *err)
{
	return grove_journal_open_with(path, 0, ret_root, ret, err);
}

/* A journal not connected yet, named "<path's len bytes>/grove.db", or NULL when out of memory. */
static struct grove_journal *
journal_new(const char *path, size_t len)
{
	struct grove_journal *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->dirfd = -1;
	j->busy_ms = busy_timeout_ms();
	j->name = grove_strdupf("%.*s/%s", (int)len, path, DB_NAME);
	if (!j->name) {
		free(j);
		return NULL;
	}
	return j;
}

/* The log of a state dir (held in *root, or fd -1 when the folder does not exist) that holds no
 * journal yet, for a reader: an empty one in memory, named where the file would be. */
static int
open_empty(const char *path, size_t len, struct grove_root *root, struct grove_root *ret_root,
	   struct grove_journal **ret, struct grove_error *err)
{
	struct grove_journal *j = journal_new(path, len);
	int r;

	if (!j) {
		r = grove_error_errno(err, -ENOMEM, "open journal in '%s'", path);
		goto fail;
	}
	j->in_memory = true;
	snprintf(j->fdpath, sizeof(j->fdpath), ":memory:");
	r = db_connect(j, err);
	if (r < 0)
		goto fail;
	j->readonly = true;
	*ret_root = *root;
	*ret = j;
	return 0;
fail:
	grove_journal_close(j);
	grove_root_release(root);
	return r;
}

/* An existing grove.db (st, in the state dir path of len bytes): a regular file the user trusts
 * (check_trusted), and not empty. */
static int
check_db_file(const char *path, size_t len, const struct grove_stat *st, bool named,
	      bool sys_reader, struct grove_error *err)
{
	char name[PATH_MAX + 16];
	int r;

	snprintf(name, sizeof(name), "%.*s/%s", (int)len, path, DB_NAME);
	if (st->type != GROVE_FT_REG)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s' is not a regular file (%s)", name,
				       st->type == GROVE_FT_LINK ? "a symlink" : "a special file");
	r = check_trusted("journal", name, st, named, sys_reader, err);
	if (r < 0)
		return r;
	/* grove names a log grove.db only once its schema is written (journal_create.c): an
	 * empty one is a damaged log, or not grove's, never a new one. */
	if (st->size == 0)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s' is empty (0 bytes), so its history is lost: "
				       "move it aside to start a new log",
				       name);
	return 0;
}

int
grove_journal_open_with(const char *path, unsigned int flags, struct grove_root *ret_root,
			struct grove_journal **ret, struct grove_error *err)
{
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_stat st;
	bool readonly = flags & GROVE_JOURNAL_READONLY, named = flags & GROVE_JOURNAL_NAMED;
	/* Reading the system log as another user; or root making its own readable to users. */
	bool sys_reader = readonly && (flags & GROVE_JOURNAL_SYSTEM);
	bool sys_public = !readonly && (flags & GROVE_JOURNAL_SYSTEM);
	bool absent_empty = readonly && (flags & GROVE_JOURNAL_ABSENT_EMPTY);
	size_t len;
	int r, fd;

	if (!path || !*path)
		return grove_error_set(err, -GROVE_E_USAGE, "open state dir '': empty path");
	if (!readonly) {
		r = grove_fs_make_dirs(path, sys_public ? 0755 : 0700, err);
		if (r < 0)
			return grove_error_prefix(err, "open state dir '%s'", path);
	}
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	r = grove_root_open_nofollow(&root, path, err);
	if (r == -ENOENT && absent_empty) {
		grove_error_clear(err);
		return open_empty(path, len, &root, ret_root, ret, err);
	}
	if (r == -ELOOP)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "state dir '%s' is a symlink: refusing a log that may be "
				       "someone else's (name the folder itself)",
				       path);
	if (r < 0)
		return grove_error_prefix(err, "open state dir '%s'", path);
	r = grove_fs_stat_fd(root.fd, &st, err);
	if (r >= 0)
		r = check_trusted("state dir", path, &st, named, sys_reader, err);
	if (r >= 0)
		r = grove_fs_stat_at(root.fd, DB_NAME, &st, err);
	if (r < 0)
		goto fail;
	if (st.type != GROVE_FT_NONE) {
		r = check_db_file(path, len, &st, named, sys_reader, err);
		if (r < 0)
			goto fail;
	} else if (absent_empty) {
		return open_empty(path, len, &root, ret_root, ret, err);
	} else if (readonly) {
		r = grove_error_set(err, -ENOENT, "open state dir '%s': no journal in it", path);
		goto fail;
	} else {
		/* Made whole under a temporary name, then named grove.db (by us or by another grove
		 * that came first): ours and private from the start, never seen half-made. */
		char db[PATH_MAX + 16];

		snprintf(db, sizeof(db), "%.*s/%s", (int)len, path, DB_NAME);
		r = grove_journal_create(root.fd, db, sys_public ? 0644 : 0600, err);
		if (r >= 0)
			r = grove_fs_stat_at(root.fd, DB_NAME, &st, err);
		if (r >= 0)
			r = check_db_file(path, len, &st, named, sys_reader, err);
		if (r < 0)
			goto fail;
	}
	if (!readonly) {
		/* Making locks/ now also finds a read-only state dir before sqlite does. */
		fd = grove_fs_open_or_make_dir(root.fd, LOCKS_DIR, sys_public ? 0755 : 0700, err);
		if (fd < 0) {
			r = grove_error_prefix(err, "open state dir '%s'", path);
			goto fail;
		}
		grove_fd_close(fd);
	}

	j = journal_new(path, len);
	if (!j) {
		r = grove_error_errno(err, -ENOMEM, "open journal in '%s'", path);
		goto fail;
	}
	j->readonly = readonly;
	/* The journal keeps its own fd on the folder, so the name sqlite reopens
	 * the -journal by stays valid whatever the caller does with root.fd. */
	j->dirfd = fcntl(root.fd, F_DUPFD_CLOEXEC, 3);
	if (j->dirfd < 0) {
		r = grove_error_errno(err, -errno, "open journal in '%s'", path);
		goto fail;
	}
	snprintf(j->fdpath, sizeof(j->fdpath), "/proc/self/fd/%d/%s", j->dirfd, DB_NAME);
	r = db_connect(j, err);
	if (r < 0)
		goto fail;
	*ret_root = root;
	*ret = j;
	return 0;
fail:
	grove_journal_close(j);
	grove_root_release(&root);
	return r;
}

const char *
grove_journal_name(const struct grove_journal *j)
{
	return j->name;
}

struct grove_journal *
grove_journal_close(struct grove_journal *j)
{
	if (!j)
		return NULL;
	disconnect(j);
	grove_fd_close(j->dirfd);
	free(j->target.path);
	free(j->name);
	free(j);
	return NULL;
}

/* ---- write transactions ---- */

void
grove_journal_rollback(struct grove_journal *j)
{
	if (j->db && !sqlite3_get_autocommit(j->db))
		grove_journal_stmt_run(j, ST_ROLLBACK, NULL, "roll back");
}

int
grove_journal_write_begin(struct grove_journal *j, struct grove_error *err, const char *what)
{
	if (j->fk_off && j->db) {
		int r = grove_journal_exec_sql(j, "PRAGMA foreign_keys = ON", err, what);

		if (r < 0)
			return r;
		j->fk_off = false;
	}
	return grove_journal_stmt_run(j, ST_BEGIN, err, what);
}

/*
 * Checking a foreign key costs a seek into the parent table for every row written: for an
 * intent, every op row's txn_id, the id its own transaction has just given the txns row.
 */
int
grove_journal_write_begin_unchecked(struct grove_journal *j, struct grove_error *err,
				    const char *what)
{
	if (!j->fk_off && j->db) {
		int r = grove_journal_exec_sql(j, "PRAGMA foreign_keys = OFF", err, what);

		if (r < 0)
			return r;
		j->fk_off = true;
	}
	return grove_journal_stmt_run(j, ST_BEGIN, err, what);
}

/*
 * COMMIT. 0 done; < 0 with *ret_unknown false: not committed (nothing
 * changed); < 0 with *ret_unknown true: the outcome is unknown and the
 * connection has been reopened for the caller to read back. Never retried:
 * a second fsync after a failed one proves nothing.
 */
int
grove_journal_write_commit(struct grove_journal *j, bool *ret_unknown, struct grove_error *err,
			   const char *what)
{
	struct grove_error e2, first;
	int rc, r;

	*ret_unknown = false;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = grove_journal_stmt(j, ST_COMMIT, &s, err);
		if (r < 0) {
			grove_journal_rollback(j);
			return r;
		}
		rc = sqlite3_step(s);
	}
	if (rc == SQLITE_DONE)
		return 0;
	r = grove_journal_fail(j, rc, err, what);
	/* BUSY at COMMIT means the lock for writing the file was never taken:
	 * nothing reached the file, the transaction is still open, and rolling it
	 * back leaves a known outcome. */
	if ((rc & 0xff) == SQLITE_BUSY && !sqlite3_get_autocommit(j->db)) {
		grove_journal_rollback(j);
		return r;
	}
	grove_journal_rollback(j);
	first = *err;
	if (reconnect(j, &e2) < 0)
		return grove_error_set(err, r, "%s; reopening it to learn the outcome failed: %s",
				       first.msg, e2.msg);
	*ret_unknown = true;
	return r;
}
