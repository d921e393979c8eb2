/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove alt's dry run: what a mutating command would do — the links it would write and the group
 * state it would save — decided exactly as for the real run, changing and making nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alt_int.h"
#include "grove/alt.h"
#include "grove/fs.h"
#include "grove/journal.h"
#include "grove/plan.h"
#include "grove/session.h"
#include "util.h"

#include "banned.h" /* last */

/* The admindir held without making it (with --root walked beneath the root as open_admindir
 * walks it). */
static int
hold_admindir(const struct grove_alt_request *req, const struct grove_root *inst,
	      struct grove_root *adm, struct grove_error *err)
{
	cleanup_free char *rel =
		req->root ? grove_alt_disk_under_root(req->root, req->admindir) : NULL;

	if (rel)
		return grove_root_open_chase(adm, inst, NULL, rel, false, 0755, err);
	return grove_root_open(adm, req->admindir, err);
}

/* The groups saved for the command's (admindir, altdir) pair, read as a reader reads them: a
 * missing admindir, state dir or journal holds none. */
static int
load_groups(struct grove_alt_ctx *c, struct grove_alt_group **all, size_t *n,
	    struct grove_error *err)
{
	const struct grove_alt_request *req = c->req;
	struct grove_session_opts so = {
		.state_opt = req->state_opt, .no_lock = true, .read_only = true, .no_create = true
	};
	struct grove_session s = { .lock_fd = -1, .state = { .fd = -1 } };
	struct grove_root adm = { .fd = -1 };
	int64_t dir_id = 0;
	int r = hold_admindir(req, &c->inst, &adm, err);

	if (r >= 0)
		r = grove_session_open(&s, &c->inst, &so, err);
	if (r == -ENOENT) {
		grove_error_clear(err);
		grove_root_release(&adm);
		return 0;
	}
	if (r >= 0)
		r = grove_journal_alt_dir(s.journal, adm.real ? adm.real : adm.path, c->altdir,
					  &dir_id, err);
	if (r >= 0)
		r = grove_alt_state_load(s.journal, dir_id, all, n, err);
	grove_session_close(&s);
	grove_root_release(&adm);
	return r;
}

int
grove_alt_predict(const struct grove_alt_request *req, struct grove_alt_result *res,
		  struct grove_error *err)
{
	struct grove_alt_ctx c = { .req = req, .res = res, .inst = { .fd = -1 } };
	struct grove_alt_group *all = NULL, w = { 0 }, *g;
	cleanup_free char *before = NULL, *after = NULL;
	bool save = false;
	size_t n = 0;
	int r = grove_alt_disk_set_altdir(&c, req->altdir) < 0
			? grove_error_set(err, -ENOMEM, "out of memory")
			: grove_root_open(&c.inst, req->root ? req->root : req->instdir, err);

	if (r >= 0)
		r = grove_alt_disk_place_altdir(&c, err);
	if (r >= 0)
		r = load_groups(&c, &all, &n, err);
	g = r >= 0 ? grove_alt_select_find_group(all, n, req->name) : NULL;
	if (g && grove_alt_group_format(g, &before) < 0)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0)
		r = grove_alt_select_decide(&c, all, n, &w, &save, err);
	if (r >= 0)
		r = grove_alt_disk_build_plan(&c, &res->plan, err);
	if (r >= 0 && save && w.name) {
		bool changed = false;

		if (grove_alt_run_saved_text(&c, before, &w, &changed, &after) < 0)
			r = grove_error_set(err, -ENOMEM, "out of memory");
		/* (saved as it was, too: the run then writes its file in update-alternatives'
		 * form, as update-alternatives saves a group a command modified) */
		if (r >= 0 && changed) {
			res->group_name = strdup(w.name);
			res->group_before = steal_ptr(before);
			res->group_after = steal_ptr(after);
			if (!res->group_name)
				r = grove_error_set(err, -ENOMEM, "out of memory");
		}
	}
	if (r >= 0 && c.oom)
		r = grove_error_set(err, -ENOMEM, "out of memory");
	grove_alt_group_release(&w);
	grove_alt_groups_free(all, n);
	grove_alt_disk_release(&c);
	free(c.updated);
	grove_root_release(&c.inst);
	free(c.altdir);
	return r;
}
