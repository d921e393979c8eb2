/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transaction log in SQLite: schema and migrations, intent and commit of transactions,
 * history and ownership queries. */
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

#include "grove/alt.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/tree.h"
#include "journal_owned.h"
#include "util.h"

#define DB_NAME   "grove.db"
#define LOCKS_DIR "locks"

/* How long a statement waits for another connection's lock before SQLITE_BUSY. The
 * environment variable GROVE_JOURNAL_BUSY_MS overrides it (tests keep it short). */
#define BUSY_TIMEOUT_MS_DEFAULT 5000
#define BUSY_TIMEOUT_MS_MAX     600000

/* ---- schema ---- */

/*
 * Migration steps: migrations[i] takes the schema from user_version i to i + 1.
 * A new version is one more entry; grove_journal_open runs the missing steps
 * and sets user_version in one transaction.
 */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE targets ("
	"  id INTEGER PRIMARY KEY,"
	"  path TEXT NOT NULL,"
	"  dev INTEGER NOT NULL,"
	"  ino INTEGER NOT NULL,"
	"  born INTEGER NOT NULL DEFAULT 0,"
	"  UNIQUE (dev, ino, born));"
	"CREATE TABLE txns ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),"
	"  state TEXT NOT NULL"
	"    CHECK (state IN ('intent', 'committed', 'rolled_back', 'stuck')),"
	"  command TEXT,"
	"  stow_dir TEXT,"
	"  note TEXT,"
	"  undoes INTEGER REFERENCES txns(id),"
	"  started REAL NOT NULL,"
	"  finished REAL);"
	"CREATE INDEX txns_target ON txns (target_id, id);"
	"CREATE INDEX txns_undoes ON txns (undoes) WHERE undoes IS NOT NULL;"
	"CREATE TABLE ops ("
	"  txn_id INTEGER NOT NULL REFERENCES txns(id),"
	"  seq INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN"
	"    ('mkdir', 'link', 'unlink', 'relink', 'rmdir', 'unfold', 'fold', 'adopt')),"
	"  path TEXT NOT NULL,"
	"  old_text TEXT,"
	"  text TEXT,"
	"  stow_path TEXT,"
	"  package TEXT,"
	"  PRIMARY KEY (txn_id, seq)) WITHOUT ROWID;",
	/* 1 -> 2: alternatives state (grove alt), per (admindir, altdir) pair. */
	"CREATE TABLE alt_dirs ("
	"  id INTEGER PRIMARY KEY,"
	"  admindir TEXT NOT NULL,"
	"  altdir TEXT NOT NULL,"
	"  UNIQUE (admindir, altdir));"
	"CREATE TABLE alt_groups ("
	"  id INTEGER PRIMARY KEY,"
	"  dir_id INTEGER NOT NULL REFERENCES alt_dirs(id),"
	"  name TEXT NOT NULL,"
	"  link TEXT NOT NULL,"
	"  mode TEXT NOT NULL CHECK (mode IN ('auto', 'manual')),"
	"  UNIQUE (dir_id, name));"
	"CREATE TABLE alt_slaves ("
	"  group_id INTEGER NOT NULL REFERENCES alt_groups(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  name TEXT NOT NULL,"
	"  link TEXT NOT NULL,"
	"  PRIMARY KEY (group_id, seq)) WITHOUT ROWID;"
	"CREATE TABLE alt_choices ("
	"  group_id INTEGER NOT NULL REFERENCES alt_groups(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  path TEXT NOT NULL,"
	"  priority INTEGER NOT NULL,"
	"  PRIMARY KEY (group_id, seq)) WITHOUT ROWID;"
	"CREATE TABLE alt_choice_slaves ("
	"  group_id INTEGER NOT NULL,"
	"  choice_seq INTEGER NOT NULL,"
	"  name TEXT NOT NULL,"
	"  path TEXT NOT NULL,"
	"  PRIMARY KEY (group_id, choice_seq, name),"
	"  FOREIGN KEY (group_id, choice_seq) REFERENCES alt_choices(group_id, seq)"
	"    ON DELETE CASCADE) WITHOUT ROWID;",
	/* 2 -> 3: the groups a transaction changes, before and after, in
	 * update-alternatives' administrative file format (NULL: no group). The
	 * commit of the transaction saves the after states in the same SQLite
	 * transaction; undo puts the before states back. */
	"CREATE TABLE alt_txn_groups ("
	"  txn_id INTEGER NOT NULL REFERENCES txns(id),"
	"  dir_id INTEGER NOT NULL REFERENCES alt_dirs(id),"
	"  name TEXT NOT NULL,"
	"  before TEXT,"
	"  after TEXT,"
	"  PRIMARY KEY (txn_id, dir_id, name)) WITHOUT ROWID;",
	/* 3 -> 4: the stow dir's identity (device, inode, birth time) when the
	 * transaction began, so that recovery re-opening it by path can tell it
	 * from a folder (or a symlink) put in its place since. */
	"ALTER TABLE txns ADD COLUMN stow_dev INTEGER;"
	"ALTER TABLE txns ADD COLUMN stow_ino INTEGER;"
	"ALTER TABLE txns ADD COLUMN stow_born INTEGER;",
};

#define SCHEMA_STEPS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == GROVE_JOURNAL_VERSION,
	       "one migration step per schema version");

static const char *const state_names[] = {
	[GROVE_TXN_INTENT] = "intent",
	[GROVE_TXN_COMMITTED] = "committed",
	[GROVE_TXN_ROLLED_BACK] = "rolled_back",
	[GROVE_TXN_STUCK] = "stuck",
};

#define TXN_COLUMNS                                                                 \
	"id, target_id, state, command, stow_dir, note, undoes, started, finished," \
	" (SELECT count(*) FROM ops WHERE ops.txn_id = txns.id),"                   \
	" stow_dev, stow_ino, stow_born"

/*
 * Plans of OPS_BATCH_MIN ops or more are logged OPS_BATCH rows per INSERT:
 * every run of a statement has a fixed cost (cursors, temporary tables) that
 * a row-by-row log of a 1,200-op plan pays 1,200 times. Preparing the batch
 * costs about what 100 single rows do, so smaller plans go row by row.
 */
