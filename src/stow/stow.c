/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The packages use: one Stow request through root opening, scan, plan and execute. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grove/exec.h"
#include "grove/path.h"
#include "plan/planner.h"
#include "grove/stow.h"
#include "plan/world.h"
#include "stow_int.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_stow_run_release(struct grove_stow_run *run)
{
	if (!run)
		return;
	if (run->stream.id) {
		/* Logged and never executed: nothing changed, so it ends rolled back. */
		struct grove_error e;

		grove_error_set(&e, -GROVE_E_INTERNAL, "not executed");
		(void)grove_session_abort(&run->stream, e.code, &e);
		run->stream.id = 0;
	}
	if (run->journaled)
		grove_session_close(&run->session);
	run->journaled = false;
	grove_root_release(&run->stow_root);
	grove_root_release(&run->target_root);
	free(run->stow_path);
	run->stow_path = NULL;
	free(run->command);
	run->command = NULL;
	for (size_t i = 0; i < run->n_recorded; i++)
		free(run->recorded[i].package);
	free(run->recorded);
	run->recorded = NULL;
	run->n_recorded = 0;
	for (size_t i = 0; i < run->n_changed; i++)
		free(run->changed[i].package);
	free(run->changed);
	run->changed = NULL;
	run->n_changed = 0;
	grove_journal_pkgs_free(run->pkgs, run->n_pkgs);
	run->pkgs = NULL;
	run->n_pkgs = 0;
	grove_names_free(run->believed, run->n_believed);
	run->believed = NULL;
	run->n_believed = 0;
	grove_names_free(run->dot_named, run->n_dot_named);
	run->dot_named = NULL;
	run->n_dot_named = 0;
	grove_names_free(run->imported, run->n_imported);
	run->imported = NULL;
	run->n_imported = 0;
	grove_plan_release(&run->plan);
}

struct named {
	const char *name;
	size_t i; /* its index among the names given */
};

static int
named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* seen[i]: whether an op of plan for which want(op) holds names names[i] as its package. One pass
 * over the ops, a binary search each, so that a request of many packages and many ops costs
 * their sum, not their product. */
static int
packages_in_ops(const struct grove_plan *plan, const char *const *names, size_t n,
		bool (*want)(const struct grove_op *op), bool *seen, struct grove_error *err)
{
	cleanup_free struct named *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		v[i] = (struct named){ .name = names[i], .i = i };
	qsort(v, n, sizeof(*v), named_cmp);
	for (size_t k = 0; k < plan->n_ops; k++) {
		const struct grove_op *op = &plan->ops[k];
		struct named key = { .name = op->package };
		const struct named *hit;

		if (!op->package || !want(op))
			continue;
		hit = bsearch(&key, v, n, sizeof(*v), named_cmp);
		if (!hit)
			continue;
		/* (A name given twice: every one of them.) */
		while (hit > v && !strcmp(hit[-1].name, op->package))
			hit--;
		for (; hit < v + n && !strcmp(hit->name, op->package); hit++)
			seen[hit->i] = true;
	}
	return 0;
}

static bool
any_op(const struct grove_op *op)
{
	(void)op;
	return true;
}

/* A LINK or MKDIR of a top-level name starting with "dot-". */
static bool
dot_named_op(const struct grove_op *op)
{
	return (op->kind == GROVE_OP_LINK || op->kind == GROVE_OP_MKDIR) &&
	       !strncmp(op->path, "dot-", 4);
}

/*
 * A package the log says is stowed, which the plan unstows without removing anything of it:
 * its links are not where the recorded options put them (a farm made otherwise, or removed by
 * hand). Said in a warning, never a silent success (issue 40 item 2). A plan logged while it
 * was planned is not in memory: nothing to say of it.
 */
