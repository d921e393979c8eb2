/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scan one folder at a time, for the bounded walk (planner_walk.c): a package folder, a target
 * folder, or a package subtree checked and dropped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "grove/plan.h"
#include "plan/world.h"
#include "scan_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/*
 * The bounded walk takes the simple trees only: what the whole scan treats specially (a package
 * link that leads to a folder, leaves the stow dir or loops, a fifo or device, a symlink on the
 * way to a folder, a package deeper than GROVE_TREE_MAX_DEPTH) answers GROVE_SCAN_BAIL, and the
 * caller plans with the whole model instead, which treats it as it always has.
 */

/* What following the package link kid (in the folder at relpath) finds, or GROVE_SCAN_BAIL. */
static int
lazy_link(struct scan *s, struct grove_node *kid, const char *relpath)
{
	cleanup_free char *kpath = grove_child_path(relpath, kid->name);
	cleanup_free char *dest = NULL;
	cleanup_free char *phys = NULL;
	struct grove_stat st;
	struct grove_error e;
	int r;

	if (!kpath)
		return grove_scan_oom(s);
	if (kid->link[0] == '/') {
		kid->dest_type = GROVE_FT_NONE; /* never followed */
		return 0;
	}
	dest = grove_path_join(relpath, kid->link);
	if (!dest)
		return grove_scan_oom(s);
	if (grove_path_under(kpath, dest))
		return GROVE_SCAN_BAIL; /* its own folder or above */
	r = grove_scan_stat_follow(s, kpath, &phys, &st, &e);
	if (r == -EXDEV || r == -ELOOP)
		return GROVE_SCAN_BAIL;
	if (r < 0) {
		*s->err = e;
		return r;
	}
	if (st.type == GROVE_FT_DIR)
		return GROVE_SCAN_BAIL;
	kid->dest_type = st.type;
	return 0;
}

/* Lists the package folder dfd (stow-relative relpath) into node: its folders unlisted. */
static int
lazy_list(struct scan *s, struct grove_node *node, int dfd, bool on_mount, const char *relpath)
{
	struct grove_dirent *ents = NULL;
	size_t n = 0;
	int r;

	if (grove_path_slashes(relpath) >= GROVE_TREE_MAX_DEPTH)
		return GROVE_SCAN_BAIL;
	r = grove_fs_list_flags(dfd, grove_scan_stow_list_flags(s, on_mount), &ents, &n, s->err);
	if (r < 0)
		return grove_error_prefix(s->err, "read package folder '%s/%s'", s->stow->path,
					  relpath);
	for (size_t i = 0; i < n && r == 0; i++) {
		cleanup_free char *text = NULL;
		struct grove_node *kid;

		if (ents[i].type != GROVE_FT_REG && ents[i].type != GROVE_FT_DIR &&
		    ents[i].type != GROVE_FT_LINK) {
			r = GROVE_SCAN_BAIL;
			break;
		}
		if (ents[i].type == GROVE_FT_LINK) {
			r = grove_fs_readlink_at(dfd, ents[i].name, &text, s->err);
			if (r < 0)
				break;
		}
		kid = grove_node_new(ents[i].name, ents[i].type, text);
		if (!kid || grove_node_add(node, kid) < 0) {
			grove_node_free(kid);
			r = grove_scan_oom(s);
			break;
		}
		if (ents[i].type == GROVE_FT_LINK)
			r = lazy_link(s, kid, relpath);
	}
	grove_dirents_free(ents, n);
	if (r == 0)
		node->listed = true;
	return r;
}

void
grove_scan_forget(struct grove_node *node)
{
	if (node)
		grove_node_drop_kids(node);
}

int
grove_scan_pkg_folder(struct grove_world *w, const struct grove_root *stow, const char *relpath,
		      struct grove_error *err)
{
	struct grove_scan_opts so = { 0 };
	struct scan s = { .w = w, .stow = stow, .o = &so, .err = err };
	struct grove_node *n = grove_node_lookup(w->stow, relpath);
	cleanup_fd int fd = -1;
	bool on_mount;

