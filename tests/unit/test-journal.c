/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests: the transaction log (state dir, schema checks, transactions, ownership) and the
 * per-target writer lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grove/journal.h"
#include "journal/journal_int.h"
#include "testutil.h"

/* ---- a COMMIT that fails (linked with -Wl,--wrap=sqlite3_step) ---- */

enum fail_commit {
	FAIL_NONE,
	FAIL_AFTER_COMMIT,  /* the commit lands, then an error is reported */
	FAIL_BEFORE_COMMIT, /* the transaction is rolled back and an error reported */
};

static enum fail_commit fail_commit;

int __real_sqlite3_step(sqlite3_stmt *s);
int __wrap_sqlite3_step(sqlite3_stmt *s);

int
__wrap_sqlite3_step(sqlite3_stmt *s)
{
	const char *sql = sqlite3_sql(s);
	enum fail_commit mode = fail_commit;

	if (mode == FAIL_NONE || !sql || strcmp(sql, "COMMIT") != 0)
		return __real_sqlite3_step(s);
	fail_commit = FAIL_NONE;
	if (mode == FAIL_AFTER_COMMIT)
		assert_int_equal(__real_sqlite3_step(s), SQLITE_DONE);
	else
		assert_int_equal(sqlite3_exec(sqlite3_db_handle(s), "ROLLBACK", NULL, NULL, NULL),
				 SQLITE_OK);
	return SQLITE_IOERR;
}

/* Takes a log of this schema back to one before 15 (the recorded-options notices shown). */
#define BEFORE_15 "DROP TABLE pkg_told; "
/* Takes a log of this schema back to one before 14 (who ran each transaction): with a lower
 * user_version, opening it migrates it forward again. */
#define BEFORE_14 \
	BEFORE_15 "ALTER TABLE txns DROP COLUMN uid; ALTER TABLE txns DROP COLUMN sudo_user; "

/* ---- fixture ---- */

struct fx {
	char *dir;    /* temporary folder */
	char *state;  /* dir/state */
	char *target; /* dir/target */
	struct grove_root sroot, troot;
	struct grove_journal *j;
	int64_t tid;
	struct grove_error err;
};

static int
setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	umask(022);
	unsetenv("GROVE_JOURNAL_BUSY_MS");
	fx->dir = tu_mkdtemp();
	tu_build(fx->dir, "d target\n");
	fx->state = tu_path(fx->dir, "state");
	fx->target = tu_path(fx->dir, "target");
	assert_int_equal(grove_journal_open(fx->state, &fx->sroot, &fx->j, &fx->err), 0);
	assert_int_equal(grove_root_open(&fx->troot, fx->target, &fx->err), 0);
	assert_int_equal(grove_journal_target(fx->j, &fx->troot, &fx->tid, &fx->err), 0);
	assert_true(fx->tid > 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	grove_journal_close(fx->j);
	grove_root_release(&fx->sroot);
	grove_root_release(&fx->troot);
	tu_rmtree(fx->dir);
	free(fx->dir);
	free(fx->state);
	free(fx->target);
	free(fx);
	return 0;
}

static void
add(struct grove_plan *p, enum grove_op_kind kind, const char *path, const char *old_text,
    const char *text, const char *stow_path, const char *package)
{
	assert_int_equal(grove_plan_add_op(p, kind, path, old_text, text, stow_path, package), 0);
}

/* Logs plan for the fixture's target and finishes it in state (INTENT: left unfinished). */
static int64_t
log_txn(struct fx *fx, const struct grove_plan *plan, enum grove_txn_state state, int64_t undoes)
{
	int64_t id = 0;

	assert_int_equal(grove_journal_begin(fx->j, fx->tid, "grove test", NULL, undoes, plan, &id,
					     &fx->err),
			 0);
	assert_true(id > 0);
	if (state != GROVE_TXN_INTENT)
		assert_int_equal(grove_journal_finish(fx->j, id, state, NULL, &fx->err), 0);
	return id;
}

static int64_t
log_one(struct fx *fx, enum grove_op_kind kind, const char *path, enum grove_txn_state state,
	int64_t undoes)
{
	struct grove_plan p;
	int64_t id;

	grove_plan_init(&p);
	add(&p, kind, path, kind == GROVE_OP_UNLINK ? "old" : NULL,
	    kind == GROVE_OP_LINK ? "new" : NULL, NULL, NULL);
	id = log_txn(fx, &p, state, undoes);
	grove_plan_release(&p);
	return id;
}

static double
now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Runs sql on the database at path with a plain connection of the test's own. */
static void
raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static int64_t
raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* ---- schema 10's package rows ---- */

/*
 * Turns the fixture's log back into what schema 10 wrote for its packages: every transaction's
 * packages, read back through fx->j, one txn_packages row each, and pkg_latest pointing at each
 * package's newest committed row (as schemas 9 and 10 kept it); no txn_pkgs or pkg_state, nor
 * schema 12's index of open transactions. user_version is the caller's to set.
 */
static void
pkgs_as_schema10(struct fx *fx, const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ids = NULL, *ins = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(
		sqlite3_exec(
			db,
			"BEGIN IMMEDIATE;"
			"CREATE TABLE txn_packages (txn_id INTEGER NOT NULL REFERENCES txns(id),"
			" stow_dir TEXT NOT NULL, package TEXT NOT NULL,"
			" stowed INTEGER NOT NULL CHECK (stowed IN (0, 1)),"
			" dotfiles INTEGER NOT NULL CHECK (dotfiles IN (0, 1)),"
			" no_folding INTEGER NOT NULL CHECK (no_folding IN (0, 1)),"
			" PRIMARY KEY (txn_id, stow_dir, package)) WITHOUT ROWID;"
			"CREATE TABLE pkg_latest (target_id INTEGER NOT NULL,"
			" stow_dir TEXT NOT NULL, package TEXT NOT NULL, txn_id INTEGER NOT NULL,"
			" PRIMARY KEY (target_id, stow_dir, package)) WITHOUT ROWID;",
			NULL, NULL, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT id FROM txns ORDER BY id", -1, &ids, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "INSERT INTO txn_packages VALUES (?1, ?2, ?3, ?4, ?5,"
					    " ?6)",
					    -1, &ins, NULL),
			 SQLITE_OK);
	while (sqlite3_step(ids) == SQLITE_ROW) {
		int64_t txn = sqlite3_column_int64(ids, 0);
		struct grove_journal_pkg *v = NULL;
		size_t n = 0;

		assert_int_equal(grove_journal_txn_pkgs(fx->j, txn, &v, &n, &fx->err), 0);
		for (size_t i = 0; i < n; i++) {
			sqlite3_bind_int64(ins, 1, txn);
			sqlite3_bind_text(ins, 2, v[i].stow_dir, -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 3, v[i].package, -1, SQLITE_STATIC);
			sqlite3_bind_int(ins, 4, v[i].layout.stowed);
			sqlite3_bind_int(ins, 5, v[i].layout.dotfiles);
			sqlite3_bind_int(ins, 6, v[i].layout.no_folding);
			assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
			sqlite3_reset(ins);
		}
		grove_journal_pkgs_free(v, n);
	}
	sqlite3_finalize(ids);
	sqlite3_finalize(ins);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO pkg_latest SELECT t.target_id, p.stow_dir,"
				      " p.package, max(p.txn_id) FROM txn_packages p JOIN txns t"
				      " ON t.id = p.txn_id WHERE t.state = 'committed'"
				      " GROUP BY t.target_id, p.stow_dir, p.package;"
				      "DROP TABLE txn_pkgs; DROP TABLE pkg_state;"
				      " DROP INDEX txns_open; DROP TABLE txn_roots; COMMIT",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
}

/* Replaces target tid's state for dir with one chunk (key first, count n, body of len bytes). */
static void
raw_state_put(const char *path, int64_t tid, const char *dir, const char *first, int64_t n,
	      const void *body, size_t len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "INSERT OR REPLACE INTO pkg_state VALUES (?1, ?2, ?3,"
					    " ?4, ?5)",
					    -1, &s, NULL),
			 SQLITE_OK);
	sqlite3_bind_int64(s, 1, tid);
	sqlite3_bind_text(s, 2, dir, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, first, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, n);
	sqlite3_bind_blob(s, 5, body, (int)len, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* ---- schema 9's ops rows ---- */

#define OPS9_TABLE                                                                             \
	"CREATE TABLE ops (txn_id INTEGER NOT NULL REFERENCES txns(id), seq INTEGER NOT NULL," \
	" kind TEXT NOT NULL CHECK (kind IN ('mkdir', 'link', 'unlink', 'relink', 'rmdir',"    \
	" 'unfold', 'fold', 'adopt')), path TEXT NOT NULL, old_text TEXT, text TEXT,"          \
	" stow_path TEXT, package TEXT, recorded INTEGER, PRIMARY KEY (txn_id, seq))"          \
	" WITHOUT ROWID;"

/*
 * Turns the fixture's log back into what schema 9 wrote for it: every transaction's ops, read back
 * through fx->j, one ops row each (seq from 0, the kind's name, recorded 1 or NULL, as grove wrote
 * them until schema 10), and no op_chunks; its packages as pkgs_as_schema10 leaves them.
 * user_version is the caller's to set.
 */
static void
ops_as_schema9(struct fx *fx, const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ids = NULL, *ins = NULL;

	pkgs_as_schema10(fx, path); /* schemas 9 and 10 kept packages alike */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE;" OPS9_TABLE, NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT id FROM txns ORDER BY id", -1, &ids, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "INSERT INTO ops VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
					    " ?8, ?9)",
					    -1, &ins, NULL),
			 SQLITE_OK);
	while (sqlite3_step(ids) == SQLITE_ROW) {
		int64_t txn = sqlite3_column_int64(ids, 0);
		struct grove_plan q;

		grove_plan_init(&q);
		assert_int_equal(grove_journal_ops(fx->j, txn, &q, &fx->err), 0);
		for (size_t i = 0; i < q.n_ops; i++) {
			const struct grove_op *op = &q.ops[i];

			sqlite3_bind_int64(ins, 1, txn);
			sqlite3_bind_int64(ins, 2, (int64_t)i);
			sqlite3_bind_text(ins, 3, grove_op_kind_name(op->kind), -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 4, op->path, -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 5, op->old_text, -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 6, op->text, -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 7, op->stow_path, -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 8, op->package, -1, SQLITE_STATIC);
			if (op->recorded)
				sqlite3_bind_int(ins, 9, 1);
			else
				sqlite3_bind_null(ins, 9);
			assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
			sqlite3_reset(ins);
		}
		grove_plan_release(&q);
	}
	sqlite3_finalize(ids);
	sqlite3_finalize(ins);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE op_chunks; COMMIT", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
}

/* ---- forked children report through a pipe ---- */

struct child_res {
	int code;
	char msg[GROVE_ERROR_MSG_MAX * 3];
};

static void
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t k = write(fd, p, len);

		if (k <= 0)
			_exit(99);
		p += k;
		len -= (size_t)k;
	}
}

static bool
read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t k = read(fd, p, len);

		if (k <= 0)
			return false;
		p += k;
		len -= (size_t)k;
	}
	return true;
}

static void
run_in_child(void (*fn)(void *arg, struct child_res *res), void *arg, struct child_res *res)
{
	int p[2], status;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct child_res r;

		memset(&r, 0, sizeof(r));
		close(p[0]);
		fn(arg, &r);
		write_all(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	assert_true(read_all(p[0], res, sizeof(*res)));
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
append(struct child_res *res, const char *s)
{
	size_t len = strlen(res->msg);

	snprintf(res->msg + len, sizeof(res->msg) - len, "%s|", s);
}

/* ---- state dir ---- */

static void
state_dir_as_nobody(void *arg, struct child_res *res)
{
	struct grove_error err;
	char *p = NULL;

	(void)arg;
	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
		res->code = -errno;
		return;
	}
#define TRY()                                                                 \
	do {                                                                  \
		p = NULL;                                                     \
		if (grove_journal_state_dir(NULL, &p, &err) < 0)              \
			append(res, err.code == -GROVE_E_CONFIG ? "E" : "?"); \
		else                                                          \
			append(res, p);                                       \
		free(p);                                                      \
	} while (0)
	unsetenv("GROVE_STATE_DIR");
	setenv("HOME", "/h", 1);
	setenv("XDG_STATE_HOME", "/x", 1);
	TRY();
	setenv("XDG_STATE_HOME", "/x/", 1);
	TRY();
	setenv("XDG_STATE_HOME", "rel/x", 1); /* relative: ignored, as XDG says */
	TRY();
	setenv("XDG_STATE_HOME", "", 1);
	TRY();
	unsetenv("XDG_STATE_HOME");
	TRY();
	setenv("HOME", "", 1);
	TRY();
	unsetenv("HOME");
	TRY();
	setenv("GROVE_STATE_DIR", "/g", 1);
	TRY();
#undef TRY
}

static void
test_journal_state_dir(void **state)
{
	struct fx *fx = *state;
	struct child_res res;
	char *p = NULL;
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	unsetenv("GROVE_STATE_DIR");
	setenv("XDG_STATE_HOME", "/x", 1);
	assert_int_equal(grove_journal_state_dir("/s", &p, &fx->err), 0);
	assert_string_equal(p, "/s");
	free(p);
	assert_int_equal(grove_journal_state_dir("", &p, &fx->err), -GROVE_E_USAGE);

	/* Root ignores XDG and HOME. */
	assert_int_equal(geteuid(), 0);
	assert_int_equal(grove_journal_state_dir(NULL, &p, &fx->err), 0);
	assert_string_equal(p, "/var/lib/grove");
	free(p);
	setenv("GROVE_STATE_DIR", "", 1); /* empty counts as unset */
	assert_int_equal(grove_journal_state_dir(NULL, &p, &fx->err), 0);
	assert_string_equal(p, "/var/lib/grove");
	free(p);
	/* The system state dir, for tests. */
	setenv("GROVE_SYSTEM_STATE_DIR", "/sys-state", 1);
	assert_int_equal(grove_journal_state_dir(NULL, &p, &fx->err), 0);
	assert_string_equal(p, "/sys-state");
	free(p);
	assert_int_equal(grove_journal_system_state_dir(&p, &fx->err), 0);
	assert_string_equal(p, "/sys-state");
	free(p);
	unsetenv("GROVE_SYSTEM_STATE_DIR");
	setenv("GROVE_STATE_DIR", "rel/g", 1);
	assert_int_equal(grove_journal_state_dir(NULL, &p, &fx->err), 0);
	assert_string_equal(p, "rel/g");
	free(p);
	assert_int_equal(grove_journal_state_dir("/s", &p, &fx->err), 0);
	assert_string_equal(p, "/s");
	free(p);

	run_in_child(state_dir_as_nobody, NULL, &res);
	assert_int_equal(res.code, 0);
	assert_string_equal(res.msg, "/x/grove|/x/grove|/h/.local/state/grove|"
				     "/h/.local/state/grove|/h/.local/state/grove|E|E|/g|");

	unsetenv("GROVE_STATE_DIR");
	unsetenv("XDG_STATE_HOME");
	if (old_home)
		setenv("HOME", old_home, 1);
	free(old_home);
}

/* ---- open ---- */

static void
assert_mode(const char *path, mode_t mode)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
}

static void
test_journal_open_creates(void **state)
{
	struct fx *fx = *state;
	char *path = tu_path(fx->dir, "a/b/state");
	char *a = tu_path(fx->dir, "a"), *ab = tu_path(fx->dir, "a/b");
	char *db = tu_path(fx->dir, "a/b/state/grove.db");
	char *locks = tu_path(fx->dir, "a/b/state/locks");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct stat st;
	int64_t id;

	assert_int_equal(grove_journal_open(path, &root, &j, &fx->err), 0);
	assert_non_null(j);
	assert_string_equal(root.real, path);
	assert_mode(a, 0700);
	assert_mode(ab, 0700);
	assert_mode(path, 0700);
	assert_mode(locks, 0700);
	assert_int_equal(lstat(db, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(raw_int(db, "PRAGMA application_id"), GROVE_JOURNAL_APP_ID);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'op_chunks'"),
			 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'ops'"), 0);
	/* Nothing but the database and locks/: no -journal, -wal or -shm left. */
	{
		DIR *d = opendir(path);
		struct dirent *de;
		int n = 0;

		assert_non_null(d);
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				assert_true(!strcmp(de->d_name, "grove.db") ||
					    !strcmp(de->d_name, "locks"));
				n++;
			}
		closedir(d);
		assert_int_equal(n, 2);
	}
	grove_journal_close(j);
	grove_root_release(&root);

	/* Opening again finds it current; a trailing slash is fine. */
	free(path);
	path = tu_path(fx->dir, "a/b/state/");
	assert_int_equal(grove_journal_open(path, &root, &j, &fx->err), 0);
	assert_int_equal(grove_journal_target(j, &fx->troot, &id, &fx->err), 0);
	grove_journal_close(j);
	grove_root_release(&root);

	/* A file where the state dir should be: named in the error. */
	free(path);
	path = tu_path(fx->dir, "a/b/state/grove.db");
	root.fd = -7;
	assert_true(grove_journal_open(path, &root, &j, &fx->err) < 0);
	assert_non_null(strstr(fx->err.msg, path));
	assert_int_equal(root.fd, -7); /* ret_root untouched on failure */
	assert_true(grove_journal_close(NULL) == NULL);

	free(path);
	free(a);
	free(ab);
	free(db);
	free(locks);
}

static void
test_journal_open_refuses_symlinked_db(void **state)
{
	struct fx *fx = *state;
	char *path = tu_path(fx->dir, "s2");
	char *elsewhere = tu_path(fx->dir, "elsewhere");
	char *dump;
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;

	tu_build(fx->dir, "d s2\nd elsewhere\nl s2/grove.db ../elsewhere/x.db\n");
	assert_true(grove_journal_open(path, &root, &j, &fx->err) < 0);
	if (!strstr(fx->err.msg, "s2/grove.db'") || !strstr(fx->err.msg, "a symlink"))
		fail_msg("unexpected message: %s", fx->err.msg);
	dump = tu_dump(elsewhere);
	assert_string_equal(dump, "");
	free(dump);
	free(path);
	free(elsewhere);
}

/* The database is reached through the held folder: swapping the state dir for a
 * symlink after opening redirects nothing. */
static void
test_journal_held_dir(void **state)
{
	struct fx *fx = *state;
	char *moved = tu_path(fx->dir, "moved");
	char *evil = tu_path(fx->dir, "evil");
	char *dump;
	struct grove_plan p;
	int64_t id;

	grove_plan_init(&p);
	add(&p, GROVE_OP_LINK, "x", NULL, "y", NULL, NULL);
	assert_int_equal(mkdir(evil, 0755), 0);
	assert_int_equal(rename(fx->state, moved), 0);
	assert_int_equal(symlink(evil, fx->state), 0);
	id = log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	dump = tu_dump(evil);
	assert_string_equal(dump, "");
	free(dump);
	{
		char *db = tu_path(moved, "grove.db");
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT sum(n) FROM op_chunks WHERE txn_id = %" PRId64,
			 id);
		assert_int_equal(raw_int(db, sql), 1);
		free(db);
	}
	grove_plan_release(&p);
	free(moved);
	free(evil);
}

