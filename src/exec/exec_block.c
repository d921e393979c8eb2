/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The executor's FOLD and UNFOLD blocks: run whole within one plan, or across the batches of a
 * streamed plan, begun in one batch and finished in a later one. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "grove/exec.h"
#include "exec_int.h"

#include "banned.h" /* last */

/*
 * A block is the FOLD or UNFOLD op and every op after it under its path (the planner writes a
 * folder's contents right after it). Its ops run in a temporary entry beside the path: the new
 * folder an UNFOLD builds before it swaps it in, the old folder a FOLD swapped out and empties.
 * Each has two halves, a begin that makes the temporary entry and a finish that swaps or removes
 * it, and the block's ops run between them, re-rooted into the temporary entry. In one plan the
 * three follow each other (grove_exec_op_block). A streamed plan comes in batches of the budget
 * (session_stream.c), and a block may be longer than one: a block that reaches the batch's end
 * with more batches to come is begun and left open (grove_exec_run_batch), its state in the
 * caller's stack of open blocks, and the next batches run their ops under it in the temporary entry
 * until the first op past it comes, which finishes it first. So no batch holds more than the
 * budget, whatever a block's length, and a crash between batches leaves what a crash inside a
 * block always left: the path as it was and a temporary entry, which recovery finds by the
 * transaction's tag.
 */

static size_t
block_end(const struct grove_plan *plan, size_t i, size_t end)
{
	size_t j = i + 1;

	while (j < end && grove_exec_under(plan->ops[j].path, plan->ops[i].path))
		j++;
	return j;
}

int
grove_exec_check_link(int fd, const char *name, const char *text, struct grove_error *err)
{
	char *have = NULL;
	struct grove_stat st;
	int r;

	/* The link read first: one call where it is there (a recorded op checks each link of an
	 * import); its failure told as the stat tells it. */
	r = grove_fs_readlink_at(fd, name, &have, err);
	if (r < 0) {
		grove_error_clear(err);
		r = grove_fs_stat_at(fd, name, &st, err);
		if (r < 0)
			return r;
		if (st.type != GROVE_FT_LINK) {
			grove_error_set(err, -GROVE_E_PRECONDITION, "'%s' is not a link to '%s'",
					name, text);
			return 0;
		}
		r = grove_fs_readlink_at(fd, name, &have, err);
		if (r < 0)
			return r;
	}
	r = strcmp(have, text) == 0;
	if (!r)
		grove_error_set(err, -GROVE_E_PRECONDITION, "'%s' links to '%s', not '%s'", name,
				have, text);
	free(have);
	return r;
}

/*
 * UNFOLD: the path must never be missing, and a crash must leave either the
 * old link or the complete folder. So: build the folder aside, make it durable
 * (fsync) before it becomes visible, swap it in with one RENAME_EXCHANGE, and
 * only then remove the old link, which now sits under the temporary name.
 *
 * The begin: the link at `at` must be old_text; the new folder is made beside it. Sets *ret_tmp
 * to the folder's path (in the arena).
 */
static int
unfold_begin(struct exec *ex, const char *at, const char *old_text, const char **ret_tmp,
	     struct grove_error *err)
{
	mode_t mode = ex->opts && ex->opts->dir_mode ? ex->opts->dir_mode : 0777;
	const char *dir = NULL;
	const char *tmp_path;
	const char *name;
	char tmp[NAME_MAX + 1];
	int fd, nfd, r;

	fd = grove_exec_enter_parent(ex, at, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	r = grove_exec_check_link(fd, name, old_text, err);
	if (r <= 0)
		return r < 0 ? r : err->code;

	grove_fs_temp_name(tmp, sizeof(tmp), grove_exec_tag(ex), name);
	tmp_path = grove_exec_join(ex, dir, tmp);
	if (!tmp_path)
		return grove_error_errno(err, -ENOMEM, "unfold");
	nfd = grove_fs_mkdir(fd, tmp, mode, err);
	if (nfd < 0)
		return grove_exec_as_precondition(err, nfd);
	grove_exec_undo_push(ex, U_MKDIR, dir, tmp);
	*ret_tmp = tmp_path;
	return grove_dcache_put(&ex->tc, tmp_path, nfd, true, err);
}

/* The finish: the folder built at tmp is swapped in for the link at `at`, which then goes. */
static int
unfold_finish(struct exec *ex, const char *at, const char *tmp_path, const char *old_text,
	      struct grove_error *err)
{
	const char *dir = NULL;
	const char *tdir = NULL;
	const char *name, *tmp;
	int fd, r;

