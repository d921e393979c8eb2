/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What grove owns in a target, handed out one entry at a time in tree order, read from the log in
 * bounded memory (grove_journal_owned_walk; issue 41 item 2). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/*
 * Why this is bounded. grove_journal_owned replays every op into a map of every path: 155 MiB at
 * 1M links. But the ops a plan logs come in the order the planner walks the target: depth first,
 * a folder's entries by name, a folder's removal (RMDIR) after its entries. A stretch of one
 * transaction's ops that keeps to such a walk (a *run*) can be merged with the others the way
 * sorted lists are merged, one op at a time, keeping only the path being walked: every op at a
 * path comes together with the other runs' ops at it, before the walk leaves it, and the last of
 * them (in log order) says what the path is now. So:
 *
 *   1. The ops are read once, checked as grove_journal_owned checks them, and cut into runs. A
 *      run of at least RUN_BIG ops is remembered as (transaction, first op, count, seq) and read
 *      again from the log when merged (a cursor: one statement on one chunk at a time); the ops of
 *      shorter runs are kept (the pool, sorted by path when the reading is done).
 *   2. The runs and the pool are merged over a stack of the path walked: an op at a path on the
 *      stack (a run coming back up to a folder, for its RMDIR) is taken first, into that path's
 *      frame, which stays (other runs may have entries beneath it still); otherwise the op whose
 *      path comes first in the walk. Leaving a path hands out what it is: the entry its last op
 *      set (by log order), unless a FOLD at a folder above it came later (a FOLD ends everything
 *      beneath it that was set before it, as in grove_owned_replay).
 *
 * When a run is cut, why: an op that goes back to a path the walk has passed, or a FOLD that
 * comes back up to its folder (its entries from other runs would already be handed out). A log
 * whose runs or pool grow past CURSORS_MAX or POOL_MAX (a history of many interleaved small
 * transactions) is handed out from grove_journal_owned's map instead, in the same order.
 */

#define RUN_BIG     512
#define CURSORS_MAX 64
#define POOL_MAX    ((size_t)32 * 1024)

/* The bounds, which tests change (GROVE_OWNED_RUN=N: runs of N ops or more are read back, with up
 * to 4,096 cursors, so that small logs take the merge's every path; 0: always the whole map). */
struct bounds {
	size_t run_big, cursors_max, pool_max;
};

static struct bounds
bounds_get(void)
{
	const char *e = getenv("GROVE_OWNED_RUN");
	char *end;
	unsigned long v;

	if (!e || !*e)
		return (struct bounds){ RUN_BIG, CURSORS_MAX, POOL_MAX };
	v = strtoul(e, &end, 10);
	if (*end || v > RUN_BIG)
		return (struct bounds){ RUN_BIG, CURSORS_MAX, POOL_MAX };
	if (v == 0)
		return (struct bounds){ 1, 0, 0 };
	return (struct bounds){ v, 4096, POOL_MAX };
}

/* Compares the components of a and b at their first difference: < 0, 0 (one is an ancestor of
 * the other, or equal) or > 0; *ret_len is the length of the common prefix of whole components
 * (the shorter path's length when one is an ancestor). */
static int
branch_cmp(const char *a, const char *b, size_t *ret_len)
{
	size_t i = 0, last = 0;

	for (;; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (x == '/' && y == '/') {
			last = i;
			continue;
		}
		if (x == y && x)
			continue;
		if ((!x || x == '/') && (!y || y == '/')) {
			*ret_len = i;
			return 0; /* equal, or one ends here: an ancestor */
		}
		*ret_len = last;
		/* The shorter component sorts first ('/' and the end are below every byte). */
		if (!x || x == '/')
			return -1;
		if (!y || y == '/')
			return 1;
		return x < y ? -1 : 1;
	}
}

/* Whether a is b or a folder above it. */
static bool
at_or_above(const char *a, size_t alen, const char *b)
{
	return strncmp(a, b, alen) == 0 && (b[alen] == '\0' || b[alen] == '/' || alen == 0);
}

/* The walk order: a folder before what it holds, names compared bytewise. */
static int
walk_cmp(const char *a, const char *b)
{
	size_t l;
	int c = branch_cmp(a, b, &l);

	if (c)
		return c;
	return strlen(a) < strlen(b) ? -1 : strlen(a) > strlen(b);
}

/* An op as the merge takes it. */
struct wop {
	const char *path, *text, *package;
	enum grove_op_kind kind;
	uint64_t seq; /* in log order, 1 for the first op of the target */
};

