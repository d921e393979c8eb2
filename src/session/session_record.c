/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reverting recorded ops (`grove import`'s): which links the log forgets or takes back, the disk
 * left as it is. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "session_int.h"
#include "base/util.h"

#include "banned.h" /* last */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
cmp_owned_key(const void *key, const void *elt)
{
	return strcmp(key, ((const struct grove_owned *)elt)->path);
}

/* The owned link at path (a folder grove made is no link), or NULL. */
static const struct grove_owned *
owned_link(const struct grove_owned *o, size_t n, const char *path)
{
	const struct grove_owned *e = n ? bsearch(path, o, n, sizeof(*o), cmp_owned_key) : NULL;

	return e && e->text ? e : NULL;
}

/* Every path a recorded op of the logged plans touched, sorted, each once (borrowed strings). */
static int
recorded_paths(const struct grove_plan *logged, size_t n, const char ***ret, size_t *ret_n)
{
	const char **v = NULL;
	size_t k = 0, total = 0;

	for (size_t i = 0; i < n; i++)
		total += logged[i].n_ops;
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		grove_plan_foreach_op (&logged[i], op)
			if (op->recorded)
				v[k++] = op->path;
	if (k)
		qsort(v, k, sizeof(*v), cmp_str);
	*ret_n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*ret_n || strcmp(v[*ret_n - 1], v[i]) != 0)
			v[(*ret_n)++] = v[i];
	*ret = v;
	return 0;
}

/* The link text the revert's own ops (the first n_ops of plan) leave grove owning at path, and
 * its package (*pkg), starting from what it owns now (now, may be NULL). */
static const char *
after_revert(const struct grove_plan *plan, size_t n_ops, const char *path, const char *now,
	     const char **pkg)
{
	for (size_t i = 0; i < n_ops; i++) {
		const struct grove_op *op = &plan->ops[i];

		if (strcmp(op->path, path) != 0)
			continue;
		if (op->kind == GROVE_OP_LINK || op->kind == GROVE_OP_RELINK ||
		    op->kind == GROVE_OP_FOLD || op->kind == GROVE_OP_ADOPT)
			now = op->text, *pkg = op->package;
		else
			now = NULL;
	}
	return now;
}

int
grove_session_revert_records(struct grove_session *s, const int64_t *txns, size_t n,
			     const struct grove_plan *logged, struct grove_plan *plan,
			     struct grove_error *err)
{
	struct grove_owned *before = NULL, *now = NULL;
	size_t n_before = 0, n_now = 0, n_paths = 0, n_ops = plan->n_ops;
	cleanup_free const char **paths = NULL;
	int r;

	if (recorded_paths(logged, n, &paths, &n_paths) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (!n_paths)
		return 0;
	r = grove_journal_owned_before(s->journal, s->target_id, txns[0], &before, &n_before, err);
	if (r >= 0)
		r = grove_journal_owned(s->journal, s->target_id, &now, &n_now, err);
	for (size_t i = 0; i < n_paths && r >= 0; i++) {
		const struct grove_owned *want = owned_link(before, n_before, paths[i]);
		const struct grove_owned *cur = owned_link(now, n_now, paths[i]);
		const char *pkg = cur ? cur->package : NULL;
		const char *have =
			after_revert(plan, n_ops, paths[i], cur ? cur->text : NULL, &pkg);

		if (want && (!have || strcmp(want->text, have) != 0))
			r = grove_plan_add_recorded(plan, GROVE_OP_LINK, paths[i], want->text,
						    want->package);
		else if (!want && have)
			r = grove_plan_add_recorded(plan, GROVE_OP_UNLINK, paths[i], have, pkg);
		if (r < 0)
			r = grove_error_set(err, r, "out of memory");
	}
	grove_owned_free(before, n_before);
	grove_owned_free(now, n_now);
	return r < 0 ? r : 0;
}
