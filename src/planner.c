/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner: GNU Stow 2.4's stow/unstow algorithm over in-memory trees, then the plan as a tree
 * difference. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "grove/planner.h"
#include "util.h"

/*
 * Stow plans by queueing tasks and answering "is this a link?" from pending
 * tasks before the disk. Here the target tree carries both states: orig_* is
 * the disk as scanned and type/link what the tasks so far leave, so the
 * current state *is* Stow's task-aware view, and the plan is the difference.
 * Stow's checks that look at the disk regardless of tasks (the stow dir, the
 * target's listing in cleanup_invalid_links and compat unstow, -e/-d of
 * package paths) use the orig state or the stow model.
 */

struct planner {
	struct grove_world *w;
	const struct grove_plan_opts *o;
	struct grove_plan *plan;
	struct grove_error *err;
	const char *action;  /* "stow" or "unstow", for conflicts */
	int rc;              /* first fatal error */
	bool incomplete;     /* the plan needs parts of the stow dir not read yet */
	const char *package; /* the package whose entry is being planned, for conflicts */
	/* The last package record looked up: consecutive entries share their package,
	 * and a linear search per entry over hundreds of packages was quadratic. */
	const char *pkg_name;
	struct grove_world_pkg *pkg;
	/* While unfolding a link into a second stow dir beneath the target: that stow dir's
	 * path from the target, whose packages are read from the target tree. NULL: w->stow. */
	const char *src_stow;
};

static struct grove_world_pkg *
pkg_record(struct planner *p, const char *package)
{
	if (!p->pkg_name || (p->pkg_name != package && strcmp(p->pkg_name, package) != 0)) {
		p->pkg = grove_world_pkg(p->w, package);
		p->pkg_name = p->pkg ? package : NULL;
	}
	return p->pkg;
}

static void
fail(struct planner *p, int code, const char *fmt, const char *a, const char *b)
{
	if (p->rc)
		return;
	p->rc = code;
	grove_error_set(p->err, code, fmt, a ? a : "", b ? b : "");
}

static void
oom(struct planner *p)
{
	fail(p, -ENOMEM, "planning: %s%s", "out of memory", NULL);
}

static void
conflict(struct planner *p, const char *package, const char *path, const char *msg)
{
	if (grove_plan_add_conflict(p->plan, p->action, package, path, msg) < 0)
		oom(p);
}

static void
warning(struct planner *p, const char *msg)
{
	if (grove_plan_add_warning(p->plan, msg) < 0)
		oom(p);
}

/* ---- the stow dir model ---- */

static enum grove_ftype
follow_type(const struct grove_node *n)
{
	enum grove_ftype t;

	if (!n)
		return GROVE_FT_NONE;
	t = n->type == GROVE_FT_LINK ? n->dest_type : n->type;
	return t == GROVE_FT_UNKNOWN ? GROVE_FT_NONE : t;
}

/*
 * The scan reads the stow dir sparsely; when planning reaches a part it did
 * not read, the planner records the need and stops with -EAGAIN, and the
 * caller reads it and plans again from the start (planning is pure).
 */
static void
need(struct planner *p, const char *relpath)
{
	if (grove_world_need(p->w, relpath) < 0) {
		oom(p);
		return;
	}
	/* Planning goes on with "missing" as the answer, to collect more needs
	 * in this round; its result is thrown away. */
	p->incomplete = true;
}

/* The model node for a target-relative path inside the stow dir, or NULL when
 * missing (or not in the stow dir); asks for it when the scan has not read it. */
static struct grove_node *
stow_node_at(struct planner *p, const char *path_from_target)
{
	const char *rest = grove_path_strip_prefix(path_from_target, p->w->stow_path);
	struct grove_node *n;
	size_t off;
	bool descends;

	if (!rest)
		return NULL;
	n = grove_node_walk(p->w->stow, rest, &off);
	if (!rest[off])
		return n;
	if (strcspn(rest + off, "/") > NAME_MAX)
		return NULL;
	descends = n->type == GROVE_FT_DIR ||
		   (n->type == GROVE_FT_LINK && n->dest_type == GROVE_FT_DIR);
	if (!n->listed && descends)
		need(p, rest);
	return NULL;
}

/* Asks for the target folder tpath to be listed (see need). */
static void
tneed(struct planner *p, const char *tpath)
{
	if (grove_world_tneed(p->w, tpath) < 0) {
		oom(p);
		return;
	}
	p->incomplete = true;
}

/*
 * The target node at path as on disk (the scanned state), or NULL when nothing is there. The
 * way there is folders only: a second stow dir beneath the target is read through the held
 * target, no symlink followed. A folder on the way that the scan has not listed is asked for
 * (NULL meanwhile, with p->incomplete set).
 */
static struct grove_node *
disk_node(struct planner *p, const char *path)
{
	struct grove_node *n = p->w->target;
	const char *s = path;
	char name[NAME_MAX + 1];

	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (!n || n->orig_type != GROVE_FT_DIR || len > NAME_MAX)
			return NULL;
		if (!n->listed) {
			cleanup_free char *pre =
				strndup(path, s > path ? (size_t)(s - path) - 1 : 0);

			if (!pre)
				oom(p);
			else
				tneed(p, pre);
			return NULL;
		}
		memcpy(name, s, len);
		name[len] = '\0';
		n = grove_node_child(n, name);
		if (n && n->orig_type == GROVE_FT_NONE)
			n = NULL;
		s += len + (e ? 1 : 0);
	}
	return n;
}

/* Whether a target-relative path lies in a second stow dir, read from the target tree. */
static bool
in_other_stow(struct planner *p, const char *path)
{
	return p->o->other_stow_dirs && !grove_path_strip_prefix(path, p->w->stow_path);
}

