/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles: Nix-like generations of symlink forests, switched with one atomic rename. */
#ifndef GROVE_PROFILE_H
#define GROVE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/plan.h"

/*
 * The layout of profile NAME in its profile dir D (docs/profiles.md):
 *
 *	D/NAME                   -> NAME-<cur>-link      the profile link, replaced by rename
 *	D/NAME-<n>-link          -> NAME.generations/<n> one link per generation that exists
 *	D/NAME.generations/<n>/  the generation: the minimal symlink forest of its
 *	                         packages (the planner of `grove stow`) and its record
 *	                         file .grove-generation (packages, stow dir, time, options)
 *
 * The disk is the source of truth: a generation exists while its
 * NAME-<n>-link does; its record is the file inside its folder. The
 * transaction log (the journal's target is D/NAME.generations) records every
 * change as intent, then commit, for recovery and `grove log`; every run that
 * changes the profile holds the flock of that target (locks/ in the state dir).
 *
 * D defaults to <state dir>/profiles (the state dir as for every command:
 * --state, $GROVE_STATE_DIR, $XDG_STATE_HOME/grove, /var/lib/grove for root);
 * a profile given with a '/' is a path: D is its folder, NAME its last part.
 *
 * Every changing call (build, switch, rollback, delete, gc) needs a profile
 * opened with mutate = true: it holds the lock and has recovered an
 * interrupted transaction (rolled back a build, switch or delete; finished a
 * gc). Calls return >= 0 or a negative code with err set, as everywhere.
 */

struct grove_profile;

struct grove_profile_opts {
	const char *state_opt; /* --state, or NULL */
	const char *profile;   /* -p: a name, or a path with '/'; NULL: "default" */
	double wait_seconds;   /* how long to wait for the profile's lock; 0 fails at once */
	bool mutate;           /* lock the profile and recover; false for list and diff */
	bool dry_run;          /* with mutate: plan only (see below) */
	const char *command;   /* with mutate: the command line the lock's holder record names
				  (may be NULL) */
};

/* Opens (making D and NAME.generations when mutate) the profile. A locked
 * profile is -EWOULDBLOCK ("profile '…' is locked by another grove run").
 * *ret_recovered (may be NULL) gets the transaction recovery finished, or 0. */
int grove_profile_open(const struct grove_profile_opts *opts, struct grove_profile **ret,
		       int64_t *ret_recovered, struct grove_error *err);

/*
 * A dry run (opts->mutate and opts->dry_run) opens the profile as list does:
 * nothing is made, no lock is taken, nothing is recovered (an interrupted
 * transaction would be recovered first by a real run). Every changing call
 * then checks and plans as it would, returns what it would return (the number
 * it would build, the generation it would switch to, how many folders gc
 * would remove), and changes nothing.
 */
bool grove_profile_dry_run(const struct grove_profile *p);

/* What the last successful changing call did or, in a dry run, would do: its
 * summary ops, paths relative to the profile dir (mkdir NAME.generations/<n>,
 * link NAME-<n>-link, relink NAME, unlink NAME-<n>-link, rmdir
 * NAME.generations/<n>); for a build *ret_forest (may be NULL) gets the new
 * generation's forest, paths relative to its folder (otherwise empty). Valid
 * until the next call or close. */
const struct grove_plan *grove_profile_planned(const struct grove_profile *p,
					       const struct grove_plan **ret_forest);

/* Releases the lock and everything held; accepts NULL; returns NULL. */
struct grove_profile *grove_profile_close(struct grove_profile *p);

/* The profile link's path (D/NAME) and the profile's name, for messages. */
const char *grove_profile_link_path(const struct grove_profile *p);
const char *grove_profile_name(const struct grove_profile *p);

/* One generation as its record says. */
struct grove_generation {
	long number;
	double time;     /* seconds since the epoch, when it was built */
	char *stow_dir;  /* canonical path of the stow dir its packages came from */
	char **packages; /* sorted bytewise, each once */
	size_t n_packages;
	bool no_folding;
	bool dotfiles;
	int64_t txn;   /* the transaction that built it */
	bool current;  /* the profile link points at it */
	bool complete; /* its folder and record were found and read */
};

/* Whether name may name a profile: not empty, ".", "..", a name grove uses for its own entries
 * (".grove-…", "…-link", "….generations"), longer than NAME_MAX or holding control characters;
 * -GROVE_E_BADINPUT naming the reason otherwise. */
int grove_profile_check_name(const char *name, struct grove_error *err);

void grove_generation_release(struct grove_generation *g);
void grove_generations_free(struct grove_generation *g, size_t n);

/*
 * The generations that exist (a NAME-<n>-link in D), sorted by number, each
 * with its record. *ret_current is the current generation's number, or 0 when
 * the profile has none yet.
 */
int grove_profile_generations(struct grove_profile *p, struct grove_generation **ret, size_t *ret_n,
			      long *ret_current, struct grove_error *err);

