/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A target's history: the transaction a number names, and what a rollback reverts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/history.h"
#include "session/session_int.h"

#include "banned.h" /* last */

int
grove_history_own_txn(struct grove_session *s, int64_t id, struct grove_txn *ret,
		      struct grove_error *err)
{
	int r = grove_journal_get(s->journal, id, ret, err);

	if (r == -ENOENT)
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "no transaction %lld in the log (see 'grove log')",
				       (long long)id);
	if (r < 0)
		return r;
	if (ret->target_id != s->target_id) {
		grove_txn_release(ret);
		return grove_error_set(
			err, -GROVE_E_BADINPUT,
			"transaction %lld is not in the log of '%s' but another target's (see "
			"'grove log -t %s')",
			(long long)id, s->target->real, s->target->real);
	}
	return 0;
}

/* --to N's rule (history.h). */
static int
check_to(struct grove_session *s, int64_t to, struct grove_error *err)
{
	struct grove_txn t = { 0 };
	int r;

	if (to == 0)
		return 0;
	if (to < 0)
		return grove_error_set(err, -GROVE_E_USAGE,
				       "option '--to' needs a transaction number");
	r = grove_history_own_txn(s, to, &t, err);
	if (r >= 0) {
		grove_txn_release(&t);
		return 0;
	}
	if (r != -GROVE_E_BADINPUT)
		return r;
	if (grove_journal_get(s->journal, to + 1, &t, NULL) >= 0) {
		bool next_is_ours = t.target_id == s->target_id;

		grove_txn_release(&t);
		if (next_is_ours)
			return 0;
	}
	return r;
}

int
grove_history_rollback_txns(struct grove_session *s, const struct grove_rollback_point *point,
			    int64_t **ret_ids, size_t *ret_n, struct grove_error *err)
{
	struct grove_txn *txns = NULL, t = { 0 };
	int64_t first; /* the oldest transaction reverted may be this one */
	int64_t *ids;
	size_t n = 0, k = 0;
	int r;

	*ret_ids = NULL;
	*ret_n = 0;
	if (point->have_to && point->have_before)
		return grove_error_set(err, -GROVE_E_USAGE,
				       "options '--to' and '--before' exclude each other");
	if (!point->have_to && !point->have_before)
		return grove_error_set(err, -GROVE_E_USAGE,
				       "'rollback' needs one of --to N and --before T (see 'grove "
				       "log')");
	if (point->have_to) {
		r = check_to(s, point->to, err);
		first = point->to + 1;
	} else {
		r = point->before > 0 ? grove_history_own_txn(s, point->before, &t, err)
				      : grove_error_set(err, -GROVE_E_USAGE,
							"option '--before' needs a transaction "
							"number (1 or more)");
		if (r >= 0)
			grove_txn_release(&t);
		first = point->before;
	}
	if (r >= 0)
		r = grove_journal_list(s->journal, s->target_id, 0, &txns, &n, err);
	if (r < 0)
		return r;
	ids = calloc(n ? n : 1, sizeof(*ids));
	if (!ids) {
		grove_txns_free(txns, n);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	/* Every committed transaction from first on, oldest first (the list is newest first). */
	for (size_t i = n; i-- > 0;)
		if (txns[i].id >= first && txns[i].state == GROVE_TXN_COMMITTED)
			ids[k++] = txns[i].id;
	grove_txns_free(txns, n);
	*ret_ids = ids;
	*ret_n = k;
	return 0;
}

void
grove_history_targets_free(struct grove_history_target *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		free(t[i].path);
		for (size_t k = 0; k < t[i].n_stow_dirs; k++)
			free(t[i].stow_dirs[k]);
		free(t[i].stow_dirs);
		free(t[i].stow_last);
		for (size_t k = 0; k < t[i].n_pkgs; k++)
			free(t[i].pkgs[k].name);
		free(t[i].pkgs);
	}
	free(t);
}

