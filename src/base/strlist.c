/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A list of strings, each with the manifest location it came from. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grove/stow_settings.h"

#include "banned.h" /* last */

int
grove_strlist_add(struct grove_strlist *l, const char *s, const struct grove_manifest_loc *loc)
{
	char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	struct grove_manifest_loc *nl;

	if (!nv)
		return -ENOMEM;
	l->v = nv;
	nl = realloc(l->loc, (l->n + 1) * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	l->loc = nl;
	if (!(l->v[l->n] = strdup(s)))
		return -ENOMEM;
	l->loc[l->n].line = loc ? loc->line : 0;
	l->loc[l->n].col = loc ? loc->col : 0;
	l->n++;
	return 0;
}

bool
grove_strlist_has(const struct grove_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

void
grove_strlist_release(struct grove_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->loc);
	memset(l, 0, sizeof(*l));
}