/* Stow's -e on a path in the stow dir (or a second one beneath the target). */
static bool
stow_exists(struct planner *p, const char *path)
{
	if (in_other_stow(p, path))
		return disk_node(p, path) != NULL;
	return follow_type(stow_node_at(p, path)) != GROVE_FT_NONE;
}

/* Stow's -d on a path in the stow dir (or a second one beneath the target). */
static bool
stow_isdir(struct planner *p, const char *path)
{
	if (in_other_stow(p, path)) {
		struct grove_node *n = disk_node(p, path);
		return n && n->orig_type == GROVE_FT_DIR;
	}
	return follow_type(stow_node_at(p, path)) == GROVE_FT_DIR;
}

/* The package node for package/subpath (in the second stow dir being unfolded from, when
 * p->src_stow is set). */
static struct grove_node *
pkg_node(struct planner *p, const char *package, const char *subpath)
{
	struct grove_node *n;

	if (p->src_stow) {
		cleanup_free char *pp = grove_path_join(p->src_stow, package);
		cleanup_free char *full = pp ? grove_path_join(pp, subpath) : NULL;

		if (!full) {
			oom(p);
			return NULL;
		}
		return disk_node(p, full);
	}
	n = grove_node_child(p->w->stow, package);
	return n ? grove_node_lookup(n, subpath) : NULL;
}

/* Whether the scan dropped the entries of package/subpath or of a folder on the way to it
 * (a big folder it expected to fold whole): then the planner asks for it (need). */
static bool
pkg_pruned(struct planner *p, const char *package, const char *subpath)
{
	struct grove_node *n = p->src_stow ? NULL : grove_node_child(p->w->stow, package);
	size_t off;

	/* A pruned folder has no kids, so a walk stops at the first one on the way. */
	return n && grove_node_walk(n, subpath, &off)->pruned;
}

/* ---- ownership ---- */

/*
 * Stow's find_stowed_path: a link is ours when its text, joined to the folder
 * it sits in, lands in the stow dir; the package is the next component.
 * Returns the path from the target (malloc'd) and the package, or NULL.
 * With other_stow_dirs, a link landing in a folder marked with .stow beneath
 * the target (a second stow dir, read through the target tree) is Stow's too:
 * *ret_stow (when asked for) is then that folder's path, malloc'd; NULL for
 * this run's stow dir. Marked stow dirs outside the target (and the target's
 * parents) lie outside the roots grove holds: such links count as foreign.
 */
static char *
find_owner(struct planner *p, const char *target_path, const char *link, char **ret_pkg,
	   char **ret_stow)
{
	cleanup_free char *parent = NULL;
	char *joined;
	const char *rest, *slash;

	if (ret_stow)
		*ret_stow = NULL;
	if (link[0] == '/')
		return NULL;
	parent = grove_path_parent(target_path);
	if (!parent || !(joined = grove_path_join(parent, link))) {
		oom(p);
		return NULL;
	}
	rest = grove_path_strip_prefix(joined, p->w->stow_path);
	if (!rest && p->o->other_stow_dirs && strcmp(joined, "..") && strncmp(joined, "../", 3)) {
		/* Stow's marked_stow_dir walk, folder by folder down the destination. */
		for (const char *e = strchr(joined, '/'); e && !rest; e = strchr(e + 1, '/')) {
			cleanup_free char *dir = strndup(joined, (size_t)(e - joined));
			struct grove_node *d = dir ? disk_node(p, dir) : NULL;
			struct grove_node *mark;

			if (!dir) {
				oom(p);
				break;
			}
			if (!d || d->orig_type != GROVE_FT_DIR)
				break;
			if (!d->listed) {
				tneed(p, dir);
				break;
			}
			mark = grove_node_child(d, ".stow");
			if (mark && mark->orig_type != GROVE_FT_NONE) {
				rest = e + 1;
				if (ret_stow && !(*ret_stow = steal_ptr(dir)))
					oom(p);
			}
		}
	}
	if (!rest || !rest[0]) {
		free(joined);
		return NULL;
	}
	slash = strchr(rest, '/');
	if (ret_pkg) {
		*ret_pkg = slash ? strndup(rest, (size_t)(slash - rest)) : strdup(rest);
		if (!*ret_pkg) {
			free(joined);
			oom(p);
			return NULL;
		}
	}
	return joined;
}

static char *
find_stowed_path(struct planner *p, const char *target_path, const char *link, char **ret_pkg)
{
	return find_owner(p, target_path, link, ret_pkg, NULL);
}

/* ---- the target view ---- */

static struct grove_node *
tnode(struct planner *p, const char *path)
{
	return grove_node_lookup(p->w->target, path);
}

static enum grove_ftype
ttype(struct planner *p, const char *path)
{
	struct grove_node *n = tnode(p, path);

	return n ? n->type : GROVE_FT_NONE;
}

