/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove.yaml and config.yaml: the YAML tree checked against the schema of docs/manifest.md into
 * requests, every error naming FILE:LINE:COLUMN. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"
#include "grove/ignore.h"
#include "grove/manifest.h"
#include "grove/path.h"
#include "grove/profile.h"
#include "grove/stow.h"
#include "manifest_yaml.h"
#include "base/util.h"

#include "banned.h" /* last */

struct mctx {
	const char *file;
	struct grove_error *err;
};

static int __attribute__((format(printf, 3, 4)))
bad(const struct mctx *c, const struct grove_ynode *n, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!n)
		return grove_error_set(c->err, -GROVE_E_CONFIG, "%s: %s", c->file, what);
	return grove_error_set(c->err, -GROVE_E_CONFIG, "%s:%u:%u: %s", c->file, n->line, n->col,
			       what);
}

static int
oom(const struct mctx *c)
{
	return grove_error_set(c->err, -ENOMEM, "out of memory");
}

static const char *
kind_name(const struct grove_ynode *n)
{
	switch (n->kind) {
	case GROVE_Y_SCALAR:
		return n->plain && (!strcmp(n->str, "") || !strcmp(n->str, "~") ||
				    !strcmp(n->str, "null") || !strcmp(n->str, "Null") ||
				    !strcmp(n->str, "NULL"))
			       ? "null"
			       : "a scalar";
	case GROVE_Y_SEQ:
		return "a list";
	default:
		return "a mapping";
	}
}

static struct grove_manifest_loc
loc_of(const struct grove_ynode *n)
{
	struct grove_manifest_loc l = { n->line, n->col };
	return l;
}

/* ---- scalars ---- */

static int
get_str(const struct mctx *c, const struct grove_ynode *n, const char *what, char **ret)
{
	char *s;

	/* A plain "~" is YAML's null, but in a manifest it means the home
	 * folder, as in a shell: take it as the string "~". */
	if (n->kind != GROVE_Y_SCALAR ||
	    (!strcmp(kind_name(n), "null") && strcmp(n->str, "~") != 0))
		return bad(c, n, "%s must be a string, not %s", what, kind_name(n));
	if (!n->str[0])
		return bad(c, n, "%s must not be empty", what);
	if (!(s = strdup(n->str)))
		return oom(c);
	free(*ret);
	*ret = s;
	return 0;
}

static int
get_bool(const struct mctx *c, const struct grove_ynode *n, const char *what, int *ret)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes",
					   "YES",  "on",   "On",   "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No",
					  "NO",    "off",   "Off",   "OFF" };

	if (n->kind == GROVE_Y_SCALAR && n->plain) {
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (!strcmp(n->str, yes[i])) {
				*ret = 1;
				return 0;
			}
			if (!strcmp(n->str, no[i])) {
				*ret = 0;
				return 0;
			}
		}
	}
	if (n->kind == GROVE_Y_SCALAR)
		return bad(c, n, "%s must be true or false, not '%s'", what, n->str);
	return bad(c, n, "%s must be true or false, not %s", what, kind_name(n));
}

static int
get_int(const struct mctx *c, const struct grove_ynode *n, const char *what, int *ret)
{
	char *end = NULL;
	long v;

	if (n->kind != GROVE_Y_SCALAR || !n->plain || !n->str[0])
		return bad(c, n, "%s must be a whole number, not %s", what, kind_name(n));
	errno = 0;
	v = strtol(n->str, &end, 10);
	if (*end || errno || v < INT_MIN || v > INT_MAX)
		return bad(c, n, "%s must be a whole number, not '%s'", what, n->str);
	*ret = (int)v;
	return 0;
}

/* A list of strings; "check" (may be NULL) validates each. */
static int
get_strlist(const struct mctx *c, const struct grove_ynode *n, const char *what,
	    int (*check)(const struct mctx *, const struct grove_ynode *, const char *),
	    struct grove_strlist *ret)
{
	if (n->kind != GROVE_Y_SEQ)
		return bad(c, n, "%s must be a list, not %s", what, kind_name(n));
	for (size_t i = 0; i < n->n; i++) {
		const struct grove_ynode *k = n->kids[i];
		struct grove_manifest_loc l = loc_of(k);
		int r;

		if (k->kind != GROVE_Y_SCALAR || !strcmp(kind_name(k), "null") || !k->str[0])
			return bad(c, k, "each item of %s must be a non-empty string, not %s", what,
				   kind_name(k));
		if (check && (r = check(c, k, what)) < 0)
			return r;
		if (grove_strlist_add(ret, k->str, &l) < 0)
			return oom(c);
	}
	return 0;
}

