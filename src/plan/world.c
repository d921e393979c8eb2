/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The world a plan is made from (the scanned target and stow dir, the packages' ignore lists, what
 * the planner still needs read), and the one scan→plan loop every use runs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/plan.h"
#include "plan/world.h"
#include "base/util.h"

#include "banned.h" /* last */

void
grove_world_init(struct grove_world *w)
{
	memset(w, 0, sizeof(*w));
}

void
grove_world_release(struct grove_world *w)
{
	if (!w)
		return;
	grove_node_free(w->target);
	grove_node_free(w->stow);
	free(w->stow_path);
	for (size_t i = 0; i < w->n_pkgs; i++) {
		free(w->pkgs[i].name);
		grove_ignore_list_free(w->pkgs[i].local_ignore);
	}
	free(w->pkgs);
	free(w->pkg_slots);
	grove_ignore_list_free(w->global_ignore);
	for (size_t i = 0; i < w->n_needs; i++)
		free(w->needs[i]);
	free(w->needs);
	for (size_t i = 0; i < w->n_tneeds; i++)
		free(w->tneeds[i]);
	free(w->tneeds);
	for (size_t i = 0; i < w->n_tignores; i++)
		free(w->tignores[i]);
	free(w->tignores);
	grove_world_init(w);
}

struct grove_world_pkg *
grove_world_pkg(const struct grove_world *w, const char *name)
{
	if (!w->pkg_slots) {
		for (size_t i = 0; i < w->n_pkgs; i++)
			if (strcmp(w->pkgs[i].name, name) == 0)
				return &w->pkgs[i];
		return NULL;
	}
	for (size_t i = grove_hash_str(name) & (w->pkg_slots_cap - 1); w->pkg_slots[i];
	     i = (i + 1) & (w->pkg_slots_cap - 1))
		if (strcmp(w->pkgs[w->pkg_slots[i] - 1].name, name) == 0)
			return &w->pkgs[w->pkg_slots[i] - 1];
	return NULL;
}

/* Indexes w->pkgs[w->n_pkgs - 1] (just added) by name; the hash stays under half full. */
static int
pkg_index_added(struct grove_world *w)
{
	if (2 * w->n_pkgs > w->pkg_slots_cap) {
		size_t cap = w->pkg_slots_cap ? w->pkg_slots_cap * 2 : 64;
		size_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		free(w->pkg_slots);
		w->pkg_slots = slots;
		w->pkg_slots_cap = cap;
		for (size_t k = 0; k < w->n_pkgs; k++) {
			size_t i = grove_hash_str(w->pkgs[k].name) & (cap - 1);

			while (slots[i])
				i = (i + 1) & (cap - 1);
			slots[i] = k + 1;
		}
		return 0;
	}
	{
		size_t i = grove_hash_str(w->pkgs[w->n_pkgs - 1].name) & (w->pkg_slots_cap - 1);

		while (w->pkg_slots[i])
			i = (i + 1) & (w->pkg_slots_cap - 1);
		w->pkg_slots[i] = w->n_pkgs;
	}
	return 0;
}

struct grove_world_pkg *
grove_world_pkg_add(struct grove_world *w, const char *name)
{
	struct grove_world_pkg *pkg = grove_world_pkg(w, name);

	if (pkg)
		return pkg;
	if (w->n_pkgs == w->cap_pkgs) {
		size_t cap = w->cap_pkgs ? w->cap_pkgs * 2 : 8;
		struct grove_world_pkg *np = realloc(w->pkgs, cap * sizeof(*np));

		if (!np)
			return NULL;
		w->pkgs = np;
		w->cap_pkgs = cap;
	}
	pkg = &w->pkgs[w->n_pkgs];
	memset(pkg, 0, sizeof(*pkg));
	pkg->name = strdup(name);
	if (!pkg->name)
		return NULL;
	w->n_pkgs++;
	if (pkg_index_added(w) < 0) {
		free(w->pkgs[--w->n_pkgs].name);
		return NULL;
	}
	return &w->pkgs[w->n_pkgs - 1];
}

/* Adds a copy of path to the list v (n entries, cap allocated) unless it is there. 0 or -ENOMEM. */
static int
add_unique(char ***v, size_t *n, size_t *cap, const char *path)
{
	char *c;

	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], path) == 0)
			return 0;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		char **nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	if (!(c = strdup(path)))
		return -ENOMEM;
	(*v)[(*n)++] = c;
	return 0;
}

int
grove_world_need(struct grove_world *w, const char *relpath)
{
	return add_unique(&w->needs, &w->n_needs, &w->cap_needs, relpath);
}

static void
reset_node(struct grove_node *n)
{
	n->type = n->orig_type;
	grove_node_set_link(n, n->orig_link);
	free(n->adopt_to);
	n->adopt_to = NULL;
	n->cleaned = false;
	if (n->orig_type == GROVE_FT_NONE)
		n->listed = false;
	for (size_t i = 0; i < n->n_kids; i++)
		reset_node(n->kids[i]);
}

void
grove_world_reset_plan(struct grove_world *w)
{
	if (w->target)
		reset_node(w->target);
}

int
grove_world_tneed(struct grove_world *w, const char *tpath)
{
	return add_unique(&w->tneeds, &w->n_tneeds, &w->cap_tneeds, tpath);
}

int
grove_world_tignore(struct grove_world *w, const char *pkgpath)
{
	return add_unique(&w->tignores, &w->n_tignores, &w->cap_tignores, pkgpath);
}

void
grove_world_reset_trees(struct grove_world *w)
{
	w->stow = grove_node_free(w->stow);
	w->target = grove_node_free(w->target);
	for (size_t i = 0; i < w->n_needs; i++)
		free(w->needs[i]);
	for (size_t i = 0; i < w->n_tneeds; i++)
		free(w->tneeds[i]);
	for (size_t i = 0; i < w->n_tignores; i++)
		free(w->tignores[i]);
	w->n_needs = w->n_tneeds = w->n_tignores = 0;
	w->too_big = false;
}
