/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The targets a log knows, for grove targets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal_int.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_journal_targets_free(struct grove_journal_target_info *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		free(t[i].path);
		for (size_t k = 0; k < t[i].n_stow_dirs; k++)
			free(t[i].stow_dirs[k]);
		free(t[i].stow_dirs);
		free(t[i].stow_last);
	}
	free(t);
}

static char *
column_text(sqlite3_stmt *s, int col)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	return strdup(v ? (const char *)v : "");
}

/* The stow dirs of one target's committed transactions. */
static int
target_stows(struct grove_journal *j, struct grove_journal_target_info *t, struct grove_error *err)
{
	cleanup_stmt sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc, r = grove_journal_stmt(j, ST_TARGET_STOWS, &s, err);

	if (r < 0)
		return r;
	sqlite3_bind_int64(s, 1, t->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (t->n_stow_dirs == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			char **nd = realloc(t->stow_dirs, ncap * sizeof(*nd));
			double *nl = nd ? realloc(t->stow_last, ncap * sizeof(*nl)) : NULL;

			if (nd)
				t->stow_dirs = nd;
			if (!nd || !nl)
				return grove_error_errno(err, -ENOMEM, "read journal '%s'",
							 j->name);
			t->stow_last = nl;
			cap = ncap;
		}
		t->stow_dirs[t->n_stow_dirs] = column_text(s, 0);
		if (!t->stow_dirs[t->n_stow_dirs])
			return grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
		t->stow_last[t->n_stow_dirs++] = sqlite3_column_double(s, 1);
	}
	return rc == SQLITE_DONE ? 0 : grove_journal_fail(j, rc, err, "read");
}

int
grove_journal_targets(struct grove_journal *j, struct grove_journal_target_info **ret,
		      size_t *ret_n, struct grove_error *err)
{
	struct grove_journal_target_info *v = NULL;
	size_t n = 0, cap = 0;
	int rc, r;

	*ret = NULL;
	*ret_n = 0;
	{
		cleanup_stmt sqlite3_stmt *s = NULL;

		r = grove_journal_stmt(j, ST_TARGETS, &s, err);
		if (r < 0)
			return r;
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				struct grove_journal_target_info *nv =
					realloc(v, ncap * sizeof(*nv));

				if (!nv) {
					r = grove_error_errno(err, -ENOMEM, "read journal '%s'",
							      j->name);
					goto fail;
				}
				v = nv;
				cap = ncap;
			}
			memset(&v[n], 0, sizeof(v[n]));
			v[n].id = sqlite3_column_int64(s, 0);
			v[n].path = column_text(s, 1);
			v[n].n_txns = (size_t)sqlite3_column_int64(s, 2);
			v[n].last = sqlite3_column_double(s, 3);
			if (!v[n++].path) {
				r = grove_error_errno(err, -ENOMEM, "read journal '%s'", j->name);
				goto fail;
			}
		}
		if (rc != SQLITE_DONE) {
			r = grove_journal_fail(j, rc, err, "read");
			goto fail;
		}
	}
	for (size_t i = 0; i < n; i++) {
		r = target_stows(j, &v[i], err);
		if (r < 0)
			goto fail;
	}
	*ret = v;
	*ret_n = n;
	return 0;
fail:
	grove_journal_targets_free(v, n);
	return r;
}
