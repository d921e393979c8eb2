/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reverts and recovery streamed from the log: the undo (or the rollback after a crash) of a
 * transaction too big to hold, in batches from its last op back. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/path.h"
#include "grove/session.h"
#include "plan/world.h"
#include "session_int.h"
#include "base/util.h"

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
 * A FOLD or UNFOLD block (the op and every op after it under its path) reverts as the other: an
 * UNFOLD's inverse is a FOLD back to its old link, a FOLD's an UNFOLD of its link, and the inverses
 * of the block's ops, last first, are the inverse block's. The executor takes a block's op before
 * its block, so the sweep, which meets a block's ops before its op, must know the blocks first: a
 * forward read of the log finds the transaction's FOLD and UNFOLD ops and where their blocks end
 * (struct heads), and the sweep hands each inverse on where its block begins, sweeping back; the
 * op's own checks come when the sweep reaches it, as any op's (nothing runs before the sweep is
 * done).
 *
 * What this takes: ops that have an inverse of the same shape (MKDIR, LINK, UNLINK, RELINK,
 * RMDIR, FOLD and UNFOLD; not adoptions or recorded ops), no alternatives group, and a disk that
 * passes every check. Anything else, conflicts included, goes the whole way
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

/* Whether op has an inverse of the same shape, which undoes it by itself (a block's op: with its
 * block). */
