/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Private to the planner: its state (planner.c and planner_unstow.c decide, planner_view.c answers
 * what the world looks like now, makes the changes the decisions call for and emits the plan as
 * their diff). */
#ifndef GROVE_PLANNER_INT_H
#define GROVE_PLANNER_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "plan/planner.h"

struct link_memo;
struct planner_frame;

/*
 * The planner's memos: what is kept for the run so that asking the view of the world the same
 * question again costs less. Read and written by planner_view.c and planner_memo.c only, so
 * that the decisions (planner.c, planner_unstow.c) read like Stow's stow_node and unstow_node.
 */
struct planner_memo {
	/* What the target's links as scanned answer to "ours, and is its destination there?"
	 * (planner.c's link_state), kept for the run when the whole model is planned at once:
	 * NULL, no memo. */
	struct link_memo *links;
	/* Entries the plan made exist (grove_view_do_link, grove_view_do_link_in,
	 * grove_view_do_mkdir): counted, so that what was learnt of gone entries can be known to
	 * still hold. */
	unsigned long made;
	/* foldable's cursors: in folder dir, the entries before skip were all gone (GROVE_FT_NONE)
	 * when the planner had made `made` entries and the tree's generation was gen. Stow asks
	 * whether a shared folder folds after unstowing each package from it; without them, each
	 * question stepped over the entries of every package unstowed before. */
	struct fold_cursor {
		const struct grove_node *dir;
		size_t skip;
		unsigned long made, gen;
	} folds[8];
	unsigned n_folds;
	/* grove_view_scanned_owner's last folder (a target node, while the tree's generation is
	 * gen, its path dir_len bytes): a link there as scanned whose text starts with the len
	 * bytes at prefix (a link's text there) then goes on with plain names lands in this run's
	 * stow dir at those names. */
	struct owner_prefix {
		const struct grove_node *dir;
		unsigned long gen;
		const char *prefix;
		size_t len, dir_len;
	} own;
	/* markers_here's answers for the folders it last looked at (while the tree's generation is
	 * gen): whether each holds .stow and .nonstow on disk. Stow asks it of a shared folder for
	 * every package it stows or unstows there. */
	struct marks_memo {
		const struct grove_node *dir;
		unsigned long gen;
		bool stow, nonstow;
	} marks[8];
	unsigned n_marks;
	/* The recursive walks' per-folder buffers (stow_contents_known, unstow_contents), one set
	 * per depth below PLANNER_FRAMES, kept for the run where each folder allocated its own:
	 * grove_planner_release frees them. */
	struct planner_frame *frames; /* PLANNER_FRAMES of them, or NULL */
	unsigned depth;               /* folders being walked */
};

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
	/* Planning folder by folder (planner_walk.c), or NULL: the whole model at once. */
	struct walk *walk;
	/* What the view keeps for the run so that its answers cost less (planner_view.c,
	 * planner_memo.c): the decisions (planner.c, planner_unstow.c) never read it. */
	struct planner_memo memo;
};

#define PLANNER_FRAMES 64

/* ---- the memos (planner_memo.c) ---- */

/* Frees what the planner kept for the run (its frames). */
void grove_planner_release(struct planner *p);

/* A folder's walk begins (its frame is one deeper) and ends. */
void grove_memo_enter(struct planner *p);
void grove_memo_leave(struct planner *p);

/* How many of dir's first entries are gone from the plan (GROVE_FT_NONE), from where the last
 * answer for dir left off when that still holds (foldable asks it of a shared folder after each
 * package it unstows). */
size_t grove_memo_gone_prefix(struct planner *p, const struct grove_node *dir);

/* n bytes for the folder being walked: its frame's, else malloc'd into *own; NULL when out of
 * memory. */
char *grove_planner_frame_bytes(struct planner *p, size_t n, char **own);

/* dir's kids sorted by name, NULL-terminated: in the frame of the folder being walked, else in
 * *own (malloc'd); NULL when out of memory. */
struct grove_node **grove_planner_frame_kids(struct planner *p, const struct grove_node *dir,
					     struct grove_node ***own);

/* a, b and c joined (grove_path_join, then grove_path_join_names): malloc'd, NULL when out of
 * memory. */
char *grove_planner_join3(const char *a, const char *b, const char *c);

/* What stow_node already holds when it calls stow_contents, saving the lookups from the roots:
 * the package's node at pkg_subdir (grove_view_pkg_node's answer), the target's node at
 * target_subdir (grove_view_tnode's), the package's path from the target (pkg_root); each may be
 * NULL. */
