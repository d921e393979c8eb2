/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the command line prints besides errors: conflicts in GNU Stow's words. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int
conflict_cmp(const void *pa, const void *pb)
{
	const struct grove_conflict *a = *(const struct grove_conflict *const *)pa;
	const struct grove_conflict *b = *(const struct grove_conflict *const *)pb;
	bool a_unstow = !strcmp(a->action, "unstow");
	bool b_unstow = !strcmp(b->action, "unstow");
	int c;

	/* bin/stow walks ('unstow', 'stow'), then sorted packages, then sorted messages. */
	if (a_unstow != b_unstow)
		return a_unstow ? -1 : 1;
	c = strcmp(a->action, b->action);
	if (!c)
		c = strcmp(a->package ? a->package : "", b->package ? b->package : "");
	if (!c)
		c = strcmp(a->message ? a->message : "", b->message ? b->message : "");
	return c;
}

void
grove_print_conflicts(const struct grove_plan *plan, FILE *out)
{
	const struct grove_conflict **sorted;
	const struct grove_conflict *prev = NULL;

	if (!plan->n_conflicts)
		return;
	sorted = calloc(plan->n_conflicts, sizeof(*sorted));
	if (sorted) {
		for (size_t i = 0; i < plan->n_conflicts; i++)
			sorted[i] = &plan->conflicts[i];
		qsort(sorted, plan->n_conflicts, sizeof(*sorted), conflict_cmp);
	}
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		const struct grove_conflict *c = sorted ? sorted[i] : &plan->conflicts[i];
		const char *pkg = c->package ? c->package : "";

		if (!prev || strcmp(prev->action, c->action) ||
		    strcmp(prev->package ? prev->package : "", pkg))
			fprintf(out, "WARNING! %sing %s would cause conflicts:\n", c->action, pkg);
		fprintf(out, "  * %s\n", c->message ? c->message : "");
		prev = c;
	}
	fputs("All operations aborted.\n", out);
	free(sorted);
}
