/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scan->plan loop every use runs (world.h, grove_scan_plan): plan; when planning reached what
 * the scan has not read, read it and plan again. It lives with the scanner, which it calls, so
 * that the world model calls nothing above it; the planner is reached only through plan_fn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/plan.h"
#include "grove/world.h"

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
