/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sessions: the lock and the log around a plan, recovery of interrupted transactions, and reverting
 * committed ones. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grove/exec.h"
#include "grove/path.h"
#include "plan/planner.h"
#include "formats/profile_log.h"
#include "grove/session.h"
#include "plan/world.h"
#include "session_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* A profile's generations folder is changed and recovered only by `grove profile`:
 * its log's ops are relative to the profile dir, not to the target. */
static int
refuse_profile_log(const struct grove_root *target, struct grove_journal *j, int64_t target_id,
		   struct grove_error *err)
{
	cleanup_free char *profile = NULL;
	int r = grove_profile_log_owner(target, j, target_id, &profile, err);

	if (r < 0 || !profile)
		return r;
	return grove_error_set(err, -GROVE_E_USAGE,
			       "target '%s' is the log of profile '%s'; use 'grove profile -p %s "
			       "recover' (or another 'grove profile' command)",
			       target->real, profile, profile);
}

int
grove_session_open(struct grove_session *s, const struct grove_root *target,
		   const struct grove_session_opts *opts, struct grove_error *err)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->state.fd = -1;
	s->lock_fd = -1;
	s->target = target;
	r = grove_session_open_journal(s, opts, err);
	if (r < 0)
		goto fail;
	if (!opts->profile_log) {
		r = refuse_profile_log(target, NULL, 0, err);
		if (r < 0)
			goto fail;
	}
	if (!opts->no_lock) {
		s->lock_wait.seconds = opts->wait_seconds;
		if (opts->lock_wait)
			s->lock_wait = *opts->lock_wait;
		r = grove_lock_target_with(&s->state, target, &s->lock_wait, opts->shared_target,
					   opts->command, err);
		if (r < 0)
			goto fail;
		s->lock_fd = r;
		s->lock_shared = opts->shared_target;
	}
	/* A target the log does not know yet is registered by the first intent
	 * (one write transaction fewer; a dry run writes nothing). */
	r = grove_journal_target_deferred(s->journal, target, &s->target_id, err);
	if (r < 0)
		goto fail;
	if (!opts->profile_log) {
		r = refuse_profile_log(target, s->journal, s->target_id, err);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	grove_session_close(s);
	return r;
}

void
grove_session_close(struct grove_session *s)
{
	if (!s)
		return;
	grove_session_forget_changes(s);
	s->journal = grove_journal_close(s->journal);
	if (s->lock_fd >= 0)
		grove_fd_close(s->lock_fd);
	s->lock_fd = -1;
	grove_root_release(&s->state);
	free(s->state_path);
	s->state_path = NULL;
}

static int recover_txn(struct grove_session *s, const struct grove_root *stow, int64_t txn,
		       size_t n_done, struct grove_error *err);

/* ---- the transaction driver ---- */

const char *
grove_session_txn_state_name(enum grove_session_txn_state state)
{
	switch (state) {
	case GROVE_SESSION_TXN_IDLE:
		return "idle";
	case GROVE_SESSION_TXN_OPEN:
		return "open";
	case GROVE_SESSION_TXN_COMMITTED:
		return "committed";
	case GROVE_SESSION_TXN_ROLLED_BACK:
		return "rolled back";
	case GROVE_SESSION_TXN_STUCK:
		return "stuck";
	}
	return "?";
}

int
grove_session_txn_check(const struct grove_session_txn *t, const char *call,
			struct grove_error *err)
{
	if (t->state == GROVE_SESSION_TXN_OPEN)
		return 0;
	return grove_error_set(err, -GROVE_E_INTERNAL,
			       "%s: transaction %lld is %s where an open one is needed (a bug in "
			       "grove: nothing was done)",
			       call, (long long)t->id, grove_session_txn_state_name(t->state));
}

int
grove_session_intent_durable(struct grove_session *s, int64_t txn, struct grove_error *err)
{
	struct grove_error xerr = { 0 };
	int r;

	if (!s->target_id)
		s->target_id = grove_journal_target_registered(s->journal);
	/* SQLite ignores a failing fsync of the folder after it creates or deletes
	 * its -journal file; the intent is only durable once that folder is synced,
	 * so do it here and stop before the first change if it fails. */
	r = grove_fs_sync(s->state.fd, err);
	if (r < 0) {
		grove_error_prefix(err, "make the intent of transaction %lld durable in '%s'",
				   (long long)txn, s->state_path);
		(void)grove_journal_finish(s->journal, txn, GROVE_TXN_ROLLED_BACK, err->msg, &xerr);
	}
	return r;
}

int
grove_session_begin(struct grove_session *s, struct grove_session_txn *t,
		    const struct grove_plan *plan, const struct grove_session_txn_opts *opts,
		    struct grove_error *err)
{
	struct grove_journal_intent in = {
		.target_id = s->target_id,
		.command = opts->command,
		.stow = opts->logged_stow,
		.undoes = opts->undoes,
		.plan = plan,
		.alt = s->alt,
		.n_alt = s->n_alt,
		.pkgs = s->pkgs,
		.n_pkgs = s->n_pkgs,
		.roots = s->roots,
		.n_roots = s->n_roots,
	};
	int64_t txn = 0;
	int r;

	memset(t, 0, sizeof(*t));
	t->has_alt = s->n_alt > 0;
	r = grove_journal_begin_intent(s->journal, &in, &txn, err);
	grove_session_forget_changes(s);
	if (r < 0)
		return r;
	r = grove_session_intent_durable(s, txn, err);
	if (r < 0)
		return r;
	t->session = s;
	t->id = txn;
	snprintf(t->tag, sizeof(t->tag), "%lld", (long long)txn);
	t->stow = opts->stow;
	t->state = GROVE_SESSION_TXN_OPEN;
	return 0;
}

