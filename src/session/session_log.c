/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which log a session opens (the user's own, or root's for a reader), and whether a transaction
 * the log calls unfinished is in progress in a live run or was interrupted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grove/session.h"
#include "session_int.h"
#include "base/util.h"

#include "banned.h" /* last */

bool
grove_session_is_system_dir(const char *path)
{
	struct grove_error err = { 0 };
	char *sys = NULL;
	size_t a, b;
	bool same;

	if (geteuid() != 0 || !path || grove_journal_system_state_dir(&sys, &err) < 0)
		return false;
	a = strlen(path);
	b = strlen(sys);
	while (a > 1 && path[a - 1] == '/')
		a--;
	while (b > 1 && sys[b - 1] == '/')
		b--;
	same = a == b && !memcmp(path, sys, a);
	free(sys);
	return same;
}

int
grove_session_open_journal(struct grove_session *s, const struct grove_session_opts *opts,
			   struct grove_error *err)
{
	unsigned int flags = opts->system_log  ? GROVE_JOURNAL_SYSTEM
			     : opts->state_opt ? GROVE_JOURNAL_NAMED
					       : 0;
	/* A reader that must make nothing opens read-only first; only a journal that needs its
	 * schema migrated is opened for writing (it exists). The system log, read by whoever
	 * asks, is only ever opened read-only: an older schema is an error, never migrated. */
	bool quiet = opts->system_log || (opts->no_create && opts->no_lock && opts->read_only);
	int r = opts->system_log ? grove_journal_system_state_dir(&s->state_path, err)
				 : grove_journal_state_dir(opts->state_opt, &s->state_path, err);

	if (r < 0)
		return r;
	if (!opts->system_log && grove_session_is_system_dir(s->state_path))
		flags |= GROVE_JOURNAL_SYSTEM; /* root's own: made readable to users */
	r = quiet ? grove_journal_open_with(
			    s->state_path,
			    flags | GROVE_JOURNAL_READONLY |
				    (opts->absent_empty ? GROVE_JOURNAL_ABSENT_EMPTY : 0),
			    &s->state, &s->journal, err)
		  : -EAGAIN;
	if (r == -ENOENT || (r < 0 && opts->system_log))
		return r;
	if (r < 0) {
		grove_error_clear(err);
		r = grove_journal_open_with(s->state_path, flags, &s->state, &s->journal, err);
	}
	/* A state dir grove cannot write still answers read-only commands. */
	if ((r == -EROFS || r == -EACCES) && opts->no_lock && opts->read_only)
		r = grove_journal_open_with(s->state_path, flags | GROVE_JOURNAL_READONLY,
					    &s->state, &s->journal, err);
	return r;
}

/* The oldest unfinished transaction's id and state (0 when none). */
static int
unfinished(struct grove_session *s, struct grove_txn *ret, struct grove_error *err)
{
	int64_t id = 0;
	int r = grove_journal_unfinished(s->journal, s->target_id, &id, err);

	memset(ret, 0, sizeof(*ret));
	if (r < 0 || !id)
		return r;
	return grove_journal_get(s->journal, id, ret, err);
}

/*
 * A transaction stays INTENT from its intent to its commit, so the log alone cannot tell a run
 * at work from one that was killed: the target lock can. The lock is probed before and after
 * the log is read (and the log read again), so that a run finishing, or starting, while we look
 * is not taken for a crash: INTERRUPTED only when the same transaction is unfinished on both
 * sides of a probe that found no holder.
 */
int
grove_session_pending(struct grove_session *s, struct grove_session_pending *ret,
		      struct grove_error *err)
{
	struct grove_session_pending p = { 0 };
	struct grove_txn t = { 0 }, again = { 0 };
	int r = 0;

	for (int round = 0; round < 5; round++) {
		grove_lock_holder_release(&p.holder);
		grove_txn_release(&t);
		r = grove_lock_target_holder(&s->state, s->target, &p.holder, err);
		if (r >= 0)
			r = unfinished(s, &t, err);
		if (r < 0 || p.holder.state != GROVE_LOCK_FREE)
			break;
		grove_lock_holder_release(&p.holder);
		r = grove_lock_target_holder(&s->state, s->target, &p.holder, err);
		if (r < 0 || p.holder.state != GROVE_LOCK_FREE)
			break;
		r = unfinished(s, &again, err);
		if (r < 0 || again.id == t.id) {
			grove_txn_release(&again);
			break;
		}
		grove_txn_release(&again);
	}
	if (r < 0) {
		grove_lock_holder_release(&p.holder);
		grove_txn_release(&t);
		return r;
	}
	p.txn = t.id;
	if (!t.id)
		p.state = GROVE_PENDING_NONE;
	else if (t.state == GROVE_TXN_STUCK)
		p.state = GROVE_PENDING_STUCK;
	else if (p.holder.state == GROVE_LOCK_HELD)
		p.state = GROVE_PENDING_IN_PROGRESS;
	else if (p.holder.state == GROVE_LOCK_UNKNOWN)
		p.state = GROVE_PENDING_UNKNOWN;
	else
		p.state = GROVE_PENDING_INTERRUPTED;
	p.command = steal_ptr(t.command);
	p.note = steal_ptr(t.note);
	grove_txn_release(&t);
	*ret = p;
	return 0;
}

void
grove_session_pending_release(struct grove_session_pending *p)
{
	if (!p)
		return;
	free(p->command);
	free(p->note);
	grove_lock_holder_release(&p->holder);
	memset(p, 0, sizeof(*p));
}

const char *
grove_session_pending_name(enum grove_pending_state state)
{
	switch (state) {
	case GROVE_PENDING_NONE:
		return NULL;
	case GROVE_PENDING_IN_PROGRESS:
		return "in-progress";
	case GROVE_PENDING_INTERRUPTED:
		return "interrupted";
	case GROVE_PENDING_STUCK:
		return "stuck";
	case GROVE_PENDING_UNKNOWN:
		return "unknown";
	}
	return NULL;
}
