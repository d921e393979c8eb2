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

/* Puts the target back to the state before transaction txn, from the log and
 * the disk alone, touching only what is as the transaction would have left it;
 * or, where half of a change cannot be put back, finishes it (*ret_forward).
 * Safe to run again after a crash inside it. */
typedef int (*grove_session_rollback_fn)(void *ctx, int64_t txn, bool *ret_forward,
					 struct grove_error *err);

/*
 * The pipeline of DESIGN.md for one target:
 *
 *	grove_session_open      lock the target (flock in the state dir), open the log
 *	grove_session_recover   roll back an interrupted transaction of this target
 *	... scan and plan ...
 *	grove_session_apply     log the intent, execute, fsync, commit (or the
 *	                        driver below: begin, changes, commit or abort)
 *	grove_session_close
 *
 * The target root is borrowed and must outlive the session. What a session carries besides
 * its target (the next transaction's group changes and package rows, progress, the rollback,
 * the admindir) its owner gives through the calls below (grove_session_take_alt and the rest),
 * never by writing the fields: they are the driver's (check-layers.sh rule 8).
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
	/* The packages the next grove_session_apply stows or unstows, with their layout
	 * options (owned; the intent consumes them, docs/stow.md "Recorded options"):
	 * logged with its intent. grove_session_plan_revert fills them with the packages'
	 * states before the reverted transactions. */
	struct grove_journal_pkg *pkgs;
	size_t n_pkgs;
	/* The next grove_session_apply is logged even with no op, for its pkgs rows alone: a
	 * restow that changes a package's options without changing a link (a folder Stow's
	 * unstow leaves real), and its undo (issue 40 item 7). */
	bool record_pkgs;
	/* The admindir grove alt holds (borrowed, may be NULL): the admin files of the groups a
	 * transaction changes are written beneath it by the commit; without it (recovery from
	 * another command) the admindir the log names is opened. */
	const struct grove_root *alt_admin;
	/* The roots besides the target the next intent records (owned; the intent consumes
	 * them, docs/journal.md "Roots"): grove_session_note_root adds one a run holds;
	 * grove_session_plan_revert fills them with those of the reverted transactions. */
	struct grove_journal_root *roots;
	size_t n_roots;
	/* Told after each op grove_session_apply executes (a progress line); set by the caller
	 * after grove_session_open, may stay NULL. */
	grove_exec_progress_fn progress;
	void *progress_ctx;
	/* How this target's transactions are rolled back, by abort, by a commit
	 * the log refused and by recovery: NULL is the session's own recovery
	 * (the target's paths checked against the log's ops, then put back by
	 * the executor); a target whose ops are not paths of the target (a
	 * profile's log) sets its own after grove_session_open. */
	grove_session_rollback_fn rollback;
	void *rollback_ctx;
	/* The target lock is shared (opts->shared_target), and how it is waited for. */
	bool lock_shared;
	struct grove_lock_wait lock_wait;
};

struct grove_session_opts {
	const char *state_opt; /* --state, or NULL */
	double wait_seconds;   /* --wait; 0 fails at once when locked */
	bool no_lock;          /* read-only commands: no lock, no recovery */
	bool read_only;        /* nothing will be written: a read-only journal will do */
	bool no_create;        /* with no_lock and read_only: make nothing (no state dir, no
				  journal); a missing one is -ENOENT (grove alt's readers) */
	bool absent_empty;     /* with no_create: a missing one reads as an empty log instead
				  (GROVE_JOURNAL_ABSENT_EMPTY: grove status, log, show, verify) */
	bool profile_log;      /* target may be a profile's log (grove profile, grove log) */
	/* Lock the target shared (flock LOCK_SH) rather than exclusively: for grove alt, whose
	 * runs on different admindirs share an instdir (each holds its admindir's lock
	 * exclusively first); any exclusive holder (stow, undo, verify's repair...) still
	 * excludes them. Recovery then takes the target exclusively, and only when the log
	 * has an unfinished transaction for it. */
	bool shared_target;
	const struct grove_lock_wait *lock_wait; /* overrides wait_seconds when set */
	/* The command line the lock's holder record names (grove status shows it while the
	 * command runs); may be NULL. */
	const char *command;
	/* Read the system log (grove_journal_system_state_dir) instead of the user's own: with
	 * no_lock and read_only, for the read-only commands on a target the user's own log does
	 * not know. Opened read-only, making and writing nothing (GROVE_JOURNAL_SYSTEM); a system
	 * state dir without a log is -ENOENT. */
	bool system_log;
};