struct known {
	struct grove_node *pdir, *tdir;
	const char *root;
	/* Known to glue (false: not known, checked): grove_path_glues(pkg_subdir, NULL),
	 * grove_path_glues(target_subdir, NULL), and root relative with
	 * grove_path_glues(root, pkg_subdir) (NULL for "."). A folder's entry with a plain name
	 * glues when its folder does (or is the top): its path is the folder's, "/", the name.
	 * glue_m (unstow's): grove_path_glues(root, pkg_subdir) (NULL for "."), root relative or
	 * not. */
	bool glue_p, glue_t, glue_f, glue_m;
};

static inline struct grove_world_pkg *
pkg_record(struct planner *p, const char *package)
{
	if (!p->pkg_name || (p->pkg_name != package && strcmp(p->pkg_name, package) != 0)) {
		p->pkg = grove_world_pkg(p->w, package);
		p->pkg_name = p->pkg ? package : NULL;
	}
	return p->pkg;
}

static inline void
fail(struct planner *p, int code, const char *fmt, const char *a, const char *b)
{
	if (p->rc)
		return;
	p->rc = code;
	grove_error_set(p->err, code, fmt, a ? a : "", b ? b : "");
}

static inline void
oom(struct planner *p)
{
	fail(p, -ENOMEM, "planning: %s%s", "out of memory", NULL);
}

static inline void
conflict(struct planner *p, const char *package, const char *path, const char *msg)
{
	if (grove_plan_add_conflict(p->plan, p->action, package, path, msg) < 0)
		oom(p);
}

static inline void
warning(struct planner *p, const char *msg)
{
	if (grove_plan_add_warning(p->plan, msg) < 0)
		oom(p);
}

void grove_view_conflictf(struct planner *p, const char *package, const char *path, const char *fmt,
			  ...) __attribute__((format(printf, 4, 5)));
