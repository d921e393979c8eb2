/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transaction log: one SQLite database per state dir recording every change, intent first, then
 * commit. */
#ifndef GROVE_JOURNAL_H
#define GROVE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/plan.h"

/*
 * The state dir (DESIGN.md, "The transaction log"): --state DIR, else
 * $GROVE_STATE_DIR, else $XDG_STATE_HOME/grove, else ~/.local/state/grove;
 * /var/lib/grove for root (uid 0) when neither --state nor GROVE_STATE_DIR is
 * given. It holds grove.db and locks/. Many targets share one database, each
 * known by its path and device/inode.
 *
 * The database: journal_mode=DELETE, synchronous=EXTRA, foreign_keys=ON,
 * busy_timeout, BEGIN IMMEDIATE for writers, bound parameters only; schema
 * versioned with PRAGMA user_version and migrated forward in one transaction
 * on open; PRAGMA application_id = GROVE_JOURNAL_APP_ID. A database whose
 * user_version is newer than this grove knows, or whose application_id is
 * another program's, is refused (GROVE_E_CONFIG, naming the file); a corrupt
 * file too. If a COMMIT reports an error the outcome is unknown: the journal
 * reopens and reads back what the log says; it never retries an fsync.
 *
 * The database is opened through the held state dir ("/proc/self/fd/N/
 * grove.db", with a VFS that does not resolve that name back to a path), so a
 * state dir swapped after opening cannot redirect it or its -journal; /proc
 * must be mounted. A database or folder grove cannot write is refused at
 * open (-EROFS). Another connection holding the database longer than the
 * busy timeout gives -EBUSY; the timeout is 5000 ms, or
 * $GROVE_JOURNAL_BUSY_MS (0 to 600000; for tests).
 */

#define GROVE_JOURNAL_APP_ID  0x67726f76 /* "grov" */
#define GROVE_JOURNAL_VERSION 15

enum grove_txn_state {
	GROVE_TXN_INTENT = 0,  /* logged before the first change; not finished */
	GROVE_TXN_COMMITTED,   /* every op done, folders fsynced */
	GROVE_TXN_ROLLED_BACK, /* failed or interrupted, then undone: the target is as before */
	GROVE_TXN_STUCK,       /* interrupted, and recovery found something it would not touch */
};

struct grove_txn {
	int64_t id;
	int64_t target_id;
	enum grove_txn_state state;
	char *command;  /* the command line, for `grove log` */
	char *stow_dir; /* canonical stow dir path, or NULL */
	/* The stow dir's identity when the transaction began (schema v4; false
	 * for older rows): recovery re-opens the stow dir by path and refuses a
	 * folder that is not this one. */
	bool stow_known;
	int64_t stow_dev, stow_ino, stow_born;
	char *note;      /* why it was rolled back or is stuck, or NULL */
	int64_t undoes;  /* the transaction this one undid (grove undo), or 0 */
	double started;  /* seconds since the epoch */
	double finished; /* 0 while INTENT */
	size_t n_ops;
	/* Who ran it (schema 14; uid_known false for older rows): the effective uid, and the
	 * user who ran sudo when grove ran as root through it (SUDO_USER), else NULL. */
	bool uid_known;
	int64_t uid;
	char *sudo_user;
};

struct grove_journal;

/* Resolves the state dir as above (state_opt is --state, may be NULL) into a
 * malloc'd path. */
int grove_journal_state_dir(const char *state_opt, char **ret_path, struct grove_error *err);

/* The system state dir, root's when neither --state nor GROVE_STATE_DIR names one, into a
 * malloc'd path: $GROVE_SYSTEM_STATE_DIR (for tests), else /var/lib/grove. */
int grove_journal_system_state_dir(char **ret_path, struct grove_error *err);

/* Opens (making it, mode 0700, with its parents) the state dir at path and
 * the database inside it, migrating it forward. *ret_root receives the held
 * state dir (the caller releases it after closing the journal). */
int grove_journal_open(const char *path, struct grove_root *ret_root, struct grove_journal **ret,
		       struct grove_error *err);

