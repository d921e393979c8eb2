/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove apply in the library: converging one target to a declared set of packages (the
 * difference against what grove has stowed there, planned and applied as one transaction), and
 * the steps a whole manifest takes on this host (targets, alternatives requests, profiles). */
#ifndef GROVE_APPLY_H
#define GROVE_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grove/alt.h"
#include "grove/error.h"
#include "grove/fs.h"
#include "grove/ignore.h"
#include "grove/manifest.h"
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
	/* Unlocked (--check): the interrupted transaction a real run would roll back first, which
	 * the check does not (it plans the target as it is), or 0. */
	int64_t interrupted;
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

/* ---- a manifest's steps ---- */

/* What the steps are taken from; every pointer is borrowed for the steps' whole life. */
struct grove_apply_steps_opts {
	const struct grove_manifest *manifest;
	const struct grove_apply_context *ctx; /* host, tags and option layers */
	/* The manifest's path as the user named it: messages ("FILE:LINE:COL: ...") and the folder
	 * relative paths in it start from. */
	const char *manifest_path;
	const char *home;          /* $HOME, for "~" in paths; NULL: a "~" path is an error */
	const char *dpkg_admindir; /* $DPKG_ADMINDIR (the admin dir's parent), or NULL */
	const char *state_opt;     /* --state, or NULL */
	double wait_seconds;       /* --wait */
	const char *command;       /* the command line the logs record */
	/* ~/.stow-global-ignore's text and path, or NULL for Stow's built-in list. */
	const char *global_ignore_text, *global_ignore_source;
	/* apply --check: the alternatives groups are read as a dry run reads them (grove alt's
	 * dry_run), writing nothing, not even the admin files' stamp cache; and the profiles are
	 * planned by their builds' dry runs (a real run learns the same from the builds themselves,
	 * and plans each forest once). */
	bool check;
};

/* One target the manifest selects on this host, with its packages' effective options. */
struct grove_apply_target_step {
	const struct grove_manifest_target *mt;
	char *target, *dir; /* resolved paths */
	struct grove_apply_pkg *pkgs;
	size_t n_pkgs;
	struct grove_stow_settings *eff;
	struct grove_pattern_set **sets; /* owned, 3 per package (some NULL) */
	struct grove_apply_run run;      /* filled by grove_apply_steps_prepare */
	bool prepared;
};

/* One alternatives request apply makes. */
struct grove_apply_alt_step {
	const struct grove_manifest_alt_group *group;
	enum grove_alt_action action; /* INSTALL, REMOVE, SET or AUTO */
	char *path;                   /* INSTALL, REMOVE, SET; NULL for AUTO */
	int priority;                 /* INSTALL */
	int64_t txn;     /* after grove_apply_steps_run_alt: its group's transaction, or 0 */
	char **warnings; /* after grove_apply_steps_run_alt: update-alternatives' */
	size_t n_warnings;
};

/* One profile the manifest selects: what its generation is built from. */
struct grove_apply_profile_step {
	const struct grove_manifest_profile *mp;
	char *dir;
	char **pkgs; /* sorted bytewise, each once (as a generation's record); the strings are the
			manifest's */
	size_t n;
	bool no_folding, dotfiles;
	bool changed;    /* planned: a build is needed; run: a new generation was built */
	long generation; /* planned: the generation the build would make, else the current one;
			    after the run, the current one (0: none) */
	/* Planned by the build's dry run: what it would fail with (failure.code 0: nothing), and
	 * when that is conflicts (conflicted), the conflicts. */
	struct grove_error failure;
	bool conflicted;
	struct grove_plan conflicts;
};

struct grove_apply_steps {
	struct grove_apply_steps_opts o;
	char *base; /* the manifest's folder */
	struct grove_apply_target_step *targets;
	size_t n_targets;
	struct grove_apply_alt_step *alts;
	size_t n_alts;
	char *altdir, *admindir, *alt_root;
	struct grove_apply_profile_step *profiles;
	size_t n_profiles;
};

