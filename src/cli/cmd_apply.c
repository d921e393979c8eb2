/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove apply: converge the targets and alternatives a manifest declares, one logged transaction
 * per target; --check, --diff and --json report the difference. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "grove/text.h"
#include "front.h"
#include "grove/alt.h"
#include "grove/apply.h"
#include "grove/fs.h"
#include "grove/manifest.h"
#include "grove/path.h"
#include "grove/profile.h"
#include "util.h"

#define GLOBAL_IGNORE_MAX (1024 * 1024)

struct apply_args {
	const char *file;
	bool check, diff, json;
	struct grove_strlist tags;
	const char *host;
	struct grove_stow_settings flags; /* -d, --no-folding, --dotfiles, --adopt, --ignore, ... */
};

/* One target the manifest selects on this host. */
struct tgt {
	const struct grove_manifest_target *mt;
	char *target, *dir;
	struct grove_apply_pkg *pkgs;
	struct grove_stow_settings *eff;
	struct grove_pattern_set **sets; /* owned, 3 per package (some NULL) */
	size_t n_pkgs;
	struct grove_apply_run run;
	bool prepared;
};

/* One alternatives request apply will make. */
struct alt_step {
	const struct grove_manifest_alt_group *g;
	enum grove_alt_action action;
	const char *path; /* INSTALL, REMOVE, SET */
	char *owned_path;
	int priority;
	int64_t txn;
};

/* One profile the manifest selects: what its generation is built from. */
struct prof_step {
	const struct grove_manifest_profile *mp;
	char *dir;
	char **pkgs; /* sorted bytewise, each once (as a generation's record) */
	size_t n;
	bool no_folding, dotfiles;
	bool changed;    /* --check: would build; else: built */
	long generation; /* the current generation after apply (0: none) */
};

struct apply {
	struct apply_args a;
	const struct grove_global_opts *global;
	struct grove_user_config cfg;
	struct grove_manifest m;
	struct grove_apply_context ctx;
	char *manifest_path;
	char *manifest_abs; /* for --json */
	char *base;         /* the manifest's folder, for relative paths */
	const char *home;
	char *gi_text, *gi_path;
	struct tgt *t;
	size_t n_t;
	struct alt_step *steps;
	size_t n_steps;
	char *altdir, *admindir, *alt_root;
	struct prof_step *profs;
	size_t n_profs;
};

static void
usage(FILE *out)
{
	fputs("usage: grove [--state DIR] [--json] apply [-f FILE] [--check] [--diff] [--json]\n"
	      "             [--tag TAG]... [--host NAME] [-d DIR] [--no-folding] [--dotfiles]\n"
	      "             [--adopt] [--ignore RE] [--defer RE] [--override RE]\n",
	      out);
}

static int
parse_args(int argc, char **argv, struct apply_args *a, bool *ret_help, struct grove_error *err)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *eq = strchr(o, '=');
		size_t olen = eq && o[0] == '-' && o[1] == '-' ? (size_t)(eq - o) : strlen(o);
		const char *val = NULL;
		bool takes = false;
		static const char *const valued[] = { "-f",       "--file",  "--tag",
						      "--host",   "-d",      "--dir",
						      "--ignore", "--defer", "--override" };

		for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
			if (strlen(valued[k]) == olen && !strncmp(o, valued[k], olen))
				takes = true;
		if (takes) {
			val = olen < strlen(o) ? o + olen + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!val)
				return grove_error_set(err, -GROVE_E_USAGE,
						       "option '%.*s' requires a value", (int)olen,
						       o);
		}
		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			*ret_help = true;
		else if (!strcmp(o, "--check"))
			a->check = true;
		else if (!strcmp(o, "--diff"))
			a->diff = true;
		else if (!strcmp(o, "--json"))
			a->json = true;
		else if (!strcmp(o, "--no-folding"))
			a->flags.folding = 0;
		else if (!strcmp(o, "--dotfiles"))
			a->flags.dotfiles = 1;
		else if (!strcmp(o, "--adopt"))
			a->flags.adopt = 1;
		else if (takes && (!strncmp(o, "-f", 2) || !strncmp(o, "--file", 6)))
			a->file = val;
		else if (takes && !strncmp(o, "--tag", 5)) {
			if (grove_strlist_add(&a->tags, val, NULL) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
		} else if (takes && !strncmp(o, "--host", 6))
			a->host = val;
		else if (takes && (!strncmp(o, "-d", 2) || !strncmp(o, "--dir", 5))) {
			free(a->flags.dir);
			if (!(a->flags.dir = strdup(val)))
				return grove_error_set(err, -ENOMEM, "out of memory");
		} else if (takes) {
			struct grove_strlist *l = !strncmp(o, "--ignore", 8)  ? &a->flags.ignore
						  : !strncmp(o, "--defer", 7) ? &a->flags.defer
									      : &a->flags.override;
			struct grove_pattern_set *set = grove_pattern_set_new(GROVE_ANCHOR_END);
			int r = set ? grove_pattern_set_add(set, val, err) : -ENOMEM;

			grove_pattern_set_free(set);
			if (r < 0)
				return r == -ENOMEM ? grove_error_set(err, r, "out of memory") : r;
			if (grove_strlist_add(l, val, NULL) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
		} else
			return grove_error_set(err, -GROVE_E_USAGE,
					       o[0] == '-' ? "apply: unknown option '%s'"
							   : "apply: unexpected argument '%s'",
					       o);
	}
	return 0;
}

