/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recorded options: which layout options (--dotfiles, --no-folding) each package of a request is
 * planned with, from the request and the log, and planning packages whose options differ. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/journal.h"
#include "plan/planner.h"
#include "stow_int.h"
#include "base/util.h"

#include "banned.h" /* last */

static bool
listed(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

/* A given option that differs from the recorded one: the conflict names both. */
static int
mismatch(struct grove_stow_run *run, const struct grove_stow_request *req, const char *name,
	 const char *option, bool recorded, const char *given, struct grove_error *err)
{
	/* "without --no-folding" is a double negative: say what it was stowed with. */
	bool folding = !recorded && !strcmp(option, "--no-folding");
	cleanup_free char *msg =
		grove_strdupf("%s was stowed %s %s; this command gives %s", name,
			      recorded || folding ? "with" : "without",
			      folding ? "folding (no --no-folding)" : option, given);
	const char *action = listed(req->stow, req->n_stow, name) ? "stow" : "unstow";

	if (!msg || grove_plan_add_conflict(&run->plan, action, name, NULL, msg) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int
add_recorded(struct grove_stow_run *run, const char *name, bool dotfiles, bool no_folding)
{
	struct grove_stow_recorded *v = realloc(run->recorded, (run->n_recorded + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	run->recorded = v;
	v[run->n_recorded].dotfiles = dotfiles;
	v[run->n_recorded].no_folding = no_folding;
	v[run->n_recorded].package = strdup(name);
	if (!v[run->n_recorded].package)
		return -ENOMEM;
	run->n_recorded++;
	return 0;
}

/*
 * A package the request only unstows, with an option that differs from the recorded one: it is
 * unstowed as given (an unstow makes no second layout; a record that is wrong, such as a farm
 * imported without the --dotfiles it was made with, is then no dead end: issue 40 item 2), and a
 * warning says so.
 */
static int
unstow_as_given(struct grove_stow_run *run, const struct grove_stow_request *req, const char *name,
		const struct grove_pkg_layout *rec, struct grove_error *err)
{
	bool dot = (req->dotfiles || req->dotfiles_given) && req->dotfiles != rec->dotfiles;
	cleanup_free char *msg = grove_strdupf(
		"%s was stowed %s as grove's log says; unstowing it %s, as this command gives",
		name,
		dot ? (rec->dotfiles ? "with --dotfiles" : "without --dotfiles")
		    : (rec->no_folding ? "with --no-folding" : "with folding"),
		dot ? (req->dotfiles ? "with --dotfiles" : "without --dotfiles")
		    : (req->no_folding ? "with --no-folding" : "with folding"));

	if (!msg || grove_plan_add_warning(&run->plan, msg) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/*
 * A package the request restows (unstows and stows) with options other than the recorded ones:
 * unstowed as recorded, stowed with ret (issue 40 item 7). One plan does both, so the package is
 * never missing between two transactions, and undo puts the old layout and record back.
 */
static int
changed_add(struct grove_stow_run *run, const char *name, const struct grove_pkg_layout *was,
	    const struct grove_pkg_layout *now, struct grove_error *err)
{
	struct grove_stow_changed *v = realloc(run->changed, (run->n_changed + 1) * sizeof(*v));

	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	run->changed = v;
	v[run->n_changed].was = *was;
	v[run->n_changed].now = *now;
	v[run->n_changed].package = strdup(name);
	if (!v[run->n_changed].package)
		return grove_error_set(err, -ENOMEM, "out of memory");
	run->n_changed++;
	return 0;
}

/* One package: the request's options, or the recorded ones the request does not give. */
static int
decide(const struct grove_stow_request *req, const struct grove_pkg_layout *rec, const char *name,
       struct grove_stow_run *run, struct grove_pkg_layout *ret, struct grove_error *err)
{
	bool dot_given = req->dotfiles || req->dotfiles_given;
	bool fold_given = req->no_folding || req->no_folding_given;
	bool used_dot = false, used_fold = false;
	bool differs;
	int r = 0;

	ret->dotfiles = req->dotfiles;
	ret->no_folding = req->no_folding;
	if (!rec)
		return 0;
	differs = (dot_given && req->dotfiles != rec->dotfiles) ||
		  (fold_given && req->no_folding != rec->no_folding);
	if (differs) {
		/* What it does not give is still as recorded. */
		ret->dotfiles = dot_given ? req->dotfiles : rec->dotfiles;
		ret->no_folding = fold_given ? req->no_folding : rec->no_folding;
	}
	if (differs && !listed(req->stow, req->n_stow, name))
		return unstow_as_given(run, req, name, rec, err);
	if (differs && listed(req->unstow, req->n_unstow, name))
		return changed_add(run, name, rec, ret, err);
	if (dot_given && req->dotfiles != rec->dotfiles)
		r = mismatch(run, req, name, "--dotfiles", rec->dotfiles,
			     req->dotfiles ? "--dotfiles" : "--no-dotfiles", err);
	else if (!dot_given)
		ret->dotfiles = used_dot = rec->dotfiles;
	if (r >= 0 && fold_given && req->no_folding != rec->no_folding)
		r = mismatch(run, req, name, "--no-folding", rec->no_folding,
			     req->no_folding ? "--no-folding" : "--folding", err);
	else if (r >= 0 && !fold_given)
		ret->no_folding = used_fold = rec->no_folding;
	if (r >= 0 && (used_dot || used_fold) && add_recorded(run, name, used_dot, used_fold) < 0)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	return r;
}

/* A package the request only unstows that the log says is stowed (run->believed). */
static int
believed_add(struct grove_stow_run *run, const char *name, struct grove_error *err)
{
	char **v = realloc(run->believed, (run->n_believed + 1) * sizeof(*v));

	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	run->believed = v;
	if (!(v[run->n_believed] = strdup(name)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	run->n_believed++;
	return 0;
}

static const struct grove_pkg_layout *layout_of(const struct grove_stow_run *run, const char *name,
						bool unstow);

/*
 * The packages of run->recorded whose notice was shown before with the same options (the log's
 * pkg_told, schema 15): left out of it, so that the notice is printed once per package and
 * options, not on every command (issue 40 item 9).
 */
static int
drop_told(struct grove_stow_run *run, struct grove_journal *j, int64_t target_id,
	  struct grove_error *err)
{
	size_t k = 0;
	int r = 0;

	for (size_t i = 0; i < run->n_recorded; i++) {
		const struct grove_pkg_layout *l = layout_of(run, run->recorded[i].package, false);
		bool told = false;

		if (r >= 0 && l)
			r = grove_journal_pkg_told(j, target_id, run->stow_root.real,
						   run->recorded[i].package, l, &told, err);
		if (r >= 0 && told) {
			free(run->recorded[i].package);
			continue;
		}
		run->recorded[k++] = run->recorded[i];
	}
	run->n_recorded = k;
	return r;
}

static int
by_package(const void *key, const void *elem)
{
	return strcmp(key, ((const struct grove_journal_pkg *)elem)->package);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
grove_stow_layouts(const struct grove_stow_request *req, struct grove_journal *j, int64_t target_id,
		   char *const *names, size_t n, struct grove_stow_run *run,
		   struct grove_error *err)
{
	struct grove_journal_pkg *rec = NULL;
	size_t n_rec = 0;
	/* The packages to stow, sorted: which of names[] are, without a scan of the list each. */
	cleanup_free char **stow = calloc(req->n_stow + 1, sizeof(*stow));
	int r = 0;

	run->pkgs = calloc(n + 1, sizeof(*run->pkgs));
	if (!run->pkgs || !stow)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (req->n_stow)
		memcpy(stow, req->stow, req->n_stow * sizeof(*stow));
	qsort(stow, req->n_stow, sizeof(*stow), by_name);
	/* Every package's recorded options in one query, sorted by name. */
	if (j && !req->ignore_recorded && target_id && n) {
		r = grove_journal_pkgs_recorded(j, target_id, run->stow_root.real, &rec, &n_rec,
						err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct grove_journal_pkg *p = &run->pkgs[i];
		const struct grove_journal_pkg *found =
			n_rec ? bsearch(names[i], rec, n_rec, sizeof(*rec), by_package) : NULL;

		p->stow_dir = strdup(run->stow_root.real);
		p->package = strdup(names[i]);
		run->n_pkgs++;
		if (!p->stow_dir || !p->package) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		r = decide(req, found && found->layout.stowed ? &found->layout : NULL, names[i],
			   run, &p->layout, err);
		p->layout.stowed =
			bsearch(&names[i], stow, req->n_stow, sizeof(*stow), by_name) != NULL;
		if (r >= 0 && found && found->layout.stowed && !p->layout.stowed &&
		    listed(req->unstow, req->n_unstow, names[i]))
			r = believed_add(run, names[i], err);
	}
	grove_journal_pkgs_free(rec, n_rec);
	if (r >= 0 && j && run->n_recorded)
		r = drop_told(run, j, target_id, err);
	if (r < 0)
		return r;
	if (run->plan.n_conflicts) {
		/* Nothing is planned with options in doubt: the notice would only distract. */
		grove_plan_sort_conflicts(&run->plan);
		for (size_t i = 0; i < run->n_recorded; i++)
			free(run->recorded[i].package);
		run->n_recorded = 0;
		for (size_t i = 0; i < run->n_changed; i++)
			free(run->changed[i].package);
		run->n_changed = 0;
	}
	return r;
}

/* The options name is planned with: in the unstow pass (unstow), a package whose options a
 * restow changes is planned with the recorded ones. */
static const struct grove_pkg_layout *
layout_of(const struct grove_stow_run *run, const char *name, bool unstow)
{
	for (size_t i = 0; unstow && i < run->n_changed; i++)
		if (!strcmp(run->changed[i].package, name))
			return &run->changed[i].was;
	for (size_t i = 0; i < run->n_pkgs; i++)
		if (!strcmp(run->pkgs[i].package, name))
			return &run->pkgs[i].layout;
	return NULL;
}

struct passes {
	const struct grove_stow_request *req;
	const struct grove_plan_opts *base;
	const struct grove_stow_run *run;
};

/* Unstows first, then stows (as one Stow run plans them), each list in groups of packages with
 * the same options, every group in the order its first package was named. */
static int
plan_passes(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct passes *c = ctx;
	const struct grove_stow_request *req = c->req;
	size_t most = req->n_unstow > req->n_stow ? req->n_unstow : req->n_stow;
	cleanup_free char **group = calloc(most + 1, sizeof(*group));
	cleanup_free bool *done = calloc(most + 1, sizeof(*done));

	if (!group || !done)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (int phase = 0; phase < 2; phase++) {
		char *const *list = phase ? req->stow : req->unstow;
		size_t n = phase ? req->n_stow : req->n_unstow;

		memset(done, 0, (most + 1) * sizeof(*done));
		for (size_t i = 0; i < n; i++) {
			const struct grove_pkg_layout *l = layout_of(c->run, list[i], !phase);
			struct grove_plan_opts po = *c->base;
			size_t k = 0;
			int r;

			if (done[i] || !l)
				continue;
			for (size_t m = i; m < n; m++) {
				const struct grove_pkg_layout *o =
					layout_of(c->run, list[m], !phase);

				if (!done[m] && o && o->dotfiles == l->dotfiles &&
				    o->no_folding == l->no_folding) {
					group[k++] = list[m];
					done[m] = true;
				}
			}
			po.dotfiles = l->dotfiles;
			po.no_folding = l->no_folding;
			po.release_stow = false;
			r = grove_planner_run_pass(w, &po, phase ? NULL : group, phase ? 0 : k,
						   phase ? group : NULL, phase ? k : 0, plan, err);
			if (r != 0) /* an error, or GROVE_PLAN_NEEDS_SCAN */
				return r;
		}
	}
	if (plan->n_conflicts) {
		grove_plan_sort_conflicts(plan);
		return 0;
	}
	return grove_planner_diff(w, plan, err);
}

int
grove_stow_plan_layouts(struct grove_world *w, const struct grove_stow_request *req,
			const struct grove_plan_opts *base, struct grove_stow_run *run,
			struct grove_error *err)
{
	struct grove_plan_opts po = *base;
	struct passes ctx = { .req = req, .base = base, .run = run };
	/* A restow that changes a package's options plans it in two passes. */
	bool same = run->n_changed == 0;

	for (size_t i = 1; i < run->n_pkgs; i++)
		same = same && run->pkgs[i].layout.dotfiles == run->pkgs[0].layout.dotfiles &&
		       run->pkgs[i].layout.no_folding == run->pkgs[0].layout.no_folding;
	if (same) {
		if (run->n_pkgs) {
			po.dotfiles = run->pkgs[0].layout.dotfiles;
			po.no_folding = run->pkgs[0].layout.no_folding;
		}
		return grove_scan_plan_packages(w, &run->stow_root, &run->target_root, &po,
						req->unstow, req->n_unstow, req->stow, req->n_stow,
						&run->plan, err);
	}
	return grove_scan_plan(w, &run->stow_root, &run->target_root, plan_passes, &ctx, &run->plan,
			       err);
}