#define OPS_BATCH     32
#define OPS_BATCH_MIN 128
#define OPS_ROW       "(?, ?, ?, ?, ?, ?, ?, ?)"
#define OPS_ROWS_4    OPS_ROW ", " OPS_ROW ", " OPS_ROW ", " OPS_ROW
#define OPS_ROWS_16   OPS_ROWS_4 ", " OPS_ROWS_4 ", " OPS_ROWS_4 ", " OPS_ROWS_4
#define OPS_ROWS_32   OPS_ROWS_16 ", " OPS_ROWS_16
#define OPS_COLUMNS   8

/* The statements grove runs, prepared once per connection and reused. */
enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_TARGET_GET,
	ST_TARGET_PUT,
	ST_TXN_INSERT,
	ST_STOW_USED,
	ST_OP_INSERT,
	ST_OP_INSERT_BATCH,
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
	ST_ALT_GROUPS,
	ST_ALT_SLAVES,
	ST_ALT_CHOICES,
	ST_ALT_CHOICE_SLAVES,
	ST_ALT_GROUP_DEL,
	ST_ALT_GROUP_PUT,
	ST_ALT_SLAVE_PUT,
	ST_ALT_CHOICE_PUT,
	ST_ALT_CHOICE_SLAVE_PUT,
	ST_ALT_TXN_PUT,
	ST_ALT_TXN_GET,
	ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_TARGET_GET] = "SELECT id, path FROM targets WHERE dev = ?1 AND ino = ?2 AND born = ?3",
	[ST_TARGET_PUT] = "INSERT INTO targets (path, dev, ino, born) VALUES (?1, ?2, ?3, ?4)"
			  " ON CONFLICT (dev, ino, born) DO UPDATE SET path = excluded.path",
	[ST_TXN_INSERT] = "INSERT INTO txns (target_id, state, command, stow_dir, undoes, started,"
			  " stow_dev, stow_ino, stow_born)"
			  " VALUES (?1, 'intent', ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_STOW_USED] = "SELECT 1 FROM txns WHERE target_id = ?1 AND state = 'committed'"
			 " AND stow_dir = ?2 AND stow_dev = ?3 AND stow_ino = ?4"
			 " AND stow_born = ?5 LIMIT 1",
	[ST_OP_INSERT] = "INSERT INTO ops (txn_id, seq, kind, path, old_text, text, stow_path,"
			 " package) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_OP_INSERT_BATCH] = "INSERT INTO ops (txn_id, seq, kind, path, old_text, text,"
			       " stow_path, package) VALUES " OPS_ROWS_32,
	[ST_TXN_FINISH] = "UPDATE txns SET state = ?2, note = ?3, finished = ?4"
			  " WHERE id = ?1 AND state IN ('intent', 'stuck')",
	[ST_TXN_STATE] = "SELECT state, note, command, started, target_id,"
			 " (SELECT count(*) FROM ops WHERE ops.txn_id = txns.id)"
			 " FROM txns WHERE id = ?1",
	[ST_TXN_GET] = "SELECT " TXN_COLUMNS " FROM txns WHERE id = ?1",
	[ST_OPS_GET] = "SELECT kind, path, old_text, text, stow_path, package FROM ops"
		       " WHERE txn_id = ?1 ORDER BY seq",
	[ST_UNFINISHED] = "SELECT id FROM txns WHERE target_id = ?1"
			  " AND state IN ('intent', 'stuck') ORDER BY id LIMIT 1",
	[ST_LIST] = "SELECT " TXN_COLUMNS " FROM txns WHERE target_id = ?1"
		    " ORDER BY id DESC LIMIT ?2",
	/* An undo transaction is not itself undoable (undo twice walks further back,
	 * it does not redo), and a transaction counts as undone only by a committed
	 * undo. */
	[ST_LAST_UNDOABLE] = "SELECT t.id FROM txns t WHERE t.target_id = ?1"
			     " AND t.state = 'committed' AND t.undoes IS NULL"
			     " AND NOT EXISTS (SELECT 1 FROM txns u WHERE u.undoes = t.id"
			     " AND u.state = 'committed')"
			     " ORDER BY t.id DESC LIMIT 1",
	[ST_OWNED_OPS] = "SELECT o.kind, o.path, o.text, o.package FROM txns t"
			 " JOIN ops o ON o.txn_id = t.id"
			 " WHERE t.target_id = ?1 AND t.state = 'committed'"
			 " ORDER BY o.txn_id, o.seq",
	[ST_ALT_DIR_GET] = "SELECT id FROM alt_dirs WHERE admindir = ?1 AND altdir = ?2",
	[ST_ALT_DIR_PUT] = "INSERT OR IGNORE INTO alt_dirs (admindir, altdir) VALUES (?1, ?2)",
	[ST_ALT_GROUPS] = "SELECT id, name, link, mode FROM alt_groups WHERE dir_id = ?1"
			  " ORDER BY name",
	[ST_ALT_SLAVES] = "SELECT name, link FROM alt_slaves WHERE group_id = ?1 ORDER BY seq",
	[ST_ALT_CHOICES] = "SELECT seq, path, priority FROM alt_choices WHERE group_id = ?1"
			   " ORDER BY seq",
	[ST_ALT_CHOICE_SLAVES] = "SELECT name, path FROM alt_choice_slaves"
				 " WHERE group_id = ?1 AND choice_seq = ?2 ORDER BY name",
	[ST_ALT_GROUP_DEL] = "DELETE FROM alt_groups WHERE dir_id = ?1 AND name = ?2",
	[ST_ALT_GROUP_PUT] = "INSERT INTO alt_groups (dir_id, name, link, mode)"
			     " VALUES (?1, ?2, ?3, ?4)",
	[ST_ALT_SLAVE_PUT] = "INSERT INTO alt_slaves (group_id, seq, name, link)"
			     " VALUES (?1, ?2, ?3, ?4)",
	[ST_ALT_CHOICE_PUT] = "INSERT INTO alt_choices (group_id, seq, path, priority)"
			      " VALUES (?1, ?2, ?3, ?4)",
	[ST_ALT_CHOICE_SLAVE_PUT] = "INSERT INTO alt_choice_slaves (group_id, choice_seq, name,"
				    " path) VALUES (?1, ?2, ?3, ?4)",
	[ST_ALT_TXN_PUT] = "INSERT INTO alt_txn_groups (txn_id, dir_id, name, before, after)"
			   " VALUES (?1, ?2, ?3, ?4, ?5)",
	[ST_ALT_TXN_GET] = "SELECT dir_id, name, before, after FROM alt_txn_groups"
			   " WHERE txn_id = ?1 ORDER BY dir_id, name",
};