static int
warn_unstowed_nothing(struct grove_stow_run *run, struct grove_error *err)
{
	cleanup_free bool *seen = NULL;
	int r;

	if (!run->n_believed || run->plan.n_logged > 0)
		return 0;
	seen = calloc(run->n_believed, sizeof(*seen));
	if (!seen)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = packages_in_ops(&run->plan, (const char *const *)run->believed, run->n_believed, any_op,
			    seen, err);
	for (size_t i = 0; r >= 0 && i < run->n_believed; i++) {
		cleanup_free char *msg = NULL;

		if (seen[i])
			continue;
		msg = grove_strdupf("unstow %s: no link of it was found to remove, though grove's "
				    "log says it is stowed here; 'grove status' lists what grove "
				    "made, 'grove verify' what is missing",
				    run->believed[i]);
		if (!msg || grove_plan_add_warning(&run->plan, msg) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	return r;
}

/*
 * The packages stowed without --dotfiles that the plan links under a top-level name starting with
 * "dot-" (run->dot_named): what GNU Stow makes of them too, but rarely what was meant. Read from
 * the plan's ops, so it costs no read; a plan logged while it was planned is not in memory, and
 * says nothing.
 */
static int
note_dot_names(struct grove_stow_run *run, struct grove_error *err)
{
	cleanup_free const char **names = NULL;
	cleanup_free bool *seen = NULL;
	int r;

	if (!run->n_pkgs)
		return 0;
	names = calloc(run->n_pkgs, sizeof(*names));
	seen = calloc(run->n_pkgs, sizeof(*seen));
	if (!names || !seen)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < run->n_pkgs; i++)
		names[i] = run->pkgs[i].package;
	r = packages_in_ops(&run->plan, names, run->n_pkgs, dot_named_op, seen, err);
	for (size_t i = 0; r >= 0 && i < run->n_pkgs; i++) {
		const struct grove_journal_pkg *p = &run->pkgs[i];
		char **v;

		if (!seen[i] || !p->layout.stowed || p->layout.dotfiles)
			continue;
		v = realloc(run->dot_named, (run->n_dot_named + 1) * sizeof(*v));
		if (!v)
			return grove_error_set(err, -ENOMEM, "out of memory");
		run->dot_named = v;
		v[run->n_dot_named] = strdup(p->package);
		if (!v[run->n_dot_named])
			return grove_error_set(err, -ENOMEM, "out of memory");
		run->n_dot_named++;
	}
	return r;
}

/*
 * The options each package is planned with (grove_stow_layouts), from the log the run holds,
 * or, for a run that changes nothing (sopts->no_lock), a log opened only to be read: none is
 * made, and without one nothing is recorded.
 */
static int
read_layouts(const struct grove_stow_request *req, const struct grove_session_opts *sopts,
	     char *const *all, size_t n_all, struct grove_stow_run *run, struct grove_error *err)
{
	struct grove_session_opts ro = { 0 };
	struct grove_session s;
	int r;

	if (run->journaled || !sopts || req->ignore_recorded)
		return grove_stow_layouts(req, run->journaled ? run->session.journal : NULL,
					  run->session.target_id, all, n_all, run, err);
	ro.state_opt = sopts->state_opt;
	ro.no_lock = ro.read_only = ro.no_create = true;
	r = grove_session_open(&s, &run->target_root, &ro, err);
	if (r == -ENOENT) {
		grove_error_clear(err);
		return grove_stow_layouts(req, NULL, 0, all, n_all, run, err);
	}
	if (r < 0)
		return r;
	r = grove_stow_layouts(req, s.journal, s.target_id, all, n_all, run, err);
	if (r >= 0) {
		/* What a real run would roll back first, for the preview to say (a log whose
		 * lock cannot be probed tells nothing: no warning). */
		struct grove_session_pending p = { 0 };
		struct grove_error pe = { 0 };

		if (grove_session_pending(&s, &p, &pe) >= 0 && p.state == GROVE_PENDING_INTERRUPTED)
			run->interrupted = p.txn;
		grove_session_pending_release(&p);
	}
	grove_session_close(&s);
	return r;
}

static bool
path_within(const char *path, const char *dir)
{
	size_t l = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

/* The union of both lists, each name once, in first-seen order. The names seen go in an
 * open-addressing set, so that a restow's two lists of the same N names take N lookups, not
 * N^2 / 2 compares. */
static char **
union_packages(const struct grove_stow_request *req, size_t *ret_n)
{
	size_t n_in = req->n_unstow + req->n_stow, n = 0, cap = 16;
	char **all = calloc(n_in + 1, sizeof(*all));
	const char **set;

	while (cap < 2 * n_in)
		cap *= 2;
	set = calloc(cap, sizeof(*set));
	if (!all || !set) {
		free(all);
		free(set);
		return NULL;
	}
	for (size_t i = 0; i < n_in; i++) {
		char *name = i < req->n_unstow ? req->unstow[i] : req->stow[i - req->n_unstow];
		size_t k = grove_hash_str(name) & (cap - 1);

		while (set[k] && strcmp(set[k], name) != 0)
			k = (k + 1) & (cap - 1);
		if (set[k])
			continue;
		set[k] = name;
		all[n++] = name;
	}
	free(set);
	*ret_n = n;
	return all;
}

int
grove_stow_open_roots(const char *dir, const char *target, struct grove_root *stow_root,
		      struct grove_root *target_root, struct grove_error *err)
{
	int r = grove_root_open(stow_root, dir, err);

	if (r < 0) {
		grove_error_prefix(err, "stow directory");
		return r;
	}
	r = grove_root_open(target_root, target, err);
	if (r < 0)
		grove_error_prefix(err, "target");
	return r;
}

int
grove_stow_global_ignore(const char *text, const char *source, struct grove_ignore_list **ret,
			 struct grove_error *err)
{
	if (!text)
		return grove_ignore_list_default(ret, err);
	return grove_ignore_list_parse(text, source ? source : "~/.stow-global-ignore", ret, err);
}

/*
 * The target is the stow dir or inside it. Say which folders those are and why: GNU Stow's
 * default target is the stow dir's parent, which its rule makes '.' for a folder at the top
 * level (/tmp, /var), and '.' is then the stow dir itself when grove runs from there.
 */
static int
target_in_stow_dir(const struct grove_stow_request *req, const struct grove_stow_run *run,
		   struct grove_error *err)
{
	const char *t = run->target_root.real, *d = run->stow_root.real;

	if (strcmp(t, d) != 0)
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "target '%s' ('%s') is inside the stow directory '%s' "
				       "('%s'): give another target with -t DIR",
				       req->target, t, req->dir, d);
	if (!strcmp(req->target, ".") && d[0] == '/' && !strchr(d + 1, '/'))
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "no target: the default target is the stow directory's "
				       "parent, and for '%s', at the top level, GNU Stow's rule "
				       "makes it '.', the stow directory itself: give the target "
				       "with -t DIR (and the stow directory with -d DIR)",
				       d);
	return grove_error_set(err, -GROVE_E_BADINPUT,
			       "target '%s' is the stow directory '%s' itself ('%s'): give another "
			       "target with -t DIR",
			       req->target, req->dir, d);
}