/* ---- transactions ---- */

static void
assert_str_or_null(const char *a, const char *b)
{
	if (!b)
		assert_null(a);
	else
		assert_string_equal(a, b);
}

static void
test_journal_roundtrip(void **state)
{
	struct fx *fx = *state;
	struct grove_plan p, q;
	struct grove_txn t;
	int64_t id = 0, other;

	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, NULL);
	add(&p, GROVE_OP_LINK, "a/x", NULL, "../s/p/a/x", NULL, "p");
	add(&p, GROVE_OP_UNLINK, "b", "../s/q/b", NULL, NULL, "q");
	add(&p, GROVE_OP_RELINK, "c", "s/q/c", "s/p/c", NULL, "p");
	add(&p, GROVE_OP_RMDIR, "d", NULL, NULL, NULL, "q");
	add(&p, GROVE_OP_UNFOLD, "e", "s/p/e", NULL, NULL, "p");
	add(&p, GROVE_OP_LINK, "e/f", NULL, "../s/p/e/f", NULL, "p");
	add(&p, GROVE_OP_FOLD, "g", NULL, "s/p/g", NULL, "p");
	add(&p, GROVE_OP_UNLINK, "g/h", "../s/p/g/h", NULL, NULL, "p");
	add(&p, GROVE_OP_ADOPT, "i j/k 'l'", NULL, "../s/p/i j/k 'l'", "p/i j/k 'l'", "p");

	struct grove_root sroot = {
		.fd = -1, .real = (char *)"/tmp/s", .dev = 7, .ino = 8, .born = 9
	};

	assert_int_equal(grove_journal_begin(fx->j, fx->tid, "grove stow -d s p", &sroot, 0, &p,
					     &id, &fx->err),
			 0);
	assert_true(id > 0);
	assert_int_equal(grove_journal_get(fx->j, id, &t, &fx->err), 0);
	assert_int_equal(t.id, id);
	assert_int_equal(t.target_id, fx->tid);
	assert_int_equal(t.state, GROVE_TXN_INTENT);
	assert_string_equal(t.command, "grove stow -d s p");
	assert_string_equal(t.stow_dir, "/tmp/s");
	assert_true(t.stow_known);
	assert_int_equal(t.stow_dev, 7);
	assert_int_equal(t.stow_ino, 8);
	assert_int_equal(t.stow_born, 9);
	assert_null(t.note);
	assert_int_equal(t.undoes, 0);
	assert_true(t.started > 1.6e9);
	assert_true(t.finished == 0);
	assert_int_equal(t.n_ops, p.n_ops);
	grove_txn_release(&t);
	grove_txn_release(&t); /* idempotent */

	grove_plan_init(&q);
	add(&q, GROVE_OP_MKDIR, "already", NULL, NULL, NULL, NULL); /* appended to */
	assert_int_equal(grove_journal_ops(fx->j, id, &q, &fx->err), 0);
	assert_int_equal(q.n_ops, p.n_ops + 1);
	for (size_t i = 0; i < p.n_ops; i++) {
		const struct grove_op *a = &p.ops[i], *b = &q.ops[i + 1];

		assert_int_equal(a->kind, b->kind);
		assert_string_equal(a->path, b->path);
		assert_str_or_null(b->old_text, a->old_text);
		assert_str_or_null(b->text, a->text);
		assert_str_or_null(b->stow_path, a->stow_path);
		assert_str_or_null(b->package, a->package);
	}
	grove_plan_release(&q);

	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_get(fx->j, id, &t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_TXN_COMMITTED);
	assert_true(t.finished >= t.started);
	grove_txn_release(&t);
	/* A finished transaction stays finished. */
	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_ROLLED_BACK, "x", &fx->err),
			 -EINVAL);
	assert_non_null(strstr(fx->err.msg, "already committed"));
	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_INTENT, NULL, &fx->err),
			 -EINVAL);
	assert_int_equal(grove_journal_finish(fx->j, 9999, GROVE_TXN_COMMITTED, NULL, &fx->err),
			 -ENOENT);
	assert_int_equal(grove_journal_get(fx->j, 9999, &t, &fx->err), -ENOENT);

	/* An empty plan, NULL command and a note; undoes is kept. */
	grove_plan_release(&p);
	assert_int_equal(grove_journal_begin(fx->j, fx->tid, NULL, NULL, id, &p, &other, &fx->err),
			 0);
	assert_int_equal(
		grove_journal_finish(fx->j, other, GROVE_TXN_STUCK, "link 'x' changed", &fx->err),
		0);
	assert_int_equal(
		grove_journal_finish(fx->j, other, GROVE_TXN_ROLLED_BACK, "rolled back", &fx->err),
		0);
	assert_int_equal(grove_journal_get(fx->j, other, &t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_TXN_ROLLED_BACK);
	assert_null(t.command);
	assert_null(t.stow_dir);
	assert_string_equal(t.note, "rolled back");
	assert_int_equal(t.undoes, id);
	assert_int_equal(t.n_ops, 0);
	grove_txn_release(&t);

	/* A transaction for a target the journal does not know is refused. */
	assert_true(grove_journal_begin(fx->j, 777, "x", NULL, 0, &p, &other, &fx->err) < 0);
	grove_plan_release(&p);
}

/* Logs an intent carrying package rows (one stow dir, /s, unless stow_dir is given). */
static int64_t
log_pkgs(struct fx *fx, int64_t tid, const char *stow_dir, const char *const *names,
	 const struct grove_pkg_layout *layouts, size_t n, enum grove_txn_state state)
{
	struct grove_journal_pkg v[8];
	struct grove_plan p;
	struct grove_journal_intent in = { .target_id = tid, .command = "grove t", .plan = &p };
	int64_t id = 0;

	assert_true(n <= 8);
	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		v[i].stow_dir = (char *)(stow_dir ? stow_dir : "/s");
		v[i].package = (char *)names[i];
		v[i].layout = layouts[i];
	}
	in.pkgs = v;
	in.n_pkgs = n;
	assert_int_equal(grove_journal_begin_intent(fx->j, &in, &id, &fx->err), 0);
	if (state != GROVE_TXN_INTENT)
		assert_int_equal(grove_journal_finish(fx->j, id, state, NULL, &fx->err), 0);
	grove_plan_release(&p);
	return id;
}

static void
assert_recorded(struct fx *fx, int64_t tid, const char *dir, const char *pkg, int64_t before,
		bool found, bool stowed, bool dotfiles, bool no_folding)
{
	struct grove_pkg_layout l;
	bool f = !found;

	assert_int_equal(grove_journal_pkg_recorded(fx->j, tid, dir, pkg, before, &l, &f, &fx->err),
			 0);
	assert_int_equal(f, found);
	assert_int_equal(l.stowed, stowed);
	assert_int_equal(l.dotfiles, dotfiles);
	assert_int_equal(l.no_folding, no_folding);
}

/* The packages a transaction records: written with the intent, read back in (stow dir,
 * package) order; what the log last recorded for a package counts committed rows only, the
 * newest first, per target and stow dir, and before a given transaction. */
static void
test_journal_pkgs(void **state)
{
	struct fx *fx = *state;
	const char *names[] = { "vim", "git", "vim" };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };
	const struct grove_pkg_layout plain = { .stowed = true };
	const struct grove_pkg_layout nofold = { .stowed = true, .no_folding = true };
	const struct grove_pkg_layout gone = { .stowed = false, .dotfiles = true };
	struct grove_pkg_layout ls[3] = { gone, nofold, dot };
	struct grove_journal_pkg *v = NULL;
	size_t n = 0;
	int64_t t1, t2, t3, other;

	assert_recorded(fx, fx->tid, "/s", "vim", 0, false, false, false, false);
	/* A restow logs the package twice (unstow, then stow): the last row stands. */
	t1 = log_pkgs(fx, fx->tid, NULL, names, ls, 3, GROVE_TXN_COMMITTED);
	assert_int_equal(grove_journal_txn_pkgs(fx->j, t1, &v, &n, &fx->err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].package, "git");
	assert_string_equal(v[0].stow_dir, "/s");
	assert_true(v[0].layout.stowed && v[0].layout.no_folding && !v[0].layout.dotfiles);
	assert_string_equal(v[1].package, "vim");
	assert_true(v[1].layout.stowed && v[1].layout.dotfiles && !v[1].layout.no_folding);
	grove_journal_pkgs_free(v, n);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, true, true, false);
	assert_recorded(fx, fx->tid, "/s", "git", 0, true, true, false, true);
	/* Another stow dir, another target, another package: nothing recorded. */
	assert_recorded(fx, fx->tid, "/other", "vim", 0, false, false, false, false);
	assert_recorded(fx, fx->tid + 1, "/s", "vim", 0, false, false, false, false);
	assert_recorded(fx, fx->tid, "/s", "zsh", 0, false, false, false, false);
	assert_recorded(fx, 0, "/s", "vim", 0, false, false, false, false);

	/* Unstowed later; a rolled-back and an unfinished transaction count for nothing. */
	ls[0] = gone;
	t2 = log_pkgs(fx, fx->tid, NULL, names, ls, 1, GROVE_TXN_COMMITTED);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, false, true, false);
	ls[0] = plain;
	log_pkgs(fx, fx->tid, NULL, names, ls, 1, GROVE_TXN_ROLLED_BACK);
	log_pkgs(fx, fx->tid, NULL, names, ls, 1, GROVE_TXN_INTENT);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, false, true, false);
	t3 = log_pkgs(fx, fx->tid, "/other", names, ls, 1, GROVE_TXN_COMMITTED);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, false, true, false);
	assert_recorded(fx, fx->tid, "/other", "vim", 0, true, true, false, false);
	/* Before a transaction: the state it started from (what reverting it puts back). */
	assert_recorded(fx, fx->tid, "/s", "vim", t2, true, true, true, false);
	assert_recorded(fx, fx->tid, "/s", "vim", t1, false, false, false, false);
	assert_recorded(fx, fx->tid, "/other", "vim", t3, false, false, false, false);

	/* A transaction without package rows has none; one of another target is not ours. */
	other = log_one(fx, GROVE_OP_MKDIR, "b", GROVE_TXN_COMMITTED, 0);
	assert_int_equal(grove_journal_txn_pkgs(fx->j, other, &v, &n, &fx->err), 0);
	assert_int_equal(n, 0);
	grove_journal_pkgs_free(v, n);
	grove_journal_pkgs_free(NULL, 0);
}

/* A commit moves its packages' pointers whoever logged the intent: another connection, or this
 * one after logging a later intent (a commit skips the pointers only for the intent this
 * connection logged last, when it logged no packages). */
static void
test_journal_pkgs_commit_elsewhere(void **state)
{
	struct fx *fx = *state;
	const char *names[] = { "vim" };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };
	const struct grove_pkg_layout nofold = { .stowed = true, .no_folding = true };
	struct grove_root sroot = { .fd = -1 };
	struct grove_journal *j2 = NULL;
	int64_t t1, t2;

	t1 = log_pkgs(fx, fx->tid, NULL, names, &dot, 1, GROVE_TXN_INTENT);
	assert_int_equal(grove_journal_open(fx->state, &sroot, &j2, &fx->err), 0);
	assert_int_equal(grove_journal_finish(j2, t1, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	grove_journal_close(j2);
	grove_root_release(&sroot);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, true, true, false);

	t1 = log_pkgs(fx, fx->tid, NULL, names, &nofold, 1, GROVE_TXN_INTENT);
	t2 = log_pkgs(fx, fx->tid, NULL, names, &nofold, 0, GROVE_TXN_INTENT);
	assert_int_equal(grove_journal_finish(fx->j, t2, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, true, true, false);
	assert_int_equal(grove_journal_finish(fx->j, t1, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, true, false, true);
}

/* Rows read back are input: a package that is not one name, or a relative stow dir, is refused
 * naming the transaction; writing such a row is refused too. */
static void
test_journal_pkgs_hostile(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	const char *names[] = { "vim" }, *bad[] = { "../x" };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };
	struct grove_journal_pkg *v = NULL;
	size_t n = 7;
	int64_t t1 = log_pkgs(fx, fx->tid, NULL, names, &dot, 1, GROVE_TXN_COMMITTED);
	struct grove_journal_pkg row = { .stow_dir = (char *)"/s", .package = (char *)"a/b" };
	struct grove_plan p;
	struct grove_journal_intent in = {
		.target_id = fx->tid, .plan = &p, .pkgs = &row, .n_pkgs = 1
	};
	int64_t id = 0;
	char sql[256];

	raw_exec(db, "PRAGMA busy_timeout = 5000");
	snprintf(sql, sizeof(sql),
		 "UPDATE txn_pkgs SET body = X'012E2E2F65746300' WHERE txn_id = %lld",
		 (long long)t1); /* "../etc" */
	raw_exec(db, sql);
	assert_int_equal(grove_journal_txn_pkgs(fx->j, t1, &v, &n, &fx->err), -GROVE_E_CONFIG);
	assert_non_null(strstr(fx->err.msg, "not a single name"));
	snprintf(sql, sizeof(sql),
		 "UPDATE txn_pkgs SET body = X'0176696D00', stow_dir = 's' WHERE txn_id = %lld",
		 (long long)t1);
	raw_exec(db, sql);
	assert_int_equal(grove_journal_txn_pkgs(fx->j, t1, &v, &n, &fx->err), -GROVE_E_CONFIG);
	assert_non_null(strstr(fx->err.msg, "not an absolute path"));
	assert_int_equal(n, 7); /* untouched on failure */

	grove_plan_init(&p);
	assert_true(grove_journal_begin_intent(fx->j, &in, &id, &fx->err) < 0);
	row.package = (char *)bad[0];
	assert_true(grove_journal_begin_intent(fx->j, &in, &id, &fx->err) < 0);
	grove_plan_release(&p);
	free(db);
}

/* A log of schema 6 gains the table, its transactions no rows: nothing is recorded for the
 * packages they stowed, and new transactions record theirs. */
static void
test_journal_migrates_pkgs(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	const char *names[] = { "vim" };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };

	log_one(fx, GROVE_OP_LINK, "x", GROVE_TXN_COMMITTED, 0);
	ops_as_schema9(fx, db);
	fx->j = grove_journal_close(fx->j);
	raw_exec(db, "DROP TABLE txn_packages; DROP TABLE pkg_latest; " BEFORE_14
		     "PRAGMA user_version = 7;");
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM txn_pkgs"), 0);
	fx->j = j;
	assert_recorded(fx, fx->tid, "/s", "vim", 0, false, false, false, false);
	log_pkgs(fx, fx->tid, NULL, names, &dot, 1, GROVE_TXN_COMMITTED);
	assert_recorded(fx, fx->tid, "/s", "vim", 0, true, true, true, false);
	grove_root_release(&fx->sroot);
	fx->sroot = root;
	free(db);
}

static char *owned_str(struct fx *fx, int64_t target);

/* Appends to buf (of size 16384) what every reader of package rows answers for the fixture's
 * target, its stow dirs "/s" and "/o", a few packages, and before each of txns[0..n). */
static void
pkgs_answers(struct fx *fx, const int64_t *txns, size_t n, char *buf)
{
	static const char *const dirs[] = { "/s", "/o" };
	static const char *const pkgs[] = { "vim", "git", "zsh", "tmux" };
	struct grove_journal_pkg *v = NULL;
	size_t nv = 0;

	buf[0] = '\0';
#define OUT(...) snprintf(buf + strlen(buf), 16384 - strlen(buf), __VA_ARGS__)
	for (size_t d = 0; d < 2; d++) {
		assert_int_equal(
			grove_journal_pkgs_recorded(fx->j, fx->tid, dirs[d], &v, &nv, &fx->err), 0);
		OUT("all %s:", dirs[d]);
		for (size_t i = 0; i < nv; i++)
			OUT(" %s=%d%d%d", v[i].package, v[i].layout.stowed, v[i].layout.dotfiles,
			    v[i].layout.no_folding);
		OUT("\n");
		grove_journal_pkgs_free(v, nv);
		for (size_t p = 0; p < 4; p++)
			for (size_t b = 0; b <= n; b++) {
				struct grove_pkg_layout l;
				bool f = false;

				assert_int_equal(grove_journal_pkg_recorded(
							 fx->j, fx->tid, dirs[d], pkgs[p],
							 b ? txns[b - 1] : 0, &l, &f, &fx->err),
						 0);
				OUT("%s %s <%lld: %d %d%d%d\n", dirs[d], pkgs[p],
				    (long long)(b ? txns[b - 1] : 0), f, l.stowed, l.dotfiles,
				    l.no_folding);
			}
	}
	/* All of them at once, both dirs mixed: what each asked alone answers. */
	for (size_t b = 0; b < n; b++) {
		struct grove_journal_pkg all[8];
		char line[64];
		const char *at;

		for (size_t k = 0; k < 8; k++) {
			all[k].stow_dir = (char *)dirs[k % 2];
			all[k].package = (char *)pkgs[k / 2];
			all[k].layout = (struct grove_pkg_layout){ true, true, true };
		}
		assert_int_equal(grove_journal_pkgs_recorded_before(fx->j, fx->tid, txns[b], all, 8,
								    &fx->err),
				 0);
		for (size_t k = 0; k < 8; k++) {
			snprintf(line, sizeof(line), "%s %s <%lld: ", dirs[k % 2], pkgs[k / 2],
				 (long long)txns[b]);
			assert_non_null(strstr(buf, line));
			at = strstr(buf, line);
			assert_non_null(at);
			at += strlen(line) + 2; /* past "found " */
			snprintf(line, sizeof(line), "%d%d%d\n", all[k].layout.stowed,
				 all[k].layout.dotfiles, all[k].layout.no_folding);
			if (strncmp(at, line, 4) != 0)
				fail_msg("all at once: %s %s before %lld: %.4s, alone %.4s",
					 dirs[k % 2], pkgs[k / 2], (long long)txns[b], line, at);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct grove_txn t;

		assert_int_equal(grove_journal_get(fx->j, txns[i], &t, &fx->err), 0);
		OUT("txn %lld state %d ops %zu:", (long long)txns[i], (int)t.state, t.n_ops);
		grove_txn_release(&t);
		assert_int_equal(grove_journal_txn_pkgs(fx->j, txns[i], &v, &nv, &fx->err), 0);
		for (size_t k = 0; k < nv; k++)
			OUT(" %s/%s=%d%d%d", v[k].stow_dir, v[k].package, v[k].layout.stowed,
			    v[k].layout.dotfiles, v[k].layout.no_folding);
		OUT("\n");
		grove_journal_pkgs_free(v, nv);
	}
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid + 1, "/s", &v, &nv, &fx->err),
			 0);
	OUT("other target: %zu\n", nv);
	grove_journal_pkgs_free(v, nv);
