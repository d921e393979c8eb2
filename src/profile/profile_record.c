/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Profiles: the names grove gives a profile's entries, and the generation record file. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grove/path.h"
#include "grove/profile.h"
#include "profile_private.h"
#include "base/util.h"

#include "banned.h" /* last */

char *
grove_profile_record_link_name(const struct grove_profile *p, long n)
{
	return grove_strdupf("%s-%ld-link", p->name, n);
}

char *
grove_profile_record_link_text(const struct grove_profile *p, long n)
{
	return grove_strdupf("%s/%ld", p->gens_name, n);
}

const char *
grove_profile_link_path(const struct grove_profile *p)
{
	return p->link_path;
}

const char *
grove_profile_name(const struct grove_profile *p)
{
	return p->name;
}

int
grove_profile_check_name(const char *name, struct grove_error *err)
{
	size_t l;

	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > NAME_LEN_MAX ||
	    !strncmp(name, ".grove-", 7))
		return grove_error_set(err, -GROVE_E_BADINPUT, "profile name '%s': not allowed",
				       name);
	l = strlen(name);
	/* Names another profile in the same folder uses for its generations. */
	if ((l >= 12 && !strcmp(name + l - 12, ".generations")) ||
	    (l >= 5 && !strcmp(name + l - 5, "-link")))
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "profile name '%s': ends like a generation's name", name);
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "profile name '%s': control character", name);
	return 0;
}

void
grove_generation_release(struct grove_generation *g)
{
	if (!g)
		return;
	free(g->stow_dir);
	for (size_t i = 0; i < g->n_packages; i++)
		free(g->packages[i]);
	free(g->packages);
	memset(g, 0, sizeof(*g));
}

void
grove_generations_free(struct grove_generation *g, size_t n)
{
	for (size_t i = 0; g && i < n; i++)
		grove_generation_release(&g[i]);
	free(g);
}

char *
grove_profile_record_format(const struct grove_generation *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f,
		"grove-generation 1\nnumber %ld\ntime %.3f\nstow %s\nfolding %s\ndotfiles %s\n"
		"txn %lld\n",
		g->number, g->time, g->stow_dir, g->no_folding ? "no" : "yes",
		g->dotfiles ? "yes" : "no", (long long)g->txn);
	for (size_t i = 0; i < g->n_packages; i++)
		fprintf(f, "package %s\n", g->packages[i]);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int
grove_profile_record_add_package(struct grove_generation *g, const char *name)
{
	char **n = realloc(g->packages, (g->n_packages + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	g->packages = n;
	if (!(g->packages[g->n_packages] = strdup(name)))
		return -ENOMEM;
	g->n_packages++;
	return 0;
}

/* Parses a record; unknown keys are skipped (a later grove may add some). */
int
grove_profile_record_parse(char *buf, struct grove_generation *g)
{
	bool magic = false;

	for (char *line = buf, *next; line && *line; line = next) {
		char *sp;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp++ = '\0';
		if (!strcmp(line, "grove-generation"))
			magic = !strcmp(sp, "1");
		else if (!strcmp(line, "time"))
			g->time = strtod(sp, NULL);
		else if (!strcmp(line, "stow")) {
			if (!g->stow_dir && !(g->stow_dir = strdup(sp)))
				return -ENOMEM; /* (the first stow line counts) */
		} else if (!strcmp(line, "folding"))
			g->no_folding = !strcmp(sp, "no");
		else if (!strcmp(line, "dotfiles"))
			g->dotfiles = !strcmp(sp, "yes");
		else if (!strcmp(line, "txn"))
			g->txn = strtoll(sp, NULL, 10);
		else if (!strcmp(line, "package")) {
			if (grove_profile_record_add_package(g, sp) < 0)
				return -ENOMEM;
		}
	}
	if (!magic || !g->stow_dir)
		return -EINVAL;
	/* Nothing read back is trusted (DESIGN.md invariant 8): the stow dir an
	 * install or remove defaults to must be an absolute, canonical path, and
	 * every package a single name. */
	{
		cleanup_free char *canon = grove_path_canon(g->stow_dir);

		if (!canon)
			return -ENOMEM;
		if (g->stow_dir[0] != '/' || strcmp(canon, g->stow_dir) != 0 ||
		    strstr(g->stow_dir, "/../") || strlen(g->stow_dir) >= PATH_MAX ||
		    (strlen(g->stow_dir) >= 3 &&
		     !strcmp(g->stow_dir + strlen(g->stow_dir) - 3, "/..")))
			return -EINVAL;
	}
	for (size_t i = 0; i < g->n_packages; i++)
		if (!grove_path_is_name(g->packages[i]))
			return -EINVAL;
	return 0;
}