/* The node at path, made (absent in both states) if missing; its parent must exist. */
static struct grove_node *
tensure(struct planner *p, const char *path)
{
	struct grove_node *n = tnode(p, path), *parent, *kid;
	cleanup_free char *ppath = NULL;
	const char *base;

	if (n)
		return n;
	ppath = grove_path_parent(path);
	if (!ppath) {
		oom(p);
		return NULL;
	}
	parent = tnode(p, ppath);
	if (!parent) {
		fail(p, -GROVE_E_INTERNAL, "planning '%s': parent folder unknown%s", path, NULL);
		return NULL;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	kid = grove_node_new(base, GROVE_FT_NONE, NULL);
	if (!kid || grove_node_add(parent, kid) < 0) {
		grove_node_free(kid);
		oom(p);
		return NULL;
	}
	return kid;
}

/* Stow's -e on a target path, on disk as scanned (pending tasks not seen). */
static bool
disk_exists(struct planner *p, const char *path)
{
	struct grove_node *n = p->w->target;
	const char *s = path;
	char name[256];
	size_t off;

	/* The common case first: every folder on the way is a folder on disk, so
	 * the answer is the last node's (or "no" if the walk stops early). */
	const struct grove_node *top = NULL;

	n = grove_node_walk(p->w->target, path, &off);
	for (const struct grove_node *a = path[off] ? n : n->parent; a; a = a->parent)
		if (a->orig_type != GROVE_FT_DIR)
			top = a;
	if (top && top->orig_type == GROVE_FT_LINK)
		goto slow; /* the answer is inside the stow dir, if the link is ours */
	if (top || path[off])
		return false;
	if (n->orig_type == GROVE_FT_LINK)
		return n->dest_type != GROVE_FT_NONE && n->dest_type != GROVE_FT_UNKNOWN;
	return n->orig_type != GROVE_FT_NONE;

slow:
	n = p->w->target;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (len == 0 || (len == 1 && s[0] == '.')) {
			s += len + (e ? 1 : 0);
			continue;
		}
		if (len >= sizeof(name))
			return false;
		if (n->orig_type == GROVE_FT_LINK) {
			/* Continue inside the stow dir when the link is ours. */
			cleanup_free char *from = grove_node_path(n);
			cleanup_free char *dest =
				from ? find_stowed_path(p, from, n->orig_link, NULL) : NULL;
			cleanup_free char *full = dest ? grove_path_join(dest, s) : NULL;
			return full && stow_exists(p, full);
		}
		if (n->orig_type != GROVE_FT_DIR)
			return false;
		memcpy(name, s, len);
		name[len] = '\0';
		n = grove_node_child(n, name);
		if (!n || n->orig_type == GROVE_FT_NONE)
			return false;
		s += len + (e ? 1 : 0);
	}
	if (n->orig_type == GROVE_FT_LINK)
		return n->dest_type != GROVE_FT_NONE && n->dest_type != GROVE_FT_UNKNOWN;
	return n->orig_type != GROVE_FT_NONE;
}

/* ---- the tasks, applied to the current state ---- */

/* A path or link text the kernel cannot take in one call (PATH_MAX) is a
 * conflict found while planning, not a failure half-way through executing. */
static bool
too_long(struct planner *p, const char *path, const char *text)
{
	char msg[GROVE_ERROR_MSG_MAX];

	if (strlen(path) < PATH_MAX && (!text || strlen(text) < PATH_MAX))
		return false;
	snprintf(msg, sizeof(msg),
		 "path or link text too long (over PATH_MAX, %d bytes): %.200s...", PATH_MAX, path);
	conflict(p, p->package ? p->package : "", path, msg);
	return true;
}

static void
do_link(struct planner *p, const char *dest, const char *path)
{
	struct grove_node *n;

	too_long(p, path, dest); /* a conflict; planning goes on to find the others */
	n = tensure(p, path);

	if (!n)
		return;
	n->type = GROVE_FT_LINK;
	if (grove_node_set_link(n, dest) < 0)
		oom(p);
}

static void
do_unlink(struct planner *p, const char *path)
{
	struct grove_node *n = tnode(p, path);

	if (!n)
		return;
	n->type = GROVE_FT_NONE;
	grove_node_set_link(n, NULL);
}

static void
do_mkdir(struct planner *p, const char *path)
{
	struct grove_node *n;

	too_long(p, path, NULL);
	n = tensure(p, path);

	if (!n)
		return;
	n->type = GROVE_FT_DIR;
	n->listed = true;
	grove_node_set_link(n, NULL);
}

static void
do_rmdir(struct planner *p, const char *path)
{
	struct grove_node *n = tnode(p, path);

	if (n)
		n->type = GROVE_FT_NONE;
}

/* ---- ignore, defer, override ---- */

/* A pattern over its match budget fails the plan (an answer either way would be a guess) and
 * counts as a match meanwhile, so that nothing more is planned for that path. */
static bool
pattern_answer(struct planner *p, int r, const struct grove_error *e)
{
	if (r < 0)
		fail(p, r, "%s%s", e->msg, NULL);
	return r != 0;
}

static bool
ignored(struct planner *p, const char *package, const char *target_path)
{
	const struct grove_world_pkg *pkg;
	const struct grove_ignore_list *list;
	struct grove_error e = { 0 };

	if (p->rc)
		return true; /* failing already: no more matching */
	if (p->o->ignore &&
	    pattern_answer(p, grove_pattern_set_match(p->o->ignore, target_path, &e), &e))
		return true;
	/* A second stow dir's package: its own ignore file is not read (the global list). */
	pkg = p->src_stow ? NULL : pkg_record(p, package);
	list = pkg && pkg->local_ignore ? pkg->local_ignore : p->w->global_ignore;
	return list && pattern_answer(p, grove_ignore_list_match(list, target_path, &e), &e);
}

static bool
deferred(struct planner *p, const char *path)
{
	struct grove_error e = { 0 };

	if (p->rc)
		return false;
	return p->o->defer && pattern_answer(p, grove_pattern_set_match(p->o->defer, path, &e), &e);
}

static bool
overridden(struct planner *p, const char *path)
{
	struct grove_error e = { 0 };

	if (p->rc)
		return false;
	return p->o->override &&
	       pattern_answer(p, grove_pattern_set_match(p->o->override, path, &e), &e);
}

