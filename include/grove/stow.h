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
	/* The layout options were given (--dotfiles or --no-dotfiles, --no-folding or --folding,
	 * on the command line or in .stowrc): a package the log recorded is then planned with
	 * them, and a record that differs is a conflict. An option set true counts as given. */
	bool dotfiles_given, no_folding_given;
	/* GNU Stow's behaviour (invoked as "stow"): the options the log recorded are not used. */
	bool ignore_recorded;
	bool compat;     /* -p: legacy unstow that walks the target */
	bool stow_words; /* errors in GNU Stow's words (invoked as "stow") */
	/* The caller reads the whole plan after grove_stow_prepare (-v, --json print it): it is
	 * never streamed (grove_stow_prepare). */
	bool no_stream;
	/* A streamed plan is made with the whole model even when the bounded walk would take it
	 * (for tests that compare the two). */
	bool no_walk;
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

/* A package of the request planned with layout options the log recorded when it was stowed
 * (docs/stow.md, "Recorded options"), which the request did not give: the recorded options it
 * uses that are not the defaults. */
struct grove_stow_recorded {
	char *package;
	bool dotfiles, no_folding;
};

/* A package a restow (unstowed and stowed by one request) gives layout options other than the
 * ones the log recorded for it (issue 40 item 7): its links are removed as they were made (was)
 * and made as the request gives (now), in one transaction. */
struct grove_stow_changed {
	char *package;
	struct grove_pkg_layout was, now;
};

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
	/* A dry run (no lock): the interrupted transaction a real run would roll back first, which
	 * the preview does not (it plans the target as it is), or 0. */
	int64_t interrupted;
	int64_t txn;                          /* the transaction grove_stow_execute made, or 0 */
	char *command;                        /* copied from the request */
	struct grove_stow_recorded *recorded; /* for the caller to say so */
	size_t n_recorded;
	/* Packages restowed with new options, for the caller to say so. */
	struct grove_stow_changed *changed;
	size_t n_changed;
	/* The packages, each with the options it is planned with, for the log (internal). */
	struct grove_journal_pkg *pkgs;
	size_t n_pkgs;
	/* A plan over the budget, logged while it was planned (internal): stream.id is its
	 * transaction, begun and not yet executed, and plan holds none of its ops (their count is
	 * plan.n_logged). */
	struct grove_session_stream streaming;
	struct grove_session_txn stream;
	/* The plan was made folder by folder (grove_planner_walk; internal, for tests). */
	bool walked;
	/* The packages the request only unstows that the log says are stowed (internal): a plan
	 * that removes nothing of one says so in a warning (issue 40 item 2). */
	char **believed;
	size_t n_believed;
	/* Packages stowed without --dotfiles that the plan links under top-level dot- names (issue
	 * 40 item 9): Stow makes a `dot-config` of them too, and the stow goes ahead as asked; the
	 * caller may ask whether --dotfiles was meant. */
	char **dot_named;
	size_t n_dot_named;
	/* An import (grove_stow_import_prepare): the packages it records links of, in order of
	 * first sight; the links are plan.n_ops + plan.n_logged (a streamed plan holds none). */
	char **imported;
	size_t n_imported;
};

/*
 * Opens the roots, checks the request (package names, a target inside the stow
 * dir, missing packages), and, when sopts is given without no_lock (a mutating
 * run), locks the target, opens the log and recovers an interrupted
 * transaction; then scans what the plan needs and plans. With sopts->no_lock
 * (plan, --simulate) the log is only read (nothing is made when there is none),
 * and with sopts NULL not even that; nothing is locked or logged.
 *
 * Recorded options (unless req->ignore_recorded): a package the log says grove
 * stowed into this target from this stow dir, and that is still stowed, is
 * planned with the layout options it was stowed with (--dotfiles,
 * --no-folding) where the request gives none (listed in run->recorded);
 * a given option that differs from the recorded one is a conflict naming the
 * package, and nothing else is planned; except for a package the request both
 * unstows and stows (a restow): it is unstowed with the recorded options and
 * stowed with the given ones, in one plan (listed in run->changed). Packages
 * with different options are planned in passes over one world, unstows first,
 * into one plan.
 *
 * Conflicts are not an error here: they are in run->plan.conflicts for the
 * caller to report. Returns 0, or a negative code with err set
 * (GROVE_E_BADINPUT, GROVE_E_USAGE, GROVE_E_STUCK, -EWOULDBLOCK for a locked
 * target, or an errno naming the path) and run released.
 */
int grove_stow_prepare(const struct grove_stow_request *req, const struct grove_session_opts *sopts,
		       struct grove_stow_run *run, struct grove_error *err);
/*
 * Records in the log that the notice naming run->recorded was shown (docs/stow.md, "Recorded
 * options"): grove_stow_prepare leaves out of run->recorded the packages whose notice was shown
 * before with the same options, so it is printed once per package and options. A run that is
 * not journaled (a dry run) records nothing.
 */
int grove_stow_note_told(struct grove_stow_run *run, struct grove_error *err);
/*
 * A journaled run whose plan has more ops than the budget (grove_session_plan_budget), unless
 * req->no_stream or req->adopt, is streamed (docs/journal.md, "Streamed plans"): its intent is
 * logged while it is planned and committed by grove_stow_prepare, and grove_stow_execute runs
 * it from the log; run->plan then holds no ops, only their count (n_logged).
 */

/* Applies run->plan (which must have no conflicts) as one logged transaction
 * when journaled (grove_session_apply, logging each package with the options it
 * was planned with), else directly (grove_exec_apply). */
int grove_stow_execute(struct grove_stow_run *run, struct grove_error *err);

void grove_stow_run_release(struct grove_stow_run *run);

/* Checks a package name: not empty, no '/', not "." or "..", no control
 * characters, valid UTF-8, at most NAME_MAX bytes. GROVE_E_BADINPUT otherwise. */
int grove_stow_check_package_name(const char *name, struct grove_error *err);

/* A package named on a stow, unstow, restow or import command line or in a manifest:
 * grove_stow_check_package_name's rules, but "." (GROVE_STOW_DIR_PACKAGE), the stow dir
 * itself as one package (`stow .`, docs/stow.md), is a package too. */
int grove_stow_check_package(const char *name, struct grove_error *err);

/* ---- questions about a stow dir, asked by the command line outside a request ---- */

enum grove_stow_entry {
	GROVE_STOW_ENTRY_NONE,   /* nothing there */
	GROVE_STOW_ENTRY_FOLDER, /* a folder (or a link to one beneath the stow dir): a package */
	GROVE_STOW_ENTRY_OTHER,  /* something else */
};

/* What the stow dir dir holds at name, links beneath it followed. A stow dir that cannot be
 * opened, or a name that cannot be looked at, is an error (*ret NONE). */
int grove_stow_dir_entry(const char *dir, const char *name, enum grove_stow_entry *ret,
			 struct grove_error *err);

/* The names of dir's folders and links that do not start with '.' (the packages a mistyped
 * name may have meant), in the order listed; grove_names_free them. */
int grove_stow_dir_names(const char *dir, char ***ret, size_t *ret_n, struct grove_error *err);

/* Reads a user's file by its path (.stowrc, ~/.stow-global-ignore), at most max bytes: a missing
 * one is 0 with *ret_buf NULL; one another user can write is refused (docs/stow.md). */
int grove_stow_read_user_file(const char *path, size_t max, char **ret_buf, size_t *ret_len,
			      struct grove_error *err);

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
