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
 * Every link in the scanned folders beneath dir (target path tpath): Stow's own (its text,
 * joined to its folder, lands in a package of the stow dir: find_stowed_path) whose
 * destination exists and whose package is named becomes a recorded LINK; one into another
 * package, or to nothing, is a warning. Folders are entered only where the scan listed them
 * (where a named package has a folder), so a folded folder is the one link to it.
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
		cleanup_free char *pkg = NULL;
		cleanup_free char *dest = NULL;

		if (!path) {
			oom(p);
			return;
		}
		if ((*k)->orig_type == GROVE_FT_DIR && (*k)->listed) {
			import_dir(p, *k, path, pkgs, n_pkgs);
			continue;
		}
		if ((*k)->orig_type != GROVE_FT_LINK)
			continue;
		dest = grove_view_find_stowed_path(p, path, (*k)->orig_link, &pkg);
		if (!dest)
			continue; /* not Stow's: absolute, or pointing elsewhere */
		/* The package '.' (the stow dir itself) lands each entry at its own path; a
		 * package X's lands at X/path, one name deeper. */
		if (grove_path_lands_as(path, grove_path_strip_prefix(dest, p->w->stow_path))) {
			free(pkg);
			if (!(pkg = strdup(GROVE_STOW_DIR_PACKAGE))) {
				oom(p);
				return;
			}
		}
		if (!named(pkgs, n_pkgs, pkg))
			grove_view_warningf(
				p,
				"not imported: '%s' links into package '%s', which is not "
				"being imported",
				path, pkg);
		else if (!grove_view_stow_exists(p, dest))
			grove_view_warningf(
				p, "not imported: '%s' links to '%s', which does not exist", path,
				(*k)->orig_link);
		else if (grove_plan_add_recorded(p->plan, GROVE_OP_LINK, path, (*k)->orig_link,
						 pkg) < 0)
			oom(p);
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
