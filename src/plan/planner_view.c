/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner's view of the world: the stow dir model (asking the scan for what it has not read),
 * ownership of links, the target's current state, the changes a decision makes to it, and the
 * ignore, defer and override answers; and the plan as the difference of the target's two states
 * (the emit walk). Pure: no syscalls. */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "planner_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* A conflict (or warning) whose message is formatted: allocated, so a long path is never cut.
 * NULL (and the planner failed) when out of memory. */
static char *
format_message(struct planner *p, const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		oom(p);
		return NULL;
	}
	return msg;
}

void
grove_view_conflictf(struct planner *p, const char *package, const char *path, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = format_message(p, fmt, ap);
	va_end(ap);
	if (msg)
		conflict(p, package, path, msg);
}

void
grove_view_warningf(struct planner *p, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = format_message(p, fmt, ap);
	va_end(ap);
	if (msg)
		warning(p, msg);
}

/* ---- the stow dir model ---- */

enum grove_ftype
grove_view_follow_type(const struct grove_node *n)
{
	enum grove_ftype t;

	if (!n)
		return GROVE_FT_NONE;
	t = n->type == GROVE_FT_LINK ? n->dest_type : n->type;
	return t == GROVE_FT_UNKNOWN ? GROVE_FT_NONE : t;
}

/*
 * The scan reads the stow dir sparsely; when planning reaches a part it did
 * not read, the planner records the need and returns GROVE_PLAN_NEEDS_SCAN, and
 * grove_scan_plan reads it and plans again from the start (planning is pure).
 */
void
grove_view_need(struct planner *p, const char *relpath)
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
stow_node_rest(struct planner *p, const char *rest)
{
	struct grove_node *n;
	size_t off;
	bool descends;

	n = grove_node_walk(p->w->stow, rest, &off);
	if (!rest[off])
		return n;
	if (strcspn(rest + off, "/") > NAME_MAX)
		return NULL;
	descends = n->type == GROVE_FT_DIR ||
		   (n->type == GROVE_FT_LINK && n->dest_type == GROVE_FT_DIR);
	if (!n->listed && descends)
		grove_view_need(p, rest);
	return NULL;
}

static struct grove_node *
stow_node_at(struct planner *p, const char *path_from_target)
{
	const char *rest = grove_path_strip_prefix(path_from_target, p->w->stow_path);

	return rest ? stow_node_rest(p, rest) : NULL;
}

/* Asks for the target folder tpath to be listed (see need). */
void
grove_view_tneed(struct planner *p, const char *tpath)
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
				grove_view_tneed(p, pre);
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
bool
grove_view_stow_exists(struct planner *p, const char *path)
{
	if (in_other_stow(p, path))
		return disk_node(p, path) != NULL;
	return grove_view_follow_type(stow_node_at(p, path)) != GROVE_FT_NONE;
}

/* grove_view_stow_exists of this run's stow dir's path + "/" + rest. */
bool
grove_view_stow_rest_exists(struct planner *p, const char *rest)
{
	return grove_view_follow_type(stow_node_rest(p, rest)) != GROVE_FT_NONE;
}

/* Stow's -d on a path in the stow dir (or a second one beneath the target). */
bool
grove_view_stow_isdir(struct planner *p, const char *path)
{
	if (in_other_stow(p, path)) {
		struct grove_node *n = disk_node(p, path);
		return n && n->orig_type == GROVE_FT_DIR;
	}
	return grove_view_follow_type(stow_node_at(p, path)) == GROVE_FT_DIR;
}

/* The package node for package/subpath (in the second stow dir being unfolded from, when
 * p->src_stow is set). */
struct grove_node *
grove_view_pkg_node(struct planner *p, const char *package, const char *subpath)
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
	if (n && (!subpath[0] || (subpath[0] == '.' && !subpath[1])))
		return n; /* the package's top: no walk */
	return n ? grove_node_lookup(n, subpath) : NULL;
}

/* Whether the scan dropped the entries of package/subpath or of a folder on the way to it
 * (a big folder it expected to fold whole): then the planner asks for it (need). */