static bool
should_skip_target(struct planner *p, const char *path)
{
	char msg[GROVE_ERROR_MSG_MAX];
	cleanup_free char *marker = NULL;
	cleanup_free char *protect = NULL;

	if (strcmp(path, p->w->stow_path) == 0) {
		snprintf(msg, sizeof(msg), "skipping target which was current stow directory %s",
			 path);
		warning(p, msg);
		return true;
	}
	marker = grove_path_join(path, ".stow");
	protect = grove_path_join(path, ".nonstow");
	if (!marker || !protect) {
		oom(p);
		return true;
	}
	if (disk_exists(p, marker)) {
		snprintf(msg, sizeof(msg), "skipping marked Stow directory %s", path);
		warning(p, msg);
		return true;
	}
	if (disk_exists(p, protect)) {
		snprintf(msg, sizeof(msg), "skipping protected directory %s", path);
		warning(p, msg);
		return true;
	}
	return false;
}

/* ---- stow ---- */

static void stow_node(struct planner *p, const char *package, const char *pkg_subpath,
		      const char *target_subpath);

static char *
join3(const char *a, const char *b, const char *c)
{
	cleanup_free char *ab = grove_path_join(a, b);

	return ab ? grove_path_join(ab, c) : NULL;
}

static void
stow_contents(struct planner *p, const char *package, const char *pkg_subdir,
	      const char *target_subdir)
{
	struct grove_node *dir;
	struct grove_world_pkg *pkg;
	cleanup_free struct grove_node **kids = NULL;

	if (p->rc || should_skip_target(p, pkg_subdir))
		return;
	dir = pkg_node(p, package, pkg_subdir);
	if (p->src_stow) {
		/* A package of a second stow dir, read from the target tree. */
		if (!dir && p->incomplete)
			return;
		if (dir && dir->orig_type == GROVE_FT_DIR && !dir->listed) {
			cleanup_free char *pp = grove_path_join(p->src_stow, package);
			cleanup_free char *full = pp ? grove_path_join(pp, pkg_subdir) : NULL;

			if (!full)
				oom(p);
			else
				tneed(p, full);
			return;
		}
	} else if ((pkg = pkg_record(p, package)),
		   !dir || !dir->listed || !pkg || !pkg->ignore_loaded) {
		struct grove_node *root = grove_node_child(p->w->stow, package);
		cleanup_free char *rel = grove_path_join(package, pkg_subdir);

		if (!rel) {
			oom(p);
			return;
		}
		if (!root || !root->listed || !pkg || !pkg->ignore_loaded ||
		    pkg_pruned(p, package, pkg_subdir)) {
			need(p, rel); /* a package the scan read only in part */
			return;
		}
	}
	if (!dir || follow_type(dir) != GROVE_FT_DIR || !dir->listed) {
		fail(p, -GROVE_E_PRECONDITION,
		     "folder '%s' of package '%s' is missing, or changed while it was read",
		     pkg_subdir, package);
		return;
	}
	if (ttype(p, target_subdir) == GROVE_FT_NONE) {
		fail(p, -GROVE_E_INTERNAL, "planning: '%s' is not a folder in the target%s",
		     target_subdir, NULL);
		return;
	}
	kids = grove_node_sorted_kids(dir);
	if (!kids) {
		oom(p);
		return;
	}
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		const char *name = (*k)->name;
		cleanup_free char *pkg_path = grove_path_join(pkg_subdir, name);
		cleanup_free char *tpath = grove_path_join(target_subdir, name);

		if (!pkg_path || !tpath) {
			oom(p);
			return;
		}
		if (p->src_stow && (*k)->orig_type == GROVE_FT_NONE)
			continue; /* the target tree: an entry only this plan makes */
		if (ignored(p, package, tpath))
			continue;
		if (p->o->dotfiles) {
			cleanup_free char *adj = grove_dotfile_adjust(name);
			if (!adj) {
				oom(p);
				return;
			}
			if (strcmp(adj, name) != 0) {
				free(tpath);
				tpath = grove_path_join(target_subdir, adj);
				if (!tpath) {
					oom(p);
					return;
				}
			}
		}
		stow_node(p, package, pkg_path, tpath);
	}
}

static void
stow_existing_link(struct planner *p, const char *package, const char *pkg_subpath,
		   const char *target_subpath, const char *pkg_path, const char *link_dest)
{
	struct grove_node *t = tnode(p, target_subpath);
	cleanup_free char *existing = strdup(t->link);
	cleanup_free char *owner = NULL;
	cleanup_free char *owner_stow = NULL;
	cleanup_free char *existing_path = NULL;
	char msg[GROVE_ERROR_MSG_MAX];

	if (!existing) {
		oom(p);
		return;
	}
	existing_path = find_owner(p, target_subpath, existing, &owner, &owner_stow);
	if (!existing_path) {
		snprintf(msg, sizeof(msg), "existing target is not owned by stow: %s",
			 target_subpath);
		conflict(p, package, target_subpath, msg);
		return;
	}
	if (!stow_exists(p, existing_path)) {
		/* A dangling link of ours: replace it. */
		do_unlink(p, target_subpath);
		do_link(p, link_dest, target_subpath);
		return;
	}
	if (strcmp(existing, link_dest) == 0)
		return;
	if (deferred(p, target_subpath))
		return;
	if (overridden(p, target_subpath)) {
		do_unlink(p, target_subpath);
		do_link(p, link_dest, target_subpath);
		return;
	}
	if (stow_isdir(p, existing_path) && stow_isdir(p, pkg_path)) {
		/* Unfold: the folder becomes real, holding both packages' links. */
		const char *src = p->src_stow;

		do_unlink(p, target_subpath);
		do_mkdir(p, target_subpath);
		p->src_stow = owner_stow; /* the owner may live in a second stow dir */
		stow_contents(p, owner, pkg_subpath, target_subpath);
		p->src_stow = src;
		stow_contents(p, package, pkg_subpath, target_subpath);
		return;
	}
	snprintf(msg, sizeof(msg), "existing target is stowed to a different package: %s => %s",
		 target_subpath, existing);
	conflict(p, package, target_subpath, msg);
}

