/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A revert streamed from the log: the undo of a transaction too big to hold, in batches from its
 * last op back. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "grove/session.h"
#include "grove/world.h"
#include "session_int.h"
#include "util.h"

#include "banned.h" /* last */

/*
 * Why the inverse ops, last first, are the revert grove_session_plan_revert would plan: a
 * transaction's ops come from one diff of the planner, each path at most once, and the revert puts
 * every path it touched back to the state before its op. When the disk is as the transaction left
 * it (which the plan checks, path by path, as the whole revert does), undoing each op in reverse
 * order goes through valid states only: a folder's contents go before it, a folder comes back
 * before its contents. The executor checks every op again as it runs it, so a change made
 * between the check and the op fails the revert and rolls it back, as for any transaction.
 *
 * What this takes: ops that have an inverse of the same shape (MKDIR, LINK, UNLINK, RELINK,
 * RMDIR; not the FOLD and UNFOLD blocks, adoptions or recorded ops), no alternatives group, and a
 * disk that passes every check. Anything else, conflicts included, goes the whole way
 * (grove_session_plan_revert), so that what a user is told is the same either way.
 *
 * Memory: a batch of ops (the plan budget) and the scan of the folders they lie in, plus one
 * entry per folder holding the transaction's entries (for the checks that need every entry of a
 * folder): it grows with the folders, not the files.
 */

/* A folder the transaction put entries in, or removed. */
struct folder {
	char *path;
	size_t kids; /* the transaction's entries in it, as the transaction left them */
	bool made;   /* the transaction removed it: the revert makes it again first */
};

struct folders {
	struct folder *t;
	size_t n, cap; /* cap: a power of two, or 0 */
};

static void
folders_release(struct folders *f)
{
	for (size_t i = 0; i < f->cap; i++)
		free(f->t[i].path);
	free(f->t);
	memset(f, 0, sizeof(*f));
}

static int
folders_grow(struct folders *f)
{
	size_t cap = f->cap ? f->cap * 2 : 256;
	struct folder *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++) {
		size_t h;

		if (!f->t[i].path)
			continue;
		h = grove_hash_str(f->t[i].path) & (cap - 1);
		while (t[h].path)
			h = (h + 1) & (cap - 1);
		t[h] = f->t[i];
	}
	free(f->t);
	f->t = t;
	f->cap = cap;
	return 0;
}

/* The folder at path's first len bytes; made when create (NULL when out of memory), else NULL when
 * there is none. */
static struct folder *
folders_get(struct folders *f, const char *path, size_t len, bool create)
{
	size_t h;

	if (f->cap == 0 || (create && (f->n + 1) * 2 > f->cap)) {
		if (!create)
			return NULL;
		if (folders_grow(f) < 0)
			return NULL;
	}
	h = grove_hash_bytes(path, len) & (f->cap - 1);
	while (f->t[h].path) {
		if (strncmp(f->t[h].path, path, len) == 0 && f->t[h].path[len] == '\0')
			return &f->t[h];
		h = (h + 1) & (f->cap - 1);
	}
	if (!create || !(f->t[h].path = strndup(path, len)))
		return NULL;
	f->n++;
	return &f->t[h];
}

/* Whether op has an inverse of the same shape, which undoes it by itself. */
static bool
invertible(const struct grove_op *op)
{
	if (op->recorded || !op->path || !*op->path)
		return false;
	switch (op->kind) {
	case GROVE_OP_MKDIR:
	case GROVE_OP_RMDIR:
		return true;
	case GROVE_OP_LINK:
		return op->text != NULL;
	case GROVE_OP_UNLINK:
		return op->old_text != NULL;
	case GROVE_OP_RELINK:
		return op->text != NULL && op->old_text != NULL;
	default:
		return false;
	}
}