int
grove_session_exec(const struct grove_session_txn *t, const struct grove_plan *plan,
		   const struct grove_root *target, const struct grove_root *stow,
		   struct grove_error *err)
{
	struct grove_exec_opts eo = { 0 };
	int r = grove_session_txn_check(t, "grove_session_exec", err);

	if (r < 0)
		return r;
	eo.temp_tag = t->tag;
	eo.progress = t->session->progress;
	eo.progress_ctx = t->session->progress_ctx;
	return grove_exec_apply(plan, target, stow, &eo, err);
}

/* Puts the target back to the state before txn from the log and the disk: the
 * owner's rollback, else the session's own recovery. */
static int
rollback(struct grove_session *s, const struct grove_root *stow, int64_t txn, size_t n_done,
	 bool *ret_forward, struct grove_error *err)
{
	char tag[32];
	int r;

	*ret_forward = false;
	/* Every root the replay writes is the one the transaction used, or nothing is done. */
	r = grove_session_check_roots(s, txn, err);
	if (r < 0)
		return r;
	if (s->rollback)
		r = s->rollback(s->rollback_ctx, txn, ret_forward, err);
	else
		r = recover_txn(s, stow, txn, n_done, err);
	/* The admin files follow the links, to whichever side they went. */
	snprintf(tag, sizeof(tag), "%lld", (long long)txn);
	if (r >= 0)
		r = grove_session_alt_files(s, txn, *ret_forward, tag, err);
	return r;
}

int
grove_session_commit(struct grove_session_txn *t, struct grove_error *err)
{
	struct grove_session *s = t->session;
	struct grove_error xerr = { 0 };
	char why[GROVE_ERROR_MSG_MAX];
	bool forward = false;
	int r = grove_session_txn_check(t, "grove_session_commit", err);

	if (r < 0)
		return r;
	/* The admin files last, synced before the log says committed: a crash
	 * before the mark puts them back with the links. A transaction without group
	 * changes has none in the log: no read transaction to find that out. */
	r = t->has_alt ? grove_session_alt_files(s, t->id, true, t->tag, err) : 0;
	if (r >= 0)
		r = grove_journal_finish(s->journal, t->id, GROVE_TXN_COMMITTED, NULL, err);
	if (r < 0) {
		/* The journal read its row back: the commit is not in the log. Act on
		 * what the log says: the transaction did not happen, so undo it now. */
		snprintf(why, sizeof(why), "%s", err->msg);
		if (rollback(s, t->stow, t->id, SIZE_MAX, &forward, &xerr) < 0) {
			(void)grove_journal_finish(s->journal, t->id, GROVE_TXN_STUCK, xerr.msg,
						   &xerr);
			t->state = GROVE_SESSION_TXN_STUCK;
			return grove_error_set(err, -GROVE_E_STUCK,
					       "transaction %lld was applied but could not be "
					       "committed (%s), and undoing it failed: %s",
					       (long long)t->id, why, xerr.msg);
		}
		(void)grove_journal_finish(s->journal, t->id,
					   forward ? GROVE_TXN_COMMITTED : GROVE_TXN_ROLLED_BACK,
					   why, &xerr);
		t->state = forward ? GROVE_SESSION_TXN_COMMITTED : GROVE_SESSION_TXN_ROLLED_BACK;
		if (forward)
			return 0;
		return grove_error_set(err, -GROVE_E_PARTIAL,
				       "transaction %lld could not be committed (%s); every change "
				       "was undone",
				       (long long)t->id, why);
	}
	t->state = GROVE_SESSION_TXN_COMMITTED;
	r = grove_fs_sync(s->state.fd, err);
	/* The change is made and committed: not a refusal (exit 1), which says
	 * nothing changed. Its own code tells scripts to check the disk. */
	if (r < 0) {
		grove_error_prefix(
			err,
			"transaction %lld is done and committed, but syncing the log's "
			"folder '%s' failed, so a power loss could still lose the record",
			(long long)t->id, s->state_path);
		err->code = -GROVE_E_NOT_DURABLE;
		return -GROVE_E_NOT_DURABLE;
	}
	return 0;
}

int
grove_session_abort(struct grove_session_txn *t, int r, struct grove_error *err)
{
	struct grove_session *s = t->session;
	struct grove_error xerr = { 0 };
	char why[GROVE_ERROR_MSG_MAX];
	bool forward = false;

	if (t->state != GROVE_SESSION_TXN_OPEN)
		return r; /* never begun, or ended already: nothing to undo or record */
	if (!s->rollback && (!t->streamed || t->n_done == 0 || r == -GROVE_E_STUCK)) {
		/* The executor undid what it did, or could not: the log says which. (A streamed
		 * transaction's executor undid only the batch that failed: the batches before it,
		 * t->n_done ops, are rolled back below. One left stuck is recovery's.) */
		enum grove_txn_state st =
			r == -GROVE_E_STUCK ? GROVE_TXN_STUCK : GROVE_TXN_ROLLED_BACK;
		if (grove_journal_finish(s->journal, t->id, st, err->msg, &xerr) < 0)
			grove_error_prefix(err, "(and the log could not record it: %s)", xerr.msg);
		t->state = r == -GROVE_E_STUCK ? GROVE_SESSION_TXN_STUCK
					       : GROVE_SESSION_TXN_ROLLED_BACK;
		return r;
	}
	snprintf(why, sizeof(why), "%s", err->msg);
	if (rollback(s, t->stow, t->id, t->streamed ? t->n_done : SIZE_MAX, &forward, &xerr) < 0) {
		(void)grove_journal_finish(s->journal, t->id, GROVE_TXN_STUCK, xerr.msg, &xerr);
		t->state = GROVE_SESSION_TXN_STUCK;
		return grove_error_set(err, -GROVE_E_STUCK, "%s; and undoing it failed: %s", why,
				       xerr.msg);
	}
	(void)grove_journal_finish(s->journal, t->id,
				   forward ? GROVE_TXN_COMMITTED : GROVE_TXN_ROLLED_BACK, why,
				   &xerr);
	t->state = forward ? GROVE_SESSION_TXN_COMMITTED : GROVE_SESSION_TXN_ROLLED_BACK;
	return forward ? 0 : r;
}