/*
 * grove_journal_open with flags:
 *   GROVE_JOURNAL_READONLY  makes nothing and writes nothing (read-only commands
 *                           on a state dir grove cannot write); no journal there
 *                           is -ENOENT; an older schema is GROVE_E_CONFIG.
 *   GROVE_JOURNAL_NAMED     the user named the state dir (--state): it may then
 *                           also be root's, with any mode.
 * Either way (DESIGN.md invariant 8) the state dir and grove.db must not be
 * symlinks, must be owned by the user running grove and writable by no one
 * else (unless NAMED, as above), and an existing grove.db must be a regular,
 * non-empty file (an empty one is a damaged log): GROVE_E_CONFIG otherwise.
 */
#define GROVE_JOURNAL_READONLY 0x1u
#define GROVE_JOURNAL_NAMED    0x2u
/*
 *   GROVE_JOURNAL_SYSTEM    the system state dir. With READONLY (a user reading root's log):
 *                           the state dir and grove.db must be owned by root (uid 0) and
 *                           writable by no one else, instead of being the user's. Without it
 *                           (root's own log): the state dir, locks/ and grove.db are made
 *                           readable by everyone (0755, 0644, less the umask), so that users
 *                           can read what root stowed.
 */
#define GROVE_JOURNAL_SYSTEM 0x4u
/*
 *   GROVE_JOURNAL_ABSENT_EMPTY  with READONLY: a state dir or journal that does not exist reads
 *                           as an empty log (a journal in memory, holding the schema and
 *                           nothing else) instead of -ENOENT, and nothing is made on disk:
 *                           the reading commands (status, log, show, verify) before grove has
 *                           ever written. *ret_root's fd is -1 when the state dir is missing.
 */
#define GROVE_JOURNAL_ABSENT_EMPTY 0x8u
int grove_journal_open_with(const char *path, unsigned int flags, struct grove_root *ret_root,
			    struct grove_journal **ret, struct grove_error *err);

/* Closes the database; accepts NULL; returns NULL. */
struct grove_journal *grove_journal_close(struct grove_journal *j);

/* "<state dir>/grove.db", for messages; valid while j is open. */
const char *grove_journal_name(const struct grove_journal *j);

/* The id of the target held by root (matched by device and inode, path
 * updated), registered on first use. */
int grove_journal_target(struct grove_journal *j, const struct grove_root *root, int64_t *ret_id,
			 struct grove_error *err);

/*
 * Like grove_journal_target, without a write transaction of its own for a
 * target the log does not know yet: *ret_id is then 0, and the next
 * grove_journal_begin with target_id 0 registers it inside the intent's
 * transaction (a target known under another path is updated at once, as by
 * grove_journal_target). Queries by target id 0 find nothing, which is what a
 * target never seen has. grove_journal_target_registered gives the id once
 * that transaction is in the log (0 before).
 */
int grove_journal_target_deferred(struct grove_journal *j, const struct grove_root *root,
				  int64_t *ret_id, struct grove_error *err);
int64_t grove_journal_target_registered(const struct grove_journal *j);

/*
 * Logs a transaction's intent durably: a row in state INTENT and every op of
 * plan with its before and after state (kind, path, old_text, text,
 * stow_path, package), in order, and the stow dir (stow->real and its
 * identity; stow may be NULL). Nothing is changed on disk before this
 * returns 0.
 */
int grove_journal_begin(struct grove_journal *j, int64_t target_id, const char *command,
			const struct grove_root *stow, int64_t undoes,
			const struct grove_plan *plan, int64_t *ret_txn, struct grove_error *err);

/*
 * A package a transaction stows or unstows (schema v8, packed since v11): the stow dir (canonical
 * path) it is stowed from, and the layout options it was stowed with, which later commands on it
 * use (docs/stow.md, "Recorded options"). stowed is false when the transaction leaves it unstowed.
 */
struct grove_pkg_layout {
	bool stowed;
	bool dotfiles;
	bool no_folding;
};

struct grove_journal_pkg {
	char *stow_dir;
	char *package;
	struct grove_pkg_layout layout;
};
void grove_journal_pkgs_free(struct grove_journal_pkg *v, size_t n);