static int
check_regex(const struct mctx *c, const struct grove_ynode *n, const char *what)
{
	struct grove_pattern_set *set = grove_pattern_set_new(GROVE_ANCHOR_END);
	struct grove_error e = { 0 };
	int r;

	if (!set)
		return oom(c);
	r = grove_pattern_set_add(set, n->str, &e);
	grove_pattern_set_free(set);
	if (r < 0)
		return bad(c, n, "%s: %s", what, e.msg);
	return 0;
}

static int
check_pkg_name(const struct mctx *c, const struct grove_ynode *n, const char *what)
{
	struct grove_error e = { 0 };

	if (grove_stow_check_package(n->str, &e) < 0)
		return bad(c, n, "%s", e.msg);
	return 0;
}

/* ---- mappings ---- */

/* Calls fn for each key of map; an unknown key is refused naming the keys allowed. */
/* NOLINTBEGIN(bugprone-macro-parentheses): keyvar and valvar are names being declared */
#define MAP_EACH(c, map, what, keyvar, valvar)                                            \
	if ((map)->kind != GROVE_Y_MAP)                                                   \
		return bad(c, map, "%s must be a mapping, not %s", what, kind_name(map)); \
	for (size_t i_ = 0; i_ + 1 < (map)->n; i_ += 2)                                   \
		for (const struct grove_ynode *keyvar = (map)->kids[i_],                  \
					      *valvar = (map)->kids[i_ + 1];              \
		     keyvar; keyvar = NULL)
/* NOLINTEND(bugprone-macro-parentheses) */

static int
unknown(const struct mctx *c, const struct grove_ynode *key, const char *what, const char *allowed)
{
	return bad(c, key, "unknown key '%s' in %s (known: %s)", key->str, what, allowed);
}

/* A stow option key at any level; 1 if key was one, 0 if not, negative on error. */
static int
stow_option(const struct mctx *c, const struct grove_ynode *key, const struct grove_ynode *val,
	    struct grove_stow_settings *s)
{
	const char *k = key->str;
	int r;

	if (!strcmp(k, "folding"))
		r = get_bool(c, val, "'folding'", &s->folding);
	else if (!strcmp(k, "no-folding")) {
		int v = 0;

		r = get_bool(c, val, "'no-folding'", &v);
		if (r == 0)
			s->folding = !v;
	} else if (!strcmp(k, "dotfiles"))
		r = get_bool(c, val, "'dotfiles'", &s->dotfiles);
	else if (!strcmp(k, "adopt"))
		r = get_bool(c, val, "'adopt'", &s->adopt);
	else if (!strcmp(k, "ignore"))
		r = get_strlist(c, val, "'ignore'", check_regex, &s->ignore);
	else if (!strcmp(k, "defer"))
		r = get_strlist(c, val, "'defer'", check_regex, &s->defer);
	else if (!strcmp(k, "override"))
		r = get_strlist(c, val, "'override'", check_regex, &s->override);
	else
		return 0;
	return r < 0 ? r : 1;
}

#define STOW_KEYS "folding, no-folding, dotfiles, adopt, ignore, defer, override"

static int
when_option(const struct mctx *c, const struct grove_ynode *key, const struct grove_ynode *val,
	    struct grove_manifest_when *w)
{
	int r;

	if (!strcmp(key->str, "hosts"))
		r = get_strlist(c, val, "'hosts'", NULL, &w->hosts);
	else if (!strcmp(key->str, "tags"))
		r = get_strlist(c, val, "'tags'", NULL, &w->tags);
	else
		return 0;
	return r < 0 ? r : 1;
}

static int
parse_defaults(const struct mctx *c, const struct grove_ynode *map, struct grove_stow_settings *s)
{
	int r;

	MAP_EACH(c, map, "'defaults'", key, val)
	{
		if (!strcmp(key->str, "dir"))
			r = get_str(c, val, "'dir'", &s->dir);
		else if ((r = stow_option(c, key, val, s)) == 0)
			return unknown(c, key, "'defaults'", "dir, " STOW_KEYS);
		if (r < 0)
			return r;
	}
	return 0;
}