/* ---- what a session carries, given by its owner ---- */

/* The alternatives group changes the next transaction logs with its intent and saves with its
 * commit: v (n changes, owned: the session frees them) replaces those it held; NULL clears. */
void grove_session_take_alt(struct grove_session *s, struct grove_journal_alt_change *v, size_t n);
/* Adds one group's change (name's saved text before, NULL: no group; after, NULL: the group
 * goes), copied. 0 or -ENOMEM. */
int grove_session_add_alt(struct grove_session *s, int64_t dir_id, const char *name,
			  const char *before, const char *after, struct grove_error *err);
/* The packages the next transaction stows or unstows, with their layout options, logged with
 * its intent (docs/stow.md "Recorded options"): v (owned) replaces those it held. */
void grove_session_take_pkgs(struct grove_session *s, struct grove_journal_pkg *v, size_t n);
/* Whether the next grove_session_apply is logged even with no op, for its package rows alone
 * (given with grove_session_take_pkgs): a restow that changes a package's options without
 * changing a link, and its undo. Cleared by that apply. */
void grove_session_set_record_pkgs(struct grove_session *s, bool on);
/* Told after each op the session's transactions execute (a progress line); NULL: nobody. */
void grove_session_set_progress(struct grove_session *s, grove_exec_progress_fn fn, void *ctx);
/* How this target's transactions are rolled back (abort, a commit the log refused, recovery):
 * NULL is the session's own recovery. Set before grove_session_recover. */
void grove_session_set_rollback(struct grove_session *s, grove_session_rollback_fn fn, void *ctx);
/* The admindir grove alt holds (borrowed; NULL: the one the log names is opened by a commit). */
void grove_session_set_alt_admin(struct grove_session *s, const struct grove_root *admin);

/* What the log's unfinished transaction of a target is now (grove status, verify, log). */
enum grove_pending_state {
	GROVE_PENDING_NONE = 0,    /* no unfinished transaction */
	GROVE_PENDING_IN_PROGRESS, /* INTENT, and a live process holds the target lock */
	GROVE_PENDING_INTERRUPTED, /* INTENT, and nobody holds the lock: the run was killed; the
				      next change (or grove recover) rolls it back */
	GROVE_PENDING_STUCK,       /* STUCK: recovery found something it would not touch */
	GROVE_PENDING_UNKNOWN,     /* INTENT, and the lock cannot be read (another user's log) */
};
struct grove_session_pending {
	enum grove_pending_state state;
	int64_t txn;   /* the unfinished transaction, or 0 */
	char *command; /* its command line, from the log, or NULL */
	char *note;    /* why it is stuck, or NULL */
	/* Who holds the target lock now, transaction or not (a run may be scanning). */
	struct grove_lock_holder holder;
};

/*
 * Fills *ret for s's target (a read-only session will do): the oldest unfinished transaction
 * in the log and, by probing the target lock in the log's state dir (grove_lock_target_holder:
 * nothing taken, nothing made), whether a live run is at it. Release with
 * grove_session_pending_release.
 */
int grove_session_pending(struct grove_session *s, struct grove_session_pending *ret,
			  struct grove_error *err);
void grove_session_pending_release(struct grove_session_pending *p);

/* "in-progress", "interrupted", "stuck", "unknown" (the --json names); NULL for NONE. */
const char *grove_session_pending_name(enum grove_pending_state state);

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
 * With an owner's rollback set (grove_session_set_rollback), it does the checking and putting back
 * (a transaction it finishes forward is marked COMMITTED). The log's verdict is synced before
 * returning.
 */
int grove_session_recover(struct grove_session *s, const struct grove_root *stow, bool force,
			  int64_t *ret_recovered, struct grove_error *err);

