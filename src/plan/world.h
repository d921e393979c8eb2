/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The world a plan is made from: the scanned target, the stow dir's packages, and the scan that
 * fills them. */
#ifndef GROVE_WORLD_H
#define GROVE_WORLD_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/ignore.h"
#include "plan/tree.h"

struct grove_world_pkg {
	char *name;
	/* The package's .stow-local-ignore list, or NULL to use the global one. */
	struct grove_ignore_list *local_ignore;
	bool ignore_loaded;
};

/*
 * target: the target's root folder, with every folder the plan may visit
 * listed (all entries, link texts, and for links into the stow dir what they
 * resolve to there).
 *
 * stow: a sparse model of the stow dir. Requested packages are loaded whole
 * (links to folders inside a package carry the followed folder's listing);
 * for other packages only the paths the target's links point at, and the
 * subtrees the plan may unfold, are loaded. A node of type GROVE_FT_NONE
 * records a path known to be missing; a missing node means "not scanned"
 * (treated as missing).
 */
struct grove_world {
	struct grove_node *target;
	struct grove_node *stow;
	char *stow_path; /* the stow dir relative to the target, e.g. "stow" or "../stow" */
	/* The stow dir's absolute path (the scan's stow root's), for the paths of errors; NULL
	 * before a scan. Not owned. */
	const char *stow_real;
	struct grove_world_pkg *pkgs;
	size_t n_pkgs, cap_pkgs;
	size_t *pkg_slots; /* open-addressing hash of pkgs by name: index + 1, 0 = empty */
	size_t pkg_slots_cap;
	struct grove_ignore_list *global_ignore; /* ~/.stow-global-ignore, or the built-in list */
	/* Stow-relative paths the planner needed but the scan had not read (see grove_scan_needs).
	 */
	char **needs;
	size_t n_needs, cap_needs;
	/* Target-relative folders the planner needed listed (a marked stow dir beneath the
	 * target, see grove_plan_opts.other_stow_dirs) but the scan had not read. */
	char **tneeds;
	size_t n_tneeds, cap_tneeds;
	/* Packages of such a second stow dir whose .stow-local-ignore the planner needs read, by
	 * their target-relative folder (e.g. "stow2/zeta"); grove_scan_target_needs reads them
	 * into package records named by that path in pkgs (a package name holds no '/', so the
	 * two kinds of record never share a name). */
	char **tignores;
	size_t n_tignores, cap_tignores;
	/* The scan stopped (-ECANCELED) at more package entries than grove_scan_opts.walk_above. */
	bool too_big;
	/* Whether the stow dir's and the target's mounts are read with GROVE_LIST_SHORT_END
	 * (grove_fs_fills_listings, asked once): 0 not asked yet, 1 yes, -1 no. */
	signed char stow_fills, target_fills;
};

void grove_world_init(struct grove_world *w);
void grove_world_release(struct grove_world *w);

/* The package record for name, or NULL. */
struct grove_world_pkg *grove_world_pkg(const struct grove_world *w, const char *name);

/* The package record for name, added (no ignore list loaded yet) if there was none; NULL when
 * out of memory. */
struct grove_world_pkg *grove_world_pkg_add(struct grove_world *w, const char *name);

struct grove_scan_opts {
	bool dotfiles;
	bool full_target; /* compat unstow walks the whole target */
	/* Leave unread the package folders the plan folds without entering (nodes marked
	 * pruned; the planner asks for them should it enter). For stow, restow and unstow without
	 * --no-folding. */
	bool prune;
	/* Look up in each target folder only the names the packages reaching it have (and Stow's
	 * .stow and .nonstow markers) instead of listing it: such a folder is left unlisted with
	 * those entries as kids, and a planner that needs its whole contents asks for it (tneed).
	 * For a request that only stows, without --dotfiles or --compat. */
	bool lookup;
	/* When not 0: once the requested packages hold more entries than this, the scan stops
	 * and returns -ECANCELED with w->too_big set (the caller plans folder by folder instead,
	 * grove_planner_walk). */
	size_t walk_above;
};

/*
 * Fills w from the held roots for a request naming pkgs (the union of the
 * packages to unstow and to stow). stow_path must already be set; the global
 * ignore list must already be set. Reads only beneath the roots.
 */
int grove_scan(struct grove_world *w, const struct grove_root *stow,
	       const struct grove_root *target, char *const *pkgs, size_t n_pkgs,
	       const struct grove_scan_opts *opts, struct grove_error *err);

/* Records that the planner needs the stow-relative path (a package's folder
 * or entry, with the package's ignore list). Returns 0 or -ENOMEM. */
int grove_world_need(struct grove_world *w, const char *relpath);

/* Records that the planner needs the target folder tpath listed. 0 or -ENOMEM. */
int grove_world_tneed(struct grove_world *w, const char *tpath);

/* Records that the planner needs the ignore list of the second stow dir's package whose folder
 * is the target-relative pkgpath. 0 or -ENOMEM. */
int grove_world_tignore(struct grove_world *w, const char *pkgpath);

/* Lists every folder in w->tneeds (and those on the way to it) beneath the held target, no
 * symlink followed, and reads the .stow-local-ignore of each package in w->tignores beneath
 * it, then clears both lists. */
int grove_scan_target_needs(struct grove_world *w, const struct grove_root *target,
			    struct grove_error *err);

/* Reads every path in w->needs (whole folders), then clears the list. */
int grove_scan_needs(struct grove_world *w, const struct grove_root *stow, struct grove_error *err);