static void
stow_node(struct planner *p, const char *package, const char *pkg_subpath,
	  const char *target_subpath)
{
	cleanup_free char *pkg_path =
		join3(p->src_stow ? p->src_stow : p->w->stow_path, package, pkg_subpath);
	cleanup_free char *ups = NULL;
	cleanup_free char *link_dest = NULL;
	struct grove_node *src = pkg_node(p, package, pkg_subpath);
	struct grove_node *t;
	char msg[GROVE_ERROR_MSG_MAX];
	int level;

	if (!pkg_path) {
		oom(p);
		return;
	}
	p->package = package;
	if (!src) {
		fail(p, -GROVE_E_INTERNAL, "planning: '%s' was not scanned%s", pkg_path, NULL);
		return;
	}
	if (src->type == GROVE_FT_LINK) {
		if (src->link[0] == '/') {
			snprintf(msg, sizeof(msg), "source is an absolute symlink %s => %s",
				 pkg_path, src->link);
			conflict(p, package, target_subpath, msg);
			return;
		}
		if (src->escapes) {
			snprintf(
				msg, sizeof(msg),
				"source is a symlink that leaves the stow directory or loops %s => %s",
				pkg_path, src->link);
			conflict(p, package, target_subpath, msg);
			return;
		}
	}
	if (src->type == GROVE_FT_OTHER) {
		snprintf(msg, sizeof(msg), "source is not a regular file, folder or symlink: %s",
			 pkg_path);
		conflict(p, package, target_subpath, msg);
		return;
	}

	level = grove_path_slashes(pkg_subpath);
	ups = malloc((size_t)level * 3 + 1);
	if (!ups) {
		oom(p);
		return;
	}
	ups[0] = '\0';
	for (int i = 0; i < level; i++)
		memcpy(ups + 3 * i, "../", 4);
	link_dest = grove_path_join(ups, pkg_path);
	if (!link_dest) {
		oom(p);
		return;
	}

	t = tnode(p, target_subpath);
	if (t && t->type == GROVE_FT_LINK) {
		stow_existing_link(p, package, pkg_subpath, target_subpath, pkg_path, link_dest);
	} else if (t && t->type != GROVE_FT_NONE) {
		bool src_dir = follow_type(src) == GROVE_FT_DIR;

		if (t->type == GROVE_FT_DIR) {
			if (!src_dir) {
				snprintf(
					msg, sizeof(msg),
					"cannot stow non-directory %s over existing directory target %s",
					pkg_path, target_subpath);
				conflict(p, package, target_subpath, msg);
			} else {
				stow_contents(p, package, pkg_subpath, target_subpath);
			}
		} else if (p->o->adopt) {
			if (src_dir) {
				snprintf(
					msg, sizeof(msg),
					"cannot stow directory %s over existing non-directory target %s",
					pkg_path, target_subpath);
				conflict(p, package, target_subpath, msg);
			} else if (t->orig_type != GROVE_FT_REG) {
				snprintf(msg, sizeof(msg),
					 "cannot adopt %s into %s: only regular files are adopted",
					 target_subpath, pkg_path);
				conflict(p, package, target_subpath, msg);
			} else {
				const char *rest =
					grove_path_strip_prefix(pkg_path, p->w->stow_path);
				free(t->adopt_to);
				t->adopt_to = rest ? strdup(rest) : NULL;
				if (!t->adopt_to) {
					oom(p);
					return;
				}
				do_link(p, link_dest, target_subpath);
			}
		} else {
			snprintf(
				msg, sizeof(msg),
				"cannot stow %s over existing target %s since neither a link nor a directory and --adopt not specified",
				pkg_path, target_subpath);
			conflict(p, package, target_subpath, msg);
		}
	} else if (p->o->no_folding && src->type == GROVE_FT_DIR) {
		do_mkdir(p, target_subpath);
		stow_contents(p, package, pkg_subpath, target_subpath);
	} else {
		do_link(p, link_dest, target_subpath);
	}
}

/*
 * Entries grove refuses wherever they are in a package being stowed, even
 * inside a folder that folds into one link and so is never visited: a link
 * that leaves the stow dir or loops, and fifos, sockets and devices. grove
 * would refuse them as soon as the folder is unfolded, so it refuses the
 * package now rather than accept it and fail later. (Absolute links are
 * refused where Stow refuses them: when visited.)
 */
