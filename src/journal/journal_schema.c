/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's schema: the migration steps and the check that a file is grove's, of a
 * version this grove can use. */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>

#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

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
	/* 4 -> 5: each group as the text grove alt saves, in update-alternatives'
	 * administrative file format, so the journal stores groups without
	 * reading them. The groups of v2's tables become that text here: mode,
	 * link, the followers' names and links, a blank line, then every choice
	 * (path, priority, its file for each follower or an empty line) in
	 * saved order, and a blank line; a group without choices was none. */
	"CREATE TABLE alt_states ("
	"  dir_id INTEGER NOT NULL REFERENCES alt_dirs(id),"
	"  name TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  PRIMARY KEY (dir_id, name)) WITHOUT ROWID;"
	"INSERT INTO alt_states (dir_id, name, body)"
	" SELECT g.dir_id, g.name, g.mode || char(10) || g.link || char(10)"
	"  || coalesce((SELECT group_concat(s.name || char(10) || s.link || char(10), '')"
	"     FROM (SELECT name, link FROM alt_slaves WHERE group_id = g.id ORDER BY seq) s), '')"
	"  || char(10)"
	"  || (SELECT group_concat(c.path || char(10) || c.priority || char(10)"
	"       || coalesce((SELECT group_concat(coalesce((SELECT cs.path"
	"            FROM alt_choice_slaves cs WHERE cs.group_id = g.id"
	"            AND cs.choice_seq = c.seq AND cs.name = s.name), '') || char(10), '')"
	"          FROM (SELECT name FROM alt_slaves WHERE group_id = g.id ORDER BY seq) s),"
	"         ''), '')"
	"     FROM (SELECT seq, path, priority FROM alt_choices WHERE group_id = g.id"
	"       ORDER BY seq) c)"
	"  || char(10)"
	" FROM alt_groups g WHERE EXISTS (SELECT 1 FROM alt_choices WHERE group_id = g.id);"
	"DROP TABLE alt_choice_slaves;"
	"DROP TABLE alt_choices;"
	"DROP TABLE alt_slaves;"
	"DROP TABLE alt_groups;",
	/* 5 -> 6: grove alt writes each group's admin file (ADMINDIR/NAME) and takes
	 * in the files update-alternatives writes. A group saved before has no
	 * file yet: it is marked, so that its missing file is not read as
	 * update-alternatives having removed it; the next mutating command writes
	 * the file, and saving the group clears the mark. */
	"ALTER TABLE alt_states ADD COLUMN unwritten INTEGER NOT NULL DEFAULT 0;"
	"UPDATE alt_states SET unwritten = 1;",
	/* 6 -> 7: an op may be recorded (1) rather than made (NULL): `grove import` logs the
	 * links GNU Stow made as LINKs grove did not make, and its undo forgets them with
	 * recorded UNLINKs (plan.h); the disk is left as it is either way. */
	"ALTER TABLE ops ADD COLUMN recorded INTEGER;",
	/* 7 -> 8: the packages a transaction stows or unstows, per stow dir, with the
	 * layout options they were stowed with (--dotfiles, --no-folding), so that a
	 * later command on the package uses them (docs/stow.md, "Recorded options").
	 * Undo and rollback write the state they put back. A package whose last
	 * change predates this table has no row: no recorded options. */
	"CREATE TABLE txn_packages ("
	"  txn_id INTEGER NOT NULL REFERENCES txns(id),"
	"  stow_dir TEXT NOT NULL,"
	"  package TEXT NOT NULL,"
	"  stowed INTEGER NOT NULL CHECK (stowed IN (0, 1)),"
	"  dotfiles INTEGER NOT NULL CHECK (dotfiles IN (0, 1)),"
	"  no_folding INTEGER NOT NULL CHECK (no_folding IN (0, 1)),"
	"  PRIMARY KEY (txn_id, stow_dir, package)) WITHOUT ROWID;"
	"CREATE INDEX txn_packages_package ON txn_packages (package, stow_dir, txn_id);",
	/* 8 -> 9: which transaction holds each package's newest committed row, per target and
	 * stow dir, so that reading a package's recorded options is one seek (and all of a stow
	 * dir's one range) whatever the log's history, and writing a transaction's rows no longer
	 * touches an index keyed by package (one leaf page per package once the log has history).
	 * The commit of a transaction moves its packages' pointers in the same SQLite
	 * transaction; the options stay in txn_packages, read through the pointer. */
	"DROP INDEX txn_packages_package;"
	"CREATE TABLE pkg_latest ("
	"  target_id INTEGER NOT NULL,"
	"  stow_dir TEXT NOT NULL,"
	"  package TEXT NOT NULL,"
	"  txn_id INTEGER NOT NULL,"
	"  PRIMARY KEY (target_id, stow_dir, package)) WITHOUT ROWID;"
	"INSERT INTO pkg_latest (target_id, stow_dir, package, txn_id)"
	" SELECT t.target_id, p.stow_dir, p.package, max(p.txn_id) FROM txn_packages p"
	" JOIN txns t ON t.id = p.txn_id WHERE t.state = 'committed'"
	" GROUP BY t.target_id, p.stow_dir, p.package;",
	/* 9 -> 10: a transaction's ops as chunks of consecutive ops, each packed in one row's body
	 * (docs/journal.md, "Ops"): logging a row per op cost most of a stow's log. The ops rows
	 * become chunks in C (migrate_step below) and the ops table goes. */
	"CREATE TABLE op_chunks ("
	"  txn_id INTEGER NOT NULL REFERENCES txns(id),"
	"  first_seq INTEGER NOT NULL,"
	"  n INTEGER NOT NULL,"
	"  body BLOB NOT NULL,"
	"  PRIMARY KEY (txn_id, first_seq)) WITHOUT ROWID;",
	/* 10 -> 11: a transaction's packages packed in one row per stow dir, and each target's
	 * latest committed state packed in chunks of names (docs/journal.md, "Packages"): a row
	 * per package cost a fifth of a stow of many packages. The rows are packed in C
	 * (migrate_step below) and txn_packages and pkg_latest go. */
	"CREATE TABLE txn_pkgs ("
	"  txn_id INTEGER NOT NULL REFERENCES txns(id),"
	"  stow_dir TEXT NOT NULL,"
	"  n INTEGER NOT NULL,"
	"  body BLOB NOT NULL,"
	"  PRIMARY KEY (txn_id, stow_dir)) WITHOUT ROWID;"
	"CREATE TABLE pkg_state ("
	"  target_id INTEGER NOT NULL,"
	"  stow_dir TEXT NOT NULL,"
	"  first TEXT NOT NULL,"
	"  n INTEGER NOT NULL,"
	"  body BLOB NOT NULL,"
	"  PRIMARY KEY (target_id, stow_dir, first)) WITHOUT ROWID;",
	/* 11 -> 12: the transactions still open (intent or stuck), which every mutating command
	 * asks for first (recovery): found through txns_target, that question read every
	 * transaction of the target, so that each command cost more the longer the log's history
	 * (600 transactions: 0.5 M instructions). Only open transactions are in this index: a
	 * seek. */
	"CREATE INDEX txns_open ON txns (target_id, id) WHERE state IN ('intent', 'stuck');",
	/* 12 -> 13: the roots a transaction uses besides its target and stow dir (an
	 * alternatives pair's admindir and altdir), each as its parent (the target, or "/") and
	 * the path beneath it, how it was found there (no symlink followed, or inside the root)
	 * and which folder it was (device, inode, birth time), so that undo, rollback and
	 * recovery reopen it beneath that parent and write nothing when another folder or a
	 * symlink stands there now (docs/journal.md, "Roots"). Transactions logged before have
	 * no rows: a replay reopens their roots by the path the log names, beneath their parent,
	 * following no symlink. */
	"CREATE TABLE txn_roots ("
	"  txn_id INTEGER NOT NULL REFERENCES txns(id),"
	"  kind TEXT NOT NULL CHECK (kind IN ('admindir', 'altdir')),"
	"  dir_id INTEGER NOT NULL,"
	"  parent TEXT NOT NULL CHECK (parent IN ('target', '/')),"
	"  rel TEXT NOT NULL,"
	"  resolve TEXT NOT NULL CHECK (resolve IN ('beneath', 'in_root')),"
	"  dev INTEGER NOT NULL,"
	"  ino INTEGER NOT NULL,"
	"  born INTEGER NOT NULL,"
	"  PRIMARY KEY (txn_id, kind, dir_id)) WITHOUT ROWID;",
	/* 13 -> 14: who ran each transaction: the effective uid, and the user sudo was run by
	 * (SUDO_USER) when grove ran as root through sudo (grove log shows it: root's system log
	 * is shared by every administrator). Transactions logged before have neither. */
	"ALTER TABLE txns ADD COLUMN uid INTEGER;"
	"ALTER TABLE txns ADD COLUMN sudo_user TEXT;",
	/* 14 -> 15: the packages whose recorded-options notice was shown, with the options it
	 * named (docs/stow.md "Recorded options"): printed once per package and options, not on
	 * every command. No part of any transaction; rows of a target another grove forgets are
	 * harmless (they only silence a notice). */
	"CREATE TABLE pkg_told ("
	"  target_id INTEGER NOT NULL,"
	"  stow_dir TEXT NOT NULL,"
	"  package TEXT NOT NULL,"
	"  dotfiles INTEGER NOT NULL,"
	"  no_folding INTEGER NOT NULL,"
	"  PRIMARY KEY (target_id, stow_dir, package)) WITHOUT ROWID;",
};

