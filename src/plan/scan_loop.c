/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scan->plan loop every use runs (world.h, grove_scan_plan): plan; when planning reached what
 * the scan has not read, read it and plan again. And the bounded walk's reader: the scanner's
 * folder-at-a-time reads handed to the planner (grove_scan_walk). The loop sits above both the
 * scanner and the planner, so that neither calls the other: the world model calls nothing above
 * it, and no planner file reads a folder. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/plan.h"
#include "plan/planner.h"
#include "plan/world.h"

#include "banned.h" /* last */

/* Each round reads at least one more folder; a plan needing more rounds than this is a bug. */
#define PLAN_ROUNDS_MAX 4096

int
grove_scan_plan(struct grove_world *w, const struct grove_root *stow,
		const struct grove_root *target, grove_scan_plan_fn plan_fn, void *ctx,
		struct grove_plan *plan, struct grove_error *err)
{
	for (int round = 0;; round++) {
		int r = plan_fn(w, ctx, plan, err);

		if (r != GROVE_PLAN_NEEDS_SCAN)
			return r < 0 ? r : 0;
		if (round >= PLAN_ROUNDS_MAX)
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "planning did not settle after %d rounds", round);
		/* Planning is pure: throw the round away, read what it asked for, start again. */
		grove_error_clear(err);
		{
			/* (The round emitted nothing, so its sink saw nothing: keep it.) */
			struct grove_plan_sink *sink = plan->sink;

			grove_plan_release(plan);
			grove_plan_init(plan);
			plan->sink = sink;
		}
		grove_world_reset_plan(w);
		r = grove_scan_needs(w, stow, err);
		if (r >= 0)
			r = grove_scan_target_needs(w, target, err);
		if (r < 0)
			return r;
	}
}

struct packages {
	const struct grove_plan_opts *opts;
	char *const *unstow, *const *stow;
	size_t n_unstow, n_stow;
};

static int
plan_packages(struct grove_world *w, void *ctx, struct grove_plan *plan, struct grove_error *err)
{
	const struct packages *p = ctx;

	return grove_planner_run(w, p->opts, p->unstow, p->n_unstow, p->stow, p->n_stow, plan, err);
}

int
grove_scan_plan_packages(struct grove_world *w, const struct grove_root *stow,
			 const struct grove_root *target, const struct grove_plan_opts *opts,
			 char *const *unstow, size_t n_unstow, char *const *pkgs, size_t n_pkgs,
			 struct grove_plan *plan, struct grove_error *err)
{
	struct packages p = {
		.opts = opts, .unstow = unstow, .n_unstow = n_unstow, .stow = pkgs, .n_stow = n_pkgs
	};

	return grove_scan_plan(w, stow, target, plan_packages, &p, plan, err);
}

/* ---- the bounded walk's reader: the scanner, one folder at a time ---- */

struct roots {
	const struct grove_root *stow, *target;
};

static int
read_ignore(void *ctx, struct grove_world *w, const char *package, struct grove_error *err)
{
	const struct roots *r = ctx;

	return grove_scan_pkg_ignore(w, r->stow, package, err);
}

static int
list_pkg(void *ctx, struct grove_world *w, const char *rel, struct grove_error *err)
{
	const struct roots *r = ctx;

	return grove_scan_pkg_folder(w, r->stow, rel, err);
}

static int
list_target(void *ctx, struct grove_world *w, const char *tpath, struct grove_error *err)
{
	const struct roots *r = ctx;

	return grove_scan_target_folder(w, r->stow, r->target, tpath, err);
}

static int
check_pkg(void *ctx, struct grove_world *w, const char *rel, struct grove_error *err)
{
	const struct roots *r = ctx;

	return grove_scan_pkg_check(w, r->stow, rel, err);
}

static void
forget(void *ctx, struct grove_node *node)
{
	(void)ctx;
	grove_scan_forget(node);
}

/* The scanner as the bounded walks' reader, beneath stow and target. */
static struct grove_walk_reader
scanner(struct roots *roots)
{
	return (struct grove_walk_reader){
		.read_ignore = read_ignore,
		.list_pkg = list_pkg,
		.list_target = list_target,
		.check_pkg = check_pkg,
		.forget = forget,
		.ctx = roots,
	};
}

int
grove_scan_walk(struct grove_world *w, const struct grove_root *stow,
		const struct grove_root *target, const struct grove_plan_opts *opts,
		char *const *unstow, size_t n_unstow, char *const *pkgs, size_t n_stow,
		struct grove_plan *plan, struct grove_error *err)
{
	struct roots roots = { .stow = stow, .target = target };
	const struct grove_walk_reader rd = scanner(&roots);

	return grove_planner_walk(w, &rd, opts, unstow, n_unstow, pkgs, n_stow, plan, err);
}

int
grove_scan_import_walk(struct grove_world *w, const struct grove_root *stow,
		       const struct grove_root *target, char *const *pkgs, size_t n_pkgs,
		       struct grove_plan *plan, struct grove_error *err)
{
	struct roots roots = { .stow = stow, .target = target };
	const struct grove_walk_reader rd = scanner(&roots);

	return grove_planner_import_walk(w, &rd, pkgs, n_pkgs, plan, err);
}
