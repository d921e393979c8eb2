/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the packages commands print for people: conflicts grouped per package with the option that
 * resolves them, and the plan with its ops coloured. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "front.h"
#include "grove/path.h"
#include "grove/text.h"

#include "../banned.h" /* last */

/* The package a link text (found at path, in the target) points into: the first component
 * after the stow dir; NULL when it does not point into it. */
static char *
owner_package(const char *path, const char *text, const char *stow_path)
{
	char *parent = grove_path_parent(path);
	char *dest = parent ? grove_path_join(parent, text) : NULL;
	const char *rest = dest && stow_path ? grove_path_strip_prefix(dest, stow_path) : NULL;
	char *pkg = NULL;

	if (rest && *rest) {
		size_t len = strcspn(rest, "/");

		pkg = strndup(rest, len);
	}
	free(parent);
	free(dest);
	return pkg;
}

const char *
grove_conflict_hint(const struct grove_conflict *c, const char *stow_path, char *buf, size_t size)
{
	const char *m = c->message ? c->message : "";
	const char *arrow;

	if (!strncmp(m, "existing target is stowed to a different package", 48) &&
	    (arrow = strstr(m, " => ")) && c->path) {
		char *other = owner_package(c->path, arrow + 4, stow_path);

		if (other && c->package && !strcmp(other, c->package)) {
			/* With --dotfiles "dot-X" and ".X" land on the same ".X": the package
			 * meets itself, and neither switch nor unstow can help. */
			snprintf(buf, size,
				 "two entries of package '%s' land on this path (with --dotfiles, "
				 "'dot-X' and '.X' are one name): remove or rename one of them",
				 other);
			free(other);
		} else if (other && c->package && !strcmp(c->action, "stow")) {
			/* hello-2.13 over hello-2.12: switch replaces one by the other in place. */
			snprintf(
				buf, size,
				"package '%s' has these paths: replace it in one step (grove switch "
				"%s %s), unstow it first (grove unstow %s), or take them over with "
				"--override=REGEX",
				other, other, c->package, other);
			free(other);
		} else if (other) {
			snprintf(buf, size,
				 "package '%s' has these paths: unstow it first (grove unstow %s), "
				 "or take them over with --override=REGEX",
				 other, other);
			free(other);
		} else {
			snprintf(buf, size,
				 "another package has these paths: unstow it first, or take them "
				 "over with --override=REGEX");
		}
		return buf;
	}
	/* A link grove did not make: --adopt takes files only, so it cannot help. */
	if (!strncmp(m, "existing target is not owned by stow", 36))
		return "it is a link grove did not make (--adopt takes files only): remove it or "
		       "move it out of the way";
	if (strstr(m, "--adopt not specified"))
		return "--adopt moves the existing files into the package (check them in with "
		       "your package), or move them out of the way";
	/* Given options that differ from the ones the package was stowed with (stow_layout.c). */
	if (c->package && !strncmp(m, c->package, strlen(c->package)) &&
	    (!strncmp(m + strlen(c->package), " was stowed with ", 17) ||
	     !strncmp(m + strlen(c->package), " was stowed without ", 20))) {
		const char *given = strstr(m, "; this command gives ");

		snprintf(buf, size,
			 "leave the option out to use the one '%s' was stowed with; to change it, "
			 "restow the package with the new option (grove restow %s %s): its links "
			 "are made anew in one transaction",
			 c->package, given ? given + 21 : "OPTION", c->package);
		return buf;
	}
	if (!strncmp(m, "cannot stow directory", 21) ||
	    !strncmp(m, "cannot stow non-directory", 25))
		return "a file and a folder meet: no option resolves this; rename or remove the "
		       "entry in the target or the package";
	return NULL;
}