/* A run read back from the log. */
struct cursor {
	int64_t txn, first, n; /* its ops: first .. first + n - 1 of txn */
	uint64_t seq0;         /* the seq of its first op */
	int64_t at;            /* ops of it handed to the merge */
	sqlite3_stmt *s;
	struct grove_chunk_in c;
	int64_t c_at; /* the op number of the chunk's next op */
	struct wop head;
	bool live; /* head holds an op */
};

/* The pool's ops (copies). */
struct pool {
	struct wop *v;
	size_t n, cap;
};

/* A stack entry: one component of the path walked. */
struct frame {
	size_t len;    /* of the path up to and with this component */
	uint64_t best; /* seq of the last op at it (0: none) */
	enum grove_op_kind kind;
	char *text, *package; /* of that op (owned, reused from frame to frame) */
	size_t text_cap, pkg_cap;
	bool has_text, has_pkg;
	uint64_t fold_above; /* latest FOLD at a folder above it */
	uint64_t fold_here;  /* latest FOLD at it */
};

struct walk {
	struct grove_journal *j;
	grove_owned_fn fn;
	void *arg;
	struct grove_error *err;
	char path[PATH_MAX + 1];
	struct frame *f;
	size_t depth, cap; /* f[0] is the target itself, never handed out */
	struct cursor *cur;
	size_t n_cur;
	struct pool pool;
	size_t pool_at;
	struct bounds b;
};

static int
set_str(char **buf, size_t *cap, const char *s)
{
	size_t l = strlen(s) + 1;

	if (l > *cap) {
		size_t ncap = l < 64 ? 64 : l * 2;
		char *n = realloc(*buf, ncap);

		if (!n)
			return -ENOMEM;
		*buf = n;
		*cap = ncap;
	}
	memcpy(*buf, s, l);
	return 0;
}

/* Hands out the top frame's entry (when it is one) and drops the frame. */
static int
pop(struct walk *w)
{
	struct frame *t = &w->f[w->depth - 1];
	int r = 0;

	if (t->best && t->best > t->fold_above && t->kind != GROVE_OP_UNLINK &&
	    t->kind != GROVE_OP_RMDIR) {
		struct grove_owned o = {
			.path = w->path,
			.text = t->has_text ? t->text : NULL,
			.package = t->has_pkg ? t->package : NULL,
		};

		w->path[t->len] = '\0';
		r = w->fn(w->arg, &o);
	}
	w->depth--;
	w->path[w->depth ? w->f[w->depth - 1].len : 0] = '\0';
	return r;
}

/* Makes the walked path op->path: frames left (handed out) and entered as needed. */
static int
walk_to(struct walk *w, const char *p)
{
	int r;

	while (w->depth > 1 && !at_or_above(w->path, w->f[w->depth - 1].len, p))
		if ((r = pop(w)) < 0)
			return r;
	while (p[w->f[w->depth - 1].len] != '\0') {
		const struct frame *up = &w->f[w->depth - 1];
		size_t start = up->len + (up->len ? 1 : 0);
		size_t end = start + strcspn(p + start, "/");
		struct frame *t;

		if (w->depth == w->cap) {
			size_t ncap = w->cap * 2;
			struct frame *nf = realloc(w->f, ncap * sizeof(*nf));

			if (!nf)
				return -ENOMEM;
			memset(nf + w->cap, 0, (ncap - w->cap) * sizeof(*nf));
			w->f = nf;
			w->cap = ncap;
			up = &w->f[w->depth - 1];
		}
		t = &w->f[w->depth];
		t->fold_above = up->fold_above > up->fold_here ? up->fold_above : up->fold_here;
		t->fold_here = 0;
		t->best = 0;
		t->len = end;
		memcpy(w->path, p, end);
		w->path[end] = '\0';
		w->depth++;
	}
	return 0;
}

/* The frame of the path p at or above the walked path (plen: its length). */
static size_t
frame_of(const struct walk *w, size_t plen)
{
	size_t k = w->depth - 1;

	while (k > 0 && w->f[k].len > plen)
		k--;
	return k;
}

/* Applies op: at a path being walked (up: its frame, which stays where it is: other runs may
 * still have entries beneath it), else at its place in the walk, made the walked path. */