static void
when_release(struct grove_manifest_when *w)
{
	grove_strlist_release(&w->hosts);
	grove_strlist_release(&w->tags);
}

static void
pkg_release(struct grove_manifest_pkg *p)
{
	free(p->name);
	when_release(&p->when);
	grove_stow_settings_release(&p->opts);
}

static int
parse_pkg(const struct mctx *c, const struct grove_ynode *n, struct grove_manifest_pkg *p)
{
	int r;

	grove_stow_settings_init(&p->opts);
	p->loc = loc_of(n);
	if (n->kind == GROVE_Y_SCALAR) {
		if ((r = get_str(c, n, "a package", &p->name)) < 0)
			return r;
		return check_pkg_name(c, n, "package");
	}
	MAP_EACH(c, n, "a package", key, val)
	{
		if (!strcmp(key->str, "name")) {
			if ((r = get_str(c, val, "'name'", &p->name)) < 0 ||
			    (r = check_pkg_name(c, val, "package")) < 0)
				return r;
			p->loc = loc_of(val);
		} else if ((r = when_option(c, key, val, &p->when)) == 0 &&
			   (r = stow_option(c, key, val, &p->opts)) == 0) {
			return unknown(c, key, "a package", "name, hosts, tags, " STOW_KEYS);
		}
		if (r < 0)
			return r;
	}
	if (!p->name)
		return bad(c, n, "a package needs a 'name'");
	return 0;
}

static void
target_release(struct grove_manifest_target *t)
{
	free(t->path);
	when_release(&t->when);
	grove_stow_settings_release(&t->opts);
	for (size_t i = 0; i < t->n_pkgs; i++)
		pkg_release(&t->pkgs[i]);
	free(t->pkgs);
}

static int
parse_target(const struct mctx *c, const struct grove_ynode *n, struct grove_manifest_target *t)
{
	const struct grove_ynode *pk = NULL;
	int r;

	grove_stow_settings_init(&t->opts);
	t->loc = loc_of(n);
	MAP_EACH(c, n, "a target", key, val)
	{
		if (!strcmp(key->str, "path")) {
			r = get_str(c, val, "'path'", &t->path);
		} else if (!strcmp(key->str, "dir")) {
			r = get_str(c, val, "'dir'", &t->opts.dir);
		} else if (!strcmp(key->str, "packages")) {
			if (val->kind != GROVE_Y_SEQ &&
			    !(val->kind == GROVE_Y_SCALAR && !strcmp(kind_name(val), "null")))
				return bad(c, val, "'packages' must be a list, not %s",
					   kind_name(val));
			pk = val;
			r = 0;
		} else if ((r = when_option(c, key, val, &t->when)) == 0 &&
			   (r = stow_option(c, key, val, &t->opts)) == 0) {
			return unknown(c, key, "a target",
				       "path, dir, packages, hosts, tags, " STOW_KEYS);
		}
		if (r < 0)
			return r;
	}
	if (!t->path)
		return bad(c, n, "a target needs a 'path'");
	if (pk && pk->kind == GROVE_Y_SEQ && pk->n) {
		t->pkgs = calloc(pk->n, sizeof(*t->pkgs));
		if (!t->pkgs)
			return oom(c);
		for (size_t i = 0; i < pk->n; i++) {
			t->n_pkgs++;
			if ((r = parse_pkg(c, pk->kids[i], &t->pkgs[i])) < 0)
				return r;
			for (size_t j = 0; j < i; j++)
				if (!strcmp(t->pkgs[j].name, t->pkgs[i].name))
					return bad(c, pk->kids[i],
						   "package '%s' is listed twice in target '%s' "
						   "(first at line %u)",
						   t->pkgs[i].name, t->path, t->pkgs[j].loc.line);
		}
	}
	return 0;
}

static int
parse_followers_list(const struct mctx *c, const struct grove_ynode *n,
		     struct grove_manifest_alt_group *g)
{
	int r;