static void
validate_tree(struct planner *p, const char *package, struct grove_node *dir,
	      const char *pkg_subdir, const char *target_subdir)
{
	cleanup_free struct grove_node **kids = grove_node_sorted_kids(dir);
	char msg[GROVE_ERROR_MSG_MAX];

	if (!kids) {
		oom(p);
		return;
	}
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		struct grove_node *n = *k;
		cleanup_free char *pkg_path = NULL;
		cleanup_free char *tpath = NULL;
		cleanup_free char *full = NULL;

		/* Files and links that stay inside the stow dir are fine, ignored or
		 * not: skip them before the joins and the ignore match. */
		if (!(n->type == GROVE_FT_LINK && n->escapes && n->link[0] != '/') &&
		    n->type != GROVE_FT_OTHER && !(n->type == GROVE_FT_DIR && n->listed))
			continue;
		pkg_path = grove_path_join(pkg_subdir, n->name);
		tpath = grove_path_join(target_subdir, n->name);
		if (!pkg_path || !tpath) {
			oom(p);
			return;
		}
		if (ignored(p, package, tpath))
			continue;
		full = join3(p->w->stow_path, package, pkg_path);
		if (!full) {
			oom(p);
			return;
		}
		if (n->type == GROVE_FT_LINK && n->escapes && n->link[0] != '/') {
			snprintf(
				msg, sizeof(msg),
				"source is a symlink that leaves the stow directory or loops %s => %s",
				full, n->link);
			conflict(p, package, tpath, msg);
		} else if (n->type == GROVE_FT_OTHER) {
			snprintf(msg, sizeof(msg),
				 "source is not a regular file, folder or symlink: %s", full);
			conflict(p, package, tpath, msg);
		} else if (n->type == GROVE_FT_DIR && n->listed) {
			if (p->o->dotfiles) {
				cleanup_free char *adj = grove_dotfile_adjust(n->name);
				free(tpath);
				tpath = adj ? grove_path_join(target_subdir, adj) : NULL;
				if (!tpath) {
					oom(p);
					return;
				}
			}
			validate_tree(p, package, n, pkg_path, tpath);
		}
	}
}

/* ---- unstow ---- */

static void unstow_contents(struct planner *p, const char *package, const char *pkg_subdir,
			    const char *target_subdir);

static void
unstow_link_node(struct planner *p, const char *package, const char *pkg_subpath,
		 const char *target_subpath)
{
	struct grove_node *t = tnode(p, target_subpath);
	cleanup_free char *existing_path = NULL;
	cleanup_free char *pkg_path = NULL;
	char msg[GROVE_ERROR_MSG_MAX];

	if (t->link[0] == '/') {
		snprintf(msg, sizeof(msg), "Ignoring an absolute symlink: %s => %s", target_subpath,
			 t->link);
		warning(p, msg);
		return;
	}
	existing_path = find_stowed_path(p, target_subpath, t->link, NULL);
	if (!existing_path)
		return;
	pkg_path = join3(p->w->stow_path, package, pkg_subpath);
	if (!pkg_path) {
		oom(p);
		return;
	}
	if (!stow_exists(p, existing_path) || strcmp(existing_path, pkg_path) == 0)
		do_unlink(p, target_subpath);
}

/* A link in folder dir_path whose destination is missing. Links that do not
 * point into the stow dir cannot be followed beneath the roots: they count as
 * dangling (they keep a folder from folding either way). */
static bool
dangling(struct planner *p, const char *dir_path, const struct grove_node *kid)
{
	cleanup_free char *path = grove_path_join(dir_path, kid->name);
	cleanup_free char *dest = path ? find_stowed_path(p, path, kid->link, NULL) : NULL;

	return !dest || !stow_exists(p, dest);
}

/* Stow's foldable: the folder holds only links, all into one folder of one package. */
static char *
foldable(struct planner *p, const char *target_subdir)
{
	struct grove_node *dir = tnode(p, target_subdir);
	cleanup_free char *parent_in_pkg = NULL;
	cleanup_free char *owner = NULL;
	char *result;
	const char *stripped;

	if (p->o->no_folding || !dir)
		return NULL;
	grove_node_foreach_child (dir, kid) {
		cleanup_free char *np = NULL;

		if (kid->type == GROVE_FT_NONE)
			continue;
		if (kid->type != GROVE_FT_LINK)
			return NULL;
		/*
		 * Stow skips entries that -e says are missing (dangling links),
		 * folds, and then dies in rmdir because the folder is not empty.
		 * A dangling link is an entry: it keeps the folder from folding.
		 */
		if (dangling(p, target_subdir, kid))
			return NULL;
		np = grove_path_parent(kid->link);
		if (!np) {
			oom(p);
			return NULL;
		}
		if (!parent_in_pkg) {
			parent_in_pkg = steal_ptr(np);
		} else if (strcmp(parent_in_pkg, np) != 0) {
			return NULL;
		}
	}
	if (!parent_in_pkg || !parent_in_pkg[0])
		return NULL;
	stripped = parent_in_pkg;
	if (strncmp(stripped, "../", 3) == 0)
		stripped += 3;
	{
		cleanup_free char *path = find_stowed_path(p, target_subdir, stripped, &owner);
		if (!path || !owner || !owner[0])
			return NULL;
	}
	result = strdup(stripped);
	if (!result)
		oom(p);
	return result;
}

static void
fold_tree(struct planner *p, const char *target_subdir, const char *pkg_subpath)
{
	struct grove_node *dir = tnode(p, target_subdir);

	grove_node_foreach_child (dir, kid) {
		if (kid->type == GROVE_FT_NONE)
			continue;
		kid->type = GROVE_FT_NONE;
		grove_node_set_link(kid, NULL);
	}
	do_rmdir(p, target_subdir);
	do_link(p, pkg_subpath, target_subdir);
}

static void
unstow_node(struct planner *p, const char *package, const char *pkg_subpath,
	    const char *target_subpath)
{
	struct grove_node *t = tnode(p, target_subpath);
	struct grove_node *src;
	cleanup_free char *fold = NULL;

	if (!t)
		return;
	if (t->type == GROVE_FT_LINK) {
		unstow_link_node(p, package, pkg_subpath, target_subpath);
		return;
	}
	if (t->type != GROVE_FT_DIR)
		return;
	src = pkg_node(p, package, pkg_subpath);
	if (!p->o->compat && (!src || follow_type(src) != GROVE_FT_DIR)) {
		/*
		 * A folder where the package has a file: Stow dies here
		 * ("unstow_contents() called with non-directory path"). Nothing
		 * of this package can be inside; leave it.
		 */
		return;
	}
	unstow_contents(p, package, pkg_subpath, target_subpath);
	fold = foldable(p, target_subpath);
	if (fold)
		fold_tree(p, target_subpath, fold);
}