static int
apply(struct walk *w, const struct wop *op, bool up)
{
	struct frame *t;
	size_t k;
	int r = 0;

	if (up) {
		k = frame_of(w, strlen(op->path));
	} else {
		r = walk_to(w, op->path);
		k = w->depth - 1;
	}
	if (r < 0)
		return r;
	t = &w->f[k];
	if (op->kind == GROVE_OP_FOLD && op->seq > t->fold_here) {
		t->fold_here = op->seq;
		/* Frames beneath it (none, by the runs' cut): it ends what they set before. */
		for (size_t d = k + 1; d < w->depth; d++)
			if (w->f[d].fold_above < op->seq)
				w->f[d].fold_above = op->seq;
	}
	if (op->seq < t->best)
		return 0;
	switch (op->kind) {
	case GROVE_OP_MKDIR:
	case GROVE_OP_UNFOLD:
	case GROVE_OP_LINK:
	case GROVE_OP_RELINK:
	case GROVE_OP_ADOPT:
	case GROVE_OP_FOLD:
	case GROVE_OP_UNLINK:
	case GROVE_OP_RMDIR:
		break;
	default:
		return 0; /* never logged (plan.h) */
	}
	t->best = op->seq;
	t->kind = op->kind;
	t->has_text = op->text && op->kind != GROVE_OP_MKDIR && op->kind != GROVE_OP_UNFOLD &&
		      op->kind != GROVE_OP_UNLINK && op->kind != GROVE_OP_RMDIR;
	t->has_pkg = op->package != NULL;
	if ((t->has_text && set_str(&t->text, &t->text_cap, op->text) < 0) ||
	    (t->has_pkg && set_str(&t->package, &t->pkg_cap, op->package) < 0))
		return -ENOMEM;
	return 0;
}

/* ---- the runs read back ---- */

static const char SQL_RUN[] = "SELECT first_seq, n, body FROM op_chunks WHERE txn_id = ?1"
			      " AND first_seq >= coalesce((SELECT max(first_seq) FROM op_chunks"
			      " WHERE txn_id = ?1 AND first_seq <= ?2), 0) ORDER BY first_seq";

/* The cursor's next op into head (live false at its end). The log was read and checked whole
 * just before, in the same read transaction: what differs now is an error. */
static int
cursor_next(struct walk *w, struct cursor *c)
{
	struct grove_chunk_op op;
	const char *why = NULL;

	c->live = false;
	if (c->at >= c->n)
		return 0;
	for (;;) {
		if (c->c.body && c->c_at < c->c.first + c->c.n) {
			why = grove_journal_chunk_next(&c->c, &op);
			if (why)
				break;
			if (c->c_at++ < c->first + c->at)
				continue; /* before the run, in its first chunk */
			c->head = (struct wop){ .path = op.path,
						.text = op.text,
						.package = op.package,
						.kind = op.kind,
						.seq = c->seq0 + (uint64_t)c->at };
			c->at++;
			c->live = true;
			return 0;
		}
		int rc = sqlite3_step(c->s);

		if (rc != SQLITE_ROW) {
			if (rc != SQLITE_DONE)
				return grove_journal_fail(w->j, rc, w->err, "read");
			why = "its ops changed while they were read";
			break;
		}
		why = grove_journal_chunk_open(c->s, 0, &c->c);
		if (why)
			break;
		c->c_at = c->c.first;
	}
	return grove_error_set(w->err, -GROVE_E_CONFIG,
			       "journal '%s': transaction %" PRId64 ", op %" PRId64 ": %s",
			       w->j->name, c->txn, c->first + c->at, why);
}

static int
cursor_open(struct walk *w, struct cursor *c)
{
	int rc = sqlite3_prepare_v2(w->j->db, SQL_RUN, -1, &c->s, NULL);

	if (rc != SQLITE_OK)
		return grove_journal_fail(w->j, rc, w->err, "read");
	sqlite3_bind_int64(c->s, 1, c->txn);
	sqlite3_bind_int64(c->s, 2, c->first);
	return cursor_next(w, c);
}

/* ---- reading the log: runs and the pool ---- */

/* Where a run stands in its walk: the path of its last op, and whether it came back up to it. */
struct runpos {
	char path[PATH_MAX + 1];
	bool up;
	bool any;
};

/* Moves pos to p (shorter than PATH_MAX: grove_journal_chunk_next read it so). */
static void
pos_set(struct runpos *pos, const char *p, bool up)
{
	size_t l = strlen(p);

	memcpy(pos->path, p, l + 1);
	pos->up = up;
}

/* Whether an op at p keeps the run at pos to a walk (and moves pos). */
static bool
run_keeps(struct runpos *pos, const char *p, enum grove_op_kind kind)
{
	size_t l;
	int c;

	if (!pos->any) {
		pos->any = true;
		pos_set(pos, p, false);
		return true;
	}
	c = branch_cmp(pos->path, p, &l);
	if (c < 0) {
		pos_set(pos, p, false); /* a later branch */
		return true;
	}
	if (c > 0)
		return false; /* back to a branch passed */
	if (strlen(p) == strlen(pos->path))
		return true; /* the same path again */
	if (strlen(p) > strlen(pos->path)) {
		if (pos->up)
			return false; /* into a folder it has left */
		pos_set(pos, p, false);
		return true;
	}
	/* Up to a folder above: its RMDIR after its entries. A FOLD there would come after
	 * entries of other runs the merge has handed out. */
	if (kind == GROVE_OP_FOLD)
		return false;
	pos_set(pos, p, true);
	return true;
}

