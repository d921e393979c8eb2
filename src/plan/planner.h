/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The planner: a pure function from a scanned world and a request to a plan or the full list of
 * conflicts. */
#ifndef GROVE_PLANNER_H
#define GROVE_PLANNER_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"
#include "grove/ignore.h"
#include "grove/plan.h"
#include "plan/world.h"

struct grove_plan_opts {
	bool no_folding;
	bool adopt;
	bool dotfiles;
	bool compat;
	const struct grove_pattern_set *ignore;   /* may be NULL */
	const struct grove_pattern_set *defer;    /* may be NULL */
	const struct grove_pattern_set *override; /* may be NULL */
	/* The caller is done with w->stow once a plan is found: it is freed (NULL) before the ops
	 * are emitted, so the package model and the plan are not both in memory at the peak. */
	bool release_stow;
	/* Messages in GNU Stow's words (invoked as "stow"), rather than grove's. */
	bool stow_words;
	/* A link into a folder marked with .stow beneath the target (a second stow dir) is
	 * Stow's, as in Stow: the planner asks for those folders through w->tneeds (the
	 * caller lists them with grove_scan_target_needs and plans again). */
	bool other_stow_dirs;
};

/*
 * Plans unstowing the packages in unstow, then stowing those in stow, as GNU
 * Stow 2.4 does (tree folding and unfolding, ownership by link text, ignore
 * lists, --defer/--override, --adopt, --dotfiles, --no-folding, -p), but over
 * the in-memory world: no syscalls. w->target's current state is changed to
 * what the plan leaves; plan receives the ops (the difference between the
 * scanned and the planned target) or, if anything conflicts, every conflict
 * and no ops. Warnings (skipped stow dirs, ignored absolute links) go to
 * plan->warnings. Returns 0 (conflicts are not an error), a negative code, or
 * GROVE_PLAN_NEEDS_SCAN (world.h) when it reached what the scan has not read: the need is
 * recorded in w and the plan is to be thrown away; grove_scan_plan reads it and plans again.
 */
int grove_planner_run(struct grove_world *w, const struct grove_plan_opts *opts,
		      char *const *unstow, size_t n_unstow, char *const *stow, size_t n_stow,
		      struct grove_plan *plan, struct grove_error *err);

/*
 * One pass of several over one world, for callers that plan packages with different options
 * (each pass carries its result into the next in w->target): grove_planner_run, whose
 * conflicts and warnings are added to plan and whose ops are dropped; after the last pass,
 * grove_planner_diff emits the plan (when plan has no conflicts). opts->release_stow must be
 * false. Returns as grove_planner_run.
 */
int grove_planner_run_pass(struct grove_world *w, const struct grove_plan_opts *opts,
			   char *const *unstow, size_t n_unstow, char *const *stow, size_t n_stow,
			   struct grove_plan *plan, struct grove_error *err);

/*
 * How the bounded walk has the folders it enters read: the scan→plan loop supplies the scanner's
 * (grove_scan_walk, world.h), so that no planner file calls the scanner. Each returns 0, a
 * negative code, or GROVE_SCAN_BAIL (world.h) when the folder holds what only the whole scan takes.
 */
struct grove_walk_reader {
	/* Reads package's ignore list (.stow-local-ignore), once. */
	int (*read_ignore)(void *ctx, struct grove_world *w, const char *package,
			   struct grove_error *err);
	/* Lists the package folder at the stow-relative rel (a package's top, or a folder beneath
	 * it) into w->stow. */
	int (*list_pkg)(void *ctx, struct grove_world *w, const char *rel, struct grove_error *err);
	/* Lists the target folder at tpath ("" for the top) into w->target. */
	int (*list_target)(void *ctx, struct grove_world *w, const char *tpath,
			   struct grove_error *err);
	/* Reads the package folder at rel and everything beneath it, keeping nothing: the checks
	 * and errors of the whole scan, for a folder the walk does not enter. */
	int (*check_pkg)(void *ctx, struct grove_world *w, const char *rel,
			 struct grove_error *err);
	/* Drops a folder's entries from the model once it is planned, keeping the node. */
	void (*forget)(void *ctx, struct grove_node *node);
	void *ctx;
};