int
grove_stow_check_target(const struct grove_stow_request *req, const struct grove_stow_run *run,
			struct grove_error *err)
{
	if (path_within(run->target_root.real, run->stow_root.real))
		return target_in_stow_dir(req, run, err);
	return 0;
}

/* Whether the request can be planned folder by folder (grove_planner_walk takes it). */
static bool
walk_fits(const struct grove_stow_request *req, const struct grove_stow_run *run)
{
	if (req->no_walk || req->compat || req->adopt || req->dotfiles || run->n_pkgs == 0 ||
	    run->n_changed)
		return false;
	for (size_t i = 0; i < run->n_pkgs; i++)
		if (run->pkgs[i].layout.dotfiles ||
		    !strcmp(run->pkgs[i].package, GROVE_STOW_DIR_PACKAGE) ||
		    run->pkgs[i].layout.no_folding != run->pkgs[0].layout.no_folding)
			return false;
	/*
	 * Without folding only. The walk also takes a request with folding that only stows (an
	 * unstow folds, and a fold depends on what the folders beneath it became), but such a
	 * request's memory is already bounded where it matters (the scan drops the big folders it
	 * folds), and the walk cost multi800's stow 32 % more CPU (bench/HISTORY.md).
	 */
	return run->pkgs[0].layout.no_folding;
}

