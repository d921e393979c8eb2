/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The executor: applies a plan op by op through the fs layer and undoes it in reverse on failure.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/exec.h"
#include "exec_int.h"

#include "banned.h" /* last */

/*
 * How it stays safe:
 *  - every op reopens (or takes from a small cache) its parent folder with
 *    openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS and then acts on one name,
 *    so a folder swapped for a symlink fails the op instead of redirecting it;
 *  - every change is recorded in an undo log *before* the next change, with
 *    room reserved up front so recording cannot fail after the fact;
 *  - the cache is flushed whenever we rename a folder (UNFOLD, FOLD, undoing
 *    them) or remove one, so no fd is ever used under a name it no longer has.
 */

/* ---- small helpers ---- */

/* The tag of the temporary entries this run makes (the options' temp_tag). */
const char *
grove_exec_tag(const struct exec *ex)
{
	return ex->opts ? ex->opts->temp_tag : NULL;
}

bool
grove_exec_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 && path[n] == '/';
}

/* n bytes from the run's arena (NULL when memory is out); freed by exec_release. */
static char *
ex_alloc(struct exec *ex, size_t n)
{
	struct arena_chunk *c = ex->arena;

	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = ex->arena;
		c->used = 0;
		c->size = size;
		ex->arena = c;
	}
	c->used += n;
	return c->data + c->used - n;
}

