/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `grove profile build|install|remove`: the new generation's packages, from the current
 * generation's and the ones named, and where they come from; then the build (profile.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/names.h"
#include "grove/profile.h"
#include "base/util.h"

#include "banned.h" /* last */

static bool
has_pkg(const struct grove_generation *g, const char *name)
{
	for (size_t i = 0; g && i < g->n_packages; i++)
		if (!strcmp(g->packages[i], name))
			return true;
	return false;
}

static bool
named(const struct grove_profile_change *rq, const char *name)
{
	for (size_t i = 0; i < rq->n_packages; i++)
		if (!strcmp(rq->packages[i], name))
			return true;
	return false;
}

static int
cmp_pkg(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds a copy of the first len bytes of name to ret's set. */
static int
add(struct grove_profile_changed *ret, const char *name, size_t len)
{
	char *s = strndup(name, len);

	if (!s)
		return -ENOMEM;
	ret->packages[ret->n_packages++] = s;
	return 0;
}

/* The new generation's set: build takes the packages named; install adds them to cur's,
 * remove takes them away; sorted, each once (the set the generation records). */
static int
new_set(const struct grove_profile_change *rq, const struct grove_generation *cur,
	const char *profile, struct grove_profile_changed *ret, struct grove_error *err)
{
	size_t cap = rq->n_packages + (cur ? cur->n_packages : 0) + 1;
	size_t k = 0;

	ret->packages = calloc(cap, sizeof(char *));
	if (!ret->packages)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (rq->kind == GROVE_PROFILE_REMOVE) {
		for (size_t i = 0; i < rq->n_packages; i++)
			if (!has_pkg(cur, rq->packages[i]))
				return grove_error_set(err, -GROVE_E_BADINPUT,
						       "profile '%s': package '%s' is not in the "
						       "current generation; nothing changed",
						       profile, rq->packages[i]);
		for (size_t i = 0; cur && i < cur->n_packages; i++)
			if (!named(rq, cur->packages[i]) &&
			    add(ret, cur->packages[i], strlen(cur->packages[i])) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
	} else {
		for (size_t i = 0; rq->kind == GROVE_PROFILE_INSTALL && cur && i < cur->n_packages;
		     i++)
			if (add(ret, cur->packages[i], strlen(cur->packages[i])) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < rq->n_packages; i++) {
			/* "vim/" names the package vim, as for stow. */
			size_t l = strlen(rq->packages[i]);

			while (l > 1 && rq->packages[i][l - 1] == '/')
				l--;
			if (add(ret, rq->packages[i], l) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
		}
	}
	if (ret->n_packages)
		qsort(ret->packages, ret->n_packages, sizeof(char *), cmp_pkg);
	for (size_t i = 0; i < ret->n_packages; i++) {
		if (k && !strcmp(ret->packages[i], ret->packages[k - 1]))
			free(ret->packages[i]);
		else
			ret->packages[k++] = ret->packages[i];
	}
	ret->n_packages = k;
	return 0;
}

int
grove_profile_change(struct grove_profile *p, const struct grove_profile_change *rq,
		     struct grove_profile_changed *ret, struct grove_error *err)
{
	struct grove_generation *gens = NULL;
	const struct grove_generation *cur = NULL;
	const char *profile = grove_profile_link_path(p);
	size_t n = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	grove_plan_init(&ret->conflicts);
	r = grove_profile_generations(p, &gens, &n, &ret->previous, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && ret->previous; i++)
		if (gens[i].number == ret->previous)
			cur = &gens[i];
	if (ret->previous && (!cur || !cur->complete) && rq->kind != GROVE_PROFILE_BUILD) {
		/* install and remove start from the current generation's packages: without its
		 * record they would silently drop them. */
		r = grove_error_set(err, -GROVE_E_BADINPUT,
				    "profile '%s': the current generation %ld has no readable "
				    "record; use 'build' with the whole package list",
				    profile, ret->previous);
		goto out;
	}
	if (cur && !cur->complete)
		cur = NULL;
	r = new_set(rq, cur, profile, ret, err);
	if (r >= 0) {
		/* Stow's default (-d, $STOW_DIR), then where the current generation's packages
		 * came from, then the current folder. */
		struct grove_profile_spec spec = {
			.stow_dir = rq->stow_dir                            ? rq->stow_dir
				    : rq->env_stow_dir && *rq->env_stow_dir ? rq->env_stow_dir
				    : cur                                   ? cur->stow_dir
									    : ".",
			.packages = ret->packages,
			.n_packages = ret->n_packages,
			.no_folding = rq->no_folding,
			.dotfiles = rq->dotfiles,
			.command = rq->command,
		};

		r = grove_profile_build(p, &spec, &ret->generation, &ret->conflicts, err);
	}
out:
	grove_generations_free(gens, n);
	return r;
}

void
grove_profile_changed_release(struct grove_profile_changed *c)
{
	grove_names_free(c->packages, c->n_packages);
	grove_plan_release(&c->conflicts);
	memset(c, 0, sizeof(*c));
}