	if (grove_exec_split(ex, at, &dir, &name) < 0 ||
	    grove_exec_split(ex, tmp_path, &tdir, &tmp) < 0)
		return grove_error_errno(err, -ENOMEM, "unfold");
	/* Durable before visible; and the exchange below renames folders we may
	 * hold fds for, so the cache must not survive it anyway. */
	r = grove_dcache_flush(&ex->tc, true, err);
	if (r < 0)
		return r;
	if (grove_exec_undo_reserve(ex, 2, err) < 0)
		return err->code;
	fd = grove_dcache_get(&ex->tc, dir, true, err);
	if (fd < 0)
		return fd;
	r = grove_exec_check_link(fd, name, old_text, err);
	if (r <= 0)
		return r < 0 ? r : err->code;
	r = grove_fs_exchange(fd, tmp, name, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_EXCHANGE, dir, tmp)->name2 = grove_exec_dup(ex, name);

	/* The check above and the exchange are two syscalls: verify what the
	 * exchange actually displaced. If it is not the old link, undo swaps it back. */
	r = grove_exec_check_link(fd, tmp, old_text, err);
	if (r <= 0)
		return r < 0 ? r : err->code;
	r = grove_fs_link_remove(fd, tmp, old_text, grove_exec_tag(ex), err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_UNLINK, dir, tmp)->text = grove_exec_dup(ex, old_text);
	return 0;
}

/*
 * FOLD: the mirror image. The new link is made aside and exchanged with the
 * folder, so the path is never missing; the old folder (now under the
 * temporary name, invisible to users of the path) is then emptied by the
 * block's ops and removed.
 *
 * The begin: the folder at `at` is swapped out for a link to text. Sets *ret_tmp to the old
 * folder's new path (in the arena).
 */
static int
fold_begin(struct exec *ex, const char *at, const char *text, const char **ret_tmp,
	   struct grove_error *err)
{
	const char *dir = NULL;
	const char *tmp_path;
	const char *name;
	char tmp[NAME_MAX + 1];
	struct grove_stat st;
	int fd, r;

	if (grove_exec_split(ex, at, &dir, &name) < 0 || grove_exec_undo_reserve(ex, 2, err) < 0)
		return grove_error_errno(err, -ENOMEM, "record undo");
	fd = grove_dcache_get(&ex->tc, dir, true, err);
	if (fd < 0)
		return fd;
	r = grove_fs_stat_at(fd, name, &st, err);
	if (r < 0)
		return r;
	if (st.type != GROVE_FT_DIR)
		return grove_error_set(err, -GROVE_E_PRECONDITION, "'%s' is not a folder", name);

	grove_fs_temp_name(tmp, sizeof(tmp), grove_exec_tag(ex), name);
	tmp_path = grove_exec_join(ex, dir, tmp);
	if (!tmp_path)
		return grove_error_errno(err, -ENOMEM, "fold");
	r = grove_fs_link_create(fd, tmp, text, err);
	if (r < 0)
		return r;
	grove_exec_undo_push(ex, U_LINK, dir, tmp)->text = grove_exec_dup(ex, text);

	r = grove_dcache_flush(&ex->tc, true, err);
	if (r < 0)
		return r;
	fd = grove_dcache_get(&ex->tc, dir, true, err);
	if (fd < 0)
		return fd;
	r = grove_fs_exchange(fd, tmp, name, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_EXCHANGE, dir, tmp)->name2 = grove_exec_dup(ex, name);
	r = grove_fs_stat_at(fd, tmp, &st, err);
	if (r < 0)
		return r;
	if (st.type != GROVE_FT_DIR)
		return grove_error_set(err, -GROVE_E_PRECONDITION, "'%s' is not a folder", name);
	*ret_tmp = tmp_path;
	return 0;
}

/* The finish: the old folder, emptied by the block's ops, goes. */
static int
fold_finish(struct exec *ex, const char *tmp_path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *tmp;

	if (grove_exec_split(ex, tmp_path, &dir, &tmp) < 0)
		return grove_error_errno(err, -ENOMEM, "fold");
	return grove_exec_remove_folder(ex, dir, tmp, err);
}

static int
block_begin(struct exec *ex, const struct grove_op *op, const char *at, const char **ret_tmp,
	    struct grove_error *err)
{
	return op->kind == GROVE_OP_UNFOLD ? unfold_begin(ex, at, op->old_text, ret_tmp, err)
					   : fold_begin(ex, at, op->text, ret_tmp, err);
}

int
grove_exec_op_block(struct exec *ex, size_t i, const char *path, size_t end, size_t *next,
		    struct grove_error *err)
{
	const struct grove_op *op = &ex->plan->ops[i];
	const char *tmp_path = NULL;
	int r;