#undef OUT
}

/* A history of package rows: stows, unstows, a restow, a rolled back and an unfinished
 * transaction, two stow dirs. Returns the transactions in txns (8). */
static size_t
pkgs_history(struct fx *fx, int64_t *txns)
{
	const char *vg[] = { "vim", "git" }, *v1[] = { "vim" }, *gz[] = { "git", "zsh" };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };
	const struct grove_pkg_layout plain = { .stowed = true };
	const struct grove_pkg_layout nofold = { .stowed = true, .no_folding = true };
	const struct grove_pkg_layout gone = { .stowed = false, .dotfiles = true };
	struct grove_pkg_layout a[] = { dot, nofold }, b[] = { gone }, c[] = { plain, dot };
	size_t n = 0;

	txns[n++] = log_pkgs(fx, fx->tid, NULL, vg, a, 2, GROVE_TXN_COMMITTED);
	txns[n++] = log_pkgs(fx, fx->tid, "/o", gz, c, 2, GROVE_TXN_COMMITTED);
	txns[n++] = log_pkgs(fx, fx->tid, NULL, v1, b, 1, GROVE_TXN_COMMITTED);
	txns[n++] = log_pkgs(fx, fx->tid, NULL, gz, c, 2, GROVE_TXN_ROLLED_BACK);
	txns[n++] = log_pkgs(fx, fx->tid, NULL, v1, c, 1, GROVE_TXN_COMMITTED);
	txns[n++] = log_one(fx, GROVE_OP_MKDIR, "b", GROVE_TXN_COMMITTED, 0);
	txns[n++] = log_pkgs(fx, fx->tid, "/o", gz, a, 2, GROVE_TXN_COMMITTED);
	txns[n++] = log_pkgs(fx, fx->tid, NULL, vg, a, 2, GROVE_TXN_INTENT);
	return n;
}

/* Every package of a stow dir in one query: what grove_journal_pkg_recorded answers for each,
 * sorted by name; committed transactions only, the newest row winning even when an older
 * transaction commits later; a row read back that is not a single name is refused. */
static void
test_journal_pkgs_recorded_all(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_journal_pkg *v = NULL;
	int64_t txns[8];
	size_t n = pkgs_history(fx, txns), nv = 7;
	char *buf = calloc(1, 16384);

	assert_non_null(buf);
	pkgs_answers(fx, txns, n, buf);
	assert_non_null(strstr(buf, "all /s: git=101 vim=100\n"));
	assert_non_null(strstr(buf, "all /o: git=110 zsh=101\n"));
	assert_non_null(strstr(buf, "/s vim <0: 1 100\n"));
	assert_non_null(strstr(buf, "/s git <0: 1 101\n"));
	assert_non_null(strstr(buf, "/s zsh <0: 0 000\n")); /* its only row was rolled back */
	assert_non_null(strstr(buf, "other target: 0\n"));
	/* The unfinished transaction (older than none of the others but the last) commits now: it
	 * is the newest, so its rows win; an older one committed after a newer one would not. */
	assert_int_equal(grove_journal_finish(fx->j, txns[7], GROVE_TXN_COMMITTED, NULL, &fx->err),
			 0);
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid, "/s", &v, &nv, &fx->err), 0);
	assert_int_equal(nv, 2);
	assert_true(v[1].layout.stowed && v[1].layout.dotfiles); /* vim, from txns[7] */
	grove_journal_pkgs_free(v, nv);
	raw_exec(db, "PRAGMA busy_timeout = 5000");
	{
		char sql[256];
		/* vim set by txns[4] (plain), git by txns[7] (no folding); ids below 128: one
		 * byte each. */
		unsigned char body[] = { 0x05, 0, 'g', 'i', 't', 0, 0x01, 0, 'v', 'i', 'm', 0 };

		assert_true(txns[7] < 128);
		body[1] = (unsigned char)txns[7];
		body[7] = (unsigned char)txns[4];
		/* The state saying vim was set by an older transaction than txns[0]: a later commit
		 * of txns[0]'s packages (it is older than either) moves neither. */
		raw_state_put(db, fx->tid, "/s", "", 2, body, sizeof(body));
		snprintf(sql, sizeof(sql), "UPDATE txns SET state = 'intent' WHERE id = %lld",
			 (long long)txns[0]);
		raw_exec(db, sql);
		assert_int_equal(
			grove_journal_finish(fx->j, txns[0], GROVE_TXN_COMMITTED, NULL, &fx->err),
			0);
		assert_recorded(fx, fx->tid, "/s", "vim", 0, true, true, false, false);
		assert_recorded(fx, fx->tid, "/s", "git", 0, true, true, false, true);
		/* The options are the state's: a package gone from it by hand is no record. */
		raw_state_put(db, fx->tid, "/s", "", 1, body + 6, 6); /* vim only */
	}
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid, "/s", &v, &nv, &fx->err), 0);
	assert_int_equal(nv, 1);
	assert_string_equal(v[0].package, "vim");
	assert_null(v[0].stow_dir);
	grove_journal_pkgs_free(v, nv);
	assert_recorded(fx, fx->tid, "/s", "git", 0, false, false, false, false);
	/* Rows read back are input. */
	raw_state_put(db, fx->tid, "/s", "", 1, "\x01\x01../x", 7);
	nv = 7;
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid, "/s", &v, &nv, &fx->err),
			 -GROVE_E_CONFIG);
	assert_non_null(strstr(fx->err.msg, "not a single name"));
	assert_int_equal(nv, 0);
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, 0, "/s", &v, &nv, &fx->err), 0);
	assert_int_equal(nv, 0);
	free(buf);
	free(db);
}

/* A long package list is written PKGS_BATCH rows per INSERT, the rest row by row: every row
 * lands, and a package listed twice (across a batch's end) keeps its last row. */
static void
test_journal_pkgs_many(void **state)
{
	struct fx *fx = *state;
	struct grove_journal_pkg v[41], *back = NULL;
	char names[41][8];
	struct grove_plan p;
	struct grove_journal_intent in = {
		.target_id = fx->tid, .command = "grove t", .plan = &p, .pkgs = v, .n_pkgs = 41
	};
	size_t nb = 0;
	int64_t id = 0;

	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, NULL);
	for (size_t i = 0; i < 41; i++) {
		snprintf(names[i], sizeof(names[i]), "p%02zu", i == 37 ? (size_t)5 : i);
		v[i].stow_dir = (char *)"/s";
		v[i].package = names[i];
		v[i].layout = (struct grove_pkg_layout){ .stowed = true,
							 .dotfiles = i % 2,
							 .no_folding = i == 37 };
	}
	assert_int_equal(grove_journal_begin_intent(fx->j, &in, &id, &fx->err), 0);
	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_txn_pkgs(fx->j, id, &back, &nb, &fx->err), 0);
	assert_int_equal(nb, 40);
	for (size_t i = 0; i < nb; i++) {
		char want[8];

		snprintf(want, sizeof(want), "p%02zu", i < 37 ? i : i + 1);
		assert_string_equal(back[i].package, want);
		assert_int_equal(back[i].layout.no_folding, i == 5);
		assert_int_equal(back[i].layout.dotfiles, i == 5 ? 1 : (i < 37 ? i : i + 1) % 2);
	}
	grove_journal_pkgs_free(back, nb);
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid, "/s", &back, &nb, &fx->err),
			 0);
	assert_int_equal(nb, 40);
	assert_true(back[5].layout.no_folding && back[5].layout.dotfiles);
	grove_journal_pkgs_free(back, nb);
	grove_plan_release(&p);
}

/* Every package's answer for the fixture's target and dir: "name=flags" in order, then each one
 * looked up alone. */
static void
state_render(struct fx *fx, const char *dir, char *buf, size_t size)
{
	struct grove_journal_pkg *v = NULL;
	size_t nv = 0, len = 0;

	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid, dir, &v, &nv, &fx->err), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < nv; i++) {
		struct grove_pkg_layout l;
		bool f = false;

		assert_int_equal(grove_journal_pkg_recorded(fx->j, fx->tid, dir, v[i].package, 0,
							    &l, &f, &fx->err),
				 0);
		assert_true(f);
		assert_int_equal(l.stowed, v[i].layout.stowed);
		assert_int_equal(l.dotfiles, v[i].layout.dotfiles);
		assert_int_equal(l.no_folding, v[i].layout.no_folding);
		len += (size_t)snprintf(buf + len, size - len, "%s=%d%d%d ", v[i].package,
					v[i].layout.stowed, v[i].layout.dotfiles,
					v[i].layout.no_folding);
		assert_true(len < size);
	}
	grove_journal_pkgs_free(v, nv);
}

/* Logs and commits packages names[lo..hi) (format "p%04zu") from dir with layout l. */
static int64_t
log_range(struct fx *fx, const char *dir, size_t lo, size_t hi, size_t step,
	  struct grove_pkg_layout l)
{
	struct grove_journal_pkg *v = calloc(hi - lo + 1, sizeof(*v));
	struct grove_plan p;
	struct grove_journal_intent in = { .target_id = fx->tid, .command = "grove t", .plan = &p };
	size_t n = 0;
	int64_t id = 0;

	assert_non_null(v);
	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, NULL);
	for (size_t i = lo; i < hi; i += step) {
		v[n].stow_dir = (char *)dir;
		v[n].package = malloc(8);
		assert_non_null(v[n].package);
		snprintf(v[n].package, 8, "p%04zu", i);
		v[n++].layout = l;
	}
	in.pkgs = v;
	in.n_pkgs = n;
	assert_int_equal(grove_journal_begin_intent(fx->j, &in, &id, &fx->err), 0);
	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	for (size_t i = 0; i < n; i++)
		free(v[i].package);
	free(v);
	grove_plan_release(&p);
	return id;
}

/* The bodies of the state's chunks, "key:hex" each, for dir. */
static char *
chunks_str(struct fx *fx, const char *dir)
{
	char *db = tu_path(fx->state, "grove.db"), sql[256];
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	size_t cap = 1 << 16, len = 0;
	char *out = calloc(1, cap);

	assert_non_null(out);
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "SELECT first, n, length(body), hex(body) FROM pkg_state WHERE target_id = %lld"
		 " AND stow_dir = '%s' ORDER BY first",
		 (long long)fx->tid, dir);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		len += (size_t)snprintf(out + len, cap - len, "%s:%lld:%lld:%s\n",
					(const char *)sqlite3_column_text(s, 0),
					(long long)sqlite3_column_int64(s, 1),
					(long long)sqlite3_column_int64(s, 2),
					(const char *)sqlite3_column_text(s, 3));
		assert_true(len < cap);
	}
	sqlite3_finalize(s);
	sqlite3_close(h);
	free(db);
	return out;
}

static size_t
lines_of(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Lines of a not in b. */
static size_t
lines_changed(const char *a, const char *b)
{
	size_t n = 0;

	for (const char *l = a; *l;) {
		const char *e = strchr(l, '\n');
		char line[4096];

		assert_true(e && (size_t)(e - l) < sizeof(line) - 1);
		memcpy(line, l, (size_t)(e - l) + 1);
		line[e - l + 1] = '\0';
		n += strstr(b, line) == NULL;
		l = e + 1;
	}
	return n;
}

/*
 * A stow dir of many packages: its state is cut in chunks (none past PKGS_STATE_BYTES plus an
 * entry), every package reads back alone and all together, a commit that changes one package
 * rewrites one chunk, one that grows a chunk past the bound cuts it, and the newest transaction
 * still wins across chunks.
 */
static void
test_journal_pkgs_state_chunks(void **state)
{
	struct fx *fx = *state;
	const struct grove_pkg_layout plain = { .stowed = true };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };
	const struct grove_pkg_layout gone = { .stowed = false };
	char *before, *after, *buf = calloc(1, 1 << 16);
	size_t n0;

	assert_non_null(buf);
	log_range(fx, "/s", 0, 400, 2, plain); /* the even ones */
	before = chunks_str(fx, "/s");
	n0 = lines_of(before);
	assert_true(n0 > 2);
	for (const char *l = before; *l; l = strchr(l, '\n') + 1) {
		long long len = 0;

		assert_non_null(strchr(strchr(l, ':') + 1, ':'));
		len = strtoll(strchr(strchr(l, ':') + 1, ':') + 1, NULL, 10);
		assert_true(len > 0 && len <= 768 + 16);
	}
	state_render(fx, "/s", buf, 1 << 16);
	assert_non_null(strstr(buf, "p0000=100 p0002=100 "));
	assert_non_null(strstr(buf, "p0398=100 "));
	assert_null(strstr(buf, "p0001"));

	/* One package changed: one chunk rewritten, the others untouched. */
	log_range(fx, "/s", 200, 201, 1, dot);
	after = chunks_str(fx, "/s");
	assert_int_equal(lines_of(after), n0);
	assert_int_equal(lines_changed(after, before), 1);
	state_render(fx, "/s", buf, 1 << 16);
	assert_non_null(strstr(buf, "p0198=100 p0200=110 p0202=100 "));
	free(before);
	before = after;

	/* The odd ones between 100 and 300: the chunks there grow past the bound and are cut. */
	log_range(fx, "/s", 101, 300, 2, gone);
	after = chunks_str(fx, "/s");
	assert_true(lines_of(after) > n0);
	state_render(fx, "/s", buf, 1 << 16);
	assert_non_null(strstr(buf, "p0100=100 p0101=000 p0102=100 "));
	assert_non_null(strstr(buf, "p0199=000 p0200=110 p0201=000 "));
	assert_non_null(strstr(buf, "p0299=000 p0300=100 p0302=100 "));
	{
		size_t count = 0;

		for (const char *c = buf; (c = strchr(c, '=')); c++)
			count++;
		assert_int_equal(count, 200 + 100);
	}
	free(before);
	before = after;

	/* Every package at once: all chunks rewritten, the newest transaction wins everywhere. */
	log_range(fx, "/s", 0, 400, 1, dot);
	state_render(fx, "/s", buf, 1 << 16);
	for (size_t i = 0; i < 400; i += 37) {
		char want[32];

		snprintf(want, sizeof(want), "p%04zu=110 ", i);
		assert_non_null(strstr(buf, want));
	}
	assert_null(strstr(buf, "=100 "));
	assert_null(strstr(buf, "=000 "));
	free(before);
	free(buf);
}

/* Sets transaction txn's package row for "/s" to n and body (len bytes; a text when text), and
 * its stow dir to dir. */
static void
forge_txn(const char *db, int64_t txn, const char *dir, const char *n, const void *body, size_t len,
	  bool text)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "UPDATE txn_pkgs SET stow_dir = ?1, n = %s, body = ?2 WHERE txn_id = %lld", n,
		 (long long)txn);
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	sqlite3_busy_timeout(h, 5000);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_text(s, 1, dir, -1, SQLITE_STATIC);
	if (text)
		sqlite3_bind_text(s, 2, body, (int)len, SQLITE_STATIC);
	else
		sqlite3_bind_blob(s, 2, body, (int)len, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	assert_int_equal(sqlite3_changes(h), 1);
	sqlite3_finalize(s);
	sqlite3_close(h);
}

#define B(s) s, sizeof(s) - 1

/*
 * Every body read back is checked whole before use (DESIGN.md invariant 8): each forged body
 * below breaks one check, and every reader refuses it with one line naming the journal and the
 * transaction (or the target); a sound body reads back.
 */
