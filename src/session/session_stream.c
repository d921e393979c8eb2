/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Streamed transactions: a plan too big to hold is logged while it is made and run from the log. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/session.h"
#include "session_int.h"

#include "banned.h" /* last */

/*
 * Why one SQLite write transaction from the first batch to the last: the contract (DESIGN.md,
 * "The transaction log") is that every op's intent is durable before the first change, and that
 * a transaction the log holds is recovered from its ops. A transaction whose ops are only partly
 * logged must therefore never be seen by recovery. Keeping the batches inside one write
 * transaction that commits only when the plan is complete gives exactly that, from SQLite's own
 * rollback journal: before the COMMIT, a crash or a cancel leaves the log as it was (no row, no
 * state for recovery to learn); after it, the transaction is INTENT with every op, the same rows
 * grove_session_begin writes. SQLite spills the batches to the database file as its page cache
 * fills, so memory stays at the cache's size. Planning is pure and the target lock is held, so
 * holding the write lock meanwhile delays only other targets' writers sharing the state dir, as
 * logging a big intent in one transaction always has.
 */

#define PLAN_BUDGET 4096

size_t
grove_session_plan_budget(void)
{
	const char *v = getenv("GROVE_PLAN_BUDGET");
	char *end;
	unsigned long n;

	if (!v || !*v)
		return PLAN_BUDGET;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n == 0)
		return PLAN_BUDGET;
	return n;
}

static int
stream_flush(struct grove_plan_sink *sink, struct grove_plan *plan)
{
	struct grove_session_stream *st = (struct grove_session_stream *)sink;
	struct grove_session *s = st->session;
	int r;

	if (!st->open) {
		struct grove_journal_intent in = {
			.target_id = s->target_id,
			.command = st->opts.command,
			.stow = st->opts.logged_stow,
			.undoes = st->opts.undoes,
			.alt = s->alt,
			.n_alt = s->n_alt,
			.pkgs = st->pkgs,
			.n_pkgs = st->n_pkgs,
			.roots = s->roots,
			.n_roots = s->n_roots,
		};

		r = grove_journal_stream_open(s->journal, &in, &st->log, &sink->err);
		if (r < 0)
			return r;
		grove_session_forget_changes(s);
		st->open = true;
	}
	r = grove_journal_stream_ops(s->journal, &st->log, plan, &sink->err);
	if (r < 0) {
		st->open = false; /* (rolled back by the journal) */
		return r;
	}
	grove_plan_drop_ops(plan);
	return 0;
}

void
grove_session_stream_arm(struct grove_session *s, struct grove_session_stream *st,
			 struct grove_plan *plan, const struct grove_session_txn_opts *opts,
			 const struct grove_journal_pkg *pkgs, size_t n_pkgs)
{
	memset(st, 0, sizeof(*st));
	st->sink.batch = grove_session_plan_budget();
	st->sink.flush = stream_flush;
	st->session = s;
	st->opts = *opts;
	st->pkgs = pkgs;
	st->n_pkgs = n_pkgs;
	plan->sink = &st->sink;
}

void
grove_session_stream_pkgs(struct grove_session_stream *st, const struct grove_journal_pkg *pkgs,
			  size_t n_pkgs)
{
	st->pkgs = pkgs;
	st->n_pkgs = n_pkgs;
	st->late_pkgs = st->open;
}

int
grove_session_stream_restart(struct grove_session_stream *st, struct grove_plan *plan)
{
	if (st->sink.err.code < 0)
		return st->sink.err.code;
	if (st->open) {
		grove_journal_stream_cancel(st->session->journal);
		st->open = false;
	}
	grove_plan_release(plan);
	grove_plan_init(plan);
	plan->sink = &st->sink;
	return 0;
}

int
grove_session_stream_end(struct grove_session_stream *st, struct grove_session_txn *t,
			 struct grove_plan *plan, int r, struct grove_error *err)
{
	struct grove_session *s = st->session;