static void
cleanup_invalid_links(struct planner *p, const char *dir_path)
{
	struct grove_node *dir = tnode(p, dir_path);
	cleanup_free struct grove_node **kids = NULL;

	/*
	 * Stow runs this once per package for every shared folder it unstows. A
	 * second run finds nothing the first did not: the links it removed (and
	 * those the unstows removed) now have a pending change and are skipped,
	 * and whether the others dangle does not change within a plan. Once per
	 * folder keeps restowing N packages linear instead of quadratic.
	 */
	if (!dir || dir->orig_type != GROVE_FT_DIR || dir->cleaned)
		return;
	dir->cleaned = true;
	kids = grove_node_sorted_kids(dir);
	if (!kids) {
		oom(p);
		return;
	}
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		struct grove_node *n = *k;
		cleanup_free char *path = NULL;
		cleanup_free char *dest = NULL;

		if (n->orig_type != GROVE_FT_LINK)
			continue;
		/* A link with a pending change is left to that change. */
		if (n->type != n->orig_type || strcmp(n->link ? n->link : "", n->orig_link) != 0)
			continue;
		path = grove_path_join(dir_path, n->name);
		if (!path) {
			oom(p);
			return;
		}
		dest = find_stowed_path(p, path, n->orig_link, NULL);
		if (!dest)
			continue; /* not ours: whatever it points at, leave it */
		if (!stow_exists(p, dest))
			do_unlink(p, path);
	}
}

static void
unstow_contents(struct planner *p, const char *package, const char *pkg_subdir,
		const char *target_subdir)
{
	struct grove_node *listing;
	cleanup_free struct grove_node **kids = NULL;

	if (p->rc || should_skip_target(p, target_subdir))
		return;
	if (p->o->compat) {
		listing = tnode(p, target_subdir);
		if (!listing || listing->orig_type != GROVE_FT_DIR)
			return;
	} else {
		listing = pkg_node(p, package, pkg_subdir);
		if ((!listing || !listing->listed) && pkg_pruned(p, package, pkg_subdir)) {
			cleanup_free char *rel = grove_path_join(package, pkg_subdir);

			if (!rel)
				oom(p);
			else
				need(p, rel);
			return;
		}
		if (!listing || follow_type(listing) != GROVE_FT_DIR || !listing->listed) {
			fail(p, -GROVE_E_PRECONDITION,
			     "folder '%s' of package '%s' is missing, or changed while it was read",
			     pkg_subdir, package);
			return;
		}
	}
	kids = grove_node_sorted_kids(listing);
	if (!kids) {
		oom(p);
		return;
	}
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		const char *name = (*k)->name;
		cleanup_free char *pkg_name = strdup(name);
		cleanup_free char *tpath = grove_path_join(target_subdir, name);
		cleanup_free char *pkg_path = NULL;

		/* compat walks the disk listing: entries made by this plan are not on it. */
		if (p->o->compat && (*k)->orig_type == GROVE_FT_NONE)
			continue;
		if (!pkg_name || !tpath) {
			oom(p);
			return;
		}
		if (ignored(p, package, tpath))
			continue;
		if (p->o->dotfiles) {
			if (p->o->compat) {
				free(pkg_name);
				pkg_name = grove_dotfile_unadjust(name);
			} else {
				cleanup_free char *adj = grove_dotfile_adjust(name);
				if (adj && strcmp(adj, name) != 0) {
					free(tpath);
					tpath = grove_path_join(target_subdir, adj);
				}
			}
			if (!pkg_name || !tpath) {
				oom(p);
				return;
			}
		}
		pkg_path = grove_path_join(pkg_subdir, pkg_name);
		if (!pkg_path) {
			oom(p);
			return;
		}
		unstow_node(p, package, pkg_path, tpath);
	}
	if (!p->o->compat)
		cleanup_invalid_links(p, target_subdir);
}

/* ---- the plan as the difference of the two states ---- */

static int emit_removal(struct planner *p, struct grove_node *n, const char *path);

static int
emit(struct planner *p, enum grove_op_kind kind, const char *path, const char *old_text,
     const char *text, const char *stow_path)
{
	cleanup_free char *package = NULL;
	cleanup_free char *other = NULL;
	const char *t = text ? text : old_text;
	cleanup_free char *dest = t ? find_owner(p, path, t, &package, &other) : NULL;

	/* The package an op serves, for the log and `grove status` (this stow dir's only). */
	if (grove_plan_add_op(p->plan, kind, path, old_text, text, stow_path,
			      dest && !other ? package : NULL) < 0) {
		oom(p);
		return -ENOMEM;
	}
	return 0;
}

static int emit_diff(struct planner *p, struct grove_node *n, const char *path);

static int
emit_kids(struct planner *p, struct grove_node *n, const char *path,
	  int (*fn)(struct planner *, struct grove_node *, const char *))
{
	cleanup_free struct grove_node **kids = grove_node_sorted_kids(n);

	if (!kids) {
		oom(p);
		return -ENOMEM;
	}
	for (struct grove_node **k = kids; *k; k++) {
		cleanup_free char *kp = grove_child_path(path, (*k)->name);
		int r;

		if (!kp) {
			oom(p);
			return -ENOMEM;
		}
		if ((r = fn(p, *k, kp)) < 0)
			return r;
	}
	return 0;
}