/* What a new generation is built from. */
struct grove_profile_spec {
	const char *stow_dir; /* as the user gave it */
	char *const *packages;
	size_t n_packages;
	bool no_folding;
	bool dotfiles;
	const char *command; /* the command line, for the log (may be NULL) */
};

/*
 * Builds a generation holding spec's packages and switches the profile to it,
 * in one logged transaction: the forest is made in NAME.generations under a
 * temporary name tagged with the transaction's id, fsynced, renamed to its
 * number (the highest existing number + 1), its NAME-<n>-link made, then the
 * profile link replaced by rename. A spec identical to the current
 * generation's (same packages, stow dir and options, and the same forest)
 * makes nothing: *ret_number = 0, returns 0. Conflicting packages: every
 * conflict in *conflicts (initialised by the caller; may be NULL), nothing
 * changed, -GROVE_E_CONFLICT with err naming the first.
 */
int grove_profile_build(struct grove_profile *p, const struct grove_profile_spec *spec,
			long *ret_number, struct grove_plan *conflicts, struct grove_error *err);

/* ---- build, install, remove: the new generation's packages from the current one's ---- */

enum grove_profile_change_kind {
	GROVE_PROFILE_BUILD,   /* exactly the packages named */
	GROVE_PROFILE_INSTALL, /* the current generation's, and the packages named */
	GROVE_PROFILE_REMOVE,  /* the current generation's but the packages named */
};

/* What `grove profile build|install|remove` asks (every pointer borrowed). */
struct grove_profile_change {
	enum grove_profile_change_kind kind;
	char *const *packages; /* as named: "vim/" names vim, as for stow */
	size_t n_packages;
	const char *stow_dir;     /* -d, or NULL: $STOW_DIR, the current generation's, "." */
	const char *env_stow_dir; /* $STOW_DIR (the library reads no variable), or NULL */
	bool no_folding, dotfiles;
	const char *command; /* the command line, for the log (may be NULL) */
};

/* What it did (grove_profile_changed_release frees it). */
struct grove_profile_changed {
	char **packages; /* the new generation's set: sorted bytewise, each once (owned) */
	size_t n_packages;
	long previous;   /* the generation current before (0: none) */
	long generation; /* the one built (with dry_run, the one that would be), 0: nothing to do */
	struct grove_plan conflicts; /* with -GROVE_E_CONFLICT: every conflict */
};

/*
 * grove_profile_build of the set rq names: for install and remove, the current generation's
 * packages with rq's added or taken away (-GROVE_E_BADINPUT, nothing changed, when a package to
 * remove is not in the current generation, or the current generation's record cannot be read:
 * its packages would silently go); the stow dir rq's, else $STOW_DIR, else the current
 * generation's, else ".". ret is filled on every return (the set, even with conflicts) and is
 * to be released.
 */
int grove_profile_change(struct grove_profile *p, const struct grove_profile_change *rq,
			 struct grove_profile_changed *ret, struct grove_error *err);
void grove_profile_changed_release(struct grove_profile_changed *c);

/* Switches the profile link to generation number (which must exist); the
 * current one is "nothing to do" (returns 0, *ret_changed false). */
int grove_profile_switch(struct grove_profile *p, long number, const char *command,
			 bool *ret_changed, struct grove_error *err);

/* Switches to the highest existing generation below the current one;
 * -GROVE_E_PRECONDITION at the oldest. *ret_number: the generation now current. */
int grove_profile_rollback(struct grove_profile *p, const char *command, long *ret_number,
			   struct grove_error *err);

/*
 * Which generations a delete request names, from gens (as
 * grove_profile_generations gives them, sorted by number) and one spec, with
 * nix-env --delete-generations' meaning: "old" (all but the current), "+N"
 * (those older than the current one and the N - 1 below it; newer ones stay;
 * "+0" is a usage error), "Nd" (those older than the newest generation built
 * more than N days before now, which stays), or a number (ignored when no
 * generation has it). Never the current generation, except when named by
 * number (the caller refuses that). Appends to *numbers.
 */
int grove_profile_select(const struct grove_generation *gens, size_t n, const char *spec,
			 double now, long **numbers, size_t *n_numbers, struct grove_error *err);

/* Deletes the links of the given generations in one transaction (their
 * folders stay until gc). The whole request is refused if it names the
 * current generation or one that does not exist: -GROVE_E_PRECONDITION. */
int grove_profile_delete(struct grove_profile *p, const long *numbers, size_t n,
			 const char *command, struct grove_error *err);

/* Removes every folder in NAME.generations no generation link refers to, in
 * one transaction. Only links, folders and record files are removed; anything
 * else stops it (-GROVE_E_PRECONDITION, naming the entry). *ret_removed: how
 * many folders went. */
int grove_profile_gc(struct grove_profile *p, const char *command, size_t *ret_removed,
		     struct grove_error *err);

/* Makes link_path (outside the profile dir; its folder is held as a root) a
 * link to the profile link's absolute path, unless it already is one;
 * anything else there is refused. For ~/.grove-profile. */
int grove_profile_make_user_link(const struct grove_profile *p, const char *link_path,
				 struct grove_error *err);

#endif