/*
 * The calling sequence of grove apply:
 *
 *   grove_apply_steps_select(&st, &opts, err);          targets, their overlaps refused
 *   for each target i: grove_apply_steps_prepare(&st, i, lock, err);
 *                                                       conflicts in targets[i].run.plan
 *   grove_apply_steps_plan_alternatives(&st, err);      also when a target has conflicts
 *   grove_apply_steps_plan_profiles(&st, err);
 *   then, to apply: grove_apply_execute(&targets[i].run) for each target, in order,
 *   i += grove_apply_steps_run_alt(&st, i, err) from the first alternatives step, in order,
 *   grove_apply_steps_build_profile(&st, i, conflicts, err) for each profile step;
 *   grove_apply_steps_release(&st) always, also after a failure.
 *
 * Nothing prints; errors about the manifest are -GROVE_E_CONFIG with "FILE:LINE:COL: ...".
 */

/* Fills st from o (st need not be initialised): the targets whose 'when' matches, each with the
 * packages whose 'when' matches and their effective options and compiled patterns; then opens
 * each target and stow dir once to refuse two targets that are one folder, or a package of one
 * stow dir in two nested targets (nothing is locked or changed). */
int grove_apply_steps_select(struct grove_apply_steps *st, const struct grove_apply_steps_opts *o,
			     struct grove_error *err);

/* Prepares target i (grove_apply_prepare, locking when lock): a package its stow dir lacks is
 * -GROVE_E_CONFIG pointing at the manifest line that names it. */
int grove_apply_steps_prepare(struct grove_apply_steps *st, size_t i, bool lock,
			      struct grove_error *err);

/* The alternatives requests that take each selected group from its saved state to the
 * manifest's: install what is missing or different, remove what the manifest no longer lists,
 * then the mode. Reads the groups; changes nothing. */
int grove_apply_steps_plan_alternatives(struct grove_apply_steps *st, struct grove_error *err);

/* The selected profiles with what their generations are built from; with o.check, each planned by
 * grove_profile_build's dry run (the real build's code, changing nothing): changed when the build
 * would make a generation (the record differs, or a package's contents changed the forest), the
 * number it would make, or what it would fail with (failure, conflicts). */
int grove_apply_steps_plan_profiles(struct grove_apply_steps *st, struct grove_error *err);

/* With --check: what the alternatives steps would fail with, by grove alt's dry run of each request
 * on the disk as it is (a SET or AUTO after its group's INSTALL or REMOVE is left out: it depends
 * on them). The error the real run would stop on, or 0. Changes nothing. */
int grove_apply_steps_check_alternatives(struct grove_apply_steps *st, struct grove_error *err);

/* Runs alternatives step i and the steps after it of the same group as one logged transaction
 * (grove_alt_run_group: all or nothing, one `grove undo`); fills their txn and step i's warnings
 * (also when it fails). The number of steps run, or an error. */
int grove_apply_steps_run_alt(struct grove_apply_steps *st, size_t i, struct grove_error *err);

/* Builds and switches to profile step i's generation (none when the current one already is);
 * -GROVE_E_CONFLICT leaves the conflicts in conflicts (initialised by the caller). */
int grove_apply_steps_build_profile(struct grove_apply_steps *st, size_t i,
				    struct grove_plan *conflicts, struct grove_error *err);

/* Whether any profile step is (or was) changed; whether any target's plan or profile's build has
 * conflicts; whether any step changes anything at all. */
bool grove_apply_steps_profiles_changed(const struct grove_apply_steps *st);
bool grove_apply_steps_conflicts(const struct grove_apply_steps *st);
bool grove_apply_steps_changed(const struct grove_apply_steps *st);

/* Releases everything st owns (the prepared runs too, unlocking the targets); accepts a zeroed
 * st. */
void grove_apply_steps_release(struct grove_apply_steps *st);

/* ---- grove apply, start to end (apply_run.c) ---- */

/* What a run of grove apply is asked: the command line's, and the environment the caller read
 * (the library reads no environment variable). Every pointer is borrowed for the run's life. */