	memset(t, 0, sizeof(*t));
	plan->sink = NULL;
	if (st->sink.err.code < 0) {
		/* A batch could not be logged: the planner saw only a failing add. */
		*err = st->sink.err;
		return err->code;
	}
	if (!st->open)
		return r;
	st->open = false;
	if (r < 0 || plan->n_conflicts) {
		grove_journal_stream_cancel(s->journal);
		return r;
	}
	r = grove_journal_stream_ops(s->journal, &st->log, plan, err);
	if (r < 0)
		return r;
	grove_plan_drop_ops(plan);
	if (st->late_pkgs) {
		r = grove_journal_stream_pkgs(s->journal, &st->log, st->pkgs, st->n_pkgs, err);
		if (r < 0)
			return r;
	}
	r = grove_journal_stream_close(s->journal, &st->log, err);
	if (r < 0)
		return r;
	r = grove_session_intent_durable(s, st->log.txn, err);
	if (r < 0)
		return r;
	t->session = s;
	t->id = st->log.txn;
	snprintf(t->tag, sizeof(t->tag), "%lld", (long long)t->id);
	t->stow = st->opts.stow;
	t->streamed = true;
	t->n_ops = st->log.n_ops;
	t->state = GROVE_SESSION_TXN_OPEN;
	return 0;
}

/* The progress of the whole transaction, from the executor's progress in one batch. */
struct progress {
	const struct grove_session *s;
	size_t offset, total;
};

static void
batch_progress(void *ctx, size_t done, size_t total, const struct grove_op *op)
{
	const struct progress *p = ctx;

	(void)total;
	p->s->progress(p->s->progress_ctx, p->offset + done, p->total, op);
}

/* Where the block of ops under path that goes on at op first ends: the first op from there not
 * under path (first when it cannot be read). */
static size_t
block_extent(struct grove_session *s, int64_t txn, size_t first, size_t n_ops, const char *path)
{
	size_t batch = grove_session_plan_budget(), end = first;
	struct grove_error ignore;
	bool more = true;

	while (more && end < n_ops) {
		struct grove_plan b;

		grove_plan_init(&b);
		more = grove_journal_ops_range(s->journal, txn, end, batch, &b, &ignore) >= 0 &&
		       b.n_ops > 0;
		for (size_t k = 0; more && k < b.n_ops; k++) {
			more = grove_path_under(b.ops[k].path, path);
			end += more;
		}
		grove_plan_release(&b);
	}
	return end;
}

int
grove_session_exec_logged(struct grove_session_txn *t, const struct grove_root *target,
			  const struct grove_root *stow, struct grove_error *err)
{
	struct grove_session *s = t->session;
	size_t batch = grove_session_plan_budget(), first = 0;
	struct progress pc = { .s = s, .total = t->n_ops };
	struct grove_exec_blocks blocks = { 0 };
	struct grove_exec_opts eo = { 0 };
	char *open = NULL; /* the outermost block left open by the batches before */
	int r = grove_session_txn_check(t, "grove_session_exec_logged", err);

	if (r < 0)
		return r;
	eo.temp_tag = t->tag;
	/* A FOLD or UNFOLD block longer than what is left of a batch is left open at its end and
	 * goes on in the next (exec_block.c): no batch is read longer than the budget. */
	eo.blocks = &blocks;
	if (s->progress) {
		eo.progress = batch_progress;
		eo.progress_ctx = &pc;
	}
	while (first < t->n_ops && r >= 0) {
		struct grove_plan b;
		size_t n = 0;

		t->n_done = first;
		free(open);
		open = blocks.n ? strdup(blocks.v[0].path) : NULL;
		grove_plan_init(&b);
		if (blocks.n && !open)
			r = grove_error_errno(err, -ENOMEM, "transaction %lld", (long long)t->id);
		else
			r = grove_journal_ops_range(s->journal, t->id, first, batch, &b, err);
		if (r >= 0 && b.n_ops == 0)
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %lld lost its op %zu",
					    grove_journal_name(s->journal), (long long)t->id,
					    first);
		if (r >= 0) {
			eo.more_ops = first + b.n_ops < t->n_ops;
			pc.offset = first;
			r = grove_exec_apply(&b, target, stow, &eo, err);
			n = b.n_ops;
		}
		grove_plan_release(&b);
		if (r < 0 && open)
			/* A block begun by an earlier batch stays part-way on disk (this batch's
			 * changes were undone): the abort rolls back all of it, as recovery rolls
			 * back a block a crash interrupted. */
			t->n_done = block_extent(s, t->id, first, t->n_ops, open);
		first += n;
		if (r < 0 && t->n_done > 0 && r != -GROVE_E_STUCK && r != -GROVE_E_PARTIAL) {
			/* Earlier batches made changes, which the abort rolls back. */
			size_t len = strlen(err->msg);

			snprintf(err->msg + len, sizeof(err->msg) - len,
				 " (every change was undone)");
			err->code = r = -GROVE_E_PARTIAL;
		}
	}
	grove_exec_blocks_release(&blocks);
	free(open);
	return r;
}