/* Reads into w->target the folders on the way to each target-relative path,
 * and each path itself when it is a folder (every entry listed, with link
 * texts). For undo, rollback and recovery, which know the paths they touch. */
int grove_scan_target_paths(struct grove_world *w, const struct grove_root *target,
			    char *const *paths, size_t n, struct grove_error *err);

/*
 * The scan one folder at a time, for the bounded walk (grove_scan_walk below). Each
 * returns 0, a negative code, or GROVE_SCAN_BAIL when the folder holds what only the whole scan
 * takes (a package link to a folder, one that leaves the stow dir or loops, a fifo or device, a
 * symlink on the way, a package deeper than GROVE_TREE_MAX_DEPTH): the caller then plans with
 * the whole model (grove_scan), which treats it as it always has.
 *
 * grove_scan_pkg_folder lists the package folder at the stow-relative relpath into w->stow (its
 * folders unlisted; what an earlier answer left in the node is dropped first), once.
 * grove_scan_pkg_check reads the package folder at relpath and every folder beneath it, keeping
 * nothing: the checks and errors of the whole scan, which reads requested packages whole.
 * grove_scan_pkg_ignore reads the package's .stow-local-ignore once.
 * grove_scan_target_folder lists the target folder at tpath ("" for the root; a folder on disk
 * the model already has) into w->target, with what its links into the stow dir point at.
 * grove_scan_forget drops a folder's entries from the model, keeping the node (unlisted).
 */
#define GROVE_SCAN_BAIL 2
int grove_scan_pkg_folder(struct grove_world *w, const struct grove_root *stow, const char *relpath,
			  struct grove_error *err);
int grove_scan_pkg_check(struct grove_world *w, const struct grove_root *stow, const char *relpath,
			 struct grove_error *err);
int grove_scan_pkg_ignore(struct grove_world *w, const struct grove_root *stow, const char *package,
			  struct grove_error *err);
int grove_scan_target_folder(struct grove_world *w, const struct grove_root *stow,
			     const struct grove_root *target, const char *tpath,
			     struct grove_error *err);
void grove_scan_forget(struct grove_node *node);

/* Drops what a scan or a walk put into w's trees (and the needs it recorded), keeping its stow
 * path and ignore lists: for planning again from the start (a bounded walk's fallback). */
void grove_world_reset_trees(struct grove_world *w);

/* Puts the target's planned state back to the scanned one, for planning again. */
void grove_world_reset_plan(struct grove_world *w);

struct grove_plan;

/*
 * What a round of planning returns when it reached a part of the stow dir (a folder another
 * package may unfold, a link's destination) or of the target (a second stow dir's folder) that
 * the scan has not read: it recorded those paths with grove_world_need / grove_world_tneed,
 * went on with "missing" as the answer to collect every need of the round, and its plan is to
 * be thrown away. Not an error: err is not set. grove_planner_run (planner.h) returns it; this
 * is the one edge back from the planner to the scan.
 */
#define GROVE_PLAN_NEEDS_SCAN 1

/*
 * One round of planning over w into plan: 0 when done (the plan may hold conflicts),
 * GROVE_PLAN_NEEDS_SCAN when it reached parts of the stow dir or target the scan
 * has not read (recorded in w->needs / w->tneeds), or a negative code.
 */
typedef int (*grove_scan_plan_fn)(struct grove_world *w, void *ctx, struct grove_plan *plan,
				  struct grove_error *err);

/*
 * The scan→plan loop every use runs: calls plan_fn; while it answers GROVE_PLAN_NEEDS_SCAN,
 * throws the round's plan away, puts w->target back to its scanned state, reads what was
 * needed beneath stow and target, and plans again (planning is pure, so a round can be
 * repeated). Returns 0 with the final plan, or a negative code (-GROVE_E_INTERNAL if it does
 * not settle within a bound that only a bug reaches).
 */
int grove_scan_plan(struct grove_world *w, const struct grove_root *stow,
		    const struct grove_root *target, grove_scan_plan_fn plan_fn, void *ctx,
		    struct grove_plan *plan, struct grove_error *err);

struct grove_plan_opts;

/* grove_scan_plan of grove_planner_run (planner.h) for one set of options: reads what planning
 * needs beneath stow and target until the plan settles. 0 or a negative code. */
int grove_scan_plan_packages(struct grove_world *w, const struct grove_root *stow,
			     const struct grove_root *target, const struct grove_plan_opts *opts,
			     char *const *unstow, size_t n_unstow, char *const *pkgs, size_t n_pkgs,
			     struct grove_plan *plan, struct grove_error *err);

/* grove_planner_walk (planner.h) with the scanner as its reader: grove_scan_pkg_ignore and
 * grove_scan_pkg_folder to list a package's folder, grove_scan_target_folder, grove_scan_pkg_check,
 * grove_scan_forget, beneath stow and target. Returns as grove_planner_walk. */
int grove_scan_walk(struct grove_world *w, const struct grove_root *stow,
		    const struct grove_root *target, const struct grove_plan_opts *opts,
		    char *const *unstow, size_t n_unstow, char *const *pkgs, size_t n_stow,
		    struct grove_plan *plan, struct grove_error *err);

/* grove_planner_import_walk (planner.h) with the scanner as its reader, as grove_scan_walk. */
int grove_scan_import_walk(struct grove_world *w, const struct grove_root *stow,
			   const struct grove_root *target, char *const *pkgs, size_t n_pkgs,
			   struct grove_plan *plan, struct grove_error *err);

#endif