int
grove_session_apply(struct grove_session *s, const struct grove_plan *plan,
		    const struct grove_root *stow, const char *command, const char *stow_dir,
		    int64_t undoes, int64_t *ret_txn, struct grove_error *err)
{
	struct grove_session_txn_opts o = {
		.command = command,
		.logged_stow = stow_dir ? stow : NULL,
		.stow = stow,
		.undoes = undoes,
	};
	struct grove_session_txn t;
	int r;

	if (ret_txn)
		*ret_txn = 0;
	if (plan->n_ops == 0 && s->n_alt == 0 && !(s->record_pkgs && s->n_pkgs))
		return 0;
	s->record_pkgs = false;
	r = grove_session_begin(s, &t, plan, &o, err);
	if (r < 0)
		return r;
	r = grove_session_exec(&t, plan, s->target, stow, err);
	if (r < 0)
		return grove_session_abort(&t, r, err);
	r = grove_session_commit(&t, err);
	if (ret_txn && (r >= 0 || r == -GROVE_E_NOT_DURABLE))
		*ret_txn = t.id;
	return r;
}

/* ---- the states a path goes through ---- */

void
grove_session_op_states(const struct grove_op *op, struct grove_pstate *before,
			struct grove_pstate *after)
{
	struct grove_pstate none = { GROVE_FT_NONE, NULL }, dir = { GROVE_FT_DIR, NULL };
	struct grove_pstate old = { GROVE_FT_LINK, op->old_text },
			    new = { GROVE_FT_LINK, op->text };

	if (op->recorded) { /* the link was there before and stays: plan.h */
		*before = *after = op->kind == GROVE_OP_LINK ? new : old;
		return;
	}
	switch (op->kind) {
	case GROVE_OP_MKDIR:
		*before = none, *after = dir;
		break;
	case GROVE_OP_LINK:
		*before = none, *after = new;
		break;
	case GROVE_OP_UNLINK:
		*before = old, *after = none;
		break;
	case GROVE_OP_RELINK:
		*before = old, *after = new;
		break;
	case GROVE_OP_RMDIR:
		*before = dir, *after = none;
		break;
	case GROVE_OP_UNFOLD:
		*before = old, *after = dir;
		break;
	case GROVE_OP_FOLD:
		*before = dir, *after = new;
		break;
	case GROVE_OP_ADOPT:
		before->type = GROVE_FT_REG, before->text = NULL;
		*after = new;
		break;
	case GROVE_OP_WRITE:
		*before = none;
		after->type = GROVE_FT_REG, after->text = NULL;
		break;
	case GROVE_OP_ERASE:
		before->type = GROVE_FT_REG, before->text = NULL;
		*after = none;
		break;
	case GROVE_OP_MOVE: /* never logged (plan.h): a profile's own step */
		*before = none, *after = none;
		break;
	}
}

bool
grove_pstate_eq(const struct grove_pstate *a, const struct grove_pstate *b)
{
	if (a->type != b->type)
		return false;
	return a->type != GROVE_FT_LINK || strcmp(a->text, b->text) == 0;
}

/* One touched path: the state before the first op on it, after the last, and every state between.
 */
struct touched {
	const char *path;
	struct grove_pstate first, last;
	struct grove_pstate seen[8];
	size_t n_seen;
	int depth;
};

struct touchset {
	struct touched *t;
	size_t n, cap;
	/* Open-addressing index into t by path (slot = position + 1), so plans of
	 * 100k ops are indexed in linear time. */
	size_t *index;
	size_t index_cap;
	/* The link texts the transactions made or removed: what their temporary entries may hold.
	 */
	const char **texts;
	size_t n_texts, cap_texts;
	bool adopts;
	bool skip_recorded; /* recovery: a recorded op changed nothing, whatever is there now */
};

/* Rebuilds the index for ts->n entries (after growth or sorting). */
static int
ts_reindex(struct touchset *ts)
{
	size_t cap = 64;

	while (cap < ts->n * 2 + 2)
		cap *= 2;
	free(ts->index);
	ts->index = calloc(cap, sizeof(*ts->index));
	if (!ts->index)
		return -ENOMEM;
	ts->index_cap = cap;
	for (size_t i = 0; i < ts->n; i++) {
		size_t h = grove_hash_str(ts->t[i].path) & (cap - 1);

		while (ts->index[h])
			h = (h + 1) & (cap - 1);
		ts->index[h] = i + 1;
	}
	return 0;
}

static struct touched *
ts_find(const struct touchset *ts, const char *path)
{
	size_t h;

	if (!ts->index)
		return NULL;
	h = grove_hash_str(path) & (ts->index_cap - 1);
	while (ts->index[h]) {
		struct touched *t = &ts->t[ts->index[h] - 1];
		if (strcmp(t->path, path) == 0)
			return t;
		h = (h + 1) & (ts->index_cap - 1);
	}
	return NULL;
}

static void
touchset_release(struct touchset *ts)
{
	free(ts->index);
	free(ts->t);
	free(ts->texts);
	memset(ts, 0, sizeof(*ts));
}