/* Whether the notice that package is planned with its recorded options l (docs/stow.md,
 * "Recorded options") was shown before, for target_id and stow_dir (schema 15); and recording
 * that it was (its own SQLite transaction; nothing on a read-only log). */
int grove_journal_pkg_told(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			   const char *package, const struct grove_pkg_layout *l, bool *ret,
			   struct grove_error *err);
int grove_journal_pkg_told_set(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			       const char *package, const struct grove_pkg_layout *l,
			       struct grove_error *err);

/* Everything a transaction's intent logs (grove_journal_begin_intent): the command line, the
 * stow dir (may be NULL), the transaction undone (or 0), the plan's ops, the alternatives
 * groups it changes and the packages it stows or unstows (each list may be empty). */
/*
 * A root a transaction uses besides its target and stow dir (schema v13, docs/journal.md
 * "Roots"): an alternatives pair's admindir or altdir. Recorded with the intent; undo, rollback
 * and recovery reopen it with grove_root_reopen beneath its parent (the transaction's target,
 * else "/") and check it is still that folder.
 */
enum grove_journal_root_kind {
	GROVE_JOURNAL_ROOT_ADMINDIR = 0,
	GROVE_JOURNAL_ROOT_ALTDIR,
};

struct grove_journal_root {
	enum grove_journal_root_kind kind;
	int64_t dir_id;    /* the alternatives pair */
	bool under_target; /* beneath the transaction's target, else beneath "/" */
	char *rel;         /* clean and relative; "" is the parent itself */
	enum grove_resolve resolve;
	struct grove_root_id id;
};

/* The roots txn recorded, ordered by (kind, dir_id); none for a transaction logged before
 * schema v13. A row that fails its checks (a rel that is not clean and relative, an unknown
 * kind, parent or resolve mode) is -GROVE_E_CONFIG naming the transaction. */
int grove_journal_txn_roots(struct grove_journal *j, int64_t txn, struct grove_journal_root **ret,
			    size_t *ret_n, struct grove_error *err);

/* The transactions that used the folder of device dev and inode ino as an altdir or admindir
 * (recorded with their intents, schema 13), newest first, at most limit (0: all); malloc'd. */
int grove_journal_root_txns(struct grove_journal *j, uint64_t dev, uint64_t ino, size_t limit,
			    int64_t **ret, size_t *ret_n, struct grove_error *err);

void grove_journal_roots_free(struct grove_journal_root *v, size_t n);

struct grove_journal_intent {
	int64_t target_id;
	const char *command;
	const struct grove_root *stow;
	int64_t undoes;
	const struct grove_plan *plan;
	const struct grove_journal_alt_change *alt;
	size_t n_alt;
	const struct grove_journal_pkg *pkgs;
	size_t n_pkgs;
	const struct grove_journal_root *roots;
	size_t n_roots;
};

/* grove_journal_begin with everything an intent may carry. */
int grove_journal_begin_intent(struct grove_journal *j, const struct grove_journal_intent *in,
			       int64_t *ret_txn, struct grove_error *err);

/*
 * A streamed intent (docs/journal.md, "Streamed plans"): a plan too big to hold is logged in
 * batches while it is planned, inside one SQLite write transaction that stays open until the
 * plan is complete. Until grove_journal_stream_close commits it, nothing of the transaction is in
 * the log (a crash, or grove_journal_stream_cancel, leaves the log as before: SQLite's own
 * rollback journal undoes the rows), so recovery has nothing to see and the disk is untouched;
 * once it returns 0 the transaction is INTENT with every op, exactly as grove_journal_begin_intent
 * leaves it. Between open and close or cancel, only grove_journal_stream_ops may use j.
 *
 *	grove_journal_stream_open    BEGIN; the transaction row, its groups and packages
 *	                             (in->plan is not read)
 *	grove_journal_stream_ops     appends plan's ops after those logged so far
 *	grove_journal_stream_pkgs    the packages, when the intent was opened without them
 *	                             (an import learns them from the ops it logs)
 *	grove_journal_stream_close   COMMIT (not yet synced: the caller syncs the state dir)
 *
 * On a failure of open or ops the write transaction is rolled back already (do not cancel).
 */
