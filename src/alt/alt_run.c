/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt: update-alternatives' decisions on grove's engine, one logged transaction per
 * command: the command driver, the messages it returns and the groups it imports and logs. */
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

void
grove_alt_result_release(struct grove_alt_result *res)
{
	for (size_t i = 0; i < res->n_msgs; i++)
		free(res->msgs[i].text);
	free(res->msgs);
	grove_alt_group_release(&res->group);
	free(res->current);
	grove_plan_release(&res->plan);
	free(res->group_name);
	free(res->group_before);
	free(res->group_after);
	for (size_t i = 0; i < res->n_sel; i++) {
		free(res->sel[i].name);
		free(res->sel[i].current);
	}
	free(res->sel);
	memset(res, 0, sizeof(*res));
}

void
grove_alt_run_msg(struct grove_alt_ctx *c, enum grove_alt_msg_kind kind, const char *fmt, ...)
{
	struct grove_alt_result *res = c->res;
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text) {
		c->oom = true;
		return;
	}
	if (res->n_msgs == res->cap_msgs) {
		size_t cap = res->cap_msgs ? res->cap_msgs * 2 : 8;
		struct grove_alt_msg *nv = realloc(res->msgs, cap * sizeof(*nv));

		if (!nv) {
			free(text);
			c->oom = true;
			return;
		}
		res->msgs = nv;
		res->cap_msgs = cap;
	}
	res->msgs[res->n_msgs].kind = kind;
	res->msgs[res->n_msgs++].text = text;
}

const char *
grove_alt_verb(const struct grove_alt_ctx *c, const char *done, const char *would)
{
	return c->req->dry_run ? would : done;
}

int
grove_alt_run_saved_text(const struct grove_alt_ctx *c, const char *before,
			 struct grove_alt_group *w, bool *ret_changed, char **ret_after)
{
	cleanup_free char *exact = NULL;
	char *after = NULL;

	*ret_changed = false;
	*ret_after = NULL;
	/* update-alternatives removes a group left without choices rather than saving it. */
	if (!w->n_choices) {
		*ret_changed = before != NULL;
		return 0;
	}
	/* It saves a group only when the command changed it (an --install always does), and then
	 * in its own order: a file in another form (choices in another order, say) that the
	 * command leaves as it was stays as it is. */
	if (c->req->action != GROVE_ALT_INSTALL && before) {
		if (grove_alt_group_format(w, &exact) < 0)
			return -ENOMEM;
		if (!strcmp(exact, before))
			return 0;
	}
	/* Saved, also when its text stays: the file is then written in update-alternatives' form
	 * if it is in another (session_alt.c). */
	grove_alt_group_normalize(w);
	if (grove_alt_group_format(w, &after) < 0)
		return -ENOMEM;
	*ret_changed = true;
	*ret_after = after;
	return 0;
}

static int
get_selections(struct grove_alt_ctx *c, const struct grove_alt_group *all, size_t n,
	       struct grove_error *err)
{
	struct grove_alt_result *res = c->res;

	res->sel = calloc(n ? n : 1, sizeof(*res->sel));
	if (!res->sel)
		return grove_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct grove_alt_selection *sel = &res->sel[res->n_sel++];

		sel->manual = all[i].manual;
		if (!(sel->name = strdup(all[i].name)))
			return grove_error_set(err, -ENOMEM, "out of memory");
	}
	/* The current values in order; the first that cannot be read ends the list there,
	 * as update-alternatives stops printing at it. */
	for (res->n_sel_read = 0; res->n_sel_read < n; res->n_sel_read++) {
		int r = grove_alt_disk_current_of(c, all[res->n_sel_read].name,
						  &res->sel[res->n_sel_read].current, err);

		if (r < 0)
			return r;
	}
	return 0;
}

/* The group's change, for the session to log with the links and save with their commit: its saved
 * text before (NULL: no group) and after (NULL: the group goes); nothing when both are NULL. A dry
 * run (no session) puts it into the result instead: what the run would save. */
