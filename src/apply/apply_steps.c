/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The steps of grove apply for a whole manifest: which targets and packages this host selects,
 * the overlaps refused before anything is locked, the alternatives requests and the profile
 * generations; each run on request, nothing printed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/apply.h"
#include "grove/path.h"
#include "grove/profile.h"
#include "base/util.h"

#include "banned.h" /* last */

/* "~" and "~/x" from HOME; relative to the manifest's folder; absolute as is. */
static char *
resolve(const struct grove_apply_steps *st, const char *p)
{
	if (p[0] == '~' && (p[1] == '\0' || p[1] == '/'))
		return st->o.home ? grove_strdupf("%s%s", st->o.home, p + 1) : NULL;
	if (p[0] == '/')
		return strdup(p);
	return grove_strdupf("%s/%s", st->base, p);
}

static int
cfg_error(const struct grove_manifest_loc *loc, const struct grove_apply_steps *st,
	  struct grove_error *err, const char *fmt, const char *a, const char *b)
{
	char what[700];

	snprintf(what, sizeof(what), fmt, a, b ? b : "");
	grove_error_set(err, -GROVE_E_CONFIG, "%s:%u:%u: %s", st->o.manifest_path, loc->line,
			loc->col, what);
	return grove_error_path(err, st->o.manifest_path);
}

/* ---- targets ---- */

static struct grove_pattern_set *
compile(const struct grove_strlist *l, enum grove_pattern_anchor anchor, struct grove_error *err)
{
	struct grove_pattern_set *set;

	if (!l->n)
		return NULL;
	set = grove_pattern_set_new(anchor);
	for (size_t i = 0; set && i < l->n; i++)
		if (grove_pattern_set_add(set, l->v[i], err) < 0)
			return grove_pattern_set_free(set);
	return set;
}

static void
target_release(struct grove_apply_target_step *t)
{
	if (t->prepared)
		grove_apply_run_release(&t->run);
	for (size_t i = 0; i < t->n_pkgs; i++)
		grove_stow_settings_release(&t->eff[i]);
	for (size_t i = 0; t->sets && i < 3 * t->n_pkgs; i++)
		grove_pattern_set_free(t->sets[i]);
	free(t->sets);
	free(t->eff);
	free(t->pkgs);
	free(t->target);
	free(t->dir);
}

/* Package k of t (its manifest entry mp) with its effective options, compiled patterns shared
 * with an earlier package of the same options (so apply plans them in one pass). */