	if (n->kind != GROVE_Y_SEQ)
		return bad(c, n, "'followers' must be a list, not %s", kind_name(n));
	g->followers = calloc(n->n ? n->n : 1, sizeof(*g->followers));
	if (!g->followers)
		return oom(c);
	for (size_t i = 0; i < n->n; i++) {
		struct grove_manifest_alt_follower *f = &g->followers[i];

		g->n_followers++;
		f->loc = loc_of(n->kids[i]);
		MAP_EACH(c, n->kids[i], "a follower", key, val)
		{
			if (!strcmp(key->str, "name"))
				r = get_str(c, val, "'name'", &f->name);
			else if (!strcmp(key->str, "link"))
				r = get_str(c, val, "'link'", &f->path);
			else
				return unknown(c, key, "a follower", "name, link");
			if (r < 0)
				return r;
		}
		if (!f->name || !f->path)
			return bad(c, n->kids[i], "a follower needs a 'name' and a 'link'");
		if (!grove_alt_name_ok(f->name))
			return bad(c, n->kids[i], "invalid follower name '%s'", f->name);
		if (f->path[0] != '/')
			return bad(c, n->kids[i], "follower link '%s' must be an absolute path",
				   f->path);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(g->followers[j].name, f->name))
				return bad(c, n->kids[i], "follower '%s' is listed twice", f->name);
	}
	return 0;
}

static int
parse_choice(const struct mctx *c, const struct grove_ynode *n,
	     struct grove_manifest_alt_choice *ch)
{
	bool has_prio = false;
	int r;

	ch->loc = loc_of(n);
	MAP_EACH(c, n, "a choice", key, val)
	{
		if (!strcmp(key->str, "path")) {
			r = get_str(c, val, "'path'", &ch->path);
		} else if (!strcmp(key->str, "priority")) {
			r = get_int(c, val, "'priority'", &ch->priority);
			has_prio = true;
		} else if (!strcmp(key->str, "followers")) {
			if (val->kind != GROVE_Y_MAP)
				return bad(c, val,
					   "a choice's 'followers' must be a mapping, not %s",
					   kind_name(val));
			for (size_t j = 0; j + 1 < val->n; j += 2) {
				const struct grove_ynode *fk = val->kids[j], *fv = val->kids[j + 1];
				struct grove_manifest_alt_follower *nf =
					realloc(ch->followers, (ch->n_followers + 1) * sizeof(*nf));

				if (!nf)
					return oom(c);
				ch->followers = nf;
				nf = &ch->followers[ch->n_followers++];
				memset(nf, 0, sizeof(*nf));
				nf->loc = loc_of(fk);
				if (!(nf->name = strdup(fk->str)))
					return oom(c);
				if ((r = get_str(c, fv, "a follower's file", &nf->path)) < 0)
					return r;
				if (nf->path[0] != '/')
					return bad(c, fv,
						   "follower file '%s' must be an absolute path",
						   nf->path);
			}
			r = 0;
		} else {
			return unknown(c, key, "a choice", "path, priority, followers");
		}
		if (r < 0)
			return r;
	}
	if (!ch->path)
		return bad(c, n, "a choice needs a 'path'");
	if (!has_prio)
		return bad(c, n, "choice '%s' needs a 'priority'", ch->path);
	if (ch->path[0] != '/')
		return bad(c, n, "choice path '%s' must be an absolute path", ch->path);
	return 0;
}

static void
group_release(struct grove_manifest_alt_group *g)
{
	free(g->name);
	free(g->link);
	free(g->choice);
	when_release(&g->when);
	for (size_t i = 0; i < g->n_followers; i++) {
		free(g->followers[i].name);
		free(g->followers[i].path);
	}
	free(g->followers);
	for (size_t i = 0; i < g->n_choices; i++) {
		free(g->choices[i].path);
		for (size_t k = 0; k < g->choices[i].n_followers; k++) {
			free(g->choices[i].followers[k].name);
			free(g->choices[i].followers[k].path);
		}
		free(g->choices[i].followers);
	}
	free(g->choices);
}