/* "~" and "~/x" from HOME; relative to the manifest's folder; absolute as is. */
static char *
resolve(const struct apply *ap, const char *p)
{
	if (p[0] == '~' && (p[1] == '\0' || p[1] == '/'))
		return ap->home ? grove_strdupf("%s%s", ap->home, p + 1) : NULL;
	if (p[0] == '/')
		return strdup(p);
	return grove_strdupf("%s/%s", ap->base, p);
}

static int
cfg_error(const struct grove_manifest_loc *loc, const struct apply *ap, struct grove_error *err,
	  const char *fmt, const char *a, const char *b)
{
	char what[700];

	snprintf(what, sizeof(what), fmt, a, b ? b : "");
	return grove_error_set(err, -GROVE_E_CONFIG, "%s:%u:%u: %s", ap->manifest_path, loc->line,
			       loc->col, what);
}

/* Host and tags: flags > environment > manifest > config > gethostname. */
static int
build_context(struct apply *ap, struct grove_error *err)
{
	char hn[256] = "";
	struct grove_apply_layers l = {
		.flag_host = ap->a.host,
		.flag_tags = &ap->a.tags,
		.flags = &ap->a.flags,
		.env_host = getenv("GROVE_HOST"),
		.env_tags = getenv("GROVE_TAGS"),
		.manifest = &ap->m,
		.config = &ap->cfg,
		.default_host = hn,
	};

	if (gethostname(hn, sizeof(hn) - 1) < 0)
		hn[0] = '\0';
	if (grove_apply_context_build(&ap->ctx, &l) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

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
tgt_release(struct tgt *t)
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

static int
select_targets(struct apply *ap, struct grove_error *err)
{
	ap->t = calloc(ap->m.n_targets + 1, sizeof(*ap->t));
	if (!ap->t)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ap->m.n_targets; i++) {
		const struct grove_manifest_target *mt = &ap->m.targets[i];
		struct grove_stow_settings te;
		struct tgt *t;
		size_t n = 0;

		if (!grove_manifest_when_matches(&mt->when, &ap->ctx))
			continue;
		t = &ap->t[ap->n_t++];
		t->mt = mt;
		if (grove_manifest_effective(&ap->ctx, &ap->m, mt, NULL, &te) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
		if (!te.dir) {
			grove_stow_settings_release(&te);
			return cfg_error(&mt->loc, ap, err,
					 "target '%s' has no stow directory (set 'dir' in it or "
					 "in 'defaults')%s",
					 mt->path, NULL);
		}
		t->dir = resolve(ap, te.dir);
		grove_stow_settings_release(&te);
		t->target = resolve(ap, mt->path);
		t->pkgs = calloc(mt->n_pkgs + 1, sizeof(*t->pkgs));
		t->eff = calloc(mt->n_pkgs + 1, sizeof(*t->eff));
		t->sets = calloc(3 * mt->n_pkgs + 1, sizeof(*t->sets));
		if (!t->dir || !t->target || !t->pkgs || !t->eff || !t->sets)
			return grove_error_set(err, -ENOMEM, "out of memory (or HOME unset)");
		for (size_t k = 0; k < mt->n_pkgs; k++) {
			const struct grove_manifest_pkg *mp = &mt->pkgs[k];
			struct grove_apply_pkg *p = &t->pkgs[n];
			struct grove_stow_settings *e = &t->eff[n];
			bool shared = false;

			if (!grove_manifest_when_matches(&mp->when, &ap->ctx))
				continue;
			if (grove_manifest_effective(&ap->ctx, &ap->m, mt, mp, e) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
			t->n_pkgs = ++n;
			p->name = mp->name;
			p->no_folding = e->folding == 0;
			p->dotfiles = e->dotfiles > 0;
			p->adopt = e->adopt > 0;
			/* Packages with the same options share pattern sets, so apply
			 * plans them in one pass. */
			for (size_t j = 0; j + 1 < n && !shared; j++) {
				if (grove_stow_settings_same(&t->eff[j], e)) {
					p->ignore = t->pkgs[j].ignore;
					p->defer = t->pkgs[j].defer;
					p->override = t->pkgs[j].override;
					shared = true;
				}
			}
			if (shared)
				continue;
			t->sets[3 * (n - 1)] = compile(&e->ignore, GROVE_ANCHOR_END, err);
			t->sets[3 * (n - 1) + 1] = compile(&e->defer, GROVE_ANCHOR_START, err);
			t->sets[3 * (n - 1) + 2] = compile(&e->override, GROVE_ANCHOR_START, err);
			if (err->code)
				return cfg_error(&mp->loc, ap, err, "package '%s': %s", mp->name,
						 err->msg);
			p->ignore = t->sets[3 * (n - 1)];
			p->defer = t->sets[3 * (n - 1) + 1];
			p->override = t->sets[3 * (n - 1) + 2];
		}
	}
	return 0;
}

/* Two selected targets that are one folder, or a package of one stow dir in two targets one of
 * which lies in the other: refused before anything is locked or changed. */
static int
check_overlap(struct apply *ap, struct grove_error *err)
{
	struct grove_root *tr = calloc(2 * ap->n_t + 1, sizeof(*tr));
	int r = 0;

	if (!tr)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < 2 * ap->n_t; i++)
		tr[i].fd = -1;
	for (size_t i = 0; i < ap->n_t && r == 0; i++) {
		r = grove_root_open(&tr[2 * i], ap->t[i].target, err);
		if (r < 0) {
			grove_error_prefix(err, "target");
			break;
		}
		r = grove_root_open(&tr[2 * i + 1], ap->t[i].dir, err);
		if (r < 0) {
			grove_error_prefix(err, "stow directory");
			break;
		}
		for (size_t j = 0; j < i && r == 0; j++) {
			const char *a = tr[2 * j].real, *b = tr[2 * i].real;
			bool same = !strcmp(a, b);
			bool nested = same || grove_path_strip_prefix(a, b) ||
				      grove_path_strip_prefix(b, a);

			if (same) {
				r = cfg_error(&ap->t[i].mt->loc, ap, err,
					      "target '%s' is the same folder as target '%s'",
					      ap->t[i].mt->path, ap->t[j].mt->path);
				break;
			}
			if (!nested || strcmp(tr[2 * j + 1].real, tr[2 * i + 1].real))
				continue;
			for (size_t p = 0; p < ap->t[i].n_pkgs && r == 0; p++)
				for (size_t q = 0; q < ap->t[j].n_pkgs && r == 0; q++)
					if (!strcmp(ap->t[i].pkgs[p].name, ap->t[j].pkgs[q].name))
						r = grove_error_set(
							err, -GROVE_E_CONFIG,
							"%s:%u:%u: package '%s' is in two "
							"targets that overlap: '%s' and '%s' "
							"(line %u)",
							ap->manifest_path, ap->t[i].mt->loc.line,
							ap->t[i].mt->loc.col, ap->t[i].pkgs[p].name,
							ap->t[i].mt->path, ap->t[j].mt->path,
							ap->t[j].mt->loc.line);
		}
	}
	if (r < 0 && r != -GROVE_E_CONFIG) {
		/* An unusable target or stow dir is a manifest error too. */
		char msg[GROVE_ERROR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		grove_error_set(err, -GROVE_E_CONFIG, "%s: %s", ap->manifest_path, msg);
		r = -GROVE_E_CONFIG;
	}
	for (size_t i = 0; i < 2 * ap->n_t; i++)
		grove_root_release(&tr[i]);
	free(tr);
	return r;
}

/* ---- alternatives ---- */

static int
step_add(struct apply *ap, const struct grove_manifest_alt_group *g, enum grove_alt_action action,
	 const char *path, int priority)
{
	struct alt_step *ns = realloc(ap->steps, (ap->n_steps + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	ap->steps = ns;
	ns = &ap->steps[ap->n_steps++];
	memset(ns, 0, sizeof(*ns));
	ns->g = g;
	ns->action = action;
	ns->priority = priority;
	if (path && !(ns->path = ns->owned_path = strdup(path)))
		return -ENOMEM;
	return 0;
}

static void
alt_request(const struct apply *ap, struct grove_alt_request *q, enum grove_alt_action action,
	    const char *name)
{
	memset(q, 0, sizeof(*q));
	q->action = action;
	q->name = name;
	q->altdir = ap->altdir;
	q->admindir = ap->admindir;
	q->instdir = ap->alt_root;
	q->state_opt = ap->global ? ap->global->state_dir : NULL;
	q->wait_seconds = ap->global ? ap->global->wait_seconds : 0;
	q->command_line =
		ap->global && ap->global->command_line ? ap->global->command_line : "grove apply";
	q->verbose = -1;
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
		if (!f || strcmp(f, mc->followers[i].path) || !l || !want_link ||
		    strcmp(l, want_link))
			return false;
	}
	return true;
}

/* The requests that take each selected group from its saved state to the manifest's: install
 * what is missing or different, remove what the manifest no longer lists, then the mode. */
static int
plan_alternatives(struct apply *ap, struct grove_error *err)
{
	const char *adm = getenv("DPKG_ADMINDIR");

	if (!ap->m.n_groups)
		return 0;
	ap->altdir = ap->m.altdir ? resolve(ap, ap->m.altdir) : strdup("/etc/alternatives");
	ap->admindir = ap->m.admindir ? resolve(ap, ap->m.admindir)
				      : grove_strdupf("%s/alternatives",
						      adm && *adm ? adm : "/var/lib/dpkg");
	ap->alt_root = ap->m.alt_root ? resolve(ap, ap->m.alt_root) : strdup("/");
	if (!ap->altdir || !ap->admindir || !ap->alt_root)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ap->m.n_groups; i++) {
		const struct grove_manifest_alt_group *g = &ap->m.groups[i];
		struct grove_alt_request q;
		struct grove_alt_result res = { 0 };
		struct grove_error qe = { 0 };
		const struct grove_alt_group *saved = NULL;
		const char *cur = NULL;
		bool removes_cur = false;
		int r;

		if (!grove_manifest_when_matches(&g->when, &ap->ctx))
			continue;
		alt_request(ap, &q, GROVE_ALT_QUERY, g->name);
		r = grove_alt_run(&q, &res, &qe);
		if (r == -GROVE_E_BADINPUT || (r < 0 && res.current_failed)) {
			r = 0; /* no group yet, or a broken one: install repairs it */
		} else if (r < 0) {
			grove_alt_result_release(&res);
			*err = qe;
			return grove_error_prefix(err, "alternatives group '%s'", g->name);
		}
		if (res.group.name) {
			saved = &res.group;
			cur = res.current;
		}
		for (size_t k = 0; k < g->n_choices && r == 0; k++) {
			bool link_same = saved && !strcmp(saved->link, g->link);

			if (!link_same || !choice_same(g, &g->choices[k], saved))
				r = step_add(ap, g, GROVE_ALT_INSTALL, g->choices[k].path,
					     g->choices[k].priority);
		}
		for (size_t k = 0; saved && k < saved->n_choices && r == 0; k++) {
			bool listed = false;

			for (size_t j = 0; j < g->n_choices && !listed; j++)
				listed = !strcmp(g->choices[j].path, saved->choices[k].path);
			if (!listed) {
				removes_cur = removes_cur ||
					      (cur && !strcmp(cur, saved->choices[k].path));
				r = step_add(ap, g, GROVE_ALT_REMOVE, saved->choices[k].path, 0);
			}
		}
		if (r == 0 && g->manual &&
		    (!saved || !saved->manual || !cur || strcmp(cur, g->choice) || removes_cur))
			r = step_add(ap, g, GROVE_ALT_SET, g->choice, 0);
		else if (r == 0 && !g->manual && saved && saved->manual && !removes_cur)
			r = step_add(ap, g, GROVE_ALT_AUTO, NULL, 0);
		grove_alt_result_release(&res);
		if (r < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int
run_step(struct apply *ap, struct alt_step *st, struct grove_error *err)
{
	const struct grove_manifest_alt_group *g = st->g;
	const struct grove_manifest_alt_choice *mc = NULL;
	struct grove_alt_request q;
	struct grove_alt_result res = { 0 };
	struct grove_alt_slave *slaves = NULL;
	const char **links = NULL;
	int r;

	alt_request(ap, &q, st->action, g->name);
	q.path = st->path;
	if (st->action == GROVE_ALT_INSTALL) {
		for (size_t k = 0; k < g->n_choices; k++)
			if (!strcmp(g->choices[k].path, st->path))
				mc = &g->choices[k];
		q.link = g->link;
		q.priority = st->priority;
		slaves = calloc(mc->n_followers + 1, sizeof(*slaves));
		links = calloc(mc->n_followers + 1, sizeof(*links));
		if (!slaves || !links) {
			free(slaves);
			free(links);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < mc->n_followers; k++) {
			slaves[k].name = mc->followers[k].name;
			slaves[k].path = mc->followers[k].path;
			for (size_t j = 0; j < g->n_followers; j++)
				if (!strcmp(g->followers[j].name, mc->followers[k].name))
					links[k] = g->followers[j].path;
		}
		q.slaves = slaves;
		q.slave_links = links;
		q.n_slaves = mc->n_followers;
	}
	r = grove_alt_run(&q, &res, err);
	for (size_t i = 0; i < res.n_msgs; i++)
		if (res.msgs[i].kind == GROVE_ALT_WARNING)
			fprintf(stderr, "grove: alternatives: warning: %s\n", res.msgs[i].text);
	st->txn = res.txn;
	grove_alt_result_release(&res);
	free(slaves);
	free(links);
	if (r < 0)
		grove_error_prefix(err, "alternatives group '%s'", g->name);
	return r;
}

static const char *
action_name(enum grove_alt_action a)
{
	switch (a) {
	case GROVE_ALT_INSTALL:
		return "install";
	case GROVE_ALT_REMOVE:
		return "remove";
	case GROVE_ALT_SET:
		return "set";
	case GROVE_ALT_AUTO:
		return "auto";
	default:
		return "?";
	}
}

/* ---- profiles ---- */

static int
strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
profile_opts(const struct apply *ap, const struct prof_step *ps, bool mutate,
	     struct grove_profile_opts *po)
{
	memset(po, 0, sizeof(*po));
	po->state_opt = ap->global ? ap->global->state_dir : NULL;
	po->wait_seconds = ap->global ? ap->global->wait_seconds : 0;
	po->profile = ps->mp->name;
	po->mutate = mutate;
}

/* Whether the profile's current generation already is what the manifest asks (its record: stow
 * dir, packages, options). A build would also notice a package whose contents changed. */
static int
profile_current(const struct apply *ap, struct prof_step *ps, struct grove_error *err)
{
	struct grove_profile_opts po;
	struct grove_profile *p = NULL;
	struct grove_generation *gens = NULL;
	struct grove_root stow = { .fd = -1 };
	size_t n = 0;
	long cur = 0;
	int r;

	profile_opts(ap, ps, false, &po);
	r = grove_root_open(&stow, ps->dir, err);
	if (r < 0)
		return cfg_error(&ps->mp->loc, ap, err, "profile '%s': %s", ps->mp->name, err->msg);
	r = grove_profile_open(&po, &p, NULL, err);
	if (r >= 0)
		r = grove_profile_generations(p, &gens, &n, &cur, err);
	ps->changed = true;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct grove_generation *g = &gens[i];
		bool same = g->complete && g->current && !strcmp(g->stow_dir, stow.real) &&
			    g->no_folding == ps->no_folding && g->dotfiles == ps->dotfiles &&
			    g->n_packages == ps->n;

		for (size_t k = 0; same && k < ps->n; k++)
			same = !strcmp(g->packages[k], ps->pkgs[k]);
		if (same)
			ps->changed = false;
	}
	ps->generation = cur;
	grove_generations_free(gens, n);
	grove_profile_close(p);
	grove_root_release(&stow);
	return r < 0 ? r : 0;
}

static int
plan_profiles(struct apply *ap, struct grove_error *err)
{
	ap->profs = calloc(ap->m.n_profiles + 1, sizeof(*ap->profs));
	if (!ap->profs)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ap->m.n_profiles; i++) {
		const struct grove_manifest_profile *mp = &ap->m.profiles[i];
		struct prof_step *ps;
		struct grove_stow_settings e;
		int r;

		if (!grove_manifest_when_matches(&mp->when, &ap->ctx))
			continue;
		ps = &ap->profs[ap->n_profs++];
		ps->mp = mp;
		if (grove_manifest_effective(&ap->ctx, &ap->m, NULL, NULL, &e) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
		ps->no_folding = (mp->folding >= 0 ? mp->folding : e.folding) == 0;
		ps->dotfiles = (mp->dotfiles >= 0 ? mp->dotfiles : e.dotfiles) > 0;
		if (mp->dir || e.dir)
			ps->dir = resolve(ap, mp->dir ? mp->dir : e.dir);
		grove_stow_settings_release(&e);
		if (!mp->dir && !ps->dir)
			return cfg_error(&mp->loc, ap, err,
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
				memmove(&ps->pkgs[k], &ps->pkgs[k + 1],
					(ps->n - k - 1) * sizeof(char *));
				ps->n--;
				k--;
			}
		r = profile_current(ap, ps, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
run_profile(struct apply *ap, struct prof_step *ps, struct grove_error *err)
{
	struct grove_profile_opts po;
	struct grove_profile *p = NULL;
	struct grove_plan conflicts;
	struct grove_profile_spec spec = {
		.stow_dir = ps->dir,
		.packages = ps->pkgs,
		.n_packages = ps->n,
		.no_folding = ps->no_folding,
		.dotfiles = ps->dotfiles,
		.command = ap->global && ap->global->command_line ? ap->global->command_line
								  : "grove apply",
	};
	long num = 0;
	int r;

	profile_opts(ap, ps, true, &po);
	r = grove_profile_open(&po, &p, NULL, err);
	if (r < 0)
		return r;
	grove_plan_init(&conflicts);
	r = grove_profile_build(p, &spec, &num, &conflicts, err);
	if (r == -GROVE_E_CONFLICT)
		grove_print_conflicts(&conflicts, stderr);
	grove_plan_release(&conflicts);
	grove_profile_close(p);
	if (r < 0)
		return grove_error_prefix(err, "profile '%s'", ps->mp->name);
	ps->changed = num != 0;
	if (num)
		ps->generation = num;
	return 0;
}

/* ---- output ---- */

static void
json_strv(FILE *f, char *const *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		grove_json_str(f, v[i]);
	}
	fputc(']', f);
}

static void
print_diff(const struct tgt *t, FILE *f)
{
	const char *root = t->run.target_root.real;
	const char *sep = strcmp(root, "/") ? "/" : "";

	grove_plan_foreach_op (&t->run.plan, op) {
		switch (op->kind) {
		case GROVE_OP_MKDIR:
			fprintf(f, "+ %s%s%s/\n", root, sep, op->path);
			break;
		case GROVE_OP_LINK:
			fprintf(f, "+ %s%s%s -> %s\n", root, sep, op->path, op->text);
			break;
		case GROVE_OP_UNLINK:
			fprintf(f, "- %s%s%s -> %s\n", root, sep, op->path, op->old_text);
			break;
		case GROVE_OP_RELINK:
			fprintf(f, "- %s%s%s -> %s\n+ %s%s%s -> %s\n", root, sep, op->path,
				op->old_text, root, sep, op->path, op->text);
			break;
		case GROVE_OP_RMDIR:
			fprintf(f, "- %s%s%s/\n", root, sep, op->path);
			break;
		case GROVE_OP_UNFOLD:
			fprintf(f, "- %s%s%s -> %s\n+ %s%s%s/\n", root, sep, op->path, op->old_text,
				root, sep, op->path);
			break;
		case GROVE_OP_FOLD:
			fprintf(f, "- %s%s%s/\n+ %s%s%s -> %s\n", root, sep, op->path, root, sep,
				op->path, op->text);
			break;
		case GROVE_OP_ADOPT:
			fprintf(f, "+ %s%s%s -> %s (file adopted into the package)\n", root, sep,
				op->path, op->text);
			break;
		}
	}
}

static bool
profiles_changed(const struct apply *ap)
{
	for (size_t i = 0; i < ap->n_profs; i++)
		if (ap->profs[i].changed)
			return true;
	return false;
}

static bool
any_change(const struct apply *ap)
{
	for (size_t i = 0; i < ap->n_t; i++)
		if (ap->t[i].run.plan.n_ops)
			return true;
	return profiles_changed(ap) || ap->n_steps > 0;
}

static void
print_json(const struct apply *ap, bool applied)
{
	FILE *f = stdout;

	grove_json_begin(f, "apply");
	fputs(", \"changed\": ", f);
	fputs(any_change(ap) ? "true" : "false", f);
	fprintf(f, ", \"applied\": %s, \"manifest\": ", applied ? "true" : "false");
	grove_json_str(f, ap->manifest_abs ? ap->manifest_abs : ap->manifest_path);
	fputs(", \"host\": ", f);
	grove_json_str(f, ap->ctx.host);
	fputs(", \"tags\": ", f);
	json_strv(f, ap->ctx.tags.v, ap->ctx.tags.n);
	fputs(", \"targets\": [", f);
	for (size_t i = 0; i < ap->n_t; i++) {
		const struct tgt *t = &ap->t[i];

		fputs(i ? ", {\"target\": " : "{\"target\": ", f);
		grove_json_str(f, t->run.target_root.real);
		fputs(", \"dir\": ", f);
		grove_json_str(f, t->run.stow_root.real);
		fprintf(f, ", \"txn\": %lld, \"stow\": ", (long long)t->run.txn);
		json_strv(f, t->run.added, t->run.n_added);
		fputs(", \"unstow\": ", f);
		json_strv(f, t->run.dropped, t->run.n_dropped);
		fputs(", \"ops\": [", f);
		for (size_t k = 0; k < t->run.plan.n_ops; k++) {
			const struct grove_op *op = &t->run.plan.ops[k];

			fputs(k ? ", {\"op\": " : "{\"op\": ", f);
			grove_json_str(f, grove_op_kind_name(op->kind));
			fputs(", \"path\": ", f);
			grove_json_str(f, op->path);
			fputs(", \"old_text\": ", f);
			grove_json_str(f, op->old_text);
			fputs(", \"text\": ", f);
			grove_json_str(f, op->text);
			fputs(", \"package\": ", f);
			grove_json_str(f, op->package);
			fputc('}', f);
		}
		fputs("], \"conflicts\": [", f);
		for (size_t k = 0; k < t->run.plan.n_conflicts; k++) {
			const struct grove_conflict *c = &t->run.plan.conflicts[k];
			char buf[512];

			fputs(k ? ", " : "", f);
			grove_json_conflict(f, c, grove_conflict_hint(c, NULL, buf, sizeof(buf)));
		}
		fputs("]}", f);
	}
	fputs("], \"alternatives\": [", f);
	for (size_t i = 0; i < ap->n_steps; i++) {
		const struct alt_step *st = &ap->steps[i];

		fputs(i ? ", {\"op\": " : "{\"op\": ", f);
		grove_json_str(f, action_name(st->action));
		fputs(", \"group\": ", f);
		grove_json_str(f, st->g->name);
		fputs(", \"path\": ", f);
		grove_json_str(f, st->path);
		if (st->action == GROVE_ALT_INSTALL)
			fprintf(f, ", \"priority\": %d", st->priority);
		fprintf(f, ", \"txn\": %lld}", (long long)st->txn);
	}
	fprintf(f, "], \"profiles\": {\"declared\": %zu, \"changed\": %s, \"list\": [", ap->n_profs,
		profiles_changed(ap) ? "true" : "false");
	for (size_t i = 0; i < ap->n_profs; i++) {
		const struct prof_step *ps = &ap->profs[i];

		fputs(i ? ", {\"name\": " : "{\"name\": ", f);
		grove_json_str(f, ps->mp->name);
		fprintf(f, ", \"changed\": %s, \"number\": %ld, \"packages\": ",
			ps->changed ? "true" : "false", ps->generation);
		json_strv(f, ps->pkgs, ps->n);
		fputc('}', f);
	}
	fputs("]}}\n", f);
}

static void
print_text(const struct apply *ap, bool applied)
{
	size_t n_ops = 0, n_txn = 0, n_gen = 0;

	for (size_t i = 0; i < ap->n_t; i++) {
		const struct tgt *t = &ap->t[i];

		n_ops += t->run.plan.n_ops;
		n_txn += t->run.txn != 0;
		if (!t->run.plan.n_ops)
			continue;
		printf("target %s:", t->run.target_root.real);
		for (size_t k = 0; k < t->run.n_added; k++)
			printf(" +%s", t->run.added[k]);
		for (size_t k = 0; k < t->run.n_dropped; k++)
			printf(" -%s", t->run.dropped[k]);
		printf(" (%zu change%s", t->run.plan.n_ops, t->run.plan.n_ops == 1 ? "" : "s");
		if (t->run.txn)
			printf(", transaction %lld", (long long)t->run.txn);
		puts(")");
		if (ap->a.diff)
			print_diff(t, stdout);
	}
	for (size_t i = 0; i < ap->n_steps; i++) {
		const struct alt_step *st = &ap->steps[i];

		printf("alternatives %s: %s%s%s", st->g->name, action_name(st->action),
		       st->path ? " " : "", st->path ? st->path : "");
		if (st->action == GROVE_ALT_INSTALL)
			printf(" (priority %d)", st->priority);
		if (st->txn)
			printf(" (transaction %lld)", (long long)st->txn);
		putchar('\n');
		n_txn += st->txn != 0;
	}
	for (size_t i = 0; i < ap->n_profs; i++) {
		const struct prof_step *ps = &ap->profs[i];

		if (!ps->changed)
			continue;
		if (applied)
			printf("profile %s: generation %ld is current\n", ps->mp->name,
			       ps->generation);
		else
			printf("profile %s: would build a new generation\n", ps->mp->name);
	}
	for (size_t i = 0; i < ap->n_profs; i++)
		n_gen += ap->profs[i].changed;
	if (!any_change(ap))
		printf("nothing to change: %s is already applied\n", ap->manifest_path);
	else if (applied)
		printf("applied %zu change%s to %zu target%s, %zu alternatives request%s and %zu "
		       "profile generation%s (%zu target transaction%s)\n",
		       n_ops, n_ops == 1 ? "" : "s", ap->n_t, ap->n_t == 1 ? "" : "s", ap->n_steps,
		       ap->n_steps == 1 ? "" : "s", n_gen, n_gen == 1 ? "" : "s", n_txn,
		       n_txn == 1 ? "" : "s");
	else
		printf("would make %zu change%s to links, %zu alternatives request%s and %zu profile "
		       "generation%s\n",
		       n_ops, n_ops == 1 ? "" : "s", ap->n_steps, ap->n_steps == 1 ? "" : "s",
		       n_gen, n_gen == 1 ? "" : "s");
}

/* ---- the command ---- */

static int
load(struct apply *ap, struct grove_error *err)
{
	cleanup_free char *cfg_path =
		grove_user_config_path(getenv("XDG_CONFIG_HOME"), getenv("HOME"));
	const char *env_file = getenv("GROVE_MANIFEST");
	const char *file;
	size_t len;
	int r;

	r = grove_user_config_read(cfg_path, &ap->cfg, err);
	if (r < 0)
		return r;
	/* -f > $GROVE_MANIFEST > config's manifest > ./grove.yaml */
	if (ap->a.file)
		file = ap->a.file;
	else if (env_file && *env_file)
		file = env_file;
	else if (ap->cfg.manifest)
		file = ap->cfg.manifest;
	else
		file = "grove.yaml";
	if (file[0] == '~' && file[1] == '/' && ap->home)
		ap->manifest_path = grove_strdupf("%s%s", ap->home, file + 1);
	else
		ap->manifest_path = strdup(file);
	if (!ap->manifest_path)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (ap->manifest_path[0] != '/') {
		char cwd[4096];

		if (getcwd(cwd, sizeof(cwd)))
			ap->manifest_abs = grove_strdupf("%s/%s", cwd, ap->manifest_path);
	}
	r = grove_manifest_read(ap->manifest_path, &ap->m, err);
	if (r < 0)
		return r;
	len = strrchr(ap->manifest_path, '/')
		      ? (size_t)(strrchr(ap->manifest_path, '/') - ap->manifest_path)
		      : 0;
	ap->base = len ? strndup(ap->manifest_path, len)
		       : strdup(ap->manifest_path[0] == '/' ? "/" : ".");
	if (!ap->base)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (ap->home) {
		cleanup_free char *gi = grove_strdupf("%s/.stow-global-ignore", ap->home);
		size_t gl = 0;

		if (!gi)
			return grove_error_set(err, -ENOMEM, "out of memory");
		r = grove_fs_read_config_file(gi, GLOBAL_IGNORE_MAX, &ap->gi_text, &gl, err);
		if (r < 0)
			return r;
		if (ap->gi_text)
			ap->gi_path = steal_ptr(gi);
	}
	r = build_context(ap, err);
	if (r < 0)
		return r;
	r = select_targets(ap, err);
	if (r < 0)
		return r;
	return check_overlap(ap, err);
}

static void
apply_release(struct apply *ap)
{
	for (size_t i = 0; i < ap->n_t; i++)
		tgt_release(&ap->t[i]);
	free(ap->t);
	for (size_t i = 0; i < ap->n_steps; i++)
		free(ap->steps[i].owned_path);
	free(ap->steps);
	for (size_t i = 0; i < ap->n_profs; i++) {
		free(ap->profs[i].dir);
		free(ap->profs[i].pkgs);
	}
	free(ap->profs);
	grove_manifest_release(&ap->m);
	grove_user_config_release(&ap->cfg);
	grove_apply_context_release(&ap->ctx);
	grove_strlist_release(&ap->a.tags);
	grove_stow_settings_release(&ap->a.flags);
	free(ap->manifest_path);
	free(ap->manifest_abs);
	free(ap->base);
	free(ap->gi_text);
	free(ap->gi_path);
	free(ap->altdir);
	free(ap->admindir);
	free(ap->alt_root);
}

int
grove_cmd_apply(int argc, char **argv, const struct grove_global_opts *global)
{
	struct apply ap = { 0 };
	struct grove_error err = { 0 };
	bool help = false, conflicts = false;
	int status = GROVE_EXIT_OK, r;

	ap.global = global;
	ap.home = getenv("HOME");
	grove_stow_settings_init(&ap.a.flags);
	grove_stow_settings_init(&ap.cfg.defaults);
	grove_apply_context_init(&ap.ctx);
	r = parse_args(argc, argv, &ap.a, &help, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (help) {
		usage(stdout);
		goto out;
	}
	ap.a.json = ap.a.json || (global && global->json);
	ap.a.check = ap.a.check || (global && global->dry_run);
	r = load(&ap, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}

	/* Plan every target (locked, unless only checking) before changing any. */
	for (size_t i = 0; i < ap.n_t; i++) {
		struct tgt *t = &ap.t[i];
		struct grove_apply_target at = {
			.dir = t->dir,
			.target = t->target,
			.pkgs = t->pkgs,
			.n_pkgs = t->n_pkgs,
			.command = global && global->command_line ? global->command_line
								  : "grove apply",
			.global_ignore_text = ap.gi_text,
			.global_ignore_source = ap.gi_path,
		};

		r = grove_apply_prepare(&at, global ? global->state_dir : NULL,
					global ? global->wait_seconds : 0, !ap.a.check, &t->run,
					&err);
		if (r == -GROVE_E_BADINPUT) {
			/* A package the stow dir lacks is the manifest's mistake. */
			char msg[GROVE_ERROR_MSG_MAX];

			const struct grove_manifest_loc *loc = &t->mt->loc;

			snprintf(msg, sizeof(msg), "%s", err.msg);
			/* Point at the package the message names, when it is one of ours. */
			for (size_t k = 0; k < t->mt->n_pkgs; k++) {
				cleanup_free char *q =
					grove_strdupf("package '%s'", t->mt->pkgs[k].name);

				if (q && strstr(msg, q))
					loc = &t->mt->pkgs[k].loc;
			}
			r = cfg_error(loc, &ap, &err, "target '%s': %s", t->mt->path, msg);
		}
		if (r < 0) {
			status = grove_report_error(&err, r);
			goto out;
		}
		t->prepared = true;
		if (t->run.recovered)
			fprintf(stderr, "grove: rolled back interrupted transaction %lld first\n",
				(long long)t->run.recovered);
		for (size_t k = 0; k < t->run.plan.n_warnings; k++)
			grove_print_warning(stderr, t->run.plan.warnings[k], false);
		if (t->run.plan.n_conflicts) {
			fprintf(stderr, "grove: target '%s':\n", t->run.target_root.real);
			grove_print_conflicts(&t->run.plan, stderr);
			conflicts = true;
		}
	}
	if (conflicts) {
		/* The document lists every target's conflicts, so a script need not read stderr. */
		if (ap.a.json)
			print_json(&ap, false);
		status = GROVE_EXIT_REFUSED;
		goto out;
	}
	r = plan_alternatives(&ap, &err);
	if (r >= 0)
		r = plan_profiles(&ap, &err);
	if (r < 0) {
		status = grove_report_error(&err, r);
		goto out;
	}
	if (ap.a.check) {
		if (ap.a.json)
			print_json(&ap, false);
		else
			print_text(&ap, false);
		status = any_change(&ap) ? GROVE_EXIT_REFUSED : GROVE_EXIT_OK;
		goto out;
	}
	/*
	 * One transaction per target, in manifest order. Each is all or nothing;
	 * a failure stops the run, and the targets already applied stay so (each
	 * undoable on its own with `grove undo -t TARGET`).
	 */
	for (size_t i = 0; i < ap.n_t; i++) {
		r = grove_apply_execute(&ap.t[i].run, &err);
		if (r < 0) {
			status = grove_report_error(&err, r);
			for (size_t k = 0; k < i; k++)
				if (ap.t[k].run.txn)
					fprintf(stderr,
						"grove: target '%s' was applied (transaction %lld)\n",
						ap.t[k].run.target_root.real,
						(long long)ap.t[k].run.txn);
			goto out;
		}
	}
	for (size_t i = 0; i < ap.n_steps; i++) {
		r = run_step(&ap, &ap.steps[i], &err);
		if (r < 0) {
			status = grove_report_error(&err, r);
			goto out;
		}
	}
	for (size_t i = 0; i < ap.n_profs; i++) {
		r = run_profile(&ap, &ap.profs[i], &err);
		if (r < 0) {
			status = grove_report_error(&err, r);
			goto out;
		}
	}
	if (ap.a.json)
		print_json(&ap, true);
	else
		print_text(&ap, true);
out:
	apply_release(&ap);
	if (fflush(stdout) != 0 && status == GROVE_EXIT_OK) {
		fprintf(stderr, "grove: write standard output: %s\n", grove_strerror(-errno));
		status = GROVE_EXIT_REFUSED;
	}
	return status;
}