static void
test_journal_pkgs_forged(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	const char *names[] = { "vim" };
	const struct grove_pkg_layout dot = { .stowed = true, .dotfiles = true };
	char long_name[300];
	struct {
		const char *n, *body;
		size_t len;
		bool text;
		const char *dir, *why;
	} txn_cases[] = {
		{ "'x'", B("\x01vim"), false, "/s", "count is not a number" },
		{ "1", B("\x01vim"), true, "/s", "body is not a blob" },
		{ "0", B("\x01vim"), false, "/s", "count is out of range" },
		{ "3", B("\x01vim"), false, "/s", "count is out of range" },
		{ "2", B("\x01vim\0\x01"), false, "/s", "ends inside a package" },
		{ "1", B("\x01vim\x01"), false, "/s", "ends inside a package" },
		{ "2",
		  B("\x01"
		    "abcd\0"),
		  false, "/s", "ends inside a package" },
		{ "1", B("\x09vim"), false, "/s", "unknown flags" },
		{ "1", long_name, sizeof(long_name), false, "/s", "name is too long" },
		{ "1", B("\x01\0\0"), false, "/s", "not a single name" },
		{ "1", B("\x01..\0"), false, "/s", "not a single name" },
		{ "1",
		  B("\x01"
		    "a/b\0"),
		  false, "/s", "not a single name" },
		{ "2",
		  B("\x01"
		    "b\0\x01"
		    "a\0"),
		  false, "/s", "out of order" },
		{ "2",
		  B("\x01"
		    "a\0\x01"
		    "a\0"),
		  false, "/s", "out of order" },
		{ "1",
		  B("\x01"
		    "a\0\x01"
		    "b\0"),
		  false, "/s", "more than its count" },
		{ "1", B("\x01vim\0"), false, "s", "not an absolute path" },
	};
	struct {
		const char *first, *body;
		size_t len;
		int64_t n;
		const char *why;
	} state_cases[][2] = {
		{ { "", B("\x01\x00vim\0"), 1, "transaction is out of range" } },
		{ { "", B("\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01vim\0"), 1,
		    "transaction is out of range" } },
		{ { "", B("\x01\x80\x80"), 1, "transaction is out of range" } },
		{ { "", B("\x01\x81\x80\x80\x80\x80\x80\x80\x80\x80\x00vim\0"), 1,
		    "transaction is out of range" } },
		{ { "", B("\x09\x01vim\0"), 1, "unknown flags" } },
		{ { "m", B("\x01\x01z\0"), 1, "no chunk holds its first names" } },
		{ { "",
		    B("\x01\x01"
		      "a\0"),
		    1, NULL },
		  { "m",
		    B("\x01\x01"
		      "b\0"),
		    1, "out of order" } },
		{ { "", B("\x01\x01z\0"), 1, NULL }, { "m", B("\x01\x01n\0"), 1, "out of order" } },
		{ { "",
		    B("\x01\x01"
		      "a\0"),
		    1, NULL },
		  { "a/b", B("\x01\x01z\0"), 1, "first name" } },
		{ { "",
		    B("\x01\x01"
		      "a\0\x01\x01"
		      "b\0"),
		    1, "more than its count" } },
	};
	int64_t t1 = log_pkgs(fx, fx->tid, NULL, names, &dot, 1, GROVE_TXN_COMMITTED);
	int64_t t2 = log_pkgs(fx, fx->tid, NULL, names, &dot, 1, GROVE_TXN_COMMITTED);
	int64_t t3 = log_pkgs(fx, fx->tid, NULL, names, &dot, 1, GROVE_TXN_INTENT);
	char want[64];

	long_name[0] = 1;
	memset(long_name + 1, 'a', sizeof(long_name) - 2);
	long_name[sizeof(long_name) - 1] = '\0';
	raw_exec(db, "PRAGMA busy_timeout = 5000");
	snprintf(want, sizeof(want), "transaction %lld, its packages: ", (long long)t1);
	for (size_t i = 0; i < sizeof(txn_cases) / sizeof(txn_cases[0]); i++) {
		struct grove_journal_pkg *v = NULL;
		struct grove_pkg_layout l;
		size_t n = 7;
		bool f = false;

		forge_txn(db, t1, txn_cases[i].dir, txn_cases[i].n, txn_cases[i].body,
			  txn_cases[i].len, txn_cases[i].text);
		if (grove_journal_txn_pkgs(fx->j, t1, &v, &n, &fx->err) != -GROVE_E_CONFIG ||
		    !strstr(fx->err.msg, txn_cases[i].why) || !strstr(fx->err.msg, want) ||
		    !strstr(fx->err.msg, db))
			fail_msg("txn case %zu (%s): %s", i, txn_cases[i].why, fx->err.msg);
		assert_int_equal(n, 7);
		/* The history reads it whole too: before t2, t1 is the newest. */
		if (strcmp(txn_cases[i].dir, "/s") != 0)
			continue;
		assert_int_equal(grove_journal_pkg_recorded(fx->j, fx->tid, "/s", "vim", t2, &l, &f,
							    &fx->err),
				 -GROVE_E_CONFIG);
		assert_non_null(strstr(fx->err.msg, txn_cases[i].why));
	}
	/* A commit merges only a transaction's sound rows. */
	forge_txn(db, t3, "/s", "1",
		  B("\x01"
		    "a/b\0"),
		  false);
	assert_int_equal(grove_journal_finish(fx->j, t3, GROVE_TXN_COMMITTED, NULL, &fx->err),
			 -GROVE_E_CONFIG);
	assert_non_null(strstr(fx->err.msg, "not a single name"));
	{
		struct grove_txn t;

		assert_int_equal(grove_journal_get(fx->j, t3, &t, &fx->err), 0);
		assert_int_equal(t.state, GROVE_TXN_INTENT);
		grove_txn_release(&t);
	}
	forge_txn(db, t1, "/s", "2",
		  B("\x01"
		    "a\0\x04vim\0"),
		  false);
	{
		struct grove_journal_pkg *v = NULL;
		size_t n = 0;

		assert_int_equal(grove_journal_txn_pkgs(fx->j, t1, &v, &n, &fx->err), 0);
		assert_int_equal(n, 2);
		assert_string_equal(v[1].package, "vim");
		assert_true(v[1].layout.no_folding && !v[1].layout.stowed);
		grove_journal_pkgs_free(v, n);
	}

	snprintf(want, sizeof(want), "the packages recorded for target %lld: ", (long long)fx->tid);
	for (size_t i = 0; i < sizeof(state_cases) / sizeof(state_cases[0]); i++) {
		struct grove_journal_pkg *v = NULL;
		size_t n = 7;
		const char *why =
			state_cases[i][1].first ? state_cases[i][1].why : state_cases[i][0].why;

		raw_exec(db, "DELETE FROM pkg_state");
		for (int k = 0; k < 2 && state_cases[i][k].first; k++)
			raw_state_put(db, fx->tid, "/s", state_cases[i][k].first,
				      state_cases[i][k].n, state_cases[i][k].body,
				      state_cases[i][k].len);
		if (grove_journal_pkgs_recorded(fx->j, fx->tid, "/s", &v, &n, &fx->err) !=
			    -GROVE_E_CONFIG ||
		    !strstr(fx->err.msg, why) || !strstr(fx->err.msg, want))
			fail_msg("state case %zu (%s): %s", i, why, fx->err.msg);
		assert_int_equal(n, 0);
	}
	/* A sound state reads back, across its chunks. */
	raw_exec(db, "DELETE FROM pkg_state");
	raw_state_put(db, fx->tid, "/s", "", 1,
		      B("\x03\x01"
			"a\0"));
	raw_state_put(db, fx->tid, "/s", "m", 2, B("\x05\x81\x01m\0\x01\x02z\0"));
	assert_recorded(fx, fx->tid, "/s", "a", 0, true, true, true, false);
	assert_recorded(fx, fx->tid, "/s", "m", 0, true, true, false, true);
	assert_recorded(fx, fx->tid, "/s", "z", 0, true, true, false, false);
	assert_recorded(fx, fx->tid, "/s", "b", 0, false, false, false, false);
	free(db);
}
#undef B

/*
 * A log of schema 10 (a row per package and a pointer per package): the migration packs every
 * transaction's rows and the latest state, and every reader answers as before. A row of no
 * transaction and a pointer at no row are dropped; a row no reader accepted is still refused.
 */
static void
test_journal_migrates_pkgs_packed(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_journal_pkg *v = NULL;
	int64_t txns[8], bad;
	size_t n = pkgs_history(fx, txns), nv = 0;
	char *before = calloc(1, 16384), *after = calloc(1, 16384);
	char *big_before = calloc(1, 1 << 16), *big_after = calloc(1, 1 << 16);
	const struct grove_pkg_layout nofold = { .stowed = true, .no_folding = true };

	assert_non_null(before);
	assert_non_null(after);
	assert_non_null(big_before);
	assert_non_null(big_after);
	log_range(fx, "/big", 0, 300, 1, nofold);
	log_range(fx, "/big", 100, 150, 1, (struct grove_pkg_layout){ .dotfiles = true });
	pkgs_answers(fx, txns, n, before);
	state_render(fx, "/big", big_before, 1 << 16);
	pkgs_as_schema10(fx, db);
	raw_exec(db, "PRAGMA foreign_keys = OFF;"
		     "INSERT INTO txn_packages VALUES (999, '/s', 'orphan', 1, 0, 0);"
		     "INSERT INTO pkg_latest VALUES (1, '/s', 'ghost', 998);"
		     "INSERT INTO txns (target_id, state, command, started) VALUES (1,"
		     " 'committed', 'x', 0);"
		     "INSERT INTO txn_packages VALUES ((SELECT max(id) FROM txns), '/x',"
		     " CAST(X'6100' AS TEXT), 1, 0, 0);" BEFORE_14 "PRAGMA user_version = 10;");
	bad = raw_int(db, "SELECT max(id) FROM txns");
	fx->j = grove_journal_close(fx->j);
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	fx->j = j;
	grove_root_release(&fx->sroot);
	fx->sroot = root;
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema"
				     " WHERE name IN ('pkg_latest', 'txn_packages')"),
			 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM txn_pkgs WHERE txn_id = 999"), 0);
	assert_true(raw_int(db, "SELECT count(*) FROM pkg_state WHERE stow_dir = '/big'") > 1);
	pkgs_answers(fx, txns, n, after);
	assert_string_equal(after, before);
	state_render(fx, "/big", big_after, 1 << 16);
	assert_string_equal(big_after, big_before);
	assert_non_null(strstr(big_after, "p0099=101 p0100=010 "));
	assert_int_equal(grove_journal_pkgs_recorded(fx->j, fx->tid, "/s", &v, &nv, &fx->err), 0);
	for (size_t i = 0; i < nv; i++)
		assert_string_not_equal(v[i].package, "ghost");
	grove_journal_pkgs_free(v, nv);
	assert_int_equal(grove_journal_txn_pkgs(fx->j, bad, &v, &nv, &fx->err), -GROVE_E_CONFIG);
	assert_non_null(strstr(fx->err.msg, "not a single name"));
	free(before);
	free(after);
	free(big_before);
	free(big_after);
	free(db);
}

/* An intent is logged without SQLite's foreign-key checks, so its transaction row checks its own
 * references: a target or a transaction to undo the log does not have is refused, and nothing
 * is logged. The checks are on again for the next write transaction: an alternatives group of
 * an unknown dir is refused by SQLite. */
static void
test_journal_intent_refs(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_plan p;
	struct grove_journal_alt_change ch = { .dir_id = 4242, .name = (char *)"ed" };
	int64_t id = 0, t1 = log_one(fx, GROVE_OP_LINK, "x", GROVE_TXN_COMMITTED, 0);
	int64_t count = raw_int(db, "SELECT count(*) FROM txns");

	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, NULL);
	assert_int_equal(grove_journal_begin(fx->j, fx->tid + 50, "t", NULL, 0, &p, &id, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_non_null(strstr(fx->err.msg, "no target"));
	assert_int_equal(grove_journal_begin(fx->j, fx->tid, "t", NULL, t1 + 50, &p, &id, &fx->err),
			 -GROVE_E_INTERNAL);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM txns"), count);
	assert_int_equal(raw_int(db, "SELECT sum(n) FROM op_chunks"), 1);
	assert_int_equal(grove_journal_begin(fx->j, fx->tid, "t", NULL, t1, &p, &id, &fx->err), 0);
	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_begin(fx->j, fx->tid, "t", NULL, 0, &p, &id, &fx->err), 0);
	assert_true(grove_journal_begin_alt(fx->j, fx->tid, "t", NULL, 0, &p, &ch, 1, &id,
					    &fx->err) < 0);
	assert_non_null(strstr(fx->err.msg, "FOREIGN KEY"));
	grove_plan_release(&p);
	free(db);
}

/* The roots an intent carries (schema 13) come back as written; a log of schema 12 gains the
 * table and its transactions have none; a row grove would not write is refused, naming the
 * transaction. */
static void
test_journal_roots(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_journal_root in[2] = {
		{ .kind = GROVE_JOURNAL_ROOT_ADMINDIR,
		  .dir_id = 7,
		  .under_target = true,
		  .rel = (char *)"var/lib/dpkg/alternatives",
		  .resolve = GROVE_RESOLVE_BENEATH,
		  .id = { .dev = 65024, .ino = 123456, .born = 1796667293813005645 } },
		{ .kind = GROVE_JOURNAL_ROOT_ALTDIR,
		  .dir_id = 7,
		  .under_target = false,
		  .rel = (char *)"",
		  .resolve = GROVE_RESOLVE_IN_ROOT,
		  .id = { .dev = 1, .ino = 2, .born = 0 } },
	};
	struct grove_journal_intent intent = {
		.target_id = fx->tid, .command = "t", .roots = in, .n_roots = 2
	};
	struct grove_journal_root *v = NULL;
	struct grove_plan p;
	int64_t id = 0, old;
	size_t n = 9;
	const char *forged[] = {
		"UPDATE txn_roots SET rel = '../etc'",
		"UPDATE txn_roots SET rel = '/etc'",
		"UPDATE txn_roots SET rel = 'a//b'",
		"PRAGMA ignore_check_constraints = 1; UPDATE txn_roots SET kind = 'profile'",
		"PRAGMA ignore_check_constraints = 1; UPDATE txn_roots SET parent = '..'",
		"PRAGMA ignore_check_constraints = 1; UPDATE txn_roots SET resolve = 'follow'",
	};

	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, NULL);
	intent.plan = &p;
	old = log_one(fx, GROVE_OP_LINK, "x", GROVE_TXN_COMMITTED, 0);
	/* Schema 12: no table; opening migrates, the old transaction has no roots. */
	fx->j = grove_journal_close(fx->j);
	raw_exec(db, "DROP TABLE txn_roots; " BEFORE_14 "PRAGMA user_version = 12;");
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	fx->j = j;
	grove_root_release(&fx->sroot);
	fx->sroot = root;
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(grove_journal_txn_roots(fx->j, old, &v, &n, &fx->err), 0);
	assert_int_equal(n, 0);
	grove_journal_roots_free(v, n);

	assert_int_equal(grove_journal_begin_intent(fx->j, &intent, &id, &fx->err), 0);
	assert_int_equal(grove_journal_txn_roots(fx->j, id, &v, &n, &fx->err), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(v[i].kind, in[i].kind);
		assert_int_equal(v[i].dir_id, in[i].dir_id);
		assert_int_equal(v[i].under_target, in[i].under_target);
		assert_string_equal(v[i].rel, in[i].rel);
		assert_int_equal(v[i].resolve, in[i].resolve);
		assert_int_equal(v[i].id.dev, in[i].id.dev);
		assert_int_equal(v[i].id.ino, in[i].id.ino);
		assert_int_equal(v[i].id.born, in[i].id.born);
	}
	grove_journal_roots_free(v, n);
	assert_int_equal(grove_journal_finish(fx->j, id, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);

	for (size_t k = 0; k < sizeof(forged) / sizeof(forged[0]); k++) {
		raw_exec(db, "DELETE FROM txn_roots");
		raw_exec(db, "INSERT INTO txn_roots VALUES (1, 'admindir', 7, 'target', 'var/adm',"
			     " 'beneath', 1, 2, 3)");
		raw_exec(db, forged[k]);
		v = NULL;
		n = 0;
		assert_int_equal(grove_journal_txn_roots(fx->j, 1, &v, &n, &fx->err),
				 -GROVE_E_CONFIG);
		assert_non_null(strstr(fx->err.msg, "transaction 1 records a root"));
		assert_null(v);
	}
	grove_plan_release(&p);
	free(db);
}

/* A log of schema 8 holding package rows: the migrations to 9 (the index by package dropped,
 * pkg_latest filled) and on to 11 (both packed) keep every reader's answers. */
static void
test_journal_migrates_pkg_latest(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	int64_t txns[8];
	size_t n = pkgs_history(fx, txns);
	char *before = calloc(1, 16384), *after = calloc(1, 16384), *owned_before, *owned_after;

	assert_non_null(before);
	assert_non_null(after);
	pkgs_answers(fx, txns, n, before);
	owned_before = owned_str(fx, fx->tid);
	ops_as_schema9(fx, db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM pkg_latest"), 4);
	fx->j = grove_journal_close(fx->j);
	raw_exec(
		db,
		"DROP TABLE pkg_latest;"
		"CREATE INDEX txn_packages_package ON txn_packages (package, stow_dir, txn_id);" BEFORE_14
		"PRAGMA user_version = 8;");
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	fx->j = j;
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema"
				     " WHERE name = 'txn_packages_package'"),
			 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema"
				     " WHERE name IN ('pkg_latest', 'txn_packages')"),
			 0);
	pkgs_answers(fx, txns, n, after);
	assert_string_equal(after, before);
	owned_after = owned_str(fx, fx->tid);
	assert_string_equal(owned_after, owned_before);
	grove_root_release(&fx->sroot);
	fx->sroot = root;
	free(owned_before);
	free(owned_after);
	free(before);
	free(after);
	free(db);
}

static void
test_journal_target(void **state)
{
	struct fx *fx = *state;
	struct grove_root r2 = { .fd = -1 }, r3 = { .fd = -1 };
	char *renamed = tu_path(fx->dir, "target2");
	char *other = tu_path(fx->dir, "other");
	char *db = tu_path(fx->state, "grove.db");
	int64_t id;
	char sql[256];

	assert_int_equal(grove_journal_target(fx->j, &fx->troot, &id, &fx->err), 0);
	assert_int_equal(id, fx->tid);
	tu_build(fx->dir, "d other\n");
	assert_int_equal(grove_root_open(&r2, other, &fx->err), 0);
	assert_int_equal(grove_journal_target(fx->j, &r2, &id, &fx->err), 0);
	assert_true(id != fx->tid);

	/* Known by device and inode; the path follows a rename. */
	assert_int_equal(rename(fx->target, renamed), 0);
	assert_int_equal(grove_root_open(&r3, renamed, &fx->err), 0);
	assert_int_equal(grove_journal_target(fx->j, &r3, &id, &fx->err), 0);
	assert_int_equal(id, fx->tid);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM targets WHERE id = %" PRId64 " AND path = '%s'", id,
		 renamed);
	assert_int_equal(raw_int(db, sql), 1);
	grove_root_release(&r2);
	grove_root_release(&r3);
	free(renamed);
	free(other);
	free(db);
}

/* A target is known by its birth time too: the root carries the folder's
 * (statx), a folder with the same device and inode but another birth is another
 * target, and a row logged before birth times (born 0) stands for its device
 * and inode until a writer records the birth in it. */