static int
parse_group(const struct mctx *c, const struct grove_ynode *n, struct grove_manifest_alt_group *g)
{
	const struct grove_ynode *mode = NULL, *choice = NULL;
	int r;

	g->loc = loc_of(n);
	MAP_EACH(c, n, "an alternatives group", key, val)
	{
		if (!strcmp(key->str, "name")) {
			r = get_str(c, val, "'name'", &g->name);
		} else if (!strcmp(key->str, "link")) {
			r = get_str(c, val, "'link'", &g->link);
		} else if (!strcmp(key->str, "followers")) {
			r = parse_followers_list(c, val, g);
		} else if (!strcmp(key->str, "choices")) {
			if (val->kind != GROVE_Y_SEQ)
				return bad(c, val, "'choices' must be a list, not %s",
					   kind_name(val));
			g->choices = calloc(val->n ? val->n : 1, sizeof(*g->choices));
			if (!g->choices)
				return oom(c);
			r = 0;
			for (size_t i = 0; i < val->n && r == 0; i++) {
				g->n_choices++;
				r = parse_choice(c, val->kids[i], &g->choices[i]);
				for (size_t j = 0; j < i && r == 0; j++)
					if (!strcmp(g->choices[j].path, g->choices[i].path))
						r = bad(c, val->kids[i],
							"choice '%s' is listed twice",
							g->choices[i].path);
			}
		} else if (!strcmp(key->str, "mode")) {
			mode = val;
			if (val->kind != GROVE_Y_SCALAR ||
			    (strcmp(val->str, "auto") != 0 && strcmp(val->str, "manual") != 0))
				return bad(c, val, "'mode' must be auto or manual");
			g->manual = !strcmp(val->str, "manual");
			r = 0;
		} else if (!strcmp(key->str, "choice")) {
			choice = val;
			g->choice_loc = loc_of(val);
			r = get_str(c, val, "'choice'", &g->choice);
		} else if ((r = when_option(c, key, val, &g->when)) == 0) {
			return unknown(c, key, "an alternatives group",
				       "name, link, followers, choices, mode, choice, hosts, tags");
		}
		if (r < 0)
			return r;
	}
	if (!g->name || !g->link)
		return bad(c, n, "an alternatives group needs a 'name' and a 'link'");
	if (!grove_alt_name_ok(g->name))
		return bad(c, n, "invalid alternatives group name '%s'", g->name);
	if (g->link[0] != '/')
		return bad(c, n, "group '%s': link '%s' must be an absolute path", g->name,
			   g->link);
	if (!g->n_choices)
		return bad(c, n, "group '%s' needs at least one choice", g->name);
	if (choice && !mode) {
		g->manual = true; /* a choice alone means manual */
	}
	if (g->manual && !g->choice)
		return bad(c, mode, "group '%s': mode manual needs a 'choice'", g->name);
	if (!g->manual && g->choice)
		return bad(c, choice, "group '%s': 'choice' is only for mode manual", g->name);
	if (g->choice) {
		bool found = false;

		for (size_t i = 0; i < g->n_choices && !found; i++)
			found = !strcmp(g->choices[i].path, g->choice);
		if (!found)
			return bad(c, choice, "group '%s': choice '%s' is not one of its choices",
				   g->name, g->choice);
	}
	for (size_t i = 0; i < g->n_choices; i++) {
		const struct grove_manifest_alt_choice *ch = &g->choices[i];

		for (size_t k = 0; k < ch->n_followers; k++) {
			bool found = false;

			for (size_t j = 0; j < g->n_followers && !found; j++)
				found = !strcmp(g->followers[j].name, ch->followers[k].name);
			if (!found) {
				struct grove_ynode at = { .line = ch->followers[k].loc.line,
							  .col = ch->followers[k].loc.col };

				return bad(c, &at,
					   "group '%s' has no follower '%s' (declare it in the "
					   "group's 'followers')",
					   g->name, ch->followers[k].name);
			}
		}
	}
	return 0;
}