/* The first n bytes of s as a string in the arena. */
static char *
ex_dupn(struct exec *ex, const char *s, size_t n)
{
	char *p = ex_alloc(ex, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* s copied into the arena; NULL stays NULL (and is what a failed copy gives). */
const char *
grove_exec_dup(struct exec *ex, const char *s)
{
	return s ? ex_dupn(ex, s, strlen(s)) : NULL;
}

/* "dir/name" (or name, when dir is the root's "") in the arena. */
const char *
grove_exec_join(struct exec *ex, const char *dir, const char *name)
{
	size_t d = strlen(dir), n = strlen(name);
	char *p;

	if (!d)
		return ex_dupn(ex, name, n);
	p = ex_alloc(ex, d + 1 + n + 1);
	if (p) {
		memcpy(p, dir, d + 1);
		p[d] = '/';
		memcpy(p + d + 1, name, n + 1);
	}
	return p;
}

/* Splits path into its parent ("" for the root), in the arena, and a pointer to its last
 * component (inside path). */
int
grove_exec_split(struct exec *ex, const char *path, const char **ret_dir, const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	const char *dir = slash ? ex_dupn(ex, path, (size_t)(slash - path)) : "";

	if (!dir)
		return -ENOMEM;
	*ret_dir = dir;
	*ret_name = slash ? slash + 1 : path;
	return 0;
}

/* The path an op acts on: its own (the plan's string, which outlives the run), or re-rooted from a
 * block's folder to where that is being built (in the arena). */
const char *
grove_exec_map_path(struct exec *ex, const char *path, const char *from, const char *to)
{
	if (!from)
		return path;
	return grove_exec_join(ex, to, path + strlen(from) + 1);
}

static void
free_cleanup(void *p)
{
	free(*(void **)p);
}

#define cleanup_free __attribute__((cleanup(free_cleanup)))

/* Appends to err's message (the code is left alone). */
static void __attribute__((format(printf, 2, 3)))
append(struct grove_error *err, const char *fmt, ...)
{
	size_t len = strlen(err->msg);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
	va_end(ap);
}

/* ---- undo log ---- */

/* Reserves room so that recording a change that already happened cannot fail. */
int
grove_exec_undo_reserve(struct exec *ex, size_t more, struct grove_error *err)
{
	if (ex->n_undo + more > ex->cap_undo) {
		size_t cap = ex->cap_undo ? ex->cap_undo * 2 : 64;
		struct undo *n;

		while (cap < ex->n_undo + more)
			cap *= 2;
		n = realloc(ex->undo, cap * sizeof(*n));
		if (!n)
			return grove_error_errno(err, -ENOMEM, "record undo");
		ex->undo = n;
		ex->cap_undo = cap;
	}
	return 0;
}

/* Records a change that just happened; room was reserved by undo_reserve. */
struct undo *
grove_exec_undo_push(struct exec *ex, enum undo_kind kind, const char *dir, const char *name)
{
	struct undo *u = &ex->undo[ex->n_undo++];

	memset(u, 0, sizeof(*u));
	u->kind = kind;
	/* On allocation failure the strings stay NULL and the undo step fails
	 * loudly (STUCK) rather than silently doing the wrong thing. */
	u->dir = grove_exec_dup(ex, dir);
	u->name = grove_exec_dup(ex, name);
	return u;
}

/* ---- the ops ---- */

static struct grove_dcache *
cache_for(struct exec *ex, bool stow)
{
	return stow ? &ex->sc : &ex->tc;
}

/* The common start of an op on path: its parent folder (open, beneath the
 * root, no symlinks on the way) and last name, with room for `undos` undo
 * records. Returns the parent's fd (cached; not the caller's to close). */
int
grove_exec_enter_parent(struct exec *ex, const char *path, size_t undos, const char **ret_dir,
			const char **ret_name, struct grove_error *err)
{
	*ret_name = NULL;
	if (grove_exec_split(ex, path, ret_dir, ret_name) < 0 ||
	    grove_exec_undo_reserve(ex, undos, err) < 0 || !*ret_name) {
		grove_error_errno(err, -ENOMEM, "record undo");
		return -ENOMEM;
	}
	return grove_dcache_get(&ex->tc, *ret_dir, true, err);
}

static int
op_link(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *name;
	int fd, r;

	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	r = grove_fs_link_create(fd, name, op->text, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_LINK, dir, name)->text = grove_exec_dup(ex, op->text);
	return 0;
}

static int
op_mkdir(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *name;
	mode_t mode = ex->opts && ex->opts->dir_mode ? ex->opts->dir_mode : 0777;
	int fd, nfd;

	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	nfd = grove_fs_mkdir(fd, name, mode, err);
	if (nfd < 0)
		return grove_exec_as_precondition(err, nfd);
	grove_exec_undo_push(ex, U_MKDIR, dir, name);
	return grove_dcache_put(&ex->tc, path, nfd, true, err);
}

static int
op_unlink(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *name;
	int fd, r;

	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	/* In a folder moved aside the link is out of everyone's way already: check and unlink. */
	r = ex->aside ? grove_fs_link_remove_aside(fd, name, op->old_text, err)
		      : grove_fs_link_remove(fd, name, op->old_text, grove_exec_tag(ex), err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_UNLINK, dir, name)->text = grove_exec_dup(ex, op->old_text);
	return 0;
}

static int
op_relink(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *name;
	struct undo *u;
	int fd, r;

	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	r = grove_fs_link_replace(fd, name, op->old_text, op->text, grove_exec_tag(ex), err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	u = grove_exec_undo_push(ex, U_RELINK, dir, name);
	u->text = grove_exec_dup(ex, op->text);
	u->old_text = grove_exec_dup(ex, op->old_text);
	return 0;
}

/* Removes the empty folder dir/name, recording its mode so undo can remake it. */
int
grove_exec_remove_folder(struct exec *ex, const char *dir, const char *name,
			 struct grove_error *err)
{
	const char *path = grove_exec_join(ex, dir, name);
	struct grove_stat st;
	int fd, r;

	if (!path || grove_exec_undo_reserve(ex, 1, err) < 0)
		return grove_error_errno(err, -ENOMEM, "record undo");
	fd = grove_dcache_get(&ex->tc, dir, true, err);
	if (fd < 0)
		return fd;
	r = grove_fs_stat_at(fd, name, &st, err);
	if (r < 0)
		return r;
	if (st.type != GROVE_FT_DIR)
		return grove_error_set(err, -GROVE_E_PRECONDITION, "remove folder '%s': %s", name,
				       st.type == GROVE_FT_NONE ? "it does not exist"
								: "not a folder");
	grove_dcache_forget(&ex->tc, path);
	r = grove_fs_rmdir(fd, name, err);
	if (r == -ENOTEMPTY)
		return grove_error_set(
			err, -GROVE_E_PRECONDITION,
			"remove folder '%s': it holds entries the plan did not expect", name);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_RMDIR, dir, name)->mode = st.mode & 07777;
	return 0;
}

static int
op_rmdir(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *name;

	(void)op;
	if (grove_exec_split(ex, path, &dir, &name) < 0)
		return grove_error_errno(err, -ENOMEM, "record undo");
	return grove_exec_remove_folder(ex, dir, name, err);
}

/* WRITE: a new regular file holding op->text (O_EXCL: whatever is there stays). */
static int
op_write(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *name;
	int fd, r;

	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	r = grove_fs_write_new_file(fd, name, op->text, strlen(op->text), 0644, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_WRITE, dir, name)->text = grove_exec_dup(ex, op->text);
	return 0;
}

/* ERASE: the regular file must hold exactly op->old_text (no symlink followed). */
static int
op_erase(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	cleanup_free char *have = NULL;
	const char *name;
	size_t len = 0, want = strlen(op->old_text);
	int fd, r;

	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	r = grove_fs_read_file_at(fd, name, want + 1, &have, &len, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	if (len != want || memcmp(have, op->old_text, want) != 0)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "'%s' is not the file grove wrote there", path);
	r = grove_fs_unlink_file(fd, name, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_ERASE, dir, name)->text = grove_exec_dup(ex, op->old_text);
	return 0;
}

/* MOVE: path to op->text beneath the same root, replacing nothing; what moves is
 * made durable first, and both parents are fsynced at once (the move is the
 * point where a generation appears or starts to go: a crash must not see its
 * contents change under the old name after it). */
static int
op_move(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *dir2 = NULL;
	const char *name, *name2;
	int fd, fd2, r;

	r = grove_dcache_settle(&ex->tc, path, err);
	if (r < 0)
		return r;
	fd2 = grove_exec_enter_parent(ex, op->text, 0, &dir2, &name2, err);
	if (fd2 < 0)
		return fd2;
	fd = grove_exec_enter_parent(ex, path, 1, &dir, &name, err);
	if (fd < 0)
		return fd;
	/* (Looking fd up may have evicted fd2 from the cache: look it up again.) */
	fd2 = grove_dcache_get(&ex->tc, dir2, true, err);
	if (fd2 < 0)
		return fd2;
	r = grove_fs_move(fd, name, fd2, name2, RENAME_NOREPLACE, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	{
		struct undo *u = grove_exec_undo_push(ex, U_MOVE, dir, name);

		u->dir2 = grove_exec_dup(ex, dir2);
		u->name2 = grove_exec_dup(ex, name2);
	}
	r = grove_fs_sync(fd2, err);
	if (r >= 0 && strcmp(dir, dir2) != 0)
		r = grove_fs_sync(fd, err);
	return r;
}

static int
op_adopt(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *dir = NULL;
	const char *sdir = NULL;
	const char *name, *sname;
	char aside[NAME_MAX + 1];
	struct grove_stat st, sst;
	struct undo *u;
	int fd, sfd, r;

	if (!ex->stow || !op->stow_path)
		return grove_error_set(err, -GROVE_E_INTERNAL, "adopt '%s': no stow dir given",
				       path);
	if (grove_exec_split(ex, path, &dir, &name) < 0 ||
	    grove_exec_split(ex, op->stow_path, &sdir, &sname) < 0 ||
	    grove_exec_undo_reserve(ex, 3, err) < 0)
		return grove_error_errno(err, -ENOMEM, "record undo");
	fd = grove_dcache_get(&ex->tc, dir, true, err);
	if (fd < 0)
		return fd;
	r = grove_fs_stat_at(fd, name, &st, err);
	if (r < 0)
		return r;
	if (st.type != GROVE_FT_REG)
		return grove_error_set(err, -GROVE_E_PRECONDITION, "adopt '%s': not a regular file",
				       name);
	sfd = grove_dcache_get(&ex->sc, sdir, true, err);
	if (sfd < 0)
		return grove_error_prefix(err, "stow dir");
	r = grove_fs_stat_at(sfd, sname, &sst, err);
	if (r < 0)
		return r;
	if (sst.type == GROVE_FT_DIR)
		return grove_error_set(err, -GROVE_E_PRECONDITION,
				       "adopt into '%s': the package has a folder there",
				       op->stow_path);

	/* Stow's --adopt overwrites the package's file. We set that file aside
	 * instead and delete it only once the whole plan is done, so a failure
	 * later on can still give the package its file back. */
	if (sst.type != GROVE_FT_NONE) {
		grove_fs_temp_name(aside, sizeof(aside), grove_exec_tag(ex), sname);
		r = grove_fs_move(sfd, sname, sfd, aside, RENAME_NOREPLACE, err);
		if (r < 0)
			return grove_exec_as_precondition(err, r);
		u = grove_exec_undo_push(ex, U_MOVE, sdir, sname);
		u->in_stow = u->to_stow = true;
		u->dir2 = grove_exec_dup(ex, sdir);
		u->name2 = grove_exec_dup(ex, aside);
		if (ex->n_asides == ex->cap_asides) {
			size_t cap = ex->cap_asides ? ex->cap_asides * 2 : 8;
			struct aside *na = realloc(ex->asides, cap * sizeof(*na));

			if (!na)
				return grove_error_errno(err, -ENOMEM, "adopt '%s'", path);
			ex->asides = na;
			ex->cap_asides = cap;
		}
		ex->asides[ex->n_asides].dir = strdup(sdir);
		ex->asides[ex->n_asides].name = strdup(aside);
		ex->n_asides++;
	}
	r = grove_fs_move(fd, name, sfd, sname, RENAME_NOREPLACE, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	u = grove_exec_undo_push(ex, U_MOVE, dir, name);
	u->to_stow = true;
	u->dir2 = grove_exec_dup(ex, sdir);
	u->name2 = grove_exec_dup(ex, sname);
	/* The move is atomic, but what it moved may have been swapped in after our
	 * check: only a regular file is adopted (undo moves anything else back). */
	r = grove_fs_stat_at(sfd, sname, &sst, err);
	if (r < 0)
		return r;
	if (sst.type != GROVE_FT_REG)
		return grove_error_set(err, -GROVE_E_PRECONDITION, "adopt '%s': not a regular file",
				       name);
	r = grove_fs_link_create(fd, name, op->text, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	grove_exec_undo_push(ex, U_LINK, dir, name)->text = grove_exec_dup(ex, op->text);
	return 0;
}

/*
 * A recorded op (plan.h) changes nothing: the link it describes must be there with its text
 * now, as any op's precondition is checked at the moment of change. Nothing to undo.
 */
static int
op_recorded(struct exec *ex, const struct grove_op *op, const char *path, struct grove_error *err)
{
	const char *text = op->kind == GROVE_OP_LINK ? op->text : op->old_text;
	const char *dir = NULL;
	const char *name;
	int fd, r;

	if (op->kind != GROVE_OP_LINK && op->kind != GROVE_OP_UNLINK)
		return grove_error_set(err, -GROVE_E_INTERNAL, "a recorded op must be a link's");
	if (grove_exec_split(ex, path, &dir, &name) < 0 || !name)
		return grove_error_errno(err, -ENOMEM, "check");
	fd = grove_dcache_get(&ex->tc, dir, false, err);
	if (fd < 0)
		return grove_exec_as_precondition(err, fd);
	r = grove_exec_check_link(fd, name, text, err);
	if (r < 0)
		return grove_exec_as_precondition(err, r);
	return r ? 0 : -GROVE_E_PRECONDITION;
}

void
grove_exec_progress(struct exec *ex, const struct grove_op *op)
{
	ex->done++;
	if (ex->opts && ex->opts->progress)
		ex->opts->progress(ex->opts->progress_ctx, ex->done, ex->plan->n_ops, op);
}

/* ---- folders removed whole ---- */

/* A plain removal: what a block of op_remove_aside may hold. */
static bool
is_removal(const struct grove_op *op)
{
	return !op->recorded && op->path && *op->path &&
	       ((op->kind == GROVE_OP_UNLINK && op->old_text) || op->kind == GROVE_OP_RMDIR);
}

/*
 * Finds the folders the plan removes whole: an RMDIR whose path's ops, right before it, are all
 * removals (the planner writes a folder's removal after its contents'). Nested folders reuse the
 * block found for them, so this is linear in the ops. Without memory for it, nothing is found
 * and every op runs one by one, as before.
 */
static void
find_removed_folders(struct exec *ex)
{
	const struct grove_plan *p = ex->plan;

	if (p->n_ops == 0 || p->n_ops >= RM_NONE)
		return;
	ex->rm_end = calloc(p->n_ops, sizeof(*ex->rm_end));
	ex->rm_start = malloc(p->n_ops * sizeof(*ex->rm_start));
	if (!ex->rm_end || !ex->rm_start) {
		free(ex->rm_end);
		free(ex->rm_start);
		ex->rm_end = ex->rm_start = NULL;
		return;
	}
	for (size_t j = 0; j < p->n_ops; j++) {
		const struct grove_op *d = &p->ops[j];
		size_t s = j;
		bool ok = true;

		ex->rm_start[j] = RM_NONE;
		if (d->kind != GROVE_OP_RMDIR || !is_removal(d))
			continue;
		while (ok && s > 0 && grove_exec_under(p->ops[s - 1].path, d->path)) {
			if (!is_removal(&p->ops[s - 1]))
				ok = false;
			else if (p->ops[s - 1].kind == GROVE_OP_RMDIR)
				ok = (s = ex->rm_start[s - 1]) != RM_NONE;
			else
				s--;
		}
		if (!ok)
			continue;
		ex->rm_start[j] = (uint32_t)s;
		ex->rm_end[s] = (uint32_t)(j + 1);
	}
}

/* The end of the block of removals of a whole folder that starts at op i, or i when there is
 * none worth moving aside (fewer than two links: one rename buys nothing). */
static size_t
removal_end(const struct exec *ex, size_t i, size_t end)
{
	size_t j, links = 0;

	if (!ex->rm_end || !ex->rm_end[i] || ex->rm_end[i] > end)
		return i;
	j = ex->rm_end[i];
	for (size_t k = i; k < j && links < 2; k++)
		links += ex->plan->ops[k].kind == GROVE_OP_UNLINK;
	return links < 2 ? i : j;
}

/* A step of op_remove_aside failed: err names its RMDIR. Returns err's code. */
static int
removal_failed(struct exec *ex, const struct grove_op *op, struct grove_error *err)
{
	if (!ex->named)
		grove_error_prefix(err, "%s '%s'", grove_op_kind_name(op->kind), op->path);
	ex->named = true;
	return err->code;
}

/*
 * A folder that goes whole (ops [i, end): its links and folders, then its own RMDIR) is moved
 * aside once, under a private temporary name, and emptied there: each link is checked and
 * unlinked in place (two calls), rather than each moved aside on its own (three). The move
 * is the same guarantee one level up: whatever sits at the folder's path is taken out of
 * everyone's way first, and only then looked at — a symlink or file swapped in is not a folder
 * (reopening it refuses symlinks), a link replaced since the scan fails its check, an entry
 * the plan does not know keeps the folder from being removed; each fails the op and undo puts
 * everything back, the folder last. A crash leaves a temporary folder holding only the
 * transaction's links, which recovery removes before putting the folder back.
 */
static int
op_remove_aside(struct exec *ex, size_t i, size_t end, struct grove_error *err)
{
	const struct grove_op *op = &ex->plan->ops[end - 1];
	const char *dir = NULL;
	const char *tmp_path = NULL;
	const char *name;
	char tmp[NAME_MAX + 1];
	struct undo *u;
	int fd, afd, r = -EEXIST;

	fd = grove_exec_enter_parent(ex, op->path, 1, &dir, &name, err);
	if (fd < 0)
		return removal_failed(ex, op, err);
	grove_dcache_forget(&ex->tc, op->path);
	for (int k = 0; k < 16 && r == -EEXIST; k++) {
		grove_fs_temp_name(tmp, sizeof(tmp), grove_exec_tag(ex), name);
		r = grove_fs_move(fd, name, fd, tmp, RENAME_NOREPLACE, err);
	}
	if (r < 0) {
		grove_exec_as_precondition(err, r);
		return removal_failed(ex, op, err);
	}
	u = grove_exec_undo_push(ex, U_MOVE, dir, name);
	u->dir2 = grove_exec_dup(ex, dir);
	u->name2 = grove_exec_dup(ex, tmp);
	tmp_path = grove_exec_join(ex, dir, tmp);
	if (!tmp_path) {
		grove_error_errno(err, -ENOMEM, "move aside");
		return removal_failed(ex, op, err);
	}
	/* What was moved must be a real folder (O_NOFOLLOW): anything else goes back by undo. */
	afd = grove_fs_open_dir_at(fd, tmp, err);
	if (afd < 0) {
		grove_exec_as_precondition(err, afd);
		return removal_failed(ex, op, err);
	}
	if (grove_dcache_put(&ex->tc, tmp_path, afd, false, err) < 0)
		return removal_failed(ex, op, err);
	ex->aside = true;
	r = grove_exec_run_range(ex, i, end - 1, op->path, tmp_path, err);
	ex->aside = false;
	if (r < 0)
		return r;
	r = grove_exec_remove_folder(ex, dir, tmp, err);
	if (r < 0)
		return removal_failed(ex, op, err);
	grove_exec_progress(ex, op);
	return 0;
}

int
grove_exec_check_op(const struct grove_op *op, const char *from, struct grove_error *err)
{
	bool needs_text = op->kind == GROVE_OP_LINK || op->kind == GROVE_OP_RELINK ||
			  op->kind == GROVE_OP_FOLD || op->kind == GROVE_OP_ADOPT ||
			  op->kind == GROVE_OP_WRITE || op->kind == GROVE_OP_MOVE;
	bool needs_old = op->kind == GROVE_OP_UNLINK || op->kind == GROVE_OP_RELINK ||
			 op->kind == GROVE_OP_UNFOLD || op->kind == GROVE_OP_ERASE;

	if (!op->path || !*op->path || (from && !grove_exec_under(op->path, from)) ||
	    (needs_text && !op->text) || (needs_old && !op->old_text))
		return grove_error_set(err, -GROVE_E_INTERNAL, "%s '%s': malformed op in plan",
				       grove_op_kind_name(op->kind), op->path ? op->path : "");
	return 0;
}

/* Runs ops [start, end); inside a block, paths under from are re-rooted to to. */
int
grove_exec_run_range(struct exec *ex, size_t start, size_t end, const char *from, const char *to,
		     struct grove_error *err)
{
	for (size_t i = start; i < end;) {
		const struct grove_op *op = &ex->plan->ops[i];
		const char *path;
		size_t next = i + 1, whole = from ? i : removal_end(ex, i, end);
		int r;

		if (grove_exec_check_op(op, from, err) < 0)
			return err->code;
		path = grove_exec_map_path(ex, op->path, from, to);
		if (!path)
			return grove_error_errno(err, -ENOMEM, "%s '%s'",
						 grove_op_kind_name(op->kind), op->path);
		if (whole > i)
			r = op_remove_aside(ex, i, next = whole, err);
		else if (op->recorded)
			r = op_recorded(ex, op, path, err);
		else
			switch (op->kind) {
			case GROVE_OP_MKDIR:
				r = op_mkdir(ex, op, path, err);
				break;
			case GROVE_OP_LINK:
				r = op_link(ex, op, path, err);
				break;
			case GROVE_OP_UNLINK:
				r = op_unlink(ex, op, path, err);
				break;
			case GROVE_OP_RELINK:
				r = op_relink(ex, op, path, err);
				break;
			case GROVE_OP_RMDIR:
				r = op_rmdir(ex, op, path, err);
				break;
			case GROVE_OP_ADOPT:
				r = op_adopt(ex, op, path, err);
				break;
			case GROVE_OP_WRITE:
				r = op_write(ex, op, path, err);
				break;
			case GROVE_OP_ERASE:
				r = op_erase(ex, op, path, err);
				break;
			case GROVE_OP_MOVE:
				r = from ? grove_error_set(err, -GROVE_E_INTERNAL,
							   "move inside a block")
					 : op_move(ex, op, path, err);
				break;
			case GROVE_OP_UNFOLD:
			case GROVE_OP_FOLD:
				r = grove_exec_op_block(ex, i, path, end, &next, err);
				break;
			default:
				r = grove_error_set(err, -GROVE_E_INTERNAL, "unknown op kind %d",
						    (int)op->kind);
			}
		if (r < 0) {
			/* A failure inside a block already names its own op. */
			if (!ex->named)
				grove_error_prefix(err, "%s '%s'", grove_op_kind_name(op->kind),
						   op->path);
			/* The entry that failed, whole, as the error's path (docs/json.md). */
			if (!err->path[0])
				grove_error_path_in(err, ex->target->real, op->path);
			ex->named = true;
			return r;
		}
		if (whole == i) /* (a folder removed whole counted its own ops) */
			grove_exec_progress(ex, op);
		i = next;
	}
	return 0;
}

/* ---- undo ---- */

static int
undo_one(struct exec *ex, const struct undo *u, struct grove_error *err)
{
	struct grove_dcache *c = cache_for(ex, u->in_stow);
	mode_t mode;
	int fd, fd2, r;

	if (!u->dir || !u->name)
		return grove_error_errno(err, -ENOMEM, "undo");
	fd = grove_dcache_get(c, u->dir, true, err);
	if (fd < 0)
		return fd;
	if ((u->kind == U_LINK || u->kind == U_UNLINK || u->kind == U_RELINK ||
	     u->kind == U_ERASE) &&
	    !u->text)
		return grove_error_errno(err, -ENOMEM, "undo");
	if (u->kind == U_RELINK && !u->old_text)
		return grove_error_errno(err, -ENOMEM, "undo");
	switch (u->kind) {
	case U_LINK:
		return grove_fs_link_remove(fd, u->name, u->text, grove_exec_tag(ex), err);
	case U_UNLINK:
		return grove_fs_link_create(fd, u->name, u->text, err);
	case U_RELINK:
		return grove_fs_link_replace(fd, u->name, u->text, u->old_text, grove_exec_tag(ex),
					     err);
	case U_MKDIR: {
		const char *path = grove_exec_join(ex, u->dir, u->name);

		if (path)
			grove_dcache_forget(c, path);
		return grove_fs_rmdir(fd, u->name, err);
	}
	case U_RMDIR:
		mode = u->mode ? u->mode : 0777;
		r = grove_fs_mkdir(fd, u->name, mode, err);
		if (r < 0)
			return r;
		grove_fd_close(r);
		return 0;
	case U_EXCHANGE:
		if (!u->name2)
			return grove_error_errno(err, -ENOMEM, "undo");
		r = grove_fs_exchange(fd, u->name, u->name2, err);
		if (r < 0)
			return r;
		/* Folders moved: no cached fd may outlive their old names. */
		return grove_dcache_flush(c, true, err);
	case U_MOVE:
		if (!u->dir2 || !u->name2)
			return grove_error_errno(err, -ENOMEM, "undo");
		fd2 = grove_dcache_get(cache_for(ex, u->to_stow), u->dir2, true, err);
		if (fd2 < 0)
			return fd2;
		/* grove_dcache_get on the other cache cannot evict fd (distinct caches),
		 * but on the same cache it might: look fd up again. */
		fd = grove_dcache_get(c, u->dir, true, err);
		if (fd < 0)
			return fd;
		r = grove_fs_move(fd2, u->name2, fd, u->name, RENAME_NOREPLACE, err);
		if (r >= 0 && !u->in_stow && !u->to_stow) {
			/* (A folder moved back: no cached fd may outlive a name.) */
			const char *from = grove_exec_join(ex, u->dir2, u->name2);
			const char *to = grove_exec_join(ex, u->dir, u->name);

			if (from)
				grove_dcache_forget(c, from);
			if (to)
				grove_dcache_forget(c, to);
		}
		return r;
	case U_WRITE:
		return grove_fs_unlink_file(fd, u->name, err);
	case U_ERASE:
		return grove_fs_write_new_file(fd, u->name, u->text, strlen(u->text), 0644, err);
	}
	return grove_error_set(err, -GROVE_E_INTERNAL, "undo: unknown record");
}

static const char *
undo_where(const struct undo *u, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", u->dir ? u->dir : "", u->dir && *u->dir ? "/" : "",
		 u->name ? u->name : "");
	return buf;
}

/* Undoes every recorded change in reverse; on the first failure stops and says where. */
static int
undo_all(struct exec *ex, struct grove_error *err)
{
	struct grove_error flush_err;
	char where[PATH_MAX];
	int r;

	grove_error_clear(&flush_err);
	grove_dcache_flush(&ex->tc, false, &flush_err);
	grove_dcache_flush(&ex->sc, false, &flush_err);
	while (ex->n_undo) {
		struct undo *u = &ex->undo[ex->n_undo - 1];

		r = undo_one(ex, u, err);
		if (r < 0) {
			static const char *const names[] = { "remove link",    "restore link",
							     "restore link",   "remove folder",
							     "restore folder", "exchange back",
							     "move back",      "remove file",
							     "restore file" };

			return grove_error_prefix(err, "%s '%s'", names[u->kind],
						  undo_where(u, where, sizeof(where)));
		}
		ex->n_undo--;
	}
	r = grove_dcache_flush(&ex->tc, true, err);
	if (r == 0)
		r = grove_dcache_flush(&ex->sc, true, err);
	return r;
}

/* ---- entry point ---- */

static void
exec_release(struct exec *ex)
{
	struct grove_error ignore;

	grove_dcache_flush(&ex->tc, false, &ignore);
	grove_dcache_flush(&ex->sc, false, &ignore);
	free(ex->undo);
	for (size_t i = 0; i < ex->n_asides; i++) {
		free(ex->asides[i].dir);
		free(ex->asides[i].name);
	}
	free(ex->asides);
	free(ex->rm_end);
	free(ex->rm_start);
	while (ex->arena) {
		struct arena_chunk *next = ex->arena->next;

		free(ex->arena);
		ex->arena = next;
	}
}

/*
 * Deletes the package files that adopts set aside. This is the point of no
 * return, so it comes last, once everything else is durable. The deletions
 * themselves are not fsynced: a crash that forgets one leaves only a private
 * temporary file in the package (for recovery to remove), never a changed
 * target, while an fsync failure here could no longer be undone.
 */
static int
delete_asides(struct exec *ex, struct grove_error *err)
{
	for (size_t i = 0; i < ex->n_asides; i++) {
		struct aside *a = &ex->asides[i];
		int fd, r;

		if (!a->dir || !a->name)
			return grove_error_errno(err, -ENOMEM, "adopt");
		fd = grove_dcache_get(&ex->sc, a->dir, true, err);
		if (fd < 0)
			return fd;
		r = grove_fs_unlink_file(fd, a->name, err);
		if (r < 0)
			return grove_error_prefix(err, "adopt: replace the package's file");
	}
	return 0;
}

int
grove_exec_apply(const struct grove_plan *plan, const struct grove_root *target,
		 const struct grove_root *stow, const struct grove_exec_opts *opts,
		 struct grove_error *err)
{
	struct grove_error local, uerr;
	struct exec ex = {
		.plan = plan,
		.target = target,
		.stow = stow,
		.opts = opts,
		.tc = { .rootfd = target->fd },
		.sc = { .rootfd = stow ? stow->fd : -1 },
	};
	int r;

	if (!err)
		err = &local;
	grove_error_clear(err);
	find_removed_folders(&ex);
	r = opts && opts->blocks ? grove_exec_run_batch(&ex, err)
				 : grove_exec_run_range(&ex, 0, plan->n_ops, NULL, NULL, err);
	if (r == 0)
		r = grove_dcache_flush(&ex.tc, true, err);
	if (r == 0)
		r = grove_dcache_flush(&ex.sc, true, err);
	if (r == 0)
		r = delete_asides(&ex, err);
	if (r == 0) {
		exec_release(&ex);
		return 0;
	}
	if (ex.n_undo == 0) {
		exec_release(&ex);
		return r;
	}
	grove_error_clear(&uerr);
	if (undo_all(&ex, &uerr) < 0) {
		append(err, "; undo failed, the target is part-way: %s", uerr.msg);
		err->code = -GROVE_E_STUCK;
	} else {
		append(err, " (every change was undone)");
		err->code = -GROVE_E_PARTIAL;
	}
	exec_release(&ex);
	return err->code;
}