static bool
invertible(const struct grove_op *op)
{
	if (op->recorded || !op->path || !*op->path)
		return false;
	switch (op->kind) {
	case GROVE_OP_FOLD:
		return op->text != NULL;
	case GROVE_OP_UNFOLD:
		return op->old_text != NULL;
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
	case GROVE_OP_FOLD:
		return GROVE_OP_UNFOLD;
	case GROVE_OP_UNFOLD:
		return GROVE_OP_FOLD;
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

/* The entries a folder that goes holds must all be the transaction's (counted in f), but for its
 * temporary entries (tag: recovery's, removed before anything else). */
static bool
holds_only_ours(struct grove_world *w, struct folders *f, const char *path, const char *tag)
{
	struct grove_node *n = grove_node_lookup(w->target, path);
	struct folder *d = folders_get(f, path, strlen(path), false);
	size_t ours = d ? d->kids : 0, there = 0;

	if (!n)
		return false;
	grove_node_foreach_child (n, kid)
		there += kid->orig_type != GROVE_FT_NONE &&
			 !(tag && grove_fs_is_temp_of(kid->name, tag));
	if (d)
		d->kids = 0;
	return there == ours;
}

/*
 * A sweep over ops [0, n) of txn from the last back, a batch of the budget at a time, each batch's
 * paths scanned first:
 * - REVERT: every op must be as the transaction left it; its inverse goes to plan (the stream's).
 * - CHECK (recovery): every op must be as before or after it (done or not), nothing changed; the
 *   ops done are marked in done, and the transaction's temporary entries found go to temps.
 * - RUN (recovery, after CHECK): the inverse of every op marked done, run batch by batch; no scan
 *   (the executor checks every op as it runs it).
 * The folders map carries what the checks of earlier ops need from later ones.
 */
struct temps;
struct heads;
static int find_temps(struct temps *tp, struct grove_node *dir, const char *path, const char *tag);

enum sweep_mode { SWEEP_REVERT, SWEEP_CHECK, SWEEP_RUN };

struct sweep {
	struct grove_session *s;
	int64_t txn;
	size_t n;
	enum sweep_mode mode;
	struct grove_plan *plan;            /* REVERT: where the inverses go */
	struct grove_session_reverted *res; /* REVERT: counts them */
	const char *tag;                    /* recovery: the transaction's temporary names */
	unsigned char *done;                /* recovery: a bit per op, set when it ran */
	struct temps *temps;                /* CHECK: the temporary entries found */
	struct heads *heads;                /* the blocks */
	struct grove_exec_blocks blocks;    /* RUN: the blocks of inverses left open */
	struct folders f;
	bool whole; /* an op or the disk asks for the whole revert or recovery */
};

/*
 * What to do for op, from the disk as w scanned it: 1 its inverse, 0 nothing (recovery: the op
 * never ran), -1 the whole way (or, in RUN, stuck). *present: the op's path holds an entry now.
 */
static int
decide(struct sweep *sw, struct grove_world *w, const struct grove_op *op, bool *present)
{
	struct grove_pstate before, after;
	bool visible, done;
	struct grove_pstate now = grove_session_disk_state(w, op->path, &visible);
	struct folder *d;

	grove_session_op_states(op, &before, &after);
	*present = false;
	if (visible) {
		done = grove_pstate_eq(&now, &after);
		if (!done && (sw->mode == SWEEP_REVERT || !grove_pstate_eq(&now, &before)))
			return -1;
		*present = now.type != GROVE_FT_NONE;
		/* A folder that goes holds only what the transaction made. */
		if (done && (op->kind == GROVE_OP_MKDIR || op->kind == GROVE_OP_UNFOLD) &&
		    !holds_only_ours(w, &sw->f, op->path, sw->tag))
			return -1;
		return done;
	}
	/* Inside a folder that is gone: nothing to put back, or a folder the transaction removed,
	 * which the inverse makes again first. */
	if (sw->mode != SWEEP_REVERT && before.type == GROVE_FT_NONE)
		return 0;
	d = folders_get(&sw->f, op->path, grove_path_parent_len(op->path), false);
	return d && d->made ? 1 : -1;
}

/* Notes what op leaves for the checks of the ops before it (act: decide's answer). */
static int
note_op(struct folders *f, const struct grove_op *op, int act, bool present)
{
	struct folder *d;

	if (op->kind == GROVE_OP_RMDIR && act == 1) {
		d = folders_get(f, op->path, strlen(op->path), true);
		if (!d)
			return -ENOMEM;
		d->made = true;
	}
	if (!present)
		return 0;
	d = folders_get(f, op->path, grove_path_parent_len(op->path), true);
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

/* Reads ops [first, end) of txn into b. */
static int
read_ops(struct grove_session *s, int64_t txn, size_t first, size_t end, struct grove_plan *b,
	 struct grove_error *err)
{
	int r = grove_journal_ops_range(s->journal, txn, first, end - first, b, err);

	if (r >= 0 && b->n_ops != end - first)
		r = grove_error_set(
			err, -GROVE_E_CONFIG, "journal '%s': transaction %lld lost its op %zu",
			grove_journal_name(s->journal), (long long)txn, first + b->n_ops);
	return r;
}

/* Hands the inverse of op to the sweep: the stream's plan (REVERT) or the batch's (RUN). */
static int
emit(struct sweep *sw, struct grove_plan *run, const struct grove_op *op, struct grove_error *err)
{
	if (add_inverse(sw->mode == SWEEP_REVERT ? sw->plan : run, op) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (sw->mode == SWEEP_RUN)
		return 0;
	if (sw->plan->sink == NULL)
		return -1; /* a batch could not be logged: the stream's end says why */
	sw->res->by_kind[inverse_of(op->kind)]++;
	return 0;
}

/* ---- the blocks (of a revert, and of a recovery) ---- */

/* A FOLD or UNFOLD op of the transaction, op h, and its block: ops (h, e). */
struct head {
	size_t h, e;
	struct grove_op op; /* its strings malloc'd */
};

/* Where a sweep back enters a block: at its last op, e - 1. */
struct entry {
	size_t e, h, i; /* i: the head's index in heads.v */
};

struct heads {
	struct head *v; /* by h */
	size_t n, cap;
	struct entry *order; /* by e descending, then h ascending (an outer block first) */
	size_t next;         /* the next block to enter */
};

static void
heads_release(struct heads *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		free(hs->v[i].op.path);
		free(hs->v[i].op.text);
		free(hs->v[i].op.old_text);
		free(hs->v[i].op.package);
	}
	free(hs->v);
	free(hs->order);
	memset(hs, 0, sizeof(*hs));
}

static char *
dup_or_null(const char *s, bool *failed)
{
	char *d = s ? strdup(s) : NULL;

	*failed |= s && !d;
	return d;
}

static int
heads_add(struct heads *hs, size_t h, const struct grove_op *op)
{
	struct head *x;
	bool failed = false;

	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? hs->cap * 2 : 16;

		x = realloc(hs->v, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		hs->v = x;
		hs->cap = cap;
	}
	x = &hs->v[hs->n++];
	memset(x, 0, sizeof(*x));
	x->h = h;
	x->e = h + 1;
	x->op.kind = op->kind;
	x->op.path = dup_or_null(op->path, &failed);
	x->op.text = dup_or_null(op->text, &failed);
	x->op.old_text = dup_or_null(op->old_text, &failed);
	x->op.package = dup_or_null(op->package, &failed);
	return failed ? -ENOMEM : 0;
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return x->h < y->h ? -1 : x->h > y->h;
}

static bool
is_block_op(const struct grove_op *op)
{
	return !op->recorded && (op->kind == GROVE_OP_FOLD || op->kind == GROVE_OP_UNFOLD);
}

/* Reads ops [0, n) of txn forward for its FOLD and UNFOLD ops and where their blocks end. */
static int
load_heads(struct grove_session *s, int64_t txn, size_t n, struct heads *hs,
	   struct grove_error *err)
{
	size_t batch = grove_session_plan_budget(), n_open = 0;
	size_t cap_open = 64;
	cleanup_free size_t *open = calloc(cap_open, sizeof(*open));
	int r = open ? 0 : -ENOMEM;

	for (size_t first = 0; first < n && r >= 0; first += batch) {
		size_t end = n - first > batch ? first + batch : n;
		struct grove_plan b;

		grove_plan_init(&b);
		r = read_ops(s, txn, first, end, &b, err);
		for (size_t i = 0; i < b.n_ops && r >= 0; i++) {
			const struct grove_op *op = &b.ops[i];

			while (n_open &&
			       !grove_path_under(op->path, hs->v[open[n_open - 1]].op.path))
				hs->v[open[--n_open]].e = first + i;
			if (!is_block_op(op))
				continue;
			if (n_open == cap_open) { /* (blocks nest as deep as paths go) */
				size_t *o = realloc(open, 2 * cap_open * sizeof(*o));

				if (!o) {
					r = -ENOMEM;
					break;
				}
				open = o;
				cap_open *= 2;
			}
			if (heads_add(hs, first + i, op) < 0)
				r = -ENOMEM;
			else
				open[n_open++] = hs->n - 1;
		}
		grove_plan_release(&b);
	}
	while (n_open)
		hs->v[open[--n_open]].e = n;
	if (r >= 0 && !(hs->order = calloc(hs->n + 1, sizeof(*hs->order))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < hs->n; i++)
		hs->order[i] = (struct entry){ .e = hs->v[i].e, .h = hs->v[i].h, .i = i };
	if (r >= 0)
		qsort(hs->order, hs->n, sizeof(*hs->order), cmp_entry);
	return r == -ENOMEM ? grove_error_set(err, -ENOMEM, "out of memory") : r;
}

/* The block whose op is op k (heads.v is by h). */
static const struct head *
head_at(const struct heads *hs, size_t k)
{
	size_t lo = 0, hi = hs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hs->v[mid].h < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < hs->n && hs->v[lo].h == k ? &hs->v[lo] : NULL;
}

static bool
is_done(const struct sweep *sw, size_t k)
{
	return sw->done[k / 8] & (1U << (k % 8));
}

/* Sweeping back to op k: the inverse of every block whose last op k is (outer first) goes first,
 * ahead of its block's inverses (REVERT; RUN: when the block's op ran); a folded path's folder is
 * one the inverse makes again (for the checks of the block's ops, which lie beneath a link once
 * the fold ran). */
static int
enter_blocks(struct sweep *sw, size_t k, struct grove_plan *run, struct grove_error *err)
{
	struct heads *hs = sw->heads;

	while (hs->next < hs->n && hs->order[hs->next].e == k + 1) {
		const struct head *x = &hs->v[hs->order[hs->next++].i];
		struct folder *d;
		int r = 0;

		if (x->h + 1 == x->e)
			continue; /* no block: its op goes as any op */
		if (sw->mode == SWEEP_REVERT || (sw->mode == SWEEP_RUN && is_done(sw, x->h)))
			r = emit(sw, run, &x->op, err);
		if (r < 0)
			return r;
		if (x->op.kind != GROVE_OP_FOLD || sw->mode == SWEEP_RUN)
			continue;
		d = folders_get(&sw->f, x->op.path, strlen(x->op.path), true);
		if (!d)
			return grove_error_set(err, -ENOMEM, "out of memory");
		d->made = true;
	}
	return 0;
}

/* Whether op k's inverse goes where the sweep meets it: not a block's op, which went ahead of its
 * block (enter_blocks), unless its block is empty. */
static bool
emits_here(const struct sweep *sw, const struct grove_op *op, size_t k)
{
	const struct head *x = is_block_op(op) ? head_at(sw->heads, k) : NULL;

	return !x || x->e == k + 1;
}

/* One batch of the sweep: ops [first, end). */
static int
sweep_batch(struct sweep *sw, size_t first, size_t end, struct grove_error *err)
{
	struct grove_exec_opts eo = { .temp_tag = sw->tag };
	struct grove_plan b, run;
	struct grove_world w;
	int r;

	grove_plan_init(&b);
	grove_plan_init(&run);
	grove_world_init(&w);
	r = read_ops(sw->s, sw->txn, first, end, &b, err);
	if (r >= 0 && sw->mode != SWEEP_RUN)
		r = scan_batch(sw->s, &w, &b, err);
	if (r >= 0 && sw->temps && find_temps(sw->temps, w.target, "", sw->tag) < 0)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = b.n_ops; i-- > 0 && r >= 0 && !sw->whole;) {
		const struct grove_op *op = &b.ops[i];
		size_t k = first + i;
		bool present;
		int act;

		if ((r = enter_blocks(sw, k, &run, err)) < 0)
			break;
		if (op->recorded && sw->mode != SWEEP_REVERT)
			continue; /* it changed nothing (plan.h) */
		if (sw->mode == SWEEP_RUN) {
			if (is_done(sw, k) && emits_here(sw, op, k))
				r = emit(sw, &run, op, err);
			continue;
		}
		act = invertible(op) ? decide(sw, &w, op, &present) : -1;
		if (act < 0)
			sw->whole = true;
		else if (note_op(&sw->f, op, act, present) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
		else if (act == 1 && sw->mode == SWEEP_CHECK)
			sw->done[k / 8] |= (unsigned char)(1U << (k % 8));
		else if (act == 1 && emits_here(sw, op, k))
			r = emit(sw, &run, op, err);
	}
	/* RUN: a block of inverses longer than what is left of the batch stays open for the next
	 * (exec_block.c), and the last batch finishes what is still open. */
	eo.blocks = &sw->blocks;
	eo.more_ops = first > 0;
	if (r >= 0 && (run.n_ops || (first == 0 && sw->blocks.n)))
		r = grove_exec_apply(&run, sw->s->target, NULL, &eo, err);
	grove_world_release(&w);
	grove_plan_release(&run);
	grove_plan_release(&b);
	return r;
}

/* The sweep of one transaction, sw->txn's ops [0, sw->n), keeping the folders' counts (a chain of
 * transactions sweeps each in turn on the same counts: chain_sweep). */
static int
sweep_txn(struct sweep *sw, struct grove_error *err)
{
	size_t batch = grove_session_plan_budget();
	int r = 0;

	sw->heads->next = 0;
	for (size_t end = sw->n; end > 0 && r >= 0 && !sw->whole;) {
		size_t first = end > batch ? end - batch : 0;

		r = sweep_batch(sw, first, end, err);
		end = first;
	}
	return r;
}

static int
sweep(struct sweep *sw, struct grove_error *err)
{
	int r = sweep_txn(sw, err);

	folders_release(&sw->f);
	grove_exec_blocks_release(&sw->blocks);
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

/* ---- a chain of transactions ---- */

/*
 * A rollback over several transactions streams as one revert when no path is touched by two of
 * them: then each path's op is the only one of the chain, its inverse is the whole revert's op
 * for that path, and sweeping the newest transaction back, then the one before it, and so on,
 * checks every path against the disk as the whole revert would (a path two of them touch is, for
 * the older one, not as it left it, which would send the chain the whole way anyway, too late to
 * say the same as the whole way: so such a chain is found first). The folders' counts carry from
 * one transaction's sweep to the next: a folder an older transaction made may hold a newer one's
 * entries, which go first.
 *
 * Finding a path two transactions share without holding every path: a Bloom filter of 16 bits
 * per op (2 MiB for a million) takes the paths, transaction after transaction, and a path it may
 * already hold is kept as a candidate (about one in 2,000 by chance); a second read counts the
 * transactions each candidate is in. Any candidate in two is a shared path: the whole way.
 */
struct bloom {
	uint64_t *bits;
	size_t mask; /* the number of bits - 1, a power of two - 1 */
};

enum { BLOOM_K = 11 };

/* Sets path's bits; true when every one of them was set already. */
static bool
bloom_add(struct bloom *b, const char *path)
{
	uint64_t h1 = grove_hash_str(path);
	uint64_t h2 = (h1 >> 33 | h1 << 31) * 0x9e3779b97f4a7c15ULL | 1;
	bool all = true;

	for (unsigned i = 0; i < BLOOM_K; i++) {
		size_t bit = (size_t)(h1 + i * h2) & b->mask;
		uint64_t m = (uint64_t)1 << (bit % 64);

		all = all && (b->bits[bit / 64] & m);
		b->bits[bit / 64] |= m;
	}
	return all;
}

/* Reads the ops of txns[0, n) forward, a batch at a time, each handed to fn with the index of its
 * transaction; stops at fn's first non-zero answer, which it returns. */
static int
chain_read(struct grove_session *s, const int64_t *txns, const size_t *n_ops, size_t n,
	   int (*fn)(void *ctx, size_t t, const struct grove_op *op), void *ctx,
	   struct grove_error *err)
{
	size_t batch = grove_session_plan_budget();
	int r = 0;

	for (size_t t = 0; t < n && r == 0; t++)
		for (size_t first = 0; first < n_ops[t] && r == 0; first += batch) {
			size_t end = n_ops[t] - first > batch ? first + batch : n_ops[t];
			struct grove_plan b;

			grove_plan_init(&b);
			r = read_ops(s, txns[t], first, end, &b, err);
			for (size_t i = 0; i < b.n_ops && r == 0; i++)
				r = fn(ctx, t, &b.ops[i]);
			grove_plan_release(&b);
		}
	return r;
}

struct shared {
	struct bloom bloom;
	struct folders cands; /* kids: 1 + the index of the last transaction seen at the path */
};

static int
shared_candidate(void *ctx, size_t t, const struct grove_op *op)
{
	struct shared *sh = ctx;

	(void)t;
	if (op->path && bloom_add(&sh->bloom, op->path) &&
	    !folders_get(&sh->cands, op->path, strlen(op->path), true))
		return -ENOMEM;
	return 0;
}

static int
shared_count(void *ctx, size_t t, const struct grove_op *op)
{
	struct shared *sh = ctx;
	struct folder *d =
		op->path ? folders_get(&sh->cands, op->path, strlen(op->path), false) : NULL;

	if (!d)
		return 0;
	if (d->kids && d->kids != t + 1)
		return 1; /* a path of two transactions */
	d->kids = t + 1;
	return 0;
}

/* 1 when a path is touched by two of txns[0, n), else 0. */
static int
chain_shares_path(struct grove_session *s, const int64_t *txns, const size_t *n_ops, size_t n,
		  size_t total, struct grove_error *err)
{
	struct shared sh = { 0 };
	size_t bits = 1024;
	int r;

	while (bits < total * 16)
		bits *= 2;
	sh.bloom.mask = bits - 1;
	sh.bloom.bits = calloc(bits / 64, sizeof(uint64_t));
	if (!sh.bloom.bits)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = chain_read(s, txns, n_ops, n, shared_candidate, &sh, err);
	free(sh.bloom.bits);
	if (r == 0 && sh.cands.n)
		r = chain_read(s, txns, n_ops, n, shared_count, &sh, err);
	folders_release(&sh.cands);
	if (r == -ENOMEM)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	return r;
}

/* The REVERT sweep of txns[0, n), newest first, on one folders' count: sw->whole when any op
 * or the disk asks for the whole way. */
static int
chain_sweep(struct sweep *sw, const int64_t *txns, const size_t *n_ops, size_t n,
	    struct grove_error *err)
{
	int r = 0;

	for (size_t t = n; t-- > 0 && r >= 0 && !sw->whole;) {
		struct heads heads = { 0 };

		sw->txn = txns[t];
		sw->n = n_ops[t];
		r = load_heads(sw->s, sw->txn, sw->n, &heads, err);
		sw->heads = &heads;
		if (r >= 0)
			r = sweep_txn(sw, err);
		sw->heads = NULL;
		heads_release(&heads);
	}
	folders_release(&sw->f);
	grove_exec_blocks_release(&sw->blocks);
	return r;
}

/* The ops of each of txns[0, n) into n_ops, and their sum. */
static int
chain_sizes(struct grove_session *s, const int64_t *txns, size_t n, size_t *n_ops,
	    size_t *ret_total, struct grove_error *err)
{
	*ret_total = 0;
	for (size_t t = 0; t < n; t++) {
		struct grove_txn hdr = { 0 };
		int r = grove_journal_get(s->journal, txns[t], &hdr, err);

		n_ops[t] = hdr.n_ops;
		grove_txn_release(&hdr);
		if (r < 0)
			return r;
		*ret_total += n_ops[t];
	}
	return 0;
}

int
grove_session_revert_chain_streamed(struct grove_session *s, const int64_t *txns, size_t n,
				    const struct grove_session_txn_opts *opts,
				    struct grove_session_reverted *res, struct grove_error *err)
{
	struct grove_session_txn_opts o = *opts;
	struct grove_session_stream st;
	struct grove_session_txn t = { 0 };
	struct grove_journal_pkg *pkgs = NULL;
	cleanup_free size_t *n_ops = calloc(n ? n : 1, sizeof(*n_ops));
	struct grove_plan plan;
	size_t n_pkgs = 0;
	bool whole = false;
	int r;

	memset(res, 0, sizeof(*res));
	if (!n_ops)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = chain_sizes(s, txns, n, n_ops, &res->n_ops, err);
	if (r < 0 || !n || res->n_ops <= grove_session_plan_budget())
		return r < 0 ? r : 0;
	if (n > 1) {
		r = chain_shares_path(s, txns, n_ops, n, res->n_ops, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	grove_plan_init(&plan);
	/* Groups go the whole way (the commit writes their files), as does any conflict there. */
	r = grove_session_revert_groups(s, txns, n, &plan, err);
	if (r >= 0 && (s->n_alt || plan.n_conflicts)) {
		grove_session_forget_changes(s);
		grove_plan_release(&plan);
		return 0;
	}
	if (r >= 0)
		r = grove_session_revert_pkgs(s, txns, n, err);
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
	{
		struct sweep sw = { .s = s, .mode = SWEEP_REVERT, .plan = &plan, .res = res };

		r = chain_sweep(&sw, txns, n_ops, n, err);
		whole = sw.whole;
	}
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
				       (long long)txns[n - 1]);
	r = run_logged(s, &t, err);
	if (r >= 0 || r == -GROVE_E_NOT_DURABLE)
		res->txn = t.id;
	return r < 0 ? r : 1;
}

int
grove_session_revert_streamed(struct grove_session *s, int64_t txn,
			      const struct grove_session_txn_opts *opts,
			      struct grove_session_reverted *res, struct grove_error *err)
{
	return grove_session_revert_chain_streamed(s, &txn, 1, opts, res, err);
}

/* ---- recovery ---- */

/*
 * Recovery of a transaction over the budget goes the same way, from the log a batch at a time,
 * with the whole way's answers: its temporary entries are found in the folders of its ops,
 * checked (each link's text one the transaction made or removed) and removed first; then every
 * op must be as before or after it (a CHECK sweep, nothing changed), and the inverse of every op
 * that ran is run, batch by batch from the last (RUN). A block is as in a revert: a fold's (or an
 * unfold's) inverse goes ahead of its block's when the fold ran; a fold that ran leaves its
 * block's paths beneath a link, where all of them count as done (the old folder, swapped out
 * with what was left in it, is a temporary entry removed first, and the inverse unfold makes
 * every entry again). The inverses' blocks may span RUN's batches: they stay open from one to
 * the next (exec_block.c). A crash inside is recovered the same way again: every change made
 * carries the transaction's tag.
 */

struct temp {
	char *dir;  /* the folder, relative to the target ("" for the target) */
	char *name; /* the temporary entry in it */
};

struct temp_text {
	char *text;  /* a link text a temporary entry holds */
	char *where; /* that link, for the message */
	bool known;  /* one of the transaction's */
};

struct temps {
	struct temp *t;
	size_t n, cap;
	struct temp_text *x;
	size_t n_x, cap_x;
};

static void
temps_release(struct temps *tp)
{
	for (size_t i = 0; i < tp->n; i++) {
		free(tp->t[i].dir);
		free(tp->t[i].name);
	}
	for (size_t i = 0; i < tp->n_x; i++) {
		free(tp->x[i].text);
		free(tp->x[i].where);
	}
	free(tp->t);
	free(tp->x);
	memset(tp, 0, sizeof(*tp));
}

static int
temps_add(struct temps *tp, const char *dir, const char *name)
{
	struct temp *t;

	for (size_t i = 0; i < tp->n; i++) /* a folder is scanned with every batch in it */
		if (!strcmp(tp->t[i].dir, dir) && !strcmp(tp->t[i].name, name))
			return 0;
	if (tp->n == tp->cap) {
		size_t cap = tp->cap ? tp->cap * 2 : 8;

		t = realloc(tp->t, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		tp->t = t;
		tp->cap = cap;
	}
	t = &tp->t[tp->n];
	t->dir = strdup(dir);
	t->name = strdup(name);
	if (!t->dir || !t->name) {
		free(t->dir);
		free(t->name);
		return -ENOMEM;
	}
	tp->n++;
	return 0;
}

/* Finds the temporary entries of tag in the folders w scanned, as recover_txn's remove_temps. */
static int
find_temps(struct temps *tp, struct grove_node *dir, const char *path, const char *tag)
{
	if (dir->orig_type != GROVE_FT_DIR || !dir->listed)
		return 0;
	grove_node_foreach_child (dir, kid) {
		bool temp = grove_fs_is_temp_of(kid->name, tag);
		int r = 0;

		if (kid->orig_type == GROVE_FT_DIR && !temp) {
			cleanup_free char *kp = path[0] ? grove_strdupf("%s/%s", path, kid->name)
							: strdup(kid->name);

			r = kp ? find_temps(tp, kid, kp, tag) : -ENOMEM;
		} else if (temp && kid->orig_type != GROVE_FT_NONE) {
			r = temps_add(tp, path, kid->name);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int
text_add(struct temps *tp, char *text, const char *dir_path, const char *name)
{
	struct temp_text *x;

	if (tp->n_x == tp->cap_x) {
		size_t cap = tp->cap_x ? tp->cap_x * 2 : 8;

		x = realloc(tp->x, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		tp->x = x;
		tp->cap_x = cap;
	}
	x = &tp->x[tp->n_x];
	x->text = text;
	x->where = grove_strdupf("%s/%s", dir_path, name);
	x->known = false;
	if (!x->where)
		return -ENOMEM;
	tp->n_x++;
	return 0;
}

/* Keeps a link text a temporary entry holds, to be looked for among the transaction's. */
static int
keep_text(void *ctx, int dfd, const char *dir_path, const char *name, const char *text,
	  struct grove_error *err)
{
	char *copy = strdup(text);

	(void)dfd;
	if (!copy || text_add(ctx, copy, dir_path, name) < 0) {
		free(copy);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int
cmp_text(const void *a, const void *b)
{
	return strcmp(((const struct temp_text *)a)->text, ((const struct temp_text *)b)->text);
}

/* Marks the temporary texts equal to text known. */
static void
mark_known(struct temps *tp, const char *text)
{
	struct temp_text key = { .text = (char *)text };
	struct temp_text *x;

	if (!text || !tp->n_x)
		return;
	x = bsearch(&key, tp->x, tp->n_x, sizeof(*tp->x), cmp_text);
	if (!x)
		return;
	while (x > tp->x && !strcmp(x[-1].text, text))
		x--;
	for (; x < tp->x + tp->n_x && !strcmp(x->text, text); x++)
		x->known = true;
}

/* Reads ops [0, n) of txn forward for the temporary texts that are the transaction's. */
static int
read_forward(struct grove_session *s, int64_t txn, size_t n, struct temps *tp,
	     struct grove_error *err)
{
	size_t batch = grove_session_plan_budget();
	int r = 0;

	if (tp->n_x)
		qsort(tp->x, tp->n_x, sizeof(*tp->x), cmp_text);
	for (size_t first = 0; first < n && r >= 0; first += batch) {
		size_t end = n - first > batch ? first + batch : n;
		struct grove_plan b;

		grove_plan_init(&b);
		r = read_ops(s, txn, first, end, &b, err);
		for (size_t i = 0; i < b.n_ops && r >= 0; i++) {
			const struct grove_op *op = &b.ops[i];

			if (op->recorded)
				continue;
			mark_known(tp, op->text);
			mark_known(tp, op->old_text);
		}
		grove_plan_release(&b);
	}
	return r;
}

/* Reads what the temporary entries found hold. */
static int
temps_texts(struct grove_session *s, struct temps *tp, struct grove_error *err)
{
	int r = 0;

	for (size_t i = 0; i < tp->n && r >= 0; i++) {
		const char *dir = tp->t[i].dir[0] ? tp->t[i].dir : ".";
		cleanup_fd int fd = grove_fs_open_dir_beneath(s->target->fd, dir, err);

		r = fd < 0 ? fd
			   : grove_session_temp_walk(fd, dir, tp->t[i].name, false, keep_text, tp,
						     err);
	}
	return r;
}

/*
 * The temporary entries checked in memory that does not grow with them: each stands for the op
 * path its name gives (.grove-TAG.K.BASE in folder D: D/BASE, a path the transaction touched
 * once), and every link inside it must be where an op under that path puts it, with the op's
 * text or old text. A forward read of the ops looks each op's place up in its entry (a
 * readlink) and counts the matches; a walk counts the links. Equal counts for every entry: all
 * are the transaction's (1). The removal name (.grove-TAG.rm in D: the link a removal had set
 * aside) holds one link, whose text must be a text of an op in D. Anything else (a name
 * cut short, an entry nested in another, a link that is not where an op puts it): 0, and the
 * texts are kept and looked for as before.
 */
struct place {
	int fd;     /* the folder of the entry (beneath the target) */
	char *path; /* the op path the entry stands for (its folder, for a removal name) */
	char *text; /* a removal name's text (grove_fs_removal_name: a link of one op in path) */
	size_t links, matched;
	char *sub;  /* the folder inside the entry last looked in (ops come folder by folder) */
	int sub_fd; /* open, beneath fd, or -1 */
};

static int
count_link(void *ctx, int dfd, const char *dir_path, const char *name, const char *text,
	   struct grove_error *err)
{
	(void)dfd, (void)dir_path, (void)name, (void)text, (void)err;
	((struct place *)ctx)->links++;
	return 0;
}

/* The op path temporary entry t of tag stands for, or NULL (its name may be cut short). */
static char *
temp_op_path(const struct temp *t, const char *tag)
{
	const char *p = t->name + strlen(".grove-") + strlen(tag) + 1;

	if (strlen(t->name) >= NAME_MAX || *p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '.' || !p[1])
		return NULL;
	return t->dir[0] ? grove_strdupf("%s/%s", t->dir, p + 1) : strdup(p + 1);
}

/* Whether op made or removed a link in folder pl->path with the text the removal name there holds
 * (a removal of the run, or of its undo). */
static bool
op_removed_there(const struct place *pl, const struct grove_op *op)
{
	size_t l = strlen(pl->path);
	const char *rest = op->path;

	if (l && (strncmp(op->path, pl->path, l) != 0 || op->path[l] != '/'))
		return false;
	rest += l ? l + 1 : 0;
	return !strchr(rest, '/') && ((op->text && !strcmp(op->text, pl->text)) ||
				      (op->old_text && !strcmp(op->old_text, pl->text)));
}

/* Whether op's link is at rest (a path inside the entry of place pl), with one of op's texts. */
static bool
op_link_there(struct place *pl, const char *name, const char *rest, const struct grove_op *op)
{
	cleanup_free char *text = NULL;
	const char *slash = strrchr(rest, '/');
	struct grove_error ignore;
	int dfd = pl->fd;

	if (*rest) {
		char *sub = slash ? grove_strdupf("%s/%.*s", name, (int)(slash - rest), rest)
				  : strdup(name);

		if (!sub)
			return false;
		if (!pl->sub || strcmp(sub, pl->sub) != 0) {
			grove_fd_close(pl->sub_fd);
			free(pl->sub);
			pl->sub = sub;
			pl->sub_fd = grove_fs_open_dir_beneath(pl->fd, sub, &ignore);
		} else {
			free(sub);
		}
		if (pl->sub_fd < 0)
			return false;
		dfd = pl->sub_fd;
		name = slash ? slash + 1 : rest;
	}
	if (grove_fs_readlink_at(dfd, name, &text, &ignore) < 0)
		return false;
	return (op->text && !strcmp(text, op->text)) ||
	       (op->old_text && !strcmp(text, op->old_text));
}

static int
temps_verify(struct grove_session *s, int64_t txn, size_t n, const struct temps *tp,
	     const char *tag, struct grove_error *err)
{
	size_t batch = grove_session_plan_budget();
	struct place *pl = calloc(tp->n + 1, sizeof(*pl));
	int r = pl ? 0 : grove_error_set(err, -ENOMEM, "out of memory"), ok = 1;

	for (size_t i = 0; i < tp->n; i++)
		if (pl)
			pl[i].fd = pl[i].sub_fd = -1;
	for (size_t i = 0; i < tp->n && r >= 0 && ok; i++) {
		const char *dir = tp->t[i].dir[0] ? tp->t[i].dir : ".";

		bool rm = grove_fs_is_removal_name(tp->t[i].name, tag);

		pl[i].path = rm ? strdup(tp->t[i].dir) : temp_op_path(&tp->t[i], tag);
		ok = pl[i].path != NULL;
		if (ok && (pl[i].fd = grove_fs_open_dir_beneath(s->target->fd, dir, err)) < 0)
			r = pl[i].fd;
		if (ok && r >= 0)
			r = grove_session_temp_walk(pl[i].fd, dir, tp->t[i].name, false, count_link,
						    &pl[i], err);
		/* The removal name holds one link, matched by its text to an op in its folder. */
		if (ok && r >= 0 && rm) {
			struct grove_error ignore;

			ok = pl[i].links == 1 && grove_fs_readlink_at(pl[i].fd, tp->t[i].name,
								      &pl[i].text, &ignore) >= 0;
		}
	}
	for (size_t first = 0; first < n && r >= 0 && ok; first += batch) {
		size_t end = n - first > batch ? first + batch : n;
		struct grove_plan b;

		grove_plan_init(&b);
		r = read_ops(s, txn, first, end, &b, err);
		for (size_t k = 0; k < b.n_ops && r >= 0; k++)
			for (size_t i = 0; i < tp->n; i++) {
				const struct grove_op *op = &b.ops[k];
				size_t l = strlen(pl[i].path);

				if (pl[i].text) {
					pl[i].matched |=
						!op->recorded && op_removed_there(&pl[i], op);
					continue;
				}
				if (op->recorded || strncmp(op->path, pl[i].path, l) != 0 ||
				    (op->path[l] && op->path[l] != '/'))
					continue;
				pl[i].matched +=
					op_link_there(&pl[i], tp->t[i].name,
						      op->path[l] ? op->path + l + 1 : "", op);
			}
		grove_plan_release(&b);
	}
	for (size_t i = 0; i < tp->n && pl; i++) {
		ok &= pl[i].path && pl[i].matched == pl[i].links;
		free(pl[i].path);
		free(pl[i].text);
		free(pl[i].sub);
		grove_fd_close(pl[i].sub_fd);
		grove_fd_close(pl[i].fd);
	}
	free(pl);
	return r < 0 ? r : ok;
}

/* Removes the temporary entries found, each folder synced after: each link checked against the
 * texts kept (tp->x), or, when verified (temps_verify), as it is. */
static int
remove_temps(struct grove_session *s, const struct temps *tp, const char *tag, bool verified,
	     struct grove_error *err)
{
	cleanup_free const char **texts = calloc(tp->n_x + 1, sizeof(*texts));
	int r = 0;

	if (!texts)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < tp->n_x; i++)
		texts[i] = tp->x[i].text;
	for (size_t i = 0; i < tp->n && r >= 0; i++) {
		const char *dir = tp->t[i].dir[0] ? tp->t[i].dir : ".";
		cleanup_fd int fd = grove_fs_open_dir_beneath(s->target->fd, dir, err);

		if (fd < 0)
			return fd;
		r = grove_session_remove_temp(fd, dir, tp->t[i].name, verified ? NULL : texts,
					      tp->n_x, tag, err);
		if (r >= 0)
			r = grove_fs_sync(fd, err);
	}
	return r;
}

/* Checks and removes the temporary entries found: verified in place (temps_verify), or else each
 * link's text kept and looked for among the transaction's (a text it never made: STUCK). */
static int
check_temps(struct grove_session *s, int64_t txn, size_t n, struct temps *tp, const char *tag,
	    struct grove_error *err)
{
	int r = temps_verify(s, txn, n, tp, tag, err);

	if (r > 0)
		return remove_temps(s, tp, tag, true, err);
	if (r == 0)
		r = temps_texts(s, tp, err);
	if (r >= 0)
		r = read_forward(s, txn, n, tp, err);
	for (size_t i = 0; i < tp->n_x && r >= 0; i++)
		if (!tp->x[i].known)
			r = grove_error_set(err, -GROVE_E_STUCK,
					    "temporary link '%s' points to '%s', which the "
					    "interrupted transaction never made",
					    tp->x[i].where, tp->x[i].text);
	return r < 0 ? r : remove_temps(s, tp, tag, false, err);
}

int
grove_session_recover_streamed(struct grove_session *s, int64_t txn, size_t n_done, const char *tag,
			       struct grove_error *err)
{
	struct temps tp = { 0 };
	struct heads heads = { 0 };
	struct grove_txn hdr = { 0 };
	struct sweep sw = { .s = s, .txn = txn, .tag = tag, .mode = SWEEP_CHECK, .temps = &tp };
	int r = grove_journal_get(s->journal, txn, &hdr, err);

	sw.n = hdr.n_ops < n_done ? hdr.n_ops : n_done;
	grove_txn_release(&hdr);
	if (r < 0 || sw.n <= grove_session_plan_budget())
		return r < 0 ? r : 0;
	/* A bit per op: an eighth of a byte where the whole way holds a few hundred bytes. */
	sw.done = calloc(sw.n / 8 + 1, 1);
	if (!sw.done)
		return grove_error_set(err, -ENOMEM, "out of memory");
	sw.heads = &heads;
	r = load_heads(s, txn, sw.n, &heads, err);
	if (r >= 0)
		r = sweep(&sw, err);
	if (r >= 0 && !sw.whole && tp.n)
		r = check_temps(s, txn, sw.n, &tp, tag, err);
	temps_release(&tp);
	if (r >= 0 && !sw.whole) {
		sw.mode = SWEEP_RUN;
		sw.temps = NULL;
		r = sweep(&sw, err);
	}
	free(sw.done);
	heads_release(&heads);
	if (r < 0 || sw.whole)
		return r < 0 ? r : 0;
	return 1;
}
