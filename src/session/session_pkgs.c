/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The packages an intent logs (docs/stow.md, "Recorded options"): the session's pending rows,
 * and the state reverting transactions puts back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/session.h"
#include "session_int.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_session_forget_changes(struct grove_session *s)
{
	grove_journal_alt_changes_free(s->alt, s->n_alt);
	s->alt = NULL;
	s->n_alt = 0;
	grove_journal_pkgs_free(s->pkgs, s->n_pkgs);
	s->pkgs = NULL;
	s->n_pkgs = 0;
	grove_journal_roots_free(s->roots, s->n_roots);
	s->roots = NULL;
	s->n_roots = 0;
}

void
grove_session_take_pkgs(struct grove_session *s, struct grove_journal_pkg *v, size_t n)
{
	grove_journal_pkgs_free(s->pkgs, s->n_pkgs);
	s->pkgs = v;
	s->n_pkgs = v ? n : 0;
}

void
grove_session_take_alt(struct grove_session *s, struct grove_journal_alt_change *v, size_t n)
{
	grove_journal_alt_changes_free(s->alt, s->n_alt);
	s->alt = v;
	s->n_alt = v ? n : 0;
}

int
grove_session_add_alt(struct grove_session *s, int64_t dir_id, const char *name, const char *before,
		      const char *after, struct grove_error *err)
{
	struct grove_journal_alt_change *nv = realloc(s->alt, (s->n_alt + 1) * sizeof(*nv));
	struct grove_journal_alt_change *c;

	if (!nv)
		return grove_error_set(err, -ENOMEM, "out of memory");
	s->alt = nv;
	c = memset(&nv[s->n_alt], 0, sizeof(nv[0]));
	c->dir_id = dir_id;
	if (!(c->name = strdup(name)) || (before && !(c->before = strdup(before))) ||
	    (after && !(c->after = strdup(after)))) {
		free(c->name);
		free(c->before);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	s->n_alt++;
	return 0;
}

void
grove_session_set_record_pkgs(struct grove_session *s, bool on)
{
	s->record_pkgs = on;
}

void
grove_session_set_progress(struct grove_session *s, grove_exec_progress_fn fn, void *ctx)
{
	s->progress = fn;
	s->progress_ctx = fn ? ctx : NULL;
}

void
grove_session_set_rollback(struct grove_session *s, grove_session_rollback_fn fn, void *ctx)
{
	s->rollback = fn;
	s->rollback_ctx = fn ? ctx : NULL;
}

void
grove_session_set_alt_admin(struct grove_session *s, const struct grove_root *admin)
{
	s->alt_admin = admin;
}

static bool
has_pkg(const struct grove_journal_pkg *v, size_t n, const struct grove_journal_pkg *p)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].stow_dir, p->stow_dir) && !strcmp(v[i].package, p->package))
			return true;
	return false;
}

/*
 * Every transaction that changes a package's state writes its row, reverts included, so the
 * newest committed row before the first reverted transaction is the state to put back. A
 * package with no row there was not stowed (or was stowed by a grove that kept no rows, whose
 * links the revert leaves as they were before: stowed with options nobody recorded).
 */
int
grove_session_revert_pkgs(struct grove_session *s, const int64_t *txns, size_t n,
			  struct grove_error *err)
{
	struct grove_journal_pkg *acc = NULL;
	size_t n_acc = 0;
	int64_t first = 0;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		if (!first || txns[i] < first)
			first = txns[i];
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_journal_pkg *v = NULL, *na;
		/* One transaction's rows are distinct: only the earlier ones' are compared. */
		size_t nv = 0, n_before = n_acc;

		r = grove_journal_txn_pkgs(s->journal, txns[i], &v, &nv, err);
		if (r >= 0 && nv) {
			na = realloc(acc, (n_acc + nv) * sizeof(*na));
			if (!na)
				r = grove_error_set(err, -ENOMEM, "out of memory");
			else
				acc = na;
		}
		for (size_t k = 0; k < nv && r >= 0; k++) {
			if (has_pkg(acc, n_before, &v[k]))
				continue;
			acc[n_acc++] = v[k];
			memset(&v[k], 0, sizeof(v[k]));
		}
		grove_journal_pkgs_free(v, nv);
	}
	if (r >= 0)
		r = grove_journal_pkgs_recorded_before(s->journal, s->target_id, first, acc, n_acc,
						       err);
	if (r < 0) {
		grove_journal_pkgs_free(acc, n_acc);
		return r;
	}
	grove_journal_pkgs_free(s->pkgs, s->n_pkgs);
	s->pkgs = acc;
	s->n_pkgs = n_acc;
	return 0;
}