struct grove_journal_stream {
	int64_t txn, target_id;
	double started;
	const char *command; /* borrowed from the intent */
	size_t n_ops;        /* ops logged so far */
};
int grove_journal_stream_open(struct grove_journal *j, const struct grove_journal_intent *in,
			      struct grove_journal_stream *ret, struct grove_error *err);
int grove_journal_stream_ops(struct grove_journal *j, struct grove_journal_stream *st,
			     const struct grove_plan *plan, struct grove_error *err);
int grove_journal_stream_pkgs(struct grove_journal *j, struct grove_journal_stream *st,
			      const struct grove_journal_pkg *pkgs, size_t n,
			      struct grove_error *err);
int grove_journal_stream_close(struct grove_journal *j, struct grove_journal_stream *st,
			       struct grove_error *err);
void grove_journal_stream_cancel(struct grove_journal *j);

/* The packages txn records, ordered by (stow_dir, package). Nothing read back is trusted: a body
 * that fails its checks (docs/journal.md, "Packages": a package that is not a single name, out of
 * order, unknown flags, a count that does not match), or a stow dir that is not an absolute path
 * shorter than PATH_MAX, is -GROVE_E_CONFIG naming the transaction. */
int grove_journal_txn_pkgs(struct grove_journal *j, int64_t txn, struct grove_journal_pkg **ret,
			   size_t *ret_n, struct grove_error *err);

/*
 * What the log last recorded for package from stow_dir in target_id: the newest row of a
 * COMMITTED transaction (before transaction `before`, when it is not 0). *ret_found is false
 * when there is none (never stowed by a grove that records packages); *ret is then zeroed.
 */
int grove_journal_pkg_recorded(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			       const char *package, int64_t before, struct grove_pkg_layout *ret,
			       bool *ret_found, struct grove_error *err);

/*
 * grove_journal_pkg_recorded (before > 0) for each of v[0..n) at once, by its stow_dir and
 * package: v[i].layout becomes its newest record among target_id's committed transactions before
 * `before`, or zero when there is none. The history is walked once per stow dir, newest first,
 * until every package has its record.
 */
int grove_journal_pkgs_recorded_before(struct grove_journal *j, int64_t target_id, int64_t before,
				       struct grove_journal_pkg *v, size_t n,
				       struct grove_error *err);

/*
 * grove_journal_pkg_recorded (before 0) for every package from stow_dir the log records in
 * target_id, in one query: the packages (stow_dir NULL in each) in strcmp order of their
 * names, each with its newest committed row. A package name read back that is not a single
 * name, or out of order, is -GROVE_E_CONFIG.
 */
int grove_journal_pkgs_recorded(struct grove_journal *j, int64_t target_id, const char *stow_dir,
				struct grove_journal_pkg **ret, size_t *ret_n,
				struct grove_error *err);

/*
 * Groups the reads that follow in one read transaction, until grove_journal_read_end: one
 * shared lock and one look at the file for all of them, where each read on its own takes
 * and drops the lock (about 9 syscalls) and checks for a hot journal. Returns 1 when it began
 * one, 0 when a transaction is already open (the reads then belong to it), or a negative
 * error. Writes must not come in between.
 */
int grove_journal_read_begin(struct grove_journal *j, struct grove_error *err);

/* Ends what grove_journal_read_begin returned `began` (> 0) for; accepts 0 and errors. */
void grove_journal_read_end(struct grove_journal *j, int began);

/* Marks txn COMMITTED (or ROLLED_BACK / STUCK with note). */
int grove_journal_finish(struct grove_journal *j, int64_t txn, enum grove_txn_state state,
			 const char *note, struct grove_error *err);

/* The oldest transaction of the target still in INTENT or STUCK, or 0. */
int grove_journal_unfinished(struct grove_journal *j, int64_t target_id, int64_t *ret_txn,
			     struct grove_error *err);

/* Reads one transaction's header; the caller frees it with grove_txn_release. */
int grove_journal_get(struct grove_journal *j, int64_t txn, struct grove_txn *ret,
		      struct grove_error *err);
void grove_txn_release(struct grove_txn *txn);

