/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove apply, start to end: which manifest, the layers it is read with, and the sequence of its
 * steps with its failure policy (apply.h, "The calling sequence of a whole run"). The steps
 * themselves are apply_steps.c's; this file decides their order and when a run stops, and tells
 * its caller what happens through events, so that the command line only prints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/apply.h"
#include "grove/fs.h"
#include "grove/manifest.h"
#include "base/util.h"

#include "banned.h" /* last */

#define GLOBAL_IGNORE_MAX 1048576 /* ~/.stow-global-ignore: 1 MiB */

void
grove_apply_init(struct grove_apply *ap)
{
	memset(ap, 0, sizeof(*ap));
	grove_stow_settings_init(&ap->cfg.defaults);
	grove_apply_context_init(&ap->ctx);
}

/* ./grove.yaml, else $XDG_CONFIG_HOME/grove/grove.yaml (an absolute $XDG_CONFIG_HOME), else
 * ~/.config/grove/grove.yaml: the first that is there (or unreadable: reading it says why). */
static int
find_manifest(struct grove_apply *ap, const struct grove_apply_request *rq, struct grove_error *err)
{
	const char *xdg = rq->xdg_config_home;
	char *places[2] = { strdup("grove.yaml"), NULL };

	if (xdg && xdg[0] == '/')
		places[1] = grove_strdupf("%s/grove/grove.yaml", xdg);
	else if (rq->home && rq->home[0])
		places[1] = grove_strdupf("%s/.config/grove/grove.yaml", rq->home);
	if (!places[0]) {
		free(places[1]);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < 2 && places[i]; i++) {
		char *buf = NULL;
		size_t len = 0;
		int r = grove_fs_read_config_file(places[i], GROVE_MANIFEST_MAX_BYTES, &buf, &len,
						  err);
		bool found = r < 0 || buf;

		free(buf);
		if (found) {
			ap->manifest_path = places[i];
			free(places[1 - i]);
			return 0;
		}
	}
	grove_error_set(err, -GROVE_E_CONFIG,
			"no manifest: looked for ./grove.yaml%s%s (give one with -f FILE)",
			places[1] ? " and " : "", places[1] ? places[1] : "");
	free(places[0]);
	free(places[1]);
	return -GROVE_E_CONFIG;
}

