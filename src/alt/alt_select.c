/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: update-alternatives' selection logic: which choice a group gets, in auto and
 * manual mode, and how a group's followers evolve with it. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alt_int.h"
#include "grove/alt.h"
#include "formats/altfile.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/path.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "base/util.h"

#include "banned.h" /* last */

struct grove_alt_group *
grove_alt_select_find_group(struct grove_alt_group *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* update-alternatives' check of --install's arguments against every group. */
static int
check_install(struct grove_alt_ctx *c, struct grove_alt_group *all, size_t n,
	      struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;

	for (size_t i = 0; i < n; i++) {
		const struct grove_alt_group *o = &all[i];

		if (strcmp(o->name, q->name) == 0)
			continue;
		if (grove_alt_group_slave_link(o, q->name))
			return grove_error_set(
				err, -GROVE_E_BADINPUT,
				"alternative %s can't be master: it is a slave of %s", q->name,
				o->name);
	}
	for (size_t i = 0; i < n; i++) {
		const struct grove_alt_group *o = &all[i];

		if (strcmp(o->name, q->name) == 0)
			continue;
		if (strcmp(o->link, q->link) == 0)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "alternative link %s is already managed by %s",
					       q->link, o->name);
		for (size_t k = 0; k < o->n_slaves; k++)
			if (strcmp(o->slaves[k].path, q->link) == 0)
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative link %s is already managed by %s", q->link,
					o->name);
	}
	if (!grove_alt_disk_file_exists(c, q->path))
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "alternative path %s%s doesn't exist",
				       grove_alt_disk_rootp(c), q->path);
	for (size_t s = 0; s < q->n_slaves; s++) {
		const char *sname = q->slaves[s].name, *slink = q->slave_links[s];

		for (size_t i = 0; i < n; i++) {
			const struct grove_alt_group *o = &all[i];

			if (strcmp(o->name, q->name) == 0)
				continue;
			if (strcmp(o->name, sname) == 0)
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative %s can't be slave of %s: it is a "
					"master alternative",
					sname, q->name);
			if (grove_alt_group_slave_link(o, sname))
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative %s can't be slave of %s: it is a "
					"slave of %s",
					sname, q->name, o->name);
		}
		for (size_t i = 0; i < n; i++) {
			const struct grove_alt_group *o = &all[i];
			bool other = strcmp(o->name, q->name) != 0;

			if (other && strcmp(o->link, slink) == 0)
				return grove_error_set(
					err, -GROVE_E_BADINPUT,
					"alternative link %s is already managed by %s", slink,
					o->name);
			for (size_t k = 0; k < o->n_slaves; k++) {
				if (strcmp(o->slaves[k].path, slink) != 0)
					continue;
				if (other)
					return grove_error_set(
						err, -GROVE_E_BADINPUT,
						"alternative link %s is already managed by %s",
						slink, o->name);
				if (strcmp(o->slaves[k].name, sname) != 0)
					return grove_error_set(
						err, -GROVE_E_BADINPUT,
						"alternative link %s is already managed by %s "
						"(slave of %s)",
						slink, o->slaves[k].name, o->name);
			}
		}
	}
	return 0;
}