struct grove_apply_request {
	const char *file;                        /* -f FILE, or NULL */
	const struct grove_strlist *tags;        /* --tag ..., or NULL */
	const char *host;                        /* --host, or NULL */
	const struct grove_stow_settings *flags; /* -d, --no-folding, ..., or NULL */
	bool check;                              /* --check (or -n) */
	const char *state_opt;                   /* --state, or NULL */
	double wait_seconds;                     /* --wait */
	const char *command;                     /* the command line the logs record */
	const char *home;                        /* $HOME, or NULL */
	const char *xdg_config_home;             /* $XDG_CONFIG_HOME, or NULL */
	const char *env_manifest;                /* $GROVE_MANIFEST, or NULL */
	const char *env_host, *env_tags;         /* $GROVE_HOST, $GROVE_TAGS, or NULL */
	const char *dpkg_admindir;               /* $DPKG_ADMINDIR, or NULL */
	const char *default_host;                /* gethostname()'s, or NULL */
	const char *cwd;                         /* for the manifest's absolute path, or NULL */
};

/* What a run tells while it goes, for its caller to print, in the order it happens (each may
 * be NULL). */
struct grove_apply_events {
	void *ctx;
	/* A target's interrupted transaction rolled back before planning it. */
	void (*recovered)(void *ctx, const char *target, int64_t txn);
	/* --check: a target's transaction is interrupted (the real run rolls it back first). */
	void (*interrupted)(void *ctx, const char *target, int64_t txn);
	/* A target's plan warns (a skipped stow dir, an ignored absolute link, ...). */
	void (*warning)(void *ctx, const char *text);
	/* update-alternatives' warning for an alternatives step. */
	void (*alt_warning)(void *ctx, const char *text);
	/* A profile's build met conflicts (the run then fails with -GROVE_E_CONFLICT). */
	void (*profile_conflicts)(void *ctx, const struct grove_plan *conflicts);
};

/* A run of grove apply: which manifest, its layers, its steps. */
struct grove_apply {
	struct grove_user_config cfg;
	struct grove_manifest m;
	struct grove_apply_context ctx;
	char *manifest_path;     /* as found or given ("~/" expanded) */
	char *manifest_abs;      /* absolute, when manifest_path is not (for --json); may be NULL */
	char *gi_text, *gi_path; /* ~/.stow-global-ignore, when there is one */
	struct grove_apply_steps st;
	bool check;
	/* After grove_apply_plan: whether anything conflicts (with check, the profiles' builds'
	 * conflicts too; otherwise those are met when building). */
	bool conflicts;
	/* After grove_apply_run failed at a target: its index (the targets before it are applied,
	 * each with its transaction); st.n_targets when the failure was later or there was none. */
	size_t failed_target;
};

/*
 * The calling sequence of a whole run (what `grove apply` does; the CLI only prints):
 *
 *   grove_apply_init(&ap)
 *   grove_apply_load(&ap, &rq, err)       the config, the manifest (-f > $GROVE_MANIFEST >
 *                                          the config's > ./grove.yaml > $XDG_CONFIG_HOME/grove/
 *                                          or ~/.config/grove/), ~/.stow-global-ignore, host
 *                                          and tags, then the steps selected
 *   grove_apply_plan(&ap, &ev, err)        every target prepared (locked unless check) before
 *                                          any changes, then the alternatives and profiles; with
 *                                          check also what the real run would stop on (an
 *                                          alternatives request update-alternatives refuses, a
 *                                          profile's build failing): that failure is returned
 *   if ap.conflicts: nothing changes; else unless check:
 *   grove_apply_run(&ap, &ev, err)         each target one transaction in manifest order, then
 *                                          the alternatives steps, then the profiles; the first
 *                                          failure stops the run, and what was applied before it
 *                                          stays so (each undoable on its own)
 *   grove_apply_release(&ap)               always (also after a failed load)
 */
/* Makes ap empty, for grove_apply_load and, whatever happens, grove_apply_release. */
void grove_apply_init(struct grove_apply *ap);
int grove_apply_load(struct grove_apply *ap, const struct grove_apply_request *rq,
		     struct grove_error *err);
int grove_apply_plan(struct grove_apply *ap, const struct grove_apply_events *ev,
		     struct grove_error *err);
int grove_apply_run(struct grove_apply *ap, const struct grove_apply_events *ev,
		    struct grove_error *err);
void grove_apply_release(struct grove_apply *ap);

#endif