/*
 * The transaction driver. Every change grove makes to a target (stow, apply,
 * alt, undo, a profile's build, switch, delete and gc) is one transaction
 * driven by these three calls, so the durability rules live in one place:
 *
 *	struct grove_session_txn t;
 *
 *	grove_session_begin(s, &t, plan, &opts, err)
 *		Logs the intent (plan's ops and the group changes given with grove_session_take_alt,
 *which it consumes) and fsyncs the state dir: from here on a crash is recovered from the log. On
 *failure nothing was changed (the intent, if written, is marked ROLLED_BACK) and the error is
 *returned; do not call commit or abort.
 *
 *	... make the changes: grove_session_exec(&t, plan, target, stow, err),
 *	    or the caller's own steps naming their temporary entries with t.tag ...
 *
 *	grove_session_commit(&t, err)       when every change is done
 *		Marks the transaction COMMITTED and fsyncs the state dir. If the
 *		log refuses the commit, the transaction is undone (the owner's rollback,
 *		else the session's own recovery) and -GROVE_E_PARTIAL returned
 *		(-GROVE_E_STUCK if undoing failed).
 *		If only the final fsync fails, -GROVE_E_NOT_DURABLE: the change
 *		is made and committed, but a power loss could lose the record.
 *
 *	grove_session_abort(&t, r, err)     when a change failed with r < 0
 *		Undoes what was done (the owner's rollback; without one the executor has
 *		already undone its own ops, or could not: r == -GROVE_E_STUCK),
 *		marks the transaction ROLLED_BACK (or STUCK, or COMMITTED when the
 *		rollback finished it forward instead) with err's message as the
 *		reason, and returns r, -GROVE_E_STUCK, or 0 when finished forward.
 *
 * Exactly one of commit and abort ends a transaction that began (abort after
 * either is a no-op: the states below). The rollback is also what
 * grove_session_recover runs after a crash: one recovery for every kind of
 * transaction.
 */
struct grove_session_txn_opts {
	const char *command;                  /* the command line, for the log */
	const struct grove_root *logged_stow; /* the stow dir logged with the intent, or NULL */
	const struct grove_root *stow; /* the stow dir ADOPTs move into (for recovery), or NULL */
	int64_t undoes;                /* the transaction this one undoes, or 0 */
};

/*
 * Where a transaction is. Every run — whole (grove_session_begin), streamed
 * (grove_session_stream_end) and a streamed revert (grove_session_revert_streamed, which
 * is the streamed run on the inverse ops) — goes through these states, and each call checks
 * the state it needs (-GROVE_E_INTERNAL, nothing done, when a caller has it wrong):
 *
 *     IDLE ──begin, stream_end──► OPEN ──commit──────────────────────► COMMITTED
 *       │                          │  ▲                          (also when only the final
 *       └─ failed: stays IDLE,     │  │ exec, exec_logged         sync failed, NOT_DURABLE)
 *          nothing changed (an     │  └─ (OPEN → OPEN)
 *          intent written is       ├──commit refused by the log, undone───► ROLLED_BACK
 *          marked ROLLED_BACK)     ├──… and undoing it failed─────────────► STUCK
 *                                  ├──abort(r), undone────────────────────► ROLLED_BACK
 *                                  ├──abort(r), could not undo────────────► STUCK
 *                                  ├──abort(r), the rollback went forward─► COMMITTED
 *                                  └──a crash: INTENT in the log; the next run's
 *                                     grove_session_recover ──► ROLLED_BACK, STUCK or COMMITTED
 *
 *  - IDLE is a zeroed struct, and what begin and stream_end leave when they make no
 *    transaction (stream_end also when the plan fit in memory: go on with begin).
 *  - exec and exec_logged need OPEN and keep it: on a failure the caller calls abort.
 *  - commit needs OPEN; abort in any state but OPEN is a no-op returning r (after a
 *    commit, after a failed begin), so a caller's cleanup path may always call it.
 *  - The log's row follows: OPEN is INTENT; COMMITTED, ROLLED_BACK and STUCK are the
 *    row's final states (grove_txn_state), written before the call returns.
 */
enum grove_session_txn_state {
	GROVE_SESSION_TXN_IDLE = 0,
	GROVE_SESSION_TXN_OPEN,
	GROVE_SESSION_TXN_COMMITTED,
	GROVE_SESSION_TXN_ROLLED_BACK,
	GROVE_SESSION_TXN_STUCK,
};

/* "idle", "open", "committed", "rolled back", "stuck". */
const char *grove_session_txn_state_name(enum grove_session_txn_state state);