/* update-alternatives' evolve: a re-installed group takes the new links. */
static int
evolve(struct grove_alt_ctx *c, struct grove_alt_group *g, const char *cur, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;
	enum grove_ftype t;
	const char *text;
	int r;

	if (strcmp(g->link, q->link) != 0) {
		r = grove_alt_disk_state(c, g->link, &t, &text, err);
		if (r < 0)
			return r;
		if (t == GROVE_FT_LINK) {
			cleanup_free char *keep = strdup(text);

			if (!keep)
				return grove_error_set(err, -ENOMEM, "out of memory");
			grove_alt_run_msg(c, GROVE_ALT_INFO, "%s %s link from %s%s to %s%s",
					  grove_alt_verb(c, "renaming", "would rename"), g->name,
					  grove_alt_disk_rootp(c), g->link, grove_alt_disk_rootp(c),
					  q->link);
			if ((r = grove_alt_disk_want(c, g->link, NULL, err)) < 0 ||
			    (r = grove_alt_disk_want(c, q->link, keep, err)) < 0)
				return r;
		}
		free(g->link);
		if (!(g->link = strdup(q->link)))
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	for (size_t s = 0; s < q->n_slaves; s++) {
		const char *name = q->slaves[s].name, *nlink = q->slave_links[s];
		const char *old = grove_alt_group_slave_link(g, name);

		if (!old)
			grove_alt_disk_mark_updated(c, name);
		if (old && strcmp(old, nlink) != 0) {
			cleanup_free char *new_file = NULL, *fn = grove_alt_disk_path(c, name);
			cleanup_free char *oldc = strdup(old);

			if (!fn || !oldc)
				return grove_error_set(err, -ENOMEM, "out of memory");
			if (cur && strcmp(cur, q->path) == 0) {
				new_file = q->slaves[s].path ? strdup(q->slaves[s].path) : NULL;
			} else if ((r = grove_alt_disk_link_text(c, fn, &new_file, err)) < 0) {
				return r;
			}
			if ((r = grove_alt_disk_state(c, oldc, &t, &text, err)) < 0)
				return r;
			if (t == GROVE_FT_LINK) {
				cleanup_free char *keep = strdup(text);

				if (!keep)
					return grove_error_set(err, -ENOMEM, "out of memory");
				grove_alt_disk_mark_updated(c, name);
				if ((r = grove_alt_disk_want(c, oldc, NULL, err)) < 0)
					return r;
				if (new_file && grove_alt_disk_file_exists(c, new_file)) {
					grove_alt_run_msg(
						c, GROVE_ALT_INFO,
						"%s %s slave link from %s%s to %s%s",
						grove_alt_verb(c, "renaming", "would rename"), name,
						grove_alt_disk_rootp(c), oldc,
						grove_alt_disk_rootp(c), nlink);
					if ((r = grove_alt_disk_want(c, nlink, keep, err)) < 0)
						return r;
				}
			}
		}
		if (grove_alt_group_set_slave(g, name, nlink) < 0)
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int
cmp_path_index(const void *a, const void *b, void *ctx)
{
	const struct grove_alt_group *g = ctx;

	return strcmp(g->choices[*(const size_t *)a].path, g->choices[*(const size_t *)b].path);
}

int
grove_alt_select_check(struct grove_alt_ctx *c, const struct grove_alt_group *g, const char *source,
		       const struct grove_error *cut, bool warn, struct grove_error *err)
{
	cleanup_free size_t *idx = NULL;
	cleanup_free bool *dup = NULL, *kept = NULL;
	bool odd = cut != NULL;
	size_t fail_at = 0;
	int r = 0;

	for (size_t i = 0; i < g->n_choices && !odd; i++)
		odd = g->choices[i].priority_text != NULL;
	idx = calloc(g->n_choices + 1, sizeof(*idx));
	dup = calloc(g->n_choices + 1, sizeof(*dup));
	kept = calloc(g->n_choices + 1, sizeof(*kept));
	if (!idx || !dup || !kept)
		return grove_error_set(err, -ENOMEM, "out of memory");
	/* A path written twice, found by sorting (update-alternatives compares each path with
	 * every one kept before it). */
	for (size_t i = 0; i < g->n_choices; i++)
		idx[i] = i;
	qsort_r(idx, g->n_choices, sizeof(*idx), cmp_path_index, (void *)g);
	for (size_t i = 1; i < g->n_choices; i++)
		if (!strcmp(g->choices[idx[i]].path, g->choices[idx[i - 1]].path))
			odd = dup[idx[i]] = dup[idx[i - 1]] = true;
	if (!odd)
		return 0;
	/* update-alternatives' load: in the file's order, a path kept before is a duplicate, a
	 * missing file is dropped (its priority never read), and an existing one's priority must
	 * be an integer. */
	for (size_t i = 0; i < g->n_choices && r >= 0; i++) {
		const struct grove_alt_choice *ch = &g->choices[i];
		int prio;

		fail_at = i;
		for (size_t k = 0; dup[i] && k < i && r >= 0; k++)
			if (kept[k] && !strcmp(g->choices[k].path, ch->path))
				r = grove_error_set(err, -GROVE_E_CONFIG,
						    "%s corrupt: duplicate path %s", source,
						    ch->path);
		if (r < 0)
			break;
		if (!grove_alt_disk_file_exists(c, ch->path))
			continue;
		if (ch->priority_text &&
		    grove_altfile_priority(ch->priority_text, &prio) == -ERANGE)
			r = grove_error_set(err, -GROVE_E_CONFIG,
					    "%s corrupt: priority of %s is out of range: %s",
					    source, ch->path, ch->priority_text);
		else if (ch->priority_text)
			r = grove_error_set(err, -GROVE_E_CONFIG, "%s corrupt: priority of %s: %s",
					    source, ch->path, ch->priority_text);
		kept[i] = r >= 0;
	}
	/* Read to the cut without an error before it: the cut's own. */
	if (r >= 0 && cut) {
		fail_at = g->n_choices;
		r = grove_error_set(err, cut->code, "%s", cut->msg);
	}
	/* The choices dropped before the error were warned about as update-alternatives read
	 * them (when the group loads, grove_alt_select_prune says so instead). */
	for (size_t i = 0; r < 0 && warn && i < fail_at; i++)
		if (!kept[i])
			grove_alt_run_msg(c, GROVE_ALT_WARNING,
					  "alternative %s (part of link group %s) doesn't exist; "
					  "%s from list of alternatives",
					  g->choices[i].path, g->name,
					  grove_alt_verb(c, "removing", "would remove it"));
	return r;
}

/* update-alternatives drops, when it loads a group, the choices whose file is gone. */
void
grove_alt_select_prune(struct grove_alt_ctx *c, struct grove_alt_group *g)
{
	for (size_t i = 0; i < g->n_choices;) {
		const char *p = g->choices[i].path;

		if (grove_alt_disk_file_exists(c, p)) {
			i++;
			continue;
		}
		if (!c->req->lax_load)
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"alternative %s (part of link group %s) doesn't exist; %s from list "
				"of alternatives",
				p, g->name, grove_alt_verb(c, "removing", "would remove it"));
		grove_alt_choice_release(&g->choices[i]);
		memmove(&g->choices[i], &g->choices[i + 1],
			(g->n_choices - i - 1) * sizeof(g->choices[0]));
		g->n_choices--;
	}
}

/* update-alternatives' set_status: a known group's change of mode is logged. */
static void
set_mode(struct grove_alt_ctx *c, struct grove_alt_group *w, bool known, bool manual)
{
	if (known && w->manual != manual)
		grove_alt_run_msg(c, GROVE_ALT_LOG, "status of link group %s set to %s", w->link,
				  manual ? "manual" : "auto");
	w->manual = manual;
}

/* update-alternatives' select_mode: a current link that is not a choice means dangling (auto) or
 * changed by hand (manual); no link at all means auto. */
static void
select_mode(struct grove_alt_ctx *c, const struct grove_alt_group *g, struct grove_alt_group *w,
	    const char *cur)
{
	if (g && cur && grove_alt_find_choice(w, cur) < 0) {
		if (!grove_alt_disk_file_exists(c, cur)) {
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"%s%s/%s is dangling; it will be updated with best choice",
				grove_alt_disk_rootp(c), c->altdir, w->name);
			set_mode(c, w, g != NULL, false);
		} else if (!w->manual) {
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"%s%s/%s has been changed (manually or by a script); %s to manual "
				"updates only",
				grove_alt_disk_rootp(c), c->altdir, w->name,
				grove_alt_verb(c, "switching", "would switch"));
			set_mode(c, w, g != NULL, true);
		}
	} else if (g && !cur) {
		grove_alt_run_msg(c, GROVE_ALT_VERBOSE, "%s automatic selection of %s",
				  grove_alt_verb(c, "setting up", "would set up"), w->name);
		set_mode(c, w, true, false);
	} else if (!g && cur) {
		/* A new group: update-alternatives runs its select_mode on the empty group
		 * it loaded, so it warns, and then takes the new group in auto mode. */
		if (!grove_alt_disk_file_exists(c, cur))
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"%s%s/%s is dangling; it will be updated with best choice",
				grove_alt_disk_rootp(c), c->altdir, w->name);
		else
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"%s%s/%s has been changed (manually or by a script); %s to manual "
				"updates only",
				grove_alt_disk_rootp(c), c->altdir, w->name,
				grove_alt_verb(c, "switching", "would switch"));
	} else if (!g) {
		grove_alt_run_msg(c, GROVE_ALT_VERBOSE, "%s automatic selection of %s",
				  grove_alt_verb(c, "setting up", "would set up"), w->name);
	}
}

