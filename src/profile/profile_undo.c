/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles: removing the folders grove made, and undoing or recovering a profile's transaction. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>

#include "grove/exec.h"
#include "grove/journal.h"
#include "grove/profile.h"
#include "profile_private.h"
#include "base/util.h"

#include "banned.h" /* last */

/* The ops removing folder name in dirfd, whose contents will be at rel (relative
 * to NAME.generations) when they run: every link (UNLINK, its text checked),
 * the record at the top (ERASE, its content checked), every folder (RMDIR),
 * deepest first. Anything else is the user's, and refuses. where names the
 * folder for messages. */
static int
plan_tree(int dirfd, const char *name, const char *rel, const char *where, bool top,
	  struct grove_plan *plan, struct grove_error *err)
{
	cleanup_fd int fd = grove_fs_open_dir_at(dirfd, name, err);
	cleanup_free char *path = grove_strdupf("%s/%s", where, name);
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	int r;

	if (fd < 0)
		return fd;
	if (!path)
		return oom(err);
	r = grove_fs_list(fd, &ents, &n, err);
	for (size_t i = 0; i < n && r >= 0; i++) {
		const struct grove_dirent *e = &ents[i];
		cleanup_free char *erel = grove_strdupf("%s/%s", rel, e->name);
		cleanup_free char *text = NULL;
		size_t len = 0;

		if (!erel)
			r = oom(err);
		else if (e->type == GROVE_FT_DIR)
			r = plan_tree(fd, e->name, erel, path, false, plan, err);
		else if (e->type == GROVE_FT_LINK) {
			r = grove_fs_readlink_at(fd, e->name, &text, err);
			if (r >= 0 && grove_plan_add_op(plan, GROVE_OP_UNLINK, erel, text, NULL,
							NULL, NULL) < 0)
				r = oom(err);
		} else if (top && e->type == GROVE_FT_REG &&
			   !strcmp(e->name, GROVE_PROFILE_RECORD)) {
			r = grove_fs_read_file_at(fd, e->name, GROVE_PROFILE_RECORD_MAX, &text,
						  &len, err);
			if (r >= 0 && strlen(text) != len)
				r = grove_error_set(err, -GROVE_E_PRECONDITION,
						    "'%s/%s' is not a record grove wrote; leaving "
						    "the generation alone",
						    path, e->name);
			if (r >= 0 && grove_plan_add_op(plan, GROVE_OP_ERASE, erel, text, NULL,
							NULL, NULL) < 0)
				r = oom(err);
		} else {
			r = grove_error_set(err, -GROVE_E_PRECONDITION,
					    "'%s/%s' is not a link or folder grove made; leaving "
					    "the generation alone",
					    path, e->name);
		}
	}
	grove_dirents_free(ents, n);
	if (r >= 0 && grove_plan_add_op(plan, GROVE_OP_RMDIR, rel, NULL, NULL, NULL, NULL) < 0)
		r = oom(err);
	return r;
}

int
grove_profile_undo_plan_removal(struct grove_profile *p, const char *name, const char *aside,
				struct grove_plan *plan, struct grove_error *err)
{
	if (aside && grove_plan_add_op(plan, GROVE_OP_MOVE, name, NULL, aside, NULL, NULL) < 0)
		return oom(err);
	return plan_tree(p->gens.fd, name, aside ? aside : name, p->gens.path, true, plan, err);
}

int
grove_profile_undo_run_gens(struct grove_profile *p, const struct grove_plan *plan,
			    struct grove_error *err)
{
	struct grove_exec_opts eo = { .temp_tag = p->tag, .dir_mode = 0755 };

	if (plan->n_ops == 0)
		return 0;
	return grove_exec_apply(plan, &p->gens, NULL, &eo, err);
}

