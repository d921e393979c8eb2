/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Settings as the manifest, config.yaml, the environment and flags give them: lists of strings
 * with where each was written, and stow options at one level (unset, merged, compared). */
#ifndef GROVE_STOW_SETTINGS_H
#define GROVE_STOW_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

/* Where a value was written, for messages. */
struct grove_manifest_loc {
	unsigned line, col; /* 1-based */
};

/* A list of strings with the place of each. */
struct grove_strlist {
	char **v;
	struct grove_manifest_loc *loc;
	size_t n;
};

/* Appends a copy of s (loc may be NULL) to l. 0 or -ENOMEM. */
int grove_strlist_add(struct grove_strlist *l, const char *s, const struct grove_manifest_loc *loc);
bool grove_strlist_has(const struct grove_strlist *l, const char *s);
void grove_strlist_release(struct grove_strlist *l);

/*
 * Stow options at one level (defaults, config, manifest target or package,
 * environment, flags). A single value is "unset" (-1) until a level sets it;
 * merging a higher level over a lower one replaces set single values and
 * appends lists (grove_stow_settings_merge).
 */
struct grove_stow_settings {
	char *dir;    /* stow dir, or NULL */
	int folding;  /* -1 unset, 0 --no-folding, 1 folding */
	int dotfiles; /* -1, 0, 1 */
	int adopt;    /* -1, 0 never, 1 --adopt */
	struct grove_strlist ignore, defer, override;
};

void grove_stow_settings_init(struct grove_stow_settings *s);
void grove_stow_settings_release(struct grove_stow_settings *s);
/* dst = src over dst: src's set single values replace dst's, src's lists are
 * appended to dst's. 0 or -ENOMEM. */
int grove_stow_settings_merge(struct grove_stow_settings *dst,
			      const struct grove_stow_settings *src);
/* True when both resolve to the same options (unset single values count as
 * their defaults: folding on, dotfiles and adopt off; lists compared in order). */
bool grove_stow_settings_same(const struct grove_stow_settings *a,
			      const struct grove_stow_settings *b);

#endif