bool
grove_view_pkg_pruned(struct planner *p, const char *package, const char *subpath)
{
	struct grove_node *n = p->src_stow ? NULL : grove_node_child(p->w->stow, package);
	size_t off;

	/* A pruned folder has no kids, so a walk stops at the first one on the way. */
	return n && grove_node_walk(n, subpath, &off)->pruned;
}

/* ---- ownership ---- */

/* grove_path_parent(path) into buf, without allocating; false when it does not fit. */
static bool
parent_of(const char *path, char *buf, size_t size)
{
	size_t l = grove_path_parent_len(path);

	if (l >= size)
		return false;
	memcpy(buf, path, l);
	buf[l] = '\0';
	return true;
}

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
char *
grove_view_find_owner(struct planner *p, const char *target_path, const char *link, char **ret_pkg,
		      char **ret_stow)
{
	cleanup_free char *parent = NULL;
	char buf[PATH_MAX];
	char *joined;
	const char *rest, *slash;

	if (ret_stow)
		*ret_stow = NULL;
	if (link[0] == '/')
		return NULL;
	/* Asked for every link planned and every op emitted: the parent on the stack. */
	if (!parent_of(target_path, buf, sizeof(buf)) &&
	    !(parent = grove_path_parent(target_path))) {
		oom(p);
		return NULL;
	}
	if (!(joined = grove_path_join(parent ? parent : buf, link))) {
		oom(p);
		return NULL;
	}
	rest = grove_path_strip_prefix(joined, p->w->stow_path);
	if (!rest && p->o->other_stow_dirs && strcmp(joined, "..") != 0 &&
	    strncmp(joined, "../", 3) != 0) {
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
				grove_view_tneed(p, dir);
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

enum view_owner
grove_view_owner_in(struct planner *p, const char *dir, const char *link, char *buf, size_t size,
		    const char **ret_rest)
{
	const char *rest;

	if (link[0] == '/')
		return VIEW_OWNER_NONE;
	if (dir[0] == '.' && !dir[1])
		dir = "";
	if (grove_path_join_into(dir, link, buf, size) < 0)
		return VIEW_OWNER_SLOW;
	rest = grove_path_strip_prefix(buf, p->w->stow_path);
	if (rest && rest[0]) {
		*ret_rest = rest;
		return VIEW_OWNER_STOW;
	}
	/* Not in this run's stow dir: a second one may hold it (grove_view_find_owner's walk). */
	return p->o->other_stow_dirs ? VIEW_OWNER_SLOW : VIEW_OWNER_NONE;
}

enum view_owner
grove_view_owner_at(struct planner *p, const char *target_path, const char *link, char *buf,
		    size_t size, const char **ret_rest)
{
	char parent[PATH_MAX];

	if (link[0] == '/')
		return VIEW_OWNER_NONE;
	if (!parent_of(target_path, parent, sizeof(parent)))
		return VIEW_OWNER_SLOW;
	return grove_view_owner_in(p, parent, link, buf, size, ret_rest);
}

char *
grove_view_find_stowed_path(struct planner *p, const char *target_path, const char *link,
			    char **ret_pkg)
{
	return grove_view_find_owner(p, target_path, link, ret_pkg, NULL);
}

/* ---- the target view ---- */

struct grove_node *
grove_view_tnode(struct planner *p, const char *path)
{
	if (!path[0] || (path[0] == '.' && !path[1]))
		return p->w->target; /* the top: no walk */
	return grove_node_lookup(p->w->target, path);
}

enum grove_ftype
grove_view_ttype(struct planner *p, const char *path)
{
	struct grove_node *n = grove_view_tnode(p, path);

	return n ? n->type : GROVE_FT_NONE;
}

/* The node at path, made (absent in both states) if missing; its parent must exist. */
static struct grove_node *
tensure(struct planner *p, const char *path)
{
	struct grove_node *n = grove_view_tnode(p, path), *parent, *kid;
	cleanup_free char *ppath = NULL;
	const char *base;

	if (n)
		return n;
	ppath = grove_path_parent(path);
	if (!ppath) {
		oom(p);
		return NULL;
	}
	parent = grove_view_tnode(p, ppath);
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
	struct grove_node *n;
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
				from ? grove_view_find_stowed_path(p, from, n->orig_link, NULL)
				     : NULL;
			cleanup_free char *full = dest ? grove_path_join(dest, s) : NULL;
			return full && grove_view_stow_exists(p, full);
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
	if (strlen(path) < PATH_MAX && (!text || strlen(text) < PATH_MAX))
		return false;
	grove_view_conflictf(p, p->package ? p->package : "", path,
			     "path or link text too long (over PATH_MAX, %d bytes): %.200s...",
			     PATH_MAX, path);
	return true;
}

void
grove_view_do_link(struct planner *p, const char *dest, const char *path)
{
	struct grove_node *n;

	too_long(p, path, dest); /* a conflict; planning goes on to find the others */
	n = tensure(p, path);

	if (!n)
		return;
	p->memo.made++;
	n->type = GROVE_FT_LINK;
	if (grove_node_set_link(n, dest) < 0)
		oom(p);
}

void
grove_view_do_link_in(struct planner *p, const char *dest, const char *path, struct grove_node *dir,
		      const char *name)
{
	struct grove_node *n;

	if (!dir) {
		grove_view_do_link(p, dest, path);
		return;
	}
	too_long(p, path, dest);
	p->memo.made++;
	n = grove_node_child(dir, name);
	if (!n) {
		/* A new entry: its text goes in the node, not in an allocation of its own. */
		n = grove_node_new_link(name, dest);
		if (!n || grove_node_add(dir, n) < 0) {
			grove_node_free(n);
			oom(p);
		}
		return;
	}
	n->type = GROVE_FT_LINK;
	if (grove_node_set_link(n, dest) < 0)
		oom(p);
}

void
grove_view_do_unlink(struct planner *p, const char *path)
{
	struct grove_node *n = grove_view_tnode(p, path);

	if (n)
		grove_view_unlink_node(n);
}

void
grove_view_unlink_node(struct grove_node *n)
{
	n->type = GROVE_FT_NONE;
	grove_node_set_link(n, NULL);
}

void
grove_view_do_mkdir(struct planner *p, const char *path)
{
	struct grove_node *n;

	too_long(p, path, NULL);
	n = tensure(p, path);

	if (!n)
		return;
	p->memo.made++;
	n->type = GROVE_FT_DIR;
	n->listed = true;
	grove_node_set_link(n, NULL);
}

void
grove_view_do_rmdir(struct planner *p, const char *path)
{
	struct grove_node *n = grove_view_tnode(p, path);

	if (n)
		n->type = GROVE_FT_NONE;
}

/* ---- ignore, defer, override ---- */

/* An empty error for a matcher to fill: its message's first byte only (a struct grove_error is
 * over 1 KiB, and zeroing it whole for each of thousands of matches cost more than the match). */
static inline void
err_clear(struct grove_error *e)
{
	e->code = 0;
	e->msg[0] = '\0';
}

/* A pattern over its match budget fails the plan (an answer either way would be a guess) and
 * counts as a match meanwhile, so that nothing more is planned for that path. */
static bool
pattern_answer(struct planner *p, int r, const struct grove_error *e)
{
	if (r < 0)
		fail(p, r, "%s%s", e->msg, NULL);
	return r != 0;
}

/* The record of the second stow dir's package (p->src_stow), named by its target-relative
 * folder, for its own ignore list as Stow reads it. NULL (the global list) when that folder was
 * listed without a .stow-local-ignore; asked for (the plan incomplete) when not read yet. */
static const struct grove_world_pkg *
second_pkg_record(struct planner *p, const char *package)
{
	cleanup_free char *key = grove_path_join(p->src_stow, package);
	const struct grove_world_pkg *pkg = key ? grove_world_pkg(p->w, key) : NULL;
	const struct grove_node *dir;

	if (pkg && pkg->ignore_loaded)
		return pkg;
	dir = key ? disk_node(p, key) : NULL;
	if (dir && dir->listed && !grove_node_child(dir, ".stow-local-ignore"))
		return NULL;
	if (!key || grove_world_tignore(p->w, key) < 0)
		oom(p);
	p->incomplete = true;
	return NULL;
}

bool
grove_view_ignored(struct planner *p, const char *package, const char *target_path)
{
	const struct grove_world_pkg *pkg;
	const struct grove_ignore_list *list;
	struct grove_error e;

	if (p->rc)
		return true; /* failing already: no more matching */
	err_clear(&e);
	if (p->o->ignore &&
	    pattern_answer(p, grove_pattern_set_match(p->o->ignore, target_path, &e), &e))
		return true;
	pkg = p->src_stow ? second_pkg_record(p, package) : pkg_record(p, package);
	list = pkg && pkg->local_ignore ? pkg->local_ignore : p->w->global_ignore;
	return list && pattern_answer(p, grove_ignore_list_match(list, target_path, &e), &e);
}

bool
grove_view_deferred(struct planner *p, const char *path)
{
	struct grove_error e;

	if (p->rc || !p->o->defer)
		return false;
	err_clear(&e);
	return pattern_answer(p, grove_pattern_set_match(p->o->defer, path, &e), &e);
}

bool
grove_view_overridden(struct planner *p, const char *path)
{
	struct grove_error e;

	if (p->rc || !p->o->override)
		return false;
	err_clear(&e);
	return pattern_answer(p, grove_pattern_set_match(p->o->override, path, &e), &e);
}

/* disk_exists for an entry of a node that is a folder on disk with only folders above it. */
static bool
disk_has_kid(const struct grove_node *dir, const char *name)
{
	const struct grove_node *n = grove_node_child(dir, name);

	if (!n)
		return false;
	if (n->orig_type == GROVE_FT_LINK)
		return n->dest_type != GROVE_FT_NONE && n->dest_type != GROVE_FT_UNKNOWN;
	return n->orig_type != GROVE_FT_NONE;
}

/*
 * The answers of disk_exists for path/.stow and path/.nonstow without joining
 * them: when path is a node with folders on disk all the way up, both are its
 * entries (or not there); when the topmost of path and its folders that is not
 * a folder on disk is not a link either (a folder this plan makes), neither is
 * there, as disk_exists finds. Returns false when path is elsewhere (a link on
 * the way, not scanned): the caller takes the long way.
 */
static bool
markers_here(struct planner *p, const char *path, const struct grove_node *n, bool *ret_stow,
	     bool *ret_nonstow)
{
	size_t off;
	const struct grove_node *top = NULL;
	unsigned long gen = grove_tree_generation();
	struct marks_memo *m;

	if (!n && (!path[0] || (path[0] == '.' && !path[1]))) {
		n = p->w->target; /* the top: no walk */
	} else if (!n) {
		n = grove_node_walk(p->w->target, path, &off);
		if (path[off])
			return false;
	}
	/* What the scan found does not change while planning: an answer stays good until a node
	 * is freed. */
	for (size_t i = 0; i < sizeof(p->memo.marks) / sizeof(p->memo.marks[0]); i++) {
		m = &p->memo.marks[i];
		if (m->dir == n && m->gen == gen) {
			*ret_stow = m->stow;
			*ret_nonstow = m->nonstow;
			return true;
		}
	}
	for (const struct grove_node *a = n; a; a = a->parent)
		if (a->orig_type != GROVE_FT_DIR)
			top = a;
	if (top && top->orig_type == GROVE_FT_LINK)
		return false;
	*ret_stow = !top && disk_has_kid(n, ".stow");
	*ret_nonstow = !top && disk_has_kid(n, ".nonstow");
	m = &p->memo.marks[p->memo.n_marks++ % (sizeof(p->memo.marks) / sizeof(p->memo.marks[0]))];
	*m = (struct marks_memo){
		.dir = n, .gen = gen, .stow = *ret_stow, .nonstow = *ret_nonstow
	};
	return true;
}

bool
grove_view_should_skip_target(struct planner *p, const char *path)
{
	return grove_view_should_skip_target_at(p, path, NULL);
}

bool
grove_view_should_skip_target_at(struct planner *p, const char *path, const struct grove_node *n)
{
	cleanup_free char *marker = NULL;
	cleanup_free char *protect = NULL;
	bool marked, nonstow;

	if (strcmp(path, p->w->stow_path) == 0) {
		grove_view_warningf(p, "skipping target which was current stow directory %s", path);
		return true;
	}
	if (!markers_here(p, path, n, &marked, &nonstow)) {
		marker = grove_path_join(path, ".stow");
		protect = grove_path_join(path, ".nonstow");
		if (!marker || !protect) {
			oom(p);
			return true;
		}
		marked = disk_exists(p, marker);
		nonstow = !marked && disk_exists(p, protect);
	}
	if (marked) {
		grove_view_warningf(p, "skipping marked Stow directory %s", path);
		return true;
	}
	if (nonstow) {
		grove_view_warningf(p, "skipping protected directory %s", path);
		return true;
	}
	return false;
}

/* ---- what the target's links as scanned answer, kept (planner_int.h's struct link_memo) ---- */

static size_t
memo_hash(const struct grove_node *n, size_t cap)
{
	uintptr_t h = (uintptr_t)n;

	h ^= h >> 17;
	h *= (uintptr_t)0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 7) & (cap - 1);
}

/* n's entry, or NULL. */
static struct link_fact *
memo_find(const struct link_memo *m, const struct grove_node *n)
{
	if (!m || !m->cap)
		return NULL;
	for (size_t i = memo_hash(n, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->slot[i].n == n)
			return &m->slot[i];
		if (!m->slot[i].n)
			return NULL;
	}
}

/* n's entry, made (nothing known) if need be; NULL out of memory: then nothing is kept. */
static struct link_fact *
memo_take(struct link_memo *m, const struct grove_node *n)
{
	size_t i;

	if (!m)
		return NULL;
	if (2 * (m->used + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct link_memo bigger = { .slot = calloc(cap, sizeof(*m->slot)), .cap = cap };

		if (!bigger.slot)
			return NULL;
		for (size_t j = 0; j < m->cap; j++) {
			size_t k;

			if (!m->slot[j].n)
				continue;
			for (k = memo_hash(m->slot[j].n, cap); bigger.slot[k].n;
			     k = (k + 1) & (cap - 1))
				;
			bigger.slot[k] = m->slot[j];
		}
		bigger.used = m->used;
		free(m->slot);
		*m = bigger;
	}
	for (i = memo_hash(n, m->cap); m->slot[i].n && m->slot[i].n != n;
	     i = (i + 1) & (m->cap - 1))
		;
	if (!m->slot[i].n) {
		m->used++;
		m->slot[i] =
			(struct link_fact){ .n = n, .state = LINK_SLOW, .rest = LINK_REST_UNKNOWN };
	}
	return &m->slot[i];
}

void
grove_view_link_memo_release(struct link_memo *m)
{
	free(m->slot);
	*m = (struct link_memo){ 0 };
}

/*
 * grove_view_owner_in of n's text as scanned in its folder dir (grove_view_owner_in's "" for "."),
 * from the planner's owner_prefix when it holds for n: VIEW_OWNER_STOW and *ret_rest in n's text,
 * or VIEW_OWNER_SLOW (not known so). The prefix was found good for the join
 * (grove_path_link_prefix) with the folder's path as then spelt: dir, a path of the same node, is
 * that one when of the same length (the tree's walk skips only empty and "." components, which a
 * clean path has none of).
 */
static enum view_owner
owner_by_prefix(struct planner *p, const char *dir, const struct grove_node *n, size_t size,
		const char **ret_rest)
{
	const struct owner_prefix *o = &p->memo.own;
	const char *rest = n->orig_link + o->len;
	size_t rl;

	if (!o->dir || o->dir != n->parent || o->gen != grove_tree_generation() ||
	    strncmp(n->orig_link, o->prefix, o->len) != 0 || !(rl = grove_path_plain_len(rest)) ||
	    strlen(p->w->stow_path) + 1 + rl >= size || strlen(dir) != o->dir_len)
		return VIEW_OWNER_SLOW;
	*ret_rest = rest;
	return VIEW_OWNER_STOW;
}

/* grove_view_scanned_owner with n's slot f in the memo (NULL: none), taken already. */
static enum view_owner
scanned_owner(struct planner *p, const char *dir_path, const struct grove_node *n,
	      struct link_fact *f, char *buf, size_t size, const char **ret_rest)
{
	enum view_owner o;
	size_t tl, rl;
	const char *dir = dir_path[0] == '.' && !dir_path[1] ? "" : dir_path;

	if (f && f->rest == LINK_REST_FOREIGN)
		return VIEW_OWNER_NONE;
	if (f && f->rest != LINK_REST_UNKNOWN) {
		*ret_rest = n->orig_link + f->rest;
		return VIEW_OWNER_STOW;
	}
	/* The links of one folder mostly share the part of their text up to the package: joined
	 * once (the join's result is the stow dir's path, '/', then what follows). */
	if (owner_by_prefix(p, dir, n, size, ret_rest) == VIEW_OWNER_STOW) {
		if (f && p->memo.own.len < UINT32_MAX - 1)
			f->rest = (uint32_t)p->memo.own.len;
		return VIEW_OWNER_STOW;
	}
	o = grove_view_owner_in(p, dir, n->orig_link, buf, size, ret_rest);
	if (o == VIEW_OWNER_STOW) {
		/* Kept when the rest is the text's own end (as for every link Stow makes). */
		tl = strlen(n->orig_link);
		rl = strlen(*ret_rest);
		if (rl > tl || memcmp(n->orig_link + tl - rl, *ret_rest, rl) != 0 ||
		    tl >= UINT32_MAX - 1)
			return o;
		if (n->parent && grove_path_link_prefix(dir, n->orig_link, tl - rl))
			p->memo.own = (struct owner_prefix){ .dir = n->parent,
							     .gen = grove_tree_generation(),
							     .prefix = n->orig_link,
							     .len = tl - rl,
							     .dir_len = strlen(dir) };
		if (f)
			f->rest = (uint32_t)(tl - rl);
	} else if (o == VIEW_OWNER_NONE && f) {
		f->rest = LINK_REST_FOREIGN;
	}
	return o;
}

enum view_owner
grove_view_scanned_owner(struct planner *p, const char *dir_path, const struct grove_node *n,
			 char *buf, size_t size, const char **ret_rest)
{
	return scanned_owner(p, dir_path, n, memo_take(p->memo.links, n), buf, size, ret_rest);
}

enum link_state
grove_view_link_state_of(struct planner *p, const char *dir_path, const char *text)
{
	char buf[PATH_MAX];
	const char *rest;

	switch (grove_view_owner_in(p, dir_path, text, buf, sizeof(buf), &rest)) {
	case VIEW_OWNER_NONE:
		return LINK_FOREIGN;
	case VIEW_OWNER_STOW:
		return grove_view_stow_rest_exists(p, rest) ? LINK_OURS : LINK_OURS_MISSING;
	case VIEW_OWNER_SLOW:
		break;
	}
	return LINK_SLOW;
}

enum link_state
grove_view_link_state(struct planner *p, const char *dir_path, const struct grove_node *n)
{
	struct link_fact *f = memo_take(p->memo.links, n);
	char buf[PATH_MAX];
	const char *rest;
	enum link_state s;

	if (f && f->state != LINK_SLOW)
		return f->state;
	switch (scanned_owner(p, dir_path, n, f, buf, sizeof(buf), &rest)) {
	case VIEW_OWNER_NONE:
		s = LINK_FOREIGN;
		break;
	case VIEW_OWNER_STOW:
		s = grove_view_stow_rest_exists(p, rest) ? LINK_OURS : LINK_OURS_MISSING;
		break;
	default:
		return LINK_SLOW;
	}
	/* A need recorded while answering (the stow dir read in part) makes the plan start
	 * again; its answers are not kept. */
	if (!p->incomplete && f)
		f->state = s;
	return s;
}

/* ---- the plan as the difference of the two states ---- */

static int emit_removal(struct planner *p, struct grove_node *n, const char *path);

/* Not inlined: its buffers are not to sit in the frames of the recursive walks. */
static __attribute__((noinline)) int
emit(struct planner *p, const struct grove_node *n, enum grove_op_kind kind, const char *path,
     const char *old_text, const char *text, const char *stow_path)
{
	cleanup_free char *owned = NULL;
	cleanup_free char *other = NULL;
	cleanup_free char *dest = NULL;
	const char *t = text ? text : old_text;
	const char *package = NULL, *rest;
	char buf[PATH_MAX], name[NAME_MAX + 1];
	size_t l;
	const struct link_fact *f = t && t == n->orig_link ? memo_find(p->memo.links, n) : NULL;
	enum view_owner o;

	/* The package an op serves, for the log and `grove status` (this stow dir's only): of a
	 * link as scanned, kept when the plan asked already (grove_view_scanned_owner). */
	if (f && f->rest == LINK_REST_FOREIGN) {
		o = VIEW_OWNER_NONE;
	} else if (f && f->rest != LINK_REST_UNKNOWN) {
		o = VIEW_OWNER_STOW;
		rest = n->orig_link + f->rest;
	} else {
		o = t ? grove_view_owner_at(p, path, t, buf, sizeof(buf), &rest) : VIEW_OWNER_NONE;
	}
	switch (o) {
	case VIEW_OWNER_NONE:
		break;
	case VIEW_OWNER_STOW:
		l = strcspn(rest, "/");
		if (l < sizeof(name)) {
			memcpy(name, rest, l);
			name[l] = '\0';
			package = name;
			break;
		}
		/* A name too long for name: grove_view_find_owner copies it. */
		/* fall through */
	case VIEW_OWNER_SLOW:
		dest = grove_view_find_owner(p, path, t, &owned, &other);
		package = dest && !other ? owned : NULL;
		break;
	}
	/* At its own path in the stow dir: the package '.''s (`stow .`); X's lands at X/path. */
	if (package &&
	    grove_path_lands_as(path, dest ? grove_path_strip_prefix(dest, p->w->stow_path) : rest))
		package = GROVE_STOW_DIR_PACKAGE;
	if (grove_plan_add_op_packed(p->plan, kind, path, old_text, text, stow_path, package) < 0) {
		oom(p);
		return -ENOMEM;
	}
	return 0;
}

static int emit_diff(struct planner *p, struct grove_node *n, const char *path);

/* Whether emit_diff has nothing to emit for n: an entry (not a folder, whose entries may
 * change) that the plan leaves as the scan found it. */
static bool
unchanged_leaf(const struct grove_node *n)
{
	if (n->orig_type != n->type || n->type == GROVE_FT_DIR)
		return false;
	return n->type != GROVE_FT_LINK || n->link == n->orig_link ||
	       strcmp(n->link, n->orig_link) == 0;
}

/* Whether emit_kids passes n's entry k to fn. */
static bool
kid_wanted(struct grove_node *k, int (*fn)(struct planner *, struct grove_node *, const char *))
{
	return fn != emit_diff || !unchanged_leaf(k);
}

/*
 * Calls fn on n's entries in name order. For emit_diff only the entries it
 * has something to say about: a listed folder of a lived-in home holds
 * hundreds the plan leaves alone, and each would cost a path and a sort.
 * The entries are mostly in name order already (the scan adds them as listed, the planner in
 * the order it visits the packages' sorted folders): then they are walked in place, and only
 * otherwise gathered and sorted.
 */
static int
emit_kids(struct planner *p, struct grove_node *n, const char *path,
	  int (*fn)(struct planner *, struct grove_node *, const char *))
{
	cleanup_free struct grove_node **sorted = NULL;
	const char *last = ""; /* the name of the last entry wanted */
	size_t m = 0, lp = strlen(path);
	bool in_order = true;
	/* The entries' paths (grove_child_path's) in one buffer: a name is at most NAME_MAX. */
	size_t cap = lp + NAME_MAX + 2;
	cleanup_free char *buf = NULL;

	for (size_t i = 0; i < n->n_kids; i++) {
		if (!kid_wanted(n->kids[i], fn))
			continue;
		if (m++ && in_order && strcmp(last, n->kids[i]->name) > 0)
			in_order = false;
		last = n->kids[i]->name;
	}
	if (m == 0)
		return 0;
	/* Otherwise sorted by name (grove_sort_names), all of them, and the others skipped again.
	 */
	if (!in_order && !(sorted = grove_node_sorted_kids(n))) {
		oom(p);
		return -ENOMEM;
	}
	buf = malloc(cap);
	if (!buf) {
		oom(p);
		return -ENOMEM;
	}
	memcpy(buf, path, lp);
	if (lp)
		buf[lp++] = '/';
	for (struct grove_node **s = sorted ? sorted : n->kids, **end = s + n->n_kids; s < end;
	     s++) {
		struct grove_node *k = *s;
		size_t ln;
		cleanup_free char *long_path = NULL;
		const char *kp = buf;
		int r;

		if (!kid_wanted(k, fn))
			continue;
		ln = strlen(k->name);
		if (lp + ln < cap) {
			memcpy(buf + lp, k->name, ln + 1);
		} else {
			long_path = grove_child_path(path, k->name);
			if (!long_path) {
				oom(p);
				return -ENOMEM;
			}
			kp = long_path;
		}
		if ((r = fn(p, k, kp)) < 0)
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
		return emit(p, n, GROVE_OP_UNLINK, path, n->orig_link, NULL, NULL);
	case GROVE_FT_DIR:
		if ((r = emit_kids(p, n, path, emit_removal)) < 0)
			return r;
		return emit(p, n, GROVE_OP_RMDIR, path, NULL, NULL, NULL);
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
			return emit(p, n, GROVE_OP_LINK, path, NULL, n->link, NULL);
		if (c == GROVE_FT_DIR) {
			int r = emit(p, n, GROVE_OP_MKDIR, path, NULL, NULL, NULL);
			return r < 0 ? r : emit_kids(p, n, path, emit_diff);
		}
		break;
	case GROVE_FT_LINK:
		if (c == GROVE_FT_NONE)
			return emit(p, n, GROVE_OP_UNLINK, path, n->orig_link, NULL, NULL);
		if (c == GROVE_FT_LINK)
			return emit(p, n, GROVE_OP_RELINK, path, n->orig_link, n->link, NULL);
		if (c == GROVE_FT_DIR) {
			int r = emit(p, n, GROVE_OP_UNFOLD, path, n->orig_link, NULL, NULL);
			return r < 0 ? r : emit_kids(p, n, path, emit_diff);
		}
		break;
	case GROVE_FT_DIR:
		if (c == GROVE_FT_LINK) {
			int r = emit(p, n, GROVE_OP_FOLD, path, NULL, n->link, NULL);
			return r < 0 ? r : emit_kids(p, n, path, emit_removal);
		}
		if (c == GROVE_FT_NONE)
			return emit_removal(p, n, path);
		break;
	case GROVE_FT_REG:
		if (c == GROVE_FT_LINK && n->adopt_to)
			return emit(p, n, GROVE_OP_ADOPT, path, NULL, n->link, n->adopt_to);
		break;
	default:
		break;
	}
	fail(p, -GROVE_E_INTERNAL, "planning: no op takes '%s' where the plan wants it%s", path,
	     NULL);
	return p->rc;
}

/* The ops of the whole target: planner.c's runs, once their decisions are made. */
int
grove_planner_emit_all(struct planner *p)
{
	return emit_kids(p, p->w->target, "", emit_diff);
}

int
grove_planner_emit_diff(struct planner *p, struct grove_node *n, const char *path)
{
	return emit_diff(p, n, path);
}

bool
grove_planner_unchanged_leaf(const struct grove_node *n)
{
	return unchanged_leaf(n);
}

int
grove_planner_emit_folder(struct planner *p, struct grove_node *n, const char *path)
{
	if (n->type != GROVE_FT_DIR)
		return 1;
	switch (n->orig_type) {
	case GROVE_FT_DIR:
		return 0;
	case GROVE_FT_NONE:
		return emit(p, n, GROVE_OP_MKDIR, path, NULL, NULL, NULL);
	case GROVE_FT_LINK:
		return emit(p, n, GROVE_OP_UNFOLD, path, n->orig_link, NULL, NULL);
	default:
		return 1;
	}
}