/* The kind of the op that undoes an op of kind k (one that invertible takes). */
static enum grove_op_kind
inverse_of(enum grove_op_kind k)
{
	switch (k) {
	case GROVE_OP_MKDIR:
		return GROVE_OP_RMDIR;
	case GROVE_OP_RMDIR:
		return GROVE_OP_MKDIR;
	case GROVE_OP_LINK:
		return GROVE_OP_UNLINK;
	case GROVE_OP_UNLINK:
		return GROVE_OP_LINK;
	default:
		return k;
	}
}

static int
add_inverse(struct grove_plan *plan, const struct grove_op *op)
{
	/* The texts trade places: what the op made is what the inverse finds, and back. */
	return grove_plan_add_op(plan, inverse_of(op->kind), op->path, op->text, op->old_text,
				 op->stow_path, op->package);
}

/* The transaction's entries a folder the revert removes must be all it holds. */
static bool
holds_only_ours(struct grove_world *w, struct folders *f, const char *path)
{
	struct grove_node *n = grove_node_lookup(w->target, path);
	struct folder *d = folders_get(f, path, strlen(path), false);
	size_t ours = d ? d->kids : 0, there = 0;

	if (!n)
		return false;
	grove_node_foreach_child (n, kid)
		there += kid->orig_type != GROVE_FT_NONE;
	if (d)
		d->kids = 0;
	return there == ours;
}

/*
 * Checks op (the transaction's) against the disk as w scanned it and the folders seen so far (the
 * ops after it); false when the revert must go the whole way.
 */
static bool
check_op(struct grove_world *w, struct folders *f, const struct grove_op *op)
{
	struct grove_pstate before, after;
	bool visible;
	struct grove_pstate now = grove_session_disk_state(w, op->path, &visible);
	size_t plen = grove_path_parent_len(op->path);

	grove_session_op_states(op, &before, &after);
	if (visible) {
		/* As the transaction left it; a folder it made holds only what it made. */
		if (!grove_pstate_eq(&now, &after))
			return false;
		if (op->kind == GROVE_OP_MKDIR && !holds_only_ours(w, f, op->path))
			return false;
	} else {
		/* Only inside a folder the transaction removed, which the revert makes again first.
		 */
		struct folder *d = folders_get(f, op->path, plen, false);

		if (!d || !d->made)
			return false;
	}
	return true;
}

/* Notes what op leaves for the checks of the ops before it. */
static int
note_op(struct folders *f, const struct grove_op *op)
{
	size_t plen = grove_path_parent_len(op->path);
	struct folder *d;

	if (op->kind == GROVE_OP_RMDIR) {
		d = folders_get(f, op->path, strlen(op->path), true);
		if (!d)
			return -ENOMEM;
		d->made = true;
	}
	if (op->kind == GROVE_OP_UNLINK || op->kind == GROVE_OP_RMDIR)
		return 0;
	d = folders_get(f, op->path, plen, true);
	if (!d)
		return -ENOMEM;
	d->kids++;
	return 0;
}

/* Scans the target at the paths of batch b into w. */
static int
scan_batch(struct grove_session *s, struct grove_world *w, const struct grove_plan *b,
	   struct grove_error *err)
{
	cleanup_free char **paths = calloc(b->n_ops + 1, sizeof(char *));

	if (!paths)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < b->n_ops; i++)
		paths[i] = b->ops[i].path;
	return grove_scan_target_paths(w, s->target, paths, b->n_ops, err);
}

/*
 * Plans the inverse of txn's n ops into plan (whose sink logs them), from the last op back, a
 * batch at a time. *whole: an op or the disk asks for the whole revert; the plan is then to be
 * dropped.
 */
static int
plan_inverse(struct grove_session *s, int64_t txn, struct grove_plan *plan,
	     struct grove_session_reverted *res, bool *whole, struct grove_error *err)
{
	size_t batch = grove_session_plan_budget();
	struct folders f = { 0 };
	int r = 0;