struct grove_journal {
	sqlite3 *db;
	char *name;      /* "<state dir>/grove.db", for messages */
	int dirfd;       /* our own dup of the held state dir's fd */
	char fdpath[64]; /* "/proc/self/fd/<dirfd>/grove.db", what sqlite opens */
	int busy_ms;
	bool readonly; /* GROVE_JOURNAL_READONLY: nothing is made or written */
	sqlite3_stmt *stmts[ST_COUNT];
	/* A target grove_journal_target_deferred found unknown: registered by the
	 * next grove_journal_begin with target_id 0, inside that transaction. */
	struct {
		bool pending;
		char *path;
		int64_t dev, ino, born;
		int64_t id; /* once registered */
	} target;
};

/* ---- the held-dir VFS ---- */

#define HELD_VFS_NAME "grove-held"

static sqlite3_vfs held_vfs;
static int held_vfs_rc = SQLITE_ERROR;
static pthread_once_t held_vfs_once = PTHREAD_ONCE_INIT;

/*
 * sqlite's unix VFS canonicalises a database name by resolving every symlink
 * in it (lstat and readlink on each component), which would turn
 * "/proc/self/fd/N/grove.db" back into the state dir's path string: a state
 * dir swapped after we opened it would then redirect the database and its
 * -journal. This VFS is the unix one with names taken as given, so every
 * open, stat, unlink and directory fsync sqlite makes for the database and its
 * rollback journal goes through the magic link to the folder we hold. The
 * unix VFS still opens with O_NOFOLLOW, so a symlink planted as grove.db or
 * grove.db-journal is refused.
 */
static int
held_full_pathname(sqlite3_vfs *vfs, const char *path, int size, char *out)
{
	size_t len = strlen(path);

	(void)vfs;
	if (path[0] != '/' || size < 0 || len >= (size_t)size)
		return SQLITE_CANTOPEN;
	memcpy(out, path, len + 1);
	return SQLITE_OK;
}

static void
held_vfs_register(void)
{
	sqlite3_vfs *base;

	/* Before sqlite initialises (sqlite3_vfs_find does): no allocation
	 * statistics, so no global mutex around every sqlite3_malloc and free.
	 * grove never reads them. Refused (and harmless) if sqlite is already
	 * initialised by someone else in the process. */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	base = sqlite3_vfs_find("unix");

	if (!base)
		return;
	held_vfs = *base;
	held_vfs.pNext = NULL;
	held_vfs.zName = HELD_VFS_NAME;
	held_vfs.xFullPathname = held_full_pathname;
	held_vfs_rc = sqlite3_vfs_register(&held_vfs, 0);
}

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

static int
jfail(struct grove_journal *j, int rc, struct grove_error *err, const char *what)
{
	return db_fail(j->db, j->name, rc, j->busy_ms, err, what);
}

/* ---- statements ---- */

static void
stmt_resetp(sqlite3_stmt **s)
{
	if (*s) {
		sqlite3_reset(*s);
		sqlite3_clear_bindings(*s);
	}
}

/* A cached statement, reset when the variable leaves scope. */
#define cleanup_stmt __attribute__((cleanup(stmt_resetp)))

static int
stmt_get(struct grove_journal *j, enum stmt_id id, sqlite3_stmt **ret, struct grove_error *err)
{
	if (!j->db)
		return grove_error_set(
			err, -EIO,
			"read journal '%s': closed after an earlier failure to reopen it", j->name);
	if (!j->stmts[id]) {
		int rc = sqlite3_prepare_v3(j->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					    &j->stmts[id], NULL);

		if (rc != SQLITE_OK)
			return jfail(j, rc, err, "read");
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

/* Binds a string or NULL; SQLITE_STATIC: every caller steps before the string goes away. */
static void
bind_text(sqlite3_stmt *s, int i, const char *text)
{
	sqlite3_bind_text(s, i, text, -1, SQLITE_STATIC);
}

/* Copies column i (NULL stays NULL). */
static int
column_dup(sqlite3_stmt *s, int i, char **ret)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	*ret = NULL;
	if (!t)
		return sqlite3_column_type(s, i) == SQLITE_NULL ? 0 : -ENOMEM;
	*ret = strdup((const char *)t);
	return *ret ? 0 : -ENOMEM;
}

/* Runs a statement that returns nothing. */
static int
stmt_run(struct grove_journal *j, enum stmt_id id, struct grove_error *err, const char *what)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = stmt_get(j, id, &s, err);

	if (r < 0)
		return r;
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return jfail(j, rc, err, what);
	return 0;
}

/* Runs a query that yields one integer (or none: *ret = 0), binding ?1 to arg. */
static int
query_id(struct grove_journal *j, enum stmt_id id, int64_t arg, int64_t *ret,
	 struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = stmt_get(j, id, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, arg);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		*ret = 0;
		return 0;
	}
	if (rc != SQLITE_ROW)
		return jfail(j, rc, err, "read");
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
static int
exec_sql(struct grove_journal *j, const char *sql, struct grove_error *err, const char *what)
{
	int rc = sqlite3_exec(j->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return jfail(j, rc, err, what);
	return 0;
}

/* Reads an integer pragma (constant name). */
static int
pragma_int(struct grove_journal *j, const char *sql, int64_t *ret, struct grove_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(j->db, sql, -1, &s, NULL);

	if (rc == SQLITE_OK) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*ret = sqlite3_column_int64(s, 0);
			rc = SQLITE_OK;
		} else if (rc == SQLITE_DONE) {
			*ret = 0;
			rc = SQLITE_OK;
		}
	}
	if (rc != SQLITE_OK) {
		int r = jfail(j, rc, err, "open");

		sqlite3_finalize(s);
		return r;
	}
	sqlite3_finalize(s);
	return 0;
}

