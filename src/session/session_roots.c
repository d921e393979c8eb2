/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transaction driver's roots besides the target (DESIGN.md invariant 11): noting the ones a run
 * holds, for its intent to record, and holding them again for a replay (undo, rollback, recovery)
 * through grove_root_reopen, beneath their parent and by identity. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/session.h"
#include "session_int.h"
#include "base/util.h"

#include "banned.h" /* last */

/* path's part beneath base (both canonical), or NULL when it is not beneath it; "" is base. */
static const char *
beneath(const char *base, const char *path)
{
	size_t l;

	if (!base || !path || path[0] != '/')
		return NULL;
	if (!strcmp(base, "/"))
		return path + 1;
	l = strlen(base);
	if (strncmp(path, base, l) != 0 || (path[l] != '/' && path[l] != '\0'))
		return NULL;
	return path[l] ? path + l + 1 : path + l;
}

/* rel in the form the log keeps and checks (clean: no empty or "." component, no trailing '/';
 * "" for the parent itself), malloc'd; NULL for a ".." component or out of memory (*ret_bad). */
static char *
clean_rel(const char *rel, bool *ret_bad)
{
	char *out = malloc(strlen(rel) + 1), *o = out;

	*ret_bad = false;
	if (!out)
		return NULL;
	while (*rel) {
		size_t l;

		while (*rel == '/')
			rel++;
		l = strcspn(rel, "/");
		if ((l == 1 && rel[0] == '.') || l == 0) {
			rel += l;
			continue;
		}
		if (l == 2 && rel[0] == '.' && rel[1] == '.') {
			*ret_bad = true;
			free(out);
			return NULL;
		}
		if (o != out)
			*o++ = '/';
		memcpy(o, rel, l);
		o += l;
		rel += l;
	}
	*o = '\0';
	return out;
}

int
grove_session_note_root(struct grove_session *s, enum grove_journal_root_kind kind, int64_t dir_id,
			const struct grove_root *root, const char *rel, enum grove_resolve resolve,
			struct grove_error *err)
{
	const char *in_target = rel ? rel : beneath(s->target->real, root->real);
	const char *place = in_target ? in_target : root->real ? root->real + 1 : NULL;
	struct grove_journal_root *v;
	bool bad = false;
	char *copy;
	size_t i;

	if (!place)
		return grove_error_set(err, -GROVE_E_INTERNAL, "the folder of '%s' is not known",
				       root->path);
	copy = clean_rel(place, &bad);
	if (bad)
		return grove_error_set(err, -GROVE_E_BADINPUT, "'%s': '..' is not allowed there",
				       root->path);
	if (!copy)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < s->n_roots; i++)
		if (s->roots[i].kind == kind && s->roots[i].dir_id == dir_id)
			break;
	if (i == s->n_roots) {
		v = realloc(s->roots, (s->n_roots + 1) * sizeof(*v));
		if (!v) {
			free(copy);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
		s->roots = v;
		s->n_roots++;
	} else {
		free(s->roots[i].rel);
	}
	s->roots[i] = (struct grove_journal_root){ .kind = kind,
						   .dir_id = dir_id,
						   .under_target = in_target != NULL,
						   .rel = copy,
						   .resolve = resolve,
						   .id = grove_root_id_of(root) };
	return 0;
}

/* Opens parent for a replay: the target, or "/" into slash. */
static int
parent_of(struct grove_session *s, bool under_target, struct grove_root *slash,
	  const struct grove_root **ret, struct grove_error *err)
{
	int r = 0;

	if (under_target)
		*ret = s->target;
	else if ((r = grove_root_open(slash, "/", err)) >= 0)
		*ret = slash;
	return r;
}

int
grove_session_reopen_recorded(struct grove_session *s, const struct grove_journal_root *rec,
			      const char *what, struct grove_root *own, struct grove_error *err)
{
	struct grove_root slash = { .fd = -1 };
	const struct grove_root *parent = NULL;
	int r = parent_of(s, rec->under_target, &slash, &parent, err);

	if (r >= 0)
		r = grove_root_reopen(own, parent, rec->rel, rec->resolve, &rec->id, what, err);
	grove_root_release(&slash);
	return r;
}

int
grove_session_reopen_path(struct grove_session *s, const char *path, const struct grove_root_id *id,
			  const char *what, struct grove_root *own, struct grove_error *err)
{
	struct grove_root slash = { .fd = -1 };
	const struct grove_root *parent = NULL;
	const char *rel = path ? beneath(s->target->real, path) : NULL;
	int r;

	if (!path || path[0] != '/')
		return grove_error_set(err, -GROVE_E_STUCK, "the log names no %s", what);
	if (!rel)
		rel = path + 1;
	if (*rel && !grove_path_is_clean_relative(rel))
		return grove_error_set(err, -GROVE_E_STUCK,
				       "the log names a %s '%s' grove would not use", what, path);
	r = parent_of(s, rel != path + 1, &slash, &parent, err);
	if (r >= 0)
		r = grove_root_reopen(own, parent, rel, GROVE_RESOLVE_BENEATH, id, what, err);
	grove_root_release(&slash);
	return r;
}