/* The ops of the run being read, while it is short (they go to the pool if it stays so). */
struct pending_run {
	struct wop *v;
	size_t n;
	int64_t txn, first;
	uint64_t seq0;
};

static char *
dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static void
wops_free(struct wop *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)v[i].path);
		free((char *)v[i].text);
		free((char *)v[i].package);
	}
}

/* Ends the run being read: to the pool (short) or a cursor. Returns 0, -ENOMEM, or 1: over the
 * bounds. */
static int
run_end(struct walk *w, struct pending_run *pr, size_t n_ops)
{
	if (n_ops == 0)
		return 0;
	if (n_ops < w->b.run_big) {
		if (w->pool.n + pr->n > w->b.pool_max)
			return 1;
		if (w->pool.n + pr->n > w->pool.cap) {
			size_t ncap = w->pool.cap ? w->pool.cap * 2 : 256;
			struct wop *nv;

			while (ncap < w->pool.n + pr->n)
				ncap *= 2;
			nv = realloc(w->pool.v, ncap * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			w->pool.v = nv;
			w->pool.cap = ncap;
		}
		memcpy(w->pool.v + w->pool.n, pr->v, pr->n * sizeof(*pr->v));
		w->pool.n += pr->n;
		pr->n = 0;
		return 0;
	}
	if (w->n_cur == w->b.cursors_max)
		return 1;
	w->cur[w->n_cur++] = (struct cursor){
		.txn = pr->txn, .first = pr->first, .n = (int64_t)n_ops, .seq0 = pr->seq0
	};
	return 0;
}

/* Reads the target's committed ops once: checks them, cuts them into runs. 1: over the bounds. */
static int
read_runs(struct walk *w, int64_t target_id)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	struct runpos *pos = calloc(1, sizeof(*pos));
	struct pending_run pr = { .v = calloc(w->b.run_big, sizeof(struct wop)) };
	int64_t txn = 0, next = 0;
	uint64_t seq = 0;
	size_t n_ops = 0;
	int rc, r = pos && pr.v ? grove_journal_stmt(w->j, ST_OWNED_OPS, &s, w->err) : -ENOMEM;

	if (r < 0)
		goto out;
	sqlite3_bind_int64(s, 1, target_id);
	sqlite3_bind_int64(s, 2, INT64_MAX);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		struct grove_chunk_in c;
		const char *why = grove_journal_chunk_open(s, 1, &c);

		if (id != txn) {
			txn = id;
			next = 0;
		}
		if (!why && c.first != next)
			why = "its chunks leave a gap or overlap";
		for (int64_t i = 0; !why && i < c.n; i++) {
			struct grove_chunk_op op;
			bool oom = false;

			why = grove_journal_chunk_next(&c, &op);
			if (!why)
				why = grove_journal_owned_op_check(&op);
			if (why)
				break;
			seq++;
			if (n_ops == 0 || pr.txn != id || !run_keeps(pos, op.path, op.kind)) {
				r = run_end(w, &pr, n_ops);
				if (r != 0)
					goto out;
				pos->any = false;
				run_keeps(pos, op.path, op.kind);
				pr.txn = id;
				pr.first = c.first + i;
				pr.seq0 = seq;
				n_ops = 0;
			}
			n_ops++;
			if (n_ops < w->b.run_big) {
				pr.v[pr.n++] =
					(struct wop){ .path = dup_or_null(op.path, &oom),
						      .text = dup_or_null(op.text, &oom),
						      .package = dup_or_null(op.package, &oom),
						      .kind = op.kind,
						      .seq = seq };
				if (oom) {
					r = -ENOMEM;
					goto out;
				}
			} else if (n_ops == w->b.run_big) {
				wops_free(pr.v, pr.n); /* a cursor reads them again */
				pr.n = 0;
			}
		}
		if (!why)
			why = grove_journal_chunk_end(&c);
		if (why) {
			r = grove_error_set(w->err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %" PRId64
					    " of target %" PRId64 ", ops from %" PRId64 ": %s",
					    w->j->name, txn, target_id, c.first, why);
			goto out;
		}
		next = c.first + c.n;
	}
	if (rc != SQLITE_DONE) {
		r = grove_journal_fail(w->j, rc, w->err, "read");
		goto out;
	}
	r = run_end(w, &pr, n_ops);