/*
 * Reads application_id, user_version and whether the file holds any schema,
 * and decides: 0 current, 1 needs migrating (an empty file or an older grove
 * schema), or an error for another program's file or a newer grove's.
 */
static int
schema_check(struct grove_journal *j, int64_t *ret_version, struct grove_error *err)
{
	int64_t app_id, version, n_objects;
	int r;

	r = pragma_int(j, "PRAGMA application_id", &app_id, err);
	if (r < 0)
		return r;
	r = pragma_int(j, "PRAGMA user_version", &version, err);
	if (r < 0)
		return r;
	r = pragma_int(j, "SELECT count(*) FROM sqlite_schema", &n_objects, err);
	if (r < 0)
		return r;
	if (app_id != GROVE_JOURNAL_APP_ID && (app_id != 0 || version != 0 || n_objects != 0))
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s' belongs to another program (application_id "
				       "0x%08" PRIx32 "), not grove",
				       j->name, (uint32_t)app_id);
	if (version > GROVE_JOURNAL_VERSION)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s' has schema version %" PRId64
				       ", newer than this grove (%d)",
				       j->name, version, GROVE_JOURNAL_VERSION);
	if (version < 0)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "journal '%s' has an invalid schema version %" PRId64,
				       j->name, version);
	*ret_version = version;
	return version < GROVE_JOURNAL_VERSION;
}

/* Brings the schema to GROVE_JOURNAL_VERSION in one write transaction. */
static int
migrate(struct grove_journal *j, struct grove_error *err)
{
	char sql[128];
	int64_t version;
	int r;

	r = exec_sql(j, "BEGIN IMMEDIATE", err, "migrate");
	if (r < 0)
		return r;
	/* Read again under the write lock: another grove may have migrated it
	 * since we looked. */
	r = schema_check(j, &version, err);
	if (r <= 0)
		goto out;
	for (int64_t v = version; v < SCHEMA_STEPS; v++) {
		r = exec_sql(j, migrations[v], err, "migrate");
		if (r < 0)
			goto out;
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d",
		 GROVE_JOURNAL_APP_ID, GROVE_JOURNAL_VERSION);
	r = exec_sql(j, sql, err, "migrate");
	if (r < 0)
		goto out;
	/* A failed COMMIT fails the open (closing the connection rolls back what
	 * is still pending); the next open reads user_version back and migrates
	 * again only if the steps did not land. */
	return exec_sql(j, "COMMIT", err, "migrate");
out:
	if (!sqlite3_get_autocommit(j->db))
		sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
	return r < 0 ? r : 0;
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
	const int flags =
		(j->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
		SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_PRIVATECACHE |
		SQLITE_OPEN_NOMUTEX;
	sqlite3_stmt *s = NULL;
	int64_t version;
	int rc, r;

	pthread_once(&held_vfs_once, held_vfs_register);
	if (held_vfs_rc != SQLITE_OK)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "open journal '%s': cannot register the sqlite VFS",
				       j->name);
	rc = sqlite3_open_v2(j->fdpath, &j->db, flags, HELD_VFS_NAME);
	if (rc != SQLITE_OK) {
		r = jfail(j, rc, err, "open");
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
	 * grove or not a database at all is left exactly as it is. */
	r = schema_check(j, &version, err);
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
		r = jfail(j, rc, err, "open");
		goto fail;
	}
	r = exec_sql(j, "PRAGMA synchronous = EXTRA; PRAGMA foreign_keys = ON", err, "open");
	if (r < 0)
		goto fail;
	if (version < GROVE_JOURNAL_VERSION) {
		r = migrate(j, err);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	disconnect(j);
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
	      struct grove_error *err)
{
	uid_t me = geteuid();

	if (named && (st->uid == me || st->uid == 0))
		return 0;
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

int
grove_journal_open_with(const char *path, unsigned int flags, struct grove_root *ret_root,
			struct grove_journal **ret, struct grove_error *err)
{
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_stat st;
	bool readonly = flags & GROVE_JOURNAL_READONLY, named = flags & GROVE_JOURNAL_NAMED;
	size_t len;
	int r, fd;

	if (!path || !*path)
		return grove_error_set(err, -GROVE_E_USAGE, "open state dir '': empty path");
	if (!readonly) {
		r = grove_fs_make_dirs(path, 0700, err);
		if (r < 0)
			return grove_error_prefix(err, "open state dir '%s'", path);
	}
	r = grove_root_open_nofollow(&root, path, err);
	if (r == -ELOOP)
		return grove_error_set(err, -GROVE_E_CONFIG,
				       "state dir '%s' is a symlink: refusing a log that may be "
				       "someone else's (name the folder itself)",
				       path);
	if (r < 0)
		return grove_error_prefix(err, "open state dir '%s'", path);
	r = grove_fs_stat_fd(root.fd, &st, err);
	if (r >= 0)
		r = check_trusted("state dir", path, &st, named, err);
	if (r >= 0)
		r = grove_fs_stat_at(root.fd, DB_NAME, &st, err);
	if (r < 0)
		goto fail;
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (st.type != GROVE_FT_NONE) {
		char name[PATH_MAX + 16];

		snprintf(name, sizeof(name), "%.*s/%s", (int)len, path, DB_NAME);
		if (st.type != GROVE_FT_REG) {
			r = grove_error_set(
				err, -GROVE_E_CONFIG, "journal '%s' is not a regular file (%s)",
				name, st.type == GROVE_FT_LINK ? "a symlink" : "a special file");
			goto fail;
		}
		r = check_trusted("journal", name, &st, named, err);
		if (r < 0)
			goto fail;
		/* grove writes its schema in the transaction that makes the file:
		 * an empty one is a damaged log, not a new one. */
		if (st.size == 0) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s' is empty (0 bytes), so its history is "
					    "lost: move it aside to start a new log",
					    name);
			goto fail;
		}
	} else if (readonly) {
		r = grove_error_set(err, -ENOENT, "open state dir '%s': no journal in it", path);
		goto fail;
	} else {
		/* Made here (not by sqlite) so that it is ours and private from the start. */
		fd = grove_fs_open_file_at(root.fd, DB_NAME, O_RDWR | O_CREAT | O_EXCL, 0600, err);
		if (fd < 0) {
			r = grove_error_prefix(err, "open state dir '%s'", path);
			goto fail;
		}
		grove_fd_close(fd);
	}
	if (!readonly) {
		/* Making locks/ now also finds a read-only state dir before sqlite does. */
		fd = grove_fs_open_or_make_dir(root.fd, LOCKS_DIR, 0700, err);
		if (fd < 0) {
			r = grove_error_prefix(err, "open state dir '%s'", path);
			goto fail;
		}
		grove_fd_close(fd);
	}

	j = calloc(1, sizeof(*j));
	if (j) {
		j->dirfd = -1;
		j->readonly = readonly;
		j->name = grove_strdupf("%.*s/%s", (int)len, path, DB_NAME);
	}
	if (!j || !j->name) {
		r = grove_error_errno(err, -ENOMEM, "open journal in '%s'", path);
		goto fail;
	}
	/* The journal keeps its own fd on the folder, so the name sqlite reopens
	 * the -journal by stays valid whatever the caller does with root.fd. */
	j->dirfd = fcntl(root.fd, F_DUPFD_CLOEXEC, 3);
	if (j->dirfd < 0) {
		r = grove_error_errno(err, -errno, "open journal in '%s'", path);
		goto fail;
	}
	snprintf(j->fdpath, sizeof(j->fdpath), "/proc/self/fd/%d/%s", j->dirfd, DB_NAME);
	j->busy_ms = busy_timeout_ms();
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

static void
rollback(struct grove_journal *j)
{
	if (j->db && !sqlite3_get_autocommit(j->db))
		stmt_run(j, ST_ROLLBACK, NULL, "roll back");
}

static int
write_begin(struct grove_journal *j, struct grove_error *err, const char *what)
{
	return stmt_run(j, ST_BEGIN, err, what);
}

/*
 * COMMIT. 0 done; < 0 with *ret_unknown false: not committed (nothing
 * changed); < 0 with *ret_unknown true: the outcome is unknown and the
 * connection has been reopened for the caller to read back. Never retried:
 * a second fsync after a failed one proves nothing.
 */
static int
write_commit(struct grove_journal *j, bool *ret_unknown, struct grove_error *err, const char *what)
{
	struct grove_error e2, first;
	int rc, r;

	*ret_unknown = false;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = stmt_get(j, ST_COMMIT, &s, err);
		if (r < 0) {
			rollback(j);
			return r;
		}
		rc = sqlite3_step(s);
	}
	if (rc == SQLITE_DONE)
		return 0;
	r = jfail(j, rc, err, what);
	/* BUSY at COMMIT means the lock for writing the file was never taken:
	 * nothing reached the file, the transaction is still open, and rolling it
	 * back leaves a known outcome. */
	if ((rc & 0xff) == SQLITE_BUSY && !sqlite3_get_autocommit(j->db)) {
		rollback(j);
		return r;
	}
	rollback(j);
	first = *err;
	if (reconnect(j, &e2) < 0)
		return grove_error_set(err, r, "%s; reopening it to learn the outcome failed: %s",
				       first.msg, e2.msg);
	*ret_unknown = true;
	return r;
}