	if (!n) {
		/* Made on the way as unlisted folders (model_path); a listed folder on the way
		 * that lacks it: there is no such folder. */
		bool absent;

		n = grove_scan_model_path(&s, relpath, &absent);
		if (!n)
			return absent ? GROVE_SCAN_BAIL : grove_scan_oom(&s);
	}
	if (n->listed)
		return 0;
	if (n->type != GROVE_FT_DIR)
		return GROVE_SCAN_BAIL;
	grove_node_drop_kids(n);
	fd = grove_fs_open_dir_beneath_mount(stow->fd, relpath, &on_mount, err);
	if (fd < 0)
		return fd == -ELOOP || fd == -ENOTDIR || fd == -ENOENT ? GROVE_SCAN_BAIL : fd;
	return lazy_list(&s, n, fd, on_mount, relpath);
}

/* Reads the package folder dfd (at relpath) and every folder beneath it, keeping nothing. */
static int
lazy_check(struct scan *s, int dfd, bool on_mount, const char *relpath)
{
	struct grove_node *tmp = grove_node_new("", GROVE_FT_DIR, NULL);
	int r;

	if (!tmp)
		return grove_scan_oom(s);
	r = lazy_list(s, tmp, dfd, on_mount, relpath);
	for (size_t i = 0; i < tmp->n_kids && r == 0; i++) {
		const struct grove_node *kid = tmp->kids[i];
		cleanup_free char *kpath = NULL;
		cleanup_fd int kfd = -1;
		bool kid_on_mount;

		if (kid->type != GROVE_FT_DIR)
			continue;
		kpath = grove_child_path(relpath, kid->name);
		if (!kpath) {
			r = grove_scan_oom(s);
			break;
		}
		kfd = grove_fs_open_dir_at_mount(dfd, kid->name, &kid_on_mount, s->err);
		if (kfd < 0) {
			r = grove_error_prefix(s->err, "read package folder '%s/%s'", s->stow->path,
					       kpath);
			break;
		}
		r = lazy_check(s, kfd, on_mount && kid_on_mount, kpath);
	}
	grove_node_free(tmp);
	return r;
}

int
grove_scan_pkg_check(struct grove_world *w, const struct grove_root *stow, const char *relpath,
		     struct grove_error *err)
{
	struct grove_scan_opts so = { 0 };
	struct scan s = { .w = w, .stow = stow, .o = &so, .err = err };
	bool on_mount;
	cleanup_fd int fd = grove_fs_open_dir_beneath_mount(stow->fd, relpath, &on_mount, err);

	if (fd < 0)
		return fd == -ELOOP || fd == -ENOTDIR || fd == -ENOENT ? GROVE_SCAN_BAIL : fd;
	return lazy_check(&s, fd, on_mount, relpath);
}

int
grove_scan_pkg_ignore(struct grove_world *w, const struct grove_root *stow, const char *package,
		      struct grove_error *err)
{
	struct grove_scan_opts so = { 0 };
	struct scan s = { .w = w, .stow = stow, .o = &so, .err = err };

	return grove_scan_package_ignore(&s, package);
}

int
grove_scan_target_folder(struct grove_world *w, const struct grove_root *stow,
			 const struct grove_root *target, const char *tpath,
			 struct grove_error *err)
{
	struct grove_scan_opts so = { 0 };
	struct scan s = { .w = w, .stow = stow, .target = target, .o = &so, .err = err };
	struct grove_node *n = grove_node_lookup(w->target, tpath);
	cleanup_fd int fd = -1;
	bool on_mount;
	int r;

	if (!n || n->orig_type != GROVE_FT_DIR)
		return GROVE_SCAN_BAIL;
	if (n->listed)
		return 0;
	fd = grove_fs_open_dir_beneath_mount(target->fd, tpath[0] ? tpath : ".", &on_mount, err);
	if (fd < 0)
		return fd == -ELOOP || fd == -ENOTDIR || fd == -ENOENT ? GROVE_SCAN_BAIL : fd;
	r = grove_scan_target_dir(&s, n, fd, on_mount, tpath, NULL, 0);
	/* What the folder's links into the stow dir point at (the model answered the others). */
	if (r >= 0)
		r = grove_scan_note_pending(&s);
	grove_scan_end(&s);
	return r < 0 ? r : 0;
}
