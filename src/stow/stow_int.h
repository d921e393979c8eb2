/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to the packages use (stow.c, stow_layout.c): the options each package of a request is
 * planned with, and planning packages whose options differ. */
#ifndef GROVE_STOW_INT_H
#define GROVE_STOW_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "grove/error.h"
#include "plan/planner.h"
#include "grove/session.h"
#include "grove/stow.h"
#include "plan/world.h"

/*
 * Decides the layout options of each of the request's packages names[0..n) (docs/stow.md,
 * "Recorded options") from the request and, unless req->ignore_recorded, what the log j
 * recorded for the package in target_id from run->stow_root (j may be NULL: nothing is
 * recorded). Fills run->pkgs (one row per name, in order) and run->recorded; a given option
 * that differs from a recorded one is a conflict in run->plan.
 */
int grove_stow_layouts(const struct grove_stow_request *req, struct grove_journal *j,
		       int64_t target_id, char *const *names, size_t n, struct grove_stow_run *run,
		       struct grove_error *err);

/* Plans the request over w, each package with the options in run->pkgs: one planner run when
 * they all share them (exactly GNU Stow's), else passes (grove_planner_run_pass) — unstows
 * first, then stows, each grouped by options. base holds the options common to every pass. */
int grove_stow_plan_layouts(struct grove_world *w, const struct grove_stow_request *req,
			    const struct grove_plan_opts *base, struct grove_stow_run *run,
			    struct grove_error *err);

#endif