/*
 * grove_planner_run folder by folder, for a plan streamed to a sink (planner_walk.c): rd reads
 * one folder at a time as the walk reaches it (w holds only the stow_path, the global ignore
 * list and what earlier calls left), each folder is planned, its
 * ops emitted and its entries dropped before the next, so the model in memory is one path from
 * the root with its folders' entries. The same ops as grove_planner_run in the same order, for
 * requests without --dotfiles, --compat or --adopt, one layout, and either --no-folding or no
 * unstow. Returns 0 with the plan complete (its ops partly in the sink), or GROVE_SCAN_BAIL
 * (world.h) for anything the walk does not take (a conflict, a warning, a need, an error, an
 * entry only the whole scan takes): the caller throws the plan and w's trees away and plans
 * with the whole model, which answers as it always has.
 */
int grove_planner_walk(struct grove_world *w, const struct grove_walk_reader *rd,
		       const struct grove_plan_opts *opts, char *const *unstow, size_t n_unstow,
		       char *const *pkgs, size_t n_stow, struct grove_plan *plan,
		       struct grove_error *err);

/* Emits into plan the ops that take w->target from its scanned state (orig_*)
 * to its current one (type/link), as grove_planner_run does after planning.
 * For callers that set the wanted state themselves (undo, rollback, recovery). */
int grove_planner_diff(struct grove_world *w, struct grove_plan *plan, struct grove_error *err);

/*
 * `grove import` (docs/stow.md): every link of the scanned target that is Stow's (its text,
 * joined to its folder, lands in the stow dir: find_stowed_path) into one of pkgs, with a
 * destination that exists, as a recorded LINK (plan.h) with its text and package, in path
 * order. A link into another package of the stow dir, or to nothing there, is a warning in
 * plan. Only folders the scan listed are entered (those where the packages have folders), so a
 * folded folder is its one link. Returns 0, a negative code, or GROVE_PLAN_NEEDS_SCAN
 * (world.h) as grove_planner_run does.
 */
int grove_planner_import(struct grove_world *w, char *const *pkgs, size_t n_pkgs,
			 struct grove_plan *plan, struct grove_error *err);
/*
 * grove_planner_import folder by folder, for a plan streamed to a sink (planner_import.c): the
 * scan reads one folder at a time beneath stow and target as the walk reaches it (w holds only
 * the stow_path and what earlier calls left), so the model in memory is one path from the root
 * with its folders' entries. The same ops and warnings in the same order. Returns 0 with the
 * plan complete (its ops partly in the sink), or GROVE_SCAN_BAIL (world.h) for anything the
 * walk does not take: the caller throws the plan and w's trees away and plans with the whole
 * scan (grove_planner_import), which answers as it always has.
 */
int grove_planner_import_walk(struct grove_world *w, const struct grove_walk_reader *rd,
			      char *const *pkgs, size_t n_pkgs, struct grove_plan *plan,
			      struct grove_error *err);

/* How much of one package the target reaches. */
struct grove_farm_package {
	size_t files;   /* the package's files (entries that are not folders), ignored ones left out
			 */
	size_t reached; /* how many of them the target reaches through links into this package */
};

/*
 * For each of pkgs (read whole by the scan, with dotfiles on so that ".X" target folders are
 * listed for "dot-X"), out[i]: its files, and how many of them the target reaches through a
 * link into that very package entry, under the entry's name or, for "dot-X", ".X" (a folded
 * folder reaches every file beneath it). Pure, as grove_planner_run; the same returns.
 */
int grove_planner_farm_status(struct grove_world *w, char *const *pkgs, size_t n_pkgs,
			      struct grove_farm_package *out, struct grove_error *err);

#endif