static int
cmp_pkg(const void *a, const void *b)
{
	const struct grove_history_package *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The packages whose links the log says grove owns in the target, with their counts. */
static int
target_packages(struct grove_journal *j, int64_t id, struct grove_history_target *t,
		struct grove_error *err)
{
	struct grove_owned *owned = NULL;
	size_t n = 0, cap = 0;
	int r = grove_journal_owned(j, id, &owned, &n, err);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		const char *pkg = owned[i].package;
		size_t k = 0;

		if (!owned[i].text || !pkg)
			continue; /* a folder grove made, or a link of no package */
		while (k < t->n_pkgs && strcmp(t->pkgs[k].name, pkg) != 0)
			k++;
		if (k == t->n_pkgs) {
			if (t->n_pkgs == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				struct grove_history_package *np =
					realloc(t->pkgs, ncap * sizeof(*np));

				if (!np) {
					r = grove_error_set(err, -ENOMEM, "out of memory");
					break;
				}
				t->pkgs = np;
				cap = ncap;
			}
			t->pkgs[k].name = strdup(pkg);
			t->pkgs[k].links = 0;
			if (!t->pkgs[k].name) {
				r = grove_error_set(err, -ENOMEM, "out of memory");
				break;
			}
			t->n_pkgs++;
		}
		t->pkgs[k].links++;
	}
	grove_owned_free(owned, n);
	if (r >= 0 && t->n_pkgs > 1)
		qsort(t->pkgs, t->n_pkgs, sizeof(*t->pkgs), cmp_pkg);
	return r;
}

int
grove_history_targets(const char *state_opt, bool system_log, char **ret_log,
		      struct grove_history_target **ret, size_t *ret_n, struct grove_error *err)
{
	struct grove_session_opts so = {
		.state_opt = state_opt,
		.no_lock = true,
		.read_only = true,
		.no_create = true,
		.absent_empty = true,
		.system_log = system_log,
	};
	struct grove_journal_target_info *info = NULL;
	struct grove_history_target *v = NULL;
	struct grove_session s;
	size_t n = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	*ret_log = NULL;
	memset(&s, 0, sizeof(s));
	s.state.fd = -1;
	s.lock_fd = -1;
	r = grove_session_open_journal(&s, &so, err);
	if (r >= 0) {
		*ret_log = strdup(grove_journal_name(s.journal));
		r = *ret_log ? grove_journal_targets(s.journal, &info, &n, err)
			     : grove_error_set(err, -ENOMEM, "out of memory");
	}
	if (r >= 0 && n) {
		v = calloc(n, sizeof(*v));
		if (!v)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; r >= 0 && i < n; i++) {
		/* The log's strings move over to the result. */
		v[i].path = info[i].path;
		v[i].n_txns = info[i].n_txns;
		v[i].last = info[i].last;
		v[i].stow_dirs = info[i].stow_dirs;
		v[i].stow_last = info[i].stow_last;
		v[i].n_stow_dirs = info[i].n_stow_dirs;
		info[i].path = NULL;
		info[i].stow_dirs = NULL;
		info[i].stow_last = NULL;
		info[i].n_stow_dirs = 0;
		r = target_packages(s.journal, info[i].id, &v[i], err);
	}
	grove_journal_targets_free(info, n);
	grove_session_close(&s);
	if (r < 0) {
		grove_history_targets_free(v, n);
		free(*ret_log);
		*ret_log = NULL;
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
grove_history_alt_txns(struct grove_session *s, const struct grove_root *dir, size_t limit,
		       struct grove_txn **ret, size_t *ret_n, struct grove_error *err)
{
	struct grove_stat st;
	int64_t *ids = NULL;
	struct grove_txn *v = NULL;
	size_t n = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!s->journal)
		return 0;
	r = grove_fs_stat_fd(dir->fd, &st, err);
	if (r >= 0)
		r = grove_journal_root_txns(s->journal, (uint64_t)st.dev, (uint64_t)st.ino, limit,
					    &ids, &n, err);
	if (r >= 0 && n && !(v = calloc(n, sizeof(*v))))
		r = grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = grove_journal_get(s->journal, ids[i], &v[i], err);
	free(ids);
	if (r < 0) {
		grove_txns_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
