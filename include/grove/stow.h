/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The packages use: GNU Stow's stow/unstow/restow as one request through scan, plan and execute. */
#ifndef GROVE_STOW_H
#define GROVE_STOW_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/ignore.h"
#include "grove/plan.h"
#include "grove/session.h"

/*
 * A request as GNU Stow's command line expresses it: packages to unstow
 * (-D, and -R) are planned first, then packages to stow (-S, and -R), into one
 * plan. The caller fills it (the CLI from argv and .stowrc); every string and
 * set is owned by the request and freed by grove_stow_request_release().
 */
struct grove_stow_request {
	char *dir;    /* the stow dir as the user gave it (already defaulted) */
	char *target; /* the target as the user gave it (already defaulted) */
	char **unstow;
	size_t n_unstow;
	char **stow;
	size_t n_stow;
	bool no_folding;
	bool adopt;
	bool dotfiles;
	bool compat;     /* -p: legacy unstow that walks the target */
	bool stow_words; /* errors in GNU Stow's words (invoked as "stow") */
	int verbose;
	struct grove_pattern_set *ignore;   /* --ignore, anchored at the end */
	struct grove_pattern_set *defer;    /* --defer, anchored at the start */
	struct grove_pattern_set *override; /* --override, anchored at the start */
	/* ~/.stow-global-ignore's text, read by the caller; NULL when absent. */
	char *global_ignore_text;
	char *global_ignore_source; /* its path, for messages */
	char *command;              /* the command line, for the transaction log (may be NULL) */
};

void grove_stow_request_init(struct grove_stow_request *req);
void grove_stow_request_release(struct grove_stow_request *req);
/* Appends a copy of name to the unstow (unstow = true) or stow list. */
int grove_stow_request_add(struct grove_stow_request *req, bool unstow, const char *name);

/* The state between planning and executing: held roots, the session (lock
 * and log, when journaled) and the plan. */
struct grove_stow_run {
	struct grove_root stow_root;
	struct grove_root target_root;
	char *stow_path; /* the stow dir relative to the target, as Stow computes it */
	struct grove_plan plan;
	struct grove_session session;
	bool journaled;
	int64_t recovered; /* an interrupted transaction rolled back first, or 0 */
	int64_t txn;       /* the transaction grove_stow_execute made, or 0 */
	char *command;     /* copied from the request */
};

/*
 * Opens the roots, checks the request (package names, a target inside the stow
 * dir, missing packages), and, when sopts is given (a mutating run), locks the
 * target, opens the log and recovers an interrupted transaction; then scans
 * what the plan needs and plans. With sopts NULL (plan, --simulate) nothing is
 * locked or logged. Conflicts are not an error here: they are in
 * run->plan.conflicts for the caller to report. Returns 0, or a negative code
 * with err set (GROVE_E_BADINPUT, GROVE_E_USAGE, GROVE_E_STUCK, -EWOULDBLOCK
 * for a locked target, or an errno naming the path) and run released.
 */
int grove_stow_prepare(const struct grove_stow_request *req, const struct grove_session_opts *sopts,
		       struct grove_stow_run *run, struct grove_error *err);

/* Applies run->plan (which must have no conflicts) as one logged transaction
 * when journaled (grove_session_apply), else directly (grove_exec_apply). */
int grove_stow_execute(struct grove_stow_run *run, struct grove_error *err);

void grove_stow_run_release(struct grove_stow_run *run);

/* Checks a package name: not empty, no '/', not "." or "..", no control
 * characters, valid UTF-8, at most NAME_MAX bytes. GROVE_E_BADINPUT otherwise. */
int grove_stow_check_package_name(const char *name, struct grove_error *err);

/* Opens the stow directory dir into stow_root and the target into target_root, the error
 * prefixed with "stow directory" or "target". The caller releases both roots either way. */
int grove_stow_open_roots(const char *dir, const char *target, struct grove_root *stow_root,
			  struct grove_root *target_root, struct grove_error *err);

/* Refuses (GROVE_E_BADINPUT, saying why) a target that is run's stow dir or inside it. */
int grove_stow_check_target(const struct grove_stow_request *req, const struct grove_stow_run *run,
			    struct grove_error *err);

/*
 * `grove import` (docs/stow.md): like grove_stow_prepare for the packages in req->stow (every
 * package of the stow dir when it names none), but the plan is the recorded LINKs of
 * grove_planner_import: the links GNU Stow made that the log does not already own with the
 * same text (how many it does: *ret_known). req->dotfiles picks the target folders read, as
 * for stow. With sopts and !sopts->no_lock the target is locked and an interrupted
 * transaction recovered first; with sopts->no_lock (a dry run) the log is only read, and a
 * state dir or journal that does not exist is an empty log. With sopts NULL the log is not
 * read at all. grove_stow_execute then records the plan as one transaction whose executor
 * checks every link is still there with its text (a link changed since the scan:
 * GROVE_E_PRECONDITION, nothing recorded).
 */
int grove_stow_import_prepare(const struct grove_stow_request *req,
			      const struct grove_session_opts *sopts, struct grove_stow_run *run,
			      size_t *ret_known, struct grove_error *err);

/* One package of a stow dir as the disk shows it (grove_stow_farm). */
struct grove_stow_farm_pkg {
	char *name;
	size_t files;   /* its files, ignored ones left out */
	size_t reached; /* how many the target reaches through links into this package */
};

/*
 * Every package of the stow dir held by stow (its folders and links to folders whose names do
 * not start with '.'), sorted by name, with how much of it the target reaches
 * (grove_planner_farm_status): read-only, through the held roots. global_ignore_text and
 * source as for grove_stow_global_ignore. Free with grove_stow_farm_free.
 */
int grove_stow_farm(const struct grove_root *stow, const struct grove_root *target,
		    const char *global_ignore_text, const char *source,
		    struct grove_stow_farm_pkg **ret, size_t *ret_n, struct grove_error *err);
void grove_stow_farm_free(struct grove_stow_farm_pkg *v, size_t n);

/* The global ignore list: parsed from text (named source, "~/.stow-global-ignore" when NULL), or
 * the built-in list when text is NULL. */
int grove_stow_global_ignore(const char *text, const char *source, struct grove_ignore_list **ret,
			     struct grove_error *err);

#endif