static int
add_text(struct touchset *ts, const char *text)
{
	if (!text)
		return 0;
	if (ts->n_texts == ts->cap_texts) {
		size_t cap = ts->cap_texts ? ts->cap_texts * 2 : 64;
		const char **n = realloc(ts->texts, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ts->texts = n;
		ts->cap_texts = cap;
	}
	ts->texts[ts->n_texts++] = text;
	return 0;
}

static void
seen_add(struct touched *t, const struct grove_pstate *st)
{
	for (size_t i = 0; i < t->n_seen; i++)
		if (grove_pstate_eq(&t->seen[i], st))
			return;
	if (t->n_seen < sizeof(t->seen) / sizeof(t->seen[0]))
		t->seen[t->n_seen++] = *st;
}

/* Adds every op of plan (which must outlive ts). */
static int
touch_plan(struct touchset *ts, const struct grove_plan *plan)
{
	for (size_t i = 0; i < plan->n_ops; i++) {
		const struct grove_op *op = &plan->ops[i];
		struct grove_pstate before, after;
		struct touched *t = NULL;

		if (op->recorded && ts->skip_recorded)
			continue;
		grove_session_op_states(op, &before, &after);
		if (op->kind == GROVE_OP_ADOPT)
			ts->adopts = true;
		if (add_text(ts, op->text) < 0 || add_text(ts, op->old_text) < 0)
			return -ENOMEM;
		t = ts_find(ts, op->path);
		if (!t) {
			if (ts->n == ts->cap) {
				size_t cap = ts->cap ? ts->cap * 2 : 64;
				struct touched *n = realloc(ts->t, cap * sizeof(*n));
				if (!n)
					return -ENOMEM;
				ts->t = n;
				ts->cap = cap;
			}
			t = &ts->t[ts->n++];
			memset(t, 0, sizeof(*t));
			t->path = op->path;
			t->first = before;
			t->depth = grove_path_slashes(op->path);
			seen_add(t, &before);
			if (ts->n * 2 + 2 > ts->index_cap) {
				if (ts_reindex(ts) < 0)
					return -ENOMEM;
			} else {
				size_t h = grove_hash_str(t->path) & (ts->index_cap - 1);
				while (ts->index[h])
					h = (h + 1) & (ts->index_cap - 1);
				ts->index[h] = ts->n;
			}
		}
		t->last = after;
		seen_add(t, &before);
		seen_add(t, &after);
	}
	return 0;
}

static int
cmp_depth(const void *a, const void *b)
{
	const struct touched *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth - y->depth;
	return strcmp(x->path, y->path);
}

/* The state on disk as scanned; visible is false when a folder on the way is not a real folder. */
struct grove_pstate
grove_session_disk_state(struct grove_world *w, const char *path, bool *visible)
{
	struct grove_pstate st = { GROVE_FT_NONE, NULL };
	cleanup_free char *parent = grove_path_parent(path);
	struct grove_node *pn = parent ? grove_node_lookup(w->target, parent) : NULL;
	struct grove_node *n;

	*visible = pn && pn->orig_type == GROVE_FT_DIR && pn->listed;
	if (!*visible)
		return st;
	for (const struct grove_node *a = pn; a; a = a->parent)
		if (a->orig_type != GROVE_FT_DIR)
			*visible = false;
	n = grove_node_lookup(w->target, path);
	if (!n)
		return st;
	st.type = n->orig_type == GROVE_FT_OTHER ? GROVE_FT_OTHER : n->orig_type;
	st.text = n->orig_link;
	return st;
}

static const char *
describe(const struct grove_pstate *st, char *buf, size_t size)
{
	switch (st->type) {
	case GROVE_FT_NONE:
		return "nothing";
	case GROVE_FT_DIR:
		return "a folder";
	case GROVE_FT_REG:
		return "a file";
	case GROVE_FT_LINK:
		snprintf(buf, size, "a link to '%s'", st->text);
		return buf;
	default:
		return "a special file";
	}
}

static bool
touched_path(const struct touchset *ts, const char *path)
{
	return ts_find(ts, path) != NULL;
}

/*
 * Sets the wanted state of every touched path (parents first) and checks the
 * disk: for a revert every visible path must be as the transactions left it
 * (want_last); for recovery, in any state they went through. A mismatch is
 * reported through conflict (plan) or as -GROVE_E_STUCK.
 */
static int
set_wanted(struct grove_world *w, struct touchset *ts, bool recovery, struct grove_plan *plan,
	   struct grove_error *err)
{
	char a[GROVE_ERROR_MSG_MAX / 2], b[GROVE_ERROR_MSG_MAX / 2], msg[GROVE_ERROR_MSG_MAX];

	/* A revert may touch no path at all (ts->t NULL): qsort must not be given NULL (UBSan). */
	if (ts->n)
		qsort(ts->t, ts->n, sizeof(*ts->t), cmp_depth);
	if (ts_reindex(ts) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < ts->n; i++) {
		struct touched *t = &ts->t[i];
		bool visible, ok = false;
		struct grove_pstate now = grove_session_disk_state(w, t->path, &visible);
		struct grove_node *n;

		if (visible) {
			if (recovery) {
				for (size_t k = 0; k < t->n_seen && !ok; k++)
					ok = grove_pstate_eq(&now, &t->seen[k]);
			} else {
				ok = grove_pstate_eq(&now, &t->last);
			}
			if (!ok) {
				snprintf(msg, sizeof(msg), "'%s' is %s, but grove left %s there",
					 t->path, describe(&now, a, sizeof(a)),
					 describe(&t->last, b, sizeof(b)));
				if (recovery)
					return grove_error_set(err, -GROVE_E_STUCK, "%s", msg);
				if (grove_plan_add_conflict(plan, "revert", "", t->path, msg) < 0)
					return -ENOMEM;
				continue;
			}
		}
		if (t->first.type == GROVE_FT_REG)
			continue; /* adopted files are put back by recover_adopt */
		n = grove_node_lookup(w->target, t->path);
		if (t->first.type == GROVE_FT_NONE) {
			if (n) {
				n->type = GROVE_FT_NONE;
				grove_node_set_link(n, NULL);
			}
			continue;
		}
		if (!n) {
			cleanup_free char *parent = grove_path_parent(t->path);
			struct grove_node *pn =
				parent ? grove_node_lookup(w->target, parent) : NULL;
			const char *base = strrchr(t->path, '/');

			if (!pn || pn->type != GROVE_FT_DIR) {
				snprintf(msg, sizeof(msg),
					 "cannot put back '%s': the folder it was in is gone",
					 t->path);
				if (recovery)
					return grove_error_set(err, -GROVE_E_STUCK, "%s", msg);
				if (grove_plan_add_conflict(plan, "revert", "", t->path, msg) < 0)
					return -ENOMEM;
				continue;
			}
			n = grove_node_new(base ? base + 1 : t->path, GROVE_FT_NONE, NULL);
			if (!n || grove_node_add(pn, n) < 0) {
				grove_node_free(n);
				return -ENOMEM;
			}
		}
		n->type = t->first.type;
		if (grove_node_set_link(n, t->first.type == GROVE_FT_LINK ? t->first.text : NULL) <
		    0)
			return -ENOMEM;
		if (n->type == GROVE_FT_DIR && n->orig_type != GROVE_FT_DIR)
			n->listed = true;
	}
	/* A folder that must become a link or go holds only what the transactions made. */
	for (size_t i = 0; i < ts->n; i++) {
		struct grove_node *n = grove_node_lookup(w->target, ts->t[i].path);

		if (!n || n->orig_type != GROVE_FT_DIR || n->type == GROVE_FT_DIR)
			continue;
		grove_node_foreach_child (n, kid) {
			cleanup_free char *kp = grove_strdupf("%s/%s", ts->t[i].path, kid->name);

			if (!kp)
				return -ENOMEM;
			if (kid->orig_type == GROVE_FT_NONE || touched_path(ts, kp))
				continue;
			snprintf(msg, sizeof(msg), "'%s' holds '%s', which grove did not make",
				 ts->t[i].path, kp);
			if (recovery)
				return grove_error_set(err, -GROVE_E_STUCK, "%s", msg);
			if (grove_plan_add_conflict(plan, "revert", "", kp, msg) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static int
load_touched(struct grove_session *s, struct grove_world *w, struct touchset *ts,
	     struct grove_error *err)
{
	cleanup_free char **paths = calloc(ts->n + 1, sizeof(char *));

	if (!paths)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ts->n; i++)
		paths[i] = (char *)ts->t[i].path;
	return grove_scan_target_paths(w, s->target, paths, ts->n, err);
}

/* The stow dir the transactions used, relative to the target, so that the ops
 * of the revert name the package each link serves (for `grove status`). */
static int
set_stow_path(struct grove_session *s, struct grove_world *w, const int64_t *txns, size_t n,
	      struct grove_error *err)
{
	struct grove_txn *all = NULL;
	size_t n_all = 0;
	char *dir = NULL;
	int r = 0;

	for (size_t i = n; i-- > 0 && !dir && r >= 0;) {
		struct grove_txn t = { 0 };

		r = grove_journal_get(s->journal, txns[i], &t, err);
		if (r >= 0 && t.stow_dir)
			dir = strdup(t.stow_dir);
		grove_txn_release(&t);
	}
	if (r >= 0 && !dir) {
		r = grove_journal_list(s->journal, s->target_id, 0, &all, &n_all, err);
		for (size_t i = 0; r >= 0 && i < n_all && !dir; i++)
			if (all[i].stow_dir)
				dir = strdup(all[i].stow_dir);
		grove_txns_free(all, n_all);
	}
	if (r >= 0 && dir && s->target->real) {
		free(w->stow_path);
		w->stow_path = grove_path_abs2rel(dir, s->target->real);
	}
	free(dir);
	return r;
}

int
grove_session_plan_revert(struct grove_session *s, const int64_t *txns, size_t n,
			  struct grove_plan *plan, struct grove_error *err)
{
	struct grove_plan *logged = calloc(n ? n : 1, sizeof(*logged));
	struct touchset ts = { 0 };
	struct grove_world w;
	int r = 0;

	if (!logged)
		return grove_error_set(err, -ENOMEM, "out of memory");
	grove_world_init(&w);
	for (size_t i = 0; i < n && r >= 0; i++) {
		grove_plan_init(&logged[i]);
		r = grove_journal_ops(s->journal, txns[i], &logged[i], err);
		if (r >= 0 && touch_plan(&ts, &logged[i]) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	if (r >= 0)
		r = set_stow_path(s, &w, txns, n, err);
	if (r >= 0 && ts.adopts)
		r = grove_error_set(
			err, -GROVE_E_BADINPUT,
			"cannot revert: a transaction adopted files into a package, and "
			"the package's earlier versions of them are gone");
	if (r >= 0)
		r = load_touched(s, &w, &ts, err);
	if (r >= 0)
		r = set_wanted(&w, &ts, false, plan, err);
	if (r >= 0)
		r = grove_session_revert_groups(s, txns, n, plan, err);
	if (r >= 0)
		r = grove_session_revert_pkgs(s, txns, n, err);
	if (r == -ENOMEM)
		grove_error_set(err, r, "out of memory");
	if (r >= 0 && plan->n_conflicts == 0)
		r = grove_planner_diff(&w, plan, err);
	if (r >= 0 && plan->n_conflicts == 0)
		r = grove_session_revert_records(s, txns, n, logged, plan, err);
	grove_plan_sort_conflicts(plan);
	grove_world_release(&w);
	touchset_release(&ts);
	for (size_t i = 0; i < n; i++)
		grove_plan_release(&logged[i]);
	free(logged);
	return r < 0 ? r : 0;
}

/* ---- recovery ---- */

static int
cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether text is one of the transaction's (ts->texts sorted: sort_texts). */
static bool
known_text(const struct touchset *ts, const char *text)
{
	return ts->n_texts &&
	       bsearch(&text, ts->texts, ts->n_texts, sizeof(*ts->texts), cmp_str_ptr) != NULL;
}

static void
sort_texts(struct touchset *ts)
{
	if (ts->n_texts)
		qsort(ts->texts, ts->n_texts, sizeof(*ts->texts), cmp_str_ptr);
}

int
grove_session_temp_walk(int dfd, const char *dir_path, const char *name, bool remove,
			grove_temp_link_fn *on_link, void *ctx, struct grove_error *err)
{
	struct grove_stat st;
	int r = grove_fs_stat_at(dfd, name, &st, err);

	if (r < 0)
		return r;
	if (st.type == GROVE_FT_NONE)
		return 0;
	if (st.type == GROVE_FT_LINK) {
		cleanup_free char *text = NULL;

		r = grove_fs_readlink_at(dfd, name, &text, err);
		return r < 0 ? r : on_link(ctx, dfd, dir_path, name, text, err);
	}
	if (st.type == GROVE_FT_DIR) {
		cleanup_fd int sub = grove_fs_open_dir_at(dfd, name, err);
		struct grove_dirent *ents = NULL;
		size_t n = 0;
		cleanup_free char *sub_path = grove_strdupf("%s/%s", dir_path, name);

		if (sub < 0)
			return sub;
		if (!sub_path)
			return grove_error_set(err, -ENOMEM, "out of memory");
		r = grove_fs_list(sub, &ents, &n, err);
		for (size_t i = 0; i < n && r >= 0; i++)
			r = grove_session_temp_walk(sub, sub_path, ents[i].name, remove, on_link,
						    ctx, err);
		grove_dirents_free(ents, n);
		if (r < 0 || !remove)
			return r;
		return grove_fs_rmdir(dfd, name, err);
	}
	return grove_error_set(err, -GROVE_E_STUCK,
			       "temporary entry '%s/%s' is not a link or folder grove made",
			       dir_path, name);
}

struct temp_ctx {
	const struct touchset *ts;
	const char *tag;
};

/* A link in a temporary entry goes when its text is one the transaction made or removed. */
static int
remove_temp_link(void *ctx, int dfd, const char *dir_path, const char *name, const char *text,
		 struct grove_error *err)
{
	const struct temp_ctx *c = ctx;

	if (c->ts && !known_text(c->ts, text))
		return grove_error_set(err, -GROVE_E_STUCK,
				       "temporary link '%s/%s' points to '%s', which the "
				       "interrupted transaction never made",
				       dir_path, name, text);
	return grove_fs_link_remove(dfd, name, text, c->tag, err);
}

/* Removes a temporary entry of the transaction: a link with one of its texts,
 * or a folder holding only such entries. Anything else is left: STUCK. */
static int
remove_temp(int dfd, const char *dir_path, const char *name, const struct touchset *ts,
	    const char *tag, struct grove_error *err)
{
	struct temp_ctx c = { ts, tag };

	return grove_session_temp_walk(dfd, dir_path, name, true, remove_temp_link, &c, err);
}

int
grove_session_remove_temp(int dfd, const char *dir_path, const char *name, const char *const *texts,
			  size_t n_texts, const char *tag, struct grove_error *err)
{
	struct touchset ts = { .texts = (const char **)texts, .n_texts = n_texts };

	return remove_temp(dfd, dir_path, name, texts ? &ts : NULL, tag, err);
}

/* Removes every temporary entry of transaction tag in the scanned folders. */
static int
remove_temps(struct grove_session *s, struct grove_node *dir, const char *path, const char *tag,
	     const struct touchset *ts, struct grove_error *err)
{
	cleanup_fd int fd = -1;
	int r = 0;

	if (dir->orig_type != GROVE_FT_DIR || !dir->listed)
		return 0;
	grove_node_foreach_child (dir, kid) {
		if (kid->orig_type == GROVE_FT_DIR && !grove_fs_is_temp_of(kid->name, tag)) {
			cleanup_free char *kp = path[0] ? grove_strdupf("%s/%s", path, kid->name)
							: strdup(kid->name);
			if (!kp)
				return grove_error_set(err, -ENOMEM, "out of memory");
			r = remove_temps(s, kid, kp, tag, ts, err);
			if (r < 0)
				return r;
			continue;
		}
		if (!grove_fs_is_temp_of(kid->name, tag) || kid->orig_type == GROVE_FT_NONE)
			continue;
		if (fd < 0) {
			fd = grove_fs_open_dir_beneath(s->target->fd, path[0] ? path : ".", err);
			if (fd < 0)
				return fd;
		}
		r = remove_temp(fd, path[0] ? path : ".", kid->name, ts, tag, err);
		if (r < 0)
			return r;
		kid->orig_type = kid->type = GROVE_FT_NONE;
	}
	if (fd >= 0)
		r = grove_fs_sync(fd, err);
	return r;
}

/*
 * An interrupted ADOPT: the package's own file was set aside under a
 * temporary name, the user's file moved into the package, then the link made.
 * Undo each step that happened, last first.
 */
static int
recover_adopt(struct grove_session *s, const struct grove_root *stow, const struct grove_op *op,
	      const char *tag, struct grove_error *err)
{
	cleanup_free char *dir = grove_path_parent(op->path);
	cleanup_free char *sdir = grove_path_parent(op->stow_path);
	const char *name = strrchr(op->path, '/') ? strrchr(op->path, '/') + 1 : op->path;
	const char *sname =
		strrchr(op->stow_path, '/') ? strrchr(op->stow_path, '/') + 1 : op->stow_path;
	cleanup_fd int fd = -1, sfd = -1;
	struct grove_dirent *ents = NULL;
	struct grove_stat st, sst;
	size_t n = 0;
	char aside[256] = "";
	int r;

	if (!dir || !sdir)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (!stow)
		return grove_error_set(err, -GROVE_E_STUCK,
				       "adopt '%s': the stow directory is not available", op->path);
	fd = grove_fs_open_dir_beneath(s->target->fd, dir[0] ? dir : ".", err);
	if (fd < 0)
		return fd;
	sfd = grove_fs_open_dir_beneath(stow->fd, sdir[0] ? sdir : ".", err);
	if (sfd < 0)
		return sfd;
	r = grove_fs_list(sfd, &ents, &n, err);
	for (size_t i = 0; i < n && r >= 0; i++) {
		size_t l = strlen(ents[i].name), bl = strlen(sname);
		if (grove_fs_is_temp_of(ents[i].name, tag) && l > bl &&
		    !strcmp(ents[i].name + l - bl, sname))
			snprintf(aside, sizeof(aside), "%s", ents[i].name);
	}
	grove_dirents_free(ents, n);
	if (r < 0)
		return r;
	r = grove_fs_stat_at(fd, name, &st, err);
	if (r < 0)
		return r;
	if (st.type == GROVE_FT_LINK) {
		r = grove_fs_link_remove(fd, name, op->text, tag, err);
		if (r < 0)
			return grove_error_set(err, -GROVE_E_STUCK, "adopt '%s': %s", op->path,
					       err->msg);
		st.type = GROVE_FT_NONE;
	}
	r = grove_fs_stat_at(sfd, sname, &sst, err);
	if (r < 0)
		return r;
	if (st.type == GROVE_FT_NONE && sst.type == GROVE_FT_REG) {
		r = grove_fs_move(sfd, sname, fd, name, RENAME_NOREPLACE, err);
		if (r < 0)
			return r;
	}
	if (aside[0]) {
		r = grove_fs_move(sfd, aside, sfd, sname, RENAME_NOREPLACE, err);
		if (r < 0)
			return r;
	}
	r = grove_fs_sync(sfd, err);
	return r < 0 ? r : grove_fs_sync(fd, err);
}

static bool
same_root(const struct grove_root *r, const struct grove_txn *hdr)
{
	return hdr->stow_known && (int64_t)r->dev == hdr->stow_dev &&
	       (int64_t)r->ino == hdr->stow_ino &&
	       (r->born == hdr->stow_born || hdr->stow_born == 0); /* 0: logged before births */
}

/*
 * The stow dir an interrupted ADOPT moved files into, read back from the log:
 * never trusted by its path alone (DESIGN.md invariant 8). The command's own
 * stow dir serves when it is that folder (same path and identity). Otherwise
 * the path is opened and must still be the folder the transaction recorded
 * (device, inode, birth time: a folder swapped for a symlink or another
 * folder since is refused), and one that a committed transaction of this
 * target used before (a row someone else added to the log cannot name a
 * new one). Anything else is STUCK, touching nothing.
 */
static int
recovery_stow(struct grove_session *s, const struct grove_txn *hdr, const struct grove_root *stow,
	      struct grove_root *own, const struct grove_root **ret, struct grove_error *err)
{
	struct grove_root_id id = { .dev = (dev_t)hdr->stow_dev,
				    .ino = (ino_t)hdr->stow_ino,
				    .born = hdr->stow_born };
	bool used = false;
	int r;

	if (stow && stow->real && !strcmp(stow->real, hdr->stow_dir) && same_root(stow, hdr)) {
		*ret = stow;
		return 0;
	}
	if (!hdr->stow_known)
		return grove_error_set(err, -GROVE_E_STUCK,
				       "the log does not record which folder the stow dir '%s' "
				       "was; run the command again with -d naming it",
				       hdr->stow_dir);
	r = grove_journal_stow_used(s->journal, s->target_id, hdr->stow_dir, hdr->stow_dev,
				    hdr->stow_ino, hdr->stow_born, &used, err);
	if (r < 0)
		return r;
	if (!used)
		return grove_error_set(err, -GROVE_E_STUCK,
				       "the stow dir '%s' named by the log was never used by a "
				       "committed transaction of this target; if it is yours, "
				       "run the command again with -d '%s'",
				       hdr->stow_dir, hdr->stow_dir);
	/* Reopened as every root of a replay: beneath "/", following no symlink, and still the
	 * folder the transaction recorded (DESIGN.md invariant 11). */
	r = grove_session_reopen_path(s, hdr->stow_dir, &id, "stow dir", own, err);
	if (r < 0) {
		char why[GROVE_ERROR_MSG_MAX];

		snprintf(why, sizeof(why), "%s", err->msg);
		return grove_error_set(err, -GROVE_E_STUCK,
				       "the stow dir '%s' is not the folder the interrupted "
				       "transaction used: %s",
				       hdr->stow_dir, why);
	}
	*ret = own;
	return 0;
}

/* Rolls back txn's first n_done ops (SIZE_MAX: all of them; a streamed transaction's abort
 * names the ops of the batches it ran: every later op never ran, and its path is nobody's
 * business here, whatever is there now). */
static int
recover_txn(struct grove_session *s, const struct grove_root *stow, int64_t txn, size_t n_done,
	    struct grove_error *err)
{
	struct grove_plan logged, plan;
	struct touchset ts = { 0 };
	struct grove_world w;
	struct grove_txn hdr = { 0 };
	struct grove_root own_stow = { .fd = -1 };
	struct grove_exec_opts eo = { 0 };
	char tag[32];
	int r;

	snprintf(tag, sizeof(tag), "%lld", (long long)txn);
	/* A transaction over the plan budget is recovered a batch at a time when it can be. */
	r = grove_session_recover_streamed(s, txn, n_done, tag, err);
	if (r != 0)
		return r < 0 ? r : 0;
	grove_plan_init(&logged);
	grove_plan_init(&plan);
	grove_world_init(&w);
	/* Every temporary entry recovery makes (removing a leftover renames it
	 * aside first) carries the transaction's tag: a crash here is recovered
	 * the same way next time. */
	eo.temp_tag = tag;
	ts.skip_recorded = true;
	r = grove_journal_get(s->journal, txn, &hdr, err);
	if (r >= 0)
		r = grove_journal_ops_range(s->journal, txn, 0, n_done == SIZE_MAX ? 0 : n_done,
					    &logged, err);
	if (r >= 0 && touch_plan(&ts, &logged) < 0)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0 && ts.adopts) {
		const struct grove_root *use = NULL;

		if (hdr.stow_dir)
			r = recovery_stow(s, &hdr, stow, &own_stow, &use, err);
		stow = use;
	}
	for (size_t i = 0; i < logged.n_ops && r >= 0; i++)
		if (logged.ops[i].kind == GROVE_OP_ADOPT)
			r = recover_adopt(s, stow, &logged.ops[i], tag, err);
	if (r >= 0)
		r = load_touched(s, &w, &ts, err);
	if (r >= 0)
		r = set_wanted(&w, &ts, true, &plan, err);
	if (r >= 0) {
		sort_texts(&ts);
		r = remove_temps(s, w.target, "", tag, &ts, err);
	}
	if (r >= 0)
		r = grove_planner_diff(&w, &plan, err);
	if (r >= 0 && plan.n_ops)
		r = grove_exec_apply(&plan, s->target, stow, &eo, err);
	if (r == -ENOMEM)
		grove_error_set(err, r, "out of memory");
	grove_root_release(&own_stow);
	grove_world_release(&w);
	touchset_release(&ts);
	grove_plan_release(&plan);
	grove_plan_release(&logged);
	grove_txn_release(&hdr);
	return r;
}

static int recover_unfinished(struct grove_session *s, const struct grove_root *stow, bool force,
			      int64_t txn, int64_t *ret_recovered, struct grove_error *err);

int
grove_session_recover(struct grove_session *s, const struct grove_root *stow, bool force,
		      int64_t *ret_recovered, struct grove_error *err)
{
	int64_t txn = 0;
	int r;

	if (ret_recovered)
		*ret_recovered = 0;
	r = grove_journal_unfinished(s->journal, s->target_id, &txn, err);
	if (r < 0 || txn == 0)
		return r;
	if (!s->lock_shared)
		return recover_unfinished(s, stow, force, txn, ret_recovered, err);
	/* Shared holders (grove alt on other admindirs) may be running this very
	 * transaction: only one that holds the target alone may call it interrupted.
	 * So wait to hold it exclusively, look again, and share it again after. */
	r = grove_lock_convert(s->lock_fd, false, &s->lock_wait, s->target, err);
	if (r >= 0)
		r = grove_journal_unfinished(s->journal, s->target_id, &txn, err);
	if (r >= 0 && txn)
		r = recover_unfinished(s, stow, force, txn, ret_recovered, err);
	if (r >= 0)
		r = grove_lock_convert(s->lock_fd, true, &s->lock_wait, s->target, err);
	return r;
}

/* Recovery of the unfinished transaction txn, the target held exclusively. */
static int
recover_unfinished(struct grove_session *s, const struct grove_root *stow, bool force, int64_t txn,
		   int64_t *ret_recovered, struct grove_error *err)
{
	struct grove_error jerr = { 0 };
	bool forward = false;
	int r;
	if (force) {
		r = grove_journal_finish(
			s->journal, txn, GROVE_TXN_ROLLED_BACK,
			"abandoned by 'grove recover --force': the target was left "
			"as found",
			err);
		if (r >= 0 && ret_recovered)
			*ret_recovered = txn;
		return r;
	}
	r = rollback(s, stow, txn, SIZE_MAX, &forward, err);
	if (r < 0) {
		grove_error_prefix(err, "recover interrupted transaction %lld", (long long)txn);
		if (grove_journal_finish(s->journal, txn, GROVE_TXN_STUCK, err->msg, &jerr) < 0)
			grove_error_prefix(err, "(the log could not record it: %s)", jerr.msg);
		if (r != -GROVE_E_STUCK)
			err->code = r = -GROVE_E_STUCK;
		return r;
	}
	r = grove_journal_finish(s->journal, txn,
				 forward ? GROVE_TXN_COMMITTED : GROVE_TXN_ROLLED_BACK,
				 forward ? "interrupted; finished by recovery"
					 : "interrupted; rolled back by recovery",
				 err);
	/* As a commit: the verdict is only durable once the log's folder is synced. */
	if (r >= 0)
		r = grove_fs_sync(s->state.fd, err);
	if (r >= 0 && ret_recovered)
		*ret_recovered = txn;
	return r;
}