out:
	if (pr.v)
		wops_free(pr.v, pr.n);
	free(pr.v);
	free(pos);
	return r == -ENOMEM ? grove_error_errno(w->err, r, "read journal '%s'", w->j->name) : r;
}

static int
pool_cmp(const void *a, const void *b)
{
	const struct wop *x = a, *y = b;
	int c = walk_cmp(x->path, y->path);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- the merge ---- */

static int
merge(struct walk *w)
{
	int r = 0;

	for (size_t i = 0; i < w->n_cur && r >= 0; i++)
		r = cursor_open(w, &w->cur[i]);
	while (r >= 0) {
		const struct wop *best = NULL,
				 *p = w->pool_at < w->pool.n ? &w->pool.v[w->pool_at] : NULL;
		size_t from = SIZE_MAX, best_up = 0;
		bool up = false;

		/* An op at a path being walked first; else the first in walk order. */
		for (size_t i = 0; i <= w->n_cur; i++) {
			const struct wop *h =
				i < w->n_cur ? (w->cur[i].live ? &w->cur[i].head : NULL) : p;
			size_t hl;

			if (!h)
				continue;
			hl = strlen(h->path);
			if (w->depth > 1 && at_or_above(h->path, hl, w->path)) {
				if (!up || hl > best_up)
					best = h, from = i, up = true, best_up = hl;
			} else if (!up && (!best || walk_cmp(h->path, best->path) < 0)) {
				best = h, from = i;
			}
		}
		if (!best)
			break;
		r = apply(w, best, up);
		if (r < 0)
			break;
		if (from == w->n_cur)
			w->pool_at++;
		else
			r = cursor_next(w, &w->cur[from]);
	}
	while (r >= 0 && w->depth > 1)
		r = pop(w);
	return r;
}

/* ---- the fallback: the whole map, in the same order ---- */

static int
post_cmp(const void *a, const void *b)
{
	const char *x = ((const struct grove_owned *)a)->path,
		   *y = ((const struct grove_owned *)b)->path;
	size_t l;
	int c = branch_cmp(x, y, &l);

	if (c)
		return c;
	/* One holds the other: the folder after what it holds. */
	return strlen(x) > strlen(y) ? -1 : strlen(x) < strlen(y);
}

static int
walk_whole(struct grove_journal *j, int64_t target_id, grove_owned_fn fn, void *arg,
	   struct grove_error *err)
{
	struct grove_owned *own = NULL;
	size_t n = 0;
	int r = grove_journal_owned(j, target_id, &own, &n, err);

	if (r < 0)
		return r;
	qsort(own, n, sizeof(*own), post_cmp);
	for (size_t i = 0; i < n && r >= 0; i++)
		r = fn(arg, &own[i]);
	grove_owned_free(own, n);
	return r;
}

int
grove_journal_owned_walk(struct grove_journal *j, int64_t target_id, grove_owned_fn fn, void *arg,
			 struct grove_error *err)
{
	struct walk w = { .j = j, .fn = fn, .arg = arg, .err = err, .cap = 64, .b = bounds_get() };
	int r;

	w.f = calloc(w.cap, sizeof(*w.f));
	w.cur = calloc(w.b.cursors_max ? w.b.cursors_max : 1, sizeof(*w.cur));
	if (!w.f || !w.cur) {
		r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
		goto out;
	}
	w.depth = 1; /* the target */
	r = read_runs(&w, target_id);
	if (r == 1) {
		for (size_t i = 0; i < w.n_cur; i++)
			w.cur[i] = (struct cursor){ 0 };
		w.n_cur = 0;
		wops_free(w.pool.v, w.pool.n);
		w.pool.n = 0;
		r = walk_whole(j, target_id, fn, arg, err);
		goto out;
	}
	if (r < 0)
		goto out;
	if (w.pool.n)
		qsort(w.pool.v, w.pool.n, sizeof(*w.pool.v), pool_cmp);
	r = merge(&w);
	if (r == -ENOMEM)
		r = grove_error_errno(err, r, "read journal '%s'", j->name);
out:
	for (size_t i = 0; w.cur && i < w.n_cur; i++)
		sqlite3_finalize(w.cur[i].s);
	free(w.cur);
	for (size_t i = 0; w.f && i < w.cap; i++) {
		free(w.f[i].text);
		free(w.f[i].package);
	}
	free(w.f);
	if (w.pool.v)
		wops_free(w.pool.v, w.pool.n);
	free(w.pool.v);
	return r;
}
