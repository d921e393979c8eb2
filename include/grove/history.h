/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A target's history in the log: which transaction a number names, and which transactions a
 * rollback reverts (the rules of `grove rollback --to N` and `--before T`). */
#ifndef GROVE_HISTORY_H
#define GROVE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/journal.h"
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
int grove_history_targets(const char *state_opt, bool system_log, char **ret_log,
			  struct grove_history_target **ret, size_t *ret_n,
			  struct grove_error *err);
void grove_history_targets_free(struct grove_history_target *t, size_t n);

#endif
