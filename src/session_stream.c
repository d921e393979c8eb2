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
	return 0;
}

static bool
under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 && path[n] == '/';
}

/* How many of the batch's ops to run now: all of them, unless more ops follow in the log (full)
 * and a FOLD or UNFOLD block may go on past the batch's end: the batch then ends before it (0 when
 * it starts the batch: read a longer one). */
static size_t
batch_cut(const struct grove_plan *b, bool full)
{
	size_t i = 0;

	if (!full)
		return b->n_ops;
	while (i < b->n_ops) {
		const struct grove_op *op = &b->ops[i];
		size_t j = i + 1;

		if (op->kind != GROVE_OP_FOLD && op->kind != GROVE_OP_UNFOLD) {
			i++;
			continue;
		}
		while (j < b->n_ops && under(b->ops[j].path, op->path))
			j++;
		if (j == b->n_ops)
			return i;
		i = j;
	}
	return b->n_ops;
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

int
grove_session_exec_logged(struct grove_session_txn *t, const struct grove_root *target,
			  const struct grove_root *stow, struct grove_error *err)
{
	struct grove_session *s = t->session;
	size_t batch = grove_session_plan_budget(), first = 0, limit = batch;
	struct progress pc = { .s = s, .total = t->n_ops };
	struct grove_exec_opts eo = { 0 };
	int r = 0;

	eo.temp_tag = t->tag;
	if (s->progress) {
		eo.progress = batch_progress;
		eo.progress_ctx = &pc;
	}
	while (first < t->n_ops && r >= 0) {
		struct grove_plan b;
		size_t cut;

		grove_plan_init(&b);
		r = grove_journal_ops_range(s->journal, t->id, first, limit, &b, err);
		if (r >= 0 && b.n_ops == 0)
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "journal '%s': transaction %lld lost its op %zu",
					    grove_journal_name(s->journal), (long long)t->id,
					    first);
		if (r < 0) {
			grove_plan_release(&b);
			break;
		}
		cut = batch_cut(&b, b.n_ops == limit && first + limit < t->n_ops);
		if (cut == 0) {
			/* A block longer than the batch: it is run whole. */
			grove_plan_release(&b);
			limit *= 2;
			continue;
		}
		grove_plan_truncate(&b, cut);
		pc.offset = first;
		t->n_done = first;
		r = grove_exec_apply(&b, target, stow, &eo, err);
		grove_plan_release(&b);
		if (r < 0 && first > 0 && r != -GROVE_E_STUCK && r != -GROVE_E_PARTIAL) {
			/* Earlier batches made changes, which the abort rolls back. */
			size_t len = strlen(err->msg);

			snprintf(err->msg + len, sizeof(err->msg) - len,
				 " (every change was undone)");
			err->code = r = -GROVE_E_PARTIAL;
		}
		first += cut;
		limit = batch;
	}
	return r;
}