void grove_view_warningf(struct planner *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

enum grove_ftype grove_view_follow_type(const struct grove_node *n);

/*
 * The scan reads the stow dir sparsely; when planning reaches a part it did
 * not read, the planner records the need and returns GROVE_PLAN_NEEDS_SCAN, and
 * grove_scan_plan reads it and plans again from the start (planning is pure).
 */
void grove_view_need(struct planner *p, const char *relpath);

/* Asks for the target folder tpath to be listed (see need). */
void grove_view_tneed(struct planner *p, const char *tpath);

/* Stow's -e on a path in the stow dir (or a second one beneath the target). */
bool grove_view_stow_exists(struct planner *p, const char *path);

/* Stow's -d on a path in the stow dir (or a second one beneath the target). */
bool grove_view_stow_isdir(struct planner *p, const char *path);

/* The package node for package/subpath (in the second stow dir being unfolded from, when
 * p->src_stow is set). */
struct grove_node *grove_view_pkg_node(struct planner *p, const char *package, const char *subpath);

/* Whether the scan dropped the entries of package/subpath or of a folder on the way to it
 * (a big folder it expected to fold whole): then the planner asks for it (need). */
bool grove_view_pkg_pruned(struct planner *p, const char *package, const char *subpath);

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
char *grove_view_find_owner(struct planner *p, const char *target_path, const char *link,
			    char **ret_pkg, char **ret_stow);

char *grove_view_find_stowed_path(struct planner *p, const char *target_path, const char *link,
				  char **ret_pkg);

/*
 * grove_view_find_owner's common case without allocating. grove_view_owner_in: a link in folder dir
 * (the parent of the link's path: "" or "." for the top), joined as Stow joins it into buf
 * (PATH_MAX bytes). VIEW_OWNER_STOW: the link lands in this run's stow dir, buf holds its path from
 * the target (grove_view_find_owner's answer) and *ret_rest (in buf) the part after the stow dir,
 * whose first component is the package. VIEW_OWNER_NONE: the link is not Stow's
 * (grove_view_find_owner's NULL). VIEW_OWNER_SLOW: only grove_view_find_owner answers (a second
 * stow dir may hold it, or the path does not fit). grove_view_owner_at: the same for the link at
 * target_path.
 */
enum view_owner { VIEW_OWNER_NONE, VIEW_OWNER_STOW, VIEW_OWNER_SLOW };
enum view_owner grove_view_owner_in(struct planner *p, const char *dir, const char *link, char *buf,
				    size_t size, const char **ret_rest);
enum view_owner grove_view_owner_at(struct planner *p, const char *target_path, const char *link,
				    char *buf, size_t size, const char **ret_rest);

/* grove_view_stow_exists of this run's stow dir's path + "/" + rest (as grove_view_owner_in gives
 * it). */
bool grove_view_stow_rest_exists(struct planner *p, const char *rest);

/*
 * What a link of the target as scanned answers, a function of its folder, its text (as scanned)
 * and the stow dir, none of which a plan changes, and asked of the same link many times by an
 * unstow (the unstow itself, cleanup_invalid_links once per folder, foldable each time a package
 * leaves it, the op's package when emitted). Kept by node in an open-addressing table while the
 * whole model is planned at once (its nodes then live as long as the run): whether the link is
 * Stow's and where in its text the part after the stow dir begins (grove_view_owner_in's rest, when
 * it is the text's end), and whether its destination is there.
 */
enum link_state { LINK_SLOW, LINK_FOREIGN, LINK_OURS, LINK_OURS_MISSING };

struct link_memo {
	struct link_fact {
		const struct grove_node *n;
		enum link_state state; /* LINK_SLOW: not known */
		uint32_t rest;         /* offset in n->orig_link, or LINK_REST_* */
	} * slot;
	size_t cap, used; /* cap: a power of two, or 0 */
};

/* Slots of a memo kept while the plan is emitted (64 KiB): a bigger one is freed first, for peak
 * memory. */
#define LINK_MEMO_KEPT 4096

#define LINK_REST_UNKNOWN UINT32_MAX
#define LINK_REST_FOREIGN (UINT32_MAX - 1) /* grove_view_owner_in answered VIEW_OWNER_NONE */

void grove_view_link_memo_release(struct link_memo *m);

/* grove_view_owner_in of n's text as scanned in its folder dir_path (the path of n->parent, when n
 * has one), kept: *ret_rest may then point into n->orig_link, and buf is not written. */
enum view_owner grove_view_scanned_owner(struct planner *p, const char *dir_path,
					 const struct grove_node *n, char *buf, size_t size,
					 const char **ret_rest);

/* The state of a link in folder dir_path (the target's node there) whose text is text.
 * LINK_SLOW: only grove_view_find_stowed_path answers. grove_view_link_state: that of n's text as
 * scanned (n->orig_link), kept for the run. */
enum link_state grove_view_link_state_of(struct planner *p, const char *dir_path, const char *text);
enum link_state grove_view_link_state(struct planner *p, const char *dir_path,
				      const struct grove_node *n);

struct grove_node *grove_view_tnode(struct planner *p, const char *path);

enum grove_ftype grove_view_ttype(struct planner *p, const char *path);

void grove_view_do_link(struct planner *p, const char *dest, const char *path);

/* grove_view_do_link of path, which is dir's entry name (dir: the target's node at path's folder,
 * or NULL: looked up). */
void grove_view_do_link_in(struct planner *p, const char *dest, const char *path,
			   struct grove_node *dir, const char *name);

void grove_view_do_unlink(struct planner *p, const char *path);
/* grove_view_do_unlink of the target's node n. */
void grove_view_unlink_node(struct grove_node *n);

void grove_view_do_mkdir(struct planner *p, const char *path);

void grove_view_do_rmdir(struct planner *p, const char *path);

bool grove_view_ignored(struct planner *p, const char *package, const char *target_path);

bool grove_view_deferred(struct planner *p, const char *path);

bool grove_view_overridden(struct planner *p, const char *path);

bool grove_view_should_skip_target(struct planner *p, const char *path);
/* The same, n being the target's node at path (found by a walk from the target's root), or NULL:
 * looked up. */
bool grove_view_should_skip_target_at(struct planner *p, const char *path,
				      const struct grove_node *n);

/* ---- the plan as the difference of the two states (planner_view.c) ---- */

/* The ops of the whole target tree (emit_diff from its root). Returns 0 or p->rc's failure. */
int grove_planner_emit_all(struct planner *p);

/* ---- the bounded walk (planner_walk.c) and what it calls in the other planner files ---- */

/* In a bounded walk: whether stow_contents / unstow_contents of dir (for package) is to wait for
 * dir's turn (recorded; true) or to run now (dir is the folder being planned; false). */
bool grove_walk_defer(struct planner *p, bool unstow, const char *package, const char *pkg_dir,
		      const char *tdir);

void grove_planner_stow_contents(struct planner *p, const char *package, const char *dir);
void grove_planner_unstow_contents(struct planner *p, const char *package, const char *dir);
bool grove_planner_check_package(struct planner *p, const char *package);
/* The ops of n (at path) and everything beneath it, as the whole model's diff emits them. */
int grove_planner_emit_diff(struct planner *p, struct grove_node *n, const char *path);
/* The op of n alone, for a folder whose entries are planned after it: 1 when n does not end a
 * folder made or kept (the walk then falls back). */
int grove_planner_emit_folder(struct planner *p, struct grove_node *n, const char *path);
/* Whether the diff has nothing to say about n (an entry the plan leaves as scanned). */
bool grove_planner_unchanged_leaf(const struct grove_node *n);

#endif