	*next = block_end(ex->plan, i, end);
	r = block_begin(ex, op, path, &tmp_path, err);
	if (r < 0 || !tmp_path)
		return r < 0 ? r : err->code;
	r = grove_exec_run_range(ex, i + 1, *next, op->path, tmp_path, err);
	if (r < 0)
		return r;
	return op->kind == GROVE_OP_UNFOLD ? unfold_finish(ex, path, tmp_path, op->old_text, err)
					   : fold_finish(ex, tmp_path, err);
}

/* ---- blocks across batches ---- */

static void
block_free(struct grove_exec_block *b)
{
	free(b->path);
	free(b->at);
	free(b->tmp);
	free(b->old_text);
}

void
grove_exec_blocks_release(struct grove_exec_blocks *blocks)
{
	if (!blocks)
		return;
	for (size_t i = 0; i < blocks->n; i++)
		block_free(&blocks->v[i]);
	free(blocks->v);
	memset(blocks, 0, sizeof(*blocks));
}

/* Names the block's op in err, once (as grove_exec_run_range names a failing op). */
static int
block_failed(struct exec *ex, enum grove_op_kind kind, const char *path, struct grove_error *err)
{
	if (!ex->named)
		grove_error_prefix(err, "%s '%s'", grove_op_kind_name(kind), path);
	ex->named = true;
	return err->code;
}

/* Whether op i begins a block that reaches the batch's end with more batches to come. */
static bool
opens(const struct exec *ex, size_t i)
{
	const struct grove_op *op = &ex->plan->ops[i];

	return ex->opts->more_ops && !op->recorded &&
	       (op->kind == GROVE_OP_FOLD || op->kind == GROVE_OP_UNFOLD) && op->path &&
	       block_end(ex->plan, i, ex->plan->n_ops) == ex->plan->n_ops;
}

/* Begins the block of op i, under the innermost open one (top, or none), and pushes it. */
static int
open_block(struct exec *ex, size_t i, const struct grove_exec_block *top, struct grove_error *err)
{
	struct grove_exec_blocks *bs = ex->opts->blocks;
	const struct grove_op *op = &ex->plan->ops[i];
	const char *at, *tmp = NULL;
	struct grove_exec_block *b;
	int r;

	if (grove_exec_check_op(op, top ? top->path : NULL, err) < 0)
		return err->code;
	if (bs->n == bs->cap) {
		size_t cap = bs->cap ? bs->cap * 2 : 8;
		struct grove_exec_block *v = realloc(bs->v, cap * sizeof(*v));

		if (!v)
			return grove_error_errno(err, -ENOMEM, "%s '%s'",
						 grove_op_kind_name(op->kind), op->path);
		bs->v = v;
		bs->cap = cap;
	}
	at = grove_exec_map_path(ex, op->path, top ? top->path : NULL, top ? top->tmp : NULL);
	if (!at)
		return grove_error_errno(err, -ENOMEM, "%s '%s'", grove_op_kind_name(op->kind),
					 op->path);
	r = block_begin(ex, op, at, &tmp, err);
	if (r < 0 || !tmp)
		return block_failed(ex, op->kind, op->path, err);
	b = &bs->v[bs->n];
	memset(b, 0, sizeof(*b));
	b->kind = op->kind;
	b->path = strdup(op->path);
	b->at = strdup(at);
	b->tmp = strdup(tmp);
	b->old_text = op->old_text ? strdup(op->old_text) : NULL;
	if (!b->path || !b->at || !b->tmp || (op->old_text && !b->old_text)) {
		block_free(b);
		return grove_error_errno(err, -ENOMEM, "%s '%s'", grove_op_kind_name(op->kind),
					 op->path);
	}
	bs->n++;
	grove_exec_progress(ex, op);
	return 0;
}

/* Finishes the innermost open block and pops it. */
static int
close_block(struct exec *ex, struct grove_error *err)
{
	struct grove_exec_blocks *bs = ex->opts->blocks;
	struct grove_exec_block *b = &bs->v[bs->n - 1];
	int r;

	r = b->kind == GROVE_OP_UNFOLD ? unfold_finish(ex, b->at, b->tmp, b->old_text, err)
				       : fold_finish(ex, b->tmp, err);
	if (r < 0)
		r = block_failed(ex, b->kind, b->path, err);
	block_free(b);
	bs->n--;
	return r;
}

int
grove_exec_run_batch(struct exec *ex, struct grove_error *err)
{
	struct grove_exec_blocks *bs = ex->opts->blocks;
	const struct grove_plan *p = ex->plan;
	size_t i = 0;
	int r;

	while (i < p->n_ops) {
		const struct grove_op *op = &p->ops[i];
		const struct grove_exec_block *top = bs->n ? &bs->v[bs->n - 1] : NULL;
		size_t j = i + 1;

		if (top && !(op->path && grove_exec_under(op->path, top->path))) {
			r = close_block(ex, err);
			if (r < 0)
				return r;
			continue;
		}
		if (opens(ex, i)) {
			r = open_block(ex, i, top, err);
			if (r < 0)
				return r;
			i++;
			continue;
		}
		/* The ops up to the next block that stays open, or the first past this one. */
		while (j < p->n_ops && !opens(ex, j) &&
		       (!top || (p->ops[j].path && grove_exec_under(p->ops[j].path, top->path))))
			j++;
		r = grove_exec_run_range(ex, i, j, top ? top->path : NULL, top ? top->tmp : NULL,
					 err);
		if (r < 0)
			return r;
		i = j;
	}
	while (!ex->opts->more_ops && bs->n) {
		r = close_block(ex, err);
		if (r < 0)
			return r;
	}
	return 0;
}