/* --config: asks which choice the group gets (through the request's prompt). */
static int
config_choice(struct grove_alt_ctx *c, struct grove_alt_group *w, const char *cur,
	      const char **ret_choice, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;
	int r;
	enum grove_alt_answer ans = GROVE_ALT_ANSWER_KEEP;
	const char *path = NULL;

	if (w->n_choices == 0) {
		grove_alt_run_msg(c, GROVE_ALT_PLAIN, "There is no program which provides %s.",
				  w->name);
		grove_alt_run_msg(c, GROVE_ALT_PLAIN, "Nothing to configure.");
		return 0;
	}
	if (!q->config_ask)
		return grove_error_set(err, -GROVE_E_INTERNAL, "--config without a prompt");
	r = q->config_ask(q->config_ctx, c->res, w, cur, q->skip_auto && !w->manual, &ans, &path);
	if (r < 0)
		return grove_error_set(err, r, "read the selection: %s", strerror(-r));
	if (ans == GROVE_ALT_ANSWER_AUTO) {
		set_mode(c, w, true, false);
		*ret_choice = w->choices[grove_alt_best(w, cur)].path;
	} else if (ans == GROVE_ALT_ANSWER_PATH && path && grove_alt_find_choice(w, path) >= 0) {
		set_mode(c, w, true, true);
		*ret_choice = path;
	}
	return 0;
}