/*
 * Scans and plans a streamed request. One whose packages hold more entries than the budget is
 * planned folder by folder when the walk takes it (docs/architecture.md, "The bounded walk"),
 * so that its memory does not grow with the packages; anything the walk does not take is
 * planned again from the start with the whole model, as every other request.
 */
static int
plan_streamed(struct grove_world *w, const struct grove_stow_request *req,
	      const struct grove_plan_opts *po, struct grove_scan_opts *so, char **all,
	      size_t n_all, struct grove_stow_run *run, struct grove_error *err)
{
	int r;

	if (walk_fits(req, run))
		so->walk_above = grove_session_plan_budget();
	r = grove_scan(w, &run->stow_root, &run->target_root, all, n_all, so, err);
	if (r == -ECANCELED && w->too_big) {
		struct grove_plan_opts wo = *po;

		grove_error_clear(err);
		grove_world_reset_trees(w);
		wo.no_folding = run->pkgs[0].layout.no_folding;
		wo.dotfiles = false;
		r = grove_scan_walk(w, &run->stow_root, &run->target_root, &wo, req->unstow,
				    req->n_unstow, req->stow, req->n_stow, &run->plan, err);
		if (r == 0) {
			run->walked = true;
			return 0;
		}
		r = grove_session_stream_restart(&run->streaming, &run->plan);
		if (r < 0)
			return r; /* a batch could not be logged: the stream's end says why */
		grove_error_clear(err);
		grove_world_reset_trees(w);
		so->walk_above = 0;
		r = grove_scan(w, &run->stow_root, &run->target_root, all, n_all, so, err);
	}
	if (r < 0)
		return r;
	return grove_stow_plan_layouts(w, req, po, run, err);
}

int
grove_stow_prepare(const struct grove_stow_request *req, const struct grove_session_opts *sopts,
		   struct grove_stow_run *run, struct grove_error *err)
{
	struct grove_world w;
	struct grove_scan_opts so = { .full_target = false };
	struct grove_plan_opts po = {
		.no_folding = req->no_folding,
		.adopt = req->adopt,
		.dotfiles = req->dotfiles,
		.compat = req->compat,
		.ignore = req->ignore,
		.defer = req->defer,
		.override = req->override,
		.release_stow = true,
		.stow_words = req->stow_words,
		.other_stow_dirs = true,
	};
	cleanup_free char **all = NULL;
	size_t n_all = 0;
	int r;

	memset(run, 0, sizeof(*run));
	run->stow_root.fd = run->target_root.fd = -1;
	if (req->command && !(run->command = strdup(req->command)))
		return grove_error_set(err, -ENOMEM, "out of memory");
	grove_plan_init(&run->plan);
	grove_world_init(&w);