/*
 * Reads a transaction's ops, in order, into plan (which the caller has
 * initialised). Nothing read back is trusted (DESIGN.md invariant 8): every
 * path and stow path must be a clean relative path, every package a single
 * name, every text free of NUL bytes and shorter than PATH_MAX; a row that is
 * not is -GROVE_E_CONFIG naming the transaction and the op, and plan is left
 * as it was.
 */
int grove_journal_ops(struct grove_journal *j, int64_t txn, struct grove_plan *plan,
		      struct grove_error *err);

/* grove_journal_ops for at most max ops (0: all) from the op numbered first (ops are numbered
 * from 0 in order): a streamed transaction is executed from the log in batches. */
int grove_journal_ops_range(struct grove_journal *j, int64_t txn, size_t first, size_t max,
			    struct grove_plan *plan, struct grove_error *err);

/* Whether a COMMITTED transaction of target_id used the stow dir stow_dir
 * with this identity (dev, ino, born): recovery trusts a stow dir read back
 * from the log only then, or when the command named it itself. */
int grove_journal_stow_used(struct grove_journal *j, int64_t target_id, const char *stow_dir,
			    int64_t dev, int64_t ino, int64_t born, bool *ret,
			    struct grove_error *err);

/* Lists the target's transactions, newest first (all states), at most limit (0: all). */
int grove_journal_list(struct grove_journal *j, int64_t target_id, size_t limit,
		       struct grove_txn **ret_txns, size_t *ret_n, struct grove_error *err);
void grove_txns_free(struct grove_txn *txns, size_t n);

/* A target the log knows (grove targets): its transactions' count and when the newest began, and
 * the stow dirs its committed transactions used, the most recently used first. */
struct grove_journal_target_info {
	int64_t id;
	char *path;
	size_t n_txns;
	double last; /* seconds since the epoch; 0 without a transaction */
	char **stow_dirs;
	double *stow_last; /* when each stow dir was last used */
	size_t n_stow_dirs;
};
/* Every target of the log, the most recently changed first. */
int grove_journal_targets(struct grove_journal *j, struct grove_journal_target_info **ret,
			  size_t *ret_n, struct grove_error *err);
void grove_journal_targets_free(struct grove_journal_target_info *t, size_t n);

/* The last COMMITTED transaction of the target that is not undone by a later one
 * (what `grove undo` inverts), or 0. Undo transactions (undoes != 0) are not
 * candidates themselves, and only a COMMITTED undo undoes: undo twice walks
 * back two transactions rather than redoing the first. */
int grove_journal_last_undoable(struct grove_journal *j, int64_t target_id, int64_t *ret_txn,
				struct grove_error *err);

/*
 * What grove owns in the target now, by the log: every link that committed
 * transactions created and did not later remove, with the package it serves.
 * Computed from the committed ops in order (LINK, RELINK, FOLD, ADOPT make an
 * entry; UNLINK, RELINK, UNFOLD end one), recorded ops (plan.h) as any other: a
 * link `grove import` recorded is grove's until an op ends it. Also the folders grove made (MKDIR,
 * UNFOLD) and has not removed. Used by `grove verify` and `grove status`.
 */
struct grove_owned {
	char *path;
	char *text;          /* link text, or NULL for a folder grove made */
	const char *package; /* may be NULL; shared by the entries of a package, freed with the
			      * array by grove_owned_free (not the caller's to free) */
};
int grove_journal_owned(struct grove_journal *j, int64_t target_id, struct grove_owned **ret,
			size_t *ret_n, struct grove_error *err);
/* What grove owned just before transaction `before` (the committed transactions with smaller
 * ids only): what a revert of `before` and later ones puts the ownership of recorded links back
 * to. */
int grove_journal_owned_before(struct grove_journal *j, int64_t target_id, int64_t before,
			       struct grove_owned **ret, size_t *ret_n, struct grove_error *err);
/* Frees an array grove_journal_owned or grove_journal_owned_before handed out (and only such). */
void grove_owned_free(struct grove_owned *o, size_t n);
/* Called with each entry grove_journal_owned_walk hands out (its strings valid during the call
 * only); a negative return stops the walk and is returned. */