/* --install: the group evolves to the request's followers and gains (or replaces) the choice. */
static int
install_choice(struct grove_alt_ctx *c, const struct grove_alt_group *g, struct grove_alt_group *w,
	       const char *cur, const char **ret_choice, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;
	int r;
	struct grove_alt_choice ch = { 0 };

	if (g && (r = evolve(c, w, cur, err)) < 0)
		return r;
	ch.path = strdup(q->path);
	ch.priority = q->priority;
	if (!ch.path)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t s = 0; s < q->n_slaves; s++)
		if (grove_alt_choice_set_slave(&ch, q->slaves[s].name, q->slaves[s].path) < 0) {
			grove_alt_choice_release(&ch);
			return grove_error_set(err, -ENOMEM, "out of memory");
		}
	if (grove_alt_add_choice(w, &ch) < 0) {
		grove_alt_choice_release(&ch);
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	if (!w->manual) {
		*ret_choice = w->choices[grove_alt_best(w, cur)].path;
	} else {
		grove_alt_run_msg(c, GROVE_ALT_VERBOSE,
				  "automatic updates of %s/%s are disabled; leaving it alone",
				  c->altdir, w->name);
		grove_alt_run_msg(
			c, GROVE_ALT_VERBOSE,
			"to return to automatic updates use 'update-alternatives --auto %s'",
			w->name);
	}
	return 0;
}

