/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to the transaction driver (session.c, session_alt.c, session_pkgs.c). */
#ifndef GROVE_SESSION_INT_H
#define GROVE_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "plan/world.h"

/*
 * Makes the admin files (ADMINDIR/NAME) of the groups txn changes hold their text after it
 * (forward: the commit's last step before the log marks it committed) or before it (a rollback:
 * only a file still as the transaction left it is put back, and the transaction's temporary
 * files are removed). Each file is written under a temporary name tagged tag, synced and renamed
 * over the old one, as update-alternatives writes it; each admindir is synced. The admindir is
 * s->alt_admin when that is the pair's, else the one the log names. Forward, a file that is
 * neither what grove last wrote nor the new text (update-alternatives changed it since and nobody
 * took the change in: an undo) is -GROVE_E_PRECONDITION, so the commit fails and rolls back.
 * Idempotent: a crash inside is recovered by running it again.
 */
int grove_session_alt_files(struct grove_session *s, int64_t txn, bool forward, const char *tag,
			    struct grove_error *err);

/*
 * A root for a replay, through grove_root_reopen (session_roots.c): as rec records it (beneath the
 * target or "/", found the recorded way, and still the recorded folder); or by path, an absolute
 * canonical path read from the log, beneath the target when it lies there, else beneath "/",
 * following no symlink, and checked against id when it is not NULL (a transaction logged before
 * schema v13 has none for its admindir: a symlink put in its place or above it still leads
 * nowhere). what names the root in messages; anything else than that folder is -GROVE_E_STUCK.
 */
int grove_session_reopen_recorded(struct grove_session *s, const struct grove_journal_root *rec,
				  const char *what, struct grove_root *own,
				  struct grove_error *err);
int grove_session_reopen_path(struct grove_session *s, const char *path,
			      const struct grove_root_id *id, const char *what,
			      struct grove_root *own, struct grove_error *err);

/* Reopens the roots txn's replay will write (the admindir of each alternatives pair it changes)
 * as grove_session_alt_files would, writing nothing: -GROVE_E_STUCK naming the first that is not
 * the folder the transaction recorded (DESIGN.md invariant 11). Recovery asks first, so that a
 * changed root stops it before anything is put back. */
int grove_session_check_roots(struct grove_session *s, int64_t txn, struct grove_error *err);

/* The groups txns changed: each group's state before the first of them and after the last, into
 * s->alt for the apply that follows. The saved group must still be as the last left it;
 * otherwise a conflict in plan. */
int grove_session_revert_groups(struct grove_session *s, const int64_t *txns, size_t n,
				struct grove_plan *plan, struct grove_error *err);

/*
 * The recorded ops (plan.h) that end a revert of txns (logged[i] holds txns[i]'s ops): for
 * every path a recorded op of theirs touched, grove's ownership after the revert's own ops
 * (plan, appended to) must be what it was before txns[0]. A recorded UNLINK forgets a link the
 * log would still own (an undone `grove import`: the link stays on disk); a recorded LINK takes
 * back one it owned then. Nothing on disk changes for them.
 */
int grove_session_revert_records(struct grove_session *s, const int64_t *txns, size_t n,
				 const struct grove_plan *logged, struct grove_plan *plan,
				 struct grove_error *err);

/* Whether path is the system state dir and grove runs as root (root's own log, made readable to
 * users). */
bool grove_session_is_system_dir(const char *path);

/* Opens s->state_path's log for grove_session_open as opts say (session_log.c). */
int grove_session_open_journal(struct grove_session *s, const struct grove_session_opts *opts,
			       struct grove_error *err);

/* Makes the intent of txn, just committed to the log, durable (the state dir synced) and learns
 * the target's id if it was registered with it; on failure marks txn ROLLED_BACK (nothing was
 * changed) and returns the error (grove_session_begin, grove_session_stream_end). */
int grove_session_intent_durable(struct grove_session *s, int64_t txn, struct grove_error *err);
/* 0 when t is OPEN; else -GROVE_E_INTERNAL naming call and t's state (session.h's diagram). */
int grove_session_txn_check(const struct grove_session_txn *t, const char *call,
			    struct grove_error *err);

/* Frees the changes the next intent would have logged (s->alt, s->pkgs). */
void grove_session_forget_changes(struct grove_session *s);

/* Sets s->pkgs to the state the log recorded for every package the transactions txns (oldest
 * first) stow or unstow, as it was before the first of them: what reverting them puts back. */
int grove_session_revert_pkgs(struct grove_session *s, const int64_t *txns, size_t n,
			      struct grove_error *err);

/* A path's state as reverts and recovery compare it (session.c). */
struct grove_pstate {
	enum grove_ftype type; /* NONE, DIR, LINK, REG */
	const char *text;      /* LINK: the text */
};

/* The states op takes its path from and leaves it in (a recorded op: the link, both). */
void grove_session_op_states(const struct grove_op *op, struct grove_pstate *before,
			     struct grove_pstate *after);

bool grove_pstate_eq(const struct grove_pstate *a, const struct grove_pstate *b);

/* path's state in w's target as scanned; *visible is false when a folder on the way is not a real
 * folder the scan listed (then the state says nothing). */
struct grove_pstate grove_session_disk_state(struct grove_world *w, const char *path,
					     bool *visible);

/* A link found in a temporary entry (grove_session_temp_walk): dir_path/name in dfd, text its text.
 */
typedef int grove_temp_link_fn(void *ctx, int dfd, const char *dir_path, const char *name,
			       const char *text, struct grove_error *err);

/* Walks the temporary entry dir_path/name (in dfd): each link goes to on_link, each folder is
 * walked (and removed after, when remove), anything else is -GROVE_E_STUCK; nothing there: 0. */
int grove_session_temp_walk(int dfd, const char *dir_path, const char *name, bool remove,
			    grove_temp_link_fn *on_link, void *ctx, struct grove_error *err);

/* Removes the temporary entry dir_path/name (in dfd) of transaction tag as recovery does: a link
 * whose text is one of texts (sorted by strcmp), or a folder holding only such entries; anything
 * else is -GROVE_E_STUCK. texts NULL: the caller checked every link in it against the transaction
 * (any link goes, each with the text it is read with). */
int grove_session_remove_temp(int dfd, const char *dir_path, const char *name,
			      const char *const *texts, size_t n_texts, const char *tag,
			      struct grove_error *err);

/*
 * Recovery (a rollback of txn's first n_done ops, SIZE_MAX: all) of a transaction over the plan
 * budget, a batch at a time (session_revert.c): 1 when done; 0, nothing changed, when it must go
 * the whole way (recover_txn's: an op without an inverse of its own shape, or a disk whose check
 * needs it); < 0 on error (-GROVE_E_STUCK as the whole way's).
 */
int grove_session_recover_streamed(struct grove_session *s, int64_t txn, size_t n_done,
				   const char *tag, struct grove_error *err);

#endif