static int
select_pkg(struct grove_apply_steps *st, struct grove_apply_target_step *t,
	   const struct grove_manifest_pkg *mp, struct grove_error *err)
{
	size_t n = t->n_pkgs;
	struct grove_apply_pkg *p = &t->pkgs[n];
	struct grove_stow_settings *e = &t->eff[n];

	if (grove_manifest_effective(st->o.ctx, st->o.manifest, t->mt, mp, e) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	t->n_pkgs = n + 1;
	p->name = mp->name;
	p->no_folding = e->folding == 0;
	p->dotfiles = e->dotfiles > 0;
	p->adopt = e->adopt > 0;
	for (size_t j = 0; j < n; j++) {
		if (grove_stow_settings_same(&t->eff[j], e)) {
			p->ignore = t->pkgs[j].ignore;
			p->defer = t->pkgs[j].defer;
			p->override = t->pkgs[j].override;
			return 0;
		}
	}
	t->sets[3 * n] = compile(&e->ignore, GROVE_ANCHOR_END, err);
	t->sets[3 * n + 1] = compile(&e->defer, GROVE_ANCHOR_START, err);
	t->sets[3 * n + 2] = compile(&e->override, GROVE_ANCHOR_START, err);
	if (err->code)
		return cfg_error(&mp->loc, st, err, "package '%s': %s", mp->name, err->msg);
	p->ignore = t->sets[3 * n];
	p->defer = t->sets[3 * n + 1];
	p->override = t->sets[3 * n + 2];
	return 0;
}

static int
select_target(struct grove_apply_steps *st, const struct grove_manifest_target *mt,
	      struct grove_error *err)
{
	struct grove_apply_target_step *t = &st->targets[st->n_targets++];
	struct grove_stow_settings te;

	t->mt = mt;
	if (grove_manifest_effective(st->o.ctx, st->o.manifest, mt, NULL, &te) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (!te.dir) {
		grove_stow_settings_release(&te);
		return cfg_error(&mt->loc, st, err,
				 "target '%s' has no stow directory (set 'dir' in it or "
				 "in 'defaults')%s",
				 mt->path, NULL);
	}
	t->dir = resolve(st, te.dir);
	grove_stow_settings_release(&te);
	t->target = resolve(st, mt->path);
	t->pkgs = calloc(mt->n_pkgs + 1, sizeof(*t->pkgs));
	t->eff = calloc(mt->n_pkgs + 1, sizeof(*t->eff));
	t->sets = calloc(3 * mt->n_pkgs + 1, sizeof(*t->sets));
	if (!t->dir || !t->target || !t->pkgs || !t->eff || !t->sets)
		return grove_error_set(err, -ENOMEM, "out of memory (or HOME unset)");
	for (size_t k = 0; k < mt->n_pkgs; k++) {
		int r;

		if (!grove_manifest_when_matches(&mt->pkgs[k].when, st->o.ctx))
			continue;
		r = select_pkg(st, t, &mt->pkgs[k], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Whether targets i and j (opened as tr[2i], tr[2i+1] and tr[2j], tr[2j+1]: target, stow dir)
 * overlap: one folder, or nested with a package of one stow dir in both. */
static int
check_pair(const struct grove_apply_steps *st, const struct grove_root *tr, size_t i, size_t j,
	   struct grove_error *err)
{
	const struct grove_apply_target_step *ti = &st->targets[i], *tj = &st->targets[j];
	const char *a = tr[2 * j].real, *b = tr[2 * i].real;
	bool nested = grove_path_strip_prefix(a, b) || grove_path_strip_prefix(b, a);

	if (!ti->mt || !tj->mt)
		return grove_error_set(err, -GROVE_E_INTERNAL, "apply: a target without its entry");
	if (!strcmp(a, b))
		return cfg_error(&ti->mt->loc, st, err,
				 "target '%s' is the same folder as target '%s'", ti->mt->path,
				 tj->mt->path);
	if (!nested || strcmp(tr[2 * j + 1].real, tr[2 * i + 1].real) != 0)
		return 0;
	for (size_t p = 0; p < ti->n_pkgs; p++)
		for (size_t q = 0; q < tj->n_pkgs; q++)
			if (!strcmp(ti->pkgs[p].name, tj->pkgs[q].name))
				return grove_error_set(
					err, -GROVE_E_CONFIG,
					"%s:%u:%u: package '%s' is in two targets that overlap: "
					"'%s' and '%s' (line %u)",
					st->o.manifest_path, ti->mt->loc.line, ti->mt->loc.col,
					ti->pkgs[p].name, ti->mt->path, tj->mt->path,
					tj->mt->loc.line);
	return 0;
}

/* Two selected targets that are one folder, or a package of one stow dir in two targets one of
 * which lies in the other: refused before anything is locked or changed. */
static int
check_overlap(struct grove_apply_steps *st, struct grove_error *err)
{
	struct grove_root *tr = calloc(2 * st->n_targets + 1, sizeof(*tr));
	int r = 0;

	if (!tr)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < 2 * st->n_targets; i++)
		tr[i].fd = -1;
	for (size_t i = 0; i < st->n_targets && r == 0; i++) {
		r = grove_root_open(&tr[2 * i], st->targets[i].target, err);
		if (r < 0) {
			grove_error_prefix(err, "target");
			break;
		}
		r = grove_root_open(&tr[2 * i + 1], st->targets[i].dir, err);
		if (r < 0) {
			grove_error_prefix(err, "stow directory");
			break;
		}
		for (size_t j = 0; j < i && r == 0; j++)
			r = check_pair(st, tr, i, j, err);
	}
	if (r < 0 && r != -GROVE_E_CONFIG) {
		/* An unusable target or stow dir is a manifest error too. */
		char msg[GROVE_ERROR_MSG_MAX];
		char path[GROVE_ERROR_PATH_MAX];

		/* (The error's path stays the folder's, when it named one.) */
		snprintf(msg, sizeof(msg), "%s", err->msg);
		snprintf(path, sizeof(path), "%s", err->path);
		grove_error_set(err, -GROVE_E_CONFIG, "%s: %s", st->o.manifest_path, msg);
		grove_error_path(err, path[0] ? path : st->o.manifest_path);
		r = -GROVE_E_CONFIG;
	}
	for (size_t i = 0; i < 2 * st->n_targets; i++)
		grove_root_release(&tr[i]);
	free(tr);
	return r;
}

int
grove_apply_steps_select(struct grove_apply_steps *st, const struct grove_apply_steps_opts *o,
			 struct grove_error *err)
{
	const struct grove_manifest *m = o->manifest;
	const char *slash = strrchr(o->manifest_path, '/');

	memset(st, 0, sizeof(*st));
	st->o = *o;
	st->base = slash && slash > o->manifest_path
			   ? strndup(o->manifest_path, (size_t)(slash - o->manifest_path))
			   : strdup(o->manifest_path[0] == '/' ? "/" : ".");
	st->targets = calloc(m->n_targets + 1, sizeof(*st->targets));
	if (!st->base || !st->targets)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n_targets; i++) {
		int r;

		if (!grove_manifest_when_matches(&m->targets[i].when, o->ctx))
			continue;
		r = select_target(st, &m->targets[i], err);
		if (r < 0)
			return r;
	}
	return check_overlap(st, err);
}

int
grove_apply_steps_prepare(struct grove_apply_steps *st, size_t i, bool lock,
			  struct grove_error *err)
{
	struct grove_apply_target_step *t = &st->targets[i];
	struct grove_apply_target at = {
		.dir = t->dir,
		.target = t->target,
		.pkgs = t->pkgs,
		.n_pkgs = t->n_pkgs,
		.command = st->o.command,
		.global_ignore_text = st->o.global_ignore_text,
		.global_ignore_source = st->o.global_ignore_source,
	};
	int r = grove_apply_prepare(&at, st->o.state_opt, st->o.wait_seconds, lock, &t->run, err);

	if (r == -GROVE_E_BADINPUT) {
		/* A package the stow dir lacks is the manifest's mistake: point at the package
		 * the message names, when it is one of ours. */
		const struct grove_manifest_loc *loc = &t->mt->loc;
		char msg[GROVE_ERROR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		for (size_t k = 0; k < t->mt->n_pkgs; k++) {
			cleanup_free char *q = grove_strdupf("package '%s'", t->mt->pkgs[k].name);

			if (q && strstr(msg, q))
				loc = &t->mt->pkgs[k].loc;
		}
		r = cfg_error(loc, st, err, "target '%s': %s", t->mt->path, msg);
	}
	if (r < 0)
		return r;
	t->prepared = true;
	return 0;
}

void
grove_apply_steps_release(struct grove_apply_steps *st)
{
	for (size_t i = 0; i < st->n_targets; i++)
		target_release(&st->targets[i]);
	free(st->targets);
	for (size_t i = 0; i < st->n_alts; i++) {
		free(st->alts[i].path);
		grove_names_free(st->alts[i].warnings, st->alts[i].n_warnings);
	}
	free(st->alts);
	for (size_t i = 0; i < st->n_profiles; i++) {
		free(st->profiles[i].dir);
		free(st->profiles[i].pkgs);
		grove_plan_release(&st->profiles[i].conflicts);
	}
	free(st->profiles);
	free(st->base);
	free(st->altdir);
	free(st->admindir);
	free(st->alt_root);
	memset(st, 0, sizeof(*st));
}

bool
grove_apply_steps_profiles_changed(const struct grove_apply_steps *st)
{
	for (size_t i = 0; i < st->n_profiles; i++)
		if (st->profiles[i].changed)
			return true;
	return false;
}

bool
grove_apply_steps_conflicts(const struct grove_apply_steps *st)
{
	for (size_t i = 0; i < st->n_targets; i++)
		if (st->targets[i].run.plan.n_conflicts)
			return true;
	for (size_t i = 0; i < st->n_profiles; i++)
		if (st->profiles[i].conflicted)
			return true;
	return false;
}

bool
grove_apply_steps_changed(const struct grove_apply_steps *st)
{
	for (size_t i = 0; i < st->n_targets; i++)
		if (st->targets[i].run.plan.n_ops)
			return true;
	return grove_apply_steps_profiles_changed(st) || st->n_alts > 0;
}

/* ---- alternatives ---- */

static int
alt_step_add(struct grove_apply_steps *st, const struct grove_manifest_alt_group *g,
	     enum grove_alt_action action, const char *path, int priority)
{
	struct grove_apply_alt_step *ns = realloc(st->alts, (st->n_alts + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	st->alts = ns;
	ns = &st->alts[st->n_alts++];
	memset(ns, 0, sizeof(*ns));
	ns->group = g;
	ns->action = action;
	ns->priority = priority;
	if (path && !(ns->path = strdup(path)))
		return -ENOMEM;
	return 0;
}

static void
alt_request(const struct grove_apply_steps *st, struct grove_alt_request *q,
	    enum grove_alt_action action, const char *name)
{
	memset(q, 0, sizeof(*q));
	q->action = action;
	q->name = name;
	q->altdir = st->altdir;
	q->admindir = st->admindir;
	q->root = st->alt_root;
	q->instdir = "/";
	q->state_opt = st->o.state_opt;
	q->wait_seconds = st->o.wait_seconds;
	q->command_line = st->o.command;
	q->verbose = -1;
	q->dry_run = st->o.check;
}

static bool
choice_same(const struct grove_manifest_alt_group *g, const struct grove_manifest_alt_choice *mc,
	    const struct grove_alt_group *saved)
{
	ssize_t k = grove_alt_find_choice(saved, mc->path);
	const struct grove_alt_choice *c;

	if (k < 0)
		return false;
	c = &saved->choices[k];
	if (c->priority != mc->priority || c->n_slaves != mc->n_followers)
		return false;
	for (size_t i = 0; i < mc->n_followers; i++) {
		const char *f = grove_alt_choice_slave(c, mc->followers[i].name);
		const char *l = grove_alt_group_slave_link(saved, mc->followers[i].name);
		const char *want_link = NULL;

		for (size_t j = 0; j < g->n_followers; j++)
			if (!strcmp(g->followers[j].name, mc->followers[i].name))
				want_link = g->followers[j].path;
		if (!f || strcmp(f, mc->followers[i].path) != 0 || !l || !want_link ||
		    strcmp(l, want_link) != 0)
			return false;
	}
	return true;
}

/* The steps for group g from its saved state (NULL: none yet) and current value; -ENOMEM. */
static int
plan_group(struct grove_apply_steps *st, const struct grove_manifest_alt_group *g,
	   const struct grove_alt_group *saved, const char *cur)
{
	bool removes_cur = false;
	int r = 0;

	for (size_t k = 0; k < g->n_choices && r == 0; k++) {
		bool link_same = saved && !strcmp(saved->link, g->link);

		if (!link_same || !choice_same(g, &g->choices[k], saved))
			r = alt_step_add(st, g, GROVE_ALT_INSTALL, g->choices[k].path,
					 g->choices[k].priority);
	}
	for (size_t k = 0; saved && k < saved->n_choices && r == 0; k++) {
		bool listed = false;

		for (size_t j = 0; j < g->n_choices && !listed; j++)
			listed = !strcmp(g->choices[j].path, saved->choices[k].path);
		if (!listed) {
			removes_cur = removes_cur || (cur && !strcmp(cur, saved->choices[k].path));
			r = alt_step_add(st, g, GROVE_ALT_REMOVE, saved->choices[k].path, 0);
		}
	}
	if (r == 0 && g->manual &&
	    (!saved || !saved->manual || !cur || strcmp(cur, g->choice) != 0 || removes_cur))
		r = alt_step_add(st, g, GROVE_ALT_SET, g->choice, 0);
	else if (r == 0 && !g->manual && saved && saved->manual && !removes_cur)
		r = alt_step_add(st, g, GROVE_ALT_AUTO, NULL, 0);
	return r;
}

/* root's length without its trailing slashes. */
static size_t
root_len(const char *root)
{
	size_t l = strlen(root);

	while (l > 0 && root[l - 1] == '/')
		l--;
	return l;
}

int
grove_apply_steps_plan_alternatives(struct grove_apply_steps *st, struct grove_error *err)
{
	const struct grove_manifest *m = st->o.manifest;
	const char *adm = st->o.dpkg_admindir;

	if (!m->n_groups)
		return 0;
	if (m->alt_root) {
		/* update-alternatives' --root: every path of the section is inside the root, the
		 * altdir and admindir too (their defaults the root's own). */
		const char *bad = m->altdir && m->altdir[0] != '/'       ? m->altdir
				  : m->admindir && m->admindir[0] != '/' ? m->admindir
									 : NULL;

		if (bad)
			return grove_error_set(err, -GROVE_E_CONFIG,
					       "%s: alternatives: '%s' is not an absolute path "
					       "(with 'root', 'altdir' and 'admindir' are paths "
					       "inside the root)",
					       st->o.manifest_path, bad);
		st->alt_root = resolve(st, m->alt_root);
		st->altdir = strdup(m->altdir ? m->altdir : "/etc/alternatives");
		st->admindir =
			st->alt_root
				? grove_strdupf("%.*s%s", (int)root_len(st->alt_root), st->alt_root,
						m->admindir ? m->admindir
							    : "/var/lib/dpkg/alternatives")
				: NULL;
		if (!st->alt_root || !st->altdir || !st->admindir)
			return grove_error_set(err, -ENOMEM, "out of memory");
	} else {
		st->altdir = m->altdir ? resolve(st, m->altdir) : strdup("/etc/alternatives");
		st->admindir = m->admindir ? resolve(st, m->admindir)
					   : grove_strdupf("%s/alternatives",
							   adm && *adm ? adm : "/var/lib/dpkg");
		if (!st->altdir || !st->admindir)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m->n_groups; i++) {
		const struct grove_manifest_alt_group *g = &m->groups[i];
		struct grove_alt_request q;
		struct grove_alt_result res = { 0 };
		struct grove_error qe = { 0 };
		int r;

		if (!grove_manifest_when_matches(&g->when, st->o.ctx))
			continue;
		alt_request(st, &q, GROVE_ALT_QUERY, g->name);
		r = grove_alt_run(&q, &res, &qe);
		/* No group yet (BADINPUT), or a broken one: install repairs it. */
		if (r < 0 && r != -GROVE_E_BADINPUT && !res.current_failed) {
			grove_alt_result_release(&res);
			*err = qe;
			return grove_error_prefix(err, "alternatives group '%s'", g->name);
		}
		r = plan_group(st, g, res.group.name ? &res.group : NULL,
			       res.group.name ? res.current : NULL);
		grove_alt_result_release(&res);
		if (r < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The requests' followers for an install of choice mc: names and paths from the choice, links
 * from the group (ret_slaves and ret_links both have mc->n_followers entries). */
static int
install_followers(const struct grove_manifest_alt_group *g,
		  const struct grove_manifest_alt_choice *mc, struct grove_alt_slave **ret_slaves,
		  const char ***ret_links)
{
	struct grove_alt_slave *slaves = calloc(mc->n_followers + 1, sizeof(*slaves));
	const char **links = calloc(mc->n_followers + 1, sizeof(*links));

	if (!slaves || !links) {
		free(slaves);
		free(links);
		return -ENOMEM;
	}
	for (size_t k = 0; k < mc->n_followers; k++) {
		slaves[k].name = mc->followers[k].name;
		slaves[k].path = mc->followers[k].path;
		for (size_t j = 0; j < g->n_followers; j++)
			if (!strcmp(g->followers[j].name, mc->followers[k].name))
				links[k] = g->followers[j].path;
	}
	*ret_slaves = slaves;
	*ret_links = links;
	return 0;
}

/* The request of step as (followers and their links allocated into *slaves and *links). */
static int
step_request(const struct grove_apply_steps *st, const struct grove_apply_alt_step *as,
	     struct grove_alt_request *q, struct grove_alt_slave **slaves, const char ***links,
	     struct grove_error *err)
{
	const struct grove_manifest_alt_group *g = as->group;
	const struct grove_manifest_alt_choice *mc = NULL;

	alt_request(st, q, as->action, g->name);
	q->path = as->path;
	if (as->action != GROVE_ALT_INSTALL)
		return 0;
	for (size_t k = 0; k < g->n_choices; k++)
		if (!strcmp(g->choices[k].path, as->path))
			mc = &g->choices[k];
	if (!mc)
		return grove_error_set(err, -GROVE_E_INTERNAL,
				       "alternatives group '%s': '%s' is not a choice of the "
				       "manifest",
				       g->name, as->path);
	if (install_followers(g, mc, slaves, links) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	q->link = g->link;
	q->priority = as->priority;
	q->slaves = *slaves;
	q->slave_links = *links;
	q->n_slaves = mc->n_followers;
	return 0;
}

int
grove_apply_steps_run_alt(struct grove_apply_steps *st, size_t i, struct grove_error *err)
{
	const struct grove_manifest_alt_group *g = st->alts[i].group;
	struct grove_apply_alt_step *as = &st->alts[i];
	struct grove_alt_result res = { 0 };
	struct grove_alt_request *q;
	struct grove_alt_slave **slaves;
	const char ***links;
	size_t n = 0;
	int r = 0;

	while (i + n < st->n_alts && st->alts[i + n].group == g)
		n++;
	q = calloc(n + 1, sizeof(*q));
	slaves = calloc(n + 1, sizeof(*slaves));
	links = calloc(n + 1, sizeof(*links));
	if (!q || !slaves || !links)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t k = 0; k < n && r >= 0; k++)
		r = step_request(st, &st->alts[i + k], &q[k], &slaves[k], &links[k], err);
	if (r >= 0)
		r = grove_alt_run_group(q, n, &res, err);
	for (size_t k = 0; k < res.n_msgs; k++) {
		char **nw;

		if (res.msgs[k].kind != GROVE_ALT_WARNING)
			continue;
		nw = realloc(as->warnings, (as->n_warnings + 1) * sizeof(*nw));
		if (nw)
			as->warnings = nw;
		if (nw && (nw[as->n_warnings] = strdup(res.msgs[k].text)))
			as->n_warnings++;
	}
	for (size_t k = 0; k < n; k++) {
		st->alts[i + k].txn = res.txn;
		if (slaves)
			free(slaves[k]);
		if (links)
			free(links[k]);
	}
	grove_alt_result_release(&res);
	free(q);
	free(slaves);
	free(links);
	if (r < 0) {
		grove_error_prefix(err, "alternatives group '%s'", g->name);
		return r;
	}
	return (int)n;
}

/*
 * What the alternatives steps would fail with, decided by grove alt's own dry run of each request
 * (grove_alt_run with dry_run: the real command's decisions on the admin files and links as they
 * are, changing nothing). A group's requests run in one transaction, each on what the ones before
 * it leave; the dry run sees the disk only, so a SET or AUTO after an INSTALL or REMOVE of its
 * group (which the install may make possible) is left to the real run.
 */
int
grove_apply_steps_check_alternatives(struct grove_apply_steps *st, struct grove_error *err)
{
	for (size_t i = 0; i < st->n_alts; i++) {
		const struct grove_apply_alt_step *as = &st->alts[i];
		bool after_change = i > 0 && st->alts[i - 1].group == as->group;
		struct grove_alt_request q;
		struct grove_alt_result res = { 0 };
		struct grove_alt_slave *slaves = NULL;
		const char **links = NULL;
		int r;

		if (after_change && (as->action == GROVE_ALT_SET || as->action == GROVE_ALT_AUTO))
			continue;
		r = step_request(st, as, &q, &slaves, &links, err);
		q.dry_run = true;
		if (r >= 0)
			r = grove_alt_run(&q, &res, err);
		grove_alt_result_release(&res);
		free(slaves);
		free(links);
		if (r < 0)
			return grove_error_prefix(err, "alternatives group '%s'", as->group->name);
	}
	return 0;
}

/* ---- profiles ---- */

static int
strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
profile_opts(const struct grove_apply_steps *st, const struct grove_apply_profile_step *ps,
	     bool mutate, struct grove_profile_opts *po)
{
	memset(po, 0, sizeof(*po));
	po->state_opt = st->o.state_opt;
	po->wait_seconds = st->o.wait_seconds;
	po->profile = ps->mp->name;
	po->mutate = mutate;
	po->command = st->o.command;
}

/* What profile step ps's generation is built from (the real build and its preview alike). */
static void
profile_spec(const struct grove_apply_steps *st, const struct grove_apply_profile_step *ps,
	     struct grove_profile_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->stow_dir = ps->dir;
	spec->packages = ps->pkgs;
	spec->n_packages = ps->n;
	spec->no_folding = ps->no_folding;
	spec->dotfiles = ps->dotfiles;
	spec->command = st->o.command;
}

/* What building the profile's generation would do, by the build itself in its dry-run mode (the
 * same reads and decisions as the real build: the record, and a forest planned again, so a package
 * whose contents changed is a change): changed, the generation it would build (else the current
 * one), or the conflicts that would stop it. */
static int
profile_preview(const struct grove_apply_steps *st, struct grove_apply_profile_step *ps,
		struct grove_error *err)
{
	struct grove_profile_opts po;
	struct grove_profile *p = NULL;
	struct grove_generation *gens = NULL;
	struct grove_profile_spec spec;
	size_t n = 0;
	long cur = 0, num = 0;
	int r;

	profile_opts(st, ps, true, &po);
	po.dry_run = true;
	profile_spec(st, ps, &spec);
	r = grove_profile_open(&po, &p, NULL, err);
	if (r >= 0)
		r = grove_profile_generations(p, &gens, &n, &cur, err);
	if (r >= 0)
		r = grove_profile_build(p, &spec, &num, &ps->conflicts, err);
	ps->changed = r < 0 || num != 0;
	ps->generation = num ? num : cur;
	grove_generations_free(gens, n);
	grove_profile_close(p);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* What the build would fail with (conflicts among them), for a check to report;
		 * the real run meets it again when it builds. */
		ps->conflicted = r == -GROVE_E_CONFLICT;
		ps->failure = *err;
		grove_error_prefix(&ps->failure, "profile '%s'", ps->mp->name);
		grove_error_clear(err);
	}
	return 0;
}

/* The profile step for mp: its stow dir and options by the layers, its packages sorted and each
 * once; then whether it is current. */
static int
plan_profile(struct grove_apply_steps *st, const struct grove_manifest_profile *mp,
	     struct grove_error *err)
{
	struct grove_apply_profile_step *ps = &st->profiles[st->n_profiles++];
	struct grove_stow_settings e;

	ps->mp = mp;
	grove_plan_init(&ps->conflicts);
	if (grove_manifest_effective(st->o.ctx, st->o.manifest, NULL, NULL, &e) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	ps->no_folding = (mp->folding >= 0 ? mp->folding : e.folding) == 0;
	ps->dotfiles = (mp->dotfiles >= 0 ? mp->dotfiles : e.dotfiles) > 0;
	if (mp->dir || e.dir)
		ps->dir = resolve(st, mp->dir ? mp->dir : e.dir);
	grove_stow_settings_release(&e);
	if (!mp->dir && !ps->dir)
		return cfg_error(&mp->loc, st, err,
				 "profile '%s' has no stow directory (set 'dir' in it or "
				 "in 'defaults')%s",
				 mp->name, NULL);
	ps->pkgs = calloc(mp->pkgs.n + 1, sizeof(char *));
	if (!ps->dir || !ps->pkgs)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t k = 0; k < mp->pkgs.n; k++)
		ps->pkgs[ps->n++] = mp->pkgs.v[k];
	if (ps->n)
		qsort(ps->pkgs, ps->n, sizeof(char *), strcmp_p);
	for (size_t k = 1; k < ps->n; k++)
		if (!strcmp(ps->pkgs[k - 1], ps->pkgs[k])) {
			memmove(&ps->pkgs[k], &ps->pkgs[k + 1], (ps->n - k - 1) * sizeof(char *));
			ps->n--;
			k--;
		}
	{
		/* A stow dir that cannot be opened is the manifest's mistake, found before anything
		 * changes. */
		struct grove_root stow = { .fd = -1 };
		int r = grove_root_open(&stow, ps->dir, err);

		grove_root_release(&stow);
		if (r < 0)
			return cfg_error(&mp->loc, st, err, "profile '%s': %s", mp->name, err->msg);
	}
	return st->o.check ? profile_preview(st, ps, err) : 0;
}

int
grove_apply_steps_plan_profiles(struct grove_apply_steps *st, struct grove_error *err)
{
	const struct grove_manifest *m = st->o.manifest;

	st->profiles = calloc(m->n_profiles + 1, sizeof(*st->profiles));
	if (!st->profiles)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n_profiles; i++) {
		int r;

		if (!grove_manifest_when_matches(&m->profiles[i].when, st->o.ctx))
			continue;
		r = plan_profile(st, &m->profiles[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int
grove_apply_steps_build_profile(struct grove_apply_steps *st, size_t i,
				struct grove_plan *conflicts, struct grove_error *err)
{
	struct grove_apply_profile_step *ps = &st->profiles[i];
	struct grove_profile_opts po;
	struct grove_profile *p = NULL;
	struct grove_profile_spec spec;
	long num = 0;
	int r;

	profile_opts(st, ps, true, &po);
	profile_spec(st, ps, &spec);
	r = grove_profile_open(&po, &p, NULL, err);
	if (r < 0)
		return r;
	r = grove_profile_build(p, &spec, &num, conflicts, err);
	if (r >= 0 && !num) {
		/* Nothing built: the current generation stays, and is the one reported. */
		struct grove_generation *gens = NULL;
		size_t n = 0;

		r = grove_profile_generations(p, &gens, &n, &ps->generation, err);
		grove_generations_free(gens, n);
	}
	grove_profile_close(p);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", ps->mp->name);
	ps->changed = num != 0;
	if (num)
		ps->generation = num;
	return 0;
}
