/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a farm GNU Stow made looks like to grove: the links to record (`grove import`) and how
 * much of each package the target reaches (`grove status`), both read from the scanned world. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "planner_int.h"
#include "base/util.h"

#include "banned.h" /* last */

static bool
named(char *const *pkgs, size_t n, const char *pkg)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(pkgs[i], pkg) == 0)
			return true;
	return false;
}

/*
 * The link k at target path `path`: Stow's own (its text, joined to its folder, lands in a
 * package of the stow dir: find_stowed_path) whose destination exists and whose package is
 * named becomes a recorded LINK; one into another package, or to nothing, is a warning.
 */
static void
import_link(struct planner *p, const struct grove_node *k, const char *path, char *const *pkgs,
	    size_t n_pkgs)
{
	cleanup_free char *pkg = NULL;
	cleanup_free char *dest = grove_view_find_stowed_path(p, path, k->orig_link, &pkg);

	if (!dest)
		return; /* not Stow's: absolute, or pointing elsewhere */
	/* The package '.' (the stow dir itself) lands each entry at its own path; a package X's
	 * lands at X/path, one name deeper. */
	if (grove_path_lands_as(path, grove_path_strip_prefix(dest, p->w->stow_path))) {
		free(pkg);
		if (!(pkg = strdup(GROVE_STOW_DIR_PACKAGE))) {
			oom(p);
			return;
		}
	}
	if (!named(pkgs, n_pkgs, pkg))
		grove_view_warningf(p,
				    "not imported: '%s' links into package '%s', which is not "
				    "being imported",
				    path, pkg);
	else if (!grove_view_stow_exists(p, dest))
		grove_view_warningf(p, "not imported: '%s' links to '%s', which does not exist",
				    path, k->orig_link);
	else if (grove_plan_add_recorded(p->plan, GROVE_OP_LINK, path, k->orig_link, pkg) < 0)
		oom(p);
}

/*
 * Every link in the scanned folders beneath dir (target path tpath), by import_link. Folders
 * are entered only where the scan listed them (where a named package has a folder), so a
 * folded folder is the one link to it.
 */
static void
import_dir(struct planner *p, struct grove_node *dir, const char *tpath, char *const *pkgs,
	   size_t n_pkgs)
{
	cleanup_free struct grove_node **kids = grove_node_sorted_kids(dir);

	if (!kids) {
		oom(p);
		return;
	}
	for (struct grove_node **k = kids; *k && !p->rc; k++) {
		cleanup_free char *path = grove_child_path(tpath, (*k)->name);

		if (!path) {
			oom(p);
			return;
		}
		if ((*k)->orig_type == GROVE_FT_DIR && (*k)->listed)
			import_dir(p, *k, path, pkgs, n_pkgs);
		else if ((*k)->orig_type == GROVE_FT_LINK)
			import_link(p, *k, path, pkgs, n_pkgs);
	}
}

int
grove_planner_import(struct grove_world *w, char *const *pkgs, size_t n_pkgs,
		     struct grove_plan *plan, struct grove_error *err)
{
	struct grove_plan_opts none = { 0 };
	struct planner p = { .w = w, .o = &none, .plan = plan, .err = err, .action = "import" };

	import_dir(&p, w->target, "", pkgs, n_pkgs);
	if (p.incomplete && p.rc != -ENOMEM)
		return GROVE_PLAN_NEEDS_SCAN;
	return p.rc;
}

/* ---- import folder by folder: the bounded walk ---- */

/*
 * The same ops and warnings as grove_planner_import over the whole scan, in the same order, with
 * one path from the root in memory (docs/architecture.md, "The bounded walk"). The whole scan
 * lists a target folder where a named package has a folder of its name (with --dotfiles, which
 * import reads with, "dot-X" for ".X"), reads every folder of the named packages, and
 * import_dir visits the listed folders depth-first in name order. The walk does that one folder
 * at a time: the package folders matching it are listed (grove_scan_pkg_folder), then the
 * target folder with what its links point at (grove_scan_target_folder); the package folders
 * no target folder enters are read and dropped (grove_scan_pkg_check: the whole scan's checks
 * of them); its entries are imported in name order, each folder walked and dropped before the
 * next. Import makes no conflict and reads no log, so warnings are kept (in the whole scan's
 * order). The package '.' (the stow dir itself, which import reads when it names none) holds
 * the other packages' folders too: a folder one drops may be listed again for the other. What
 * the walk does not take answers GROVE_SCAN_BAIL and the caller plans with the whole scan: a
 * need, an error, an entry only the whole scan takes (scan_lazy.c), a marked folder (.stow,
 * .nonstow) in the target.
 */