static int
parse_alternatives(const struct mctx *c, const struct grove_ynode *n, struct grove_manifest *m)
{
	int r;

	MAP_EACH(c, n, "'alternatives'", key, val)
	{
		if (!strcmp(key->str, "altdir")) {
			r = get_str(c, val, "'altdir'", &m->altdir);
		} else if (!strcmp(key->str, "admindir")) {
			r = get_str(c, val, "'admindir'", &m->admindir);
		} else if (!strcmp(key->str, "root")) {
			r = get_str(c, val, "'root'", &m->alt_root);
		} else if (!strcmp(key->str, "groups")) {
			if (val->kind != GROVE_Y_SEQ)
				return bad(c, val, "'groups' must be a list, not %s",
					   kind_name(val));
			m->groups = calloc(val->n ? val->n : 1, sizeof(*m->groups));
			if (!m->groups)
				return oom(c);
			r = 0;
			for (size_t i = 0; i < val->n && r == 0; i++) {
				m->n_groups++;
				r = parse_group(c, val->kids[i], &m->groups[i]);
				for (size_t j = 0; j < i && r == 0; j++)
					if (!strcmp(m->groups[j].name, m->groups[i].name))
						r = bad(c, val->kids[i],
							"alternatives group '%s' is listed twice",
							m->groups[i].name);
			}
		} else {
			return unknown(c, key, "'alternatives'", "altdir, admindir, root, groups");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static void
profile_release(struct grove_manifest_profile *p)
{
	free(p->name);
	free(p->dir);
	when_release(&p->when);
	grove_strlist_release(&p->pkgs);
}

static int
parse_profile(const struct mctx *c, const struct grove_ynode *n, struct grove_manifest_profile *p)
{
	int r;

	p->loc = loc_of(n);
	p->folding = p->dotfiles = -1;
	MAP_EACH(c, n, "a profile", key, val)
	{
		if (!strcmp(key->str, "name"))
			r = get_str(c, val, "'name'", &p->name);
		else if (!strcmp(key->str, "dir"))
			r = get_str(c, val, "'dir'", &p->dir);
		else if (!strcmp(key->str, "packages"))
			r = get_strlist(c, val, "'packages'", check_pkg_name, &p->pkgs);
		else if (!strcmp(key->str, "folding"))
			r = get_bool(c, val, "'folding'", &p->folding);
		else if (!strcmp(key->str, "no-folding")) {
			int v = 0;

			r = get_bool(c, val, "'no-folding'", &v);
			p->folding = !v;
		} else if (!strcmp(key->str, "dotfiles"))
			r = get_bool(c, val, "'dotfiles'", &p->dotfiles);
		else if ((r = when_option(c, key, val, &p->when)) == 0)
			return unknown(c, key, "a profile",
				       "name, dir, packages, folding, no-folding, dotfiles, hosts, "
				       "tags");
		if (r < 0)
			return r;
	}
	if (!p->name)
		return bad(c, n, "a profile needs a 'name'");
	if (strchr(p->name, '/') || !strcmp(p->name, ".") || !strcmp(p->name, ".."))
		return bad(c, n, "invalid profile name '%s'", p->name);
	{
		struct grove_error e = { 0 };

		/* What grove profile would refuse later is refused here, with a position. */
		if (grove_profile_check_name(p->name, &e) < 0)
			return bad(c, n, "invalid %s", e.msg);
	}
	return 0;
}

static int
parse_list_of(const struct mctx *c, const struct grove_ynode *n, const char *what, void **ret_v,
	      size_t *ret_n, size_t elem)
{
	if (n->kind != GROVE_Y_SEQ)
		return bad(c, n, "%s must be a list, not %s", what, kind_name(n));
	*ret_v = calloc(n->n ? n->n : 1, elem);
	if (!*ret_v)
		return oom(c);
	return 0;
}

void
grove_manifest_release(struct grove_manifest *m)
{
	if (!m)
		return;
	free(m->file);
	grove_strlist_release(&m->tags);
	grove_stow_settings_release(&m->defaults);
	for (size_t i = 0; i < m->n_targets; i++)
		target_release(&m->targets[i]);
	free(m->targets);
	free(m->altdir);
	free(m->admindir);
	free(m->alt_root);
	for (size_t i = 0; i < m->n_groups; i++)
		group_release(&m->groups[i]);
	free(m->groups);
	for (size_t i = 0; i < m->n_profiles; i++)
		profile_release(&m->profiles[i]);
	free(m->profiles);
	memset(m, 0, sizeof(*m));
}

static int
parse_manifest(const struct mctx *c, const struct grove_ynode *root, struct grove_manifest *m)
{
	int r;

	if (!root)
		return 0;
	MAP_EACH(c, root, "the manifest", key, val)
	{
		if (!strcmp(key->str, "version")) {
			int v = 0;

			if ((r = get_int(c, val, "'version'", &v)) < 0)
				return r;
			if (v != 1)
				return bad(c, val,
					   "unknown manifest version %d (this grove knows 1)", v);
		} else if (!strcmp(key->str, "tags")) {
			r = get_strlist(c, val, "'tags'", NULL, &m->tags);
		} else if (!strcmp(key->str, "defaults")) {
			r = parse_defaults(c, val, &m->defaults);
		} else if (!strcmp(key->str, "targets")) {
			r = parse_list_of(c, val, "'targets'", (void **)&m->targets, &m->n_targets,
					  sizeof(*m->targets));
			for (size_t i = 0; r == 0 && i < val->n; i++) {
				m->n_targets++;
				r = parse_target(c, val->kids[i], &m->targets[i]);
				for (size_t j = 0; j < i && r == 0; j++) {
					cleanup_free char *a = grove_path_canon(m->targets[j].path);
					cleanup_free char *b = grove_path_canon(m->targets[i].path);

					if (!a || !b)
						return oom(c);
					if (!strcmp(a, b) && !(m->targets[i].when.hosts.n ||
							       m->targets[i].when.tags.n ||
							       m->targets[j].when.hosts.n ||
							       m->targets[j].when.tags.n))
						r = bad(c, val->kids[i],
							"target '%s' is listed twice (first at line "
							"%u)",
							m->targets[i].path, m->targets[j].loc.line);
				}
			}
		} else if (!strcmp(key->str, "alternatives")) {
			r = parse_alternatives(c, val, m);
		} else if (!strcmp(key->str, "profiles")) {
			r = parse_list_of(c, val, "'profiles'", (void **)&m->profiles,
					  &m->n_profiles, sizeof(*m->profiles));
			for (size_t i = 0; r == 0 && i < val->n; i++) {
				m->n_profiles++;
				r = parse_profile(c, val->kids[i], &m->profiles[i]);
				for (size_t j = 0; j < i && r == 0; j++)
					if (!strcmp(m->profiles[j].name, m->profiles[i].name))
						r = bad(c, val->kids[i],
							"profile '%s' is listed twice",
							m->profiles[i].name);
			}
		} else {
			return unknown(c, key, "the manifest",
				       "version, tags, defaults, targets, alternatives, profiles");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int
grove_manifest_parse(const char *buf, size_t len, const char *file, struct grove_manifest *ret,
		     struct grove_error *err)
{
	struct mctx c = { .file = file ? file : "grove.yaml", .err = err };
	struct grove_manifest m = { 0 };
	struct grove_ynode *root = NULL;
	int r;

	grove_stow_settings_init(&m.defaults);
	r = grove_yaml_load(buf, len, c.file, &root, err);
	if (r < 0)
		return r;
	if (!(m.file = strdup(c.file)))
		r = oom(&c);
	else
		r = parse_manifest(&c, root, &m);
	grove_ynode_free(root);
	if (r < 0) {
		grove_manifest_release(&m);
		return r;
	}
	*ret = m;
	return 0;
}

/* ---- the user's config.yaml ---- */

void
grove_user_config_release(struct grove_user_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->file);
	free(cfg->manifest);
	free(cfg->host);
	grove_strlist_release(&cfg->tags);
	grove_stow_settings_release(&cfg->defaults);
	memset(cfg, 0, sizeof(*cfg));
	grove_stow_settings_init(&cfg->defaults);
}

int
grove_user_config_parse(const char *buf, size_t len, const char *file,
			struct grove_user_config *ret, struct grove_error *err)
{
	struct mctx c = { .file = file ? file : "config.yaml", .err = err };
	struct grove_user_config cfg = { 0 };
	struct grove_ynode *root = NULL;
	int r = 0;

	grove_stow_settings_init(&cfg.defaults);
	r = grove_yaml_load(buf, len, c.file, &root, err);
	if (r < 0)
		return r;
	if (!(cfg.file = strdup(c.file))) {
		r = oom(&c);
		goto out;
	}
	if (!root)
		goto out;
	if (root->kind != GROVE_Y_MAP) {
		r = bad(&c, root, "the configuration must be a mapping, not %s", kind_name(root));
		goto out;
	}
	for (size_t i = 0; i + 1 < root->n && r == 0; i += 2) {
		const struct grove_ynode *key = root->kids[i], *val = root->kids[i + 1];

		if (!strcmp(key->str, "manifest"))
			r = get_str(&c, val, "'manifest'", &cfg.manifest);
		else if (!strcmp(key->str, "host"))
			r = get_str(&c, val, "'host'", &cfg.host);
		else if (!strcmp(key->str, "tags"))
			r = get_strlist(&c, val, "'tags'", NULL, &cfg.tags);
		else if (!strcmp(key->str, "defaults"))
			r = parse_defaults(&c, val, &cfg.defaults);
		else
			r = unknown(&c, key, "the configuration", "manifest, host, tags, defaults");
	}
out:
	grove_ynode_free(root);
	if (r < 0) {
		grove_user_config_release(&cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}