static void
test_journal_target_born(void **state)
{
	struct fx *fx = *state;
	struct grove_root twin = fx->troot;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_plan p = { 0 };
	int64_t txn = 0;
	struct statx sx;
	int64_t id = -1;
	bool used = false;
	char sql[256];

	assert_int_equal(statx(AT_FDCWD, fx->target, 0, STATX_BTIME, &sx), 0);
	if (!(sx.stx_mask & STATX_BTIME)) {
		/* (No birth times on this filesystem: born is 0, and dev and ino decide.) */
		assert_int_equal(fx->troot.born, 0);
		free(db);
		return;
	}
	assert_int_equal(fx->troot.born,
			 (int64_t)sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec);
	snprintf(sql, sizeof(sql), "SELECT born FROM targets WHERE id = %" PRId64, fx->tid);
	assert_int_equal(raw_int(db, sql), fx->troot.born);

	/* A folder made again that reuses the inode is not the old target. */
	twin.born = fx->troot.born + 1;
	assert_int_equal(grove_journal_target_deferred(fx->j, &twin, &id, &fx->err), 0);
	assert_int_equal(id, 0);

	/* A row from before birth times: found (reading writes nothing), then a
	 * writer records the birth in it, and the inode's next folder is new again. */
	snprintf(sql, sizeof(sql), "UPDATE targets SET born = 0 WHERE id = %" PRId64, fx->tid);
	raw_exec(db, sql);
	assert_int_equal(grove_journal_target_deferred(fx->j, &fx->troot, &id, &fx->err), 0);
	assert_int_equal(id, fx->tid);
	snprintf(sql, sizeof(sql), "SELECT born FROM targets WHERE id = %" PRId64, fx->tid);
	assert_int_equal(raw_int(db, sql), 0);
	grove_plan_init(&p);
	assert_int_equal(grove_plan_add_op(&p, GROVE_OP_MKDIR, "d", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(grove_journal_begin(fx->j, id, "stow a", NULL, 0, &p, &txn, &fx->err), 0);
	grove_plan_release(&p);
	assert_int_equal(raw_int(db, sql), fx->troot.born);
	assert_int_equal(grove_journal_finish(fx->j, txn, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	/* (grove_journal_target, which writes at once, does the same.) */
	snprintf(sql, sizeof(sql), "UPDATE targets SET born = 0 WHERE id = %" PRId64, fx->tid);
	raw_exec(db, sql);
	snprintf(sql, sizeof(sql), "SELECT born FROM targets WHERE id = %" PRId64, fx->tid);
	assert_int_equal(grove_journal_target(fx->j, &fx->troot, &id, &fx->err), 0);
	assert_int_equal(id, fx->tid);
	assert_int_equal(raw_int(db, sql), fx->troot.born);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM targets"), 1);
	assert_int_equal(grove_journal_target_deferred(fx->j, &twin, &id, &fx->err), 0);
	assert_int_equal(id, 0);

	/* A transaction's stow dir logged with born 0 is the folder of that
	 * device and inode; one logged with a birth must match it. */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO txns (target_id, state, command, stow_dir, started, stow_dev,"
		 " stow_ino, stow_born) VALUES (%" PRId64 ", 'committed', 'stow a', '/s', 1,"
		 " 7, 8, 0)",
		 fx->tid);
	raw_exec(db, sql);
	assert_int_equal(grove_journal_stow_used(fx->j, fx->tid, "/s", 7, 8, 99, &used, &fx->err),
			 0);
	assert_true(used);
	raw_exec(db, "UPDATE txns SET stow_born = 5 WHERE stow_dir = '/s'");
	assert_int_equal(grove_journal_stow_used(fx->j, fx->tid, "/s", 7, 8, 99, &used, &fx->err),
			 0);
	assert_false(used);
	assert_int_equal(grove_journal_stow_used(fx->j, fx->tid, "/s", 7, 8, 5, &used, &fx->err),
			 0);
	assert_true(used);
	free(db);
}

/* A target the log does not know is registered by the first intent, in that
 * transaction: looking it up writes nothing. */
/* Several rows for one device and inode (folders that reused it, and a row from before birth
 * times): the one of the folder's birth time is its row, else the one of birth time 0. */
static void
test_journal_target_born_pick(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root r = fx->troot;
	int64_t zero, five, minus, id = -1;
	char sql[256];

	r.dev = fx->troot.dev + 1000;
	snprintf(sql, sizeof(sql),
		 "INSERT INTO targets (path, dev, ino, born) VALUES ('/five', %" PRId64 ", %" PRId64
		 ", 5), ('/zero', %" PRId64 ", %" PRId64 ", 0), ('/minus', %" PRId64 ", %" PRId64
		 ", -3)",
		 (int64_t)r.dev, (int64_t)r.ino, (int64_t)r.dev, (int64_t)r.ino, (int64_t)r.dev,
		 (int64_t)r.ino);
	raw_exec(db, sql);
	zero = raw_int(db, "SELECT id FROM targets WHERE path = '/zero'");
	five = raw_int(db, "SELECT id FROM targets WHERE path = '/five'");
	minus = raw_int(db, "SELECT id FROM targets WHERE path = '/minus'");
	r.born = 5;
	assert_int_equal(grove_journal_target_deferred(fx->j, &r, &id, &fx->err), 0);
	assert_int_equal(id, five);
	r.born = -3;
	assert_int_equal(grove_journal_target_deferred(fx->j, &r, &id, &fx->err), 0);
	assert_int_equal(id, minus);
	r.born = 0;
	assert_int_equal(grove_journal_target_deferred(fx->j, &r, &id, &fx->err), 0);
	assert_int_equal(id, zero);
	r.born = 9;
	assert_int_equal(grove_journal_target_deferred(fx->j, &r, &id, &fx->err), 0);
	assert_int_equal(id, zero);
	r.born = -9;
	assert_int_equal(grove_journal_target_deferred(fx->j, &r, &id, &fx->err), 0);
	assert_int_equal(id, zero);
	/* Known under another path (and birth time 0): a writer would bring the row up to date. */
	assert_int_equal(grove_journal_target_registered(fx->j), zero);
	free(db);
}

static void
test_journal_target_deferred(void **state)
{
	struct fx *fx = *state;
	struct grove_root r2 = { .fd = -1 };
	struct grove_plan p = { 0 };
	struct grove_txn t = { 0 };
	char *fresh = tu_path(fx->dir, "fresh");
	char *db = tu_path(fx->state, "grove.db");
	int64_t id = -1, txn = 0, again = 0, n_before;
	char sql[256];

	/* Known: the id at once. */
	assert_int_equal(grove_journal_target_deferred(fx->j, &fx->troot, &id, &fx->err), 0);
	assert_int_equal(id, fx->tid);
	assert_int_equal(grove_journal_target_registered(fx->j), 0);

	tu_build(fx->dir, "d fresh\n");
	assert_int_equal(grove_root_open(&r2, fresh, &fx->err), 0);
	n_before = raw_int(db, "SELECT count(*) FROM targets");
	assert_int_equal(grove_journal_target_deferred(fx->j, &r2, &id, &fx->err), 0);
	assert_int_equal(id, 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM targets"), n_before);
	assert_int_equal(grove_journal_unfinished(fx->j, 0, &txn, &fx->err), 0);
	assert_int_equal(txn, 0);

	/* The intent registers it. */
	grove_plan_init(&p);
	assert_int_equal(grove_plan_add_op(&p, GROVE_OP_MKDIR, "d", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(grove_journal_begin(fx->j, 0, "stow a", NULL, 0, &p, &txn, &fx->err), 0);
	id = grove_journal_target_registered(fx->j);
	assert_true(id > 0 && id != fx->tid);
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM targets WHERE id = %" PRId64 " AND path = '%s'", id, fresh);
	assert_int_equal(raw_int(db, sql), 1);
	snprintf(sql, sizeof(sql), "SELECT target_id FROM txns WHERE id = %" PRId64, txn);
	assert_int_equal(raw_int(db, sql), id);
	assert_int_equal(grove_journal_target(fx->j, &r2, &again, &fx->err), 0);
	assert_int_equal(again, id);
	assert_int_equal(grove_journal_unfinished(fx->j, id, &again, &fx->err), 0);
	assert_int_equal(again, txn);
	/* A second intent with 0 goes to the same target. */
	assert_int_equal(grove_journal_finish(fx->j, txn, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_begin(fx->j, 0, "stow b", NULL, 0, &p, &txn, &fx->err), 0);
	assert_int_equal(grove_journal_get(fx->j, txn, &t, &fx->err), 0);
	assert_int_equal(t.target_id, id);
	grove_txn_release(&t);
	grove_plan_release(&p);
	grove_root_release(&r2);
	free(fresh);
	free(db);
}

static void
test_journal_unfinished(void **state)
{
	struct fx *fx = *state;
	int64_t a, b, u;

	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, 0);
	a = log_one(fx, GROVE_OP_LINK, "a", GROVE_TXN_INTENT, 0);
	b = log_one(fx, GROVE_OP_LINK, "b", GROVE_TXN_INTENT, 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, a);
	assert_int_equal(grove_journal_finish(fx->j, a, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, b);
	assert_int_equal(grove_journal_finish(fx->j, b, GROVE_TXN_STUCK, "stuck", &fx->err), 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, b);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid + 100, &u, &fx->err), 0);
	assert_int_equal(u, 0);
	assert_int_equal(grove_journal_finish(fx->j, b, GROVE_TXN_ROLLED_BACK, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, 0);
}

/* The steps SQLite's machine took for the last run of statement id (its counter reset). */
static int
stmt_steps(struct fx *fx, enum stmt_id id)
{
	sqlite3_stmt *s = NULL;

	assert_int_equal(grove_journal_stmt(fx->j, id, &s, &fx->err), 0);
	return sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
}

/*
 * Asking for the open transaction (every mutating command does, first) costs the same whatever
 * the log's history: a seek in the index of open transactions (schema 12), not a read of every
 * transaction of the target. A log of schema 11 gets the index on open, with the same answers.
 */
static void
test_journal_unfinished_history(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	int64_t u, open_txn;
	int short_log, long_log;

	log_one(fx, GROVE_OP_LINK, "a", GROVE_TXN_COMMITTED, 0);
	stmt_steps(fx, ST_UNFINISHED);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, 0);
	short_log = stmt_steps(fx, ST_UNFINISHED);
	for (int i = 0; i < 300; i++)
		log_one(fx, GROVE_OP_LINK, "a", GROVE_TXN_COMMITTED, 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, 0);
	long_log = stmt_steps(fx, ST_UNFINISHED);
	assert_int_equal(long_log, short_log);
	open_txn = log_one(fx, GROVE_OP_LINK, "b", GROVE_TXN_INTENT, 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, open_txn);

	/* Schema 11: no index; opening migrates, the answer stays. */
	fx->j = grove_journal_close(fx->j);
	raw_exec(db, "DROP INDEX txns_open; DROP TABLE txn_roots; " BEFORE_14
		     "PRAGMA user_version = 11;");
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	fx->j = j;
	grove_root_release(&fx->sroot);
	fx->sroot = root;
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'txns_open'"),
			 1);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, open_txn);
	assert_true(stmt_steps(fx, ST_UNFINISHED) <= short_log + 2);
	free(db);
}

static void
test_journal_list(void **state)
{
	struct fx *fx = *state;
	struct grove_txn *txns = NULL;
	int64_t ids[5];
	size_t n = 99;

	assert_int_equal(grove_journal_list(fx->j, fx->tid, 0, &txns, &n, &fx->err), 0);
	assert_int_equal(n, 0);
	grove_txns_free(txns, n);
	for (int i = 0; i < 5; i++)
		ids[i] = log_one(fx, GROVE_OP_LINK, "x",
				 i == 2 ? GROVE_TXN_ROLLED_BACK : GROVE_TXN_COMMITTED, 0);
	assert_int_equal(grove_journal_list(fx->j, fx->tid, 0, &txns, &n, &fx->err), 0);
	assert_int_equal(n, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(txns[i].id, ids[4 - i]);
		assert_int_equal(txns[i].n_ops, 1);
		assert_string_equal(txns[i].command, "grove test");
	}
	assert_int_equal(txns[2].state, GROVE_TXN_ROLLED_BACK);
	grove_txns_free(txns, n);
	assert_int_equal(grove_journal_list(fx->j, fx->tid, 2, &txns, &n, &fx->err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(txns[0].id, ids[4]);
	assert_int_equal(txns[1].id, ids[3]);
	grove_txns_free(txns, n);
	assert_int_equal(grove_journal_list(fx->j, fx->tid + 1, 0, &txns, &n, &fx->err), 0);
	assert_int_equal(n, 0);
	grove_txns_free(txns, n);
	grove_txns_free(NULL, 0);
}

static void
test_journal_last_undoable(void **state)
{
	struct fx *fx = *state;
	int64_t t1, t4, t5, u;

	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, 0);
	t1 = log_one(fx, GROVE_OP_LINK, "a", GROVE_TXN_COMMITTED, 0);
	log_one(fx, GROVE_OP_LINK, "b", GROVE_TXN_ROLLED_BACK, 0);
	log_one(fx, GROVE_OP_LINK, "c", GROVE_TXN_STUCK, 0);
	log_one(fx, GROVE_OP_LINK, "d", GROVE_TXN_INTENT, 0);
	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, t1);
	t4 = log_one(fx, GROVE_OP_LINK, "e", GROVE_TXN_COMMITTED, 0);
	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, t4);
	/* An undo that rolled back undid nothing. */
	log_one(fx, GROVE_OP_UNLINK, "e", GROVE_TXN_ROLLED_BACK, t4);
	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, t4);
	/* A committed undo: t4 is done with, and the undo itself is not undoable. */
	t5 = log_one(fx, GROVE_OP_UNLINK, "e", GROVE_TXN_COMMITTED, t4);
	assert_true(t5 > t4);
	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, t1);
	log_one(fx, GROVE_OP_UNLINK, "a", GROVE_TXN_COMMITTED, t1);
	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(u, 0);
}

/* ---- ownership ---- */

/* Renders owned entries as "path=text(package)" lines, "path/(package)" for folders. */
static char *
owned_str(struct fx *fx, int64_t target)
{
	struct grove_owned *o = NULL;
	size_t n = 0;
	char *buf = calloc(1, 8192);

	assert_int_equal(grove_journal_owned(fx->j, target, &o, &n, &fx->err), 0);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(buf);

		if (o[i].text)
			snprintf(buf + len, 8192 - len, "%s=%s(%s)\n", o[i].path, o[i].text,
				 o[i].package ? o[i].package : "-");
		else
			snprintf(buf + len, 8192 - len, "%s/(%s)\n", o[i].path,
				 o[i].package ? o[i].package : "-");
	}
	grove_owned_free(o, n);
	return buf;
}

static void
test_journal_owned(void **state)
{
	struct fx *fx = *state;
	struct grove_plan p;
	char *s;

	s = owned_str(fx, fx->tid);
	assert_string_equal(s, "");
	free(s);

	/* stow p: a folder, a link in it, a folded bin/. */
	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, "p");
	add(&p, GROVE_OP_LINK, "a/x", NULL, "../s/p/a/x", NULL, "p");
	add(&p, GROVE_OP_LINK, "bin", NULL, "s/p/bin", NULL, "p");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);

	/* stow q: bin/ unfolds into a folder of links to p and q. */
	add(&p, GROVE_OP_UNFOLD, "bin", "s/p/bin", NULL, NULL, "q");
	add(&p, GROVE_OP_LINK, "bin/ls", NULL, "../s/p/bin/ls", NULL, "p");
	add(&p, GROVE_OP_LINK, "bin/cat", NULL, "../s/q/bin/cat", NULL, "q");
	add(&p, GROVE_OP_MKDIR, "bin/sub", NULL, NULL, NULL, "q");
	add(&p, GROVE_OP_LINK, "bin/sub/f", NULL, "../../s/q/bin/sub/f", NULL, "q");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);

	/* Neither a rolled-back nor an unfinished transaction owns anything. */
	add(&p, GROVE_OP_LINK, "ghost", NULL, "s/r/ghost", NULL, "r");
	add(&p, GROVE_OP_UNLINK, "a/x", "../s/p/a/x", NULL, NULL, "p");
	log_txn(fx, &p, GROVE_TXN_ROLLED_BACK, 0);
	log_txn(fx, &p, GROVE_TXN_INTENT, 0);
	log_txn(fx, &p, GROVE_TXN_STUCK, 0);
	grove_plan_release(&p);

	s = owned_str(fx, fx->tid);
	assert_string_equal(s, "a/(p)\n"
			       "a/x=../s/p/a/x(p)\n"
			       "bin/(q)\n"
			       "bin/cat=../s/q/bin/cat(q)\n"
			       "bin/ls=../s/p/bin/ls(p)\n"
			       "bin/sub/(q)\n"
			       "bin/sub/f=../../s/q/bin/sub/f(q)\n");
	free(s);

	/* unstow q: bin/ folds back into one link to p. */
	add(&p, GROVE_OP_UNLINK, "bin/cat", "../s/q/bin/cat", NULL, NULL, "q");
	add(&p, GROVE_OP_UNLINK, "bin/sub/f", "../../s/q/bin/sub/f", NULL, NULL, "q");
	add(&p, GROVE_OP_RMDIR, "bin/sub", NULL, NULL, NULL, "q");
	add(&p, GROVE_OP_FOLD, "bin", NULL, "s/p/bin", NULL, "p");
	add(&p, GROVE_OP_UNLINK, "bin/ls", "../s/p/bin/ls", NULL, NULL, "p");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);

	/* relink a/x to r; adopt a/y into p. */
	add(&p, GROVE_OP_RELINK, "a/x", "../s/p/a/x", "../s/r/a/x", NULL, "r");
	add(&p, GROVE_OP_ADOPT, "a/y", NULL, "../s/p/a/y", "p/a/y", "p");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);

	s = owned_str(fx, fx->tid);
	assert_string_equal(s, "a/(p)\n"
			       "a/x=../s/r/a/x(r)\n"
			       "a/y=../s/p/a/y(p)\n"
			       "bin=s/p/bin(p)\n");
	free(s);

	/* unstow r. */
	add(&p, GROVE_OP_UNLINK, "a/x", "../s/r/a/x", NULL, NULL, "r");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	s = owned_str(fx, fx->tid);
	assert_string_equal(s, "a/(p)\n"
			       "a/y=../s/p/a/y(p)\n"
			       "bin=s/p/bin(p)\n");
	free(s);

	/* stow q again (bin/ unfolds; binx is a name beside it), then unstow q with the fold first
	 * and no unlink of bin/ls: the fold alone ends what was beneath bin, not binx. */
	add(&p, GROVE_OP_UNFOLD, "bin", "s/p/bin", NULL, NULL, "q");
	add(&p, GROVE_OP_LINK, "bin/ls", NULL, "../s/p/bin/ls", NULL, "p");
	add(&p, GROVE_OP_LINK, "bin/cat", NULL, "../s/q/bin/cat", NULL, "q");
	add(&p, GROVE_OP_LINK, "binx", NULL, "s/q/binx", NULL, "q");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	add(&p, GROVE_OP_FOLD, "bin", NULL, "s/p/bin", NULL, "p");
	add(&p, GROVE_OP_UNLINK, "bin/cat", "../s/q/bin/cat", NULL, NULL, "q");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	s = owned_str(fx, fx->tid);
	assert_string_equal(s, "a/(p)\n"
			       "a/y=../s/p/a/y(p)\n"
			       "bin=s/p/bin(p)\n"
			       "binx=s/q/binx(q)\n");
	free(s);
	/* Unfolded once more: what is made beneath after the fold is there. */
	add(&p, GROVE_OP_UNFOLD, "bin", "s/p/bin", NULL, NULL, "q");
	add(&p, GROVE_OP_LINK, "bin/cat", NULL, "../s/q/bin/cat", NULL, "q");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	s = owned_str(fx, fx->tid);
	assert_string_equal(s, "a/(p)\n"
			       "a/y=../s/p/a/y(p)\n"
			       "bin/(q)\n"
			       "bin/cat=../s/q/bin/cat(q)\n"
			       "binx=s/q/binx(q)\n");
	free(s);

	/* Another target owns nothing of this one's. */
	s = owned_str(fx, fx->tid + 1);
	assert_string_equal(s, "");
	free(s);
}