struct import_at {
	const char *package; /* one of the walk's names */
	char *sub;           /* the package's folder, "." at its root */
};

struct import_walk {
	const struct grove_walk_reader *rd;
	char *const *pkgs;
	size_t n_pkgs;
};

/* The stow-relative path of package's folder sub ('.': the stow dir's own folder). */
static char *
walk_rel(const char *package, const char *sub)
{
	if (strcmp(package, GROVE_STOW_DIR_PACKAGE) == 0)
		return strdup(sub);
	return strcmp(sub, ".") == 0 ? strdup(package) : grove_child_path(package, sub);
}

static struct grove_node *
walk_pkg_node(struct planner *p, const struct import_at *a)
{
	cleanup_free char *rel = walk_rel(a->package, a->sub);

	return rel ? grove_node_lookup(p->w->stow, rel) : NULL;
}

/* The target name a package entry called name lands on with --dotfiles ("dot-X": ".X"), or
 * NULL when it lands only on its own. */
static char *
dotted_name(const char *name)
{
	if (strncmp(name, "dot-", 4) != 0 || !name[4] || name[4] == '.')
		return NULL;
	return grove_strdupf(".%s", name + 4);
}

/* Whether the target folder node tn (at tpath) has a folder called name that the whole scan
 * would enter: on disk a folder, and not the stow dir. */
static bool
enters(const struct planner *p, const struct grove_node *tn, const char *tpath, const char *name)
{
	const struct grove_node *k = grove_node_child(tn, name);
	cleanup_free char *path = NULL;

	if (!k || k->orig_type != GROVE_FT_DIR)
		return false;
	path = grove_child_path(tpath, name);
	return path && strcmp(path, p->w->stow_path) != 0;
}

/* Reads and drops the folders of the package folders at[0..n) that no folder of tn enters. */
static int
walk_check(struct planner *p, const struct import_walk *iw, const struct grove_node *tn,
	   const char *tpath, const struct import_at *at, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct grove_node *pn = walk_pkg_node(p, &at[i]);

		if (!pn || !pn->listed)
			return GROVE_SCAN_BAIL;
		for (size_t k = 0; k < pn->n_kids; k++) {
			const struct grove_node *kid = pn->kids[k];
			cleanup_free char *dotted = NULL;
			cleanup_free char *sub = NULL;
			cleanup_free char *rel = NULL;
			bool in;
			int r;

			if (kid->type != GROVE_FT_DIR)
				continue;
			dotted = dotted_name(kid->name);
			in = enters(p, tn, tpath, kid->name) ||
			     (dotted && enters(p, tn, tpath, dotted));
			if (in)
				continue;
			sub = strcmp(at[i].sub, ".") == 0 ? strdup(kid->name)
							  : grove_child_path(at[i].sub, kid->name);
			rel = sub ? walk_rel(at[i].package, sub) : NULL;
			if (!rel)
				return -ENOMEM;
			r = iw->rd->check_pkg(iw->rd->ctx, p->w, rel, p->err);
			if (r)
				return r;
		}
	}
	return 0;
}

/* Lists the package folders at[0..n) that are not listed: once each, and again where a walk
 * beneath dropped one (the package '.' reaches the other packages' folders by other paths). */
static int
walk_load(struct planner *p, const struct import_walk *iw, const struct import_at *at, size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		cleanup_free char *rel = walk_rel(at[i].package, at[i].sub);

		r = rel ? iw->rd->list_pkg(iw->rd->ctx, p->w, rel, p->err) : -ENOMEM;
	}
	return r;
}

/* The package folders at[0..n) that the target folder called name enters, in *ret (each
 * package's entry of that name, then its "dot-X" for ".X"), as matching_kids orders them. */