typedef int (*grove_owned_fn)(void *arg, const struct grove_owned *o);
/*
 * What grove_journal_owned hands out, one entry at a time, in the order of a walk of the target
 * that takes a folder's entries (by name, bytewise) before the folder itself: each entry once,
 * the folder grove made after everything it owns beneath it. Read from the log in bounded
 * memory when its transactions keep to the order plans are logged in (docs/journal.md, "What
 * grove owns, read in order"); otherwise from grove_journal_owned's map, in the same order.
 */
int grove_journal_owned_walk(struct grove_journal *j, int64_t target_id, grove_owned_fn fn,
			     void *arg, struct grove_error *err);

/*
 * One writer per target: an flock(LOCK_EX) on locks/<dev>-<ino>.lock in the
 * state dir (the file stays; the lock dies with the process). wait_seconds 0
 * fails at once with -EWOULDBLOCK naming the target ("target '…' is locked by
 * another grove run"); otherwise it waits up to that long. Returns the lock fd,
 * which the caller closes to release.
 */
int grove_lock_target(const struct grove_root *state, const struct grove_root *target,
		      double wait_seconds, struct grove_error *err);

/* How a held lock is waited for: up to seconds (0: not at all; bounded to a week). When notice is
 * set it is called once if the lock is still held after one second (WHAT, the path, seconds), so
 * that a command line can say why it waits. */
struct grove_lock_wait {
	double seconds;
	void (*notice)(void *ctx, const char *what, const char *path, double seconds);
	void *ctx;
};

/* grove_lock_target with a wait policy; shared takes flock(LOCK_SH): shared holders exclude only
 * exclusive ones (grove alt's runs on different admindirs share the instdir; a stow run excludes
 * them all). Once it holds the lock it records its pid and command (may be NULL) in the lock file
 * and marks it (grove_fs_lock_mark), for grove_lock_target_holder; a lock still held after the
 * wait names the holder its record gives. The lock file is 0600 in a locks folder owned by the
 * state dir's owner and writable by no one else (one that is not is refused, -GROVE_E_CONFIG):
 * no one else can open it, so no one else can hold, block or mark it. An earlier grove's lock
 * file that others could open is replaced by a private one (once no run of the owner's holds
 * it), never locked again. */
int grove_lock_target_with(const struct grove_root *state, const struct grove_root *target,
			   const struct grove_lock_wait *wait, bool shared, const char *command,
			   struct grove_error *err);

/* Who holds a target's lock, as read by someone who does not take it. */
enum grove_lock_state {
	GROVE_LOCK_FREE = 0, /* no live process holds it */
	GROVE_LOCK_HELD,     /* a live process holds it (a grove run, now) */
	GROVE_LOCK_UNKNOWN,  /* cannot tell: neither the lock file nor /proc/locks can be read */
};
struct grove_lock_holder {
	enum grove_lock_state state;
	long pid;      /* HELD: the holder's pid (from its record, believed only when that process
			  runs as the lock file's owner; or from /proc/locks); 0 when unknown */
	char *command; /* HELD: its command line from the record (the owner's to read), or NULL */
};

/*
 * Tells whether a live process holds the lock of target in the state dir, without taking it and
 * without making or writing anything (and without being able to: a reader who is not the owner
 * cannot open the file). The owner probes the private lock file's mark (F_OFD_GETLK), so a
 * record left by a holder that is gone (killed) is never believed; anyone else, or anyone
 * looking at a lock file others could open (an earlier grove's, whose mark anyone could place),
 * asks /proc/locks whether a process running as the state dir's owner holds its flock (the pid,
 * no command). No lock file is FREE; a lock folder that cannot be read, or no /proc/locks, is
 * UNKNOWN. Fails only for -ENOMEM; release *ret with grove_lock_holder_release.
 */
int grove_lock_target_holder(const struct grove_root *state, const struct grove_root *target,
			     struct grove_lock_holder *ret, struct grove_error *err);
void grove_lock_holder_release(struct grove_lock_holder *h);

/* Converts the target lock fd (from grove_lock_target_with) to shared or exclusive, waiting as
 * above. On failure fd may hold no lock at all (flock(2) drops the old one first): the caller
 * then gives up the command. */