/* ---- bad databases ---- */

/* Opens a journal in dir/name (a folder prepared by the caller) and expects it refused. */
static void
assert_open_refused(struct fx *fx, const char *name, int code, const char *needle)
{
	char *path = tu_path(fx->dir, name);
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_error err = { 0 };
	char want[512];

	assert_int_equal(grove_journal_open(path, &root, &j, &err), code);
	assert_null(j);
	assert_int_equal(root.fd, -1);
	snprintf(want, sizeof(want), "'%s/grove.db'", path);
	if (!strstr(err.msg, want) || !strstr(err.msg, needle))
		fail_msg("unexpected message: %s", err.msg);
	free(path);
}

static void
test_journal_corrupt(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->dir, "bad/grove.db");
	char *jnl = tu_path(fx->dir, "bad/grove.db-journal");
	char garbage[8192], *after;
	struct stat st;

	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (char)(i * 7 + 3);
	tu_build(fx->dir, "d bad\n");
	write_file(db, garbage, sizeof(garbage));
	assert_open_refused(fx, "bad", -GROVE_E_CONFIG, "file is not a database");
	after = tu_read_file(db);
	assert_non_null(after);
	assert_memory_equal(after, garbage, sizeof(garbage));
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_size, sizeof(garbage));
	assert_int_equal(stat(jnl, &st), -1);
	free(after);
	free(db);
	free(jnl);
}

/* A real journal with its data pages overwritten: refused at open or at the first read. */
static void
test_journal_corrupt_pages(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_txn *txns = NULL;
	char junk[4096];
	size_t n = 0;
	struct stat st;
	int fd, r;

	for (int i = 0; i < 50; i++)
		log_one(fx, GROVE_OP_LINK, "some/longish/path/to/make/pages", GROVE_TXN_COMMITTED,
			0);
	fx->j = grove_journal_close(fx->j);
	assert_int_equal(stat(db, &st), 0);
	assert_true(st.st_size >= 4 * 4096);
	memset(junk, 0x5a, sizeof(junk));
	fd = open(db, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (off_t off = 4096; off < st.st_size; off += 4096)
		assert_int_equal(pwrite(fd, junk, sizeof(junk), off), (ssize_t)sizeof(junk));
	close(fd);

	r = grove_journal_open(fx->state, &root, &j, &fx->err);
	if (r == 0) {
		r = grove_journal_list(j, fx->tid, 0, &txns, &n, &fx->err);
		grove_journal_close(j);
		grove_root_release(&root);
	}
	assert_int_equal(r, -GROVE_E_CONFIG);
	if (!strstr(fx->err.msg, db) || !strstr(fx->err.msg, "malformed"))
		fail_msg("unexpected message: %s", fx->err.msg);
	free(db);
}

static void
test_journal_newer_version(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->dir, "newer/grove.db");
	char want[128];

	tu_build(fx->dir, "d newer\n");
	raw_exec(db, "PRAGMA application_id = 1735552886; PRAGMA user_version = 99;"
		     " CREATE TABLE future (x)");
	snprintf(want, sizeof(want), "has schema version 99, newer than this grove (%d)",
		 GROVE_JOURNAL_VERSION);
	assert_open_refused(fx, "newer", -GROVE_E_CONFIG, want);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 99);
	free(db);
}

/* A journal of schema 4 keeps its alternatives groups in rows; opening it turns each into the
 * text grove alt saves (followers and choices in saved order, an empty line for a choice without
 * a follower's file) and drops the rows. */
static void
test_journal_migrates_alt_groups(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	int64_t id = 0;
	char *text = NULL;

	assert_int_equal(grove_journal_alt_dir(fx->j, "/adm", "/alt", &id, &fx->err), 0);
	ops_as_schema9(fx, db);
	fx->j = grove_journal_close(fx->j);
	raw_exec(db,
		 "ALTER TABLE ops DROP COLUMN recorded;" /* schema 7's */
		 "DROP TABLE txn_packages;"              /* schema 8's */
		 "DROP TABLE pkg_latest;"                /* schema 9's */
		 "DROP TABLE alt_states;"
		 "CREATE TABLE alt_groups (id INTEGER PRIMARY KEY, dir_id INTEGER NOT NULL,"
		 " name TEXT NOT NULL, link TEXT NOT NULL, mode TEXT NOT NULL);"
		 "CREATE TABLE alt_slaves (group_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
		 " name TEXT NOT NULL, link TEXT NOT NULL, PRIMARY KEY (group_id, seq));"
		 "CREATE TABLE alt_choices (group_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
		 " path TEXT NOT NULL, priority INTEGER NOT NULL, PRIMARY KEY (group_id, seq));"
		 "CREATE TABLE alt_choice_slaves (group_id INTEGER NOT NULL,"
		 " choice_seq INTEGER NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL,"
		 " PRIMARY KEY (group_id, choice_seq, name));"
		 "INSERT INTO alt_groups VALUES (5, 1, 'ed', '/usr/bin/ed', 'manual'),"
		 " (6, 1, 'vi', '/usr/bin/vi', 'auto'), (7, 1, 'none', '/usr/bin/none', 'auto');"
		 "INSERT INTO alt_slaves VALUES (5, 1, 'zz', '/usr/bin/zz'),"
		 " (5, 0, 'ex', '/usr/bin/ex');"
		 "INSERT INTO alt_choices VALUES (5, 1, '/opt/a', 7), (5, 0, '/opt/b', -3),"
		 " (6, 0, '/opt/vi', 1);"
		 "INSERT INTO alt_choice_slaves VALUES (5, 1, 'ex', '/opt/ex'),"
		 " (5, 0, 'zz', '/opt/zz');" BEFORE_14 "PRAGMA user_version = 4;");
	assert_int_equal(id, 1);
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db,
				 "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'alt_%'"
				 " AND name NOT IN ('alt_dirs', 'alt_txn_groups', 'alt_states')"),
			 0);
	assert_int_equal(grove_journal_alt_text(j, id, "ed", &text, &fx->err), 0);
	assert_non_null(text);
	assert_string_equal(text, "manual\n/usr/bin/ed\nex\n/usr/bin/ex\nzz\n/usr/bin/zz\n\n"
				  "/opt/b\n-3\n\n/opt/zz\n/opt/a\n7\n/opt/ex\n\n\n");
	free(text);
	assert_int_equal(grove_journal_alt_text(j, id, "vi", &text, &fx->err), 0);
	assert_non_null(text);
	assert_string_equal(text, "auto\n/usr/bin/vi\n\n/opt/vi\n1\n\n");
	free(text);
	assert_int_equal(grove_journal_alt_text(j, id, "none", &text, &fx->err), 0);
	assert_null(text); /* a group without choices is none */
	grove_journal_close(j);
	grove_root_release(&root);
	free(db);
}

/* A journal of schema 5 kept groups that have no admin file yet: opening it marks each one
 * unwritten, and saving the group again clears the mark. */
static void
test_journal_migrates_alt_unwritten(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_journal_alt_state *st = NULL;
	size_t n = 0;
	int64_t id = 0;

	assert_int_equal(grove_journal_alt_dir(fx->j, "/adm", "/alt", &id, &fx->err), 0);
	ops_as_schema9(fx, db);
	fx->j = grove_journal_close(fx->j);
	raw_exec(db,
		 "ALTER TABLE ops DROP COLUMN recorded;" /* schema 7's */
		 "DROP TABLE txn_packages;"              /* schema 8's */
		 "DROP TABLE pkg_latest;"                /* schema 9's */
		 "ALTER TABLE alt_states DROP COLUMN unwritten;"
		 "INSERT INTO alt_states VALUES (1, 'ed', 'auto\n/usr/bin/ed\n\n/opt/a\n1\n\n'),"
		 " (1, 'vi', 'auto\n/usr/bin/vi\n\n/opt/vi\n1\n\n');" BEFORE_14
		 "PRAGMA user_version = 5;");
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(grove_journal_alt_states(j, id, &st, &n, &fx->err), 0);
	assert_int_equal(n, 2);
	assert_true(st[0].unwritten);
	assert_true(st[1].unwritten);
	assert_string_equal(st[1].text, "auto\n/usr/bin/vi\n\n/opt/vi\n1\n\n");
	grove_journal_alt_states_free(st, n);
	assert_int_equal(grove_journal_alt_put(j, id, "ed", "manual\n/usr/bin/ed\n\n/opt/a\n1\n\n",
					       &fx->err),
			 0);
	assert_int_equal(grove_journal_alt_states(j, id, &st, &n, &fx->err), 0);
	assert_int_equal(n, 2);
	assert_false(st[0].unwritten); /* saved since */
	assert_true(st[1].unwritten);
	grove_journal_alt_states_free(st, n);
	/* A group saved by this grove is never unwritten. */
	assert_int_equal(
		grove_journal_alt_put(j, id, "zz", "auto\n/usr/bin/zz\n\n/opt/z\n1\n\n", &fx->err),
		0);
	assert_int_equal(grove_journal_alt_states(j, id, &st, &n, &fx->err), 0);
	assert_int_equal(n, 3);
	assert_false(st[2].unwritten);
	grove_journal_alt_states_free(st, n);
	grove_journal_close(j);
	grove_root_release(&root);
	free(db);
}

static void
test_journal_foreign(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->dir, "foreign/grove.db");
	char *db2 = tu_path(fx->dir, "foreign2/grove.db");

	tu_build(fx->dir, "d foreign\nd foreign2\n");
	raw_exec(db, "PRAGMA application_id = 305419896; CREATE TABLE t (x)");
	assert_open_refused(fx, "foreign", -GROVE_E_CONFIG,
			    "another program (application_id 0x12345678)");
	assert_int_equal(raw_int(db, "PRAGMA application_id"), 305419896);
	/* No application_id, but somebody's tables. */
	raw_exec(db2, "CREATE TABLE t (x)");
	assert_open_refused(fx, "foreign2", -GROVE_E_CONFIG, "another program");
	assert_int_equal(raw_int(db2, "PRAGMA user_version"), 0);
	free(db);
	free(db2);
}

/* ---- a state dir grove cannot write ---- */

static void
try_open(const char *dir, const char *name, struct child_res *res)
{
	char path[4096];
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_error err = { 0 };
	char line[GROVE_ERROR_MSG_MAX + 32];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	r = grove_journal_open(path, &root, &j, &err);
	snprintf(line, sizeof(line), "%d %s", r, r < 0 ? err.msg : "opened");
	append(res, line);
	grove_journal_close(j);
	grove_root_release(&root);
}

static void
readonly_child(void *arg, struct child_res *res)
{
	const char *dir = arg;

	/* A private mount namespace with dir bind-mounted read-only. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0) {
		res->code = -errno;
		return;
	}
	try_open(dir, "state", res); /* an existing journal */
	try_open(dir, "empty", res); /* an existing, empty state dir */
	try_open(dir, "new", res);   /* a state dir to be made */
	/* Read-only commands still read the existing journal, and make nothing. */
	{
		char path[4096];
		struct grove_root root = { .fd = -1 };
		struct grove_journal *j = NULL;
		struct grove_error err = { 0 };
		int r;

		snprintf(path, sizeof(path), "%s/state", dir);
		r = grove_journal_open_with(path, GROVE_JOURNAL_READONLY, &root, &j, &err);
		if (r >= 0) {
			int64_t id = -1;

			r = grove_journal_unfinished(j, 1, &id, &err);
		}
		snprintf(path, sizeof(path), "|readonly %d %s", r, r < 0 ? err.msg : "read");
		append(res, path);
		grove_journal_close(j);
		grove_root_release(&root);
	}
}

static void
nobody_child(void *arg, struct child_res *res)
{
	const char *dir = arg;

	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0) {
		res->code = -errno;
		return;
	}
	try_open(dir, "state", res);
	try_open(dir, "empty", res);
	try_open(dir, "new", res);
}

static void
assert_readonly_results(const struct fx *fx, const char *msg, int code)
{
	char want[1024];

	if (code == -EACCES) {
		/* nobody does not own root's state dir: refused before anything else. */
		snprintf(want, sizeof(want),
			 "%d state dir '%s/state' is owned by uid 0, not by the user running grove "
			 "(uid 65534)",
			 -GROVE_E_CONFIG, fx->dir);
		if (strncmp(msg, want, strlen(want)) != 0)
			fail_msg("state: %s", msg);
		snprintf(want, sizeof(want), "|%d state dir '%s/empty' is owned by uid 0",
			 -GROVE_E_CONFIG, fx->dir);
		if (!strstr(msg, want))
			fail_msg("empty: %s", msg);
	} else {
		/* The existing journal: the database cannot be written. */
		snprintf(want, sizeof(want), "%d open journal '%s/state/grove.db': cannot write it",
			 -EROFS, fx->dir);
		if (strncmp(msg, want, strlen(want)) != 0)
			fail_msg("state: %s", msg);
		/* The empty state dir: grove.db cannot be made there. */
		snprintf(want, sizeof(want), "|%d make journal '%s/empty/grove.db': %s", code,
			 fx->dir, strerror(-code));
		if (!strstr(msg, want))
			fail_msg("empty: %s", msg);
		if (!strstr(msg, "|readonly 0 read"))
			fail_msg("read-only open: %s", msg);
	}
	/* The state dir to be made. */
	snprintf(want, sizeof(want), "|%d open state dir '%s/new': make folder '%s/new': %s|", code,
		 fx->dir, fx->dir, strerror(-code));
	if (!strstr(msg, want))
		fail_msg("new: %s", msg);
}

/* GROVE_JOURNAL_ABSENT_EMPTY: a state dir that is not there, or holds no grove.db, reads as an
 * empty log (named where the file would be) and is left as it was; one that holds a log is
 * read as READONLY reads it. */
static void
test_journal_absent_empty(void **state)
{
	const unsigned flags = GROVE_JOURNAL_READONLY | GROVE_JOURNAL_ABSENT_EMPTY;
	struct fx *fx = *state;
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_txn *txns = NULL;
	struct grove_stat st;
	char *missing = tu_path(fx->dir, "none"), *name;
	size_t n = 1;
	int64_t tid = 1, unf = 1;

	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(grove_journal_open_with(missing, flags, &root, &j, &fx->err), 0);
		assert_int_equal(root.fd < 0, pass == 0);
		name = tu_path(missing, "grove.db");
		assert_string_equal(grove_journal_name(j), name);
		free(name);
		assert_int_equal(grove_journal_target_deferred(j, &fx->troot, &tid, &fx->err), 0);
		assert_int_equal(tid, 0);
		assert_int_equal(grove_journal_unfinished(j, 0, &unf, &fx->err), 0);
		assert_int_equal(unf, 0);
		assert_int_equal(grove_journal_list(j, 0, 0, &txns, &n, &fx->err), 0);
		assert_int_equal(n, 0);
		grove_txns_free(txns, n);
		j = grove_journal_close(j);
		grove_root_release(&root);
		if (pass == 0) {
			assert_int_equal(grove_fs_stat_at(AT_FDCWD, missing, &st, &fx->err), 0);
			assert_int_equal(st.type, GROVE_FT_NONE);
			assert_int_equal(mkdir(missing, 0700), 0);
		} else {
			name = tu_path(missing, "grove.db");
			assert_int_equal(grove_fs_stat_at(AT_FDCWD, name, &st, &fx->err), 0);
			assert_int_equal(st.type, GROVE_FT_NONE);
			free(name);
		}
	}
	/* A state dir with a log: read, not replaced by an empty one. */
	assert_int_equal(grove_journal_open_with(fx->state, flags, &root, &j, &fx->err), 0);
	assert_int_equal(grove_journal_target_deferred(j, &fx->troot, &tid, &fx->err), 0);
	assert_int_equal(tid, fx->tid);
	grove_journal_close(j);
	grove_root_release(&root);
	free(missing);
}

static void
test_journal_readonly_mount(void **state)
{
	struct fx *fx = *state;
	struct child_res res;

	tu_build(fx->dir, "d empty\n");
	run_in_child(readonly_child, fx->dir, &res);
	assert_int_equal(res.code, 0);
	assert_readonly_results(fx, res.msg, -EROFS);
}

static void
test_journal_readonly_nobody(void **state)
{
	struct fx *fx = *state;
	struct child_res res;

	tu_build(fx->dir, "d empty\n");
	/* Everything readable and enterable by nobody, nothing writable. */
	assert_int_equal(chmod(fx->dir, 0755), 0);
	assert_int_equal(chmod(fx->state, 0755), 0);
	{
		char *locks = tu_path(fx->state, "locks");

		assert_int_equal(chmod(locks, 0755), 0);
		free(locks);
	}
	run_in_child(nobody_child, fx->dir, &res);
	assert_int_equal(res.code, 0);
	assert_readonly_results(fx, res.msg, -EACCES);
}

/* ---- another connection holding the database ---- */

