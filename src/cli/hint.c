/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hints that fit the error: "did you mean" for a mistyped command or package, and what a
 * permission error for a normal user usually means. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "front.h"
#include "grove/names.h"
#include "grove/stow.h"
#include "grove/text.h"

#include "../banned.h" /* last */

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions: vmi → vim is 1),
 * or SIZE_MAX when either word is longer than 64 bytes. */
static size_t
distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[65][65];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

const char *
grove_nearest(const char *word, const char *const *cands, size_t n)
{
	size_t len = strlen(word);
	/* Short words are too close to everything: "x" is one edit from "a". */
	size_t max = len < 3 ? 0 : len <= 6 ? 1 : 2;
	size_t best = SIZE_MAX;
	const char *hit = NULL;
	bool tie = false;

	for (size_t i = 0; i < n; i++) {
		size_t d = distance(word, cands[i]);

		if (d == 0 || d > max)
			continue;
		if (d < best) {
			best = d, hit = cands[i], tie = false;
		} else if (d == best) {
			tie = true;
		}
	}
	return tie ? NULL : hit;
}

void
grove_hint(FILE *out, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL, *shown;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	shown = grove_text_shown(msg);
	grove_paint(out, GROVE_SGR_HINT, "hint: %s", shown ? shown : "");
	fputc('\n', out);
	free(shown);
	free(msg);
}

/* For each of names that the folder dir lacks, "hint: no WHAT 'x': did you mean 'y'?" when one
 * of its folders (or links) is that near. */
static void
suggest_in(const char *dir, char *const *names, size_t n, const char *what)
{
	char **cands = NULL;
	size_t n_cands = 0;

	if (!dir || grove_stow_dir_names(dir, &cands, &n_cands, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		bool there = false;
		const char *near;

		for (size_t k = 0; k < n_cands && !there; k++)
			there = !strcmp(cands[k], names[i]);
		if (!there && (near = grove_nearest(names[i], (const char **)cands, n_cands)))
			grove_hint(stderr, "no %s '%s': did you mean '%s'?", what, names[i], near);
	}
	grove_names_free(cands, n_cands);
}

void
grove_hint_packages(const char *dir, char *const *names, size_t n)
{
	suggest_in(dir, names, n, "package");
}

void
grove_hint_folder(const char *path)
{
	char *copy = strdup(path), *slash, *name;
	const char *parent;

	if (!copy)
		return;
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		parent = slash == copy ? "/" : copy;
		name = slash + 1;
	} else {
		parent = ".";
		name = copy;
	}
	if (*name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
		suggest_in(parent, &name, 1, "folder");
	free(copy);
}

void
grove_hint_error(const struct grove_error *err, int code)
{
	uid_t uid = geteuid();
	bool denied = code == -EACCES || code == -EPERM || strstr(err->msg, "Permission denied") ||
		      strstr(err->msg, "Operation not permitted");

	if (uid != 0 && denied && strstr(err->msg, "state dir")) {
		grove_hint(stderr, "the transaction log's folder: name one you may write with "
				   "--state DIR or GROVE_STATE_DIR");
		return;
	}

	/* A normal user refused a change: most often a system folder (/usr/local, /opt) that only
	 * root may change. */
	if (uid != 0 &&
	    (code == -EACCES || code == -EPERM || strstr(err->msg, "Permission denied") ||
	     strstr(err->msg, "Operation not permitted")))
		grove_hint(stderr,
			   "you (uid %u) lack the permission; a system folder such as /usr/local "
			   "needs root: sudo grove ... (root keeps its own log, in /var/lib/grove)",
			   (unsigned)uid);
}