struct grove_session_txn {
	struct grove_session *session;
	enum grove_session_txn_state state;
	int64_t id;
	char tag[32]; /* names the transaction's temporary entries (the executor's temp_tag) */
	const struct grove_root *stow;
	/* A streamed transaction (below): its n_ops ops are in the log only, and abort rolls
	 * back from the log (the executor undoes only the batch that failed). */
	bool streamed;
	/* The intent logged alternatives group changes: the commit writes their admin files. */
	bool has_alt;
	size_t n_ops;
	size_t n_done; /* streamed: the ops of the batches done before one failed */
};

int grove_session_begin(struct grove_session *s, struct grove_session_txn *t,
			const struct grove_plan *plan, const struct grove_session_txn_opts *opts,
			struct grove_error *err);

/* Runs plan through the executor on target (and stow for ADOPTs), its temporary
 * entries tagged with the transaction and progress told to the session's progress
 * (grove_session_set_progress). On a failure the executor has undone its ops (or returns
 * -GROVE_E_STUCK): call grove_session_abort. */
int grove_session_exec(const struct grove_session_txn *t, const struct grove_plan *plan,
		       const struct grove_root *target, const struct grove_root *stow,
		       struct grove_error *err);

int grove_session_commit(struct grove_session_txn *t, struct grove_error *err);
int grove_session_abort(struct grove_session_txn *t, int r, struct grove_error *err);

/*
 * Streamed plans (docs/journal.md, "Streamed plans"): a plan of more ops than the budget
 * (grove_session_plan_budget) is logged while it is made and executed from the log, so that
 * neither the whole plan nor the executor's view of it is ever in memory.
 *
 *	struct grove_session_stream st;
 *
 *	grove_session_stream_arm(s, &st, plan, &opts, pkgs, n_pkgs)
 *		Gives plan a sink (plan.h). The first time plan holds more than the budget, the
 *intent is opened in the log (as grove_session_begin would log it, with the packages pkgs, borrowed
 *until grove_session_stream_end; the group changes given are logged and consumed) inside a write
 *transaction that stays open, and the ops are appended to it and freed; so is every later batch.
 *Nothing of it is in the log before the end commits it: a crash meanwhile leaves no transaction,
 *and nothing was changed on disk.
 *	... plan (grove_planner_run) ...
 *	grove_session_stream_end(&st, t, plan, r, err)
 *		r is the planning's result. When no batch was logged, the plan is whole in memory:
 *		t->id is 0 and the caller goes on as without streaming (grove_session_apply). When
 *		planning failed (r < 0, a sink's failure named in err) or found conflicts, the
 *		write transaction is rolled back and r returned. Otherwise the rest of the ops is
 *		logged, the intent committed and the state dir synced: t is a transaction begun
 *		exactly as by grove_session_begin (t->streamed), and plan holds no ops.
 *	grove_session_exec_logged(t, target, stow, err)
 *		Reads the ops back from the log in batches of the budget (a FOLD or UNFOLD block
 *		whole) and runs each through the executor. On a failure the executor undid the
 *		batch and t->n_done counts the ops of the batches before it; call
 *		grove_session_abort, which rolls those back from the log as recovery does and
 *		leaves the paths of later ops alone (memory then grows with the ops done: the
 *		failure path is not bounded).
 *	grove_session_commit or grove_session_abort, as for any transaction.
 */
struct grove_session_stream {
	struct grove_plan_sink sink; /* first: the plan's sink */
	struct grove_session *session;
	struct grove_session_txn_opts opts;
	const struct grove_journal_pkg *pkgs;
	size_t n_pkgs;
	struct grove_journal_stream log;
	bool open;      /* the intent's write transaction is open */
	bool late_pkgs; /* pkgs given after the intent was opened: logged by the end */
};

/* The budget: how many ops a plan may hold before it is streamed, 4,096; GROVE_PLAN_BUDGET (a
 * number >= 1; for tests, to stream small plans) overrides it. */
size_t grove_session_plan_budget(void);

void grove_session_stream_arm(struct grove_session *s, struct grove_session_stream *st,
			      struct grove_plan *plan, const struct grove_session_txn_opts *opts,
			      const struct grove_journal_pkg *pkgs, size_t n_pkgs);
int grove_session_stream_end(struct grove_session_stream *st, struct grove_session_txn *t,
			     struct grove_plan *plan, int r, struct grove_error *err);
/* The packages to log with the intent, given once the plan is made (an import learns them from its
 * ops): borrowed until grove_session_stream_end, which logs them when a batch opened the intent
 * without them (the same write transaction: nothing of it is seen before the end). */