static void
test_journal_busy(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root2 = { .fd = -1 }, root3 = { .fd = -1 };
	struct grove_journal *j2 = NULL, *j3 = NULL;
	struct grove_plan p;
	int held[2], release[2], status;
	int64_t id;
	double t0, dt;
	pid_t pid;
	char c;

	setenv("GROVE_JOURNAL_BUSY_MS", "200", 1);
	assert_int_equal(grove_journal_open(fx->state, &root2, &j2, &fx->err), 0);
	grove_plan_init(&p);
	add(&p, GROVE_OP_LINK, "x", NULL, "y", NULL, NULL);

	assert_int_equal(pipe2(held, O_CLOEXEC), 0);
	assert_int_equal(pipe2(release, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *h = NULL;

		close(held[0]);
		close(release[1]);
		if (sqlite3_open(db, &h) != SQLITE_OK ||
		    sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		write_all(held[1], "L", 1);
		if (read(release[0], &c, 1) < 0)
			_exit(2);
		sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
		sqlite3_close(h);
		_exit(0);
	}
	close(held[1]);
	close(release[0]);
	assert_int_equal(read(held[0], &c, 1), 1);

	/* A writer on an open journal. */
	t0 = now_mono();
	assert_int_equal(grove_journal_begin(j2, fx->tid, "x", NULL, 0, &p, &id, &fx->err), -EBUSY);
	dt = now_mono() - t0;
	assert_true(dt >= 0.15 && dt < 3);
	if (!strstr(fx->err.msg, db) || !strstr(fx->err.msg, "database is locked"))
		fail_msg("unexpected message: %s", fx->err.msg);
	/* Opening (which reads the schema) is held up too, then gives up. */
	t0 = now_mono();
	assert_int_equal(grove_journal_open(fx->state, &root3, &j3, &fx->err), -EBUSY);
	dt = now_mono() - t0;
	assert_true(dt >= 0.15 && dt < 3);
	assert_non_null(strstr(fx->err.msg, "database is locked"));

	close(release[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(held[0]);
	assert_int_equal(grove_journal_begin(j2, fx->tid, "x", NULL, 0, &p, &id, &fx->err), 0);

	grove_plan_release(&p);
	grove_journal_close(j2);
	grove_root_release(&root2);
	unsetenv("GROVE_JOURNAL_BUSY_MS");
	free(db);
}

/* ---- a COMMIT whose outcome is unknown ---- */

static void
test_journal_commit_unknown(void **state)
{
	struct fx *fx = *state;
	struct grove_txn *txns = NULL;
	struct grove_plan p;
	struct grove_txn t;
	int64_t a = 0, b = 0;
	size_t n = 0;

	grove_plan_init(&p);
	add(&p, GROVE_OP_LINK, "x", NULL, "y", NULL, "p");

	/* The intent landed although COMMIT said no: read back, it is logged. */
	fail_commit = FAIL_AFTER_COMMIT;
	assert_int_equal(grove_journal_begin(fx->j, fx->tid, "c1", NULL, 0, &p, &a, &fx->err), 0);
	assert_int_equal(fail_commit, FAIL_NONE);
	assert_int_equal(grove_journal_get(fx->j, a, &t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_TXN_INTENT);
	assert_int_equal(t.n_ops, 1);
	grove_txn_release(&t);

	/* It did not land: an error, and the log holds no trace. */
	fail_commit = FAIL_BEFORE_COMMIT;
	b = -1;
	assert_true(grove_journal_begin(fx->j, fx->tid, "c2", NULL, 0, &p, &b, &fx->err) < 0);
	assert_int_equal(b, -1);
	if (!strstr(fx->err.msg, "not logged") || !strstr(fx->err.msg, "disk I/O error"))
		fail_msg("unexpected message: %s", fx->err.msg);
	assert_int_equal(grove_journal_list(fx->j, fx->tid, 0, &txns, &n, &fx->err), 0);
	assert_int_equal(n, 1);
	grove_txns_free(txns, n);

	/* The same for finishing. */
	fail_commit = FAIL_BEFORE_COMMIT;
	assert_true(grove_journal_finish(fx->j, a, GROVE_TXN_COMMITTED, NULL, &fx->err) < 0);
	assert_non_null(strstr(fx->err.msg, "was not marked committed"));
	assert_int_equal(grove_journal_get(fx->j, a, &t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_TXN_INTENT);
	grove_txn_release(&t);
	fail_commit = FAIL_AFTER_COMMIT;
	assert_int_equal(grove_journal_finish(fx->j, a, GROVE_TXN_COMMITTED, NULL, &fx->err), 0);
	assert_int_equal(grove_journal_get(fx->j, a, &t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_TXN_COMMITTED);
	grove_txn_release(&t);
	assert_int_equal(fail_commit, FAIL_NONE);
	grove_plan_release(&p);
}

/* ---- the writer lock ---- */

struct lock_arg {
	struct fx *fx;
	int close_fd;
	double wait;
};

static void
lock_child(void *arg, struct child_res *res)
{
	struct lock_arg *a = arg;
	struct grove_error err = { 0 };
	double t0 = now_mono();
	int fd;

	close(a->close_fd); /* the parent's lock fd, inherited */
	fd = grove_lock_target(&a->fx->sroot, &a->fx->troot, a->wait, &err);
	res->code = fd < 0 ? fd : 0;
	snprintf(res->msg, sizeof(res->msg), "%.3f %s", now_mono() - t0, fd < 0 ? err.msg : "");
}

static void
test_journal_lock_nowait(void **state)
{
	struct fx *fx = *state;
	struct grove_root other = { .fd = -1 };
	struct lock_arg a = { .fx = fx };
	struct child_res res;
	char want[512], *lockpath, *otherpath = tu_path(fx->dir, "other");
	struct stat st;
	int fd, fd2;

	fd = grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	a.close_fd = fd;
	run_in_child(lock_child, &a, &res);
	assert_int_equal(res.code, -EWOULDBLOCK);
	assert_true(atof(res.msg) < 1.0);
	snprintf(want, sizeof(want), "target '%s' is locked by another grove run", fx->target);
	if (!strstr(res.msg, want))
		fail_msg("unexpected message: %s", res.msg);

	/* The file is named by the target's device and inode. */
	if (asprintf(&lockpath, "%s/locks/%ju-%ju.lock", fx->state, (uintmax_t)fx->troot.dev,
		     (uintmax_t)fx->troot.ino) < 0)
		abort();
	assert_int_equal(lstat(lockpath, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);

	/* Another target is not held up. */
	tu_build(fx->dir, "d other\n");
	assert_int_equal(grove_root_open(&other, otherpath, &fx->err), 0);
	fd2 = grove_lock_target(&fx->sroot, &other, 0, &fx->err);
	assert_true(fd2 >= 0);
	close(fd2);
	close(fd);
	grove_root_release(&other);
	free(lockpath);
	free(otherpath);
}

static void
test_journal_lock_wait(void **state)
{
	struct fx *fx = *state;
	struct grove_error err = { 0 };
	int ready[2], done[2], fd, status, first = 0;
	struct child_res res;
	pid_t pid;

	fd = grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err);
	assert_true(fd >= 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(done, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r;

		close(fd);
		close(ready[0]);
		close(done[0]);
		memset(&res, 0, sizeof(res));
		r = grove_lock_target(&fx->sroot, &fx->troot, 0, &err);
		write_all(ready[1], &r, sizeof(r));
		r = grove_lock_target(&fx->sroot, &fx->troot, 60, &err);
		res.code = r < 0 ? r : 0;
		snprintf(res.msg, sizeof(res.msg), "%s", r < 0 ? err.msg : "");
		write_all(done[1], &res, sizeof(res));
		_exit(0);
	}
	close(ready[1]);
	close(done[1]);
	/* The child found it locked and is now waiting; let go. */
	assert_true(read_all(ready[0], &first, sizeof(first)));
	assert_int_equal(first, -EWOULDBLOCK);
	close(fd);
	assert_true(read_all(done[0], &res, sizeof(res)));
	assert_int_equal(res.code, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	close(done[0]);
}

static void
test_journal_lock_killed(void **state)
{
	struct fx *fx = *state;
	int ready[2], hang[2], fd, status;
	char *lockpath;
	struct stat st;
	pid_t pid;
	char c;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hang, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct grove_error err;

		close(ready[0]);
		close(hang[1]);
		if (grove_lock_target(&fx->sroot, &fx->troot, 0, &err) < 0)
			_exit(1);
		write_all(ready[1], "L", 1);
		while (read(hang[0], &c, 1) != 0) /* until killed */
			;
		_exit(2);
	}
	close(ready[1]);
	close(hang[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err), -EWOULDBLOCK);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));

	if (asprintf(&lockpath, "%s/locks/%ju-%ju.lock", fx->state, (uintmax_t)fx->troot.dev,
		     (uintmax_t)fx->troot.ino) < 0)
		abort();
	assert_int_equal(lstat(lockpath, &st), 0);
	fd = grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err);
	assert_true(fd >= 0);
	close(fd);
	close(ready[0]);
	close(hang[1]);
	free(lockpath);
}

/* The holder of a target lock is told without taking the lock: its pid and command while it
 * lives (a child holding it), nothing once it is killed, though its record stays in the file. */
static void
test_journal_lock_holder(void **state)
{
	struct fx *fx = *state;
	struct grove_lock_wait w = { 0 };
	struct grove_lock_holder h;
	int ready[2], hang[2], fd, status;
	pid_t pid;
	char c;

	/* Never locked: free, and looking makes nothing. */
	assert_int_equal(grove_lock_target_holder(&fx->sroot, &fx->troot, &h, &fx->err), 0);
	assert_int_equal(h.state, GROVE_LOCK_FREE);
	grove_lock_holder_release(&h);

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hang, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct grove_error err;

		close(ready[0]);
		close(hang[1]);
		if (grove_lock_target_with(&fx->sroot, &fx->troot, &w, false, "grove stow\nvim",
					   &err) < 0)
			_exit(1);
		write_all(ready[1], "L", 1);
		while (read(hang[0], &c, 1) != 0) /* until killed */
			;
		_exit(2);
	}
	close(ready[1]);
	close(hang[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(grove_lock_target_holder(&fx->sroot, &fx->troot, &h, &fx->err), 0);
	assert_int_equal(h.state, GROVE_LOCK_HELD);
	assert_int_equal(h.pid, pid);
	assert_string_equal(h.command, "grove stow vim");
	grove_lock_holder_release(&h);
	/* Probing took nothing: the holder still holds, and a writer is told who. */
	assert_int_equal(grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err), -EWOULDBLOCK);
	assert_non_null(strstr(fx->err.msg, ": grove stow vim)"));

	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(grove_lock_target_holder(&fx->sroot, &fx->troot, &h, &fx->err), 0);
	assert_int_equal(h.state, GROVE_LOCK_FREE);
	assert_int_equal(h.pid, 0);
	assert_null(h.command);
	grove_lock_holder_release(&h);

	/* Our own lock: held by us, with our pid. */
	fd = grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err);
	assert_true(fd >= 0);
	assert_int_equal(grove_lock_target_holder(&fx->sroot, &fx->troot, &h, &fx->err), 0);
	assert_int_equal(h.state, GROVE_LOCK_HELD);
	assert_int_equal(h.pid, getpid());
	assert_null(h.command);
	grove_lock_holder_release(&h);
	close(fd);
	close(ready[0]);
	close(hang[1]);
}

/* A symlink or a fifo planted as the lock file is refused, never followed or waited on. */
static void
test_journal_lock_planted(void **state)
{
	struct fx *fx = *state;
	char *spec;

	if (asprintf(&spec, "l locks/%ju-%ju.lock ../../outside\n", (uintmax_t)fx->troot.dev,
		     (uintmax_t)fx->troot.ino) < 0)
		abort();
	tu_build(fx->state, spec);
	assert_int_equal(grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err), -ELOOP);
	assert_non_null(strstr(fx->err.msg, fx->target));
	free(spec);
	if (asprintf(&spec, "%s/locks/%ju-%ju.lock", fx->state, (uintmax_t)fx->troot.dev,
		     (uintmax_t)fx->troot.ino) < 0)
		abort();
	assert_int_equal(unlink(spec), 0);
	assert_int_equal(mkfifo(spec, 0600), 0);
	assert_int_equal(grove_lock_target(&fx->sroot, &fx->troot, 0, &fx->err), -EINVAL);
	free(spec);
}

/* ---- op chunks (schema 10) ---- */

/* Appends str to the malloc'd *buf (NULL: empty). */
static void
cat_str(char **buf, const char *str)
{
	size_t len = *buf ? strlen(*buf) : 0, add_len = strlen(str);
	char *nb = realloc(*buf, len + add_len + 1);

	assert_non_null(nb);
	memcpy(nb + len, str, add_len + 1);
	*buf = nb;
}

/* sql with every "TXN" in it replaced by id (malloc'd). */
static char *
subst_txn(const char *sql, int64_t id)
{
	char num[32], *out = NULL;
	const char *p = sql, *q;

	snprintf(num, sizeof(num), "%" PRId64, id);
	cat_str(&out, "");
	while ((q = strstr(p, "TXN"))) {
		char *part = strndup(p, (size_t)(q - p));

		assert_non_null(part);
		cat_str(&out, part);
		cat_str(&out, num);
		free(part);
		p = q + 3;
	}
	cat_str(&out, p);
	return out;
}

/* Appends what plan holds, one line per op with every field, to the malloc'd *buf. */
static void
plan_render(char **buf, const struct grove_plan *plan)
{
	for (size_t i = 0; i < plan->n_ops; i++) {
		const struct grove_op *op = &plan->ops[i];
		char *line = NULL;

		assert_true(asprintf(&line, "%s %s|%s|%s|%s|%s|%d\n", grove_op_kind_name(op->kind),
				     op->path, op->old_text ? op->old_text : "(null)",
				     op->text ? op->text : "(null)",
				     op->stow_path ? op->stow_path : "(null)",
				     op->package ? op->package : "(null)", op->recorded) >= 0);
		cat_str(buf, line);
		free(line);
	}
}

/* Everything the log answers about the fixture's target: each transaction's header and ops, what
 * it owns, and the last undoable and unfinished transactions. */
static char *
log_render(struct fx *fx)
{
	struct grove_txn *txns = NULL;
	size_t n = 0;
	int64_t u = 0, w = 0;
	char *buf = NULL, *owned, *line = NULL;

	assert_int_equal(grove_journal_list(fx->j, fx->tid, 0, &txns, &n, &fx->err), 0);
	for (size_t i = 0; i < n; i++) {
		struct grove_plan q;

		assert_true(asprintf(&line, "txn %" PRId64 " state %d undoes %" PRId64 " ops %zu\n",
				     txns[i].id, (int)txns[i].state, txns[i].undoes,
				     txns[i].n_ops) >= 0);
		cat_str(&buf, line);
		free(line);
		grove_plan_init(&q);
		if (grove_journal_ops(fx->j, txns[i].id, &q, &fx->err) < 0)
			cat_str(&buf, "refused\n");
		else
			plan_render(&buf, &q);
		grove_plan_release(&q);
	}
	grove_txns_free(txns, n);
	owned = owned_str(fx, fx->tid);
	cat_str(&buf, owned);
	free(owned);
	assert_int_equal(grove_journal_last_undoable(fx->j, fx->tid, &u, &fx->err), 0);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &w, &fx->err), 0);
	assert_true(asprintf(&line, "undoable %" PRId64 " unfinished %" PRId64 "\n", u, w) >= 0);
	cat_str(&buf, line);
	free(line);
	return buf;
}

/* A plan of n links whose texts grow with i (some chunks close on their size, some on their
 * count). */
static void
plan_links(struct grove_plan *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char path[64], text[512];

		snprintf(path, sizeof(path), "d%02zu/f-%05zu", i % 37, i);
		snprintf(
			text, sizeof(text), "../s/p/d%02zu/%.*s%05zu", i % 37,
			(int)(i % 7 == 0 ? 300 : i % 40),
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			i);
		add(p, GROVE_OP_LINK, path, NULL, text, NULL, i % 3 ? "p" : NULL);
	}
}

/* A plan logged in several chunks reads back whole, and any range of it reads back as that slice,
 * wherever the range starts or ends against the chunks' bounds. */
static void
test_journal_chunk_ranges(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	const size_t n = 2600;
	const size_t firsts[] = {
		0, 1, 1023, 1024, 1025, 1500, 2047, 2048, 2599, 2600, 2601, 9999
	};
	const size_t maxes[] = { 0, 1, 2, 100, 1024, 3000 };
	struct grove_plan p, q;
	char sql[128], *all = NULL;
	int64_t id;

	grove_plan_init(&p);
	plan_links(&p, n);
	id = log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM op_chunks WHERE txn_id = %" PRId64, id);
	assert_true(raw_int(db, sql) >= 4);
	snprintf(sql, sizeof(sql), "SELECT sum(n) FROM op_chunks WHERE txn_id = %" PRId64, id);
	assert_int_equal(raw_int(db, sql), n);
	plan_render(&all, &p);
	for (size_t a = 0; a < sizeof(firsts) / sizeof(firsts[0]); a++)
		for (size_t b = 0; b < sizeof(maxes) / sizeof(maxes[0]); b++) {
			size_t first = firsts[a], max = maxes[b];
			size_t end =
				first >= n ? first : (!max || first + max > n ? n : first + max);
			struct grove_plan slice;
			char *want = NULL, *got = NULL;

			grove_plan_init(&q);
			assert_int_equal(
				grove_journal_ops_range(fx->j, id, first, max, &q, &fx->err), 0);
			assert_int_equal(q.n_ops, end - first);
			grove_plan_init(&slice);
			for (size_t i = first; i < end; i++)
				add(&slice, p.ops[i].kind, p.ops[i].path, p.ops[i].old_text,
				    p.ops[i].text, p.ops[i].stow_path, p.ops[i].package);
			plan_render(&want, &slice);
			plan_render(&got, &q);
			assert_string_equal(got ? got : "", want ? want : "");
			free(want);
			free(got);
			grove_plan_release(&slice);
			grove_plan_release(&q);
		}
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops(fx->j, id, &q, &fx->err), 0);
	{
		char *got = NULL;

		plan_render(&got, &q);
		assert_string_equal(got, all);
		free(got);
	}
	grove_plan_release(&q);
	grove_plan_release(&p);
	free(all);
	free(db);
}

/* Runs sql (each TXN the transaction) on the log, expects every reader of the transaction's ops
 * to refuse them as a corrupt log with a message holding want, then puts the chunks back.
 * first_chunk: what sql breaks is in the first chunk; owned: the ownership replay refuses it too
 * (it checks what it uses: not a stow path, which it never reads). */