	for (size_t i = 0; i < req->n_unstow + req->n_stow; i++) {
		const char *name =
			i < req->n_unstow ? req->unstow[i] : req->stow[i - req->n_unstow];
		r = grove_stow_check_package(name, err);
		if (r < 0)
			goto fail;
	}
	r = grove_stow_open_roots(req->dir, req->target, &run->stow_root, &run->target_root, err);
	if (r < 0)
		goto fail;
	r = grove_stow_check_target(req, run, err);
	if (r < 0)
		goto fail;
	if (sopts && !sopts->no_lock) {
		/* Locked before anything is read, so that no other run changes the
		 * target between recovery, scan and execution. */
		r = grove_session_open(&run->session, &run->target_root, sopts, err);
		if (r < 0)
			goto fail;
		run->journaled = true;
		r = grove_session_recover(&run->session, &run->stow_root, false, &run->recovered,
					  err);
		if (r < 0)
			goto fail;
	}
	run->stow_path = grove_path_abs2rel(run->stow_root.real, run->target_root.real);
	w.stow_path = run->stow_path ? strdup(run->stow_path) : NULL;
	all = union_packages(req, &n_all);
	if (!w.stow_path || !all) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = read_layouts(req, sopts, all, n_all, run, err);
	if (r < 0 || run->plan.n_conflicts)
		goto done;
	r = grove_stow_global_ignore(req->global_ignore_text, req->global_ignore_source,
				     &w.global_ignore, err);
	if (r < 0)
		goto fail;
	so.full_target = req->compat && req->n_unstow > 0;
	so.prune = true;
	for (size_t i = 0; i < run->n_pkgs; i++) {
		/* With dotfiles the scan reads both spellings, a superset of without. */
		so.dotfiles = so.dotfiles || run->pkgs[i].layout.dotfiles;
		so.prune = so.prune && !run->pkgs[i].layout.no_folding;
	}
	for (size_t i = 0; i < run->n_changed; i++) {
		/* A restow that changes options unstows with the recorded ones. */
		so.dotfiles = so.dotfiles || run->changed[i].was.dotfiles;
		so.prune = so.prune && !run->changed[i].was.no_folding;
	}
	/* A request that only stows asks the target about its packages' names alone. */
	so.lookup = req->n_unstow == 0 && !req->compat;
	/* Plan; when the planner reaches a part of the stow dir the scan did not
	 * read (a folder another package may unfold), read it and plan again. */
	if (run->journaled && !req->no_stream && !req->adopt) {
		/* A plan over the budget is logged while it is planned (grove_stow_execute). */
		struct grove_session_txn_opts to = {
			.command = run->command ? run->command : "grove",
			.logged_stow = &run->stow_root,
			.stow = &run->stow_root,
		};

		grove_session_stream_arm(&run->session, &run->streaming, &run->plan, &to, run->pkgs,
					 run->n_pkgs);
		r = plan_streamed(&w, req, &po, &so, all, n_all, run, err);
		r = grove_session_stream_end(&run->streaming, &run->stream, &run->plan, r, err);
	} else {
		r = grove_scan(&w, &run->stow_root, &run->target_root, all, n_all, &so, err);
		if (r < 0)
			goto fail;
		r = grove_stow_plan_layouts(&w, req, &po, run, err);
	}
done:
	if (r >= 0 && !run->plan.n_conflicts)
		r = warn_unstowed_nothing(run, err);
	if (r >= 0)
		r = note_dot_names(run, err);
	if (r < 0)
		goto fail;
	grove_world_release(&w);
	return 0;
fail:
	grove_world_release(&w);
	grove_stow_run_release(run);
	return r;
}

int
grove_stow_note_told(struct grove_stow_run *run, struct grove_error *err)
{
	if (!run->journaled)
		return 0;
	for (size_t i = 0; i < run->n_recorded; i++) {
		const char *name = run->recorded[i].package;

		for (size_t k = 0; k < run->n_pkgs; k++) {
			int r;

			if (strcmp(run->pkgs[k].package, name) != 0)
				continue;
			r = grove_journal_pkg_told_set(run->session.journal, run->session.target_id,
						       run->stow_root.real, name,
						       &run->pkgs[k].layout, err);
			if (r < 0)
				return r;
			break;
		}
	}
	return 0;
}

int
grove_stow_execute(struct grove_stow_run *run, struct grove_error *err)
{
	struct grove_exec_opts opts = { 0 };

	if (run->plan.n_conflicts)
		return grove_error_set(err, -GROVE_E_CONFLICT, "the plan has conflicts");
	if (run->stream.id) {
		struct grove_session_txn t = run->stream;
		int r;

		run->stream.id = 0; /* ended here, one way or the other */
		r = grove_session_exec_logged(&t, &run->target_root, &run->stow_root, err);
		if (r < 0)
			return grove_session_abort(&t, r, err);
		r = grove_session_commit(&t, err);
		if (r >= 0 || r == -GROVE_E_NOT_DURABLE)
			run->txn = t.id;
		return r;
	}
	if (run->journaled) {
		/* The log keeps the options each package was stowed with. */
		grove_session_take_pkgs(&run->session, steal_ptr(run->pkgs), run->n_pkgs);
		run->n_pkgs = 0;
		/* New options are recorded even when no link changes. */
		grove_session_set_record_pkgs(&run->session, run->n_changed > 0);
		return grove_session_apply(&run->session, &run->plan, &run->stow_root,
					   run->command ? run->command : "grove",
					   run->stow_root.real, 0, &run->txn, err);
	}
	return grove_exec_apply(&run->plan, &run->target_root, &run->stow_root, &opts, err);
}