int
grove_profile_undo_remove_folder(struct grove_profile *p, const char *name, struct grove_error *err)
{
	struct grove_plan plan;
	char aside[256];
	int r;

	grove_plan_init(&plan);
	grove_fs_temp_name(aside, sizeof(aside), p->tag, name);
	r = grove_profile_undo_plan_removal(p, name, aside, &plan, err);
	if (r >= 0)
		r = grove_profile_undo_run_gens(p, &plan, err);
	grove_plan_release(&plan);
	return r;
}

/* After the last component of "NAME.generations/<n>": the folder's name. */
const char *
grove_profile_undo_folder_of(const struct grove_profile *p, const char *path)
{
	size_t l = strlen(p->gens_name);

	if (strncmp(path, p->gens_name, l) != 0 || path[l] != '/')
		return NULL;
	return path + l + 1;
}

static int
link_text_is(int dirfd, const char *name, const char *text, bool *ret, struct grove_error *err)
{
	struct grove_stat st;
	cleanup_free char *have = NULL;
	int r = grove_fs_stat_at(dirfd, name, &st, err);

	*ret = false;
	if (r < 0 || st.type != GROVE_FT_LINK)
		return r;
	r = grove_fs_readlink_at(dirfd, name, &have, err);
	if (r < 0)
		return r;
	*ret = strcmp(have, text) == 0;
	return 0;
}

/* Removes the transaction's temporary entries: links in the profile dir (a
 * link being replaced or removed), folders in NAME.generations (a generation
 * being built or removed). */
static int
remove_temps(struct grove_profile *p, const char *tag, struct grove_error *err)
{
	struct grove_exec_opts eo = { .temp_tag = tag };
	struct grove_dirent *ents = NULL;
	struct grove_plan links;
	size_t n = 0;
	int r = grove_fs_list(p->dir.fd, &ents, &n, err);

	grove_plan_init(&links);
	for (size_t i = 0; i < n && r >= 0; i++) {
		cleanup_free char *text = NULL;

		if (!grove_fs_is_temp_of(ents[i].name, tag))
			continue;
		if (ents[i].type != GROVE_FT_LINK)
			r = grove_error_set(err, -GROVE_E_STUCK,
					    "temporary entry '%s/%s' is not a link grove made",
					    p->dir.path, ents[i].name);
		else
			r = grove_fs_readlink_at(p->dir.fd, ents[i].name, &text, err);
		if (r >= 0 && grove_plan_add_op(&links, GROVE_OP_UNLINK, ents[i].name, text, NULL,
						NULL, NULL) < 0)
			r = oom(err);
	}
	grove_dirents_free(ents, n);
	if (r >= 0 && links.n_ops)
		r = grove_exec_apply(&links, &p->dir, NULL, &eo, err);
	grove_plan_release(&links);
	if (r < 0)
		return r;
	r = grove_fs_list(p->gens.fd, &ents, &n, err);
	for (size_t i = 0; i < n && r >= 0; i++) {
		if (!grove_fs_is_temp_of(ents[i].name, tag))
			continue;
		if (ents[i].type != GROVE_FT_DIR) {
			r = grove_fs_unlink_file(p->gens.fd, ents[i].name, err);
		} else {
			/* A generation being built or removed under its private name. */
			struct grove_plan plan;

			grove_plan_init(&plan);
			r = grove_profile_undo_plan_removal(p, ents[i].name, NULL, &plan, err);
			if (r >= 0)
				r = grove_profile_undo_run_gens(p, &plan, err);
			grove_plan_release(&plan);
		}
	}
	grove_dirents_free(ents, n);
	return r;
}

static int
add_back(struct grove_plan *back, enum grove_op_kind kind, const char *path, const char *old_text,
	 const char *text, struct grove_error *err)
{
	if (grove_plan_add_op(back, kind, path, old_text, text, NULL, NULL) < 0)
		return oom(err);
	return 0;
}

/* Runs the links to put back (paths relative to the profile dir, read from the
 * log: the executor opens each parent beneath the profile dir without
 * following a symlink, and checks each link at the moment of change), their
 * temporary entries tagged with the transaction; empties back. */