/* After the action: removes a group left without choices, or installs the new choice, or repairs
 * a broken group, as update-alternatives' update step. */
static int
update(struct grove_alt_ctx *c, struct grove_alt_group *w, const char *cur, const char *new_choice,
       struct grove_error *err)
{
	int broken, r;

	if (w->n_choices == 0) {
		grove_alt_run_msg(c, GROVE_ALT_LOG, "link group %s fully removed", w->name);
		return grove_alt_disk_remove_files(c, w, err);
	}
	if (new_choice && (!cur || strcmp(new_choice, cur) != 0)) {
		grove_alt_run_msg(c, GROVE_ALT_LOG, "link group %s updated to point to %s", w->name,
				  new_choice);
		grove_alt_run_msg(c, GROVE_ALT_INFO, "%s %s to provide %s (%s) in %s",
				  grove_alt_verb(c, "using", "would use"), new_choice, w->link,
				  w->name, w->manual ? "manual mode" : "auto mode");
		return grove_alt_disk_prepare_install(c, w, new_choice, err);
	}
	if ((r = grove_alt_disk_is_broken(c, w, &broken, err)) < 0)
		return r;
	if (broken == GROVE_ALT_SLAVES_CHANGED) {
		grove_alt_run_msg(c, GROVE_ALT_LOG, "link group %s updated with changed slaves",
				  w->name);
		grove_alt_run_msg(c, GROVE_ALT_INFO,
				  "%s alternative %s because link group %s has changed slave links",
				  grove_alt_verb(c, "updating", "would update"),
				  cur ? cur : "(null)", w->name);
	} else if (broken) {
		grove_alt_run_msg(c, GROVE_ALT_LOG, "auto-repair link group %s", w->name);
		grove_alt_run_msg(
			c, GROVE_ALT_WARNING,
			"%s reinstallation of alternative %s because link group %s is broken",
			grove_alt_verb(c, "forcing", "would force"), cur ? cur : "(null)", w->name);
	}
	if (broken) {
		const char *choice = cur;

		if (cur && grove_alt_find_choice(w, cur) < 0) {
			choice = w->choices[grove_alt_best(w, cur)].path;
			grove_alt_run_msg(
				c, GROVE_ALT_WARNING,
				"current alternative %s is unknown, %s to %s for link group %s",
				cur, grove_alt_verb(c, "switching", "would switch"), choice,
				w->name);
			set_mode(c, w, true, false);
		}
		if (choice)
			return grove_alt_disk_prepare_install(c, w, choice, err);
	}
	return 0;
}

/* Decides as update-alternatives does; fills the records and the saved group. */
int
grove_alt_select_decide(struct grove_alt_ctx *c, struct grove_alt_group *all, size_t n,
			struct grove_alt_group *w, bool *ret_save, struct grove_error *err)
{
	const struct grove_alt_request *q = c->req;
	struct grove_alt_group *g = grove_alt_select_find_group(all, n, q->name);
	cleanup_free char *fn = grove_alt_disk_path(c, q->name);
	cleanup_free char *cur = NULL;
	const char *new_choice = NULL;
	int r;