/* Prints each distinct hint of sorted[from, to) once. */
static void
print_hints(const struct grove_conflict **sorted, size_t from, size_t to, const char *stow_path,
	    FILE *out)
{
	char(*seen)[512] = calloc(to - from, sizeof(*seen));
	size_t n_seen = 0;

	if (!seen)
		return;
	for (size_t i = from; i < to; i++) {
		char buf[512];
		const char *h = grove_conflict_hint(sorted[i], stow_path, buf, sizeof(buf));
		bool dup = false;

		if (!h)
			continue;
		for (size_t k = 0; k < n_seen && !dup; k++)
			dup = !strcmp(seen[k], h);
		if (dup)
			continue;
		snprintf(seen[n_seen++], sizeof(seen[0]), "%s", h);
		{
			char *shown = grove_text_shown(h);

			grove_paint(out, GROVE_SGR_HINT, "  hint: %s", shown ? shown : "");
			free(shown);
		}
		fputc('\n', out);
	}
	free(seen);
}

void
grove_print_conflict_hints(const struct grove_plan *plan, const char *stow_path, FILE *out)
{
	const struct grove_conflict **all;

	if (!plan->n_conflicts || !grove_term_hints())
		return;
	all = calloc(plan->n_conflicts, sizeof(*all));
	if (!all)
		return;
	for (size_t i = 0; i < plan->n_conflicts; i++)
		all[i] = &plan->conflicts[i];
	print_hints(all, 0, plan->n_conflicts, stow_path, out);
	free(all);
}

void
grove_print_conflicts_hinted(const struct grove_plan *plan, const char *stow_path, FILE *out)
{
	const struct grove_conflict **sorted;
	size_t group = 0;

	if (!plan->n_conflicts)
		return;
	sorted = calloc(plan->n_conflicts, sizeof(*sorted));
	if (!sorted) {
		grove_print_conflicts(plan, out);
		return;
	}
	for (size_t i = 0; i < plan->n_conflicts; i++)
		sorted[i] = &plan->conflicts[i];
	qsort(sorted, plan->n_conflicts, sizeof(*sorted), grove_conflict_cmp);
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		const struct grove_conflict *c = sorted[i];
		const char *pkg = c->package ? c->package : "";

		if (i == group) {
			grove_paint(out, GROVE_SGR_WARN, "WARNING!");
			fprintf(out, " %sing ", c->action);
			grove_fput_shown(pkg, out);
			fputs(" would cause conflicts:\n", out);
		}
		fputs("  * ", out);
		grove_fput_shown(c->message ? c->message : "", out);
		fputc('\n', out);
		if (i + 1 == plan->n_conflicts || strcmp(sorted[i + 1]->action, c->action) != 0 ||
		    strcmp(sorted[i + 1]->package ? sorted[i + 1]->package : "", pkg) != 0) {
			print_hints(sorted, group, i + 1, stow_path, out);
			group = i + 1;
		}
	}
	fputs("All operations aborted.\n", out);
	free(sorted);
}

static const char *
op_sgr(const char *kind)
{
	if (!strcmp(kind, "link") || !strcmp(kind, "mkdir") || !strcmp(kind, "fold"))
		return GROVE_SGR_ADD;
	if (!strcmp(kind, "unlink") || !strcmp(kind, "rmdir") || !strcmp(kind, "unfold"))
		return GROVE_SGR_DEL;
	return GROVE_SGR_MOVE;
}

void
grove_print_plan_prefixed(const struct grove_plan *plan, const char *prefix, FILE *out)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *mem;

	if (!grove_color_on(out) && !*prefix) {
		grove_plan_print(plan, out);
		return;
	}
	/* The plan's own text, each line after prefix, its first word (the op's kind) painted. */
	mem = open_memstream(&buf, &len);
	if (!mem) {
		grove_plan_print(plan, out);
		return;
	}
	grove_plan_print(plan, mem);
	if (fclose(mem) != 0) {
		free(buf);
		grove_plan_print(plan, out);
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t k = strcspn(line, " ");
		char kind[16];

		snprintf(kind, sizeof(kind), "%.*s", (int)(k < 15 ? k : 15), line);
		fputs(prefix, out);
		grove_paint(out, op_sgr(kind), "%s", kind);
		fprintf(out, "%s\n", line + k);
	}
	free(buf);
}

void
grove_print_plan(const struct grove_plan *plan, FILE *out)
{
	grove_print_plan_prefixed(plan, "", out);
}
