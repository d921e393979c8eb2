/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A target's history in the log: which transaction a number names, and which transactions a
 * rollback reverts (the rules of `grove rollback --to N` and `--before T`). */
#ifndef GROVE_HISTORY_H
#define GROVE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/exec.h"
#include "grove/journal.h"
#include "grove/plan.h"
#include "grove/session.h"

/*
 * The transaction id names, into *ret (release with grove_txn_release), refused unless it is
 * the session's target's: transaction numbers are shared by every target of a state dir.
 * -GROVE_E_BADINPUT, naming the number, when the log does not have it or it is another
 * target's.
 */
int grove_history_own_txn(struct grove_session *s, int64_t id, struct grove_txn *ret,
			  struct grove_error *err);

/* What a rollback goes back to: exactly one of the two. */
struct grove_rollback_point {
	/* --to N: the state after transaction N (0: before the target's first). N must be 0,
	 * one of the target's transactions, or the number just before one of them (which may
	 * be another target's: `to: T - 1` from a fleet); any other number is refused, since
	 * it would silently revert more than asked for. */
	bool have_to;
	int64_t to;
	/* --before T: the state before transaction T, which must be the target's. */
	bool have_before;
	int64_t before;
};

/*
 * The committed transactions of the session's target that a rollback to point reverts, oldest
 * first, into *ret_ids (malloc'd, possibly empty: nothing to roll back) and *ret_n.
 * -GROVE_E_USAGE without exactly one of to and before; -GROVE_E_BADINPUT for a number the
 * rules above refuse.
 */
int grove_history_rollback_txns(struct grove_session *s, const struct grove_rollback_point *point,
				int64_t **ret_ids, size_t *ret_n, struct grove_error *err);

/*
 * Undo, rollback and recovery, decided here and printed by the caller (grove undo, rollback and
 * recover): grove_history_revert opens the target's session (locked; a read-only one, nothing
 * written, for a dry run), rolls back an interrupted transaction first (a dry run only names it),
 * chooses what the revert reverts (undo: the last undoable transaction; rollback: the rules of
 * grove_rollback_point), plans it, or streams it when it is over the plan budget
 * (grove_session_revert_chain_streamed), runs it as one transaction and says what it did.
 */
enum grove_history_revert_kind {
	GROVE_HISTORY_UNDO,     /* the target's last undoable transaction */
	GROVE_HISTORY_ROLLBACK, /* every committed one after the point */
	GROVE_HISTORY_RECOVER,  /* only the recovery of an interrupted one */
};

/* Told while a revert runs; every member may be NULL. */
struct grove_history_revert_cb {
	/* An interrupted transaction was rolled back first (before the revert is chosen). */
	void (*recovered)(void *ctx, int64_t txn);
	/* A dry run: an interrupted transaction that a real run would roll back first, which
	 * the preview cannot (it writes nothing); it previews the target as it is now. */
	void (*pending)(void *ctx, int64_t txn);
	/* The whole revert is planned, conflict-free, and runs now (not called when streamed,
	 * nor for a dry run): what -v prints. */
	void (*planned)(void *ctx, const struct grove_plan *plan);
	/* The ops run: begin (total: the plan's ops; a streamed revert's are over the budget),
	 * progress after each op, end before the result is returned. */
	void (*begin)(void *ctx, size_t total);
	grove_exec_progress_fn progress;
	void (*end)(void *ctx);
	void *ctx;
};

struct grove_history_revert_request {
	enum grove_history_revert_kind kind;
	struct grove_rollback_point point; /* ROLLBACK */
	bool dry_run; /* the real run on a read-only session: nothing written, the log included */
	bool whole; /* the result holds the revert's whole plan (for -v and --json): not streamed */
	bool force; /* recovery marks a STUCK transaction rolled back (grove recover --force) */
	/* The stow dir the user names (-d), for the recovery of an interrupted --adopt; may be
	 * NULL. Borrowed. */
	const struct grove_root *stow;
	/* The session's: --state (NULL: the user's log), --wait, the command line for the lock's
	 * holder record. */
	const char *state_opt;
	double wait_seconds;
	const char *command_line;
	struct grove_history_revert_cb cb;
};

/* What grove_history_revert did (or, for a dry run, would do). */
struct grove_history_reverted {
	int64_t recovered; /* the interrupted transaction rolled back first, or 0 */
	int64_t pending;   /* dry run: the interrupted one a real run rolls back first, or 0 */
	int64_t *txns;     /* the transactions reverted, oldest first (malloc'd) */
	size_t n_txns;     /* 0: nothing to undo or roll back (or a recovery) */
	int64_t made;      /* the transaction the revert made, or 0 (dry run, nothing to change) */
	char command[64];  /* the revert's command line in the log ("grove undo (of 7)") */
	/* The whole revert's plan: its ops (and, with -GROVE_E_CONFLICT, its conflicts). Empty when
	 * streamed: then only the counts below. */
	struct grove_plan plan;
	bool streamed;
	size_t n_ops;                      /* the revert's ops */
	size_t by_kind[GROVE_OP_MOVE + 1]; /* those that change the disk, by kind */
	size_t forgotten, taken; /* recorded ops: links forgotten (left on disk), taken back */
};

/*
 * Runs req on target (borrowed; the session's lock is taken beneath it). Returns 0 when done,
 * including when there is nothing to revert (res->n_txns 0); -GROVE_E_CONFLICT when the disk is
 * not as the reverted transactions left it (res->plan holds the conflicts; nothing changed);
 * -GROVE_E_USAGE or -GROVE_E_BADINPUT for a rollback point the rules refuse; else the
 * session's and the run's errors (-EWOULDBLOCK: the target is locked; -GROVE_E_STUCK,
 * -GROVE_E_PARTIAL...), err naming the path and the reason. res is filled as far as the run
 * went; release it with grove_history_reverted_release in every case.
 */
int grove_history_revert(const struct grove_root *target,
			 const struct grove_history_revert_request *req,
			 struct grove_history_reverted *res, struct grove_error *err);
void grove_history_reverted_release(struct grove_history_reverted *res);

/* A package stowed into a target, by the log: the links grove made for it that are still its. */
struct grove_history_package {
	char *name;
	size_t links;
};

/* A target the log knows (grove targets). */
struct grove_history_target {
	char *path;
	size_t n_txns;
	double last;      /* when its newest transaction began, seconds since the epoch */
	char **stow_dirs; /* the stow dirs its committed transactions used, most recent first */
	double *stow_last;
	size_t n_stow_dirs;
	struct grove_history_package *pkgs; /* by name */
	size_t n_pkgs;
};

/*
 * Every target of the log a reading command would read (--state's, else the user's, or with
 * system_log the system's), the most recently changed first, into *ret; the log's name into
 * *ret_log (malloc'd). Nothing is made or written: a missing log has no targets.
 */
/*
 * What `grove log -t DIR` lists when DIR is not a target the log knows but an alternatives
 * altdir or admindir: the transactions that used that very folder (its device and inode, as
 * their intents recorded it: schema 13's roots; a transaction logged before recorded none),
 * newest first, at most limit (0: all), read from s's log. *ret_n 0: none.
 */
int grove_history_alt_txns(struct grove_session *s, const struct grove_root *dir, size_t limit,
			   struct grove_txn **ret, size_t *ret_n, struct grove_error *err);

int grove_history_targets(const char *state_opt, bool system_log, char **ret_log,
			  struct grove_history_target **ret, size_t *ret_n,
			  struct grove_error *err);
void grove_history_targets_free(struct grove_history_target *t, size_t n);

#endif