void grove_session_stream_pkgs(struct grove_session_stream *st,
			       const struct grove_journal_pkg *pkgs, size_t n_pkgs);
/* Throws away what plan and the stream hold (a partly logged intent is rolled back: nothing of it
 * was committed) and arms plan again, for planning anew (the bounded walk's fallback). Returns
 * 0, or the sink's error when a batch could not be logged (the caller ends the stream). */
int grove_session_stream_restart(struct grove_session_stream *st, struct grove_plan *plan);
int grove_session_exec_logged(struct grove_session_txn *t, const struct grove_root *target,
			      const struct grove_root *stow, struct grove_error *err);

/*
 * Applies plan to the session's target as one transaction (begin, exec,
 * commit or abort above). An empty plan makes no transaction (*ret_txn = 0),
 * unless it carries group changes (grove_session_take_alt). command is the command line for
 * the log; undoes is the transaction this one undoes (0 if none).
 */
/*
 * Notes that the next transaction uses root (of kind, for the alternatives pair dir_id), so that
 * its intent records the root's place and identity for the replays of the transaction (undo,
 * rollback, recovery: grove_root_reopen). The place is rel beneath s->target when rel is given
 * (it must be how the run found root there: a root held with GROVE_RESOLVE_IN_ROOT has no
 * canonical path to derive it from), else derived from root->real: beneath s->target when it lies
 * there, else beneath "/". A second note of the same kind and pair replaces the first.
 */
int grove_session_note_root(struct grove_session *s, enum grove_journal_root_kind kind,
			    int64_t dir_id, const struct grove_root *root, const char *rel,
			    enum grove_resolve resolve, struct grove_error *err);

int grove_session_apply(struct grove_session *s, const struct grove_plan *plan,
			const struct grove_root *stow, const char *command, const char *stow_dir,
			int64_t undoes, int64_t *ret_txn, struct grove_error *err);

/*
 * Plans putting back the state before the given committed transactions (in
 * the order they were made): for every path they touched, the state before
 * the first of them touched it. The target must still be as the last of them
 * left it; a path that is not is a conflict in plan (nothing is changed).
 * Used by undo (one transaction) and rollback (all after N).
 * Alternatives groups the transactions changed go back too (into the session's group changes, for
 * the apply that follows); a group changed since is a conflict in plan.
 */
int grove_session_plan_revert(struct grove_session *s, const int64_t *txns, size_t n,
			      struct grove_plan *plan, struct grove_error *err);

/* What grove_session_revert_streamed did. */
struct grove_session_reverted {
	int64_t txn;                       /* the transaction it made (0: none) */
	size_t n_ops;                      /* the reverted transactions' ops */
	size_t by_kind[GROVE_OP_MOVE + 1]; /* the revert's ops, by kind */
};

/*
 * Reverts txn, a committed transaction of more ops than the plan budget, without holding its ops:
 * their inverses, from the last op back, are checked against the disk and logged a batch at a
 * time as the intent of a new transaction (opts: its command and what it undoes), then run from
 * the log and committed (docs/journal.md, "Streamed reverts"). Returns 1 when it did;
 * 0 when the revert must be planned whole (grove_session_plan_revert: txn is within the budget,
 * changes an alternatives group, holds an op without an inverse of its own shape, or the disk is
 * not as txn left it, which that plan reports), with nothing changed; < 0 on error, after
 * which the new transaction, if one was begun, was rolled back as any other (err says how).
 */
int grove_session_revert_streamed(struct grove_session *s, int64_t txn,
				  const struct grove_session_txn_opts *opts,
				  struct grove_session_reverted *res, struct grove_error *err);

/*
 * The same for the committed transactions txns[0, n) (oldest first) that a rollback reverts, as
 * one new transaction: each one's inverses swept from its last op back, the newest transaction
 * first, when their ops together are over the budget and no path is touched by two of them
 * (docs/journal.md, "Streamed reverts"). res->n_ops is the sum of their ops. 0 when the revert
 * must be planned whole (grove_session_plan_revert: the above, or a path two of them touch).
 */
int grove_session_revert_chain_streamed(struct grove_session *s, const int64_t *txns, size_t n,
					const struct grove_session_txn_opts *opts,
					struct grove_session_reverted *res,
					struct grove_error *err);

#endif