static int
group_change(struct grove_alt_ctx *c, struct grove_session *s, int64_t dir_id, const char *name,
	     const char *before, const char *after, struct grove_error *err)
{
	struct grove_alt_result *res = c->res;

	if (!before && !after)
		return 0;
	if (after)
		grove_alt_run_msg(c, GROVE_ALT_DEBUG, "%s is modified and will be saved", name);
	if (!s) {
		res->group_name = strdup(name);
		res->group_before = before ? strdup(before) : NULL;
		res->group_after = after ? strdup(after) : NULL;
		if (!res->group_name || (before && !res->group_before) ||
		    (after && !res->group_after))
			return grove_error_set(err, -ENOMEM, "out of memory");
		return 0;
	}
	grove_session_take_alt(s, NULL, 0);
	return grove_session_add_alt(s, dir_id, name, before, after, err);
}

/* The group w becomes in all (*n groups, sorted by name) what the next step of a run sees: it
 * replaces its namesake, or is added in its place, or, left without a choice, goes. w is taken
 * (emptied); -ENOMEM. */
static int
groups_put(struct grove_alt_group **all, size_t *n, struct grove_alt_group *w)
{
	struct grove_alt_group *g = grove_alt_select_find_group(*all, *n, w->name), *nv;
	size_t i;

	if (g)
		grove_alt_group_release(g);
	if (!w->n_choices) {
		if (g) {
			memmove(g, g + 1, (*n - (size_t)(g - *all) - 1) * sizeof(*g));
			(*n)--;
		}
		grove_alt_group_release(w);
		return 0;
	}
	if (g) {
		*g = *w;
		memset(w, 0, sizeof(*w));
		return 0;
	}
	nv = realloc(*all, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*all = nv;
	for (i = *n; i > 0 && strcmp(nv[i - 1].name, w->name) > 0; i--)
		nv[i] = nv[i - 1];
	nv[i] = *w;
	(*n)++;
	memset(w, 0, sizeof(*w));
	return 0;
}

/*
 * grove alt import: every file of the admindir (update-alternatives' format)
 * becomes the saved group of that name, in one transaction without ops (so
 * `grove undo` forgets the import). Nothing on disk changes. A corrupt file
 * stops the import before anything is saved.
 */
static int
import_groups(struct grove_alt_ctx *c, struct grove_session *s, const struct grove_root *adm,
	      int64_t dir_id, const struct grove_alt_group *all, size_t n, struct grove_error *err)
{
	struct grove_dirent *ents = NULL;
	size_t n_ents = 0;
	int r = grove_fs_list(adm->fd, &ents, &n_ents, err);

	for (size_t i = 0; i < n_ents && r >= 0; i++) {
		const char *name = ents[i].name;
		size_t l = strlen(name);
		cleanup_free char *text = NULL, *src = NULL, *before = NULL, *after = NULL;
		struct grove_alt_group g = { 0 };
		size_t len = 0;

		/* update-alternatives skips its own temporary files. */
		if (l > 9 && !strcmp(name + l - 9, ".dpkg-tmp"))
			continue;
		if (ents[i].type != GROVE_FT_REG || !grove_alt_name_ok(name))
			continue;
		r = grove_fs_read_file_at(adm->fd, name, 16 << 20, &text, &len, err);
		if (r < 0)
			break;
		if (len == 0)
			continue; /* an empty file is no group for update-alternatives either */
		src = grove_strdupf("%s/%s", adm->path, name);
		if (!src) {
			r = grove_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		/* Taken as update-alternatives reads it (grove_altfile_meaning), as the take-in
		 * does: the file is left as it is. */
		r = grove_alt_group_parse(name, text, len, src, &g, err);
		if (r >= 0)
			r = grove_alt_select_check(c, &g, src, NULL, false, err);
		grove_alt_group_release(&g);
		if (r >= 0 && grove_altfile_meaning(text, len, &after) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
		if (r < 0)
			break;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(all[k].name, name) &&
			    grove_alt_group_format(&all[k], &before) < 0)
				r = grove_error_set(err, -ENOMEM, "out of memory");
		if (r < 0)
			break;
		c->res->n_imported++;
		if ((!before && !after) || (before && after && !strcmp(before, after)))
			continue;
		if (s) /* (a dry run only counts what it would take over) */
			r = grove_session_add_alt(s, dir_id, name, before, after, err);
	}
	grove_dirents_free(ents, n_ents);
	return r;
}

/* Holds the admindir. It only names the state; holding it gives its canonical path. Inside
 * --root it is walked beneath the held root as in a chroot, following only the root's owner's
 * (or root's) symlinks and never out of the root (an image's /var may lead anywhere on the
 * host): its canonical path is the physical one. */
static int
open_admindir(const struct grove_alt_request *req, const struct grove_root *inst, bool make,
	      struct grove_root *adm, struct grove_error *err)
{
	cleanup_free char *adm_rel =
		req->root ? grove_alt_disk_under_root(req->root, req->admindir) : NULL;
	int r;

	if (adm_rel) {
		r = grove_root_open_chase(adm, inst, NULL, adm_rel, make, 0755, err);
	} else {
		r = make ? grove_fs_make_dirs(req->admindir, 0755, err) : 0;
		if (r >= 0)
			r = grove_root_open(adm, req->admindir, err);
	}
	if (r == -ENOENT && !make)
		return r;
	/* A file where the admindir should be: update-alternatives fails to read the group's
	 * file, or to list the folder when it reads them all. */
	if (r == -ENOTDIR && req->name && req->action != GROVE_ALT_INSTALL)
		return grove_error_set(err, r, "unable to open file '%s/%s': %s", req->admindir,
				       req->name, strerror(ENOTDIR));
	if (r == -ENOTDIR)
		return grove_error_set(err, r, "cannot scan directory '%s': %s", req->admindir,
				       strerror(ENOTDIR));
	if (r < 0)
		return grove_error_prefix(err, "cannot create administrative directory '%s'",
					  req->admindir);
	return r;
}

/* The admindir's place and identity go with the transaction: its undo, rollback and recovery write
 * the admin files into this folder or nowhere (DESIGN.md invariant 11). So does the altdir, when
 * it is there: its replays check it is still that folder. One that is missing (made by this
 * transaction's MKDIR ops) or that cannot be held following no symlink is not recorded: the
 * plan's own ops stop at it. */
static int
note_roots(struct grove_alt_ctx *c, struct grove_session *s, const struct grove_root *adm,
	   int64_t dir_id, struct grove_error *err)
{
	const char *rel = grove_alt_disk_rel_of(c, c->altdir_abs ? c->altdir_abs : c->altdir);
	struct grove_root alt = { .fd = -1 };
	struct grove_error ignore = { 0 };
	int r = grove_session_note_root(s, GROVE_JOURNAL_ROOT_ADMINDIR, dir_id, adm, NULL,
					GROVE_RESOLVE_BENEATH, err);

	if (r < 0 || !rel || !*rel ||
	    grove_root_open_beneath(&alt, &c->inst, rel, false, 0, &ignore) < 0)
		return r;
	r = grove_session_note_root(s, GROVE_JOURNAL_ROOT_ALTDIR, dir_id, &alt, rel,
				    GROVE_RESOLVE_BENEATH, err);
	grove_root_release(&alt);
	return r;
}

/* Holds the root and the admindir, locks the admindir (a writer) and opens the session. Readers
 * make nothing: a missing root, admindir or journal is -ENOENT, no group (as for
 * update-alternatives, whose groups are files of the admindir). */
static int
open_all(struct grove_alt_ctx *c, const struct grove_session_opts *so, struct grove_root *adm,
	 int *lock_fd, struct grove_session *s, struct grove_error *err)
{
	const struct grove_alt_request *req = c->req;
	int r = grove_root_open(&c->inst, req->root ? req->root : req->instdir, err);

	if (r >= 0)
		r = grove_alt_disk_place_altdir(c, err);
	if (r >= 0)
		r = open_admindir(req, &c->inst, !so->read_only, adm, err);
	/* One writer per admindir, first: update-alternatives has no lock, so two
	 * of its runs can interleave their reads and writes of a group. */
	if (r >= 0 && !so->read_only) {
		*lock_fd = grove_lock_dir_with(adm, so->lock_wait, "administrative directory", err);
		r = *lock_fd < 0 ? *lock_fd : 0;
	}
	if (r >= 0)
		r = grove_session_open(s, &c->inst, so, err);
	return r;
}

/* The pair's id and its groups: the saved ones for import, else as the admin files say (taken
 * in first by a mutating command; read alone, into memory, by a reader or a dry run). No
 * admindir (adm NULL: a dry run, whose real run would make it) holds no group. */
static int
load_groups(struct grove_alt_ctx *c, struct grove_session *s, const struct grove_root *adm,
	    bool readonly, int64_t *dir_id, struct grove_alt_group **all, size_t *n,
	    struct grove_error *err)
{
	const struct grove_alt_request *req = c->req;
	struct grove_stat st = { 0 };
	int r;

	if (!adm)
		return 0;
	/* A folder named as the command's group: update-alternatives fails reading it. */
	if (req->name && req->action != GROVE_ALT_GET_SELECTIONS &&
	    req->action != GROVE_ALT_IMPORT &&
	    grove_fs_stat_at(adm->fd, req->name, &st, err) >= 0 && st.type == GROVE_FT_DIR)
		return grove_error_set(err, -EISDIR, "%s/%s corrupt: while reading status: %s",
				       req->admindir, req->name, strerror(EISDIR));
	grove_error_clear(err);
	r = s ? grove_journal_alt_dir(s->journal, adm->real ? adm->real : adm->path, c->altdir,
				      dir_id, err)
	      : 0; /* (no journal yet: a reader or a dry run, the admin files alone) */

	if (r >= 0 && c->req->action == GROVE_ALT_IMPORT)
		r = s ? grove_alt_state_load(s->journal, *dir_id, all, n, err) : 0;
	else if (r >= 0)
		r = grove_alt_admin_load(c, s, adm, *dir_id, readonly, all, n, err);
	return r;
}

/* One step of a mutating run: request q decided on the groups all (and the records of the steps
 * before it); when it changes the group's saved text, *changed is set and *after is the text
 * after it (NULL: the group goes). With more, the group as q leaves it goes into all for the
 * next step. */
static int
run_step(struct grove_alt_ctx *c, const struct grove_alt_request *q, struct grove_alt_group **all,
	 size_t *n, bool more, bool *changed, char **after, struct grove_error *err)
{
	struct grove_alt_group w = { 0 }, *g = grove_alt_select_find_group(*all, *n, q->name);
	cleanup_free char *before = NULL, *after_q = NULL;
	bool save = false, changed_q = false;
	int r = 0;

	c->req = q;
	free(c->updated);
	c->updated = NULL;
	c->n_updated = 0;
	if (g && grove_alt_group_format(g, &before) < 0)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0)
		r = grove_alt_select_decide(c, *all, *n, &w, &save, err);
	if (r >= 0 && c->oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0 && save && grove_alt_run_saved_text(c, before, &w, &changed_q, &after_q) < 0)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0 && changed_q) {
		*changed = true;
		free(*after);
		*after = steal_ptr(after_q);
		if (more && groups_put(all, n, &w) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
	}
	grove_alt_group_release(&w);
	return r;
}

static int show_group(struct grove_alt_ctx *c, struct grove_alt_group *g, struct grove_error *err);

/* A reader's answer from the groups. */
static int
answer(struct grove_alt_ctx *c, struct grove_alt_group *all, size_t n, struct grove_error *err)
{
	if (c->req->action == GROVE_ALT_GET_SELECTIONS)
		return get_selections(c, all, n, err);
	return show_group(c, grove_alt_select_find_group(all, n, c->req->name), err);
}

/* --query, --display, --list: the group g (NULL: none) and its current choice into the result. */
static int
show_group(struct grove_alt_ctx *c, struct grove_alt_group *g, struct grove_error *err)
{
	const struct grove_alt_request *req = c->req;
	int r;

	if (g)
		grove_alt_select_prune(c, g);
	cleanup_free char *fn = grove_alt_disk_path(c, req->name);

	if (!g)
		return grove_error_set(err, -GROVE_E_BADINPUT, "no alternatives for %s", req->name);
	if (!fn || grove_alt_group_copy(&c->res->group, g) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	r = grove_alt_disk_current_of(c, req->name, &c->res->current, err);
	if (r < 0 && req->action == GROVE_ALT_LIST) {
		grove_error_clear(err);
		r = 0;
	} else if (r < 0) {
		c->res->current_failed = true;
	}
	return r;
}

/*
 * The change of one group by its n_reqs steps, as the plan of its links and the group's change
 * noted with the session (s NULL, a dry run: put into the result). The steps decide in turn, each
 * on the links and the group the ones before it leave: the records hold the pending state of every
 * path, so one plan takes the disk from what it is to what the last step wants, and the group is
 * saved once, at its commit.
 */
static int
change_group(struct grove_alt_ctx *c, struct grove_session *s, const struct grove_alt_request *reqs,
	     size_t n_reqs, int64_t dir_id, struct grove_alt_group **all, size_t *n,
	     const char *before, struct grove_plan *plan, struct grove_error *err)
{
	cleanup_free char *after = NULL;
	bool changed = false;
	int r = 0;

	for (size_t k = 0; k < n_reqs && r >= 0; k++)
		r = run_step(c, &reqs[k], all, n, k + 1 < n_reqs, &changed, &after, err);
	c->req = &reqs[0];
	if (r >= 0)
		r = grove_alt_disk_build_plan(c, plan, err);
	if (r >= 0 && changed)
		r = group_change(c, s, dir_id, reqs[0].name, before, after, err);
	return r;
}

/* A --root that does not exist: update-alternatives finds no group in its admindir there, and no
 * choice's file for --install; so does grove, having changed nothing. */
static int
missing_root(struct grove_alt_ctx *c, struct grove_error *err)
{
	const struct grove_alt_request *req = c->req;

	grove_error_clear(err);
	if (req->action == GROVE_ALT_INSTALL)
		return grove_error_set(err, -GROVE_E_BADINPUT,
				       "alternative path %s%s doesn't exist", req->root, req->path);
	if (req->action == GROVE_ALT_REMOVE) {
		grove_alt_run_msg(c, GROVE_ALT_VERBOSE, "no alternatives for %s", req->name);
		return 0;
	}
	return grove_error_set(err, -GROVE_E_BADINPUT, "no alternatives for %s", req->name);
}

/*
 * A mutating command on the groups loaded (*all, *n): the change of its group decided by its
 * n_reqs steps and applied as one transaction of s; or, s NULL (a dry run), what the real run
 * would apply and save put into the result. The --log file (not a dry run's) says what was
 * attempted, also when it failed.
 */
static int
mutate(struct grove_alt_ctx *c, struct grove_session *s, const struct grove_alt_request *reqs,
       size_t n_reqs, int64_t dir_id, struct grove_alt_group **all, size_t *n,
       struct grove_error *err)
{
	const struct grove_alt_request *req = &reqs[0];
	struct grove_alt_group *g = grove_alt_select_find_group(*all, *n, req->name);
	struct grove_alt_result *res = c->res;
	struct grove_error lerr = { 0 };
	cleanup_free char *before = NULL;
	struct grove_plan plan;
	int log_fd, r;

	if (g && grove_alt_group_format(g, &before) < 0)
		return grove_error_set(err, -ENOMEM, "out of memory");
	log_fd = s ? grove_alt_log_open(req, &c->inst, err)
		   : grove_alt_log_check(req, &c->inst, err);
	if (log_fd < 0)
		return log_fd;
	grove_plan_init(&plan);
	r = change_group(c, s, reqs, n_reqs, dir_id, all, n, before, &plan, err);
	if (r >= 0 && !s) {
		res->plan = plan; /* (moved: what the real run would apply) */
		grove_plan_init(&plan);
	} else if (r >= 0) {
		r = grove_session_apply(s, &plan, NULL, req->command_line, NULL, 0, &res->txn, err);
	}
	if (r >= 0 && c->oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (log_fd > 0) {
		if (grove_alt_log_flush(log_fd, req, res, &lerr) < 0 && r >= 0)
			r = grove_error_set(err, lerr.code, "%s", lerr.msg);
		grove_fd_close(log_fd);
	}
	grove_plan_release(&plan);
	return r;
}

/* A dry run's group saved as it was (an --install of a choice as it is): the real run rewrites
 * its admin file only when the file is in another form (session_alt.c), so when the file holds
 * that text byte for byte, nothing would change and the result names no group. */
static void
drop_same_group(const struct grove_root *adm, struct grove_alt_result *res)
{
	cleanup_free char *text = NULL;
	struct grove_error ignore = { 0 };
	size_t len = 0;

	if (!res->group_name || !res->group_before || !res->group_after ||
	    strcmp(res->group_before, res->group_after) != 0 ||
	    grove_fs_read_file_at(adm->fd, res->group_name, 16 << 20, &text, &len, &ignore) < 0 ||
	    len != strlen(res->group_after) || memcmp(text, res->group_after, len) != 0)
		return;
	free(res->group_name);
	free(res->group_before);
	free(res->group_after);
	res->group_name = res->group_before = res->group_after = NULL;
}

/* A dry run on a log with an unfinished transaction of the instdir: the real run rolls it back
 * first (grove_session_recover), which a preview cannot do; it says so, and predicts from the
 * disk as it is. */
static void
note_pending(struct grove_alt_ctx *c, struct grove_session *s)
{
	struct grove_session_pending p = { 0 };
	struct grove_error ignore = { 0 };

	if (grove_session_pending(s, &p, &ignore) >= 0 && p.txn &&
	    (p.state == GROVE_PENDING_INTERRUPTED || p.state == GROVE_PENDING_STUCK))
		grove_alt_run_msg(c, GROVE_ALT_WARNING,
				  "transaction %lld was interrupted: the real run would roll it "
				  "back first; this dry run predicts from the disk as it is now",
				  (long long)p.txn);
	grove_session_pending_release(&p);
}

/*
 * A command, or the n_reqs mutating steps of one group (reqs[0] says where and how). A dry run of
 * a mutating command (req->dry_run) is this same run on a read-only session: it takes in the admin
 * files (into memory), decides and plans as the real run, and instead of applying the plan puts
 * it and the group's change into the result; it makes, locks and writes nothing (no admindir,
 * lock, log, state dir, stamp cache or journal) and recovers nothing.
 */
static int
run(const struct grove_alt_request *reqs, size_t n_reqs, struct grove_alt_result *res,
    struct grove_error *err)
{
	const struct grove_alt_request *req = &reqs[0];
	struct grove_alt_ctx c = { .req = req, .res = res, .inst = { .fd = -1 } };
	struct grove_root adm = { .fd = -1 };
	struct grove_session s = { .lock_fd = -1, .state = { .fd = -1 } };
	struct grove_alt_group *all = NULL;
	struct grove_plan plan;
	bool readonly = req->action == GROVE_ALT_QUERY || req->action == GROVE_ALT_DISPLAY ||
			req->action == GROVE_ALT_LIST || req->action == GROVE_ALT_GET_SELECTIONS;
	bool dry = req->dry_run && !readonly, ro = readonly || dry;
	/* One lock per admindir, waited for (maintainer scripts never retry); the instdir is
	 * locked shared, so runs on other admindirs go on side by side. */
	struct grove_lock_wait lw = { .seconds = req->wait_seconds,
				      .notice = req->lock_notice,
				      .ctx = req->lock_notice_ctx };
	struct grove_session_opts so = { .state_opt = req->state_opt,
					 .wait_seconds = req->wait_seconds,
					 .no_lock = ro,
					 .read_only = ro,
					 .no_create = ro,
					 .shared_target = true,
					 .lock_wait = &lw,
					 .command = req->command_line };
	bool session = false;
	size_t n = 0;
	int64_t dir_id = 0;
	int lock_fd = -1;
	int r;

	grove_plan_init(&plan);
	r = grove_alt_disk_set_altdir(&c, req->altdir) < 0
		    ? grove_error_set(err, -ENOMEM, "out of memory")
		    : open_all(&c, &so, &adm, &lock_fd, &s, err);
	if (r == -ENOENT && readonly) {
		/* No root or admindir: no group; no journal yet: the admin files alone. */
		grove_error_clear(err);
		r = adm.fd >= 0 ? load_groups(&c, NULL, &adm, true, &dir_id, &all, &n, err) : 0;
		if (r >= 0)
			r = answer(&c, all, n, err);
		goto out;
	}
	if (r == -ENOENT && c.inst.fd < 0 && req->root && req->action != GROVE_ALT_IMPORT) {
		r = missing_root(&c, err);
		goto out;
	}
	if (r == -ENOENT && dry && c.inst.fd >= 0) {
		/* No admindir or no journal yet, which the real run would make: the admin files
		 * alone, or no group. */
		grove_error_clear(err);
	} else if (r < 0) {
		goto out;
	} else {
		session = true;
		grove_session_set_alt_admin(&s, &adm);
	}
	if (!ro) {
		r = grove_session_recover(&s, NULL, false, NULL, err);
		if (r < 0)
			goto out;
	} else if (dry && session) {
		note_pending(&c, &s);
	}
	r = load_groups(&c, session ? &s : NULL, adm.fd >= 0 ? &adm : NULL, ro, &dir_id, &all, &n,
			err);
	if (r >= 0 && !ro)
		r = note_roots(&c, &s, &adm, dir_id, err);
	if (r < 0)
		goto out;
	if (readonly) {
		r = answer(&c, all, n, err);
		goto out;
	}
	if (req->action == GROVE_ALT_IMPORT) {
		if (adm.fd >= 0)
			r = import_groups(&c, dry ? NULL : &s, &adm, dir_id, all, n, err);
		if (r >= 0 && !dry)
			r = grove_session_apply(&s, &plan, NULL, req->command_line, NULL, 0,
						&res->txn, err);
		goto out;
	}
	r = mutate(&c, dry ? NULL : &s, reqs, n_reqs, dir_id, &all, &n, err);
	if (r >= 0 && dry && adm.fd >= 0)
		drop_same_group(&adm, res);
out:
	if (r >= 0 && c.oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (session)
		grove_session_close(&s);
	if (lock_fd >= 0)
		grove_fd_close(lock_fd);
	grove_plan_release(&plan);
	grove_alt_groups_free(all, n);
	grove_alt_disk_release(&c);
	free(c.updated);
	grove_root_release(&adm);
	grove_root_release(&c.inst);
	free(c.altdir);
	return r;
}

int
grove_alt_run(const struct grove_alt_request *req, struct grove_alt_result *res,
	      struct grove_error *err)
{
	return run(req, 1, res, err);
}

/* Whether a and b are one path, or both absent. */
static bool
same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int
grove_alt_run_group(const struct grove_alt_request *reqs, size_t n, struct grove_alt_result *res,
		    struct grove_error *err)
{
	if (!n)
		return grove_error_set(err, -GROVE_E_INTERNAL, "alternatives: no request");
	for (size_t k = 0; k < n; k++) {
		const struct grove_alt_request *q = &reqs[k];

		if ((q->action != GROVE_ALT_INSTALL && q->action != GROVE_ALT_REMOVE &&
		     q->action != GROVE_ALT_SET && q->action != GROVE_ALT_AUTO) ||
		    q->dry_run != reqs[0].dry_run || q->selection ||
		    !same_str(q->name, reqs[0].name) || !same_str(q->root, reqs[0].root) ||
		    !same_str(q->altdir, reqs[0].altdir) ||
		    !same_str(q->admindir, reqs[0].admindir) ||
		    !same_str(q->instdir, reqs[0].instdir) || !same_str(q->log, reqs[0].log) ||
		    !same_str(q->state_opt, reqs[0].state_opt))
			return grove_error_set(err, -GROVE_E_INTERNAL,
					       "alternatives: the requests of one run must be "
					       "changes of one group in one place");
	}
	return run(reqs, n, res, err);
}
