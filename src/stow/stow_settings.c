/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stow options as layers give them: unset, merged over one another, compared. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grove/stow_settings.h"

#include "banned.h" /* last */

void
grove_stow_settings_init(struct grove_stow_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->folding = s->dotfiles = s->adopt = -1;
}

void
grove_stow_settings_release(struct grove_stow_settings *s)
{
	free(s->dir);
	grove_strlist_release(&s->ignore);
	grove_strlist_release(&s->defer);
	grove_strlist_release(&s->override);
	grove_stow_settings_init(s);
}

static int
strlist_append(struct grove_strlist *dst, const struct grove_strlist *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (grove_strlist_add(dst, src->v[i], &src->loc[i]) < 0)
			return -ENOMEM;
	return 0;
}

int
grove_stow_settings_merge(struct grove_stow_settings *dst, const struct grove_stow_settings *src)
{
	if (src->dir) {
		char *d = strdup(src->dir);

		if (!d)
			return -ENOMEM;
		free(dst->dir);
		dst->dir = d;
	}
	if (src->folding >= 0)
		dst->folding = src->folding;
	if (src->dotfiles >= 0)
		dst->dotfiles = src->dotfiles;
	if (src->adopt >= 0)
		dst->adopt = src->adopt;
	if (strlist_append(&dst->ignore, &src->ignore) < 0 ||
	    strlist_append(&dst->defer, &src->defer) < 0 ||
	    strlist_append(&dst->override, &src->override) < 0)
		return -ENOMEM;
	return 0;
}

static bool
strlist_same(const struct grove_strlist *a, const struct grove_strlist *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

bool
grove_stow_settings_same(const struct grove_stow_settings *a, const struct grove_stow_settings *b)
{
	return (a->folding != 0) == (b->folding != 0) && (a->dotfiles > 0) == (b->dotfiles > 0) &&
	       (a->adopt > 0) == (b->adopt > 0) && strlist_same(&a->ignore, &b->ignore) &&
	       strlist_same(&a->defer, &b->defer) && strlist_same(&a->override, &b->override);
}