/* Which manifest: -f > $GROVE_MANIFEST > the config's manifest > find_manifest. */
static int
manifest_path(struct grove_apply *ap, const struct grove_apply_request *rq, struct grove_error *err)
{
	const char *file;

	if (rq->file)
		file = rq->file;
	else if (rq->env_manifest && *rq->env_manifest)
		file = rq->env_manifest;
	else if (ap->cfg.manifest)
		file = ap->cfg.manifest;
	else
		return find_manifest(ap, rq, err);
	if (file[0] == '~' && file[1] == '/' && rq->home)
		ap->manifest_path = grove_strdupf("%s%s", rq->home, file + 1);
	else
		ap->manifest_path = strdup(file);
	if (!ap->manifest_path)
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* ~/.stow-global-ignore, when there is one: Stow's global ignore list. */
static int
global_ignore(struct grove_apply *ap, const char *home, struct grove_error *err)
{
	char *gi = grove_strdupf("%s/.stow-global-ignore", home);
	size_t len = 0;
	int r;

	if (!gi)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = grove_fs_read_config_file(gi, GLOBAL_IGNORE_MAX, &ap->gi_text, &len, err);
	if (r >= 0 && ap->gi_text)
		ap->gi_path = gi;
	else
		free(gi);
	return r < 0 ? r : 0;
}

int
grove_apply_load(struct grove_apply *ap, const struct grove_apply_request *rq,
		 struct grove_error *err)
{
	char *cfg_path = grove_user_config_path(rq->xdg_config_home, rq->home);
	int r;

	ap->check = rq->check;
	r = grove_user_config_read(cfg_path, &ap->cfg, err);
	free(cfg_path);
	if (r >= 0)
		r = manifest_path(ap, rq, err);
	if (r < 0)
		return r;
	if (ap->manifest_path[0] != '/' && rq->cwd)
		ap->manifest_abs = grove_strdupf("%s/%s", rq->cwd, ap->manifest_path);
	r = grove_manifest_read(ap->manifest_path, &ap->m, err);
	if (r >= 0 && rq->home)
		r = global_ignore(ap, rq->home, err);
	if (r < 0)
		return r;
	{
		struct grove_apply_layers l = {
			.flag_host = rq->host,
			.flag_tags = rq->tags,
			.flags = rq->flags,
			.env_host = rq->env_host,
			.env_tags = rq->env_tags,
			.manifest = &ap->m,
			.config = &ap->cfg,
			.default_host = rq->default_host ? rq->default_host : "",
		};

		if (grove_apply_context_build(&ap->ctx, &l) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	{
		struct grove_apply_steps_opts o = {
			.manifest = &ap->m,
			.ctx = &ap->ctx,
			.manifest_path = ap->manifest_path,
			.home = rq->home,
			.dpkg_admindir = rq->dpkg_admindir,
			.state_opt = rq->state_opt,
			.wait_seconds = rq->wait_seconds,
			.command = rq->command ? rq->command : "grove apply",
			.global_ignore_text = ap->gi_text,
			.global_ignore_source = ap->gi_path,
			.check = rq->check,
		};

		return grove_apply_steps_select(&ap->st, &o, err);
	}
}

/* Every target planned (locked, unless only checking) before any is changed, as its plan
 * warns told; then the alternatives and the profiles. */
static int
plan_steps(struct grove_apply *ap, const struct grove_apply_events *ev, struct grove_error *err)
{
	struct grove_apply_steps *st = &ap->st;
	int r;

	for (size_t i = 0; i < st->n_targets; i++) {
		const struct grove_apply_run *run = &st->targets[i].run;

		r = grove_apply_steps_prepare(st, i, !ap->check, err);
		if (r < 0)
			return r;
		if (run->recovered && ev->recovered)
			ev->recovered(ev->ctx, run->target_root.real, run->recovered);
		if (run->interrupted && ev->interrupted)
			ev->interrupted(ev->ctx, run->target_root.real, run->interrupted);
		for (size_t k = 0; k < run->plan.n_warnings && ev->warning; k++)
			ev->warning(ev->ctx, run->plan.warnings[k]);
		ap->conflicts = ap->conflicts || run->plan.n_conflicts;
	}
	/* Planned even when a target has conflicts, so that what is shown is whole. */
	r = grove_apply_steps_plan_alternatives(st, err);
	if (r >= 0)
		r = grove_apply_steps_plan_profiles(st, err);
	return r;
}

int
grove_apply_plan(struct grove_apply *ap, const struct grove_apply_events *ev,
		 struct grove_error *err)
{
	struct grove_apply_steps *st = &ap->st;
	int r = plan_steps(ap, ev, err);

	if (r < 0 || !ap->check)
		return r;
	/* A check also says what the real run would stop on: its profile builds' conflicts (met
	 * when building, after the targets and alternatives), then, with nothing conflicting, an
	 * alternatives request that fails or a build that fails otherwise. */
	ap->conflicts = grove_apply_steps_conflicts(st);
	if (ap->conflicts)
		return 0;
	r = grove_apply_steps_check_alternatives(st, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < st->n_profiles; i++) {
		const struct grove_error *e = &st->profiles[i].failure;

		if (e->code && !st->profiles[i].conflicted) {
			*err = *e;
			return e->code;
		}
	}
	return 0;
}

int
grove_apply_run(struct grove_apply *ap, const struct grove_apply_events *ev,
		struct grove_error *err)
{
	struct grove_apply_steps *st = &ap->st;
	int r;

	ap->failed_target = st->n_targets;
	if (ap->conflicts || ap->check)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "apply: run after a plan with conflicts or a check");
	for (size_t i = 0; i < st->n_targets; i++) {
		r = grove_apply_execute(&st->targets[i].run, err);
		if (r < 0) {
			ap->failed_target = i;
			return r;
		}
	}
	for (size_t i = 0; i < st->n_alts; i += (size_t)r) {
		r = grove_apply_steps_run_alt(st, i, err);
		for (size_t k = 0; k < st->alts[i].n_warnings && ev->alt_warning; k++)
			ev->alt_warning(ev->ctx, st->alts[i].warnings[k]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < st->n_profiles; i++) {
		struct grove_plan conflicts;

		grove_plan_init(&conflicts);
		r = grove_apply_steps_build_profile(st, i, &conflicts, err);
		if (r == -GROVE_E_CONFLICT && ev->profile_conflicts)
			ev->profile_conflicts(ev->ctx, &conflicts);
		grove_plan_release(&conflicts);
		if (r < 0)
			return r;
	}
	return 0;
}

void
grove_apply_release(struct grove_apply *ap)
{
	grove_apply_steps_release(&ap->st);
	grove_manifest_release(&ap->m);
	grove_user_config_release(&ap->cfg);
	grove_apply_context_release(&ap->ctx);
	free(ap->manifest_path);
	free(ap->manifest_abs);
	free(ap->gi_text);
	free(ap->gi_path);
	memset(ap, 0, sizeof(*ap));
}