#define SCHEMA_STEPS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == GROVE_JOURNAL_VERSION,
	       "one migration step per schema version");

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
		int r = grove_journal_fail(j, rc, err, "open");

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
int
grove_journal_schema_check(struct grove_journal *j, int64_t *ret_version, struct grove_error *err)
{
	int64_t app_id = 0, version = 0, n_objects = 0;
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

/* Runs migrations[v] (taking the schema from v to v + 1), and what the step needs besides SQL. */
static int
migrate_step(struct grove_journal *j, int64_t v, struct grove_error *err)
{
	int r = grove_journal_exec_sql(j, migrations[v], err, "migrate");

	if (r >= 0 && v == 9)
		r = grove_journal_ops_to_chunks(j, err);
	if (r >= 0 && v == 10)
		r = grove_journal_pkgs_to_packed(j, err);
	return r;
}

/* Brings the schema to GROVE_JOURNAL_VERSION in one write transaction. */
int
grove_journal_schema_migrate(struct grove_journal *j, struct grove_error *err)
{
	char sql[128];
	int64_t version = 0;
	int r;

	r = grove_journal_exec_sql(j, "BEGIN IMMEDIATE", err, "migrate");
	if (r < 0)
		return r;
	/* Read again under the write lock: another grove may have migrated it
	 * since we looked. */
	r = grove_journal_schema_check(j, &version, err);
	if (r <= 0)
		goto out;
	for (int64_t v = version; v < SCHEMA_STEPS; v++) {
		r = migrate_step(j, v, err);
		if (r < 0)
			goto out;
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d",
		 GROVE_JOURNAL_APP_ID, GROVE_JOURNAL_VERSION);
	r = grove_journal_exec_sql(j, sql, err, "migrate");
	if (r < 0)
		goto out;
	/* A failed COMMIT fails the open (closing the connection rolls back what
	 * is still pending); the next open reads user_version back and migrates
	 * again only if the steps did not land. */
	return grove_journal_exec_sql(j, "COMMIT", err, "migrate");
out:
	if (!sqlite3_get_autocommit(j->db))
		sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
	return r < 0 ? r : 0;
}