/* ---- targets ---- */

static int
target_lookup(struct grove_journal *j, const struct grove_root *root, const char *path,
	      int64_t *ret_id, bool *ret_same_path, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = stmt_get(j, ST_TARGET_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, (int64_t)root->dev);
	sqlite3_bind_int64(s, 2, (int64_t)root->ino);
	sqlite3_bind_int64(s, 3, root->born);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		*ret_id = 0;
		return 0;
	}
	if (rc != SQLITE_ROW)
		return jfail(j, rc, err, "read");
	*ret_id = sqlite3_column_int64(s, 0);
	*ret_same_path = sqlite3_column_text(s, 1) &&
			 strcmp((const char *)sqlite3_column_text(s, 1), path) == 0;
	return 0;
}

/* Inserts the target (or updates its path), inside the caller's write transaction. */
static int
target_put(struct grove_journal *j, const char *path, int64_t dev, int64_t ino, int64_t born,
	   struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = stmt_get(j, ST_TARGET_PUT, &s, err);

	if (r < 0)
		return r;
	bind_text(s, 1, path);
	sqlite3_bind_int64(s, 2, dev);
	sqlite3_bind_int64(s, 3, ino);
	sqlite3_bind_int64(s, 4, born);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		return jfail(j, rc, err, "register target in");
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
	if (id && !same)
		return grove_journal_target(j, root, ret_id, err);
	if (!id) {
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
		j->target.pending = true;
		j->target.id = 0;
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
	int rc, r;

	if (!j->target.pending && j->target.id) {
		*ret_id = j->target.id;
		return 0;
	}
	if (!j->target.pending)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "log transaction in journal '%s': no target", j->name);
	r = target_put(j, j->target.path, j->target.dev, j->target.ino, j->target.born, err);
	if (r < 0)
		return r;
	r = stmt_get(j, ST_TARGET_GET, &s, err);
	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, j->target.dev);
	sqlite3_bind_int64(s, 2, j->target.ino);
	sqlite3_bind_int64(s, 3, j->target.born);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? grove_error_set(err, -GROVE_E_INTERNAL,
							   "register target '%s' in journal '%s': "
							   "not found after writing it",
							   j->target.path, j->name)
					 : jfail(j, rc, err, "register target in");
	*ret_id = sqlite3_column_int64(s, 0);
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
	r = write_begin(j, err, "register target in");
	if (r < 0)
		return r;
	r = target_put(j, path, (int64_t)root->dev, (int64_t)root->ino, root->born, err);
	if (r < 0) {
		rollback(j);
		return r;
	}
	r = write_commit(j, &unknown, err, "register target in");
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