int grove_lock_convert(int fd, bool shared, const struct grove_lock_wait *wait,
		       const struct grove_root *target, struct grove_error *err);

/*
 * A lock on a folder: flock(LOCK_EX) on the empty file ".grove lock.dpkg-tmp" in it (made 0600,
 * replaced when others could open it), so every grove run locking the folder excludes the others
 * whatever its state dir, and no other user can hold it (grove alt locks the admindir this way;
 * update-alternatives has no lock, and it and grove skip names ending in ".dpkg-tmp"; no group's
 * name has a space). Not the folder itself: anyone who can read a folder can flock it. Waits as
 * grove_lock_target; a held lock is -EWOULDBLOCK ("WHAT '…' is locked by another grove run").
 * Returns the lock fd.
 */
int grove_lock_dir(const struct grove_root *dir, double wait_seconds, const char *what,
		   struct grove_error *err);
int grove_lock_dir_with(const struct grove_root *dir, const struct grove_lock_wait *wait,
			const char *what, struct grove_error *err);

/*
 * Alternatives state (schema v2; v3 adds the groups each transaction changes, v5 keeps each group
 * as text): link groups kept per (admindir, altdir) pair, the strings as grove alt was given them
 * (canonical admindir, altdir as written into links). The journal stores and returns each group's
 * text in update-alternatives' administrative file format without reading it: grove_alt_state_load
 * and grove_alt_state_save (grove/alt.h) turn it into groups and back.
 */

/* The id of the (admindir, altdir) pair, registered on first use. */
int grove_journal_alt_dir(struct grove_journal *j, const char *admindir, const char *altdir,
			  int64_t *ret_id, struct grove_error *err);

/* The admindir of the pair dir_id as registered (canonical, absolute), malloc'd into *ret; NULL
 * when there is no such pair. */
int grove_journal_alt_admindir(struct grove_journal *j, int64_t dir_id, char **ret,
			       struct grove_error *err);

/* One saved group of a pair: its name and its text. unwritten (schema v6): saved by a grove
 * that wrote no admin files, and not saved since. */
struct grove_journal_alt_state {
	char *name;
	char *text;
	bool unwritten;
};
void grove_journal_alt_states_free(struct grove_journal_alt_state *v, size_t n);

/* Every saved group of the pair, sorted bytewise by name. The caller frees with
 * grove_journal_alt_states_free. */
int grove_journal_alt_states(struct grove_journal *j, int64_t dir_id,
			     struct grove_journal_alt_state **ret, size_t *ret_n,
			     struct grove_error *err);

/* Replaces the saved group name of the pair by text in one write transaction; NULL text deletes
 * it. */
int grove_journal_alt_put(struct grove_journal *j, int64_t dir_id, const char *name,
			  const char *text, struct grove_error *err);

/*
 * The groups a transaction changes (schema v3), each as its text before and
 * after (grove_alt_group_format; NULL: no group). grove_journal_finish with
 * COMMITTED saves every after state in the same SQLite transaction that marks
 * the transaction committed, so a crash leaves links and groups both old or
 * both new; a transaction rolled back saves nothing.
 */
struct grove_journal_alt_change {
	int64_t dir_id;
	char *name;
	char *before, *after;
};
void grove_journal_alt_changes_free(struct grove_journal_alt_change *v, size_t n);

/* grove_journal_begin, with the group changes the transaction carries. */
int grove_journal_begin_alt(struct grove_journal *j, int64_t target_id, const char *command,
			    const struct grove_root *stow, int64_t undoes,
			    const struct grove_plan *plan,
			    const struct grove_journal_alt_change *alt, size_t n_alt,
			    int64_t *ret_txn, struct grove_error *err);

/* The group changes txn carries, ordered by (dir_id, name). */
int grove_journal_alt_changes(struct grove_journal *j, int64_t txn,
			      struct grove_journal_alt_change **ret, size_t *ret_n,
			      struct grove_error *err);

/* The saved group name of the pair as text, or NULL (*ret) when there is none. */
int grove_journal_alt_text(struct grove_journal *j, int64_t dir_id, const char *name, char **ret,
			   struct grove_error *err);

#endif