/* Ops that empty and remove what was on disk at n (our links and folders of them). */
static int
emit_removal(struct planner *p, struct grove_node *n, const char *path)
{
	int r;

	switch (n->orig_type) {
	case GROVE_FT_NONE:
		return 0;
	case GROVE_FT_LINK:
		return emit(p, GROVE_OP_UNLINK, path, n->orig_link, NULL, NULL);
	case GROVE_FT_DIR:
		if ((r = emit_kids(p, n, path, emit_removal)) < 0)
			return r;
		return emit(p, GROVE_OP_RMDIR, path, NULL, NULL, NULL);
	default:
		fail(p, -GROVE_E_INTERNAL, "planning: would remove '%s', which is not ours%s", path,
		     NULL);
		return p->rc;
	}
}

static int
emit_diff(struct planner *p, struct grove_node *n, const char *path)
{
	enum grove_ftype o = n->orig_type, c = n->type;

	if (o == GROVE_FT_DIR && c == GROVE_FT_DIR)
		return emit_kids(p, n, path, emit_diff);
	if (o == c && o == GROVE_FT_LINK && strcmp(n->orig_link, n->link) == 0)
		return 0;
	if (o == c && o != GROVE_FT_LINK)
		return 0;
	switch (o) {
	case GROVE_FT_NONE:
		if (c == GROVE_FT_LINK)
			return emit(p, GROVE_OP_LINK, path, NULL, n->link, NULL);
		if (c == GROVE_FT_DIR) {
			int r = emit(p, GROVE_OP_MKDIR, path, NULL, NULL, NULL);
			return r < 0 ? r : emit_kids(p, n, path, emit_diff);
		}
		break;
	case GROVE_FT_LINK:
		if (c == GROVE_FT_NONE)
			return emit(p, GROVE_OP_UNLINK, path, n->orig_link, NULL, NULL);
		if (c == GROVE_FT_LINK)
			return emit(p, GROVE_OP_RELINK, path, n->orig_link, n->link, NULL);
		if (c == GROVE_FT_DIR) {
			int r = emit(p, GROVE_OP_UNFOLD, path, n->orig_link, NULL, NULL);
			return r < 0 ? r : emit_kids(p, n, path, emit_diff);
		}
		break;
	case GROVE_FT_DIR:
		if (c == GROVE_FT_LINK) {
			int r = emit(p, GROVE_OP_FOLD, path, NULL, n->link, NULL);
			return r < 0 ? r : emit_kids(p, n, path, emit_removal);
		}
		if (c == GROVE_FT_NONE)
			return emit_removal(p, n, path);
		break;
	case GROVE_FT_REG:
		if (c == GROVE_FT_LINK && n->adopt_to)
			return emit(p, GROVE_OP_ADOPT, path, NULL, n->link, n->adopt_to);
		break;
	default:
		break;
	}
	fail(p, -GROVE_E_INTERNAL, "planning: no op takes '%s' where the plan wants it%s", path,
	     NULL);
	return p->rc;
}

/* ---- entry point ---- */

static bool
check_package(struct planner *p, const char *package)
{
	struct grove_node *n = grove_node_child(p->w->stow, package);
	const char *why = "";

	if (n && follow_type(n) == GROVE_FT_DIR && n->listed)
		return true;
	if (p->o->stow_words) {
		fail(p, -GROVE_E_NOPACKAGE, "The stow directory %s does not contain package %s",
		     p->w->stow_path, package);
		return false;
	}
	if (n && n->type == GROVE_FT_LINK && n->escapes)
		why = n->link[0] == '/' ? " (it is an absolute link out of the stow directory)"
					: " (it is a link that leaves the stow directory or loops)";
	else if (n && n->type == GROVE_FT_LINK)
		why = " (it is a link to something that is not a folder)";
	else if (n && n->type != GROVE_FT_NONE)
		why = " (it is a file, not a folder)";
	if (!p->rc)
		p->rc = grove_error_set(p->err, -GROVE_E_NOPACKAGE,
					"the stow directory '%s' does not contain package '%s'%s",
					p->w->stow_path, package, why);
	return false;
}

int
grove_planner_run(struct grove_world *w, const struct grove_plan_opts *opts, char *const *unstow,
		  size_t n_unstow, char *const *stow, size_t n_stow, struct grove_plan *plan,
		  struct grove_error *err)
{
	struct planner p = { .w = w, .o = opts, .plan = plan, .err = err };

	p.action = "unstow";
	for (size_t i = 0; i < n_unstow && !p.rc; i++)
		if (check_package(&p, unstow[i]))
			unstow_contents(&p, unstow[i], ".", ".");
	p.action = "stow";
	for (size_t i = 0; i < n_stow && !p.rc; i++) {
		if (!check_package(&p, stow[i]))
			continue;
		validate_tree(&p, stow[i], grove_node_child(w->stow, stow[i]), ".", ".");
		stow_contents(&p, stow[i], ".", ".");
	}
	if (p.incomplete && (!p.rc || p.rc != -ENOMEM))
		return grove_error_set(err, -EAGAIN, "planning needs more of the stow directory");
	if (p.rc)
		return p.rc;
	if (plan->n_conflicts) {
		grove_plan_sort_conflicts(plan);
		return 0;
	}
	if (opts->release_stow)
		w->stow = grove_node_free(w->stow); /* emitting reads the target only */
	emit_kids(&p, w->target, "", emit_diff);
	return p.rc;
}

int
grove_planner_diff(struct grove_world *w, struct grove_plan *plan, struct grove_error *err)
{
	struct grove_plan_opts none = { 0 };
	struct planner p = { .w = w, .o = &none, .plan = plan, .err = err, .action = "plan" };

	emit_kids(&p, w->target, "", emit_diff);
	return p.rc;
}
