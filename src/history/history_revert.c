/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Undo, rollback and recovery of a target: the session, what is reverted, the whole or streamed
 * revert, and what it did (grove_history_revert, history.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/history.h"
#include "session/session_int.h"

#include "banned.h" /* last */

void
grove_history_reverted_release(struct grove_history_reverted *res)
{
	free(res->txns);
	grove_plan_release(&res->plan);
	memset(res, 0, sizeof(*res));
	grove_plan_init(&res->plan);
}

/* A dry run: the interrupted transaction a real run would roll back first, or 0. */
static int64_t
pending_txn(struct grove_session *s)
{
	struct grove_session_pending p = { 0 };
	struct grove_error ignore = { 0 };
	int64_t txn = 0;

	if (grove_session_pending(s, &p, &ignore) >= 0 && p.state == GROVE_PENDING_INTERRUPTED)
		txn = p.txn;
	grove_session_pending_release(&p);
	return txn;
}

/* What the request reverts, into res->txns, and the revert's command line; *ret_undoes: the
 * transaction an undo undoes (0 for a rollback). */
static int
choose(struct grove_session *s, const struct grove_history_revert_request *req,
       struct grove_history_reverted *res, int64_t *ret_undoes, struct grove_error *err)
{
	const struct grove_rollback_point *pt = &req->point;
	int64_t txn = 0;
	int r;

	*ret_undoes = 0;
	if (req->kind == GROVE_HISTORY_ROLLBACK) {
		r = grove_history_rollback_txns(s, pt, &res->txns, &res->n_txns, err);
		if (r >= 0 && pt->have_to)
			snprintf(res->command, sizeof(res->command), "grove rollback --to %lld",
				 (long long)pt->to);
		else if (r >= 0)
			snprintf(res->command, sizeof(res->command), "grove rollback --before %lld",
				 (long long)pt->before);
		return r;
	}
	r = grove_journal_last_undoable(s->journal, s->target_id, &txn, err);
	if (r < 0 || !txn)
		return r;
	res->txns = malloc(sizeof(*res->txns));
	if (!res->txns)
		return grove_error_set(err, -ENOMEM, "out of memory");
	res->txns[0] = *ret_undoes = txn;
	res->n_txns = 1;
	snprintf(res->command, sizeof(res->command), "grove undo (of %lld)", (long long)txn);
	return 0;
}

static void
cb_begin(const struct grove_history_revert_cb *cb, struct grove_session *s, size_t total)
{
	if (cb->begin)
		cb->begin(cb->ctx, total);
	grove_session_set_progress(s, cb->progress, cb->ctx);
}

static void
cb_end(const struct grove_history_revert_cb *cb, struct grove_session *s)
{
	if (cb->end)
		cb->end(cb->ctx);
	grove_session_set_progress(s, NULL, NULL);
}

/* The revert streamed from the log (grove_session_revert_chain_streamed): 1 when it ran, 0 when
 * it is to be planned whole (a dry run and a whole request always are), < 0 on error. */
static int
revert_streamed(struct grove_session *s, const struct grove_history_revert_request *req,
		struct grove_history_reverted *res, int64_t undoes, struct grove_error *err)
{
	struct grove_session_txn_opts o = { .command = res->command, .undoes = undoes };
	struct grove_session_reverted rv;
	int r;

	if (req->dry_run || req->whole)
		return 0;
	/* (A streamed revert is over the budget: enough ops for a progress line.) */
	cb_begin(&req->cb, s, grove_session_plan_budget() + 1);
	r = grove_session_revert_chain_streamed(s, res->txns, res->n_txns, &o, &rv, err);
	cb_end(&req->cb, s);
	if (r <= 0)
		return r;
	res->streamed = true;
	res->made = rv.txn;
	res->n_ops = rv.n_ops;
	memcpy(res->by_kind, rv.by_kind, sizeof(res->by_kind));
	return 1;
}

/* The revert planned whole, then run (not for a dry run). */
static int
revert_whole(struct grove_session *s, const struct grove_history_revert_request *req,
	     struct grove_history_reverted *res, int64_t undoes, struct grove_error *err)
{
	int r = grove_session_plan_revert(s, res->txns, res->n_txns, &res->plan, err);

	if (r < 0)
		return r;
	res->n_ops = res->plan.n_ops;
	grove_plan_foreach_op (&res->plan, op) {
		res->by_kind[op->kind] += !op->recorded;
		res->forgotten += op->recorded && op->kind == GROVE_OP_UNLINK;
		res->taken += op->recorded && op->kind == GROVE_OP_LINK;
	}
	if (res->plan.n_conflicts)
		return grove_error_set(err, -GROVE_E_CONFLICT, "%s would cause conflicts",
				       res->command);
	if (req->cb.planned)
		req->cb.planned(req->cb.ctx, &res->plan);
	if (req->dry_run)
		return 0;
	cb_begin(&req->cb, s, res->plan.n_ops);
	/* The undo of a transaction that only recorded options (a restow that changed no link)
	 * puts the earlier record back in a transaction of its own. */
	grove_session_set_record_pkgs(s, res->n_txns == 1 && res->plan.n_ops == 0);
	r = grove_session_apply(s, &res->plan, NULL, res->command, NULL, undoes, &res->made, err);
	cb_end(&req->cb, s);
	return r;
}

int
grove_history_revert(const struct grove_root *target,
		     const struct grove_history_revert_request *req,
		     struct grove_history_reverted *res, struct grove_error *err)
{
	/* A dry run reads the log as it is and makes nothing: before grove ever wrote, the log is
	 * an empty one. */
	struct grove_session_opts so = {
		.state_opt = req->state_opt,
		.wait_seconds = req->wait_seconds,
		.no_lock = req->dry_run,
		.read_only = req->dry_run,
		.no_create = req->dry_run,
		.absent_empty = req->dry_run,
		.command = req->command_line,
	};
	struct grove_session s;
	int64_t undoes = 0;
	int r;

	memset(res, 0, sizeof(*res));
	grove_plan_init(&res->plan);
	r = grove_session_open(&s, target, &so, err);
	if (r < 0)
		return r;
	if (req->dry_run) {
		res->pending = pending_txn(&s);
		if (res->pending && req->cb.pending)
			req->cb.pending(req->cb.ctx, res->pending);
	} else {
		r = grove_session_recover(&s, req->stow, req->force, &res->recovered, err);
		if (r >= 0 && res->recovered && req->cb.recovered)
			req->cb.recovered(req->cb.ctx, res->recovered);
	}
	if (r >= 0 && req->kind != GROVE_HISTORY_RECOVER)
		r = choose(&s, req, res, &undoes, err);
	if (r >= 0 && res->n_txns) {
		r = revert_streamed(&s, req, res, undoes, err);
		if (r == 0)
			r = revert_whole(&s, req, res, undoes, err);
	}
	grove_session_close(&s);
	return r < 0 ? r : 0;
}