static int
parse_kind(const char *s, enum grove_op_kind *ret)
{
	for (int k = GROVE_OP_MKDIR; k <= GROVE_OP_ADOPT; k++)
		if (s && strcmp(s, grove_op_kind_name((enum grove_op_kind)k)) == 0) {
			*ret = (enum grove_op_kind)k;
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
	int rc, r = stmt_get(j, ST_TXN_STATE, &s, err);

	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	sqlite3_bind_int64(s, 1, txn);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return jfail(j, rc, err, "read");
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
	int rc, r = stmt_get(j, ST_TXN_INSERT, &s, err);

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
		return jfail(j, rc, err, "log transaction in");
	*ret_id = sqlite3_last_insert_rowid(j->db);
	return 0;
}

/* Binds op i of the plan as the row starting at parameter base + 1. */
static void
op_bind(sqlite3_stmt *s, int base, int64_t txn, size_t i, const struct grove_op *op)
{
	sqlite3_bind_int64(s, base + 1, txn);
	sqlite3_bind_int64(s, base + 2, (int64_t)i);
	bind_text(s, base + 3, grove_op_kind_name(op->kind));
	bind_text(s, base + 4, op->path);
	bind_text(s, base + 5, op->old_text);
	bind_text(s, base + 6, op->text);
	bind_text(s, base + 7, op->stow_path);
	bind_text(s, base + 8, op->package);
}

static int
ops_insert_rows(struct grove_journal *j, int64_t txn, const struct grove_plan *plan,
		struct grove_error *err)
{
	sqlite3_stmt *s = NULL;
	size_t i = 0;
	int r;

	if (plan->n_ops >= OPS_BATCH_MIN) {
		r = stmt_get(j, ST_OP_INSERT_BATCH, &s, err);
		if (r < 0)
			return r;
		for (; i + OPS_BATCH <= plan->n_ops; i += OPS_BATCH) {
			int rc;

			for (int k = 0; k < OPS_BATCH; k++)
				op_bind(s, k * OPS_COLUMNS, txn, i + k, &plan->ops[i + k]);
			rc = sqlite3_step(s);
			sqlite3_reset(s);
			if (rc != SQLITE_DONE) {
				sqlite3_clear_bindings(s);
				return jfail(j, rc, err, "log transaction in");
			}
		}
		sqlite3_clear_bindings(s);
	}
	if (i == plan->n_ops)
		return 0;
	r = stmt_get(j, ST_OP_INSERT, &s, err);
	if (r < 0)
		return r;
	for (; i < plan->n_ops; i++) {
		int rc;

		op_bind(s, 0, txn, i, &plan->ops[i]);
		rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc != SQLITE_DONE) {
			sqlite3_clear_bindings(s);
			return jfail(j, rc, err, "log transaction in");
		}
	}
	sqlite3_clear_bindings(s);
	return 0;
}

/*
 * The ops table's CHECK on kind is an IN list, which SQLite rebuilds as a
 * temporary b-tree for every row it checks: a third of the cost of logging a
 * large plan. Every kind written here is one of grove_op_kind_name's names,
 * checked below, so the constraint is switched off for these rows only (it
 * stays in the schema for anything else that writes the table).
 */
static int
ops_insert(struct grove_journal *j, int64_t txn, const struct grove_plan *plan,
	   struct grove_error *err)
{
	int r, r2;

	for (size_t i = 0; i < plan->n_ops; i++)
		if (strcmp(grove_op_kind_name(plan->ops[i].kind), "?") == 0)
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "log transaction in '%s': op %zu has no kind",
					       j->name, i);
	r = exec_sql(j, "PRAGMA ignore_check_constraints = ON", err, "log transaction in");
	if (r < 0)
		return r;
	r = ops_insert_rows(j, txn, plan, err);
	r2 = exec_sql(j, "PRAGMA ignore_check_constraints = OFF", r < 0 ? NULL : err,
		      "log transaction in");
	return r < 0 ? r : r2;
}

static int
alt_changes_insert(struct grove_journal *j, int64_t txn, const struct grove_journal_alt_change *alt,
		   size_t n_alt, struct grove_error *err)
{
	for (size_t i = 0; i < n_alt; i++) {
		cleanup_stmt sqlite3_stmt *s = NULL;
		int rc, r = stmt_get(j, ST_ALT_TXN_PUT, &s, err);

		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, txn);
		sqlite3_bind_int64(s, 2, alt[i].dir_id);
		bind_text(s, 3, alt[i].name);
		bind_text(s, 4, alt[i].before);
		bind_text(s, 5, alt[i].after);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return jfail(j, rc, err, "log transaction in");
	}
	return 0;
}

int
grove_journal_begin(struct grove_journal *j, int64_t target_id, const char *command,
		    const struct grove_root *stow, int64_t undoes, const struct grove_plan *plan,
		    int64_t *ret_txn, struct grove_error *err)
{
	return grove_journal_begin_alt(j, target_id, command, stow, undoes, plan, NULL, 0, ret_txn,
				       err);
}

/* The deferred target is in the log now (committed with the transaction). */
static void
target_registered(struct grove_journal *j, int64_t id)
{
	if (j->target.pending) {
		j->target.pending = false;
		j->target.id = id;
	}
}

