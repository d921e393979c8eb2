/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A mutating command's session on one target: the lock, the log, recovery, and applying a plan as a
 * transaction. */
#ifndef GROVE_SESSION_H
#define GROVE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/exec.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/plan.h"

/*
 * The pipeline of DESIGN.md for one target:
 *
 *	grove_session_open      lock the target (flock in the state dir), open the log
 *	grove_session_recover   roll back an interrupted transaction of this target
 *	... scan and plan ...
 *	grove_session_apply     log the intent, execute, fsync, commit
 *	grove_session_close
 *
 * The target root is borrowed and must outlive the session.
 */
struct grove_session {
	char *state_path;
	struct grove_root state;
	struct grove_journal *journal;
	int lock_fd;
	const struct grove_root *target;
	int64_t target_id;
	/* Alternatives groups the next grove_session_apply changes along with its
	 * links (owned; apply consumes them): logged with its intent, saved by its
	 * commit. grove_session_plan_revert fills them with the groups' earlier
	 * states. */
	struct grove_journal_alt_change *alt;
	size_t n_alt;
	/* Told after each op grove_session_apply executes (a progress line); set by the caller
	 * after grove_session_open, may stay NULL. */
	grove_exec_progress_fn progress;
	void *progress_ctx;
};

struct grove_session_opts {
	const char *state_opt; /* --state, or NULL */
	double wait_seconds;   /* --wait; 0 fails at once when locked */
	bool no_lock;          /* read-only commands: no lock, no recovery */
	bool read_only;        /* nothing will be written: a read-only journal will do */
	bool profile_log;      /* target may be a profile's log (grove profile, grove log) */
};

/* Opens the log and, unless opts->no_lock, locks the target. A locked target
 * is -EWOULDBLOCK ("target '…' is locked by another grove run"). A target that
 * is a profile's log (grove_profile_log_owner) is refused, -GROVE_E_USAGE,
 * unless opts->profile_log: only `grove profile` may change or recover it. */
int grove_session_open(struct grove_session *s, const struct grove_root *target,
		       const struct grove_session_opts *opts, struct grove_error *err);
void grove_session_close(struct grove_session *s);

/*
 * Recovery: if a transaction of this target was interrupted (still INTENT),
 * or is STUCK, roll it back from the log: every path it touched must be in a
 * state one of its ops expects before or leaves after (or one of its
 * temporary entries); then the paths are put back to the state before the
 * transaction and its temporary entries removed. Anything else is left alone:
 * the transaction is marked STUCK and -GROVE_E_STUCK returned (exit 4), with
 * err naming the path and what was found. With force, a STUCK transaction is
 * marked ROLLED_BACK without touching the target (the user resolved it).
 * stow may be NULL when no interrupted op moved files into a package (ADOPT).
 * *ret_recovered (may be NULL) is set to the id rolled back, or 0.
 */
int grove_session_recover(struct grove_session *s, const struct grove_root *stow, bool force,
			  int64_t *ret_recovered, struct grove_error *err);

/*
 * Applies plan as one transaction: logs its intent durably, executes it
 * (temporary entries named after the transaction), and marks it COMMITTED,
 * or ROLLED_BACK when the executor undid it, or STUCK. An empty plan makes
 * no transaction (*ret_txn = 0), unless it carries group changes (s->alt). command is the command
 * line for the log; undoes is the transaction this one undoes (0 if none).
 */
int grove_session_apply(struct grove_session *s, const struct grove_plan *plan,
			const struct grove_root *stow, const char *command, const char *stow_dir,
			int64_t undoes, int64_t *ret_txn, struct grove_error *err);

/*
 * Plans putting back the state before the given committed transactions (in
 * the order they were made): for every path they touched, the state before
 * the first of them touched it. The target must still be as the last of them
 * left it; a path that is not is a conflict in plan (nothing is changed).
 * Used by undo (one transaction) and rollback (all after N).
 * Alternatives groups the transactions changed go back too (into s->alt, for
 * the apply that follows); a group changed since is a conflict in plan.
 */
int grove_session_plan_revert(struct grove_session *s, const int64_t *txns, size_t n,
			      struct grove_plan *plan, struct grove_error *err);

#endif