static void
assert_chunk_refused(struct fx *fx, const char *db, int64_t id, const char *sql, const char *want,
		     bool first_chunk, bool owned)
{
	char *run = NULL, *restore = NULL;
	struct grove_owned *o = NULL;
	struct grove_plan q;
	size_t n = 0;

	char *body = subst_txn(sql, id);

	cat_str(&run, "CREATE TEMP TABLE saved AS SELECT * FROM op_chunks WHERE txn_id = TXN;");
	cat_str(&run, body);
	free(body);
	body = run;
	run = subst_txn(body, id);
	free(body);
	restore = subst_txn("DELETE FROM op_chunks WHERE txn_id = TXN;"
			    " INSERT INTO op_chunks SELECT * FROM saved; DROP TABLE saved;",
			    id);
	{
		sqlite3 *h = NULL;

		assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
		assert_int_equal(sqlite3_exec(h, run, NULL, NULL, NULL), SQLITE_OK);
		grove_plan_init(&q);
		grove_error_clear(&fx->err);
		assert_int_equal(grove_journal_ops(fx->j, id, &q, &fx->err), -GROVE_E_CONFIG);
		if (!strstr(fx->err.msg, want))
			fail_msg("'%s' does not say '%s'", fx->err.msg, want);
		assert_int_equal(q.n_ops, 0);
		/* The whole chunk is checked, however few of its ops are asked for (a range ending
		 * in the first chunk reads no other). */
		if (first_chunk)
			assert_int_equal(grove_journal_ops_range(fx->j, id, 0, 1, &q, &fx->err),
					 -GROVE_E_CONFIG);
		grove_plan_release(&q);
		if (owned)
			assert_int_equal(grove_journal_owned(fx->j, fx->tid, &o, &n, &fx->err),
					 -GROVE_E_CONFIG);
		assert_int_equal(sqlite3_exec(h, restore, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(h);
	}
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops(fx->j, id, &q, &fx->err), 0);
	assert_int_equal(q.n_ops, 3);
	grove_plan_release(&q);
	free(run);
	free(restore);
}

/* Chunks someone wrote by hand: each way a chunk can be malformed is a corrupt log (exit 78's
 * code), for the reader of a transaction's ops and for the ownership replay alike. */
static void
test_journal_chunk_malformed(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_plan p, q;
	char sql[PATH_MAX + 256];
	int64_t id;

	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, "p");
	add(&p, GROVE_OP_LINK, "a/b", NULL, "../s/p/a/b", NULL, "p");
	add(&p, GROVE_OP_UNLINK, "c", "old", NULL, NULL, NULL);
	id = log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	/* The format as docs/journal.md gives it. */
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM op_chunks WHERE txn_id = %" PRId64 " AND first_seq = 0"
		 " AND n = 3 AND body = X'000861007000010A612F62002E2E2F732F702F612F620070000201"
		 "63006F6C6400'",
		 id);
	assert_int_equal(raw_int(db, sql), 1);

	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET body = substr(body, 1, length(body) - 1)"
			     " WHERE txn_id = TXN",
			     "ends inside an op", true, true);
	assert_chunk_refused(fx, db, id, "UPDATE op_chunks SET n = 4 WHERE txn_id = TXN",
			     "ends inside an op", true, true);
	assert_chunk_refused(fx, db, id, "UPDATE op_chunks SET n = 2 WHERE txn_id = TXN",
			     "holds more than its count of ops", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET body = CAST(body || X'0400' AS BLOB)"
			     " WHERE txn_id = TXN",
			     "holds more than its count of ops", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET body = CAST(X'08' || substr(body, 2) AS BLOB)"
			     " WHERE txn_id = TXN",
			     "unknown kind", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET body = CAST(X'0028' || substr(body, 3) AS BLOB)"
			     " WHERE txn_id = TXN",
			     "unknown flags", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET body = CAST(X'0018' || substr(body, 3) AS BLOB)"
			     " WHERE txn_id = TXN",
			     "a recorded op that is not a link's", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET body = CAST(body AS TEXT) WHERE txn_id = TXN",
			     "not a blob", true, true);
	assert_chunk_refused(fx, db, id, "UPDATE op_chunks SET n = 0 WHERE txn_id = TXN",
			     "out of range", true, true);
	assert_chunk_refused(fx, db, id, "UPDATE op_chunks SET n = 'three' WHERE txn_id = TXN",
			     "not a number", true, true);
	assert_chunk_refused(fx, db, id, "UPDATE op_chunks SET first_seq = -1 WHERE txn_id = TXN",
			     "out of range", true, true);
	/* Seqs: a first chunk that does not start at 0, a gap and an overlap between two. */
	assert_chunk_refused(fx, db, id, "UPDATE op_chunks SET first_seq = 1 WHERE txn_id = TXN",
			     "gap or overlap", true, true);
	assert_chunk_refused(fx, db, id,
			     "INSERT INTO op_chunks SELECT txn_id, 4, n, body FROM op_chunks"
			     " WHERE txn_id = TXN",
			     "gap or overlap", false, true);
	assert_chunk_refused(fx, db, id,
			     "INSERT INTO op_chunks SELECT txn_id, 2, n, body FROM op_chunks"
			     " WHERE txn_id = TXN",
			     "gap or overlap", false, true);
	/* A field as long as PATH_MAX (no NUL within it); and invariant 8's checks, as for rows. */
	snprintf(sql, sizeof(sql),
		 "UPDATE op_chunks SET n = 1, body = CAST(X'0000' || printf('%%.*c', %d, 'a') ||"
		 " X'00' AS BLOB) WHERE txn_id = TXN",
		 PATH_MAX);
	assert_chunk_refused(fx, db, id, sql, "too long", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET n = 1, body = CAST(X'0000' || '../x' || X'00'"
			     " AS BLOB) WHERE txn_id = TXN",
			     "not a clean relative path", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET n = 1, body = CAST(X'0108' || 'x' || X'00' ||"
			     " '../p' || X'00' AS BLOB) WHERE txn_id = TXN",
			     "its package is not a single name", true, true);
	assert_chunk_refused(fx, db, id,
			     "UPDATE op_chunks SET n = 1, body = CAST(X'0704' || 'x' || X'00' ||"
			     " '/etc/passwd' || X'00' AS BLOB) WHERE txn_id = TXN",
			     "its stow path is not a clean relative path", true, false);
	/* A field of PATH_MAX - 1 bytes is one grove could have written. */
	snprintf(sql, sizeof(sql),
		 "UPDATE op_chunks SET body = CAST(X'0102' || 'x' || X'00' || printf('%%.*c', %d,"
		 " 'a') || X'00' AS BLOB), n = 1 WHERE txn_id = %" PRId64,
		 PATH_MAX - 1, id);
	raw_exec(db, sql);
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops(fx->j, id, &q, &fx->err), 0);
	assert_int_equal(q.n_ops, 1);
	assert_int_equal(strlen(q.ops[0].text), PATH_MAX - 1);
	grove_plan_release(&q);
	/* The count grove log shows is the chunks' sum; a negative one is refused. */
	snprintf(sql, sizeof(sql), "UPDATE op_chunks SET n = -5 WHERE txn_id = %" PRId64, id);
	raw_exec(db, sql);
	{
		struct grove_txn t;

		assert_int_equal(grove_journal_get(fx->j, id, &t, &fx->err), -GROVE_E_CONFIG);
		assert_non_null(strstr(fx->err.msg, "op count"));
	}
	free(db);
}

/* A log written by schema 9 (one row per op) keeps its whole history through the migration to
 * chunks: every transaction's ops, counts, ownership, undo and unfinished transactions read the
 * same. A row of no transaction is dropped; a row no reader accepted is still refused. */
static void
test_journal_migrates_chunks(void **state)
{
	struct fx *fx = *state;
	char *db = tu_path(fx->state, "grove.db");
	struct grove_root root = { .fd = -1 };
	struct grove_journal *j = NULL;
	struct grove_plan p, q;
	char *before, *after, sql[256];
	int64_t t1, big, bad;

	grove_plan_init(&p);
	add(&p, GROVE_OP_MKDIR, "a", NULL, NULL, NULL, "p");
	add(&p, GROVE_OP_LINK, "a/b", NULL, "../s/p/a/b", NULL, "p");
	add(&p, GROVE_OP_ADOPT, "a/c", NULL, "../s/p/a/c", "p/a/c", "p");
	add(&p, GROVE_OP_RELINK, "d", "../s/o/d", "../s/p/d", NULL, "p");
	add(&p, GROVE_OP_LINK, "e", NULL, "", NULL, NULL); /* an empty text stays one */
	t1 = log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	grove_plan_init(&p);
	assert_int_equal(grove_plan_add_recorded(&p, GROVE_OP_LINK, "r", "../s/q/r", "q"), 0);
	assert_int_equal(grove_plan_add_recorded(&p, GROVE_OP_UNLINK, "d", "../s/p/d", "p"), 0);
	log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
	grove_plan_release(&p);
	grove_plan_init(&p);
	add(&p, GROVE_OP_UNLINK, "a/b", "../s/p/a/b", NULL, NULL, "p");
	add(&p, GROVE_OP_RMDIR, "a", NULL, NULL, NULL, "p");
	log_txn(fx, &p, GROVE_TXN_COMMITTED, t1);
	grove_plan_release(&p);
	grove_plan_init(&p);
	plan_links(&p, 2100);
	log_txn(fx, &p, GROVE_TXN_ROLLED_BACK, 0);
	big = log_txn(fx, &p, GROVE_TXN_INTENT, 0);
	grove_plan_release(&p);
	log_one(fx, GROVE_OP_UNFOLD, "u", GROVE_TXN_STUCK, 0);
	before = log_render(fx);

	ops_as_schema9(fx, db);
	fx->j = grove_journal_close(fx->j);
	/* An orphan row, and a rolled-back transaction's row whose text holds a NUL byte. */
	raw_exec(db, "PRAGMA foreign_keys = OFF;"
		     "INSERT INTO ops (txn_id, seq, kind, path) VALUES (999, 0, 'mkdir', 'zz');"
		     "INSERT INTO txns (target_id, state, command, started) VALUES (1,"
		     " 'rolled_back', 'x', 0);"
		     "INSERT INTO ops (txn_id, seq, kind, path, text) VALUES ((SELECT max(id) FROM"
		     " txns), 0, 'link', 'n', CAST(X'6100' AS TEXT));" BEFORE_14
		     "PRAGMA user_version = 9;");
	bad = raw_int(db, "SELECT max(id) FROM txns");
	assert_int_equal(raw_int(db, "SELECT count(*) FROM ops"), 5 + 2 + 2 + 2 * 2100 + 1 + 2);
	assert_int_equal(grove_journal_open(fx->state, &root, &j, &fx->err), 0);
	fx->j = j;
	grove_root_release(&fx->sroot);
	fx->sroot = root;
	assert_int_equal(raw_int(db, "PRAGMA user_version"), GROVE_JOURNAL_VERSION);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'ops'"), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM op_chunks WHERE txn_id = 999"), 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM op_chunks WHERE txn_id = %" PRId64, big);
	assert_true(raw_int(db, sql) >= 3); /* at most 1,024 ops each */
	snprintf(sql, sizeof(sql), "SELECT sum(n) FROM op_chunks WHERE txn_id = %" PRId64, big);
	assert_int_equal(raw_int(db, sql), 2100);
	/* The refused row is still refused, and still counted. */
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops(fx->j, bad, &q, &fx->err), -GROVE_E_CONFIG);
	grove_plan_release(&q);
	snprintf(sql, sizeof(sql),
		 "DELETE FROM op_chunks WHERE txn_id = %" PRId64
		 "; DELETE FROM txns WHERE id = %" PRId64,
		 bad, bad);
	raw_exec(db, sql);
	after = log_render(fx);
	assert_string_equal(after, before);
	free(before);
	free(after);
	free(db);
}

/* ---- cost ---- */

static void
test_journal_cost(void **state)
{
	struct fx *fx = *state;
	struct grove_plan p;
	double best = 1e9;

	grove_plan_init(&p);
	for (int i = 0; i < 1000; i++) {
		char path[64], text[128];

		snprintf(path, sizeof(path), "share/pkg/dir%02d/file-%04d.txt", i % 50, i);
		snprintf(text, sizeof(text), "../../../stow/pkg/share/pkg/dir%02d/file-%04d.txt",
			 i % 50, i);
		add(&p, GROVE_OP_LINK, path, NULL, text, NULL, "pkg");
	}
	for (int k = 0; k < 5; k++) {
		double t0 = now_mono(), dt;

		log_txn(fx, &p, GROVE_TXN_COMMITTED, 0);
		dt = (now_mono() - t0) * 1000;
		if (dt < best)
			best = dt;
	}
	print_message("# begin+finish of a 1000-op plan: %.1f ms (best of 5)\n", best);
	assert_true(best < 5000);
	grove_plan_release(&p);
}

/* A sink that logs into the stream of the journal test (plan.h): counts its calls. */
struct test_sink {
	struct grove_plan_sink sink;
	struct grove_journal *j;
	struct grove_journal_stream *st;
	int calls;
};

static int
test_sink_flush(struct grove_plan_sink *sink, struct grove_plan *plan)
{
	struct test_sink *ts = (struct test_sink *)sink;
	int r = grove_journal_stream_ops(ts->j, ts->st, plan, &sink->err);

	if (r < 0)
		return r;
	ts->calls++;
	grove_plan_drop_ops(plan);
	return 0;
}

/* A streamed intent: nothing is in the log until it is closed (a cancel leaves no trace); once
 * closed, the transaction is INTENT with every op in order, and read back in ranges. */
static void
test_journal_stream(void **state)
{
	struct fx *fx = *state;
	struct grove_journal_intent in = { .target_id = fx->tid, .command = "grove stow big" };
	struct grove_journal_stream st;
	struct test_sink ts = { .sink = { .batch = 3, .flush = test_sink_flush },
				.j = fx->j,
				.st = &st };
	struct grove_plan p, q;
	struct grove_txn t;
	int64_t unfinished = -1;
	char path[32], text[32];

	/* Cancelled: no transaction, nothing unfinished. */
	assert_int_equal(grove_journal_stream_open(fx->j, &in, &st, &fx->err), 0);
	grove_plan_init(&p);
	add(&p, GROVE_OP_LINK, "x", NULL, "../s/p/x", NULL, "p");
	assert_int_equal(grove_journal_stream_ops(fx->j, &st, &p, &fx->err), 0);
	grove_journal_stream_cancel(fx->j);
	grove_plan_release(&p);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &unfinished, &fx->err), 0);
	assert_int_equal(unfinished, 0);
	assert_int_equal(grove_journal_get(fx->j, st.txn, &t, &fx->err), -ENOENT);

	/* Streamed through a plan's sink (batch 3: flushed at 4 ops), the last 3 logged at the end.
	 */
	assert_int_equal(grove_journal_stream_open(fx->j, &in, &st, &fx->err), 0);
	grove_plan_init(&p);
	p.sink = &ts.sink;
	for (int i = 0; i < 11; i++) {
		snprintf(path, sizeof(path), "bin/f%02d", i);
		snprintf(text, sizeof(text), "../s/p/bin/f%02d", i);
		add(&p, GROVE_OP_LINK, path, NULL, text, NULL, "p");
		assert_true(p.n_ops <= 3);
	}
	assert_int_equal(ts.calls, 2); /* at 4 and 8 ops: more than the batch */
	assert_int_equal(p.n_logged, 8);
	assert_int_equal(p.n_ops, 3);
	p.sink = NULL;
	assert_int_equal(grove_journal_stream_ops(fx->j, &st, &p, &fx->err), 0);
	assert_int_equal(st.n_ops, 11);
	assert_int_equal(grove_journal_stream_close(fx->j, &st, &fx->err), 0);
	grove_plan_release(&p);
	assert_int_equal(grove_journal_get(fx->j, st.txn, &t, &fx->err), 0);
	assert_int_equal(t.state, GROVE_TXN_INTENT);
	assert_int_equal(t.n_ops, 11);
	assert_string_equal(t.command, "grove stow big");
	grove_txn_release(&t);
	assert_int_equal(grove_journal_unfinished(fx->j, fx->tid, &unfinished, &fx->err), 0);
	assert_int_equal(unfinished, st.txn);

	/* Ranges: ops 4..7, then from 9 to the end. */
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops_range(fx->j, st.txn, 4, 4, &q, &fx->err), 0);
	assert_int_equal(q.n_ops, 4);
	assert_string_equal(q.ops[0].path, "bin/f04");
	assert_string_equal(q.ops[3].path, "bin/f07");
	assert_string_equal(q.ops[3].text, "../s/p/bin/f07");
	grove_plan_release(&q);
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops_range(fx->j, st.txn, 9, 0, &q, &fx->err), 0);
	assert_int_equal(q.n_ops, 2);
	assert_string_equal(q.ops[1].path, "bin/f10");
	grove_plan_release(&q);
	grove_plan_init(&q);
	assert_int_equal(grove_journal_ops(fx->j, st.txn, &q, &fx->err), 0);
	assert_int_equal(q.n_ops, 11);
	grove_plan_release(&q);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_journal_state_dir),
		T(test_journal_open_creates),
		T(test_journal_open_refuses_symlinked_db),
		T(test_journal_held_dir),
		T(test_journal_roundtrip),
		T(test_journal_stream),
		T(test_journal_pkgs),
		T(test_journal_pkgs_commit_elsewhere),
		T(test_journal_pkgs_hostile),
		T(test_journal_migrates_pkgs),
		T(test_journal_pkgs_recorded_all),
		T(test_journal_pkgs_many),
		T(test_journal_pkgs_state_chunks),
		T(test_journal_pkgs_forged),
		T(test_journal_roots),
		T(test_journal_migrates_pkgs_packed),
		T(test_journal_intent_refs),
		T(test_journal_migrates_pkg_latest),
		T(test_journal_target),
		T(test_journal_target_born),
		T(test_journal_target_born_pick),
		T(test_journal_target_deferred),
		T(test_journal_unfinished),
		T(test_journal_unfinished_history),
		T(test_journal_list),
		T(test_journal_last_undoable),
		T(test_journal_owned),
		T(test_journal_corrupt),
		T(test_journal_corrupt_pages),
		T(test_journal_newer_version),
		T(test_journal_migrates_alt_groups),
		T(test_journal_migrates_alt_unwritten),
		T(test_journal_foreign),
		T(test_journal_absent_empty),
		T(test_journal_readonly_mount),
		T(test_journal_readonly_nobody),
		T(test_journal_busy),
		T(test_journal_commit_unknown),
		T(test_journal_lock_nowait),
		T(test_journal_lock_wait),
		T(test_journal_lock_killed),
		T(test_journal_lock_holder),
		T(test_journal_lock_planted),
		T(test_journal_cost),
		T(test_journal_chunk_ranges),
		T(test_journal_chunk_malformed),
		T(test_journal_migrates_chunks),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