static int
walk_matches(struct planner *p, const struct import_walk *iw, const struct import_at *at, size_t n,
	     const char *name, struct import_at **ret, size_t *ret_n)
{
	cleanup_free char *dotted = NULL;
	struct import_at *v = calloc(2 * n + 1, sizeof(*v));
	size_t m = 0;
	int r;

	*ret = v;
	*ret_n = 0;
	if (!v)
		return -ENOMEM;
	r = walk_load(p, iw, at, n);
	if (r)
		return r;
	if (name[0] == '.' && name[1] && name[1] != '.' &&
	    !(dotted = grove_strdupf("dot-%s", name + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct grove_node *pn = walk_pkg_node(p, &at[i]);
		const char *forms[2] = { name, dotted };

		for (size_t f = 0; f < 2 && pn; f++) {
			const struct grove_node *kid =
				forms[f] ? grove_node_child(pn, forms[f]) : NULL;

			if (!kid || kid->type != GROVE_FT_DIR)
				continue;
			v[m].package = at[i].package;
			v[m].sub = strcmp(at[i].sub, ".") == 0
					   ? strdup(forms[f])
					   : grove_child_path(at[i].sub, forms[f]);
			if (!v[m++].sub) {
				*ret_n = m;
				return -ENOMEM;
			}
		}
	}
	*ret_n = m;
	return 0;
}

static void
matches_free(struct import_at *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].sub);
	free(v);
}

/* Imports the target folder tn (at tpath, "" at the top), which the package folders at[0..n)
 * reach. */
static int
walk_folder(struct planner *p, const struct import_walk *iw, struct grove_node *tn,
	    const char *tpath, const struct import_at *at, size_t n)
{
	cleanup_free struct grove_node **kids = NULL;
	int r = walk_load(p, iw, at, n);

	if (r == 0 && !tn->listed)
		r = iw->rd->list_target(iw->rd->ctx, p->w, tpath, p->err);
	if (r)
		return r;
	if (!tn->listed || grove_node_child(tn, ".stow") || grove_node_child(tn, ".nonstow"))
		return GROVE_SCAN_BAIL;
	r = walk_check(p, iw, tn, tpath, at, n);
	if (r)
		return r;
	kids = grove_node_sorted_kids(tn);
	if (!kids)
		return -ENOMEM;
	for (struct grove_node **k = kids; *k && r == 0; k++) {
		cleanup_free char *path = grove_child_path(tpath, (*k)->name);
		struct import_at *sub = NULL;
		size_t ns = 0;

		if (!path)
			return -ENOMEM;
		if ((*k)->orig_type == GROVE_FT_LINK) {
			import_link(p, *k, path, iw->pkgs, iw->n_pkgs);
		} else if ((*k)->orig_type == GROVE_FT_DIR && strcmp(path, p->w->stow_path) != 0) {
			r = walk_matches(p, iw, at, n, (*k)->name, &sub, &ns);
			if (r == 0 && ns)
				r = walk_folder(p, iw, *k, path, sub, ns);
			iw->rd->forget(iw->rd->ctx, *k);
			for (size_t i = 0; i < ns; i++)
				iw->rd->forget(iw->rd->ctx, walk_pkg_node(p, &sub[i]));
			matches_free(sub, ns);
		}
		if (r == 0 && (p->rc || p->incomplete))
			r = GROVE_SCAN_BAIL;
	}
	return r;
}

int
grove_planner_import_walk(struct grove_world *w, const struct grove_walk_reader *rd,
			  char *const *pkgs, size_t n_pkgs, struct grove_plan *plan,
			  struct grove_error *err)
{
	struct grove_plan_opts none = { 0 };
	struct planner p = { .w = w, .o = &none, .plan = plan, .err = err, .action = "import" };
	struct import_walk iw = { .rd = rd, .pkgs = pkgs, .n_pkgs = n_pkgs };
	cleanup_free struct import_at *top = calloc(n_pkgs + 1, sizeof(*top));
	int r;

	if (!top)
		return GROVE_SCAN_BAIL;
	if (!w->stow)
		w->stow = grove_node_new("", GROVE_FT_DIR, NULL);
	if (!w->target)
		w->target = grove_node_new("", GROVE_FT_DIR, NULL);
	if (!w->stow || !w->target)
		return GROVE_SCAN_BAIL;
	for (size_t i = 0; i < n_pkgs; i++)
		top[i] = (struct import_at){ .package = pkgs[i], .sub = (char *)"." };
	r = walk_folder(&p, &iw, w->target, "", top, n_pkgs);
	grove_planner_release(&p);
	if (r || p.rc || p.incomplete)
		return GROVE_SCAN_BAIL;
	return 0;
}