int
grove_journal_begin_alt(struct grove_journal *j, int64_t target_id, const char *command,
			const struct grove_root *stow, int64_t undoes,
			const struct grove_plan *plan, const struct grove_journal_alt_change *alt,
			size_t n_alt, int64_t *ret_txn, struct grove_error *err)
{
	struct grove_error saved, local;
	struct txn_state st;
	double started = now_seconds();
	int64_t id = 0;
	bool unknown;
	int r;

	if (!err)
		err = &local;
	r = write_begin(j, err, "log transaction in");
	if (r < 0)
		return r;
	if (!target_id)
		r = target_put_pending(j, &target_id, err);
	if (r >= 0)
		r = txn_insert(j, target_id, command, stow, undoes, started, &id, err);
	if (r >= 0)
		r = ops_insert(j, id, plan, err);
	if (r >= 0)
		r = alt_changes_insert(j, id, alt, n_alt, err);
	if (r < 0) {
		rollback(j);
		return r;
	}
	r = write_commit(j, &unknown, err, "log transaction in");
	if (r >= 0) {
		target_registered(j, target_id);
		*ret_txn = id;
		return 0;
	}
	if (!unknown)
		return r;
	/* Outcome unknown: the row is ours only if it is the one we wrote. The
	 * caller holds the target's lock, so no other grove wrote a transaction
	 * for this target meanwhile. */
	saved = *err;
	r = txn_state_read(j, id, &st, err);
	if (r < 0)
		return grove_error_prefix(err, "%s; reading it back", saved.msg);
	if (st.found && st.state == GROVE_TXN_INTENT && st.target_id == target_id &&
	    st.started == started && st.n_ops == (int64_t)plan->n_ops &&
	    prefix_matches(st.command_prefix, st.command_null, command)) {
		grove_error_clear(err);
		target_registered(j, target_id);
		*ret_txn = id;
		return 0;
	}
	*err = saved;
	return grove_error_prefix(err, "the transaction was not logged");
}

static int alt_apply_txn(struct grove_journal *j, int64_t txn, struct grove_error *err);

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
	r = write_begin(j, err, "finish transaction in");
	if (r < 0)
		return r;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = stmt_get(j, ST_TXN_FINISH, &s, err);
		if (r < 0) {
			rollback(j);
			return r;
		}
		sqlite3_bind_int64(s, 1, txn);
		bind_text(s, 2, state_names[state]);
		bind_text(s, 3, note);
		sqlite3_bind_double(s, 4, now_seconds());
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE) {
			r = jfail(j, rc, err, "finish transaction in");
			rollback(j);
			return r;
		}
	}
	if (sqlite3_changes(j->db) != 1) {
		rollback(j);
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
	/* The groups the transaction changes are saved by the same SQLite
	 * transaction that marks it committed: links and groups commit together. */
	if (state == GROVE_TXN_COMMITTED) {
		r = alt_apply_txn(j, txn, err);
		if (r < 0) {
			rollback(j);
			return r;
		}
	}
	r = write_commit(j, &unknown, err, "finish transaction in");
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
	return query_id(j, ST_UNFINISHED, target_id, ret_txn, err);
}

int
grove_journal_last_undoable(struct grove_journal *j, int64_t target_id, int64_t *ret_txn,
			    struct grove_error *err)
{
	return query_id(j, ST_LAST_UNDOABLE, target_id, ret_txn, err);
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
	int rc, r = stmt_get(j, ST_TXN_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return grove_error_set(err, -ENOENT, "read journal '%s': no transaction %" PRId64,
				       j->name, txn);
	if (rc != SQLITE_ROW)
		return jfail(j, rc, err, "read");
	return txn_from_row(j, s, ret, err);
}

int
grove_journal_list(struct grove_journal *j, int64_t target_id, size_t limit,
		   struct grove_txn **ret_txns, size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_txn *txns = NULL;
	size_t n = 0, cap = 0;
	int rc, r = stmt_get(j, ST_LIST, &s, err);

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
		r = jfail(j, rc, err, "read");
		goto fail;
	}
	*ret_txns = txns;
	*ret_n = n;
	return 0;
fail:
	grove_txns_free(txns, n);
	return r;
}

/* Column col of s as text, NULL for SQL NULL; false when it holds a NUL byte
 * or is PATH_MAX long or longer (a row grove did not write). */
static bool
column_text_ok(sqlite3_stmt *s, int col, const char **ret)
{
	const char *t = (const char *)sqlite3_column_text(s, col);
	int n = sqlite3_column_bytes(s, col);

	*ret = t;
	if (!t)
		return sqlite3_column_type(s, col) == SQLITE_NULL;
	return n >= 0 && (size_t)n == strlen(t) && n < PATH_MAX;
}

/*
 * Checks an op row read back (columns from first: path, old_text, text,
 * stow_path, package) before anything uses it; returns why it is refused, or
 * NULL. Paths are relative to the target (or stow dir) and stay beneath it
 * lexically, so no op can name anything outside its root, whatever the
 * filesystem would do with a ".." (DESIGN.md invariant 8).
 */
static const char *
op_row_check(sqlite3_stmt *s, int first)
{
	const char *path, *old_text, *text, *stow_path, *package;

	if (!column_text_ok(s, first, &path) || !column_text_ok(s, first + 1, &old_text) ||
	    !column_text_ok(s, first + 2, &text) || !column_text_ok(s, first + 3, &stow_path) ||
	    !column_text_ok(s, first + 4, &package))
		return "a field holds a NUL byte, is not text or is too long";
	if (!grove_path_is_clean_relative(path))
		return "its path is not a clean relative path beneath the target";
	if (grove_path_slashes(path) >= GROVE_TREE_MAX_DEPTH)
		return "its path is deeper than grove supports";
	if (stow_path && !grove_path_is_clean_relative(stow_path))
		return "its stow path is not a clean relative path beneath the stow dir";
	if (package && !grove_path_is_name(package))
		return "its package is not a single name";
	return NULL;
}

int
grove_journal_stow_used(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			int64_t dev, int64_t ino, int64_t born, bool *ret, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	int rc, r = stmt_get(j, ST_STOW_USED, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, target_id);
	bind_text(s, 2, stow_dir);
	sqlite3_bind_int64(s, 3, dev);
	sqlite3_bind_int64(s, 4, ino);
	sqlite3_bind_int64(s, 5, born);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return jfail(j, rc, err, "read");
	*ret = rc == SQLITE_ROW;
	return 0;
}