	*ret_save = false;
	if (!fn)
		return grove_error_set(err, -ENOMEM, "out of memory");
	if (q->action == GROVE_ALT_INSTALL) {
		r = check_install(c, all, n, err);
		if (r < 0)
			return r;
	}
	/* Loading the group drops its vanished choices (after --install's checks, which
	 * update-alternatives makes before it loads the group). */
	if (g)
		grove_alt_select_prune(c, g);
	if (!g) {
		if (q->action == GROVE_ALT_REMOVE) {
			grove_alt_run_msg(c, GROVE_ALT_VERBOSE, "no alternatives for %s", q->name);
			return 0;
		}
		if (q->action != GROVE_ALT_INSTALL)
			return grove_error_set(err, -GROVE_E_BADINPUT, "no alternatives for %s",
					       q->name);
		w->name = strdup(q->name);
		w->link = strdup(q->link);
		if (!w->name || !w->link)
			return grove_error_set(err, -ENOMEM, "out of memory");
		for (size_t s = 0; s < q->n_slaves; s++)
			if (grove_alt_group_set_slave(w, q->slaves[s].name, q->slave_links[s]) < 0)
				return grove_error_set(err, -ENOMEM, "out of memory");
	} else if (grove_alt_group_copy(w, g) < 0) {
		return grove_error_set(err, -ENOMEM, "out of memory");
	}
	if (q->log_args)
		grove_alt_run_msg(c, GROVE_ALT_LOG, "run with %s", q->log_args);
	if (q->selection) {
		/* update-alternatives' set_selection: the mode first (logged before the current
		 * link is read, which may fail), and a group left without a choice stays as it is,
		 * links and saved file alike (it updates only towards a choice). */
		set_mode(c, w, true, q->action == GROVE_ALT_SET);
		if (q->action == GROVE_ALT_AUTO && w->n_choices == 0) {
			grove_alt_run_msg(c, GROVE_ALT_INFO,
					  "there is no program which provides %s", w->name);
			return 0;
		}
	}
	if ((r = grove_alt_disk_current_of(c, q->name, &cur, err)) < 0)
		return r;
	*ret_save = true;
	if (!q->selection)
		select_mode(c, g, w, cur);
	switch (q->action) {
	case GROVE_ALT_SET:
		if (grove_alt_find_choice(w, q->path) < 0)
			return grove_error_set(err, -GROVE_E_BADINPUT,
					       "alternative %s for %s not registered; not setting",
					       q->path, w->name);
		new_choice = q->path;
		set_mode(c, w, true, true);
		break;
	case GROVE_ALT_AUTO:
		set_mode(c, w, true, false);
		if (w->n_choices == 0)
			grove_alt_run_msg(c, GROVE_ALT_INFO,
					  "there is no program which provides %s", w->name);
		else
			new_choice = w->choices[grove_alt_best(w, cur)].path;
		break;
	case GROVE_ALT_REMOVE:
		if (!grove_alt_remove_choice(w, q->path))
			grove_alt_run_msg(c, GROVE_ALT_VERBOSE,
					  "alternative %s for %s not registered; not removing",
					  q->path, w->name);
		if (cur && strcmp(cur, q->path) == 0) {
			if (w->manual) {
				grove_alt_run_msg(
					c, GROVE_ALT_INFO,
					"%s manually selected alternative - %s %s to auto mode",
					grove_alt_verb(c, "removing", "would remove"),
					grove_alt_verb(c, "switching", "would switch"), w->name);
				set_mode(c, w, true, false);
			}
			if (w->n_choices)
				new_choice = w->choices[grove_alt_best(w, cur)].path;
		}
		break;
	case GROVE_ALT_CONFIG:
		r = config_choice(c, w, cur, &new_choice, err);
		if (r < 0)
			return r;
		break;
	case GROVE_ALT_REMOVE_ALL:
		for (size_t i = 0; i < w->n_choices; i++)
			grove_alt_choice_release(&w->choices[i]);
		w->n_choices = 0;
		break;
	case GROVE_ALT_INSTALL:
		r = install_choice(c, g, w, cur, &new_choice, err);
		if (r < 0)
			return r;
		break;
	default:
		return grove_error_set(err, -GROVE_E_INTERNAL, "bad action");
	}
	/* --set-selections sets the mode first (above), then looks at the current link. */
	if (q->selection)
		select_mode(c, g, w, cur);
	return update(c, w, cur, new_choice, err);
}