	*whole = false;
	for (size_t end = res->n_ops; end > 0 && r >= 0 && !*whole;) {
		size_t first = end > batch ? end - batch : 0;
		struct grove_plan b;
		struct grove_world w;

		grove_plan_init(&b);
		grove_world_init(&w);
		r = grove_journal_ops_range(s->journal, txn, first, end - first, &b, err);
		if (r >= 0 && b.n_ops != end - first)
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %lld lost its op %zu",
					    grove_journal_name(s->journal), (long long)txn,
					    first + b.n_ops);
		if (r >= 0)
			r = scan_batch(s, &w, &b, err);
		for (size_t i = b.n_ops; i-- > 0 && r >= 0 && !*whole;) {
			const struct grove_op *op = &b.ops[i];

			if (!invertible(op) || !check_op(&w, &f, op)) {
				*whole = true;
				break;
			}
			if (note_op(&f, op) < 0 || add_inverse(plan, op) < 0)
				r = grove_error_set(err, -ENOMEM, "out of memory");
			else if (plan->sink == NULL)
				r = -1; /* a batch could not be logged: the stream's end says why */
			else
				res->by_kind[inverse_of(op->kind)]++;
		}
		grove_world_release(&w);
		grove_plan_release(&b);
		end = first;
	}
	folders_release(&f);
	return r;
}

/* Runs the streamed revert t: from the log, then the commit (or the rollback). */
static int
run_logged(struct grove_session *s, struct grove_session_txn *t, struct grove_error *err)
{
	int r = grove_session_exec_logged(t, s->target, NULL, err);

	if (r < 0)
		return grove_session_abort(t, r, err);
	return grove_session_commit(t, err);
}

int
grove_session_revert_streamed(struct grove_session *s, int64_t txn,
			      const struct grove_session_txn_opts *opts,
			      struct grove_session_reverted *res, struct grove_error *err)
{
	struct grove_session_txn_opts o = *opts;
	struct grove_session_stream st;
	struct grove_session_txn t = { 0 };
	struct grove_journal_pkg *pkgs = NULL;
	struct grove_txn hdr = { 0 };
	struct grove_plan plan;
	size_t n_pkgs = 0;
	bool whole = false;
	int r;

	memset(res, 0, sizeof(*res));
	r = grove_journal_get(s->journal, txn, &hdr, err);
	res->n_ops = hdr.n_ops;
	grove_txn_release(&hdr);
	if (r < 0 || res->n_ops <= grove_session_plan_budget())
		return r < 0 ? r : 0;
	grove_plan_init(&plan);
	/* Groups go the whole way (the commit writes their files), as does any conflict there. */
	r = grove_session_revert_groups(s, &txn, 1, &plan, err);
	if (r >= 0 && (s->n_alt || plan.n_conflicts)) {
		grove_session_forget_changes(s);
		grove_plan_release(&plan);
		return 0;
	}
	if (r >= 0)
		r = grove_session_revert_pkgs(s, &txn, 1, err);
	if (r < 0) {
		grove_plan_release(&plan);
		return r;
	}
	/* The stream logs them with its intent and forgets s's changes: they are its own now. */
	pkgs = steal_ptr(s->pkgs);
	n_pkgs = s->n_pkgs;
	s->n_pkgs = 0;
	o.logged_stow = o.stow = NULL;
	grove_session_stream_arm(s, &st, &plan, &o, pkgs, n_pkgs);
	r = plan_inverse(s, txn, &plan, res, &whole, err);
	if (whole && r >= 0)
		r = grove_session_stream_restart(&st, &plan); /* cancels what was logged */
	if (!whole || r < 0)
		r = grove_session_stream_end(&st, &t, &plan, r, err);
	if (whole)
		memset(res->by_kind, 0, sizeof(res->by_kind));
	plan.sink = NULL;
	grove_plan_release(&plan);
	grove_journal_pkgs_free(pkgs, n_pkgs);
	if (r < 0 || whole)
		return r < 0 ? r : 0;
	if (!t.id)
		return grove_error_set(err, -GROVE_E_INTERNAL, "revert of %lld: nothing was logged",
				       (long long)txn);
	r = run_logged(s, &t, err);
	if (r >= 0 || r == -GROVE_E_NOT_DURABLE)
		res->txn = t.id;
	return r < 0 ? r : 1;
}
