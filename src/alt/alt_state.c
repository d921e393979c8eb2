/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: the groups the journal keeps, as text the journal stores without reading, turned
 * into groups and back here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/alt.h"
#include "grove/journal.h"
#include "base/util.h"

#include "banned.h" /* last */

int
grove_alt_state_load(struct grove_journal *j, int64_t dir_id, struct grove_alt_group **ret,
		     size_t *ret_n, struct grove_error *err)
{
	struct grove_journal_alt_state *st = NULL;
	struct grove_alt_group *v = NULL;
	size_t n_st = 0, n = 0;
	int r = grove_journal_alt_states(j, dir_id, &st, &n_st, err);

	if (r < 0)
		return r;
	if (n_st && !(v = calloc(n_st, sizeof(*v)))) {
		r = grove_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (; n < n_st; n++) {
		r = grove_alt_group_parse(st[n].name, st[n].text, strlen(st[n].text),
					  grove_journal_name(j), &v[n], err);
		if (r < 0)
			goto out;
	}
	*ret = v;
	*ret_n = n;
	grove_journal_alt_states_free(st, n_st);
	return 0;
out:
	grove_alt_groups_free(v, n);
	grove_journal_alt_states_free(st, n_st);
	return r;
}

int
grove_alt_state_save(struct grove_journal *j, int64_t dir_id, const struct grove_alt_group *g,
		     struct grove_error *err)
{
	cleanup_free char *text = NULL;

	if (g->n_choices && grove_alt_group_format(g, &text) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	return grove_journal_alt_put(j, dir_id, g->name, text, err);
}