/* ---- status: how much of each package the target reaches ---- */

static bool
pkg_dir(const struct grove_node *n)
{
	return n && grove_view_follow_type(n) == GROVE_FT_DIR && n->listed;
}

/* How many files (entries that are not folders) the package folder node holds beneath it at
 * subpath sub, ignored ones left out. */
static size_t
files_in(struct planner *p, const char *pkg, const struct grove_node *node, const char *sub)
{
	size_t n = 0;

	grove_node_foreach_child (node, kid) {
		cleanup_free char *ksub = grove_path_join(sub, kid->name);

		if (!ksub) {
			oom(p);
			return n;
		}
		if (kid->type == GROVE_FT_NONE || grove_view_ignored(p, pkg, ksub))
			continue;
		n += pkg_dir(kid) ? files_in(p, pkg, kid, ksub) : 1;
	}
	return n;
}

/* Whether the target link t at tpath points at the package entry pkg/sub. */
static bool
links_to(struct planner *p, const struct grove_node *t, const char *tpath, const char *pkg,
	 const char *sub)
{
	cleanup_free char *dest = grove_view_find_stowed_path(p, tpath, t->orig_link, NULL);
	cleanup_free char *pp = grove_path_join(p->w->stow_path, pkg);
	cleanup_free char *want = pp ? grove_path_join(pp, sub) : NULL;

	if (!want)
		oom(p);
	return dest && want && strcmp(dest, want) == 0;
}

/* How many files of the package folder node (at sub) the target folder tdir (at tpath)
 * reaches through links into that package, under the entry's name or, for "dot-X", ".X". */
static size_t
reached_in(struct planner *p, const char *pkg, const struct grove_node *node, const char *sub,
	   const struct grove_node *tdir, const char *tpath)
{
	size_t n = 0;

	grove_node_foreach_child (node, kid) {
		cleanup_free char *ksub = grove_path_join(sub, kid->name);
		cleanup_free char *dotted = grove_dotfile_adjust(kid->name);
		const char *names[2] = { kid->name, NULL };

		if (!ksub || !dotted) {
			oom(p);
			return n;
		}
		if (kid->type == GROVE_FT_NONE || grove_view_ignored(p, pkg, ksub))
			continue;
		if (strcmp(dotted, kid->name) != 0)
			names[1] = dotted;
		for (size_t f = 0; f < 2 && names[f]; f++) {
			const struct grove_node *t = grove_node_child(tdir, names[f]);
			cleanup_free char *kt = grove_child_path(tpath, names[f]);

			if (!kt) {
				oom(p);
				return n;
			}
			if (!t || (t->orig_type == GROVE_FT_DIR && !t->listed))
				continue;
			if (t->orig_type == GROVE_FT_LINK && links_to(p, t, kt, pkg, ksub)) {
				n += pkg_dir(kid) ? files_in(p, pkg, kid, ksub) : 1;
				break;
			}
			if (t->orig_type == GROVE_FT_DIR && pkg_dir(kid)) {
				n += reached_in(p, pkg, kid, ksub, t, kt);
				break;
			}
		}
	}
	return n;
}

int
grove_planner_farm_status(struct grove_world *w, char *const *pkgs, size_t n_pkgs,
			  struct grove_farm_package *out, struct grove_error *err)
{
	struct grove_plan_opts none = { 0 };
	struct grove_plan scratch;
	struct planner p = { .w = w, .o = &none, .plan = &scratch, .err = err, .action = "status" };

	grove_plan_init(&scratch);
	for (size_t i = 0; i < n_pkgs && !p.rc; i++) {
		const struct grove_node *pn = grove_node_child(w->stow, pkgs[i]);

		out[i].files = out[i].reached = 0;
		if (!pkg_dir(pn))
			continue;
		out[i].files = files_in(&p, pkgs[i], pn, ".");
		out[i].reached = reached_in(&p, pkgs[i], pn, ".", w->target, "");
	}
	grove_plan_release(&scratch);
	if (p.incomplete && p.rc != -ENOMEM)
		return GROVE_PLAN_NEEDS_SCAN;
	return p.rc;
}
