/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Converging one target to a declared set of packages (grove apply): the difference against what
 * grove has stowed there, planned and applied as one transaction. */
#ifndef GROVE_APPLY_H
#define GROVE_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/ignore.h"
#include "grove/plan.h"
#include "grove/session.h"

/* A package as the manifest wants it in the target, with its effective options. */
struct grove_apply_pkg {
	const char *name;
	bool no_folding, dotfiles, adopt;
	const struct grove_pattern_set *ignore, *defer, *override; /* may be NULL */
};

/*
 * The wanted state of one target: exactly the packages listed, from one stow
 * dir. What grove has stowed there from that stow dir (by the log: the
 * packages of the links it owns that land in the stow dir) and is not listed
 * is unstowed; everything listed is restowed with its options, so a package
 * whose options changed is relinked and one that is already as wanted
 * produces no op. All of it is one plan, hence one logged transaction.
 */
struct grove_apply_target {
	const char *dir;    /* stow dir path */
	const char *target; /* target path */
	const struct grove_apply_pkg *pkgs;
	size_t n_pkgs;
	const char *command; /* for the log */
	/* ~/.stow-global-ignore's text and path, or NULL for Stow's built-in list. */
	const char *global_ignore_text, *global_ignore_source;
};

struct grove_apply_run {
	struct grove_root stow_root;
	struct grove_root target_root;
	struct grove_session session;
	bool session_open, locked;
	struct grove_plan plan;
	char **recorded; /* packages grove had stowed here from this stow dir, sorted */
	size_t n_recorded;
	char **dropped; /* recorded and no longer wanted: unstowed */
	size_t n_dropped;
	char **added; /* wanted and not recorded: stowed */
	size_t n_added;
	int64_t recovered; /* an interrupted transaction rolled back first, or 0 */
	int64_t txn;       /* the transaction grove_apply_execute made, or 0 */
	char *command;
};

/*
 * Opens the roots and the log (locking the target and recovering an
 * interrupted transaction when lock is true; --check reads the log without
 * either), reads the recorded packages, scans and plans. Missing packages are
 * GROVE_E_BADINPUT naming them; conflicts are left in run->plan.conflicts.
 * On failure run is released.
 */
int grove_apply_prepare(const struct grove_apply_target *t, const char *state_opt,
			double wait_seconds, bool lock, struct grove_apply_run *run,
			struct grove_error *err);

/* Applies run->plan (no conflicts allowed) as one logged transaction; an
 * empty plan makes none. Needs a run prepared with lock. */
int grove_apply_execute(struct grove_apply_run *run, struct grove_error *err);

void grove_apply_run_release(struct grove_apply_run *run);

#endif