int
grove_journal_ops(struct grove_journal *j, int64_t txn, struct grove_plan *plan,
		  struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	size_t n0 = plan->n_ops;
	int rc, r = stmt_get(j, ST_OPS_GET, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, txn);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 0);
		const char *why;
		enum grove_op_kind k;

		why = op_row_check(s, 1);
		if (why) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %" PRId64 " op %zu: %s",
					    j->name, txn, plan->n_ops - n0, why);
			goto fail;
		}
		if (parse_kind(kind, &k) < 0) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %" PRId64
					    " has an op of unknown kind '%s'",
					    j->name, txn, kind ? kind : "");
			goto fail;
		}
		r = grove_plan_add_op(plan, k, (const char *)sqlite3_column_text(s, 1),
				      (const char *)sqlite3_column_text(s, 2),
				      (const char *)sqlite3_column_text(s, 3),
				      (const char *)sqlite3_column_text(s, 4),
				      (const char *)sqlite3_column_text(s, 5));
		if (r < 0) {
			r = grove_error_errno(err, r, "read journal '%s'", j->name);
			goto fail;
		}
	}
	if (rc != SQLITE_DONE) {
		r = jfail(j, rc, err, "read");
		goto fail;
	}
	return 0;
fail:
	/* Leave the caller's plan as it was. */
	for (size_t i = n0; i < plan->n_ops; i++) {
		struct grove_op *op = &plan->ops[i];

		free(op->path);
		free(op->old_text);
		free(op->text);
		free(op->stow_path);
		free(op->package);
	}
	plan->n_ops = n0;
	return r;
}

/* ---- ownership ---- */

int
grove_journal_owned(struct grove_journal *j, int64_t target_id, struct grove_owned **ret,
		    size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_owned_replay *m = NULL;
	int rc, r = stmt_get(j, ST_OWNED_OPS, &s, err);

	if (r < 0)
		return r;
	m = grove_owned_replay_new();
	if (!m)
		return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
	sqlite3_bind_int64(s, 1, target_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 0);
		const char *path = (const char *)sqlite3_column_text(s, 1);
		const char *text, *package;
		enum grove_op_kind k;

		if (!grove_path_is_clean_relative(path) || !column_text_ok(s, 1, &path) ||
		    !column_text_ok(s, 2, &text) || !column_text_ok(s, 3, &package) ||
		    (package && !grove_path_is_name(package))) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': an op of target %" PRId64
					    " has a path that is not clean and relative, or a bad "
					    "text or package",
					    j->name, target_id);
			goto out;
		}
		if (parse_kind(kind, &k) < 0) {
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': an op of target %" PRId64
					    " has an unknown kind '%s' or no path",
					    j->name, target_id, kind ? kind : "");
			goto out;
		}
		r = grove_owned_replay_op(m, k, path, (const char *)sqlite3_column_text(s, 2),
					  (const char *)sqlite3_column_text(s, 3));
		if (r < 0) {
			r = grove_error_errno(err, r, "read journal '%s'", j->name);
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		r = jfail(j, rc, err, "read");
		goto out;
	}
	r = grove_owned_replay_take(m, ret, ret_n);
	if (r < 0)
		r = grove_error_errno(err, r, "read journal '%s'", j->name);
out:
	grove_owned_replay_free(m);
	return r;
}

/* ---- alternatives state ---- */

int
grove_journal_alt_dir(struct grove_journal *j, const char *admindir, const char *altdir,
		      int64_t *ret_id, struct grove_error *err)
{
	bool unknown;
	int rc, r;

	for (int pass = 0; pass < 2; pass++) {
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = stmt_get(j, ST_ALT_DIR_GET, &s, err);
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
			return jfail(j, rc, err, "read");
		if (pass == 1)
			break;
		sqlite3_reset(s);
		r = write_begin(j, err, "register alternatives dir in");
		if (r < 0)
			return r;
		{
			cleanup_stmt sqlite3_stmt *p = NULL;

			r = stmt_get(j, ST_ALT_DIR_PUT, &p, err);
			if (r >= 0) {
				bind_text(p, 1, admindir);
				bind_text(p, 2, altdir);
				rc = sqlite3_step(p);
				if (rc != SQLITE_DONE)
					r = jfail(j, rc, err, "register alternatives dir in");
			}
		}
		if (r < 0) {
			rollback(j);
			return r;
		}
		r = write_commit(j, &unknown, err, "register alternatives dir in");
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
	int rc, r = stmt_get(j, id, &s, err);

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
	return rc == SQLITE_DONE ? 0 : jfail(j, rc, err, "read");
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
	r = stmt_get(j, ST_ALT_CHOICES, &s, err);
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
	return rc == SQLITE_DONE ? 0 : jfail(j, rc, err, "read");
}

int
grove_journal_alt_load(struct grove_journal *j, int64_t dir_id, struct grove_alt_group **ret,
		       size_t *ret_n, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct grove_alt_group *v = NULL;
	size_t n = 0;
	int rc, r = stmt_get(j, ST_ALT_GROUPS, &s, err);

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
		r = jfail(j, rc, err, "read");
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
	int rc, r = stmt_get(j, id, &s, err);

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
	return rc == SQLITE_DONE ? 0 : jfail(j, rc, err, "save alternatives in");
}

static int
alt_write_group(struct grove_journal *j, int64_t dir_id, const struct grove_alt_group *g,
		struct grove_error *err)
{
	int64_t gid;
	int rc, r;

	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = stmt_get(j, ST_ALT_GROUP_DEL, &s, err);
		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, dir_id);
		bind_text(s, 2, g->name);
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return jfail(j, rc, err, "save alternatives in");
	}
	if (g->n_choices == 0)
		return 0;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = stmt_get(j, ST_ALT_GROUP_PUT, &s, err);
		if (r < 0)
			return r;
		sqlite3_bind_int64(s, 1, dir_id);
		bind_text(s, 2, g->name);
		bind_text(s, 3, g->link);
		bind_text(s, 4, g->manual ? "manual" : "auto");
		rc = sqlite3_step(s);
		if (rc != SQLITE_DONE)
			return jfail(j, rc, err, "save alternatives in");
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
	int r = write_begin(j, err, "save alternatives in");

	if (r < 0)
		return r;
	r = alt_write_group(j, dir_id, g, err);
	if (r < 0) {
		rollback(j);
		return r;
	}
	r = write_commit(j, &unknown, err, "save alternatives in");
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
	int rc, r = stmt_get(j, ST_ALT_TXN_GET, &s, err);

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
		return jfail(j, rc, err, "read");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Saves the after state of every group txn changes (inside the caller's write transaction). */
static int
alt_apply_txn(struct grove_journal *j, int64_t txn, struct grove_error *err)
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