static int
run_back(struct grove_profile *p, struct grove_plan *back, const char *tag, struct grove_error *err)
{
	struct grove_exec_opts eo = { .temp_tag = tag };
	int r = 0;

	if (back->n_ops)
		r = grove_exec_apply(back, &p->dir, NULL, &eo, err);
	grove_plan_release(back);
	grove_plan_init(back);
	return r;
}

/*
 * Puts the profile back to the state before transaction txn (a build, switch
 * or delete), or finishes it (a gc: its folders are unreferenced, and half
 * of one cannot be put back, so *ret_forward is set and they all go). Only
 * entries that are as the transaction would have left them are touched.
 * Safe to run again after a crash inside it.
 */
int
grove_profile_undo_txn(struct grove_profile *p, int64_t txn, bool *ret_forward,
		       struct grove_error *err)
{
	struct grove_plan ops, back;
	char tag[32];
	int r;

	*ret_forward = false;
	snprintf(tag, sizeof(tag), "%lld", (long long)txn);
	grove_plan_init(&ops);
	grove_plan_init(&back);
	snprintf(p->tag, sizeof(p->tag), "%s", tag);
	r = grove_journal_ops(p->session.journal, txn, &ops, err);
	for (size_t i = 0; i < ops.n_ops; i++)
		if (ops.ops[i].kind == GROVE_OP_RMDIR)
			*ret_forward = true;
	if (r >= 0)
		r = remove_temps(p, tag, err);
	for (size_t i = ops.n_ops; i-- > 0 && r >= 0;) {
		const struct grove_op *op = &ops.ops[i];
		const char *folder = grove_profile_undo_folder_of(p, op->path);
		struct grove_stat st;
		bool is = false;

		switch (op->kind) {
		case GROVE_OP_RELINK:
			r = link_text_is(p->dir.fd, op->path, op->text, &is, err);
			if (r >= 0 && is)
				r = add_back(&back, GROVE_OP_RELINK, op->path, op->text,
					     op->old_text, err);
			break;
		case GROVE_OP_LINK:
			r = link_text_is(p->dir.fd, op->path, op->text, &is, err);
			if (r >= 0 && is)
				r = add_back(&back, GROVE_OP_UNLINK, op->path, op->text, NULL, err);
			break;
		case GROVE_OP_UNLINK:
			r = grove_fs_stat_at(p->dir.fd, op->path, &st, err);
			if (r >= 0 && st.type == GROVE_FT_NONE)
				r = add_back(&back, GROVE_OP_LINK, op->path, NULL, op->old_text,
					     err);
			break;
		case GROVE_OP_MKDIR:
		case GROVE_OP_RMDIR:
			/* The links put back so far go first, in the order undone. */
			r = run_back(p, &back, tag, err);
			if (r < 0)
				break;
			if (!folder) {
				r = grove_error_set(err, -GROVE_E_STUCK,
						    "transaction %lld names '%s', which is not a "
						    "generation of profile '%s'",
						    (long long)txn, op->path, p->link_path);
				break;
			}
			r = grove_fs_stat_at(p->gens.fd, folder, &st, err);
			if (r >= 0 && st.type == GROVE_FT_DIR)
				r = grove_profile_undo_remove_folder(p, folder, err);
			break;
		default:
			r = grove_error_set(err, -GROVE_E_STUCK,
					    "transaction %lld has a '%s' op, which profiles never "
					    "make",
					    (long long)txn, grove_op_kind_name(op->kind));
		}
	}
	if (r >= 0)
		r = run_back(p, &back, tag, err);
	if (r >= 0)
		r = grove_fs_sync(p->gens.fd, err);
	if (r >= 0)
		r = grove_fs_sync(p->dir.fd, err);
	p->tag[0] = '\0';
	grove_plan_release(&back);
	grove_plan_release(&ops);
	return r;
}
